//! The NAND chip model: geometry, latencies, endurance, and the rules of flash, enforced.
//!
//! A chip is an array of blocks, each an array of pages. Three operations exist:
//!
//! * **read** a programmed page (costs `read_ns`);
//! * **program** a page (costs `program_ns`): only the block's *next free page* may be programmed,
//!   so pages of a block are written in order, each exactly once between erases — the
//!   erase-before-write rule and the in-order rule of large-block NAND in one check;
//! * **erase** a whole block (costs `erase_ns`): every page of it becomes programmable again and
//!   the block's erase count grows by one. A block erased `endurance_cycles` times is worn out:
//!   erasing it again fails with [`DeviceError::WornOut`] and the translation layer must retire it.
//!
//! Breaking a rule returns [`DeviceError::FlashRule`]: only a buggy translation layer does that,
//! and the tests check that none ever does.
//!
//! Each physical page stores, as its "contents", the logical page and the version it was
//! programmed with (two `u32`: no data is simulated). Reads return them, so the layers above can
//! verify that a read returns the newest version written. Version 0 means "initial contents"
//! (a page the host never wrote; the block-level translation layers program such pages when they
//! must fill a gap below a later page, because the in-order rule forbids skipping a page).
//!
//! Translation layers also *peek* at the stored tags without cost: real FTLs keep a reverse map
//! (physical → logical) in RAM or in the spare area; the chip's tag array plays that role here so
//! the FTLs need no second copy of it.
//!
//! Presets ([`NandPreset`]):
//!
//! | preset   | page    | pages/block | read   | program | erase  | endurance |
//! |----------|---------|-------------|--------|---------|--------|-----------|
//! | `micron` | 2048 B  | 64          | 25 µs  | 220 µs  | 1.5 ms | 100,000   |
//! | `ref`    | 2048 B  | 64          | 10 µs  | 200 µs  | 2 ms   | 100,000   |
//!
//! `micron` is the MICRON MT29F4G08AAA of the AD-LRU paper (Table 2). `ref` is Table I of the REF
//! paper (Seo and Shin 2008), which gives no endurance: we use 100,000 cycles, the usual figure
//! for the single-level-cell large-block NAND of that time (the same as the MICRON chip), so the
//! two presets differ only in what the papers state.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::device::{DeviceError, Nanos};

/// `n` copies of `value` in a vector whose memory the operating system is asked to back with
/// transparent huge pages (Linux: `madvise(MADV_HUGEPAGE)` before the first touch), so that
/// random accesses into a large table (a chip's page records, an FTL's mapping, a simulator's
/// page table) miss the TLB far less often. Elsewhere, or when the advice is not taken, an
/// ordinary vector: the contents are the same either way.
pub fn huge_vec<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = n.saturating_mul(size_of::<T>());
        let start = v.as_ptr() as usize;
        let (first, end) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
        if bytes >= HUGE && end > first {
            // SAFETY: [first, end) lies inside the allocation `v` owns (its capacity covers
            // `bytes`); madvise changes only the kernel's paging advice for that range.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    v.resize(n, value);
    v
}

/// Hints the CPU to bring `v[i]` into cache (nothing when `i` is out of bounds). A prefetch
/// changes no state and cannot fault.
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
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

/// Sizes of a chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NandGeometry {
    /// Bytes per page (informational: no data is stored).
    pub page_size_bytes: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Erase blocks on the chip.
    pub blocks: u32,
}

impl NandGeometry {
    /// Physical pages on the chip.
    pub fn pages(&self) -> u64 {
        self.pages_per_block as u64 * self.blocks as u64
    }
}

/// Latencies of the three NAND operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NandTiming {
    /// One page read, in nanoseconds.
    pub read_ns: Nanos,
    /// One page program, in nanoseconds.
    pub program_ns: Nanos,
    /// One block erase, in nanoseconds.
    pub erase_ns: Nanos,
}

/// Everything that defines a chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NandConfig {
    /// Sizes.
    pub geometry: NandGeometry,
    /// Latencies.
    pub timing: NandTiming,
    /// Erases a block survives; the next erase fails with [`DeviceError::WornOut`].
    pub endurance_cycles: u32,
}

/// The chips of the papers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum NandPreset {
    /// MICRON MT29F4G08AAA (AD-LRU paper, Table 2): 2 KB pages, 64 pages per block, 25 µs read,
    /// 220 µs program, 1.5 ms erase, 100,000 cycles.
    #[default]
    Micron,
    /// REF paper, Table I: 2 KB pages, 64 pages per block, 10 µs read, 200 µs program, 2 ms
    /// erase; endurance 100,000 cycles (our choice: the paper gives none).
    Ref,
}

impl NandPreset {
    /// All presets, in the order error messages list them.
    pub const ALL: [NandPreset; 2] = [NandPreset::Micron, NandPreset::Ref];

    /// The preset's name as the CLI and labels spell it.
    pub fn name(self) -> &'static str {
        match self {
            NandPreset::Micron => "micron",
            NandPreset::Ref => "ref",
        }
    }

    /// Page size, pages per block, timing and endurance of the preset, with `blocks` blocks.
    pub fn config(self, blocks: u32) -> NandConfig {
        let (timing, endurance_cycles) = match self {
            NandPreset::Micron => (NandTiming { read_ns: 25_000, program_ns: 220_000, erase_ns: 1_500_000 }, 100_000),
            NandPreset::Ref => (NandTiming { read_ns: 10_000, program_ns: 200_000, erase_ns: 2_000_000 }, 100_000),
        };
        NandConfig {
            geometry: NandGeometry { page_size_bytes: 2048, pages_per_block: 64, blocks },
            timing,
            endurance_cycles,
        }
    }
}

impl fmt::Display for NandPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for NandPreset {
    type Err = DeviceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        NandPreset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| DeviceError::Config(format!("unknown flash chip preset `{s}` (valid: micron, ref)")))
    }
}

impl NandConfig {
    /// Checks that the chip can exist.
    pub fn validate(&self) -> Result<(), DeviceError> {
        let g = &self.geometry;
        if g.pages_per_block == 0 || g.blocks == 0 {
            return Err(DeviceError::Config(format!(
                "a flash chip needs at least one block of at least one page (got {} blocks of {} pages)",
                g.blocks, g.pages_per_block
            )));
        }
        if g.page_size_bytes == 0 {
            return Err(DeviceError::Config("the flash page size must be at least one byte".into()));
        }
        if g.pages() >= u32::MAX as u64 {
            return Err(DeviceError::Config(format!(
                "a chip of {} pages is too large: physical page numbers are 32-bit (at most {} pages)",
                g.pages(),
                u32::MAX - 1
            )));
        }
        if self.endurance_cycles == 0 {
            return Err(DeviceError::Config("the flash endurance must be at least one erase cycle".into()));
        }
        Ok(())
    }
}

/// What a physical page holds: the logical page and version it was programmed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageTag {
    /// Logical page number.
    pub lpn: u32,
    /// Version of that logical page (0 = initial contents, never written by the host).
    pub version: u32,
}

/// What [`Nand::program_run`] programs into one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPage {
    /// The contents of a programmed page: a read and a program (a copy). A page holding
    /// initial contents (version 0) is not read: its contents are programmed as padding.
    Copy {
        /// Block of the source page.
        block: u32,
        /// Offset of the source page in its block.
        offset: u32,
    },
    /// These contents (a host write, or padding with version 0): a program only.
    Tag(PageTag),
}

/// Operation counters of a chip since its last [`Nand::reset_counters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NandCounters {
    /// Page reads.
    pub reads: u64,
    /// Page programs.
    pub programs: u64,
    /// Block erases.
    pub erases: u64,
    /// Sum of the latencies of the operations counted.
    pub time_ns: Nanos,
}

/// Summary of the erase counts of all blocks (lifetime wear, never reset).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EraseSummary {
    /// Smallest erase count.
    pub min: u64,
    /// Largest erase count.
    pub max: u64,
    /// Mean erase count.
    pub mean: f64,
    /// Population standard deviation of the erase counts.
    pub std: f64,
}

/// Operations performed, by kind. Every operation of a kind costs the same, so the simulated
/// time is a function of these three counts and is computed when asked, not summed per
/// operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Ops {
    reads: u64,
    programs: u64,
    erases: u64,
}

/// A simulated NAND chip that enforces the rules of flash.
#[derive(Debug, Clone)]
pub struct Nand {
    config: NandConfig,
    ppb: u32,
    /// Per block: offset of the next page that may be programmed (= pages programmed so far).
    next_free: Vec<u32>,
    /// Per block: erases so far (lifetime).
    erase_count: Vec<u32>,
    /// Per physical page: the logical page and version it was last programmed with (one record,
    /// so a page operation touches one cache line).
    tags: Vec<PageTag>,
    /// Operations since the chip was created (the clock: cost-benefit cleaning ages blocks with
    /// it).
    lifetime: Ops,
    /// `lifetime` at the last [`Nand::reset_counters`].
    at_reset: Ops,
}

impl Nand {
    /// A chip with every block erased and never worn.
    pub fn new(config: NandConfig) -> Result<Self, DeviceError> {
        config.validate()?;
        let g = config.geometry;
        let pages = g.pages() as usize;
        Ok(Nand {
            config,
            ppb: g.pages_per_block,
            next_free: vec![0; g.blocks as usize],
            erase_count: vec![0; g.blocks as usize],
            tags: huge_vec(pages, PageTag { lpn: 0, version: 0 }),
            lifetime: Ops::default(),
            at_reset: Ops::default(),
        })
    }

    /// The chip's configuration.
    pub fn config(&self) -> &NandConfig {
        &self.config
    }

    /// Pages per block.
    #[inline]
    pub fn pages_per_block(&self) -> u32 {
        self.ppb
    }

    /// Number of blocks.
    #[inline]
    pub fn blocks(&self) -> u32 {
        self.next_free.len() as u32
    }

    #[inline]
    fn rule(block: u32, offset: u32, rule: &'static str) -> DeviceError {
        DeviceError::FlashRule { block: block as u64, offset: offset as u64, rule }
    }

    #[inline]
    fn index(&self, block: u32, offset: u32) -> Result<usize, DeviceError> {
        if block as usize >= self.next_free.len() || offset >= self.ppb {
            return Err(Self::rule(block, offset, "no such page on the chip"));
        }
        Ok(block as usize * self.ppb as usize + offset as usize)
    }

    /// Reads a programmed page and returns what it holds.
    #[inline]
    pub fn read(&mut self, block: u32, offset: u32) -> Result<PageTag, DeviceError> {
        let i = self.index(block, offset)?;
        if offset >= self.next_free[block as usize] {
            return Err(Self::rule(block, offset, "read of a page not programmed since the block's last erase"));
        }
        self.lifetime.reads += 1;
        Ok(self.tags[i])
    }

    /// Reads a programmed page for a caller that does not look at what it holds: the same rule
    /// and count as [`read`](Self::read), without fetching the page's record.
    #[inline]
    pub fn read_without_contents(&mut self, block: u32, offset: u32) -> Result<(), DeviceError> {
        self.index(block, offset)?;
        if offset >= self.next_free[block as usize] {
            return Err(Self::rule(block, offset, "read of a page not programmed since the block's last erase"));
        }
        self.lifetime.reads += 1;
        Ok(())
    }

    /// Charges one page read without a page: what reading a logical page that no physical page
    /// holds costs (the device contract: a never-written page reads as initial contents and costs
    /// a read).
    #[inline]
    pub fn charge_read(&mut self) {
        self.lifetime.reads += 1;
    }

    /// Programs page `offset` of `block`, which must be the block's next free page.
    #[inline]
    pub fn program(&mut self, block: u32, offset: u32, tag: PageTag) -> Result<(), DeviceError> {
        let i = self.index(block, offset)?;
        let next = self.next_free[block as usize];
        if offset != next {
            return Err(Self::rule(
                block,
                offset,
                if offset < next {
                    "program of a page already programmed since the block's last erase"
                } else {
                    "program out of order (pages of a block are programmed in order, none skipped)"
                },
            ));
        }
        self.next_free[block as usize] = next + 1;
        self.tags[i] = tag;
        self.lifetime.programs += 1;
        Ok(())
    }

    /// Programs the next free page of `block` (the only one the in-order rule allows) with `tag`
    /// and returns its offset: [`program`](Self::program) for a caller that writes wherever the
    /// block is up to (a log-structured frontier), with the same rules and count. A full block
    /// is refused as `program` refuses the offset past its last page.
    #[inline]
    pub fn program_next(&mut self, block: u32, tag: PageTag) -> Result<u32, DeviceError> {
        let Some(&next) = self.next_free.get(block as usize) else {
            return Err(Self::rule(block, 0, "no such page on the chip"));
        };
        if next >= self.ppb {
            return Err(Self::rule(block, next, "no such page on the chip"));
        }
        self.next_free[block as usize] = next + 1;
        self.tags[block as usize * self.ppb as usize + next as usize] = tag;
        self.lifetime.programs += 1;
        Ok(next)
    }

    /// Programs the next `n` pages of `dst` in order, page `i` with what `page(i)` names: the
    /// block-level translation layers' merges and copies in one loop. The same rules as
    /// [`read`](Self::read) and [`program`](Self::program) one page at a time (room in `dst`,
    /// checked once; every source page programmed) and the same counts: a read and a program
    /// per copy, a program per other page. Returns the number of copies. On an error nothing
    /// counts and no page of `dst` becomes programmed.
    #[inline]
    pub fn program_run(&mut self, dst: u32, n: u32, mut page: impl FnMut(u32) -> RunPage) -> Result<u32, DeviceError> {
        let blocks = self.next_free.len();
        if dst as usize >= blocks {
            return Err(Self::rule(dst, 0, "no such page on the chip"));
        }
        let first = self.next_free[dst as usize];
        if n > self.ppb - first {
            return Err(Self::rule(dst, self.ppb, "no such page on the chip"));
        }
        let ppb = self.ppb as usize;
        let base = dst as usize * ppb + first as usize;
        let mut copies = 0;
        for i in 0..n {
            let tag = match page(i) {
                RunPage::Tag(t) => t,
                RunPage::Copy { block, offset } => {
                    if block as usize >= blocks || offset >= self.ppb {
                        return Err(Self::rule(block, offset, "no such page on the chip"));
                    }
                    if offset >= self.next_free[block as usize] {
                        return Err(Self::rule(
                            block,
                            offset,
                            "read of a page not programmed since the block's last erase",
                        ));
                    }
                    let t = self.tags[block as usize * ppb + offset as usize];
                    copies += u32::from(t.version != 0);
                    t
                }
            };
            self.tags[base + i as usize] = tag;
        }
        self.next_free[dst as usize] = first + n;
        self.lifetime.programs += u64::from(n);
        self.lifetime.reads += u64::from(copies);
        Ok(copies)
    }

    /// Copies pages `src_first..src_first + n` of block `src` to the next `n` pages of `dst`, in
    /// order: [`program_run`](Self::program_run) with `RunPage::Copy` for a contiguous range,
    /// checked once for the whole range and copied in one pass. Returns the number of copies
    /// (pages holding initial contents are padding, not copies).
    #[inline]
    pub fn copy_range(&mut self, src: u32, src_first: u32, dst: u32, n: u32) -> Result<u32, DeviceError> {
        let blocks = self.next_free.len();
        if src as usize >= blocks || dst as usize >= blocks {
            return Err(Self::rule(src.max(dst), 0, "no such page on the chip"));
        }
        let first = self.next_free[dst as usize];
        if n > self.ppb - first {
            return Err(Self::rule(dst, self.ppb, "no such page on the chip"));
        }
        if n > self.next_free[src as usize].saturating_sub(src_first) {
            return Err(Self::rule(
                src,
                src_first + n - 1,
                "read of a page not programmed since the block's last erase",
            ));
        }
        let ppb = self.ppb as usize;
        let (from, to) = (src as usize * ppb + src_first as usize, dst as usize * ppb + first as usize);
        let n_us = n as usize;
        self.tags.copy_within(from..from + n_us, to);
        let copies = self.tags[to..to + n_us].iter().map(|t| u32::from(t.version != 0)).sum();
        self.next_free[dst as usize] = first + n;
        self.lifetime.programs += u64::from(n);
        self.lifetime.reads += u64::from(copies);
        Ok(copies)
    }

    /// Copies pages `offsets` (in this order) of block `src` to the next pages of `dst` (another
    /// block): [`program_run`](Self::program_run) with `RunPage::Copy` from one block, with the
    /// block checks made once. Returns the number of copies (pages holding initial contents are
    /// padding, not copies).
    #[inline]
    pub fn copy_pages(&mut self, src: u32, offsets: &[u32], dst: u32) -> Result<u32, DeviceError> {
        let blocks = self.next_free.len();
        if src as usize >= blocks || dst as usize >= blocks || src == dst {
            return Err(Self::rule(src.max(dst), 0, "copy between pages of no two distinct blocks"));
        }
        let first = self.next_free[dst as usize];
        let n = offsets.len() as u32;
        if n > self.ppb - first {
            return Err(Self::rule(dst, self.ppb, "no such page on the chip"));
        }
        let programmed = self.next_free[src as usize];
        if let Some(&o) = offsets.iter().find(|&&o| o >= programmed) {
            return Err(Self::rule(src, o, "read of a page not programmed since the block's last erase"));
        }
        let ppb = self.ppb as usize;
        let (s0, d0) = (src as usize * ppb, dst as usize * ppb + first as usize);
        // The two blocks' pages as disjoint slices: the copy loop checks no bounds.
        let (from, to) = if s0 < d0 {
            let (a, b) = self.tags.split_at_mut(d0);
            (&a[s0..s0 + ppb], &mut b[..offsets.len()])
        } else {
            let (a, b) = self.tags.split_at_mut(s0);
            (&b[..ppb], &mut a[d0..d0 + offsets.len()])
        };
        let mut copies = 0;
        for (t, &o) in to.iter_mut().zip(offsets) {
            *t = from[o as usize];
            copies += u32::from(t.version != 0);
        }
        self.next_free[dst as usize] = first + n;
        self.lifetime.programs += u64::from(n);
        self.lifetime.reads += u64::from(copies);
        Ok(copies)
    }

    /// Erases a block. Fails with [`DeviceError::WornOut`] (changing nothing) once the block has
    /// been erased `endurance_cycles` times.
    pub fn erase(&mut self, block: u32) -> Result<(), DeviceError> {
        if block as usize >= self.next_free.len() {
            return Err(Self::rule(block, 0, "erase of a block that does not exist"));
        }
        let count = self.erase_count[block as usize];
        if count >= self.config.endurance_cycles {
            return Err(DeviceError::WornOut { block: block as u64, erases: count as u64 });
        }
        self.erase_count[block as usize] = count + 1;
        self.next_free[block as usize] = 0;
        self.lifetime.erases += 1;
        Ok(())
    }

    /// Offset of the block's next free page (= number of pages programmed since its last erase).
    #[inline]
    pub fn next_free(&self, block: u32) -> u32 {
        self.next_free[block as usize]
    }

    /// Sets the version of the tag programmed at physical page `ppn` (`block · ppb + offset`),
    /// for a translation layer that numbers a host write's version after programming it (the
    /// page-mapped FTL's deferred writes). Costs nothing: it completes the program.
    #[inline(always)]
    pub(crate) fn set_version(&mut self, ppn: u32, version: u32) {
        self.tags[ppn as usize].version = version;
    }

    /// What a page holds, without the cost of a read (the FTL's reverse map); `None` if the page
    /// is not programmed.
    #[inline]
    pub fn peek(&self, block: u32, offset: u32) -> Option<PageTag> {
        if offset < self.next_free[block as usize] {
            Some(self.tags[block as usize * self.ppb as usize + offset as usize])
        } else {
            None
        }
    }

    /// What the pages of a block were last programmed with, without cost (the page-mapped FTL's
    /// cleaning scans a sealed block, whose pages are all programmed).
    #[inline]
    pub(crate) fn block_tags(&self, block: u32) -> &[PageTag] {
        let ppb = self.ppb as usize;
        &self.tags[block as usize * ppb..(block as usize + 1) * ppb]
    }

    /// Lifetime erase count of a block.
    #[inline]
    pub fn erase_count(&self, block: u32) -> u32 {
        self.erase_count[block as usize]
    }

    /// Lifetime erase counts of all blocks.
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }

    /// Whether the block can still be erased.
    pub fn is_worn_out(&self, block: u32) -> bool {
        self.erase_count[block as usize] >= self.config.endurance_cycles
    }

    /// The time `ops` take.
    #[inline]
    fn time_of(&self, ops: Ops) -> Nanos {
        let t = &self.config.timing;
        ops.reads * t.read_ns + ops.programs * t.program_ns + ops.erases * t.erase_ns
    }

    /// Counters since the last reset.
    pub fn counters(&self) -> NandCounters {
        let (l, r) = (self.lifetime, self.at_reset);
        let ops = Ops { reads: l.reads - r.reads, programs: l.programs - r.programs, erases: l.erases - r.erases };
        NandCounters { reads: ops.reads, programs: ops.programs, erases: ops.erases, time_ns: self.time_of(ops) }
    }

    /// Zeroes the operation counters (erase counts, contents and the clock are kept: wear is real).
    pub fn reset_counters(&mut self) {
        self.at_reset = self.lifetime;
    }

    /// Simulated time since the chip was created (never reset).
    #[inline]
    pub fn clock_ns(&self) -> Nanos {
        self.time_of(self.lifetime)
    }

    /// Minimum, maximum, mean and standard deviation of the erase counts (lifetime). O(blocks).
    pub fn erase_summary(&self) -> EraseSummary {
        let n = self.erase_count.len() as f64;
        let mut min = u32::MAX;
        let mut max = 0;
        let mut sum = 0u64;
        for &c in &self.erase_count {
            min = min.min(c);
            max = max.max(c);
            sum += c as u64;
        }
        let mean = sum as f64 / n;
        let var = self.erase_count.iter().map(|&c| (c as f64 - mean).powi(2)).sum::<f64>() / n;
        EraseSummary { min: min as u64, max: max as u64, mean, std: var.sqrt() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(endurance: u32) -> Nand {
        Nand::new(NandConfig {
            geometry: NandGeometry { page_size_bytes: 2048, pages_per_block: 4, blocks: 3 },
            timing: NandTiming { read_ns: 10, program_ns: 200, erase_ns: 2000 },
            endurance_cycles: endurance,
        })
        .unwrap()
    }

    fn tag(lpn: u32, version: u32) -> PageTag {
        PageTag { lpn, version }
    }

    #[test]
    fn pages_are_programmed_in_order_once_per_erase() {
        let mut n = tiny(10);
        n.program(1, 0, tag(7, 1)).unwrap();
        // Skipping a page is refused.
        assert!(matches!(n.program(1, 2, tag(8, 1)), Err(DeviceError::FlashRule { block: 1, offset: 2, .. })));
        // Reprogramming without erase is refused.
        assert!(matches!(n.program(1, 0, tag(8, 1)), Err(DeviceError::FlashRule { block: 1, offset: 0, .. })));
        n.program(1, 1, tag(8, 3)).unwrap();
        assert_eq!(n.read(1, 1).unwrap(), tag(8, 3));
        assert_eq!(n.read(1, 0).unwrap(), tag(7, 1));
        // Reading a page not programmed is refused.
        assert!(matches!(n.read(1, 2), Err(DeviceError::FlashRule { .. })));
        assert!(matches!(n.read(0, 0), Err(DeviceError::FlashRule { .. })));
        // Out of the chip.
        assert!(matches!(n.program(3, 0, tag(0, 1)), Err(DeviceError::FlashRule { .. })));
        assert!(matches!(n.program(0, 4, tag(0, 1)), Err(DeviceError::FlashRule { .. })));
        // Erase resets the block.
        n.erase(1).unwrap();
        assert_eq!(n.next_free(1), 0);
        assert!(n.read(1, 0).is_err());
        n.program(1, 0, tag(9, 1)).unwrap();
        let c = n.counters();
        assert_eq!((c.reads, c.programs, c.erases), (2, 3, 1));
        assert_eq!(c.time_ns, 2 * 10 + 3 * 200 + 2000);
        assert_eq!(n.erase_count(1), 1);
    }

    #[test]
    fn a_run_programs_in_order_and_counts_like_single_operations() {
        let mut n = tiny(10);
        n.program(0, 0, tag(1, 1)).unwrap();
        n.program(0, 1, tag(2, 0)).unwrap(); // initial contents (padding)
        n.program(0, 2, tag(3, 4)).unwrap();
        n.reset_counters();
        // Block 1: a copy, a padding page copied as padding (no read), a new tag.
        let run =
            [RunPage::Copy { block: 0, offset: 2 }, RunPage::Copy { block: 0, offset: 1 }, RunPage::Tag(tag(9, 7))];
        assert_eq!(n.program_run(1, 3, |i| run[i as usize]), Ok(1));
        assert_eq!((n.peek(1, 0), n.peek(1, 1), n.peek(1, 2)), (Some(tag(3, 4)), Some(tag(2, 0)), Some(tag(9, 7))));
        let c = n.counters();
        assert_eq!((c.reads, c.programs, c.time_ns), (1, 3, 10 + 3 * 200));
        // The rules hold: no room for two more pages in block 1 (4 pages per block) ...
        assert!(matches!(n.program_run(1, 2, |_| RunPage::Tag(tag(0, 1))), Err(DeviceError::FlashRule { .. })));
        // ... no copy of a page not programmed (offset 3 of block 0), no block beyond the chip;
        // a refused run programs and counts nothing.
        assert!(matches!(
            n.program_run(2, 1, |_| RunPage::Copy { block: 0, offset: 3 }),
            Err(DeviceError::FlashRule { .. })
        ));
        assert!(matches!(
            n.program_run(2, 1, |_| RunPage::Copy { block: 3, offset: 0 }),
            Err(DeviceError::FlashRule { .. })
        ));
        assert!(matches!(n.program_run(3, 0, |_| RunPage::Tag(tag(0, 1))), Err(DeviceError::FlashRule { .. })));
        assert_eq!(n.next_free(2), 0);
        assert_eq!(n.counters(), c);
        // A run continues at the block's next free page.
        n.program(2, 0, tag(5, 1)).unwrap();
        assert_eq!(n.program_run(2, 1, |_| RunPage::Copy { block: 0, offset: 0 }), Ok(1));
        assert_eq!(n.peek(2, 1), Some(tag(1, 1)));
    }

    #[test]
    fn a_copied_range_is_a_run_of_copies() {
        let mut a = tiny(10);
        for (o, t) in [(0, tag(1, 1)), (1, tag(2, 0)), (2, tag(3, 4))] {
            a.program(0, o, t).unwrap();
        }
        a.program(2, 0, tag(8, 1)).unwrap();
        let mut b = a.clone();
        assert_eq!(a.copy_range(0, 1, 2, 2), Ok(1));
        assert_eq!(b.program_run(2, 2, |i| RunPage::Copy { block: 0, offset: 1 + i }), Ok(1));
        for o in 0..4 {
            assert_eq!(a.peek(2, o), b.peek(2, o));
        }
        assert_eq!(a.counters(), b.counters());
        // Beyond the programmed pages of the source, or beyond the room of the destination.
        assert!(matches!(a.copy_range(0, 2, 1, 2), Err(DeviceError::FlashRule { .. })));
        assert!(matches!(a.copy_range(0, 0, 2, 2), Err(DeviceError::FlashRule { .. })));
        assert!(matches!(a.copy_range(3, 0, 1, 0), Err(DeviceError::FlashRule { .. })));
        assert_eq!(a.counters(), b.counters());
    }

    #[test]
    fn copied_pages_are_a_run_of_copies() {
        let mut a = tiny(10);
        for (o, t) in [(0, tag(1, 1)), (1, tag(2, 0)), (2, tag(3, 4))] {
            a.program(2, o, t).unwrap();
        }
        a.program(1, 0, tag(8, 1)).unwrap();
        let mut b = a.clone();
        // Backwards and forwards on the chip (block 2 to 1, then 2 to 0).
        let offsets = [2, 0, 1];
        for (dst, n) in [(1, 3), (0, 3)] {
            let want = b.program_run(dst, n, |i| RunPage::Copy { block: 2, offset: offsets[i as usize] });
            assert_eq!(a.copy_pages(2, &offsets[..n as usize], dst), want);
            for o in 0..4 {
                assert_eq!(a.peek(dst, o), b.peek(dst, o));
            }
            assert_eq!(a.counters(), b.counters());
        }
        // Not programmed, no room, the same block, beyond the chip: refused, nothing counted.
        let c = a.counters();
        assert!(matches!(a.copy_pages(2, &[3], 0), Err(DeviceError::FlashRule { .. })));
        assert!(matches!(a.copy_pages(2, &[0, 0], 1), Err(DeviceError::FlashRule { .. })));
        assert!(matches!(a.copy_pages(2, &[0], 2), Err(DeviceError::FlashRule { .. })));
        assert!(matches!(a.copy_pages(2, &[0], 3), Err(DeviceError::FlashRule { .. })));
        assert_eq!(a.counters(), c);
    }

    #[test]
    fn a_block_wears_out_after_its_endurance() {
        let mut n = tiny(2);
        n.erase(0).unwrap();
        n.erase(0).unwrap();
        assert!(n.is_worn_out(0));
        assert_eq!(n.erase(0), Err(DeviceError::WornOut { block: 0, erases: 2 }));
        assert_eq!(n.counters().erases, 2, "a refused erase is not an operation");
        // A worn block still holds what it holds and can be programmed up to its end.
        n.program(0, 0, tag(1, 1)).unwrap();
        assert_eq!(n.read(0, 0).unwrap(), tag(1, 1));
    }

    #[test]
    fn counters_reset_but_wear_and_clock_persist() {
        let mut n = tiny(5);
        n.erase(2).unwrap();
        n.charge_read();
        let clock = n.clock_ns();
        assert_eq!(clock, 2010);
        n.reset_counters();
        assert_eq!(n.counters(), NandCounters::default());
        assert_eq!(n.erase_count(2), 1);
        assert_eq!(n.clock_ns(), clock);
        let s = n.erase_summary();
        assert_eq!((s.min, s.max), (0, 1));
        assert!((s.mean - 1.0 / 3.0).abs() < 1e-12);
        assert!((s.std - (2.0f64 / 9.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn presets_follow_the_papers_tables() {
        let m = NandPreset::Micron.config(10);
        assert_eq!(m.geometry, NandGeometry { page_size_bytes: 2048, pages_per_block: 64, blocks: 10 });
        assert_eq!(m.timing, NandTiming { read_ns: 25_000, program_ns: 220_000, erase_ns: 1_500_000 });
        assert_eq!(m.endurance_cycles, 100_000);
        let r = NandPreset::Ref.config(10);
        assert_eq!(r.timing, NandTiming { read_ns: 10_000, program_ns: 200_000, erase_ns: 2_000_000 });
        assert_eq!(r.geometry.pages_per_block, 64);
        assert_eq!("ref".parse::<NandPreset>().unwrap(), NandPreset::Ref);
        let e = "slc".parse::<NandPreset>().unwrap_err();
        assert!(e.to_string().contains("micron, ref"), "{e}");
    }

    #[test]
    fn impossible_chips_are_configuration_errors() {
        let mut c = NandPreset::Micron.config(0);
        assert!(matches!(Nand::new(c), Err(DeviceError::Config(_))));
        c.geometry.blocks = 4;
        c.geometry.pages_per_block = 0;
        assert!(matches!(Nand::new(c), Err(DeviceError::Config(_))));
        c.geometry.pages_per_block = 64;
        c.endurance_cycles = 0;
        assert!(matches!(Nand::new(c), Err(DeviceError::Config(_))));
        c.endurance_cycles = 1;
        c.geometry.blocks = u32::MAX / 32;
        assert!(matches!(Nand::new(c), Err(DeviceError::Config(_))));
    }
}
