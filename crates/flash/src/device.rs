//! The device contract shared by every simulated (and real) device.

use serde::Serialize;

/// Simulated time in nanoseconds.
pub type Nanos = u64;

/// What a device can report as going wrong. A device never panics on host input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// The host addressed a page outside `0..logical_pages()`.
    #[error("page {page} is outside the device's logical space of {logical_pages} pages")]
    OutOfRange {
        /// The page asked for.
        page: u64,
        /// The device's logical capacity in pages.
        logical_pages: u64,
    },
    /// A block reached its erase endurance and the translation layer could not avoid it.
    #[error("flash block {block} is worn out after {erases} erases")]
    WornOut {
        /// Physical block number.
        block: u64,
        /// Erase count reached.
        erases: u64,
    },
    /// A read returned a different version than the last one written (integrity checking).
    #[error("integrity violation: page {page} returned version {got}, expected {expected}")]
    Integrity {
        /// Logical page.
        page: u64,
        /// Version last written by the host.
        expected: u64,
        /// Version the device returned.
        got: u64,
    },
    /// The configuration cannot work (zero pages, too little spare space for GC, ...).
    #[error("invalid device configuration: {0}")]
    Config(String),
    /// The device has no free space left to serve a write (should be prevented by configuration).
    #[error("device is out of free space: {0}")]
    NoSpace(String),
    /// A translation layer asked the NAND chip for something flash cannot do (program a page that
    /// is not the block's next free page, read an unprogrammed page, address a page that does not
    /// exist). Only a bug in a translation layer causes this; tests check it never happens.
    #[error("flash rule violated at block {block}, page offset {offset}: {rule}")]
    FlashRule {
        /// Physical block number.
        block: u64,
        /// Page offset inside the block.
        offset: u64,
        /// The rule that was broken.
        rule: &'static str,
    },
}

/// Counters every device keeps. Devices that have no notion of a counter leave it at zero; the
/// ideal device, for instance, never erases.
///
/// Definitions: *host* counters count the requests the device received; *flash* counters count
/// the NAND operations it performed (including garbage collection and merges). `time_ns` is the
/// sum of simulated latencies of all operations.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DeviceStats {
    /// Page reads received from the host.
    pub host_reads: u64,
    /// Page writes received from the host.
    pub host_writes: u64,
    /// NAND page reads performed (host reads plus copies made by GC or merges).
    pub flash_reads: u64,
    /// NAND page programs performed (host writes plus copies made by GC or merges).
    pub flash_programs: u64,
    /// NAND block erases performed.
    pub erases: u64,
    /// Valid pages copied by garbage collection, merges or wear levelling.
    pub page_copies: u64,
    /// Switch merges (log block becomes the data block, one erase).
    pub merges_switch: u64,
    /// Partial merges (remaining pages copied into the log block, which becomes the data block).
    pub merges_partial: u64,
    /// Full merges (valid pages gathered into a new block; the old data block and, once, the log
    /// block are erased). A FAST victim log holding pages of `k` data blocks counts `k`.
    pub merges_full: u64,
    /// Sum of simulated latencies, in nanoseconds.
    pub time_ns: Nanos,
    /// Smallest erase count of any physical block. The four erase-count fields describe lifetime
    /// wear: unlike the other counters they include erases made before the last counter reset
    /// (preconditioning).
    pub erase_count_min: u64,
    /// Largest erase count of any physical block (lifetime).
    pub erase_count_max: u64,
    /// Mean erase count over physical blocks (lifetime).
    pub erase_count_mean: f64,
    /// Population standard deviation of erase counts over physical blocks (lifetime).
    pub erase_count_std: f64,
}

impl DeviceStats {
    /// Flash programs per host write (1.0 for a device without write amplification; 0 when no
    /// host write happened).
    pub fn write_amplification(&self) -> f64 {
        if self.host_writes == 0 { 0.0 } else { self.flash_programs as f64 / self.host_writes as f64 }
    }

    /// Total merges of all types.
    pub fn merges(&self) -> u64 {
        self.merges_switch + self.merges_partial + self.merges_full
    }

    /// The work done since `before` (an earlier snapshot of the same device): every counter
    /// is a difference; the erase-count distribution, which describes wear, is `self`'s.
    pub fn since(&self, before: &DeviceStats) -> DeviceStats {
        DeviceStats {
            host_reads: self.host_reads - before.host_reads,
            host_writes: self.host_writes - before.host_writes,
            flash_reads: self.flash_reads - before.flash_reads,
            flash_programs: self.flash_programs - before.flash_programs,
            erases: self.erases - before.erases,
            page_copies: self.page_copies - before.page_copies,
            merges_switch: self.merges_switch - before.merges_switch,
            merges_partial: self.merges_partial - before.merges_partial,
            merges_full: self.merges_full - before.merges_full,
            time_ns: self.time_ns - before.time_ns,
            ..self.clone()
        }
    }
}

/// CPU time consumed so far by the calling thread, in seconds (the "CPU time" of the AD-LRU
/// paper's runtime model, measured by the simulator and the engine alike).
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own; CLOCK_THREAD_CPUTIME_ID is
    // supported on every platform flashbuf builds on (Linux, macOS, the BSDs).
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// A page-addressed storage device with simulated timing.
///
/// Contract:
/// * The host addresses logical pages `0..logical_pages()`; anything else is
///   [`DeviceError::OutOfRange`], never a panic.
/// * `read` and `write` return the simulated time the operation took, including any work it
///   triggered (garbage collection, merges, erases). The same time is added to
///   [`DeviceStats::time_ns`].
/// * Reading a page never written is allowed (it returns the initial contents) and costs a read.
/// * Devices are deterministic: the same sequence of calls gives the same times and counters.
pub trait Device {
    /// Short description, e.g. `ideal` or `page-mapped/micron`.
    fn name(&self) -> String;
    /// Number of logical pages the host may address.
    fn logical_pages(&self) -> u64;
    /// Reads one logical page.
    fn read(&mut self, page: u64) -> Result<Nanos, DeviceError>;
    /// Writes one logical page.
    fn write(&mut self, page: u64) -> Result<Nanos, DeviceError>;
    /// The counters so far.
    fn stats(&self) -> DeviceStats;
    /// Recomputes internal bookkeeping from scratch and compares (tests call this after steps).
    fn check_invariants(&self) -> Result<(), String> {
        Ok(())
    }
    /// A read or write of `page` may come soon (the simulator says so some requests ahead, as it
    /// prefetches its own page-table slot): a device may bring its mapping entry into cache.
    /// Changes nothing; by default does nothing.
    #[inline(always)]
    fn prefetch(&self, page: u64) {
        let _ = page;
    }
    /// `true` when [`prefetch`](Device::prefetch) does something, so that a caller can skip
    /// working out what to prefetch for a device that ignores it (for a concrete device type the
    /// answer is a constant and the work is compiled away). By default `false`.
    #[inline(always)]
    fn prefetches(&self) -> bool {
        false
    }
}

impl<D: Device + ?Sized> Device for Box<D> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn logical_pages(&self) -> u64 {
        (**self).logical_pages()
    }
    #[inline]
    fn read(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        (**self).read(page)
    }
    #[inline]
    fn write(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        (**self).write(page)
    }
    fn stats(&self) -> DeviceStats {
        (**self).stats()
    }
    fn check_invariants(&self) -> Result<(), String> {
        (**self).check_invariants()
    }
    #[inline(always)]
    fn prefetch(&self, page: u64) {
        (**self).prefetch(page)
    }
    #[inline(always)]
    fn prefetches(&self) -> bool {
        (**self).prefetches()
    }
}
