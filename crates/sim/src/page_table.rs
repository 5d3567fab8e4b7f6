//! The simulator's page table: page number ↔ frame.
//!
//! Page numbers keep their spatial meaning, so they can be sparse and huge (byte offsets of a
//! multi-terabyte volume, volume ids in the high bits). Most traces, though, use a dense range
//! starting near zero. The table therefore keeps a direct-mapped array for pages below
//! [`DENSE_LIMIT`] (grown geometrically up to the largest such page seen, or pre-sized from the
//! trace's page count) and a hash map for the rest: one array index per lookup in the common
//! case, one hash probe otherwise.
//!
//! It also keeps the reverse map, frame → page, and uses it to make evictions cheap: removing a
//! direct-mapped page only marks its frame empty; the page's slot keeps the old frame number and
//! a lookup accepts a slot only if that frame still holds the page. An eviction thus writes the
//! frame's entry (a cache line it has just read) instead of the page's slot (a random line of a
//! table that may be hundreds of megabytes); a lookup checks one more, much smaller array.

use std::hash::BuildHasherDefault;

use flashbuf_flash::nand::huge_vec;
use flashbuf_policy::{FrameId, NIL};
use hashbrown::HashMap;
use rustc_hash::FxHasher;

/// Pages below this number are direct-mapped (at most 256 MiB of table).
pub const DENSE_LIMIT: u64 = 1 << 26;

/// The page of an empty frame (no real page number: page numbers are below 2^64 − 1).
const EMPTY: u64 = u64::MAX;

/// Maps buffered pages to frames and frames to pages.
#[derive(Clone, Debug)]
pub struct PageTable {
    /// Page → frame, for pages below `limit`; a slot is valid only if `frame_page` agrees.
    dense: Vec<FrameId>,
    limit: u64,
    sparse: HashMap<u64, FrameId, BuildHasherDefault<FxHasher>>,
    frame_page: Vec<u64>,
    len: usize,
}

impl PageTable {
    /// An empty table for `frames` frames, direct-mapped up to `pages` (clamped to
    /// [`DENSE_LIMIT`]) from the start. Without a hint (`pages` = 0) the direct-mapped part
    /// grows with the pages it meets up to 16 slots per frame, and pages beyond are hashed: the
    /// table's memory follows the buffer and what is touched, not the page range.
    pub fn new(frames: usize, pages: u64) -> Self {
        let limit = pages.max(16 * frames as u64).min(DENSE_LIMIT);
        Self::with_limit(frames, pages, limit)
    }

    /// An empty table for `frames` frames over page numbers known to be dense (a trace renumbered
    /// into a compact address space, first touch first): every page below [`DENSE_LIMIT`] is
    /// direct-mapped, the array growing with the largest page met. Its memory then follows the
    /// pages touched (4 bytes each), which is what a compact space holds.
    pub fn dense(frames: usize) -> Self {
        Self::with_limit(frames, 0, DENSE_LIMIT)
    }

    /// Like [`new`](Self::new) with another direct-mapping limit (tests).
    pub fn with_limit(frames: usize, pages: u64, limit: u64) -> Self {
        PageTable {
            dense: huge_vec(pages.min(limit) as usize, NIL),
            limit,
            sparse: HashMap::default(),
            frame_page: vec![EMPTY; frames],
            len: 0,
        }
    }

    /// Number of buffered pages.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when no page is buffered.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The frame holding `page`.
    #[inline]
    pub fn get(&self, page: u64) -> Option<FrameId> {
        if page < self.dense.len() as u64 {
            let f = self.dense[page as usize];
            (f != NIL && self.frame_page[f as usize] == page).then_some(f)
        } else if page < self.limit {
            None
        } else {
            self.sparse.get(&page).copied()
        }
    }

    /// The page in `frame`, if any.
    #[inline]
    pub fn page_of(&self, frame: FrameId) -> Option<u64> {
        let p = self.frame_page[frame as usize];
        (p != EMPTY).then_some(p)
    }

    /// Hints the CPU to bring `page`'s slot into cache (the simulator calls this a few requests
    /// ahead; it changes nothing and costs nothing when the page is in the hash part).
    #[inline(always)]
    pub fn prefetch(&self, page: u64) {
        #[cfg(target_arch = "x86_64")]
        if page < self.dense.len() as u64 {
            // SAFETY: the pointer is in bounds of `dense`; a prefetch never faults or writes.
            unsafe {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                _mm_prefetch::<_MM_HINT_T0>(self.dense.as_ptr().add(page as usize) as *const i8);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = page;
    }

    /// The frame `page`'s direct-mapped slot names, without checking that the frame still
    /// holds the page (it may be stale or `NIL`), after bringing the frame's reverse-map entry
    /// into cache: for prefetching, a few requests ahead, what serving `page` will touch.
    #[inline(always)]
    pub fn prefetch_frame_of(&self, page: u64) -> FrameId {
        if page < self.dense.len() as u64 {
            let f = self.dense[page as usize];
            flashbuf_flash::nand::prefetch(&self.frame_page, f as usize);
            f
        } else {
            NIL
        }
    }

    /// Hints the CPU to bring `frame`'s reverse-map entry into cache (changes nothing).
    #[inline(always)]
    pub fn prefetch_page_of(&self, frame: FrameId) {
        flashbuf_flash::nand::prefetch(&self.frame_page, frame as usize);
    }

    /// Records that `page` (not buffered) now lives in the empty `frame`. Inlined into the
    /// miss path: a block policy misses on most requests.
    #[inline(always)]
    pub fn insert(&mut self, page: u64, frame: FrameId) {
        debug_assert!(self.get(page).is_none(), "page {page} already mapped");
        debug_assert_eq!(self.frame_page[frame as usize], EMPTY, "frame {frame} is not empty");
        debug_assert_ne!(page, EMPTY, "page number 2^64 - 1 is reserved");
        if page < self.limit {
            if page >= self.dense.len() as u64 {
                self.grow(page);
            }
            self.dense[page as usize] = frame;
        } else {
            self.sparse.insert(page, frame);
        }
        self.frame_page[frame as usize] = page;
        self.len += 1;
    }

    /// Empties `frame`; returns the page it held.
    #[inline(always)]
    pub fn remove_frame(&mut self, frame: FrameId) -> Option<u64> {
        let page = std::mem::replace(&mut self.frame_page[frame as usize], EMPTY);
        if page == EMPTY {
            return None;
        }
        if page >= self.limit {
            self.sparse.remove(&page);
        }
        // A direct-mapped slot stays: `get` rejects it now that the frame is empty.
        self.len -= 1;
        Some(page)
    }

    #[cold]
    fn grow(&mut self, page: u64) {
        let want = (page + 1).max(2 * self.dense.len() as u64).clamp(1024.min(self.limit), self.limit);
        let mut dense = huge_vec(want as usize, NIL);
        dense[..self.dense.len()].copy_from_slice(&self.dense);
        self.dense = dense;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap as StdMap;

    proptest! {
        /// A bijection between buffered pages and occupied frames, like a pair of maps, with
        /// frames reused right after they are emptied (the stale-slot case).
        #[test]
        fn behaves_like_a_pair_of_maps(ops in proptest::collection::vec((any::<bool>(), prop_oneof![0u64..3000, 4090u64..4100, any::<u64>().prop_map(|p| p.min(u64::MAX - 1))], 0u32..16), 1..400)) {
            let mut t = PageTable::with_limit(16, 100, 4096);
            let mut by_page: StdMap<u64, u32> = StdMap::new();
            let mut by_frame: StdMap<u32, u64> = StdMap::new();
            for (insert, page, frame) in ops {
                if insert {
                    if !by_page.contains_key(&page) && !by_frame.contains_key(&frame) {
                        t.insert(page, frame);
                        by_page.insert(page, frame);
                        by_frame.insert(frame, page);
                    }
                } else {
                    let got = t.remove_frame(frame);
                    let want = by_frame.remove(&frame);
                    prop_assert_eq!(got, want);
                    if let Some(p) = want { by_page.remove(&p); }
                }
                prop_assert_eq!(t.len(), by_page.len());
                prop_assert_eq!(t.get(page), by_page.get(&page).copied());
                prop_assert_eq!(t.page_of(frame), by_frame.get(&frame).copied());
            }
            for (&p, &f) in &by_page {
                prop_assert_eq!(t.get(p), Some(f));
            }
        }
    }
}
