//! BP-REF — REF with selective block padding.
//!
//! Source: Seo & Shin, *Recently-evicted-first buffer replacement policy for flash storage
//! devices* (IEEE Trans. Consumer Electronics 54(3), 2008), §IV (Fig. 7), §V (Fig. 11).
//!
//! BP-REF is REF (see `ref_policy.rs`, which holds the shared `RefCore` and documents every
//! choice) plus one parameter: when the victim block has more victim pages than `pad · ppb` and
//! holds at least one dirty page, it reads the block's missing pages and evicts all its buffered
//! pages at once as one whole-block write ([`crate::BlockPad`]). A block without a dirty page is
//! never padded (there is nothing to write back). `pad = 1.0` is REF; `pad = 0` pads every
//! eviction from a block holding a dirty page. Default 0.4, the paper's best value under FAST
//! (use 0.1 for BAST).

use crate::blocks::PPB_DOC;
use crate::params::{ParamDoc, PolicyParams, fmt_float, parse_fraction};
use crate::ref_policy::{RefCore, VB_DOC, VW_DOC, delegate_replacer, set_common};
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// Parameters of [`BpRef`].
#[derive(Clone, Debug, PartialEq)]
pub struct BpRefConfig {
    /// Victim window, fraction of the buffer at its LRU end (paper: 0.75).
    pub vw: f64,
    /// Number of victim blocks |VB| (paper: 3).
    pub vb: u32,
    /// Pages per flash block (paper: 64).
    pub ppb: u32,
    /// Block padding threshold, fraction of a block: pad when the victim block has more victim
    /// pages than `pad · ppb` (paper's best: 0.4 under FAST, the default; 0.1 under BAST).
    pub pad: f64,
}

impl Default for BpRefConfig {
    fn default() -> Self {
        BpRefConfig { vw: 0.75, vb: 3, ppb: 64, pad: 0.4 }
    }
}

impl PolicyParams for BpRefConfig {
    const KEYS: &'static [ParamDoc] = &[
        VW_DOC,
        VB_DOC,
        PPB_DOC,
        ParamDoc { key: "pad", help: "block padding threshold, fraction of a block [0,1], default 0.4" },
    ];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if set_common(&mut self.vw, &mut self.vb, &mut self.ppb, key, value)? {
            return Ok(());
        }
        match key {
            "pad" => self.pad = parse_fraction(key, value, 0.0, 1.0)?,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        vec![fmt_float(self.vw), self.vb.to_string(), self.ppb.to_string(), fmt_float(self.pad)]
    }
}

/// The BP-REF policy: REF with selective block padding.
#[derive(Clone, Debug)]
pub struct BpRef {
    core: RefCore,
}

impl BpRef {
    /// The current victim blocks, sorted (for tests and reports).
    pub fn victim_blocks(&self) -> Vec<u64> {
        self.core.victim_blocks()
    }
}

delegate_replacer!(BpRef, BpRefConfig, |c, capacity| RefCore::new(capacity, c.vw, c.vb, c.ppb, Some(c.pad)));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    #[test]
    fn bp_ref_pads_above_the_threshold_only() {
        let cfg = |pad| BpRefConfig { vw: 1.0, vb: 1, ppb: 4, pad };
        // 5 frames: B0 has p0 p1 p2, B1 has p4, B2 p8. VB = {B0} (3 pages in the window).
        let run = |pad: f64| {
            let mut h = Harness::<BpRef>::new(5, cfg(pad));
            for p in [0, 1, 2, 4, 8] {
                h.write(p);
            }
            h.write(12);
            h
        };
        // 3 victim pages > 0.5·4 = 2: pad (read p3, write p0..p3).
        let h = run(0.5);
        assert_eq!(h.evicted_pages(), vec![0, 1, 2]);
        assert_eq!(h.padding_reads, vec![3]);
        assert_eq!(h.written, vec![0, 1, 2, 3]);
        // 3 victim pages is not more than 0.75·4 = 3: one page as REF.
        let h = run(0.75);
        assert_eq!(h.evicted_pages(), vec![0]);
        assert!(h.padding_reads.is_empty());
    }

    #[test]
    fn no_padding_of_a_block_without_a_dirty_page() {
        let cfg = BpRefConfig { vw: 1.0, vb: 1, ppb: 4, pad: 0.5 };
        // Reads only: B0 holds p0 p1 p2 (3 victim pages > 2), all clean. The eviction is REF's
        // single page, with no padding read and no write at all.
        let mut h = Harness::<BpRef>::new(5, cfg.clone());
        for p in [0, 1, 2, 4, 8, 12] {
            h.read(p);
        }
        assert_eq!(h.evicted_pages(), vec![0]);
        assert!(h.padding_reads.is_empty());
        assert!(h.written.is_empty());
        // Five reads of one block with pad = 0 (the threshold alone would pad every eviction):
        // still not one page written.
        let mut h = Harness::<BpRef>::new(2, BpRefConfig { pad: 0.0, ..cfg.clone() });
        for p in [0, 1, 2, 3, 5] {
            h.read(p);
        }
        assert_eq!(h.evicted.len(), 3);
        assert!(h.written.is_empty() && h.padding_reads.is_empty());
        // One dirty page in the block is enough: a write of p1 makes the same eviction a padded
        // whole-block write.
        let mut h = Harness::<BpRef>::new(5, cfg);
        for (p, write) in [(0, false), (1, true), (2, false), (4, false), (8, false), (12, false)] {
            if write {
                h.write(p);
            } else {
                h.read(p);
            }
        }
        assert_eq!(h.evicted_pages(), vec![0, 1, 2]);
        assert_eq!(h.padding_reads, vec![3]);
        assert_eq!(h.written, vec![0, 1, 2, 3]);
    }

    #[test]
    fn padding_needs_the_host_page_table_and_checks_its_answers() {
        use crate::{AccessKind, NoPins};
        struct Table<'a>(&'a [(u64, FrameId)]);
        impl Pins for Table<'_> {
            fn is_pinned(&self, _frame: FrameId) -> bool {
                false
            }
            fn frame_of(&self, page: u64) -> Option<FrameId> {
                self.0.iter().find(|&&(p, _)| p == page).map(|&(_, f)| f)
            }
        }
        let cfg = BpRefConfig { vw: 1.0, vb: 1, ppb: 4, pad: 0.5 };
        // Frames 0..5 hold pages 0, 1, 2, 4, 8: block 0 has three pages in the window.
        let resident = [(0, 0), (1, 1), (2, 2), (4, 3), (8, 4)];
        let fresh = || {
            let mut p = BpRef::new(5, &cfg);
            for (t, &(page, f)) in resident.iter().enumerate() {
                p.on_insert(f, &Access::new(page, AccessKind::Write, t as u64));
            }
            p
        };
        let incoming = Access::new(12, AccessKind::Write, 5);
        // With the page table: the whole block, in page order, padded.
        let mut ev = Evictions::default();
        fresh().victims(&incoming, &Table(&resident), &mut ev).unwrap();
        assert_eq!(ev.victims, vec![0, 1, 2]);
        assert_eq!(ev.pad.map(|p| (p.first_page, p.pages)), Some((0, 4)));
        // Without one: REF's single victim, no padding.
        let mut ev = Evictions::default();
        fresh().victims(&incoming, &NoPins, &mut ev).unwrap();
        assert_eq!((ev.victims.len(), ev.pad), (1, None));
        // A table that names a frame of another block for page 1: refused, no padding.
        let wrong = [(0, 0), (1, 3), (2, 2), (4, 3), (8, 4)];
        let mut ev = Evictions::default();
        fresh().victims(&incoming, &Table(&wrong), &mut ev).unwrap();
        assert_eq!((ev.victims.len(), ev.pad), (1, None));
        // A table missing page 2: incomplete, no padding.
        let missing = [(0, 0), (1, 1), (4, 3), (8, 4)];
        let mut ev = Evictions::default();
        fresh().victims(&incoming, &Table(&missing), &mut ev).unwrap();
        assert_eq!((ev.victims.len(), ev.pad), (1, None));
    }
}
