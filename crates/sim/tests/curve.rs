//! The exact LRU curve (one stack-distance pass) against the simulator, size by size: hits,
//! misses, page reads, page writes (eviction write-backs and the final flush separately),
//! evictions and the ideal device's time, on random traces (property test) and on three traces
//! at 25 or more sizes each, one of them the OLTP trace of the ARC paper when the shared traces
//! are present.

use std::path::PathBuf;

use flashbuf_flash::{DeviceConfig, DeviceKind, IdealConfig, IdealDevice};
use flashbuf_policy::PolicyConfig;
use flashbuf_sim::curve::LruCurveBuilder;
use flashbuf_sim::{RunOptions, RunSpec, WriteMiss, execute_group};
use flashbuf_trace::{AccessKind, ReadOptions, Request, TraceSpec, VecSource};
use proptest::prelude::*;

fn lru() -> PolicyConfig {
    PolicyConfig::with_defaults("lru").unwrap()
}

fn simulate(trace: &[Request], frames: usize, write_miss: WriteMiss, final_flush: bool) -> flashbuf_sim::RunOutput {
    let mut options = RunOptions::new(frames);
    options.write_miss = write_miss;
    options.final_flush = final_flush;
    let device = IdealDevice::new(IdealConfig::default()).unwrap();
    flashbuf_sim::run(&lru(), device, &mut VecSource::new(trace.to_vec()), &options, &mut |_| {}).unwrap()
}

fn curve_of(trace: &[Request], batch: usize) -> flashbuf_sim::curve::LruCurve {
    let mut b = LruCurveBuilder::exact(1 << 20);
    for chunk in trace.chunks(batch.max(1)) {
        b.feed(chunk);
    }
    b.finish()
}

fn trace_strategy() -> impl Strategy<Value = Vec<Request>> {
    proptest::collection::vec(
        (prop_oneof![0u64..12, 0u64..60, (0u64..4).prop_map(|v| (v << 40) | 7)], any::<bool>()).prop_map(|(p, w)| {
            Request { page: p, kind: if w { AccessKind::Write } else { AccessKind::Read }, time_us: None }
        }),
        1..500,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// At every size from 1 to past the footprint, in both write-miss modes, with and without
    /// the final flush, the curve's counters are the simulator's, and the ideal device's time
    /// is priced from them.
    #[test]
    fn exact_curve_equals_simulation_at_every_size(trace in trace_strategy(), batch in 1usize..100) {
        let curve = curve_of(&trace, batch);
        let distinct = trace.iter().map(|r| r.page).collect::<std::collections::HashSet<_>>().len() as u64;
        prop_assert_eq!(curve.footprint(), distinct);
        for frames in 1..=distinct as usize + 2 {
            for write_miss in [WriteMiss::Fetch, WriteMiss::NoFetch] {
                for final_flush in [true, false] {
                    let sim = simulate(&trace, frames, write_miss, final_flush);
                    let point = curve.at(frames as u64, write_miss, final_flush);
                    prop_assert_eq!(&point.counters(), &sim.counters, "{} frames, {:?}, flush {}", frames, write_miss, final_flush);
                    let time_ns = point.page_reads * 25_000.0 + point.page_writes() * 220_000.0;
                    prop_assert_eq!(time_ns as u64, sim.device.time_ns);
                }
            }
        }
    }
}

/// 26 sizes spread geometrically over `1..=footprint`.
fn sizes(footprint: u64) -> Vec<usize> {
    let mut v: Vec<usize> =
        (0..26).map(|i| (footprint as f64).powf(i as f64 / 25.0).round().max(1.0) as usize).collect();
    v.dedup();
    let mut extra = 2;
    while v.len() < 26 {
        v.push(extra);
        extra += 1;
        v.sort_unstable();
        v.dedup();
    }
    v
}

/// Runs LRU at every size of `sizes` over one decoding of `trace`, and compares each with the
/// curve of one pass.
fn check_trace(trace: TraceSpec) {
    let opened = trace.open(&ReadOptions::default()).unwrap();
    let mut source = opened.source;
    let mut b = LruCurveBuilder::exact(flashbuf_sim::DENSE_LIMIT);
    let mut batch = Vec::new();
    while source.next_batch(&mut batch, 1 << 16).unwrap() > 0 {
        b.feed(&batch);
    }
    let curve = b.finish();
    let sizes = sizes(curve.footprint());
    assert!(sizes.len() >= 25);
    let device = DeviceConfig { kind: DeviceKind::Ideal, ..DeviceConfig::default() };
    let specs: Vec<RunSpec> = sizes
        .iter()
        .map(|&f| RunSpec { logical_pages: u64::MAX, ..RunSpec::new(trace.clone(), 0, lru(), f, device.clone()) })
        .collect();
    let refs: Vec<&RunSpec> = specs.iter().collect();
    let outs = execute_group(&refs, &mut |_| {});
    let mut writes_seen = false;
    for (spec, out) in specs.iter().zip(outs) {
        let out = out.unwrap();
        let point = curve.at(spec.frames as u64, WriteMiss::Fetch, true);
        assert_eq!(point.counters(), out.counters, "{} at {} frames", trace, spec.frames);
        writes_seen |= out.counters.page_writes() > 0;
    }
    let has_writes = curve.at(1, WriteMiss::Fetch, true).write_requests > 0.0;
    assert_eq!(writes_seen, has_writes);
}

#[test]
fn exact_curve_equals_simulation_on_the_adlru_zipf_trace() {
    check_trace(TraceSpec::parse("gen:adlru-zipf").unwrap());
}

#[test]
fn exact_curve_equals_simulation_on_a_skewed_write_heavy_trace() {
    check_trace(TraceSpec::parse("gen:zipf,requests=300000,pages=40000,alpha=0.8,write-ratio=0.5,seed=3").unwrap());
}

#[test]
fn exact_curve_equals_simulation_on_the_oltp_trace() {
    let dir = std::env::var_os("FLASHBUF_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"));
    let path = dir.join("OLTP.lis.zst");
    if !path.exists() {
        eprintln!("skipped: {} is not present (set FLASHBUF_TRACES to run this test)", path.display());
        return;
    }
    check_trace(TraceSpec::File { path, format: None });
}
