//! End-to-end tests of the `flashbuf` binary: what a user sees.

use std::path::Path;
use std::process::{Command, Output};

fn flashbuf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .env("FLASHBUF_CACHE_DIR", std::env::temp_dir().join(format!("flashbuf-test-cache-{}", std::process::id())))
        .args(args)
        .output()
        .expect("run flashbuf")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_rows(o: &Output) -> Vec<serde_json::Value> {
    assert!(o.status.success(), "flashbuf failed: {}", stderr(o));
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("valid JSON").as_array().expect("an array").clone()
}

#[test]
fn run_json_has_one_row_per_combination_with_the_documented_keys() {
    let o = flashbuf(&[
        "run",
        "-q",
        "-t",
        "gen:uniform,requests=3000,pages=400,write-ratio=0.3",
        "-p",
        "lru,2q:kin=0.3",
        "-b",
        "50,100",
        "--device",
        "ideal",
        "--output",
        "json",
    ]);
    let rows = json_rows(&o);
    assert_eq!(rows.len(), 4);
    for r in &rows {
        for key in [
            "policy",
            "buffer_pages",
            "requests",
            "hits",
            "misses",
            "hit_ratio",
            "page_reads",
            "page_writes",
            "device_time_us",
            "elapsed_s",
        ] {
            assert!(r.get(key).is_some(), "missing key {key} in {r}");
        }
        let (req, hits, misses) =
            (r["requests"].as_u64().unwrap(), r["hits"].as_u64().unwrap(), r["misses"].as_u64().unwrap());
        assert_eq!(req, 3000);
        assert_eq!(hits + misses, req);
        let ratio = r["hit_ratio"].as_f64().unwrap();
        assert!((ratio - hits as f64 / req as f64).abs() < 1e-12);
        // Ideal device: 25 µs per read, 220 µs per write.
        let t = 25.0 * r["page_reads"].as_u64().unwrap() as f64 + 220.0 * r["page_writes"].as_u64().unwrap() as f64;
        assert!((r["device_time_us"].as_f64().unwrap() - t).abs() < 1e-6);
    }
    let policies: Vec<&str> = rows.iter().map(|r| r["policy"].as_str().unwrap()).collect();
    assert_eq!(policies, ["lru", "lru", "2q:kin=0.3,kout=0.5", "2q:kin=0.3,kout=0.5"]);
}

#[test]
fn flash_devices_report_their_counters() {
    for device in ["page", "bast", "fast", "block"] {
        let o = flashbuf(&[
            "run",
            "-q",
            "-t",
            "gen:zipf,requests=5000,pages=2000,write-ratio=0.5",
            "-p",
            "lru",
            "-b",
            "64",
            "--device",
            device,
            "--preset",
            "ref",
            "--output",
            "json",
        ]);
        let rows = json_rows(&o);
        let r = &rows[0];
        for key in [
            "flash_reads",
            "flash_programs",
            "erases",
            "page_copies",
            "merges_switch",
            "merges_partial",
            "merges_full",
            "write_amplification",
            "device_time_us",
        ] {
            assert!(r.get(key).is_some(), "{device}: missing key {key}");
        }
        assert!(r["device"].as_str().unwrap().starts_with(device));
        assert!(r["flash_programs"].as_u64().unwrap() >= r["page_writes"].as_u64().unwrap(), "{device}: {r}");
        assert!(r["erases"].as_u64().unwrap() > 0, "{device}: 5000 writes to a full device must erase: {r}");
    }
}

#[test]
fn a_malformed_trace_names_file_and_line_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.txt");
    std::fs::write(&path, "# flashbuf-trace v1\nR 1\nW 2\nX 3\n").unwrap();
    let o = flashbuf(&["run", "-q", "-t", path.to_str().unwrap(), "-p", "lru", "-b", "4"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("bad.txt:4"), "{e}");
    assert_eq!(e.lines().count(), 1, "one line: {e}");
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let o = flashbuf(&["run", "-q", "-p", "lru,nosuch", "-b", "4"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("nosuch") && e.contains("arc") && e.contains("ad-lru"), "{e}");

    let o = flashbuf(&["run", "-q", "-p", "cflru:window=3", "-b", "4"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("window") && e.contains("w ("), "{e}");

    let o = flashbuf(&["run", "-q", "--format", "nosuch", "-t", "x", "-b", "4"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("arc") && e.contains("msr"), "{e}");

    let o = flashbuf(&["run", "-q", "-t", "gen:nosuch", "-b", "4"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("zipf") && e.contains("adlru-zipf"), "{e}");

    let o = flashbuf(&["run", "-q", "--device", "nosuch"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("bast") && e.contains("fast"), "{e}");
}

#[test]
fn impossible_devices_are_refused_before_running() {
    let o = flashbuf(&["run", "-q", "-b", "64", "--device", "page", "--op", "0"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("over-provisioning"), "{e}");
    let o = flashbuf(&["run", "-q", "-b", "64", "--device", "bast", "--log-blocks", "0"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("log block"), "{e}");
    let o = flashbuf(&["run", "-q", "-b", "64", "--capacity", "10"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("smaller than the trace"), "{e}");
}

#[test]
fn outputs_are_atomic_and_never_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.csv");
    let args = |force: bool| {
        let mut v = vec![
            "run",
            "-q",
            "-t",
            "gen:uniform,requests=500,pages=100",
            "-p",
            "lru",
            "-b",
            "10",
            "--device",
            "ideal",
            "--output",
            "csv",
            "-o",
            out.to_str().unwrap(),
        ];
        if force {
            v.push("--force");
        }
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| {
        Command::new(env!("CARGO_BIN_EXE_flashbuf"))
            .env("FLASHBUF_CACHE_DIR", std::env::temp_dir().join(format!("flashbuf-test-cache-{}", std::process::id())))
            .args(&a)
            .output()
            .unwrap()
    };
    assert!(run(args(false)).status.success());
    let first = std::fs::read_to_string(&out).unwrap();
    assert!(first.starts_with("trace,policy,policy_name,buffer_pages,"), "{first}");
    assert_eq!(first.lines().count(), 2);
    let o = run(args(false));
    assert!(!o.status.success() && stderr(&o).contains("--force"));
    assert!(run(args(true)).status.success());
    // A failing run leaves neither a result nor a temporary file behind.
    let failing = dir.path().join("never.csv");
    let o = flashbuf(&["run", "-q", "-t", "/nonexistent/trace.txt", "-b", "4", "-o", failing.to_str().unwrap()]);
    assert!(!o.status.success());
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["r.csv"], "left behind: {names:?}");
}

#[test]
fn gen_then_stats_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["t.fbt", "t.txt", "t.oracleGeneral"] {
        let path = dir.path().join(name);
        let p = path.to_str().unwrap();
        let o = flashbuf(&[
            "gen",
            "zipf",
            "--requests",
            "1234",
            "--pages",
            "300",
            "--write-ratio",
            "0.25",
            "--seed",
            "5",
            "-o",
            p,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = flashbuf(&["stats", "-q", p]);
        let s = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success() && s.contains("requests         1,234"), "{name}: {s}");
        // The same generator on the fly gives the same counts (oracleGeneral has no write flag).
        let o2 = flashbuf(&["stats", "-q", "gen:zipf,requests=1234,pages=300,write-ratio=0.25,seed=5"]);
        let s2 = String::from_utf8_lossy(&o2.stdout);
        let line = |s: &str, k: &str| s.lines().find(|l| l.contains(k)).map(str::to_string);
        let first_number = |l: Option<String>| l.and_then(|l| l.split_whitespace().find_map(|w| w.parse::<u64>().ok()));
        assert_eq!(first_number(line(&s, "distinct")), first_number(line(&s2, "distinct")), "{name}");
        if name != "t.oracleGeneral" {
            assert_eq!(line(&s, "writes"), line(&s2, "writes"), "{name}");
        }
        assert!(!flashbuf(&["gen", "zipf", "-o", p]).status.success(), "{name}: existing file kept without --force");
        assert!(Path::new(p).exists());
    }
}
