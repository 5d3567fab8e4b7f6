//! Dense bucketed containers over block numbers, for victim selection and wear levelling.
//!
//! * [`BucketLists`] — intrusive doubly-linked FIFO lists, one per bucket (a valid-page count, an
//!   erase count, ...); every operation is O(1) and allocation-free once the buckets exist.
//! * [`BucketHeaps`] — one indexed binary min-heap per bucket keyed by a `u64` (a time), with
//!   removal of any member in O(log n).

use super::NONE;

/// Links and bucket of one item, kept together so that a list operation touches one record per
/// item.
#[derive(Debug, Clone, Copy)]
struct Node {
    next: u32,
    prev: u32,
    bucket: u32,
}

/// Ends and length of one bucket.
#[derive(Debug, Clone, Copy)]
struct Ends {
    head: u32,
    tail: u32,
    len: u32,
}

const UNLISTED: Node = Node { next: NONE, prev: NONE, bucket: NONE };
const EMPTY: Ends = Ends { head: NONE, tail: NONE, len: 0 };

/// Intrusive doubly-linked lists of items `0..n`, each item in at most one bucket.
#[derive(Debug, Clone)]
pub(crate) struct BucketLists {
    node: Vec<Node>,
    ends: Vec<Ends>,
}

impl BucketLists {
    pub(crate) fn new(items: u32, buckets: u32) -> Self {
        BucketLists { node: vec![UNLISTED; items as usize], ends: vec![EMPTY; buckets as usize] }
    }

    /// Appends `x` (not listed) at the back of bucket `k`, growing the bucket table if needed.
    #[inline]
    pub(crate) fn push_back(&mut self, x: u32, k: u32) {
        debug_assert_eq!(self.node[x as usize].bucket, NONE, "item {x} is already listed");
        let ku = k as usize;
        if ku >= self.ends.len() {
            self.grow(ku);
        }
        let t = self.ends[ku].tail;
        self.node[x as usize] = Node { next: NONE, prev: t, bucket: k };
        if t == NONE {
            self.ends[ku].head = x;
        } else {
            self.node[t as usize].next = x;
        }
        self.ends[ku].tail = x;
        self.ends[ku].len += 1;
    }

    #[cold]
    fn grow(&mut self, k: usize) {
        self.ends.resize(k + 1, EMPTY);
    }

    /// Hints that `x`'s links will be used soon.
    #[inline(always)]
    pub(crate) fn prefetch(&self, x: u32) {
        crate::nand::prefetch(&self.node, x as usize);
    }

    /// Removes `x` from its bucket (no-op if not listed).
    #[inline]
    pub(crate) fn unlink(&mut self, x: u32) {
        let Node { next: n, prev: p, bucket: k } = self.node[x as usize];
        if k == NONE {
            return;
        }
        if p == NONE {
            self.ends[k as usize].head = n;
        } else {
            self.node[p as usize].next = n;
        }
        if n == NONE {
            self.ends[k as usize].tail = p;
        } else {
            self.node[n as usize].prev = p;
        }
        self.node[x as usize] = UNLISTED;
        self.ends[k as usize].len -= 1;
    }

    /// First item of bucket `k`, or `NONE`.
    #[inline]
    pub(crate) fn front(&self, k: u32) -> u32 {
        self.ends.get(k as usize).map_or(NONE, |e| e.head)
    }

    /// Item after `x` in its bucket, or `NONE`.
    #[inline]
    pub(crate) fn next(&self, x: u32) -> u32 {
        self.node[x as usize].next
    }

    /// Number of items in bucket `k`.
    #[inline]
    pub(crate) fn len(&self, k: u32) -> u32 {
        self.ends.get(k as usize).map_or(0, |e| e.len)
    }

    /// Bucket of `x`, or `NONE`.
    #[inline]
    pub(crate) fn bucket_of(&self, x: u32) -> u32 {
        self.node[x as usize].bucket
    }

    /// Walks every bucket and checks links, lengths and bucket tags.
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut seen = 0usize;
        for (k, ends) in self.ends.iter().enumerate() {
            let mut x = ends.head;
            let mut prev = NONE;
            let mut count = 0u32;
            while x != NONE {
                let node = self.node[x as usize];
                if node.bucket != k as u32 {
                    return Err(format!("item {x} found in bucket {k} but tagged {}", node.bucket));
                }
                if node.prev != prev {
                    return Err(format!("item {x} in bucket {k} has a wrong back link"));
                }
                prev = x;
                x = node.next;
                count += 1;
                if count as usize > self.node.len() {
                    return Err(format!("bucket {k} has a cycle"));
                }
            }
            if ends.tail != prev {
                return Err(format!("bucket {k} has a wrong tail"));
            }
            if ends.len != count {
                return Err(format!("bucket {k} counts {} items, holds {count}", ends.len));
            }
            seen += count as usize;
        }
        let tagged = self.node.iter().filter(|n| n.bucket != NONE).count();
        if tagged != seen {
            return Err(format!("{tagged} items tagged with a bucket but {seen} reachable"));
        }
        Ok(())
    }
}

/// One indexed binary min-heap per bucket over items `0..n`, ordered by `(key, item)`.
#[derive(Debug, Clone)]
pub(crate) struct BucketHeaps {
    heaps: Vec<Vec<u32>>,
    pos: Vec<u32>,
    bucket: Vec<u32>,
    key: Vec<u64>,
}

impl BucketHeaps {
    pub(crate) fn new(items: u32, buckets: u32) -> Self {
        let n = items as usize;
        BucketHeaps {
            heaps: vec![Vec::new(); buckets as usize],
            pos: vec![NONE; n],
            bucket: vec![NONE; n],
            key: vec![0; n],
        }
    }

    #[inline]
    fn less(&self, a: u32, b: u32) -> bool {
        (self.key[a as usize], a) < (self.key[b as usize], b)
    }

    #[inline]
    fn set(&mut self, k: usize, i: usize, x: u32) {
        self.heaps[k][i] = x;
        self.pos[x as usize] = i as u32;
    }

    fn sift_up(&mut self, k: usize, mut i: usize) {
        let x = self.heaps[k][i];
        while i > 0 {
            let p = (i - 1) / 2;
            let px = self.heaps[k][p];
            if !self.less(x, px) {
                break;
            }
            self.set(k, i, px);
            i = p;
        }
        self.set(k, i, x);
    }

    fn sift_down(&mut self, k: usize, mut i: usize) {
        let x = self.heaps[k][i];
        let n = self.heaps[k].len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let mut c = l;
            if r < n && self.less(self.heaps[k][r], self.heaps[k][l]) {
                c = r;
            }
            let cx = self.heaps[k][c];
            if !self.less(cx, x) {
                break;
            }
            self.set(k, i, cx);
            i = c;
        }
        self.set(k, i, x);
    }

    /// Adds `x` (not present) to bucket `k` with the given key.
    pub(crate) fn insert(&mut self, x: u32, k: u32, key: u64) {
        debug_assert_eq!(self.bucket[x as usize], NONE);
        self.key[x as usize] = key;
        self.bucket[x as usize] = k;
        let ku = k as usize;
        self.heaps[ku].push(x);
        let i = self.heaps[ku].len() - 1;
        self.pos[x as usize] = i as u32;
        self.sift_up(ku, i);
    }

    /// Removes `x` (no-op if absent).
    pub(crate) fn remove(&mut self, x: u32) {
        let k = self.bucket[x as usize];
        if k == NONE {
            return;
        }
        let ku = k as usize;
        let i = self.pos[x as usize] as usize;
        let last = self.heaps[ku].pop().expect("a listed item's heap is not empty");
        if i < self.heaps[ku].len() {
            self.set(ku, i, last);
            self.sift_down(ku, i);
            let j = self.pos[last as usize] as usize;
            self.sift_up(ku, j);
        }
        self.bucket[x as usize] = NONE;
        self.pos[x as usize] = NONE;
    }

    /// Moves `x` to bucket `k`, keeping its key.
    #[inline]
    pub(crate) fn rebucket(&mut self, x: u32, k: u32) {
        let key = self.key[x as usize];
        self.remove(x);
        self.insert(x, k, key);
    }

    /// Smallest item of bucket `k`, or `NONE`.
    #[inline]
    pub(crate) fn top(&self, k: u32) -> u32 {
        self.heaps[k as usize].first().copied().unwrap_or(NONE)
    }

    /// Key of `x`.
    #[inline]
    pub(crate) fn key(&self, x: u32) -> u64 {
        self.key[x as usize]
    }

    /// Bucket of `x`, or `NONE`.
    #[inline]
    pub(crate) fn bucket_of(&self, x: u32) -> u32 {
        self.bucket[x as usize]
    }

    /// Checks heap order and position indices.
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut seen = 0usize;
        for (k, h) in self.heaps.iter().enumerate() {
            for (i, &x) in h.iter().enumerate() {
                if self.pos[x as usize] != i as u32 || self.bucket[x as usize] != k as u32 {
                    return Err(format!("heap item {x} at {k}/{i} has a wrong index"));
                }
                if i > 0 && self.less(x, h[(i - 1) / 2]) {
                    return Err(format!("heap {k} is out of order at {i}"));
                }
            }
            seen += h.len();
        }
        let tagged = self.bucket.iter().filter(|&&k| k != NONE).count();
        if tagged != seen {
            return Err(format!("{tagged} items tagged with a heap but {seen} stored"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_lists_are_fifo_per_bucket() {
        let mut l = BucketLists::new(6, 2);
        l.push_back(3, 1);
        l.push_back(1, 1);
        l.push_back(4, 5); // grows
        l.push_back(0, 1);
        l.check().unwrap();
        assert_eq!(l.front(1), 3);
        assert_eq!(l.next(3), 1);
        l.unlink(1);
        assert_eq!(l.next(3), 0);
        l.unlink(3);
        assert_eq!(l.front(1), 0);
        assert_eq!((l.len(1), l.len(5), l.len(9)), (1, 1, 0));
        assert_eq!(l.bucket_of(4), 5);
        l.unlink(4);
        l.unlink(4);
        assert_eq!(l.front(5), NONE);
        l.check().unwrap();
    }

    #[test]
    fn bucket_heaps_match_a_sorted_model() {
        // Deterministic pseudo-random operations against a vector model.
        let n = 200u32;
        let mut h = BucketHeaps::new(n, 4);
        let mut model: Vec<Option<(u32, u64)>> = vec![None; n as usize];
        let mut s = 12345u64;
        for _ in 0..20_000 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let x = ((s >> 33) % n as u64) as u32;
            let k = ((s >> 20) % 4) as u32;
            let key = (s >> 40) % 50;
            match (s >> 10) % 3 {
                0 => {
                    if model[x as usize].is_none() {
                        h.insert(x, k, key);
                        model[x as usize] = Some((k, key));
                    }
                }
                1 => {
                    h.remove(x);
                    model[x as usize] = None;
                }
                _ => {
                    if let Some((_, key)) = model[x as usize] {
                        h.rebucket(x, k);
                        model[x as usize] = Some((k, key));
                    }
                }
            }
            for b in 0..4 {
                let want = (0..n)
                    .filter_map(|i| model[i as usize].filter(|m| m.0 == b).map(|m| (m.1, i)))
                    .min()
                    .map_or(NONE, |m| m.1);
                assert_eq!(h.top(b), want);
            }
        }
        h.check().unwrap();
    }
}
