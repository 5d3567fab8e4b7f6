//! LRU stack distances in a few steps per request, with memory proportional to the pages tracked.
//!
//! The stack distance of an access is the number of distinct pages accessed since the previous
//! access to the same page, that page included: the page's depth in the LRU stack. LRU with `C`
//! frames hits exactly the accesses of distance at most `C` (Mattson et al. 1970).
//!
//! The classic way to count distinct pages (Olken 1981; Bennett & Kruskal 1975) marks, on a time
//! axis, the position of every page's *last* access; the distance of an access is then the number
//! of marks at or after the page's previous position, that is the marks `live` less the marks
//! *before* it: one prefix count. [`Stack`] keeps the marks as a bitmap, one bit per position,
//! and counts prefixes with a shallow tree of fan-out 16 over the bitmap's 64-bit words: at each
//! level, every node stores the marks of its *earlier siblings* (those under the same parent),
//! so the marks before a position are one popcount in its word plus one entry per level (four
//! levels for four million positions), and no walk depends on the distance. Removing a mark
//! subtracts 1 from the later siblings at each level, 16 adjacent entries that the compiler
//! updates with a few vector instructions, without a branch. Levels 0 and 1 hold 16-bit counts
//! (a level-1 node spans 256 words, at most 16,384 marks), so level 0, the only one with an
//! entry per word, takes 2 bytes per word, and the levels above it (a sixteenth of that, and
//! less) stay in cache.
//!
//! Marks are added only at the end of the axis, the next position. The entries of a node after
//! that position are not kept up to date: no count asks for them, and when the next position
//! enters a new word, the entries of the nodes that start there are set from `live`. Adding a
//! mark is therefore one bit set.
//!
//! The time axis does not grow with the trace: when its positions run out, the live marks (one
//! per tracked page) are renumbered `0..live` in order, in place ([`Stack::compact_owners`]), and
//! the axis is resized to four times the live marks. A compaction costs O(positions) every
//! `positions − live` requests (three requests per live mark), so O(1) per request amortised,
//! and the axis holds at most about four positions per tracked page: about 1.3 bits of counts
//! and bitmap, plus 4 bytes of owner, per position.

/// "No position": a page that is not on the stack.
pub const NO_POS: u32 = u32::MAX;

/// Smallest time axis, in positions (a multiple of 64).
const MIN_POSITIONS: usize = 1 << 12;

/// Positions of the axis per live mark after a compaction: a longer axis compacts less often
/// (each compaction rewrites the position of every tracked page, a random write) at the price
/// of a larger bitmap and owner array.
const SPREAD: usize = 4;

/// Fan-out of the counting tree.
const FAN: usize = 16;
const FAN_BITS: u32 = 4;

/// Sixteen 16-bit entries, a node's children at levels 0 and 1 (half a cache line, aligned).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
struct Small([u16; FAN]);

/// Sixteen 32-bit entries, a node's children at level 2 and up (a cache line, aligned).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Wide([u32; FAN]);

/// `LATER_SMALL[c][j]` is 1 when `j > c`: the entries a removal under child `c` decrements.
const LATER_SMALL: [[u16; FAN]; FAN] = {
    let mut t = [[0u16; FAN]; FAN];
    let mut c = 0;
    while c < FAN {
        let mut j = c + 1;
        while j < FAN {
            t[c][j] = 1;
            j += 1;
        }
        c += 1;
    }
    t
};

const LATER_WIDE: [[u32; FAN]; FAN] = {
    let mut t = [[0u32; FAN]; FAN];
    let mut c = 0;
    while c < FAN {
        let mut j = c + 1;
        while j < FAN {
            t[c][j] = 1;
            j += 1;
        }
        c += 1;
    }
    t
};

/// Subtracts 1 from the entries after child `c` (wrapping: entries after the next position are
/// stale): a row of a constant table subtracted lane by lane, which the compiler turns into a
/// few vector instructions without a branch.
#[inline(always)]
fn dec_after_small(g: &mut Small, c: usize) {
    let later = &LATER_SMALL[c % FAN];
    for (e, &d) in g.0.iter_mut().zip(later) {
        *e = e.wrapping_sub(d);
    }
}

#[inline(always)]
fn dec_after_wide(g: &mut Wide, c: usize) {
    let later = &LATER_WIDE[c % FAN];
    for (e, &d) in g.0.iter_mut().zip(later) {
        *e = e.wrapping_sub(d);
    }
}

/// Marks on a time axis, counted by a tree of fan-out 16 over 64-bit words (see the module
/// docs).
#[derive(Clone, Debug)]
pub struct Stack {
    /// One bit per position: set when a tracked page was last accessed there.
    bits: Vec<u64>,
    /// Level 0: for word `w`, the marks in the earlier words of its group of 16 (entry `w % 16`
    /// of node `w / 16`).
    low: Vec<Small>,
    /// Level 1: for group `g = w / 16`, the marks in the earlier groups of its group of 16.
    mid: Vec<Small>,
    /// Levels 2 and up, each a run of nodes in `high` starting at `high_at[k − 2]`: for the
    /// level-`k` group `w / 16^k`, the marks in its earlier siblings. The top level has at most
    /// 16 entries (its parent is the whole axis).
    high: Vec<Wide>,
    high_at: Vec<usize>,
    /// For every position, the owner code the caller gave when marking it (valid where a mark
    /// is set).
    owner: Vec<u32>,
    /// The next position to mark.
    now: u32,
    /// Marks set.
    live: u32,
    /// The shortest axis (positions).
    min_positions: usize,
}

impl Default for Stack {
    fn default() -> Self {
        Self::new()
    }
}

impl Stack {
    /// An empty stack.
    pub fn new() -> Self {
        Self::with_min_positions(MIN_POSITIONS)
    }

    /// An empty stack whose axis is never shorter than `min_positions` (rounded up to a multiple
    /// of 64): the tests' way to reach the upper levels of the counting tree with few marks.
    fn with_min_positions(min_positions: usize) -> Self {
        let mut s = Stack {
            bits: Vec::new(),
            low: Vec::new(),
            mid: Vec::new(),
            high: Vec::new(),
            high_at: Vec::new(),
            owner: Vec::new(),
            now: 0,
            live: 0,
            min_positions: min_positions.max(64).next_multiple_of(64),
        };
        s.reset_axis(s.min_positions);
        s
    }

    /// Pages on the stack.
    #[inline]
    pub fn len(&self) -> u32 {
        self.live
    }

    /// `true` when no page is on the stack.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// `true` when the time axis is used up: call [`compact`](Self::compact) (or
    /// [`compact_owners`](Self::compact_owners)) before the next [`push`](Self::push) or
    /// [`touch`](Self::touch).
    #[inline]
    pub fn full(&self) -> bool {
        self.now as usize == self.owner.len()
    }

    /// Marks a new page at the next position, for `owner`; returns the position.
    #[inline]
    pub fn push(&mut self, owner: u32) -> u32 {
        debug_assert!(!self.full());
        let pos = self.now;
        self.live += 1;
        self.mark_now(owner);
        pos
    }

    /// The page last accessed at `pos` is accessed again: returns its stack distance (marks at
    /// or after `pos`, the page itself included) and moves its mark to the next position, which
    /// is returned with it.
    #[inline]
    pub fn touch(&mut self, pos: u32, owner: u32) -> (u32, u32) {
        debug_assert!(!self.full());
        debug_assert!(pos < self.now && self.bits[(pos / 64) as usize] >> (pos % 64) & 1 == 1);
        let distance = self.live.wrapping_sub(self.before(pos));
        self.unmark(pos);
        let now = self.now;
        self.mark_now(owner);
        (distance, now)
    }

    /// Removes the mark at `pos` (the page leaves the stack).
    pub fn remove(&mut self, pos: u32) {
        debug_assert!(self.bits[(pos / 64) as usize] >> (pos % 64) & 1 == 1, "no mark at {pos}");
        self.unmark(pos);
        self.live -= 1;
    }

    /// The stack distance a page last accessed at `pos` would have now, without moving it.
    pub fn depth(&self, pos: u32) -> u32 {
        self.live.wrapping_sub(self.before(pos))
    }

    /// Renumbers the live marks `0..live` in order, resizes the axis to `max(4 · live, 4096)`
    /// positions, and calls `moved(owner, new_position)` for every mark, oldest first.
    pub fn compact(&mut self, mut moved: impl FnMut(u32, u32)) {
        for (pos, &o) in self.compact_owners().iter().enumerate() {
            moved(o, pos as u32);
        }
    }

    /// Renumbers the live marks `0..live` in order, in place, and resizes the axis to
    /// `max(4 · live, 4096)` positions; returns the owners of the marks by new position (oldest
    /// first), for the caller to update its own records of positions.
    pub fn compact_owners(&mut self) -> &[u32] {
        let live = self.live as usize;
        let mut next = 0usize;
        let used = (self.now as usize).div_ceil(64);
        // Each mark moves down (next ≤ pos), so the owners compact in place.
        for w in 0..used {
            let mut b = self.bits[w];
            while b != 0 {
                let pos = w * 64 + b.trailing_zeros() as usize;
                self.owner[next] = self.owner[pos];
                next += 1;
                b &= b - 1;
            }
        }
        debug_assert_eq!(next, live);
        // Positions are u32 and `NO_POS` is not one.
        let limit = (u32::MAX as usize) & !63;
        let positions = (SPREAD * live).max(self.min_positions).next_multiple_of(64).min(limit);
        assert!(live < positions, "{live} pages on the stack: more than the time axis can hold");
        self.reset_axis(positions);
        &self.owner[..live]
    }

    /// Owners of the live marks, newest first (stack order: depth 1, 2, ...).
    pub fn owners_newest_first(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits.iter().enumerate().rev().flat_map(move |(w, &word)| {
            let mut b = word;
            std::iter::from_fn(move || {
                if b == 0 {
                    return None;
                }
                let top = 63 - b.leading_zeros();
                b &= !(1u64 << top);
                Some(self.owner[w * 64 + top as usize])
            })
        })
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> u64 {
        (self.bits.capacity() * 8
            + self.low.capacity() * std::mem::size_of::<Small>()
            + self.mid.capacity() * std::mem::size_of::<Small>()
            + self.high.capacity() * std::mem::size_of::<Wide>()
            + self.high_at.capacity() * 8
            + self.owner.capacity() * 4) as u64
    }

    /// Levels of the counting tree.
    fn levels(&self) -> usize {
        2 + self.high_at.len()
    }

    /// Marks before `pos`: the popcount below it in its word plus, at each level, the marks of
    /// the earlier siblings of the node that holds it.
    #[inline(always)]
    fn before(&self, pos: u32) -> u32 {
        let w = (pos / 64) as usize;
        let below = self.bits[w] & ((1u64 << (pos % 64)) - 1);
        let g = w / FAN;
        let mut p = below.count_ones() + u32::from(self.low[g].0[w % FAN]) + u32::from(self.mid[g / FAN].0[g % FAN]);
        let mut i = g / FAN;
        for &at in &self.high_at {
            p = p.wrapping_add(self.high[at + i / FAN].0[i % FAN]);
            i /= FAN;
        }
        p
    }

    /// Clears the mark at `pos`: its bit, and 1 from the later siblings at every level.
    #[inline(always)]
    fn unmark(&mut self, pos: u32) {
        let w = (pos / 64) as usize;
        self.bits[w] &= !(1u64 << (pos % 64));
        let g = w / FAN;
        dec_after_small(&mut self.low[g], w % FAN);
        dec_after_small(&mut self.mid[g / FAN], g % FAN);
        let mut i = g / FAN;
        for &at in &self.high_at {
            dec_after_wide(&mut self.high[at + i / FAN], i % FAN);
            i /= FAN;
        }
    }

    /// Sets the mark at the next position for `owner` and moves on.
    #[inline(always)]
    fn mark_now(&mut self, owner: u32) {
        let now = self.now;
        self.bits[(now / 64) as usize] |= 1u64 << (now % 64);
        self.owner[now as usize] = owner;
        self.now = now + 1;
        if self.now.is_multiple_of(64) && !self.full() {
            self.enter_word((self.now / 64) as usize);
        }
    }

    /// The next position has reached the start of word `w`: every mark is before it. The nodes
    /// that start at `w` (level `k` when `w` is a multiple of `16^k`) get their entries: 0 below
    /// the highest of them (first children), and at the highest, `live` less the entries of the
    /// levels above, so that the marks before `w` add up to `live`.
    #[cold]
    fn enter_word(&mut self, w: usize) {
        let levels = self.levels();
        let top_new = if w == 0 { levels - 1 } else { ((w.trailing_zeros() / FAN_BITS) as usize).min(levels - 1) };
        let mut above = 0u32;
        for k in top_new + 1..levels {
            above = above.wrapping_add(self.entry(k, w >> (FAN_BITS as usize * k)));
        }
        self.set_entry(top_new, w >> (FAN_BITS as usize * top_new), self.live.wrapping_sub(above));
        for k in 0..top_new {
            self.set_entry(k, w >> (FAN_BITS as usize * k), 0);
        }
    }

    /// Entry `i` of level `k`.
    fn entry(&self, k: usize, i: usize) -> u32 {
        match k {
            0 => u32::from(self.low[i / FAN].0[i % FAN]),
            1 => u32::from(self.mid[i / FAN].0[i % FAN]),
            _ => self.high[self.high_at[k - 2] + i / FAN].0[i % FAN],
        }
    }

    fn set_entry(&mut self, k: usize, i: usize, v: u32) {
        match k {
            0 => self.low[i / FAN].0[i % FAN] = v as u16,
            1 => self.mid[i / FAN].0[i % FAN] = v as u16,
            _ => self.high[self.high_at[k - 2] + i / FAN].0[i % FAN] = v,
        }
    }

    /// Sizes the axis to `positions` (a multiple of 64) with the `live` marks at `0..live` and
    /// the next position at `live`. Every node's entries are those of a full axis (entry `j` of
    /// a level-`k` node is `j · 64 · 16^k`), which is right for the nodes at or before `live`
    /// and, for those after it, overwritten when the next position enters them.
    fn reset_axis(&mut self, positions: usize) {
        debug_assert!(positions.is_multiple_of(64));
        let words = positions / 64;
        let live = self.live as usize;
        self.bits.clear();
        self.bits.resize(words, 0);
        for (w, word) in self.bits.iter_mut().enumerate().take(live.div_ceil(64)) {
            let n = (live - w * 64).min(64);
            *word = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        }
        let small = |span: usize| Small(std::array::from_fn(|j| (j * span) as u16));
        let mut entries = words;
        self.low.clear();
        self.low.resize(entries.div_ceil(FAN), small(64));
        entries = entries.div_ceil(FAN);
        self.mid.clear();
        self.mid.resize(entries.div_ceil(FAN), small(64 * FAN));
        self.high.clear();
        self.high_at.clear();
        let mut span = 64 * FAN as u64 * FAN as u64;
        while entries > FAN {
            entries = entries.div_ceil(FAN);
            self.high_at.push(self.high.len());
            // Entries past a 2^32 axis' worth only arise after `live`: stale, truncated.
            let node = Wide(std::array::from_fn(|j| (j as u64 * span) as u32));
            self.high.resize(self.high.len() + entries.div_ceil(FAN), node);
            span *= FAN as u64;
        }
        self.owner.resize(positions, 0);
        self.now = self.live;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Distances equal those of a plain LRU list, through compactions and removals.
        #[test]
        fn distances_equal_a_list(ops in proptest::collection::vec((0u32..300, 0u8..10), 1..3000)) {
            let mut s = Stack::new();
            let mut pos: std::collections::HashMap<u32, u32> = Default::default();
            let mut list: Vec<u32> = Vec::new(); // front = most recent
            for (page, op) in ops {
                if s.full() {
                    s.compact(|o, p| { pos.insert(o, p); });
                }
                if op == 0 {
                    if let Some(p) = pos.remove(&page) {
                        s.remove(p);
                        list.retain(|&x| x != page);
                    }
                    continue;
                }
                match pos.get(&page) {
                    Some(&p) => {
                        let want = list.iter().position(|&x| x == page).unwrap() as u32 + 1;
                        prop_assert_eq!(s.depth(p), want);
                        let (d, np) = s.touch(p, page);
                        prop_assert_eq!(d, want);
                        pos.insert(page, np);
                        list.retain(|&x| x != page);
                    }
                    None => {
                        let np = s.push(page);
                        pos.insert(page, np);
                    }
                }
                list.insert(0, page);
                prop_assert_eq!(s.len() as usize, list.len());
            }
            let owners: Vec<u32> = s.owners_newest_first().collect();
            prop_assert_eq!(owners, list);
        }
    }

    /// A naive LRU stack: distances are positions in a list, front = most recent.
    #[derive(Default)]
    struct Naive(Vec<u32>);

    impl Naive {
        fn depth(&self, page: u32) -> Option<u32> {
            self.0.iter().position(|&x| x == page).map(|i| i as u32 + 1)
        }
        fn access(&mut self, page: u32) {
            self.0.retain(|&x| x != page);
            self.0.insert(0, page);
        }
        fn remove(&mut self, page: u32) {
            self.0.retain(|&x| x != page);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The counting tree against a naive stack, at every level and through compactions: axes
        /// of 2 to 4 levels (one of them not a multiple of a node), runs of transient pages
        /// (pushed then removed) that carry the next position across word, node and axis
        /// boundaries, and after every operation the depth of every page checked.
        #[test]
        fn every_depth_equals_a_naive_stack(
            min in prop_oneof![Just(64usize), Just(4096), Just((1 << 14) + 64), Just(1 << 19), Just(1 << 21)],
            ops in proptest::collection::vec((0u32..200, 0u8..24, 0u32..18), 1..1500),
        ) {
            let mut s = Stack::with_min_positions(min);
            let mut pos: std::collections::HashMap<u32, u32> = Default::default();
            let mut naive = Naive::default();
            let mut transient = 1_000_000u32;
            let ready = |s: &mut Stack, pos: &mut std::collections::HashMap<u32, u32>| {
                if s.full() {
                    s.compact(|o, p| { pos.insert(o, p); });
                }
            };
            for (page, op, jump) in ops {
                match op {
                    0 => {
                        if let Some(p) = pos.remove(&page) {
                            s.remove(p);
                            naive.remove(page);
                        }
                    }
                    1 => {
                        for _ in 0..1u32 << jump {
                            ready(&mut s, &mut pos);
                            transient += 1;
                            let p = s.push(transient);
                            prop_assert_eq!(s.depth(p), 1);
                            s.remove(p);
                        }
                    }
                    _ => {
                        ready(&mut s, &mut pos);
                        match pos.get(&page) {
                            Some(&p) => {
                                let (d, np) = s.touch(p, page);
                                prop_assert_eq!(Some(d), naive.depth(page));
                                pos.insert(page, np);
                            }
                            None => {
                                pos.insert(page, s.push(page));
                            }
                        }
                        naive.access(page);
                    }
                }
                prop_assert_eq!(s.len() as usize, naive.0.len());
                for (&page, &p) in &pos {
                    prop_assert_eq!(Some(s.depth(p)), naive.depth(page), "page {} at {}", page, p);
                }
            }
            let owners: Vec<u32> = s.owners_newest_first().collect();
            prop_assert_eq!(owners, naive.0);
        }
    }

    #[test]
    fn the_axis_stays_a_few_positions_per_page() {
        let mut s = Stack::new();
        let mut pos = vec![NO_POS; 10_000];
        for i in 0..1_000_000u32 {
            let page = (i.wrapping_mul(2_654_435_761) >> 8) % 10_000;
            if s.full() {
                s.compact(|o, p| pos[o as usize] = p);
            }
            let p = pos[page as usize];
            pos[page as usize] = if p == NO_POS { s.push(page) } else { s.touch(p, page).1 };
        }
        assert_eq!(s.len(), 10_000);
        assert!(s.owner.len() <= 4 * 10_000 + MIN_POSITIONS, "{}", s.owner.len());
    }
}
