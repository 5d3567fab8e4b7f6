//! Sweep configurations: every kind of mistake is reported with the file, the line and the valid
//! choices, before anything runs; correct configurations expand to the documented cross product.

use std::path::Path;

use flashbuf_sim::sweep::{ConfigError, Location, SweepConfig, SweepError};

/// Parses with the summary cache off (tests never touch the user's cache).
fn parse_at(text: &str, path: &Path) -> Result<SweepConfig, ConfigError> {
    SweepConfig::parse(text, path).map(|mut c| {
        c.cache = flashbuf_trace::SummaryCache::disabled();
        c
    })
}

fn parse(text: &str) -> Result<SweepConfig, ConfigError> {
    parse_at(text, Path::new("conf/sweep.toml"))
}

/// A valid configuration with one line replaced (1-based), to put a mistake on a known line.
fn with_line(n: usize, line: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[n - 1] = line;
    lines.join("\n")
}

const BASE: &str = "\
# a small sweep
traces = ['gen:uniform,requests=1000,pages=200']
policies = ['lru', { name = 'cflru', w = [0.25, 0.5] }]
buffers = [10, 20]
devices = ['ideal']
write_miss = 'fetch'
";

/// Asserts that `text` fails on `line` with a message containing every one of `needles`.
#[track_caller]
fn fails_on(text: &str, line: usize, needles: &[&str]) -> ConfigError {
    let e = parse(text).expect_err("the configuration must be rejected");
    let rendered = e.to_string();
    assert_eq!(e.at.map(|a| a.line), Some(line), "wrong line: {rendered}");
    assert!(rendered.starts_with(&format!("conf/sweep.toml:{line}:")), "{rendered}");
    for n in needles {
        assert!(rendered.contains(n), "'{n}' missing from: {rendered}");
    }
    e
}

#[test]
fn the_base_configuration_is_valid() {
    let c = parse(BASE).unwrap();
    assert_eq!(c.combinations(), 6);
    let sweep = c.plan(&mut |_| {}).unwrap();
    let keys: Vec<String> =
        sweep.runs().iter().map(|r| format!("{}@{}", r.key().policy, r.key().buffer_pages)).collect();
    assert_eq!(keys, ["lru@10", "lru@20", "cflru:w=0.25@10", "cflru:w=0.25@20", "cflru:w=0.5@10", "cflru:w=0.5@20"]);
    assert_eq!(sweep.total_requests(), 6000);
}

#[test]
fn toml_syntax_errors_name_the_line() {
    fails_on(&with_line(4, "buffers == [10, 20]"), 4, &["not valid TOML"]);
}

#[test]
fn unknown_top_level_key_lists_the_valid_keys() {
    let e = fails_on(&with_line(5, "device = ['ideal']"), 5, &["unknown key 'device'", "devices", "policies"]);
    assert_eq!(e.at, Some(Location { line: 5, column: 1 }));
}

#[test]
fn unknown_policies_and_parameters_list_the_valid_ones() {
    fails_on(
        &with_line(3, "policies = ['lru', 'lfu']"),
        3,
        &["unknown policy 'lfu'", "valid policies:", "cflru", "ad-lru"],
    );
    fails_on(&with_line(3, "policies = [{ name = 'lfu' }]"), 3, &["unknown policy 'lfu'", "arc"]);
    fails_on(&with_line(3, "policies = ['cflru:window=0.5']"), 3, &["window", "valid parameters: w ("]);
    let e = fails_on(
        &with_line(3, "policies = [{ name = 'cflru', window = [0.25] }]"),
        3,
        &["window", "valid parameters: w ("],
    );
    // The column points at the unknown key.
    assert_eq!(e.at.unwrap().column, 31);
    let e = fails_on(&with_line(3, "policies = [{ name = 'cflru', w = [0.25, 7] }]"), 3, &["w=7", "between 0 and 1"]);
    assert_eq!(e.at.unwrap().column, 42, "points at the bad value");
    fails_on(&with_line(3, "policies = [{ w = 0.5 }]"), 3, &["needs 'name'", "valid policies:"]);
    fails_on(&with_line(3, "policies = [{ name = 'cflru', w = [[0.5]] }]"), 3, &["takes a number"]);
    fails_on(&with_line(3, "policies = [42]"), 3, &["a policy is a string"]);
}

#[test]
fn generator_mistakes_list_the_valid_choices() {
    fails_on(&with_line(2, "traces = ['gen:zipff']"), 2, &["unknown generator 'zipff'", "zipf", "adlru-zipf"]);
    fails_on(&with_line(2, "traces = ['gen:zipf,pagez=10']"), 2, &["unknown key 'pagez'", "valid keys:", "pages"]);
    fails_on(&with_line(2, "traces = ['gen:uniform,write-ratio=2']"), 2, &["write-ratio"]);
    let e = fails_on(
        &with_line(2, "traces = [{ gen = 'zipf', requests = 100, pagez = [10, 20] }]"),
        2,
        &["unknown key 'pagez'", "valid keys:"],
    );
    assert_eq!(e.at.unwrap().column, 43, "points at the key");
    fails_on(&with_line(2, "traces = [{ gen = 'zipf', seed = [1, 'x'] }]"), 2, &["seed 'x'"]);
    fails_on(&with_line(2, "traces = [{ gen = 'nope' }]"), 2, &["unknown generator 'nope'"]);
    fails_on(&with_line(2, "traces = [{ gen = 'zipf', volume = 1 }]"), 2, &["applies to trace files"]);
    fails_on(
        &with_line(2, "traces = [{ gen = 'zipf', seed = [1, 2], label = 'z' }]"),
        2,
        &["'label' names one trace", "2"],
    );
    fails_on(&with_line(2, "traces = [{ seed = 1 }]"), 2, &["needs 'trace'", "or 'gen'"]);
    fails_on(&with_line(2, "traces = [3]"), 2, &["a trace is a string"]);
}

#[test]
fn missing_trace_files_are_named_with_their_resolved_path() {
    fails_on(
        &with_line(2, "traces = ['gen:adlru-zipf', 'no/such/trace.csv']"),
        2,
        &["conf/no/such/trace.csv does not exist", "relative to the configuration's directory"],
    );
    fails_on(&with_line(2, "traces = [{ trace = 'msr:missing.csv' }]"), 2, &["missing.csv does not exist"]);
    fails_on(&with_line(2, "traces = [{ trace = 'gen:zipf', colour = 1 }]"), 2, &["unknown key 'colour'", "volume"]);
    fails_on(
        &with_line(2, "traces = [{ trace = 'gen:zipf', format = 'pdf' }]"),
        2,
        &["unknown trace format 'pdf'", "msr"],
    );
    fails_on(&with_line(2, "traces = [{ trace = 'gen:zipf', time_unit = 'fortnight' }]"), 2, &["s, ms, us"]);
}

#[test]
fn two_traces_with_one_label_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["a", "b"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        std::fs::write(dir.path().join(sub).join("t.txt"), "R 1\nW 2\n").unwrap();
    }
    let path = dir.path().join("s.toml");
    let text = with_line(2, "traces = [\n  'a/t.txt',\n  'b/t.txt',\n]");
    let e = parse_at(&text, &path).unwrap_err();
    assert_eq!(e.at.unwrap().line, 4, "{e}");
    assert!(e.to_string().contains("trace label 't.txt' is already used by the trace at line 3"), "{e}");
    // With a label, both are accepted; the same trace twice is kept once.
    let text = with_line(2, "traces = ['a/t.txt', { trace = 'b/t.txt', label = 'b' }, 'a/t.txt']");
    let c = parse_at(&text, &path).unwrap();
    assert_eq!(c.traces.iter().map(|t| t.label.as_str()).collect::<Vec<_>>(), ["t.txt", "b"]);
}

#[test]
fn device_mistakes_list_the_valid_choices() {
    fails_on(&with_line(5, "devices = ['ssd']"), 5, &["unknown device kind `ssd`", "ideal, page, block, bast, fast"]);
    let e = fails_on(&with_line(5, "devices = [{ kind = 'bast', log_block = 4 }]"), 5, &["log_block", "log_blocks"]);
    assert_eq!(e.at.unwrap().column, 29, "points at the key");
    fails_on(&with_line(5, "devices = [{ kind = 'page', gc = ['greedy', 'lru'] }]"), 5, &["lru", "cost-benefit"]);
    fails_on(&with_line(5, "devices = [{ kind = 'fast', log_blocks = [8, 1] }]"), 5, &["at least 2 log blocks"]);
    fails_on(&with_line(5, "devices = [{ kind = 'page', op_percent = 0 }]"), 5, &["no spare block"]);
    fails_on(&with_line(5, "devices = [{ kind = 'page', precondition = 'warm' }]"), 5, &["empty, sequential, aged"]);
    fails_on(&with_line(5, "devices = [{ kind = 'page', wear_threshold = 0 }]"), 5, &["wear levelling threshold"]);
    fails_on(&with_line(5, "devices = [true]"), 5, &["a device is a kind"]);
}

#[test]
fn buffer_and_write_miss_mistakes() {
    fails_on(&with_line(4, "buffers = [10, '12XB']"), 4, &["unknown unit", "KB, MB, GB"]);
    fails_on(&with_line(4, "buffers = [0]"), 4, &["between 1 and"]);
    fails_on(&with_line(4, "buffers = [1.5]"), 4, &["whole number of pages"]);
    fails_on(&with_line(4, "buffers = ['150%']"), 4, &["(0, 100]"]);
    fails_on(&with_line(6, "write_miss = ['fetch', 'nofetch']"), 6, &["valid modes: fetch, no-fetch"]);
    fails_on(&with_line(4, "buffers = []"), 4, &["empty list"]);
    fails_on(&with_line(4, "page_size = 0"), 4, &["page_size must be a positive"]);
    fails_on(&with_line(4, "check_every = -1"), 4, &["check_every"]);
}

#[test]
fn missing_lists_say_what_to_write() {
    let e = parse(&with_line(3, "")).unwrap_err();
    assert_eq!(e.at, None);
    assert_eq!(e.to_string().split(": ").next(), Some("conf/sweep.toml"));
    assert!(e.to_string().contains("missing 'policies'"), "{e}");
    assert!(parse(&with_line(2, "")).unwrap_err().to_string().contains("missing 'traces'"));
    assert!(parse(&with_line(4, "")).unwrap_err().to_string().contains("missing 'buffers'"));
}

#[test]
fn plan_errors_point_at_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    // A buffer size smaller than one page for this trace.
    let text = with_line(4, "buffers = [10, '0.1%']");
    let c = parse_at(&text, &path).unwrap();
    match c.plan(&mut |_| {}) {
        Err(SweepError::Config(e)) => {
            assert_eq!(e.at.unwrap().line, 4, "{e}");
            assert!(e.to_string().contains("less than one page"), "{e}");
        }
        other => panic!("expected a configuration error, got {other:?}"),
    }
    // A malformed trace file read by the planning pass (percent buffer sizes need the
    // footprint): the configuration line and the trace's own file and line.
    std::fs::write(dir.path().join("bad.txt"), "# flashbuf-trace v1\nR 1\nX 2\n").unwrap();
    let text = with_line(2, "traces = [\n 'gen:zipf,requests=10',\n 'bad.txt',\n]")
        .replace("buffers = [10, 20]", "buffers = [10, '50%']");
    assert!(text.contains("'50%'"), "{text}");
    let c = parse_at(&text, &path).unwrap();
    let e = c.plan(&mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("s.toml:4:") && e.contains("bad.txt:3"), "{e}");
}

#[test]
fn file_traces_are_scanned_once_for_their_footprint_then_cached() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.txt"), "# flashbuf-trace v1\nR 1\nW 99\nR 5\n").unwrap();
    let path = dir.path().join("s.toml");
    let text = "traces = ['t.txt']\npolicies = ['lru']\nbuffers = ['67%', 4]\ndevices = ['ideal', 'page']";
    let mut c = parse_at(text, &path).unwrap();
    c.cache = flashbuf_trace::SummaryCache::at(dir.path().join("cache"));
    let plan = |c: &flashbuf_sim::sweep::SweepConfig| {
        let mut scanned = 0;
        let mut opened = Vec::new();
        let mut stored = 0;
        let sweep = c
            .plan(&mut |e| match e {
                flashbuf_sim::sweep::PlanEvent::Scanned(n) => scanned += n,
                flashbuf_sim::sweep::PlanEvent::Opened { trace, .. } => opened.push(trace.to_string()),
                flashbuf_sim::sweep::PlanEvent::Stored(_) => stored += 1,
                flashbuf_sim::sweep::PlanEvent::ScanDone | flashbuf_sim::sweep::PlanEvent::StoreFailed(_) => {}
            })
            .unwrap();
        (sweep, scanned, opened, stored)
    };
    let (sweep, scanned, opened, stored) = plan(&c);
    assert_eq!((scanned, opened, stored), (3, vec!["t.txt".to_string()], 1));
    assert_eq!(sweep.len(), 4);
    let r = &sweep.runs()[0];
    // 67% of 3 distinct pages is 2 frames; the page range (100) is below twice the compact
    // space (2 extents of 64 pages), so pages keep their numbers; the range is not dense
    // enough to direct-map (100 > 4 × 3): the page table hashes.
    assert_eq!((r.spec.trace_pages, r.spec.logical_pages, r.spec.frames, r.requests), (0, 100, 2, 3));
    assert_eq!((r.spec.footprint_pages, r.spec.remap), (Some(3), None));
    assert_eq!(r.spec.trace.path(), Some(dir.path().join("t.txt").as_path()));
    // The second plan reads the summary from the cache: no pass.
    let (again, scanned, opened, stored) = plan(&c);
    assert_eq!((scanned, opened.len(), stored), (0, 0, 0));
    assert_eq!(again.runs()[0].spec.frames, 2);
}
