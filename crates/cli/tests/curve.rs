//! `flashbuf curve` and `flashbuf run --bound` end to end: the exact curve gives the rows of
//! `flashbuf run`, sampled curves report their errors, bounds are below every policy, plots are
//! written once, and what a pipe cannot give is refused.

mod common;

use std::process::Output;

fn flashbuf(args: &[&str], input: Option<&[u8]>) -> Output {
    common::flashbuf_in("curve", args, input)
}

fn ok(o: &Output) -> String {
    common::stdout(o)
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

/// On a flash device the bound columns are filled too: the same write bound as on the ideal
/// device (it depends on the trace and the buffer only), a time bound from the chip's read and
/// program latencies, and every run at or above both.
#[test]
fn run_bound_fills_the_columns_on_flash_devices() {
    let run = rows(&ok(&flashbuf(
        &[
            "run",
            "-q",
            "-t",
            TRACE,
            "-b",
            "64,1000",
            "-p",
            "lru,ad-lru,min-cost",
            "--device",
            "ideal,page,fast",
            "--output",
            "csv",
            "--bound",
        ],
        None,
    )));
    assert_eq!(run.len(), 18);
    for r in &run {
        let ideal = run
            .iter()
            .find(|i| i["device"].starts_with("ideal") && i["buffer_pages"] == r["buffer_pages"])
            .expect("the ideal device's row");
        assert_eq!(r["write_bound"], ideal["write_bound"], "{} on {}", r["policy"], r["device"]);
        let writes: f64 = r["page_writes"].parse().unwrap();
        let bound: f64 = r["write_bound"].parse().unwrap();
        assert!(bound > 0.0 && writes >= bound, "{} on {}: {writes} < {bound}", r["policy"], r["device"]);
        let time: f64 = r["device_time_us"].parse().unwrap();
        let time_bound: f64 = r["time_bound_us"].parse().unwrap();
        assert!(time_bound > 0.0 && time >= time_bound, "{} on {}", r["policy"], r["device"]);
        let over: f64 = r["time_over_bound"].parse().unwrap();
        assert!((over - time / time_bound).abs() < 1e-9 * over);
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

/// A pass of sampled series only lets the reader drop the requests no sampler keeps as it
/// decodes (`TraceSource::next_sampled`); with --error the pass decodes everything for the exact
/// curve and the full simulations. Both must give the same sampled points, on a file whose
/// reader drops records before building them (oracleGeneral) and on one that does not (binary).
#[test]
fn a_sampled_pass_gives_the_points_of_a_full_decoding() {
    let dir = tempfile::tempdir().unwrap();
    for (format, name) in [("oracle", "t.oracleGeneral"), ("binary", "t.fbt")] {
        let path = dir.path().join(name);
        let generate =
            ["gen", "zipf", "--requests", "60000", "--pages", "20000", "--write-ratio", "0.3", "--seed", "5"];
        ok(&flashbuf(&[&generate[..], &["-o", path.to_str().unwrap()]].concat(), None));
        let t = path.to_str().unwrap();
        let args = |error: bool| {
            let mut v = vec!["curve", "-q", "-t", t, "-p", "lru,cflru,ad-lru", "--rate", "5%,20%"];
            v.extend(["-b", "100,1000,5000", "--output", "csv"]);
            if error {
                v.push("--error");
            }
            v.into_iter().map(str::to_string).collect::<Vec<_>>()
        };
        let run = |error: bool| {
            let a = args(error);
            rows(&ok(&flashbuf(&a.iter().map(String::as_str).collect::<Vec<_>>(), None)))
        };
        let (sampled, full) = (run(false), run(true));
        assert_eq!(sampled.len(), 18, "{format}");
        for r in &sampled {
            let f = full
                .iter()
                .find(|f| {
                    ["policy", "method", "sample_rate", "sample_block", "buffer_pages"].iter().all(|c| f[*c] == r[*c])
                })
                .unwrap_or_else(|| panic!("{format}: {r:?} not in the --error pass"));
            for col in ["hit_ratio", "page_reads", "page_writes", "device_time_us", "requests"] {
                assert_eq!(r[col], f[col], "{format} {} {} {}: {col}", r["policy"], r["method"], r["buffer_pages"]);
            }
        }
    }
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
