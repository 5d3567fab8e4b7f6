//! S3-FIFO — a small FIFO queue, a main FIFO queue and a ghost FIFO queue.
//!
//! Source: Yang, Zhang, Qiu, Yue, Rashmi, *FIFO queues are all you need for cache eviction*
//! (SOSP 2023), §4 and Algorithm 1; defaults from the paper: the small queue S holds 10% of
//! the buffer, the main queue M the rest, the ghost queue G remembers as many evicted pages as
//! M holds, and each page has a 2-bit frequency counter capped at 3.
//!
//! A missed page enters M if G remembers it, otherwise S, with frequency 0; a hit adds one to
//! its frequency (at most 3) and moves nothing. To free a frame: while S holds at least its
//! target share, S's tail page moves to M's head if it was hit at least twice since it entered
//! (frequency ≥ `move`), and otherwise leaves the buffer and is remembered in G; else M's tail
//! page is reinserted at M's head with one less frequency if its frequency is non-zero, and
//! otherwise leaves the buffer. G forgets its oldest page when full.
//!
//! Choices where the paper is silent or ambiguous (each follows libCacheSim's `S3FIFOv0.c`, the
//! reference implementation by the paper's first author, so that hit counts agree exactly):
//! * Sizes: S's target is ⌊0.1·B⌋ pages and M's B − ⌊0.1·B⌋; G holds ⌊0.9·B⌋ pages (the size
//!   of M up to rounding). Below 10 frames S's target is 0: S is then emptied first whenever
//!   it holds a page (libCacheSim caches nothing at all in that case).
//! * Which queue: M is evicted from when it holds more than its target or S is empty, S
//!   otherwise (the paper: "S if |S| ≥ 10% of the buffer"; the same rule at full occupancy).
//! * A page moved from S to M starts in M with frequency 0, and moving pages from S to M does
//!   not evict from M within the same eviction: M may exceed its target until the next miss,
//!   which then takes from M (the paper's Algorithm 1 evicts from M at once when M is full).
//! * The ghost is looked up (and the entry dropped) before any eviction of the same miss, so a
//!   full G does not forget the incoming page while making room for the victim.
//! * Pins: each queue is walked from its tail past pinned pages (left in place, counters
//!   untouched); when one queue has no unpinned page, the other is used.
//!
//! The ghost queue is a hash map from page number to a slot of a FIFO list of ⌊0.9·B⌋ slots,
//! allocated when the policy is built.
//!
//! Validation: hit counts equal libCacheSim's `S3FIFOv0` (the algorithm of the paper) exactly on
//! the ARC paper's OLTP trace and the CloudPhysics sample at every size tried. libCacheSim's
//! current `S3FIFO` differs on purpose (before the first eviction, pages arriving once S is full
//! go to M), so it differs from ours by up to 1%; see `crates/policy/tests/cache_baselines.rs`.

use rustc_hash::FxHashMap;

use crate::lists::FrameLists;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction, parse_int};
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

const SMALL: u8 = 0;
const MAIN: u8 = 1;
/// The frequency counter saturates here (2 bits).
const FREQ_MAX: u8 = 3;

/// Parameters of [`S3Fifo`].
#[derive(Clone, Debug, PartialEq)]
pub struct S3FifoConfig {
    /// Target size of the small queue S as a fraction of the buffer (paper: 0.1).
    pub small: f64,
    /// Size of the ghost queue G as a fraction of the buffer (paper: the size of M, 0.9).
    pub ghost: f64,
    /// Hits a page needs in S to move to M when it reaches S's tail (paper: more than one, 2).
    pub move_threshold: u8,
}

impl Default for S3FifoConfig {
    fn default() -> Self {
        S3FifoConfig { small: 0.1, ghost: 0.9, move_threshold: 2 }
    }
}

impl PolicyParams for S3FifoConfig {
    const KEYS: &'static [ParamDoc] = &[
        ParamDoc { key: "small", help: "small queue S, fraction of the buffer, default 0.1" },
        ParamDoc { key: "ghost", help: "ghost queue G, fraction of the buffer, default 0.9 (the size of M)" },
        ParamDoc { key: "move", help: "hits in S that move a page to M, 1..3, default 2" },
    ];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "small" => self.small = parse_fraction(key, value, 0.0, 1.0)?,
            "ghost" => self.ghost = parse_fraction(key, value, 0.0, 4.0)?,
            "move" => self.move_threshold = parse_int(key, value, 1, u64::from(FREQ_MAX))? as u8,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        vec![fmt_float(self.small), fmt_float(self.ghost), self.move_threshold.to_string()]
    }
}

/// A bounded FIFO of page numbers with removal by page: the pages most recently evicted from S
/// (also FBP's ghosts of evicted clean and dirty pages).
#[derive(Clone, Debug)]
pub(crate) struct GhostFifo {
    /// One list over the slots; front = newest.
    order: FrameLists,
    page: Vec<u64>,
    slot_of: FxHashMap<u64, u32>,
    free: Vec<u32>,
}

impl GhostFifo {
    pub(crate) fn new(slots: usize) -> Self {
        // Twice the ghosts: hashbrown then clears its tombstones in place instead of growing.
        let mut slot_of = FxHashMap::default();
        slot_of.reserve(2 * slots + 2);
        GhostFifo {
            order: FrameLists::new(slots, 1),
            page: vec![0; slots],
            slot_of,
            free: (0..slots as u32).rev().collect(),
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.page.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.slot_of.len()
    }

    /// Whether `page` is remembered.
    pub(crate) fn contains(&self, page: u64) -> bool {
        self.slot_of.contains_key(&page)
    }

    /// Forgets `page`; `true` if it was remembered.
    #[inline]
    pub(crate) fn take(&mut self, page: u64) -> bool {
        if self.slot_of.is_empty() {
            return false;
        }
        match self.slot_of.remove(&page) {
            Some(slot) => {
                self.order.remove(slot);
                self.free.push(slot);
                true
            }
            None => false,
        }
    }

    /// Remembers `page` (not already remembered), forgetting the oldest page when full.
    #[inline]
    pub(crate) fn push(&mut self, page: u64) {
        if self.capacity() == 0 {
            return;
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                let oldest = self.order.pop_back(0).expect("a full ghost queue has an oldest slot");
                self.slot_of.remove(&self.page[oldest as usize]);
                oldest
            }
        };
        self.page[slot as usize] = page;
        self.slot_of.insert(page, slot);
        self.order.push_front(0, slot);
    }

    pub(crate) fn check(&self) -> Result<(), String> {
        self.order.check()?;
        if self.order.len(0) != self.slot_of.len() || self.len() + self.free.len() != self.capacity() {
            return Err(format!(
                "s3fifo ghost: {} listed, {} mapped, {} free of {}",
                self.order.len(0),
                self.slot_of.len(),
                self.free.len(),
                self.capacity()
            ));
        }
        for (&p, &s) in &self.slot_of {
            if self.page[s as usize] != p || !self.order.contains(0, s) {
                return Err(format!("s3fifo ghost: page {p} maps to slot {s}, which does not hold it"));
            }
        }
        Ok(())
    }
}

/// What one pass over S did.
enum SmallPass {
    /// A page left the buffer (and was remembered in G).
    Evicted(FrameId),
    /// S has no unpinned page left (every unpinned page moved to M).
    Exhausted,
}

/// The S3-FIFO policy.
#[derive(Clone, Debug)]
pub struct S3Fifo {
    lists: FrameLists,
    page: Vec<u64>,
    freq: Vec<u8>,
    dirty: Vec<bool>,
    ghost: GhostFifo,
    main_target: usize,
    move_threshold: u8,
    /// Set by `victims`: the incoming page was found (and dropped) in G.
    incoming_from_ghost: Option<u64>,
}

impl S3Fifo {
    fn first_unpinned<P: Pins + ?Sized>(&self, list: u8, pins: &P) -> Option<FrameId> {
        self.lists.iter_from_back(list).find(|&f| !pins.is_pinned(f))
    }

    /// Evicts from M: tail pages with a non-zero frequency go back to the head with one less.
    /// `None` when M has no unpinned page.
    fn evict_main<P: Pins + ?Sized>(&mut self, pins: &P) -> Option<FrameId> {
        loop {
            let f = self.first_unpinned(MAIN, pins)?;
            if self.freq[f as usize] > 0 {
                self.freq[f as usize] -= 1;
                self.lists.move_to_front(MAIN, f);
            } else {
                self.lists.remove(f);
                return Some(f);
            }
        }
    }

    /// Evicts from S: tail pages hit often enough move to M's head, the first other page leaves.
    fn evict_small<P: Pins + ?Sized>(&mut self, pins: &P) -> SmallPass {
        while let Some(f) = self.first_unpinned(SMALL, pins) {
            if self.freq[f as usize] >= self.move_threshold {
                self.lists.remove(f);
                self.freq[f as usize] = 0;
                self.lists.push_front(MAIN, f);
            } else {
                self.lists.remove(f);
                self.ghost.push(self.page[f as usize]);
                return SmallPass::Evicted(f);
            }
        }
        SmallPass::Exhausted
    }

    /// Whether `frame` is in the small queue S (for tests and reports).
    pub fn in_small(&self, frame: FrameId) -> bool {
        self.lists.contains(SMALL, frame)
    }

    /// Whether the ghost queue remembers `page`.
    pub fn remembers(&self, page: u64) -> bool {
        self.ghost.contains(page)
    }

    /// Pages in S and in M.
    pub fn queue_lengths(&self) -> (usize, usize) {
        (self.lists.len(SMALL), self.lists.len(MAIN))
    }
}

impl Replacer for S3Fifo {
    type Config = S3FifoConfig;

    fn new(capacity: usize, config: &S3FifoConfig) -> Self {
        // The same truncations as libCacheSim (see the header).
        let small_target = (capacity as f64 * config.small) as usize;
        let ghost = (capacity as f64 * config.ghost) as usize;
        S3Fifo {
            lists: FrameLists::new(capacity, 2),
            page: vec![0; capacity],
            freq: vec![0; capacity],
            dirty: vec![false; capacity],
            ghost: GhostFifo::new(ghost),
            main_target: capacity - small_target.min(capacity),
            move_threshold: config.move_threshold.clamp(1, FREQ_MAX),
            incoming_from_ghost: None,
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        self.freq[f] = (self.freq[f] + 1).min(FREQ_MAX);
        self.dirty[f] |= access.kind.is_write();
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let from_ghost = match self.incoming_from_ghost.take() {
            Some(p) if p == access.page => true,
            _ => self.ghost.take(access.page),
        };
        let f = frame as usize;
        self.page[f] = access.page;
        self.freq[f] = 0;
        self.dirty[f] = access.kind.is_write();
        self.lists.push_front(if from_ghost { MAIN } else { SMALL }, frame);
    }

    fn victims<P: Pins + ?Sized>(
        &mut self,
        incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.len() == 0 {
            return Err(EvictError::Empty);
        }
        if self.ghost.take(incoming.page) {
            self.incoming_from_ghost = Some(incoming.page);
        }
        let main_first = self.lists.len(MAIN) > self.main_target || self.lists.is_empty(SMALL);
        let victim = if main_first {
            match self.evict_main(pins) {
                Some(f) => f,
                // Every page of M is pinned: S, then M again (S may have moved pages there).
                None => match self.evict_small(pins) {
                    SmallPass::Evicted(f) => f,
                    SmallPass::Exhausted => self.evict_main(pins).ok_or(EvictError::AllPinned)?,
                },
            }
        } else {
            match self.evict_small(pins) {
                SmallPass::Evicted(f) => f,
                SmallPass::Exhausted => self.evict_main(pins).ok_or(EvictError::AllPinned)?,
            }
        };
        out.victims.push(victim);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        self.lists.remove(frame);
    }

    fn len(&self) -> usize {
        self.lists.len(SMALL) + self.lists.len(MAIN)
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.lists.check()?;
        self.ghost.check()?;
        for f in self.lists.iter_from_back(SMALL).chain(self.lists.iter_from_back(MAIN)) {
            if self.freq[f as usize] > FREQ_MAX {
                return Err(format!("s3fifo: frame {f} has frequency {}", self.freq[f as usize]));
            }
            if self.ghost.slot_of.contains_key(&self.page[f as usize]) {
                return Err(format!("s3fifo: buffered page {} is also a ghost", self.page[f as usize]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    fn cfg() -> S3FifoConfig {
        S3FifoConfig::default()
    }

    #[test]
    fn one_hit_wonders_leave_through_s_and_ghost_hits_enter_m() {
        // 20 frames: S's target is 2, M's 18, G holds 18 pages.
        let mut h = Harness::<S3Fifo>::new(20, cfg());
        for p in 0..20 {
            h.read(p);
        }
        // Everything is in S (21 pages would overflow): the next miss evicts S's tail, page 0,
        // which was never hit, into G.
        h.read(100);
        assert_eq!(h.evicted_pages(), vec![0]);
        assert!(h.policy.remembers(0));
        // Page 0 comes back: G remembers it, so it enters M directly.
        h.read(0);
        assert!(!h.policy.remembers(0));
        let f0 = h.frame_of(0).unwrap();
        assert!(!h.policy.in_small(f0));
    }

    #[test]
    fn pages_hit_twice_in_s_move_to_m_with_frequency_zero() {
        let mut h = Harness::<S3Fifo>::new(20, cfg());
        for p in 0..20 {
            h.read(p);
        }
        h.read(0);
        h.read(0); // page 0: frequency 2
        h.read(1); // page 1: frequency 1, not enough
        h.read(100);
        // S's tail 0 moves to M, 1 is evicted to G.
        assert_eq!(h.evicted_pages(), vec![1]);
        let f0 = h.frame_of(0).unwrap();
        assert!(!h.policy.in_small(f0));
        assert_eq!(h.policy.freq[f0 as usize], 0);
        assert!(h.policy.remembers(1));
    }

    #[test]
    fn main_reinserts_with_decremented_frequency_and_caps_at_three() {
        // 4 frames with S at half the buffer: S's target is 2, M's 2, G holds 3 pages.
        let config = S3FifoConfig { small: 0.5, ..S3FifoConfig::default() };
        let mut h = Harness::<S3Fifo>::new(4, config);
        for p in [1, 2, 3, 4, 1, 1, 2, 2] {
            h.read(p);
        }
        // S (tail first) = 1 2 3 4; 1 and 2 were hit twice: they move to M, 3 leaves for G.
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![3]);
        // 3 comes back through G into M; S's tail 4 leaves (M holds 2, not more than its target).
        h.read(3);
        assert_eq!(h.evicted_pages(), vec![3, 4]);
        assert_eq!(h.policy.queue_lengths(), (1, 3));
        for p in [1, 1, 1, 2] {
            assert!(h.read(p));
        }
        let (f1, f2) = (h.frame_of(1).unwrap(), h.frame_of(2).unwrap());
        assert_eq!(h.policy.freq[f1 as usize], FREQ_MAX, "three hits saturate the counter");
        // M holds more than its target: its tail 1 is reinserted (3 -> 2), then 2 (1 -> 0), and
        // 3 (frequency 0) leaves.
        h.read(6);
        assert_eq!(h.evicted_pages(), vec![3, 4, 3]);
        assert_eq!(h.policy.freq[f1 as usize], 2);
        assert_eq!(h.policy.freq[f2 as usize], 0);
    }

    #[test]
    fn parameters_round_trip_and_validate() {
        let mut c = S3FifoConfig::default();
        c.set("small", "0.25").unwrap();
        c.set("move", "1").unwrap();
        assert_eq!(c.values(), vec!["0.25", "0.9", "1"]);
        assert!(c.set("move", "4").is_err());
        assert!(c.set("small", "2").is_err());
    }
}
