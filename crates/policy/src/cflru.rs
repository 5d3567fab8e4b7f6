//! CFLRU — clean-first LRU.
//!
//! Source: Park, Jung, Kang, Kim, Lee, *CFLRU: a replacement algorithm for flash memory*
//! (CASES 2006), as described in the AD-LRU paper §2.3 and the CFDC paper §2.4 (Fig. 1). The
//! LRU list is split into a *working region* at the MRU end and a *clean-first window* of the
//! `w·B` least recently used pages (`B` = buffer size). The victim is the least recently used
//! clean page inside the window; when the window holds no clean page, it is the LRU page.
//!
//! Implementation: the paper scans the window on every eviction. flashbuf makes the same
//! decisions in O(1) per operation (CFDC §3.1 makes the same observation): a window-boundary
//! pointer in the LRU list plus a second list holding exactly the clean frames inside the window,
//! in LRU order. The window is always the last `min(W, len)` frames of the list; a frame leaves
//! it only when it is hit (moved to the MRU end) or removed, and then the frame just in front of
//! the boundary slides in. Frames only ever enter at the window's MRU end, so pushing them to the
//! front of the clean list keeps it in LRU order. The differential test in
//! `tests/adlru_family.rs` checks this against an O(n) scan written from the paper's text.
//!
//! Choices where the papers are silent:
//! * Window size in pages: `W = ⌊w·B + ½⌋`, i.e. `w·B` rounded to the nearest whole page with
//!   halves rounded up (`w = 0.5`, `B = 5` gives 3 pages). A relative tolerance of 10⁻¹² absorbs
//!   binary representation error (`0.15·10` is stored as 1.4999…). `w = 0` is plain LRU; `w = 1`
//!   makes the whole buffer the window.
//! * While the buffer holds fewer than `W` pages, all of them are in the window.
//! * Pinned frames keep their place (a pinned page still counts towards the window) and are
//!   skipped: the victim is the LRU-most *unpinned* clean page inside the window, else the
//!   LRU-most unpinned page of the whole list.
//! * A page's dirty bit is set by any write access and cleared only when the page leaves the
//!   buffer.

use crate::lists::FrameLists;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::replacer::{Access, EvictError, Evictions, FrameId, NIL, Pins, Replacer};

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

/// Told when a frame enters or leaves the clean-first window of an [`LruWindow`].
pub(crate) trait WindowSide {
    /// `frame` is now inside the window (at its MRU end).
    fn enter(&mut self, frame: FrameId);
    /// `frame` is no longer inside the window.
    fn leave(&mut self, frame: FrameId);
}

const ALL: u8 = 0;

/// An LRU list whose last `pages` frames form a window, with O(1) maintenance of the window
/// boundary. Shared by CFLRU and CFLRU/C.
#[derive(Clone, Debug)]
pub(crate) struct LruWindow {
    lists: FrameLists,
    in_window: Vec<bool>,
    /// The MRU-most frame inside the window, [`NIL`] when the window is empty.
    head: FrameId,
    len: usize,
    pages: usize,
}

impl LruWindow {
    pub(crate) fn new(capacity: usize, pages: usize) -> Self {
        LruWindow { lists: FrameLists::new(capacity, 1), in_window: vec![false; capacity], head: NIL, len: 0, pages }
    }

    /// Frames in the list.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.lists.len(ALL)
    }

    /// Window size in pages (the configured `W`, not the current fill).
    pub(crate) fn pages(&self) -> usize {
        self.pages
    }

    /// Whether `frame` is inside the window.
    #[cfg(test)]
    pub(crate) fn in_window(&self, frame: FrameId) -> bool {
        self.in_window[frame as usize]
    }

    /// A new frame at the MRU end.
    #[inline]
    pub(crate) fn push_front<S: WindowSide>(&mut self, frame: FrameId, side: &mut S) {
        self.lists.push_front(ALL, frame);
        self.fill(side);
    }

    /// `frame` (in the list) was referenced: it moves to the MRU end.
    #[inline]
    pub(crate) fn touch<S: WindowSide>(&mut self, frame: FrameId, side: &mut S) {
        self.leave(frame, side);
        self.lists.move_to_front(ALL, frame);
        self.fill(side);
    }

    /// Takes `frame` out of the list (no-op if it is not in it).
    #[inline]
    pub(crate) fn remove<S: WindowSide>(&mut self, frame: FrameId, side: &mut S) {
        if self.lists.list_of(frame).is_none() {
            return;
        }
        self.leave(frame, side);
        self.lists.remove(frame);
        self.fill(side);
    }

    /// The LRU-most unpinned frame of the whole list.
    #[inline]
    pub(crate) fn lru_unpinned<P: Pins + ?Sized>(&self, pins: &P) -> Option<FrameId> {
        let mut cand = self.lists.back(ALL);
        while let Some(f) = cand {
            if !pins.is_pinned(f) {
                return Some(f);
            }
            cand = self.lists.prev(f);
        }
        None
    }

    #[inline]
    fn leave<S: WindowSide>(&mut self, frame: FrameId, side: &mut S) {
        let f = frame as usize;
        if self.in_window[f] {
            if self.head == frame {
                // The next frame towards the LRU end is inside the window, if there is one.
                self.head = self.lists.next(frame).unwrap_or(NIL);
            }
            self.in_window[f] = false;
            self.len -= 1;
            side.leave(frame);
        }
    }

    /// Slides the boundary towards the MRU end until the window holds `min(pages, len)` frames.
    #[inline]
    fn fill<S: WindowSide>(&mut self, side: &mut S) {
        let target = self.pages.min(self.lists.len(ALL));
        while self.len < target {
            let next = if self.head == NIL { self.lists.back(ALL) } else { self.lists.prev(self.head) };
            let f = next.expect("the list is longer than the window");
            self.in_window[f as usize] = true;
            self.head = f;
            self.len += 1;
            side.enter(f);
        }
    }

    /// The frames inside the window, from the LRU end.
    pub(crate) fn window_from_back(&self) -> impl Iterator<Item = FrameId> + '_ {
        self.lists.iter_from_back(ALL).take(self.len)
    }

    /// Checks the list and that the window is exactly its last `min(pages, len)` frames.
    pub(crate) fn check(&self) -> Result<(), String> {
        self.lists.check()?;
        let n = self.lists.len(ALL);
        if self.len != self.pages.min(n) {
            return Err(format!("window holds {} frames, want min({}, {n})", self.len, self.pages));
        }
        let mut last_in = NIL;
        for (i, f) in self.lists.iter_from_back(ALL).enumerate() {
            let want = i < self.len;
            if self.in_window[f as usize] != want {
                return Err(format!("frame {f} at LRU distance {i}: in_window={} want {want}", !want));
            }
            if want {
                last_in = f;
            }
        }
        if self.head != last_in {
            return Err(format!("window head is {} but the window ends at {last_in}", self.head));
        }
        let flagged = self.in_window.iter().filter(|&&b| b).count();
        if flagged != self.len {
            return Err(format!("{flagged} frames flagged in the window, {} counted", self.len));
        }
        Ok(())
    }
}

/// The clean frames inside the window in LRU order, plus every frame's dirty bit.
#[derive(Clone, Debug)]
pub(crate) struct CleanInWindow {
    /// List 0: clean frames inside the window, front = MRU.
    pub(crate) clean: FrameLists,
    pub(crate) dirty: Vec<bool>,
}

impl CleanInWindow {
    pub(crate) fn new(capacity: usize) -> Self {
        Self::with_lists(capacity, 1)
    }

    /// Like [`CleanInWindow::new`], with lists `1..lists` of the same [`FrameLists`] left for
    /// the caller (CFLRU/C keeps its write-count buckets there).
    pub(crate) fn with_lists(capacity: usize, lists: usize) -> Self {
        CleanInWindow { clean: FrameLists::new(capacity, lists), dirty: vec![false; capacity] }
    }

    /// The LRU-most unpinned clean frame inside the window.
    #[inline]
    pub(crate) fn lru_unpinned<P: Pins + ?Sized>(&self, pins: &P) -> Option<FrameId> {
        let mut cand = self.clean.back(0);
        while let Some(f) = cand {
            if !pins.is_pinned(f) {
                return Some(f);
            }
            cand = self.clean.prev(f);
        }
        None
    }

    /// Checks that the clean list is exactly the clean frames of `window`, in order.
    pub(crate) fn check(&self, window: &LruWindow) -> Result<(), String> {
        self.clean.check()?;
        let want: Vec<FrameId> = window.window_from_back().filter(|&f| !self.dirty[f as usize]).collect();
        let got: Vec<FrameId> = self.clean.iter_from_back(0).collect();
        if got != want {
            return Err(format!("clean-in-window list {got:?}, window's clean frames {want:?}"));
        }
        Ok(())
    }
}

impl WindowSide for CleanInWindow {
    #[inline]
    fn enter(&mut self, frame: FrameId) {
        if !self.dirty[frame as usize] {
            self.clean.push_front(0, frame);
        }
    }

    #[inline]
    fn leave(&mut self, frame: FrameId) {
        self.clean.remove(frame);
    }
}

/// The CFLRU policy.
#[derive(Clone, Debug)]
pub struct Cflru {
    window: LruWindow,
    side: CleanInWindow,
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
        Cflru { window: LruWindow::new(capacity, window_pages(config.w, capacity)), side: CleanInWindow::new(capacity) }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.side.dirty[frame as usize] |= access.kind.is_write();
        self.window.touch(frame, &mut self.side);
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
        let victim = match self.side.lru_unpinned(pins) {
            Some(f) => f,
            None => self.window.lru_unpinned(pins).ok_or(EvictError::AllPinned)?,
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
        Some(self.side.dirty[frame as usize])
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.window.check()?;
        self.side.check(&self.window)
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
