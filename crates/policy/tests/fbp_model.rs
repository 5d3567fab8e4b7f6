//! FBP against a slow, obviously-correct model of itself written from the rules of its header
//! (`crates/policy/src/fbp.rs`): two `Vec` lists of pages in MRU-first order with a mark per
//! page, a target τ, two ghost FIFOs as `VecDeque`s, and, on block FTLs, the cold-cluster or
//! padded write-back of a dirty victim's block. It knows nothing of the real policy's
//! index-linked lists, hash maps or page-table lookups. Both are driven with the same random
//! accesses on every FTL class; hits and victims (in order) must agree, and the harness checks
//! the replacer contract after every access.

use std::collections::VecDeque;

use flashbuf_policy::fbp::{Fbp, FbpConfig, write_cost_us};
use flashbuf_policy::params::DeviceParams;
use flashbuf_policy::testing::Harness;
use flashbuf_policy::{AccessKind, FtlClass};
use proptest::prelude::*;

#[derive(Clone, Copy)]
struct Entry {
    page: u64,
    last: u64,
    marked: bool,
}

struct Model {
    cap: usize,
    /// MRU first.
    lists: [Vec<Entry>; 2],
    tau: f64,
    w_in_r: f64,
    cluster: Option<u64>,
    /// `Some(always)`, or `None` to decide each padding by its cost (shared log blocks).
    pad: Option<bool>,
    /// Read, program, erase per page.
    costs: (f64, f64, f64),
    ghosts: [VecDeque<u64>; 2],
    time: u64,
    evicted: Vec<u64>,
}

const CLEAN: usize = 0;
const DIRTY: usize = 1;

impl Model {
    fn new(cap: usize, c: &FbpConfig) -> Self {
        let d = c.profile();
        let cluster = (d.ftl != FtlClass::Ideal).then_some(u64::from(d.pages_per_block));
        Model {
            cap,
            lists: [Vec::new(), Vec::new()],
            tau: cap as f64 / 2.0,
            w_in_r: write_cost_us(&d) / d.read_us,
            cluster,
            pad: match (c.pad, d.ftl) {
                (Some(p), _) => Some(p),
                (None, ftl) => Some(matches!(ftl, FtlClass::LogBlock | FtlClass::SharedLog | FtlClass::BlockMapped)),
            },
            costs: (d.read_us, d.program_us, d.erase_us / f64::from(d.pages_per_block)),
            ghosts: [VecDeque::new(), VecDeque::new()],
            time: 0,
            evicted: Vec::new(),
        }
    }

    fn find(&self, page: u64) -> Option<(usize, usize)> {
        (0..2).find_map(|l| self.lists[l].iter().position(|e| e.page == page).map(|i| (l, i)))
    }

    fn learn(&mut self, page: u64, write: bool) {
        let (gc, gd) = (self.ghosts[CLEAN].len() as f64, self.ghosts[DIRTY].len() as f64);
        if let Some(i) = self.ghosts[CLEAN].iter().position(|&p| p == page) {
            self.ghosts[CLEAN].remove(i);
            self.tau = (self.tau + (gd / gc).max(1.0)).min(self.cap as f64);
        } else if let Some(i) = self.ghosts[DIRTY].iter().position(|&p| p == page) {
            self.ghosts[DIRTY].remove(i);
            let cost = 1.0 + if write { self.w_in_r } else { 0.0 };
            self.tau = (self.tau - (gc / gd).max(1.0) * cost).max(0.0);
        }
    }

    fn leave(&mut self, list: usize, page: u64) {
        let i = self.lists[list].iter().position(|e| e.page == page).unwrap();
        self.lists[list].remove(i);
        self.evicted.push(page);
        self.ghosts[list].push_front(page);
        if self.ghosts[list].len() > self.cap {
            self.ghosts[list].pop_back();
        }
    }

    /// The list's victim after second chances: marked pages from the LRU end lose their mark
    /// and move to the MRU end, at most one pass's worth.
    fn second_chance(&mut self, list: usize) -> u64 {
        let mut chances = self.lists[list].len();
        loop {
            let e = *self.lists[list].last().unwrap();
            if e.marked && chances > 0 {
                chances -= 1;
                self.lists[list].pop();
                self.lists[list].insert(0, Entry { marked: false, ..e });
            } else {
                return e.page;
            }
        }
    }

    fn access(&mut self, page: u64, write: bool) -> bool {
        let now = self.time;
        self.time += 1;
        if let Some((l, i)) = self.find(page) {
            self.lists[l].remove(i);
            let to = if write { DIRTY } else { l };
            self.lists[to].insert(0, Entry { page, last: now, marked: true });
            return true;
        }
        self.learn(page, write);
        if self.lists[0].len() + self.lists[1].len() == self.cap {
            let (c, d) = (self.lists[CLEAN].len(), self.lists[DIRTY].len());
            let list = if c > 0 && (c as f64 > self.tau || d == 0) { CLEAN } else { DIRTY };
            let v = self.second_chance(list);
            match self.cluster {
                Some(ppb) if list == DIRTY => {
                    let first = v - v % ppb;
                    let v_last = self.lists[DIRTY].iter().find(|e| e.page == v).unwrap().last;
                    let cut = now - (now - v_last) / 2;
                    let buffered = (first..first + ppb).filter(|&p| self.find(p).is_some()).count() as f64;
                    let dirty =
                        (first..first + ppb).filter(|&p| matches!(self.find(p), Some((DIRTY, _)))).count() as f64;
                    let (r, w, e) = self.costs;
                    let n = ppb as f64;
                    let pad = self.pad.unwrap_or((n - dirty) * w + (n - buffered) * r <= dirty * (r + w + e));
                    for p in first..first + ppb {
                        match self.find(p) {
                            Some((l, _)) if pad => self.leave(l, p),
                            Some((DIRTY, i)) if p == v || self.lists[DIRTY][i].last <= cut => self.leave(DIRTY, p),
                            _ => {}
                        }
                    }
                }
                _ => self.leave(list, v),
            }
        }
        self.lists[usize::from(write)].insert(0, Entry { page, last: now, marked: false });
        false
    }
}

fn config(ftl: u8, pad: Option<bool>, read: u32, program: u32) -> FbpConfig {
    FbpConfig {
        device: DeviceParams {
            read_us: Some(f64::from(read)),
            program_us: Some(f64::from(program)),
            erase_us: Some(f64::from(program) * 3.0),
            ppb: Some(4),
            ftl: Some(
                [FtlClass::Ideal, FtlClass::PageMapped, FtlClass::LogBlock, FtlClass::SharedLog, FtlClass::BlockMapped]
                    [ftl as usize],
            ),
        },
        pad,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn fbp_matches_its_model(
        cap in 1usize..24,
        ftl in 0u8..5,
        pad in proptest::option::of(any::<bool>()),
        read in 1u32..50,
        program in 1u32..400,
        reqs in proptest::collection::vec((0u64..48, any::<bool>()), 1..400),
    ) {
        let c = config(ftl, pad, read, program);
        let mut h = Harness::<Fbp>::new(cap, c.clone());
        let mut m = Model::new(cap, &c);
        for (i, &(page, write)) in reqs.iter().enumerate() {
            let hit = h.access(page, if write { AccessKind::Write } else { AccessKind::Read }, flashbuf_policy::NEVER);
            prop_assert_eq!(hit, m.access(page, write), "hit/miss differs at request {}", i);
            prop_assert_eq!(h.evicted_pages(), m.evicted.clone(), "victims differ at request {}", i);
            prop_assert!((h.policy.target() - m.tau).abs() < 1e-9, "τ differs at request {}", i);
        }
    }
}
