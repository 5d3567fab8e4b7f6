//! The buffer manager: frames over a [`PageFile`], a page table, pins, latches, dirty
//! tracking, write-back, statistics, and any flashbuf replacement policy.
//!
//! The policy is the simulator's own: anything implementing [`Replacer`] (wrapped in [`Mono`])
//! or an [`AnyPolicy`] built from a [`PolicyConfig`](flashbuf_policy::PolicyConfig). The call
//! sequence is the simulator's (`flashbuf_sim::Buffer`): a hit calls `on_hit`; a miss with no
//! free frame calls `victims` (with a [`Pins`] view: a pinned frame is never a victim), performs
//! the block padding and write-backs it asks for, then fetches the page and calls `on_insert`;
//! a bypass serves the page from the device without buffering it. Run single-threaded, the
//! engine makes exactly the simulator's decisions on the reference string it records
//! ([`BufferManager::start_recording`]); a test replays such a trace through the simulator and
//! compares every counter.
//!
//! # Metrics (the simulator's definitions)
//!
//! * `requests` = fixes (each [`read`](BufferManager::read), [`write`](BufferManager::write) or
//!   [`new_page`](BufferManager::new_page)); `hit_ratio` = hits / requests.
//! * `page_reads` = demand fetches + padding reads. A new page is a miss without a fetch
//!   (`allocations`).
//! * `page_writes` ("page flushes") = dirty victims written back + padding writes + pages written
//!   through on a bypass + dirty pages written by [`flush_all`](BufferManager::flush_all)
//!   (the final flush of a run, a checkpoint, or `close`).
//! * `write_time_ns` = the store's time for those writes (simulated device time on a
//!   [`SimStore`](flashbuf_flash::SimStore), measured wall time on a
//!   [`FileStore`](flashbuf_flash::FileStore)); `avg_write_ns` = `write_time_ns / page_writes`,
//!   the CFDC paper's "cost of a page flush" (Fig. 6).
//!
//! # Latching protocol
//!
//! * **The pool lock** (one `Mutex`) protects the page table, the policy, the per-frame
//!   metadata (page, dirty bit, in-use), the free list, the per-page version and busy arrays,
//!   the counters and the trace recorder. Every fix takes it once; it is never held across I/O
//!   and never held while *blocking* on anything else.
//! * **Pins** are per-frame atomic counters. A fix increments the pin count under the pool lock;
//!   a guard's drop decrements it without the lock. The policy sees them through [`Pins`]: a
//!   frame with a non-zero count is never chosen as a victim.
//! * **Frame latches** (a `RwLock` per frame) protect the frame's bytes: a read guard holds it
//!   shared, a write guard exclusive. A thread takes a frame's latch only while it holds a pin
//!   on that frame and releases the latch before the pin, so *an unpinned frame's latch is
//!   free*. The pool lock therefore only ever `try_`-locks latches of unpinned frames (to copy a
//!   victim's bytes, or to take the write latch of a frame it is about to load into), which
//!   cannot block.
//! * **The log lock** (with a log) protects the log's tail in memory, its LSNs, reservations
//!   and metadata. A commit takes it while holding its pages' latches; nothing is acquired
//!   while it is held (the thread writing the log copies the tail and releases it first).
//! * **The file lock** (a `Mutex` around the [`PageFile`]) serialises store operations (the
//!   [`PageStore`] contract takes `&mut self`). It is innermost: nothing is acquired while it
//!   is held.
//! * **Miss.** Under the pool lock: choose victims; copy the bytes of each victim that must be
//!   written into a write-back buffer, mark that page *busy*, remove it from the table and free
//!   its frame; take a free frame, enter the new page in the table (pinned, the frame's write
//!   latch taken) and tell the policy. Then, outside the pool lock: the padding and write-backs,
//!   then the fetch into the frame, under the file lock. Then under the pool lock again: clear
//!   the busy marks (waking waiters), record times. Then the latch is released (or, for a
//!   write fix, handed to the caller's guard).
//! * **A miss on a page another thread is loading** finds the page in the table: it is a hit,
//!   the thread pins the frame and blocks on the frame's latch, which the loader holds until the
//!   page is in memory. If the load failed, the frame is marked invalid, every waiter gets
//!   [`BufferError::LoadFailed`], and the last unpin returns the frame to the free list.
//! * **A miss on a busy page** (being written back after its eviction, or held by a bypass
//!   guard) waits on a condition variable until the write is done, then retries: it never reads
//!   a stale version from the store.
//! * **Lock order**: frame latch → pool lock → file lock (latches are only `try_`-locked under
//!   the pool lock). Condition waits release the pool lock. A thread that holds page latches
//!   while fixing another page must take them in an order consistent with every other thread
//!   (the B+-tree holds at most one contended latch at a time); a busy page counts as an
//!   exclusive latch for this rule. Under these rules the buffer manager cannot deadlock.
//! * **No free frame** because every candidate is pinned: the fix waits (polling the pool every
//!   millisecond) for up to [`PIN_WAIT_MS`] milliseconds, then fails with
//!   [`EvictError::AllPinned`]; a buffer too small for its users is an error, not a hang.
//!
//! # Durability and faults
//!
//! Changes are made through **operations** ([`BufferManager::begin`], [`Op`]): an operation
//! holds the pages it changes (latched, pinned) until it commits. In a database with a
//! write-ahead log ([`crate::wal`], `docs/engine.md`), the commit logs the operation's changes
//! as one group and [`wait_durable`](BufferManager::wait_durable) acknowledges it once the
//! group is durable (group commit); every write-back waits until the log covers the page (the
//! write-ahead rule); checkpoints make log room. Without a log, [`write`](BufferManager::write)
//! and [`new_page`](BufferManager::new_page) hand out single write guards as well.
//!
//! A page is marked dirty only by a thread that holds its write latch, and a flush clears the
//! bit and copies the bytes under the read latch, so no change is ever marked clean before it
//! is written.
//!
//! [`flush_all`](BufferManager::flush_all) writes every dirty page in ascending page order,
//! then the file header (with a log: an anchor), then syncs; [`close`](BufferManager::close)
//! does so and returns the page file, so a clean shutdown loses nothing. Without a log the
//! header's open flag is set (and synced) when the manager starts and cleared by `close`, so a
//! crashed database refuses to open. Dropping the manager without `close` flushes on a
//! best-effort basis (errors cannot be reported from `drop`). A failed write is fatal: the
//! manager stops and every later call returns [`BufferError::Failed`]. A page that fails its
//! checks on fetch is an error naming the page, never data. The manager remembers the version
//! it last wrote or read for every page and reports a page that comes back with another version
//! (a lost or misdirected write).

mod log;
mod op;

pub use op::{Op, Slot};

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use flashbuf_flash::{DeviceStats, PageStore};
use flashbuf_policy::{Access, AccessKind, AnyPolicy, EvictError, Evictions, FrameId, NIL, Pins, Replacer};
use flashbuf_trace::{Request, TraceError, TraceWriter};
use serde::Serialize;

use crate::page::{APP_BYTES, FileHeader, PAGE_HEADER_BYTES, PageFile, PageFileError};
use crate::wal::{self, Lsn};

/// How long a fix waits for a frame to become unpinned before failing, in milliseconds.
pub const PIN_WAIT_MS: u64 = 10_000;

/// Requests buffered before they are handed to the trace writer.
const TRACE_BATCH: usize = 4096;

/// The policy interface the buffer manager drives: [`Replacer`]'s methods, object-safe and
/// implemented once for [`AnyPolicy`] (run-time choice) and once for any [`Replacer`] through
/// [`Mono`] (compile-time choice, e.g. a policy of one's own).
pub trait BufferPolicy: Send {
    /// See [`Replacer::on_hit`].
    fn on_hit(&mut self, frame: FrameId, access: &Access);
    /// See [`Replacer::on_insert`].
    fn on_insert(&mut self, frame: FrameId, access: &Access);
    /// See [`Replacer::victims`].
    fn victims(&mut self, incoming: &Access, pins: &PinCounts<'_>, out: &mut Evictions) -> Result<(), EvictError>;
    /// See [`Replacer::remove`].
    fn remove(&mut self, frame: FrameId);
    /// See [`Replacer::len`].
    fn len(&self) -> usize;
    /// `true` when no frame is tracked.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// See [`Replacer::is_dirty`].
    fn is_dirty(&self, frame: FrameId) -> Option<bool>;
    /// See [`Replacer::check_invariants`].
    fn check_invariants(&self) -> Result<(), String>;
    /// Whether the policy needs to know the future (such policies cannot run in an engine).
    fn needs_future(&self) -> bool;
}

impl BufferPolicy for AnyPolicy {
    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        AnyPolicy::on_hit(self, frame, access)
    }
    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        AnyPolicy::on_insert(self, frame, access)
    }
    #[inline]
    fn victims(&mut self, incoming: &Access, pins: &PinCounts<'_>, out: &mut Evictions) -> Result<(), EvictError> {
        AnyPolicy::victims(self, incoming, pins, out)
    }
    fn remove(&mut self, frame: FrameId) {
        AnyPolicy::remove(self, frame)
    }
    fn len(&self) -> usize {
        AnyPolicy::len(self)
    }
    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        AnyPolicy::is_dirty(self, frame)
    }
    fn check_invariants(&self) -> Result<(), String> {
        AnyPolicy::check_invariants(self)
    }
    fn needs_future(&self) -> bool {
        AnyPolicy::needs_future(self)
    }
}

/// A [`Replacer`] used directly (monomorphised) by the buffer manager.
pub struct Mono<R>(pub R);

impl<R: Replacer + Send> BufferPolicy for Mono<R> {
    #[inline]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.0.on_hit(frame, access)
    }
    #[inline]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.0.on_insert(frame, access)
    }
    #[inline]
    fn victims(&mut self, incoming: &Access, pins: &PinCounts<'_>, out: &mut Evictions) -> Result<(), EvictError> {
        self.0.victims(incoming, pins, out)
    }
    fn remove(&mut self, frame: FrameId) {
        self.0.remove(frame)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        self.0.is_dirty(frame)
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.0.check_invariants()
    }
    fn needs_future(&self) -> bool {
        R::NEEDS_FUTURE
    }
}

/// The frames' pin counts and the page table, as the policy sees them.
pub struct PinCounts<'a>(&'a [Frame], &'a [FrameId]);

impl Pins for PinCounts<'_> {
    #[inline]
    fn is_pinned(&self, frame: FrameId) -> bool {
        self.0[frame as usize].pins.load(Ordering::Acquire) > 0
    }

    #[inline]
    fn frame_of(&self, page: u64) -> Option<FrameId> {
        self.1.get(usize::try_from(page).ok()?).copied().filter(|&f| f != NIL)
    }
}

/// What the buffer manager can report as going wrong.
#[derive(Debug, thiserror::Error)]
pub enum BufferError {
    /// The page file failed (I/O, device, corrupt page).
    #[error(transparent)]
    PageFile(#[from] PageFileError),
    /// No frame could be freed for the page.
    #[error("page {page}: no frame can be freed: {source}")]
    Evict {
        /// The page being fixed.
        page: u64,
        /// The policy's answer.
        #[source]
        source: EvictError,
    },
    /// The page is not allocated.
    #[error("page {page} is not allocated (the database has {page_count} pages)")]
    NotAllocated {
        /// The page asked for.
        page: u64,
        /// Allocated pages.
        page_count: u64,
    },
    /// Page 0 is the file header, managed by the page file.
    #[error("page 0 is the file header and cannot be fixed")]
    HeaderPage,
    /// No page can be allocated: the store is full.
    #[error("the database is full: the store has {capacity_pages} pages")]
    Full {
        /// The store's size in pages.
        capacity_pages: u64,
    },
    /// Another thread's read of this page failed while this thread waited for it.
    #[error("page {page}: {reason}")]
    LoadFailed {
        /// The page.
        page: u64,
        /// The failure of the other thread's read.
        reason: String,
    },
    /// An earlier write-back failed; the buffer manager has stopped.
    #[error("the buffer manager stopped after a failed write: {0}")]
    Failed(String),
    /// Invalid configuration.
    #[error("invalid buffer configuration: {0}")]
    Config(String),
    /// The page-reference trace could not be written.
    #[error("page-reference trace: {0}")]
    Trace(#[from] TraceError),
    /// The database has a write-ahead log: pages change only inside an operation.
    #[error(
        "the database has a write-ahead log: pages change only inside an operation \
         (BufferManager::begin), whose commit logs the change"
    )]
    NeedsOperation,
    /// An operation asked for more log room or pages than the database can give one operation.
    #[error("{0}")]
    OperationTooLarge(String),
}

/// Counters of a buffer manager (see the module documentation for the definitions).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BufferStats {
    /// Fixes served.
    pub requests: u64,
    /// Of which read fixes.
    pub read_requests: u64,
    /// Of which write fixes (new pages included).
    pub write_requests: u64,
    /// Fixes that found their page buffered.
    pub hits: u64,
    /// Fixes that did not.
    pub misses: u64,
    /// Misses that read the page from the store.
    pub fetches: u64,
    /// Misses that created a new page (no read).
    pub allocations: u64,
    /// Pages read only to pad a block.
    pub padding_reads: u64,
    /// Dirty victims written back.
    pub evict_writes: u64,
    /// Pages written as part of a padded block.
    pub padding_writes: u64,
    /// Pages written through because the policy bypassed the buffer.
    pub bypass_writes: u64,
    /// Dirty pages written by `flush_all` (final flush, explicit checkpoints, close).
    pub flush_writes: u64,
    /// Dirty pages written by checkpoints the log started because it was running out of room
    /// (a database with a log only; not chosen by the policy).
    pub checkpoint_writes: u64,
    /// Pages evicted (clean or dirty).
    pub evictions: u64,
    /// Store time of all page reads (fetches and padding), in nanoseconds.
    pub read_time_ns: u64,
    /// Store time of all page writes counted in `page_writes`, in nanoseconds.
    pub write_time_ns: u64,
}

impl BufferStats {
    /// Pages read from the store: fetches + padding reads.
    pub fn page_reads(&self) -> u64 {
        self.fetches + self.padding_reads
    }

    /// Pages written to the store ("page flushes"): victims + padding + bypass + flush +
    /// checkpoint writes. Log writes are not page writes (see [`crate::wal::LogStats`]).
    pub fn page_writes(&self) -> u64 {
        self.evict_writes + self.padding_writes + self.bypass_writes + self.flush_writes + self.checkpoint_writes
    }

    /// hits / requests (0 when nothing was requested).
    pub fn hit_ratio(&self) -> f64 {
        if self.requests == 0 { 0.0 } else { self.hits as f64 / self.requests as f64 }
    }

    /// Average store time per page written, in nanoseconds (0 when nothing was written).
    pub fn avg_write_ns(&self) -> f64 {
        let n = self.page_writes();
        if n == 0 { 0.0 } else { self.write_time_ns as f64 / n as f64 }
    }
}

/// One buffer frame: its bytes behind the latch, its pin count, whether a load into it
/// failed, and its dirty state.
pub struct Frame {
    data: RwLock<FrameData>,
    pins: AtomicU32,
    failed: AtomicBool,
    /// The page has changes not yet written. Set only by a thread holding the frame's write
    /// latch; cleared by a write-back, under the read latch (flush) or while the frame is
    /// unpinned (eviction) — so a change is never marked clean before its bytes are copied.
    dirty: AtomicBool,
    /// With a log: the start LSN of the oldest logged change not yet written (0: none).
    rec_lsn: AtomicU64,
    /// With a log: the end LSN of the newest logged change; the log must be durable up to it
    /// before the page is written (the write-ahead rule).
    page_lsn: AtomicU64,
}

struct FrameData {
    buf: Box<[u8]>,
    page: u64,
    valid: bool,
    error: Option<String>,
}

/// A page's bytes copied for a write-back.
struct WriteBack {
    page: u64,
    version: u64,
    buf: Box<[u8]>,
}

/// The I/O one miss must do before its fetch.
#[derive(Default)]
struct Plan {
    writes: Vec<WriteBack>,
    /// Pages `first..end` to write as one padded block.
    pad: Option<(u64, u64)>,
    /// The log must be durable up to here before the writes (the largest page LSN written).
    log_lsn: Lsn,
}

/// Store times of one batch of I/O.
#[derive(Default)]
struct IoTimes {
    read_ns: u64,
    write_ns: u64,
}

struct Recorder {
    writer: Box<dyn TraceWriter>,
    batch: Vec<Request>,
    error: Option<TraceError>,
}

/// Everything the pool lock protects.
struct Pool<P> {
    policy: P,
    /// Page → frame (NIL: not buffered); one entry per store page.
    table: Vec<FrameId>,
    /// Page being written back after eviction, or held by a bypass guard.
    busy: Vec<bool>,
    /// Version last written or read per page (0: not known yet).
    versions: Vec<u64>,
    frame_page: Vec<u64>,
    in_use: Vec<bool>,
    /// Pages whose write-back is under way, with the oldest logged change they carry (a
    /// checkpoint may not move redo past it until the write is durable).
    inflight: Vec<(u64, Lsn)>,
    free: Vec<FrameId>,
    ev: Evictions,
    spare_bufs: Vec<Box<[u8]>>,
    spare_plans: Vec<Plan>,
    header: FileHeader,
    header_dirty: bool,
    stats: BufferStats,
    failed: Option<String>,
    recorder: Option<Recorder>,
}

/// How a fix found or made its frame.
enum Fixed<'a> {
    /// Buffered (or being loaded by another thread): pinned, latch not taken.
    Hit(FrameId),
    /// Loaded by this thread: pinned, write latch held.
    Loaded(FrameId, RwLockWriteGuard<'a, FrameData>),
    /// Bypassed: the page's bytes in a private buffer, the page marked busy.
    Detached(Box<[u8]>),
}

/// A buffer of frames over a page file, managed by policy `P`.
pub struct BufferManager<S: PageStore, P: BufferPolicy = AnyPolicy> {
    frames: Box<[Frame]>,
    pool: Mutex<Pool<P>>,
    released: Condvar,
    file: Mutex<Option<PageFile<S>>>,
    flush_lock: Mutex<()>,
    page_size: usize,
    capacity_pages: u64,
    device_base: Mutex<DeviceStats>,
    /// The write-ahead log (`None`: the database has none).
    log: Option<log::Log>,
}

impl<S: PageStore, P: BufferPolicy> BufferManager<S, P> {
    /// A buffer of `frames` frames over `file` (whose header is `header`, as returned by
    /// [`PageFile::create`] or [`PageFile::open`]), managed by `policy` (built for `frames`
    /// frames).
    pub fn new(file: PageFile<S>, header: FileHeader, policy: P, frames: usize) -> Result<Self, BufferError> {
        if frames == 0 {
            return Err(BufferError::Config("the buffer needs at least one frame".into()));
        }
        if frames >= u32::MAX as usize {
            return Err(BufferError::Config(format!("{frames} frames is more than flashbuf supports")));
        }
        if policy.needs_future() {
            return Err(BufferError::Config(
                "the policy needs to know future references (an offline policy such as MIN); \
                 the engine cannot provide them"
                    .into(),
            ));
        }
        if !policy.is_empty() {
            return Err(BufferError::Config("the policy must start with no frame tracked".into()));
        }
        let page_size = file.page_size();
        let capacity_pages = file.capacity_pages();
        let pages = usize::try_from(capacity_pages)
            .map_err(|_| BufferError::Config(format!("a store of {capacity_pages} pages is too large")))?;
        let frames_vec: Vec<Frame> = (0..frames)
            .map(|_| Frame {
                data: RwLock::new(FrameData { buf: vec![0; page_size].into(), page: 0, valid: false, error: None }),
                pins: AtomicU32::new(0),
                failed: AtomicBool::new(false),
                dirty: AtomicBool::new(false),
                rec_lsn: AtomicU64::new(0),
                page_lsn: AtomicU64::new(0),
            })
            .collect();
        let mut file = file;
        let log = match (file.log_geometry(), file.take_resume()) {
            (Some(geom), Some(resume)) => Some(log::Log::new(geom, resume.anchor)),
            (None, _) => {
                // Without a log: mark the database open (durably) before anything changes, so
                // that a crash is detected at the next open instead of going unnoticed.
                file.set_open(true, &header)?;
                None
            }
            (Some(_), None) => {
                return Err(BufferError::Config("this page file's log is already in use by a buffer manager".into()));
            }
        };
        let device_base = file.store().stats();
        let pool = Pool {
            policy,
            table: vec![NIL; pages],
            busy: vec![false; pages],
            versions: vec![0; pages],
            frame_page: vec![0; frames],
            in_use: vec![false; frames],
            inflight: Vec::new(),
            free: (0..frames as FrameId).rev().collect(),
            ev: Evictions { victims: Vec::with_capacity(64), pad: None, bypass: false },
            spare_bufs: Vec::new(),
            spare_plans: Vec::new(),
            header,
            header_dirty: false,
            stats: BufferStats::default(),
            failed: None,
            recorder: None,
        };
        Ok(BufferManager {
            frames: frames_vec.into(),
            pool: Mutex::new(pool),
            released: Condvar::new(),
            file: Mutex::new(Some(file)),
            flush_lock: Mutex::new(()),
            page_size,
            capacity_pages,
            device_base: Mutex::new(device_base),
            log,
        })
    }

    /// Whether the database has a write-ahead log (changes then go through
    /// [`begin`](Self::begin)).
    pub fn has_log(&self) -> bool {
        self.log.is_some()
    }

    /// Number of frames.
    pub fn capacity(&self) -> usize {
        self.frames.len()
    }

    /// Bytes per page.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Bytes of a page available to the caller (the page size minus the page header).
    pub fn payload_size(&self) -> usize {
        self.page_size - PAGE_HEADER_BYTES
    }

    /// Allocated pages (the file header included).
    pub fn page_count(&self) -> u64 {
        self.lock_pool_any().header.page_count
    }

    /// The most pages the store can hold.
    pub fn capacity_pages(&self) -> u64 {
        self.capacity_pages
    }

    /// The application area of the file header (the B+-tree's metadata).
    pub fn app_meta(&self) -> [u8; APP_BYTES] {
        match &self.log {
            Some(log) => log.lock().meta.app,
            None => self.lock_pool_any().header.app,
        }
    }

    /// Replaces the application area of the file header without logging it: it reaches the
    /// store at the next [`flush_all`](Self::flush_all) or [`close`](Self::close) (with a log:
    /// in the next checkpoint's anchor). Operations change it durably with
    /// [`Op::commit_with_app`].
    pub fn set_app_meta(&self, app: &[u8; APP_BYTES]) {
        match &self.log {
            Some(log) => log.lock().meta.app = *app,
            None => {
                let mut pool = self.lock_pool_any();
                pool.header.app = *app;
                pool.header_dirty = true;
            }
        }
    }

    /// Fixes `page` for reading.
    pub fn read(&self, page: u64) -> Result<PageRef<'_, S, P>, BufferError> {
        match self.fix(page, AccessKind::Read, false)? {
            (page, Fixed::Hit(f)) => self.latch_read(page, f),
            (page, Fixed::Loaded(f, guard)) => {
                drop(guard);
                self.latch_read(page, f)
            }
            (page, Fixed::Detached(buf)) => Ok(PageRef { bm: self, page, inner: Some(ReadInner::Detached(buf)) }),
        }
    }

    /// Fixes `page` for writing: the page becomes dirty (also if the caller changes nothing, as
    /// in the simulator, where the access kind decides). Only for a database without a log
    /// (with one, [`BufferError::NeedsOperation`]: use [`begin`](Self::begin)).
    pub fn write(&self, page: u64) -> Result<PageMut<'_, S, P>, BufferError> {
        if self.log.is_some() {
            return Err(BufferError::NeedsOperation);
        }
        let fixed = self.fix(page, AccessKind::Write, false)?;
        let (page, inner) = self.latch_write(fixed)?;
        Ok(PageMut { bm: self, page, inner: Some(inner) })
    }

    /// Allocates a new page (the next page number), zero-filled, fixed for writing. Counted as
    /// a write request and a miss without a fetch. Only for a database without a log (with
    /// one: [`Op::new_page`]).
    pub fn new_page(&self) -> Result<PageMut<'_, S, P>, BufferError> {
        if self.log.is_some() {
            return Err(BufferError::NeedsOperation);
        }
        self.new_page_unlogged()
    }

    /// [`new_page`](Self::new_page) without logging, also in a database with a log: the page
    /// and everything written into it reach the store only with the next checkpoint
    /// ([`flush_all`](Self::flush_all)), and a crash before it loses them. For bulk loading a
    /// new database, which becomes visible only with that checkpoint.
    pub(crate) fn new_page_unlogged(&self) -> Result<PageMut<'_, S, P>, BufferError> {
        let fixed = self.fix(0, AccessKind::Write, true)?;
        let (page, inner) = self.latch_write(fixed)?;
        if let (Some(log), WriteInner::Frame(f, _)) = (&self.log, &inner) {
            // Unlogged: dirty without a log record (`rec_lsn` 0), so every checkpoint writes it.
            self.frames[*f as usize].dirty.store(true, Ordering::Release);
            let mut st = log.lock();
            st.meta.page_count = st.meta.page_count.max(page + 1);
        }
        Ok(PageMut { bm: self, page, inner: Some(inner) })
    }

    /// Takes the write latch of a fixed page. Without a log, the page is marked dirty now,
    /// under the latch (with a log, an operation's commit marks the pages it changed).
    fn latch_write<'a>(&'a self, fixed: (u64, Fixed<'a>)) -> Result<(u64, WriteInner<'a>), BufferError> {
        let (page, inner) = match fixed {
            (page, Fixed::Hit(f)) => {
                let guard = self.frames[f as usize].data.write().unwrap_or_else(|e| e.into_inner());
                if !guard.valid || guard.page != page {
                    let reason = guard.error.clone().unwrap_or_else(|| "load failed".into());
                    drop(guard);
                    self.unpin(f);
                    return Err(BufferError::LoadFailed { page, reason });
                }
                (page, WriteInner::Frame(f, guard))
            }
            (page, Fixed::Loaded(f, guard)) => (page, WriteInner::Frame(f, guard)),
            (page, Fixed::Detached(buf)) => (page, WriteInner::Detached(buf)),
        };
        if self.log.is_none()
            && let WriteInner::Frame(f, _) = &inner
        {
            self.frames[*f as usize].dirty.store(true, Ordering::Release);
        }
        Ok((page, inner))
    }

    fn latch_read(&self, page: u64, f: FrameId) -> Result<PageRef<'_, S, P>, BufferError> {
        let guard = self.frames[f as usize].data.read().unwrap_or_else(|e| e.into_inner());
        if !guard.valid || guard.page != page {
            let reason = guard.error.clone().unwrap_or_else(|| "load failed".into());
            drop(guard);
            self.unpin(f);
            return Err(BufferError::LoadFailed { page, reason });
        }
        Ok(PageRef { bm: self, page, inner: Some(ReadInner::Frame(f, guard)) })
    }

    /// The pool, or the reason the manager stopped.
    fn lock_pool(&self) -> Result<MutexGuard<'_, Pool<P>>, BufferError> {
        let pool = self.lock_pool_any();
        if let Some(reason) = &pool.failed {
            return Err(BufferError::Failed(reason.clone()));
        }
        Ok(pool)
    }

    fn lock_pool_any(&self) -> MutexGuard<'_, Pool<P>> {
        // A panic while holding the pool lock is a bug; its state cannot be trusted after it.
        self.pool.lock().expect("the buffer pool lock was poisoned by a panic")
    }

    fn lock_file(&self) -> MutexGuard<'_, Option<PageFile<S>>> {
        self.file.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The common fix path; returns the page number (allocated for `alloc`) and the frame.
    fn fix(&self, page: u64, kind: AccessKind, alloc: bool) -> Result<(u64, Fixed<'_>), BufferError> {
        let mut pool = self.lock_pool()?;
        let mut waited: Option<Instant> = None;
        let mut plan: Option<Plan> = None;
        let mut bypass = false;
        let page = loop {
            let page = if alloc {
                // The next page number; committed below, once a frame is secured under this
                // same hold of the pool lock.
                let p = pool.header.page_count;
                if p >= self.capacity_pages {
                    return Err(BufferError::Full { capacity_pages: self.capacity_pages });
                }
                p
            } else {
                if page == 0 {
                    return Err(BufferError::HeaderPage);
                }
                if page >= pool.header.page_count {
                    return Err(BufferError::NotAllocated { page, page_count: pool.header.page_count });
                }
                let f = pool.table[page as usize];
                if f != NIL {
                    // A hit (possibly on a page another thread is still loading: the caller
                    // then blocks on the frame's latch until the load is done).
                    self.frames[f as usize].pins.fetch_add(1, Ordering::AcqRel);
                    let time = pool.count_request(page, kind);
                    pool.stats.hits += 1;
                    pool.policy.on_hit(f, &Access::new(page, kind, time));
                    return Ok((page, Fixed::Hit(f)));
                }
                if pool.busy[page as usize] {
                    // Being written back (or bypassed): wait, then look again.
                    pool = self.released.wait(pool).expect("the buffer pool lock was poisoned by a panic");
                    if let Some(reason) = &pool.failed {
                        return Err(BufferError::Failed(reason.clone()));
                    }
                    continue;
                }
                page
            };
            if !pool.free.is_empty() {
                break page;
            }
            let access = Access::new(page, kind, pool.stats.requests);
            let p = &mut *pool;
            p.ev.clear();
            match p.policy.victims(&access, &PinCounts(&self.frames, &p.table), &mut p.ev) {
                Ok(()) => {
                    let mut pl = p.spare_plans.pop().unwrap_or_default();
                    self.plan_evictions(p, &mut pl);
                    bypass = p.ev.bypass;
                    plan = Some(pl);
                    break page;
                }
                Err(EvictError::AllPinned) => {
                    let start = *waited.get_or_insert_with(Instant::now);
                    if start.elapsed() >= Duration::from_millis(PIN_WAIT_MS) {
                        return Err(BufferError::Evict { page, source: EvictError::AllPinned });
                    }
                    pool = self
                        .released
                        .wait_timeout(pool, Duration::from_millis(1))
                        .expect("the buffer pool lock was poisoned by a panic")
                        .0;
                    if let Some(reason) = &pool.failed {
                        return Err(BufferError::Failed(reason.clone()));
                    }
                }
                Err(e) => return Err(BufferError::Evict { page, source: e }),
            }
        };

        // A miss that has its frame (or bypasses the buffer).
        if alloc {
            pool.header.page_count += 1;
            pool.header_dirty = true;
        }
        let time = pool.count_request(page, kind);
        pool.stats.misses += 1;
        if alloc {
            pool.stats.allocations += 1;
        } else {
            pool.stats.fetches += 1;
        }
        let access = Access::new(page, kind, time);
        let mut plan = plan.unwrap_or_else(|| pool.spare_plans.pop().unwrap_or_default());

        if bypass {
            // Served without buffering: the bytes live in the guard, the page is busy until the
            // guard is dropped (and written through then, for a write).
            pool.busy[page as usize] = true;
            let mut buf = pool.take_buf(self.page_size);
            drop(pool);
            let mut times = IoTimes::default();
            let planned = self.execute_plan(&mut plan, &mut times);
            let fetched = match (&planned, alloc) {
                (Err(_), _) => Ok(0),
                (Ok(()), true) => {
                    buf.fill(0);
                    Ok(0)
                }
                (Ok(()), false) => self.read_into(page, &mut buf, &mut times),
            };
            let mut pool = self.lock_pool_any();
            self.finish_plan(&mut pool, plan, &times, planned.as_ref().err());
            let result = planned.and(fetched).and_then(|v| if alloc { Ok(()) } else { pool.check_version(page, v) });
            return match result {
                Ok(()) => Ok((page, Fixed::Detached(buf))),
                Err(e) => {
                    pool.busy[page as usize] = false;
                    pool.spare_bufs.push(buf);
                    self.released.notify_all();
                    Err(e)
                }
            };
        }

        let f = pool.free.pop().expect("an eviction frees a frame unless it bypasses");
        let fi = f as usize;
        pool.table[page as usize] = f;
        pool.frame_page[fi] = page;
        pool.in_use[fi] = true;
        let frame = &self.frames[fi];
        frame.dirty.store(false, Ordering::Release);
        frame.rec_lsn.store(0, Ordering::Release);
        frame.page_lsn.store(0, Ordering::Release);
        let prev = frame.pins.swap(1, Ordering::AcqRel);
        debug_assert_eq!(prev, 0, "a free frame is unpinned");
        pool.policy.on_insert(f, &access);
        let mut guard = self.frames[fi].data.try_write().expect("an unpinned frame's latch is free");
        guard.page = page;
        guard.valid = false;
        guard.error = None;
        drop(pool);

        let mut times = IoTimes::default();
        let planned = self.execute_plan(&mut plan, &mut times);
        let fetched = match (&planned, alloc) {
            (Err(_), _) => Ok(0),
            (Ok(()), true) => {
                guard.buf.fill(0);
                Ok(0)
            }
            (Ok(()), false) => self.read_into(page, &mut guard.buf, &mut times),
        };
        let mut pool = self.lock_pool_any();
        self.finish_plan(&mut pool, plan, &times, planned.as_ref().err());
        let result = planned.and(fetched).and_then(|v| if alloc { Ok(()) } else { pool.check_version(page, v) });
        match result {
            Ok(()) => {
                guard.valid = true;
                drop(pool);
                Ok((page, Fixed::Loaded(f, guard)))
            }
            Err(e) => {
                // The load failed: forget the page, let waiters see the failure, free the frame
                // when the last pin goes.
                pool.table[page as usize] = NIL;
                pool.in_use[fi] = false;
                pool.policy.remove(f);
                self.frames[fi].failed.store(true, Ordering::Release);
                guard.error = Some(e.to_string());
                drop(pool);
                drop(guard);
                self.unpin(f);
                Err(e)
            }
        }
    }

    /// Reads `page` into `buf` (verifying it) under the file lock; returns its version.
    fn read_into(&self, page: u64, buf: &mut [u8], times: &mut IoTimes) -> Result<u64, BufferError> {
        let mut file = self.lock_file();
        let file = file.as_mut().expect("the page file is present until close");
        let (version, t) = file.read_page(page, buf)?;
        times.read_ns += t;
        Ok(version)
    }

    /// Under the pool lock: takes the policy's victims out of the buffer, copying the bytes of
    /// those that must be written into `plan`.
    fn plan_evictions(&self, pool: &mut Pool<P>, plan: &mut Plan) {
        let pad = pool.ev.pad;
        for i in 0..pool.ev.victims.len() {
            let v = pool.ev.victims[i];
            let vi = v as usize;
            assert!(
                pool.in_use[vi] && self.frames[vi].pins.load(Ordering::Acquire) == 0,
                "the policy named frame {v}, which is free or pinned, as a victim"
            );
            let page = pool.frame_page[vi];
            let frame = &self.frames[vi];
            let dirty = frame.dirty.swap(false, Ordering::AcqRel);
            if pad.is_some() || dirty {
                let mut buf = pool.take_buf(self.page_size);
                {
                    let data = frame.data.try_read().expect("an unpinned frame's latch is free");
                    buf.copy_from_slice(&data.buf);
                }
                // A clean page in a padded block is written with the version it has on the
                // store, so the write puts back the very same bytes (a torn write of it then
                // leaves the page intact).
                let version = pool.versions[page as usize] + u64::from(dirty);
                pool.versions[page as usize] = version;
                pool.busy[page as usize] = true;
                if dirty {
                    plan.log_lsn = plan.log_lsn.max(frame.page_lsn.load(Ordering::Acquire));
                    let rec = frame.rec_lsn.swap(0, Ordering::AcqRel);
                    if rec != 0 {
                        pool.inflight.push((page, rec));
                    }
                }
                plan.writes.push(WriteBack { page, version, buf });
                if pad.is_none() {
                    pool.stats.evict_writes += 1;
                }
            }
            frame.rec_lsn.store(0, Ordering::Release);
            frame.page_lsn.store(0, Ordering::Release);
            pool.table[page as usize] = NIL;
            pool.in_use[vi] = false;
            pool.free.push(v);
            pool.stats.evictions += 1;
        }
        if let Some(pad) = pad {
            let end = (pad.first_page + pad.pages as u64).min(self.capacity_pages);
            plan.writes.sort_unstable_by_key(|w| w.page);
            for page in pad.first_page..end {
                pool.stats.padding_writes += 1;
                if plan.writes.binary_search_by_key(&page, |w| w.page).is_err() {
                    debug_assert!(
                        pool.table[page as usize] == NIL,
                        "padded block {pad:?}: buffered page {page} is not among the victims"
                    );
                    pool.stats.padding_reads += 1;
                }
            }
            plan.pad = Some((pad.first_page, end));
        }
    }

    /// Outside the pool lock: performs the padding and write-backs of `plan`, in the
    /// simulator's order (a padded block in page order; otherwise the victims' order).
    fn execute_plan(&self, plan: &mut Plan, times: &mut IoTimes) -> Result<(), BufferError> {
        if plan.writes.is_empty() && plan.pad.is_none() {
            return Ok(());
        }
        if plan.log_lsn > 0 {
            // The write-ahead rule: the changes being written are durable in the log first.
            self.wait_durable(plan.log_lsn)?;
        }
        let mut file = self.lock_file();
        let file = file.as_mut().expect("the page file is present until close");
        if let Some((first, end)) = plan.pad {
            let mut next = 0;
            for page in first..end {
                if next < plan.writes.len() && plan.writes[next].page == page {
                    let w = &mut plan.writes[next];
                    times.write_ns += file.write_page(page, &mut w.buf, w.version)?;
                    next += 1;
                } else {
                    let (r, w) = file.copy_page_raw(page)?;
                    times.read_ns += r;
                    times.write_ns += w;
                }
            }
        } else {
            for w in &mut plan.writes {
                times.write_ns += file.write_page(w.page, &mut w.buf, w.version)?;
            }
        }
        Ok(())
    }

    /// Under the pool lock, after `execute_plan`: clears the busy marks, recycles the buffers,
    /// records the times; `error` (the plan's failure) stops the manager.
    fn finish_plan(&self, pool: &mut Pool<P>, mut plan: Plan, times: &IoTimes, error: Option<&BufferError>) {
        pool.stats.read_time_ns += times.read_ns;
        pool.stats.write_time_ns += times.write_ns;
        let woke = !plan.writes.is_empty();
        if !pool.inflight.is_empty() {
            pool.inflight.retain(|(p, _)| !plan.writes.iter().any(|w| w.page == *p));
        }
        for w in plan.writes.drain(..) {
            pool.busy[w.page as usize] = false;
            pool.spare_bufs.push(w.buf);
        }
        plan.log_lsn = 0;
        if let Some(e) = error
            && pool.failed.is_none()
        {
            // The evicted pages' bytes are lost from the buffer: nothing can safely go on.
            pool.failed = Some(e.to_string());
        }
        plan.pad = None;
        pool.spare_plans.push(plan);
        if woke || error.is_some() {
            self.released.notify_all();
        }
    }

    /// Drops one pin of frame `f` (after its latch was released).
    fn unpin(&self, f: FrameId) {
        let frame = &self.frames[f as usize];
        let prev = frame.pins.fetch_sub(1, Ordering::AcqRel);
        debug_assert!(prev > 0, "frame {f} unpinned more often than pinned");
        if prev == 1 && frame.failed.load(Ordering::Acquire) {
            let mut pool = self.lock_pool_any();
            if frame.pins.load(Ordering::Acquire) == 0 && frame.failed.swap(false, Ordering::AcqRel) {
                pool.free.push(f);
                self.released.notify_all();
            }
        }
    }

    /// Releases a write-fixed page: its latch and pin, or (bypassed) its buffer, written through
    /// if `write_through`.
    fn release_inner(&self, page: u64, inner: WriteInner<'_>, write_through: bool) {
        match inner {
            WriteInner::Frame(f, guard) => {
                drop(guard);
                self.unpin(f);
            }
            WriteInner::Detached(buf) => self.release_detached(page, buf, write_through),
        }
    }

    /// Returns a bypassed page's buffer; writes it through first if it was fixed for writing.
    fn release_detached(&self, page: u64, mut buf: Box<[u8]>, write: bool) {
        let mut times = IoTimes::default();
        let mut error = None;
        if write {
            let version = {
                let mut pool = self.lock_pool_any();
                let v = pool.versions[page as usize] + 1;
                pool.versions[page as usize] = v;
                v
            };
            let mut file = self.lock_file();
            match file.as_mut().expect("the page file is present until close").write_page(page, &mut buf, version) {
                Ok(t) => times.write_ns += t,
                Err(e) => error = Some(e.to_string()),
            }
        }
        let mut pool = self.lock_pool_any();
        if write {
            pool.stats.bypass_writes += 1;
            pool.stats.write_time_ns += times.write_ns;
        }
        if let Some(e) = error
            && pool.failed.is_none()
        {
            pool.failed = Some(format!("page {page}: {e}"));
        }
        pool.busy[page as usize] = false;
        pool.spare_bufs.push(buf);
        self.released.notify_all();
    }

    /// Writes every dirty page (ascending page order, counted as `flush_writes`), then makes
    /// them durable: without a log, writes the file header and syncs; with a log, makes the log
    /// durable, syncs, and writes a checkpoint anchor (recovery then starts after every change
    /// made before the call). Pages stay buffered (clean). Safe to call while other threads
    /// work: a page modified during the flush stays dirty or is written again.
    ///
    /// The policy is not told: policies learn dirtiness only from access kinds (the
    /// [`Replacer`] contract), so after a checkpoint a policy may still treat a flushed page as
    /// dirty until it leaves the buffer (its eviction then writes nothing). The simulator's final
    /// flush behaves the same way.
    pub fn flush_all(&self) -> Result<(), BufferError> {
        self.checkpoint(Lsn::MAX, false)
    }

    /// A checkpoint: writes the dirty pages whose oldest logged change is older than `target`
    /// (every dirty page for `Lsn::MAX`, and always those changed without logging), then makes
    /// them durable and (with a log) writes an anchor whose redo LSN is the oldest change still
    /// only in the log. `space`: started for log room (its writes count as
    /// `checkpoint_writes`, not `flush_writes`).
    fn checkpoint(&self, target: Lsn, space: bool) -> Result<(), BufferError> {
        let _one_flush_at_a_time = self.flush_lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut dirty: Vec<(u64, FrameId)> = {
            let pool = self.lock_pool()?;
            (0..self.frames.len())
                .filter(|&f| {
                    let frame = &self.frames[f];
                    let rec = frame.rec_lsn.load(Ordering::Acquire);
                    pool.in_use[f] && frame.dirty.load(Ordering::Acquire) && (rec == 0 || rec < target)
                })
                .map(|f| (pool.frame_page[f], f as FrameId))
                .collect()
        };
        dirty.sort_unstable();
        for (page, f) in dirty {
            self.flush_page(page, f, space)?;
        }
        match &self.log {
            None => {
                self.write_header()?;
                let mut file = self.lock_file();
                file.as_mut().expect("the page file is present until close").sync()?;
                Ok(())
            }
            Some(log) => {
                let (end, meta) = {
                    let st = log.lock();
                    (st.end, st.meta)
                };
                // The anchor's metadata is that of `end`: the log must hold everything up to it.
                self.wait_durable(end)?;
                let redo = {
                    let pool = self.lock_pool()?;
                    let frames = (0..self.frames.len()).filter(|&f| pool.in_use[f]).map(|f| {
                        let frame = &self.frames[f];
                        if frame.dirty.load(Ordering::Acquire) { frame.rec_lsn.load(Ordering::Acquire) } else { 0 }
                    });
                    frames.chain(pool.inflight.iter().map(|&(_, r)| r)).filter(|&r| r != 0).fold(end, Lsn::min)
                };
                let anchor = {
                    let st = log.lock();
                    wal::Anchor { seq: st.seq + 1, redo_lsn: redo, end_lsn: end, epoch: st.epoch, meta }
                };
                let result = {
                    let mut file = self.lock_file();
                    let file = file.as_mut().expect("the page file is present until close");
                    // The pages first, then the anchor that lets recovery skip their changes.
                    file.sync().and_then(|t| Ok(t + file.write_anchor(&anchor)?))
                };
                let mut st = log.lock();
                match result {
                    Ok(t) => {
                        st.seq = anchor.seq;
                        st.tail = st.tail.max(redo);
                        st.stats.checkpoints += 1;
                        st.stats.space_checkpoints += u64::from(space);
                        st.stats.write_time_ns += t;
                        drop(st);
                        log.notify();
                        Ok(())
                    }
                    Err(e) => {
                        let e = BufferError::from(e);
                        st.failed.get_or_insert_with(|| e.to_string());
                        drop(st);
                        log.notify();
                        self.fail(&e);
                        Err(e)
                    }
                }
            }
        }
    }

    /// Writes the dirty page `page` in frame `f` (a checkpoint's write).
    fn flush_page(&self, page: u64, f: FrameId, space: bool) -> Result<(), BufferError> {
        let fi = f as usize;
        {
            let pool = self.lock_pool()?;
            if !(pool.in_use[fi] && pool.frame_page[fi] == page) {
                return Ok(());
            }
            // The pin keeps the page in this frame (and off the victim lists) until it is written.
            self.frames[fi].pins.fetch_add(1, Ordering::AcqRel);
        }
        let mut buf = self.lock_pool_any().take_buf(self.page_size);
        let copied = {
            // Under the read latch: no writer is between marking the page dirty and changing
            // it, so clearing the bit and copying the bytes cannot miss a change.
            let data = self.frames[fi].data.read().unwrap_or_else(|e| e.into_inner());
            let frame = &self.frames[fi];
            if data.valid && data.page == page && frame.dirty.load(Ordering::Acquire) {
                buf.copy_from_slice(&data.buf);
                // Writers need the write latch to change these: clear the redo LSN first, so
                // that a clean frame never carries one.
                frame.rec_lsn.store(0, Ordering::Release);
                frame.dirty.store(false, Ordering::Release);
                Some(frame.page_lsn.load(Ordering::Acquire))
            } else {
                None
            }
        };
        let result = match copied {
            None => Ok(None),
            Some(lsn) => {
                let durable = if lsn > 0 { self.wait_durable(lsn) } else { Ok(()) };
                durable.and_then(|()| {
                    let version = {
                        let mut pool = self.lock_pool_any();
                        let v = pool.versions[page as usize] + 1;
                        pool.versions[page as usize] = v;
                        v
                    };
                    let mut file = self.lock_file();
                    let file = file.as_mut().expect("the page file is present until close");
                    Ok(Some(file.write_page(page, &mut buf, version)?))
                })
            }
        };
        self.unpin(f);
        let mut pool = self.lock_pool_any();
        pool.spare_bufs.push(buf);
        match result {
            Ok(None) => Ok(()),
            Ok(Some(t)) => {
                if space {
                    pool.stats.checkpoint_writes += 1;
                } else {
                    pool.stats.flush_writes += 1;
                }
                pool.stats.write_time_ns += t;
                Ok(())
            }
            Err(e) => {
                pool.failed.get_or_insert_with(|| e.to_string());
                self.released.notify_all();
                Err(e)
            }
        }
    }

    /// Stops the manager after a failure (every later call returns [`BufferError::Failed`]).
    fn fail(&self, e: &BufferError) {
        let mut pool = self.lock_pool_any();
        pool.failed.get_or_insert_with(|| e.to_string());
        self.released.notify_all();
    }

    fn write_header(&self) -> Result<(), BufferError> {
        let header = {
            let mut pool = self.lock_pool()?;
            pool.header_dirty = false;
            pool.header.clone()
        };
        let mut file = self.lock_file();
        file.as_mut().expect("the page file is present until close").write_header(&header)?;
        Ok(())
    }

    /// The file header as it stands (with a log: page count and application area as logged).
    fn current_header(&self) -> FileHeader {
        let mut header = self.lock_pool_any().header.clone();
        if let Some(log) = &self.log {
            let st = log.lock();
            header.page_count = st.meta.page_count;
            header.app = st.meta.app;
        }
        header
    }

    /// Flushes everything ([`flush_all`](Self::flush_all)), marks a database without a log
    /// closed cleanly, finishes the page-reference trace if one is being recorded, and returns
    /// the page file with its header (to reopen it with [`BufferManager::new`], e.g. with
    /// another policy).
    pub fn close(self) -> Result<(PageFile<S>, FileHeader), BufferError> {
        self.flush_all()?;
        self.mark_clean()?;
        self.stop_recording()?;
        let header = self.current_header();
        let mut file = self.lock_file().take().expect("the page file is present until close");
        if let Some(log) = &self.log {
            // Hand the log over as recovery would: every page is written, so the next session
            // starts at the next page boundary in a new epoch, from an anchor that says so.
            let anchor = {
                let st = log.lock();
                let next = st.geom.page_start(st.end + st.geom.page_size as u64 - 1);
                wal::Anchor {
                    seq: st.seq + 1,
                    redo_lsn: next,
                    end_lsn: next,
                    epoch: st.epoch.wrapping_add(1),
                    meta: st.meta,
                }
            };
            file.write_anchor(&anchor)?;
            file.put_resume(anchor);
        }
        Ok((file, header))
    }

    /// Without a log: clears the header's open flag after a complete flush.
    fn mark_clean(&self) -> Result<(), BufferError> {
        if self.log.is_some() {
            return Ok(());
        }
        let header = self.current_header();
        let mut file = self.lock_file();
        file.as_mut().expect("the page file is present until close").set_open(false, &header)?;
        Ok(())
    }

    /// Starts recording the page-reference string (page, read or write, one request per fix,
    /// in the order the policy sees them) to `writer`. Replaying the trace through the simulator
    /// with the same policy, buffer size and write-miss mode `fetch` reproduces this manager's
    /// decisions (for a single-threaded run; new pages appear as writes, which the simulator
    /// fetches).
    pub fn start_recording(&self, writer: Box<dyn TraceWriter>) -> Result<(), BufferError> {
        let mut pool = self.lock_pool()?;
        if pool.recorder.is_some() {
            return Err(BufferError::Config("a page-reference trace is already being recorded".into()));
        }
        pool.recorder = Some(Recorder { writer, batch: Vec::with_capacity(TRACE_BATCH), error: None });
        Ok(())
    }

    /// Stops recording and completes the trace file; returns the number of requests written
    /// (0 when nothing was being recorded).
    pub fn stop_recording(&self) -> Result<u64, BufferError> {
        let recorder = self.lock_pool_any().recorder.take();
        let Some(mut r) = recorder else { return Ok(0) };
        if let Some(e) = r.error.take() {
            return Err(e.into());
        }
        r.writer.write_batch(&r.batch)?;
        Ok(r.writer.finish()?)
    }

    /// The counters since creation or the last [`reset_stats`](Self::reset_stats).
    pub fn stats(&self) -> BufferStats {
        self.lock_pool_any().stats.clone()
    }

    /// Zeroes the counters, and makes [`device_stats`](Self::device_stats) count from now.
    pub fn reset_stats(&self) {
        self.reset_log_stats();
        let mut pool = self.lock_pool_any();
        pool.stats = BufferStats::default();
        let file = self.lock_file();
        if let Some(file) = file.as_ref() {
            *self.device_base.lock().unwrap_or_else(|e| e.into_inner()) = file.store().stats();
        }
    }

    /// The store's counters since creation or the last [`reset_stats`](Self::reset_stats).
    pub fn device_stats(&self) -> DeviceStats {
        let now = self.lock_file().as_ref().map(|f| f.store().stats()).unwrap_or_default();
        now.since(&self.device_base.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A label of the store (for reports).
    pub fn store_label(&self) -> String {
        self.lock_file().as_ref().map(|f| f.store().label()).unwrap_or_default()
    }

    /// Runs `f` on the store under the file lock (tests inject faults this way).
    pub fn with_store<T>(&self, f: impl FnOnce(&mut S) -> T) -> T {
        let mut file = self.lock_file();
        f(file.as_mut().expect("the page file is present until close").store_mut())
    }

    /// Evicts every unpinned page, writing back the dirty ones (as `flush_writes`), so that the
    /// buffer starts cold. Pages stay valid on the store.
    pub fn evict_all(&self) -> Result<(), BufferError> {
        self.flush_all()?;
        let mut pool = self.lock_pool()?;
        let p = &mut *pool;
        for f in 0..self.frames.len() {
            if p.in_use[f] && self.frames[f].pins.load(Ordering::Acquire) == 0 {
                if self.frames[f].dirty.load(Ordering::Acquire) {
                    // Re-dirtied after the flush by a concurrent writer: leave it.
                    continue;
                }
                let page = p.frame_page[f];
                p.table[page as usize] = NIL;
                p.in_use[f] = false;
                p.policy.remove(f as FrameId);
                p.free.push(f as FrameId);
            }
        }
        // Restore the simulator's initial order of free frames when the buffer is empty.
        if p.free.len() == self.frames.len() {
            p.free.sort_unstable_by(|a, b| b.cmp(a));
        }
        Ok(())
    }

    /// Number of frames currently pinned.
    pub fn pinned_frames(&self) -> usize {
        self.frames.iter().filter(|f| f.pins.load(Ordering::Acquire) > 0).count()
    }

    /// Number of buffered pages.
    pub fn len(&self) -> usize {
        self.lock_pool_any().in_use.iter().filter(|&&u| u).count()
    }

    /// `true` when no page is buffered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cross-checks page table, frames, free list, pins, dirty bits and the policy. Safe to call
    /// while other threads work (it holds the pool lock).
    pub fn check_invariants(&self) -> Result<(), String> {
        let pool = self.lock_pool_any();
        let frames = self.frames.len();
        let mut mapped = vec![false; frames];
        let mut n_mapped = 0usize;
        for (page, &f) in pool.table.iter().enumerate() {
            if f == NIL {
                continue;
            }
            let fi = f as usize;
            if fi >= frames {
                return Err(format!("page {page} maps to frame {f} of {frames}"));
            }
            if !pool.in_use[fi] || pool.frame_page[fi] != page as u64 {
                return Err(format!("page {page} maps to frame {f}, which holds page {}", pool.frame_page[fi]));
            }
            if std::mem::replace(&mut mapped[fi], true) {
                return Err(format!("frame {f} is mapped twice"));
            }
            if pool.busy[page] {
                return Err(format!("page {page} is buffered and busy at once"));
            }
            n_mapped += 1;
        }
        let mut free = vec![false; frames];
        for &f in &pool.free {
            let fi = f as usize;
            if std::mem::replace(&mut free[fi], true) {
                return Err(format!("frame {f} is free twice"));
            }
            if pool.in_use[fi] || mapped[fi] {
                return Err(format!("frame {f} is free and in use"));
            }
            if self.frames[fi].pins.load(Ordering::Acquire) != 0 {
                return Err(format!("free frame {f} is pinned"));
            }
        }
        let failed = (0..frames).filter(|&f| !mapped[f] && !free[f]).count();
        for f in 0..frames {
            if pool.in_use[f] != mapped[f] {
                return Err(format!("frame {f}: in-use flag {} but mapped {}", pool.in_use[f], mapped[f]));
            }
            if !mapped[f] && !free[f] && !self.frames[f].failed.load(Ordering::Acquire) {
                return Err(format!("frame {f} is neither mapped, nor free, nor a failed load"));
            }
        }
        if n_mapped + pool.free.len() + failed != frames {
            return Err(format!("{n_mapped} mapped + {} free + {failed} failed != {frames} frames", pool.free.len()));
        }
        if pool.policy.len() != n_mapped {
            return Err(format!("the policy tracks {} frames, the buffer holds {n_mapped} pages", pool.policy.len()));
        }
        for (f, _) in mapped.iter().enumerate().filter(|(_, m)| **m) {
            // The policy learns dirtiness from access kinds only: it may call a page dirty that
            // a flush has written (or whose logged change was empty), never the reverse.
            let dirty = self.frames[f].dirty.load(Ordering::Acquire);
            if dirty && pool.policy.is_dirty(f as FrameId) == Some(false) {
                return Err(format!("frame {f}: the buffer holds changes the policy calls clean"));
            }
            if self.log.is_some() && !dirty && self.frames[f].rec_lsn.load(Ordering::Acquire) != 0 {
                return Err(format!("frame {f}: clean but with a redo LSN"));
            }
        }
        pool.policy.check_invariants()
    }
}

impl<P> Pool<P> {
    /// Counts one request and records it in the trace; returns its virtual time.
    #[inline]
    fn count_request(&mut self, page: u64, kind: AccessKind) -> u64 {
        let time = self.stats.requests;
        self.stats.requests += 1;
        if kind.is_write() {
            self.stats.write_requests += 1;
        } else {
            self.stats.read_requests += 1;
        }
        if let Some(r) = &mut self.recorder {
            r.batch.push(Request { page, kind, time_us: None });
            if r.batch.len() >= TRACE_BATCH {
                if r.error.is_none()
                    && let Err(e) = r.writer.write_batch(&r.batch)
                {
                    r.error = Some(e);
                }
                r.batch.clear();
            }
        }
        time
    }

    fn take_buf(&mut self, page_size: usize) -> Box<[u8]> {
        self.spare_bufs.pop().unwrap_or_else(|| vec![0; page_size].into())
    }

    /// Compares a fetched page's version with the one last written or read.
    fn check_version(&mut self, page: u64, version: u64) -> Result<(), BufferError> {
        let expected = self.versions[page as usize];
        if expected != 0 && version != expected {
            let what = if version < expected { "an older version: a write was lost" } else { "an unexpected version" };
            return Err(PageFileError::Corrupt {
                page,
                message: format!("read version {version} but version {expected} was written last ({what})"),
            }
            .into());
        }
        self.versions[page as usize] = version;
        Ok(())
    }
}

impl<S: PageStore, P: BufferPolicy> Drop for BufferManager<S, P> {
    fn drop(&mut self) {
        let present = self.file.get_mut().map(|f| f.is_some()).unwrap_or(false);
        let healthy = self.pool.get_mut().map(|p| p.failed.is_none()).unwrap_or(false);
        if present && healthy {
            // Best effort: `close` is the way to see errors.
            if self.flush_all().is_ok() {
                let _ = self.mark_clean();
            }
            let _ = self.stop_recording();
        }
    }
}

enum ReadInner<'a> {
    Frame(FrameId, RwLockReadGuard<'a, FrameData>),
    Detached(Box<[u8]>),
}

enum WriteInner<'a> {
    Frame(FrameId, RwLockWriteGuard<'a, FrameData>),
    Detached(Box<[u8]>),
}

/// A page fixed for reading: derefs to the page's payload (the bytes after the page header).
/// Dropping it releases the latch and the pin.
pub struct PageRef<'a, S: PageStore, P: BufferPolicy> {
    bm: &'a BufferManager<S, P>,
    page: u64,
    inner: Option<ReadInner<'a>>,
}

impl<S: PageStore, P: BufferPolicy> PageRef<'_, S, P> {
    /// The page number.
    pub fn page(&self) -> u64 {
        self.page
    }
}

impl<S: PageStore, P: BufferPolicy> Deref for PageRef<'_, S, P> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self.inner.as_ref().expect("present until drop") {
            ReadInner::Frame(_, g) => &g.buf[PAGE_HEADER_BYTES..],
            ReadInner::Detached(b) => &b[PAGE_HEADER_BYTES..],
        }
    }
}

impl<S: PageStore, P: BufferPolicy> Drop for PageRef<'_, S, P> {
    fn drop(&mut self) {
        match self.inner.take() {
            Some(ReadInner::Frame(f, guard)) => {
                drop(guard);
                self.bm.unpin(f);
            }
            Some(ReadInner::Detached(buf)) => self.bm.release_detached(self.page, buf, false),
            None => {}
        }
    }
}

/// A page fixed for writing: derefs (mutably) to the page's payload. Dropping it releases the
/// latch and the pin (a bypassed page is written through at that moment).
pub struct PageMut<'a, S: PageStore, P: BufferPolicy> {
    bm: &'a BufferManager<S, P>,
    page: u64,
    inner: Option<WriteInner<'a>>,
}

impl<S: PageStore, P: BufferPolicy> PageMut<'_, S, P> {
    /// The page number.
    pub fn page(&self) -> u64 {
        self.page
    }
}

impl<S: PageStore, P: BufferPolicy> Deref for PageMut<'_, S, P> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self.inner.as_ref().expect("present until drop") {
            WriteInner::Frame(_, g) => &g.buf[PAGE_HEADER_BYTES..],
            WriteInner::Detached(b) => &b[PAGE_HEADER_BYTES..],
        }
    }
}

impl<S: PageStore, P: BufferPolicy> DerefMut for PageMut<'_, S, P> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        match self.inner.as_mut().expect("present until drop") {
            WriteInner::Frame(_, g) => &mut g.buf[PAGE_HEADER_BYTES..],
            WriteInner::Detached(b) => &mut b[PAGE_HEADER_BYTES..],
        }
    }
}

impl<S: PageStore, P: BufferPolicy> Drop for PageMut<'_, S, P> {
    fn drop(&mut self) {
        match self.inner.take() {
            Some(WriteInner::Frame(f, guard)) => {
                drop(guard);
                self.bm.unpin(f);
            }
            Some(WriteInner::Detached(buf)) => self.bm.release_detached(self.page, buf, true),
            None => {}
        }
    }
}
