//! Requests per second of LRU and the five flash-aware policies of the AD-LRU paper's
//! comparison (CFLRU, LRU-WSR, CCF-LRU, CFLRU/C, AD-LRU), each driven by a minimal buffer loop
//! without any checks: a dense page → frame array, a free list and dirty bits.
//!
//! Trace: 10 million requests over 1 million pages, Zipf 80–20 by formula (1) of the AD-LRU
//! paper (`P_i ∝ 1/i^(1−θ)`, `θ = log 0.8 / log 0.2`, page `i − 1` for rank `i`), seeded; once
//! all reads and once with 50% writes. Buffer: 100,000 frames. Each run is repeated and the
//! best time kept (repeats go round-robin over the policies). Times are the thread's CPU time
//! where Linux reports it, wall-clock time otherwise. Run with `cargo bench -p flashbuf-policy --bench adlru_family`; set
//! `ADLRU_BENCH_REQUESTS` to use a shorter trace, `ADLRU_BENCH_ONLY=name,name` to run only some
//! policies (LRU always runs: it is the reference).

use std::hint::black_box;
use std::time::{Duration, Instant};

use flashbuf_policy::ad_lru::{AdLru, AdLruConfig};
use flashbuf_policy::ccf_lru::CcfLru;
use flashbuf_policy::cflru::{Cflru, CflruConfig};
use flashbuf_policy::cflru_c::{CflruC, CflruCConfig};
use flashbuf_policy::fbp::{Fbp, FbpConfig};
use flashbuf_policy::fbx::{Fbx, FbxConfig};
use flashbuf_policy::lru::Lru;
use flashbuf_policy::lru_wsr::LruWsr;
use flashbuf_policy::{Access, AccessKind, Evictions, NIL, NoParams, NoPins, Replacer};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PAGES: usize = 1_000_000;
const FRAMES: usize = 100_000;
const REPEATS: usize = 5;
/// Requests are packed as `page | WRITE_BIT`.
const WRITE_BIT: u32 = 1 << 31;

fn zipf_trace(requests: usize, write_fraction: f64, seed: u64) -> Vec<u32> {
    let theta = 0.8f64.ln() / 0.2f64.ln();
    let mut cdf = Vec::with_capacity(PAGES);
    let mut sum = 0.0;
    for i in 1..=PAGES {
        sum += 1.0 / (i as f64).powf(1.0 - theta);
        cdf.push(sum);
    }
    for c in &mut cdf {
        *c /= sum;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..requests)
        .map(|_| {
            let u: f64 = rng.random();
            let page = cdf.partition_point(|&c| c < u).min(PAGES - 1) as u32;
            if rng.random_bool(write_fraction) { page | WRITE_BIT } else { page }
        })
        .collect()
}

/// CPU time this thread has run, from `/proc/thread-self/schedstat` (Linux, nanoseconds), so
/// that other processes on a shared machine distort the figures less; wall-clock time where it
/// is not available.
fn thread_cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Measures `f` by thread CPU time if available, else by wall-clock time.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let (cpu, wall) = (thread_cpu_time(), Instant::now());
    let out = f();
    let elapsed = match (cpu, thread_cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => wall.elapsed(),
    };
    (out, elapsed)
}

struct Outcome {
    elapsed: Duration,
    hits: u64,
    written: u64,
}

/// The tight loop: no checks, no hashing, no allocation per request.
fn run<R: Replacer>(config: &R::Config, trace: &[u32]) -> Outcome {
    let mut policy = R::new(FRAMES, config);
    let mut frame_of = vec![NIL; PAGES];
    let mut page_of = vec![0u32; FRAMES];
    let mut dirty = vec![false; FRAMES];
    let mut free: Vec<u32> = (0..FRAMES as u32).rev().collect();
    let mut ev = Evictions::default();
    ev.victims.reserve(8);
    let (mut hits, mut written) = (0u64, 0u64);
    let ((), elapsed) = timed(|| {
        for (t, &req) in trace.iter().enumerate() {
            let page = req & !WRITE_BIT;
            let write = req & WRITE_BIT != 0;
            let kind = if write { AccessKind::Write } else { AccessKind::Read };
            let access = Access::new(page as u64, kind, t as u64);
            let f = frame_of[page as usize];
            if f != NIL {
                hits += 1;
                dirty[f as usize] |= write;
                policy.on_hit(f, &access);
                continue;
            }
            let frame = match free.pop() {
                Some(fr) => fr,
                None => {
                    ev.clear();
                    if policy.victims(&access, &NoPins, &mut ev).is_err() {
                        panic!("no victim with nothing pinned");
                    }
                    for &v in &ev.victims {
                        frame_of[page_of[v as usize] as usize] = NIL;
                        written += dirty[v as usize] as u64;
                        free.push(v);
                    }
                    free.pop().expect("a victim was named")
                }
            };
            frame_of[page as usize] = frame;
            page_of[frame as usize] = page;
            dirty[frame as usize] = write;
            policy.on_insert(frame, &access);
        }
    });
    written += dirty.iter().filter(|&&d| d).count() as u64;
    black_box(&policy);
    Outcome { elapsed, hits, written }
}

/// One policy with its paper-default configuration, as a plain function of the trace.
type Runner = fn(&[u32]) -> Outcome;

const POLICIES: [(&str, Runner); 8] = [
    ("lru", |t| run::<Lru>(&NoParams, t)),
    ("cflru", |t| run::<Cflru>(&CflruConfig::default(), t)),
    ("lru-wsr", |t| run::<LruWsr>(&NoParams, t)),
    ("ccf-lru", |t| run::<CcfLru>(&NoParams, t)),
    ("cflru-c", |t| run::<CflruC>(&CflruCConfig::default(), t)),
    ("ad-lru", |t| run::<AdLru>(&AdLruConfig::default(), t)),
    // flashbuf's own policy, on its default device (MICRON, page-mapped: no clustering).
    ("fbp", |t| run::<Fbp>(&FbpConfig::default(), t)),
    // flashbuf's expert-choosing policy, on the same device: the leader plus six sampled shadows.
    ("fbx", |t| run::<Fbx>(&FbxConfig::default(), t)),
];

fn main() {
    let requests: usize = std::env::var("ADLRU_BENCH_REQUESTS").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000_000);
    let only = std::env::var("ADLRU_BENCH_ONLY").ok();
    for (label, write_fraction) in [("all reads", 0.0), ("50% writes", 0.5)] {
        let trace = zipf_trace(requests, write_fraction, 0xADC0_FFEE);
        println!("{requests} requests, Zipf 80-20 over {PAGES} pages, {FRAMES} frames, {label} (best of {REPEATS})");
        println!("{:>8} {:>12} {:>9} {:>9} {:>10}", "policy", "requests/s", "vs LRU", "hit ratio", "written");
        // Round-robin repeats, so that a burst of load on the machine hits every policy alike;
        // the best time of each policy is kept.
        let mut best: Vec<Option<Outcome>> = POLICIES.iter().map(|_| None).collect();
        for _ in 0..REPEATS {
            for (slot, (name, runner)) in best.iter_mut().zip(POLICIES) {
                if name != "lru" && only.as_ref().is_some_and(|o| !o.split(',').any(|n| n == name)) {
                    continue;
                }
                let o = runner(&trace);
                if slot.as_ref().is_none_or(|b| o.elapsed < b.elapsed) {
                    *slot = Some(o);
                }
            }
        }
        let lru_rate = requests as f64 / best[0].as_ref().expect("LRU always runs").elapsed.as_secs_f64();
        for ((name, _), o) in POLICIES.iter().zip(&best) {
            let Some(o) = o else { continue };
            let rate = requests as f64 / o.elapsed.as_secs_f64();
            println!(
                "{name:>8} {rate:>12.0} {:>9.2} {:>9.4} {:>10}",
                rate / lru_rate,
                o.hits as f64 / requests as f64,
                o.written
            );
        }
        println!();
    }
}
