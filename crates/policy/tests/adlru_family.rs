//! The five flash-aware policies of the AD-LRU paper's comparison (CFLRU, LRU-WSR, CCF-LRU,
//! CFLRU/C, AD-LRU) against slow, obviously-correct models of themselves, the shared replacer
//! contract on random traces, and golden hit/write counts.
//!
//! Each model below is a `Vec`-based O(n) re-implementation written directly from the policy's
//! description (the AD-LRU paper §2.3 and §3, Algorithms 1 and 2), with the same documented
//! choices as the real policy for what the papers leave open (window rounding, pins). It works
//! on pages, not frames, and knows nothing of the real policy's data structures. The
//! differential tests drive both with the same random accesses, pins and unpins, and require the
//! same hits and the same victims, in the same order.
//!
//! `print_golden_numbers` (ignored) prints the golden table after an intended change of
//! behaviour; `zipf_500k_50k_experiment` (ignored) reproduces the setting of the paper's Figs. 6
//! and 7d.

use std::collections::HashSet;

use flashbuf_policy::ad_lru::{AdLru, AdLruConfig};
use flashbuf_policy::ccf_lru::CcfLru;
use flashbuf_policy::cflru::{Cflru, CflruConfig};
use flashbuf_policy::cflru_c::{CflruC, CflruCConfig};
use flashbuf_policy::lru::Lru;
use flashbuf_policy::lru_wsr::LruWsr;
use flashbuf_policy::testing::{Harness, check_contract};
use flashbuf_policy::{AccessKind, NEVER, NoParams, PolicyConfig, Replacer};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---------------------------------------------------------------------------------------------
// Models. Every queue is a Vec ordered from the LRU end (index 0) to the MRU end (last).
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct Entry {
    page: u64,
    dirty: bool,
    /// LRU-WSR / CCF-LRU: the cold flag. AD-LRU: the reference bit.
    flag: bool,
    /// CFLRU/C: write accesses since the page entered the buffer.
    writes: u32,
}

impl Entry {
    fn new(page: u64, write: bool, flag: bool) -> Self {
        Entry { page, dirty: write, flag, writes: write as u32 }
    }
}

/// What one access did in a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Outcome {
    hit: bool,
    /// The evicted page and whether it was dirty.
    victim: Option<(u64, bool)>,
}

trait Model {
    fn access(&mut self, page: u64, write: bool, pinned: &HashSet<u64>) -> Outcome;
}

fn position(q: &[Entry], page: u64) -> Option<usize> {
    q.iter().position(|e| e.page == page)
}

fn first_unpinned(q: &[Entry], pinned: &HashSet<u64>) -> Option<usize> {
    q.iter().position(|e| !pinned.contains(&e.page))
}

/// CFLRU: window = the W least recently used pages, W = w·B rounded to the nearest page (halves
/// up). Victim: the least recently used clean page in the window, else the LRU page.
struct CflruModel {
    cap: usize,
    window: usize,
    q: Vec<Entry>,
    /// CFLRU/C: when the window has no clean page, the dirty page with the lowest write count.
    by_write_count: bool,
}

impl CflruModel {
    /// `w = quarters / 4`: `W = round_half_up(quarters·B / 4)` in exact integer arithmetic.
    fn new(cap: usize, quarters: usize, by_write_count: bool) -> Self {
        CflruModel { cap, window: (quarters * cap + 2) / 4, q: Vec::new(), by_write_count }
    }
}

impl Model for CflruModel {
    fn access(&mut self, page: u64, write: bool, pinned: &HashSet<u64>) -> Outcome {
        if let Some(i) = position(&self.q, page) {
            let mut e = self.q.remove(i);
            e.dirty |= write;
            e.writes += write as u32;
            self.q.push(e);
            return Outcome { hit: true, victim: None };
        }
        let mut victim = None;
        if self.q.len() == self.cap {
            let w = self.window.min(self.q.len());
            let free = |e: &Entry| !pinned.contains(&e.page);
            let mut choice = (0..w).find(|&i| !self.q[i].dirty && free(&self.q[i]));
            if choice.is_none() && self.by_write_count {
                // Lowest write count among unpinned pages of the window; ties: LRU-most (the
                // first index wins with min_by_key).
                choice = (0..w).filter(|&i| free(&self.q[i])).min_by_key(|&i| self.q[i].writes);
            }
            let i = choice.or_else(|| first_unpinned(&self.q, pinned)).expect("a frame is unpinned");
            let e = self.q.remove(i);
            victim = Some((e.page, e.dirty));
        }
        self.q.push(Entry::new(page, write, false));
        Outcome { hit: false, victim }
    }
}

/// LRU-WSR: hit or insertion clears the cold flag. Victim search at the LRU end: clean -> evict;
/// dirty and cold -> evict; dirty and not cold -> set cold, move to MRU, look again.
struct LruWsrModel {
    cap: usize,
    q: Vec<Entry>,
}

impl Model for LruWsrModel {
    fn access(&mut self, page: u64, write: bool, pinned: &HashSet<u64>) -> Outcome {
        if let Some(i) = position(&self.q, page) {
            let mut e = self.q.remove(i);
            e.dirty |= write;
            e.flag = false;
            self.q.push(e);
            return Outcome { hit: true, victim: None };
        }
        let mut victim = None;
        if self.q.len() == self.cap {
            loop {
                let i = first_unpinned(&self.q, pinned).expect("a frame is unpinned");
                if !self.q[i].dirty || self.q[i].flag {
                    let e = self.q.remove(i);
                    victim = Some((e.page, e.dirty));
                    break;
                }
                let mut e = self.q.remove(i);
                e.flag = true;
                self.q.push(e);
            }
        }
        self.q.push(Entry::new(page, write, false));
        Outcome { hit: false, victim }
    }
}

/// CCF-LRU: reads enter the cold clean queue, writes the mixed queue as cold dirty pages (cold
/// flag set: referenced once); a hit moves the page to the mixed queue's MRU end (hot). Victim: the cold clean queue's LRU page; else LRU-WSR on the
/// mixed queue, where a hot clean page is demoted to the cold clean queue's MRU end; if the mixed
/// queue runs out, the cold clean queue's LRU page.
struct CcfLruModel {
    cap: usize,
    cold_clean: Vec<Entry>,
    mixed: Vec<Entry>,
}

impl Model for CcfLruModel {
    fn access(&mut self, page: u64, write: bool, pinned: &HashSet<u64>) -> Outcome {
        let found = match position(&self.cold_clean, page) {
            Some(i) => Some(self.cold_clean.remove(i)),
            None => position(&self.mixed, page).map(|i| self.mixed.remove(i)),
        };
        if let Some(mut e) = found {
            e.dirty |= write;
            e.flag = false;
            self.mixed.push(e);
            return Outcome { hit: true, victim: None };
        }
        let mut victim = None;
        if self.cold_clean.len() + self.mixed.len() == self.cap {
            let mut chosen = first_unpinned(&self.cold_clean, pinned).map(|i| self.cold_clean.remove(i));
            while chosen.is_none() {
                let Some(i) = first_unpinned(&self.mixed, pinned) else { break };
                let mut e = self.mixed.remove(i);
                if e.flag {
                    chosen = Some(e);
                } else if !e.dirty {
                    self.cold_clean.push(e);
                } else {
                    e.flag = true;
                    self.mixed.push(e);
                }
            }
            let e = chosen
                .or_else(|| first_unpinned(&self.cold_clean, pinned).map(|i| self.cold_clean.remove(i)))
                .expect("a frame is unpinned");
            victim = Some((e.page, e.dirty));
        }
        let e = Entry::new(page, write, write);
        if write {
            self.mixed.push(e);
        } else {
            self.cold_clean.push(e);
        }
        Outcome { hit: false, victim }
    }
}

/// AD-LRU, Algorithms 1 and 2. `min_lc = tenths / 10`, so `c > min_lc·B` is
/// `10·c > tenths·B` in integers.
struct AdLruModel {
    cap: usize,
    tenths: usize,
    cold: Vec<Entry>,
    hot: Vec<Entry>,
}

/// Algorithm 2 over the unpinned pages of `l`.
fn select_victim(l: &mut Vec<Entry>, pinned: &HashSet<u64>) -> Option<Entry> {
    if let Some(i) = l.iter().position(|e| !e.dirty && !pinned.contains(&e.page)) {
        return Some(l.remove(i));
    }
    loop {
        let i = first_unpinned(l, pinned)?;
        if !l[i].flag {
            return Some(l.remove(i));
        }
        let mut e = l.remove(i);
        e.flag = false;
        l.push(e);
    }
}

impl Model for AdLruModel {
    fn access(&mut self, page: u64, write: bool, pinned: &HashSet<u64>) -> Outcome {
        let found = match position(&self.hot, page) {
            Some(i) => Some(self.hot.remove(i)),
            None => position(&self.cold, page).map(|i| self.cold.remove(i)),
        };
        if let Some(mut e) = found {
            e.dirty |= write;
            e.flag = true;
            self.hot.push(e);
            return Outcome { hit: true, victim: None };
        }
        let mut victim = None;
        if self.cold.len() + self.hot.len() == self.cap {
            let cold_first = 10 * self.cold.len() > self.tenths * self.cap;
            let e = if cold_first {
                select_victim(&mut self.cold, pinned).or_else(|| select_victim(&mut self.hot, pinned))
            } else {
                select_victim(&mut self.hot, pinned).or_else(|| select_victim(&mut self.cold, pinned))
            }
            .expect("a frame is unpinned");
            victim = Some((e.page, e.dirty));
        }
        self.cold.push(Entry::new(page, write, true));
        Outcome { hit: false, victim }
    }
}

// ---------------------------------------------------------------------------------------------
// Differential driver.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    Access(u64, bool),
    /// Pin the n-th (mod count) unpinned buffered page, if that leaves a frame unpinned.
    Pin(usize),
    /// Unpin the n-th (mod count) pinned page.
    Unpin(usize),
}

fn ops(pages: u64, max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        18 => (0..pages, any::<bool>()).prop_map(|(p, w)| Op::Access(p, w)),
        1 => any::<usize>().prop_map(Op::Pin),
        1 => any::<usize>().prop_map(Op::Unpin),
    ];
    proptest::collection::vec(op, 1..max_len)
}

/// Capacity, page range and operations.
fn scenario() -> impl Strategy<Value = (usize, Vec<Op>)> {
    (1usize..64, 1u64..3)
        .prop_flat_map(|(cap, spread)| (Just(cap), ops(cap as u64 * spread + 3, 400)))
        .prop_map(|(cap, ops)| (cap, ops))
}

fn differential<R: Replacer, M: Model>(
    cap: usize,
    config: R::Config,
    mut model: M,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut h = Harness::<R>::new(cap, config);
    let mut pinned: HashSet<u64> = HashSet::new();
    let mut model_victims = 0usize;
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Access(page, write) => {
                let kind = if write { AccessKind::Write } else { AccessKind::Read };
                let hit = h.access(page, kind, NEVER);
                let want = model.access(page, write, &pinned);
                prop_assert_eq!(hit, want.hit, "step {}: hit on page {}", step, page);
                if let Some((vp, vd)) = want.victim {
                    model_victims += 1;
                    prop_assert_eq!(h.evicted.len(), model_victims, "step {}: victim count", step);
                    let got = h.evicted[model_victims - 1];
                    prop_assert_eq!((got.page, got.dirty), (vp, vd), "step {}: victim", step);
                } else {
                    prop_assert_eq!(h.evicted.len(), model_victims, "step {}: unexpected eviction", step);
                }
            }
            Op::Pin(n) => {
                let free: Vec<u64> = h.resident().into_iter().filter(|p| !pinned.contains(p)).collect();
                if !free.is_empty() && pinned.len() + 1 < cap {
                    let p = free[n % free.len()];
                    h.pin(h.frame_of(p).expect("resident"));
                    pinned.insert(p);
                }
            }
            Op::Unpin(n) => {
                let mut list: Vec<u64> = pinned.iter().copied().collect();
                list.sort_unstable();
                if !list.is_empty() {
                    let p = list[n % list.len()];
                    h.unpin(h.frame_of(p).expect("a pinned page stays resident"));
                    pinned.remove(&p);
                }
            }
        }
    }
    h.flush();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn cflru_matches_model((cap, ops) in scenario(), quarters in 0usize..=4) {
        let w = quarters as f64 / 4.0;
        differential::<Cflru, _>(cap, CflruConfig { w }, CflruModel::new(cap, quarters, false), &ops)?;
    }

    #[test]
    fn cflru_c_matches_model((cap, ops) in scenario(), quarters in 0usize..=4) {
        let w = quarters as f64 / 4.0;
        differential::<CflruC, _>(cap, CflruCConfig { w }, CflruModel::new(cap, quarters, true), &ops)?;
    }

    #[test]
    fn lru_wsr_matches_model((cap, ops) in scenario()) {
        differential::<LruWsr, _>(cap, NoParams, LruWsrModel { cap, q: Vec::new() }, &ops)?;
    }

    #[test]
    fn ccf_lru_matches_model((cap, ops) in scenario()) {
        let model = CcfLruModel { cap, cold_clean: Vec::new(), mixed: Vec::new() };
        differential::<CcfLru, _>(cap, NoParams, model, &ops)?;
    }

    #[test]
    fn ad_lru_matches_model((cap, ops) in scenario(), tenths in 0usize..=10) {
        let min_lc = tenths as f64 / 10.0;
        let model = AdLruModel { cap, tenths, cold: Vec::new(), hot: Vec::new() };
        differential::<AdLru, _>(cap, AdLruConfig { min_lc }, model, &ops)?;
    }
}

/// Few pages and long traces: write counts pass 64, where CFLRU/C switches from its count buckets
/// to its heap.
fn heavy_scenario() -> impl Strategy<Value = (usize, Vec<Op>)> {
    (1usize..8, 1u64..4).prop_flat_map(|(cap, extra)| {
        let op = prop_oneof![
            30 => (0..cap as u64 + extra, proptest::bool::weighted(0.9)).prop_map(|(p, w)| Op::Access(p, w)),
            1 => any::<usize>().prop_map(Op::Pin),
            1 => any::<usize>().prop_map(Op::Unpin),
        ];
        (Just(cap), proptest::collection::vec(op, 1..3000))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    #[test]
    fn cflru_c_matches_model_with_heavy_writers((cap, ops) in heavy_scenario(), quarters in 0usize..=4) {
        let w = quarters as f64 / 4.0;
        differential::<CflruC, _>(cap, CflruCConfig { w }, CflruModel::new(cap, quarters, true), &ops)?;
    }
}

// ---------------------------------------------------------------------------------------------
// The shared contract on random traces (no pins; the differential runs above add random pins
// and the Harness checks the same contract after every one of their accesses).
// ---------------------------------------------------------------------------------------------

fn trace() -> impl Strategy<Value = (usize, Vec<(u64, AccessKind)>)> {
    (1usize..64, 1u64..200).prop_flat_map(|(cap, pages)| {
        let req =
            (0..pages, any::<bool>()).prop_map(|(p, w)| (p, if w { AccessKind::Write } else { AccessKind::Read }));
        (Just(cap), proptest::collection::vec(req, 1..500))
    })
}

fn contract<R: Replacer>(cap: usize, config: R::Config, reqs: &[(u64, AccessKind)]) -> Result<(), TestCaseError> {
    let h = check_contract::<R>(cap, config, reqs);
    prop_assert_eq!(h.hits + h.misses, reqs.len() as u64);
    let writes = reqs.iter().filter(|r| r.1.is_write()).count();
    prop_assert!(h.written.len() <= writes, "more write-backs than write accesses");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn contract_cflru((cap, reqs) in trace(), w in 0.0f64..=1.0) {
        contract::<Cflru>(cap, CflruConfig { w }, &reqs)?;
    }

    #[test]
    fn contract_cflru_c((cap, reqs) in trace(), w in 0.0f64..=1.0) {
        contract::<CflruC>(cap, CflruCConfig { w }, &reqs)?;
    }

    #[test]
    fn contract_lru_wsr((cap, reqs) in trace()) {
        contract::<LruWsr>(cap, NoParams, &reqs)?;
    }

    #[test]
    fn contract_ccf_lru((cap, reqs) in trace()) {
        contract::<CcfLru>(cap, NoParams, &reqs)?;
    }

    #[test]
    fn contract_ad_lru((cap, reqs) in trace(), min_lc in 0.0f64..=1.0) {
        contract::<AdLru>(cap, AdLruConfig { min_lc }, &reqs)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Command-line names and parameters.
// ---------------------------------------------------------------------------------------------

#[test]
fn registry_names_defaults_and_parameters() {
    for (spec, label) in [
        ("cflru", "cflru:w=0.5"),
        ("cflru:w=0.25", "cflru:w=0.25"),
        ("lru-wsr", "lru-wsr"),
        ("ccf-lru", "ccf-lru"),
        ("cflru-c", "cflru-c:w=0.5"),
        ("cflru-c:w=1", "cflru-c:w=1"),
        ("ad-lru", "ad-lru:min_lc=0.1"),
        ("AD-LRU:min_lc=0.5", "ad-lru:min_lc=0.5"),
    ] {
        let c: PolicyConfig = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(c.label(), label);
        assert_eq!(c.label().parse::<PolicyConfig>().unwrap(), c);
    }
    assert!("cflru:w=1.5".parse::<PolicyConfig>().is_err());
    assert!("ad-lru:min_lc=-0.1".parse::<PolicyConfig>().is_err());
    assert!("lru-wsr:w=0.5".parse::<PolicyConfig>().is_err());
    assert!("ccf-lru:x=1".parse::<PolicyConfig>().is_err());
}

// ---------------------------------------------------------------------------------------------
// Golden numbers.
// ---------------------------------------------------------------------------------------------

/// 20,000 requests over 2,000 pages, 50% writes: 80% of the requests go to the first 400 pages
/// (uniformly), 20% to the other 1,600. Seeded ChaCha8, so the trace is fixed.
fn golden_trace() -> Vec<(u64, AccessKind)> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x00AD_1A20);
    (0..20_000)
        .map(|_| {
            let page = if rng.random_bool(0.8) { rng.random_range(0..400) } else { rng.random_range(400..2000) };
            let kind = if rng.random_bool(0.5) { AccessKind::Write } else { AccessKind::Read };
            (page, kind)
        })
        .collect()
}

const GOLDEN_SIZES: [usize; 3] = [64, 256, 1024];

/// (hits, pages written incl. the final flush) per buffer size.
fn run_golden<R: Replacer>(config: R::Config, trace: &[(u64, AccessKind)]) -> [(u64, u64); 3] {
    GOLDEN_SIZES.map(|cap| {
        let mut h = Harness::<R>::new(cap, config.clone());
        h.checking = false;
        for &(p, k) in trace {
            h.access(p, k, NEVER);
        }
        h.flush();
        (h.hits, h.written.len() as u64)
    })
}

fn golden_table() -> Vec<(&'static str, [(u64, u64); 3])> {
    let t = golden_trace();
    vec![
        ("lru", run_golden::<Lru>(NoParams, &t)),
        ("cflru", run_golden::<Cflru>(CflruConfig::default(), &t)),
        ("lru-wsr", run_golden::<LruWsr>(NoParams, &t)),
        ("ccf-lru", run_golden::<CcfLru>(NoParams, &t)),
        ("cflru-c", run_golden::<CflruC>(CflruCConfig::default(), &t)),
        ("ad-lru", run_golden::<AdLru>(AdLruConfig::default(), &t)),
    ]
}

/// Pinned (hits, written) at 64, 256 and 1024 frames. LRU is listed for reference.
const GOLDEN: &[(&str, [(u64, u64); 3])] = &[
    ("lru", [(1998, 9505), (7738, 7426), (17037, 1984)]),
    ("cflru", [(2030, 9260), (7943, 6569), (17000, 1818)]),
    ("lru-wsr", [(2035, 9339), (7865, 6864), (17001, 1906)]),
    ("ccf-lru", [(2124, 8983), (8717, 5670), (17008, 1791)]),
    ("cflru-c", [(2205, 9184), (8923, 6075), (16998, 1828)]),
    ("ad-lru", [(2511, 8803), (9645, 5231), (17012, 1809)]),
];

#[test]
fn golden_hits_and_writes() {
    let got = golden_table();
    assert_eq!(got.len(), GOLDEN.len(), "run print_golden_numbers and pin the table");
    for ((name, row), (want_name, want)) in got.iter().zip(GOLDEN) {
        assert_eq!(name, want_name);
        assert_eq!(row, want, "{name}: (hits, written) at {GOLDEN_SIZES:?} frames");
    }
}

/// Prints the golden table in the form of [`GOLDEN`], for when behaviour changes on purpose.
#[test]
#[ignore]
fn print_golden_numbers() {
    println!("const GOLDEN: &[(&str, [(u64, u64); 3])] = &[");
    for (name, row) in golden_table() {
        println!("    (\"{name}\", {row:?}),");
    }
    println!("];");
}

// ---------------------------------------------------------------------------------------------
// The paper's Zipf experiment (Figs. 6 and 7d), for the report. Not a test of any number.
// ---------------------------------------------------------------------------------------------

/// Cumulative probabilities of formula (1) of the AD-LRU paper: `P_i ∝ 1 / i^(1−θ)`,
/// `θ = log a / log b`, for ranks `i = 1..=n`.
fn zipf_cdf(n: usize, a: f64, b: f64) -> Vec<f64> {
    let theta = a.ln() / b.ln();
    let mut cdf = Vec::with_capacity(n);
    let mut sum = 0.0;
    for i in 1..=n {
        sum += 1.0 / (i as f64).powf(1.0 - theta);
        cdf.push(sum);
    }
    for c in &mut cdf {
        *c /= sum;
    }
    cdf
}

fn zipf_trace(requests: usize, pages: usize, seed: u64) -> Vec<(u64, AccessKind)> {
    let cdf = zipf_cdf(pages, 0.8, 0.2);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..requests)
        .map(|_| {
            let u: f64 = rng.random();
            let rank0 = cdf.partition_point(|&c| c < u).min(pages - 1);
            let kind = if rng.random_bool(0.5) { AccessKind::Write } else { AccessKind::Read };
            (rank0 as u64, kind)
        })
        .collect()
}

fn experiment_row<R: Replacer>(config: R::Config, trace: &[(u64, AccessKind)], cap: usize) -> (f64, u64) {
    let mut h = Harness::<R>::new(cap, config);
    h.checking = false;
    for &(p, k) in trace {
        h.access(p, k, NEVER);
    }
    h.flush();
    (h.hits as f64 / trace.len() as f64, h.written.len() as u64)
}

#[test]
#[ignore]
fn zipf_500k_50k_experiment() {
    let trace = zipf_trace(500_000, 50_000, 2012);
    let distinct: HashSet<u64> = trace.iter().map(|r| r.0).collect();
    let writes = trace.iter().filter(|r| r.1.is_write()).count();
    println!("trace: {} requests, {} distinct pages, {} writes", trace.len(), distinct.len(), writes);
    let names = ["lru", "cflru", "lru-wsr", "ccf-lru", "cflru-c", "ad-lru"];
    println!("{:>6} {:>8} {:>9} {:>9}", "frames", "policy", "hit ratio", "written");
    for cap in [512, 1024, 2048, 4096, 8192] {
        let rows = [
            experiment_row::<Lru>(NoParams, &trace, cap),
            experiment_row::<Cflru>(CflruConfig::default(), &trace, cap),
            experiment_row::<LruWsr>(NoParams, &trace, cap),
            experiment_row::<CcfLru>(NoParams, &trace, cap),
            experiment_row::<CflruC>(CflruCConfig::default(), &trace, cap),
            experiment_row::<AdLru>(AdLruConfig::default(), &trace, cap),
        ];
        for (name, (hit_ratio, written)) in names.iter().zip(rows) {
            println!("{cap:>6} {name:>8} {hit_ratio:>9.4} {written:>9}");
        }
    }
}
