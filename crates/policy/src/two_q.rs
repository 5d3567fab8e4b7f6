//! 2Q — the full version: a FIFO for first references (A1in), a ghost queue of pages recently
//! dropped from it (A1out), and an LRU queue of pages referenced again (Am).
//!
//! Source: Johnson & Shasha, *2Q: a low overhead high performance buffer management replacement
//! algorithm* (VLDB 1994), the "full version" with the paper's recommended Kin = 25% and
//! Kout = 50% of the buffer; cited by the AD-LRU paper §2.2.
//!
//! On a hit in Am the page moves to Am's front; a hit in A1in does nothing (correlated
//! references). A miss on a page remembered in A1out goes to Am; any other miss goes to A1in.
//! To free a frame: if A1in holds more than Kin pages, its tail is evicted and remembered in
//! A1out (trimmed to Kout); otherwise Am's tail is evicted.
//!
//! Choices: with pinned frames, the candidate is the LRU-most unpinned page of the queue the
//! rule selects, falling back to the other queue. Kin and Kout are rounded to whole pages.
//!
//! State: A1in and Am are index-linked lists over frames; A1out is an index-linked FIFO over
//! ghost slots, found by page number through a page directory (an array index for page numbers
//! below 2^26, prefetched a few requests ahead like the simulator's page table; a hash above).

use crate::blocks::{BlockTable, DENSE_PAGES};
use crate::lists::FrameLists;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

const A1IN: u8 = 0;
const AM: u8 = 1;

/// Parameters of [`TwoQ`].
#[derive(Clone, Debug, PartialEq)]
pub struct TwoQConfig {
    /// Size of A1in as a fraction of the buffer (paper: 0.25).
    pub kin: f64,
    /// Size of the A1out ghost queue as a fraction of the buffer (paper: 0.5).
    pub kout: f64,
}

impl Default for TwoQConfig {
    fn default() -> Self {
        TwoQConfig { kin: 0.25, kout: 0.5 }
    }
}

impl PolicyParams for TwoQConfig {
    const KEYS: &'static [ParamDoc] = &[
        ParamDoc { key: "kin", help: "A1in size, fraction of the buffer, default 0.25" },
        ParamDoc { key: "kout", help: "A1out ghost size, fraction of the buffer, default 0.5" },
    ];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "kin" => self.kin = parse_fraction(key, value, 0.0, 1.0)?,
            "kout" => self.kout = parse_fraction(key, value, 0.0, 8.0)?,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        vec![fmt_float(self.kin), fmt_float(self.kout)]
    }
}

/// The 2Q policy.
pub struct TwoQ {
    lists: FrameLists,
    page: Vec<u64>,
    dirty: Vec<bool>,
    kin: usize,
    kout: usize,
    /// A1out: ghost page → ghost slot.
    ghosts: BlockTable,
    /// A1out's order over ghost slots (front = newest).
    a1out: FrameLists,
    /// Set by `victims` when the incoming page was found (and removed) in A1out.
    incoming_was_ghost: Option<u64>,
}

const A1OUT: u8 = 0;

impl TwoQ {
    fn remember(&mut self, page: u64) {
        if self.kout == 0 {
            return;
        }
        if self.a1out.len(A1OUT) == self.kout {
            let s = self.a1out.pop_back(A1OUT).expect("kout > 0 ghosts");
            self.ghosts.release(s);
        }
        let (s, created) = self.ghosts.get_or_insert(page);
        debug_assert!(created, "page {page} was resident, not a ghost");
        self.a1out.push_front(A1OUT, s);
    }

    /// Takes `page` out of A1out; `true` if it was there.
    fn forget(&mut self, page: u64) -> bool {
        match self.ghosts.get(page) {
            Some(s) => {
                self.a1out.remove(s);
                self.ghosts.release(s);
                true
            }
            None => false,
        }
    }

    fn lru_unpinned<P: Pins + ?Sized>(&self, list: u8, pins: &P) -> Option<FrameId> {
        self.lists.iter_from_back(list).find(|&f| !pins.is_pinned(f))
    }
}

impl Replacer for TwoQ {
    type Config = TwoQConfig;

    fn new(capacity: usize, config: &TwoQConfig) -> Self {
        let kin = (config.kin * capacity as f64).round() as usize;
        let kout = (config.kout * capacity as f64).round() as usize;
        TwoQ {
            lists: FrameLists::new(capacity, 2),
            page: vec![0; capacity],
            dirty: vec![false; capacity],
            kin,
            kout,
            ghosts: BlockTable::with_dense_limit(kout.max(1), DENSE_PAGES),
            a1out: FrameLists::new(kout.max(1), 1),
            incoming_was_ghost: None,
        }
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        self.lists.prefetch(frame);
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.dirty[frame as usize] |= access.kind.is_write();
        if self.lists.contains(AM, frame) {
            self.lists.move_to_front(AM, frame);
        }
    }

    #[inline(always)]
    fn prefetch(&self, page: u64) {
        self.ghosts.prefetch(page);
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let was_ghost = self.incoming_was_ghost.take() == Some(access.page) || self.forget(access.page);
        self.lists.push_front(if was_ghost { AM } else { A1IN }, frame);
        self.page[frame as usize] = access.page;
        self.dirty[frame as usize] = access.kind.is_write();
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
        if self.forget(incoming.page) {
            self.incoming_was_ghost = Some(incoming.page);
        }
        let (first, second) = if self.lists.len(A1IN) > self.kin { (A1IN, AM) } else { (AM, A1IN) };
        let (victim, from) = match self.lru_unpinned(first, pins) {
            Some(f) => (f, first),
            None => (self.lru_unpinned(second, pins).ok_or(EvictError::AllPinned)?, second),
        };
        self.lists.remove(victim);
        if from == A1IN {
            self.remember(self.page[victim as usize]);
        }
        out.victims.push(victim);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        self.lists.remove(frame);
    }

    fn len(&self) -> usize {
        self.lists.len(A1IN) + self.lists.len(AM)
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.lists.check()?;
        self.a1out.check()?;
        self.ghosts.check()?;
        let ghosts = self.ghosts.live().count();
        if ghosts > self.kout || ghosts != self.a1out.len(A1OUT) {
            return Err(format!(
                "2q: A1out holds {ghosts} pages in the directory, {} in its FIFO, bound {}",
                self.a1out.len(A1OUT),
                self.kout
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    #[test]
    fn ghost_hit_promotes_to_am_and_scans_stay_in_a1in() {
        // Capacity 4: Kin = 1, Kout = 2.
        let mut h = Harness::<TwoQ>::new(4, TwoQConfig::default());
        for p in [1, 2, 3, 4] {
            h.read(p);
        }
        // A1in = [4,3,2,1] (> Kin): the miss on 5 evicts 1 into A1out.
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![1]);
        // 1 comes back: it was in A1out, so it enters Am; A1in's tail 2 is evicted.
        h.read(1);
        assert_eq!(h.evicted_pages(), vec![1, 2]);
        let f1 = h.frame_of(1).unwrap();
        assert!(h.policy.lists.contains(AM, f1));
        // A scan of new pages only cycles through A1in; page 1 in Am survives it.
        for p in 100..110 {
            h.read(p);
        }
        assert!(h.resident().contains(&1));
    }
}
