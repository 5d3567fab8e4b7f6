//! BAST: log-block FTL with one log block per data block (1:1 association).
//!
//! Source: J. Kim, J. M. Kim, S. H. Noh, S. L. Min, Y. Cho, *A space-efficient flash translation
//! layer for CompactFlash systems*, IEEE Trans. Consumer Electronics 48(2), 2002; merge types as
//! in the REF paper (Seo and Shin 2008, §II.A, Figs. 1 and 3) and the CFDC paper (§2.3).
//!
//! Data blocks are block-mapped (page `o` of a logical block at offset `o`). `N` log blocks
//! absorb updates; each belongs to one data block and is page-mapped inside (a page may appear
//! several times; the last copy is the newest).
//!
//! A write to logical page `o` of logical block `l`:
//!
//! 1. goes **in place** if `o` is at or beyond the data block's next free page (padding any
//!    never-written pages below it, see [the padding rule](super)); a logical block's first write
//!    takes a fresh data block;
//! 2. otherwise **appends to `l`'s log block**; if `l` has none, a free log slot gets a fresh
//!    block; if all `N` slots are taken, the **least recently written** log block (LRU: the one
//!    whose last append is oldest; *not* random) is merged first to free its slot.
//!
//! A log block that becomes **full** is merged either **lazily** (the default: it stays until its
//! data block needs another log page, or until it is chosen as the LRU victim for another data
//! block) or **eagerly** (at once, freeing its slot). Lazy is what the REF paper's Fig. 6 shows:
//! BPLRU's padded blocks fill their log blocks, and the merges appear only when a log block is
//! needed (`M [L0]` at `Write [p1]`), three in all where eager merging would count five. Both
//! cost the same per merge; they differ in when merges happen and in the full log blocks still
//! pending at the end of a run, which are not counted.
//!
//! Merges, for log block `L` of data block `D` (`k` pages in `L`, `w` pages programmed in `D`):
//!
//! ```text
//!  switch  L = [0 1 2 3]  D = [0 1 2 3]      L becomes the data block; erase D.
//!          (in offset order, and D has nothing above k)          0 copies, 1 erase
//!  partial L = [0 1 . .]  D = [0 1 2 3]      copy D's pages k..w−1 into L (in order);
//!          (in offset order 0..k−1)           L becomes the data block; erase D.
//!                                                                w−k copies, 1 erase
//!  full    L = [2 0 2 .]  D = [0 1 2 3]      newest copy of every page 0..w−1 into a
//!          (anything else)                    free block F; F becomes the data block;
//!                                             erase L and D.     w copies, 2 erases
//! ```
//!
//! "In offset order" means log page `i` holds offset `i` for every written `i`. With full data
//! blocks (`w` = pages per block, e.g. after sequential preconditioning) these are exactly the
//! paper's definitions: switch needs a full, in-order log; partial copies `n − k` pages. With a
//! partly written data block, a merge with nothing to copy counts as a switch. Copies from the
//! log in a full merge count as copies (the newest version of a page is rewritten either way).
//!
//! Space: data blocks + `N` log blocks + 1 free block for full merges.

use super::{Flash, NONE, Versions, check_newest, check_page, check_roles, logical_size};
use crate::device::{Device, DeviceError, DeviceStats, Nanos};
use crate::nand::{Nand, NandConfig, PageTag};

/// Parameters of a [`BastFtl`].
#[derive(Debug, Clone, PartialEq)]
pub struct BastFtlConfig {
    /// The chip: at least `ceil(logical_pages / pages_per_block) + log_blocks + 1` blocks.
    pub nand: NandConfig,
    /// Pages the host may address.
    pub logical_pages: u64,
    /// Number of log blocks (at least 1; REF paper Table I: 8).
    pub log_blocks: u32,
    /// Merge a log block as soon as it is full (`true`) or only when its slot or its data block
    /// needs it (`false`, the default; see the module docs).
    pub eager_merge: bool,
    /// Check the version of every page read.
    pub verify: bool,
    /// Name reported by [`Device::name`].
    pub label: String,
}

/// One log block and its bookkeeping.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// Physical block, `NONE` if the slot is free.
    block: u32,
    /// Logical block it serves.
    lbn: u32,
    /// Every log page `i` holds offset `i` so far.
    in_order: bool,
    /// Host-write tick of its last append (LRU order).
    last_write: u64,
}

/// The BAST FTL (see the module docs).
#[derive(Debug, Clone)]
pub struct BastFtl {
    flash: Flash,
    ppb: u32,
    logical_pages: u32,
    data: Vec<u32>,
    /// Logical block → log slot, `NONE` if it has no log block.
    log_of: Vec<u32>,
    slots: Vec<Slot>,
    /// `slot · ppb + offset` → log page holding the newest copy of that offset, or `NONE`.
    pos: Vec<u32>,
    tick: u64,
    versions: Versions,
    verify: bool,
    eager_merge: bool,
    label: String,
}

impl BastFtl {
    /// An empty device on a fresh chip.
    pub fn new(config: BastFtlConfig) -> Result<Self, DeviceError> {
        let nand = Nand::new(config.nand)?;
        let ppb = nand.pages_per_block();
        let (logical_pages, logical_blocks) = logical_size(config.logical_pages, ppb)?;
        if config.log_blocks == 0 {
            return Err(DeviceError::Config("BAST needs at least one log block".into()));
        }
        let needed = logical_blocks as u64 + config.log_blocks as u64 + 1;
        if (nand.blocks() as u64) < needed {
            return Err(DeviceError::Config(format!(
                "{} blocks cannot hold {logical_blocks} data blocks, {} log blocks and the free block a full \
                 merge needs ({needed} blocks)",
                nand.blocks(),
                config.log_blocks
            )));
        }
        let n = config.log_blocks as usize;
        Ok(BastFtl {
            flash: Flash::new(nand),
            ppb,
            logical_pages,
            data: vec![NONE; logical_blocks as usize],
            log_of: vec![NONE; logical_blocks as usize],
            slots: vec![Slot { block: NONE, lbn: NONE, in_order: true, last_write: 0 }; n],
            pos: vec![NONE; n * ppb as usize],
            tick: 0,
            versions: Versions::new(logical_pages),
            verify: config.verify,
            eager_merge: config.eager_merge,
            label: config.label,
        })
    }

    /// The chip (read-only).
    pub fn nand(&self) -> &Nand {
        &self.flash.nand
    }

    /// Zeroes the counters (after preconditioning); wear persists.
    pub fn reset_stats(&mut self) {
        self.flash.reset_counters();
    }

    /// Logical blocks that currently have a log block, least recently written first.
    pub fn log_owners(&self) -> Vec<u64> {
        let mut v: Vec<&Slot> = self.slots.iter().filter(|s| s.block != NONE).collect();
        v.sort_by_key(|s| s.last_write);
        v.into_iter().map(|s| s.lbn as u64).collect()
    }

    fn place(&mut self, tag: PageTag) -> Result<(), DeviceError> {
        let (lbn, o) = (tag.lpn / self.ppb, tag.lpn % self.ppb);
        let mut d = self.data[lbn as usize];
        if d == NONE {
            d = self.flash.alloc()?;
            self.data[lbn as usize] = d;
        }
        if o >= self.flash.nand.next_free(d) {
            self.flash.pad_to(d, o, lbn)?;
            return self.flash.nand.program(d, o, tag);
        }
        let mut s = self.log_of[lbn as usize];
        if s != NONE && self.flash.nand.next_free(self.slots[s as usize].block) == self.ppb {
            // Lazy merging: the full log block gives way to a fresh one.
            self.merge(s)?;
            s = NONE;
        }
        if s == NONE {
            s = self.open_log(lbn)?;
        }
        let slot = self.slots[s as usize];
        let off = self.flash.nand.next_free(slot.block);
        self.flash.nand.program(slot.block, off, tag)?;
        self.pos[(s * self.ppb + o) as usize] = off;
        self.tick += 1;
        let slot = &mut self.slots[s as usize];
        slot.in_order &= off == o;
        slot.last_write = self.tick;
        if self.eager_merge && off + 1 == self.ppb {
            self.merge(s)?;
        }
        Ok(())
    }

    /// A free slot with a fresh block for `lbn`, merging the LRU log block if none is free.
    fn open_log(&mut self, lbn: u32) -> Result<u32, DeviceError> {
        let s = match self.slots.iter().position(|s| s.block == NONE) {
            Some(s) => s as u32,
            None => {
                let victim = (0..self.slots.len() as u32)
                    .min_by_key(|&s| self.slots[s as usize].last_write)
                    .expect("at least one log slot");
                self.merge(victim)?;
                victim
            }
        };
        let block = self.flash.alloc()?;
        self.slots[s as usize] = Slot { block, lbn, in_order: true, last_write: self.tick };
        self.log_of[lbn as usize] = s;
        Ok(s)
    }

    /// Merges log slot `s` with its data block and frees the slot.
    fn merge(&mut self, s: u32) -> Result<(), DeviceError> {
        let Slot { block: log, lbn, in_order, .. } = self.slots[s as usize];
        let d = self.data[lbn as usize];
        let k = self.flash.nand.next_free(log);
        let w = self.flash.nand.next_free(d);
        if in_order {
            // Switch or partial: the log becomes the data block after receiving pages k..w−1
            // (copies, or padding where the data block holds initial contents).
            let copies = self.flash.nand.copy_range(d, k, log, w.saturating_sub(k))?;
            self.flash.counters.page_copies += u64::from(copies);
            if k >= w {
                self.flash.counters.merges_switch += 1;
            } else {
                self.flash.counters.merges_partial += 1;
            }
            self.data[lbn as usize] = log;
            self.flash.release(d)?;
        } else {
            let fresh = self.flash.alloc()?;
            // The newest copy of every page: from the log where it holds one, else from the data
            // block (padding where that holds initial contents).
            let pos = &self.pos[(s * self.ppb) as usize..(s * self.ppb + w) as usize];
            let (mut copies, mut run) = (0, 0);
            for (j, &p) in pos.iter().enumerate() {
                if p != NONE {
                    // The data block's pages run..j, then the log's copy of page j.
                    copies += self.flash.nand.copy_range(d, run, fresh, j as u32 - run)?;
                    copies += self.flash.nand.copy_range(log, p, fresh, 1)?;
                    run = j as u32 + 1;
                }
            }
            copies += self.flash.nand.copy_range(d, run, fresh, w - run)?;
            self.flash.counters.page_copies += u64::from(copies);
            self.flash.counters.merges_full += 1;
            self.data[lbn as usize] = fresh;
            self.flash.release(log)?;
            self.flash.release(d)?;
        }
        self.slots[s as usize] = Slot { block: NONE, lbn: NONE, in_order: true, last_write: 0 };
        self.log_of[lbn as usize] = NONE;
        let row = (s * self.ppb) as usize;
        self.pos[row..row + self.ppb as usize].fill(NONE);
        Ok(())
    }

    ftl_versions!();

    /// Reads a page exactly as [`Device::read`] does (same costs, counts and verification) and
    /// returns what the chip held: the logical page and version found (version 0 = initial
    /// contents). Tests compare it with an independent model.
    pub fn read_tag(&mut self, page: u64) -> Result<PageTag, DeviceError> {
        let lpn = check_page(page, self.logical_pages)?;
        self.flash.counters.host_reads += 1;
        let tag = match self.locate(lpn) {
            Some((b, o)) => self.flash.nand.read(b, o)?,
            None => {
                self.flash.nand.charge_read();
                PageTag { lpn, version: 0 }
            }
        };
        if self.verify {
            self.versions.verify(lpn, tag)?;
        }
        Ok(tag)
    }

    /// Where the newest copy of `lpn` is.
    fn locate(&self, lpn: u32) -> Option<(u32, u32)> {
        let (lbn, o) = (lpn / self.ppb, lpn % self.ppb);
        let s = self.log_of[lbn as usize];
        if s != NONE {
            let p = self.pos[(s * self.ppb + o) as usize];
            if p != NONE {
                return Some((self.slots[s as usize].block, p));
            }
        }
        let d = self.data[lbn as usize];
        (d != NONE && o < self.flash.nand.next_free(d)).then_some((d, o))
    }
}

impl Device for BastFtl {
    ftl_device_io!();

    fn check_invariants(&self) -> Result<(), String> {
        let nand = &self.flash.nand;
        let mut used: Vec<(u32, &'static str)> =
            self.data.iter().filter(|&&d| d != NONE).map(|&d| (d, "data")).collect();
        let mut ticks = Vec::new();
        for (s, slot) in self.slots.iter().enumerate() {
            let row = s * self.ppb as usize;
            if slot.block == NONE {
                if self.pos[row..row + self.ppb as usize].iter().any(|&p| p != NONE) {
                    return Err(format!("free log slot {s} maps pages"));
                }
                continue;
            }
            used.push((slot.block, "log"));
            ticks.push(slot.last_write);
            if self.log_of[slot.lbn as usize] != s as u32 {
                return Err(format!("log slot {s} serves logical block {} which does not point back", slot.lbn));
            }
            let d = self.data[slot.lbn as usize];
            if d == NONE {
                return Err(format!("log slot {s} serves logical block {} which has no data block", slot.lbn));
            }
            let k = nand.next_free(slot.block);
            if k == 0 || (self.eager_merge && k >= self.ppb) {
                return Err(format!("log block {} holds {k} pages (empty, or full under eager merging)", slot.block));
            }
            let mut newest = vec![NONE; self.ppb as usize];
            let mut in_order = true;
            for i in 0..k {
                let tag = nand.peek(slot.block, i).unwrap();
                if tag.lpn / self.ppb != slot.lbn {
                    return Err(format!("log block {} holds page {} of another block", slot.block, tag.lpn));
                }
                let o = tag.lpn % self.ppb;
                if o >= nand.next_free(d) {
                    return Err(format!("log page {} is at or beyond its data block's next free page", tag.lpn));
                }
                newest[o as usize] = i;
                in_order &= o == i;
            }
            if newest[..] != self.pos[row..row + self.ppb as usize] {
                return Err(format!(
                    "log slot {s}: page map {:?}, log holds {newest:?}",
                    &self.pos[row..row + self.ppb as usize]
                ));
            }
            if in_order != slot.in_order {
                return Err(format!("log slot {s}: in-order flag {} but log says {in_order}", slot.in_order));
            }
        }
        for (lbn, &s) in self.log_of.iter().enumerate() {
            if s != NONE && self.slots.get(s as usize).is_none_or(|sl| sl.lbn != lbn as u32 || sl.block == NONE) {
                return Err(format!("logical block {lbn} points to log slot {s} which does not serve it"));
            }
        }
        ticks.sort_unstable();
        if ticks.windows(2).any(|w| w[0] == w[1]) {
            return Err("two log blocks share an LRU time".into());
        }
        check_roles(&self.flash, &used)?;
        for lpn in 0..self.logical_pages {
            let found = self.locate(lpn).map(|(b, o)| nand.peek(b, o).expect("located pages are programmed"));
            check_newest(lpn, found, &self.versions)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nand::{NandGeometry, NandTiming};

    #[test]
    fn verification_reports_a_stale_read() {
        let mut f = BastFtl::new(BastFtlConfig {
            nand: NandConfig {
                geometry: NandGeometry { page_size_bytes: 2048, pages_per_block: 4, blocks: 5 },
                timing: NandTiming { read_ns: 10, program_ns: 200, erase_ns: 2000 },
                endurance_cycles: 100,
            },
            logical_pages: 8,
            log_blocks: 2,
            eager_merge: false,
            verify: true,
            label: String::new(),
        })
        .unwrap();
        for p in [0, 1, 2, 3, 1] {
            f.write(p).unwrap(); // the second write of page 1 goes to a log block
        }
        f.versions.bump(1);
        assert_eq!(f.read(1), Err(DeviceError::Integrity { page: 1, expected: 3, got: 2 }));
        f.versions.bump(5);
        assert_eq!(f.read(5), Err(DeviceError::Integrity { page: 5, expected: 1, got: 0 }));
        f.verify = false;
        assert!(f.read(1).is_ok());
    }
}
