//! The caching literature's baselines (LIRS, S3-FIFO, SIEVE) and the cost-aware CASA against
//! slow, obviously-correct models of themselves, plus the shared replacer contract on random
//! traces and the command-line names.
//!
//! Each model below is a `Vec`-based O(n) re-implementation written from the policy's paper
//! (the file headers of `lirs.rs`, `s3fifo.rs`, `sieve.rs` and `casa.rs` cite the sections),
//! with the same documented choices as the real policy where the papers leave things open
//! (rounding of the queue sizes, the bound on the LIRS stack, pins). It works on pages, not
//! frames, and knows nothing of the real policy's index-linked lists or hash maps. The
//! differential tests drive both with the same random accesses, pins and unpins, and require
//! the same hits and the same victims, in the same order.
//!
//! # Validation on real traces (not run as tests: the traces live outside the repository)
//!
//! Our numbers come from `flashbuf run -t ../shared/traces/<trace> -p lru,lirs,s3fifo,sieve
//! -b <sizes> --device ideal --output csv`. libCacheSim's come from its Python package
//! (`libcachesim` 0.3.5 from PyPI) fed the same page stream (decoded as flashbuf decodes it;
//! LRU's counts agree exactly on both traces, which confirms the streams are identical), one
//! request per page with object size 1. Hits at each buffer size (pages):
//!
//! | OLTP.lis (914,145 requests) | 1,000 | 2,000 | 5,000 | 10,000 | 15,000 |
//! | --- | --- | --- | --- | --- | --- |
//! | LRU, both (ARC paper Table IV: 32.83 … 64.63%) | 300,122 | 388,235 | 490,443 | 554,906 | 590,851 |
//! | S3-FIFO = libCacheSim `S3FIFOv0` | 373,337 | 429,774 | 510,834 | 572,628 | 603,691 |
//! | libCacheSim `S3FIFO` (post-paper warm-up change) | 373,476 | 429,958 | 509,624 | 573,037 | 603,168 |
//! | SIEVE = libCacheSim `Sieve` | 297,626 | 376,497 | 474,305 | 552,757 | 595,100 |
//! | LIRS (ours) | 316,093 | 388,080 | 481,063 | 551,442 | 584,852 |
//! | libCacheSim `LIRS` = our model + its one deviation | 316,079 | 388,029 | 481,054 | 551,475 | 584,846 |
//!
//! | cloudPhysicsIO.csv (1,141,869 page requests, 4 KiB pages) | 1,000 | 10,000 | 50,000 |
//! | --- | --- | --- | --- |
//! | LRU, both | 112,774 | 126,826 | 196,970 |
//! | S3-FIFO = libCacheSim `S3FIFOv0` | 113,468 | 142,427 | 304,483 |
//! | libCacheSim `S3FIFO` | 113,294 | 140,690 | 301,051 |
//! | SIEVE = libCacheSim `Sieve` | 101,795 | 139,858 | 280,453 |
//! | LIRS (ours) | 76,943 | 153,615 | 257,215 |
//! | libCacheSim `LIRS` = our model + its one deviation | 76,943 | 153,605 | 256,841 |
//!
//! LIRS on the LIRS paper's own traces, against the authors' simulator (`lirs.c`, 2002, which
//! produced the paper's curves; compiled unchanged apart from printing exact miss counts). Ours
//! with `s-max=100` (S effectively unbounded, as in `lirs.c`) and with the default `s-max=2`:
//!
//! | multi2 (26,311 refs), hits | 100 | 200 | 300 | 400 | 500 | 1,000 | 2,000 | 3,000 |
//! | --- | --- | --- | --- | --- | --- | --- | --- | --- |
//! | authors' `lirs.c` | 8,359 | 10,402 | 12,118 | 12,941 | 13,381 | 15,299 | 18,710 | 20,554 |
//! | `lirs:s-max=100` | 8,333 | 10,400 | 12,119 | 12,941 | 13,381 | 15,299 | 18,710 | 20,554 |
//! | `lirs` (s-max=2), hit ratio % | 26.14 | 33.37 | 37.65 | 44.46 | 50.14 | 57.52 | 71.10 | 78.12 |
//!
//! | ps (10,448 refs), hits | 100 | 200 | 300 | 500 | 1,000 | 1,500 |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | authors' `lirs.c` | 3,166 | 5,166 | 5,600 | 5,996 | 6,986 | 7,365 |
//! | `lirs:s-max=100` | 3,185 | 5,166 | 5,600 | 5,996 | 6,986 | 7,365 |
//! | `lirs` (s-max=2), hit ratio % | 18.34 | 37.30 | 52.98 | 56.77 | 66.24 | 70.49 |
//!
//! The small differences left with `s-max=100` come from two details of `lirs.c` that the paper
//! does not state: Lhirs is at least 2 pages (with `hir=0.02` at 100 frames ours gives 8,356 and
//! 3,166), and a reference to the page referenced just before is counted as a hit without
//! touching the state (71 such references in multi2, 45 in ps).

use std::collections::{HashSet, VecDeque};

use flashbuf_policy::casa::{Casa, CasaConfig};
use flashbuf_policy::lirs::{Lirs, LirsConfig};
use flashbuf_policy::s3fifo::{S3Fifo, S3FifoConfig};
use flashbuf_policy::sieve::Sieve;
use flashbuf_policy::testing::{Harness, check_contract};
use flashbuf_policy::{AccessKind, NEVER, NoParams, PolicyConfig, Replacer};
use proptest::prelude::*;

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

// ---------------------------------------------------------------------------------------------
// SIEVE: one queue, index 0 = tail (oldest), last = head (newest).
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct SieveEntry {
    page: u64,
    dirty: bool,
    visited: bool,
}

struct SieveModel {
    cap: usize,
    q: Vec<SieveEntry>,
    /// The page the hand rests on; `None`: start at the tail.
    hand: Option<u64>,
}

impl Model for SieveModel {
    fn access(&mut self, page: u64, write: bool, pinned: &HashSet<u64>) -> Outcome {
        if let Some(e) = self.q.iter_mut().find(|e| e.page == page) {
            e.visited = true;
            e.dirty |= write;
            return Outcome { hit: true, victim: None };
        }
        let mut victim = None;
        if self.q.len() == self.cap {
            let mut i = self.hand.and_then(|h| self.q.iter().position(|e| e.page == h)).unwrap_or(0);
            loop {
                let next = if i + 1 == self.q.len() { 0 } else { i + 1 };
                if pinned.contains(&self.q[i].page) {
                    i = next;
                } else if self.q[i].visited {
                    self.q[i].visited = false;
                    i = next;
                } else {
                    break;
                }
            }
            self.hand = self.q.get(i + 1).map(|e| e.page);
            let e = self.q.remove(i);
            victim = Some((e.page, e.dirty));
        }
        self.q.push(SieveEntry { page, dirty: write, visited: false });
        Outcome { hit: false, victim }
    }
}

// ---------------------------------------------------------------------------------------------
// S3-FIFO: queues with index 0 = tail; the ghost with the oldest page at the front.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct FifoEntry {
    page: u64,
    dirty: bool,
    freq: u8,
}

struct S3FifoModel {
    cap: usize,
    small: Vec<FifoEntry>,
    main: Vec<FifoEntry>,
    ghost: VecDeque<u64>,
    ghost_cap: usize,
    main_target: usize,
    threshold: u8,
}

impl S3FifoModel {
    fn new(cap: usize, c: &S3FifoConfig) -> Self {
        let small = (cap as f64 * c.small) as usize;
        S3FifoModel {
            cap,
            small: Vec::new(),
            main: Vec::new(),
            ghost: VecDeque::new(),
            ghost_cap: (cap as f64 * c.ghost) as usize,
            main_target: cap - small.min(cap),
            threshold: c.move_threshold,
        }
    }

    fn evict_main(&mut self, pinned: &HashSet<u64>) -> Option<FifoEntry> {
        loop {
            let i = self.main.iter().position(|e| !pinned.contains(&e.page))?;
            if self.main[i].freq > 0 {
                let mut e = self.main.remove(i);
                e.freq -= 1;
                self.main.push(e);
            } else {
                return Some(self.main.remove(i));
            }
        }
    }

    /// `None`: no unpinned page left in S.
    fn evict_small(&mut self, pinned: &HashSet<u64>) -> Option<FifoEntry> {
        while let Some(i) = self.small.iter().position(|e| !pinned.contains(&e.page)) {
            let mut e = self.small.remove(i);
            if e.freq >= self.threshold {
                e.freq = 0;
                self.main.push(e);
            } else {
                if self.ghost_cap > 0 {
                    if self.ghost.len() == self.ghost_cap {
                        self.ghost.pop_front();
                    }
                    self.ghost.push_back(e.page);
                }
                return Some(e);
            }
        }
        None
    }
}

impl Model for S3FifoModel {
    fn access(&mut self, page: u64, write: bool, pinned: &HashSet<u64>) -> Outcome {
        if let Some(e) = self.small.iter_mut().chain(self.main.iter_mut()).find(|e| e.page == page) {
            e.freq = (e.freq + 1).min(3);
            e.dirty |= write;
            return Outcome { hit: true, victim: None };
        }
        let from_ghost = match self.ghost.iter().position(|&g| g == page) {
            Some(i) => {
                self.ghost.remove(i);
                true
            }
            None => false,
        };
        let mut victim = None;
        if self.small.len() + self.main.len() == self.cap {
            let e = if self.main.len() > self.main_target || self.small.is_empty() {
                match self.evict_main(pinned) {
                    Some(e) => e,
                    None => match self.evict_small(pinned) {
                        Some(e) => e,
                        None => self.evict_main(pinned).expect("a frame is unpinned"),
                    },
                }
            } else {
                match self.evict_small(pinned) {
                    Some(e) => e,
                    None => self.evict_main(pinned).expect("a frame is unpinned"),
                }
            };
            victim = Some((e.page, e.dirty));
        }
        let e = FifoEntry { page, dirty: write, freq: 0 };
        if from_ghost {
            self.main.push(e)
        } else {
            self.small.push(e)
        }
        Outcome { hit: false, victim }
    }
}

// ---------------------------------------------------------------------------------------------
// LIRS: the stack S with index 0 = bottom; the queue Q with index 0 = front (next victim).
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct StackEntry {
    page: u64,
    lir: bool,
    resident: bool,
}

struct LirsModel {
    stack: Vec<StackEntry>,
    queue: Vec<u64>,
    /// Non-resident pages in S, in the order they became non-resident (oldest first).
    nonresident: Vec<u64>,
    dirty: HashSet<u64>,
    lir_limit: usize,
    s_limit: usize,
    cap: usize,
}

impl LirsModel {
    fn new(cap: usize, c: &LirsConfig) -> Self {
        let hir = ((cap as f64 * c.hir) as usize).max(1).min(cap);
        LirsModel {
            stack: Vec::new(),
            queue: Vec::new(),
            nonresident: Vec::new(),
            dirty: HashSet::new(),
            lir_limit: cap - hir,
            s_limit: (cap as f64 * c.s_max).ceil() as usize,
            cap,
        }
    }

    fn lir_count(&self) -> usize {
        self.stack.iter().filter(|e| e.lir).count()
    }

    fn pos(&self, page: u64) -> Option<usize> {
        self.stack.iter().position(|e| e.page == page)
    }

    fn prune(&mut self) {
        while let Some(b) = self.stack.first().copied() {
            if b.lir {
                break;
            }
            self.stack.remove(0);
            self.nonresident.retain(|&p| p != b.page);
        }
    }

    fn demote_if_over(&mut self) {
        if self.lir_count() > self.lir_limit {
            let b = self.stack.remove(0);
            assert!(b.lir, "the bottom of S is LIR");
            self.queue.push(b.page);
        }
    }

    fn settle(&mut self) {
        self.prune();
        while self.stack.len() > self.s_limit && !self.nonresident.is_empty() {
            let p = self.nonresident.remove(0);
            let i = self.pos(p).expect("a non-resident page is in S");
            self.stack.remove(i);
        }
    }
}

impl Model for LirsModel {
    fn access(&mut self, page: u64, write: bool, pinned: &HashSet<u64>) -> Outcome {
        let in_s = self.pos(page);
        let resident_hir = self.queue.contains(&page);
        let lir = in_s.is_some_and(|i| self.stack[i].lir);
        if lir || resident_hir {
            if write {
                self.dirty.insert(page);
            }
            if lir {
                let e = self.stack.remove(in_s.unwrap());
                self.stack.push(e);
            } else if let (Some(i), true) = (in_s, self.lir_limit > 0) {
                self.stack.remove(i);
                self.stack.push(StackEntry { page, lir: true, resident: true });
                self.queue.retain(|&p| p != page);
                self.demote_if_over();
            } else {
                if let Some(i) = in_s {
                    self.stack.remove(i);
                }
                self.stack.push(StackEntry { page, lir: false, resident: true });
                self.queue.retain(|&p| p != page);
                self.queue.push(page);
            }
            self.settle();
            return Outcome { hit: true, victim: None };
        }
        let mut victim = None;
        if self.lir_count() + self.queue.len() == self.cap {
            let v = match self.queue.iter().position(|p| !pinned.contains(p)) {
                Some(i) => {
                    let v = self.queue.remove(i);
                    if let Some(j) = self.pos(v) {
                        self.stack[j].resident = false;
                        self.nonresident.push(v);
                    }
                    v
                }
                None => {
                    let j = self
                        .stack
                        .iter()
                        .position(|e| e.resident && !pinned.contains(&e.page))
                        .expect("a frame is unpinned");
                    let v = self.stack.remove(j).page;
                    self.prune();
                    v
                }
            };
            victim = Some((v, self.dirty.remove(&v)));
        }
        if write {
            self.dirty.insert(page);
        }
        let remembered = match self.pos(page) {
            Some(i) => {
                self.stack.remove(i);
                self.nonresident.retain(|&p| p != page);
                true
            }
            None => false,
        };
        if remembered && self.lir_limit > 0 {
            self.stack.push(StackEntry { page, lir: true, resident: true });
            self.demote_if_over();
        } else if !remembered && self.lir_count() < self.lir_limit {
            self.stack.push(StackEntry { page, lir: true, resident: true });
        } else {
            self.stack.push(StackEntry { page, lir: false, resident: true });
            self.queue.push(page);
        }
        self.settle();
        Outcome { hit: false, victim }
    }
}

// ---------------------------------------------------------------------------------------------
// CASA: the clean and dirty lists with index 0 = LRU end.
// ---------------------------------------------------------------------------------------------

struct CasaModel {
    cap: usize,
    clean: Vec<u64>,
    dirty: Vec<u64>,
    tau: f64,
    cr: f64,
    cw: f64,
}

impl CasaModel {
    fn new(cap: usize, c: &CasaConfig) -> Self {
        let total = c.read_us + c.write_us;
        CasaModel {
            cap,
            clean: Vec::new(),
            dirty: Vec::new(),
            tau: c.tau0 * cap as f64,
            cr: c.read_us / total,
            cw: c.write_us / total,
        }
    }
}

impl Model for CasaModel {
    fn access(&mut self, page: u64, write: bool, pinned: &HashSet<u64>) -> Outcome {
        let (c, d) = (self.clean.len() as f64, self.dirty.len() as f64);
        if let Some(i) = self.clean.iter().position(|&p| p == page) {
            self.clean.remove(i);
            if write {
                self.dirty.push(page);
            } else {
                self.tau = (self.tau + self.cr * d / c).min(self.cap as f64);
                self.clean.push(page);
            }
            return Outcome { hit: true, victim: None };
        }
        if let Some(i) = self.dirty.iter().position(|&p| p == page) {
            if write {
                self.tau = (self.tau - self.cw * c / d).max(0.0);
            }
            self.dirty.remove(i);
            self.dirty.push(page);
            return Outcome { hit: true, victim: None };
        }
        let mut victim = None;
        if self.clean.len() + self.dirty.len() == self.cap {
            let clean_first = self.clean.len() as f64 >= self.tau;
            let free = |l: &Vec<u64>| l.iter().position(|p| !pinned.contains(p));
            let pick = if clean_first {
                free(&self.clean).map(|i| (self.clean.remove(i), false))
            } else {
                free(&self.dirty).map(|i| (self.dirty.remove(i), true))
            };
            let pick = pick.or_else(|| {
                if clean_first {
                    free(&self.dirty).map(|i| (self.dirty.remove(i), true))
                } else {
                    free(&self.clean).map(|i| (self.clean.remove(i), false))
                }
            });
            victim = Some(pick.expect("a frame is unpinned"));
        }
        if write {
            self.dirty.push(page)
        } else {
            self.clean.push(page)
        }
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

/// Capacity, page range and operations: page ranges from just above the buffer (lots of hits)
/// to several times it (scans, ghosts).
fn scenario() -> impl Strategy<Value = (usize, Vec<Op>)> {
    (1usize..48, 1u64..5).prop_flat_map(|(cap, spread)| (Just(cap), ops(cap as u64 * spread + 3, 600)))
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
    fn sieve_matches_model((cap, ops) in scenario()) {
        differential::<Sieve, _>(cap, NoParams, SieveModel { cap, q: Vec::new(), hand: None }, &ops)?;
    }

    #[test]
    fn s3fifo_matches_model((cap, ops) in scenario(), small in 0usize..=5, ghost in 0usize..=12, threshold in 1u8..=3) {
        let c = S3FifoConfig { small: small as f64 / 10.0, ghost: ghost as f64 / 10.0, move_threshold: threshold };
        differential::<S3Fifo, _>(cap, c.clone(), S3FifoModel::new(cap, &c), &ops)?;
    }

    #[test]
    fn s3fifo_defaults_match_model((cap, ops) in scenario()) {
        let c = S3FifoConfig::default();
        differential::<S3Fifo, _>(cap, c.clone(), S3FifoModel::new(cap, &c), &ops)?;
    }

    #[test]
    fn lirs_matches_model((cap, ops) in scenario(), hir in 1usize..=50, s_max in 1usize..=4) {
        let c = LirsConfig { hir: hir as f64 / 100.0, s_max: s_max as f64 };
        differential::<Lirs, _>(cap, c.clone(), LirsModel::new(cap, &c), &ops)?;
    }

    #[test]
    fn casa_matches_model((cap, ops) in scenario(), read_us in 1u32..300, write_us in 1u32..300, tau0 in 0usize..=4) {
        let c = CasaConfig { read_us: read_us as f64, write_us: write_us as f64, tau0: tau0 as f64 / 4.0 };
        differential::<Casa, _>(cap, c.clone(), CasaModel::new(cap, &c), &ops)?;
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
    fn contract_sieve((cap, reqs) in trace()) {
        contract::<Sieve>(cap, NoParams, &reqs)?;
    }

    #[test]
    fn contract_s3fifo((cap, reqs) in trace()) {
        contract::<S3Fifo>(cap, S3FifoConfig::default(), &reqs)?;
    }

    #[test]
    fn contract_lirs((cap, reqs) in trace()) {
        contract::<Lirs>(cap, LirsConfig::default(), &reqs)?;
    }

    #[test]
    fn contract_casa((cap, reqs) in trace()) {
        contract::<Casa>(cap, CasaConfig::default(), &reqs)?;
    }
}

/// LIRS with an unbounded-in-practice stack never does worse than with the default bound on a
/// looping trace slightly larger than the buffer, the pattern LIRS was built for; and both beat
/// LRU's zero hits there.
#[test]
fn lirs_keeps_most_of_a_loop_larger_than_the_buffer() {
    let cap = 100;
    let pages: Vec<u64> = (0..120).cycle().take(120 * 50).collect();
    let run = |s_max: f64| {
        let mut h = Harness::<Lirs>::new(cap, LirsConfig { hir: 0.01, s_max });
        h.checking = false;
        for &p in &pages {
            h.read(p);
        }
        h.hits
    };
    let (bounded, wide) = (run(2.0), run(50.0));
    // A loop of 120 pages in 100 frames: LRU hits nothing; LIRS keeps its 99 LIR pages.
    assert!(bounded >= 99 * 48, "{bounded}");
    assert!(wide >= bounded, "{wide} < {bounded}");
}

// ---------------------------------------------------------------------------------------------
// Command-line names and parameters.
// ---------------------------------------------------------------------------------------------

#[test]
fn registry_names_defaults_and_parameters() {
    for (spec, label) in [
        ("sieve", "sieve"),
        ("s3fifo", "s3fifo:small=0.1,ghost=0.9,move=2"),
        ("S3FIFO:small=0.2,move=1", "s3fifo:small=0.2,ghost=0.9,move=1"),
        ("lirs", "lirs:hir=0.01,s-max=2"),
        ("lirs:s-max=3", "lirs:hir=0.01,s-max=3"),
        ("casa", "casa:read-us=25,write-us=220,tau0=0.5"),
        ("casa:read-us=10,write-us=200", "casa:read-us=10,write-us=200,tau0=0.5"),
    ] {
        let c: PolicyConfig = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(c.label(), label);
        assert_eq!(c.label().parse::<PolicyConfig>().unwrap(), c);
    }
    assert!("sieve:x=1".parse::<PolicyConfig>().is_err());
    assert!("s3fifo:move=0".parse::<PolicyConfig>().is_err());
    assert!("lirs:s-max=0.5".parse::<PolicyConfig>().is_err());
    assert!("casa:read-us=0,write-us=0".parse::<PolicyConfig>().is_err());
}
