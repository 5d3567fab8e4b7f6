//! LRU stack distances in O(log n) per request, with memory proportional to the pages tracked.
//!
//! The stack distance of an access is the number of distinct pages accessed since the previous
//! access to the same page, that page included: the page's depth in the LRU stack. LRU with `C`
//! frames hits exactly the accesses of distance at most `C` (Mattson et al. 1970).
//!
//! The classic way to count distinct pages (Olken 1981; Bennett & Kruskal 1975) marks, on a time
//! axis, the position of every page's *last* access; the distance of an access is then the number
//! of marks at or after the page's previous position. [`Stack`] keeps the marks as a bitmap, one
//! bit per position, and a Fenwick tree over the bitmap's 64-bit words: counting the marks of a
//! range is one popcount at each end plus a Fenwick range sum, moving a mark is two bit flips
//! plus a Fenwick update between the two words. Both walk only between the two positions' words
//! (the walks from either end meet at their common ancestor), so a page reused soon — most
//! accesses of a skewed trace — costs a few instructions, and one reused long ago costs two
//! walks of `log2(positions / 64)` steps over a tree that stays small enough for the cache (64
//! times smaller than the time axis).
//!
//! The time axis does not grow with the trace: when its positions run out, the live marks (one
//! per tracked page) are renumbered `0..live` in order ([`Stack::compact`]) and the axis is
//! resized to twice the live marks. A compaction costs O(positions) every `positions − live`
//! requests, so O(1) per request amortised, and the axis holds at most about four positions per
//! tracked page: 3 bits, plus 4 bytes of owner, per position.

/// "No position": a page that is not on the stack.
pub const NO_POS: u32 = u32::MAX;

/// Smallest time axis, in positions (a multiple of 64).
const MIN_POSITIONS: usize = 1 << 12;

/// Marks on a time axis, counted by a Fenwick tree over 64-bit words (see the module docs).
#[derive(Clone, Debug)]
pub struct Stack {
    /// One bit per position: set when a tracked page was last accessed there.
    bits: Vec<u64>,
    /// Fenwick tree over the words of `bits` (1-based: node `i` covers words `(i − lowbit(i), i]`,
    /// counted from 1).
    tree: Vec<u32>,
    /// For every position, the owner code the caller gave when marking it (valid where a mark
    /// is set).
    owner: Vec<u32>,
    /// The next position to mark.
    now: u32,
    /// Marks set.
    live: u32,
}

impl Default for Stack {
    fn default() -> Self {
        Self::new()
    }
}

impl Stack {
    /// An empty stack.
    pub fn new() -> Self {
        Self::with_positions(MIN_POSITIONS)
    }

    fn with_positions(positions: usize) -> Self {
        let words = positions / 64;
        Stack { bits: vec![0; words], tree: vec![0; words + 1], owner: vec![0; positions], now: 0, live: 0 }
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

    /// `true` when the time axis is used up: call [`compact`](Self::compact) before the next
    /// [`push`](Self::push) or [`touch`](Self::touch).
    #[inline]
    pub fn full(&self) -> bool {
        self.now as usize == self.owner.len()
    }

    /// Marks a new page at the next position, for `owner`; returns the position.
    #[inline]
    pub fn push(&mut self, owner: u32) -> u32 {
        debug_assert!(!self.full());
        let pos = self.now;
        self.now += 1;
        self.live += 1;
        let w = (pos / 64) as usize;
        self.bits[w] |= 1 << (pos % 64);
        self.add(w + 1, 1);
        self.owner[pos as usize] = owner;
        pos
    }

    /// The page last accessed at `pos` is accessed again: returns its stack distance (marks at
    /// or after `pos`, the page itself included) and moves its mark to the next position, which
    /// is returned with it.
    #[inline]
    pub fn touch(&mut self, pos: u32, owner: u32) -> (u32, u32) {
        debug_assert!(!self.full());
        debug_assert!(pos < self.now && self.bits[(pos / 64) as usize] >> (pos % 64) & 1 == 1);
        let now = self.now;
        let (wl, bl) = ((pos / 64) as usize, pos % 64);
        let (wn, bn) = ((now / 64) as usize, now % 64);
        // Marks in [pos, now): the rest of pos's word, then whole words up to now's word (whose
        // marks are all before now).
        let distance = if wl == wn {
            (self.bits[wl] >> bl).count_ones()
        } else {
            (self.bits[wl] >> bl).count_ones() + self.prefix_diff(wl + 1, wn + 1)
        };
        self.bits[wl] &= !(1u64 << bl);
        self.bits[wn] |= 1u64 << bn;
        if wl != wn {
            self.shift(wl + 1, wn + 1);
        }
        self.owner[now as usize] = owner;
        self.now += 1;
        (distance, now)
    }

    /// Removes the mark at `pos` (the page leaves the stack).
    pub fn remove(&mut self, pos: u32) {
        let (w, b) = ((pos / 64) as usize, pos % 64);
        debug_assert!(self.bits[w] >> b & 1 == 1, "no mark at {pos}");
        self.bits[w] &= !(1u64 << b);
        self.add_neg(w + 1);
        self.live -= 1;
    }

    /// The stack distance a page last accessed at `pos` would have now, without moving it.
    pub fn depth(&self, pos: u32) -> u32 {
        let (wl, bl) = ((pos / 64) as usize, pos % 64);
        let wn = (self.now / 64) as usize;
        let head = (self.bits[wl] >> bl).count_ones();
        if wl >= wn { head } else { head + self.prefix_diff(wl + 1, wn + 1) }
    }

    /// Renumbers the live marks `0..live` in order, resizes the axis to `max(2 · live, 4096)`
    /// positions, and calls `moved(owner, new_position)` for every mark, oldest first.
    pub fn compact(&mut self, mut moved: impl FnMut(u32, u32)) {
        let live = self.live as usize;
        let positions = (2 * live).max(MIN_POSITIONS).next_multiple_of(64);
        let mut owner = vec![0u32; positions];
        let mut next = 0u32;
        for (w, &word) in self.bits.iter().enumerate() {
            let mut b = word;
            while b != 0 {
                let pos = w * 64 + b.trailing_zeros() as usize;
                let o = self.owner[pos];
                owner[next as usize] = o;
                moved(o, next);
                next += 1;
                b &= b - 1;
            }
        }
        debug_assert_eq!(next as usize, live);
        let words = positions / 64;
        let mut bits = vec![0u64; words];
        for (w, word) in bits.iter_mut().enumerate().take(live.div_ceil(64)) {
            let n = (live - w * 64).min(64);
            *word = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        }
        // Linear-time Fenwick construction: each node passes its sum to its parent.
        let mut tree = vec![0u32; words + 1];
        for i in 1..=words {
            tree[i] += bits[i - 1].count_ones();
            let parent = i + (i & i.wrapping_neg());
            if parent <= words {
                tree[parent] += tree[i];
            }
        }
        *self = Stack { bits, tree, owner, now: self.live, live: self.live };
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
        (self.bits.capacity() * 8 + self.tree.capacity() * 4 + self.owner.capacity() * 4) as u64
    }

    /// `P(b) − P(a)` for `a ≤ b`, where `P(k)` is the marks in words `0..k`: the marks of words
    /// `a..b`. The two descending walks stop where they meet.
    #[inline]
    fn prefix_diff(&self, a: usize, b: usize) -> u32 {
        let (mut a, mut b) = (b, a);
        let mut sum: i64 = 0;
        while a != b {
            if a > b {
                sum += i64::from(self.tree[a]);
                a &= a - 1;
            } else {
                sum -= i64::from(self.tree[b]);
                b &= b - 1;
            }
        }
        sum as u32
    }

    /// Moves one mark from word node `l` to word node `r > l`: −1 on the nodes covering `l` but
    /// not `r`, +1 on those covering `r` but not `l`.
    #[inline]
    fn shift(&mut self, l: usize, r: usize) {
        let n = self.tree.len() - 1;
        let mut i = l;
        while i < r {
            self.tree[i] -= 1;
            i += i & i.wrapping_neg();
        }
        let mut k = r;
        while k < i && k <= n {
            self.tree[k] += 1;
            k += k & k.wrapping_neg();
        }
    }

    #[inline]
    fn add(&mut self, node: usize, delta: u32) {
        let n = self.tree.len() - 1;
        let mut i = node;
        while i <= n {
            self.tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    fn add_neg(&mut self, node: usize) {
        let n = self.tree.len() - 1;
        let mut i = node;
        while i <= n {
            self.tree[i] -= 1;
            i += i & i.wrapping_neg();
        }
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
