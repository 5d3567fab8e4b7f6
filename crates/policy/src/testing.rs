//! A minimal buffer that drives a [`Replacer`] and checks the replacer contract after every
//! step. Policy tests use it for worked examples; [`check_contract`] runs the shared invariant
//! suite that every policy must pass.
//!
//! The checks: the policy tracks exactly the buffered frames and never more than the capacity;
//! it names only buffered, unpinned frames as victims, and at least one; block padding covers
//! every buffered page of the block; its dirty bits (when it keeps them) agree with the
//! buffer's; its own `check_invariants` passes; and every dirty page is written back exactly
//! once per eviction or final flush (the harness keeps the version each page last got from the
//! trace and the version last written back, so a lost or repeated write-back fails).

use std::collections::HashMap;

use crate::replacer::{Access, AccessKind, Evictions, FrameId, NEVER, Pins, Replacer};

/// One page leaving the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evicted {
    /// The page.
    pub page: u64,
    /// Whether it was written back.
    pub dirty: bool,
}

/// What the harness tells a policy during an eviction: its pins and its page table.
struct HostView<'a> {
    pinned: &'a [bool],
    table: &'a HashMap<u64, FrameId>,
}

impl Pins for HostView<'_> {
    fn is_pinned(&self, frame: FrameId) -> bool {
        self.pinned[frame as usize]
    }

    fn frame_of(&self, page: u64) -> Option<FrameId> {
        self.table.get(&page).copied()
    }
}

/// A small buffer around a policy, for tests.
pub struct Harness<R: Replacer> {
    /// The policy under test.
    pub policy: R,
    table: HashMap<u64, FrameId>,
    pages: Vec<Option<u64>>,
    dirty: Vec<bool>,
    pinned: Vec<bool>,
    free: Vec<FrameId>,
    time: u64,
    ev: Evictions,
    /// Pages that left the buffer, in order.
    pub evicted: Vec<Evicted>,
    /// Pages written to the "device", in order (victims, padding and final flush).
    pub written: Vec<u64>,
    /// Pages read only to pad a block.
    pub padding_reads: Vec<u64>,
    /// Incoming pages the policy chose not to buffer (written or read straight through).
    pub bypassed: Vec<u64>,
    /// Hits so far.
    pub hits: u64,
    /// Misses so far.
    pub misses: u64,
    version: HashMap<u64, u64>,
    durable: HashMap<u64, u64>,
    /// Run the full set of checks after every access (default on).
    pub checking: bool,
}

impl<R: Replacer> Harness<R> {
    /// An empty buffer of `capacity` frames managed by `R` with `config`.
    pub fn new(capacity: usize, config: R::Config) -> Self {
        Harness {
            policy: R::new(capacity, &config),
            table: HashMap::new(),
            pages: vec![None; capacity],
            dirty: vec![false; capacity],
            pinned: vec![false; capacity],
            free: (0..capacity as FrameId).rev().collect(),
            time: 0,
            ev: Evictions::default(),
            evicted: Vec::new(),
            written: Vec::new(),
            padding_reads: Vec::new(),
            bypassed: Vec::new(),
            hits: 0,
            misses: 0,
            version: HashMap::new(),
            durable: HashMap::new(),
            checking: true,
        }
    }

    /// A read of `page`; returns `true` on a hit.
    pub fn read(&mut self, page: u64) -> bool {
        self.access(page, AccessKind::Read, NEVER)
    }

    /// A write of `page`; returns `true` on a hit.
    pub fn write(&mut self, page: u64) -> bool {
        self.access(page, AccessKind::Write, NEVER)
    }

    /// One access, with the time of the page's next access for offline policies.
    pub fn access(&mut self, page: u64, kind: AccessKind, next_use: u64) -> bool {
        let access = Access { page, kind, time: self.time, next_use };
        self.time += 1;
        if kind.is_write() {
            *self.version.entry(page).or_insert(0) += 1;
        }
        let hit = if let Some(&frame) = self.table.get(&page) {
            self.hits += 1;
            self.dirty[frame as usize] |= kind.is_write();
            self.policy.on_hit(frame, &access);
            true
        } else {
            self.misses += 1;
            if self.free.is_empty() && self.evict(&access) {
                self.bypassed.push(page);
                if kind.is_write() {
                    self.write_back(page);
                }
                if self.checking {
                    self.check().unwrap_or_else(|e| panic!("after access {} of page {page}: {e}", self.time - 1));
                }
                return false;
            }
            let frame = self.free.pop().expect("eviction freed a frame");
            self.table.insert(page, frame);
            self.pages[frame as usize] = Some(page);
            self.dirty[frame as usize] = kind.is_write();
            self.policy.on_insert(frame, &access);
            false
        };
        if self.checking {
            self.check().unwrap_or_else(|e| panic!("after access {} of page {page}: {e}", self.time - 1));
        }
        hit
    }

    /// Runs one eviction; returns `true` when the policy asked to bypass the incoming page.
    fn evict(&mut self, incoming: &Access) -> bool {
        self.ev.clear();
        let host = HostView { pinned: &self.pinned, table: &self.table };
        let result = self.policy.victims(incoming, &host, &mut self.ev);
        result.unwrap_or_else(|e| panic!("policy could not evict: {e}"));
        assert!(
            !self.ev.victims.is_empty() || self.ev.bypass,
            "victims() returned Ok without naming a victim or bypassing"
        );
        for &f in &self.ev.victims {
            assert!(self.pages[f as usize].is_some(), "victim frame {f} holds no page");
            assert!(!self.pinned[f as usize], "victim frame {f} is pinned");
        }
        let victims = self.ev.victims.clone();
        if let Some(pad) = self.ev.pad {
            for &f in &victims {
                let page = self.pages[f as usize].expect("checked above");
                assert!(
                    (pad.first_page..pad.first_page + pad.pages as u64).contains(&page),
                    "padding of block at {} names victim page {page} outside the block",
                    pad.first_page
                );
            }
            for page in pad.first_page..pad.first_page + pad.pages as u64 {
                match self.table.get(&page) {
                    Some(&f) => {
                        assert!(victims.contains(&f), "padding: buffered page {page} of the block is not a victim");
                        self.write_back(page);
                    }
                    None => {
                        self.padding_reads.push(page);
                        self.written.push(page);
                    }
                }
            }
        }
        for f in victims {
            let page = self.pages[f as usize].take().expect("checked above");
            let dirty = self.dirty[f as usize];
            if self.ev.pad.is_none() && dirty {
                self.write_back(page);
            }
            self.evicted.push(Evicted { page, dirty });
            self.table.remove(&page);
            self.dirty[f as usize] = false;
            self.free.push(f);
        }
        self.ev.bypass
    }

    fn write_back(&mut self, page: u64) {
        let v = self.version.get(&page).copied().unwrap_or(0);
        let d = self.durable.entry(page).or_insert(0);
        assert!(v > *d || self.ev.pad.is_some(), "page {page} written back without a new version (version {v})");
        *d = v;
        self.written.push(page);
    }

    /// Writes back every dirty page, in page order (the end of a run).
    pub fn flush(&mut self) {
        let mut dirty: Vec<u64> =
            self.table.iter().filter(|&(_, &f)| self.dirty[f as usize]).map(|(&p, _)| p).collect();
        dirty.sort_unstable();
        for p in dirty {
            self.ev.pad = None;
            self.write_back(p);
            let f = self.table[&p];
            self.dirty[f as usize] = false;
        }
        for (p, v) in &self.version {
            assert_eq!(self.durable.get(p), Some(v), "page {p}: last version {v} never reached the device");
        }
    }

    /// Pins `frame` so it may not be chosen as a victim.
    pub fn pin(&mut self, frame: FrameId) {
        self.pinned[frame as usize] = true;
    }

    /// Unpins `frame`.
    pub fn unpin(&mut self, frame: FrameId) {
        self.pinned[frame as usize] = false;
    }

    /// The frame holding `page`, if buffered.
    pub fn frame_of(&self, page: u64) -> Option<FrameId> {
        self.table.get(&page).copied()
    }

    /// The buffered pages, sorted.
    pub fn resident(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.table.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Pages evicted so far, in order.
    pub fn evicted_pages(&self) -> Vec<u64> {
        self.evicted.iter().map(|e| e.page).collect()
    }

    /// Whether `page` is buffered and dirty.
    pub fn is_dirty(&self, page: u64) -> bool {
        self.table.get(&page).is_some_and(|&f| self.dirty[f as usize])
    }

    /// All checks of the replacer contract on the current state.
    pub fn check(&self) -> Result<(), String> {
        let resident = self.table.len();
        if self.policy.len() != resident {
            return Err(format!("policy tracks {} frames, buffer holds {resident}", self.policy.len()));
        }
        if resident > self.pages.len() {
            return Err("more pages than frames".into());
        }
        for (f, page) in self.pages.iter().enumerate() {
            if let (Some(_), Some(pd)) = (page, self.policy.is_dirty(f as FrameId))
                && pd != self.dirty[f]
            {
                return Err(format!("frame {f}: policy says dirty={pd}, buffer says {}", self.dirty[f]));
            }
        }
        self.policy.check_invariants()
    }
}

/// Runs `requests` through a fresh `R` of `capacity` frames with every check on, flushes, and
/// returns the harness for further assertions. Offline policies get the exact next-use times.
pub fn check_contract<R: Replacer>(capacity: usize, config: R::Config, requests: &[(u64, AccessKind)]) -> Harness<R> {
    let mut next = vec![NEVER; requests.len()];
    if R::NEEDS_FUTURE {
        let mut last: HashMap<u64, usize> = HashMap::new();
        for (i, &(p, _)) in requests.iter().enumerate().rev() {
            if let Some(&j) = last.get(&p) {
                next[i] = j as u64;
            }
            last.insert(p, i);
        }
    }
    let mut h = Harness::<R>::new(capacity, config);
    for (i, &(p, k)) in requests.iter().enumerate() {
        h.access(p, k, next[i]);
    }
    h.flush();
    h
}
