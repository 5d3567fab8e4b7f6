//! The CFDC paper's transaction workload (Ou, Härder, Jin, DaMoN 2009, §4.2) and its
//! measurements.
//!
//! **Database.** `records` records (default one million) with keys `0..records` (4-byte
//! integers) and `value_size`-byte values (default 256), bulk-loaded into a B+-tree of
//! `page_size`-byte pages (default 4 KiB) with leaves half full (`leaf_fill` = 0.5; with 4 KiB
//! pages a leaf then holds 7 of its 15 records, 142,858 leaves, ~560 MiB; the paper reports a
//! 641 MB file). Inner nodes are packed full (`inner_fill` = 1.0: the paper states only the
//! leaves' fill; full inner nodes give the fewest levels, and they are under 0.3% of the pages).
//!
//! **Workload.** Four kinds of transactions — point queries (read one record), point updates
//! (rewrite one record's value), range queries (read `range_len` = 256 consecutive records) and
//! range updates (rewrite 256 consecutive records) — in the paper's baseline numbers (100,000 /
//! 100,000 / 200 / 200), mixed in random order. Point keys follow the 80–20 self-similar
//! distribution of Gray et al. (`key = floor(N · u^(log 0.2 / log 0.8))`, the trace crate's
//! generator: hot keys are the low ones, so hot leaves are neighbours on the device); range
//! starts are uniform in `0..=records − range_len`, so every range covers exactly `range_len`
//! records. Everything derives from `seed` through ChaCha8 (portable): the kind order, the point
//! keys and the range starts are three separate streams, so changing the mix does not change
//! the key sequences. [`WorkloadConfig::with_update_intensity`] (Fig. 7) keeps the totals
//! (200,000 point and 400 range transactions) and moves the update share;
//! [`WorkloadConfig::with_scans`] (Fig. 8) sets the number of range transactions.
//!
//! **A run** ([`run_workload`]): build the store at the database's size, bulk-load (through a
//! buffer manager with LRU, whose evictions write the pages in allocation order), close it, then
//! open a fresh buffer manager with the policy under test — **the buffer starts cold** (empty),
//! as after the paper's emptying of the OS caches — reset every counter, run the transactions
//! on `workers` threads (each takes the next transaction from a shared queue; one worker runs
//! them in the generated order), and finally flush every dirty page (counted, as the AD-LRU paper
//! and the simulator count the final flush).
//!
//! **Time** ([`WorkloadResult::time_s`]):
//! * On a real file: wall-clock time of the run phase (transactions and final flush).
//! * On simulated flash: *CPU time + device time* (the AD-LRU paper's runtime definition,
//!   §4.2): the wall-clock time of the run phase, during which the engine computes and the
//!   simulated store only copies bytes in memory, plus the device's simulated time for every
//!   read and write of the run (merges and garbage collection included). With several workers
//!   the wall-clock time is that of the parallel run and the device time is still added in
//!   full: the simulated device has one channel and executes its operations one after another,
//!   so device time does not overlap with itself, and overlapping it with computation is not
//!   modelled — a conservative choice (TPS is a lower bound) whose error is at most the CPU
//!   share of the total, which the result reports separately (`wall_s`, `device_s`).
//! * In memory: wall-clock time.
//!
//! TPS = transactions / time. "Page flushes" are the buffer manager's page writes (dirty
//! victims, padding, bypass, final flush, and checkpoints the log needed for room); "cost per
//! flush" is the store's time per page write (simulated or measured).
//!
//! **The write-ahead log** ([`WorkloadConfig::log_pages`]; 0 in [`WorkloadConfig::baseline`],
//! which is the paper's setup: its experiments ran XTC's file, buffer and index managers only,
//! §4.1). With a log, the log takes the store's last pages, every update transaction is an
//! operation acknowledged only once its log group is durable (one worker: one log write and
//! sync per update), and range updates hold their leaves until they commit. The log's writes
//! are device time like any other (they lower TPS) but **not page flushes**: they are reported
//! apart (`log_writes`, `log_bytes`, `log_syncs`, `log_s`), so the paper's page flush counts
//! stay comparable — with a log that holds the run (64 MiB for the baseline, whose log is about
//! 43 MB) they are identical to the page with and without it. On a simulated device the log's
//! writes change the device's state (merges and garbage collection), so costs per flush compare
//! only between runs with the same log setting. `docs/engine.md` has the figures.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use flashbuf_flash::{DeviceError, PageStore, StoreError, thread_cpu_s};
use flashbuf_policy::{AnyPolicy, PolicyConfig, PolicyError};
use flashbuf_trace::generators::SelfSimilarTrace;
use flashbuf_trace::rng::PortableRng;
use flashbuf_trace::{Format, Locality, Request, TraceError, TraceSource};
use serde::Serialize;

use crate::btree::{BTree, Layout, TreeError};
use crate::buffer::{BufferError, BufferManager};
use crate::page::{DEFAULT_PAGE_SIZE, PAGE_HEADER_BYTES, PageFile, PageFileError};
use crate::store::{AnyStore, StoreSpec};
use crate::wal::{LogGeometry, MIN_LOG_PAGES};

/// The default seed of the workload.
pub const DEFAULT_SEED: u64 = 42;

/// The log size `flashbuf engine bench` uses by default, bytes (64 MiB: the default workload's
/// log, about 45 MB, fits without a checkpoint; see the module documentation).
pub const DEFAULT_LOG_BYTES: u64 = 64 << 20;

/// The most worker threads a run may have.
pub const MAX_WORKERS: usize = 4096;

/// Memory per buffer frame besides its page: latch, counters, policy state (an estimate).
const FRAME_OVERHEAD_BYTES: u128 = 128;
/// Memory per store page in the buffer manager's tables (frame index, busy flag, version).
const PAGE_TABLE_BYTES: u128 = 13;
/// Memory per transaction of the generated list (the transaction, its kind, its key).
const TXN_BYTES: u128 = 13;
/// Memory per page of a simulated device's mapping and chip state (an estimate).
const SIM_DEVICE_BYTES_PER_PAGE: u128 = 48;

/// This machine's physical memory, bytes (`None` where it cannot be asked).
pub fn physical_memory_bytes() -> Option<u64> {
    // SAFETY: sysconf only reads system configuration.
    let (pages, size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    (pages > 0 && size > 0).then(|| (pages as u64).saturating_mul(size as u64))
}

/// Free bytes on the file system that holds `path` (or would: its directory), `None` where it
/// cannot be asked.
pub fn free_disk_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid out-parameter.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// `n` bytes for a message: `1.5 GiB`.
pub fn human_bytes(n: u128) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{n} bytes") } else { format!("{v:.1} {}", UNITS[u]) }
}

/// What a workload run can report as going wrong.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// Invalid parameters.
    #[error("invalid workload configuration: {0}")]
    Config(String),
    /// The store could not be built.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The simulated device could not be built.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The page file failed.
    #[error(transparent)]
    PageFile(#[from] PageFileError),
    /// The buffer manager failed.
    #[error(transparent)]
    Buffer(#[from] BufferError),
    /// The B+-tree failed.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// The key generator or the trace writer failed.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A policy parameter could not be set.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A loaded key was not found (only a bug can cause this).
    #[error("key {0} was loaded but is missing from the tree")]
    MissingKey(u32),
    /// A record's value is not one the workload wrote (only a bug can cause this).
    #[error("key {key}: the stored value is not one the workload wrote")]
    BadValue {
        /// The record's key.
        key: u32,
    },
}

/// Everything that defines a workload run.
#[derive(Clone, Debug)]
pub struct WorkloadConfig {
    /// Records in the database (keys `0..records`).
    pub records: u64,
    /// Bytes per value.
    pub value_size: usize,
    /// Bytes per page.
    pub page_size: usize,
    /// Fill fraction of the bulk-loaded leaves.
    pub leaf_fill: f64,
    /// Fill fraction of the bulk-loaded inner nodes.
    pub inner_fill: f64,
    /// Point queries.
    pub point_queries: u64,
    /// Point updates.
    pub point_updates: u64,
    /// Range queries.
    pub range_queries: u64,
    /// Range updates.
    pub range_updates: u64,
    /// Records per range transaction.
    pub range_len: u32,
    /// Buffer size in pages.
    pub buffer_pages: usize,
    /// The replacement policy.
    pub policy: PolicyConfig,
    /// Worker threads.
    pub workers: usize,
    /// Seed of the transaction mix and keys.
    pub seed: u64,
    /// Record the page-reference string of the run (`.fbt` binary or `.txt` text).
    pub record_trace: Option<PathBuf>,
    /// After the run, read every record back and check that its value is one the workload
    /// wrote (not timed).
    pub verify: bool,
    /// Pages of the write-ahead log, after the database's pages on the same store (0: no log,
    /// the paper's setup). See the module documentation.
    pub log_pages: u64,
}

impl WorkloadConfig {
    /// The paper's baseline (§4.2, §4.3): one million records, 100,000 point queries, 100,000
    /// point updates, 200 range queries, 200 range updates of 256 records, 4,096 buffer pages,
    /// one worker, for `policy`.
    pub fn baseline(policy: PolicyConfig) -> Self {
        WorkloadConfig {
            records: 1_000_000,
            value_size: 256,
            page_size: DEFAULT_PAGE_SIZE,
            leaf_fill: 0.5,
            inner_fill: 1.0,
            point_queries: 100_000,
            point_updates: 100_000,
            range_queries: 200,
            range_updates: 200,
            range_len: 256,
            buffer_pages: 4096,
            policy,
            workers: 1,
            seed: DEFAULT_SEED,
            record_trace: None,
            verify: false,
            log_pages: 0,
        }
    }

    /// Scales the four transaction counts by `factor` (rounded), for quick runs on fewer
    /// records.
    pub fn scaled(mut self, factor: f64) -> Self {
        let s = |n: u64| (n as f64 * factor).round() as u64;
        self.point_queries = s(self.point_queries);
        self.point_updates = s(self.point_updates);
        self.range_queries = s(self.range_queries);
        self.range_updates = s(self.range_updates);
        self
    }

    /// Keeps the number of point and of range transactions and makes a share `u` of each
    /// updates (Fig. 7: "for a 20% update intensity 160,000 point queries, 40,000 point
    /// updates, 320 range queries, and 80 range updates").
    pub fn with_update_intensity(mut self, u: f64) -> Result<Self, WorkloadError> {
        if !(0.0..=1.0).contains(&u) {
            return Err(WorkloadError::Config(format!("the update intensity must be in [0, 1], got {u}")));
        }
        let points = self.point_queries.saturating_add(self.point_updates);
        let ranges = self.range_queries.saturating_add(self.range_updates);
        self.point_updates = (points as f64 * u).round() as u64;
        self.point_queries = points - self.point_updates;
        self.range_updates = (ranges as f64 * u).round() as u64;
        self.range_queries = ranges - self.range_updates;
        Ok(self)
    }

    /// Sets the number of range transactions to `scans`, split between queries and updates in
    /// the current proportion (half and half when there were none); Fig. 8.
    pub fn with_scans(mut self, scans: u64) -> Self {
        let ranges = self.range_queries.saturating_add(self.range_updates);
        let share = if ranges == 0 { 0.5 } else { self.range_updates as f64 / ranges as f64 };
        self.range_updates = ((scans as f64 * share).round() as u64).min(scans);
        self.range_queries = scans - self.range_updates;
        self
    }

    /// Total transactions (saturating; [`validate`](Self::validate) refuses counts whose sum
    /// does not fit).
    pub fn transactions(&self) -> u64 {
        self.point_queries
            .saturating_add(self.point_updates)
            .saturating_add(self.range_queries)
            .saturating_add(self.range_updates)
    }

    /// The B+-tree node layout of this configuration.
    pub fn layout(&self) -> Result<Layout, WorkloadError> {
        if self.page_size <= PAGE_HEADER_BYTES {
            return Err(WorkloadError::Config(format!("page size {} is too small", self.page_size)));
        }
        Ok(Layout::new(self.page_size - PAGE_HEADER_BYTES, self.value_size)?)
    }

    /// Pages of the loaded database, the file header included (the log not included).
    pub fn database_pages(&self) -> Result<u64, WorkloadError> {
        self.check_records()?;
        Ok(1 + self.layout()?.pages_for(self.records, self.leaf_fill, self.inner_fill))
    }

    fn check_records(&self) -> Result<(), WorkloadError> {
        if self.records == 0 || self.records > 1 << 32 {
            return Err(WorkloadError::Config(format!(
                "records must be between 1 and 2^32 (4-byte keys), got {}",
                self.records
            )));
        }
        for (what, f) in [("leaf", self.leaf_fill), ("inner", self.inner_fill)] {
            if !(f > 0.0 && f <= 1.0) {
                return Err(WorkloadError::Config(format!("the {what} fill fraction must be in (0, 1], got {f}")));
            }
        }
        Ok(())
    }

    /// Checks every parameter, with checked arithmetic, before any work (see also
    /// [`memory_needed`](Self::memory_needed)).
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let bad = |m: String| Err(WorkloadError::Config(m));
        self.check_records()?;
        self.layout()?;
        if self.buffer_pages == 0 {
            return bad("the buffer needs at least one page".into());
        }
        if self.workers == 0 {
            return bad("at least one worker is needed".into());
        }
        if self.workers > MAX_WORKERS {
            return bad(format!("{} workers is more than flashbuf supports ({MAX_WORKERS})", self.workers));
        }
        let counts = [self.point_queries, self.point_updates, self.range_queries, self.range_updates];
        if counts.iter().try_fold(0u64, |a, &c| a.checked_add(c)).is_none() {
            return bad(format!(
                "the transaction counts ({} point queries, {} point updates, {} range queries, {} range updates) \
                 add up to more than 2^64",
                counts[0], counts[1], counts[2], counts[3]
            ));
        }
        let ranges = self.range_queries + self.range_updates;
        if self.range_len == 0 && ranges > 0 {
            return bad("range transactions need a range length of at least 1".into());
        }
        if (self.buffer_pages as u64) < 4 * self.workers as u64 {
            return bad(format!(
                "{} buffer pages are too few for {} workers (each may pin 2 pages while another loads)",
                self.buffer_pages, self.workers
            ));
        }
        if self.log_pages > 0 {
            if self.log_pages < MIN_LOG_PAGES {
                return bad(format!("a log needs at least {MIN_LOG_PAGES} pages, got {}", self.log_pages));
            }
            // With a log a range update holds every leaf it changes until it commits, and
            // reserves log room for up to range_len + 1 of them.
            if self.range_updates > 0 {
                let layout = self.layout()?;
                let held = Layout::range_leaves(self.range_len as u64, layout.min_leaf_records(Some(self.leaf_fill)));
                let need = held.saturating_mul(self.workers as u64);
                if need >= self.buffer_pages as u64 {
                    return bad(format!(
                        "with a log, a range update of {} records may hold up to {held} leaves until it commits; \
                         {} workers need a buffer of more than {need} pages, got {}",
                        self.range_len, self.workers, self.buffer_pages
                    ));
                }
                let geom = LogGeometry { first_page: 0, pages: self.log_pages, page_size: self.page_size };
                if geom.reservation(held) > geom.max_group_bytes() {
                    return bad(format!(
                        "with a log, a range update of {} records may log {} bytes, more than a log of {} pages \
                         allows one operation ({} bytes): use a larger log or shorter ranges",
                        self.range_len,
                        geom.reservation(held),
                        self.log_pages,
                        geom.max_group_bytes()
                    ));
                }
            }
        }
        Ok(())
    }

    /// What a run of this configuration on `spec` needs in memory (and, on a file, on disk),
    /// by part, from the sizes of the data structures involved; every product is computed in
    /// 128 bits, so no input overflows it.
    pub fn memory_needed(&self, spec: &StoreSpec) -> Result<Vec<(String, u128)>, WorkloadError> {
        let db_pages = self.database_pages()? as u128;
        let page = self.page_size as u128;
        let store_pages = db_pages + self.log_pages as u128;
        let frames = self.buffer_pages as u128;
        let mut parts = vec![
            (format!("a buffer of {} pages", self.buffer_pages), frames * (page + FRAME_OVERHEAD_BYTES)),
            (format!("the page table of {store_pages} pages"), store_pages * PAGE_TABLE_BYTES),
            (
                format!("the list of {} transactions", self.transactions()),
                (self.point_queries as u128
                    + self.point_updates as u128
                    + self.range_queries as u128
                    + self.range_updates as u128)
                    * TXN_BYTES,
            ),
        ];
        match spec {
            StoreSpec::Memory => {
                parts.push((format!("the database in memory ({store_pages} pages)"), store_pages * page))
            }
            StoreSpec::Sim(_) => parts.push((
                format!("the database in memory and its simulated device ({store_pages} pages)"),
                store_pages * (page + SIM_DEVICE_BYTES_PER_PAGE),
            )),
            StoreSpec::File { .. } => {}
        }
        Ok(parts)
    }

    /// Refuses a run that needs more memory than this machine has (or, on a file, more disk
    /// than its file system has free), naming what needs how much.
    pub fn check_resources(&self, spec: &StoreSpec) -> Result<(), WorkloadError> {
        let parts = self.memory_needed(spec)?;
        let total: u128 = parts.iter().map(|(_, b)| b).sum();
        if let Some(have) = physical_memory_bytes()
            && total > have as u128
        {
            let list: Vec<String> = parts.iter().map(|(what, b)| format!("{what}: {}", human_bytes(*b))).collect();
            return Err(WorkloadError::Config(format!(
                "this run needs about {} of memory ({}), more than this machine's {}",
                human_bytes(total),
                list.join("; "),
                human_bytes(have as u128)
            )));
        }
        if let StoreSpec::File { path, .. } = spec {
            let bytes = (self.database_pages()? as u128 + self.log_pages as u128) * self.page_size as u128;
            if let Some(free) = free_disk_bytes(path)
                && bytes > free as u128
            {
                return Err(WorkloadError::Config(format!(
                    "{}: the database needs {} on disk; its file system has {} free",
                    path.display(),
                    human_bytes(bytes),
                    human_bytes(free as u128)
                )));
            }
        }
        Ok(())
    }
}

/// A point on one of the CFDC paper's curves, for `flashbuf reproduce cfdc`: the baseline with
/// one parameter moved.
#[derive(Clone, Debug)]
pub struct CfdcPoint {
    /// The policy (its window set from `window` when given).
    pub policy: PolicyConfig,
    /// Where the database lives.
    pub store: StoreSpec,
    /// Buffer size in pages (Fig. 4–6: 1,024 … 8,192; otherwise 4,096).
    pub buffer_pages: usize,
    /// Share of update transactions (Fig. 7; baseline 0.5).
    pub update_intensity: f64,
    /// Range transactions (Fig. 8; baseline 400).
    pub scans: u64,
    /// The priority window (CFDC `pw`) or clean-first window (CFLRU `w`) as a fraction of the
    /// buffer (Fig. 9), or `None` to keep the policy's.
    pub window: Option<f64>,
    /// Records (baseline one million).
    pub records: u64,
    /// Worker threads (baseline 1).
    pub workers: usize,
    /// Seed.
    pub seed: u64,
}

impl CfdcPoint {
    /// The baseline at 4,096 pages for `policy` on `store`.
    pub fn baseline(policy: PolicyConfig, store: StoreSpec) -> Self {
        CfdcPoint {
            policy,
            store,
            buffer_pages: 4096,
            update_intensity: 0.5,
            scans: 400,
            window: None,
            records: 1_000_000,
            workers: 1,
            seed: DEFAULT_SEED,
        }
    }

    /// The workload configuration of this point.
    pub fn config(&self) -> Result<WorkloadConfig, WorkloadError> {
        let policy = match self.window {
            Some(w) => with_window(&self.policy, w)?,
            None => self.policy.clone(),
        };
        let mut c =
            WorkloadConfig::baseline(policy).with_scans(self.scans).with_update_intensity(self.update_intensity)?;
        c.buffer_pages = self.buffer_pages;
        c.records = self.records;
        c.workers = self.workers;
        c.seed = self.seed;
        Ok(c)
    }
}

/// Runs one point of a CFDC curve (see [`CfdcPoint`]).
pub fn run_cfdc(point: &CfdcPoint) -> Result<WorkloadResult, WorkloadError> {
    run_workload(&point.config()?, &point.store)
}

/// `policy` with its window parameter (`pw` of CFDC, `w` of CFLRU and CFLRU/C) set to
/// `window`; an error for a policy without one.
pub fn with_window(policy: &PolicyConfig, window: f64) -> Result<PolicyConfig, WorkloadError> {
    let mut p = policy.clone();
    let key = ["pw", "w"].into_iter().find(|k| policy.keys().iter().any(|d| d.key == *k)).ok_or_else(|| {
        WorkloadError::Config(format!("policy '{}' has no window parameter (pw or w)", policy.name()))
    })?;
    p.set(key, &window.to_string())?;
    Ok(p)
}

/// The kind of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnKind {
    /// Read one record.
    PointQuery,
    /// Rewrite one record's value.
    PointUpdate,
    /// Read `range_len` consecutive records.
    RangeQuery,
    /// Rewrite `range_len` consecutive records.
    RangeUpdate,
}

/// One transaction: its kind and key (point) or first key (range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Txn {
    /// What it does.
    pub kind: TxnKind,
    /// The key, or the first key of the range.
    pub key: u32,
}

/// SplitMix64 finaliser: derives independent seeds and value patterns.
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The transactions of `config`, in execution order (deterministic in the seed).
pub fn transactions(config: &WorkloadConfig) -> Result<Vec<Txn>, WorkloadError> {
    config.validate()?;
    let n = config.transactions();
    let mut kinds: Vec<TxnKind> = Vec::with_capacity(n as usize);
    for (count, kind) in [
        (config.point_queries, TxnKind::PointQuery),
        (config.point_updates, TxnKind::PointUpdate),
        (config.range_queries, TxnKind::RangeQuery),
        (config.range_updates, TxnKind::RangeUpdate),
    ] {
        kinds.extend(std::iter::repeat_n(kind, count as usize));
    }
    // Fisher–Yates with the portable generator.
    let mut rng = PortableRng::new(mix64(config.seed ^ 0x004D_4958));
    for i in (1..kinds.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        kinds.swap(i, j);
    }
    let points = config.point_queries + config.point_updates;
    let mut keys = SelfSimilarTrace::new(points, config.records, 0.0, Locality::eighty_twenty(), mix64(config.seed))?;
    let mut batch: Vec<Request> = Vec::with_capacity(points as usize);
    let mut point_keys: Vec<u32> = Vec::with_capacity(points as usize);
    while keys.next_batch(&mut batch, 1 << 16)? > 0 {
        point_keys.extend(batch.iter().map(|r| r.page as u32));
    }
    let mut starts = PortableRng::new(mix64(config.seed ^ 0x0052_414E_4745));
    let span = config.records.saturating_sub(config.range_len as u64) + 1;
    let mut next_point = 0usize;
    Ok(kinds
        .into_iter()
        .map(|kind| {
            let key = match kind {
                TxnKind::PointQuery | TxnKind::PointUpdate => {
                    next_point += 1;
                    point_keys[next_point - 1]
                }
                TxnKind::RangeQuery | TxnKind::RangeUpdate => starts.below(span) as u32,
            };
            Txn { kind, key }
        })
        .collect())
}

/// The value the workload stores for `key` at `version` (0: loaded; `i + 1`: written by
/// transaction `i`): the key (4 bytes), the version (8 bytes), then a pattern derived from both,
/// so that a value torn, misplaced or mixed with another is recognised by [`value_version`].
pub fn fill_value(key: u32, version: u64, out: &mut [u8]) {
    let mut head = [0u8; 12];
    head[..4].copy_from_slice(&key.to_le_bytes());
    head[4..].copy_from_slice(&version.to_le_bytes());
    let n = out.len().min(12);
    out[..n].copy_from_slice(&head[..n]);
    let h = mix64(((key as u64) << 40) ^ version);
    for (i, b) in out.iter_mut().enumerate().skip(12) {
        *b = (h >> ((i % 8) * 8)) as u8 ^ i as u8;
    }
}

/// The version of a value written by [`fill_value`] for `key`, or `None` if the value is not
/// one `fill_value` produces for this key.
pub fn value_version(key: u32, value: &[u8]) -> Option<u64> {
    let mut v = [0u8; 8];
    let n = value.len().saturating_sub(4).min(8);
    if n > 0 {
        v[..n].copy_from_slice(&value[4..4 + n]);
    }
    let version = u64::from_le_bytes(v);
    let mut expected = vec![0u8; value.len()];
    fill_value(key, version, &mut expected);
    (expected == value).then_some(version)
}

/// What one run measured (one result row; see the module documentation for the definitions).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadResult {
    /// Policy label with every parameter.
    pub policy: String,
    /// Store label (device or file).
    pub store: String,
    /// Buffer size in pages.
    pub buffer_pages: u64,
    /// Records in the database.
    pub records: u64,
    /// Bytes per page.
    pub page_size: u64,
    /// Bytes per value.
    pub value_size: u64,
    /// Worker threads.
    pub workers: u64,
    /// Seed.
    pub seed: u64,
    /// Point queries run.
    pub point_queries: u64,
    /// Point updates run.
    pub point_updates: u64,
    /// Range queries run.
    pub range_queries: u64,
    /// Range updates run.
    pub range_updates: u64,
    /// All transactions.
    pub transactions: u64,
    /// Pages of the database (file header included).
    pub db_pages: u64,
    /// Levels of the B+-tree.
    pub tree_height: u64,
    /// Wall-clock seconds of the bulk load (not part of the run).
    pub load_s: f64,
    /// How `time_s` is made: `wall` (real file, memory) or `wall+device` (simulated flash).
    pub time_model: String,
    /// The run's time in seconds (see the module documentation).
    pub time_s: f64,
    /// Wall-clock seconds of the run phase.
    pub wall_s: f64,
    /// CPU seconds of the threads that ran the workload and the final flush.
    pub cpu_s: f64,
    /// Store time of the run in seconds (simulated for a device, measured for a file).
    pub device_s: f64,
    /// Transactions per second: transactions / `time_s`.
    pub tps: f64,
    /// Page fixes.
    pub requests: u64,
    /// Fixes that hit.
    pub hits: u64,
    /// Fixes that missed.
    pub misses: u64,
    /// hits / requests.
    pub hit_ratio: f64,
    /// Pages read from the store (fetches + padding reads).
    pub page_reads: u64,
    /// Demand fetches.
    pub fetches: u64,
    /// Padding reads.
    pub padding_reads: u64,
    /// Pages written ("page flushes"): victims + padding + bypass + final flush.
    pub page_flushes: u64,
    /// Dirty victims written.
    pub evict_writes: u64,
    /// Pages written in padded blocks.
    pub padding_writes: u64,
    /// Pages written through on a bypass.
    pub bypass_writes: u64,
    /// Dirty pages written by the final flush.
    pub flush_writes: u64,
    /// Store time per page flush, microseconds ("cost of page flushes", CFDC Fig. 6).
    pub avg_flush_us: f64,
    /// Store time per page read, microseconds.
    pub avg_read_us: f64,
    /// NAND page reads (simulated flash).
    pub flash_reads: u64,
    /// NAND page programs (simulated flash).
    pub flash_programs: u64,
    /// Block erases (simulated flash).
    pub erases: u64,
    /// Pages copied by garbage collection and merges.
    pub page_copies: u64,
    /// Switch merges.
    pub merges_switch: u64,
    /// Partial merges.
    pub merges_partial: u64,
    /// Full merges.
    pub merges_full: u64,
    /// Flash programs per page written.
    pub write_amplification: f64,
    /// Pages of the write-ahead log (0: no log).
    pub log_pages: u64,
    /// Bytes appended to the log.
    pub log_bytes: u64,
    /// Log pages written (not page flushes: a partly filled log page is written again as it
    /// fills).
    pub log_writes: u64,
    /// Group commits: log writes made durable together.
    pub log_syncs: u64,
    /// Store time of the log's writes and syncs, seconds (part of `device_s`).
    pub log_s: f64,
    /// Checkpoints the log started during the run because it ran short of room.
    pub checkpoints: u64,
    /// Pages those checkpoints wrote (part of `page_flushes`).
    pub checkpoint_writes: u64,
    /// Direct I/O fallback note for a file store (empty otherwise).
    pub note: String,
}

/// Creates a trace writer for `path` by its extension (`.fbt` binary, `.txt` text).
pub fn trace_writer(path: &Path) -> Result<Box<dyn flashbuf_trace::TraceWriter>, WorkloadError> {
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some("fbt") => Format::Binary,
        Some("txt") => Format::Text,
        _ => {
            return Err(WorkloadError::Config(format!(
                "{}: a page-reference trace is written as .fbt (flashbuf binary) or .txt (flashbuf text)",
                path.display()
            )));
        }
    };
    Ok(flashbuf_trace::create_writer(format, path, true)?)
}

/// Builds the store, bulk-loads the database and returns it closed, with the load's wall time.
pub fn load_database(
    config: &WorkloadConfig,
    spec: &StoreSpec,
) -> Result<(PageFile<AnyStore>, crate::page::FileHeader, f64), WorkloadError> {
    config.validate()?;
    let start = Instant::now();
    let pages = config.database_pages()?;
    let store = spec.build(config.page_size, pages + config.log_pages)?;
    let (file, header) = if config.log_pages > 0 {
        PageFile::create_with_log(store, config.log_pages)?
    } else {
        PageFile::create(store)?
    };
    let frames = config.buffer_pages;
    let lru: PolicyConfig = "lru".parse()?;
    let bm = BufferManager::new(file, header, AnyPolicy::new(frames, &lru), frames)?;
    let value_size = config.value_size;
    let tree = BTree::bulk_load(bm, value_size, config.records, config.leaf_fill, config.inner_fill, |i, v| {
        fill_value(i as u32, 0, v);
        i as u32
    })?;
    let (file, header) = tree.close()?;
    Ok((file, header, start.elapsed().as_secs_f64()))
}

/// Runs the workload of `config` on a store built from `spec`: load, cold start, transactions,
/// final flush (see the module documentation).
pub fn run_workload(config: &WorkloadConfig, spec: &StoreSpec) -> Result<WorkloadResult, WorkloadError> {
    config.validate()?;
    config.check_resources(spec)?;
    let txns = transactions(config)?;
    let (file, header, load_s) = load_database(config, spec)?;
    let db_pages = header.page_count;
    let note = file.store().direct_io_fallback().unwrap_or("").to_string();
    let policy = AnyPolicy::new(config.buffer_pages, &config.policy);
    let bm = BufferManager::new(file, header, policy, config.buffer_pages)?;
    let tree = BTree::open(bm)?;
    tree.buffer().reset_stats();
    if let Some(path) = &config.record_trace {
        tree.buffer().start_recording(trace_writer(path)?)?;
    }

    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let first_error: Mutex<Option<WorkloadError>> = Mutex::new(None);
    let cpu_total = Mutex::new(0.0f64);
    let work = || {
        let cpu0 = thread_cpu_s();
        let mut value = vec![0u8; config.value_size];
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(txn) = txns.get(i) else { break };
            if let Err(e) = run_txn(&tree, config, txn, i as u64 + 1, &mut value) {
                stop.store(true, Ordering::Relaxed);
                first_error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                break;
            }
        }
        *cpu_total.lock().unwrap_or_else(|e| e.into_inner()) += thread_cpu_s() - cpu0;
    };
    let start = Instant::now();
    if config.workers == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..config.workers {
                s.spawn(work);
            }
        });
    }
    if let Some(e) = first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let cpu0 = thread_cpu_s();
    tree.flush()?;
    let cpu_s = cpu_total.into_inner().unwrap_or_else(|e| e.into_inner()) + thread_cpu_s() - cpu0;
    let wall_s = start.elapsed().as_secs_f64();
    let stats = tree.buffer().stats();
    let device = tree.buffer().device_stats();
    let log = tree.buffer().log_stats().unwrap_or_default();
    tree.buffer().stop_recording()?;
    let tree_height = tree.height() as u64;
    if config.verify {
        verify_records(&tree, config)?;
    }
    tree.close()?;

    let device_s = device.time_ns as f64 * 1e-9;
    let (time_model, time_s) = if spec.is_simulated() { ("wall+device", wall_s + device_s) } else { ("wall", wall_s) };
    let transactions = config.transactions();
    let per = |ns: u64, n: u64| if n == 0 { 0.0 } else { ns as f64 / n as f64 / 1e3 };
    Ok(WorkloadResult {
        policy: config.policy.label(),
        store: spec.label(),
        buffer_pages: config.buffer_pages as u64,
        records: config.records,
        page_size: config.page_size as u64,
        value_size: config.value_size as u64,
        workers: config.workers as u64,
        seed: config.seed,
        point_queries: config.point_queries,
        point_updates: config.point_updates,
        range_queries: config.range_queries,
        range_updates: config.range_updates,
        transactions,
        db_pages,
        tree_height,
        load_s,
        time_model: time_model.into(),
        time_s,
        wall_s,
        cpu_s,
        device_s,
        tps: if time_s > 0.0 { transactions as f64 / time_s } else { 0.0 },
        requests: stats.requests,
        hits: stats.hits,
        misses: stats.misses,
        hit_ratio: stats.hit_ratio(),
        page_reads: stats.page_reads(),
        fetches: stats.fetches,
        padding_reads: stats.padding_reads,
        page_flushes: stats.page_writes(),
        evict_writes: stats.evict_writes,
        padding_writes: stats.padding_writes,
        bypass_writes: stats.bypass_writes,
        flush_writes: stats.flush_writes,
        avg_flush_us: per(stats.write_time_ns, stats.page_writes()),
        avg_read_us: per(stats.read_time_ns, stats.page_reads()),
        flash_reads: device.flash_reads,
        flash_programs: device.flash_programs,
        erases: device.erases,
        page_copies: device.page_copies,
        merges_switch: device.merges_switch,
        merges_partial: device.merges_partial,
        merges_full: device.merges_full,
        write_amplification: device.write_amplification(),
        log_pages: config.log_pages,
        log_bytes: log.bytes,
        log_writes: log.page_writes,
        log_syncs: log.syncs,
        log_s: log.write_time_ns as f64 * 1e-9,
        checkpoints: log.space_checkpoints,
        checkpoint_writes: stats.checkpoint_writes,
        note,
    })
}

/// Runs one transaction (`version` = its index + 1, stamped into the values it writes).
pub fn run_txn<S: PageStore, P: crate::buffer::BufferPolicy>(
    tree: &BTree<S, P>,
    config: &WorkloadConfig,
    txn: &Txn,
    version: u64,
    value: &mut [u8],
) -> Result<(), WorkloadError> {
    match txn.kind {
        TxnKind::PointQuery => {
            if !tree.get(txn.key, value)? {
                return Err(WorkloadError::MissingKey(txn.key));
            }
        }
        TxnKind::PointUpdate => {
            fill_value(txn.key, version, value);
            if !tree.update(txn.key, value)? {
                return Err(WorkloadError::MissingKey(txn.key));
            }
        }
        TxnKind::RangeQuery => {
            let mut sum = 0u64;
            tree.scan(txn.key, config.range_len as usize, |_, v| {
                sum = sum.wrapping_add(v[0] as u64);
                true
            })?;
            std::hint::black_box(sum);
        }
        TxnKind::RangeUpdate => {
            tree.update_range(txn.key, config.range_len as usize, |k, v| fill_value(k, version, v))?;
        }
    }
    Ok(())
}

/// Reads every record and checks that its key is present and its value well-formed.
pub fn verify_records<S: PageStore, P: crate::buffer::BufferPolicy>(
    tree: &BTree<S, P>,
    config: &WorkloadConfig,
) -> Result<(), WorkloadError> {
    let mut expect = 0u64;
    let mut bad: Option<WorkloadError> = None;
    tree.scan(0, usize::MAX, |k, v| {
        if k as u64 != expect {
            bad = Some(WorkloadError::MissingKey(expect as u32));
            return false;
        }
        if value_version(k, v).is_none() {
            bad = Some(WorkloadError::BadValue { key: k });
            return false;
        }
        expect += 1;
        true
    })?;
    if let Some(e) = bad {
        return Err(e);
    }
    if expect != config.records {
        return Err(WorkloadError::MissingKey(expect as u32));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_intensity_keeps_the_totals_as_in_the_paper() {
        let c = WorkloadConfig::baseline("lru".parse().unwrap()).with_update_intensity(0.2).unwrap();
        assert_eq!(
            (c.point_queries, c.point_updates, c.range_queries, c.range_updates),
            (160_000, 40_000, 320, 80),
            "§4.4's example"
        );
        let c = c.with_scans(1000);
        assert_eq!((c.range_queries, c.range_updates), (800, 200));
        assert!(WorkloadConfig::baseline("lru".parse().unwrap()).with_update_intensity(1.5).is_err());
    }

    #[test]
    fn transactions_are_deterministic_mixed_and_skewed() {
        let mut c = WorkloadConfig::baseline("lru".parse().unwrap());
        c.records = 100_000;
        let a = transactions(&c).unwrap();
        assert_eq!(a, transactions(&c).unwrap());
        assert_eq!(a.len(), 200_400);
        let count = |k: TxnKind| a.iter().filter(|t| t.kind == k).count();
        assert_eq!(
            (
                count(TxnKind::PointQuery),
                count(TxnKind::PointUpdate),
                count(TxnKind::RangeQuery),
                count(TxnKind::RangeUpdate)
            ),
            (100_000, 100_000, 200, 200)
        );
        // Mixed: the first thousand transactions hold both point kinds in similar numbers.
        let updates = a[..1000].iter().filter(|t| t.kind == TxnKind::PointUpdate).count();
        assert!((400..600).contains(&updates), "{updates}");
        // 80-20: about 80% of the point keys fall in the lowest 20% of the key space.
        let points: Vec<u32> =
            a.iter().filter(|t| matches!(t.kind, TxnKind::PointQuery | TxnKind::PointUpdate)).map(|t| t.key).collect();
        let hot = points.iter().filter(|&&k| k < 20_000).count() as f64 / points.len() as f64;
        assert!((0.79..0.81).contains(&hot), "{hot}");
        // Range starts are uniform and leave room for a whole range.
        let starts: Vec<u32> =
            a.iter().filter(|t| matches!(t.kind, TxnKind::RangeQuery | TxnKind::RangeUpdate)).map(|t| t.key).collect();
        assert!(starts.iter().all(|&s| s as u64 + 256 <= c.records));
        let low = starts.iter().filter(|&&s| s < 50_000).count();
        assert!((150..250).contains(&low), "{low}");
        // Another seed, another order.
        c.seed = 7;
        assert_ne!(a, transactions(&c).unwrap());
    }

    #[test]
    fn values_identify_key_and_version() {
        let mut v = vec![0u8; 256];
        fill_value(77, 12345, &mut v);
        assert_eq!(value_version(77, &v), Some(12345));
        assert_eq!(value_version(78, &v), None);
        v[200] ^= 1;
        assert_eq!(value_version(77, &v), None);
        let mut small = vec![0u8; 6];
        fill_value(3, 1, &mut small);
        assert_eq!(value_version(3, &small), Some(1));
    }

    #[test]
    fn window_parameter_is_found_by_policy() {
        let p = with_window(&"cflru".parse().unwrap(), 0.25).unwrap();
        assert_eq!(p.label(), "cflru:w=0.25");
        assert!(with_window(&"lru".parse().unwrap(), 0.25).is_err());
    }
}
