//! The page file: fixed-size, checksummed pages on any [`PageStore`].
//!
//! The engine stores everything in pages of one size (4 KiB by default) numbered `0..`; page
//! number `p` is store page `p`, so neighbouring pages stay neighbours on the device (CFDC's
//! clusters and the block-level policies depend on it). Page 0 is the *file header*; pages
//! `1..page_count` belong to the layers above (the B+-tree); pages from `page_count` up to the
//! store's size are unallocated.
//!
//! # Byte layout
//!
//! All integers are little-endian. Every page, the file header included, starts with a 32-byte
//! *page header*:
//!
//! | offset | bytes | field |
//! |-------:|------:|-------|
//! | 0  | 4 | CRC32C (Castagnoli) of bytes `4..page_size` |
//! | 4  | 4 | page magic `b"FBPG"` |
//! | 8  | 8 | page number (where the page belongs) |
//! | 16 | 8 | version: 1 on the first write, +1 on every write-back (LSN-like) |
//! | 24 | 4 | page size in bytes |
//! | 28 | 4 | reserved, zero |
//! | 32 | `page_size − 32` | payload (the layer above owns it) |
//!
//! The file header (page 0) has this payload:
//!
//! | offset | bytes | field |
//! |-------:|------:|-------|
//! | 32  | 8  | file magic `b"FLASHBUF"` |
//! | 40  | 4  | format version ([`FORMAT_VERSION`]) |
//! | 44  | 4  | page size in bytes |
//! | 48  | 8  | page count: allocated pages, this one included (with a log: 1; the count is in the log's anchors) |
//! | 56  | 64 | application area ([`APP_BYTES`]): the B+-tree keeps its root page, height, value size and record count here (with a log: zero; it is in the anchors) |
//! | 120 | 4  | flags: bit 0 [`FLAG_LOGGED`] (the database has a write-ahead log), bit 1 [`FLAG_OPEN`] (without a log: a session may have changed pages since the last clean close) |
//! | 124 | 4  | reserved, zero |
//! | 128 | 8  | first log page (0 without a log) |
//! | 136 | 8  | log pages, anchors included (0 without a log) |
//! | 144 | rest | zero |
//!
//! # What a read checks
//!
//! [`PageFile::read_page`] verifies, in this order, the page magic, the checksum, the page
//! number and the page size, and reports the first failure as [`PageFileError::Corrupt`] naming
//! the page: a torn write or a flipped bit fails the checksum, a page written to the wrong place
//! (a misdirected write) carries another page number, and a page never written (all zeros) has
//! no magic. The version is returned to the caller; the buffer manager compares it with the
//! version it last wrote or read, which also catches a *lost* write (an older version coming
//! back) within a session.
//!
//! Opening a store checks the file magic first (a clear "not a flashbuf database" error), then
//! the page size recorded in the header against the store's (a clear "created with N-byte
//! pages" error), then the format version, and only then the header page's checksum.
//!
//! # Durability
//!
//! The page file writes what it is told, in the order it is told; [`PageFile::sync`] makes the
//! writes durable. Two kinds of database exist:
//!
//! * **With a write-ahead log** ([`PageFile::create_with_log`]): the last pages of the store
//!   hold the log ([`crate::wal`]); page 0 is written once, at creation, and never again (the
//!   page count and the application area live in the log's anchors). [`PageFile::open`]
//!   *recovers*: it replays the log and returns the state of every operation whose commit was
//!   durable. `docs/engine.md` describes the guarantee.
//! * **Without a log** ([`PageFile::create`]): a clean shutdown (the buffer manager's `close`)
//!   loses nothing; a crash may leave the pages inconsistent, which cannot be repaired. The
//!   buffer manager sets [`FLAG_OPEN`] (and syncs) before it changes anything and clears it on a
//!   clean close, so such a database refuses to open after a crash
//!   ([`PageFileError::Unclean`]) instead of opening broken.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use flashbuf_flash::{FileOptions, FileStore, Nanos, PageStore, StoreError};

use crate::wal::{self, Anchor, LogGeometry, LogMeta, LogResume, Lsn, MIN_LOG_PAGES, RecoveryReport};

/// Bytes of the page header at the start of every page.
pub const PAGE_HEADER_BYTES: usize = 32;
/// The page size used unless another is chosen.
pub const DEFAULT_PAGE_SIZE: usize = 4096;
/// Smallest supported page size.
pub const MIN_PAGE_SIZE: usize = 128;
/// Largest supported page size.
pub const MAX_PAGE_SIZE: usize = 1 << 20;
/// Magic of every page (bytes 4..8).
pub const PAGE_MAGIC: [u8; 4] = *b"FBPG";
/// Magic of the file header (bytes 32..40 of page 0).
pub const FILE_MAGIC: [u8; 8] = *b"FLASHBUF";
/// The on-disk format this build writes and reads (2: flags and the log's place in the
/// header).
pub const FORMAT_VERSION: u32 = 2;
/// Header flag: the database has a write-ahead log.
pub const FLAG_LOGGED: u32 = 1;
/// Header flag (databases without a log): a session may have changed pages since the last
/// clean close.
pub const FLAG_OPEN: u32 = 2;
/// Bytes of the application area of the file header.
pub const APP_BYTES: usize = 64;

const OFF_CRC: usize = 0;
const OFF_MAGIC: usize = 4;
const OFF_PAGE_NO: usize = 8;
const OFF_VERSION: usize = 16;
const OFF_PAGE_SIZE: usize = 24;
const OFF_FILE_MAGIC: usize = 32;
const OFF_FORMAT: usize = 40;
const OFF_HDR_PAGE_SIZE: usize = 44;
const OFF_PAGE_COUNT: usize = 48;
const OFF_APP: usize = 56;
const OFF_FLAGS: usize = 120;
const OFF_LOG_FIRST: usize = 128;
const OFF_LOG_PAGES: usize = 136;

/// What the page file can report as going wrong.
#[derive(Debug, thiserror::Error)]
pub enum PageFileError {
    /// The store refused an operation (I/O error, simulated device error, out of range).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A page failed a check on read (checksum, page number, magic, version, format).
    #[error("page {page}: {message}")]
    Corrupt {
        /// The page concerned.
        page: u64,
        /// What is wrong.
        message: String,
    },
    /// The store does not hold a flashbuf database.
    #[error("{store}: not a flashbuf database ({reason})")]
    NotADatabase {
        /// The store's label (for a file: its path).
        store: String,
        /// What was found instead.
        reason: String,
    },
    /// The database was created with another page size.
    #[error(
        "{store}: the database was created with {file_page_size}-byte pages but is opened with \
         {opened_page_size}-byte pages"
    )]
    WrongPageSize {
        /// The store's label.
        store: String,
        /// Page size recorded in the file header.
        file_page_size: u64,
        /// Page size the caller opened it with.
        opened_page_size: u64,
    },
    /// The file was written by a newer (or unknown) format version.
    #[error("{store}: database format version {found} is not supported (this build reads version {supported})")]
    UnsupportedVersion {
        /// The store's label.
        store: String,
        /// Version found in the header.
        found: u32,
        /// Version this build supports.
        supported: u32,
    },
    /// Invalid configuration (page size, store size).
    #[error("invalid page file configuration: {0}")]
    Config(String),
    /// A database without a log that was not closed cleanly.
    #[error(
        "{store}: the database was not closed cleanly (a crash or a failed session) and has no \
         write-ahead log, so its pages may be inconsistent; it cannot be opened (databases \
         created with a log are recovered instead)"
    )]
    Unclean {
        /// The store's label.
        store: String,
    },
}

/// The file header's contents (page 0), as kept in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// Page size in bytes.
    pub page_size: u32,
    /// Allocated pages, the header included (so the first free page number).
    pub page_count: u64,
    /// The application area (owned by the layer above; the B+-tree's metadata).
    pub app: [u8; APP_BYTES],
}

impl FileHeader {
    /// The header of an empty database with `page_size`-byte pages.
    pub fn empty(page_size: u32) -> Self {
        FileHeader { page_size, page_count: 1, app: [0; APP_BYTES] }
    }
}

#[inline]
fn get_u32(buf: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(buf[off..off + 4].try_into().expect("4 bytes"))
}

#[inline]
fn get_u64(buf: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(buf[off..off + 8].try_into().expect("8 bytes"))
}

/// Checks a page size for use by the page file.
pub fn check_page_size(page_size: usize) -> Result<(), PageFileError> {
    if !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page_size) || !page_size.is_multiple_of(8) {
        return Err(PageFileError::Config(format!(
            "page size {page_size} must be a multiple of 8 between {MIN_PAGE_SIZE} and {MAX_PAGE_SIZE} bytes"
        )));
    }
    Ok(())
}

/// Stamps the page header of `buf` (page number, version, size, magic) and its checksum.
pub fn seal_page(page: u64, version: u64, buf: &mut [u8]) {
    buf[OFF_MAGIC..OFF_MAGIC + 4].copy_from_slice(&PAGE_MAGIC);
    buf[OFF_PAGE_NO..OFF_PAGE_NO + 8].copy_from_slice(&page.to_le_bytes());
    buf[OFF_VERSION..OFF_VERSION + 8].copy_from_slice(&version.to_le_bytes());
    let size = buf.len() as u32;
    buf[OFF_PAGE_SIZE..OFF_PAGE_SIZE + 4].copy_from_slice(&size.to_le_bytes());
    buf[28..32].fill(0);
    let crc = crc32c::crc32c(&buf[4..]);
    buf[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
}

/// Verifies the page header of `buf`, read from the place of page `page`; returns the page's
/// version. The error message says what is wrong (the caller names the page).
pub fn verify_page(page: u64, buf: &[u8]) -> Result<u64, String> {
    if buf[OFF_MAGIC..OFF_MAGIC + 4] != PAGE_MAGIC {
        return Err(if buf.iter().all(|&b| b == 0) {
            "the page is all zeros: it was never written (or was lost)".to_string()
        } else {
            "no page magic: not a flashbuf page (overwritten or torn)".to_string()
        });
    }
    let stored = get_u32(buf, OFF_CRC);
    let computed = crc32c::crc32c(&buf[4..]);
    if stored != computed {
        return Err(format!(
            "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): torn or corrupted page"
        ));
    }
    let found = get_u64(buf, OFF_PAGE_NO);
    if found != page {
        return Err(format!("holds page {found}: a misdirected write put another page here"));
    }
    let size = get_u32(buf, OFF_PAGE_SIZE) as usize;
    if size != buf.len() {
        return Err(format!("written with {size}-byte pages, read with {}-byte pages", buf.len()));
    }
    Ok(get_u64(buf, OFF_VERSION))
}

/// The version recorded in a page header (no checks).
pub fn page_version(buf: &[u8]) -> u64 {
    get_u64(buf, OFF_VERSION)
}

/// Pages of a [`PageStore`] with checksummed headers, a file header, and (optionally) a
/// write-ahead log at the end of the store.
pub struct PageFile<S: PageStore> {
    store: S,
    page_size: usize,
    header_version: u64,
    flags: u32,
    log: Option<LogGeometry>,
    resume: Option<LogResume>,
    recovery: Option<RecoveryReport>,
    scratch: Box<[u8]>,
}

impl<S: PageStore> PageFile<S> {
    /// Formats `store` as an empty database without a log: writes the file header (page count
    /// 1). Whatever the store held is ignored.
    pub fn create(store: S) -> Result<(Self, FileHeader), PageFileError> {
        let page_size = store.page_size();
        check_page_size(page_size)?;
        if store.pages() < 2 {
            return Err(PageFileError::Config(format!(
                "{}: a database needs at least 2 pages (the store has {})",
                store.label(),
                store.pages()
            )));
        }
        let mut file = PageFile {
            store,
            page_size,
            header_version: 0,
            flags: 0,
            log: None,
            resume: None,
            recovery: None,
            scratch: vec![0; page_size].into(),
        };
        let header = FileHeader::empty(page_size as u32);
        file.write_header(&header)?;
        Ok((file, header))
    }

    /// Formats `store` as an empty database with a write-ahead log in its last `log_pages`
    /// pages (two anchors and the ring; at least [`MIN_LOG_PAGES`]): writes the file header and
    /// the first anchor, and syncs. The database can hold `store.pages() − log_pages` pages.
    pub fn create_with_log(store: S, log_pages: u64) -> Result<(Self, FileHeader), PageFileError> {
        let page_size = store.page_size();
        check_page_size(page_size)?;
        if log_pages < MIN_LOG_PAGES {
            return Err(PageFileError::Config(format!(
                "a log needs at least {MIN_LOG_PAGES} pages (two anchors and a ring of 8), got {log_pages}"
            )));
        }
        let data = store.pages().saturating_sub(log_pages);
        if data < 2 {
            return Err(PageFileError::Config(format!(
                "{}: a database with a {log_pages}-page log needs at least {} pages (the store has {})",
                store.label(),
                log_pages.saturating_add(2),
                store.pages()
            )));
        }
        let geom = LogGeometry { first_page: data, pages: log_pages, page_size };
        let mut file = PageFile {
            store,
            page_size,
            header_version: 0,
            flags: FLAG_LOGGED,
            log: Some(geom),
            resume: None,
            recovery: None,
            scratch: vec![0; page_size].into(),
        };
        let header = FileHeader::empty(page_size as u32);
        file.write_header(&header)?;
        // The stream starts at one page in, so that no LSN is 0 ("no change" in the buffer).
        let start: Lsn = page_size as u64;
        let anchor = Anchor {
            seq: 1,
            redo_lsn: start,
            end_lsn: start,
            epoch: 1,
            meta: LogMeta { page_count: 1, app: [0; APP_BYTES] },
        };
        // The anchor of sequence `s` lives in slot `s mod 2` (this one in slot 1); clear slot 0
        // so that nothing the store held before passes for an anchor.
        file.scratch.fill(0);
        file.store.write_page(geom.anchor_page(0), &file.scratch)?;
        wal::write_anchor(&mut file.store, &geom, &anchor)?;
        file.resume = Some(LogResume { anchor });
        Ok((file, header))
    }

    /// Opens the database held by `store` (created with the store's page size). A database
    /// with a log is recovered first ([`recovery`](Self::recovery) says what was done); one
    /// without a log is refused if it was not closed cleanly.
    pub fn open(mut store: S) -> Result<(Self, FileHeader), PageFileError> {
        let page_size = store.page_size();
        let label = store.label();
        check_page_size(page_size)?;
        if store.pages() == 0 {
            return Err(PageFileError::NotADatabase { store: label, reason: "it is empty".into() });
        }
        let mut buf = vec![0u8; page_size];
        store.read_page(0, &mut buf)?;
        check_file_magic(&label, &buf[..OFF_HDR_PAGE_SIZE + 4], page_size)?;
        let version = verify_page(0, &buf).map_err(|message| PageFileError::Corrupt { page: 0, message })?;
        let flags = get_u32(&buf, OFF_FLAGS);
        let mut app = [0u8; APP_BYTES];
        app.copy_from_slice(&buf[OFF_APP..OFF_APP + APP_BYTES]);
        let mut file = PageFile {
            store,
            page_size,
            header_version: version,
            flags,
            log: None,
            resume: None,
            recovery: None,
            scratch: vec![0; page_size].into(),
        };
        let header = if flags & FLAG_LOGGED != 0 {
            let first_page = get_u64(&buf, OFF_LOG_FIRST);
            let pages = get_u64(&buf, OFF_LOG_PAGES);
            if pages < MIN_LOG_PAGES || first_page < 2 || first_page.checked_add(pages) != Some(file.store.pages()) {
                return Err(PageFileError::Corrupt {
                    page: 0,
                    message: format!(
                        "the header places a {pages}-page log at page {first_page}, which does not end the \
                         store of {} pages",
                        file.store.pages()
                    ),
                });
            }
            let geom = LogGeometry { first_page, pages, page_size };
            let (resume, report) = wal::recover(&mut file.store, &geom)?;
            let meta = resume.anchor.meta;
            if meta.page_count == 0 || meta.page_count > first_page {
                return Err(PageFileError::Corrupt {
                    page: geom.first_page,
                    message: format!(
                        "the log counts {} pages but the database has room for {first_page}",
                        meta.page_count
                    ),
                });
            }
            file.log = Some(geom);
            file.resume = Some(resume);
            file.recovery = Some(report);
            FileHeader { page_size: page_size as u32, page_count: meta.page_count, app: meta.app }
        } else {
            if flags & FLAG_OPEN != 0 {
                return Err(PageFileError::Unclean { store: label });
            }
            let page_count = get_u64(&buf, OFF_PAGE_COUNT);
            if page_count == 0 || page_count > file.store.pages() {
                return Err(PageFileError::Corrupt {
                    page: 0,
                    message: format!("the header counts {page_count} pages but the store has {}", file.store.pages()),
                });
            }
            FileHeader { page_size: page_size as u32, page_count, app }
        };
        file.scratch.copy_from_slice(&buf);
        Ok((file, header))
    }

    /// Bytes per page.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// The most pages the database can grow to: the store's size, less the log's pages.
    pub fn capacity_pages(&self) -> u64 {
        self.log.map_or(self.store.pages(), |g| g.first_page)
    }

    /// Where the write-ahead log lives (`None`: the database has no log).
    pub fn log_geometry(&self) -> Option<LogGeometry> {
        self.log
    }

    /// What recovery did when the database was opened (`None` for a new database or one
    /// without a log).
    pub fn recovery(&self) -> Option<&RecoveryReport> {
        self.recovery.as_ref()
    }

    /// Gives back the anchor the log continues from (a buffer manager closing).
    pub(crate) fn put_resume(&mut self, anchor: Anchor) {
        self.resume = Some(LogResume { anchor });
    }

    /// The anchor the log continues from (taken once by the buffer manager).
    pub(crate) fn take_resume(&mut self) -> Option<LogResume> {
        self.resume.take()
    }

    /// Reads page `page` into `buf` (one page long) and verifies it; returns its version and
    /// the store's time for the read.
    pub fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<(u64, Nanos), PageFileError> {
        let t = self.store.read_page(page, buf)?;
        let version = verify_page(page, buf).map_err(|message| PageFileError::Corrupt { page, message })?;
        Ok((version, t))
    }

    /// Seals `buf` as page `page` at `version` (header and checksum) and writes it; returns the
    /// store's time for the write.
    pub fn write_page(&mut self, page: u64, buf: &mut [u8], version: u64) -> Result<Nanos, PageFileError> {
        debug_assert!(page != 0, "the file header is written by write_header");
        debug_assert!(page < self.capacity_pages(), "page {page} is in the log");
        seal_page(page, version, buf);
        Ok(self.store.write_page(page, buf)?)
    }

    /// Reads page `page` and writes the same bytes back, unchecked (block padding: the page is
    /// not buffered, its contents do not change). Returns the read and write times.
    pub fn copy_page_raw(&mut self, page: u64) -> Result<(Nanos, Nanos), PageFileError> {
        let r = self.store.read_page(page, &mut self.scratch)?;
        let w = self.store.write_page(page, &self.scratch)?;
        Ok((r, w))
    }

    /// Writes the log page that holds stream bytes `start..start + page_size` (`start` a page
    /// boundary) from `buf`.
    pub(crate) fn write_log_page(&mut self, start: Lsn, buf: &[u8]) -> Result<Nanos, PageFileError> {
        let geom = self.log.expect("a database with a log");
        Ok(self.store.write_page(geom.store_page_of(start), buf)?)
    }

    /// Writes a checkpoint anchor and syncs.
    pub(crate) fn write_anchor(&mut self, anchor: &Anchor) -> Result<Nanos, PageFileError> {
        let geom = self.log.expect("a database with a log");
        wal::write_anchor(&mut self.store, &geom, anchor)
    }

    /// Writes the file header (page 0) of a database without a log (a database with a log
    /// keeps this state in its anchors: nothing is written).
    pub fn write_header(&mut self, header: &FileHeader) -> Result<Nanos, PageFileError> {
        if self.log.is_some() && self.header_version > 0 {
            return Ok(0);
        }
        let buf = &mut self.scratch;
        buf.fill(0);
        buf[OFF_FILE_MAGIC..OFF_FILE_MAGIC + 8].copy_from_slice(&FILE_MAGIC);
        buf[OFF_FORMAT..OFF_FORMAT + 4].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        buf[OFF_HDR_PAGE_SIZE..OFF_HDR_PAGE_SIZE + 4].copy_from_slice(&header.page_size.to_le_bytes());
        buf[OFF_PAGE_COUNT..OFF_PAGE_COUNT + 8].copy_from_slice(&header.page_count.to_le_bytes());
        buf[OFF_APP..OFF_APP + APP_BYTES].copy_from_slice(&header.app);
        buf[OFF_FLAGS..OFF_FLAGS + 4].copy_from_slice(&self.flags.to_le_bytes());
        if let Some(g) = self.log {
            buf[OFF_LOG_FIRST..OFF_LOG_FIRST + 8].copy_from_slice(&g.first_page.to_le_bytes());
            buf[OFF_LOG_PAGES..OFF_LOG_PAGES + 8].copy_from_slice(&g.pages.to_le_bytes());
        }
        self.header_version += 1;
        seal_page(0, self.header_version, buf);
        Ok(self.store.write_page(0, buf)?)
    }

    /// Without a log: sets or clears [`FLAG_OPEN`] in the header (written with `header`) and
    /// syncs. Set before a session changes anything, cleared by a clean close.
    pub(crate) fn set_open(&mut self, open: bool, header: &FileHeader) -> Result<Nanos, PageFileError> {
        if self.log.is_some() {
            return Ok(0);
        }
        if open {
            self.flags |= FLAG_OPEN;
        } else {
            self.flags &= !FLAG_OPEN;
        }
        let t = self.write_header(header)?;
        Ok(t + self.sync()?)
    }

    /// Makes every write so far durable.
    pub fn sync(&mut self) -> Result<Nanos, PageFileError> {
        Ok(self.store.sync()?)
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The store, mutably (tests corrupt pages through it; the workload resets counters).
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Gives the store back.
    pub fn into_store(self) -> S {
        self.store
    }
}

/// Checks the file magic, the page size and the format version in the first bytes of page 0.
fn check_file_magic(label: &str, head: &[u8], page_size: usize) -> Result<(), PageFileError> {
    if head.len() < OFF_HDR_PAGE_SIZE + 4 || head[OFF_FILE_MAGIC..OFF_FILE_MAGIC + 8] != FILE_MAGIC {
        let reason = if head.iter().all(|&b| b == 0) {
            "its first page is all zeros".to_string()
        } else {
            format!("no FLASHBUF magic at byte {OFF_FILE_MAGIC}")
        };
        return Err(PageFileError::NotADatabase { store: label.to_string(), reason });
    }
    let file_page_size = get_u32(head, OFF_HDR_PAGE_SIZE) as u64;
    if file_page_size != page_size as u64 {
        return Err(PageFileError::WrongPageSize {
            store: label.to_string(),
            file_page_size,
            opened_page_size: page_size as u64,
        });
    }
    let found = get_u32(head, OFF_FORMAT);
    if found != FORMAT_VERSION {
        return Err(PageFileError::UnsupportedVersion { store: label.to_string(), found, supported: FORMAT_VERSION });
    }
    Ok(())
}

/// Reads the first bytes of the file at `path` and checks that it is a flashbuf database
/// created with `page_size`-byte pages, before the file is opened as a store (whose opening
/// could otherwise fail with a less helpful message, e.g. a length that is not a whole number
/// of pages of the wrong size).
pub fn probe_file(path: &Path, page_size: usize) -> Result<(), PageFileError> {
    let label = path.display().to_string();
    let io = |source| PageFileError::Store(StoreError::Io { path: label.clone(), source });
    let mut f = File::open(path).map_err(io)?;
    let mut head = [0u8; OFF_HDR_PAGE_SIZE + 4];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]).map_err(io)? {
            0 => break,
            n => got += n,
        }
    }
    if got < head.len() {
        return Err(PageFileError::NotADatabase { store: label, reason: format!("it is only {got} bytes long") });
    }
    check_file_magic(&label, &head, page_size)
}

/// Opens the database in the file at `path` (created with `page_size`-byte pages): checks the
/// file's magic and page size first ([`probe_file`]), then opens it as a [`FileStore`] (direct
/// I/O as `options` ask) and as a page file.
pub fn open_file(
    path: &Path,
    page_size: usize,
    options: FileOptions,
) -> Result<(PageFile<FileStore>, FileHeader), PageFileError> {
    probe_file(path, page_size)?;
    PageFile::open(FileStore::open(path, page_size, options)?)
}

/// Creates a database file at `path` (refusing to replace an existing file unless `overwrite`)
/// of `pages` pages of `page_size` bytes, and formats it: without a log when `log_pages` is 0,
/// otherwise with a log in its last `log_pages` pages.
pub fn create_file(
    path: &Path,
    page_size: usize,
    pages: u64,
    overwrite: bool,
    options: FileOptions,
) -> Result<(PageFile<FileStore>, FileHeader), PageFileError> {
    create_file_with_log(path, page_size, pages, 0, overwrite, options)
}

/// [`create_file`] with a write-ahead log of `log_pages` pages (0: none) after the `pages`
/// pages of the database.
pub fn create_file_with_log(
    path: &Path,
    page_size: usize,
    pages: u64,
    log_pages: u64,
    overwrite: bool,
    options: FileOptions,
) -> Result<(PageFile<FileStore>, FileHeader), PageFileError> {
    check_page_size(page_size)?;
    let total = pages
        .checked_add(log_pages)
        .filter(|t| t.checked_mul(page_size as u64).is_some())
        .ok_or_else(|| PageFileError::Config(format!("{pages} + {log_pages} pages of {page_size} bytes overflow")))?;
    let store = FileStore::create(path, page_size, total, overwrite, options)?;
    if log_pages == 0 { PageFile::create(store) } else { PageFile::create_with_log(store, log_pages) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_flash::MemStore;

    #[test]
    fn seal_then_verify_round_trips_and_detects_each_fault() {
        let mut buf = vec![0u8; 512];
        assert!(verify_page(3, &buf).unwrap_err().contains("all zeros"));
        buf[100] = 7;
        seal_page(3, 9, &mut buf);
        assert_eq!(verify_page(3, &buf), Ok(9));
        assert!(verify_page(4, &buf).unwrap_err().contains("holds page 3"));
        let mut torn = buf.clone();
        torn[300] ^= 1;
        assert!(verify_page(3, &torn).unwrap_err().contains("checksum mismatch"));
        let mut bad_magic = buf.clone();
        bad_magic[5] = b'X';
        assert!(verify_page(3, &bad_magic).unwrap_err().contains("no page magic"));
        // The same page read with another size: the checksum covers the whole page, so it fails
        // there first; a page of the right bytes but a different recorded size is named as such.
        let mut other = vec![0u8; 1024];
        other[..512].copy_from_slice(&buf);
        assert!(verify_page(3, &other).is_err());
    }

    #[test]
    fn create_then_open_keeps_the_header() {
        let (mut f, mut h) = PageFile::create(MemStore::new(512, 16)).unwrap();
        h.page_count = 5;
        h.app[0] = 42;
        f.write_header(&h).unwrap();
        let (f2, h2) = PageFile::open(f.into_store()).unwrap();
        assert_eq!(h2, h);
        assert_eq!(f2.header_version, 2);
    }

    #[test]
    fn opening_checks_magic_page_size_and_version() {
        let e = PageFile::open(MemStore::new(512, 4)).err().unwrap();
        assert!(matches!(e, PageFileError::NotADatabase { .. }), "{e}");
        assert!(e.to_string().contains("all zeros"), "{e}");

        let mut store = MemStore::new(512, 4);
        store.write_page(0, &[0x55; 512]).unwrap();
        let e = PageFile::open(store).err().unwrap().to_string();
        assert!(e.contains("not a flashbuf database") && e.contains("no FLASHBUF magic"), "{e}");

        // A database of 1024-byte pages opened as 512-byte pages.
        let (f, _) = PageFile::create(MemStore::new(1024, 4)).unwrap();
        let mut big = vec![0u8; 1024];
        let mut s = f.into_store();
        s.read_page(0, &mut big).unwrap();
        let mut small = MemStore::new(512, 8);
        small.write_page(0, &big[..512]).unwrap();
        let e = PageFile::open(small).err().unwrap();
        assert!(matches!(e, PageFileError::WrongPageSize { file_page_size: 1024, opened_page_size: 512, .. }), "{e}");

        let mut s = MemStore::new(512, 4);
        let (f, _) = PageFile::create(MemStore::new(512, 4)).unwrap();
        let mut buf = vec![0u8; 512];
        f.into_store().read_page(0, &mut buf).unwrap();
        buf[OFF_FORMAT] = 9;
        s.write_page(0, &buf).unwrap();
        let e = PageFile::open(s).err().unwrap();
        assert!(matches!(e, PageFileError::UnsupportedVersion { found: 9, .. }), "{e}");
    }

    #[test]
    fn bad_page_sizes_are_refused() {
        assert!(PageFile::create(MemStore::new(100, 4)).is_err());
        assert!(PageFile::create(MemStore::new(4100, 4)).is_err());
        assert!(PageFile::create(MemStore::new(4096, 1)).is_err());
    }
}
