//! The cost of a curve against the cost of one run (issue "Curves and bounds").
//!
//! On the foundation benchmark's trace — 10 million requests, Zipf 0.99 over 1 million pages,
//! read from a libCacheSim oracleGeneral file, the one `flashbuf bench` generates (shared with it
//! under `target/flashbuf-bench/`, written once) — it times, in interleaved rounds (best of
//! `FLASHBUF_BENCH_ROUNDS`, default 3), each on one thread, trace decoding included:
//!
//! * `lru run`: one LRU run at one size (100,000 frames, the ideal device), as `flashbuf bench`;
//! * `exact curve`: the exact LRU curve of hits, reads and writes at every size (the pass and the
//!   cumulative curves);
//! * `shards 1%`: the fixed-rate SHARDS curve at 1% (sampling 64-page blocks), the reader
//!   dropping the unsampled requests as it decodes (as `flashbuf curve` does);
//! * `shards 1% by page`: the same sampling single pages;
//! * `decoding alone`: reading the trace and nothing else, the floor of every pass;
//!
//! and prints the ratios the issue asks for: exact / run (target ≤ 2) and SHARDS 1% / exact
//! (target ≤ 0.1), with SHARDS 1% / run and decoding / exact beside them. `FLASHBUF_BENCH_REQUESTS` shortens the trace.
//!
//! `cargo bench -p flashbuf-sim --bench curve`

use std::path::PathBuf;
use std::time::Instant;

use flashbuf_flash::{IdealConfig, IdealDevice, thread_cpu_s};
use flashbuf_policy::PolicyConfig;
use flashbuf_sim::curve::LruCurveBuilder;
use flashbuf_sim::sample::{BlockSampler, DEFAULT_SALT};
use flashbuf_sim::{RunOptions, WriteMiss};
use flashbuf_trace::{Format, GenSpec, ReadOptions, TraceSpec, create_writer};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn trace_file(requests: u64) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/flashbuf-bench");
    std::fs::create_dir_all(&dir).expect("create target/flashbuf-bench");
    // The name `flashbuf bench` gives the same trace.
    let path = dir.join(format!("zipf-a0.99-r{requests}-p1000000-w0.oracleGeneral"));
    if !path.exists() {
        eprintln!("generating {} (once)", path.display());
        let spec: GenSpec =
            format!("zipf,requests={requests},pages=1000000,alpha=0.99,write-ratio=0,seed=42").parse().unwrap();
        let mut src = spec.open().unwrap();
        let mut w = create_writer(Format::Oracle, &path, false).unwrap();
        flashbuf_trace::copy_trace(src.as_mut(), w.as_mut()).unwrap();
        w.finish().unwrap();
    }
    path
}

/// Wall and CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, f64, T) {
    let (start, cpu) = (Instant::now(), thread_cpu_s());
    let out = f();
    (start.elapsed().as_secs_f64(), thread_cpu_s() - cpu, out)
}

fn curve(spec: &TraceSpec, mut builder: LruCurveBuilder) -> (f64, u64) {
    let mut src = spec.open(&ReadOptions::default()).unwrap().source;
    let mut batch = Vec::with_capacity(1 << 16);
    // As `flashbuf curve` does: a sampled pass lets the reader drop what it does not keep.
    if let Some(sampler) = builder.sampler().cloned() {
        loop {
            let scanned = src.next_sampled(&mut batch, 1 << 16, &sampler).unwrap();
            if scanned.requests == 0 {
                break;
            }
            builder.feed_sampled(&batch, scanned);
        }
    }
    while src.next_batch(&mut batch, 1 << 16).unwrap() > 0 {
        builder.feed(&batch);
    }
    let c = builder.finish();
    (c.at(100_000, WriteMiss::Fetch, true).hit_ratio(), c.footprint())
}

fn main() {
    let requests = env_u64("FLASHBUF_BENCH_REQUESTS", 10_000_000);
    let rounds = env_u64("FLASHBUF_BENCH_ROUNDS", 3).max(1);
    let path = trace_file(requests);
    let spec = TraceSpec::File { path: path.clone(), format: Some(Format::Oracle) };
    let lru = PolicyConfig::with_defaults("lru").unwrap();
    let names = ["lru run (100,000 frames)", "exact curve", "shards 1%", "shards 1% by page", "decoding alone"];
    let mut best = [(f64::MAX, f64::MAX); 5];
    let mut hit = [0.0; 5];
    for _ in 0..rounds {
        for (i, slot) in best.iter_mut().enumerate() {
            let (wall, cpu, h) = timed(|| match i {
                0 => {
                    let mut src = spec.open(&ReadOptions::default()).unwrap().source;
                    let device = IdealDevice::new(IdealConfig::default()).unwrap();
                    let out =
                        flashbuf_sim::run(&lru, device, src.as_mut(), &RunOptions::new(100_000), &mut |_| {}).unwrap();
                    out.counters.hit_ratio()
                }
                1 => curve(&spec, LruCurveBuilder::exact(flashbuf_sim::DENSE_LIMIT)).0,
                2 => curve(&spec, LruCurveBuilder::shards(BlockSampler::with_rate(0.01, 64, DEFAULT_SALT).unwrap())).0,
                3 => curve(&spec, LruCurveBuilder::shards(BlockSampler::with_rate(0.01, 1, DEFAULT_SALT).unwrap())).0,
                _ => {
                    let mut src = spec.open(&ReadOptions::default()).unwrap().source;
                    let mut batch = Vec::with_capacity(1 << 16);
                    let mut n = 0u64;
                    while src.next_batch(&mut batch, 1 << 16).unwrap() > 0 {
                        n += std::hint::black_box(&batch).len() as u64;
                    }
                    n as f64 / requests as f64
                }
            });
            hit[i] = h;
            slot.0 = slot.0.min(wall);
            slot.1 = slot.1.min(cpu);
        }
    }
    println!("trace: {} ({requests} requests), best of {rounds} interleaved rounds, one thread", path.display());
    println!("{:<26} {:>10} {:>10} {:>22}", "", "wall (s)", "CPU (s)", "hit ratio at 100,000");
    for i in 0..5 {
        println!("{:<26} {:>10.3} {:>10.3} {:>21.2}%", names[i], best[i].0, best[i].1, 100.0 * hit[i]);
    }
    let ratio = |a: usize, b: usize| (best[a].0 / best[b].0, best[a].1 / best[b].1);
    let (w, c) = ratio(1, 0);
    println!("exact curve / one LRU run:   {w:.2} wall, {c:.2} CPU   (target ≤ 2)");
    let (w, c) = ratio(2, 1);
    println!("SHARDS 1% / exact curve:     {w:.3} wall, {c:.3} CPU   (target ≤ 0.1)");
    let (w, c) = ratio(3, 1);
    println!("SHARDS 1% by page / exact:   {w:.3} wall, {c:.3} CPU");
    let (w, c) = ratio(2, 0);
    println!("SHARDS 1% / one LRU run:     {w:.3} wall, {c:.3} CPU");
    let (w, c) = ratio(3, 0);
    println!("SHARDS 1% by page / one run: {w:.3} wall, {c:.3} CPU");
    let (w, c) = ratio(4, 1);
    println!("decoding alone / exact:      {w:.3} wall, {c:.3} CPU   (the floor of any pass)");
}
