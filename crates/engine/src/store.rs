//! The stores an engine run can use, chosen at run time: memory, simulated flash, a real file.
//!
//! [`AnyStore`] dispatches by `match` (no dynamic call per page operation); [`StoreSpec`]
//! describes one and builds it for a database of a given size.

use std::path::PathBuf;

use flashbuf_flash::{
    AnyDevice, DeviceConfig, DeviceStats, FileOptions, FileStore, MemStore, Nanos, PageStore, SimStore, StoreError,
};

/// Any page store.
// A run holds one store: boxing the simulated device would add an indirection to every I/O.
#[allow(clippy::large_enum_variant)]
pub enum AnyStore {
    /// Pages in memory, no cost.
    Memory(MemStore),
    /// Pages in memory, costs and counters from a simulated device.
    Sim(SimStore<AnyDevice>),
    /// A real file (direct I/O where available).
    File(FileStore),
}

macro_rules! each {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            AnyStore::Memory($s) => $e,
            AnyStore::Sim($s) => $e,
            AnyStore::File($s) => $e,
        }
    };
}

impl PageStore for AnyStore {
    fn page_size(&self) -> usize {
        each!(self, s => s.page_size())
    }
    fn pages(&self) -> u64 {
        each!(self, s => s.pages())
    }
    #[inline]
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        each!(self, s => s.read_page(page, buf))
    }
    #[inline]
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        each!(self, s => s.write_page(page, buf))
    }
    fn sync(&mut self) -> Result<Nanos, StoreError> {
        each!(self, s => s.sync())
    }
    fn stats(&self) -> DeviceStats {
        each!(self, s => s.stats())
    }
    fn label(&self) -> String {
        each!(self, s => s.label())
    }
}

impl AnyStore {
    /// Checks the simulated device's internal bookkeeping (a no-op for other stores).
    pub fn check_invariants(&self) -> Result<(), String> {
        match self {
            AnyStore::Sim(s) => flashbuf_flash::Device::check_invariants(s.device()),
            _ => Ok(()),
        }
    }

    /// For a file store: why direct I/O is not in effect, when it was requested but refused.
    pub fn direct_io_fallback(&self) -> Option<&str> {
        match self {
            AnyStore::File(f) => f.fallback_reason(),
            _ => None,
        }
    }
}

/// A store to build for a run.
#[derive(Clone, Debug, PartialEq)]
pub enum StoreSpec {
    /// [`MemStore`]: no I/O cost (functional tests, CPU-only measurements).
    Memory,
    /// [`SimStore`] over the device `DeviceConfig` builds (sized to the database,
    /// preconditioned as the configuration says). One engine page is one logical page of the
    /// device: the chip's page size is nominal, its timings apply per engine page.
    Sim(DeviceConfig),
    /// A real file at `path`, created anew at the database's size: building refuses to
    /// replace anything at `path` (a file, a link, a device), and never follows a link there.
    /// The caller removes it when done.
    File {
        /// Where.
        path: PathBuf,
        /// Request direct I/O (`O_DIRECT`; falls back to buffered I/O where refused).
        direct: bool,
    },
}

impl StoreSpec {
    /// Short label for result rows: `memory`, `sim:<device label>`, `file:<path>`.
    pub fn label(&self) -> String {
        match self {
            StoreSpec::Memory => "memory".into(),
            StoreSpec::Sim(d) => format!("sim:{}", d.label()),
            StoreSpec::File { path, direct } => {
                format!("file:{}{}", path.display(), if *direct { "" } else { " (buffered)" })
            }
        }
    }

    /// Whether time on this store is simulated (device time is added to CPU time).
    pub fn is_simulated(&self) -> bool {
        matches!(self, StoreSpec::Sim(_))
    }

    /// Builds the store with `pages` pages of `page_size` bytes.
    pub fn build(&self, page_size: usize, pages: u64) -> Result<AnyStore, StoreError> {
        Ok(match self {
            StoreSpec::Memory => AnyStore::Memory(MemStore::new(page_size, pages)),
            StoreSpec::Sim(config) => AnyStore::Sim(SimStore::new(config.build(pages)?, page_size)),
            StoreSpec::File { path, direct } => {
                create_new_file(path, page_size, pages)?;
                AnyStore::File(FileStore::open(
                    path,
                    page_size,
                    FileOptions { direct: *direct, sync_each_write: false },
                )?)
            }
        })
    }
}

/// Creates a file of `pages` zeroed pages at `path`, which must not exist (not even as a
/// dangling link: the creation neither follows nor replaces one).
pub fn create_new_file(path: &std::path::Path, page_size: usize, pages: u64) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| StoreError::Io { path: path.display().to_string(), source };
    let len = pages
        .checked_mul(page_size as u64)
        .ok_or_else(|| io(std::io::Error::other(format!("{pages} pages of {page_size} bytes overflow"))))?;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io)?;
    file.set_len(len).map_err(io)
}
