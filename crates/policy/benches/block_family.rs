//! Requests per second of LRU and the block/cluster family (CFDC, FAB, BPLRU, REF, BP-REF,
//! ref-adaptive) in a tight loop without checks: a minimal buffer (dense page→frame array, free list, dirty bits;
//! padding and write-through only counted), a 100,000-frame buffer, a seeded 10-million-request
//! Zipf-like trace over 1 million pages, all reads and 50% writes.
//!
//! The trace: ranks drawn from a Zipf distribution with exponent 0.9 over 1,000,000 ranks
//! (inverse CDF table); rank r maps to page `scatter(r / 16) · 16 + r % 16`, so hot pages come in
//! runs of 16 neighbours (spatial locality for the block policies) and the runs are scattered
//! over the page space by a multiplicative permutation. Run with
//! `cargo bench -p flashbuf-policy --bench block_family`.

use std::hint::black_box;
use std::time::Instant;

use flashbuf_policy::bp_ref::BpRef;
use flashbuf_policy::bplru::Bplru;
use flashbuf_policy::cfdc::Cfdc;
use flashbuf_policy::fab::Fab;
use flashbuf_policy::lru::Lru;
use flashbuf_policy::ref_adaptive::RefAdaptive;
use flashbuf_policy::ref_policy::Ref;
use flashbuf_policy::{Access, AccessKind, Evictions, NIL, NoPins, Replacer};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PAGES: u64 = 1_000_000;
const REQUESTS: usize = 10_000_000;
const FRAMES: usize = 100_000;
const WRITE_BIT: u32 = 1 << 31;

fn trace(seed: u64) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut cdf = Vec::with_capacity(PAGES as usize);
    let mut sum = 0.0f64;
    for r in 1..=PAGES {
        sum += 1.0 / (r as f64).powf(0.9);
        cdf.push(sum);
    }
    let groups = PAGES / 16;
    (0..REQUESTS)
        .map(|_| {
            let u = rng.random::<f64>() * sum;
            let rank = cdf.partition_point(|&c| c < u).min(PAGES as usize - 1) as u64;
            // 7919 is prime and does not divide the number of groups: a permutation of them.
            let page = (rank / 16 * 7919 % groups) * 16 + rank % 16;
            page as u32 | if rng.random_bool(0.5) { WRITE_BIT } else { 0 }
        })
        .collect()
}

#[derive(Default, Debug)]
struct Counts {
    hits: u64,
    writes: u64,
    padding_reads: u64,
    bypassed: u64,
}

fn run<R: Replacer>(config: &R::Config, trace: &[u32], writes: bool) -> (f64, Counts) {
    let mut policy = R::new(FRAMES, config);
    let mut frame_of = vec![NIL; PAGES as usize];
    let mut page_of = vec![0u32; FRAMES];
    let mut dirty = vec![false; FRAMES];
    let mut free: Vec<u32> = (0..FRAMES as u32).rev().collect();
    let mut ev = Evictions { victims: Vec::with_capacity(4096), ..Default::default() };
    let mut c = Counts::default();
    let mask = if writes { u32::MAX } else { !WRITE_BIT };
    let start = Instant::now();
    for (t, &r) in trace.iter().enumerate() {
        let r = r & mask;
        let page = r & !WRITE_BIT;
        let kind = if r & WRITE_BIT != 0 { AccessKind::Write } else { AccessKind::Read };
        let access = Access::new(page as u64, kind, t as u64);
        let f = frame_of[page as usize];
        if f != NIL {
            c.hits += 1;
            dirty[f as usize] |= kind.is_write();
            policy.on_hit(f, &access);
            continue;
        }
        if free.is_empty() {
            ev.clear();
            policy.victims(&access, &NoPins, &mut ev).expect("nothing pinned");
            if let Some(pad) = ev.pad {
                c.writes += pad.pages as u64;
                c.padding_reads += pad.pages as u64 - ev.victims.len() as u64;
            }
            for &v in &ev.victims {
                let vi = v as usize;
                if ev.pad.is_none() && dirty[vi] {
                    c.writes += 1;
                }
                frame_of[page_of[vi] as usize] = NIL;
                dirty[vi] = false;
                free.push(v);
            }
            if ev.bypass {
                c.bypassed += 1;
                c.writes += kind.is_write() as u64;
                continue;
            }
        }
        let f = free.pop().expect("a frame was freed");
        frame_of[page as usize] = f;
        page_of[f as usize] = page;
        dirty[f as usize] = kind.is_write();
        policy.on_insert(f, &access);
    }
    let secs = start.elapsed().as_secs_f64();
    black_box(&policy);
    (trace.len() as f64 / secs, c)
}

/// Best-of-`REPS` rate of `R`, each run paired with an LRU run right before it (the machine may
/// be shared: pairing and best-of keep the ratio meaningful). Returns (rate, LRU rate, counts).
fn paired<R: Replacer>(trace: &[u32], writes: bool) -> (f64, f64, Counts) {
    let (mut best, mut best_lru, mut counts) = (0.0f64, 0.0f64, Counts::default());
    let solo = std::env::var_os("BENCH_SOLO").is_some();
    for _ in 0..if solo { 1 } else { REPS } {
        if !solo {
            best_lru = best_lru.max(run::<Lru>(&Default::default(), trace, writes).0);
        }
        let (rate, c) = run::<R>(&Default::default(), trace, writes);
        best = best.max(rate);
        counts = c;
    }
    (best, best_lru, counts)
}

const REPS: usize = 3;

fn main() {
    // Optional arguments: policy names to run. For profiling, BENCH_MODE=reads|writes runs one
    // mode and BENCH_SOLO=1 runs each policy once without its LRU pairing.
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    let t0 = Instant::now();
    let trace = trace(0x00b1_0c4e);
    eprintln!("trace: {REQUESTS} requests over {PAGES} pages generated in {:.1} s", t0.elapsed().as_secs_f64());
    let modes: &[bool] = match std::env::var("BENCH_MODE").as_deref() {
        Ok("reads") => &[false],
        Ok("writes") => &[true],
        _ => &[false, true],
    };
    for &writes in modes {
        println!(
            "\n{} — {FRAMES} frames, best of {REPS} runs each paired with an LRU run",
            if writes { "50% writes" } else { "all reads" }
        );
        println!(
            "{:<8} {:>12} {:>12} {:>9} {:>10} {:>12} {:>12} {:>9}",
            "policy", "req/s", "LRU req/s", "vs LRU", "hit ratio", "page writes", "pad reads", "bypassed"
        );
        let report = |name: &str, (rate, lru, c): (f64, f64, Counts)| {
            println!(
                "{name:<8} {:>12.0} {:>12.0} {:>9.2} {:>10.4} {:>12} {:>12} {:>9}",
                rate,
                lru,
                rate / lru,
                c.hits as f64 / REQUESTS as f64,
                c.writes,
                c.padding_reads,
                c.bypassed
            );
        };
        if wanted("lru") {
            report("lru", paired::<Lru>(&trace, writes));
        }
        if wanted("cfdc") {
            report("cfdc", paired::<Cfdc>(&trace, writes));
        }
        if wanted("fab") {
            report("fab", paired::<Fab>(&trace, writes));
        }
        if wanted("bplru") {
            report("bplru", paired::<Bplru>(&trace, writes));
        }
        if wanted("ref") {
            report("ref", paired::<Ref>(&trace, writes));
        }
        if wanted("bp-ref") {
            report("bp-ref", paired::<BpRef>(&trace, writes));
        }
        if wanted("ref-adaptive") {
            report("ref-adapt", paired::<RefAdaptive>(&trace, writes));
        }
    }
}
