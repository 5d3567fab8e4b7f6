//! FAST: log-block FTL with fully associative random logs and a sequential log (1:N).
//!
//! Source: S.-W. Lee, D.-J. Park, T.-S. Chung, D.-H. Lee, S. Park, H.-J. Song, *A log
//! buffer-based flash translation layer using fully-associative sector translation*, ACM Trans.
//! Embedded Computing Systems 6(3), 2007; the REF paper (Seo and Shin 2008, §II.A, Fig. 1(b))
//! and the CFDC paper (§2.3) for merge costs.
//!
//! Data blocks are block-mapped as in BAST. The log blocks are one **sequential (SW) log**,
//! serving one logical block written from offset 0 on, and `N − 1` **random (RW) logs** shared
//! by all logical blocks, filled one after the other in append order (`N` RW logs when the SW log
//! is turned off with `seq_log = false`).
//!
//! A write to page `o` of logical block `l`:
//!
//! 1. if the SW log serves `l`: when `o` continues its sequence it is appended (and a now full SW
//!    log is switch-merged at once); otherwise (a new offset-0 write or any non-sequential write
//!    to `l`) the SW log is merged first and the write goes on to the steps below;
//! 2. goes **in place** if `o` is at or beyond the data block's next free page (padding any
//!    never-written pages below it, see [the padding rule](super));
//! 3. with `o = 0` (and `seq_log`), starts a new SW log for `l`, merging the current SW log first
//!    if it is in use;
//! 4. otherwise appends to the current RW log. When it is full the next RW log is opened; when all
//!    RW logs are in use, the **oldest RW log is the victim**: for every logical block it holds a
//!    valid page of, a **full merge** copies the newest valid version of each page of that block
//!    (from the SW log, any RW log or the data block) into a free block, which becomes the data
//!    block, and the old data block is erased; then the victim is erased. Pages of merged blocks
//!    in other RW logs become invalid. RW logs are merged only when a write needs space (lazily):
//!    that is what makes the REF paper's Fig. 1 sequence merge-free.
//!
//! **SW merges**: *switch* when the SW log holds every page of the block in order and nothing is
//! left to copy (0 copies, 1 erase); *partial* otherwise: the newest versions of pages `k..w−1`
//! (from RW logs or the data block) are copied into the SW log, which becomes the data block
//! (1 erase).
//!
//! **Counting**: a victim RW log holding valid pages of `k` logical blocks counts `k` full merges
//! (CFDC §2.3: `k + 1` erases). Every page written into the new data block counts as a copy,
//! including the victim's own pages (the REF paper's "4 blocks × 4 pages = 16 copies"). If a
//! merged block is the one the SW log serves, the SW log's pages are gathered too and the SW log
//! is erased as part of that full merge (one more erase).
//!
//! Space: data blocks + `N` log blocks + 1 free block for merges.

use std::collections::VecDeque;

use super::{Flash, NONE, Versions, check_newest, check_page, check_roles, logical_size};
use crate::device::{Device, DeviceError, DeviceStats, Nanos};
use crate::nand::{Nand, NandConfig, PageTag};

/// Parameters of a [`FastFtl`].
#[derive(Debug, Clone, PartialEq)]
pub struct FastFtlConfig {
    /// The chip: at least `ceil(logical_pages / pages_per_block) + log_blocks + 1` blocks.
    pub nand: NandConfig,
    /// Pages the host may address.
    pub logical_pages: u64,
    /// Log blocks in all: one SW log plus `log_blocks − 1` RW logs with `seq_log`, else
    /// `log_blocks` RW logs.
    pub log_blocks: u32,
    /// Keep a sequential log (Lee et al.: yes).
    pub seq_log: bool,
    /// Check the version of every page read.
    pub verify: bool,
    /// Name reported by [`Device::name`].
    pub label: String,
}

/// The FAST FTL (see the module docs).
#[derive(Debug, Clone)]
pub struct FastFtl {
    flash: Flash,
    ppb: u32,
    logical_pages: u32,
    data: Vec<u32>,
    seq_log: bool,
    /// SW log block (`NONE` if not in use) and the logical block it serves.
    sw: u32,
    sw_lbn: u32,
    /// RW log blocks in the order they were opened (oldest first).
    rw: VecDeque<u32>,
    rw_max: u32,
    /// Logical page → physical page of its newest copy in an RW log, or `NONE`.
    rw_loc: Vec<u32>,
    versions: Versions,
    verify: bool,
    label: String,
}

impl FastFtl {
    /// An empty device on a fresh chip.
    pub fn new(config: FastFtlConfig) -> Result<Self, DeviceError> {
        let nand = Nand::new(config.nand)?;
        let ppb = nand.pages_per_block();
        let (logical_pages, logical_blocks) = logical_size(config.logical_pages, ppb)?;
        let min_logs = if config.seq_log { 2 } else { 1 };
        if config.log_blocks < min_logs {
            return Err(DeviceError::Config(format!(
                "FAST needs at least {min_logs} log block{} ({})",
                if min_logs > 1 { "s" } else { "" },
                if config.seq_log { "one sequential and one random" } else { "one random" }
            )));
        }
        let needed = logical_blocks as u64 + config.log_blocks as u64 + 1;
        if (nand.blocks() as u64) < needed {
            return Err(DeviceError::Config(format!(
                "{} blocks cannot hold {logical_blocks} data blocks, {} log blocks and the free block a merge \
                 needs ({needed} blocks)",
                nand.blocks(),
                config.log_blocks
            )));
        }
        let rw_max = config.log_blocks - u32::from(config.seq_log);
        Ok(FastFtl {
            flash: Flash::new(nand),
            ppb,
            logical_pages,
            data: vec![NONE; logical_blocks as usize],
            seq_log: config.seq_log,
            sw: NONE,
            sw_lbn: NONE,
            rw: VecDeque::with_capacity(rw_max as usize),
            rw_max,
            rw_loc: vec![NONE; logical_pages as usize],
            versions: Versions::new(logical_pages),
            verify: config.verify,
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

    /// Block associativity of each RW log, oldest first: how many logical blocks it holds valid
    /// pages of (REF paper, Fig. 4).
    pub fn rw_associativity(&self) -> Vec<u32> {
        self.rw
            .iter()
            .map(|&b| {
                let mut lbns: Vec<u32> = (0..self.flash.nand.next_free(b))
                    .filter(|&i| self.rw_loc[self.flash.nand.peek(b, i).unwrap().lpn as usize] == b * self.ppb + i)
                    .map(|i| self.flash.nand.peek(b, i).unwrap().lpn / self.ppb)
                    .collect();
                lbns.sort_unstable();
                lbns.dedup();
                lbns.len() as u32
            })
            .collect()
    }

    /// Pages in the SW log and the logical block it serves, if in use.
    pub fn sw_log(&self) -> Option<(u64, u32)> {
        (self.sw != NONE).then(|| (self.sw_lbn as u64, self.flash.nand.next_free(self.sw)))
    }

    fn place(&mut self, tag: PageTag) -> Result<(), DeviceError> {
        let (lbn, o) = (tag.lpn / self.ppb, tag.lpn % self.ppb);
        if self.sw != NONE && self.sw_lbn == lbn {
            let next = self.flash.nand.next_free(self.sw);
            if o == next {
                self.flash.nand.program(self.sw, o, tag)?;
                self.rw_loc[tag.lpn as usize] = NONE;
                if o + 1 == self.ppb {
                    self.merge_sw()?;
                }
                return Ok(());
            }
            self.merge_sw()?;
        }
        let mut d = self.data[lbn as usize];
        if d == NONE {
            d = self.flash.alloc()?;
            self.data[lbn as usize] = d;
        }
        if o >= self.flash.nand.next_free(d) {
            self.flash.pad_to(d, o, lbn)?;
            return self.flash.nand.program(d, o, tag);
        }
        if self.seq_log && o == 0 {
            if self.sw != NONE {
                self.merge_sw()?;
            }
            self.sw = self.flash.alloc()?;
            self.sw_lbn = lbn;
            self.flash.nand.program(self.sw, 0, tag)?;
            self.rw_loc[tag.lpn as usize] = NONE;
            if self.ppb == 1 {
                self.merge_sw()?;
            }
            return Ok(());
        }
        self.append_rw(tag)
    }

    fn append_rw(&mut self, tag: PageTag) -> Result<(), DeviceError> {
        let full = self.rw.back().is_none_or(|&b| self.flash.nand.next_free(b) == self.ppb);
        if full {
            if self.rw.len() as u32 == self.rw_max {
                let victim = self.rw.pop_front().expect("rw_max ≥ 1");
                self.merge_victim(victim)?;
            }
            let b = self.flash.alloc()?;
            self.rw.push_back(b);
        }
        let b = *self.rw.back().expect("an open RW log");
        let off = self.flash.nand.next_free(b);
        self.flash.nand.program(b, off, tag)?;
        self.rw_loc[tag.lpn as usize] = b * self.ppb + off;
        Ok(())
    }

    /// Full merges for every logical block the victim holds valid pages of, then erases it.
    fn merge_victim(&mut self, victim: u32) -> Result<(), DeviceError> {
        let base = victim * self.ppb;
        for i in 0..self.flash.nand.next_free(victim) {
            let lpn = self.flash.nand.peek(victim, i).expect("programmed").lpn;
            if self.rw_loc[lpn as usize] == base + i {
                self.full_merge(lpn / self.ppb)?;
            }
        }
        self.flash.release(victim)?;
        Ok(())
    }

    /// Gathers the newest version of every page of logical block `lbn` into a fresh data block.
    fn full_merge(&mut self, lbn: u32) -> Result<(), DeviceError> {
        let d = self.data[lbn as usize];
        let fresh = self.flash.alloc()?;
        let sw_here = self.sw != NONE && self.sw_lbn == lbn;
        let sw_pages = if sw_here { self.flash.nand.next_free(self.sw) } else { 0 };
        let d_pages = self.flash.nand.next_free(d);
        let end = d_pages.max(sw_pages);
        if sw_pages > 0 {
            let copies = self.flash.nand.copy_range(self.sw, 0, fresh, sw_pages)?;
            self.flash.counters.page_copies += u64::from(copies);
        }
        self.gather(lbn, sw_pages..end, d, d_pages, fresh)?;
        self.flash.counters.merges_full += 1;
        self.data[lbn as usize] = fresh;
        self.flash.release(d)?;
        if sw_here {
            let sw = std::mem::replace(&mut self.sw, NONE);
            self.sw_lbn = NONE;
            self.flash.release(sw)?;
        }
        Ok(())
    }

    /// Switch or partial merge of the SW log.
    fn merge_sw(&mut self) -> Result<(), DeviceError> {
        let (sw, lbn) = (self.sw, self.sw_lbn);
        let d = self.data[lbn as usize];
        let k = self.flash.nand.next_free(sw);
        let w = self.flash.nand.next_free(d);
        self.gather(lbn, k..w, d, w, sw)?;
        if k >= w {
            self.flash.counters.merges_switch += 1;
        } else {
            self.flash.counters.merges_partial += 1;
        }
        self.data[lbn as usize] = sw;
        self.sw = NONE;
        self.sw_lbn = NONE;
        self.flash.release(d)?;
        Ok(())
    }

    /// Writes the newest version of pages `js` of `lbn` outside the SW log at the next free pages
    /// of `dst`, in order: a page's RW log copy (which then stops being current), else its page
    /// in data block `d` (which holds `d_pages` pages; padding where that holds initial
    /// contents), else initial contents (padding). Runs of pages from `d` are copied as ranges.
    fn gather(
        &mut self,
        lbn: u32,
        js: std::ops::Range<u32>,
        d: u32,
        d_pages: u32,
        dst: u32,
    ) -> Result<(), DeviceError> {
        let (mut copies, mut run) = (0, js.start);
        for j in js.clone() {
            let lpn = lbn * self.ppb + j;
            let loc = std::mem::replace(&mut self.rw_loc[lpn as usize], NONE);
            if loc != NONE || j >= d_pages {
                copies += self.flash.nand.copy_range(d, run, dst, j - run)?;
                if loc != NONE {
                    copies += self.flash.nand.copy_range(loc / self.ppb, loc % self.ppb, dst, 1)?;
                } else {
                    self.flash.nand.program(dst, self.flash.nand.next_free(dst), PageTag { lpn, version: 0 })?;
                }
                run = j + 1;
            }
        }
        if run < js.end {
            copies += self.flash.nand.copy_range(d, run, dst, js.end - run)?;
        }
        self.flash.counters.page_copies += u64::from(copies);
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
        if self.sw != NONE && self.sw_lbn == lbn && o < self.flash.nand.next_free(self.sw) {
            return Some((self.sw, o));
        }
        let loc = self.rw_loc[lpn as usize];
        if loc != NONE {
            return Some((loc / self.ppb, loc % self.ppb));
        }
        let d = self.data[lbn as usize];
        (d != NONE && o < self.flash.nand.next_free(d)).then_some((d, o))
    }
}

impl Device for FastFtl {
    ftl_device_io!();

    fn check_invariants(&self) -> Result<(), String> {
        let nand = &self.flash.nand;
        let mut used: Vec<(u32, &'static str)> =
            self.data.iter().filter(|&&d| d != NONE).map(|&d| (d, "data")).collect();
        if self.sw != NONE {
            if !self.seq_log {
                return Err("an SW log exists with seq_log off".into());
            }
            used.push((self.sw, "SW log"));
            let d = self.data[self.sw_lbn as usize];
            if d == NONE {
                return Err(format!("the SW log serves logical block {} which has no data block", self.sw_lbn));
            }
            let k = nand.next_free(self.sw);
            if k == 0 || k >= self.ppb {
                return Err(format!("SW log holds {k} pages (empty or full logs must not linger)"));
            }
            for i in 0..k {
                let tag = nand.peek(self.sw, i).unwrap();
                if tag.lpn != self.sw_lbn * self.ppb + i {
                    return Err(format!("SW log page {i} holds logical page {}: not sequential", tag.lpn));
                }
                if self.rw_loc[tag.lpn as usize] != NONE {
                    return Err(format!("logical page {} is both in the SW log and mapped in an RW log", tag.lpn));
                }
            }
        } else if self.sw_lbn != NONE {
            return Err("no SW log but an SW owner".into());
        }
        if self.rw.len() as u32 > self.rw_max {
            return Err(format!("{} RW logs, at most {}", self.rw.len(), self.rw_max));
        }
        let mut in_rw = vec![false; nand.blocks() as usize];
        for (i, &b) in self.rw.iter().enumerate() {
            used.push((b, "RW log"));
            in_rw[b as usize] = true;
            let n = nand.next_free(b);
            if n == 0 || (i + 1 < self.rw.len() && n != self.ppb) {
                return Err(format!("RW log {b} (position {i}) holds {n} pages: only the newest may be partly filled"));
            }
        }
        for (lpn, &loc) in self.rw_loc.iter().enumerate() {
            if loc == NONE {
                continue;
            }
            let (b, o) = (loc / self.ppb, loc % self.ppb);
            if !in_rw[b as usize] {
                return Err(format!("logical page {lpn} maps into block {b}, not an RW log"));
            }
            if nand.peek(b, o).map(|t| t.lpn) != Some(lpn as u32) {
                return Err(format!("logical page {lpn} maps to an RW page holding something else"));
            }
            let (lbn, off) = (lpn as u32 / self.ppb, lpn as u32 % self.ppb);
            let d = self.data[lbn as usize];
            if d == NONE || off >= nand.next_free(d) {
                return Err(format!("RW page of logical page {lpn} is at or beyond its data block's next free page"));
            }
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
        let mut f = FastFtl::new(FastFtlConfig {
            nand: NandConfig {
                geometry: NandGeometry { page_size_bytes: 2048, pages_per_block: 4, blocks: 5 },
                timing: NandTiming { read_ns: 10, program_ns: 200, erase_ns: 2000 },
                endurance_cycles: 100,
            },
            logical_pages: 8,
            log_blocks: 2,
            seq_log: true,
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
