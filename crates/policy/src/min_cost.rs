//! MIN-COST — an offline, write-aware relative of Belady's MIN: a feasible schedule whose device
//! time brackets the optimum from above, against the lower bounds of `flashbuf_sim::bound`.
//!
//! Source: none single. Belady's MIN (IBM Systems Journal 1966) is optimal for the hit ratio but
//! ignores write-backs; minimising reads priced at `r` plus write-backs priced at `w` is
//! NP-complete even with unit costs (Beckmann, Gibbons, Haeupler, McGuffey, *Writeback-aware
//! caching*, APOCS 2020). MIN-COST is a greedy rule in the spirit of both: it evicts the page
//! that costs least per unit of time it would otherwise occupy a frame. Its cost is achieved
//! (it is an ordinary policy run through the simulator), so the optimum lies between the bound
//! and it (`docs/curves.md`).
//!
//! The rule, at an eviction at time `t`, over the buffered pages with their next use `n`
//! (the position of the page's next access, from the simulator, [`Access::next_use`]):
//!
//! * a page never used again costs nothing to evict — a clean one first, then a dirty one (its
//!   write-back is due anyway, now or at the final flush);
//! * otherwise evicting a clean page costs a read `r` at `n`, and a dirty one a write `w` now
//!   plus a read at `n`: the victim is the page with the largest `(n − t) / cost`. Within each
//!   class the order is by `n` alone (the farthest next use first), so the choice is between
//!   the farthest clean and the farthest dirty page: the dirty one goes when
//!   `(n_d − t) · r > (n_c − t) · (r + w)`.
//!
//! Choices where no paper speaks:
//! * The costs are parameters (`read`, `write`, in µs) because a policy never sees the device;
//!   the defaults are the AD-LRU paper's MICRON chip (Table 2: 25 µs read, 220 µs program).
//! * The simulator tells an offline policy *when* a page is used next, not whether that use is a
//!   read or a write. A dirty page that will be read but never written again would cost only
//!   the read (its write is due anyway), and one whose next access is a write would cost no
//!   read in a write buffer; MIN-COST cannot tell them apart and prices every dirty page with a
//!   future at `r + w`. The bound in `flashbuf_sim::bound`, which sees the whole trace, does
//!   not have this limitation; the gap between the two is reported as it is.
//! * Ties (equal next use within a class) go to the lower frame number, as the heap breaks
//!   them; with pinned frames, the farthest unpinned page of each class is compared.
//!
//! Cost: O(log n) per access (two indexed heaps). Needs the future ([`Replacer::NEEDS_FUTURE`]).

use std::cmp::Reverse;

use crate::heap::IndexedHeap;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::replacer::{Access, EvictError, Evictions, FrameId, NEVER, Pins, Replacer};

/// Parameters of [`MinCost`].
#[derive(Clone, Debug, PartialEq)]
pub struct MinCostConfig {
    /// Cost of a page read, µs (default 25, the MICRON chip of the AD-LRU paper).
    pub read_us: f64,
    /// Cost of a page write, µs (default 220).
    pub write_us: f64,
}

impl Default for MinCostConfig {
    fn default() -> Self {
        MinCostConfig { read_us: 25.0, write_us: 220.0 }
    }
}

impl PolicyParams for MinCostConfig {
    const KEYS: &'static [ParamDoc] = &[
        ParamDoc { key: "read", help: "cost of a page read in µs, default 25" },
        ParamDoc { key: "write", help: "cost of a page write in µs, default 220" },
    ];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "read" => self.read_us = parse_fraction(key, value, 0.0, 1e9)?,
            "write" => self.write_us = parse_fraction(key, value, 0.0, 1e9)?,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        vec![fmt_float(self.read_us), fmt_float(self.write_us)]
    }
}

const CLEAN: usize = 0;
const DIRTY: usize = 1;

/// The MIN-COST policy.
pub struct MinCost {
    /// Buffered frames by class, the farthest next use on top.
    heaps: [IndexedHeap<Reverse<u64>>; 2],
    dirty: Vec<bool>,
    read: f64,
    write: f64,
    skipped: Vec<(u32, Reverse<u64>)>,
}

impl MinCost {
    /// The farthest unpinned frame of class `c` and its next use, leaving the heap as it was.
    fn top<P: Pins + ?Sized>(&mut self, c: usize, pins: &P) -> Option<(FrameId, u64)> {
        let mut found = None;
        while let Some((f, key)) = self.heaps[c].pop() {
            self.skipped.push((f, key));
            if !pins.is_pinned(f) {
                found = Some((f, key.0));
                break;
            }
        }
        for (f, key) in self.skipped.drain(..) {
            self.heaps[c].push(f, key);
        }
        found
    }
}

impl Replacer for MinCost {
    type Config = MinCostConfig;
    const NEEDS_FUTURE: bool = true;

    fn new(capacity: usize, config: &MinCostConfig) -> Self {
        MinCost {
            heaps: [IndexedHeap::new(capacity), IndexedHeap::new(capacity)],
            dirty: vec![false; capacity],
            read: config.read_us,
            write: config.write_us,
            skipped: Vec::with_capacity(capacity),
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        if access.kind.is_write() && !self.dirty[f] {
            self.heaps[CLEAN].remove(frame);
            self.dirty[f] = true;
            self.heaps[DIRTY].push(frame, Reverse(access.next_use));
        } else {
            self.heaps[usize::from(self.dirty[f])].change(frame, Reverse(access.next_use));
        }
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let write = access.kind.is_write();
        self.dirty[frame as usize] = write;
        self.heaps[usize::from(write)].push(frame, Reverse(access.next_use));
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
        let clean = self.top(CLEAN, pins);
        let dirty = self.top(DIRTY, pins);
        let (frame, class) = match (clean, dirty) {
            (None, None) => return Err(EvictError::AllPinned),
            (Some((c, _)), None) => (c, CLEAN),
            (None, Some((d, _))) => (d, DIRTY),
            (Some((c, nc)), _) if nc == NEVER => (c, CLEAN),
            (_, Some((d, nd))) if nd == NEVER => (d, DIRTY),
            (Some((c, nc)), Some((d, nd))) => {
                let now = incoming.time;
                let (gap_c, gap_d) = (nc.saturating_sub(now) as f64, nd.saturating_sub(now) as f64);
                if gap_d * self.read > gap_c * (self.read + self.write) { (d, DIRTY) } else { (c, CLEAN) }
            }
        };
        self.heaps[class].remove(frame);
        self.dirty[frame as usize] = false;
        out.victims.push(frame);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        let f = frame as usize;
        self.heaps[usize::from(self.dirty[f])].remove(frame);
        self.dirty[f] = false;
    }

    fn len(&self) -> usize {
        self.heaps[CLEAN].len() + self.heaps[DIRTY].len()
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.heaps[CLEAN].check()?;
        self.heaps[DIRTY].check()?;
        for (f, &d) in self.dirty.iter().enumerate() {
            let f = f as u32;
            if self.heaps[CLEAN].contains(f) && self.heaps[DIRTY].contains(f) {
                return Err(format!("min-cost: frame {f} in both classes"));
            }
            if d && self.heaps[CLEAN].contains(f) || !d && self.heaps[DIRTY].contains(f) {
                return Err(format!("min-cost: frame {f} in the wrong class (dirty = {d})"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replacer::AccessKind::{Read, Write};
    use crate::testing::check_contract;

    #[test]
    fn without_writes_it_is_belady() {
        // Reference string 7 0 1 2 0 3 0 4 2 3 0 3 2 with 3 frames: MIN makes 7 faults.
        let refs: Vec<(u64, _)> = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2].iter().map(|&p| (p, Read)).collect();
        let h = check_contract::<MinCost>(3, MinCostConfig::default(), &refs);
        assert_eq!(h.misses, 7);
    }

    #[test]
    fn keeps_a_dirty_page_over_a_clean_one_unless_it_is_much_farther() {
        // 2 frames. Page 1 is written, page 2 read; page 3 arrives. Next uses: 1 at t=6, 2 at
        // t=4: MIN would evict 1 (farther). MIN-COST prices 1 at r + w = 245 and 2 at r = 25:
        // (6 − 2) · 25 = 100 < (4 − 2) · 245 = 490, so the clean page 2 goes.
        let refs = [(1, Write), (2, Read), (3, Read), (9, Read), (2, Read), (9, Read), (1, Read)];
        let h = check_contract::<MinCost>(2, MinCostConfig::default(), &refs);
        assert_eq!(h.evicted[0].page, 2);
        // With a write as cheap as a read, 4 · 25 = 2 · 50: a tie goes to the clean page.
        let cheap = MinCostConfig { read_us: 25.0, write_us: 25.0 };
        let h = check_contract::<MinCost>(2, cheap, &refs);
        assert_eq!(h.evicted[0].page, 2);
        let free = MinCostConfig { read_us: 25.0, write_us: 0.0 };
        let h = check_contract::<MinCost>(2, free, &refs);
        assert_eq!(h.evicted[0].page, 1, "with free writes it is MIN");
    }

    #[test]
    fn pages_never_used_again_go_first_clean_before_dirty() {
        // 2 frames: page 1 written and never used again, page 2 read and never used again,
        // then 3: the clean page 2 goes; then 4: the dirty page 1 goes (3 is used again).
        let refs = [(1, Write), (2, Read), (3, Read), (4, Read), (3, Read)];
        let h = check_contract::<MinCost>(2, MinCostConfig::default(), &refs);
        let pages: Vec<u64> = h.evicted.iter().map(|e| e.page).collect();
        assert_eq!(pages[..2], [2, 1]);
    }
}
