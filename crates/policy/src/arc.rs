//! ARC — adaptive replacement cache.
//!
//! Source: Megiddo & Modha, *ARC: a self-tuning, low overhead replacement cache* (FAST 2003),
//! Fig. 4 of the paper; cited by the AD-LRU paper §2.2.
//!
//! Resident pages live in T1 (seen once recently) and T2 (seen at least twice); B1 and B2 remember
//! the pages recently evicted from each. The target size `p` of T1 grows on a hit in B1 and shrinks
//! on a hit in B2; REPLACE evicts from T1 when it exceeds `p` (or equals it and the incoming page
//! is in B2), else from T2. `p` is a real number, as in the paper.
//!
//! Mapping onto the replacer contract: the directory maintenance of a miss (adapting `p`,
//! trimming B1/B2, REPLACE) runs in `victims` when the buffer is full, or in `on_insert` when a
//! free frame was available (then REPLACE is skipped, as the paper's cache is not yet full).
//! With pinned frames, REPLACE takes the LRU-most unpinned page of the list it selects, falling
//! back to the other list.
//!
//! Layout (chosen for speed; the paper is silent): the frames `0..c` have 8-byte link records
//! (T1 and T2 are threaded through them), their pages apart (read only when a frame is evicted),
//! and one byte each for their list and dirty bit: a hit, which moves a frame to the front of
//! T2, touches records packed twice as densely as if they carried the page. The ghost entries
//! `0..2c+1` (B1 and B2) have 16-byte nodes holding their links and their page, and a byte for
//! their list. A miss therefore reads each node it unlinks once and otherwise only *writes* to
//! lines it has not read: dropping a ghost clears its directory slot, adding one sets it,
//! without reading either first. The ghost directory maps a page to its ghost entry: an array
//! index for page numbers below 2^26 (prefetched a few requests ahead like the simulator's page
//! table), a hash map above. A ghost hit then reads the ghost's node and list byte, whose index
//! the directory slot gives: `prefetch` also remembers the last few pages it was given and, once
//! a page's slot has had time to arrive, prefetches that node (a second stage, as the simulator
//! does for its frames). The LRU ends of the four lists, where the next miss will read, move
//! only on a miss (or a hit on an end): they are prefetched at the end of each miss rather than
//! before every request.

use std::cell::Cell;

use crate::blocks::{Ends, Link, Linked, PageDirectory, link_front, prefetch, unlink, walk};
use crate::params::NoParams;
use crate::replacer::{Access, EvictError, Evictions, FrameId, NIL, Pins, Replacer};

const T1: u8 = 0;
const T2: u8 = 1;
const B1: u8 = 2;
const B2: u8 = 3;
/// `meta` of a node in no list.
const NO_LIST: u8 = 4;
/// The list bits of `meta`.
const LIST: u8 = 0x7;
/// The dirty bit of `meta` (frames only).
const DIRTY: u8 = 0x80;
/// How many `prefetch` calls after its own a page's ghost node is prefetched: its directory
/// slot, prefetched by the first call, has arrived by then. The simulator gives pages 16
/// requests ahead and reads its own slots 6 requests ahead; 10 later is that second stage.
const GHOST_STAGE: usize = 10;

/// A ghost entry: its links `[towards MRU, towards LRU]` and its page.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct Node {
    links: [u32; 2],
    page: u64,
}

impl Linked<0> for Node {
    #[inline(always)]
    fn links(&self) -> [u32; 2] {
        self.links
    }
    #[inline(always)]
    fn links_mut(&mut self) -> &mut [u32; 2] {
        &mut self.links
    }
}

/// Walks `lists` of `recs` and checks that every record is in at most one of them and that
/// `recorded` (each record's list byte, in record order) names the list it is linked in
/// ([`NO_LIST`] for none); returns each record's list.
fn membership<T: Linked<0>>(
    what: &str,
    recs: &[T],
    ends: &[Ends; 4],
    lists: [u8; 2],
    recorded: impl Iterator<Item = u8>,
) -> Result<Vec<u8>, String> {
    let mut seen = vec![NO_LIST; recs.len()];
    for list in lists {
        for r in walk::<0, _>(recs, &ends[list as usize])? {
            if seen[r as usize] != NO_LIST {
                return Err(format!("arc: {what} {r} is in lists {} and {list}", seen[r as usize]));
            }
            seen[r as usize] = list;
        }
    }
    for (r, (&s, m)) in seen.iter().zip(recorded).enumerate() {
        if m != s {
            return Err(format!("arc: {what} {r} records list {m} but is linked in {s}"));
        }
    }
    Ok(seen)
}

/// The ARC policy.
pub struct Arc {
    c: usize,
    p: f64,
    /// Per frame: its links in T1 or T2.
    link: Vec<Link>,
    /// Per frame: its page.
    page: Vec<u64>,
    /// Per frame: its list (`T1`, `T2` or `NO_LIST`), with `DIRTY` when dirty.
    meta: Vec<u8>,
    /// Per ghost entry: its links in B1 or B2 and its page.
    node: Vec<Node>,
    /// Per ghost entry: its list (`B1`, `B2` or `NO_LIST`).
    gmeta: Vec<u8>,
    ends: [Ends; 4],
    /// Unused ghost nodes.
    free_ghosts: Vec<u32>,
    /// Ghost page → ghost node (`NIL`: none); its hashed part reserved at twice the ghost count.
    dir: PageDirectory,
    /// Set by `victims`: the incoming page's directory work is done; it goes to T2 if `true`.
    prepared: Option<(u64, bool)>,
    /// The pages of the last `GHOST_STAGE` `prefetch` calls (a ring; prefetching only).
    ahead: [Cell<u64>; GHOST_STAGE],
    /// Number of `prefetch` calls so far (the ring's position).
    calls: Cell<usize>,
    /// What `likely_victim` names (`NIL`: none): set at the end of each miss and when a hit
    /// moves that frame, so that the simulator's per-request question costs one load.
    hint: u32,
}

impl Arc {
    #[inline(always)]
    fn len_of(&self, list: u8) -> usize {
        self.ends[list as usize].len as usize
    }

    /// The list of frame `f`.
    #[inline(always)]
    fn list_of(&self, f: u32) -> u8 {
        self.meta[f as usize] & LIST
    }

    /// Puts frame `f` (in no list) at the front of `list` (T1 or T2).
    #[inline(always)]
    fn push_front(&mut self, list: u8, f: u32) {
        link_front::<0, _, _>(&mut self.link, &mut self.ends[list as usize], f);
        let m = &mut self.meta[f as usize];
        *m = (*m & DIRTY) | list;
    }

    /// Unlinks frame `f` (which is in T1 or T2).
    #[inline(always)]
    fn unlink(&mut self, f: u32) {
        let list = self.list_of(f);
        debug_assert_ne!(list, NO_LIST, "frame {f} is in no list");
        unlink::<0, _, _>(&mut self.link, &mut self.ends[list as usize], f);
        let m = &mut self.meta[f as usize];
        *m = (*m & DIRTY) | NO_LIST;
    }

    /// Unlinks ghost entry `g` (which is in B1 or B2).
    #[inline(always)]
    fn unlink_ghost(&mut self, g: u32) {
        let list = self.gmeta[g as usize];
        debug_assert_ne!(list, NO_LIST, "ghost {g} is in no list");
        unlink::<0, _, _>(&mut self.node, &mut self.ends[list as usize], g);
        self.gmeta[g as usize] = NO_LIST;
    }

    /// The ghost node of `page`, if it is in B1 or B2.
    #[inline(always)]
    fn ghost(&self, page: u64) -> Option<u32> {
        let g = self.dir.get(page);
        (g != NIL).then_some(g)
    }

    /// Brings the LRU ends of the four lists, where the next miss reads, into cache.
    #[inline(always)]
    fn prefetch_ends(&self) {
        for list in [T1, T2] {
            let t = self.ends[list as usize].tail as usize;
            prefetch(&self.link, t);
            prefetch(&self.page, t);
        }
        for list in [B1, B2] {
            prefetch(&self.node, self.ends[list as usize].tail as usize);
        }
    }

    /// The LRU page of the list REPLACE takes from when the incoming page is not in B2 (the
    /// common case).
    #[inline(always)]
    fn next_victim(&self) -> u32 {
        let t1 = self.ends[T1 as usize];
        let t2 = self.ends[T2 as usize];
        if t1.len >= 1 && (t1.len as f64 > self.p || t2.tail == NIL) { t1.tail } else { t2.tail }
    }

    /// Drops the LRU entry of ghost list `list`, if any.
    fn drop_ghost(&mut self, list: u8) {
        let g = self.ends[list as usize].tail;
        if g != NIL {
            self.unlink_ghost(g);
            self.dir.clear(self.node[g as usize].page);
            self.free_ghosts.push(g);
        }
    }

    fn add_ghost(&mut self, list: u8, page: u64) {
        let g = self.free_ghosts.pop().expect("ARC's directory holds at most 2c + 1 ghost entries");
        self.node[g as usize].page = page;
        self.dir.set(page, g);
        link_front::<0, _, _>(&mut self.node, &mut self.ends[list as usize], g);
        self.gmeta[g as usize] = list;
    }

    fn lru_unpinned<P: Pins + ?Sized>(&self, list: u8, pins: &P) -> Option<FrameId> {
        let mut f = self.ends[list as usize].tail;
        while f != NIL {
            if !pins.is_pinned(f) {
                return Some(f);
            }
            f = self.link[f as usize].links[0];
        }
        None
    }

    /// REPLACE(x, p) of the paper; returns the evicted frame, which it moves to B1 or B2.
    fn replace<P: Pins + ?Sized>(&mut self, in_b2: bool, pins: &P) -> Result<FrameId, EvictError> {
        let t1 = self.len_of(T1);
        let from_t1 = t1 >= 1 && ((in_b2 && t1 as f64 == self.p) || t1 as f64 > self.p);
        let (first, second) = if from_t1 { (T1, T2) } else { (T2, T1) };
        let (victim, from) = match self.lru_unpinned(first, pins) {
            Some(f) => (f, first),
            None => (self.lru_unpinned(second, pins).ok_or(EvictError::AllPinned)?, second),
        };
        self.unlink(victim);
        self.add_ghost(if from == T1 { B1 } else { B2 }, self.page[victim as usize]);
        Ok(victim)
    }

    /// The directory part of a miss on `page` (cases II–IV of the paper). When `replace` is
    /// set the cache is full and a victim is returned. Returns (victim, goes_to_t2).
    fn miss<P: Pins + ?Sized>(
        &mut self,
        page: u64,
        replace: bool,
        pins: &P,
    ) -> Result<(Option<FrameId>, bool), EvictError> {
        let c = self.c as f64;
        if let Some(g) = self.ghost(page) {
            let (b1, b2) = (self.len_of(B1) as f64, self.len_of(B2) as f64);
            let in_b2 = self.gmeta[g as usize] == B2;
            if in_b2 {
                let delta = if b2 >= b1 { 1.0 } else { b1 / b2 };
                self.p = (self.p - delta).max(0.0);
            } else {
                let delta = if b1 >= b2 { 1.0 } else { b2 / b1 };
                self.p = (self.p + delta).min(c);
            }
            let victim = if replace { Some(self.replace(in_b2, pins)?) } else { None };
            // The incoming page leaves the ghost directory (it becomes resident in T2).
            self.unlink_ghost(g);
            self.dir.clear(page);
            self.free_ghosts.push(g);
            return Ok((victim, true));
        }
        let (t1, b1) = (self.len_of(T1), self.len_of(B1));
        let total = t1 + b1 + self.len_of(T2) + self.len_of(B2);
        let mut victim = None;
        if t1 + b1 >= self.c {
            if t1 < self.c {
                self.drop_ghost(B1);
                if replace {
                    victim = Some(self.replace(false, pins)?);
                }
            } else if replace {
                // Case IV.A with B1 empty: T1's LRU page leaves the cache and the directory.
                let f = self.lru_unpinned(T1, pins).ok_or(EvictError::AllPinned)?;
                self.unlink(f);
                victim = Some(f);
            }
        } else if total >= self.c {
            if total >= 2 * self.c {
                self.drop_ghost(B2);
            }
            if replace {
                victim = Some(self.replace(false, pins)?);
            }
        }
        if replace && victim.is_none() {
            // Only reachable when the directory rules allow no eviction although the buffer is
            // full (possible after external removals): fall back to REPLACE.
            victim = Some(self.replace(false, pins)?);
        }
        Ok((victim, false))
    }

    /// The current target size of T1 (for tests and reports).
    pub fn target_p(&self) -> f64 {
        self.p
    }

    /// `true` when `frame` is in T2 (tests).
    #[cfg(test)]
    fn in_t2(&self, frame: FrameId) -> bool {
        self.list_of(frame) == T2
    }
}

impl Replacer for Arc {
    type Config = NoParams;

    fn new(capacity: usize, _config: &NoParams) -> Self {
        let ghosts = 2 * capacity + 1;
        assert!(ghosts < NIL as usize, "too many frames for ARC");
        Arc {
            c: capacity,
            p: 0.0,
            link: vec![Link::FREE; capacity],
            page: vec![0; capacity],
            meta: vec![NO_LIST; capacity],
            node: vec![Node { links: [NIL; 2], page: 0 }; ghosts],
            gmeta: vec![NO_LIST; ghosts],
            ends: [Ends::EMPTY; 4],
            free_ghosts: (0..ghosts as u32).rev().collect(),
            dir: PageDirectory::new(NIL, 2 * ghosts),
            prepared: None,
            ahead: Default::default(),
            calls: Cell::new(0),
            hint: NIL,
        }
    }

    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        let dirty = if access.kind.is_write() { DIRTY } else { 0 };
        let m = self.meta[frame as usize];
        if self.ends[T2 as usize].head != frame {
            // A buffered frame is in T1 or T2 (`NO_LIST` only after an external removal).
            let list = m & LIST;
            if list <= T2 {
                unlink::<0, _, _>(&mut self.link, &mut self.ends[(list & 1) as usize], frame);
            }
            link_front::<0, _, _>(&mut self.link, &mut self.ends[T2 as usize], frame);
            self.meta[frame as usize] = (m & DIRTY) | dirty | T2;
            if frame == self.hint {
                self.hint = self.next_victim();
            }
        } else {
            self.meta[frame as usize] = m | dirty;
        }
    }

    /// Brings `page`'s directory slot into cache and, for the page given `GHOST_STAGE` calls
    /// earlier (whose slot has arrived), its ghost node and list byte when it is a ghost.
    #[inline(always)]
    fn prefetch(&self, page: u64) {
        self.dir.prefetch(page);
        let n = self.calls.get();
        self.calls.set(if n + 1 == GHOST_STAGE { 0 } else { n + 1 });
        let earlier = self.ahead[n].replace(page);
        if let Some(g) = self.dir.get_dense(earlier)
            && g != NIL
        {
            prefetch(&self.node, g as usize);
            prefetch(&self.gmeta, g as usize);
        }
    }

    /// The LRU page of the list REPLACE takes from when the incoming page is not in B2 (the
    /// common case), as of the last miss or the last hit that moved it.
    #[inline(always)]
    fn likely_victim(&self) -> Option<FrameId> {
        (self.hint != NIL).then_some(self.hint)
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        prefetch(&self.link, frame as usize);
        prefetch(&self.meta, frame as usize);
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let to_t2 = match self.prepared.take() {
            Some((page, to_t2)) if page == access.page => to_t2,
            _ => self.miss(access.page, false, &crate::replacer::NoPins).map(|(_, t2)| t2).unwrap_or(false),
        };
        self.page[frame as usize] = access.page;
        self.meta[frame as usize] = (if access.kind.is_write() { DIRTY } else { 0 }) | NO_LIST;
        self.push_front(if to_t2 { T2 } else { T1 }, frame);
        self.hint = self.next_victim();
        self.prefetch_ends();
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
        let (victim, to_t2) = self.miss(incoming.page, true, pins)?;
        self.prepared = Some((incoming.page, to_t2));
        out.victims.push(victim.expect("a full cache always yields a victim"));
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        if self.list_of(frame) != NO_LIST {
            self.unlink(frame);
        }
        if frame == self.hint {
            self.hint = self.next_victim();
        }
    }

    fn len(&self) -> usize {
        self.len_of(T1) + self.len_of(T2)
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.meta[frame as usize] & DIRTY != 0)
    }

    fn check_invariants(&self) -> Result<(), String> {
        membership("frame", &self.link, &self.ends, [T1, T2], self.meta.iter().map(|&m| m & LIST))?;
        let seen = membership("ghost", &self.node, &self.ends, [B1, B2], self.gmeta.iter().copied())?;
        let (t1, t2, b1, b2) = (self.len_of(T1), self.len_of(T2), self.len_of(B1), self.len_of(B2));
        if t1 + t2 > self.c {
            return Err(format!("arc: |T1|+|T2| = {} > c = {}", t1 + t2, self.c));
        }
        if t1 + b1 > self.c {
            return Err(format!("arc: |T1|+|B1| = {} > c = {}", t1 + b1, self.c));
        }
        if t1 + t2 + b1 + b2 > 2 * self.c {
            return Err(format!("arc: directory holds {} > 2c pages", t1 + t2 + b1 + b2));
        }
        let mut ghosts = 0;
        for (n, &s) in seen.iter().enumerate() {
            if s == NO_LIST {
                continue;
            }
            ghosts += 1;
            let page = self.node[n].page;
            if self.ghost(page) != Some(n as u32) {
                return Err(format!("arc: ghost page {page} (node {n}) is not found in the directory"));
            }
        }
        let entries = self.dir.entries();
        if ghosts != b1 + b2 || entries != ghosts {
            return Err(format!("arc: directory has {entries} entries, {ghosts} ghost nodes, B1+B2 = {}", b1 + b2));
        }
        if self.free_ghosts.len() + ghosts != self.node.len() {
            return Err(format!("arc: {} free + {ghosts} live ghost nodes", self.free_ghosts.len()));
        }
        if !(0.0..=self.c as f64).contains(&self.p) {
            return Err(format!("arc: p = {} outside [0, c]", self.p));
        }
        Ok(())
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    #[test]
    fn b1_hit_grows_p_and_promotes_to_t2() {
        let mut h = Harness::<Arc>::new(2, NoParams);
        h.read(1);
        h.read(1); // 1 moves to T2
        h.read(2); // T1 = [2]
        h.read(3); // REPLACE with p = 0: |T1| = 1 > p, so 2 goes from T1 to B1
        assert_eq!(h.evicted_pages(), vec![2]);
        assert_eq!(h.policy.target_p(), 0.0);
        h.read(2); // hit in B1: p = 1; REPLACE: |T1| = 1 is not > p, so T2's 1 goes to B2
        assert_eq!(h.policy.target_p(), 1.0);
        assert_eq!(h.evicted_pages(), vec![2, 1]);
        let f = h.frame_of(2).unwrap();
        assert!(h.policy.in_t2(f));
        h.read(1); // hit in B2: p shrinks back to 0
        assert_eq!(h.policy.target_p(), 0.0);
    }

    #[test]
    fn full_t1_without_history_drops_its_lru_page_entirely() {
        // Case IV.A with |T1| = c: the LRU page of T1 leaves cache and directory.
        let mut h = Harness::<Arc>::new(2, NoParams);
        for p in [1, 2, 3] {
            h.read(p);
        }
        assert_eq!(h.evicted_pages(), vec![1]);
        h.read(1); // not remembered: a plain miss, p unchanged
        assert_eq!(h.policy.target_p(), 0.0);
    }

    #[test]
    fn frequent_pages_survive_a_scan() {
        let mut h = Harness::<Arc>::new(4, NoParams);
        for _ in 0..3 {
            h.read(1);
            h.read(2);
        }
        for p in 100..120 {
            h.read(p);
        }
        assert!(h.resident().contains(&1) && h.resident().contains(&2), "{:?}", h.resident());
    }
}
