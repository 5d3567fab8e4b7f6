//! ARC — adaptive replacement cache.
//!
//! Source: Megiddo & Modha, *ARC: a self-tuning, low overhead replacement cache* (FAST 2003),
//! Fig. 4 of the paper; cited by the AD-LRU paper §2.2.
//!
//! Resident pages live in T1 (seen once recently) and T2 (seen at least twice); B1 and B2 remember
//! the pages recently evicted from each. The target size `p` of T1 grows on a hit in B1 and shrinks
//! on a hit in B2; REPLACE evicts from T1 when it exceeds `p` (or equals it and the incoming page
//! is in B2), else from T2. `p` is a real number, as in the paper.
//!
//! Mapping onto the replacer contract: the directory maintenance of a miss (adapting `p`,
//! trimming B1/B2, REPLACE) runs in `victims` when the buffer is full, or in `on_insert` when a
//! free frame was available (then REPLACE is skipped, as the paper's cache is not yet full).
//! Ghost entries are nodes `capacity..3·capacity` of the same index-linked lists; a page
//! directory finds them by page number (one lookup per miss: an array index for page numbers
//! below 2^26, prefetched a few requests ahead like the simulator's page table; a hash above).
//! With pinned frames, REPLACE takes the LRU-most unpinned page of the list it selects, falling
//! back to the other list.

use crate::blocks::{BlockTable, DENSE_PAGES};
use crate::lists::FrameLists;
use crate::params::NoParams;
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

const T1: u8 = 0;
const T2: u8 = 1;
const B1: u8 = 2;
const B2: u8 = 3;

/// The ARC policy.
pub struct Arc {
    c: usize,
    p: f64,
    lists: FrameLists,
    /// Page of every frame.
    page: Vec<u64>,
    dirty: Vec<bool>,
    /// Ghost page → ghost slot `s`, the list node `c + s`.
    ghosts: BlockTable,
    /// Set by `victims`: the incoming page's directory work is done; it goes to T2 if `true`.
    prepared: Option<(u64, bool)>,
}

impl Arc {
    fn drop_ghost(&mut self, list: u8) {
        if let Some(g) = self.lists.pop_back(list) {
            self.ghosts.release(g - self.c as u32);
        }
    }

    fn add_ghost(&mut self, list: u8, page: u64) {
        let (s, created) = self.ghosts.get_or_insert(page);
        debug_assert!(created, "page {page} was resident, not a ghost");
        self.lists.push_front(list, self.c as u32 + s);
    }

    fn lru_unpinned<P: Pins + ?Sized>(&self, list: u8, pins: &P) -> Option<FrameId> {
        self.lists.iter_from_back(list).find(|&f| !pins.is_pinned(f))
    }

    /// REPLACE(x, p) of the paper; returns the evicted frame, which it moves to B1 or B2.
    fn replace<P: Pins + ?Sized>(&mut self, in_b2: bool, pins: &P) -> Result<FrameId, EvictError> {
        let t1 = self.lists.len(T1);
        let from_t1 = t1 >= 1 && ((in_b2 && t1 as f64 == self.p) || t1 as f64 > self.p);
        let (first, second) = if from_t1 { (T1, T2) } else { (T2, T1) };
        let (victim, from) = match self.lru_unpinned(first, pins) {
            Some(f) => (f, first),
            None => (self.lru_unpinned(second, pins).ok_or(EvictError::AllPinned)?, second),
        };
        self.lists.remove(victim);
        self.add_ghost(if from == T1 { B1 } else { B2 }, self.page[victim as usize]);
        Ok(victim)
    }

    /// The directory part of a miss on `page` (cases II–IV of the paper). When `replace` is
    /// set the cache is full and a victim is returned. Returns (victim, goes_to_t2).
    fn miss<P: Pins + ?Sized>(
        &mut self,
        page: u64,
        replace: bool,
        pins: &P,
    ) -> Result<(Option<FrameId>, bool), EvictError> {
        let c = self.c as f64;
        if let Some(s) = self.ghosts.get(page) {
            let g = self.c as u32 + s;
            let (b1, b2) = (self.lists.len(B1) as f64, self.lists.len(B2) as f64);
            let in_b2 = self.lists.contains(B2, g);
            if in_b2 {
                let delta = if b2 >= b1 { 1.0 } else { b1 / b2 };
                self.p = (self.p - delta).max(0.0);
            } else {
                let delta = if b1 >= b2 { 1.0 } else { b2 / b1 };
                self.p = (self.p + delta).min(c);
            }
            let victim = if replace { Some(self.replace(in_b2, pins)?) } else { None };
            // The incoming page leaves the ghost directory (it becomes resident in T2).
            self.lists.remove(g);
            self.ghosts.release(s);
            return Ok((victim, true));
        }
        let (t1, b1) = (self.lists.len(T1), self.lists.len(B1));
        let total = t1 + b1 + self.lists.len(T2) + self.lists.len(B2);
        let mut victim = None;
        if t1 + b1 >= self.c {
            if t1 < self.c {
                self.drop_ghost(B1);
                if replace {
                    victim = Some(self.replace(false, pins)?);
                }
            } else if replace {
                // Case IV.A with B1 empty: T1's LRU page leaves the cache and the directory.
                let f = self.lru_unpinned(T1, pins).ok_or(EvictError::AllPinned)?;
                self.lists.remove(f);
                victim = Some(f);
            }
        } else if total >= self.c {
            if total >= 2 * self.c {
                self.drop_ghost(B2);
            }
            if replace {
                victim = Some(self.replace(false, pins)?);
            }
        }
        if replace && victim.is_none() {
            // Only reachable when the directory rules allow no eviction although the buffer is
            // full (possible after external removals): fall back to REPLACE.
            victim = Some(self.replace(false, pins)?);
        }
        Ok((victim, false))
    }

    /// The current target size of T1 (for tests and reports).
    pub fn target_p(&self) -> f64 {
        self.p
    }
}

impl Replacer for Arc {
    type Config = NoParams;

    fn new(capacity: usize, _config: &NoParams) -> Self {
        let nodes = 3 * capacity + 1;
        Arc {
            c: capacity,
            p: 0.0,
            lists: FrameLists::new(nodes, 4),
            page: vec![0; capacity],
            dirty: vec![false; capacity],
            ghosts: BlockTable::with_dense_limit(nodes - capacity, DENSE_PAGES),
            prepared: None,
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.dirty[frame as usize] |= access.kind.is_write();
        self.lists.move_to_front(T2, frame);
    }

    #[inline(always)]
    fn prefetch(&self, page: u64) {
        self.ghosts.prefetch(page);
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let to_t2 = match self.prepared.take() {
            Some((page, to_t2)) if page == access.page => to_t2,
            _ => self.miss(access.page, false, &crate::replacer::NoPins).map(|(_, t2)| t2).unwrap_or(false),
        };
        self.page[frame as usize] = access.page;
        self.dirty[frame as usize] = access.kind.is_write();
        self.lists.push_front(if to_t2 { T2 } else { T1 }, frame);
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
        let (victim, to_t2) = self.miss(incoming.page, true, pins)?;
        self.prepared = Some((incoming.page, to_t2));
        out.victims.push(victim.expect("a full cache always yields a victim"));
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        self.lists.remove(frame);
    }

    fn len(&self) -> usize {
        self.lists.len(T1) + self.lists.len(T2)
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.lists.check()?;
        let (t1, t2, b1, b2) = (self.lists.len(T1), self.lists.len(T2), self.lists.len(B1), self.lists.len(B2));
        if t1 + t2 > self.c {
            return Err(format!("arc: |T1|+|T2| = {} > c = {}", t1 + t2, self.c));
        }
        if t1 + b1 > self.c {
            return Err(format!("arc: |T1|+|B1| = {} > c = {}", t1 + b1, self.c));
        }
        if t1 + t2 + b1 + b2 > 2 * self.c {
            return Err(format!("arc: directory holds {} > 2c pages", t1 + t2 + b1 + b2));
        }
        self.ghosts.check()?;
        let mut ghosts = 0;
        for (page, s) in self.ghosts.live() {
            ghosts += 1;
            if !matches!(self.lists.list_of(self.c as u32 + s), Some(B1 | B2)) {
                return Err(format!("arc: ghost page {page} (slot {s}) is in neither B1 nor B2"));
            }
        }
        if ghosts != b1 + b2 {
            return Err(format!("arc: ghost directory has {ghosts} entries, B1+B2 = {}", b1 + b2));
        }
        if !(0.0..=self.c as f64).contains(&self.p) {
            return Err(format!("arc: p = {} outside [0, c]", self.p));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    #[test]
    fn b1_hit_grows_p_and_promotes_to_t2() {
        let mut h = Harness::<Arc>::new(2, NoParams);
        h.read(1);
        h.read(1); // 1 moves to T2
        h.read(2); // T1 = [2]
        h.read(3); // REPLACE with p = 0: |T1| = 1 > p, so 2 goes from T1 to B1
        assert_eq!(h.evicted_pages(), vec![2]);
        assert_eq!(h.policy.target_p(), 0.0);
        h.read(2); // hit in B1: p = 1; REPLACE: |T1| = 1 is not > p, so T2's 1 goes to B2
        assert_eq!(h.policy.target_p(), 1.0);
        assert_eq!(h.evicted_pages(), vec![2, 1]);
        let f = h.frame_of(2).unwrap();
        assert!(h.policy.lists.contains(T2, f));
        h.read(1); // hit in B2: p shrinks back to 0
        assert_eq!(h.policy.target_p(), 0.0);
    }

    #[test]
    fn full_t1_without_history_drops_its_lru_page_entirely() {
        // Case IV.A with |T1| = c: the LRU page of T1 leaves cache and directory.
        let mut h = Harness::<Arc>::new(2, NoParams);
        for p in [1, 2, 3] {
            h.read(p);
        }
        assert_eq!(h.evicted_pages(), vec![1]);
        h.read(1); // not remembered: a plain miss, p unchanged
        assert_eq!(h.policy.target_p(), 0.0);
    }

    #[test]
    fn frequent_pages_survive_a_scan() {
        let mut h = Harness::<Arc>::new(4, NoParams);
        for _ in 0..3 {
            h.read(1);
            h.read(2);
        }
        for p in 100..120 {
            h.read(p);
        }
        assert!(h.resident().contains(&1) && h.resident().contains(&2), "{:?}", h.resident());
    }
}
