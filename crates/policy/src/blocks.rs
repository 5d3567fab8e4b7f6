//! What every block- and cluster-level policy (FAB, BPLRU, REF, BP-REF, CFDC) shares:
//! `BlockTable` (block number → dense slot: direct-mapped for small block numbers, hashed
//! otherwise), intrusive lists whose links live inside per-frame and per-block records
//! (`Linked`, `Ends`: one cache line per record touched), the per-frame record `PageRec`, and
//! the `ppb` parameter.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::IndexMut;

use rustc_hash::FxHasher;

use crate::params::{ParamDoc, parse_int};
use crate::recs::own;
use crate::replacer::NIL;

/// Largest accepted pages-per-block (and cluster size) parameter.
pub(crate) const MAX_PPB: u64 = 4096;

/// Ends and length of an intrusive list whose links live inside the records of a slice (see
/// [`Linked`]): for hot structures whose records should hold their links and their data in one
/// cache line.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ends {
    /// Front (most recent end), or NIL.
    pub(crate) head: u32,
    /// Back (oldest end), or NIL.
    pub(crate) tail: u32,
    /// Number of linked records.
    pub(crate) len: u32,
}

impl Ends {
    /// An empty list.
    pub(crate) const EMPTY: Ends = Ends { head: NIL, tail: NIL, len: 0 };
}

/// A record carrying the links `[towards front, towards back]` of its list number `L`.
pub(crate) trait Linked<const L: usize> {
    /// The links of list `L`.
    fn links(&self) -> [u32; 2];
    /// The links of list `L`, for update.
    fn links_mut(&mut self) -> &mut [u32; 2];
}

/// Completes the insertion of record `n` at the front of the list `ends` when `n`'s record was
/// already written whole with the links `[NIL, ends.head]` (a hot path that stores a record
/// once, links included, where [`link_front`] would store them apart): links the old head back
/// to `n` and moves the ends. Indexes a local slice without a bounds check ([`own`]: `ends`
/// names the policy's own records).
#[inline(always)]
pub(crate) fn attach_front<const L: usize, T: Linked<L>>(recs: &mut [T], ends: &mut Ends, n: u32) {
    let h = ends.head;
    debug_assert!(recs[n as usize].links() == [NIL, h], "record {n} is not written as the new head");
    if h == NIL {
        ends.tail = n;
    } else {
        own(recs, h).links_mut()[0] = n;
    }
    ends.head = n;
    ends.len += 1;
}

/// Moves record `n`, in the list `ends`, to its front, and answers whether it was the tail.
/// Written out for the hot paths over a local slice: a record that is not the head has a
/// predecessor, the head is another record, and the length does not change ([`own`]: `ends`
/// and the links name the policy's own records).
#[inline(always)]
pub(crate) fn move_to_front<const L: usize, T: Linked<L>>(recs: &mut [T], ends: &mut Ends, n: u32) -> bool {
    let h = ends.head;
    if h == n {
        return false;
    }
    let [p, q] = own(recs, n).links();
    debug_assert!(p != NIL && h != NIL, "record {n} is not in the list");
    *own(recs, n).links_mut() = [NIL, h];
    own(recs, p).links_mut()[1] = q;
    let was_tail = q == NIL;
    if was_tail {
        ends.tail = p;
    } else {
        own(recs, q).links_mut()[0] = p;
    }
    own(recs, h).links_mut()[0] = n;
    ends.head = n;
    was_tail
}

/// Inserts record `n` (in no list `L`) at the front of the list `ends`.
#[inline]
pub(crate) fn link_front<const L: usize, T: Linked<L>, R: IndexMut<usize, Output = T> + ?Sized>(
    recs: &mut R,
    ends: &mut Ends,
    n: u32,
) {
    let h = ends.head;
    *recs[n as usize].links_mut() = [NIL, h];
    if h == NIL {
        ends.tail = n;
    } else {
        recs[h as usize].links_mut()[0] = n;
    }
    ends.head = n;
    ends.len += 1;
}

/// Inserts record `n` (in no list `L`) at the back of the list `ends`.
#[inline]
pub(crate) fn link_back<const L: usize, T: Linked<L>, R: IndexMut<usize, Output = T> + ?Sized>(
    recs: &mut R,
    ends: &mut Ends,
    n: u32,
) {
    let t = ends.tail;
    *recs[n as usize].links_mut() = [t, NIL];
    if t == NIL {
        ends.head = n;
    } else {
        recs[t as usize].links_mut()[1] = n;
    }
    ends.tail = n;
    ends.len += 1;
}

/// Unlinks record `n` from the list `ends` (it must be in it).
#[inline]
pub(crate) fn unlink<const L: usize, T: Linked<L>, R: IndexMut<usize, Output = T> + ?Sized>(
    recs: &mut R,
    ends: &mut Ends,
    n: u32,
) {
    let [p, q] = recs[n as usize].links();
    if p != NIL {
        recs[p as usize].links_mut()[1] = q;
    } else {
        ends.head = q;
    }
    if q != NIL {
        recs[q as usize].links_mut()[0] = p;
    } else {
        ends.tail = p;
    }
    *recs[n as usize].links_mut() = [NIL, NIL];
    ends.len -= 1;
}

/// Inserts record `n` (in no list `L`) directly in front of `anchor` (in the list `ends`).
#[inline]
pub(crate) fn link_before<const L: usize, T: Linked<L>, R: IndexMut<usize, Output = T> + ?Sized>(
    recs: &mut R,
    ends: &mut Ends,
    anchor: u32,
    n: u32,
) {
    let p = recs[anchor as usize].links()[0];
    *recs[n as usize].links_mut() = [p, anchor];
    recs[anchor as usize].links_mut()[0] = n;
    if p == NIL {
        ends.head = n;
    } else {
        recs[p as usize].links_mut()[1] = n;
    }
    ends.len += 1;
}

/// A record that is only a place in one list: `[towards the front, towards the back]`, 8 bytes,
/// eight to a cache line (LRU's frames, ARC's T1/T2 frames).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(8))]
pub(crate) struct Link {
    pub(crate) links: [u32; 2],
}

impl Link {
    /// In no list.
    pub(crate) const FREE: Link = Link { links: [NIL; 2] };
}

impl Linked<0> for Link {
    #[inline(always)]
    fn links(&self) -> [u32; 2] {
        self.links
    }
    #[inline(always)]
    fn links_mut(&mut self) -> &mut [u32; 2] {
        &mut self.links
    }
}

/// Per-frame state of the block-level policies, one cache line: the links in its block's page
/// list, its page, its block slot, dirty bit and last access time.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub(crate) struct PageRec {
    /// `[towards the front, towards the back]` of the block's page list.
    pub(crate) links: [u32; 2],
    pub(crate) page: u64,
    /// Block slot, or NIL when the frame is free.
    pub(crate) slot: u32,
    pub(crate) dirty: bool,
    /// The time of the frame's last access (in the record's padding: the line an access touches
    /// anyway), for a hand-over to another policy (`crate::fbx`).
    pub(crate) time: u64,
}

impl PageRec {
    /// A free frame.
    pub(crate) const FREE: PageRec = PageRec { links: [NIL; 2], page: 0, slot: NIL, dirty: false, time: 0 };
}

impl Linked<0> for PageRec {
    #[inline]
    fn links(&self) -> [u32; 2] {
        self.links
    }
    #[inline]
    fn links_mut(&mut self) -> &mut [u32; 2] {
        &mut self.links
    }
}

/// Walks the list `ends` from the front and checks links and length; returns its records.
pub(crate) fn walk<const L: usize, T: Linked<L>>(recs: &[T], ends: &Ends) -> Result<Vec<u32>, String> {
    let (mut out, mut prev, mut cur) = (Vec::new(), NIL, ends.head);
    while cur != NIL {
        if cur as usize >= recs.len() || out.len() > recs.len() {
            return Err(format!("list {L}: record {cur} out of range or a cycle"));
        }
        let [p, q] = recs[cur as usize].links();
        if p != prev {
            return Err(format!("list {L}: record {cur} has a wrong back link"));
        }
        out.push(cur);
        prev = cur;
        cur = q;
    }
    if ends.tail != prev || ends.len as usize != out.len() {
        return Err(format!("list {L}: tail or length wrong ({} recorded, {} linked)", ends.len, out.len()));
    }
    Ok(out)
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    /// The slot, or NIL for an empty entry.
    slot: u32,
}

/// Maps block (or cluster) numbers to dense slots `0..slots`, so that per-block state lives in
/// arrays. One lookup per miss; hits reach the slot through the frame. An open-addressing table
/// (linear probing, Fibonacci hashing, at most half full, backward-shift deletion): a lookup
/// usually touches one cache line, and nothing is allocated after construction.
#[derive(Clone, Debug)]
pub(crate) struct BlockTable {
    /// Direct map for keys below `dense_limit` (`NIL` = absent), grown to the largest such key
    /// seen: one array index per lookup for the usual dense page ranges.
    dense: Vec<u32>,
    dense_limit: u64,
    /// Open-addressing hash for larger (sparse) block numbers.
    table: Vec<Entry>,
    shift: u32,
    key: Vec<u64>,
    free: Vec<u32>,
}

/// Block numbers below this are direct-mapped (at most 16 MiB of table).
const DENSE_BLOCKS: u64 = 1 << 22;

/// Page numbers below this are direct-mapped in a page directory (at most 256 MiB of table, the
/// simulator's page-table limit).
pub(crate) const DENSE_PAGES: u64 = 1 << 26;

/// A page → `u32` directory for ghost entries (ARC's ghost nodes, FBP's ghost rings): an array
/// indexed by page below [`DENSE_PAGES`], grown as pages are met (never shrunk), and a hash map
/// above, reserved at construction so that it does not reallocate while the policy keeps at
/// most that many entries. Setting and clearing an entry only write its slot (no read first);
/// `empty` is what a page without an entry reads as.
#[derive(Clone, Debug)]
pub(crate) struct PageDirectory {
    dense: Vec<u32>,
    sparse: HashMap<u64, u32, BuildHasherDefault<FxHasher>>,
    empty: u32,
}

impl PageDirectory {
    /// An empty directory whose pages read as `empty`, with room for `sparse` hashed entries.
    pub(crate) fn new(empty: u32, sparse: usize) -> Self {
        PageDirectory {
            dense: Vec::new(),
            sparse: HashMap::with_capacity_and_hasher(sparse, Default::default()),
            empty,
        }
    }

    /// The entry of `page` (`empty` when it has none).
    #[inline(always)]
    pub(crate) fn get(&self, page: u64) -> u32 {
        if page < self.dense.len() as u64 {
            self.dense[page as usize]
        } else if page < DENSE_PAGES {
            self.empty
        } else {
            self.sparse.get(&page).copied().unwrap_or(self.empty)
        }
    }

    /// The entry of `page` if it is direct-mapped and already grown to (`None` otherwise, even
    /// when a hashed page has an entry): a read that never hashes, for prefetch hints.
    #[inline(always)]
    pub(crate) fn get_dense(&self, page: u64) -> Option<u32> {
        self.dense.get(usize::try_from(page).ok()?).copied()
    }

    /// Gives `page` the entry `v`.
    #[inline(always)]
    pub(crate) fn set(&mut self, page: u64, v: u32) {
        if page < DENSE_PAGES {
            if page >= self.dense.len() as u64 {
                self.grow(page);
            }
            self.dense[page as usize] = v;
        } else {
            self.sparse.insert(page, v);
        }
    }

    /// Removes the entry of `page`, which has one.
    #[inline(always)]
    pub(crate) fn clear(&mut self, page: u64) {
        if page < DENSE_PAGES {
            self.dense[page as usize] = self.empty;
        } else {
            self.sparse.remove(&page);
        }
    }

    #[cold]
    fn grow(&mut self, page: u64) {
        let want = (page + 1).max(2 * self.dense.len() as u64).clamp(1024.min(DENSE_PAGES), DENSE_PAGES);
        self.dense.resize(want as usize, self.empty);
    }

    /// Brings the slot of a direct-mapped `page` into cache.
    #[inline(always)]
    pub(crate) fn prefetch(&self, page: u64) {
        prefetch(&self.dense, page as usize);
    }

    /// The direct-mapped slots (for a policy's sweep of entries it lets go stale).
    pub(crate) fn dense_slots_mut(&mut self) -> &mut [u32] {
        &mut self.dense
    }

    /// The direct-mapped slots (for invariant checks).
    pub(crate) fn dense_slots(&self) -> &[u32] {
        &self.dense
    }

    /// Entries other than `empty` (for invariant checks; O(directory)).
    pub(crate) fn entries(&self) -> usize {
        let e = self.empty;
        self.dense.iter().filter(|&&v| v != e).count() + self.sparse.values().filter(|&&v| v != e).count()
    }
}

impl BlockTable {
    /// A table for at most `slots` live blocks.
    pub(crate) fn new(slots: usize) -> Self {
        Self::with_dense_limit(slots, DENSE_BLOCKS)
    }

    /// A table for at most `slots` live keys, direct-mapped below `dense_limit`: with
    /// [`DENSE_PAGES`], a directory of pages (the ghost entries of ARC, 2Q and LRU-2), found with
    /// one array index instead of a hash for the usual page ranges.
    pub(crate) fn with_dense_limit(slots: usize, dense_limit: u64) -> Self {
        let cap = (2 * slots).max(2).next_power_of_two();
        BlockTable {
            dense: Vec::new(),
            dense_limit,
            table: vec![Entry { key: 0, slot: NIL }; cap],
            shift: 64 - cap.trailing_zeros(),
            key: vec![u64::MAX; slots],
            free: (0..slots as u32).rev().collect(),
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The table index holding `key`, or the empty index where it would go.
    #[inline]
    fn find(&self, key: u64) -> (usize, bool) {
        let mask = self.table.len() - 1;
        let mut i = self.home(key);
        loop {
            let e = self.table[i];
            if e.slot == NIL {
                return (i, false);
            }
            if e.key == key {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    /// The slot of block `key`, if live.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        if key < self.dense_limit {
            return self.dense.get(key as usize).copied().filter(|&s| s != NIL);
        }
        match self.find(key) {
            (i, true) => Some(self.table[i].slot),
            _ => None,
        }
    }

    /// The slot of block `key`, allocating one if needed; the flag says it was allocated.
    #[inline]
    pub(crate) fn get_or_insert(&mut self, key: u64) -> (u32, bool) {
        if key < self.dense_limit {
            if key as usize >= self.dense.len() {
                self.grow(key);
            }
            let d = self.dense[key as usize];
            if d != NIL {
                return (d, false);
            }
            let s = self.free.pop().expect("block table sized for every live block");
            self.key[s as usize] = key;
            self.dense[key as usize] = s;
            return (s, true);
        }
        let (i, found) = self.find(key);
        if found {
            return (self.table[i].slot, false);
        }
        let s = self.free.pop().expect("block table sized for every live block");
        self.key[s as usize] = key;
        self.table[i] = Entry { key, slot: s };
        (s, true)
    }

    #[cold]
    fn grow(&mut self, key: u64) {
        let want = (key + 1).max(2 * self.dense.len() as u64).clamp(1024.min(self.dense_limit), self.dense_limit);
        self.dense.resize(want as usize, NIL);
    }

    /// Frees `slot`.
    #[inline]
    pub(crate) fn release(&mut self, slot: u32) {
        let key = self.key[slot as usize];
        if key < self.dense_limit {
            debug_assert_eq!(self.dense[key as usize], slot);
            self.dense[key as usize] = NIL;
            self.key[slot as usize] = u64::MAX;
            self.free.push(slot);
            return;
        }
        let (mut i, found) = self.find(key);
        debug_assert!(found && self.table[i].slot == slot);
        // Backward-shift deletion: pull later entries of the probe run into the hole.
        let mask = self.table.len() - 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = self.table[j];
            if e.slot == NIL {
                break;
            }
            let h = self.home(e.key);
            // `e` may move to `i` unless its home lies cyclically in (i, j].
            let stays = if i <= j { i < h && h <= j } else { i < h || h <= j };
            if !stays {
                self.table[i] = e;
                i = j;
            }
        }
        self.table[i] = Entry { key: 0, slot: NIL };
        self.key[slot as usize] = u64::MAX;
        self.free.push(slot);
    }

    /// Hints the CPU to bring the entry of `key` into cache (changes nothing).
    #[inline(always)]
    pub(crate) fn prefetch(&self, key: u64) {
        if key < self.dense_limit {
            prefetch(&self.dense, key as usize);
        } else {
            prefetch(&self.table, self.home(key));
        }
    }

    /// The slot of block `key` when the key is direct-mapped and live, read from the small
    /// direct map only (no hash probe): for prefetching what a coming request will touch.
    #[inline(always)]
    pub(crate) fn dense_slot(&self, key: u64) -> Option<u32> {
        // Tests written out: `get(..).copied().filter(..)` compiles to a flag materialised
        // and tested again at every use.
        if key < self.dense.len() as u64 && self.dense[key as usize] != NIL {
            Some(self.dense[key as usize])
        } else {
            None
        }
    }

    /// Hints the CPU to bring the record `recs[slot]` of block `key` into cache, when the key is
    /// direct-mapped and live (one load of the small direct map; changes nothing).
    #[inline(always)]
    pub(crate) fn prefetch_record<T>(&self, key: u64, recs: &[T]) {
        if let Some(&s) = self.dense.get(key as usize)
            && s != NIL
        {
            prefetch(recs, s as usize);
        }
    }

    /// Hints the CPU to bring the block number of `slot` into cache (what [`release`]
    /// reads first; changes nothing).
    ///
    /// [`release`]: Self::release
    #[inline(always)]
    pub(crate) fn prefetch_key(&self, slot: u32) {
        prefetch(&self.key, slot as usize);
    }

    /// The block number of a live slot.
    #[inline]
    pub(crate) fn key(&self, slot: u32) -> u64 {
        self.key[slot as usize]
    }

    /// `true` when `slot` is live.
    pub(crate) fn is_live(&self, slot: u32) -> bool {
        self.get(self.key[slot as usize]) == Some(slot)
    }

    /// Live slots, in no particular order (for invariant checks).
    pub(crate) fn live(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let dense = self.dense.iter().enumerate().filter(|&(_, &s)| s != NIL).map(|(k, &s)| (k as u64, s));
        dense.chain(self.table.iter().filter(|e| e.slot != NIL).map(|e| (e.key, e.slot)))
    }

    /// Checks that table, keys and free list agree and that every key is reachable.
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut live = 0usize;
        for (k, &s) in self.dense.iter().enumerate().filter(|&(_, &s)| s != NIL) {
            live += 1;
            if self.key[s as usize] != k as u64 {
                return Err(format!("block table: slot {s} records key {} not {k}", self.key[s as usize]));
            }
        }
        for e in self.table.iter().filter(|e| e.slot != NIL) {
            if e.key < self.dense_limit {
                return Err(format!("block table: key {} is in the hash part", e.key));
            }
            live += 1;
            if self.key[e.slot as usize] != e.key {
                return Err(format!(
                    "block table: slot {} records key {} not {}",
                    e.slot, self.key[e.slot as usize], e.key
                ));
            }
            if self.get(e.key) != Some(e.slot) {
                return Err(format!("block table: key {} unreachable from its home", e.key));
            }
        }
        if live + self.free.len() != self.key.len() {
            return Err(format!("block table: {live} live + {} free != {} slots", self.free.len(), self.key.len()));
        }
        Ok(())
    }
}

/// Hints the CPU to bring `v[i]` into cache (nothing when `i` is out of bounds). A prefetch
/// changes no state and cannot fault.
#[inline(always)]
pub(crate) fn prefetch<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if i < v.len() {
        // SAFETY: the pointer is in bounds of `v`; a prefetch never faults or writes.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(v.as_ptr().add(i) as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

/// Splits page numbers into blocks of `ppb` pages: a shift and a mask when `ppb` is a power of
/// two (the usual case; a 64-bit division costs tens of cycles), a division otherwise.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockSize {
    ppb: u64,
    /// `log2(ppb)`, or `u32::MAX` when `ppb` is not a power of two.
    shift: u32,
}

impl BlockSize {
    /// Blocks of `ppb ≥ 1` pages.
    pub(crate) fn new(ppb: u64) -> Self {
        BlockSize { ppb, shift: if ppb.is_power_of_two() { ppb.trailing_zeros() } else { u32::MAX } }
    }

    /// The block holding `page`.
    #[inline(always)]
    pub(crate) fn block(self, page: u64) -> u64 {
        if self.shift != u32::MAX { page >> self.shift } else { page / self.ppb }
    }

    /// The offset of `page` in its block.
    #[inline(always)]
    pub(crate) fn offset(self, page: u64) -> u64 {
        if self.shift != u32::MAX { page & (self.ppb - 1) } else { page % self.ppb }
    }
}

/// The `ppb` parameter shared by the block-level policies.
pub(crate) const PPB_DOC: ParamDoc = ParamDoc { key: "ppb", help: "pages per flash block, default 64" };

/// Parses a pages-per-block value.
pub(crate) fn parse_ppb(key: &str, value: &str) -> Result<u32, String> {
    Ok(parse_int(key, value, 1, MAX_PPB)? as u32)
}

#[cfg(test)]
mod table_tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Clone, Copy, Debug)]
    struct Rec([u32; 2]);

    impl Linked<0> for Rec {
        fn links(&self) -> [u32; 2] {
            self.0
        }
        fn links_mut(&mut self) -> &mut [u32; 2] {
            &mut self.0
        }
    }

    proptest! {
        /// The intrusive lists behave like two VecDeques (front = head).
        #[test]
        fn linked_lists_match_vecdeques(ops in proptest::collection::vec((0u8..4, 0usize..2, 0u32..10, 0u32..10), 1..300)) {
            use std::collections::VecDeque;
            let mut recs = vec![Rec([NIL; 2]); 10];
            let mut ends = [Ends::EMPTY; 2];
            let mut model: [VecDeque<u32>; 2] = [VecDeque::new(), VecDeque::new()];
            let find = |m: &[VecDeque<u32>; 2], n: u32| m.iter().position(|q| q.contains(&n));
            for (op, l, n, a) in ops {
                match (op, find(&model, n)) {
                    (0, None) => { link_front::<0, _, _>(&mut recs, &mut ends[l], n); model[l].push_front(n); }
                    (1, None) => { link_back::<0, _, _>(&mut recs, &mut ends[l], n); model[l].push_back(n); }
                    (2, None) => if let Some(la) = find(&model, a) {
                        link_before::<0, _, _>(&mut recs, &mut ends[la], a, n);
                        let i = model[la].iter().position(|&x| x == a).unwrap();
                        model[la].insert(i, n);
                    },
                    (3, Some(ln)) => { unlink::<0, _, _>(&mut recs, &mut ends[ln], n); model[ln].retain(|&x| x != n); }
                    _ => {}
                }
                for l in 0..2 {
                    let got = walk::<0, _>(&recs, &ends[l]).map_err(TestCaseError::fail)?;
                    prop_assert_eq!(got, model[l].iter().copied().collect::<Vec<_>>());
                }
            }
        }

        /// The block table behaves like a HashMap from keys to stable slots, also with keys that
        /// collide in the table (multiples of a large power of two).
        #[test]
        fn block_table_matches_hashmap(ops in proptest::collection::vec((any::<bool>(), 0u64..40), 1..400), low_limit in any::<bool>()) {
            // With the low limit, keys from 5000 up (even k ≥ 5) are hashed too.
            let mut t = if low_limit { BlockTable::with_dense_limit(24, 5000) } else { BlockTable::new(24) };
            let mut m: HashMap<u64, u32> = HashMap::new();
            for (insert, k) in ops {
                // Even k: small keys (direct map); odd k: sparse keys colliding in the hash.
                let key = if k % 2 == 0 { k * 1000 } else { k << 40 | (k % 3) };
                if insert && (m.len() < 24 || m.contains_key(&key)) {
                    let (s, created) = t.get_or_insert(key);
                    prop_assert_eq!(created, !m.contains_key(&key));
                    prop_assert_eq!(*m.entry(key).or_insert(s), s);
                } else if let Some(s) = m.remove(&key) {
                    t.release(s);
                }
                t.check().map_err(TestCaseError::fail)?;
                for (&k, &s) in &m {
                    prop_assert_eq!(t.get(k), Some(s));
                    prop_assert_eq!(t.key(s), k);
                }
                prop_assert_eq!(t.live().count(), m.len());
            }
        }
    }
}
