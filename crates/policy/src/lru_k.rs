//! LRU-2 — LRU-K with K = 2: evict the page whose second-most-recent reference is oldest.
//!
//! Source: O'Neil, O'Neil, Weikum, *The LRU-K page replacement algorithm for database disk
//! buffering* (SIGMOD 1993), cited by the AD-LRU paper §2.2.
//!
//! The backward 2-distance of a page is the time since its penultimate reference; pages
//! referenced only once have an infinite distance and go first, in LRU order of their last
//! reference (the paper's subsidiary policy). History survives eviction for a bounded number of
//! pages (the paper's *retained information*), so a page that comes back soon is recognised.
//!
//! Choices: the correlated reference period is 0 (every reference counts, as in the ARC paper's
//! comparison); retained history is bounded to `history × capacity` pages, dropped oldest first.
//! Cost: O(log n) per access (an indexed heap over frames; keys are unique, as every key holds
//! the time of a different reference, so any correct heap evicts the same page), O(1) for the
//! retained history: a page directory (an array index for page numbers below 2^26, prefetched a
//! few requests ahead like the simulator's page table; a hash above) and an index-linked FIFO.

use crate::blocks::{BlockTable, DENSE_PAGES};
use crate::heap::IndexedHeap;
use crate::lists::FrameLists;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// Parameters of [`Lru2`].
#[derive(Clone, Debug, PartialEq)]
pub struct Lru2Config {
    /// Non-resident pages whose history is retained, as a multiple of the buffer size.
    pub history: f64,
}

impl Default for Lru2Config {
    fn default() -> Self {
        Lru2Config { history: 1.0 }
    }
}

impl PolicyParams for Lru2Config {
    const KEYS: &'static [ParamDoc] = &[ParamDoc {
        key: "history",
        help: "retained history of evicted pages, multiple of the buffer size, default 1",
    }];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "history" => self.history = parse_fraction(key, value, 0.0, 64.0)?,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        vec![fmt_float(self.history)]
    }
}

/// The LRU-2 policy.
pub struct Lru2 {
    /// Key (penultimate reference time + 1, last reference time + 1); 0 = none. Min is evicted.
    heap: IndexedHeap<(u64, u64)>,
    page: Vec<u64>,
    dirty: Vec<bool>,
    /// Retained history of evicted pages: page → slot.
    retained: BlockTable,
    /// Last reference + 1 of each retained page, by slot (its penultimate is not needed: it
    /// stops counting once the page comes back).
    retained_last: Vec<u64>,
    /// Retention order over slots (front = newest).
    order: FrameLists,
    retained_max: usize,
    skipped: Vec<(u32, (u64, u64))>,
}

const ORDER: u8 = 0;

impl Replacer for Lru2 {
    type Config = Lru2Config;

    fn new(capacity: usize, config: &Lru2Config) -> Self {
        let retained_max = (config.history * capacity as f64).round() as usize;
        Lru2 {
            heap: IndexedHeap::new(capacity),
            page: vec![0; capacity],
            dirty: vec![false; capacity],
            retained: BlockTable::with_dense_limit(retained_max.max(1), DENSE_PAGES),
            retained_last: vec![0; retained_max.max(1)],
            order: FrameLists::new(retained_max.max(1), 1),
            retained_max,
            skipped: Vec::with_capacity(capacity),
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let (_, last) = self.heap.key(frame);
        self.heap.change(frame, (last, access.time + 1));
        self.dirty[frame as usize] |= access.kind.is_write();
    }

    #[inline(always)]
    fn prefetch(&self, page: u64) {
        self.retained.prefetch(page);
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let penult = match self.retained.get(access.page) {
            Some(s) => {
                self.order.remove(s);
                self.retained.release(s);
                self.retained_last[s as usize]
            }
            None => 0,
        };
        self.heap.push(frame, (penult, access.time + 1));
        self.page[frame as usize] = access.page;
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
                victim = Some((f, key));
                break;
            }
        }
        for (f, key) in self.skipped.drain(..) {
            self.heap.push(f, key);
        }
        let (f, (_, last)) = victim.ok_or(EvictError::AllPinned)?;
        if self.retained_max > 0 {
            if self.order.len(ORDER) == self.retained_max {
                let s = self.order.pop_back(ORDER).expect("retained_max > 0 histories");
                self.retained.release(s);
            }
            let (s, created) = self.retained.get_or_insert(self.page[f as usize]);
            debug_assert!(created, "a resident page has no retained history");
            self.retained_last[s as usize] = last;
            self.order.push_front(ORDER, s);
        }
        out.victims.push(f);
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
        self.heap.check()?;
        self.order.check()?;
        self.retained.check()?;
        let retained = self.retained.live().count();
        if retained > self.retained_max || retained != self.order.len(ORDER) {
            return Err(format!(
                "lru-2: {retained} retained histories in the directory, {} in order, bound {}",
                self.order.len(ORDER),
                self.retained_max
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
    fn once_referenced_pages_go_first_then_oldest_penultimate() {
        let mut h = Harness::<Lru2>::new(3, Lru2Config { history: 0.0 });
        // 1 twice, 2 twice, 3 once: 3 has infinite backward distance and goes first.
        for p in [1, 1, 2, 2, 3, 4] {
            h.read(p);
        }
        assert_eq!(h.evicted_pages(), vec![3]);
        // Now 1 (refs at t0,t1), 2 (t2,t3), 4 (t5, once): 4 goes next even though 1 is older.
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![3, 4]);
        // 1 and 2 have penultimate refs t0 and t2; 5 once. Hit 5 -> (t6, t7). Miss 6: page 1.
        h.read(5);
        h.read(6);
        assert_eq!(h.evicted_pages(), vec![3, 4, 1]);
    }

    #[test]
    fn retained_history_protects_a_returning_page() {
        let mut h = Harness::<Lru2>::new(2, Lru2Config { history: 1.0 });
        // Page 1 is read at t0, evicted, read again at t3: with its history it counts as
        // referenced twice and outlives the once-referenced 9.
        for p in [1, 2, 3, 1, 9, 4] {
            h.read(p);
        }
        assert!(h.resident().contains(&1), "resident: {:?}", h.resident());
    }
}
