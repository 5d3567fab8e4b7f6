//! Page-mapped FTL with garbage collection and wear levelling.
//!
//! Sources: the log-structured cleaning of Rosenblum and Ousterhout (*The design and
//! implementation of a log-structured file system*, SOSP 1991: greedy and cost-benefit segment
//! cleaning) and Kawaguchi, Nishioka and Motoda (*A flash-memory based file system*, USENIX 1995:
//! cost-benefit on flash); FIFO cleaning as analysed by Desnoyers (*Analytic modeling of SSD write
//! performance*, SYSTOR 2012); threshold wear levelling after Lofgren et al. (US patent 6,850,443,
//! reference \[32\] of the AD-LRU paper, used by Flash-DBSim).
//!
//! **Mapping.** A dense table maps every logical page to a physical page. A write goes
//! out-of-place to the next free page of the *frontier* block; the old copy becomes invalid. A
//! full frontier is *sealed* and becomes a candidate for cleaning.
//!
//! **Garbage collection.** When a new frontier block is needed and the free pool holds
//! `gc_threshold` blocks or fewer, the collector cleans victims (copies their valid pages, erases
//! them) until the pool holds more than `gc_threshold` blocks. Victim policies:
//!
//! * `greedy` — the sealed block with the fewest valid pages (ties: the block that has had its
//!   current valid count longest). Blocks sit in buckets by valid count: O(1) per invalidation,
//!   O(pages per block) per choice at worst.
//! * `cost-benefit` — the block maximising `(1−u)·age / 2u`, `u` its valid fraction and `age` the
//!   simulated time (ns, the chip's never-reset clock) since its last page was programmed; `u = 0`
//!   wins outright. Within one valid count the oldest block maximises the score, so each bucket
//!   is a heap by seal time and a choice looks at one block per bucket: exact, not sampled.
//!   Scores are compared exactly in integers; ties go to the fewer valid pages.
//! * `fifo` — the block sealed earliest.
//!
//! **One write stream.** Pages copied by the collector go to the same frontier as host writes
//! (our choice). This is the model Desnoyers analyses, so FIFO cleaning under uniform random
//! writes must match his formula (a test checks it); separating hot host data from cold copied
//! data would help skewed workloads and is left as a possible option.
//!
//! **Space.** The chip holds the logical pages rounded up to whole blocks, plus the
//! over-provisioned blocks, plus the `gc_threshold` reserve: over-provisioning is the spare space
//! the cleaner actually uses, independent of the reserve (the reserve is only dipped into while
//! cleaning). The collector needs at least one reserve block (copies need somewhere to go before
//! the victim is erased) and at least one spare block (so that some sealed block always holds an
//! invalid page); anything less is a configuration error. A cleaning pass that keeps choosing
//! blocks without an invalid page (possible only with FIFO, and only for a while) gives up with
//! [`DeviceError::NoSpace`] after as many victims as the chip has blocks, instead of looping.
//!
//! **Deferred bookkeeping (speed only).** A host write is programmed at once (its time, counts
//! and errors are the write's), but its mapping update lags by a few host writes and the old
//! copy's invalidation by a few more; the lines they touch are prefetched meanwhile. Both are
//! applied, in order, before anything reads them: a read of that page, sealing a block, opening
//! a frontier (so before every cleaning pass). Every choice and count is the same as with
//! immediate bookkeeping.
//!
//! **Wear levelling.** Dynamic: the free pool hands out the least-worn block. Static (optional
//! threshold `T`): after each cleaning pass, if the largest erase count exceeds the smallest by
//! more than `T` and no free block has the smallest count (then dynamic levelling will use it
//! anyway), the valid pages of a sealed block with the smallest count are moved to the frontier and
//! the block is erased, so that the least-worn block re-enters circulation. At most one such move
//! per cleaning pass; moves are counted in `page_copies` and by [`PageFtl::wear_moves`].
//!
//! **Worn-out blocks** are retired when an erase fails; the device runs with less spare space
//! until the pool cannot supply a block, then reports [`DeviceError::WornOut`].

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::lists::{BucketHeaps, BucketLists};
use super::{Flash, NONE, Versions, check_page, logical_size};
use crate::device::{Device, DeviceError, DeviceStats, Nanos};
use crate::nand::{Nand, NandConfig, PageTag, huge_vec, prefetch};

/// How the page-mapped FTL chooses the block to clean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// Fewest valid pages.
    #[default]
    Greedy,
    /// Largest `(1−u)·age/(2u)` (Rosenblum and Ousterhout; Kawaguchi et al.).
    CostBenefit,
    /// Oldest sealed block.
    Fifo,
}

impl GcPolicy {
    /// All policies, in the order error messages list them.
    pub const ALL: [GcPolicy; 3] = [GcPolicy::Greedy, GcPolicy::CostBenefit, GcPolicy::Fifo];

    /// Name as the CLI and labels spell it.
    pub fn name(self) -> &'static str {
        match self {
            GcPolicy::Greedy => "greedy",
            GcPolicy::CostBenefit => "cost-benefit",
            GcPolicy::Fifo => "fifo",
        }
    }
}

impl fmt::Display for GcPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GcPolicy {
    type Err = DeviceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GcPolicy::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| {
            DeviceError::Config(format!("unknown garbage collection policy `{s}` (valid: greedy, cost-benefit, fifo)"))
        })
    }
}

/// Parameters of a [`PageFtl`].
#[derive(Debug, Clone, PartialEq)]
pub struct PageFtlConfig {
    /// The chip. It must have at least `ceil(logical_pages / pages_per_block) + 1 + gc_threshold`
    /// blocks.
    pub nand: NandConfig,
    /// Pages the host may address.
    pub logical_pages: u64,
    /// Victim policy.
    pub gc: GcPolicy,
    /// Free blocks at or below which the collector runs (at least 1).
    pub gc_threshold: u32,
    /// Static wear levelling threshold on `max − min` erase counts (`None`: dynamic only).
    pub wear_threshold: Option<u32>,
    /// Check the version of every page read ([`DeviceError::Integrity`] on mismatch).
    pub verify: bool,
    /// Name reported by [`Device::name`].
    pub label: String,
}

const FREE: u8 = 0;
const ACTIVE: u8 = 1;
const SEALED: u8 = 2;
const VICTIM: u8 = 3;
const RETIRED: u8 = 4;

/// Host writes by which the invalidation of a page's old copy may lag (see
/// [`PageFtl::defer_invalidate`]).
const PENDING: usize = 8;

/// Host writes whose mapping work may lag (see [`PageFtl::defer_write`]).
const WRITES: usize = 4;

/// The version a deferred host write's tag carries until the write is applied.
const UNAPPLIED: u32 = 0;

/// Sealed blocks waiting to be cleaned, indexed for the chosen policy.
#[derive(Debug, Clone)]
enum Victims {
    /// Buckets by valid count; `lowest` is a lower bound on the lowest non-empty bucket.
    Greedy { lists: BucketLists, lowest: u32 },
    /// Heaps by seal time, one per valid count.
    CostBenefit { heaps: BucketHeaps },
    /// One list in seal order.
    Fifo { list: BucketLists },
}

impl Victims {
    fn new(gc: GcPolicy, blocks: u32, ppb: u32) -> Self {
        match gc {
            GcPolicy::Greedy => Victims::Greedy { lists: BucketLists::new(blocks, ppb + 1), lowest: ppb + 1 },
            GcPolicy::CostBenefit => Victims::CostBenefit { heaps: BucketHeaps::new(blocks, ppb + 1) },
            GcPolicy::Fifo => Victims::Fifo { list: BucketLists::new(blocks, 1) },
        }
    }

    #[inline]
    fn insert(&mut self, b: u32, valid: u32, now: u64) {
        match self {
            Victims::Greedy { lists, lowest } => {
                lists.push_back(b, valid);
                *lowest = (*lowest).min(valid);
            }
            Victims::CostBenefit { heaps } => heaps.insert(b, valid, now),
            Victims::Fifo { list } => list.push_back(b, 0),
        }
    }

    /// Hints that block `b` will be passed to [`invalidated`](Self::invalidated) soon.
    #[inline(always)]
    fn prefetch(&self, b: u32) {
        match self {
            Victims::Greedy { lists, .. } => lists.prefetch(b),
            Victims::CostBenefit { .. } | Victims::Fifo { .. } => {}
        }
    }

    /// A sealed block lost a valid page.
    #[inline]
    fn invalidated(&mut self, b: u32, valid: u32) {
        match self {
            Victims::Greedy { lists, lowest } => {
                lists.unlink(b);
                lists.push_back(b, valid);
                *lowest = (*lowest).min(valid);
            }
            Victims::CostBenefit { heaps } => heaps.rebucket(b, valid),
            Victims::Fifo { .. } => {}
        }
    }

    fn remove(&mut self, b: u32) {
        match self {
            Victims::Greedy { lists, .. } => lists.unlink(b),
            Victims::CostBenefit { heaps } => heaps.remove(b),
            Victims::Fifo { list } => list.unlink(b),
        }
    }

    /// The victim [`take`](Self::take) would choose now, if the policy can tell cheaply
    /// (greedy), else `NONE`; changes nothing.
    fn peek(&self, ppb: u32) -> u32 {
        match self {
            Victims::Greedy { lists, lowest } => {
                let mut k = *lowest;
                while k <= ppb && lists.front(k) == NONE {
                    k += 1;
                }
                if k > ppb { NONE } else { lists.front(k) }
            }
            Victims::CostBenefit { .. } | Victims::Fifo { .. } => NONE,
        }
    }

    /// Chooses and removes the next victim.
    fn take(&mut self, ppb: u32, now: u64) -> Option<u32> {
        let b = match self {
            Victims::Greedy { lists, lowest } => {
                while *lowest <= ppb && lists.front(*lowest) == NONE {
                    *lowest += 1;
                }
                if *lowest > ppb {
                    return None;
                }
                lists.front(*lowest)
            }
            Victims::CostBenefit { heaps } => {
                let mut best = NONE;
                let mut best_v = 0u32;
                let mut best_age = 0u64;
                for v in 0..=ppb {
                    let b = heaps.top(v);
                    if b == NONE {
                        continue;
                    }
                    if v == 0 {
                        best = b;
                        break;
                    }
                    let age = now.saturating_sub(heaps.key(b));
                    // score = (ppb − v)·age / (2v); compare a/b > c/d as a·d > c·b, exactly.
                    let better = best == NONE
                        || (ppb - v) as u128 * age as u128 * best_v as u128
                            > (ppb - best_v) as u128 * best_age as u128 * v as u128;
                    if better {
                        best = b;
                        best_v = v;
                        best_age = age;
                    }
                }
                if best == NONE {
                    return None;
                }
                best
            }
            Victims::Fifo { list } => {
                let b = list.front(0);
                if b == NONE {
                    return None;
                }
                b
            }
        };
        self.remove(b);
        Some(b)
    }

    /// Checks the index against block states and valid counts.
    fn check(&self, state: &[u8], valid: &[u32]) -> Result<(), String> {
        match self {
            Victims::Greedy { lists, lowest } => {
                lists.check()?;
                for (b, &s) in state.iter().enumerate() {
                    let k = lists.bucket_of(b as u32);
                    if s == SEALED && k != valid[b] {
                        return Err(format!("sealed block {b} with {} valid pages filed under {k}", valid[b]));
                    }
                    if s != SEALED && k != NONE {
                        return Err(format!("block {b} in state {s} is a cleaning candidate"));
                    }
                    if s == SEALED && valid[b] < *lowest {
                        return Err(format!("greedy lower bound {lowest} above block {b}'s {} valid pages", valid[b]));
                    }
                }
            }
            Victims::CostBenefit { heaps } => {
                heaps.check()?;
                for (b, &s) in state.iter().enumerate() {
                    let k = heaps.bucket_of(b as u32);
                    if (s == SEALED && k != valid[b]) || (s != SEALED && k != NONE) {
                        return Err(format!("block {b} (state {s}, {} valid) filed under heap {k}", valid[b]));
                    }
                }
            }
            Victims::Fifo { list } => {
                list.check()?;
                for (b, &s) in state.iter().enumerate() {
                    if (s == SEALED) != (list.bucket_of(b as u32) == 0) {
                        return Err(format!("block {b} (state {s}) wrongly in or out of the FIFO"));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Static wear levelling: blocks listed by erase count, with the smallest and largest count.
#[derive(Debug, Clone)]
struct WearLeveller {
    threshold: u32,
    by_count: BucketLists,
    min: u32,
    max: u32,
    moves: u64,
}

impl WearLeveller {
    fn new(threshold: u32, nand: &Nand) -> Self {
        let blocks = nand.blocks();
        let mut by_count = BucketLists::new(blocks, 1);
        let (mut min, mut max) = (u32::MAX, 0);
        for b in 0..blocks {
            let c = nand.erase_count(b);
            by_count.push_back(b, c);
            min = min.min(c);
            max = max.max(c);
        }
        WearLeveller { threshold, by_count, min, max, moves: 0 }
    }

    #[inline]
    fn erased(&mut self, b: u32, count: u32) {
        self.by_count.unlink(b);
        self.by_count.push_back(b, count);
        self.max = self.max.max(count);
        while self.by_count.len(self.min) == 0 {
            self.min += 1;
        }
    }
}

/// The bits `lo..hi` of a word (`lo < hi ≤ 64`).
#[inline(always)]
fn word_mask(lo: usize, hi: usize) -> u64 {
    (u64::MAX >> (64 - (hi - lo))) << lo
}

/// Where a logical page lives and which version it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mapping {
    /// Physical page of its current copy, `NONE` if never written.
    ppn: u32,
    /// Version of its current copy (0: never written; see [`Versions`]).
    version: u32,
}

/// The page-mapped FTL (see the module docs).
#[derive(Debug, Clone)]
pub struct PageFtl {
    flash: Flash,
    ppb: u32,
    /// `log2(ppb)` when `ppb` is a power of two (fast block-of-page), else `NONE`.
    ppb_shift: u32,
    blocks: u32,
    logical_pages: u32,
    /// Logical page → where it is and its version: one record, so that a host write (which
    /// needs both) touches one cache line.
    map: Vec<Mapping>,
    /// Per physical page, whether it holds the current copy of its logical page: cleaning scans
    /// a victim's bits instead of looking each of its pages up in `map`.
    live: Vec<u64>,
    valid: Vec<u32>,
    state: Vec<u8>,
    frontier: u32,
    victims: Victims,
    /// Old copies of host-written pages whose invalidation is deferred (see
    /// [`defer_invalidate`](Self::defer_invalidate)), oldest first from `pending_start`.
    pending: [u32; PENDING],
    /// Invalidations taken from `pending` so far (wrapping).
    pending_start: u32,
    /// Invalidations put into `pending` so far (wrapping).
    pending_end: u32,
    /// Host writes programmed but not yet applied to the mapping (see
    /// [`defer_write`](Self::defer_write)): logical page (`NONE` in a free slot) and physical
    /// page, oldest first from `writes_start`.
    write_lpn: [u32; WRITES],
    write_ppn: [u32; WRITES],
    /// Deferred writes applied so far (wrapping).
    writes_start: u32,
    /// Deferred writes made so far (wrapping).
    writes_end: u32,
    wear: Option<WearLeveller>,
    gc_threshold: u32,
    in_gc: bool,
    verify: bool,
    label: String,
}

impl PageFtl {
    /// An empty device (every logical page unwritten) on a fresh chip.
    pub fn new(config: PageFtlConfig) -> Result<Self, DeviceError> {
        let nand = Nand::new(config.nand)?;
        let ppb = nand.pages_per_block();
        let blocks = nand.blocks();
        let (logical_pages, logical_blocks) = logical_size(config.logical_pages, ppb)?;
        if config.gc_threshold == 0 {
            return Err(DeviceError::Config(
                "the garbage collection threshold must be at least 1 free block (copies need a place to go)".into(),
            ));
        }
        let needed = logical_blocks as u64 + 1 + config.gc_threshold as u64;
        if (blocks as u64) < needed {
            return Err(DeviceError::Config(format!(
                "{blocks} blocks cannot hold {logical_pages} logical pages ({logical_blocks} blocks) with a \
                 garbage collection reserve of {} blocks: at least one spare block is needed for garbage \
                 collection to make progress, so at least {needed} blocks",
                config.gc_threshold
            )));
        }
        if config.wear_threshold == Some(0) {
            return Err(DeviceError::Config("the wear levelling threshold must be at least 1 erase".into()));
        }
        let wear = config.wear_threshold.map(|t| WearLeveller::new(t, &nand));
        Ok(PageFtl {
            flash: Flash::new(nand),
            ppb,
            ppb_shift: if ppb.is_power_of_two() { ppb.trailing_zeros() } else { NONE },
            blocks,
            logical_pages,
            map: huge_vec(logical_pages as usize, Mapping { ppn: NONE, version: 0 }),
            live: huge_vec((blocks as usize * ppb as usize).div_ceil(64), 0),
            valid: vec![0; blocks as usize],
            state: vec![FREE; blocks as usize],
            frontier: NONE,
            victims: Victims::new(config.gc, blocks, ppb),
            pending: [NONE; PENDING],
            pending_start: 0,
            pending_end: 0,
            write_lpn: [NONE; WRITES],
            write_ppn: [NONE; WRITES],
            writes_start: 0,
            writes_end: 0,
            wear,
            gc_threshold: config.gc_threshold,
            in_gc: false,
            verify: config.verify,
            label: config.label,
        })
    }

    /// The chip, read-only. The deferred host writes are applied first, so every tag on it is
    /// what immediate bookkeeping would have written: the last few host writes carry version 0
    /// on the chip until then (see [`defer_write`](Self::defer_write)).
    pub fn nand(&mut self) -> &Nand {
        if self.writes_start != self.writes_end {
            self.drain_writes();
        }
        &self.flash.nand
    }

    /// Pages moved by static wear levelling so far (lifetime).
    pub fn wear_moves(&self) -> u64 {
        self.wear.as_ref().map_or(0, |w| w.moves)
    }

    /// Blocks retired because they wore out.
    pub fn retired_blocks(&self) -> u32 {
        self.flash.retired
    }

    /// Zeroes the counters (after preconditioning); wear persists.
    pub fn reset_stats(&mut self) {
        self.flash.reset_counters();
    }

    /// Reads a page exactly as [`Device::read`] does (same costs, counts and verification) and
    /// returns what the chip held: the logical page and version found (version 0 = initial
    /// contents). Tests compare it with an independent model.
    #[inline]
    pub fn read_tag(&mut self, page: u64) -> Result<PageTag, DeviceError> {
        let lpn = check_page(page, self.logical_pages)?;
        self.apply_writes_of(lpn);
        self.flash.counters.host_reads += 1;
        let m = self.map[lpn as usize];
        let tag = if m.ppn == NONE {
            self.flash.nand.charge_read();
            PageTag { lpn, version: 0 }
        } else {
            let b = self.block_of(m.ppn);
            self.flash.nand.read(b, m.ppn - b * self.ppb)?
        };
        if self.verify {
            Versions::check(lpn, m.version, tag)?;
        }
        Ok(tag)
    }

    /// [`Device::read`]: without verification, the chip's rules are checked and the read
    /// counted without fetching what the page holds (one cache line less per read).
    #[inline]
    fn host_read(&mut self, page: u64) -> Result<(), DeviceError> {
        if self.verify {
            return self.read_tag(page).map(|_| ());
        }
        let lpn = check_page(page, self.logical_pages)?;
        self.apply_writes_of(lpn);
        self.flash.counters.host_reads += 1;
        let ppn = self.map[lpn as usize].ppn;
        if ppn == NONE {
            self.flash.nand.charge_read();
            Ok(())
        } else {
            let b = self.block_of(ppn);
            self.flash.nand.read_without_contents(b, ppn - b * self.ppb)
        }
    }

    /// The next version of `lpn` (see [`Versions::bump`]), after any write of it still
    /// deferred (tests use it to make the bookkeeping expect a version the chip does not hold).
    #[cfg(test)]
    fn bump_version(&mut self, lpn: u32) -> u32 {
        self.apply_writes_of(lpn);
        Versions::next(&mut self.map[lpn as usize].version)
    }

    /// Marks the freshly programmed `ppn` live (its bit is clear: it was cleared when the
    /// page's previous contents stopped being current, before the block was erased).
    #[inline(always)]
    fn mark_live(&mut self, ppn: u32) {
        self.live[ppn as usize / 64] |= 1 << (ppn % 64);
    }

    #[inline(always)]
    fn clear_live(&mut self, ppn: u32) {
        self.live[ppn as usize / 64] &= !(1 << (ppn % 64));
    }

    /// Marks the `n` physical pages from `ppn` on live (`n` ≤ 64: at most two words).
    #[inline]
    fn set_live_run(&mut self, ppn: u32, n: u32) {
        let (mut bit, end) = (ppn as usize, ppn as usize + n as usize);
        while bit < end {
            let (w, lo) = (bit / 64, bit % 64);
            let hi = (end - w * 64).min(64);
            self.live[w] |= word_mask(lo, hi);
            bit = w * 64 + hi;
        }
    }

    #[inline]
    fn block_of(&self, ppn: u32) -> u32 {
        if self.ppb_shift != NONE { ppn >> self.ppb_shift } else { ppn / self.ppb }
    }

    /// Programs a host write of `lpn` at the frontier; its mapping follows (see
    /// [`defer_write`](Self::defer_write)).
    #[inline(always)]
    fn host_write(&mut self, lpn: u32) -> Result<(), DeviceError> {
        if self.frontier == NONE {
            self.open_frontier()?;
        }
        let b = self.frontier;
        let off = self.flash.nand.program_next(b, PageTag { lpn, version: UNAPPLIED })?;
        self.valid[b as usize] += 1;
        let ppn = b * self.ppb + off;
        self.mark_live(ppn);
        self.defer_write(lpn, ppn);
        if off + 1 == self.ppb {
            self.seal(b);
        }
        Ok(())
    }

    /// Applies the host write of `lpn` just programmed at `ppn` a few host writes later.
    ///
    /// Applying it reads and rewrites the page's mapping entry (its version and its old copy),
    /// a random line of an array as large as the device's logical pages; the simulator's
    /// write-backs come from pages it evicts, which it names only a request or so ahead, too
    /// late for a prefetch to hide that line. Here the line is prefetched now and used
    /// `WRITES` host writes later, in order. The chip holds the page from now on (its program,
    /// time and counts are now's); only the tag's version is completed when applied. Nothing
    /// reads the mapping in between but a read of that page, which applies the deferred writes
    /// first, and sealing a block or opening a frontier (so every cleaning pass), which apply
    /// everything pending. So every read, choice, copy and count is what immediate mapping
    /// gives.
    #[inline(always)]
    fn defer_write(&mut self, lpn: u32, ppn: u32) {
        if self.writes_end.wrapping_sub(self.writes_start) == WRITES as u32 {
            self.apply_oldest_write();
        }
        prefetch(&self.map, lpn as usize);
        let slot = self.writes_end as usize % WRITES;
        self.write_lpn[slot] = lpn;
        self.write_ppn[slot] = ppn;
        self.writes_end = self.writes_end.wrapping_add(1);
    }

    #[inline(always)]
    fn apply_oldest_write(&mut self) {
        let slot = self.writes_start as usize % WRITES;
        let (lpn, ppn) = (self.write_lpn[slot], self.write_ppn[slot]);
        self.write_lpn[slot] = NONE;
        self.writes_start = self.writes_start.wrapping_add(1);
        let m = &mut self.map[lpn as usize];
        let version = Versions::next(&mut m.version);
        let old = std::mem::replace(&mut m.ppn, ppn);
        self.flash.nand.set_version(ppn, version);
        if old != NONE {
            self.defer_invalidate(old);
        }
    }

    /// Applies every deferred write if one of them is of `lpn` (before `lpn` is read).
    ///
    /// The slots are compared one `u32` load at a time, not as one vector: a fetch often
    /// follows the write-back that has just stored into a slot, and a wider load over that
    /// narrower store cannot be forwarded from the store buffer (it waits for the store, and
    /// every store before it, to reach the cache).
    #[inline(always)]
    fn apply_writes_of(&mut self, lpn: u32) {
        let mut pending = false;
        for &l in &self.write_lpn {
            if l == lpn {
                pending = true;
                break;
            }
        }
        if pending {
            self.drain_writes();
        }
    }

    #[cold]
    fn drain_writes(&mut self) {
        while self.writes_start != self.writes_end {
            self.apply_oldest_write();
        }
    }

    /// Applies every deferred write, then every deferred invalidation.
    #[inline]
    fn drain(&mut self) {
        if self.writes_start != self.writes_end {
            self.drain_writes();
        }
        self.drain_invalidations();
    }

    /// The full frontier `b` becomes a cleaning candidate.
    #[inline]
    fn seal(&mut self, b: u32) {
        self.drain();
        self.state[b as usize] = SEALED;
        self.frontier = NONE;
        let now = self.flash.nand.clock_ns();
        self.victims.insert(b, self.valid[b as usize], now);
    }

    /// Invalidates the old copy `ppn` of a host-written page a few host writes later.
    ///
    /// Invalidating reads the old copy's block bookkeeping (live word, valid count, state, the
    /// victim index's node and its neighbours), each a random line that depends on the mapping
    /// entry just read: done at once, the write waits for them in turn. Here they are prefetched
    /// now and updated `PENDING` host writes later, in the same order. Nothing reads them in
    /// between: every pending invalidation is applied before a block is sealed or a frontier
    /// opened (so before any cleaning, wear levelling or state change), and a pending old copy
    /// cannot be reprogrammed before its block is cleaned. So every victim choice, copy and
    /// count is what immediate invalidation gives; [`Device::check_invariants`] accounts for
    /// the pending ones.
    #[inline(always)]
    fn defer_invalidate(&mut self, ppn: u32) {
        if self.pending_end.wrapping_sub(self.pending_start) == PENDING as u32 {
            let old = self.pending[self.pending_start as usize % PENDING];
            self.pending_start = self.pending_start.wrapping_add(1);
            self.invalidate(old);
        }
        prefetch(&self.live, ppn as usize / 64);
        let b = self.block_of(ppn) as usize;
        prefetch(&self.valid, b);
        prefetch(&self.state, b);
        self.victims.prefetch(b as u32);
        self.pending[self.pending_end as usize % PENDING] = ppn;
        self.pending_end = self.pending_end.wrapping_add(1);
    }

    /// Applies every deferred invalidation, oldest first.
    #[inline]
    fn drain_invalidations(&mut self) {
        while self.pending_start != self.pending_end {
            let old = self.pending[self.pending_start as usize % PENDING];
            self.pending_start = self.pending_start.wrapping_add(1);
            self.invalidate(old);
        }
    }

    /// The old copies whose invalidation is pending, oldest first.
    fn pending_invalidations(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.pending_end.wrapping_sub(self.pending_start))
            .map(|i| self.pending[self.pending_start.wrapping_add(i) as usize % PENDING])
    }

    #[inline(always)]
    fn invalidate(&mut self, ppn: u32) {
        self.clear_live(ppn);
        let b = self.block_of(ppn);
        let v = self.valid[b as usize] - 1;
        self.valid[b as usize] = v;
        if self.state[b as usize] == SEALED {
            self.victims.invalidated(b, v);
        }
    }

    /// Makes a frontier block available, cleaning first if the pool is at the threshold.
    #[inline(never)]
    fn open_frontier(&mut self) -> Result<(), DeviceError> {
        self.drain();
        if !self.in_gc && self.flash.free.len() <= self.gc_threshold {
            self.in_gc = true;
            let r = self.collect();
            self.in_gc = false;
            r?;
            self.level()?;
            if self.frontier != NONE {
                return Ok(());
            }
        }
        let b = self.flash.alloc()?;
        self.state[b as usize] = ACTIVE;
        self.frontier = b;
        Ok(())
    }

    /// Cleans victims until the pool holds more than `gc_threshold` blocks.
    fn collect(&mut self) -> Result<(), DeviceError> {
        let mut fruitless = 0u32;
        while self.flash.free.len() <= self.gc_threshold {
            let now = self.flash.nand.clock_ns();
            let Some(victim) = self.victims.take(self.ppb, now) else {
                return Err(DeviceError::NoSpace("garbage collection found no sealed block to clean".into()));
            };
            if self.valid[victim as usize] == self.ppb {
                fruitless += 1;
                if fruitless > self.blocks {
                    return Err(if self.flash.retired > 0 {
                        self.flash.exhausted()
                    } else {
                        DeviceError::NoSpace(
                            "garbage collection cleaned every block without finding an invalid page".into(),
                        )
                    });
                }
            } else {
                fruitless = 0;
            }
            self.evacuate(victim)?;
        }
        // The next pass will most likely clean the block now first in line: its tags and live
        // bits are asked for now, while the host writes that fill the frontier go on.
        let next = self.victims.peek(self.ppb);
        if next != NONE {
            self.prefetch_tags(next);
            prefetch(&self.live, (next * self.ppb) as usize / 64);
        }
        Ok(())
    }

    /// Hints that block `b`'s tags (the logical pages its valid pages hold, which cleaning
    /// reads) will be read soon: a victim was programmed long ago, so its lines are asked for
    /// together rather than met one by one.
    #[inline]
    fn prefetch_tags(&self, b: u32) {
        let tags = self.flash.nand.block_tags(b);
        let per_line = (64 / size_of::<PageTag>()).max(1);
        for i in (0..tags.len()).step_by(per_line) {
            prefetch(tags, i);
        }
        prefetch(tags, tags.len().saturating_sub(1));
    }

    /// Copies the valid pages of a sealed block (already out of the victim index) to the
    /// frontier and erases it.
    fn evacuate(&mut self, b: u32) -> Result<(), DeviceError> {
        self.state[b as usize] = VICTIM;
        self.prefetch_tags(b);
        let base = b * self.ppb;
        // The victim's live bits are read a word at a time (a block of 64 pages is one word):
        // its valid pages are the word's set bits, found without a test per page. Two passes
        // per word: first list the valid offsets and ask for their mapping entries (independent
        // loads the CPU overlaps: on large devices each is a cache miss), then copy them (the
        // entries are cached by then). Copies cannot invalidate other pages of the victim, so
        // the bits read in the first pass hold in the second; they are cleared as they are read.
        // The copies of a word go to the frontier in runs (as many as fit in it): one checked
        // NAND run each, then the mapping of each copied page and the run's live bits at once.
        let mut valid_offsets = [0u32; 64];
        let (first_bit, end_bit) = (base as usize, base as usize + self.ppb as usize);
        let mut bit = first_bit;
        while bit < end_bit && self.valid[b as usize] > 0 {
            let (w, lo) = (bit / 64, bit % 64);
            let hi = (end_bit - w * 64).min(64);
            let mask = word_mask(lo, hi);
            let mut bits = self.live[w] & mask;
            self.live[w] &= !mask;
            // Offset in the victim of the word's bit 0 (may be "negative" for a block that
            // starts inside the word: the set bits are all at `lo` or above).
            let word_base = (w * 64) as u32;
            let tags = self.flash.nand.block_tags(b);
            let mut n = 0;
            while bits != 0 {
                let off = word_base + bits.trailing_zeros() - base;
                valid_offsets[n] = off;
                n += 1;
                bits &= bits - 1;
                // Its mapping is rewritten below: ask for the line now.
                prefetch(&self.map, tags[off as usize].lpn as usize);
            }
            let mut i = 0;
            while i < n {
                if self.frontier == NONE {
                    self.open_frontier()?;
                }
                let f = self.frontier;
                let first = self.flash.nand.next_free(f);
                let k = (n - i).min((self.ppb - first) as usize);
                self.flash.nand.copy_pages(b, &valid_offsets[i..i + k], f)?;
                let fbase = f * self.ppb + first;
                let copied = &self.flash.nand.block_tags(f)[first as usize..first as usize + k];
                for (ppn, t) in (fbase..).zip(copied) {
                    self.map[t.lpn as usize].ppn = ppn;
                }
                self.set_live_run(fbase, k as u32);
                self.flash.counters.page_copies += k as u64;
                self.valid[f as usize] += k as u32;
                self.valid[b as usize] -= k as u32;
                if first as usize + k == self.ppb as usize {
                    self.seal(f);
                }
                i += k;
            }
            bit = w * 64 + hi;
        }
        debug_assert_eq!(self.valid[b as usize], 0, "every valid page left the victim");
        if self.flash.release(b)? {
            self.state[b as usize] = FREE;
            if let Some(w) = &mut self.wear {
                w.erased(b, self.flash.nand.erase_count(b));
            }
        } else {
            self.state[b as usize] = RETIRED;
        }
        Ok(())
    }

    /// Static wear levelling (see the module docs).
    fn level(&mut self) -> Result<(), DeviceError> {
        let Some(w) = &self.wear else { return Ok(()) };
        if w.max - w.min <= w.threshold {
            return Ok(());
        }
        if self.flash.free.min_erase_count().is_some_and(|c| c <= w.min) {
            return Ok(());
        }
        let mut b = w.by_count.front(w.min);
        while b != NONE && self.state[b as usize] != SEALED {
            b = w.by_count.next(b);
        }
        if b == NONE {
            return Ok(());
        }
        let moved = self.valid[b as usize] as u64;
        self.victims.remove(b);
        self.in_gc = true;
        let r = self.evacuate(b);
        self.in_gc = false;
        if let Some(w) = &mut self.wear {
            w.moves += moved;
        }
        r
    }
}

impl Device for PageFtl {
    ftl_device_io!();

    #[inline(always)]
    fn prefetch(&self, page: u64) {
        prefetch(&self.map, page as usize);
    }

    // `prefetches` stays false: a write-back needs nothing of the page's records at once (its
    // mapping work is deferred, see `defer_write`), so the simulator need not find out which
    // page it will write back next to prefetch its mapping entry.

    fn check_invariants(&self) -> Result<(), String> {
        let nand = &self.flash.nand;
        let deferred = self.writes_end.wrapping_sub(self.writes_start);
        for i in 0..WRITES as u32 {
            let slot = self.writes_start.wrapping_add(i) as usize % WRITES;
            let (lpn, ppn) = (self.write_lpn[slot], self.write_ppn[slot]);
            if i >= deferred {
                if lpn != NONE {
                    return Err(format!("free deferred-write slot {slot} names logical page {lpn}"));
                }
                continue;
            }
            let b = self.block_of(ppn);
            if lpn >= self.logical_pages || b >= self.blocks {
                return Err(format!("deferred write of logical page {lpn} to physical page {ppn} out of range"));
            }
            if nand.peek(b, ppn - b * self.ppb) != Some(PageTag { lpn, version: UNAPPLIED }) {
                return Err(format!("deferred write of logical page {lpn}: physical page {ppn} holds something else"));
            }
            if (self.live[ppn as usize / 64] >> (ppn % 64)) & 1 == 0 {
                return Err(format!("physical page {ppn}, deferred write of logical page {lpn}, not marked live"));
            }
        }
        if deferred > 0 {
            // The rest holds of the state the deferred writes lead to.
            let mut applied = self.clone();
            applied.drain_writes();
            return applied.check_invariants();
        }
        let mut count = vec![0u32; self.blocks as usize];
        let mut live = 0u64;
        for lpn in 0..self.logical_pages {
            let Mapping { ppn, version } = self.map[lpn as usize];
            if ppn == NONE {
                if version != 0 {
                    return Err(format!("logical page {lpn} written (version {version}) but unmapped"));
                }
                continue;
            }
            let b = self.block_of(ppn);
            if b >= self.blocks {
                return Err(format!("logical page {lpn} maps beyond the chip"));
            }
            let s = self.state[b as usize];
            if s != ACTIVE && s != SEALED {
                return Err(format!("logical page {lpn} maps into block {b} in state {s}"));
            }
            match nand.peek(b, ppn - b * self.ppb) {
                Some(tag) if tag == (PageTag { lpn, version }) => {}
                other => {
                    return Err(format!(
                        "logical page {lpn} (version {version}) maps to physical page {ppn} holding {other:?}"
                    ));
                }
            }
            if (self.live[ppn as usize / 64] >> (ppn % 64)) & 1 == 0 {
                return Err(format!("physical page {ppn}, current copy of logical page {lpn}, not marked live"));
            }
            live += 1;
            count[b as usize] += 1;
        }
        // An old copy whose invalidation is pending is still marked live and counted valid.
        let mut pending = 0u64;
        for ppn in self.pending_invalidations() {
            let b = self.block_of(ppn);
            if b >= self.blocks {
                return Err(format!("pending invalidation of physical page {ppn} beyond the chip"));
            }
            if (self.live[ppn as usize / 64] >> (ppn % 64)) & 1 == 0 {
                return Err(format!("physical page {ppn}, pending invalidation, not marked live"));
            }
            match nand.peek(b, ppn - b * self.ppb) {
                Some(tag) if self.map.get(tag.lpn as usize).is_some_and(|m| m.ppn != ppn) => {}
                other => return Err(format!("physical page {ppn}, pending invalidation, holds {other:?}")),
            }
            pending += 1;
            count[b as usize] += 1;
        }
        let marked: u64 = self.live.iter().map(|w| u64::from(w.count_ones())).sum();
        if marked != live + pending {
            return Err(format!("{marked} physical pages marked live, {live} mapped, {pending} pending invalidation"));
        }
        let is_free = self.flash.check_free_pool()?;
        let mut actives = 0;
        for b in 0..self.blocks {
            let (s, bu) = (self.state[b as usize], b as usize);
            if count[bu] != self.valid[bu] {
                return Err(format!("block {b} counts {} valid pages, holds {}", self.valid[bu], count[bu]));
            }
            if (s == FREE) != is_free[bu] {
                return Err(format!(
                    "block {b} in state {s} is {}in the free pool",
                    if is_free[bu] { "" } else { "not " }
                ));
            }
            match s {
                ACTIVE => {
                    actives += 1;
                    if b != self.frontier || nand.next_free(b) >= self.ppb {
                        return Err(format!("active block {b} is not an open frontier"));
                    }
                }
                SEALED if nand.next_free(b) != self.ppb => {
                    return Err(format!("sealed block {b} is not full"));
                }
                VICTIM => return Err(format!("block {b} left in the middle of cleaning")),
                RETIRED if !nand.is_worn_out(b) => return Err(format!("retired block {b} is not worn out")),
                _ => {}
            }
        }
        if actives != u32::from(self.frontier != NONE) {
            return Err(format!("{actives} active blocks, frontier {}", self.frontier));
        }
        self.victims.check(&self.state, &self.valid)?;
        if let Some(w) = &self.wear {
            w.by_count.check()?;
            let counts = nand.erase_counts();
            for (b, &c) in counts.iter().enumerate() {
                if w.by_count.bucket_of(b as u32) != c {
                    return Err(format!("block {b} filed under erase count {}", w.by_count.bucket_of(b as u32)));
                }
            }
            let (min, max) = (counts.iter().min().copied(), counts.iter().max().copied());
            if (Some(w.min), Some(w.max)) != (min, max) {
                return Err(format!("wear levelling tracks min/max {}/{}, chip has {min:?}/{max:?}", w.min, w.max));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nand::{NandGeometry, NandTiming};

    pub(crate) fn chip(ppb: u32, blocks: u32, endurance: u32) -> NandConfig {
        NandConfig {
            geometry: NandGeometry { page_size_bytes: 2048, pages_per_block: ppb, blocks },
            timing: NandTiming { read_ns: 10, program_ns: 200, erase_ns: 2000 },
            endurance_cycles: endurance,
        }
    }

    fn ftl(gc: GcPolicy, ppb: u32, blocks: u32, logical: u64) -> PageFtl {
        PageFtl::new(PageFtlConfig {
            nand: chip(ppb, blocks, 1_000_000),
            logical_pages: logical,
            gc,
            gc_threshold: 1,
            wear_threshold: None,
            verify: true,
            label: "page".into(),
        })
        .unwrap()
    }

    #[test]
    fn greedy_cleans_the_blocks_with_most_invalid_pages() {
        // 4 pages per block, 4 logical blocks, 6 physical (1 spare + 1 reserve).
        let mut f = ftl(GcPolicy::Greedy, 4, 6, 16);
        for p in 0..16 {
            f.write(p).unwrap(); // blocks 0..3
        }
        for p in [8, 9, 10, 5] {
            f.write(p).unwrap(); // block 4; block 2 keeps 1 valid page, block 1 keeps 3
        }
        assert_eq!(f.stats().erases, 0);
        // The pool holds block 5 only (= threshold): the next write cleans block 2 (1 copy), the
        // pool is still at the threshold, so block 1 follows (3 copies), then the pool holds 2.
        f.write(0).unwrap();
        let s = f.stats();
        assert_eq!((s.erases, s.page_copies), (2, 4));
        assert_eq!((f.nand().erase_count(2), f.nand().erase_count(1)), (1, 1));
        let order: Vec<u32> = (0..4).map(|o| f.nand().peek(5, o).unwrap().lpn).collect();
        assert_eq!(order, [11, 4, 6, 7], "block 2's page first, then block 1's");
        f.check_invariants().unwrap();
    }

    #[test]
    fn the_chip_shows_every_host_write_with_its_version_at_once() {
        // Host writes are mapped a few writes later (`defer_write`); what `nand()` shows must
        // not lag: the third write of page 3, made last, carries version 3 on the chip.
        let mut f = ftl(GcPolicy::Greedy, 4, 6, 16);
        for p in [3, 1, 3, 2, 3] {
            f.write(p).unwrap();
        }
        let tags: Vec<(u32, u32)> = (0..4).map(|o| f.nand().peek(0, o).map(|t| (t.lpn, t.version)).unwrap()).collect();
        assert_eq!(tags, [(3, 1), (1, 1), (3, 2), (2, 1)]);
        assert_eq!(f.nand().peek(1, 0).map(|t| (t.lpn, t.version)), Some((3, 3)));
        f.check_invariants().unwrap();
    }

    #[test]
    fn fifo_cleans_the_oldest_block_even_if_it_is_full_of_valid_pages() {
        let mut f = ftl(GcPolicy::Fifo, 4, 6, 16);
        for p in 0..16 {
            f.write(p).unwrap();
        }
        for p in [8, 9, 10, 5] {
            f.write(p).unwrap();
        }
        // FIFO cleans blocks 0 (4 valid), 1 (3 valid), 2 (1 valid) in seal order.
        f.write(0).unwrap();
        let s = f.stats();
        assert_eq!((s.erases, s.page_copies), (3, 8));
        assert_eq!((0..4).map(|b| f.nand().erase_count(b)).collect::<Vec<_>>(), [1, 1, 1, 0]);
        f.check_invariants().unwrap();
    }

    #[test]
    fn cost_benefit_prefers_the_older_block_at_equal_utilisation() {
        let mut f = ftl(GcPolicy::CostBenefit, 4, 7, 20);
        for p in 0..20 {
            f.write(p).unwrap(); // blocks 0..4
        }
        for p in [4, 5, 12, 13] {
            f.write(p).unwrap(); // block 5; blocks 1 and 3 keep 2 valid pages each
        }
        f.write(0).unwrap(); // cleans block 1 (sealed earlier) first, then block 3
        assert_eq!(f.stats().page_copies, 4);
        let order: Vec<u32> = (0..4).map(|o| f.nand().peek(6, o).unwrap().lpn).collect();
        assert_eq!(order, [6, 7, 14, 15]);
        f.check_invariants().unwrap();
    }

    #[test]
    fn cost_benefit_weighs_age_against_utilisation() {
        // ppb = 4. Block 0: 3 valid, sealed at t = 0; block 1: 2 valid, sealed later. Scores at
        // `now`: (1/4)·age/(3/2) = age/6 against (2/4)·age/1 = age/2.
        let pick = |sealed_1: u64, now: u64| {
            let mut v = Victims::new(GcPolicy::CostBenefit, 4, 4);
            v.insert(0, 3, 0);
            v.insert(1, 2, sealed_1);
            v.insert(2, 4, 0); // full of valid pages: score 0
            v.take(4, now).unwrap()
        };
        assert_eq!(pick(900, 1000), 0, "1000/6 > 100/2");
        assert_eq!(pick(500, 1000), 1, "500/2 > 1000/6");
        assert_eq!(pick(834, 1000), 0, "1000/6 = 166.7 > 166/2 = 83");
        // Exact tie (age_0/6 == age_1/2): fewer valid pages wins.
        assert_eq!(pick(600, 900), 1, "900/6 = 150 = 300/2: the tie goes to fewer valid pages");
        let mut v = Victims::new(GcPolicy::CostBenefit, 4, 4);
        v.insert(3, 3, 0);
        v.insert(1, 0, 999);
        assert_eq!(v.take(4, 1000), Some(1), "an empty block wins outright");
        assert_eq!(v.take(4, 1000), Some(3));
        assert_eq!(v.take(4, 1000), None);
    }

    #[test]
    fn deferred_invalidations_keep_every_count_and_choice() {
        // The invariants (mapping, live bits, valid counts, victim index, with pending
        // invalidations accounted for) after every write, for every policy, with wear levelling
        // moving blocks too; then again once every pending invalidation is applied. (The
        // choices themselves are checked by the order tests above and Desnoyers' formula.)
        for gc in GcPolicy::ALL {
            let mut f = PageFtl::new(PageFtlConfig {
                nand: chip(8, 12, 1_000_000),
                logical_pages: 64,
                gc,
                gc_threshold: 1,
                wear_threshold: Some(4),
                verify: true,
                label: String::new(),
            })
            .unwrap();
            let mut s = 11u64;
            for _ in 0..5_000u64 {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // Skewed: a hot quarter gets most writes, so a page is often rewritten while
                // its previous copy's invalidation is still pending.
                let p = if (s >> 60) < 12 { (s >> 33) % 16 } else { (s >> 33) % 64 };
                f.write(p).unwrap();
                f.check_invariants().unwrap();
                assert!(f.pending_invalidations().count() <= PENDING);
            }
            f.drain_invalidations();
            assert_eq!(f.pending_invalidations().count(), 0);
            f.check_invariants().unwrap();
            for p in 0..64 {
                f.read(p).unwrap();
            }
        }
    }

    #[test]
    fn verification_reports_a_stale_read() {
        let mut f = ftl(GcPolicy::Greedy, 4, 6, 16);
        f.write(1).unwrap();
        f.bump_version(1); // the bookkeeping now expects version 2; the chip holds 1
        assert_eq!(f.read(1), Err(DeviceError::Integrity { page: 1, expected: 2, got: 1 }));
        f.bump_version(2); // never written: the device finds initial contents
        assert_eq!(f.read(2), Err(DeviceError::Integrity { page: 2, expected: 1, got: 0 }));
        f.verify = false;
        assert!(f.read(1).is_ok());
    }

    #[test]
    fn gc_reserve_and_spare_space_are_checked() {
        let base = PageFtlConfig {
            nand: chip(4, 6, 10),
            logical_pages: 16,
            gc: GcPolicy::Greedy,
            gc_threshold: 1,
            wear_threshold: None,
            verify: true,
            label: String::new(),
        };
        assert!(PageFtl::new(base.clone()).is_ok());
        let too_small = PageFtlConfig { logical_pages: 17, ..base.clone() };
        assert!(matches!(PageFtl::new(too_small), Err(DeviceError::Config(_))));
        let no_reserve = PageFtlConfig { gc_threshold: 0, ..base.clone() };
        assert!(matches!(PageFtl::new(no_reserve), Err(DeviceError::Config(_))));
        let zero = PageFtlConfig { logical_pages: 0, ..base.clone() };
        assert!(matches!(PageFtl::new(zero), Err(DeviceError::Config(_))));
        let wl0 = PageFtlConfig { wear_threshold: Some(0), ..base };
        assert!(matches!(PageFtl::new(wl0), Err(DeviceError::Config(_))));
    }

    #[test]
    fn minimal_spare_space_still_makes_progress() {
        // One spare block, one reserve block: every GC frees little, but never hangs.
        for gc in GcPolicy::ALL {
            let mut f = ftl(gc, 4, 6, 16);
            let mut s = 7u64;
            for i in 0..20_000u64 {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                f.write((s >> 33) % 16).unwrap();
                if i % 97 == 0 {
                    f.check_invariants().unwrap();
                }
            }
            f.check_invariants().unwrap();
        }
    }

    #[test]
    fn static_wear_levelling_moves_cold_data() {
        // Half the pages are cold (written once), the other half hot. Without static levelling,
        // the cold blocks are never erased; with it, the spread stays near the threshold.
        let run = |wear: Option<u32>| {
            let mut f = PageFtl::new(PageFtlConfig {
                nand: chip(4, 20, 1_000_000),
                logical_pages: 48,
                gc: GcPolicy::Greedy,
                gc_threshold: 2,
                wear_threshold: wear,
                verify: true,
                label: String::new(),
            })
            .unwrap();
            for p in 0..48 {
                f.write(p).unwrap();
            }
            let mut s = 3u64;
            for i in 0..200_000u64 {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                f.write(24 + (s >> 33) % 24).unwrap();
                if i % 1000 == 0 {
                    f.check_invariants().unwrap();
                }
            }
            f.check_invariants().unwrap();
            for p in 0..48 {
                f.read(p).unwrap();
            }
            (f.stats(), f.wear_moves())
        };
        let (off, moves_off) = run(None);
        let (on, moves_on) = run(Some(20));
        assert_eq!(moves_off, 0);
        assert!(moves_on > 0);
        assert_eq!(off.erase_count_min, 0, "cold blocks are never erased without static levelling");
        assert!(on.erase_count_max - on.erase_count_min <= 20 + 2, "spread {on:?}");
        assert!(off.erase_count_max - off.erase_count_min > 100);
    }

    #[test]
    fn worn_out_blocks_are_retired_then_reported() {
        let mut f = PageFtl::new(PageFtlConfig {
            nand: chip(4, 8, 3),
            logical_pages: 16,
            gc: GcPolicy::Greedy,
            gc_threshold: 1,
            wear_threshold: None,
            verify: true,
            label: String::new(),
        })
        .unwrap();
        let mut err = None;
        for i in 0..100_000u64 {
            match f.write(i * 7 % 16) {
                Ok(_) => {}
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
            f.check_invariants().unwrap();
        }
        assert!(matches!(err, Some(DeviceError::WornOut { .. })), "{err:?}");
        assert!(f.retired_blocks() > 0);
        let s = f.stats();
        assert!(s.erase_count_max <= 3);
    }
}
