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
//! `W = ⌊w·B + ½⌋`, the same rounding; the working region and the window in separate lists),
//! with the window's frames in lists by class, each in LRU order (frames enter the window only
//! at its MRU end): the clean frames; one list per write count `c = 1..=61`; and the frames with
//! more writes, which are also kept in an [`IndexedHeap`] keyed by `(write count, window entry
//! number)` — the entry number, counted up as frames enter the window, orders the window's
//! frames exactly as the LRU list does. A 64-bit mask marks the non-empty count lists. Finding
//! the victim is O(1) (the lowest set bit of the mask, then that list's LRU end); a frame entering
//! or leaving the window costs O(1), or O(log B) for a heavily written one. A page is dirty
//! exactly when its write count is not 0. The differential tests in `tests/adlru_family.rs` check
//! the decisions against an O(n) scan of the window.
//!
//! Choices where the papers are silent:
//! * Write reference count = number of write accesses to the page since it entered the buffer
//!   (the write that brought it in counts; a page brought in by a read starts at 0). It is
//!   forgotten when the page leaves the buffer, and saturates at `u32::MAX`.
//! * Ties on the count go to the least recently used of the tied pages.
//! * The candidates for the lowest count are the dirty pages *inside the window*, as the window
//!   is where CFLRU/C looks. With pinned frames: the LRU-most unpinned clean page inside the
//!   window, else the unpinned dirty page inside the window with the lowest count, else (every
//!   page of the window is pinned) the LRU-most unpinned page of the whole list.

use crate::cflru::{LruWindow, WORK, WindowSide, lru_unpinned_of, window_pages};
use crate::heap::IndexedHeap;
use crate::lists::FrameLists;
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// Parameters of [`CflruC`]: the same clean-first window as CFLRU's
/// ([`CflruConfig`](crate::cflru::CflruConfig)).
pub type CflruCConfig = crate::cflru::CflruConfig;

/// Heap key of a heavily written frame inside the window: (write count, window entry number).
type Key = (u32, u64);

/// Lists: [`WORK`] (the working region), the window's clean frames, its dirty frames with write
/// count `c` in list `c + 1` for `c = 1..=LAST_COUNT`, and the rest in [`HEAVY`].
const LISTS: u8 = 64;
const CLEAN: u8 = 1;
const LAST_COUNT: u32 = 61;
const HEAVY: u8 = 63;
/// Mask bits of the count lists `2..=62`.
const COUNT_LISTS: u64 = ((1u64 << (LAST_COUNT + 2)) - 1) & !0b11;

/// Per-frame state and the window-side structures.
#[derive(Clone, Debug)]
struct Side {
    /// Bit `l` set iff count list `l` is non-empty.
    nonempty: u64,
    /// The frames of list [`HEAVY`], by (count, entry number).
    heavy: IndexedHeap<Key>,
    /// Frames that have entered the window so far (the heavy frames' tie-break).
    entries: u64,
    /// Write accesses since the page entered the buffer; the page is dirty iff this is not 0.
    writes: Vec<u32>,
}

impl WindowSide for Side {
    #[inline]
    fn list_for(&mut self, frame: FrameId) -> u8 {
        let c = self.writes[frame as usize];
        self.entries += 1;
        if c == 0 {
            CLEAN
        } else if c <= LAST_COUNT {
            let list = c as u8 + 1;
            self.nonempty |= 1 << list;
            list
        } else {
            self.heavy.push(frame, (c, self.entries));
            HEAVY
        }
    }

    #[inline]
    fn left(&mut self, frame: FrameId, list: u8, lists: &FrameLists) {
        if list == HEAVY {
            self.heavy.remove(frame);
        } else if list != CLEAN && lists.is_empty(list) {
            self.nonempty &= !(1 << list);
        }
    }
}

/// The CFLRU/C policy.
#[derive(Clone, Debug)]
pub struct CflruC {
    window: LruWindow,
    side: Side,
    /// Pinned heavy entries popped while looking for a victim, pushed back afterwards.
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

    /// The unpinned dirty frame inside the window with the lowest count, LRU-most among equals.
    fn lowest_dirty<P: Pins + ?Sized>(&mut self, pins: &P) -> Option<FrameId> {
        let mut mask = self.side.nonempty;
        while mask != 0 {
            let list = mask.trailing_zeros() as u8;
            if let Some(f) = lru_unpinned_of(&self.window.lists, list, pins) {
                return Some(f);
            }
            mask &= mask - 1;
        }
        let mut found = None;
        while let Some((f, key)) = self.side.heavy.peek() {
            if !pins.is_pinned(f) {
                found = Some(f);
                break;
            }
            self.side.heavy.pop();
            self.scratch.push((f, key));
        }
        while let Some((f, key)) = self.scratch.pop() {
            self.side.heavy.push(f, key);
        }
        found
    }
}

impl Replacer for CflruC {
    type Config = CflruCConfig;

    fn new(capacity: usize, config: &CflruCConfig) -> Self {
        CflruC {
            window: LruWindow::new(capacity, LISTS, window_pages(config.w, capacity)),
            side: Side { nonempty: 0, heavy: IndexedHeap::new(capacity), entries: 0, writes: vec![0; capacity] },
            scratch: Vec::with_capacity(capacity),
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        self.side.writes[f] = self.side.writes[f].saturating_add(access.kind.is_write() as u32);
        self.window.touch(frame, &mut self.side);
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        self.window.lists.prefetch(frame);
        crate::blocks::prefetch(&self.side.writes, frame as usize);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.side.writes[frame as usize] = access.kind.is_write() as u32;
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
        // Clean first; then the lowest write count; then (every page of the window pinned) the
        // LRU-most unpinned page of the working region.
        let victim = match lru_unpinned_of(&self.window.lists, CLEAN, pins) {
            Some(f) => f,
            None => match self.lowest_dirty(pins) {
                Some(f) => f,
                None => lru_unpinned_of(&self.window.lists, WORK, pins).ok_or(EvictError::AllPinned)?,
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
        Some(self.side.writes[frame as usize] != 0)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.window.check()?;
        let (lists, side) = (&self.window.lists, &self.side);
        side.heavy.check()?;
        for list in 0..LISTS {
            let want = match list {
                WORK => continue,
                CLEAN => |c: u32| c == 0,
                HEAVY => |c: u32| c > LAST_COUNT,
                _ => {
                    if (side.nonempty >> list & 1 == 1) == lists.is_empty(list) {
                        return Err(format!("cflru-c: mask bit {list} disagrees with list length {}", lists.len(list)));
                    }
                    let count = list as u32 - 1;
                    if let Some(f) = lists.iter_from_front(list).find(|&f| side.writes[f as usize] != count) {
                        return Err(format!(
                            "cflru-c: frame {f} with {} writes in list {list}",
                            side.writes[f as usize]
                        ));
                    }
                    continue;
                }
            };
            if let Some(f) = lists.iter_from_front(list).find(|&f| !want(side.writes[f as usize])) {
                return Err(format!("cflru-c: frame {f} with {} writes in list {list}", side.writes[f as usize]));
            }
        }
        if side.nonempty & !COUNT_LISTS != 0 {
            return Err(format!("cflru-c: mask {:#x} has bits outside the count lists", side.nonempty));
        }
        if side.heavy.len() != lists.len(HEAVY) {
            return Err(format!("cflru-c: heap holds {}, heavy list {}", side.heavy.len(), lists.len(HEAVY)));
        }
        let mut last_entry = 0;
        for f in lists.iter_from_back(HEAVY) {
            if !side.heavy.contains(f) {
                return Err(format!("cflru-c: heavy frame {f} is not in the heap"));
            }
            let (count, entry) = side.heavy.key(f);
            if count != side.writes[f as usize] || entry <= last_entry {
                return Err(format!("cflru-c: heavy frame {f} has heap key {:?}", side.heavy.key(f)));
            }
            last_entry = entry;
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
    fn counts_of_64_and_more_are_ordered_too() {
        // Capacity 4, window = everything. Page 1: 100 writes, 2: 70, 3: 64, 4: 63 (a bucket).
        let mut h = cflru_c(4, 1.0);
        for (p, n) in [(1, 100), (2, 70), (3, 64), (4, 63)] {
            for _ in 0..n {
                h.write(p);
            }
        }
        h.write(5); // evicts 4 (63 writes, the only bucketed one)
        assert_eq!(h.evicted_pages(), vec![4]);
        for _ in 0..70 {
            h.write(5); // 71 writes: heavy
        }
        h.write(6); // heavy: 1 (100), 2 (70), 3 (64), 5 (71) -> 3
        assert_eq!(h.evicted_pages(), vec![4, 3]);
        for _ in 0..69 {
            h.write(6); // 70 writes, ties with page 2, which is less recently used
        }
        h.write(7);
        assert_eq!(h.evicted_pages(), vec![4, 3, 2]);
        h.pin(h.frame_of(6).unwrap());
        for _ in 0..99 {
            h.write(7); // 100 writes: ties with page 1, which is less recently used
        }
        h.read(8); // 6 (70) is pinned; page 5 (71) is next lowest
        assert_eq!(h.evicted_pages(), vec![4, 3, 2, 5]);
        h.read(9); // clean 8 goes first
        assert_eq!(h.evicted_pages(), vec![4, 3, 2, 5, 8]);
        h.write(10); // clean 9 first
        h.write(11); // dirty: 1 (100), 7 (100), 10 (1) -> 10
        assert_eq!(h.evicted_pages(), vec![4, 3, 2, 5, 8, 9, 10]);
        h.unpin(h.frame_of(6).unwrap());
        h.write(11); // 2 writes: bucketed, below every heavy page
        for _ in 0..100 {
            h.write(11); // 102 writes: heavy; now 6 (70) is the lowest
        }
        h.write(12);
        assert_eq!(h.evicted_pages(), vec![4, 3, 2, 5, 8, 9, 10, 6]);
        h.policy.check_invariants().unwrap();
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
