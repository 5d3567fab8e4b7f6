//! CCF-LRU — cold-clean-first LRU: a cold clean queue and a mixed queue.
//!
//! Source: Li, Jin, Su, Cui, Yue, *CCF-LRU: a new buffer replacement algorithm for flash
//! memory* (IEEE Trans. Consumer Electronics 55(3), 2009), as described in the AD-LRU paper
//! §2.3: "two LRU queues, a cold clean queue and a mixed queue ... The cold clean queue stores
//! those cold (first-referenced) clean pages, while the mixed queue stores dirty pages or hot
//! clean pages. It always selects a victim from the cold clean queue, and if the cold clean queue
//! is empty, it employs the same policy as LRU-WSR to select a dirty page from the mixed queue."
//! The CCF-LRU abstract adds that hot clean pages get another chance before eviction.
//!
//! How pages move (the CCF-LRU paper text itself was not available; this follows the AD-LRU
//! summary, whose definition of *cold* is "first-referenced", and agrees with a public
//! implementation built on Flash-DBSim, the simulator of the AD-LRU paper: GitHub
//! `dohee/flash-sim`, `Buffers/Managers/CCFLRU.cs`):
//! * A miss by a read puts the page at the MRU end of the cold clean queue. A miss by a write puts
//!   it at the MRU end of the mixed queue as a *cold dirty* page: its cold flag is set, because
//!   the page has been referenced only once. (This is where CCF-LRU differs from LRU-WSR, whose
//!   cold flag means "passed over once" and starts clear; SNK-DB's `CCFLRU.h` starts it clear
//!   here too. A newly written page therefore gets no second chance until it is referenced
//!   again.)
//! * Any hit moves the page to the MRU end of the mixed queue and clears its cold flag: a cold
//!   clean page referenced again becomes a hot clean page (or a hot dirty one on a write).
//! * Victim: the LRU page of the cold clean queue if there is one. Otherwise the mixed queue is
//!   searched from its LRU end with LRU-WSR's rule: a page whose cold flag is set is evicted; a
//!   hot dirty page gets its second chance (cold flag set, moved to the mixed queue's MRU end); a
//!   hot clean page gets its other chance by being *demoted* to the MRU end of the cold clean
//!   queue. The search continues in the mixed queue (turning back to the cold clean queue at once
//!   would evict the page just given its chance); should the mixed queue run out of candidates
//!   (every page demoted or pinned), the LRU page of the cold clean queue goes.
//!
//! Choices where the papers are silent: pinned frames keep their place and flag and are
//! skipped; the search is bounded by `2·len + 1` steps and reports
//! [`EvictError::AllPinned`] when every frame is pinned. Every page of the cold clean queue is
//! clean; in the mixed queue only dirty pages ever have their cold flag set.

use crate::lists::FrameLists;
use crate::params::NoParams;
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// The cold clean queue.
const COLD_CLEAN: u8 = 0;
/// The mixed queue (dirty pages and hot clean pages).
const MIXED: u8 = 1;

/// The CCF-LRU policy.
#[derive(Clone, Debug)]
pub struct CcfLru {
    lists: FrameLists,
    dirty: Vec<bool>,
    cold: Vec<bool>,
}

impl CcfLru {
    /// Whether `frame` is in the cold clean queue (else it is in the mixed queue).
    pub fn in_cold_clean_queue(&self, frame: FrameId) -> bool {
        self.lists.contains(COLD_CLEAN, frame)
    }

    /// Whether the page in `frame` has its cold flag set (meaningful in the mixed queue).
    pub fn is_cold(&self, frame: FrameId) -> bool {
        self.cold[frame as usize]
    }

    fn lru_unpinned<P: Pins + ?Sized>(&self, list: u8, pins: &P) -> Option<FrameId> {
        let mut cand = self.lists.back(list);
        while let Some(f) = cand {
            if !pins.is_pinned(f) {
                return Some(f);
            }
            cand = self.lists.prev(f);
        }
        None
    }

    /// LRU-WSR's search over the mixed queue, demoting hot clean pages on the way.
    fn search_mixed<P: Pins + ?Sized>(&mut self, pins: &P) -> Option<FrameId> {
        let n = self.lists.len(MIXED);
        let mut cur = self.lists.back(MIXED);
        for _ in 0..2 * n + 1 {
            let f = cur?;
            let towards_mru = self.lists.prev(f);
            if pins.is_pinned(f) {
                cur = towards_mru;
                continue;
            }
            let i = f as usize;
            if self.cold[i] {
                return Some(f);
            }
            if !self.dirty[i] {
                // Hot clean: another chance in the cold clean queue.
                self.lists.remove(f);
                self.lists.push_front(COLD_CLEAN, f);
                cur = towards_mru;
            } else {
                self.cold[i] = true;
                self.lists.move_to_front(MIXED, f);
                cur = towards_mru.or(Some(f));
            }
        }
        None
    }
}

impl Replacer for CcfLru {
    type Config = NoParams;

    fn new(capacity: usize, _config: &NoParams) -> Self {
        CcfLru { lists: FrameLists::new(capacity, 2), dirty: vec![false; capacity], cold: vec![false; capacity] }
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        self.lists.prefetch(frame);
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        self.dirty[f] |= access.kind.is_write();
        self.cold[f] = false;
        self.lists.move_to_front(MIXED, frame);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        let write = access.kind.is_write();
        self.dirty[f] = write;
        // Referenced once: cold. (Only meaningful in the mixed queue, i.e. for a write.)
        self.cold[f] = write;
        self.lists.push_front(if write { MIXED } else { COLD_CLEAN }, frame);
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
        let victim = match self.lru_unpinned(COLD_CLEAN, pins) {
            Some(f) => f,
            None => match self.search_mixed(pins) {
                Some(f) => f,
                None => self.lru_unpinned(COLD_CLEAN, pins).ok_or(EvictError::AllPinned)?,
            },
        };
        self.lists.remove(victim);
        out.victims.push(victim);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        self.lists.remove(frame);
    }

    fn len(&self) -> usize {
        self.lists.len(COLD_CLEAN) + self.lists.len(MIXED)
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.lists.check()?;
        for f in self.lists.iter_from_front(COLD_CLEAN) {
            if self.dirty[f as usize] {
                return Err(format!("ccf-lru: dirty frame {f} in the cold clean queue"));
            }
        }
        for f in self.lists.iter_from_front(MIXED) {
            if self.cold[f as usize] && !self.dirty[f as usize] {
                return Err(format!("ccf-lru: clean frame {f} in the mixed queue has its cold flag set"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    #[test]
    fn cold_clean_pages_go_first() {
        // Capacity 4. Pages 1 (write), 2 (read, then hit: hot clean), 3 (write), 4 (read: cold
        // clean). The LRU page overall is 1, but cold clean page 4 goes first.
        let mut h = Harness::<CcfLru>::new(4, NoParams);
        h.write(1);
        h.read(2);
        h.read(2);
        h.write(3);
        h.read(4);
        assert!(h.policy.in_cold_clean_queue(h.frame_of(4).unwrap()));
        assert!(!h.policy.in_cold_clean_queue(h.frame_of(2).unwrap()));
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![4]);
        // Cold clean page 5 is the next victim, although it is the most recent page.
        h.write(6);
        assert_eq!(h.evicted_pages(), vec![4, 5]);
    }

    #[test]
    fn without_cold_clean_pages_lru_wsr_runs_on_the_mixed_queue() {
        // Capacity 3, pages written twice: mixed queue 1 2 3 (LRU first), all hot dirty. Miss:
        // 1, 2, 3 get their second chance (cold, to MRU), then 1 is met again, cold, and evicted.
        let mut h = Harness::<CcfLru>::new(3, NoParams);
        for p in [1, 2, 3, 1, 2, 3] {
            h.write(p);
        }
        for p in [1, 2, 3] {
            assert!(!h.policy.is_cold(h.frame_of(p).unwrap()), "page {p} was referenced twice: hot");
        }
        h.read(4);
        assert_eq!(h.evicted_pages(), vec![1]);
        assert!(h.policy.is_cold(h.frame_of(2).unwrap()));
        // A hit on 2 clears its flag; 3 is cold at the LRU end and goes next (page 4 is a cold
        // clean page and would go first: make it hot).
        h.read(2);
        h.read(4);
        h.write(5);
        assert_eq!(h.evicted_pages(), vec![1, 3]);
    }

    #[test]
    fn newly_written_page_is_cold_dirty_and_goes_before_hot_dirty_pages() {
        // Capacity 3: 1 and 2 written twice (hot dirty), 3 written once (cold dirty, MRU).
        // Miss: 1 and 2 get their second chance; 3 is cold and is evicted without one.
        let mut h = Harness::<CcfLru>::new(3, NoParams);
        for p in [1, 1, 2, 2, 3] {
            h.write(p);
        }
        assert!(h.policy.is_cold(h.frame_of(3).unwrap()));
        h.write(4);
        assert_eq!(h.evicted_pages(), vec![3]);
        assert!(h.policy.is_cold(h.frame_of(1).unwrap()));
        assert!(h.policy.is_cold(h.frame_of(2).unwrap()));
    }

    #[test]
    fn hot_clean_page_is_demoted_not_evicted() {
        // Capacity 3: 1 read twice (hot clean, mixed), 2 and 3 written (hot dirty, mixed). Miss:
        // the mixed queue's LRU page 1 is hot clean: demoted to the cold clean queue; 2 and 3 get
        // their second chance; 2 is met again cold and evicted. Page 1 survives this eviction.
        let mut h = Harness::<CcfLru>::new(3, NoParams);
        h.read(1);
        h.read(1);
        h.write(2);
        h.write(3);
        h.write(4);
        assert_eq!(h.evicted_pages(), vec![2]);
        assert!(h.policy.in_cold_clean_queue(h.frame_of(1).unwrap()));
        // Next miss: page 1 is now a cold clean page and goes first.
        h.write(5);
        assert_eq!(h.evicted_pages(), vec![2, 1]);
    }

    #[test]
    fn mixed_queue_of_hot_clean_pages_only_falls_back_to_the_cold_clean_queue() {
        let mut h = Harness::<CcfLru>::new(2, NoParams);
        h.read(1);
        h.read(1);
        h.read(2);
        h.read(2);
        // Both hot clean in the mixed queue: both demoted (1 first), then the cold clean
        // queue's LRU page, 1, goes.
        h.read(3);
        assert_eq!(h.evicted_pages(), vec![1]);
        assert!(h.policy.in_cold_clean_queue(h.frame_of(2).unwrap()));
    }

    #[test]
    fn pins_and_all_pinned() {
        let mut h = Harness::<CcfLru>::new(3, NoParams);
        h.read(1);
        h.write(2);
        h.read(3);
        h.pin(h.frame_of(1).unwrap());
        h.pin(h.frame_of(3).unwrap());
        h.read(4);
        assert_eq!(h.evicted_pages(), vec![2]);
        let mut p = CcfLru::new(1, &NoParams);
        let a = Access::new(1, crate::AccessKind::Read, 0);
        p.on_insert(0, &a);
        let mut ev = Evictions::default();
        assert_eq!(p.victims(&a, &[true][..], &mut ev), Err(EvictError::AllPinned));
        assert_eq!(p.len(), 1);
    }
}
