//! `flashbuf curve` and `flashbuf run --bound` end to end: the exact curve gives the rows of
//! `flashbuf run`, sampled curves report their errors, bounds are below every policy, plots are
//! written once, and what a pipe cannot give is refused.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn flashbuf(args: &[&str], input: Option<&[u8]>) -> Output {
    let cache = std::env::temp_dir().join(format!("flashbuf-test-cache-curve-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .env("FLASHBUF_CACHE_DIR", cache)
        .args(args)
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run flashbuf");
    if let Some(data) = input {
        let mut stdin = child.stdin.take().unwrap();
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
        });
    }
    child.wait_with_output().expect("flashbuf ends")
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "flashbuf failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Rows as maps from column to cell.
fn rows(csv_text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_reader(csv_text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records().map(|rec| header.iter().cloned().zip(rec.unwrap().iter().map(str::to_string)).collect()).collect()
}

const TRACE: &str = "gen:zipf,requests=40000,pages=4000,write-ratio=0.4,seed=11";

#[test]
fn the_exact_curve_gives_the_rows_of_flashbuf_run() {
    let sizes = "7,64,500,3000";
    let curve = rows(&ok(&flashbuf(
        &["curve", "-q", "-t", TRACE, "-b", sizes, "-p", "lru,cflru", "--output", "csv", "--bound"],
        None,
    )));
    let run = rows(&ok(&flashbuf(
        &["run", "-q", "-t", TRACE, "-b", sizes, "-p", "lru,cflru", "--device", "ideal", "--output", "csv", "--bound"],
        None,
    )));
    assert_eq!(curve.len(), 8);
    for c in &curve {
        let r = run
            .iter()
            .find(|r| r["policy"] == c["policy"] && r["buffer_pages"] == c["buffer_pages"])
            .expect("the same point in flashbuf run");
        for col in
            ["hits", "page_reads", "page_writes", "flush_writes", "device_time_us", "write_bound", "time_bound_us"]
        {
            assert_eq!(c[col], r[col], "{col} of {} at {}", c["policy"], c["buffer_pages"]);
        }
        let method = if c["policy"] == "lru" { "exact" } else { "simulation" };
        assert_eq!(c["method"], method);
        let over: f64 = c["writes_over_bound"].parse().unwrap();
        assert!(over >= 1.0, "{over}");
    }
}

#[test]
fn sampled_curves_report_their_error_and_the_sampling_unit() {
    let out = ok(&flashbuf(
        &["curve", "-q", "-t", TRACE, "-p", "lru,cflru,cfdc", "--rate", "10%", "--error", "--points", "5"],
        None,
    ));
    assert!(out.contains("mean absolute errors against full simulation"), "{out}");
    assert!(
        out.contains("shards 10% /1") && out.contains("minisim 10% /1") && out.contains("minisim 10% /64"),
        "{out}"
    );
    let csv = rows(&ok(&flashbuf(
        &[
            "curve",
            "-q",
            "-t",
            TRACE,
            "-p",
            "lru,cflru",
            "--rate",
            "10%",
            "--error",
            "--points",
            "5",
            "--output",
            "csv",
        ],
        None,
    )));
    assert_eq!(csv.len(), 10);
    for r in &csv {
        let err: f64 = r["hit_ratio_error"].parse().unwrap();
        let full: f64 = r["full_hit_ratio"].parse().unwrap();
        let est: f64 = r["hit_ratio"].parse().unwrap();
        assert!((est - full - err).abs() < 1e-9);
        assert!(err.abs() < 0.25, "a 10% sample is off by {err}");
    }
    // Fixed-size SHARDS is LRU's only.
    let o = flashbuf(&["curve", "-q", "-t", TRACE, "-p", "cflru", "--sample-size", "4096"], None);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--rate"));
}

#[test]
fn plots_are_written_once_and_a_pipe_gives_the_exact_curve() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("c");
    let args =
        ["curve", "-q", "-t", TRACE, "-p", "lru,min", "--points", "6", "--bound", "--plot", base.to_str().unwrap()];
    ok(&flashbuf(&args, None));
    for f in ["c-hit-ratio.svg", "c-hit-ratio.png", "c-page-writes.svg", "c-page-writes.png"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    let again = flashbuf(&args, None);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));

    // A trace on standard input: the exact curve, but no full simulation.
    let file = dir.path().join("t.txt");
    ok(&flashbuf(&["gen", TRACE.strip_prefix("gen:").unwrap(), "-o", file.to_str().unwrap()], None));
    let data = std::fs::read(&file).unwrap();
    let from_file =
        ok(&flashbuf(&["curve", "-q", "-t", file.to_str().unwrap(), "-b", "100,1000", "--output", "csv"], None));
    let from_pipe = ok(&flashbuf(
        &["curve", "-q", "-t", "-", "--format", "text", "-b", "100,1000", "--output", "csv"],
        Some(&data),
    ));
    let strip = |t: &str| {
        rows(t)
            .into_iter()
            .map(|mut r| {
                r.remove("trace");
                r
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&from_pipe), strip(&from_file));
    let o = flashbuf(&["curve", "-q", "-t", "-", "--format", "text", "-p", "cflru", "-b", "100"], Some(&data));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("read only once"));
}
