//! SIEVE — a FIFO queue with one "visited" bit per page and a hand that sifts it.
//!
//! Source: Zhang, Yang, Yue, Vigfusson, Rashmi, *SIEVE is simpler than LRU: an efficient
//! turn-key eviction algorithm for web caches* (NSDI 2024), §3 and its Fig. 2 / Algorithm 1.
//!
//! New pages enter at the head of one queue with their visited bit clear; a hit only sets the
//! bit (no queue movement). To evict, the hand starts where it stopped last time (at the tail
//! the first time, or after it has run off the head): it clears the bit of every visited page
//! it passes, moving towards the head and wrapping to the tail at the end, and evicts the first
//! page whose bit is clear. It then rests on the evicted page's neighbour towards the head.
//! Unlike CLOCK, surviving pages keep their place: new pages are never inserted behind the hand
//! in the order of inspection, so old popular pages stay "sifted" towards the tail.
//!
//! Orientation: the queue is a [`FrameLists`] list, front = head (newest), back = tail; the
//! hand moves with [`FrameLists::prev`] (towards the head), as in the paper's figure.
//!
//! Choices where the paper is silent:
//! * With pinned frames, the hand passes a pinned page without touching its bit (it is neither
//!   evicted nor given a second chance); two full turns without a victim mean every candidate
//!   is pinned.
//! * When the buffer drops a page itself ([`Replacer::remove`]) and the hand rests on it, the
//!   hand moves to the page's neighbour towards the head, as libCacheSim's `Sieve.c` does.
//! * A page brought in by a write counts as not yet visited, like one brought in by a read.
//!
//! Validation: hit counts equal libCacheSim's `Sieve` exactly on the ARC paper's OLTP trace and
//! the CloudPhysics sample at every size tried (see `crates/policy/tests/cache_baselines.rs`).

use crate::lists::FrameLists;
use crate::params::NoParams;
use crate::replacer::{Access, EvictError, Evictions, FrameId, NIL, Pins, Replacer};

const QUEUE: u8 = 0;

/// The SIEVE policy.
#[derive(Clone, Debug)]
pub struct Sieve {
    lists: FrameLists,
    visited: Vec<bool>,
    dirty: Vec<bool>,
    /// Where the next eviction starts; [`NIL`] means "at the tail".
    hand: FrameId,
}

impl Sieve {
    /// The frame the hand rests on, if any (`None`: the next eviction starts at the tail).
    pub fn hand(&self) -> Option<FrameId> {
        (self.hand != NIL).then_some(self.hand)
    }

    /// Whether the page in `frame` has been hit since it entered or the hand last passed it.
    pub fn is_visited(&self, frame: FrameId) -> bool {
        self.visited[frame as usize]
    }
}

impl Replacer for Sieve {
    type Config = NoParams;

    fn new(capacity: usize, _config: &NoParams) -> Self {
        Sieve {
            lists: FrameLists::new(capacity, 1),
            visited: vec![false; capacity],
            dirty: vec![false; capacity],
            hand: NIL,
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.visited[frame as usize] = true;
        self.dirty[frame as usize] |= access.kind.is_write();
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.lists.push_front(QUEUE, frame);
        self.visited[frame as usize] = false;
        self.dirty[frame as usize] = access.kind.is_write();
    }

    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        let n = self.lists.len(QUEUE);
        let tail = self.lists.back(QUEUE).ok_or(EvictError::Empty)?;
        let mut f = if self.hand == NIL { tail } else { self.hand };
        // Every step either clears a bit or passes a pinned page: after two full turns without
        // a victim, every page is pinned.
        for _ in 0..2 * n + 1 {
            let towards_head = self.lists.prev(f).unwrap_or(tail);
            if pins.is_pinned(f) {
                f = towards_head;
                continue;
            }
            if self.visited[f as usize] {
                self.visited[f as usize] = false;
                f = towards_head;
                continue;
            }
            self.hand = self.lists.prev(f).unwrap_or(NIL);
            self.lists.remove(f);
            out.victims.push(f);
            return Ok(());
        }
        Err(EvictError::AllPinned)
    }

    fn remove(&mut self, frame: FrameId) {
        if !self.lists.contains(QUEUE, frame) {
            return;
        }
        if self.hand == frame {
            self.hand = self.lists.prev(frame).unwrap_or(NIL);
        }
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
        if self.hand != NIL && !self.lists.contains(QUEUE, self.hand) {
            return Err(format!("sieve: the hand rests on frame {}, which holds no page", self.hand));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    #[test]
    fn hand_sifts_from_the_tail_and_rests_after_the_victim() {
        // A cache of 7 holding, from tail to head, A B C D E F G with A, B, G visited: a
        // request for H evicts C (the hand clears A and B on its way), and the hand then rests
        // on D. A request for I then evicts D.
        let (a, b, c, d, e, f, g, h, i) = (1, 2, 3, 4, 5, 6, 7, 8, 9);
        let mut hs = Harness::<Sieve>::new(7, NoParams);
        for p in [a, b, c, d, e, f, g] {
            hs.read(p);
        }
        for p in [a, b, g] {
            assert!(hs.read(p));
        }
        hs.read(h);
        assert_eq!(hs.evicted_pages(), vec![c]);
        assert_eq!(hs.policy.hand(), hs.frame_of(d));
        assert!(!hs.policy.is_visited(hs.frame_of(a).unwrap()));
        assert!(hs.policy.is_visited(hs.frame_of(g).unwrap()));
        hs.read(i);
        assert_eq!(hs.evicted_pages(), vec![c, d]);
        // E, F have clear bits; G keeps its bit until the hand reaches it.
        hs.read(10);
        assert_eq!(hs.evicted_pages(), vec![c, d, e]);
    }

    #[test]
    fn hand_wraps_from_head_to_tail() {
        // All pages visited: the hand clears every bit on its way to the head, wraps to the
        // tail and evicts the oldest page there.
        let mut h = Harness::<Sieve>::new(3, NoParams);
        for p in [1, 2, 3, 1, 2, 3] {
            h.read(p);
        }
        h.read(4);
        assert_eq!(h.evicted_pages(), vec![1]);
        // The evicted page was the tail: the hand rests on its neighbour towards the head, 2,
        // whose bit was cleared by the first pass.
        assert_eq!(h.policy.hand(), h.frame_of(2));
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![1, 2]);
    }

    #[test]
    fn pinned_pages_keep_their_bit_and_are_passed_over() {
        let mut h = Harness::<Sieve>::new(3, NoParams);
        for p in [1, 2, 3] {
            h.read(p);
        }
        h.read(1); // 1 visited
        let f2 = h.frame_of(2).unwrap();
        h.pin(f2);
        h.read(4); // hand: 1 (clear its bit), 2 pinned (passed), 3 evicted
        assert_eq!(h.evicted_pages(), vec![3]);
        h.unpin(f2);
        // 3 was the head: the hand has no neighbour to rest on and restarts at the tail, 1,
        // whose bit the first pass cleared.
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![3, 1]);
    }

    #[test]
    fn removing_the_page_under_the_hand_moves_the_hand_on() {
        let mut h = Harness::<Sieve>::new(3, NoParams);
        for p in [1, 2, 3, 4] {
            h.read(p);
        }
        // 1 evicted, the hand rests on 2.
        let f2 = h.frame_of(2).unwrap();
        assert_eq!(h.policy.hand(), Some(f2));
        h.policy.remove(f2);
        assert_eq!(h.policy.hand(), h.frame_of(3));
        h.policy.check_invariants().unwrap();
    }
}
