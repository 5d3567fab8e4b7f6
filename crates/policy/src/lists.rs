//! Doubly linked lists threaded through dense arrays.
//!
//! Policies keep their queues here instead of in pointer-linked nodes: a node is a small integer
//! (a frame, or a ghost slot), each node is in at most one of a handful of lists, and every
//! operation is a few array writes: no allocation after construction.
//!
//! Orientation: the *front* of a list is its MRU end, the *back* its LRU end.

use crate::blocks::Ends;
use crate::recs::own;
use crate::replacer::NIL;

/// Identifies one list of a [`FrameLists`].
pub type ListId = u8;

/// Marks a node that is in no list.
pub const NO_LIST: ListId = ListId::MAX;

/// A node's links, owner and mark, kept together so one cache line serves a list operation.
#[derive(Clone, Copy, Debug)]
struct Node {
    prev: u32,
    next: u32,
    owner: ListId,
    /// The user's one bit per node ([`FrameLists::is_marked`]), in the record's padding: a
    /// policy's per-frame flag in the line each list operation touches anyway.
    mark: bool,
}

const UNLINKED: Node = Node { prev: NIL, next: NIL, owner: NO_LIST, mark: false };

/// Several linked lists over the nodes `0..nodes`; a node is in at most one list at a time.
///
/// The operations are written over local slices of the two arrays (`node`, `ends`), passed to
/// `#[inline(always)]` helpers as separate `&mut` slices: a store through one then does not make
/// the compiler reload the other's address or contents, and each node is read once and written
/// once. A node or list number that comes from the caller is bounds-checked once where it comes
/// in; the links and owners the lists wrote themselves name nodes and lists that were checked so,
/// and are indexed without a second check ([`own`]; [`FrameLists::check`], run after every step
/// of the tests, verifies them).
#[derive(Clone, Debug)]
pub struct FrameLists {
    node: Vec<Node>,
    ends: Vec<Ends>,
}

/// Unlinks the node whose links are `p`, `q` from list `list` (its old record is the caller's to
/// rewrite).
#[inline(always)]
fn unlink(nodes: &mut [Node], ends: &mut [Ends], p: u32, q: u32, list: ListId) {
    let e = own(ends, u32::from(list));
    if p != NIL {
        own(nodes, p).next = q;
    } else {
        e.head = q;
    }
    if q != NIL {
        own(nodes, q).prev = p;
    } else {
        e.tail = p;
    }
    e.len -= 1;
}

/// Links `node` (in no list, bounds-checked by the caller) at the front of `list`, whose head was
/// `h`, writing its record once, with `mark`.
#[inline(always)]
fn link_front(nodes: &mut [Node], e: &mut Ends, list: ListId, node: u32, h: u32, mark: bool) {
    *own(nodes, node) = Node { prev: NIL, next: h, owner: list, mark };
    if h != NIL {
        own(nodes, h).prev = node;
    } else {
        e.tail = node;
    }
    e.head = node;
    e.len += 1;
}

impl FrameLists {
    /// `lists` empty lists over nodes `0..nodes`.
    pub fn new(nodes: usize, lists: usize) -> Self {
        assert!(lists < NO_LIST as usize, "too many lists");
        assert!(nodes < NIL as usize, "too many nodes");
        FrameLists { node: vec![UNLINKED; nodes], ends: vec![Ends::EMPTY; lists] }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.node.len()
    }

    /// Number of nodes in `list`.
    #[inline]
    pub fn len(&self, list: ListId) -> usize {
        self.ends[list as usize].len as usize
    }

    /// `true` when `list` is empty.
    #[inline]
    pub fn is_empty(&self, list: ListId) -> bool {
        self.ends[list as usize].len == 0
    }

    /// The list `node` is in, if any.
    #[inline]
    pub fn list_of(&self, node: u32) -> Option<ListId> {
        let o = self.node[node as usize].owner;
        (o != NO_LIST).then_some(o)
    }

    /// `true` when `node` is in `list`.
    #[inline]
    pub fn contains(&self, list: ListId, node: u32) -> bool {
        self.node[node as usize].owner == list
    }

    /// The MRU end of `list`.
    #[inline]
    pub fn front(&self, list: ListId) -> Option<u32> {
        let h = self.ends[list as usize].head;
        (h != NIL).then_some(h)
    }

    /// The LRU end of `list`.
    #[inline]
    pub fn back(&self, list: ListId) -> Option<u32> {
        let t = self.ends[list as usize].tail;
        (t != NIL).then_some(t)
    }

    /// The neighbour of `node` towards the back (LRU end).
    #[inline]
    pub fn next(&self, node: u32) -> Option<u32> {
        let n = self.node[node as usize].next;
        (n != NIL).then_some(n)
    }

    /// The neighbour of `node` towards the front (MRU end).
    #[inline]
    pub fn prev(&self, node: u32) -> Option<u32> {
        let p = self.node[node as usize].prev;
        (p != NIL).then_some(p)
    }

    /// Hints the CPU to bring `node`'s record into cache (changes nothing).
    #[inline(always)]
    pub fn prefetch(&self, node: u32) {
        crate::blocks::prefetch(&self.node, node as usize);
    }

    /// Inserts `node` (in no list) at the front of `list`, its mark cleared.
    #[inline(always)]
    pub fn push_front(&mut self, list: ListId, node: u32) {
        self.push_front_marked(list, node, false);
    }

    /// Inserts `node` (in no list) at the front of `list` with its mark set to `mark` (the record
    /// written once).
    #[inline(always)]
    pub fn push_front_marked(&mut self, list: ListId, node: u32, mark: bool) {
        let (nodes, ends) = (&mut self.node[..], &mut self.ends[..]);
        let e = &mut ends[list as usize];
        debug_assert_eq!(nodes[node as usize].owner, NO_LIST, "node {node} already in a list");
        let _ = &nodes[node as usize];
        let h = e.head;
        link_front(nodes, e, list, node, h, mark);
    }

    /// The mark of `node`: one bit a policy keeps per node, set by [`FrameLists::set_mark`] and
    /// [`FrameLists::push_front_marked`], cleared by the other insertions, kept by the moves and
    /// by [`FrameLists::remove`].
    #[inline]
    pub fn is_marked(&self, node: u32) -> bool {
        self.node[node as usize].mark
    }

    /// Sets the mark of `node` ([`FrameLists::is_marked`]).
    #[inline(always)]
    pub fn set_mark(&mut self, node: u32, mark: bool) {
        self.node[node as usize].mark = mark;
    }

    /// Inserts `node` (in no list) at the back of `list`, its mark cleared.
    #[inline]
    pub fn push_back(&mut self, list: ListId, node: u32) {
        let (nodes, ends) = (&mut self.node[..], &mut self.ends[..]);
        let e = &mut ends[list as usize];
        debug_assert_eq!(nodes[node as usize].owner, NO_LIST, "node {node} already in a list");
        let t = e.tail;
        nodes[node as usize] = Node { prev: t, next: NIL, owner: list, mark: false };
        if t != NIL {
            own(nodes, t).next = node;
        } else {
            e.head = node;
        }
        e.tail = node;
        e.len += 1;
    }

    /// Inserts `node` (in no list) directly in front of `anchor` (towards the MRU end), in
    /// `anchor`'s list, its mark cleared.
    #[inline]
    pub fn insert_before(&mut self, anchor: u32, node: u32) {
        let (nodes, ends) = (&mut self.node[..], &mut self.ends[..]);
        debug_assert_eq!(nodes[node as usize].owner, NO_LIST, "node {node} already in a list");
        let a = nodes[anchor as usize];
        let list = a.owner;
        assert_ne!(list, NO_LIST, "anchor {anchor} is in no list");
        let p = a.prev;
        nodes[node as usize] = Node { prev: p, next: anchor, owner: list, mark: false };
        own(nodes, anchor).prev = node;
        let e = own(ends, u32::from(list));
        if p != NIL {
            own(nodes, p).next = node;
        } else {
            e.head = node;
        }
        e.len += 1;
    }

    /// Unlinks `node` from whatever list it is in; returns that list (`None` if it was in none).
    #[inline(always)]
    pub fn remove(&mut self, node: u32) -> Option<ListId> {
        let (nodes, ends) = (&mut self.node[..], &mut self.ends[..]);
        let Node { prev: p, next: q, owner: list, mark } = nodes[node as usize];
        if list == NO_LIST {
            return None;
        }
        *own(nodes, node) = Node { mark, ..UNLINKED };
        unlink(nodes, ends, p, q, list);
        Some(list)
    }

    /// Moves `node` (in any list or none) to the front of `list`.
    #[inline(always)]
    pub fn move_to_front(&mut self, list: ListId, node: u32) {
        let (nodes, ends) = (&mut self.node[..], &mut self.ends[..]);
        let h = ends[list as usize].head;
        if h == node {
            return;
        }
        let Node { prev: p, next: q, owner: old, mark } = nodes[node as usize];
        if old != NO_LIST {
            // Not `list`'s head, so this leaves `list`'s head where it was (`h`).
            unlink(nodes, ends, p, q, old);
        }
        link_front(nodes, own(ends, u32::from(list)), list, node, h, mark);
    }

    /// Removes and returns the back (LRU end) of `list`.
    #[inline]
    pub fn pop_back(&mut self, list: ListId) -> Option<u32> {
        let t = self.back(list)?;
        self.remove(t);
        Some(t)
    }

    /// Iterates `list` from the back (LRU end) to the front.
    pub fn iter_from_back(&self, list: ListId) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.back(list), move |&n| self.prev(n))
    }

    /// Iterates `list` from the front (MRU end) to the back.
    pub fn iter_from_front(&self, list: ListId) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.front(list), move |&n| self.next(n))
    }

    /// Walks every list and checks links, owners and lengths.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = vec![false; self.nodes()];
        for list in 0..self.ends.len() {
            let mut count = 0usize;
            let mut prev = NIL;
            let mut cur = self.ends[list].head;
            while cur != NIL {
                let c = cur as usize;
                if c >= self.nodes() {
                    return Err(format!("list {list}: node {cur} out of range"));
                }
                if seen[c] {
                    return Err(format!("list {list}: node {cur} appears twice (cycle or shared)"));
                }
                seen[c] = true;
                if self.node[c].owner as usize != list {
                    return Err(format!("list {list}: node {cur} records owner {}", self.node[c].owner));
                }
                if self.node[c].prev != prev {
                    return Err(format!("list {list}: node {cur} has a wrong prev link"));
                }
                count += 1;
                prev = cur;
                cur = self.node[c].next;
            }
            if self.ends[list].tail != prev {
                return Err(format!("list {list}: tail is {} but the walk ends at {prev}", self.ends[list].tail));
            }
            if self.ends[list].len as usize != count {
                return Err(format!("list {list}: length {} but {count} nodes linked", self.ends[list].len));
            }
        }
        for (n, o) in self.node.iter().map(|x| x.owner).enumerate() {
            if o != NO_LIST && !seen[n] {
                return Err(format!("node {n} claims list {o} but is not linked there"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[derive(Debug, Clone)]
    enum Op {
        PushFront(u8, u32),
        PushBack(u8, u32),
        InsertBefore(u32, u32),
        Remove(u32),
        MoveToFront(u8, u32),
        PopBack(u8),
        PushFrontMarked(u8, u32, bool),
        SetMark(u32, bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..3, 0u32..12).prop_map(|(l, n)| Op::PushFront(l, n)),
            (0u8..3, 0u32..12).prop_map(|(l, n)| Op::PushBack(l, n)),
            (0u32..12, 0u32..12).prop_map(|(a, n)| Op::InsertBefore(a, n)),
            (0u32..12).prop_map(Op::Remove),
            (0u8..3, 0u32..12).prop_map(|(l, n)| Op::MoveToFront(l, n)),
            (0u8..3).prop_map(Op::PopBack),
            (0u8..3, 0u32..12, any::<bool>()).prop_map(|(l, n, m)| Op::PushFrontMarked(l, n, m)),
            (0u32..12, any::<bool>()).prop_map(|(n, m)| Op::SetMark(n, m)),
        ]
    }

    proptest! {
        /// The lists behave exactly like three VecDeques (front = MRU), and the marks like an
        /// array of flags that the insertions other than `push_front_marked` clear and the moves
        /// and removals keep.
        #[test]
        fn matches_vecdeque_model(ops in proptest::collection::vec(op(), 1..200)) {
            let mut lists = FrameLists::new(12, 3);
            let mut model: Vec<VecDeque<u32>> = vec![VecDeque::new(); 3];
            let mut marks = [false; 12];
            let find = |model: &Vec<VecDeque<u32>>, n: u32| model.iter().position(|q| q.contains(&n));
            for op in ops {
                match op {
                    Op::PushFront(l, n) => if find(&model, n).is_none() {
                        lists.push_front(l, n);
                        model[l as usize].push_front(n);
                        marks[n as usize] = false;
                    },
                    Op::PushFrontMarked(l, n, m) => if find(&model, n).is_none() {
                        lists.push_front_marked(l, n, m);
                        model[l as usize].push_front(n);
                        marks[n as usize] = m;
                    },
                    Op::SetMark(n, m) => {
                        lists.set_mark(n, m);
                        marks[n as usize] = m;
                    }
                    Op::PushBack(l, n) => if find(&model, n).is_none() {
                        lists.push_back(l, n);
                        model[l as usize].push_back(n);
                        marks[n as usize] = false;
                    },
                    Op::InsertBefore(a, n) => if let (Some(la), None) = (find(&model, a), find(&model, n)) {
                        lists.insert_before(a, n);
                        marks[n as usize] = false;
                        let q = &mut model[la];
                        let i = q.iter().position(|&x| x == a).unwrap();
                        q.insert(i, n);
                    },
                    Op::Remove(n) => {
                        let got = lists.remove(n);
                        let want = find(&model, n);
                        prop_assert_eq!(got.map(|l| l as usize), want);
                        if let Some(l) = want { model[l].retain(|&x| x != n); }
                    }
                    Op::MoveToFront(l, n) => {
                        if let Some(old) = find(&model, n) { model[old].retain(|&x| x != n); }
                        model[l as usize].push_front(n);
                        lists.move_to_front(l, n);
                    }
                    Op::PopBack(l) => prop_assert_eq!(lists.pop_back(l), model[l as usize].pop_back()),
                }
                lists.check().map_err(TestCaseError::fail)?;
                for n in 0..12u32 {
                    prop_assert_eq!(lists.is_marked(n), marks[n as usize], "mark of node {}", n);
                }
                for l in 0..3u8 {
                    let got: Vec<u32> = lists.iter_from_front(l).collect();
                    let want: Vec<u32> = model[l as usize].iter().copied().collect();
                    prop_assert_eq!(&got, &want);
                    let mut back: Vec<u32> = lists.iter_from_back(l).collect();
                    back.reverse();
                    prop_assert_eq!(back, want);
                    prop_assert_eq!(lists.len(l), model[l as usize].len());
                }
            }
        }
    }
}
