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

fn curve_with(trace: &[Request], mut b: LruCurveBuilder) -> flashbuf_sim::curve::LruCurve {
    for chunk in trace.chunks(1000) {
        b.feed(chunk);
    }
    b.finish()
}

fn uniform(requests: u64, pages: u64, seed: u64) -> Vec<Request> {
    let spec = TraceSpec::parse(&format!("gen:uniform,requests={requests},pages={pages},write-ratio=0.3,seed={seed}"))
        .unwrap();
    flashbuf_trace::collect(spec.open(&ReadOptions::default()).unwrap().source.as_mut()).unwrap()
}

/// A sample of every block, or a fixed-size sample larger than the footprint, is the exact curve.
#[test]
fn shards_without_sampling_is_the_exact_curve() {
    use flashbuf_sim::sample::BlockSampler;
    let trace = uniform(30_000, 3_000, 1);
    let exact = curve_of(&trace, 1000);
    let all = curve_with(&trace, LruCurveBuilder::shards(BlockSampler::with_rate(1.0, 64, 5).unwrap()));
    let roomy = curve_with(&trace, LruCurveBuilder::shards_fixed_size(1 << 20, 64, 5).unwrap());
    assert_eq!(roomy.rate(), 1.0);
    for frames in (1..=3_100).step_by(37) {
        let want = exact.at(frames, WriteMiss::Fetch, true).counters();
        assert_eq!(all.at(frames, WriteMiss::Fetch, true).counters(), want, "fixed rate 1 at {frames}");
        assert_eq!(roomy.at(frames, WriteMiss::Fetch, true).counters(), want, "fixed size at {frames}");
    }
}

/// Fixed-rate SHARDS is the exact curve of the sampled requests, with each sampled distance
/// `d` standing for `(d − 1) / R + 1` pages and each event for `1 / R`, the hits adjusted by the
/// requests the sample over- or under-counts.
#[test]
fn shards_is_the_scaled_exact_curve_of_its_sample() {
    use flashbuf_sim::sample::BlockSampler;
    let spec = TraceSpec::parse("gen:zipf,requests=60000,pages=6000,write-ratio=0.4,seed=9").unwrap();
    let trace = flashbuf_trace::collect(spec.open(&ReadOptions::default()).unwrap().source.as_mut()).unwrap();
    let sampler = BlockSampler::with_rate(0.25, 4, 3).unwrap();
    let sub: Vec<Request> = trace.iter().copied().filter(|r| sampler.keeps(r.page)).collect();
    let exact_sub = curve_of(&sub, 500);
    let shards = curve_with(&trace, LruCurveBuilder::shards(sampler.clone()));
    let k = 1.0 / sampler.rate();
    let count = |t: &[Request], w: bool| t.iter().filter(|r| r.kind.is_write() == w).count() as f64;
    let (nr, nw) = (count(&trace, false), count(&trace, true));
    let (sr, sw) = (count(&sub, false), count(&sub, true));
    for frames in (1..=6100u64).step_by(13) {
        let bin = ((frames - 1) as f64 * sampler.rate()).floor() as u64 + 1;
        let s = exact_sub.at(bin, WriteMiss::Fetch, true);
        let p = shards.at(frames, WriteMiss::Fetch, true);
        let read_hits = (s.read_hits * k + nr - sr * k).clamp(0.0, nr);
        let write_hits = ((s.hits - s.read_hits) * k + nw - sw * k).clamp(0.0, nw);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.abs().max(1.0);
        assert!(close(p.read_hits, read_hits), "{frames}: read hits {} vs {read_hits}", p.read_hits);
        assert!(close(p.hits, read_hits + write_hits), "{frames}: hits");
        assert!(
            close(p.page_writes(), s.page_writes() * k),
            "{frames}: writes {} vs {}",
            p.page_writes(),
            s.page_writes() * k
        );
        assert!(close(p.flush_writes, s.flush_writes * k), "{frames}: flush");
    }
}

/// Fixed-size SHARDS never tracks more pages than its limit, and its rate falls to about the
/// limit over the footprint.
#[test]
fn fixed_size_shards_stays_within_its_limit() {
    let trace = uniform(300_000, 50_000, 3);
    let mut b = LruCurveBuilder::shards_fixed_size(2048, 1, 11).unwrap();
    for chunk in trace.chunks(997) {
        b.feed(chunk);
        assert!(b.tracked_pages() <= 2048);
    }
    let rate = b.rate();
    assert!((rate - 2048.0 / 50_000.0).abs() < 0.1 * 2048.0 / 50_000.0, "rate {rate}");
    let c = b.finish();
    assert!((c.footprint() as f64 / 50_000.0 - 1.0).abs() < 0.1, "estimated footprint {}", c.footprint());
}
