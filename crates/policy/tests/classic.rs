//! The classic policies with ghost or history directories (ARC, 2Q, LRU-2) and CLOCK against
//! slow obviously-correct models written from their papers' text, access by access: the same
//! hits and the same evicted pages in the same order. The fast versions keep their directories
//! in dense arrays and index-linked lists; the models keep plain vectors of page numbers.

use flashbuf_policy::arc::Arc;
use flashbuf_policy::clock::Clock;
use flashbuf_policy::lru_k::{Lru2, Lru2Config};
use flashbuf_policy::testing::Harness;
use flashbuf_policy::two_q::{TwoQ, TwoQConfig};
use flashbuf_policy::{NoParams, Replacer};
use proptest::prelude::*;

/// What one access did: hit, and the pages evicted.
type Step = (bool, Vec<u64>);

trait Model {
    fn access(&mut self, page: u64) -> Step;
}

fn take(v: &mut Vec<u64>, page: u64) -> bool {
    match v.iter().position(|&p| p == page) {
        Some(i) => {
            v.remove(i);
            true
        }
        None => false,
    }
}

/// ARC, Fig. 4 of Megiddo & Modha (FAST 2003). Every list is LRU first (index 0), MRU last.
/// When the cache is not full yet, a miss does the directory work without REPLACE.
struct ArcModel {
    c: usize,
    p: f64,
    t1: Vec<u64>,
    t2: Vec<u64>,
    b1: Vec<u64>,
    b2: Vec<u64>,
}

impl ArcModel {
    fn replace(&mut self, in_b2: bool, out: &mut Vec<u64>) {
        let t1 = self.t1.len() as f64;
        if !self.t1.is_empty() && ((in_b2 && t1 == self.p) || t1 > self.p) {
            let x = self.t1.remove(0);
            self.b1.push(x);
            out.push(x);
        } else {
            let x = self.t2.remove(0);
            self.b2.push(x);
            out.push(x);
        }
    }
}

impl Model for ArcModel {
    fn access(&mut self, x: u64) -> Step {
        let mut out = Vec::new();
        if take(&mut self.t1, x) || take(&mut self.t2, x) {
            self.t2.push(x);
            return (true, out);
        }
        let full = self.t1.len() + self.t2.len() == self.c;
        let (b1, b2) = (self.b1.len() as f64, self.b2.len() as f64);
        if self.b1.contains(&x) {
            self.p = (self.p + if b1 >= b2 { 1.0 } else { b2 / b1 }).min(self.c as f64);
            if full {
                self.replace(false, &mut out);
            }
            take(&mut self.b1, x);
            self.t2.push(x);
            return (false, out);
        }
        if self.b2.contains(&x) {
            self.p = (self.p - if b2 >= b1 { 1.0 } else { b1 / b2 }).max(0.0);
            if full {
                self.replace(true, &mut out);
            }
            take(&mut self.b2, x);
            self.t2.push(x);
            return (false, out);
        }
        let total = self.t1.len() + self.t2.len() + self.b1.len() + self.b2.len();
        if self.t1.len() + self.b1.len() == self.c {
            if self.t1.len() < self.c {
                self.b1.remove(0);
                if full {
                    self.replace(false, &mut out);
                }
            } else {
                out.push(self.t1.remove(0));
            }
        } else if total >= self.c {
            if total == 2 * self.c {
                self.b2.remove(0);
            }
            if full {
                self.replace(false, &mut out);
            }
        }
        self.t1.push(x);
        (false, out)
    }
}

/// 2Q, the full version of Johnson & Shasha (VLDB 1994): A1in FIFO, A1out ghost FIFO, Am LRU.
/// Lists oldest first.
struct TwoQModel {
    c: usize,
    kin: usize,
    kout: usize,
    a1in: Vec<u64>,
    a1out: Vec<u64>,
    am: Vec<u64>,
}

impl Model for TwoQModel {
    fn access(&mut self, x: u64) -> Step {
        if take(&mut self.am, x) {
            self.am.push(x);
            return (true, vec![]);
        }
        if self.a1in.contains(&x) {
            return (true, vec![]);
        }
        let was_ghost = take(&mut self.a1out, x);
        let mut out = Vec::new();
        if self.a1in.len() + self.am.len() == self.c {
            if (self.a1in.len() > self.kin || self.am.is_empty()) && !self.a1in.is_empty() {
                let y = self.a1in.remove(0);
                out.push(y);
                if self.kout > 0 {
                    self.a1out.push(y);
                    if self.a1out.len() > self.kout {
                        self.a1out.remove(0);
                    }
                }
            } else {
                out.push(self.am.remove(0));
            }
        }
        if was_ghost {
            self.am.push(x)
        } else {
            self.a1in.push(x)
        }
        (false, out)
    }
}

/// LRU-2 (O'Neil, O'Neil, Weikum, SIGMOD 1993), correlated reference period 0: evict the page
/// whose penultimate reference is oldest, pages seen once first (by last reference); the history
/// of at most `retained` evicted pages is kept, oldest dropped first.
struct Lru2Model {
    c: usize,
    retained: usize,
    now: u64,
    /// (page, penultimate + 1 or 0, last + 1) of resident pages.
    resident: Vec<(u64, u64, u64)>,
    /// The same of evicted pages, oldest first.
    history: Vec<(u64, u64, u64)>,
}

impl Model for Lru2Model {
    fn access(&mut self, x: u64) -> Step {
        self.now += 1;
        if let Some(e) = self.resident.iter_mut().find(|e| e.0 == x) {
            *e = (x, e.2, self.now);
            return (true, vec![]);
        }
        let mut out = Vec::new();
        if self.resident.len() == self.c {
            let i = (0..self.resident.len()).min_by_key(|&i| (self.resident[i].1, self.resident[i].2)).unwrap();
            let v = self.resident.remove(i);
            out.push(v.0);
            if self.retained > 0 {
                self.history.push(v);
                if self.history.len() > self.retained {
                    self.history.remove(0);
                }
            }
        }
        let penult = match self.history.iter().position(|e| e.0 == x) {
            Some(i) => self.history.remove(i).2,
            None => 0,
        };
        self.resident.push((x, penult, self.now));
        (false, out)
    }
}

/// CLOCK (Corbató 1969): frames in a circle, a hand, a reference bit set on every access; the
/// hand clears set bits and evicts the first frame whose bit is clear. Frames are filled in
/// order 0, 1, 2, … and a victim's frame takes the incoming page.
struct ClockModel {
    frames: Vec<(u64, bool)>,
    c: usize,
    hand: usize,
}

impl Model for ClockModel {
    fn access(&mut self, x: u64) -> Step {
        if let Some(f) = self.frames.iter_mut().find(|f| f.0 == x) {
            f.1 = true;
            return (true, vec![]);
        }
        if self.frames.len() < self.c {
            self.frames.push((x, true));
            return (false, vec![]);
        }
        loop {
            let h = self.hand;
            self.hand = (h + 1) % self.c;
            if self.frames[h].1 {
                self.frames[h].1 = false;
            } else {
                let old = self.frames[h].0;
                self.frames[h] = (x, true);
                return (false, vec![old]);
            }
        }
    }
}

fn differential<R: Replacer, M: Model>(
    cap: usize,
    config: R::Config,
    mut model: M,
    trace: &[u64],
) -> Result<(), TestCaseError> {
    let mut h = Harness::<R>::new(cap, config);
    for (i, &page) in trace.iter().enumerate() {
        let before = h.evicted.len();
        let hit = h.read(page);
        let got: Step = (hit, h.evicted[before..].iter().map(|e| e.page).collect());
        prop_assert_eq!(got, model.access(page), "access {} (page {})", i, page);
    }
    Ok(())
}

/// Traces over a few pages with a hot set, so that every list and ghost list fills and drains.
fn trace() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(prop_oneof![2 => 0u64..8, 3 => 0u64..40], 1..400)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arc_matches_model(cap in 1usize..16, trace in trace()) {
        let model = ArcModel { c: cap, p: 0.0, t1: vec![], t2: vec![], b1: vec![], b2: vec![] };
        differential::<Arc, _>(cap, NoParams, model, &trace)?;
    }

    /// The same with page numbers from 2^26 up, which ARC's ghost directory hashes instead of
    /// indexing, mixed with small ones.
    #[test]
    fn arc_matches_model_on_sparse_pages(cap in 1usize..16, trace in trace()) {
        let trace: Vec<u64> = trace.iter().map(|&p| if p % 3 == 0 { p } else { p << 40 | p }).collect();
        let model = ArcModel { c: cap, p: 0.0, t1: vec![], t2: vec![], b1: vec![], b2: vec![] };
        differential::<Arc, _>(cap, NoParams, model, &trace)?;
    }

    #[test]
    fn two_q_matches_model(cap in 1usize..16, kin in 0.0f64..1.0, kout in 0.0f64..2.0, trace in trace()) {
        let config = TwoQConfig { kin, kout };
        let kin = (kin * cap as f64).round() as usize;
        let kout = (kout * cap as f64).round() as usize;
        let model = TwoQModel { c: cap, kin, kout, a1in: vec![], a1out: vec![], am: vec![] };
        differential::<TwoQ, _>(cap, config, model, &trace)?;
    }

    #[test]
    fn lru2_matches_model(cap in 1usize..16, history in 0.0f64..3.0, trace in trace()) {
        let retained = (history * cap as f64).round() as usize;
        let model = Lru2Model { c: cap, retained, now: 0, resident: vec![], history: vec![] };
        differential::<Lru2, _>(cap, Lru2Config { history }, model, &trace)?;
    }

    #[test]
    fn clock_matches_model(cap in 1usize..16, trace in trace()) {
        differential::<Clock, _>(cap, NoParams, ClockModel { frames: vec![], c: cap, hand: 0 }, &trace)?;
    }
}
