//! The ideal device: every page read and write costs a fixed latency; no erase, no translation.
//!
//! Defaults are the MICRON MT29F4G08AAA chip of the AD-LRU paper's Table 2 (25 µs per page read,
//! 220 µs per page write): what a buffer policy costs when the FTL is perfect.

use crate::device::{Device, DeviceError, DeviceStats, Nanos};

/// Latencies and size of an [`IdealDevice`].
#[derive(Debug, Clone, PartialEq)]
pub struct IdealConfig {
    /// Cost of one page read, in nanoseconds (default 25 µs).
    pub read_ns: Nanos,
    /// Cost of one page write, in nanoseconds (default 220 µs).
    pub write_ns: Nanos,
    /// Logical capacity in pages.
    pub logical_pages: u64,
}

impl Default for IdealConfig {
    fn default() -> Self {
        IdealConfig { read_ns: 25_000, write_ns: 220_000, logical_pages: u64::MAX }
    }
}

/// A device with fixed per-page latencies.
#[derive(Debug, Clone)]
pub struct IdealDevice {
    config: IdealConfig,
    stats: DeviceStats,
}

impl IdealDevice {
    /// A fresh device with zeroed counters.
    pub fn new(config: IdealConfig) -> Result<Self, DeviceError> {
        if config.logical_pages == 0 {
            return Err(DeviceError::Config("the device needs at least one page".into()));
        }
        Ok(IdealDevice { config, stats: DeviceStats::default() })
    }

    /// Zeroes the counters.
    pub fn reset_stats(&mut self) {
        self.stats = DeviceStats::default();
    }

    #[inline]
    fn check(&self, page: u64) -> Result<(), DeviceError> {
        if page >= self.config.logical_pages {
            return Err(DeviceError::OutOfRange { page, logical_pages: self.config.logical_pages });
        }
        Ok(())
    }
}

impl Device for IdealDevice {
    fn name(&self) -> String {
        "ideal".to_string()
    }

    fn logical_pages(&self) -> u64 {
        self.config.logical_pages
    }

    #[inline]
    fn read(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        self.check(page)?;
        self.stats.host_reads += 1;
        self.stats.flash_reads += 1;
        self.stats.time_ns += self.config.read_ns;
        Ok(self.config.read_ns)
    }

    #[inline]
    fn write(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        self.check(page)?;
        self.stats.host_writes += 1;
        self.stats.flash_programs += 1;
        self.stats.time_ns += self.config.write_ns;
        Ok(self.config.write_ns)
    }

    /// The counters of the page-by-page padding added up at once (no page of an ideal device
    /// depends on another); a run reaching past the device goes page by page, to fail where the
    /// page-by-page run fails.
    #[inline]
    fn pad_run(&mut self, first: u64, pages: u32, buffered: u64) -> Result<u32, DeviceError> {
        debug_assert!(pages <= 64);
        if pages == 0 || first.checked_add(u64::from(pages)).is_none_or(|end| end > self.config.logical_pages) {
            let mut reads = 0;
            for i in 0..u64::from(pages) {
                if buffered >> i & 1 == 0 {
                    self.read(first + i)?;
                    reads += 1;
                }
                self.write(first + i)?;
            }
            return Ok(reads);
        }
        let in_run = if pages == 64 { u64::MAX } else { (1u64 << pages) - 1 };
        let reads = pages - (buffered & in_run).count_ones();
        let (r, w) = (u64::from(reads), u64::from(pages));
        self.stats.host_reads += r;
        self.stats.flash_reads += r;
        self.stats.host_writes += w;
        self.stats.flash_programs += w;
        self.stats.time_ns += r * self.config.read_ns + w * self.config.write_ns;
        Ok(reads)
    }

    fn stats(&self) -> DeviceStats {
        self.stats.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_and_counts_follow_table_2() {
        let mut d = IdealDevice::new(IdealConfig { logical_pages: 10, ..Default::default() }).unwrap();
        assert_eq!(d.read(3).unwrap(), 25_000);
        assert_eq!(d.write(3).unwrap(), 220_000);
        assert_eq!(d.write(9).unwrap(), 220_000);
        let s = d.stats();
        assert_eq!((s.host_reads, s.host_writes, s.flash_reads, s.flash_programs), (1, 2, 1, 2));
        assert_eq!(s.time_ns, 465_000);
        assert_eq!(s.write_amplification(), 1.0);
        assert_eq!(d.write(10), Err(DeviceError::OutOfRange { page: 10, logical_pages: 10 }));
        assert_eq!(d.stats().host_writes, 2, "a rejected write is not counted");
    }

    /// The ideal device through the trait's default `pad_run` (page by page).
    struct PageByPage(IdealDevice);

    impl Device for PageByPage {
        fn name(&self) -> String {
            self.0.name()
        }
        fn logical_pages(&self) -> u64 {
            self.0.logical_pages()
        }
        fn read(&mut self, page: u64) -> Result<Nanos, DeviceError> {
            self.0.read(page)
        }
        fn write(&mut self, page: u64) -> Result<Nanos, DeviceError> {
            self.0.write(page)
        }
        fn stats(&self) -> DeviceStats {
            self.0.stats()
        }
    }

    proptest::proptest! {
        /// A padded run added up at once gives what the page-by-page run gives: reads, the
        /// counters and time, and the error (at the same point) for a run past the device.
        #[test]
        fn pad_run_adds_up_the_page_by_page_run(
            logical_pages in 1u64..200,
            first in 0u64..220,
            pages in 0u32..=64,
            buffered in proptest::prelude::any::<u64>(),
            before in 0u64..5,
        ) {
            let config = IdealConfig { logical_pages, ..Default::default() };
            let mut at_once = IdealDevice::new(config.clone()).unwrap();
            let mut by_page = PageByPage(IdealDevice::new(config).unwrap());
            for _ in 0..before {
                at_once.write(0).unwrap();
                by_page.write(0).unwrap();
            }
            let a = at_once.pad_run(first, pages, buffered);
            let b = by_page.pad_run(first, pages, buffered);
            proptest::prop_assert_eq!(a, b);
            proptest::prop_assert_eq!(at_once.stats(), by_page.stats());
        }
    }

    #[test]
    fn zero_pages_is_a_configuration_error() {
        assert!(matches!(
            IdealDevice::new(IdealConfig { logical_pages: 0, ..Default::default() }),
            Err(DeviceError::Config(_))
        ));
    }
}
