//! Page stores: devices that keep data.
//!
//! The simulator only needs costs ([`Device`]); the storage engine and the write-gathering layer
//! need the bytes back. A [`PageStore`] reads and writes whole pages of data and, like a device,
//! answers with the time each operation took: simulated time for simulated flash, measured wall
//! time for a real file.
//!
//! * [`MemStore`] — pages in memory, zero cost (tests, and the data half of [`SimStore`]).
//! * [`SimStore`] — data in memory, cost and counters from any simulated [`Device`] (an FTL, the
//!   ideal device, the gathering layer over an FTL): the engine runs "on simulated flash" with
//!   this.
//! * [`FileStore`] — a file, with direct I/O (`O_DIRECT`) where the platform and file system
//!   allow it and a recorded fallback to buffered I/O where they do not; page-aligned bounce
//!   buffer; optional sync after every write.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::device::{Device, DeviceError, DeviceStats, Nanos};

/// What a page store can report as going wrong.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The operating system refused an operation on the file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The simulated device refused an operation.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The page is outside the store.
    #[error("page {page} is outside the store of {pages} pages")]
    OutOfRange {
        /// The page asked for.
        page: u64,
        /// The store's size in pages.
        pages: u64,
    },
    /// The caller's buffer is not one page long.
    #[error("buffer of {got} bytes for a page of {expected} bytes")]
    BadBuffer {
        /// The page size.
        expected: usize,
        /// The buffer length given.
        got: usize,
    },
    /// Stored data failed a check (checksum, header, page number).
    #[error("page {page}: {message}")]
    Corrupt {
        /// The page concerned.
        page: u64,
        /// What is wrong.
        message: String,
    },
}

/// A page-addressed store of data.
///
/// Contract: pages are `0..pages()`, each `page_size()` bytes; `read_page` fills `buf` with the
/// data last written to the page (zeros for a page never written); the returned time is added
/// to `stats().time_ns`. `sync` makes every completed write durable.
pub trait PageStore: Send {
    /// Bytes per page.
    fn page_size(&self) -> usize;
    /// Number of pages.
    fn pages(&self) -> u64;
    /// Reads one page into `buf` (exactly one page long).
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError>;
    /// Writes one page from `buf` (exactly one page long).
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError>;
    /// Makes all writes so far durable.
    fn sync(&mut self) -> Result<Nanos, StoreError>;
    /// Counters (host reads and writes, time; simulated stores add their device's counters).
    fn stats(&self) -> DeviceStats;
    /// Short description for reports, e.g. `file:/data/db (direct I/O)` or `sim:bast/ref/log8`.
    fn label(&self) -> String;
}

fn check(page: u64, pages: u64, len: usize, page_size: usize) -> Result<(), StoreError> {
    if page >= pages {
        return Err(StoreError::OutOfRange { page, pages });
    }
    if len != page_size {
        return Err(StoreError::BadBuffer { expected: page_size, got: len });
    }
    Ok(())
}

/// Pages kept in memory; grows as pages are written; costs nothing.
#[derive(Clone, Debug)]
pub struct MemStore {
    page_size: usize,
    pages: u64,
    data: Vec<u8>,
    stats: DeviceStats,
}

impl MemStore {
    /// An empty store of `pages` pages of `page_size` bytes (memory is used only for pages up
    /// to the highest one written).
    pub fn new(page_size: usize, pages: u64) -> Self {
        assert!(page_size > 0, "page size must be positive");
        MemStore { page_size, pages, data: Vec::new(), stats: DeviceStats::default() }
    }
}

impl PageStore for MemStore {
    fn page_size(&self) -> usize {
        self.page_size
    }
    fn pages(&self) -> u64 {
        self.pages
    }
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        check(page, self.pages, buf.len(), self.page_size)?;
        let start = page as usize * self.page_size;
        if start + self.page_size <= self.data.len() {
            buf.copy_from_slice(&self.data[start..start + self.page_size]);
        } else {
            buf.fill(0);
        }
        self.stats.host_reads += 1;
        Ok(0)
    }
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        check(page, self.pages, buf.len(), self.page_size)?;
        let start = page as usize * self.page_size;
        if self.data.len() < start + self.page_size {
            self.data.resize(start + self.page_size, 0);
        }
        self.data[start..start + self.page_size].copy_from_slice(buf);
        self.stats.host_writes += 1;
        Ok(0)
    }
    fn sync(&mut self) -> Result<Nanos, StoreError> {
        Ok(0)
    }
    fn stats(&self) -> DeviceStats {
        self.stats.clone()
    }
    fn label(&self) -> String {
        "memory".into()
    }
}

/// Data in memory, costs from a simulated device: every page read or write is also a read or
/// write of the same logical page on `device`, whose time is returned.
pub struct SimStore<D: Device> {
    data: MemStore,
    device: D,
}

impl<D: Device> SimStore<D> {
    /// A store of `page_size`-byte pages over `device` (its logical pages are the store's pages).
    pub fn new(device: D, page_size: usize) -> Self {
        let pages = device.logical_pages();
        SimStore { data: MemStore::new(page_size, pages), device }
    }

    /// The simulated device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The simulated device, mutably (e.g. to reset its counters after loading data).
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }
}

impl<D: Device + Send> PageStore for SimStore<D> {
    fn page_size(&self) -> usize {
        self.data.page_size
    }
    fn pages(&self) -> u64 {
        self.data.pages
    }
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        self.data.read_page(page, buf)?;
        Ok(self.device.read(page)?)
    }
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        self.data.write_page(page, buf)?;
        Ok(self.device.write(page)?)
    }
    fn sync(&mut self) -> Result<Nanos, StoreError> {
        Ok(0)
    }
    fn stats(&self) -> DeviceStats {
        self.device.stats()
    }
    fn label(&self) -> String {
        format!("sim:{}", self.device.name())
    }
}

/// Options of a [`FileStore`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileOptions {
    /// Try `O_DIRECT` (bypass the page cache). Falls back to buffered I/O, recording why, when
    /// the platform or file system refuses it.
    pub direct: bool,
    /// `fdatasync` after every write (each write durable when it returns).
    pub sync_each_write: bool,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions { direct: true, sync_each_write: false }
    }
}

/// Memory aligned for direct I/O.
struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: the buffer is exclusively owned; it is plain bytes.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    fn new(len: usize) -> Self {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 4096).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
    }
    fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr points to layout.size() initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }
    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// A file of fixed-size pages, read and written with positioned I/O through a 4 KiB-aligned
/// buffer, with direct I/O where available. Times are measured wall-clock nanoseconds.
pub struct FileStore {
    file: File,
    path: PathBuf,
    page_size: usize,
    pages: u64,
    options: FileOptions,
    direct: bool,
    fallback: Option<String>,
    buf: AlignedBuf,
    stats: DeviceStats,
}

impl FileStore {
    /// Creates (or truncates, if `overwrite`) a file of `pages` zeroed pages. An existing file
    /// is refused unless `overwrite` is set.
    pub fn create(
        path: &Path,
        page_size: usize,
        pages: u64,
        overwrite: bool,
        options: FileOptions,
    ) -> Result<Self, StoreError> {
        let io = |source| StoreError::Io { path: path.display().to_string(), source };
        if path.exists() && !overwrite {
            return Err(io(io::Error::new(io::ErrorKind::AlreadyExists, "exists; refusing to overwrite it")));
        }
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path).map_err(io)?;
        file.set_len(pages * page_size as u64).map_err(io)?;
        drop(file);
        Self::open(path, page_size, options)
    }

    /// Opens an existing file; its length must be a whole number of pages.
    pub fn open(path: &Path, page_size: usize, options: FileOptions) -> Result<Self, StoreError> {
        let io = |source| StoreError::Io { path: path.display().to_string(), source };
        if page_size == 0 || (options.direct && !page_size.is_multiple_of(512)) {
            return Err(io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("page size {page_size} is not a multiple of 512"),
            )));
        }
        let mut fallback = None;
        let mut direct = false;
        let file = if options.direct {
            match OpenOptions::new().read(true).write(true).custom_flags(libc::O_DIRECT).open(path) {
                Ok(f) => {
                    direct = true;
                    f
                }
                Err(e) => {
                    fallback = Some(format!("direct I/O unavailable ({e}); using buffered I/O"));
                    OpenOptions::new().read(true).write(true).open(path).map_err(io)?
                }
            }
        } else {
            OpenOptions::new().read(true).write(true).open(path).map_err(io)?
        };
        let len = file.metadata().map_err(io)?.len();
        if !len.is_multiple_of(page_size as u64) {
            return Err(io(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("length {len} is not a whole number of {page_size}-byte pages"),
            )));
        }
        let mut store = FileStore {
            file,
            path: path.to_path_buf(),
            page_size,
            pages: len / page_size as u64,
            options,
            direct,
            fallback,
            buf: AlignedBuf::new(page_size),
            stats: DeviceStats::default(),
        };
        // Some file systems accept O_DIRECT at open and refuse the first I/O: probe once.
        if store.direct && store.pages > 0 {
            let mut probe = vec![0u8; page_size];
            if let Err(StoreError::Io { source, .. }) = store.read_page(0, &mut probe)
                && source.raw_os_error() == Some(libc::EINVAL)
            {
                store.file = OpenOptions::new().read(true).write(true).open(path).map_err(io)?;
                store.direct = false;
                store.fallback = Some("direct I/O refused by the file system (EINVAL); using buffered I/O".into());
            }
            store.stats = DeviceStats::default();
        }
        Ok(store)
    }

    /// Whether direct I/O is in effect.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// Why direct I/O was requested but is not in effect (for a warning), if so.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// Grows the file to `pages` pages (never shrinks).
    pub fn grow(&mut self, pages: u64) -> Result<(), StoreError> {
        if pages > self.pages {
            self.file
                .set_len(pages * self.page_size as u64)
                .map_err(|source| StoreError::Io { path: self.path.display().to_string(), source })?;
            self.pages = pages;
        }
        Ok(())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl PageStore for FileStore {
    fn page_size(&self) -> usize {
        self.page_size
    }
    fn pages(&self) -> u64 {
        self.pages
    }
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        check(page, self.pages, buf.len(), self.page_size)?;
        let start = Instant::now();
        self.file
            .read_exact_at(self.buf.as_mut_slice(), page * self.page_size as u64)
            .map_err(|source| StoreError::Io { path: self.path.display().to_string(), source })?;
        buf.copy_from_slice(self.buf.as_slice());
        let t = start.elapsed().as_nanos() as Nanos;
        self.stats.host_reads += 1;
        self.stats.time_ns += t;
        Ok(t)
    }
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        check(page, self.pages, buf.len(), self.page_size)?;
        let start = Instant::now();
        self.buf.as_mut_slice().copy_from_slice(buf);
        let io = |source| StoreError::Io { path: self.path.display().to_string(), source };
        self.file.write_all_at(self.buf.as_slice(), page * self.page_size as u64).map_err(io)?;
        if self.options.sync_each_write {
            self.file.sync_data().map_err(io)?;
        }
        let t = start.elapsed().as_nanos() as Nanos;
        self.stats.host_writes += 1;
        self.stats.time_ns += t;
        Ok(t)
    }
    fn sync(&mut self) -> Result<Nanos, StoreError> {
        let start = Instant::now();
        self.file.sync_data().map_err(|source| StoreError::Io { path: self.path.display().to_string(), source })?;
        let t = start.elapsed().as_nanos() as Nanos;
        self.stats.time_ns += t;
        Ok(t)
    }
    fn stats(&self) -> DeviceStats {
        self.stats.clone()
    }
    fn label(&self) -> String {
        format!("file:{}{}", self.path.display(), if self.direct { " (direct I/O)" } else { " (buffered)" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IdealConfig, IdealDevice};

    fn roundtrip(store: &mut dyn PageStore) {
        let ps = store.page_size();
        let mut buf = vec![0u8; ps];
        store.read_page(3, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 0), "unwritten pages read as zeros");
        for p in [0u64, 3, 7] {
            let data: Vec<u8> = (0..ps).map(|i| (i as u64 * 31 + p) as u8).collect();
            store.write_page(p, &data).unwrap();
        }
        for p in [7u64, 0, 3] {
            store.read_page(p, &mut buf).unwrap();
            assert!(buf.iter().enumerate().all(|(i, &b)| b == (i as u64 * 31 + p) as u8), "page {p}");
        }
        assert!(matches!(store.read_page(8, &mut buf), Err(StoreError::OutOfRange { page: 8, pages: 8 })));
        assert!(matches!(store.write_page(1, &buf[..10]), Err(StoreError::BadBuffer { .. })));
        store.sync().unwrap();
        let s = store.stats();
        assert_eq!((s.host_reads, s.host_writes), (4, 3));
    }

    #[test]
    fn memory_store_roundtrip() {
        roundtrip(&mut MemStore::new(512, 8));
    }

    #[test]
    fn sim_store_keeps_data_and_charges_the_device() {
        let dev = IdealDevice::new(IdealConfig { logical_pages: 8, ..Default::default() }).unwrap();
        let mut s = SimStore::new(dev, 256);
        roundtrip(&mut s);
        assert_eq!(s.stats().time_ns, 4 * 25_000 + 3 * 220_000);
    }

    #[test]
    fn file_store_roundtrip_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pages.db");
        let mut s = FileStore::create(&path, 4096, 8, false, FileOptions::default()).unwrap();
        roundtrip(&mut s);
        drop(s);
        let mut s = FileStore::open(&path, 4096, FileOptions { direct: false, sync_each_write: true }).unwrap();
        let mut buf = vec![0u8; 4096];
        s.read_page(7, &mut buf).unwrap();
        assert_eq!(buf[1], (31 + 7) as u8);
        assert!(FileStore::create(&path, 4096, 8, false, FileOptions::default()).is_err(), "existing file kept");
        assert!(FileStore::open(&path, 3000, FileOptions::default()).is_err(), "length not a multiple");
    }
}
