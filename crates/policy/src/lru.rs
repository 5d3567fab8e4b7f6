//! LRU — evict the least recently used page.
//!
//! Source: the textbook policy (e.g. Effelsberg & Härder, *Principles of database buffer
//! management*, TODS 1984); the baseline of every paper flashbuf reproduces.
//!
//! State: one queue of frames, MRU at the front. Every operation is O(1).
//!
//! Layout (for speed): one 8-byte record per frame holding its two links, so that a hit reads
//! one record and writes its two neighbours' and the front's (a frame's record, its neighbours'
//! and the front's: four lines at most); the ends live in the policy itself, and the dirty bits
//! in a bitmap (a bit per frame: 12.5 KB for 100,000 frames, which stays in cache).

use crate::blocks::{Ends, Link, link_front, prefetch, unlink, walk};
use crate::params::NoParams;
use crate::replacer::{Access, EvictError, Evictions, FrameId, NIL, Pins, Replacer};

/// The LRU policy.
#[derive(Clone, Debug)]
pub struct Lru {
    /// Per frame: its links `[towards MRU, towards LRU]`.
    node: Vec<Link>,
    queue: Ends,
    /// One bit per frame.
    dirty: Vec<u64>,
}

impl Lru {
    /// `true` when `frame` is in the queue (the front, or a frame with a neighbour towards it).
    #[inline(always)]
    fn linked(&self, frame: FrameId) -> bool {
        self.queue.head == frame || self.node[frame as usize].links[0] != NIL
    }

    #[inline(always)]
    fn set_dirty(&mut self, frame: FrameId, dirty: bool) {
        let (w, b) = (frame as usize / 64, frame % 64);
        self.dirty[w] = (self.dirty[w] & !(1 << b)) | (u64::from(dirty) << b);
    }
}

impl Replacer for Lru {
    type Config = NoParams;

    fn new(capacity: usize, _config: &NoParams) -> Self {
        assert!(capacity < NIL as usize, "too many frames for LRU");
        Lru { node: vec![Link::FREE; capacity], queue: Ends::EMPTY, dirty: vec![0; capacity.div_ceil(64)] }
    }

    #[inline(always)]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.dirty[frame as usize / 64] |= u64::from(access.kind.is_write()) << (frame % 64);
        if self.queue.head != frame {
            unlink::<0, _, _>(&mut self.node, &mut self.queue, frame);
            link_front::<0, _, _>(&mut self.node, &mut self.queue, frame);
        }
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        prefetch(&self.node, frame as usize);
    }

    #[inline(always)]
    fn likely_victim(&self) -> Option<FrameId> {
        let t = self.queue.tail;
        (t != NIL).then_some(t)
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.set_dirty(frame, access.kind.is_write());
        link_front::<0, _, _>(&mut self.node, &mut self.queue, frame);
    }

    #[inline]
    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        let mut cand = self.queue.tail;
        if cand == NIL {
            return Err(EvictError::Empty);
        }
        while pins.is_pinned(cand) {
            cand = self.node[cand as usize].links[0];
            if cand == NIL {
                return Err(EvictError::AllPinned);
            }
        }
        unlink::<0, _, _>(&mut self.node, &mut self.queue, cand);
        out.victims.push(cand);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        if self.linked(frame) {
            unlink::<0, _, _>(&mut self.node, &mut self.queue, frame);
        }
    }

    fn len(&self) -> usize {
        self.queue.len as usize
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some((self.dirty[frame as usize / 64] >> (frame % 64)) & 1 == 1)
    }

    fn check_invariants(&self) -> Result<(), String> {
        let linked = walk::<0, _>(&self.node, &self.queue).map_err(|e| format!("lru: {e}"))?;
        let mut is_linked = vec![false; self.node.len()];
        for &f in &linked {
            is_linked[f as usize] = true;
        }
        for (f, &l) in is_linked.iter().enumerate() {
            if !l && self.node[f].links != [NIL; 2] {
                return Err(format!("lru: frame {f} is in no list but has links {:?}", self.node[f].links));
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
