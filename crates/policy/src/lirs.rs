//! LIRS — low inter-reference recency set.
//!
//! Source: Jiang & Zhang, *LIRS: an efficient low inter-reference recency set replacement
//! policy to improve buffer cache performance* (SIGMETRICS 2002), §3 (Figs. 2–4, the three
//! cases of §3.3); the resident HIR share Lhirs = 1% of the buffer is the paper's setting.
//!
//! Pages are LIR (low inter-reference recency: kept resident) or HIR. The LIR pages fill
//! Llirs = B − Lhirs frames; the resident HIR pages fill the other Lhirs frames and wait in the
//! FIFO queue Q. The LIRS stack S orders by recency the LIR pages, and HIR pages (resident or
//! not) seen more recently than the least recent LIR page; stack pruning keeps an LIR page at
//! S's bottom. On a hit to an LIR page, it moves to S's top (then S is pruned). On a hit to a
//! resident HIR page in S, it moves to S's top and becomes LIR, and the LIR page at S's bottom
//! becomes HIR and moves to Q's end; a resident HIR page not in S moves to S's top and Q's end.
//! A miss evicts the page at Q's front (it stays in S, as a non-resident HIR page, if it was
//! there); the missed page goes to S's top and becomes LIR if S remembered it (demoting S's
//! bottom as above), HIR at Q's end otherwise. Until Llirs pages are LIR, missed pages become
//! LIR directly (the paper's warm-up).
//!
//! Choices where the paper is silent, and the bound on S:
//! * Lhirs = max(1, ⌊0.01·B⌋) frames (the authors' own simulator takes max(2, ⌊0.01·B⌋),
//!   libCacheSim max(1, ⌊0.01·B⌋); the two agree from B = 200 frames on).
//! * S is bounded: after each request, while S holds more than `s-max`·B entries, the
//!   non-resident HIR entry that became non-resident longest ago is dropped (libCacheSim's rule
//!   and bound, 2·B). The paper's algorithm lets S grow with the trace's footprint (the authors'
//!   simulator bounds it at 2500·B); the bound keeps the ghost directory, a hash map from page
//!   to ghost slot, at ⌈s-max·B⌉ + 1 slots allocated when the policy is built.
//! * A repeated reference to the page just referenced is an ordinary hit (the authors'
//!   simulator skips it without touching the state; the paper does not mention it).
//! * Pins: the victim is the unpinned page nearest Q's front; if every page of Q is pinned (or
//!   Q is empty, possible only after external removals), the unpinned LIR page nearest S's
//!   bottom leaves the buffer and S.
//! * With B = 1 there is no LIR page (Llirs = 0): the only frame holds an HIR page.
//!
//! libCacheSim's `LIRS.c` differs in one case (a hit on a resident HIR page that is not in S
//! there also demotes S's bottom LIR page and evicts Q's front), so its hit counts differ from
//! ours; see `crates/policy/tests/cache_baselines.rs`.

use rustc_hash::FxHashMap;

use crate::lists::FrameLists;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// The only list of the stack's and the queue's [`FrameLists`].
const S: u8 = 0;
const Q: u8 = 0;
const NH: u8 = 0;

/// Parameters of [`Lirs`].
#[derive(Clone, Debug, PartialEq)]
pub struct LirsConfig {
    /// Share of the buffer for resident HIR pages, Lhirs (paper: 1%).
    pub hir: f64,
    /// Bound on the LIRS stack S, in entries per buffer frame (libCacheSim: 2).
    pub s_max: f64,
}

impl Default for LirsConfig {
    fn default() -> Self {
        LirsConfig { hir: 0.01, s_max: 2.0 }
    }
}

impl PolicyParams for LirsConfig {
    const KEYS: &'static [ParamDoc] = &[
        ParamDoc { key: "hir", help: "resident HIR share Lhirs, fraction of the buffer, default 0.01" },
        ParamDoc { key: "s-max", help: "bound on the LIRS stack, entries per frame, 1..100, default 2" },
    ];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "hir" => self.hir = parse_fraction(key, value, 0.0, 1.0)?,
            "s-max" => self.s_max = parse_fraction(key, value, 1.0, 100.0)?,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        vec![fmt_float(self.hir), fmt_float(self.s_max)]
    }
}

/// The LIRS policy.
///
/// Nodes of the stack are frames `0..B` (resident pages) and ghost slots `B..B+G`
/// (non-resident HIR pages).
#[derive(Clone, Debug)]
pub struct Lirs {
    capacity: usize,
    /// The LIRS stack S over frames and ghost slots; front = top (most recent).
    stack: FrameLists,
    /// The queue Q of resident HIR frames; front = end (newest), back = front (next victim).
    queue: FrameLists,
    /// Ghost slots (indexed from 0) in the order they became non-resident; front = newest.
    nonresident: FrameLists,
    /// Page of every node.
    page: Vec<u64>,
    resident: Vec<bool>,
    lir: Vec<bool>,
    dirty: Vec<bool>,
    ghost_of: FxHashMap<u64, u32>,
    free_ghosts: Vec<u32>,
    lir_count: usize,
    lir_limit: usize,
    s_limit: usize,
}

impl Lirs {
    #[inline]
    fn is_ghost(&self, node: u32) -> bool {
        node as usize >= self.capacity
    }

    /// Stack pruning: drops the HIR entries at S's bottom until an LIR page is there.
    #[inline]
    fn prune(&mut self) {
        while let Some(b) = self.stack.back(S) {
            if !self.is_ghost(b) && self.lir[b as usize] {
                break;
            }
            self.stack.remove(b);
            if self.is_ghost(b) {
                self.forget_ghost(b);
            }
        }
    }

    /// Releases ghost slot `g` (already unlinked from S).
    #[inline]
    fn forget_ghost(&mut self, g: u32) {
        self.nonresident.remove(g - self.capacity as u32);
        self.ghost_of.remove(&self.page[g as usize]);
        self.free_ghosts.push(g);
    }

    /// Drops the oldest non-resident entry (from S and the directory).
    fn drop_oldest_ghost(&mut self) -> bool {
        let Some(slot) = self.nonresident.back(NH) else { return false };
        let g = slot + self.capacity as u32;
        self.stack.remove(g);
        self.forget_ghost(g);
        true
    }

    /// The LIR page at S's bottom becomes HIR and goes to Q's end.
    #[inline]
    fn demote_bottom(&mut self) {
        let b = self.stack.back(S).expect("an LIR page is at the bottom of a non-empty stack");
        debug_assert!(!self.is_ghost(b) && self.lir[b as usize]);
        self.stack.remove(b);
        self.lir[b as usize] = false;
        self.lir_count -= 1;
        self.queue.push_front(Q, b);
    }

    /// `frame` becomes LIR (it is at S's top); demotes S's bottom if the LIR set overflows.
    #[inline]
    fn promote(&mut self, frame: FrameId) {
        self.lir[frame as usize] = true;
        self.lir_count += 1;
        if self.lir_count > self.lir_limit {
            self.demote_bottom();
        }
    }

    /// End of every request: prune S and keep it within its bound.
    #[inline]
    fn settle(&mut self) {
        self.prune();
        while self.stack.len(S) > self.s_limit && self.drop_oldest_ghost() {}
    }

    /// Whether `frame` holds an LIR page (for tests and reports).
    pub fn is_lir(&self, frame: FrameId) -> bool {
        self.resident[frame as usize] && self.lir[frame as usize]
    }

    /// Whether S remembers `page` as a non-resident HIR page.
    pub fn remembers(&self, page: u64) -> bool {
        self.ghost_of.contains_key(&page)
    }

    /// Whether `frame` has an entry in the stack S.
    pub fn in_stack(&self, frame: FrameId) -> bool {
        self.stack.contains(S, frame)
    }

    /// Number of LIR pages, resident HIR pages and stack entries.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.lir_count, self.queue.len(Q), self.stack.len(S))
    }
}

impl Replacer for Lirs {
    type Config = LirsConfig;

    fn new(capacity: usize, config: &LirsConfig) -> Self {
        let hir_limit = ((capacity as f64 * config.hir) as usize).max(1).min(capacity);
        let s_limit = (capacity as f64 * config.s_max).ceil() as usize;
        let ghosts = s_limit + 1;
        let mut ghost_of = FxHashMap::default();
        ghost_of.reserve(ghosts);
        Lirs {
            capacity,
            stack: FrameLists::new(capacity + ghosts, 1),
            queue: FrameLists::new(capacity, 1),
            nonresident: FrameLists::new(ghosts, 1),
            page: vec![0; capacity + ghosts],
            resident: vec![false; capacity],
            lir: vec![false; capacity],
            dirty: vec![false; capacity],
            ghost_of,
            free_ghosts: (capacity as u32..(capacity + ghosts) as u32).rev().collect(),
            lir_count: 0,
            lir_limit: capacity - hir_limit,
            s_limit,
        }
    }

    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        self.dirty[f] |= access.kind.is_write();
        if self.lir[f] {
            self.stack.move_to_front(S, frame);
        } else if self.stack.contains(S, frame) && self.lir_limit > 0 {
            self.stack.move_to_front(S, frame);
            self.queue.remove(frame);
            self.promote(frame);
        } else {
            self.stack.move_to_front(S, frame);
            self.queue.move_to_front(Q, frame);
        }
        self.settle();
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        self.page[f] = access.page;
        self.resident[f] = true;
        self.dirty[f] = access.kind.is_write();
        self.lir[f] = false;
        let remembered = match self.ghost_of.get(&access.page) {
            Some(&g) => {
                self.stack.remove(g);
                self.forget_ghost(g);
                true
            }
            None => false,
        };
        self.stack.push_front(S, frame);
        if remembered && self.lir_limit > 0 {
            self.promote(frame);
        } else if !remembered && self.lir_count < self.lir_limit {
            self.lir[f] = true;
            self.lir_count += 1;
        } else {
            self.queue.push_front(Q, frame);
        }
        self.settle();
    }

    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.len() == 0 {
            return Err(EvictError::Empty);
        }
        let from_q = self.queue.iter_from_back(Q).find(|&f| !pins.is_pinned(f));
        let victim = match from_q {
            Some(v) => {
                self.queue.remove(v);
                if self.stack.contains(S, v) {
                    // It stays in S as a non-resident HIR page, in the same place.
                    if self.free_ghosts.is_empty() {
                        self.drop_oldest_ghost();
                    }
                    let g = self.free_ghosts.pop().expect("a ghost slot was just freed");
                    self.page[g as usize] = self.page[v as usize];
                    self.stack.insert_before(v, g);
                    self.stack.remove(v);
                    self.nonresident.push_front(NH, g - self.capacity as u32);
                    self.ghost_of.insert(self.page[g as usize], g);
                }
                v
            }
            None => {
                let v = self
                    .stack
                    .iter_from_back(S)
                    .find(|&n| !self.is_ghost(n) && !pins.is_pinned(n))
                    .ok_or(EvictError::AllPinned)?;
                self.stack.remove(v);
                if self.lir[v as usize] {
                    self.lir[v as usize] = false;
                    self.lir_count -= 1;
                }
                self.prune();
                v
            }
        };
        self.resident[victim as usize] = false;
        out.victims.push(victim);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        let f = frame as usize;
        if !self.resident[f] {
            return;
        }
        self.resident[f] = false;
        self.stack.remove(frame);
        self.queue.remove(frame);
        if self.lir[f] {
            self.lir[f] = false;
            self.lir_count -= 1;
        }
        self.prune();
    }

    fn len(&self) -> usize {
        self.lir_count + self.queue.len(Q)
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.stack.check()?;
        self.queue.check()?;
        self.nonresident.check()?;
        let mut lir = 0;
        for f in 0..self.capacity as u32 {
            let (r, l) = (self.resident[f as usize], self.lir[f as usize]);
            if !r && (l || self.stack.contains(S, f) || self.queue.contains(Q, f)) {
                return Err(format!("lirs: free frame {f} is still listed"));
            }
            if r && l {
                lir += 1;
                if !self.stack.contains(S, f) || self.queue.contains(Q, f) {
                    return Err(format!("lirs: LIR frame {f} must be in S and not in Q"));
                }
            }
            if r && !l && !self.queue.contains(Q, f) {
                return Err(format!("lirs: resident HIR frame {f} is not in Q"));
            }
        }
        if lir != self.lir_count || self.lir_count > self.lir_limit {
            return Err(format!("lirs: {lir} LIR frames, count {}, limit {}", self.lir_count, self.lir_limit));
        }
        if let Some(b) = self.stack.back(S)
            && (self.is_ghost(b) || !self.lir[b as usize])
        {
            return Err(format!("lirs: stack bottom {b} is not an LIR page"));
        }
        let ghosts_in_s = self.stack.iter_from_back(S).filter(|&n| self.is_ghost(n)).count();
        if ghosts_in_s != self.ghost_of.len() || ghosts_in_s != self.nonresident.len(NH) {
            return Err(format!(
                "lirs: {ghosts_in_s} ghosts in S, {} mapped, {} in age order",
                self.ghost_of.len(),
                self.nonresident.len(NH)
            ));
        }
        for (&p, &g) in &self.ghost_of {
            if !self.is_ghost(g) || self.page[g as usize] != p {
                return Err(format!("lirs: page {p} maps to node {g}, which does not hold it"));
            }
        }
        if self.stack.len(S) > self.s_limit {
            return Err(format!("lirs: stack holds {} entries, bound {}", self.stack.len(S), self.s_limit));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    /// The paper's Fig. 3 setting: Llirs = 2, Lhirs = 1 (a buffer of 3 frames).
    fn three() -> Harness<Lirs> {
        Harness::<Lirs>::new(3, LirsConfig { hir: 1.0 / 3.0, s_max: 10.0 })
    }

    #[test]
    fn paper_table_1_reference_string() {
        // The reference string of the paper's Table 1 (blocks A..E = 1..5 at virtual times
        // 1..9): A D B C B A E A D. Its LIR set at time 10 is {A, B} (the two lowest IRRs);
        // with Llirs = 2 and Lhirs = 1 the rules give: D the resident HIR block (hit at time 9
        // outside S), E a non-resident HIR block remembered in S, C pruned from S.
        let (a, b, c, d, e) = (1, 2, 3, 4, 5);
        let mut h = three();
        for p in [a, d, b, c, b, a, e, a, d] {
            h.read(p);
        }
        let is_lir = |h: &Harness<Lirs>, p| h.frame_of(p).is_some_and(|f| h.policy.is_lir(f));
        assert!(is_lir(&h, a) && is_lir(&h, b));
        assert_eq!(h.resident(), vec![a, b, d]);
        assert!(h.policy.remembers(e) && !h.policy.remembers(c));
        assert_eq!(h.evicted_pages(), vec![b, c, a, e]);
        // E comes back: Q's front D is evicted (and remembered: it is in S), E becomes LIR, and
        // the LIR block at S's bottom, B, becomes the resident HIR block.
        h.read(e);
        assert_eq!(h.evicted_pages().last(), Some(&d));
        assert!(h.policy.remembers(d));
        assert!(is_lir(&h, e) && is_lir(&h, a) && !is_lir(&h, b));
        assert_eq!(h.resident(), vec![a, b, e]);
    }

    #[test]
    fn resident_hir_hit_outside_the_stack_stays_hir() {
        let (a, b, c) = (1, 2, 3);
        let mut h = three();
        // A and B become LIR, C the resident HIR page; hits on A then B leave C below the
        // bottom LIR page, so pruning removes C from S (it stays resident in Q).
        for p in [a, b, c, a, b] {
            h.read(p);
        }
        let fc = h.frame_of(c).unwrap();
        assert!(!h.policy.in_stack(fc) && !h.policy.is_lir(fc));
        h.read(c);
        assert!(!h.policy.is_lir(fc), "a hit outside S keeps C HIR");
        assert!(h.policy.in_stack(fc));
        h.read(c);
        assert!(h.policy.is_lir(fc), "a second hit while in S makes C LIR");
        assert!(!h.policy.is_lir(h.frame_of(a).unwrap()), "A, at S's bottom, was demoted");
    }

    #[test]
    fn stack_bound_drops_the_oldest_ghost() {
        // 3 frames, S bounded to 1·3 = 3 entries: a scan creates non-resident entries that the
        // bound drops again, oldest first.
        let mut h = Harness::<Lirs>::new(3, LirsConfig { hir: 1.0 / 3.0, s_max: 1.0 });
        for p in 1..=20 {
            h.read(p);
            assert!(h.policy.counts().2 <= 3);
        }
        h.policy.check_invariants().unwrap();
    }
}
