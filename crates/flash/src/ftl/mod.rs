//! Flash translation layers: each one turns logical page reads and writes into NAND operations on
//! a [`crate::nand::Nand`] chip and implements [`crate::Device`].
//!
//! * [`page`] — page-mapped, out-of-place writes, garbage collection (greedy, cost-benefit, FIFO),
//!   dynamic and static wear levelling;
//! * [`block`] — block-mapped, copy on update;
//! * [`bast`] — log-block FTL with 1:1 log association (Kim et al. 2002);
//! * [`fast`] — log-block FTL with 1:N association and a sequential log (Lee et al. 2007).
//!
//! This module holds what they share: the pool of free blocks (least-worn first: dynamic wear
//! levelling for every FTL), the retirement of worn-out blocks, the host-side counters, per-page
//! versions for integrity checking, and the padding rule of the block-level FTLs.
//!
//! **Padding.** The chip only programs a block's next free page. A block-mapped data block keeps
//! page *o* of its logical block at offset *o*, so a page can only be placed at offset *o* once
//! offsets `0..o` are programmed. When a block-level FTL must place a page above a gap (a logical
//! page the host never wrote), it programs the gap's pages with their initial contents (version
//! 0) first. This costs programs (counted in `flash_programs`, not in `page_copies`), never
//! happens once every logical page has been written (the default `Sequential` preconditioning),
//! and is what an FTL on strictly in-order NAND has to do. Padding programs are
//! `flash_programs − host_writes − page_copies`.

/// The [`Device`](crate::Device) methods every FTL shares, for inside its `impl Device`: the
/// FTL has `label`, `logical_pages: u32` and `flash: Flash` fields and `host_read(page)` and
/// `host_write(lpn)` methods; a read or write returns the NAND time it took. The block-level
/// FTLs get `host_read` and `host_write` (a `bump_version(lpn)` and `place(tag)`) from
/// [`ftl_versions!`]; the page-mapped FTL has its own (it defers the mapping of a write).
macro_rules! ftl_device_io {
    () => {
        fn name(&self) -> String {
            self.label.clone()
        }

        fn logical_pages(&self) -> u64 {
            self.logical_pages as u64
        }

        #[inline]
        fn read(&mut self, page: u64) -> Result<Nanos, DeviceError> {
            let t0 = self.flash.nand.clock_ns();
            self.host_read(page)?;
            Ok(self.flash.nand.clock_ns() - t0)
        }

        #[inline]
        fn write(&mut self, page: u64) -> Result<Nanos, DeviceError> {
            let lpn = check_page(page, self.logical_pages)?;
            let t0 = self.flash.nand.clock_ns();
            self.flash.counters.host_writes += 1;
            self.host_write(lpn)?;
            Ok(self.flash.nand.clock_ns() - t0)
        }

        fn stats(&self) -> DeviceStats {
            self.flash.stats()
        }
    };
}

/// `host_read` (what [`Device::read`](crate::Device::read) does: `read_tag` without its
/// result), `bump_version` (the next version of a logical page, from a `versions: Versions`
/// field) and `host_write` (`place` with that version), for inside an FTL's inherent `impl`.
macro_rules! ftl_versions {
    () => {
        #[inline]
        fn host_read(&mut self, page: u64) -> Result<(), DeviceError> {
            self.read_tag(page).map(|_| ())
        }

        #[inline]
        fn bump_version(&mut self, lpn: u32) -> u32 {
            self.versions.bump(lpn)
        }

        /// Programs a host write of `lpn` with its next version (see `place`).
        #[inline]
        fn host_write(&mut self, lpn: u32) -> Result<(), DeviceError> {
            let version = self.bump_version(lpn);
            self.place(PageTag { lpn, version })
        }
    };
}

pub mod bast;
pub mod block;
pub mod fast;
pub(crate) mod lists;
pub mod page;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::device::{DeviceError, DeviceStats};
use crate::nand::{Nand, PageTag};

/// "No block", "no page", "not mapped".
pub(crate) const NONE: u32 = u32::MAX;

/// Free erased blocks, handed out least-worn first (dynamic wear levelling); ties go to the
/// lowest block number, so allocation is deterministic.
#[derive(Debug, Clone, Default)]
pub(crate) struct FreePool {
    heap: BinaryHeap<Reverse<u64>>,
}

impl FreePool {
    #[inline]
    pub(crate) fn push(&mut self, block: u32, erase_count: u32) {
        self.heap.push(Reverse(((erase_count as u64) << 32) | block as u64));
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        self.heap.pop().map(|Reverse(k)| k as u32)
    }

    #[inline]
    pub(crate) fn len(&self) -> u32 {
        self.heap.len() as u32
    }

    /// Smallest erase count among free blocks.
    #[inline]
    pub(crate) fn min_erase_count(&self) -> Option<u32> {
        self.heap.peek().map(|Reverse(k)| (k >> 32) as u32)
    }

    /// The free blocks with the erase count they were added with (for invariant checks).
    pub(crate) fn entries(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.heap.iter().map(|Reverse(k)| (*k as u32, (k >> 32) as u32))
    }
}

/// Host-side counters kept by every FTL (the chip counts its own operations).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub host_reads: u64,
    pub host_writes: u64,
    pub page_copies: u64,
    pub merges_switch: u64,
    pub merges_partial: u64,
    pub merges_full: u64,
}

/// The chip, its free blocks and the counters: what every FTL owns.
#[derive(Debug, Clone)]
pub(crate) struct Flash {
    pub nand: Nand,
    pub ppb: u32,
    pub free: FreePool,
    /// Blocks that wore out and were taken out of service.
    pub retired: u32,
    pub counters: Counters,
}

impl Flash {
    /// A chip whose blocks are all free.
    pub(crate) fn new(nand: Nand) -> Self {
        let ppb = nand.pages_per_block();
        let mut free = FreePool::default();
        for b in 0..nand.blocks() {
            free.push(b, nand.erase_count(b));
        }
        Flash { nand, ppb, free, retired: 0, counters: Counters::default() }
    }

    /// Takes the least-worn free block.
    #[inline]
    pub(crate) fn alloc(&mut self) -> Result<u32, DeviceError> {
        self.free.pop().ok_or_else(|| self.exhausted())
    }

    /// The error for an empty free pool: worn-out blocks if any were retired, else no space (a
    /// configuration that should have been refused).
    #[cold]
    pub(crate) fn exhausted(&self) -> DeviceError {
        if self.retired > 0 {
            let block = (0..self.nand.blocks()).find(|&b| self.nand.is_worn_out(b)).unwrap_or(0);
            DeviceError::WornOut { block: block as u64, erases: self.nand.erase_count(block) as u64 }
        } else {
            DeviceError::NoSpace("no free block left".into())
        }
    }

    /// Erases a block and returns it to the free pool. A worn-out block is retired instead
    /// (returns `Ok(false)`): its stale contents stay, it is never used again.
    #[inline]
    pub(crate) fn release(&mut self, block: u32) -> Result<bool, DeviceError> {
        match self.nand.erase(block) {
            Ok(()) => {
                self.free.push(block, self.nand.erase_count(block));
                Ok(true)
            }
            Err(DeviceError::WornOut { .. }) => {
                self.retired += 1;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Programs initial-contents pages (version 0) into a block-mapped block until its next free
    /// offset is `offset` (see the module docs on padding). `lbn` names the logical block.
    #[inline]
    pub(crate) fn pad_to(&mut self, block: u32, offset: u32, lbn: u32) -> Result<(), DeviceError> {
        let mut next = self.nand.next_free(block);
        while next < offset {
            self.nand.program(block, next, PageTag { lpn: lbn * self.ppb + next, version: 0 })?;
            next += 1;
        }
        Ok(())
    }

    /// The device statistics: host counters, the chip's operation counters, lifetime wear.
    pub(crate) fn stats(&self) -> DeviceStats {
        let n = self.nand.counters();
        let e = self.nand.erase_summary();
        let c = &self.counters;
        DeviceStats {
            host_reads: c.host_reads,
            host_writes: c.host_writes,
            flash_reads: n.reads,
            flash_programs: n.programs,
            erases: n.erases,
            page_copies: c.page_copies,
            merges_switch: c.merges_switch,
            merges_partial: c.merges_partial,
            merges_full: c.merges_full,
            time_ns: n.time_ns,
            erase_count_min: e.min,
            erase_count_max: e.max,
            erase_count_mean: e.mean,
            erase_count_std: e.std,
        }
    }

    /// Zeroes host and chip counters; wear (erase counts) persists.
    pub(crate) fn reset_counters(&mut self) {
        self.counters = Counters::default();
        self.nand.reset_counters();
    }

    /// Checks the free pool against the chip: every free block is erased, listed once, with its
    /// current erase count. Returns a membership bitmap.
    pub(crate) fn check_free_pool(&self) -> Result<Vec<bool>, String> {
        let mut is_free = vec![false; self.nand.blocks() as usize];
        for (b, ec) in self.free.entries() {
            if b >= self.nand.blocks() {
                return Err(format!("free pool holds block {b} beyond the chip"));
            }
            if std::mem::replace(&mut is_free[b as usize], true) {
                return Err(format!("block {b} is twice in the free pool"));
            }
            if self.nand.next_free(b) != 0 {
                return Err(format!("free block {b} has {} programmed pages", self.nand.next_free(b)));
            }
            if ec != self.nand.erase_count(b) {
                return Err(format!(
                    "free block {b} filed with erase count {ec}, chip says {}",
                    self.nand.erase_count(b)
                ));
            }
        }
        Ok(is_free)
    }
}

/// Per logical page, the version the host wrote last (0 = never written). Every write gets a new
/// version; reads compare the version the chip returns with it.
#[derive(Debug, Clone)]
pub(crate) struct Versions {
    v: Vec<u32>,
}

impl Versions {
    pub(crate) fn new(logical_pages: u32) -> Self {
        Versions { v: vec![0; logical_pages as usize] }
    }

    /// Records a new host write and returns its version. Versions wrap after 2³²−1 writes of one
    /// page, skipping 0 (initial contents).
    #[inline]
    pub(crate) fn bump(&mut self, lpn: u32) -> u32 {
        Self::next(&mut self.v[lpn as usize])
    }

    /// Advances a version kept elsewhere (the page-mapped FTL keeps it beside the mapping), as
    /// [`bump`](Self::bump) does.
    #[inline]
    pub(crate) fn next(slot: &mut u32) -> u32 {
        let mut next = slot.wrapping_add(1);
        if next == 0 {
            next = 1;
        }
        *slot = next;
        next
    }

    #[inline]
    pub(crate) fn get(&self, lpn: u32) -> u32 {
        self.v[lpn as usize]
    }

    /// Checks what a read returned against the last write.
    #[inline]
    pub(crate) fn verify(&self, lpn: u32, tag: PageTag) -> Result<(), DeviceError> {
        Self::check(lpn, self.get(lpn), tag)
    }

    /// Checks what a read of `lpn` returned against the version `expected` of its last write.
    #[inline]
    pub(crate) fn check(lpn: u32, expected: u32, tag: PageTag) -> Result<(), DeviceError> {
        if tag.lpn != lpn || tag.version != expected {
            return Err(DeviceError::Integrity {
                page: lpn as u64,
                expected: expected as u64,
                got: if tag.lpn == lpn { tag.version as u64 } else { u64::MAX },
            });
        }
        Ok(())
    }
}

/// Validates a host page number.
#[inline]
pub(crate) fn check_page(page: u64, logical_pages: u32) -> Result<u32, DeviceError> {
    if page >= logical_pages as u64 {
        return Err(DeviceError::OutOfRange { page, logical_pages: logical_pages as u64 });
    }
    Ok(page as u32)
}

/// Validates a logical size and returns it as `u32` with the number of logical blocks.
pub(crate) fn logical_size(logical_pages: u64, ppb: u32) -> Result<(u32, u32), DeviceError> {
    if logical_pages == 0 {
        return Err(DeviceError::Config("the device needs at least one logical page".into()));
    }
    if logical_pages >= u32::MAX as u64 {
        return Err(DeviceError::Config(format!(
            "{logical_pages} logical pages is too many: logical page numbers are 32-bit"
        )));
    }
    let blocks = logical_pages.div_ceil(ppb as u64);
    Ok((logical_pages as u32, blocks as u32))
}

/// Checks that every block has exactly one role: each block in `used` (data or log blocks, with
/// a name for messages) appears once and is not free; every other block is free or retired.
pub(crate) fn check_roles(flash: &Flash, used: &[(u32, &'static str)]) -> Result<(), String> {
    let is_free = flash.check_free_pool()?;
    let mut role: Vec<Option<&'static str>> = vec![None; flash.nand.blocks() as usize];
    for &(b, name) in used {
        if b >= flash.nand.blocks() {
            return Err(format!("{name} block {b} is beyond the chip"));
        }
        if let Some(other) = role[b as usize].replace(name) {
            return Err(format!("block {b} is both a {other} block and a {name} block"));
        }
        if is_free[b as usize] {
            return Err(format!("{name} block {b} is in the free pool"));
        }
    }
    let mut retired = 0;
    for b in 0..flash.nand.blocks() {
        if role[b as usize].is_none() && !is_free[b as usize] {
            if !flash.nand.is_worn_out(b) {
                return Err(format!("block {b} is neither used, free nor worn out (leaked)"));
            }
            retired += 1;
        }
    }
    if retired != flash.retired {
        return Err(format!("{retired} blocks out of service, {} counted as retired", flash.retired));
    }
    Ok(())
}

/// Checks that what a read of `lpn` would find (`found`, `None` if no physical page holds the
/// page) is the last version the host wrote.
pub(crate) fn check_newest(lpn: u32, found: Option<PageTag>, versions: &Versions) -> Result<(), String> {
    let version = versions.get(lpn);
    match found {
        None if version == 0 => Ok(()),
        Some(tag) if tag == (PageTag { lpn, version }) => Ok(()),
        other => Err(format!("logical page {lpn}: last written version {version}, the device finds {other:?}")),
    }
}
