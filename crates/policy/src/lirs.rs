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
//!   to ghost slot, at ⌈s-max·B⌉ + 1 slots allocated when the policy is built. The bound
//!   matters for small buffers: on the paper's multi2 and ps traces, `s-max=2` loses up to 12
//!   points of hit ratio at 100–300 frames against an unbounded stack, and `s-max=10` already
//!   gives the unbounded results there (dropping instead the HIR entry nearest S's bottom, as
//!   the authors' simulator does, gave the same numbers at the bounds 2·B and 3·B we tried).
//! * A repeated reference to the page just referenced is an ordinary hit (the authors'
//!   simulator skips it without touching the state; the paper does not mention it).
//! * Pins: the victim is the unpinned page nearest Q's front; if every page of Q is pinned (or
//!   Q is empty, possible only after external removals), the unpinned LIR page nearest S's
//!   bottom leaves the buffer and S.
//! * With B = 1 there is no LIR page (Llirs = 0): the only frame holds an HIR page.
//! * A page the buffer drops for a reason of its own ([`Replacer::remove`]) leaves S and Q
//!   without becoming a ghost (the paper has no such event).
//!
//! Validation (details and commands in `crates/policy/tests/cache_baselines.rs`): with an
//! unbounded stack (`s-max=100` on these traces) the hit counts equal those of the authors' own
//! simulator on multi2 and ps at every buffer size from 400 frames (from 200 on ps), and differ
//! by at most 26 hits below that, from Lhirs's floor and the skipped repeated references.
//! libCacheSim's `LIRS.c` differs in one case (a hit on a resident HIR page that is not in S
//! also demotes S's bottom LIR page there, evicting Q's front), so its counts differ slightly
//! from ours; a model of our LIRS with that one change reproduces libCacheSim's counts exactly.

use rustc_hash::FxHashMap;

use crate::lists::FrameLists;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::replacer::{Access, EvictError, Evictions, FrameId, NIL, Pins, Replacer};

/// The only list of the queue's [`FrameLists`].
const Q: u8 = 0;

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

/// The order in which ghost slots became non-resident, oldest first: a ring of (slot,
/// generation) pairs read front to back, with lazy deletion. A slot's generation changes when
/// the slot is released, so entries of released slots are skipped when they reach the front.
/// Appends and drops touch the ring sequentially; a ghost leaving S early costs no ring access.
#[derive(Clone, Debug)]
struct AgeRing {
    entry: Vec<(u32, u32)>,
    head: usize,
    len: usize,
    /// Current generation of every ghost slot.
    generation: Vec<u32>,
}

impl AgeRing {
    /// A ring for `slots` ghost slots, with room for as many released entries again.
    fn new(slots: usize) -> Self {
        AgeRing { entry: vec![(0, 0); 2 * slots + 2], head: 0, len: 0, generation: vec![0; slots] }
    }

    #[inline]
    fn is_live(&self, (slot, generation): (u32, u32)) -> bool {
        self.generation[slot as usize] == generation
    }

    /// Appends `slot` (just made a ghost) as the newest entry.
    #[inline]
    fn push(&mut self, slot: u32) {
        if self.len == self.entry.len() {
            self.compact();
        }
        let cap = self.entry.len();
        let at = (self.head + self.len) % cap;
        self.entry[at] = (slot, self.generation[slot as usize]);
        self.len += 1;
    }

    /// `slot` stops being a ghost: its entry, wherever it is, becomes dead.
    #[inline]
    fn release(&mut self, slot: u32) {
        let g = &mut self.generation[slot as usize];
        *g = g.wrapping_add(1);
    }

    /// Removes and returns the oldest live slot.
    #[inline]
    fn pop_oldest(&mut self) -> Option<u32> {
        while self.len > 0 {
            let e = self.entry[self.head];
            self.head = (self.head + 1) % self.entry.len();
            self.len -= 1;
            if self.is_live(e) {
                return Some(e.0);
            }
        }
        None
    }

    /// Drops the dead entries, keeping the live ones in order (at most half the ring is live).
    fn compact(&mut self) {
        let cap = self.entry.len();
        let mut kept = 0;
        for i in 0..self.len {
            let e = self.entry[(self.head + i) % cap];
            if self.is_live(e) {
                self.entry[(self.head + kept) % cap] = e;
                kept += 1;
            }
        }
        self.len = kept;
    }

    /// The live slots, oldest first (for invariant checks).
    fn live(&self) -> impl Iterator<Item = u32> + '_ {
        let cap = self.entry.len();
        (0..self.len).map(move |i| self.entry[(self.head + i) % cap]).filter(|&e| self.is_live(e)).map(|e| e.0)
    }
}

/// `prev` of a node that is not in the stack.
const OUT: u32 = NIL - 1;

/// One entry of the LIRS stack: its links and its page, in one 16-byte record so that one
/// cache line serves a stack operation and the page lookup of a ghost.
#[derive(Clone, Copy, Debug)]
struct StackNode {
    /// Towards the top; [`NIL`] at the top; [`OUT`] when not in the stack.
    prev: u32,
    /// Towards the bottom; [`NIL`] at the bottom.
    next: u32,
    page: u64,
}

/// The LIRS stack S: a doubly linked list over frames `0..B` and ghost slots `B..B+G`.
/// Front = top (most recent), back = bottom.
#[derive(Clone, Debug)]
struct Stack {
    node: Vec<StackNode>,
    top: u32,
    bottom: u32,
    len: usize,
}

impl Stack {
    fn new(nodes: usize) -> Self {
        assert!(nodes < OUT as usize, "too many stack nodes");
        Stack { node: vec![StackNode { prev: OUT, next: NIL, page: 0 }; nodes], top: NIL, bottom: NIL, len: 0 }
    }

    #[inline]
    fn contains(&self, n: u32) -> bool {
        self.node[n as usize].prev != OUT
    }

    #[inline]
    fn bottom(&self) -> Option<u32> {
        (self.bottom != NIL).then_some(self.bottom)
    }

    #[inline]
    fn push_top(&mut self, n: u32) {
        debug_assert!(!self.contains(n));
        let t = self.top;
        let node = &mut self.node[n as usize];
        node.prev = NIL;
        node.next = t;
        if t != NIL {
            self.node[t as usize].prev = n;
        } else {
            self.bottom = n;
        }
        self.top = n;
        self.len += 1;
    }

    #[inline]
    fn remove(&mut self, n: u32) {
        let StackNode { prev: p, next: x, .. } = self.node[n as usize];
        debug_assert!(p != OUT, "node {n} is not in the stack");
        if p != NIL {
            self.node[p as usize].next = x;
        } else {
            self.top = x;
        }
        if x != NIL {
            self.node[x as usize].prev = p;
        } else {
            self.bottom = p;
        }
        self.node[n as usize].prev = OUT;
        self.len -= 1;
    }

    #[inline]
    fn move_to_top(&mut self, n: u32) {
        if self.top == n {
            return;
        }
        if self.contains(n) {
            self.remove(n);
        }
        self.push_top(n);
    }

    /// `new` (not in the stack) takes the place of `old` (in it), which leaves the stack.
    #[inline]
    fn replace(&mut self, old: u32, new: u32) {
        let StackNode { prev: p, next: x, .. } = self.node[old as usize];
        debug_assert!(p != OUT && !self.contains(new));
        self.node[new as usize].prev = p;
        self.node[new as usize].next = x;
        if p != NIL {
            self.node[p as usize].next = new;
        } else {
            self.top = new;
        }
        if x != NIL {
            self.node[x as usize].prev = new;
        } else {
            self.bottom = new;
        }
        self.node[old as usize].prev = OUT;
    }

    /// From the bottom to the top.
    fn iter_from_bottom(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.bottom(), move |&n| {
            let p = self.node[n as usize].prev;
            (p != NIL).then_some(p)
        })
    }

    fn check(&self) -> Result<(), String> {
        let mut count = 0usize;
        let mut below = NIL;
        let mut cur = self.bottom;
        while cur != NIL {
            let n = self.node.get(cur as usize).ok_or_else(|| format!("lirs stack: node {cur} out of range"))?;
            if n.next != below {
                return Err(format!("lirs stack: node {cur} has a wrong link towards the bottom"));
            }
            count += 1;
            if count > self.node.len() {
                return Err("lirs stack: cycle".to_string());
            }
            below = cur;
            cur = n.prev;
        }
        if below != self.top || count != self.len {
            return Err(format!("lirs stack: {count} nodes linked, length {}, top mismatch", self.len));
        }
        let members = self.node.iter().filter(|n| n.prev != OUT).count();
        if members != self.len {
            return Err(format!("lirs stack: {members} nodes claim membership, length {}", self.len));
        }
        Ok(())
    }
}

/// Per-frame flags.
const RESIDENT: u8 = 1;
const LIR: u8 = 2;
const DIRTY: u8 = 4;

/// The LIRS policy.
///
/// Nodes of the stack are frames `0..B` (resident pages) and ghost slots `B..B+G`
/// (non-resident HIR pages).
#[derive(Clone, Debug)]
pub struct Lirs {
    capacity: usize,
    /// The LIRS stack S.
    stack: Stack,
    /// The queue Q of resident HIR frames; front = end (newest), back = front (next victim).
    queue: FrameLists,
    /// Ghost slots (indexed from 0) in the order they became non-resident.
    nonresident: AgeRing,
    /// [`RESIDENT`], [`LIR`] and [`DIRTY`] of every frame.
    flags: Vec<u8>,
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

    #[inline]
    fn lir(&self, frame: u32) -> bool {
        self.flags[frame as usize] & LIR != 0
    }

    /// Stack pruning: drops the HIR entries at S's bottom until an LIR page is there.
    #[inline]
    fn prune(&mut self) {
        while let Some(b) = self.stack.bottom() {
            if !self.is_ghost(b) && self.lir(b) {
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
        self.nonresident.release(g - self.capacity as u32);
        self.ghost_of.remove(&self.stack.node[g as usize].page);
        self.free_ghosts.push(g);
    }

    /// Drops the oldest non-resident entry (from S and the directory).
    fn drop_oldest_ghost(&mut self) -> bool {
        let Some(slot) = self.nonresident.pop_oldest() else { return false };
        let g = slot + self.capacity as u32;
        self.stack.remove(g);
        self.forget_ghost(g);
        true
    }

    /// The LIR page at S's bottom becomes HIR and goes to Q's end.
    #[inline]
    fn demote_bottom(&mut self) {
        let b = self.stack.bottom().expect("an LIR page is at the bottom of a non-empty stack");
        debug_assert!(!self.is_ghost(b) && self.lir(b));
        self.stack.remove(b);
        self.flags[b as usize] &= !LIR;
        self.lir_count -= 1;
        self.queue.push_front(Q, b);
    }

    /// `frame` becomes LIR (it is at S's top); demotes S's bottom if the LIR set overflows.
    #[inline]
    fn promote(&mut self, frame: FrameId) {
        self.flags[frame as usize] |= LIR;
        self.lir_count += 1;
        if self.lir_count > self.lir_limit {
            self.demote_bottom();
        }
    }

    /// End of every request: prune S and keep it within its bound.
    #[inline]
    fn settle(&mut self) {
        self.prune();
        while self.stack.len > self.s_limit && self.drop_oldest_ghost() {}
    }

    /// Whether `frame` holds an LIR page (for tests and reports).
    pub fn is_lir(&self, frame: FrameId) -> bool {
        self.flags[frame as usize] & (RESIDENT | LIR) == RESIDENT | LIR
    }

    /// Whether S remembers `page` as a non-resident HIR page.
    pub fn remembers(&self, page: u64) -> bool {
        self.ghost_of.contains_key(&page)
    }

    /// Whether `frame` has an entry in the stack S.
    pub fn in_stack(&self, frame: FrameId) -> bool {
        self.stack.contains(frame)
    }

    /// Number of LIR pages, resident HIR pages and stack entries.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.lir_count, self.queue.len(Q), self.stack.len)
    }
}

impl Replacer for Lirs {
    type Config = LirsConfig;

    fn new(capacity: usize, config: &LirsConfig) -> Self {
        let hir_limit = ((capacity as f64 * config.hir) as usize).max(1).min(capacity);
        let s_limit = (capacity as f64 * config.s_max).ceil() as usize;
        let ghosts = s_limit + 1;
        // Twice the most ghosts there can be: hashbrown then clears its tombstones in place
        // instead of growing (no allocation after `new`).
        let mut ghost_of = FxHashMap::default();
        ghost_of.reserve(2 * ghosts);
        Lirs {
            capacity,
            stack: Stack::new(capacity + ghosts),
            queue: FrameLists::new(capacity, 1),
            nonresident: AgeRing::new(ghosts),
            flags: vec![0; capacity],
            ghost_of,
            free_ghosts: (capacity as u32..(capacity + ghosts) as u32).rev().collect(),
            lir_count: 0,
            lir_limit: capacity - hir_limit,
            s_limit,
        }
    }

    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        if access.kind.is_write() {
            self.flags[f] |= DIRTY;
        }
        if self.flags[f] & LIR != 0 {
            let was_bottom = self.stack.bottom == frame;
            self.stack.move_to_top(frame);
            if was_bottom {
                self.prune();
            }
            // S did not grow: no bound to enforce.
            return;
        }
        if self.stack.contains(frame) && self.lir_limit > 0 {
            self.stack.move_to_top(frame);
            self.queue.remove(frame);
            self.promote(frame);
        } else {
            self.stack.move_to_top(frame);
            self.queue.move_to_front(Q, frame);
        }
        self.settle();
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        self.stack.node[f].page = access.page;
        self.flags[f] = RESIDENT | if access.kind.is_write() { DIRTY } else { 0 };
        let remembered = match self.ghost_of.get(&access.page) {
            Some(&g) => {
                self.stack.remove(g);
                self.forget_ghost(g);
                true
            }
            None => false,
        };
        self.stack.push_top(frame);
        if remembered && self.lir_limit > 0 {
            self.promote(frame);
        } else if !remembered && self.lir_count < self.lir_limit {
            self.flags[f] |= LIR;
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
                if self.stack.contains(v) {
                    // It stays in S as a non-resident HIR page, in the same place.
                    if self.free_ghosts.is_empty() {
                        self.drop_oldest_ghost();
                    }
                    let g = self.free_ghosts.pop().expect("a ghost slot was just freed");
                    let page = self.stack.node[v as usize].page;
                    self.stack.node[g as usize].page = page;
                    self.stack.replace(v, g);
                    self.nonresident.push(g - self.capacity as u32);
                    self.ghost_of.insert(page, g);
                }
                v
            }
            None => {
                let v = self
                    .stack
                    .iter_from_bottom()
                    .find(|&n| !self.is_ghost(n) && !pins.is_pinned(n))
                    .ok_or(EvictError::AllPinned)?;
                self.stack.remove(v);
                if self.lir(v) {
                    self.lir_count -= 1;
                }
                self.flags[v as usize] &= !LIR;
                self.prune();
                v
            }
        };
        self.flags[victim as usize] = 0;
        out.victims.push(victim);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        let f = frame as usize;
        if self.flags[f] & RESIDENT == 0 {
            return;
        }
        if self.stack.contains(frame) {
            self.stack.remove(frame);
        }
        self.queue.remove(frame);
        if self.flags[f] & LIR != 0 {
            self.lir_count -= 1;
        }
        self.flags[f] = 0;
        self.prune();
    }

    fn len(&self) -> usize {
        self.lir_count + self.queue.len(Q)
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.flags[frame as usize] & DIRTY != 0)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.stack.check()?;
        self.queue.check()?;
        let mut lir = 0;
        for f in 0..self.capacity as u32 {
            let (r, l) = (self.flags[f as usize] & RESIDENT != 0, self.lir(f));
            if !r && (self.flags[f as usize] != 0 || self.stack.contains(f) || self.queue.contains(Q, f)) {
                return Err(format!("lirs: free frame {f} is still listed or flagged"));
            }
            if r && l {
                lir += 1;
                if !self.stack.contains(f) || self.queue.contains(Q, f) {
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
        if let Some(b) = self.stack.bottom()
            && (self.is_ghost(b) || !self.lir(b))
        {
            return Err(format!("lirs: stack bottom {b} is not an LIR page"));
        }
        let ghosts_in_s = self.stack.iter_from_bottom().filter(|&n| self.is_ghost(n)).count();
        let mut aged = vec![false; self.nonresident.generation.len()];
        for slot in self.nonresident.live() {
            let g = slot + self.capacity as u32;
            if std::mem::replace(&mut aged[slot as usize], true) || !self.stack.contains(g) {
                return Err(format!("lirs: ghost slot {slot} is listed twice by age, or not in S"));
            }
        }
        let aged = aged.iter().filter(|&&a| a).count();
        if ghosts_in_s != self.ghost_of.len() || ghosts_in_s != aged {
            return Err(format!(
                "lirs: {ghosts_in_s} ghosts in S, {} mapped, {aged} in age order",
                self.ghost_of.len()
            ));
        }
        for (&p, &g) in &self.ghost_of {
            if !self.is_ghost(g) || self.stack.node[g as usize].page != p {
                return Err(format!("lirs: page {p} maps to node {g}, which does not hold it"));
            }
        }
        if self.stack.len > self.s_limit {
            return Err(format!("lirs: stack holds {} entries, bound {}", self.stack.len, self.s_limit));
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
