//! End-to-end tests of `flashbuf sweep` and `flashbuf plot`: what a user sees.

use std::collections::BTreeMap;
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

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[track_caller]
fn ok(o: &Output) {
    assert!(o.status.success(), "flashbuf failed: {}", stderr(o));
}

const TRACE: &str = "gen:zipf,requests=4000,pages=600,write-ratio=0.4";

/// 2 traces × 2 devices × (lru + cflru with 2 windows) × 2 buffers = 24 runs.
fn config() -> String {
    format!(
        "traces = ['{TRACE}', {{ gen = 'uniform', requests = 3000, pages = 400 }}]\n\
         policies = ['lru', {{ name = 'cflru', w = [0.25, 0.75] }}]\n\
         buffers = [32, 96]\n\
         devices = ['ideal', {{ kind = 'bast', preset = 'ref', log_blocks = 4 }}]\n"
    )
}

/// Rows keyed by (trace, policy, buffer_pages, device), timing columns removed.
type Rows = BTreeMap<(String, String, String, String), BTreeMap<String, String>>;

const TIMING: [&str; 4] = ["elapsed_s", "requests_per_s", "cpu_s", "runtime_s"];

fn rows_of(header: &[String], records: Vec<Vec<String>>) -> Rows {
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut out = Rows::new();
    for r in records {
        let key = (
            r[col("trace")].clone(),
            r[col("policy")].clone(),
            r[col("buffer_pages")].clone(),
            r[col("device")].clone(),
        );
        let fields =
            header.iter().cloned().zip(r).filter(|(h, _)| !TIMING.contains(&h.as_str())).collect::<BTreeMap<_, _>>();
        assert!(out.insert(key, fields).is_none(), "duplicate row");
    }
    out
}

fn csv_text(text: &str) -> (Vec<String>, Rows) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let records: Vec<Vec<String>> = r.records().map(|rec| rec.unwrap().iter().map(str::to_string).collect()).collect();
    let rows = rows_of(&header, records);
    (header, rows)
}

fn csv_file(path: &Path) -> (Vec<String>, Rows) {
    csv_text(&std::fs::read_to_string(path).unwrap())
}

#[test]
fn a_sweep_writes_one_row_per_combination_consistent_with_run() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tiny.toml");
    std::fs::write(&cfg, config()).unwrap();
    let out = dir.path().join("res");
    let o = flashbuf(&["sweep", cfg.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q", "-j", "2"]);
    ok(&o);
    assert!(stdout(&o).starts_with("24 runs -> "), "{}", stdout(&o));
    let (header, rows) = csv_file(&out.join("results.csv"));
    assert_eq!(rows.len(), 2 * 2 * 3 * 2, "count = product of the lists");
    for key in
        ["trace", "policy", "policy_name", "buffer_pages", "device", "write_miss", "hits", "page_writes", "erases"]
    {
        assert!(header.iter().any(|h| h == key), "missing column {key}");
    }
    let jsonl = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), 24);
    for line in jsonl.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["page_writes"].is_u64() && v["policy"].is_string());
    }

    // The same combinations through `flashbuf run`, one device at a time: identical rows.
    let device_args: [&[&str]; 2] =
        [&["--device", "ideal"], &["--device", "bast", "--preset", "ref", "--log-blocks", "4"]];
    let mut expected = Rows::new();
    for dev in device_args {
        let mut args = vec![
            "run",
            "-q",
            "-t",
            TRACE,
            "-t",
            "gen:uniform,requests=3000,pages=400",
            "-p",
            "lru,cflru:w=0.25,cflru:w=0.75",
            "-b",
            "32,96",
            "--output",
            "csv",
        ];
        args.extend_from_slice(dev);
        let o = flashbuf(&args);
        ok(&o);
        expected.extend(csv_text(&stdout(&o)).1);
    }
    assert_eq!(expected.len(), 24);
    assert_eq!(rows, expected);
}

#[test]
fn an_interrupted_sweep_resumes_and_only_the_missing_runs_execute() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tiny.toml");
    std::fs::write(&cfg, format!("output = 'full'\n{}", config())).unwrap();
    ok(&flashbuf(&["sweep", cfg.to_str().unwrap(), "-q"]));
    let full = dir.path().join("full");
    let (_, reference) = csv_file(&full.join("results.csv"));

    // Interrupted after 9 runs, the 10th line cut short.
    let part = dir.path().join("part");
    std::fs::create_dir(&part).unwrap();
    let csv = std::fs::read_to_string(full.join("results.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    std::fs::write(part.join("results.csv"), format!("{}\n{}", lines[..10].join("\n"), &lines[10][..20])).unwrap();
    let jsonl = std::fs::read_to_string(full.join("results.jsonl")).unwrap();
    let jlines: Vec<&str> = jsonl.lines().collect();
    std::fs::write(part.join("results.jsonl"), format!("{}\n", jlines[..9].join("\n"))).unwrap();

    let o = flashbuf(&["sweep", cfg.to_str().unwrap(), "-q", "--out", part.to_str().unwrap(), "--resume"]);
    ok(&o);
    let s = stdout(&o);
    assert!(s.contains("24 runs (9 already done, 15 run now)") && s.contains("1 incomplete row"), "{s}");
    let resumed = std::fs::read_to_string(part.join("results.csv")).unwrap();
    for line in &lines[1..10] {
        assert!(resumed.lines().any(|l| l == *line), "a finished run was redone or lost: {line}");
    }
    assert_eq!(csv_file(&part.join("results.csv")).1, reference);
    assert_eq!(std::fs::read_to_string(part.join("results.jsonl")).unwrap().lines().count(), 24);
}

#[test]
fn existing_results_are_never_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tiny.toml");
    std::fs::write(&cfg, config()).unwrap();
    let out = dir.path().join("res");
    let args = ["sweep", cfg.to_str().unwrap(), "-q", "--out", out.to_str().unwrap()];
    ok(&flashbuf(&args));
    let before = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let o = flashbuf(&args);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("results.csv already exists") && e.contains("--resume") && e.contains("--force"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert_eq!(std::fs::read_to_string(out.join("results.csv")).unwrap(), before);
    let mut forced = args.to_vec();
    forced.push("--force");
    ok(&flashbuf(&forced));
    assert_eq!(csv_file(&out.join("results.csv")).1, csv_text(&before).1);
    let o = flashbuf(&["sweep", cfg.to_str().unwrap(), "--resume", "--force"]);
    assert!(!o.status.success() && stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

#[test]
fn config_errors_name_file_line_and_valid_choices_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str]); 4] = [
        ("policies = ['lru', 'lfu']", "bad.toml:2:", &["unknown policy 'lfu'", "valid policies:"]),
        ("policies = [{ name = 'cflru', wnd = [0.5] }]", "bad.toml:2:", &["wnd", "valid parameters: w"]),
        ("polices = ['lru']", "bad.toml:2:", &["unknown key 'polices'", "policies"]),
        ("policies = ['lru']\ntraces2 = 1", "bad.toml:3:", &["unknown key 'traces2'"]),
    ];
    for (line2, at, needles) in cases {
        let cfg = dir.path().join("bad.toml");
        std::fs::write(&cfg, format!("traces = ['gen:zipf']\n{line2}\nbuffers = [8]\n")).unwrap();
        let out = dir.path().join("never");
        let o = flashbuf(&["sweep", cfg.to_str().unwrap(), "-q", "--out", out.to_str().unwrap()]);
        assert!(!o.status.success());
        let e = stderr(&o);
        assert!(e.contains(at), "{e}");
        for n in needles {
            assert!(e.contains(n), "'{n}' missing: {e}");
        }
        assert!(!out.exists(), "nothing may be written for a bad configuration");
    }
    let cfg = dir.path().join("missing.toml");
    std::fs::write(&cfg, "traces = ['gen:zipf', 'nowhere.csv']\npolicies = ['lru']\nbuffers = [8]\n").unwrap();
    let e = stderr(&flashbuf(&["sweep", cfg.to_str().unwrap(), "-q"]));
    assert!(e.contains("missing.toml:1:") && e.contains("nowhere.csv does not exist"), "{e}");
}

#[test]
fn dry_run_lists_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tiny.toml");
    std::fs::write(&cfg, config()).unwrap();
    let o = flashbuf(&["sweep", cfg.to_str().unwrap(), "--dry-run"]);
    ok(&o);
    let s = stdout(&o);
    assert_eq!(s.lines().count(), 25, "{s}");
    assert!(s.lines().last().unwrap().starts_with("24 runs, 84000 requests"), "{s}");
    assert!(!dir.path().join("tiny-results").exists());
}

#[test]
fn plot_draws_sweep_results_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tiny.toml");
    std::fs::write(&cfg, config()).unwrap();
    let out = dir.path().join("res");
    ok(&flashbuf(&["sweep", cfg.to_str().unwrap(), "-q", "--out", out.to_str().unwrap()]));
    let csv = out.join("results.csv");
    let base = dir.path().join("fig");
    let args = [
        "plot",
        csv.to_str().unwrap(),
        "--x",
        "buffer_pages",
        "--y",
        "page_writes",
        "--series",
        "policy",
        "--filter",
        "device=ideal/ref",
        "--filter",
        "device=ideal/micron",
        "--filter",
        "requests=4000",
        "--size",
        "600x400",
        "-o",
        base.to_str().unwrap(),
    ];
    let o = flashbuf(&args);
    ok(&o);
    assert_eq!(stdout(&o).lines().count(), 2);
    let svg = std::fs::read_to_string(dir.path().join("fig.svg")).unwrap();
    assert!(svg.contains("buffer size (pages)") && svg.contains("cflru:w=0.75"));
    let png = std::fs::read(dir.path().join("fig.png")).unwrap();
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 600);
    assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 400);

    let o = flashbuf(&args);
    assert!(!o.status.success() && stderr(&o).contains("already exists; use --force"), "{}", stderr(&o));
    let mut forced = args.to_vec();
    forced.push("--force");
    ok(&flashbuf(&forced));

    // param: as x, a bar chart, and the errors a user meets.
    let o = flashbuf(&[
        "plot",
        csv.to_str().unwrap(),
        "--x",
        "param:w",
        "--y",
        "page_writes",
        "--series",
        "buffer_pages",
        "--filter",
        "device=ideal/micron",
        "--filter",
        "requests=4000",
        "--bar",
        "-o",
        dir.path().join("w").to_str().unwrap(),
    ]);
    ok(&o);
    let o = flashbuf(&["plot", csv.to_str().unwrap(), "--x", "buffer", "--y", "page_writes"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("unknown column 'buffer'") && e.contains("buffer_pages"), "{e}");
    let o = flashbuf(&["plot", csv.to_str().unwrap(), "--x", "buffer_pages", "--y", "page_writes"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("--filter") && e.contains("they differ in"), "{e}");
    let o =
        flashbuf(&["plot", csv.to_str().unwrap(), "--x", "buffer_pages", "--y", "device", "--filter", "policy=arc"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("no row has policy=arc"), "{e}");
}

/// The lines of a result file with the timing fields blanked (CSV: by column; JSON: by key).
fn without_timing(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    if path.extension().is_some_and(|e| e == "jsonl") {
        return text
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                for k in TIMING {
                    v[k] = serde_json::Value::Null;
                }
                v.to_string()
            })
            .collect();
    }
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
    let recs: Vec<Vec<String>> = r.records().map(|rec| rec.unwrap().iter().map(str::to_string).collect()).collect();
    let header = recs[0].clone();
    recs.into_iter()
        .map(|r| {
            r.iter()
                .zip(&header)
                .map(|(v, h)| if TIMING.contains(&h.as_str()) { "" } else { v.as_str() })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

#[test]
fn a_sweep_in_three_shards_merges_into_exactly_the_unsharded_files() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("s.toml");
    std::fs::write(&conf, config()).unwrap();
    let whole = dir.path().join("whole");
    ok(&flashbuf(&["sweep", "-q", conf.to_str().unwrap(), "--out", whole.to_str().unwrap()]));
    let sharded = dir.path().join("sharded");
    let mut counts = Vec::new();
    for i in 1..=3 {
        let shard = format!("{i}/3");
        ok(&flashbuf(&["sweep", "-q", conf.to_str().unwrap(), "--out", sharded.to_str().unwrap(), "--shard", &shard]));
        let part = sharded.join(format!("shard-{i}-of-3")).join("results.csv");
        counts.push(std::fs::read_to_string(&part).unwrap().lines().count() - 1);
    }
    assert_eq!(counts, [8, 8, 8], "24 runs, disjoint shards");
    // Merging before every shard ran is refused; then all three merge.
    let partial = flashbuf(&[
        "sweep",
        "merge",
        conf.to_str().unwrap(),
        sharded.join("shard-1-of-3").to_str().unwrap(),
        "-o",
        dir.path().join("x").to_str().unwrap(),
    ]);
    assert!(
        !partial.status.success() && stderr(&partial).contains("16 planned run(s) are in no shard"),
        "{}",
        stderr(&partial)
    );
    ok(&flashbuf(&["sweep", "merge", "-q", conf.to_str().unwrap(), "-o", sharded.to_str().unwrap()]));
    for f in ["results.csv", "results.jsonl"] {
        assert_eq!(without_timing(&sharded.join(f)), without_timing(&whole.join(f)), "{f}");
    }
    // The merged files are never overwritten without --force.
    let again = flashbuf(&["sweep", "merge", "-q", conf.to_str().unwrap(), "-o", sharded.to_str().unwrap()]);
    assert!(!again.status.success() && stderr(&again).contains("--force"), "{}", stderr(&again));
    let bad = flashbuf(&["sweep", conf.to_str().unwrap(), "--shard", "4/3"]);
    assert!(!bad.status.success() && stderr(&bad).contains("1 <= I <= N"), "{}", stderr(&bad));
}
