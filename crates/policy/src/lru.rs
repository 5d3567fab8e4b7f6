//! LRU — evict the least recently used page.
//!
//! Source: the textbook policy (e.g. Effelsberg & Härder, *Principles of database buffer
//! management*, TODS 1984); the baseline of every paper flashbuf reproduces.
//!
//! State: one queue of frames, MRU at the front. Every operation is O(1).

use crate::lists::FrameLists;
use crate::params::NoParams;
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

const QUEUE: u8 = 0;

/// The LRU policy.
#[derive(Clone, Debug)]
pub struct Lru {
    lists: FrameLists,
    dirty: Vec<bool>,
}

impl Replacer for Lru {
    type Config = NoParams;

    fn new(capacity: usize, _config: &NoParams) -> Self {
        Lru { lists: FrameLists::new(capacity, 1), dirty: vec![false; capacity] }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.dirty[frame as usize] |= access.kind.is_write();
        self.lists.move_to_front(QUEUE, frame);
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        self.lists.prefetch(frame);
    }

    #[inline(always)]
    fn likely_victim(&self) -> Option<FrameId> {
        self.lists.back(QUEUE)
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.dirty[frame as usize] = access.kind.is_write();
        self.lists.push_front(QUEUE, frame);
    }

    #[inline]
    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        let mut cand = self.lists.back(QUEUE).ok_or(EvictError::Empty)?;
        while pins.is_pinned(cand) {
            cand = self.lists.prev(cand).ok_or(EvictError::AllPinned)?;
        }
        self.lists.remove(cand);
        out.victims.push(cand);
        Ok(())
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
        self.lists.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    #[test]
    fn evicts_in_recency_order() {
        // Capacity 3: a b c, hit a, miss d evicts b, miss e evicts c.
        let mut h = Harness::<Lru>::new(3, Default::default());
        for p in [1, 2, 3, 1, 4, 5] {
            h.read(p);
        }
        assert_eq!(h.evicted_pages(), vec![2, 3]);
    }

    #[test]
    fn pinned_frames_are_skipped() {
        let mut h = Harness::<Lru>::new(2, Default::default());
        h.read(1);
        h.read(2);
        let f1 = h.frame_of(1).unwrap();
        h.pin(f1);
        h.read(3);
        assert_eq!(h.evicted_pages(), vec![2]);
    }
}
