//! CFLRU — clean-first LRU.
//!
//! Source: Park, Jung, Kang, Kim, Lee, *CFLRU: a replacement algorithm for flash memory*
//! (CASES 2006), as described in the AD-LRU paper §2.3 and the CFDC paper §2.4 (Fig. 1). The
//! LRU list is split into a *working region* at the MRU end and a *clean-first window* of the
//! `w·B` least recently used pages (`B` = buffer size). The victim is the least recently used
//! clean page inside the window; when the window holds no clean page, it is the LRU page.
//!
//! Implementation: the paper scans the window on every eviction. flashbuf makes the same
//! decisions in O(1) per operation with the structure of the CFDC paper's §3.1 ("improved
//! CFLRU ... behaves the same as the original algorithm in terms of hit ratio and flash write
//! count"): the working region is one LRU list, and the window is split into a clean list and a
//! dirty list, each in LRU order. A frame enters the window only from the LRU end of the working
//! region, at the window's MRU end; it leaves only when it is hit (to the MRU end of the working
//! region) or removed, and then the LRU page of the working region slides in. So the LRU-most
//! clean page of the window is the clean list's LRU end, and when the window holds no clean page
//! the LRU page is the dirty list's LRU end. The differential test in `tests/adlru_family.rs`
//! checks the decisions against an O(n) scan written from the paper's text.
//!
//! Choices where the papers are silent:
//! * Window size in pages: `W = ⌊w·B + ½⌋`, i.e. `w·B` rounded to the nearest whole page with
//!   halves rounded up (`w = 0.5`, `B = 5` gives 3 pages). A relative tolerance of 10⁻¹² absorbs
//!   binary representation error (`0.15·10` is stored as 1.4999…). `w = 0` is plain LRU; `w = 1`
//!   makes the whole buffer the window.
//! * While the buffer holds fewer than `W` pages, all of them are in the window.
//! * Pinned frames keep their place (a pinned page still counts towards the window) and are
//!   skipped: the victim is the LRU-most *unpinned* clean page inside the window, else the
//!   LRU-most unpinned page of the whole list (every unpinned page of the window is then dirty,
//!   so that is the dirty list's LRU-most unpinned page, or, when the whole window is pinned, the
//!   working region's).
//! * A page's dirty bit is set by any write access and cleared only when the page leaves the
//!   buffer.

use crate::lists::FrameLists;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// Parameters of [`Cflru`].
#[derive(Clone, Debug, PartialEq)]
pub struct CflruConfig {
    /// Clean-first window as a fraction of the buffer, `0..=1` (AD-LRU paper's setting: 0.5).
    pub w: f64,
}

impl Default for CflruConfig {
    fn default() -> Self {
        CflruConfig { w: 0.5 }
    }
}

impl PolicyParams for CflruConfig {
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

/// `w·B` rounded to the nearest whole page, halves up, at most `capacity` (see the module
/// header). Shared with CFLRU/C.
pub(crate) fn window_pages(w: f64, capacity: usize) -> usize {
    let exact = w * capacity as f64;
    let pages = (exact * (1.0 + 1e-12) + 0.5).floor();
    (pages.max(0.0) as usize).min(capacity)
}

/// The LRU-most unpinned frame of `list`.
#[inline]
pub(crate) fn lru_unpinned_of<P: Pins + ?Sized>(lists: &FrameLists, list: u8, pins: &P) -> Option<FrameId> {
    let mut cand = lists.back(list);
    while let Some(f) = cand {
        if !pins.is_pinned(f) {
            return Some(f);
        }
        cand = lists.prev(f);
    }
    None
}

/// The working region: the MRU-end part of the LRU list, outside the window.
pub(crate) const WORK: u8 = 0;

/// Decides which window list a frame joins when it slides into the window.
pub(crate) trait WindowSide {
    /// `frame` (just taken from the LRU end of the working region) enters the window: the window
    /// list, not [`WORK`], whose MRU end it joins.
    fn list_for(&mut self, frame: FrameId) -> u8;
    /// `frame` has just been unlinked from window list `list` (`lists` is the state after).
    fn left(&mut self, frame: FrameId, list: u8, lists: &FrameLists);
}

/// The CFLRU list as two regions: the working region ([`WORK`], front = MRU) and a clean-first
/// window of the `pages` least recently used frames, kept in the window lists the
/// [`WindowSide`] chooses (each in LRU order: frames enter the window only at its MRU end). The
/// whole LRU list is the working region followed by the window lists merged by entry order.
/// Shared by CFLRU and CFLRU/C.
#[derive(Clone, Debug)]
pub(crate) struct LruWindow {
    pub(crate) lists: FrameLists,
    /// Frames inside the window: `min(pages, len)`.
    in_window: usize,
    pages: usize,
    n_lists: u8,
}

impl LruWindow {
    /// `lists` lists in all: [`WORK`] and the window lists `1..lists`.
    pub(crate) fn new(capacity: usize, lists: u8, pages: usize) -> Self {
        LruWindow { lists: FrameLists::new(capacity, lists as usize), in_window: 0, pages, n_lists: lists }
    }

    /// Frames in the list.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.lists.len(WORK) + self.in_window
    }

    /// Window size in pages (the configured `W`, not the current fill).
    pub(crate) fn pages(&self) -> usize {
        self.pages
    }

    /// Whether `frame` is inside the window.
    #[cfg(test)]
    pub(crate) fn in_window(&self, frame: FrameId) -> bool {
        self.lists.list_of(frame).is_some_and(|l| l != WORK)
    }

    /// A new frame at the MRU end.
    #[inline]
    pub(crate) fn push_front<S: WindowSide>(&mut self, frame: FrameId, side: &mut S) {
        self.lists.push_front(WORK, frame);
        self.fill(side);
    }

    /// `frame` (in the list) was referenced: it moves to the MRU end.
    #[inline]
    pub(crate) fn touch<S: WindowSide>(&mut self, frame: FrameId, side: &mut S) {
        match self.lists.list_of(frame) {
            Some(WORK) => self.lists.move_to_front(WORK, frame),
            Some(list) => {
                self.lists.remove(frame);
                self.in_window -= 1;
                side.left(frame, list, &self.lists);
                self.lists.push_front(WORK, frame);
                self.fill(side);
            }
            None => debug_assert!(false, "touch of untracked frame {frame}"),
        }
    }

    /// Takes `frame` out of the list (no-op if it is not in it).
    #[inline]
    pub(crate) fn remove<S: WindowSide>(&mut self, frame: FrameId, side: &mut S) {
        match self.lists.remove(frame) {
            None | Some(WORK) => {}
            Some(list) => {
                self.in_window -= 1;
                side.left(frame, list, &self.lists);
                self.fill(side);
            }
        }
    }

    /// Slides the boundary: frames move from the LRU end of the working region into the window
    /// until it holds `min(pages, len)` frames.
    #[inline]
    fn fill<S: WindowSide>(&mut self, side: &mut S) {
        while self.in_window < self.pages {
            let Some(f) = self.lists.back(WORK) else { break };
            self.lists.remove(f);
            let list = side.list_for(f);
            debug_assert_ne!(list, WORK);
            self.lists.push_front(list, f);
            self.in_window += 1;
        }
    }

    /// Checks the lists and the window's size.
    pub(crate) fn check(&self) -> Result<(), String> {
        self.lists.check()?;
        let n = self.len();
        if self.in_window != self.pages.min(n) {
            return Err(format!("window holds {} frames, want min({}, {n})", self.in_window, self.pages));
        }
        let listed: usize = (1..self.n_lists).map(|l| self.lists.len(l)).sum();
        if listed != self.in_window {
            return Err(format!("window lists hold {listed} frames, counted {}", self.in_window));
        }
        if self.lists.len(WORK) > 0 && self.in_window < self.pages {
            return Err("the working region is not empty but the window is not full".into());
        }
        Ok(())
    }
}

/// CFLRU's window lists.
const CLEAN: u8 = 1;
const DIRTY: u8 = 2;

/// Every frame's dirty bit; clean frames enter the window's clean list, dirty ones its dirty
/// list.
#[derive(Clone, Debug)]
struct DirtyBits {
    dirty: Vec<bool>,
}

impl WindowSide for DirtyBits {
    #[inline]
    fn list_for(&mut self, frame: FrameId) -> u8 {
        if self.dirty[frame as usize] { DIRTY } else { CLEAN }
    }

    #[inline]
    fn left(&mut self, _frame: FrameId, _list: u8, _lists: &FrameLists) {}
}

/// The CFLRU policy.
#[derive(Clone, Debug)]
pub struct Cflru {
    window: LruWindow,
    side: DirtyBits,
}

impl Cflru {
    /// The clean-first window in pages (`⌊w·B + ½⌋`).
    pub fn window_pages(&self) -> usize {
        self.window.pages()
    }
}

impl Replacer for Cflru {
    type Config = CflruConfig;

    fn new(capacity: usize, config: &CflruConfig) -> Self {
        Cflru {
            window: LruWindow::new(capacity, 3, window_pages(config.w, capacity)),
            side: DirtyBits { dirty: vec![false; capacity] },
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.side.dirty[frame as usize] |= access.kind.is_write();
        self.window.touch(frame, &mut self.side);
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        self.window.lists.prefetch(frame);
        crate::blocks::prefetch(&self.side.dirty, frame as usize);
    }

    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.side.dirty[frame as usize] = access.kind.is_write();
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
        // The LRU-most unpinned clean page in the window; else the LRU-most unpinned page: in
        // the window every unpinned page is then dirty, and the window is older than the working
        // region.
        let lists = &self.window.lists;
        let victim = lru_unpinned_of(lists, CLEAN, pins)
            .or_else(|| lru_unpinned_of(lists, DIRTY, pins))
            .or_else(|| lru_unpinned_of(lists, WORK, pins))
            .ok_or(EvictError::AllPinned)?;
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
        Some(self.side.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.window.check()?;
        let lists = &self.window.lists;
        if let Some(f) = lists.iter_from_front(CLEAN).find(|&f| self.side.dirty[f as usize]) {
            return Err(format!("cflru: dirty frame {f} in the window's clean list"));
        }
        if let Some(f) = lists.iter_from_front(DIRTY).find(|&f| !self.side.dirty[f as usize]) {
            return Err(format!("cflru: clean frame {f} in the window's dirty list"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    fn cflru(capacity: usize, w: f64) -> Harness<Cflru> {
        Harness::new(capacity, CflruConfig { w })
    }

    #[test]
    fn window_rounds_to_nearest_page_halves_up() {
        assert_eq!(window_pages(0.5, 6), 3);
        assert_eq!(window_pages(0.5, 5), 3); // 2.5 -> 3
        assert_eq!(window_pages(0.5, 7), 4); // 3.5 -> 4
        assert_eq!(window_pages(0.3, 5), 2); // 1.5 -> 2
        assert_eq!(window_pages(0.25, 5), 1); // 1.25 -> 1
        assert_eq!(window_pages(0.15, 10), 2); // 1.5 (stored as 1.4999...) -> 2
        assert_eq!(window_pages(0.35, 10), 4); // 3.5 -> 4
        assert_eq!(window_pages(0.1, 4), 0); // 0.4 -> 0: plain LRU
        assert_eq!(window_pages(0.0, 100), 0);
        assert_eq!(window_pages(1.0, 100), 100);
        assert_eq!(window_pages(0.5, 1), 1); // 0.5 -> 1
        assert_eq!(Cflru::new(5, &CflruConfig { w: 0.5 }).window_pages(), 3);
    }

    #[test]
    fn evicts_lru_most_clean_page_inside_the_window() {
        // Capacity 6, w = 0.5: window = the 3 LRU-end pages. LRU order (LRU first):
        // 1(dirty) 2(clean) 3(dirty) 4(clean) 5(dirty) 6(clean): window = {1, 2, 3}.
        let mut h = cflru(6, 0.5);
        h.write(1);
        h.read(2);
        h.write(3);
        h.read(4);
        h.write(5);
        h.read(6);
        h.read(7);
        assert_eq!(h.evicted_pages(), vec![2]);
    }

    #[test]
    fn clean_page_just_outside_the_window_is_not_chosen() {
        // LRU order 1(d) 2(d) 3(d) | 4(clean) 5(d) 6(d): page 4 is the first page outside the
        // 3-page window and the only clean page: the LRU page 1 goes instead.
        let mut h = cflru(6, 0.5);
        for (p, write) in [(1, true), (2, true), (3, true), (4, false), (5, true), (6, true)] {
            if write {
                h.write(p);
            } else {
                h.read(p);
            }
        }
        h.read(7);
        assert_eq!(h.evicted_pages(), vec![1]);
        // Now the window is {2, 3, 4}: page 4 slid in and is the clean page chosen next.
        h.read(8);
        assert_eq!(h.evicted_pages(), vec![1, 4]);
    }

    #[test]
    fn all_dirty_window_falls_back_to_lru() {
        let mut h = cflru(4, 0.5);
        for p in 1..=4 {
            h.write(p);
        }
        h.write(5);
        h.write(6);
        assert_eq!(h.evicted_pages(), vec![1, 2]);
        assert!(h.evicted.iter().all(|e| e.dirty));
    }

    #[test]
    fn hit_moves_a_page_out_of_the_window_and_pulls_the_next_one_in() {
        // Capacity 4, w = 0.5: window = {1, 2}. A hit on 1 moves it to the MRU end and page 3
        // (clean) slides in; 2 is dirty, so 3 is the victim.
        let mut h = cflru(4, 0.5);
        h.read(1);
        h.write(2);
        h.read(3);
        h.read(4);
        h.read(1);
        let f3 = h.frame_of(3).unwrap();
        let f1 = h.frame_of(1).unwrap();
        assert!(h.policy.window.in_window(f3));
        assert!(!h.policy.window.in_window(f1));
        h.read(5);
        assert_eq!(h.evicted_pages(), vec![3]);
    }

    #[test]
    fn pinned_clean_page_is_skipped_then_all_pinned_is_reported() {
        let mut h = cflru(3, 1.0);
        h.read(1);
        h.write(2);
        h.read(3);
        h.pin(h.frame_of(1).unwrap());
        h.read(4);
        assert_eq!(h.evicted_pages(), vec![3]);
        let mut p = Cflru::new(2, &CflruConfig::default());
        let a = Access::new(1, crate::AccessKind::Read, 0);
        p.on_insert(0, &a);
        p.on_insert(1, &Access::new(2, crate::AccessKind::Write, 1));
        let pins = [true, true];
        let mut ev = Evictions::default();
        assert_eq!(p.victims(&a, &pins[..], &mut ev), Err(EvictError::AllPinned));
        assert_eq!(p.len(), 2);
        let empty = Cflru::new(2, &CflruConfig::default());
        assert_eq!(empty.len(), 0);
        let mut empty = empty;
        assert_eq!(empty.victims(&a, &crate::NoPins, &mut ev), Err(EvictError::Empty));
    }

    #[test]
    fn remove_keeps_the_window_consistent() {
        let mut p = Cflru::new(4, &CflruConfig { w: 0.5 });
        for (f, page) in [(0u32, 1u64), (1, 2), (2, 3), (3, 4)] {
            p.on_insert(f, &Access::new(page, crate::AccessKind::Read, page));
        }
        p.remove(0);
        p.check_invariants().unwrap();
        p.remove(3);
        p.check_invariants().unwrap();
        assert_eq!(p.len(), 2);
        p.remove(3); // not tracked: no-op
        assert_eq!(p.len(), 2);
    }
}
