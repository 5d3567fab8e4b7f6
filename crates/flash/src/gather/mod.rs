//! The FTL-independent write-gathering layer of Chardin, Pasteur and Petit (*Une couche
//! indépendante des FTL pour améliorer les performances des écritures aléatoires sur mémoires
//! flash*, `papers/002`).
//!
//! Many flash devices write faster when consecutive writes are close: the cost of a write grows
//! with the distance `d` from the previous one, roughly linearly up to some `d_max` (the paper's
//! Fig. 2, Definition 2). The layer trades space for speed: it keeps `|P|` spare ("pool")
//! sectors on the device and sends every logical write to the pool sector nearest *after* the
//! last written sector, so random logical writes become skip-sequential physical writes whose
//! mean distance depends only on the pool's share of the device.
//!
//! ```text
//!   logical  l0 l1 l2 l3            T: logical → physical     P: free physical sectors
//!   physical [l0][l1][l2][l3][ ][ ][ ][ ]   f = 3 (last written)
//!   write l0 ──▶ [  ][l1][l2][l3][l0][ ][ ][ ]   f = 4, sector 0 joins P
//!   write l3 ──▶ [  ][l1][l2][  ][l0][l3][ ][ ]   f = 5, sector 3 joins P
//!   write l0 ──▶ [  ][l1][l2][  ][  ][l3][l0][ ]   f = 6  (the paper's Fig. 3)
//! ```
//!
//! # Pieces
//!
//! * The algorithm (§4) is written once (`mapping.rs`): T, P and f; a write takes the first
//!   pool sector after f with wrap-around (`D1`, Definition 3), updates T and frees the old
//!   copy. P is a hierarchical bitmap over physical sectors (`bitmap.rs`): the successor of f in
//!   O(log₆₄ |F|) word operations, whatever |P|.
//! * [`Gather`] — the layer as a timing-only [`Device`](crate::Device) over any device (the
//!   simulated BAST, FAST and page-mapped FTLs for the experiments of §6).
//! * [`GatherStore`] — the layer with data over any [`PageStore`](crate::PageStore)
//!   ([`MemStore`](crate::MemStore), [`FileStore`](crate::FileStore),
//!   [`SimStore`](crate::SimStore)), crash-safe beyond the paper: every physical sector carries a
//!   header (logical sector, sequence number, CRC32C) from which [`GatherStore::recover`]
//!   rebuilds T, P and f.
//! * [`model`] — p(d) and cost_avg of §5 (with the binomial formula the text prints garbled
//!   restored and checked), and a steady-state model of the forward-only sweep this
//!   implementation uses, which the paper observes beats its uniform model.
//! * [`probe`] — measuring cost(d) on a real file (the paper's Fig. 2, `fio --rw=write:<gap>`)
//!   or on a simulated device.
//! * [`experiment`] — uniform random logical writes directly and through the layer over
//!   simulated devices and a real file, for pool sizes from 5% to 300% (Figs. 5–7), with the
//!   model's prediction beside each measurement.
//!
//! # Using it
//!
//! ```
//! use flashbuf_flash::gather::model::{CostCurve, predict};
//! use flashbuf_flash::{Device, DeviceConfig, DeviceKind, Gather, GatherConfig, NandPreset, PoolSize};
//! use flashbuf_flash::{GatherStore, MemStore, PageStore, RecoverMode};
//!
//! // Timing only: 4 KiB sectors (two 2 KiB pages) over BAST, a pool of half the logical space.
//! let cfg = GatherConfig { logical_sectors: 4096, pool: PoolSize::Percent(50.0), pages_per_sector: 2 };
//! let bast = DeviceConfig { kind: DeviceKind::Bast, preset: NandPreset::Ref, ..Default::default() };
//! let mut g = Gather::new(bast.build(cfg.physical_sectors()? * 2)?, &cfg)?;
//! g.write(17)?; // to sector 4096, the first pool sector after the sequential fill
//! assert_eq!(g.physical_of(17)?, 4096);
//!
//! // With data and crash recovery: 64-byte sectors carry 32 bytes of payload.
//! let mut s = GatherStore::format(MemStore::new(64, 150), 100, PoolSize::Sectors(50))?;
//! s.write_page(7, &[0xAB; 32])?;
//! let (mut s, report) = GatherStore::recover(s.into_inner(), RecoverMode::Strict)?;
//! assert!(report.is_consistent());
//! let mut buf = [0u8; 32];
//! s.read_page(7, &mut buf)?;
//! assert_eq!(buf, [0xAB; 32]);
//!
//! // The model: the paper's USB key (30 random writes/s, d_max = 32) with a 50% pool.
//! let p = predict(100_000, 50_000, &CostCurve::parametric(32, 1e9 / 30.0)?)?;
//! assert!((p.writes_per_s / 30.0 - 10.67).abs() < 0.01); // the paper measured ×10 (Fig. 5)
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Choices where the paper is silent
//!
//! * **Direction.** Forward with wrap-around only, as the paper's experiments do (§4: "only
//!   positive distances are considered"); the paper notes it beats the uniform model (§6).
//! * **Initial state.** Logical sector `i` at physical sector `i`, pool = the sectors after the
//!   logical space, f = `|L| − 1`: the state after a sequential load. The first `|P|` writes
//!   therefore land sequentially in the pool region; measurements drop a warm-up (the
//!   experiments use two passes over the device) before the layer reaches its steady state.
//! * **Order of operations.** The paper's list (write P(0), update T, remove P(0), add the old
//!   copy) is kept: the old copy of the sector being written is never the target, so the
//!   distance between consecutive writes is always ≥ 1 (never an in-place rewrite).
//! * **Pool updates are synchronous** (the paper allows deferring them): with a bitmap they cost
//!   a few word operations.
//! * **Sectors larger than a device page.** A sector may span `k` consecutive device pages
//!   ([`GatherConfig::pages_per_sector`]): 4 KiB sectors over the 2 KiB pages of the REF and
//!   MICRON chips are `k = 2`.

mod bitmap;
mod device;
pub mod experiment;
mod mapping;
pub mod model;
pub mod probe;
mod store;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use device::Gather;
pub use store::{GatherStore, HEADER_BYTES, RecoverMode, RecoveryReport, SectorFault, SectorFaultKind, SectorWindow};

use crate::device::DeviceError;

/// Size of the pool: a number of sectors or a share of the logical space.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolSize {
    /// A number of physical sectors.
    Sectors(u64),
    /// A percentage of the logical space (`50.0` = half as many pool sectors as logical ones),
    /// rounded to the nearest sector.
    Percent(f64),
}

impl PoolSize {
    /// The pool in sectors for a logical space of `logical` sectors; zero sectors (after
    /// rounding) or a bad percentage is [`DeviceError::Config`].
    pub fn sectors(self, logical: u64) -> Result<u64, DeviceError> {
        let n = match self {
            PoolSize::Sectors(n) => n,
            PoolSize::Percent(pc) => {
                if !pc.is_finite() || pc < 0.0 {
                    return Err(DeviceError::Config(format!("pool percentage must be a positive number (got {pc})")));
                }
                (logical as f64 * pc / 100.0).round() as u64
            }
        };
        if n == 0 {
            return Err(DeviceError::Config(format!(
                "a pool of {self} is zero sectors for {logical} logical sectors: the layer needs at least one free \
                 sector to write to"
            )));
        }
        Ok(n)
    }

    /// Short name for labels: `pool50%` or `pool1000`.
    pub fn label(self) -> String {
        format!("pool{self}")
    }
}

impl fmt::Display for PoolSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolSize::Sectors(n) => write!(f, "{n}"),
            PoolSize::Percent(pc) => write!(f, "{pc}%"),
        }
    }
}

impl FromStr for PoolSize {
    type Err = DeviceError;
    /// `1000` (sectors) or `50%` (of the logical space).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let bad =
            || DeviceError::Config(format!("bad pool size `{s}` (expected sectors like 1000 or a share like 50%)"));
        match s.strip_suffix('%') {
            Some(pc) => {
                let v: f64 = pc.trim().parse().map_err(|_| bad())?;
                if !v.is_finite() || v <= 0.0 {
                    return Err(bad());
                }
                Ok(PoolSize::Percent(v))
            }
            None => Ok(PoolSize::Sectors(s.parse().map_err(|_| bad())?)),
        }
    }
}

/// Geometry of a [`Gather`] layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatherConfig {
    /// |L|: logical sectors the host addresses.
    pub logical_sectors: u64,
    /// |P|: spare sectors.
    pub pool: PoolSize,
    /// Device pages per sector (default 1).
    pub pages_per_sector: u32,
}

impl GatherConfig {
    /// `logical_sectors` sectors of one device page and a pool of `pool`.
    pub fn new(logical_sectors: u64, pool: PoolSize) -> Self {
        GatherConfig { logical_sectors, pool, pages_per_sector: 1 }
    }

    /// |F| = |L| + |P| in sectors, after checking the sizes.
    pub fn physical_sectors(&self) -> Result<u64, DeviceError> {
        self.sizes().map(|(_, f)| f as u64)
    }

    /// (|L|, |F|) as sector numbers, checked: |L| ≥ 1, |P| ≥ 1, |F| < 2³² (sector numbers are
    /// 32-bit; `u32::MAX` marks free sectors on disk).
    pub(crate) fn sizes(&self) -> Result<(u32, u32), DeviceError> {
        sizes(self.logical_sectors, self.pool)
    }
}

pub(crate) fn sizes(logical: u64, pool: PoolSize) -> Result<(u32, u32), DeviceError> {
    if logical == 0 {
        return Err(DeviceError::Config("the logical space needs at least one sector".into()));
    }
    let p = pool.sectors(logical)?;
    let f = logical.checked_add(p).filter(|&f| f < u32::MAX as u64).ok_or_else(|| {
        DeviceError::Config(format!("{logical} logical + {p} pool sectors exceed 2^32 − 1 physical sectors"))
    })?;
    Ok((logical as u32, f as u32))
}

/// Counters of the layer itself: logical operations and distances between consecutive physical
/// writes (D1, in sectors).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GatherStats {
    /// Logical sector reads.
    pub reads: u64,
    /// Logical sector writes.
    pub writes: u64,
    /// Sum of D1 over writes.
    pub distance_sum: u64,
    /// Largest D1 seen.
    pub distance_max: u64,
    /// `distance_hist[d]` writes at distance `d` for `d < 64`; `distance_hist[64]` those at
    /// 64 or more (`distance_hist[0]` stays 0: the layer never writes in place).
    #[serde(skip)]
    pub distance_hist: [u64; 65],
}

impl Default for GatherStats {
    fn default() -> Self {
        GatherStats { reads: 0, writes: 0, distance_sum: 0, distance_max: 0, distance_hist: [0; 65] }
    }
}

impl GatherStats {
    #[inline]
    pub(crate) fn record_write(&mut self, d: u32) {
        self.writes += 1;
        self.distance_sum += d as u64;
        self.distance_max = self.distance_max.max(d as u64);
        self.distance_hist[(d as usize).min(64)] += 1;
    }

    /// Mean D1 between consecutive writes (0 without writes).
    pub fn mean_distance(&self) -> f64 {
        if self.writes == 0 { 0.0 } else { self.distance_sum as f64 / self.writes as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_sizes_parse_and_round() {
        assert_eq!("50%".parse::<PoolSize>().unwrap(), PoolSize::Percent(50.0));
        assert_eq!("1000".parse::<PoolSize>().unwrap(), PoolSize::Sectors(1000));
        assert!("0%".parse::<PoolSize>().is_err());
        assert!("x".parse::<PoolSize>().is_err());
        assert_eq!(PoolSize::Percent(5.0).sectors(100_000).unwrap(), 5000);
        assert_eq!(PoolSize::Percent(0.6).sectors(100).unwrap(), 1);
        let e = PoolSize::Percent(0.4).sectors(100).unwrap_err().to_string();
        assert!(e.contains("zero sectors"), "{e}");
        assert!(PoolSize::Sectors(0).sectors(100).is_err());
        assert_eq!(PoolSize::Percent(300.0).label(), "pool300%");
    }

    #[test]
    fn sizes_are_checked() {
        assert_eq!(GatherConfig::new(100, PoolSize::Sectors(50)).physical_sectors().unwrap(), 150);
        assert!(GatherConfig::new(0, PoolSize::Sectors(50)).physical_sectors().is_err());
        assert!(GatherConfig::new(u32::MAX as u64, PoolSize::Sectors(1)).physical_sectors().is_err());
        assert!(GatherConfig::new(u32::MAX as u64 - 2, PoolSize::Sectors(1)).physical_sectors().is_ok());
    }
}
