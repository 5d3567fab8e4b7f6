//! CLOCK — second chance with one reference bit per frame.
//!
//! Source: Corbató, *A paging experiment with the Multics system* (1969), as described in the
//! AD-LRU paper §2.2: frames form a circle; the hand clears set reference bits and stops at the
//! first frame whose bit is clear.
//!
//! Choices where the description is silent: a page brought into the buffer has its reference
//! bit set (it has just been referenced), and the hand moves one frame past the victim, so the
//! page that replaces the victim in the same frame is inspected last.

use crate::params::NoParams;
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// The CLOCK policy.
#[derive(Clone, Debug)]
pub struct Clock {
    referenced: Vec<bool>,
    resident: Vec<bool>,
    dirty: Vec<bool>,
    hand: usize,
    len: usize,
}

impl Replacer for Clock {
    type Config = NoParams;

    fn new(capacity: usize, _config: &NoParams) -> Self {
        Clock {
            referenced: vec![false; capacity],
            resident: vec![false; capacity],
            dirty: vec![false; capacity],
            hand: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        crate::blocks::prefetch(&self.referenced, frame as usize);
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.referenced[frame as usize] = true;
        self.dirty[frame as usize] |= access.kind.is_write();
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        self.referenced[f] = true;
        self.resident[f] = true;
        self.dirty[f] = access.kind.is_write();
        self.len += 1;
    }

    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.len == 0 {
            return Err(EvictError::Empty);
        }
        let n = self.resident.len();
        // Two full turns suffice: the first clears every bit, the second finds a clear one,
        // unless every frame is pinned.
        for _ in 0..2 * n + 1 {
            let f = self.hand;
            self.hand = if f + 1 == n { 0 } else { f + 1 };
            if !self.resident[f] || pins.is_pinned(f as FrameId) {
                continue;
            }
            if self.referenced[f] {
                self.referenced[f] = false;
                continue;
            }
            self.resident[f] = false;
            self.len -= 1;
            out.victims.push(f as FrameId);
            return Ok(());
        }
        Err(EvictError::AllPinned)
    }

    fn remove(&mut self, frame: FrameId) {
        let f = frame as usize;
        if self.resident[f] {
            self.resident[f] = false;
            self.len -= 1;
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        let count = self.resident.iter().filter(|&&r| r).count();
        if count != self.len {
            return Err(format!("clock: {count} resident frames but len {}", self.len));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    #[test]
    fn second_chance_in_hand_order() {
        // Frames fill 0,1,2 with pages 1,2,3 (all referenced). Miss on 4: the hand clears 0,1,2
        // and evicts frame 0 (page 1), leaving the hand at frame 1. Hit 2 sets frame 1 again.
        // Miss on 5: frame 1 (page 2) gets its second chance, frame 2 (page 3) is evicted.
        let mut h = Harness::<Clock>::new(3, NoParams);
        for p in [1, 2, 3, 4, 2, 5] {
            h.read(p);
        }
        assert_eq!(h.evicted_pages(), vec![1, 3]);
    }
}
