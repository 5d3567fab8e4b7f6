//! CFLRU/C — CFLRU that, when its window holds no clean page, evicts the dirty page with the
//! lowest write reference count instead of the LRU page.
//!
//! Source: Yoo, Lee, Ryu, Bahn, *Page replacement algorithms for NAND flash memory storages*
//! (ICCSA 2007), as summarised in the AD-LRU paper §2.3: "the buffer list structure is the same
//! as that of CFLRU, the least-recently-used clean page is selected as the victim within the
//! pre-specified window of the LRU list. If there is no clean page within the window, CFLRU/C
//! evicts the dirty page with the lowest write reference count." (The ICCSA abstract words it as
//! "the lowest access frequency"; flashbuf follows the AD-LRU paper, whose comparison it
//! reproduces.)
//!
//! Implementation: the CFLRU window machinery of [`crate::cflru`] (window size
//! `W = ⌊w·B + ½⌋`, the same rounding), plus an [`IndexedHeap`] over the dirty frames inside
//! the window keyed by `(write count, recency stamp)`, kept in step as frames enter and leave the
//! window: O(log B) per window change, O(1) to find the victim.
//!
//! Choices where the papers are silent:
//! * Write reference count = number of write accesses to the page since it entered the buffer
//!   (the write that brought it in counts; a page brought in by a read starts at 0). It is
//!   forgotten when the page leaves the buffer.
//! * Ties on the count go to the least recently used of the tied pages (the stamp is a counter
//!   bumped on every hit and insertion, so a smaller stamp is further towards the LRU end).
//! * The candidates for the lowest count are the dirty pages *inside the window*, as the window
//!   is where CFLRU/C looks. With pinned frames: the LRU-most unpinned clean page inside the
//!   window, else the unpinned dirty page inside the window with the lowest count, else (every
//!   page of the window is pinned) the LRU-most unpinned page of the whole list.

use crate::cflru::{CleanInWindow, LruWindow, WindowSide, window_pages};
use crate::heap::IndexedHeap;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// Parameters of [`CflruC`].
#[derive(Clone, Debug, PartialEq)]
pub struct CflruCConfig {
    /// Clean-first window as a fraction of the buffer, `0..=1` (AD-LRU paper's setting: 0.5).
    pub w: f64,
}

impl Default for CflruCConfig {
    fn default() -> Self {
        CflruCConfig { w: 0.5 }
    }
}

impl PolicyParams for CflruCConfig {
    const KEYS: &'static [ParamDoc] =
        &[ParamDoc { key: "w", help: "clean-first window, fraction of the buffer 0..1, default 0.5" }];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "w" => self.w = parse_fraction(key, value, 0.0, 1.0)?,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        vec![fmt_float(self.w)]
    }
}

/// Heap key of a dirty frame inside the window: (write count, recency stamp).
type Key = (u32, u64);

/// Per-frame state and the two window-side structures.
#[derive(Clone, Debug)]
struct Side {
    clean: CleanInWindow,
    dirty_heap: IndexedHeap<Key>,
    writes: Vec<u32>,
    stamp: Vec<u64>,
}

impl WindowSide for Side {
    #[inline]
    fn enter(&mut self, frame: FrameId) {
        let f = frame as usize;
        if self.clean.dirty[f] {
            self.dirty_heap.push(frame, (self.writes[f], self.stamp[f]));
        } else {
            self.clean.enter(frame);
        }
    }

    #[inline]
    fn leave(&mut self, frame: FrameId) {
        self.clean.leave(frame);
        self.dirty_heap.remove(frame);
    }
}

/// The CFLRU/C policy.
#[derive(Clone, Debug)]
pub struct CflruC {
    window: LruWindow,
    side: Side,
    next_stamp: u64,
    /// Pinned heap entries popped while looking for a victim, pushed back afterwards.
    scratch: Vec<(FrameId, Key)>,
}

impl CflruC {
    /// The clean-first window in pages (`⌊w·B + ½⌋`).
    pub fn window_pages(&self) -> usize {
        self.window.pages()
    }

    /// The write reference count of the page in `frame` (meaningful while it is buffered).
    pub fn write_count(&self, frame: FrameId) -> u32 {
        self.side.writes[frame as usize]
    }

    /// The unpinned dirty frame inside the window with the lowest (count, stamp).
    fn lowest_dirty<P: Pins + ?Sized>(&mut self, pins: &P) -> Option<FrameId> {
        let mut found = None;
        while let Some((f, key)) = self.side.dirty_heap.peek() {
            if !pins.is_pinned(f) {
                found = Some(f);
                break;
            }
            self.side.dirty_heap.pop();
            self.scratch.push((f, key));
        }
        while let Some((f, key)) = self.scratch.pop() {
            self.side.dirty_heap.push(f, key);
        }
        found
    }
}

impl Replacer for CflruC {
    type Config = CflruCConfig;

    fn new(capacity: usize, config: &CflruCConfig) -> Self {
        CflruC {
            window: LruWindow::new(capacity, window_pages(config.w, capacity)),
            side: Side {
                clean: CleanInWindow::new(capacity),
                dirty_heap: IndexedHeap::new(capacity),
                writes: vec![0; capacity],
                stamp: vec![0; capacity],
            },
            next_stamp: 0,
            scratch: Vec::with_capacity(capacity),
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        let write = access.kind.is_write();
        self.side.clean.dirty[f] |= write;
        self.side.writes[f] = self.side.writes[f].saturating_add(write as u32);
        self.side.stamp[f] = self.next_stamp;
        self.next_stamp += 1;
        self.window.touch(frame, &mut self.side);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        let write = access.kind.is_write();
        self.side.clean.dirty[f] = write;
        self.side.writes[f] = write as u32;
        self.side.stamp[f] = self.next_stamp;
        self.next_stamp += 1;
        self.window.push_front(frame, &mut self.side);
    }

    #[inline]
    fn victims<P: Pins + ?Sized>(
        &mut self,
        _incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.window.len() == 0 {
            return Err(EvictError::Empty);
        }
        let victim = match self.side.clean.lru_unpinned(pins) {
            Some(f) => f,
            None => match self.lowest_dirty(pins) {
                Some(f) => f,
                None => self.window.lru_unpinned(pins).ok_or(EvictError::AllPinned)?,
            },
        };
        self.window.remove(victim, &mut self.side);
        out.victims.push(victim);
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        self.window.remove(frame, &mut self.side);
    }

    fn len(&self) -> usize {
        self.window.len()
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.side.clean.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.window.check()?;
        self.side.clean.check(&self.window)?;
        self.side.dirty_heap.check()?;
        let mut dirty_in_window = 0;
        for f in self.window.window_from_back() {
            let i = f as usize;
            if !self.side.clean.dirty[i] {
                continue;
            }
            dirty_in_window += 1;
            if !self.side.dirty_heap.contains(f) {
                return Err(format!("cflru-c: dirty frame {f} inside the window is not in the heap"));
            }
            let want = (self.side.writes[i], self.side.stamp[i]);
            if self.side.dirty_heap.key(f) != want {
                return Err(format!(
                    "cflru-c: frame {f} has heap key {:?}, want {want:?}",
                    self.side.dirty_heap.key(f)
                ));
            }
            if self.side.writes[i] == 0 {
                return Err(format!("cflru-c: dirty frame {f} has write count 0"));
            }
        }
        if dirty_in_window != self.side.dirty_heap.len() {
            return Err(format!(
                "cflru-c: heap holds {} frames, {dirty_in_window} dirty frames in the window",
                self.side.dirty_heap.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    fn cflru_c(capacity: usize, w: f64) -> Harness<CflruC> {
        Harness::new(capacity, CflruCConfig { w })
    }

    #[test]
    fn all_dirty_window_evicts_lowest_write_count() {
        // Capacity 6, w = 0.5: window = 3 LRU-end pages. Pages 1..3 get 3, 1, 2 writes; then
        // 4..6 are written once and pushed the others into the window (LRU order 1 2 3 4 5 6).
        let mut h = cflru_c(6, 0.5);
        for p in [1, 1, 1, 2, 3, 3] {
            h.write(p);
        }
        for p in [4, 5, 6] {
            h.write(p);
        }
        assert_eq!(h.policy.write_count(h.frame_of(1).unwrap()), 3);
        assert_eq!(h.policy.write_count(h.frame_of(2).unwrap()), 1);
        // Window {1, 2, 3} holds no clean page: page 2 has the fewest writes (CFLRU would take 1).
        h.read(7);
        assert_eq!(h.evicted_pages(), vec![2]);
        // Window is now {1, 3, 4}: counts 3, 2, 1 -> page 4.
        h.read(8);
        assert_eq!(h.evicted_pages(), vec![2, 4]);
    }

    #[test]
    fn ties_go_to_the_least_recently_used() {
        let mut h = cflru_c(4, 0.5);
        for p in [1, 2, 3, 4] {
            h.write(p);
        }
        // Window {1, 2}: both have one write: the LRU-most (1) goes, as in CFLRU.
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![1]);
    }

    #[test]
    fn clean_page_in_window_still_comes_first() {
        let mut h = cflru_c(4, 0.5);
        h.write(1);
        h.write(1);
        h.read(2);
        h.write(3);
        h.write(4);
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![2]);
    }

    #[test]
    fn reads_do_not_count_and_the_count_restarts_on_reentry() {
        let mut h = cflru_c(1, 1.0);
        h.write(1);
        h.read(1);
        h.read(1);
        assert_eq!(h.policy.write_count(h.frame_of(1).unwrap()), 1);
        h.write(1);
        assert_eq!(h.policy.write_count(h.frame_of(1).unwrap()), 2);
        h.read(2); // evicts page 1
        assert_eq!(h.evicted_pages(), vec![1]);
        h.read(1);
        assert_eq!(h.policy.write_count(h.frame_of(1).unwrap()), 0);
        h.write(1);
        assert_eq!(h.policy.write_count(h.frame_of(1).unwrap()), 1);
    }

    #[test]
    fn pinned_lowest_count_page_is_skipped() {
        let mut h = cflru_c(4, 1.0);
        h.write(1);
        h.write(1);
        h.write(2);
        h.write(3);
        h.write(3);
        h.write(4);
        h.write(4);
        h.pin(h.frame_of(2).unwrap());
        h.read(5);
        // Page 2 (1 write) is pinned: the lowest unpinned counts are 1, 3, 4 with 2 writes each:
        // the LRU-most of them, page 1.
        assert_eq!(h.evicted_pages(), vec![1]);
        h.policy.check_invariants().unwrap();
    }
}
