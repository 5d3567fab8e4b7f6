//! Run-time choice of a device: [`DeviceConfig`] (serialisable, parsed by the CLI and sweeps),
//! [`DeviceConfig::build`] and [`AnyDevice`], an enum over every device (no `dyn`: the
//! simulator's per-request path makes only statically dispatched calls).
//!
//! **Sizing.** `build(logical_pages)` makes a chip of the preset's geometry with
//!
//! | kind    | blocks                                                              |
//! |---------|---------------------------------------------------------------------|
//! | `page`  | `L + ceil(L · op_percent / 100) + gc_threshold`                     |
//! | `block` | `L + 1` (the free block of a copy on update)                        |
//! | `bast`  | `L + log_blocks + 1` (the free block of a full merge)               |
//! | `fast`  | `L + log_blocks + 1`                                                |
//!
//! where `L = ceil(logical_pages / pages_per_block)`. Over-provisioning applies to the
//! page-mapped FTL only (log-block FTLs get their spare space from `log_blocks`); it is rounded up
//! to whole blocks and must give at least one block; the GC reserve comes on top of it.
//!
//! **Preconditioning** ([`Precondition`]) runs inside `build`, then the counters are reset: the
//! device reports only the run's own work, while erase counts (wear) persist.

use std::fmt;
use std::str::FromStr;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::device::{Device, DeviceError, DeviceStats, Nanos};
use crate::ftl::bast::{BastFtl, BastFtlConfig};
use crate::ftl::block::{BlockFtl, BlockFtlConfig};
use crate::ftl::fast::{FastFtl, FastFtlConfig};
use crate::ftl::page::{GcPolicy, PageFtl, PageFtlConfig};
use crate::ideal::{IdealConfig, IdealDevice};
use crate::nand::{Nand, NandPreset, PageTag};

/// Which device to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceKind {
    /// Fixed read and write latencies of the preset, no erase ([`IdealDevice`]).
    Ideal,
    /// Page-mapped FTL with garbage collection ([`PageFtl`]).
    #[default]
    Page,
    /// Block-mapped FTL ([`BlockFtl`]).
    Block,
    /// BAST log-block FTL ([`BastFtl`]).
    Bast,
    /// FAST log-block FTL ([`FastFtl`]).
    Fast,
}

impl DeviceKind {
    /// All kinds, in the order error messages list them.
    pub const ALL: [DeviceKind; 5] =
        [DeviceKind::Ideal, DeviceKind::Page, DeviceKind::Block, DeviceKind::Bast, DeviceKind::Fast];

    /// Name as the CLI and labels spell it.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Ideal => "ideal",
            DeviceKind::Page => "page",
            DeviceKind::Block => "block",
            DeviceKind::Bast => "bast",
            DeviceKind::Fast => "fast",
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DeviceKind {
    type Err = DeviceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DeviceKind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            DeviceError::Config(format!("unknown device kind `{s}` (valid: ideal, page, block, bast, fast)"))
        })
    }
}

/// The state a device starts a run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Precondition {
    /// Fresh: no logical page written.
    Empty,
    /// Every logical page written once, in order (a freshly loaded database). The default.
    #[default]
    Sequential,
    /// Written sequentially once, then aged by uniform random writes.
    Aged {
        /// Random writes after the fill. `None`: until steady state — windows of
        /// `max(logical pages, 16,384)` writes until the write amplification of a window is within
        /// 1% of the previous window's, at most 32 windows.
        #[serde(default)]
        writes: Option<u64>,
        /// Seed of the ChaCha8 generator choosing the pages (default 0).
        #[serde(default)]
        seed: u64,
    },
}

impl Precondition {
    /// Random writes per steady-state window, for a device of `logical_pages`.
    pub fn window(logical_pages: u64) -> u64 {
        logical_pages.max(16_384)
    }

    /// Most windows a steady-state aging runs.
    pub const MAX_WINDOWS: u32 = 32;
}

impl fmt::Display for Precondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Precondition::Empty => f.write_str("empty"),
            Precondition::Sequential => f.write_str("sequential"),
            Precondition::Aged { writes: None, seed } => write!(f, "aged:steady:{seed}"),
            Precondition::Aged { writes: Some(n), seed } => write!(f, "aged:{n}:{seed}"),
        }
    }
}

impl FromStr for Precondition {
    type Err = DeviceError;
    /// `empty`, `sequential`, `aged` (steady state, seed 0), `aged:<writes|steady>` or
    /// `aged:<writes|steady>:<seed>`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            DeviceError::Config(format!(
                "unknown preconditioning `{s}` (valid: empty, sequential, aged, aged:<writes|steady>[:<seed>])"
            ))
        };
        let mut parts = s.split(':');
        match parts.next() {
            Some("empty") if parts.next().is_none() => Ok(Precondition::Empty),
            Some("sequential") if parts.next().is_none() => Ok(Precondition::Sequential),
            Some("aged") => {
                let writes = match parts.next() {
                    None | Some("steady") => None,
                    Some(n) => Some(n.parse::<u64>().map_err(|_| bad())?),
                };
                let seed = match parts.next() {
                    None => 0,
                    Some(n) => n.parse::<u64>().map_err(|_| bad())?,
                };
                if parts.next().is_some() {
                    return Err(bad());
                }
                Ok(Precondition::Aged { writes, seed })
            }
            _ => Err(bad()),
        }
    }
}

/// Everything needed to build a device for a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeviceConfig {
    /// Which device (default `page`).
    pub kind: DeviceKind,
    /// Chip preset (default `micron`).
    pub preset: NandPreset,
    /// Log blocks of `bast` and `fast` (default 8, REF paper Table I).
    pub log_blocks: u32,
    /// `fast` only: keep a sequential log (default true, as Lee et al.).
    pub seq_log: bool,
    /// `bast` only: merge a log block as soon as it is full instead of when a log block is next
    /// needed (default false: lazy, as the REF paper's Fig. 6 shows).
    pub eager_merge: bool,
    /// `page` only: victim policy (default greedy).
    pub gc: GcPolicy,
    /// `page` only: spare physical space as a percentage of the logical space (default 7).
    pub op_percent: f64,
    /// `page` only: free blocks at or below which garbage collection runs (default 2, at least 1).
    pub gc_threshold: u32,
    /// `page` only: static wear levelling threshold on max − min erase counts (default 100;
    /// `None` for dynamic levelling only).
    pub wear_threshold: Option<u32>,
    /// Erase endurance override (default: the preset's).
    pub endurance: Option<u32>,
    /// State at the start of the run (default sequential).
    pub precondition: Precondition,
    /// Check the version of every page read at run time (default false; tests always check).
    pub verify: bool,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            kind: DeviceKind::Page,
            preset: NandPreset::Micron,
            log_blocks: 8,
            seq_log: true,
            eager_merge: false,
            gc: GcPolicy::Greedy,
            op_percent: 7.0,
            gc_threshold: 2,
            wear_threshold: Some(100),
            endurance: None,
            precondition: Precondition::Sequential,
            verify: false,
        }
    }
}

impl DeviceConfig {
    /// Short name for result rows: `ideal/micron`, `page/micron/greedy/op7`, `block/ref`,
    /// `bast/ref/log8`, `fast/ref/log8` (`fast/ref/log8/nosw` without the sequential log).
    pub fn label(&self) -> String {
        let p = self.preset.name();
        match self.kind {
            DeviceKind::Ideal => format!("ideal/{p}"),
            DeviceKind::Page => format!("page/{p}/{}/op{}", self.gc.name(), self.op_percent),
            DeviceKind::Block => format!("block/{p}"),
            DeviceKind::Bast => {
                format!("bast/{p}/log{}{}", self.log_blocks, if self.eager_merge { "/eager" } else { "" })
            }
            DeviceKind::Fast => {
                format!("fast/{p}/log{}{}", self.log_blocks, if self.seq_log { "" } else { "/nosw" })
            }
        }
    }

    /// Number of chip blocks `build` would use for `logical_pages`, after checking the
    /// parameters.
    pub fn physical_blocks(&self, logical_pages: u64) -> Result<u64, DeviceError> {
        if logical_pages == 0 {
            return Err(DeviceError::Config("the device needs at least one logical page".into()));
        }
        let ppb = self.preset.config(1).geometry.pages_per_block as u64;
        let lb = logical_pages.div_ceil(ppb);
        let blocks = match self.kind {
            DeviceKind::Ideal => return Ok(0),
            DeviceKind::Page => {
                if !self.op_percent.is_finite() || self.op_percent < 0.0 {
                    return Err(DeviceError::Config(format!(
                        "over-provisioning must be a non-negative percentage (got {})",
                        self.op_percent
                    )));
                }
                let op = (lb as f64 * self.op_percent / 100.0).ceil();
                if op < 1.0 {
                    return Err(DeviceError::Config(format!(
                        "over-provisioning of {}% gives no spare block for {lb} logical blocks: garbage \
                         collection needs at least one to make progress",
                        self.op_percent
                    )));
                }
                if self.gc_threshold == 0 {
                    return Err(DeviceError::Config(
                        "the garbage collection threshold must be at least 1 free block".into(),
                    ));
                }
                lb as f64 + op + self.gc_threshold as f64
            }
            DeviceKind::Block => (lb + 1) as f64,
            DeviceKind::Bast | DeviceKind::Fast => {
                let min = if self.kind == DeviceKind::Fast && self.seq_log { 2 } else { 1 };
                if self.log_blocks < min {
                    return Err(DeviceError::Config(format!(
                        "{} needs at least {min} log block{} (got {})",
                        self.kind,
                        if min > 1 { "s" } else { "" },
                        self.log_blocks
                    )));
                }
                (lb + self.log_blocks as u64 + 1) as f64
            }
        };
        if blocks * ppb as f64 >= u32::MAX as f64 {
            return Err(DeviceError::Config(format!(
                "{logical_pages} logical pages need a chip of more than 2^32 pages: too large"
            )));
        }
        Ok(blocks as u64)
    }

    /// Builds, sizes and preconditions the device for `logical_pages` logical pages. Every
    /// parameter is checked before anything runs.
    pub fn build(&self, logical_pages: u64) -> Result<AnyDevice, DeviceError> {
        let blocks = self.physical_blocks(logical_pages)? as u32;
        if self.wear_threshold == Some(0) {
            return Err(DeviceError::Config("the wear levelling threshold must be at least 1 erase".into()));
        }
        if self.endurance == Some(0) {
            return Err(DeviceError::Config("the flash endurance must be at least one erase cycle".into()));
        }
        let mut nand = self.preset.config(blocks.max(1));
        if let Some(e) = self.endurance {
            nand.endurance_cycles = e;
        }
        let label = self.label();
        let verify = self.verify;
        let mut dev = match self.kind {
            DeviceKind::Ideal => AnyDevice::Ideal(IdealDevice::new(IdealConfig {
                read_ns: nand.timing.read_ns,
                write_ns: nand.timing.program_ns,
                logical_pages,
            })?),
            DeviceKind::Page => AnyDevice::Page(PageFtl::new(PageFtlConfig {
                nand,
                logical_pages,
                gc: self.gc,
                gc_threshold: self.gc_threshold,
                wear_threshold: self.wear_threshold,
                verify,
                label,
            })?),
            DeviceKind::Block => {
                AnyDevice::Block(BlockFtl::new(BlockFtlConfig { nand, logical_pages, verify, label })?)
            }
            DeviceKind::Bast => AnyDevice::Bast(BastFtl::new(BastFtlConfig {
                nand,
                logical_pages,
                log_blocks: self.log_blocks,
                eager_merge: self.eager_merge,
                verify,
                label,
            })?),
            DeviceKind::Fast => AnyDevice::Fast(FastFtl::new(FastFtlConfig {
                nand,
                logical_pages,
                log_blocks: self.log_blocks,
                seq_log: self.seq_log,
                verify,
                label,
            })?),
        };
        dev.precondition(&self.precondition)?;
        Ok(dev)
    }
}

/// Every device, dispatched by `match`.
// A run holds one device: the size difference between variants costs nothing, while boxing the
// FTLs would add an indirection to every request.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum AnyDevice {
    /// [`IdealDevice`].
    Ideal(IdealDevice),
    /// [`PageFtl`].
    Page(PageFtl),
    /// [`BlockFtl`].
    Block(BlockFtl),
    /// [`BastFtl`].
    Bast(BastFtl),
    /// [`FastFtl`].
    Fast(FastFtl),
}

macro_rules! each {
    ($self:expr, $d:ident => $e:expr) => {
        match $self {
            AnyDevice::Ideal($d) => $e,
            AnyDevice::Page($d) => $e,
            AnyDevice::Block($d) => $e,
            AnyDevice::Bast($d) => $e,
            AnyDevice::Fast($d) => $e,
        }
    };
}

impl AnyDevice {
    /// Reads a page like [`Device::read`] and returns what the chip held (see
    /// [`PageFtl::read_tag`]); `None` for the ideal device, which stores nothing.
    pub fn read_tag(&mut self, page: u64) -> Result<Option<PageTag>, DeviceError> {
        Ok(match self {
            AnyDevice::Ideal(d) => {
                d.read(page)?;
                None
            }
            AnyDevice::Page(d) => Some(d.read_tag(page)?),
            AnyDevice::Block(d) => Some(d.read_tag(page)?),
            AnyDevice::Bast(d) => Some(d.read_tag(page)?),
            AnyDevice::Fast(d) => Some(d.read_tag(page)?),
        })
    }

    /// Zeroes the counters; wear persists.
    pub fn reset_stats(&mut self) {
        each!(self, d => d.reset_stats())
    }

    /// The NAND chip under the translation layer (`None` for the ideal device).
    pub fn nand(&mut self) -> Option<&Nand> {
        match self {
            AnyDevice::Ideal(_) => None,
            AnyDevice::Page(d) => Some(d.nand()),
            AnyDevice::Block(d) => Some(d.nand()),
            AnyDevice::Bast(d) => Some(d.nand()),
            AnyDevice::Fast(d) => Some(d.nand()),
        }
    }

    /// Brings the device into the given state, then resets the counters (see [`Precondition`]).
    /// The ideal device has no state: only its counters are reset.
    pub fn precondition(&mut self, p: &Precondition) -> Result<(), DeviceError> {
        if !matches!(self, AnyDevice::Ideal(_)) {
            precondition(self, p)?;
        }
        self.reset_stats();
        Ok(())
    }
}

impl Device for AnyDevice {
    fn name(&self) -> String {
        each!(self, d => d.name())
    }
    fn logical_pages(&self) -> u64 {
        each!(self, d => d.logical_pages())
    }
    #[inline]
    fn read(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        each!(self, d => d.read(page))
    }
    #[inline]
    fn write(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        each!(self, d => d.write(page))
    }
    #[inline]
    fn pad_run(&mut self, first: u64, pages: u32, buffered: u64) -> Result<u32, DeviceError> {
        each!(self, d => d.pad_run(first, pages, buffered))
    }
    fn stats(&self) -> DeviceStats {
        each!(self, d => d.stats())
    }
    fn check_invariants(&self) -> Result<(), String> {
        each!(self, d => d.check_invariants())
    }
    #[inline(always)]
    fn prefetch(&self, page: u64) {
        each!(self, d => d.prefetch(page))
    }
    #[inline(always)]
    fn prefetches(&self) -> bool {
        each!(self, d => d.prefetches())
    }
}

/// Runs a preconditioning on any device (counters are not reset here).
pub fn precondition<D: Device + ?Sized>(dev: &mut D, p: &Precondition) -> Result<(), DeviceError> {
    let n = dev.logical_pages();
    match *p {
        Precondition::Empty => Ok(()),
        Precondition::Sequential => (0..n).try_for_each(|page| dev.write(page).map(|_| ())),
        Precondition::Aged { writes, seed } => {
            (0..n).try_for_each(|page| dev.write(page).map(|_| ()))?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            match writes {
                Some(w) => (0..w).try_for_each(|_| dev.write(rng.random_range(0..n)).map(|_| ())),
                None => {
                    let window = Precondition::window(n);
                    let mut last: Option<f64> = None;
                    for _ in 0..Precondition::MAX_WINDOWS {
                        let before = dev.stats();
                        for _ in 0..window {
                            dev.write(rng.random_range(0..n))?;
                        }
                        let after = dev.stats();
                        let wa = (after.flash_programs - before.flash_programs) as f64
                            / (after.host_writes - before.host_writes) as f64;
                        if last.is_some_and(|l| (wa - l).abs() <= 0.01 * l) {
                            break;
                        }
                        last = Some(wa);
                    }
                    Ok(())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_unknown_names_list_the_valid_ones() {
        assert_eq!("fast".parse::<DeviceKind>().unwrap(), DeviceKind::Fast);
        assert_eq!("cost-benefit".parse::<GcPolicy>().unwrap(), GcPolicy::CostBenefit);
        let e = "ssd".parse::<DeviceKind>().unwrap_err().to_string();
        assert!(e.contains("ideal, page, block, bast, fast"), "{e}");
        let e = "lru".parse::<GcPolicy>().unwrap_err().to_string();
        assert!(e.contains("greedy, cost-benefit, fifo"), "{e}");
        for p in [
            Precondition::Empty,
            Precondition::Sequential,
            Precondition::Aged { writes: None, seed: 9 },
            Precondition::Aged { writes: Some(1000), seed: 0 },
        ] {
            assert_eq!(p.to_string().parse::<Precondition>().unwrap(), p);
        }
        assert_eq!("aged".parse::<Precondition>().unwrap(), Precondition::Aged { writes: None, seed: 0 });
        assert!("aged:x".parse::<Precondition>().is_err());
        assert!("warm".parse::<Precondition>().unwrap_err().to_string().contains("empty, sequential, aged"));
    }

    #[test]
    fn labels() {
        let c = DeviceConfig::default();
        assert_eq!(c.label(), "page/micron/greedy/op7");
        let c = DeviceConfig { kind: DeviceKind::Fast, preset: NandPreset::Ref, seq_log: false, ..c };
        assert_eq!(c.label(), "fast/ref/log8/nosw");
        let c = DeviceConfig { kind: DeviceKind::Page, gc: GcPolicy::Fifo, op_percent: 6.5, ..c };
        assert_eq!(c.label(), "page/ref/fifo/op6.5");
    }

    #[test]
    fn config_round_trips_through_json() {
        let c = DeviceConfig {
            kind: DeviceKind::Bast,
            precondition: Precondition::Aged { writes: Some(5), seed: 1 },
            ..Default::default()
        };
        let s = serde_json::to_string(&c).unwrap();
        assert!(s.contains("\"kind\":\"bast\""), "{s}");
        let back: DeviceConfig = serde_json::from_str(&s).unwrap();
        assert_eq!(back, c);
        let partial: DeviceConfig =
            serde_json::from_str(r#"{"kind":"page","gc":"cost-benefit","precondition":{"aged":{}}}"#).unwrap();
        assert_eq!(partial.gc, GcPolicy::CostBenefit);
        assert_eq!(partial.precondition, Precondition::Aged { writes: None, seed: 0 });
        assert_eq!(partial.op_percent, 7.0);
        assert!(serde_json::from_str::<DeviceConfig>(r#"{"knd":"page"}"#).is_err());
    }

    #[test]
    fn build_sizes_the_chip() {
        let c = DeviceConfig { precondition: Precondition::Empty, ..Default::default() };
        // 1000 logical blocks of 64 pages: 70 spare + 2 reserve.
        assert_eq!(c.physical_blocks(64_000).unwrap(), 1072);
        assert_eq!(c.physical_blocks(64_001).unwrap(), 1001 + 71 + 2);
        let b = DeviceConfig { kind: DeviceKind::Bast, ..c.clone() };
        assert_eq!(b.physical_blocks(64_000).unwrap(), 1009);
        let d = c.build(64_000).unwrap();
        assert_eq!(d.logical_pages(), 64_000);
        assert_eq!(d.name(), "page/micron/greedy/op7");
    }

    #[test]
    fn preconditioning_resets_counters_but_keeps_wear() {
        for kind in DeviceKind::ALL {
            let c = DeviceConfig {
                kind,
                log_blocks: 4,
                precondition: Precondition::Aged { writes: Some(20_000), seed: 3 },
                verify: true,
                ..Default::default()
            };
            let mut d = c.build(2048).unwrap();
            let s = d.stats();
            assert_eq!((s.host_writes, s.flash_programs, s.erases, s.time_ns), (0, 0, 0, 0), "{kind}");
            if kind != DeviceKind::Ideal {
                assert!(s.erase_count_max > 0, "{kind}: wear persists");
            }
            d.check_invariants().unwrap();
            for p in 0..2048 {
                d.read(p).unwrap();
            }
        }
    }

    #[test]
    fn steady_state_aging_stops() {
        let c = DeviceConfig {
            precondition: Precondition::Aged { writes: None, seed: 1 },
            op_percent: 28.0,
            ..Default::default()
        };
        let d = c.build(64 * 64).unwrap();
        d.check_invariants().unwrap();
        assert!(d.stats().erase_count_max > 0);
    }
}
