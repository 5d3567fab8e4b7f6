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
//! Cost: O(log n) per access (an indexed heap over frames), O(1) expected for the history map.

use std::collections::{HashMap, VecDeque};

use crate::heap::IndexedHeap;
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
    /// Retained history of evicted pages: page -> (penultimate, last, stamp).
    retained: HashMap<u64, (u64, u64, u64)>,
    order: VecDeque<(u64, u64)>,
    retained_max: usize,
    stamp: u64,
    skipped: Vec<(u32, (u64, u64))>,
}

impl Replacer for Lru2 {
    type Config = Lru2Config;

    fn new(capacity: usize, config: &Lru2Config) -> Self {
        let retained_max = (config.history * capacity as f64).round() as usize;
        Lru2 {
            heap: IndexedHeap::new(capacity),
            page: vec![0; capacity],
            dirty: vec![false; capacity],
            retained: HashMap::with_capacity(retained_max + 1),
            order: VecDeque::with_capacity(retained_max + 1),
            retained_max,
            stamp: 0,
            skipped: Vec::with_capacity(capacity),
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let (_, last) = self.heap.key(frame);
        self.heap.change(frame, (last, access.time + 1));
        self.dirty[frame as usize] |= access.kind.is_write();
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let penult = match self.retained.remove(&access.page) {
            Some((_, last, _)) => last,
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
        let (f, (penult, last)) = victim.ok_or(EvictError::AllPinned)?;
        if self.retained_max > 0 {
            let page = self.page[f as usize];
            self.stamp += 1;
            self.retained.insert(page, (penult, last, self.stamp));
            self.order.push_back((page, self.stamp));
            while self.retained.len() > self.retained_max {
                let (old, stamp) = self.order.pop_front().expect("order covers retained");
                if self.retained.get(&old).is_some_and(|e| e.2 == stamp) {
                    self.retained.remove(&old);
                }
            }
            // Entries of pages that came back are stale in `order`; drop them eagerly when the
            // queue grows past twice the bound so it never reallocates.
            if self.order.len() > 2 * self.retained_max {
                let retained = &self.retained;
                self.order.retain(|(p, s)| retained.get(p).is_some_and(|e| e.2 == *s));
            }
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
        if self.retained.len() > self.retained_max {
            return Err(format!("lru-2: {} retained histories, bound {}", self.retained.len(), self.retained_max));
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
