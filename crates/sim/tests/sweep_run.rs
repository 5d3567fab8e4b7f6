//! Running sweeps: the parallel runner gives the rows `execute` gives; result files refuse to be
//! overwritten, survive interruptions and resume to the same set of rows as a complete run.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use flashbuf_flash::{DeviceConfig, DeviceKind, Precondition};
use flashbuf_policy::PolicyConfig;
use flashbuf_sim::sweep::{
    OpenMode, ResultFiles, RunKey, Sweep, SweepConfig, SweepError, SweepRun, SweepSession, run_parallel, run_to_dir,
};
use flashbuf_sim::{ResultRow, RunSpec, WriteMiss, execute};
use flashbuf_trace::TraceSpec;

const CONFIG: &str = "\
traces = ['gen:zipf,requests=3000,pages=500,write-ratio=0.4', { gen = 'uniform', requests = 2000, pages = 300, seed = [1, 2] }]
policies = ['lru', 'arc', { name = 'cflru', w = [0.25, 0.75] }]
buffers = [16, 64]
devices = ['ideal', { kind = 'page', op_percent = 10 }]
";

fn sweep() -> Sweep {
    Sweep::from_toml(CONFIG, Path::new("sweep.toml"), &mut |_| {}).unwrap()
}

/// The columns that depend on the machine, not on the simulation.
const TIMING: [&str; 4] = ["elapsed_s", "requests_per_s", "cpu_s", "runtime_s"];

/// CSV rows keyed by run, timing columns removed.
fn csv_rows(path: &Path) -> BTreeMap<RunKey, Vec<(String, String)>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().clone();
    let mut out = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        let get = |name: &str| rec[header.iter().position(|h| h == name).unwrap()].to_string();
        let key = RunKey {
            trace: get("trace"),
            policy: get("policy"),
            buffer_pages: get("buffer_pages").parse().unwrap(),
            device: get("device"),
            write_miss: get("write_miss"),
            run_id: get("run_id"),
        };
        let fields = header
            .iter()
            .zip(rec.iter())
            .filter(|(h, _)| !TIMING.contains(h))
            .map(|(h, v)| (h.to_string(), v.to_string()))
            .collect();
        assert!(out.insert(key, fields).is_none(), "a run appears twice in {}", path.display());
    }
    out
}

fn without_timing(row: &ResultRow) -> ResultRow {
    ResultRow { elapsed_s: 0.0, requests_per_s: 0.0, cpu_s: 0.0, runtime_s: 0.0, ..row.clone() }
}

#[test]
fn the_parallel_runner_gives_the_rows_of_execute() {
    let sweep = sweep();
    assert_eq!(sweep.len(), 3 * 2 * 4 * 2);
    let runs: Vec<&SweepRun> = sweep.runs().iter().collect();
    let progressed = AtomicU64::new(0);
    let mut rows: Vec<(RunKey, ResultRow)> = Vec::new();
    let n = run_parallel(&runs, 2, &|n| _ = progressed.fetch_add(n, Ordering::Relaxed), &mut |run, row| {
        assert_eq!(&RunKey::of_row(&row), run.key());
        rows.push((run.key().clone(), row));
        Ok(())
    })
    .unwrap();
    assert_eq!(n, sweep.len());
    assert_eq!(rows.len(), sweep.len());
    assert_eq!(progressed.load(Ordering::Relaxed), sweep.total_requests());
    for run in sweep.runs() {
        let (_, row) = rows.iter().find(|(k, _)| k == run.key()).expect("every run reported once");
        let alone = execute(&run.spec, &mut |_| {}).unwrap();
        assert_eq!(without_timing(row), without_timing(&alone), "{}", run.key());
    }
}

#[test]
fn result_files_hold_every_run_in_plan_order_and_are_never_overwritten_silently() {
    let sweep = sweep();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let report = run_to_dir(&sweep, &out, OpenMode::New, 2, &|_| {}).unwrap();
    assert_eq!((report.planned, report.skipped, report.executed, report.dropped), (sweep.len(), 0, sweep.len(), 0));
    let text = std::fs::read_to_string(&report.csv).unwrap();
    let keys: Vec<RunKey> = csv_rows(&report.csv).keys().cloned().collect();
    assert_eq!(keys.len(), sweep.len());
    // Plan order, line by line.
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let policies: Vec<String> = r.records().map(|rec| rec.unwrap()[1].to_string()).collect();
    let planned: Vec<String> = sweep.runs().iter().map(|r| r.key().policy.clone()).collect();
    assert_eq!(policies, planned);
    // JSON Lines: one object per run, the same keys in the same order.
    let jsonl = std::fs::read_to_string(&report.jsonl).unwrap();
    let json_keys: Vec<String> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["policy"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(json_keys, planned);

    // A second sweep into the same directory is refused, and leaves the files alone.
    match run_to_dir(&sweep, &out, OpenMode::New, 2, &|_| {}) {
        Err(SweepError::Exists { path }) => assert!(path.ends_with("results.csv")),
        other => panic!("expected Exists, got {other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&report.csv).unwrap(), text);
    // Resuming a complete sweep runs nothing; overwriting reruns everything.
    let report = run_to_dir(&sweep, &out, OpenMode::Resume, 2, &|_| {}).unwrap();
    assert_eq!((report.skipped, report.executed), (sweep.len(), 0));
    assert_eq!(std::fs::read_to_string(&report.csv).unwrap(), text);
    let report = run_to_dir(&sweep, &out, OpenMode::Overwrite, 2, &|_| {}).unwrap();
    assert_eq!(report.executed, sweep.len());
    assert_eq!(csv_rows(&report.csv), csv_rows(&dir.path().join("out/results.csv")));
}

#[test]
fn an_interrupted_sweep_resumes_to_the_rows_of_a_complete_one() {
    let sweep = sweep();
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full");
    run_to_dir(&sweep, &full, OpenMode::New, 2, &|_| {}).unwrap();
    let reference = csv_rows(&full.join(ResultFiles::CSV));

    // Simulate an interruption: the first 10 runs complete in both files, the 11th only in the
    // CSV (killed between the two writes), the 12th cut in the middle of its CSV line.
    let csv_text = std::fs::read_to_string(full.join(ResultFiles::CSV)).unwrap();
    let json_text = std::fs::read_to_string(full.join(ResultFiles::JSONL)).unwrap();
    let csv_lines: Vec<&str> = csv_text.lines().collect();
    let json_lines: Vec<&str> = json_text.lines().collect();
    let part = dir.path().join("part");
    std::fs::create_dir(&part).unwrap();
    let mut partial_csv = csv_lines[..12].join("\n");
    partial_csv.push('\n');
    partial_csv.push_str(&csv_lines[12][..30]);
    std::fs::write(part.join(ResultFiles::CSV), &partial_csv).unwrap();
    let mut partial_json = json_lines[..10].join("\n");
    partial_json.push('\n');
    std::fs::write(part.join(ResultFiles::JSONL), &partial_json).unwrap();

    let session = SweepSession::open(&sweep, &part, OpenMode::Resume).unwrap();
    let pending: HashSet<RunKey> = session.pending().iter().map(|r| r.key().clone()).collect();
    assert_eq!(pending.len(), sweep.len() - 10);
    let kept: Vec<RunKey> = csv_rows(&full.join(ResultFiles::CSV)).into_keys().collect();
    assert!(kept.iter().filter(|k| !pending.contains(*k)).count() == 10);
    let executed = AtomicU64::new(0);
    let requests: u64 = session.pending_requests();
    let report = session.run(2, &|n| _ = executed.fetch_add(n, Ordering::Relaxed)).unwrap();
    assert_eq!((report.skipped, report.executed, report.dropped), (10, sweep.len() - 10, 2));
    assert_eq!(executed.load(Ordering::Relaxed), requests, "only the missing runs were simulated");

    assert_eq!(csv_rows(&part.join(ResultFiles::CSV)), reference);
    // The runs completed before the interruption were not run again: their lines, timing
    // included, are the ones written then.
    let resumed = std::fs::read_to_string(part.join(ResultFiles::CSV)).unwrap();
    for line in &csv_lines[1..11] {
        assert!(resumed.lines().any(|l| l == *line), "line lost or rewritten: {line}");
    }
    let json_resumed = std::fs::read_to_string(part.join(ResultFiles::JSONL)).unwrap();
    assert_eq!(json_resumed.lines().count(), sweep.len());
    for line in &json_lines[..10] {
        assert!(json_resumed.lines().any(|l| l == *line));
    }
}

#[test]
fn resuming_refuses_files_with_other_columns() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(ResultFiles::CSV), "policy,hits\nlru,3\n").unwrap();
    match ResultFiles::open(dir.path(), OpenMode::Resume) {
        Err(e @ SweepError::Results { .. }) => {
            let e = e.to_string();
            assert!(e.contains("results.csv:1:") && e.contains("--force"), "{e}");
        }
        other => panic!("expected a results error, got {other:?}"),
    }
    std::fs::write(dir.path().join(ResultFiles::CSV), "").unwrap();
    std::fs::write(dir.path().join(ResultFiles::JSONL), "{\"trace\": 1}\n").unwrap();
    let e = ResultFiles::open(dir.path(), OpenMode::Resume).unwrap_err().to_string();
    assert!(e.contains("results.jsonl:1:") && e.contains("trace"), "{e}");
}

#[test]
fn a_failing_run_stops_the_sweep_keeps_finished_rows_and_resume_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    std::fs::write(&trace, "# flashbuf-trace v1\nR 1\nW 2\nR 3\nW 1\n").unwrap();
    let config = "traces = ['t.txt', 'gen:uniform,requests=500,pages=50']\npolicies = ['lru', 'clock']\n\
                  buffers = [2, 3]\ndevices = ['ideal']\n";
    let sweep = Sweep::from_toml(config, &dir.path().join("s.toml"), &mut |_| {}).unwrap();
    assert_eq!(sweep.len(), 8);
    // The file turns bad after planning.
    std::fs::write(&trace, "# flashbuf-trace v1\nR 1\nQ 2\n").unwrap();
    let out = dir.path().join("out");
    let e = run_to_dir(&sweep, &out, OpenMode::New, 1, &|_| {}).unwrap_err();
    assert!(matches!(e, SweepError::Run(_)) && e.to_string().contains("t.txt:3"), "{e}");
    // With one worker, longest first: the generated runs (500 requests) all finished first.
    let rows = csv_rows(&out.join(ResultFiles::CSV));
    assert_eq!(rows.len(), 4);
    assert!(rows.keys().all(|k| k.trace.starts_with("uniform")));
    // Fixed, the sweep resumes and runs only the four file runs.
    std::fs::write(&trace, "# flashbuf-trace v1\nR 1\nW 2\nR 3\nW 1\n").unwrap();
    let report = run_to_dir(&sweep, &out, OpenMode::Resume, 1, &|_| {}).unwrap();
    assert_eq!((report.skipped, report.executed), (4, 4));
    assert_eq!(csv_rows(&out.join(ResultFiles::CSV)).len(), 8);
}

fn spec(trace: &str, policy: &str, frames: usize, device: DeviceConfig) -> RunSpec {
    let t = TraceSpec::parse(trace).unwrap();
    let pages = t.page_count().unwrap();
    RunSpec::new(t, pages, policy.parse::<PolicyConfig>().unwrap(), frames, device)
}

#[test]
fn sweeps_built_in_code_check_identities() {
    let ideal = DeviceConfig { kind: DeviceKind::Ideal, ..DeviceConfig::default() };
    let a = spec("gen:uniform,requests=100,pages=50", "lru", 8, ideal.clone());
    // The same run twice is kept once.
    let sweep = Sweep::new(vec![SweepRun::from_spec(a.clone()), SweepRun::from_spec(a.clone())]).unwrap();
    assert_eq!(sweep.len(), 1);
    assert_eq!(sweep.runs()[0].requests, 100);
    // Two different traces under one label are refused.
    let mut b = spec("gen:uniform,requests=100,pages=50,seed=9", "lru", 8, ideal.clone());
    b.trace_label = a.trace_label.clone();
    match Sweep::new(vec![SweepRun::from_spec(a.clone()), SweepRun::from_spec(b)]) {
        Err(e @ SweepError::Duplicate { .. }) => assert!(e.to_string().contains("distinct labels"), "{e}"),
        other => panic!("expected Duplicate, got {other:?}"),
    }
    // Devices that differ outside their label get extended labels, which reach the rows.
    let empty = DeviceConfig { precondition: Precondition::Empty, ..DeviceConfig::default() };
    let seq = DeviceConfig::default();
    let mut nofetch = spec("gen:uniform,requests=100,pages=50", "lru", 8, seq.clone());
    nofetch.write_miss = WriteMiss::NoFetch;
    let sweep = Sweep::new(vec![
        SweepRun::from_spec(spec("gen:uniform,requests=100,pages=50", "lru", 8, empty)),
        SweepRun::from_spec(spec("gen:uniform,requests=100,pages=50", "lru", 8, seq)),
        SweepRun::from_spec(nofetch),
    ])
    .unwrap();
    let labels: Vec<&str> = sweep.runs().iter().map(|r| r.key().device.as_str()).collect();
    assert_eq!(
        labels,
        [
            "page/micron/greedy/op7/precondition=empty",
            "page/micron/greedy/op7/precondition=sequential",
            "page/micron/greedy/op7/precondition=sequential"
        ]
    );
    let row = sweep.runs()[0].execute(&mut |_| {}).unwrap();
    assert_eq!(row.device, "page/micron/greedy/op7/precondition=empty");
    assert_eq!(sweep.runs()[2].key().write_miss, "no-fetch");
}

#[test]
fn relative_output_directories_follow_the_configuration() {
    let c = SweepConfig::parse(
        "output = 'res'\ntraces = ['gen:zipf']\npolicies = ['lru']\nbuffers = [5]",
        Path::new("/data/sweeps/a.toml"),
    )
    .unwrap();
    assert_eq!(c.output.as_deref(), Some(Path::new("/data/sweeps/res")));
    let c = SweepConfig::parse(
        "output = '/abs'\ntraces = ['gen:zipf']\npolicies = ['lru']\nbuffers = [5]",
        Path::new("a.toml"),
    )
    .unwrap();
    assert_eq!(c.output.as_deref(), Some(Path::new("/abs")));
}

#[cfg(unix)]
#[test]
fn two_sweeps_never_write_into_one_directory_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let first = ResultFiles::open(dir.path(), OpenMode::New).unwrap();
    match ResultFiles::open(dir.path(), OpenMode::Resume) {
        Err(e @ SweepError::Busy { .. }) => assert!(e.to_string().contains("another sweep"), "{e}"),
        other => panic!("expected Busy, got {other:?}"),
    }
    drop(first);
    let again = ResultFiles::open(dir.path(), OpenMode::Resume).unwrap();
    assert!(again.done().is_empty());
}

#[test]
fn resuming_with_other_options_reruns_what_they_change() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let config = |extra: &str| {
        format!(
            "traces = ['gen:zipf,requests=2000,pages=300,write-ratio=0.3']\npolicies = ['lru']\nbuffers = [20]\ndevices = [{{ kind = 'page', precondition = 'empty' }}]\n{extra}"
        )
    };
    let plan = |text: &str| Sweep::from_toml(text, &dir.path().join("s.toml"), &mut |_| {}).unwrap();
    let first = plan(&config(""));
    let r = run_to_dir(&first, &out, OpenMode::New, 1, &|_| {}).unwrap();
    assert_eq!(r.executed, 1);
    // The same configuration: nothing to do.
    let r = run_to_dir(&first, &out, OpenMode::Resume, 1, &|_| {}).unwrap();
    assert_eq!((r.skipped, r.executed), (1, 0));
    // Every option that changes the result changes the run's identity: the run is made again
    // (the device label stays `page/micron/greedy/op7` for the precondition: only run_id tells).
    for extra in ["final_flush = false", "page_size = 2048", "warmup = 100", "remap = 'on'"] {
        let changed = plan(&config(extra));
        let r = run_to_dir(&changed, &out, OpenMode::Resume, 1, &|_| {}).unwrap();
        assert_eq!((r.skipped, r.executed), (0, 1), "{extra}");
    }
    let changed = plan(&config("").replace("'empty'", "'sequential'"));
    assert_eq!(changed.runs()[0].key().device, first.runs()[0].key().device);
    let r = run_to_dir(&changed, &out, OpenMode::Resume, 1, &|_| {}).unwrap();
    assert_eq!((r.skipped, r.executed), (0, 1));
    // The rows of the runs superseded by these reruns are gone: one row, the last run's.
    let rows = csv_rows(&out.join(ResultFiles::CSV));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows.keys().next().unwrap(), changed.runs()[0].key());
    let jsonl = std::fs::read_to_string(out.join(ResultFiles::JSONL)).unwrap();
    assert_eq!(jsonl.lines().count(), 1);
}
