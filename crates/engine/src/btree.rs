//! A B+-tree of `u32` keys and fixed-size values on the buffer manager.
//!
//! Records live in the leaves, which are chained left to right for range scans; inner nodes hold
//! separator keys and child page numbers. Operations: point lookup ([`BTree::get`]), insert
//! with node splits ([`BTree::insert`]), update in place ([`BTree::update`]), range scan
//! ([`BTree::scan`]) and range update ([`BTree::update_range`]), and a bulk loader
//! ([`BTree::bulk_load`]) that fills leaves to a given fraction (the CFDC paper's database: one
//! million records of 4-byte keys and 256-byte values, leaves half full). There is no delete.
//!
//! # Node layout
//!
//! In the page payload (after the page file's 32-byte header), little-endian:
//!
//! | offset | bytes | field |
//! |-------:|------:|-------|
//! | 0  | 1 | kind: 1 = leaf, 2 = inner |
//! | 1  | 1 | reserved |
//! | 2  | 2 | count: records (leaf) or keys (inner) |
//! | 4  | 2 | level: 0 for leaves, parent = child + 1 |
//! | 6  | 2 | reserved |
//! | 8  | 8 | leaf: next leaf's page number (0 = last leaf); inner: 0 |
//! | 16 | … | leaf: `keys[cap]` (u32), then `values[cap]` (`value_size` bytes each) |
//! | 16 | … | inner: `children[cap + 1]` (u64), then `keys[cap]` (u32) |
//!
//! Child `i` of an inner node holds the keys `k` with `keys[i−1] <= k < keys[i]`. With 4 KiB
//! pages and 256-byte values a leaf holds 15 records and an inner node 336 keys.
//!
//! The tree's metadata — root page, height, value size, record count — is kept in the file
//! header's application area ([`crate::page::APP_BYTES`] bytes): magic `b"BTRE"`, format (u32),
//! value size (u32), height (u32, 1 = the root is a leaf), root page (u64), records (u64).
//!
//! # Concurrency and durability
//!
//! A tree-level reader-writer lock guards the *shape* (root and height):
//!
//! * Lookups, updates, scans, range updates and inserts into a leaf with room take it shared.
//!   The shape cannot change meanwhile, so a descent reads one node at a time — it releases the
//!   parent's latch before fixing the child — and latches the leaf shared (reads) or exclusive
//!   (updates, inserts). Scans move to the next leaf after releasing the current one.
//! * An insert into a full leaf releases everything, takes the lock exclusive (no other tree
//!   operation runs then) and descends again, recording the path, then splits bottom-up.
//!
//! Every change is one buffer-manager operation ([`crate::buffer::Op`]). In a database with a
//! write-ahead log an operation holds every page it changes until it commits — a split holds
//! the nodes it splits and their new siblings, a range update every leaf it visits, taken left
//! to right along the leaf chain — so each insert (splits included), update and range update
//! is atomic and, when the call returns `Ok`, durable (acknowledged). Without a log, pages are
//! released as the operation moves on (at most the node being split and its new sibling, one
//! leaf of a range update at a time), as in the paper's setup: a range update is then atomic
//! per leaf only, and nothing survives a crash.
//!
//! Lock order: tree lock → page latches (in leaf-chain order, or under the exclusive tree lock)
//! → the buffer manager's locks. There is no lock manager: these are the bottom layers of a
//! DBMS, as in the CFDC paper's experiments. Every call fixes exactly the pages it descends
//! through and visits; a range update fixes every leaf it visits for writing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use flashbuf_flash::PageStore;
use flashbuf_policy::AnyPolicy;

use crate::buffer::{BufferError, BufferManager, BufferPolicy};
use crate::page::{APP_BYTES, FileHeader, PageFile};

const KIND_LEAF: u8 = 1;
const KIND_INNER: u8 = 2;
const NODE_HEADER: usize = 16;
const TREE_MAGIC: [u8; 4] = *b"BTRE";
const TREE_FORMAT: u32 = 1;
const META_VALUE_SIZE: usize = 8;
const META_HEIGHT: usize = 12;
const META_ROOT: usize = 16;
const META_RECORDS: usize = 24;
const META_MIN_FILL: usize = 32;

/// The tree's metadata as the application area of the file header.
fn tree_meta(layout: &Layout, root: u64, height: u32, records: u64, min_fill: u32) -> [u8; APP_BYTES] {
    let mut app = [0u8; APP_BYTES];
    app[..4].copy_from_slice(&TREE_MAGIC);
    wr_u32(&mut app, 4, TREE_FORMAT);
    wr_u32(&mut app, META_VALUE_SIZE, layout.value_size as u32);
    wr_u32(&mut app, META_HEIGHT, height);
    wr_u64(&mut app, META_ROOT, root);
    wr_u64(&mut app, META_RECORDS, records);
    wr_u32(&mut app, META_MIN_FILL, min_fill);
    app
}

/// A change of the metadata that counts `n` more records.
fn add_records(n: u64) -> impl FnOnce(&mut [u8; APP_BYTES]) {
    move |app| {
        let records = rd_u64(app, META_RECORDS);
        wr_u64(app, META_RECORDS, records + n);
    }
}

/// What the B+-tree can report as going wrong.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// The buffer manager (or the page file below it) failed.
    #[error(transparent)]
    Buffer(#[from] BufferError),
    /// A node is malformed.
    #[error("page {page}: {message}")]
    Corrupt {
        /// The node's page.
        page: u64,
        /// What is wrong.
        message: String,
    },
    /// A value of the wrong size was given.
    #[error("values are {expected} bytes, got {got}")]
    ValueSize {
        /// The tree's value size.
        expected: usize,
        /// The size given.
        got: usize,
    },
    /// Bulk-loaded keys must be strictly ascending.
    #[error("bulk load: key {key} follows key {previous}; keys must be strictly ascending")]
    KeyOrder {
        /// The key before.
        previous: u32,
        /// The offending key.
        key: u32,
    },
    /// The database holds no B+-tree, or another one.
    #[error("{0}")]
    NotATree(String),
    /// Invalid parameters (value size, fill fractions, a non-empty database for a new tree).
    #[error("invalid B+-tree configuration: {0}")]
    Config(String),
}

/// Node capacities for a page payload and value size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Bytes per value.
    pub value_size: usize,
    /// Records per leaf.
    pub leaf_cap: usize,
    /// Keys per inner node (children: one more).
    pub inner_cap: usize,
}

impl Layout {
    /// The layout for pages with `payload` bytes after the page header.
    pub fn new(payload: usize, value_size: usize) -> Result<Self, TreeError> {
        if value_size == 0 {
            return Err(TreeError::Config("the value size must be at least 1 byte".into()));
        }
        let room = payload.saturating_sub(NODE_HEADER);
        let leaf_cap = (room / value_size.saturating_add(4)).min(u16::MAX as usize);
        let inner_cap = (room.saturating_sub(8) / 12).min(u16::MAX as usize - 1);
        if leaf_cap < 2 {
            return Err(TreeError::Config(format!(
                "{value_size}-byte values leave room for {leaf_cap} record(s) per {payload}-byte page payload; a \
                 leaf needs at least 2"
            )));
        }
        if inner_cap < 3 {
            return Err(TreeError::Config(format!("a {payload}-byte page payload holds fewer than 3 keys")));
        }
        Ok(Layout { value_size, leaf_cap, inner_cap })
    }

    /// The fewest records a leaf can hold in a tree bulk-loaded with `leaf_fill` (or, for
    /// `None`, created empty), except its last bulk-loaded leaf and a root that is the only
    /// leaf: leaves only grow (there is no delete), bulk-loaded ones start at their fill, and a
    /// split leaves at least `(capacity + 1) / 2` records on each side.
    pub fn min_leaf_records(&self, leaf_fill: Option<f64>) -> u32 {
        let split = (self.leaf_cap as u32).div_ceil(2).max(1);
        match leaf_fill {
            Some(f) => (fill_count(self.leaf_cap, f, 1) as u32).min(split),
            None => split,
        }
    }

    /// The most leaves a range operation of `limit` records can visit when every leaf but two
    /// holds at least `min_fill` records (0: unknown, then every leaf may hold one): the first
    /// leaf may hold none of the range, the last only part of it, and one leaf may be short.
    pub fn range_leaves(limit: u64, min_fill: u32) -> u64 {
        let every = limit.saturating_add(1);
        if min_fill == 0 { every } else { limit.div_ceil(min_fill as u64).saturating_add(3).min(every) }
    }

    /// Pages a bulk load of `records` records with the given fill fractions allocates (the file
    /// header not included).
    pub fn pages_for(&self, records: u64, leaf_fill: f64, inner_fill: f64) -> u64 {
        let per_leaf = fill_count(self.leaf_cap, leaf_fill, 1) as u64;
        let fanout = fill_count(self.inner_cap + 1, inner_fill, 2) as u64;
        let mut nodes = records.div_ceil(per_leaf).max(1);
        let mut total = nodes;
        while nodes > 1 {
            nodes = nodes.div_ceil(fanout);
            total += nodes;
        }
        total
    }
}

/// `floor(cap · fill)` clamped to `min..=cap`.
fn fill_count(cap: usize, fill: f64, min: usize) -> usize {
    ((cap as f64 * fill).floor() as usize).clamp(min, cap)
}

/// The shape the tree lock protects.
struct Shape {
    root: u64,
    height: u32,
}

/// A B+-tree owning its buffer manager.
pub struct BTree<S: PageStore, P: BufferPolicy = AnyPolicy> {
    /// Always `Some` until `close` takes it.
    bm_slot: Option<BufferManager<S, P>>,
    shape: RwLock<Shape>,
    layout: Layout,
    records: AtomicU64,
    /// See [`Layout::min_leaf_records`] (0: not recorded).
    min_fill: u32,
}

// ------------------------------------------------------------------------------------------
// Node accessors on payload bytes.
// ------------------------------------------------------------------------------------------

#[inline]
fn rd_u16(p: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([p[off], p[off + 1]])
}
#[inline]
fn rd_u32(p: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(p[off..off + 4].try_into().expect("4 bytes"))
}
#[inline]
fn rd_u64(p: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(p[off..off + 8].try_into().expect("8 bytes"))
}
#[inline]
fn wr_u16(p: &mut [u8], off: usize, v: u16) {
    p[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
#[inline]
fn wr_u32(p: &mut [u8], off: usize, v: u32) {
    p[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
#[inline]
fn wr_u64(p: &mut [u8], off: usize, v: u64) {
    p[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

#[inline]
fn count(p: &[u8]) -> usize {
    rd_u16(p, 2) as usize
}
#[inline]
fn next_leaf(p: &[u8]) -> u64 {
    rd_u64(p, 8)
}

fn init_node(p: &mut [u8], kind: u8, level: u16) {
    p[..NODE_HEADER].fill(0);
    p[0] = kind;
    wr_u16(p, 4, level);
}

impl Layout {
    #[inline]
    fn leaf_key(&self, p: &[u8], i: usize) -> u32 {
        rd_u32(p, NODE_HEADER + 4 * i)
    }
    #[inline]
    fn leaf_value_off(&self, i: usize) -> usize {
        NODE_HEADER + 4 * self.leaf_cap + i * self.value_size
    }
    /// First index whose key is `>= key` (the record count when none).
    #[inline]
    fn leaf_lower_bound(&self, p: &[u8], key: u32) -> usize {
        let (mut lo, mut hi) = (0, count(p));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.leaf_key(p, mid) < key { lo = mid + 1 } else { hi = mid }
        }
        lo
    }
    #[inline]
    fn inner_child(&self, p: &[u8], i: usize) -> u64 {
        rd_u64(p, NODE_HEADER + 8 * i)
    }
    #[inline]
    fn inner_key(&self, p: &[u8], i: usize) -> u32 {
        rd_u32(p, NODE_HEADER + 8 * (self.inner_cap + 1) + 4 * i)
    }
    /// Index of the child that holds `key`: the number of keys `<= key`.
    #[inline]
    fn inner_slot(&self, p: &[u8], key: u32) -> usize {
        let (mut lo, mut hi) = (0, count(p));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.inner_key(p, mid) <= key { lo = mid + 1 } else { hi = mid }
        }
        lo
    }

    fn write_leaf(&self, p: &mut [u8], records: &[(u32, &[u8])], next: u64) {
        init_node(p, KIND_LEAF, 0);
        wr_u16(p, 2, records.len() as u16);
        wr_u64(p, 8, next);
        for (i, (k, v)) in records.iter().enumerate() {
            wr_u32(p, NODE_HEADER + 4 * i, *k);
            let off = self.leaf_value_off(i);
            p[off..off + self.value_size].copy_from_slice(v);
        }
    }

    fn write_inner(&self, p: &mut [u8], level: u16, children: &[u64], keys: &[u32]) {
        debug_assert_eq!(children.len(), keys.len() + 1);
        init_node(p, KIND_INNER, level);
        wr_u16(p, 2, keys.len() as u16);
        for (i, c) in children.iter().enumerate() {
            wr_u64(p, NODE_HEADER + 8 * i, *c);
        }
        let base = NODE_HEADER + 8 * (self.inner_cap + 1);
        for (i, k) in keys.iter().enumerate() {
            wr_u32(p, base + 4 * i, *k);
        }
    }

    /// Inserts a record at index `at` of a leaf with room.
    fn leaf_insert_at(&self, p: &mut [u8], at: usize, key: u32, value: &[u8]) {
        let n = count(p);
        debug_assert!(n < self.leaf_cap);
        let kb = NODE_HEADER + 4 * at;
        p.copy_within(kb..NODE_HEADER + 4 * n, kb + 4);
        wr_u32(p, kb, key);
        let vs = self.value_size;
        let vb = self.leaf_value_off(at);
        p.copy_within(vb..self.leaf_value_off(n), vb + vs);
        p[vb..vb + vs].copy_from_slice(value);
        wr_u16(p, 2, (n + 1) as u16);
    }

    /// Checks that `p` is a node of the expected kind and level with a sane count.
    fn check_node(&self, page: u64, p: &[u8], level: u32) -> Result<(), TreeError> {
        let (want_kind, cap) = if level == 0 { (KIND_LEAF, self.leaf_cap) } else { (KIND_INNER, self.inner_cap) };
        let corrupt = |message: String| Err(TreeError::Corrupt { page, message });
        if p[0] != want_kind {
            return corrupt(format!(
                "expected a {} node at level {level}, found kind {}",
                if level == 0 { "leaf" } else { "inner" },
                p[0]
            ));
        }
        if rd_u16(p, 4) as u32 != level {
            return corrupt(format!("expected level {level}, found {}", rd_u16(p, 4)));
        }
        if count(p) > cap || (level > 0 && count(p) == 0) {
            return corrupt(format!("count {} outside 0..={cap}", count(p)));
        }
        Ok(())
    }
}

// ------------------------------------------------------------------------------------------
// The tree.
// ------------------------------------------------------------------------------------------

impl<S: PageStore, P: BufferPolicy> BTree<S, P> {
    /// A new, empty tree with `value_size`-byte values in the empty database of `bm`.
    pub fn create(bm: BufferManager<S, P>, value_size: usize) -> Result<Self, TreeError> {
        let layout = Layout::new(bm.payload_size(), value_size)?;
        if bm.page_count() != 1 {
            return Err(TreeError::Config(format!(
                "the database is not empty ({} pages); a new tree needs an empty one",
                bm.page_count()
            )));
        }
        let root = {
            let mut op = bm.begin(1)?;
            let s = op.new_page()?;
            layout.write_leaf(op.page_mut(s), &[], 0);
            let root = op.page_no(s);
            let app = tree_meta(&layout, root, 1, 0, layout.min_leaf_records(None));
            let lsn = op.commit_with_app(|a| *a = app)?;
            bm.wait_durable(lsn)?;
            root
        };
        Ok(BTree {
            bm_slot: Some(bm),
            shape: RwLock::new(Shape { root, height: 1 }),
            layout,
            records: AtomicU64::new(0),
            min_fill: layout.min_leaf_records(None),
        })
    }

    /// Opens the tree stored in the database of `bm`.
    pub fn open(bm: BufferManager<S, P>) -> Result<Self, TreeError> {
        let app = bm.app_meta();
        if app[..4] != TREE_MAGIC {
            return Err(TreeError::NotATree("the database holds no B+-tree (no tree metadata in its header)".into()));
        }
        let format = rd_u32(&app, 4);
        if format != TREE_FORMAT {
            return Err(TreeError::NotATree(format!("B+-tree format {format} is not supported")));
        }
        let value_size = rd_u32(&app, META_VALUE_SIZE) as usize;
        let height = rd_u32(&app, META_HEIGHT);
        let root = rd_u64(&app, META_ROOT);
        let records = rd_u64(&app, META_RECORDS);
        let min_fill = rd_u32(&app, META_MIN_FILL);
        let layout = Layout::new(bm.payload_size(), value_size)?;
        if height == 0 || root == 0 || root >= bm.page_count() {
            return Err(TreeError::NotATree(format!("bad tree metadata: root {root}, height {height}")));
        }
        Ok(BTree {
            bm_slot: Some(bm),
            shape: RwLock::new(Shape { root, height }),
            layout,
            records: AtomicU64::new(records),
            min_fill,
        })
    }

    /// Bulk-loads `count` records into a new tree in the empty database of `bm`. `record(i,
    /// value)` fills the value of the `i`-th record and returns its key; keys must be strictly
    /// ascending. Leaves receive `floor(leaf_fill · capacity)` records (at least 1), inner nodes
    /// `floor(inner_fill · (capacity + 1))` children (at least 2); the last node of a level may
    /// have fewer (but an inner node never fewer than 2). Leaves take consecutive page numbers,
    /// then each inner level in turn.
    ///
    /// The pages are not logged: in a database with a log the load ends with a checkpoint
    /// ([`BufferManager::flush_all`]), which makes the whole tree durable and visible at once; a
    /// crash before it leaves the database empty.
    pub fn bulk_load(
        bm: BufferManager<S, P>,
        value_size: usize,
        count: u64,
        leaf_fill: f64,
        inner_fill: f64,
        mut record: impl FnMut(u64, &mut [u8]) -> u32,
    ) -> Result<Self, TreeError> {
        for (what, f) in [("leaf", leaf_fill), ("inner", inner_fill)] {
            if !(f > 0.0 && f <= 1.0) {
                return Err(TreeError::Config(format!("the {what} fill fraction must be in (0, 1], got {f}")));
            }
        }
        let layout = Layout::new(bm.payload_size(), value_size)?;
        if bm.page_count() != 1 {
            return Err(TreeError::Config(format!(
                "the database is not empty ({} pages); a bulk load needs an empty one",
                bm.page_count()
            )));
        }
        let per_leaf = fill_count(layout.leaf_cap, leaf_fill, 1);
        let fanout = fill_count(layout.inner_cap + 1, inner_fill, 2);
        // (first key, page) of every node of the level being built.
        let mut level: Vec<(u32, u64)> = Vec::with_capacity(count.div_ceil(per_leaf as u64) as usize);
        let mut value = vec![0u8; value_size];
        let mut previous: Option<u32> = None;
        let mut leaf = bm.new_page_unlogged()?;
        init_node(&mut leaf, KIND_LEAF, 0);
        let mut n = 0usize;
        for i in 0..count {
            if n == per_leaf {
                let mut next = bm.new_page_unlogged()?;
                init_node(&mut next, KIND_LEAF, 0);
                wr_u64(&mut leaf, 8, next.page());
                wr_u16(&mut leaf, 2, n as u16);
                drop(std::mem::replace(&mut leaf, next));
                n = 0;
            }
            let key = record(i, &mut value);
            if let Some(prev) = previous
                && key <= prev
            {
                return Err(TreeError::KeyOrder { previous: prev, key });
            }
            previous = Some(key);
            if n == 0 {
                level.push((key, leaf.page()));
            }
            wr_u32(&mut leaf, NODE_HEADER + 4 * n, key);
            let off = layout.leaf_value_off(n);
            leaf[off..off + value_size].copy_from_slice(&value);
            n += 1;
        }
        wr_u16(&mut leaf, 2, n as u16);
        if level.is_empty() {
            level.push((0, leaf.page()));
        }
        drop(leaf);

        let mut height = 1u32;
        let mut children: Vec<u64> = Vec::with_capacity(fanout);
        let mut keys: Vec<u32> = Vec::with_capacity(fanout);
        while level.len() > 1 {
            let mut upper = Vec::with_capacity(level.len().div_ceil(fanout));
            let total = level.len();
            let mut start = 0;
            while start < total {
                let mut take = fanout.min(total - start);
                // Never leave a single child for the last node: split the last two evenly.
                if total - start - take == 1 {
                    if take < layout.inner_cap + 1 {
                        take += 1;
                    } else {
                        take = take.div_ceil(2);
                    }
                }
                let group = &level[start..start + take];
                children.clear();
                keys.clear();
                children.extend(group.iter().map(|&(_, p)| p));
                keys.extend(group[1..].iter().map(|&(k, _)| k));
                let mut node = bm.new_page_unlogged()?;
                layout.write_inner(&mut node, height as u16, &children, &keys);
                upper.push((group[0].0, node.page()));
                start += take;
            }
            level = upper;
            height += 1;
        }
        let root = level[0].1;
        let min_fill = layout.min_leaf_records(Some(leaf_fill));
        bm.set_app_meta(&tree_meta(&layout, root, height, count, min_fill));
        if bm.has_log() {
            bm.flush_all()?;
        }
        Ok(BTree {
            bm_slot: Some(bm),
            shape: RwLock::new(Shape { root, height }),
            layout,
            records: AtomicU64::new(count),
            min_fill,
        })
    }

    /// Closes the buffer manager (everything reaches the store); returns the page file and its
    /// header.
    pub fn close(mut self) -> Result<(PageFile<S>, FileHeader), TreeError> {
        let bm = self.bm_slot.take().expect("present until close");
        Ok(bm.close()?)
    }

    /// Writes every dirty page (a checkpoint; see [`BufferManager::flush_all`]).
    pub fn flush(&self) -> Result<(), TreeError> {
        Ok(self.buffer().flush_all()?)
    }

    /// The buffer manager (statistics, invariants).
    #[inline]
    pub fn buffer(&self) -> &BufferManager<S, P> {
        self.bm_slot.as_ref().expect("present until close")
    }

    /// Node capacities.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Bytes per value.
    pub fn value_size(&self) -> usize {
        self.layout.value_size
    }

    /// Number of records.
    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Acquire)
    }

    /// Levels (1: the root is a leaf).
    pub fn height(&self) -> u32 {
        self.read_shape().height
    }

    fn read_shape(&self) -> RwLockReadGuard<'_, Shape> {
        self.shape.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_shape(&self) -> RwLockWriteGuard<'_, Shape> {
        self.shape.write().unwrap_or_else(|e| e.into_inner())
    }

    fn check_value(&self, value: &[u8]) -> Result<(), TreeError> {
        if value.len() != self.layout.value_size {
            return Err(TreeError::ValueSize { expected: self.layout.value_size, got: value.len() });
        }
        Ok(())
    }

    /// Descends (with the shape lock held by the caller) to the leaf that holds `key`, reading
    /// one inner node at a time; returns the leaf's page number.
    fn descend(&self, shape: &Shape, key: u32) -> Result<u64, TreeError> {
        let mut page = shape.root;
        for level in (1..shape.height).rev() {
            let node = self.buffer().read(page)?;
            self.layout.check_node(page, &node, level)?;
            page = self.layout.inner_child(&node, self.layout.inner_slot(&node, key));
        }
        Ok(page)
    }

    /// Copies the value of `key` into `out`; `false` when the key is absent.
    pub fn get(&self, key: u32, out: &mut [u8]) -> Result<bool, TreeError> {
        self.check_value(out)?;
        let shape = self.read_shape();
        let page = self.descend(&shape, key)?;
        let leaf = self.buffer().read(page)?;
        self.layout.check_node(page, &leaf, 0)?;
        let i = self.layout.leaf_lower_bound(&leaf, key);
        if i < count(&leaf) && self.layout.leaf_key(&leaf, i) == key {
            let off = self.layout.leaf_value_off(i);
            out.copy_from_slice(&leaf[off..off + self.layout.value_size]);
            return Ok(true);
        }
        Ok(false)
    }

    /// Replaces the value of `key`; `false` (nothing changed) when the key is absent. The leaf
    /// is fixed for writing either way. With a log, the update is acknowledged — durable — when
    /// this returns `Ok`.
    pub fn update(&self, key: u32, value: &[u8]) -> Result<bool, TreeError> {
        self.check_value(value)?;
        let shape = self.read_shape();
        let page = self.descend(&shape, key)?;
        let mut op = self.buffer().begin(1)?;
        let s = op.write(page)?;
        let l = self.layout;
        let leaf = op.page_mut(s);
        l.check_node(page, leaf, 0)?;
        let i = l.leaf_lower_bound(leaf, key);
        if !(i < count(leaf) && l.leaf_key(leaf, i) == key) {
            return Ok(false);
        }
        let off = l.leaf_value_off(i);
        leaf[off..off + l.value_size].copy_from_slice(value);
        let lsn = op.commit()?;
        drop(shape);
        self.buffer().wait_durable(lsn)?;
        Ok(true)
    }

    /// Inserts a record; `false` (nothing changed) when the key exists. With a log, the insert
    /// (with any split it causes) is atomic, and acknowledged when this returns `Ok`.
    pub fn insert(&self, key: u32, value: &[u8]) -> Result<bool, TreeError> {
        self.check_value(value)?;
        {
            let shape = self.read_shape();
            let page = self.descend(&shape, key)?;
            let mut op = self.buffer().begin(1)?;
            let s = op.write(page)?;
            let l = self.layout;
            let leaf = op.page_mut(s);
            l.check_node(page, leaf, 0)?;
            let i = l.leaf_lower_bound(leaf, key);
            if i < count(leaf) && l.leaf_key(leaf, i) == key {
                return Ok(false);
            }
            if count(leaf) < l.leaf_cap {
                l.leaf_insert_at(leaf, i, key, value);
                let lsn = op.commit_with_app(add_records(1))?;
                self.records.fetch_add(1, Ordering::AcqRel);
                drop(shape);
                self.buffer().wait_durable(lsn)?;
                return Ok(true);
            }
            // Full: the operation ends unchanged and the split path starts over.
        }
        self.insert_with_split(key, value)
    }

    /// The insert path that may split: the shape lock exclusive, the path recorded, every page
    /// it changes held by one operation.
    fn insert_with_split(&self, key: u32, value: &[u8]) -> Result<bool, TreeError> {
        let mut shape = self.write_shape();
        let l = self.layout;
        let bm = self.buffer();
        // (page, child slot taken) of every inner node on the way down.
        let mut path: Vec<(u64, usize)> = Vec::with_capacity(shape.height as usize);
        let mut page = shape.root;
        for level in (1..shape.height).rev() {
            let node = bm.read(page)?;
            l.check_node(page, &node, level)?;
            let slot = l.inner_slot(&node, key);
            path.push((page, slot));
            page = l.inner_child(&node, slot);
        }
        // The leaf and its new sibling, each parent and its new sibling, and a new root.
        let mut op = bm.begin(2 * shape.height as u64 + 1)?;
        let ls = op.write(page)?;
        let (mut sep, mut right) = {
            let leaf = op.page(ls);
            l.check_node(page, leaf, 0)?;
            let i = l.leaf_lower_bound(leaf, key);
            let n = count(leaf);
            if i < n && l.leaf_key(leaf, i) == key {
                return Ok(false);
            }
            if n < l.leaf_cap {
                l.leaf_insert_at(op.page_mut(ls), i, key, value);
                let lsn = op.commit_with_app(add_records(1))?;
                self.records.fetch_add(1, Ordering::AcqRel);
                drop(shape);
                bm.wait_durable(lsn)?;
                return Ok(true);
            }
            // A split allocates at most one page per level plus a new root: make sure they
            // exist before changing anything, so that a full store leaves the tree intact.
            let free = bm.capacity_pages() - bm.page_count();
            if free < shape.height as u64 + 1 {
                return Err(BufferError::Full { capacity_pages: bm.capacity_pages() }.into());
            }
            // Split: the n + 1 records in order, the left half stays.
            let mut recs: Vec<(u32, Vec<u8>)> = (0..n)
                .map(|j| {
                    let off = l.leaf_value_off(j);
                    (l.leaf_key(leaf, j), leaf[off..off + l.value_size].to_vec())
                })
                .collect();
            recs.insert(i, (key, value.to_vec()));
            let mid = recs.len() / 2;
            let ns = op.new_page()?;
            let new_no = op.page_no(ns);
            let refs: Vec<(u32, &[u8])> = recs.iter().map(|(k, v)| (*k, v.as_slice())).collect();
            let (leaf, new) = op.pages_mut(ls, ns);
            l.write_leaf(new, &refs[mid..], next_leaf(leaf));
            l.write_leaf(leaf, &refs[..mid], new_no);
            op.release(ls);
            op.release(ns);
            (recs[mid].0, new_no)
        };
        // Insert (sep, right) into the parents, splitting them as needed.
        while let Some((parent, slot)) = path.pop() {
            let ps = op.write(parent)?;
            let level = shape.height - (path.len() as u32 + 1);
            let node = op.page(ps);
            l.check_node(parent, node, level)?;
            let n = count(node);
            let mut children: Vec<u64> = (0..=n).map(|j| l.inner_child(node, j)).collect();
            let mut keys: Vec<u32> = (0..n).map(|j| l.inner_key(node, j)).collect();
            keys.insert(slot, sep);
            children.insert(slot + 1, right);
            if keys.len() <= l.inner_cap {
                l.write_inner(op.page_mut(ps), level as u16, &children, &keys);
                op.release(ps);
                let lsn = op.commit_with_app(add_records(1))?;
                self.records.fetch_add(1, Ordering::AcqRel);
                drop(shape);
                bm.wait_durable(lsn)?;
                return Ok(true);
            }
            let mid = keys.len() / 2;
            let ns = op.new_page()?;
            let new_no = op.page_no(ns);
            let (node, new) = op.pages_mut(ps, ns);
            l.write_inner(new, level as u16, &children[mid + 1..], &keys[mid + 1..]);
            l.write_inner(node, level as u16, &children[..=mid], &keys[..mid]);
            op.release(ps);
            op.release(ns);
            sep = keys[mid];
            right = new_no;
        }
        // The root split: a new root above it.
        let rs = op.new_page()?;
        let root = op.page_no(rs);
        let height = shape.height + 1;
        l.write_inner(op.page_mut(rs), shape.height as u16, &[shape.root, right], &[sep]);
        let lsn = op.commit_with_app(|app| {
            add_records(1)(app);
            wr_u32(app, META_HEIGHT, height);
            wr_u64(app, META_ROOT, root);
        })?;
        shape.root = root;
        shape.height = height;
        self.records.fetch_add(1, Ordering::AcqRel);
        drop(shape);
        bm.wait_durable(lsn)?;
        Ok(true)
    }

    /// Visits up to `limit` records with keys `>= start` in key order, calling `visit(key,
    /// value)`; stops early when `visit` returns `false`. Returns the number visited.
    pub fn scan(
        &self,
        start: u32,
        limit: usize,
        mut visit: impl FnMut(u32, &[u8]) -> bool,
    ) -> Result<usize, TreeError> {
        if limit == 0 {
            return Ok(0);
        }
        let shape = self.read_shape();
        let mut page = self.descend(&shape, start)?;
        let l = self.layout;
        let mut seen = 0;
        let mut first = true;
        loop {
            let leaf = self.buffer().read(page)?;
            l.check_node(page, &leaf, 0)?;
            let mut i = if first { l.leaf_lower_bound(&leaf, start) } else { 0 };
            first = false;
            while i < count(&leaf) {
                let off = l.leaf_value_off(i);
                seen += 1;
                if !visit(l.leaf_key(&leaf, i), &leaf[off..off + l.value_size]) || seen == limit {
                    return Ok(seen);
                }
                i += 1;
            }
            page = next_leaf(&leaf);
            if page == 0 {
                return Ok(seen);
            }
        }
    }

    /// Calls `change(key, value)` on up to `limit` records with keys `>= start` in key order,
    /// fixing every leaf it visits for writing; returns the number changed. With a log, the
    /// whole range update is one operation: atomic, holding every leaf it visits until it
    /// commits, and acknowledged when this returns `Ok`. (It may change up to
    /// [`Layout::range_leaves`] leaves, which the buffer and the log must have room for.)
    pub fn update_range(
        &self,
        start: u32,
        limit: usize,
        mut change: impl FnMut(u32, &mut [u8]),
    ) -> Result<usize, TreeError> {
        if limit == 0 {
            return Ok(0);
        }
        let shape = self.read_shape();
        let mut page = self.descend(&shape, start)?;
        let l = self.layout;
        let bm = self.buffer();
        let max_leaves = Layout::range_leaves(limit as u64, self.min_fill).min(bm.page_count());
        let mut op = bm.begin(max_leaves)?;
        let mut done = 0;
        let mut first = true;
        loop {
            let s = op.write(page)?;
            let leaf = op.page_mut(s);
            l.check_node(page, leaf, 0)?;
            let mut i = if first { l.leaf_lower_bound(leaf, start) } else { 0 };
            first = false;
            while i < count(leaf) && done < limit {
                let key = l.leaf_key(leaf, i);
                let off = l.leaf_value_off(i);
                change(key, &mut leaf[off..off + l.value_size]);
                done += 1;
                i += 1;
            }
            let next = next_leaf(leaf);
            op.release(s);
            if done == limit || next == 0 {
                break;
            }
            page = next;
        }
        let lsn = op.commit()?;
        drop(shape);
        bm.wait_durable(lsn)?;
        Ok(done)
    }

    /// Walks the whole tree and checks its structure: node kinds and levels, key order within
    /// and across nodes, separators bounding their subtrees, the leaf chain visiting every leaf
    /// in order, and the record count. For tests (it fixes every page).
    pub fn check(&self) -> Result<(), String> {
        let shape = self.read_shape();
        let l = self.layout;
        let mut leaves = Vec::new();
        let mut records = 0u64;
        // (page, level, lower bound inclusive, upper bound exclusive)
        let mut stack = vec![(shape.root, shape.height - 1, 0u64, u64::MAX)];
        while let Some((page, level, lo, hi)) = stack.pop() {
            let node = self.buffer().read(page).map_err(|e| e.to_string())?;
            l.check_node(page, &node, level).map_err(|e| e.to_string())?;
            let n = count(&node);
            if level == 0 {
                let mut prev: Option<u32> = None;
                for i in 0..n {
                    let k = l.leaf_key(&node, i);
                    if prev.is_some_and(|p| p >= k) {
                        return Err(format!("leaf {page}: keys out of order at {i}"));
                    }
                    if (k as u64) < lo || (k as u64) >= hi {
                        return Err(format!("leaf {page}: key {k} outside [{lo}, {hi})"));
                    }
                    prev = Some(k);
                }
                records += n as u64;
                leaves.push(page);
            } else {
                let mut bounds = vec![lo];
                for i in 0..n {
                    let k = l.inner_key(&node, i) as u64;
                    let last = *bounds.last().expect("non-empty");
                    if (i == 0 && k < last) || (i > 0 && k <= last) || k >= hi {
                        return Err(format!("inner {page}: key {k} out of order or outside [{lo}, {hi})"));
                    }
                    bounds.push(k);
                }
                bounds.push(hi);
                // Push right to left so that leaves are collected left to right.
                for i in (0..=n).rev() {
                    stack.push((l.inner_child(&node, i), level - 1, bounds[i], bounds[i + 1]));
                }
            }
        }
        for (i, &leaf) in leaves.iter().enumerate() {
            let node = self.buffer().read(leaf).map_err(|e| e.to_string())?;
            let want = leaves.get(i + 1).copied().unwrap_or(0);
            if next_leaf(&node) != want {
                return Err(format!("leaf {leaf}: next is {}, expected {want}", next_leaf(&node)));
            }
        }
        if records != self.records() {
            return Err(format!("{records} records in the leaves, {} counted", self.records()));
        }
        Ok(())
    }
}
