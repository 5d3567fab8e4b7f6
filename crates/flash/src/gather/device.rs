//! [`Gather`]: the write-gathering layer as a timing-only [`Device`] over any device.

use super::mapping::Mapping;
use super::{GatherConfig, GatherStats};
use crate::device::{Device, DeviceError, DeviceStats, Nanos};

/// The write-gathering layer over a timing-only device: logical sector writes are redirected to
/// the pool sector nearest after the last write (see the [module docs](super)).
///
/// The device underneath must have at least `(logical + pool) × pages_per_sector` logical pages;
/// the layer uses its first `(logical + pool)` sectors, sector `s` being device pages
/// `s·k .. s·k + k` (`k = pages_per_sector`). **Initial placement:** logical sector `i` is at
/// physical sector `i` and the pool is sectors `logical..logical + pool`, the state of a device
/// filled sequentially (the default preconditioning of [`crate::DeviceConfig::build`]); the last
/// written sector is `logical − 1`, so the first write goes to sector `logical`. The layer writes
/// nothing when it is created.
///
/// As a [`Device`], its pages are logical *sectors*: `logical_pages()` is the logical sector
/// count, `read` and `write` cost the `k` device operations of one sector, and `stats()` are the
/// device's own counters (host operations there are physical page operations).
#[derive(Debug, Clone)]
pub struct Gather<D: Device> {
    device: D,
    map: Mapping,
    pages_per_sector: u32,
    label: String,
    stats: GatherStats,
}

impl<D: Device> Gather<D> {
    /// Wraps `device`. Errors: an empty logical space or pool, a sector of zero pages, or a
    /// device smaller than `(logical + pool) × pages_per_sector` pages
    /// ([`DeviceError::Config`]).
    pub fn new(device: D, config: &GatherConfig) -> Result<Self, DeviceError> {
        let (logical, physical) = config.sizes()?;
        let k = config.pages_per_sector;
        if k == 0 {
            return Err(DeviceError::Config("a sector must span at least one device page".into()));
        }
        let needed = physical as u64 * k as u64;
        if device.logical_pages() < needed {
            return Err(DeviceError::Config(format!(
                "{logical} logical sectors plus a pool of {} need {needed} device pages ({physical} sectors of \
                 {k} page{}); the device has {}",
                physical - logical,
                if k == 1 { "" } else { "s" },
                device.logical_pages()
            )));
        }
        let label = format!("gather/{}/{}", config.pool.label(), device.name());
        Ok(Gather {
            device,
            map: Mapping::sequential(logical, physical),
            pages_per_sector: k,
            label,
            stats: GatherStats::default(),
        })
    }

    /// The device underneath.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The device underneath, mutably (e.g. to reset its counters after a warm-up). Writing to
    /// it directly bypasses the layer.
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }

    /// Unwraps the device.
    pub fn into_inner(self) -> D {
        self.device
    }

    /// The layer's own counters (logical operations, distances between consecutive writes).
    pub fn gather_stats(&self) -> &GatherStats {
        &self.stats
    }

    /// Zeroes the layer's counters (the device's are its own business).
    pub fn reset_gather_stats(&mut self) {
        self.stats = GatherStats::default();
    }

    /// Physical sector currently holding logical sector `l` (T(l)).
    pub fn physical_of(&self, l: u64) -> Result<u64, DeviceError> {
        let l = self.check(l)?;
        Ok(self.map.physical_of(l) as u64)
    }

    /// The last written physical sector (f).
    pub fn last_written(&self) -> u64 {
        self.map.last() as u64
    }

    /// Number of physical sectors (|F| = |L| + |P|).
    pub fn physical_sectors(&self) -> u64 {
        self.map.physical() as u64
    }

    /// Whether physical sector `p` is in the pool (holds no live logical sector).
    pub fn is_pool_sector(&self, p: u64) -> bool {
        p < self.map.physical() as u64 && self.map.is_free(p as u32)
    }

    /// Number of pool sectors (|P|).
    pub fn pool_sectors(&self) -> u64 {
        self.map.pool_len() as u64
    }

    /// Device pages per sector.
    pub fn pages_per_sector(&self) -> u32 {
        self.pages_per_sector
    }

    #[inline]
    fn check(&self, l: u64) -> Result<u32, DeviceError> {
        if l >= self.map.logical() as u64 {
            return Err(DeviceError::OutOfRange { page: l, logical_pages: self.map.logical() as u64 });
        }
        Ok(l as u32)
    }
}

impl<D: Device> Device for Gather<D> {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn logical_pages(&self) -> u64 {
        self.map.logical() as u64
    }

    #[inline]
    fn read(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        let l = self.check(page)?;
        let k = self.pages_per_sector as u64;
        let first = self.map.physical_of(l) as u64 * k;
        let mut t = 0;
        for p in first..first + k {
            t += self.device.read(p)?;
        }
        self.stats.reads += 1;
        Ok(t)
    }

    #[inline]
    fn write(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        let l = self.check(page)?;
        let target = self.map.target();
        let k = self.pages_per_sector as u64;
        let first = target as u64 * k;
        let mut t = 0;
        for p in first..first + k {
            t += self.device.write(p)?;
        }
        let d = self.map.commit(l, target);
        self.stats.record_write(d);
        Ok(t)
    }

    fn stats(&self) -> DeviceStats {
        self.device.stats()
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.map.check()?;
        self.device.check_invariants()
    }
}
