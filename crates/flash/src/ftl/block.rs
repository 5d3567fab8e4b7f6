//! Block-mapped FTL: copy on update.
//!
//! Source: the block-level mapping described in the REF paper (Seo and Shin 2008, §I) and the
//! CFDC paper (Ou et al. 2009, §2.2), after the classic SmartMedia-style FTLs surveyed by Gal and
//! Toledo (*Algorithms and data structures for flash memories*, ACM Computing Surveys 2005).
//!
//! Logical block `l` lives in one physical data block; logical page `l·n + o` always sits at
//! offset `o` (in-place scheme).
//!
//! * A write to offset `o` at or beyond the data block's next free page goes **in place** (after
//!   padding any never-written pages below `o`, see [the padding rule](super)); the first write to
//!   a logical block takes the least-worn free block.
//! * A write to an offset already programmed **copies the block**: a fresh block receives every
//!   other programmed page of the old block (reads + programs, counted as `page_copies`) and the
//!   new page at its offset, in offset order; the old block is erased (1 erase).
//!
//! The brief also lists "out of order" writes as copy-triggering; on a chip that forbids skipping
//! pages, an out-of-order *first* write can be served in place by padding the gap, which costs
//! fewer operations than a copy (a copy would need the same padding), so that is what we do.
//! Copy-on-update is not a log-block merge: the merge counters stay at zero.
//!
//! Space: the chip needs the logical blocks plus one free block for the copy.

use super::{Flash, NONE, Versions, check_newest, check_page, check_roles, logical_size};
use crate::device::{Device, DeviceError, DeviceStats, Nanos};
use crate::nand::{Nand, NandConfig, PageTag};

/// Parameters of a [`BlockFtl`].
#[derive(Debug, Clone, PartialEq)]
pub struct BlockFtlConfig {
    /// The chip: at least `ceil(logical_pages / pages_per_block) + 1` blocks.
    pub nand: NandConfig,
    /// Pages the host may address.
    pub logical_pages: u64,
    /// Check the version of every page read.
    pub verify: bool,
    /// Name reported by [`Device::name`].
    pub label: String,
}

/// The block-mapped FTL (see the module docs).
#[derive(Debug, Clone)]
pub struct BlockFtl {
    flash: Flash,
    ppb: u32,
    logical_pages: u32,
    /// Logical block → physical data block (`NONE` before its first write).
    data: Vec<u32>,
    versions: Versions,
    verify: bool,
    label: String,
}

impl BlockFtl {
    /// An empty device on a fresh chip.
    pub fn new(config: BlockFtlConfig) -> Result<Self, DeviceError> {
        let nand = Nand::new(config.nand)?;
        let ppb = nand.pages_per_block();
        let (logical_pages, logical_blocks) = logical_size(config.logical_pages, ppb)?;
        if (nand.blocks() as u64) < logical_blocks as u64 + 1 {
            return Err(DeviceError::Config(format!(
                "{} blocks cannot hold {logical_blocks} logical blocks plus the free block a copy on update needs",
                nand.blocks()
            )));
        }
        Ok(BlockFtl {
            flash: Flash::new(nand),
            ppb,
            logical_pages,
            data: vec![NONE; logical_blocks as usize],
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

    fn place(&mut self, tag: PageTag) -> Result<(), DeviceError> {
        let (lbn, o) = (tag.lpn / self.ppb, tag.lpn % self.ppb);
        let mut d = self.data[lbn as usize];
        if d == NONE {
            d = self.flash.alloc()?;
            self.data[lbn as usize] = d;
        }
        let next = self.flash.nand.next_free(d);
        if o >= next {
            self.flash.pad_to(d, o, lbn)?;
            return self.flash.nand.program(d, o, tag);
        }
        let fresh = self.flash.alloc()?;
        // Copy on update: the other pages copied (padding where `d` holds initial contents).
        let mut copies = self.flash.nand.copy_range(d, 0, fresh, o)?;
        self.flash.nand.program(fresh, o, tag)?;
        copies += self.flash.nand.copy_range(d, o + 1, fresh, next - o - 1)?;
        self.flash.counters.page_copies += u64::from(copies);
        self.data[lbn as usize] = fresh;
        self.flash.release(d)?;
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
        let d = self.data[lbn as usize];
        (d != NONE && o < self.flash.nand.next_free(d)).then_some((d, o))
    }
}

impl Device for BlockFtl {
    ftl_device_io!();

    fn check_invariants(&self) -> Result<(), String> {
        let used: Vec<(u32, &'static str)> = self.data.iter().filter(|&&d| d != NONE).map(|&d| (d, "data")).collect();
        check_roles(&self.flash, &used)?;
        for lpn in 0..self.logical_pages {
            let found =
                self.locate(lpn).map(|(b, o)| self.flash.nand.peek(b, o).expect("located pages are programmed"));
            check_newest(lpn, found, &self.versions)?;
        }
        for (lbn, &d) in self.data.iter().enumerate() {
            if d != NONE && self.flash.nand.next_free(d) > 0 {
                let last = self.flash.nand.peek(d, self.flash.nand.next_free(d) - 1).unwrap();
                if last.version == 0 {
                    return Err(format!("data block {d} of logical block {lbn} ends with a padding page"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nand::{NandGeometry, NandTiming};

    fn ftl(logical: u64, blocks: u32) -> BlockFtl {
        BlockFtl::new(BlockFtlConfig {
            nand: NandConfig {
                geometry: NandGeometry { page_size_bytes: 2048, pages_per_block: 4, blocks },
                timing: NandTiming { read_ns: 10, program_ns: 200, erase_ns: 2000 },
                endurance_cycles: 1000,
            },
            logical_pages: logical,
            verify: true,
            label: "block".into(),
        })
        .unwrap()
    }

    #[test]
    fn in_order_first_writes_go_in_place_updates_copy_the_block() {
        let mut f = ftl(8, 3);
        for p in 0..4 {
            assert_eq!(f.write(p).unwrap(), 200);
        }
        assert_eq!(f.stats().erases, 0);
        // Update page 1: copy pages 0, 2, 3 (3 reads + 3 programs), program page 1, erase.
        assert_eq!(f.write(1).unwrap(), 3 * 10 + 4 * 200 + 2000);
        let s = f.stats();
        assert_eq!((s.page_copies, s.erases, s.flash_programs, s.flash_reads), (3, 1, 8, 3));
        assert_eq!(s.merges(), 0);
        f.check_invariants().unwrap();
    }

    #[test]
    fn a_first_write_above_a_gap_pads_in_place() {
        let mut f = ftl(8, 3);
        // Page 6 = offset 2 of logical block 1: offsets 0 and 1 are padded.
        assert_eq!(f.write(6).unwrap(), 3 * 200);
        f.check_invariants().unwrap();
        assert_eq!(f.read(4).unwrap(), 10, "a padding page reads as initial contents");
        // Writing page 4 (padded offset 0) copies: padding 1 re-programmed, page 6 copied.
        assert_eq!(f.write(4).unwrap(), 10 + 3 * 200 + 2000);
        let s = f.stats();
        assert_eq!((s.page_copies, s.flash_programs, s.erases), (1, 6, 1));
        f.check_invariants().unwrap();
    }

    #[test]
    fn verification_reports_a_stale_read() {
        let mut f = ftl(8, 3);
        f.write(1).unwrap();
        f.versions.bump(1);
        assert_eq!(f.read(1), Err(DeviceError::Integrity { page: 1, expected: 2, got: 1 }));
        f.versions.bump(0); // padding page: initial contents
        assert_eq!(f.read(0), Err(DeviceError::Integrity { page: 0, expected: 1, got: 0 }));
    }

    #[test]
    fn needs_one_spare_block() {
        let cfg = |blocks| BlockFtlConfig {
            nand: NandConfig {
                geometry: NandGeometry { page_size_bytes: 2048, pages_per_block: 4, blocks },
                timing: NandTiming { read_ns: 1, program_ns: 1, erase_ns: 1 },
                endurance_cycles: 10,
            },
            logical_pages: 8,
            verify: false,
            label: String::new(),
        };
        assert!(matches!(BlockFtl::new(cfg(2)), Err(DeviceError::Config(_))));
        assert!(BlockFtl::new(cfg(3)).is_ok());
    }
}
