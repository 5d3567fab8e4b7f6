//! LRU-WSR — LRU with writes sequence reordering: a second chance for hot dirty pages.
//!
//! Source: Jung, Shim, Park, Kang, Cha, *LRU-WSR: integration of LRU and writes sequence
//! reordering for flash memory* (IEEE Trans. Consumer Electronics 54(3), 2008), as described in
//! the AD-LRU paper §2.3: one LRU list; every page carries a *cold flag*. To find a victim,
//! look at the LRU page: a clean page is evicted at once; a dirty page whose cold flag is set is
//! evicted; a dirty page whose cold flag is clear gets a second chance: its cold flag is set and
//! it moves to the MRU end, and the next LRU page is examined.
//!
//! Cold flag: a page is (re)considered hot whenever it is referenced, so a hit clears the flag,
//! and a page enters the buffer with the flag clear (it has just been referenced). The flag is
//! set only by the second chance; a dirty page that is not referenced again before it reaches
//! the LRU end a second time is cold and goes. (The paper text itself was not available; this is
//! what both public implementations consulted do: GitHub `ggustavo/SNK-DB`,
//! `src/dbms/buffer_manager/policies/LRUWSR.h`, and `dohee/flash-sim`,
//! `Buffers/Managers/LRUWSR.cs`.) The flag matters only for dirty pages.
//!
//! Choices where the papers are silent: pinned frames keep their place and flag and are
//! skipped; the search walks from the LRU end towards the MRU end, so frames given a second
//! chance are met again after every older frame, exactly as re-reading "the LRU page" would.
//! Each frame is met at most twice, so the walk is bounded by `2·len + 1` steps and ends with
//! [`EvictError::AllPinned`] when every frame is pinned. Every operation is O(1) except the
//! victim search, which is O(number of hot dirty pages passed over).

use crate::lists::FrameLists;
use crate::params::NoParams;
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

const QUEUE: u8 = 0;

/// The LRU-WSR policy.
#[derive(Clone, Debug)]
pub struct LruWsr {
    lists: FrameLists,
    dirty: Vec<bool>,
    cold: Vec<bool>,
}

impl LruWsr {
    /// Whether the page in `frame` has its cold flag set.
    pub fn is_cold(&self, frame: FrameId) -> bool {
        self.cold[frame as usize]
    }
}

impl Replacer for LruWsr {
    type Config = NoParams;

    fn new(capacity: usize, _config: &NoParams) -> Self {
        LruWsr { lists: FrameLists::new(capacity, 1), dirty: vec![false; capacity], cold: vec![false; capacity] }
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
        self.lists.move_to_front(QUEUE, frame);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        self.dirty[f] = access.kind.is_write();
        self.cold[f] = false;
        self.lists.push_front(QUEUE, frame);
    }

    #[inline]
    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        let n = self.lists.len(QUEUE);
        let mut cur = Some(self.lists.back(QUEUE).ok_or(EvictError::Empty)?);
        for _ in 0..2 * n + 1 {
            let Some(f) = cur else { break };
            let towards_mru = self.lists.prev(f);
            if pins.is_pinned(f) {
                cur = towards_mru;
                continue;
            }
            let i = f as usize;
            if !self.dirty[i] || self.cold[i] {
                self.lists.remove(f);
                out.victims.push(f);
                return Ok(());
            }
            // Second chance: mark cold, move to the MRU end. When `f` was already the MRU-most
            // frame it is the next frame to examine.
            self.cold[i] = true;
            self.lists.move_to_front(QUEUE, f);
            cur = towards_mru.or(Some(f));
        }
        Err(EvictError::AllPinned)
    }

    fn remove(&mut self, frame: FrameId) {
        self.lists.remove(frame);
    }

    fn len(&self) -> usize {
        self.lists.len(QUEUE)
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.lists.check()?;
        for f in self.lists.iter_from_front(QUEUE) {
            if self.cold[f as usize] && !self.dirty[f as usize] {
                return Err(format!("lru-wsr: clean frame {f} has its cold flag set"));
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
    fn hot_dirty_page_gets_a_second_chance_then_a_cold_one_goes() {
        // Capacity 3, all dirty: 1 2 3 (LRU first). Miss on 4: 1, 2, 3 get their second chance
        // in turn (cold flag set, moved to MRU); then 1 is met again, cold, and evicted.
        let mut h = Harness::<LruWsr>::new(3, NoParams);
        for p in [1, 2, 3] {
            h.write(p);
        }
        h.read(4);
        assert_eq!(h.evicted_pages(), vec![1]);
        for p in [2, 3] {
            assert!(h.policy.is_cold(h.frame_of(p).unwrap()), "page {p} should be cold");
        }
        assert!(!h.policy.is_cold(h.frame_of(4).unwrap()));
        // A hit makes page 2 hot again; page 3, still cold, is now at the LRU end and goes.
        h.write(2);
        assert!(!h.policy.is_cold(h.frame_of(2).unwrap()));
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![1, 3]);
    }

    #[test]
    fn dirty_hot_page_moves_to_mru_with_cold_flag_and_clean_lru_page_goes() {
        // LRU order: 1(dirty) 2(clean) 3(dirty). Miss: 1 gets its second chance (moves to MRU,
        // cold); clean 2 is evicted at once.
        let mut h = Harness::<LruWsr>::new(3, NoParams);
        h.write(1);
        h.read(2);
        h.write(3);
        h.read(4);
        assert_eq!(h.evicted_pages(), vec![2]);
        let f1 = h.frame_of(1).unwrap();
        assert!(h.policy.is_cold(f1));
        assert_eq!(h.policy.lists.front(QUEUE), h.frame_of(4));
        // List now (MRU first): 4, 1, 3. 3 is dirty and hot: second chance; 1 is cold: evicted.
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![2, 1]);
    }

    #[test]
    fn clean_lru_page_goes_immediately() {
        let mut h = Harness::<LruWsr>::new(2, NoParams);
        h.read(1);
        h.write(2);
        h.read(3);
        assert_eq!(h.evicted_pages(), vec![1]);
        assert!(!h.policy.is_cold(h.frame_of(2).unwrap()));
    }

    #[test]
    fn single_unpinned_hot_dirty_page_is_evicted_after_its_second_chance() {
        // Every frame but the MRU-most is pinned; that one is dirty and hot: the walk gives it
        // its second chance and then evicts it.
        let mut h = Harness::<LruWsr>::new(3, NoParams);
        h.write(1);
        h.write(2);
        h.write(3);
        h.pin(h.frame_of(1).unwrap());
        h.pin(h.frame_of(2).unwrap());
        h.read(4);
        assert_eq!(h.evicted_pages(), vec![3]);
    }

    #[test]
    fn all_pinned_is_reported() {
        let mut p = LruWsr::new(2, &NoParams);
        let a = Access::new(1, crate::AccessKind::Write, 0);
        p.on_insert(0, &a);
        p.on_insert(1, &Access::new(2, crate::AccessKind::Write, 1));
        let mut ev = Evictions::default();
        assert_eq!(p.victims(&a, &[true, true][..], &mut ev), Err(EvictError::AllPinned));
        assert_eq!(p.len(), 2);
        p.check_invariants().unwrap();
    }
}
