//! MIN — Belady's offline optimum: evict the page whose next reference is farthest away.
//!
//! Source: Belady, *A study of replacement algorithms for a virtual-storage computer* (IBM
//! Systems Journal 1966). It maximises the hit ratio of a demand-paged buffer (every missed page
//! is brought in), so it is the bound the other policies are measured against. It ignores
//! dirtiness: it is a hit-ratio bound, not a write-count bound.
//!
//! Needs the future: the simulator fills in [`Access::next_use`] (from the trace's own next-access
//! field when the format has one, e.g. oracleGeneral, otherwise from a backward pass).
//! Cost: O(log n) per access.

use std::cmp::Reverse;

use crate::heap::IndexedHeap;
use crate::params::NoParams;
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// Belady's MIN.
pub struct Min {
    heap: IndexedHeap<Reverse<u64>>,
    dirty: Vec<bool>,
    skipped: Vec<(u32, Reverse<u64>)>,
}

impl Replacer for Min {
    type Config = NoParams;
    const NEEDS_FUTURE: bool = true;

    fn new(capacity: usize, _config: &NoParams) -> Self {
        Min { heap: IndexedHeap::new(capacity), dirty: vec![false; capacity], skipped: Vec::with_capacity(capacity) }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.heap.change(frame, Reverse(access.next_use));
        self.dirty[frame as usize] |= access.kind.is_write();
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.heap.push(frame, Reverse(access.next_use));
        self.dirty[frame as usize] = access.kind.is_write();
    }

    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.heap.is_empty() {
            return Err(EvictError::Empty);
        }
        let mut victim = None;
        while let Some((f, key)) = self.heap.pop() {
            if pins.is_pinned(f) {
                self.skipped.push((f, key));
            } else {
                victim = Some(f);
                break;
            }
        }
        for (f, key) in self.skipped.drain(..) {
            self.heap.push(f, key);
        }
        out.victims.push(victim.ok_or(EvictError::AllPinned)?);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        self.heap.remove(frame);
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.heap.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replacer::AccessKind::Read;
    use crate::testing::check_contract;

    #[test]
    fn textbook_example() {
        // Reference string 7 0 1 2 0 3 0 4 2 3 0 3 2 with 3 frames: OPT makes 7 faults.
        let refs: Vec<(u64, _)> = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2].iter().map(|&p| (p, Read)).collect();
        let h = check_contract::<Min>(3, NoParams, &refs);
        assert_eq!(h.misses, 7);
    }
}
