//! A binary min-heap over dense ids `0..n` whose keys can change: the priority queue behind
//! LRU-2, MIN and the cluster- and block-level policies.

use crate::replacer::NIL;

/// Min-heap of ids with mutable keys; O(log n) push, change, remove and pop, O(1) peek.
#[derive(Clone, Debug)]
pub struct IndexedHeap<K: Ord + Copy> {
    heap: Vec<u32>,
    keys: Vec<K>,
    pos: Vec<u32>,
}

impl<K: Ord + Copy + Default> IndexedHeap<K> {
    /// An empty heap for ids `0..n`.
    pub fn new(n: usize) -> Self {
        assert!(n < NIL as usize);
        IndexedHeap { heap: Vec::with_capacity(n), keys: vec![K::default(); n], pos: vec![NIL; n] }
    }
}

impl<K: Ord + Copy> IndexedHeap<K> {
    /// Number of ids in the heap.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// `true` when the heap is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// `true` when `id` is in the heap.
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        self.pos[id as usize] != NIL
    }

    /// The key of `id` (meaningful only while `id` is in the heap).
    #[inline]
    pub fn key(&self, id: u32) -> K {
        self.keys[id as usize]
    }

    /// The id with the smallest key (ties: unspecified but deterministic).
    #[inline]
    pub fn peek(&self) -> Option<(u32, K)> {
        self.heap.first().map(|&id| (id, self.keys[id as usize]))
    }

    /// Inserts `id` (not in the heap) with `key`.
    #[inline]
    pub fn push(&mut self, id: u32, key: K) {
        debug_assert!(!self.contains(id), "id {id} already in the heap");
        self.keys[id as usize] = key;
        let i = self.heap.len();
        self.heap.push(id);
        self.pos[id as usize] = i as u32;
        self.sift_up(i);
    }

    /// Inserts `id` with `key`, or changes its key if it is already in the heap.
    #[inline]
    pub fn set(&mut self, id: u32, key: K) {
        if self.contains(id) {
            self.change(id, key);
        } else {
            self.push(id, key);
        }
    }

    /// Changes the key of `id` (in the heap).
    #[inline]
    pub fn change(&mut self, id: u32, key: K) {
        let i = self.pos[id as usize] as usize;
        debug_assert!(i != NIL as usize, "id {id} not in the heap");
        let old = self.keys[id as usize];
        self.keys[id as usize] = key;
        if key < old {
            self.sift_up(i);
        } else {
            self.sift_down(i);
        }
    }

    /// Removes `id` if present; returns whether it was.
    #[inline]
    pub fn remove(&mut self, id: u32) -> bool {
        let i = self.pos[id as usize];
        if i == NIL {
            return false;
        }
        let i = i as usize;
        let last = self.heap.len() - 1;
        self.heap.swap(i, last);
        self.pos[self.heap[i] as usize] = i as u32;
        self.heap.pop();
        self.pos[id as usize] = NIL;
        if i < self.heap.len() {
            self.sift_down(i);
            self.sift_up(i);
        }
        true
    }

    /// Removes and returns the id with the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<(u32, K)> {
        let (id, key) = self.peek()?;
        self.remove(id);
        Some((id, key))
    }

    fn sift_up(&mut self, mut i: usize) {
        let id = self.heap[i];
        let key = self.keys[id as usize];
        while i > 0 {
            let parent = (i - 1) / 2;
            let pid = self.heap[parent];
            if self.keys[pid as usize] <= key {
                break;
            }
            self.heap[i] = pid;
            self.pos[pid as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = id;
        self.pos[id as usize] = i as u32;
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let id = self.heap[i];
        let key = self.keys[id as usize];
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.keys[self.heap[r] as usize] < self.keys[self.heap[l] as usize] { r } else { l };
            let cid = self.heap[c];
            if key <= self.keys[cid as usize] {
                break;
            }
            self.heap[i] = cid;
            self.pos[cid as usize] = i as u32;
            i = c;
        }
        self.heap[i] = id;
        self.pos[id as usize] = i as u32;
    }

    /// Checks the heap order and the position index.
    pub fn check(&self) -> Result<(), String> {
        for (i, &id) in self.heap.iter().enumerate() {
            if self.pos[id as usize] as usize != i {
                return Err(format!("heap: id {id} at {i} records position {}", self.pos[id as usize]));
            }
            if i > 0 && self.keys[self.heap[(i - 1) / 2] as usize] > self.keys[id as usize] {
                return Err(format!("heap: order violated at {i}"));
            }
        }
        let present = self.pos.iter().filter(|&&p| p != NIL).count();
        if present != self.heap.len() {
            return Err(format!("heap: {present} ids marked present but {} stored", self.heap.len()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// Same pops as a BTreeMap-of-(key, id) model, under pushes, changes and removals.
        #[test]
        fn matches_sorted_model(ops in proptest::collection::vec((0u8..4, 0u32..16, 0u32..50), 1..300)) {
            let mut h: IndexedHeap<(u32, u32)> = IndexedHeap::new(16);
            let mut model: BTreeMap<u32, u32> = BTreeMap::new(); // id -> key
            for (op, id, key) in ops {
                let k = (key, id); // tie-break by id so pops are unique
                match op {
                    0 | 1 => { h.set(id, k); model.insert(id, key); }
                    2 => { prop_assert_eq!(h.remove(id), model.remove(&id).is_some()); }
                    _ => {
                        let want = model.iter().map(|(&i, &k)| (k, i)).min();
                        let got = h.pop().map(|(_, k)| k);
                        prop_assert_eq!(got, want);
                        if let Some((_, i)) = want { model.remove(&i); }
                    }
                }
                h.check().map_err(TestCaseError::fail)?;
                prop_assert_eq!(h.len(), model.len());
            }
        }
    }
}
