//! Compact address spaces, one decoding for many runs, warm-up and intervals, checked against
//! plain runs of the same traces.

use std::path::Path;

use flashbuf_flash::{DeviceConfig, DeviceKind};
use flashbuf_policy::{POLICIES, PolicyConfig};
use flashbuf_sim::prepare::{Ask, Needs, RemapMode, prepare};
use flashbuf_sim::{ResultRow, RunOutput, RunSpec, execute, execute_group};
use flashbuf_trace::formats::VOLUME_SHIFT;
use flashbuf_trace::{Request, SummaryCache, TextWriter, TraceSpec};

/// A sparse, multi-volume trace: a Zipf trace over 6,000 pages whose 64-page blocks are
/// scattered over three volumes and a page range of 2^40 each, with writes.
fn sparse_trace(dir: &Path) -> TraceSpec {
    let spec = TraceSpec::parse("gen:zipf,requests=20000,pages=6000,write-ratio=0.4,seed=5").unwrap();
    let mut src = spec.open(&Default::default()).unwrap();
    let reqs = flashbuf_trace::collect(src.source.as_mut()).unwrap();
    let path = dir.join("sparse.txt");
    let mut w = TextWriter::create(&path, false).unwrap();
    for r in reqs {
        let block = r.page / 64;
        let volume = block % 3;
        let scattered = (block * 7_919_993 + 17) % (1 << 33);
        let page = (volume << VOLUME_SHIFT) | (scattered * 64 + r.page % 64);
        w.write(&Request { page, ..r }).unwrap();
    }
    w.finish().unwrap();
    TraceSpec::parse(path.to_str().unwrap()).unwrap()
}

fn ideal() -> DeviceConfig {
    DeviceConfig { kind: DeviceKind::Ideal, ..DeviceConfig::default() }
}

/// The columns that depend on the run's numbering or on timing, not on its decisions.
fn comparable(mut r: ResultRow) -> ResultRow {
    r.remap_extent_pages = 0;
    r.logical_pages = 0;
    r.run_id.clear();
    r.elapsed_s = 0.0;
    r.cpu_s = 0.0;
    r.runtime_s = 0.0;
    r.requests_per_s = 0.0;
    r
}

#[test]
fn on_the_ideal_device_remapping_changes_no_decision_of_any_policy() {
    let dir = tempfile::tempdir().unwrap();
    let trace = sparse_trace(dir.path());
    for (name, _) in POLICIES {
        let policy = PolicyConfig::with_defaults(name).unwrap();
        for frames in [50, 700] {
            let mut plain = RunSpec::new(trace.clone(), 0, policy.clone(), frames, ideal());
            plain.logical_pages = u64::MAX;
            let base = comparable(execute(&plain, &mut |_| {}).unwrap());
            assert!(base.hits > 0 && base.page_writes > 0, "{name}: {base:?}");
            for extent in [64, 128, 192] {
                let mut remapped = plain.clone();
                remapped.remap = Some(extent);
                let row = execute(&remapped, &mut |_| {}).unwrap();
                assert_eq!(row.remap_extent_pages, extent);
                assert_eq!(comparable(row), base, "{name} with {frames} frames, extents of {extent} pages");
            }
        }
    }
}

#[test]
fn every_flash_device_runs_a_sparse_multi_volume_trace_sized_by_its_footprint() {
    let dir = tempfile::tempdir().unwrap();
    let trace = sparse_trace(dir.path());
    let policies: Vec<PolicyConfig> =
        ["lru", "cfdc", "fab", "bplru", "ref", "bp-ref"].iter().map(|p| p.parse().unwrap()).collect();
    let devices: Vec<DeviceConfig> = [DeviceKind::Page, DeviceKind::Block, DeviceKind::Bast, DeviceKind::Fast]
        .into_iter()
        .map(|kind| DeviceConfig { kind, ..DeviceConfig::default() })
        .collect();
    let extent = flashbuf_sim::prepare::extent_pages(&policies, &devices).unwrap();
    assert_eq!(extent, 64);
    let needs = Needs::of(&["5%".parse().unwrap()], &devices, None, Default::default());
    let ask = Ask { needs, remap: RemapMode::Auto, extent_pages: extent };
    let p = prepare(&trace, &Default::default(), "sparse", ask, &SummaryCache::disabled(), &mut |_| {}).unwrap();
    let summary = p.summary.as_ref().unwrap();
    // The text format has no volume column: the volume bits are part of its page numbers.
    assert!(summary.volumes.is_empty());
    assert!(summary.stats.page_range() > 2 << 40);
    // Sparse: remapped into touched blocks × 64 pages, never more than the footprint's blocks.
    assert_eq!(p.remap, Some(64));
    let extents = summary.extents_of(64).unwrap();
    assert_eq!(p.page_space, Some(extents * 64));
    assert!(extents <= 6000 / 64 + 1, "{extents}");
    let frames = p.frames("5%".parse().unwrap()).unwrap();
    assert_eq!(frames as u64, (summary.stats.distinct_pages as f64 * 0.05).round() as u64);
    for device in &devices {
        let logical = p.logical_pages(device, None).unwrap();
        assert_eq!(logical, extents * 64);
        let specs: Vec<RunSpec> = policies.iter().map(|pol| p.run_spec(pol, frames, device, logical)).collect();
        let refs: Vec<&RunSpec> = specs.iter().collect();
        for (spec, out) in specs.iter().zip(execute_group(&refs, &mut |_| {})) {
            let out = out.unwrap_or_else(|e| panic!("{} on {}: {e}", spec.policy, device.label()));
            assert_eq!(out.counters.requests, 20_000);
            assert!(out.device.host_writes > 0);
        }
    }
}

#[test]
fn one_decoding_for_many_runs_gives_the_rows_of_runs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let trace = sparse_trace(dir.path());
    let device = DeviceConfig { kind: DeviceKind::Page, ..DeviceConfig::default() };
    let mut specs = Vec::new();
    for name in ["lru", "arc", "cfdc", "bplru", "min"] {
        for frames in [30, 300] {
            let mut s = RunSpec::new(trace.clone(), 0, name.parse().unwrap(), frames, device.clone());
            s.remap = Some(64);
            s.logical_pages = 100 * 64;
            specs.push(s);
        }
    }
    let refs: Vec<&RunSpec> = specs.iter().collect();
    let mut simulated = 0;
    let together = execute_group(&refs, &mut |n| simulated += n);
    assert_eq!(simulated, 20_000 * specs.len() as u64);
    for (spec, out) in specs.iter().zip(together) {
        let row = comparable(ResultRow::of_run(spec, &out.unwrap()));
        let alone = comparable(execute(spec, &mut |_| {}).unwrap());
        assert_eq!(row, alone, "{} with {} frames", spec.policy, spec.frames);
    }
}

fn run_with(trace: &TraceSpec, policy: &str, warmup: u64, interval: Option<u64>) -> RunOutput {
    let device = DeviceConfig { kind: DeviceKind::Page, ..DeviceConfig::default() };
    let mut s = RunSpec::new(trace.clone(), 6000, policy.parse().unwrap(), 200, device);
    s.warmup = warmup;
    s.interval = interval;
    execute_group(&[&s], &mut |_| {}).pop().unwrap().unwrap()
}

#[test]
fn intervals_add_up_to_the_run_and_a_warmup_drops_its_requests_counters() {
    let trace = TraceSpec::parse("gen:zipf,requests=10000,pages=6000,write-ratio=0.4,seed=8").unwrap();
    for policy in ["lru", "cfdc", "bp-ref", "min"] {
        let whole = run_with(&trace, policy, 0, None);
        let by_3000 = run_with(&trace, policy, 0, Some(3000));
        assert_eq!(by_3000.counters, whole.counters, "{policy}");
        assert_eq!(by_3000.device, whole.device, "{policy}");
        let positions: Vec<u64> = by_3000.intervals.iter().map(|p| p.position).collect();
        assert_eq!(positions, [3000, 6000, 9000, 10_000], "{policy}");
        let numbers: Vec<Option<u64>> = by_3000.intervals.iter().map(|p| p.interval).collect();
        assert_eq!(numbers, [Some(1), Some(2), Some(3), Some(4)]);
        let sum = |f: fn(&flashbuf_sim::Period) -> u64| by_3000.intervals.iter().map(f).sum::<u64>();
        assert_eq!(sum(|p| p.counters.requests), 10_000);
        assert_eq!(sum(|p| p.counters.hits), whole.counters.hits);
        assert_eq!(sum(|p| p.counters.page_writes()), whole.counters.page_writes());
        assert_eq!(sum(|p| p.device.erases), whole.device.erases);
        assert_eq!(sum(|p| p.device.flash_programs), whole.device.flash_programs);
        // The final flush is in the last interval.
        assert_eq!(by_3000.intervals[3].counters.flush_writes, whole.counters.flush_writes);
        // A warm-up of 3,000 requests counts what the first interval did not.
        let warm = run_with(&trace, policy, 3000, None);
        let first = &by_3000.intervals[0];
        assert_eq!(warm.warmup, 3000);
        assert_eq!(warm.counters, whole.counters.since(&first.counters), "{policy}");
        assert_eq!(warm.device.erases, whole.device.erases - first.device.erases);
        assert_eq!(warm.device.host_writes, whole.device.host_writes - first.device.host_writes);
        // Intervals after a warm-up start at its end; one ending exactly at the end of the
        // trace takes the final flush.
        let both = run_with(&trace, policy, 3000, Some(3500));
        let positions: Vec<u64> = both.intervals.iter().map(|p| p.position).collect();
        assert_eq!(positions, [6500, 10_000], "{policy}");
        assert_eq!(both.intervals[1].counters.flush_writes, whole.counters.flush_writes);
    }
    let e = execute_group(
        &[&{
            let mut s = RunSpec::new(trace.clone(), 6000, "lru".parse().unwrap(), 10, DeviceConfig::default());
            s.warmup = 20_000;
            s
        }],
        &mut |_| {},
    )
    .pop()
    .unwrap()
    .unwrap_err();
    assert!(e.to_string().contains("warm-up of 20000 requests is longer than the trace (10000 requests)"), "{e}");
}

#[test]
fn checking_every_request_passes_on_runs_that_end_with_dirty_pages() {
    // Every policy, checked after every request over a page-mapped device, ending with dirty
    // pages that the final flush writes back.
    let trace = TraceSpec::parse("gen:zipf,requests=3000,pages=400,write-ratio=0.6,seed=3").unwrap();
    let device = DeviceConfig { kind: DeviceKind::Page, ..DeviceConfig::default() };
    for (name, _) in POLICIES {
        let mut s = RunSpec::new(trace.clone(), 400, PolicyConfig::with_defaults(name).unwrap(), 64, device.clone());
        s.check_every = Some(1);
        let out = execute_group(&[&s], &mut |_| {}).pop().unwrap().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out.counters.flush_writes > 0, "{name}");
    }
}

#[test]
fn traces_that_end_on_or_past_a_window_boundary_give_the_rows_of_runs_alone() {
    use flashbuf_sim::group::{GROUP_BATCH, GROUP_WINDOW};
    let window = (GROUP_BATCH * GROUP_WINDOW) as u64;
    // A trace of exactly one window, one more request, and a short last window of one batch and
    // a bit: every request is fed once, in order, to every run.
    for requests in [window, window + 1, window + GROUP_BATCH as u64 + 7] {
        let trace =
            TraceSpec::parse(&format!("gen:zipf,requests={requests},pages=20000,write-ratio=0.3,seed=3")).unwrap();
        let device = DeviceConfig { kind: DeviceKind::Page, ..DeviceConfig::default() };
        let specs: Vec<RunSpec> = ["lru", "cflru", "min"]
            .iter()
            .map(|name| RunSpec::new(trace.clone(), 20000, name.parse().unwrap(), 500, device.clone()))
            .collect();
        let refs: Vec<&RunSpec> = specs.iter().collect();
        let mut simulated = 0;
        let together = execute_group(&refs, &mut |n| simulated += n);
        assert_eq!(simulated, requests * specs.len() as u64);
        for (spec, out) in specs.iter().zip(together) {
            let out = out.unwrap();
            assert_eq!(out.counters.requests, requests, "{}", spec.policy);
            let alone = comparable(execute(spec, &mut |_| {}).unwrap());
            assert_eq!(comparable(ResultRow::of_run(spec, &out)), alone, "{} over {requests} requests", spec.policy);
        }
    }
}
