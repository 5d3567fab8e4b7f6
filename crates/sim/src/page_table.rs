//! The simulator's page table: page number → frame.
//!
//! Page numbers keep their spatial meaning, so they can be sparse and huge (byte offsets of a
//! multi-terabyte volume, volume ids in the high bits). Most traces, though, use a dense range
//! starting near zero. The table therefore keeps a direct-mapped array for pages below
//! [`DENSE_LIMIT`] (grown geometrically up to the largest such page seen, or pre-sized from the
//! trace's page count) and a hash map for the rest: one array index per lookup in the common
//! case, one hash probe otherwise.

use std::hash::BuildHasherDefault;

use flashbuf_policy::{FrameId, NIL};
use hashbrown::HashMap;
use rustc_hash::FxHasher;

/// Pages below this number are direct-mapped (at most 256 MiB of table).
pub const DENSE_LIMIT: u64 = 1 << 26;

/// Maps buffered pages to frames.
#[derive(Clone, Debug)]
pub struct PageTable {
    dense: Vec<FrameId>,
    limit: u64,
    sparse: HashMap<u64, FrameId, BuildHasherDefault<FxHasher>>,
    len: usize,
}

impl PageTable {
    /// An empty table, direct-mapped up to `pages` (clamped to [`DENSE_LIMIT`]) from the start.
    pub fn with_pages(pages: u64) -> Self {
        Self::with_limit(pages, DENSE_LIMIT)
    }

    /// Like [`with_pages`](Self::with_pages) with another direct-mapping limit (tests).
    pub fn with_limit(pages: u64, limit: u64) -> Self {
        PageTable { dense: vec![NIL; pages.min(limit) as usize], limit, sparse: HashMap::default(), len: 0 }
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
            (f != NIL).then_some(f)
        } else if page < self.limit {
            None
        } else {
            self.sparse.get(&page).copied()
        }
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

    /// Records that `page` (not buffered) now lives in `frame`.
    #[inline]
    pub fn insert(&mut self, page: u64, frame: FrameId) {
        debug_assert!(self.get(page).is_none(), "page {page} already mapped");
        if page < self.limit {
            if page >= self.dense.len() as u64 {
                self.grow(page);
            }
            self.dense[page as usize] = frame;
        } else {
            self.sparse.insert(page, frame);
        }
        self.len += 1;
    }

    /// Forgets `page`; returns the frame it was in.
    #[inline]
    pub fn remove(&mut self, page: u64) -> Option<FrameId> {
        let f = if page < self.dense.len() as u64 {
            let f = std::mem::replace(&mut self.dense[page as usize], NIL);
            (f != NIL).then_some(f)
        } else if page < self.limit {
            None
        } else {
            self.sparse.remove(&page)
        };
        if f.is_some() {
            self.len -= 1;
        }
        f
    }

    #[cold]
    fn grow(&mut self, page: u64) {
        let want = (page + 1).max(2 * self.dense.len() as u64).clamp(1024.min(self.limit), self.limit);
        self.dense.resize(want as usize, NIL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap as StdMap;

    proptest! {
        #[test]
        fn behaves_like_a_map(ops in proptest::collection::vec((any::<bool>(), prop_oneof![0u64..3000, 4090u64..4100, any::<u64>()], 0u32..100), 1..400)) {
            let mut t = PageTable::with_limit(100, 4096);
            let mut m: StdMap<u64, u32> = StdMap::new();
            for (insert, page, frame) in ops {
                if insert {
                    if let std::collections::hash_map::Entry::Vacant(e) = m.entry(page) {
                        e.insert(frame);
                        t.insert(page, frame);
                    }
                } else {
                    prop_assert_eq!(t.remove(page), m.remove(&page));
                }
                prop_assert_eq!(t.len(), m.len());
                prop_assert_eq!(t.get(page), m.get(&page).copied());
            }
            for (&p, &f) in &m {
                prop_assert_eq!(t.get(p), Some(f));
            }
        }
    }
}
