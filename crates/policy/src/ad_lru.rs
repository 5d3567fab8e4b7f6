//! AD-LRU — adaptive double LRU: a cold queue and a hot queue, clean-first eviction with a
//! second chance for dirty pages.
//!
//! Source: Jin, Ou, Härder, Li, *AD-LRU: an efficient buffer replacement algorithm for
//! flash-based databases*, §3 (Algorithm 1 `AD-LRU_fetch`, Algorithm 2 `SelectVictim`, Figs. 2
//! and 3). Pages referenced once live in the cold LRU queue `Lc` (`c` pages), pages referenced at
//! least twice in the hot LRU queue `Lh` (`h` pages). Following Algorithm 1:
//! * hit in `Lh`: move to the MRU end of `Lh`, `Ref = 1` (lines 1–5);
//! * hit in `Lc`: `h++, c--`, move to the MRU end of `Lh`, `Ref = 1` (lines 6–12);
//! * miss with a free frame: `c++`, put the page at the MRU end of `Lc`, `Ref = 1` (14–19);
//! * miss with a full buffer: if `c > min_lc` the victim is `SelectVictim(Lc)`, else it is
//!   `SelectVictim(Lh)` and `h--, c++`; the new page goes to the MRU end of `Lc` with `Ref = 1`
//!   (lines 20–31). So `c` and `h` are always the lengths of the two queues.
//!
//! `SelectVictim(L)` (Algorithm 2): if `L` has a clean page, evict its FC ("first clean") page,
//! the least recently used clean page of `L`; otherwise start at the LRU end of `L`: while the
//! page there has `Ref = 1`, move it to the MRU end of `L` and set `Ref = 0`; evict the first page
//! found with `Ref = 0`.
//!
//! Implementation: each queue is kept as two LRU lists, its clean pages and its dirty pages, so
//! the FC page is the clean list's LRU end (O(1)). The second chance runs only when the queue has
//! no clean page (no unpinned one, with pins), and then it visits exactly the dirty list, in the
//! queue's order, and moves pages to its MRU end. So the interleaving of clean and dirty pages
//! within a queue never influences a decision, and need not be stored. Pages only become dirty
//! on a hit, which moves them to the MRU end of `Lh` anyway. Every operation is O(1) except the
//! second chance, O(pages passed over). The differential test in `tests/adlru_family.rs` checks
//! the decisions against a `Vec` model of the two queues written from Algorithms 1 and 2.
//!
//! Choices where the paper is silent:
//! * `min_lc` is a fraction of the buffer (0.1 in the paper's Zipf experiments), so the test
//!   `c > min_lc` of line 21 is `c > min_lc·B`; with `c` a whole number this is
//!   `c > ⌊min_lc·B⌋`, and flashbuf computes `⌊min_lc·B⌋` with a relative tolerance of 10⁻¹² so
//!   that e.g. `0.29·100` (stored as 28.999…) counts as 29 pages.
//! * If the queue chosen by line 21 has no page that may be evicted (the hot queue is empty,
//!   which can happen only when `min_lc·B ≥ c`, e.g. `min_lc = 1`; or every page of it is
//!   pinned), the victim comes from the other queue by the same `SelectVictim`.
//! * Pinned frames keep their place and `Ref` bit and are skipped: FC is the LRU-most unpinned
//!   clean page, and the second chance walks over unpinned pages only. The walk meets each page
//!   at most twice, so it is bounded by `2·len + 1` steps; [`EvictError::AllPinned`] when every
//!   page of both queues is pinned.
//! * The dirty bit is set by any write access and cleared only when the page leaves the buffer.

use crate::cflru::lru_unpinned_of;
use crate::lists::FrameLists;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// `Lc`'s clean and dirty pages; `Lh`'s are the next two lists (`+ HOT`).
const COLD_CLEAN: u8 = 0;
const COLD_DIRTY: u8 = 1;
/// Offset of `Lh`'s lists.
const HOT: u8 = 2;
/// Offset of the dirty list within a queue.
const DIRTY: u8 = 1;

/// Parameters of [`AdLru`].
#[derive(Clone, Debug, PartialEq)]
pub struct AdLruConfig {
    /// Minimal size of the cold queue as a fraction of the buffer, `0..=1` (paper: 0.1 for the
    /// Zipf traces, 0.5 for the uniform ones).
    pub min_lc: f64,
}

impl Default for AdLruConfig {
    fn default() -> Self {
        AdLruConfig { min_lc: 0.1 }
    }
}

impl PolicyParams for AdLruConfig {
    const KEYS: &'static [ParamDoc] =
        &[ParamDoc { key: "min_lc", help: "minimal cold queue size, fraction of the buffer 0..1, default 0.1" }];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "min_lc" => self.min_lc = parse_fraction(key, value, 0.0, 1.0)?,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        vec![fmt_float(self.min_lc)]
    }
}

/// `⌊min_lc·B⌋` with a small relative tolerance (see the module header), at most `capacity`.
fn min_lc_pages(min_lc: f64, capacity: usize) -> usize {
    let exact = min_lc * capacity as f64;
    ((exact * (1.0 + 1e-12)).floor().max(0.0) as usize).min(capacity)
}

/// The AD-LRU policy.
#[derive(Clone, Debug)]
pub struct AdLru {
    /// `Lc` clean, `Lc` dirty, `Lh` clean, `Lh` dirty; front = MRU. A frame's mark is its
    /// reference bit `Ref` (in the line of its list record, which every access writes anyway).
    lists: FrameLists,
    min_lc_pages: usize,
}

impl AdLru {
    /// `c`: pages in the cold queue.
    pub fn cold_len(&self) -> usize {
        self.lists.len(COLD_CLEAN) + self.lists.len(COLD_DIRTY)
    }

    /// `h`: pages in the hot queue.
    pub fn hot_len(&self) -> usize {
        self.lists.len(HOT + COLD_CLEAN) + self.lists.len(HOT + COLD_DIRTY)
    }

    /// `⌊min_lc·B⌋`: the victim comes from the cold queue only while `c` exceeds this.
    pub fn min_lc_pages(&self) -> usize {
        self.min_lc_pages
    }

    /// Whether `frame` is in the hot queue.
    pub fn is_hot(&self, frame: FrameId) -> bool {
        self.lists.list_of(frame).is_some_and(|l| l >= HOT)
    }

    /// The reference bit `Ref` of the page in `frame`.
    pub fn is_referenced(&self, frame: FrameId) -> bool {
        self.lists.is_marked(frame)
    }

    /// Algorithm 2 on the queue whose clean list is `q` (`COLD_CLEAN` or `HOT`), over unpinned
    /// pages; `None` if it has none.
    fn select_victim<P: Pins + ?Sized>(&mut self, q: u8, pins: &P) -> Option<FrameId> {
        // FC: the LRU-most (unpinned) clean page.
        if let Some(f) = lru_unpinned_of(&self.lists, q, pins) {
            return Some(f);
        }
        // Second chance from the LRU end: the queue's unpinned pages are all dirty.
        let dirty = q + DIRTY;
        let n = self.lists.len(dirty);
        let mut cur = self.lists.back(dirty);
        for _ in 0..2 * n + 1 {
            let f = cur?;
            let towards_mru = self.lists.prev(f);
            if pins.is_pinned(f) {
                cur = towards_mru;
                continue;
            }
            if !self.lists.is_marked(f) {
                return Some(f);
            }
            self.lists.set_mark(f, false);
            self.lists.move_to_front(dirty, f);
            // When f was the MRU-most page it is the next one to examine.
            cur = towards_mru.or(Some(f));
        }
        None
    }
}

impl Replacer for AdLru {
    type Config = AdLruConfig;

    fn new(capacity: usize, config: &AdLruConfig) -> Self {
        AdLru { lists: FrameLists::new(capacity, 4), min_lc_pages: min_lc_pages(config.min_lc, capacity) }
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        self.lists.prefetch(frame);
    }

    // Always inlined (the hit and the insertion are a few stores over the lists' records, less
    // than a call's own cost): into the simulator's loop, and behind FBX's dispatch on its leader.
    #[inline(always)]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.lists.set_mark(frame, true);
        // Lines 2 and 8: to the MRU end of Lh (from Lh or Lc); the FC pointers follow (3, 9, 11).
        let was_dirty = self.lists.list_of(frame).is_some_and(|l| l & DIRTY != 0);
        let dirty = was_dirty || access.kind.is_write();
        self.lists.move_to_front(HOT + if dirty { DIRTY } else { 0 }, frame);
    }

    #[inline(always)]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.lists.push_front_marked(if access.kind.is_write() { COLD_DIRTY } else { COLD_CLEAN }, frame, true);
    }

    #[inline]
    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.len() == 0 {
            return Err(EvictError::Empty);
        }
        let (first, second) = if self.cold_len() > self.min_lc_pages { (COLD_CLEAN, HOT) } else { (HOT, COLD_CLEAN) };
        let victim = match self.select_victim(first, pins) {
            Some(f) => f,
            None => self.select_victim(second, pins).ok_or(EvictError::AllPinned)?,
        };
        self.lists.remove(victim);
        out.victims.push(victim);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        self.lists.remove(frame);
    }

    fn len(&self) -> usize {
        self.cold_len() + self.hot_len()
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.lists.list_of(frame).is_some_and(|l| l & DIRTY != 0))
    }

    fn check_invariants(&self) -> Result<(), String> {
        // Dirtiness and queue membership are the list a frame is in; the harness cross-checks
        // the dirty bits, the differential test the order.
        self.lists.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AccessKind;
    use crate::cflru::{Cflru, CflruConfig};
    use crate::testing::Harness;

    fn ad_lru(capacity: usize, min_lc: f64) -> Harness<AdLru> {
        Harness::new(capacity, AdLruConfig { min_lc })
    }

    fn run<R: Replacer>(h: &mut Harness<R>, refs: &[(u64, AccessKind)]) {
        for &(p, k) in refs {
            h.access(p, k, crate::NEVER);
        }
    }

    /// The paper's Fig. 3 (six pages, full buffer; AD-LRU evicts page 4, a cold clean page, where
    /// CFLRU evicts the hot clean page 2). The figure itself is missing from the text, so the state
    /// is rebuilt from what the text says about it: six buffered pages; page 4 cold and clean;
    /// page 2 hot and clean, and the least recently used clean page overall (so that CFLRU with
    /// w = 0.5 takes it); the cold queue also holds dirty pages, one of them at its LRU end (the
    /// "cold dirty page" that a clean-first policy should not write). Reference string:
    /// W1 R2 R2 R4 W3 W3 W5 W6 W6, giving (LRU end first)
    ///   Lc = 1(dirty) 4(clean) 5(dirty)      Lh = 2(clean) 3(dirty) 6(dirty)
    /// and the global LRU order 1 2 4 3 5 6.
    #[test]
    fn figure_3_cold_clean_page_is_chosen() {
        use AccessKind::{Read as R, Write as W};
        let refs = [(1, W), (2, R), (2, R), (4, R), (3, W), (3, W), (5, W), (6, W), (6, W)];
        let mut h = ad_lru(6, 0.1);
        run(&mut h, &refs);
        let cold: Vec<u64> = [1, 4, 5].to_vec();
        for p in cold {
            assert!(!h.policy.is_hot(h.frame_of(p).unwrap()), "page {p} should be cold");
        }
        for p in [2, 3, 6] {
            assert!(h.policy.is_hot(h.frame_of(p).unwrap()), "page {p} should be hot");
        }
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (3, 3));
        assert_eq!(h.policy.min_lc_pages(), 0); // 0.1 * 6 = 0.6 -> 0; c = 3 > 0: victim from Lc
        h.read(7);
        assert_eq!(h.evicted_pages(), vec![4]);
        assert!(!h.evicted[0].dirty);

        // CFLRU (w = 0.5: window = pages 1, 2, 4) on the same references takes hot clean page 2.
        let mut c = Harness::<Cflru>::new(6, CflruConfig { w: 0.5 });
        run(&mut c, &refs);
        c.read(7);
        assert_eq!(c.evicted_pages(), vec![2]);
    }

    #[test]
    fn hot_and_cold_sizes_follow_algorithm_1() {
        let mut h = ad_lru(4, 0.0);
        // Misses with free frames: c++ each time.
        for p in [1, 2, 3, 4] {
            h.read(p);
        }
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (4, 0));
        // Cold hit: h + 1, c - 1.
        h.read(2);
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (3, 1));
        h.write(3);
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (2, 2));
        // Hot hit: no change.
        h.read(2);
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (2, 2));
        // Miss, victim from Lc (c = 2 > 0): c stays (one out, one in).
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![1]);
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (2, 2));
        // Promote 4 and 5: c = 0, h = 4. Miss: c = 0 is not > min_lc, victim from Lh:
        // h - 1, c + 1. FC of Lh is its LRU-most clean page, 2.
        h.read(4);
        h.read(5);
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (0, 4));
        h.read(6);
        assert_eq!(h.evicted_pages(), vec![1, 2]);
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (1, 3));
    }

    #[test]
    fn min_lc_is_respected() {
        // B = 10, min_lc = 0.5: 5 pages. Fill Lc with 10 pages, promote 5 of them: c = 5, h = 5.
        let mut h = ad_lru(10, 0.5);
        assert_eq!(h.policy.min_lc_pages(), 5);
        for p in 1..=10 {
            h.read(p);
        }
        for p in 1..=5 {
            h.read(p);
        }
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (5, 5));
        // c = 5 is not > 5: the victim is Lh's FC page, 1 (although Lc's LRU page 6 is older).
        h.read(11);
        assert_eq!(h.evicted_pages(), vec![1]);
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (6, 4));
        // Now c = 6 > 5: the victim comes from Lc: its FC page, 6.
        h.read(12);
        assert_eq!(h.evicted_pages(), vec![1, 6]);
        assert_eq!((h.policy.cold_len(), h.policy.hot_len()), (6, 4));
    }

    #[test]
    fn min_lc_rounds_down_with_tolerance() {
        assert_eq!(min_lc_pages(0.1, 6), 0);
        assert_eq!(min_lc_pages(0.1, 10), 1);
        assert_eq!(min_lc_pages(0.1, 19), 1);
        assert_eq!(min_lc_pages(0.1, 20), 2);
        assert_eq!(min_lc_pages(0.29, 100), 29); // 28.999... in binary
        assert_eq!(min_lc_pages(0.3, 10), 3);
        assert_eq!(min_lc_pages(0.7, 10), 7);
        assert_eq!(min_lc_pages(1.0, 7), 7);
        assert_eq!(min_lc_pages(0.0, 7), 0);
    }

    #[test]
    fn second_chance_moves_referenced_dirty_pages_to_mru_and_clears_ref() {
        // B = 4, min_lc = 0: every page written once, all cold, dirty, Ref = 1.
        let mut h = ad_lru(4, 0.0);
        for p in [1, 2, 3, 4] {
            h.write(p);
        }
        // No clean page in Lc: 1, 2, 3, 4 in turn have Ref = 1 -> moved to MRU, Ref = 0; then 1
        // is at the LRU end with Ref = 0 and goes.
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![1]);
        for p in [2, 3, 4] {
            assert!(!h.policy.is_referenced(h.frame_of(p).unwrap()), "page {p}: Ref should be 0");
        }
        assert!(h.policy.is_referenced(h.frame_of(5).unwrap()));
        // Lc is now (LRU end first) 2 3 4 5, with 5 clean: FC = 5 goes before the dirty pages.
        h.write(6);
        assert_eq!(h.evicted_pages(), vec![1, 5]);
        // Lc = 2 3 4 6, all dirty; 2 has Ref = 0 and goes at once.
        h.write(7);
        assert_eq!(h.evicted_pages(), vec![1, 5, 2]);
        // Order of the survivors shows the second-chance moves: 3, 4, 6, 7 from the LRU end.
        let order: Vec<FrameId> = h.policy.lists.iter_from_back(COLD_DIRTY).collect();
        let want: Vec<FrameId> = [3, 4, 6, 7].iter().map(|&p| h.frame_of(p).unwrap()).collect();
        assert_eq!(order, want);
    }

    #[test]
    fn page_whose_bit_was_cleared_goes_without_another_pass() {
        // After a second-chance pass the survivors have Ref = 0: the next eviction from the same
        // queue takes its LRU page at once.
        let mut h = ad_lru(3, 0.0);
        for p in [1, 2, 3] {
            h.write(p);
        }
        h.write(4); // walk: 1, 2, 3 to MRU with Ref = 0, then 1 goes
        assert_eq!(h.evicted_pages(), vec![1]);
        h.write(3); // hot now: Lc = 2 4, Lh = 3
        h.write(5); // Lc: 2 has Ref = 0 -> goes
        assert_eq!(h.evicted_pages(), vec![1, 2]);
    }

    #[test]
    fn empty_hot_queue_falls_back_to_cold_and_pins_are_skipped() {
        // min_lc = 1: c > B never holds, so Lh is chosen; it is empty: victim from Lc.
        let mut h = ad_lru(2, 1.0);
        h.read(1);
        h.write(2);
        h.read(3);
        assert_eq!(h.evicted_pages(), vec![1]);
        // Pin the clean page 3: FC skips it; dirty 2 goes after its second chance.
        h.pin(h.frame_of(3).unwrap());
        h.read(4);
        assert_eq!(h.evicted_pages(), vec![1, 2]);
        let mut p = AdLru::new(1, &AdLruConfig::default());
        let a = Access::new(1, AccessKind::Write, 0);
        p.on_insert(0, &a);
        let mut ev = Evictions::default();
        assert_eq!(p.victims(&a, &[true][..], &mut ev), Err(EvictError::AllPinned));
        assert_eq!(p.len(), 1);
        p.check_invariants().unwrap();
    }
}
