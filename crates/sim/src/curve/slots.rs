//! Per-page state of the stack-distance pass: direct-mapped for dense page numbers, hashed for
//! the rest, so that memory follows the pages touched.

use rustc_hash::FxHashMap;

use super::stack::NO_POS;

/// `PageState::m` of a page not written since it entered the sample (no write-back to come).
pub const CLEAN: u32 = u32::MAX;

/// What the pass keeps per page: its mark on the stack and, for a page written since it entered
/// the sample, the largest stack distance (in bins) among its accesses since its last write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageState {
    /// Position of its mark ([`NO_POS`]: not on the stack).
    pub pos: u32,
    /// `M` of the write-back rule (`docs/curves.md`), or [`CLEAN`].
    pub m: u32,
}

const UNSEEN: PageState = PageState { pos: NO_POS, m: CLEAN };

/// Bit that marks an owner code as a hashed page.
const HASHED: u32 = 1 << 31;

/// Page number → [`PageState`], and back through owner codes.
#[derive(Clone, Debug, Default)]
pub struct Slots {
    /// State of page `p`, for pages below `dense_limit`.
    dense: Vec<PageState>,
    dense_limit: u64,
    ids: FxHashMap<u64, u32>,
    hashed: Vec<PageState>,
    hashed_pages: Vec<u64>,
    free: Vec<u32>,
}

impl Slots {
    /// Pages below `dense_limit` (at most 2^31) are direct-mapped (the table grows to the largest
    /// such page seen); the others are hashed.
    pub fn new(dense_limit: u64) -> Self {
        Slots { dense_limit: dense_limit.min(u64::from(HASHED)), ..Default::default() }
    }

    /// The owner code of `page` (assigning one on first sight) — a page's identity on the stack.
    #[inline]
    pub fn code(&mut self, page: u64) -> u32 {
        if page < self.dense_limit {
            if page >= self.dense.len() as u64 {
                self.grow(page);
            }
            page as u32
        } else {
            self.hashed_code(page)
        }
    }

    /// Hints the CPU to load `page`'s state (a direct-mapped page; nothing otherwise).
    #[inline(always)]
    pub fn prefetch(&self, page: u64) {
        if page < self.dense.len() as u64 {
            super::lru::prefetch(self.dense.as_ptr().wrapping_add(page as usize));
        }
    }

    /// Hints the CPU to load the state of the page with owner code `code`.
    #[inline(always)]
    pub fn prefetch_code(&self, code: u32) {
        let p = if code & HASHED == 0 {
            self.dense.as_ptr().wrapping_add(code as usize)
        } else {
            self.hashed.as_ptr().wrapping_add((code & !HASHED) as usize)
        };
        super::lru::prefetch(p);
    }

    #[cold]
    fn grow(&mut self, page: u64) {
        let want = (page + 1).max(2 * self.dense.len() as u64).max(1024).min(self.dense_limit);
        self.dense.resize(want as usize, UNSEEN);
    }

    #[inline]
    fn hashed_code(&mut self, page: u64) -> u32 {
        if let Some(&i) = self.ids.get(&page) {
            return HASHED | i;
        }
        let i = match self.free.pop() {
            Some(i) => {
                self.hashed[i as usize] = UNSEEN;
                self.hashed_pages[i as usize] = page;
                i
            }
            None => {
                self.hashed.push(UNSEEN);
                self.hashed_pages.push(page);
                (self.hashed.len() - 1) as u32
            }
        };
        self.ids.insert(page, i);
        HASHED | i
    }

    /// The state of the page with owner code `code`.
    #[inline]
    pub fn state(&mut self, code: u32) -> &mut PageState {
        if code & HASHED == 0 { &mut self.dense[code as usize] } else { &mut self.hashed[(code & !HASHED) as usize] }
    }

    /// The state of `code`, read-only.
    #[inline]
    pub fn get(&self, code: u32) -> PageState {
        if code & HASHED == 0 { self.dense[code as usize] } else { self.hashed[(code & !HASHED) as usize] }
    }

    /// Forgets a hashed page (its code may be reused).
    pub fn forget(&mut self, code: u32) {
        debug_assert!(code & HASHED != 0, "only hashed pages are forgotten");
        let i = code & !HASHED;
        let page = self.hashed_pages[i as usize];
        self.ids.remove(&page);
        self.free.push(i);
    }

    /// The index of a hashed code among hashed pages (for side tables), `None` for a dense one.
    #[inline]
    pub fn hashed_index(code: u32) -> Option<usize> {
        (code & HASHED != 0).then_some((code & !HASHED) as usize)
    }

    /// Bytes held (table capacities).
    pub fn memory_bytes(&self) -> u64 {
        let state = std::mem::size_of::<PageState>();
        (self.dense.capacity() * state
            + self.hashed.capacity() * state
            + self.hashed_pages.capacity() * 8
            + self.ids.capacity() * 13
            + self.free.capacity() * 4) as u64
    }
}
