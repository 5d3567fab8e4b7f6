//! libCacheSim's `oracleGeneral` binary traces: packed little-endian records of 24 bytes,
//!
//! | bytes | field | use |
//! | --- | --- | --- |
//! | 0..4 | `u32 clock_time` | seconds; `time_us` = (clock − first clock) · 10^6 (0 if earlier) |
//! | 4..12 | `u64 obj_id` | the page number |
//! | 12..16 | `u32 obj_size` | not used |
//! | 16..24 | `i64 next_access_vtime` | not used by the reader (1-based index of the next request to the same object, −1 if none) |
//!
//! Every request is a read (the format has no operation). The reader decodes whole buffers of
//! records with `from_le_bytes`; a file whose length is not a multiple of 24 ends with a
//! truncated record, reported as an error naming that record.
//!
//! A regular uncompressed file is memory-mapped ([`OracleReader::mapped`], chosen by
//! [`crate::formats::open_path`]) and decoded in place: these files are large (24 bytes a
//! request: 240 MB for 10 million) and copying them through `read` was a tenth of a simulation's
//! time. The file must not be truncated while it is read (reading the lost pages would be a
//! bus error), as for any memory-mapped input. The reader unmaps what it has read behind it, a
//! megabyte at a time. Reading such a file costs the kernel's mapping of its pages (page faults,
//! then unmapping) about as much as the memory traffic of the scan itself; decoding is cheap.
//!
//! A *sampled* read ([`TraceSource::next_sampled`]) of a mapped file tests each record's page
//! against the sampler's cached decisions ([`SampleCache`]) and builds only the kept requests.
//! When the reads are large (at least 4,096 records) and the file holds at least four of them,
//! a second thread scans ahead: while the caller scans one read's range, the thread scans the
//! next one's, and the results are handed out in order, identical to a serial read. That halves
//! the wall time of the scan when a second core is free, not its CPU time.

use std::fs::File;
use std::io::{self, Read};
use std::sync::{Arc, mpsc};

use crate::sample::SampleCache;
use crate::{AccessKind, BlockSampler, Request, Scanned, TraceError, TraceSource};

/// Size of one oracleGeneral record in bytes.
pub const ORACLE_RECORD_BYTES: usize = 24;

/// Records read from the input at a time: 96 KiB, which stays in the core's cache between the
/// copy into the buffer and the decoding (a larger buffer only sends its lines to memory and
/// back).
const CHUNK_RECORDS: usize = 1 << 12;

/// A read-only memory map of a whole file (memmap2), unmapped when dropped.
pub(crate) struct Mapped(memmap2::Mmap);

impl Mapped {
    /// Maps `file` (a regular, non-empty file), or `None` when it cannot be mapped (the caller
    /// then reads it).
    pub(crate) fn of(file: &File) -> Option<Mapped> {
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() == 0 {
            return None;
        }
        // SAFETY: a private read-only mapping of an open regular file. Its contents may change
        // only if another process writes or truncates the file while it is read, which the
        // module documentation states as the condition of reading it mapped.
        let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
        // Read front to back, once: let the kernel read ahead.
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        Some(Mapped(map))
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// Unmaps the pages of `start..end` from the process (the file and its page cache are left
    /// alone). `start` and `end` are multiples of [`RELEASE_BYTES`], so whole pages.
    fn release(&self, start: usize, end: usize) {
        debug_assert!(start.is_multiple_of(RELEASE_BYTES) && end.is_multiple_of(RELEASE_BYTES));
        // SAFETY: a private, read-only mapping of a file holds no page of its own: after
        // MADV_DONTNEED a read of these pages faults the file's bytes in again, the same bytes
        // (the module's condition). The reader never reads behind its position anyway.
        #[cfg(unix)]
        let _ = unsafe { self.0.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
    }
}

/// The mapped reader unmaps the pages it has read behind it in steps of this many bytes (a
/// multiple of any page size). Unmapping them while their page-table entries and page
/// descriptors are still in cache, rather than all 240 MB of a 10-million-request file at the
/// end, cost 10% less CPU for a sampled read of such a file (0.046 -> 0.041 s).
const RELEASE_BYTES: usize = 1 << 20;

/// Streaming reader of oracleGeneral records.
pub struct OracleReader<R> {
    inner: R,
    path: String,
    /// The whole input when it is memory-mapped (`buf` is then unused and `eof` set).
    mapped: Option<Arc<Mapped>>,
    /// Bytes of the mapping released so far ([`Mapped::release`]).
    released: usize,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    done: bool,
    records: u64,
    first_clock: Option<u32>,
    /// The decisions of the last sampler [`TraceSource::next_sampled`] was given.
    cache: Option<SampleCache>,
    /// The thread scanning ahead for sampled reads of a mapped file.
    ahead: Option<Ahead>,
}

impl<R: Read + Send> OracleReader<R> {
    /// Reads records from `inner`; `path` names the input in errors.
    pub fn new(inner: R, path: &str) -> Self {
        OracleReader {
            inner,
            path: path.to_string(),
            mapped: None,
            released: 0,
            buf: vec![0; CHUNK_RECORDS * ORACLE_RECORD_BYTES],
            start: 0,
            end: 0,
            eof: false,
            done: false,
            records: 0,
            first_clock: None,
            cache: None,
            ahead: None,
        }
    }

    /// The bytes `start..end` index.
    #[inline]
    fn bytes(&self) -> &[u8] {
        match &self.mapped {
            Some(m) => m.bytes(),
            None => &self.buf,
        }
    }

    fn refill(&mut self) -> Result<(), TraceError> {
        let left = self.end - self.start;
        self.buf.copy_within(self.start..self.end, 0);
        self.start = 0;
        self.end = left;
        while self.end < self.buf.len() {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    self.done = true;
                    return Err(TraceError::Io { path: self.path.clone(), source });
                }
            }
        }
        Ok(())
    }
}

impl OracleReader<io::Empty> {
    /// Reads the records of a memory-mapped file (see the module documentation); `path` names
    /// it in errors. Records and errors are those [`OracleReader::new`] gives for the same bytes.
    pub(crate) fn mapped(map: Mapped, path: &str) -> Self {
        let end = map.bytes().len();
        OracleReader {
            inner: io::empty(),
            path: path.to_string(),
            mapped: Some(Arc::new(map)),
            released: 0,
            buf: Vec::new(),
            start: 0,
            end,
            eof: true,
            done: false,
            records: 0,
            first_clock: None,
            cache: None,
            ahead: None,
        }
    }
}

impl<R: Read + Send> OracleReader<R> {
    /// Reads up to `max` records, appending to `out` the requests of those whose page `keep`
    /// accepts; returns the records read. The one decoding loop of both reads.
    #[inline]
    fn read_records(
        &mut self,
        out: &mut Vec<Request>,
        max: usize,
        mut keep: impl FnMut(u64) -> bool,
    ) -> Result<usize, TraceError> {
        let mut read = 0;
        while read < max && !self.done {
            let available = (self.end - self.start) / ORACLE_RECORD_BYTES;
            if available == 0 {
                if self.eof {
                    self.done = true;
                    let partial = self.end - self.start;
                    if partial > 0 {
                        return Err(TraceError::Parse {
                            path: self.path.clone(),
                            line: self.records + 1,
                            message: format!(
                                "truncated record: {partial} of {ORACLE_RECORD_BYTES} bytes at the end of the file"
                            ),
                        });
                    }
                    break;
                }
                self.refill()?;
                continue;
            }
            let n = available.min(max - read);
            let t0 = self.first_clock();
            let start = self.start;
            decode(&self.bytes()[start..start + n * ORACLE_RECORD_BYTES], t0, out, &mut keep);
            self.advance(n);
            read += n;
        }
        Ok(read)
    }

    /// The clock of the first record (there must be one at `start` if none was read).
    fn first_clock(&mut self) -> u32 {
        match self.first_clock {
            Some(t) => t,
            None => {
                let b = &self.bytes()[self.start..self.start + 4];
                *self.first_clock.insert(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
        }
    }

    /// Moves past `n` records, unmapping whole steps of the mapping behind them.
    fn advance(&mut self, n: usize) {
        self.start += n * ORACLE_RECORD_BYTES;
        self.records += n as u64;
        if let Some(map) = &self.mapped {
            let behind = self.start / RELEASE_BYTES * RELEASE_BYTES;
            if behind > self.released {
                map.release(self.released, behind);
                self.released = behind;
            }
        }
    }

    /// The sampled read of `max` records from a mapped file with the thread scanning ahead
    /// ([`Ahead`]), or `None` when this read is the caller's to do. The thread scans every other
    /// read's range (the one after the next) while the caller scans the next one, so the two
    /// halves of the file are scanned at once and handed out in order.
    fn sampled_ahead(&mut self, out: &mut Vec<Request>, max: usize, sampler: &BlockSampler) -> Option<usize> {
        let map = self.mapped.as_ref()?;
        let left = (self.end - self.start) / ORACLE_RECORD_BYTES;
        let n = left.min(max);
        if self.ahead.is_none() {
            if max < AHEAD_MIN_RECORDS || left < 4 * max {
                return None;
            }
            self.ahead = Some(Ahead::spawn(Arc::clone(map))?);
        }
        let mut ahead = self.ahead.take()?;
        let t0 = if n > 0 { self.first_clock() } else { 0 };
        let taken = match &ahead.pending {
            Some(p) if (p.start, p.records) == (self.start, n) && p.sampler == *sampler => ahead.take(out),
            // The next read's range: the caller's to scan now, the thread's result stays.
            Some(p) if p.start == self.start + n * ORACLE_RECORD_BYTES && p.sampler == *sampler => None,
            Some(_) => {
                ahead.discard();
                None
            }
            None => None,
        };
        let first = if taken.is_some() {
            // Skip the next read's range: the caller scans it while the thread scans the one after.
            self.advance(n);
            self.start + left.saturating_sub(n).min(max) * ORACLE_RECORD_BYTES
        } else {
            self.start + n * ORACLE_RECORD_BYTES
        };
        if ahead.pending.is_none() && max >= AHEAD_MIN_RECORDS {
            let records = ((self.end - first) / ORACLE_RECORD_BYTES).min(max);
            if records > 0 {
                ahead.send(first, records, t0, sampler);
            }
        }
        self.ahead = Some(ahead);
        taken.map(|()| n)
    }
}

/// Appends to `out` the requests of the records of `bytes` whose page `keep` accepts: the one
/// decoding loop of every read. `t0` is the first record's clock.
#[inline]
fn decode(bytes: &[u8], t0: u32, out: &mut Vec<Request>, mut keep: impl FnMut(u64) -> bool) {
    for r in bytes.chunks_exact(ORACLE_RECORD_BYTES) {
        let page = u64::from_le_bytes([r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]]);
        if keep(page) {
            let clock = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
            let time_us = Some(u64::from(clock.saturating_sub(t0)) * 1_000_000);
            out.push(Request { page, kind: AccessKind::Read, time_us });
        }
    }
}

/// Sampled reads of at most this many records are not scanned ahead (the hand-over between the
/// threads would cost more than it saves).
const AHEAD_MIN_RECORDS: usize = 1 << 12;

/// A range of a mapped file for the thread to scan.
struct Job {
    start: usize,
    records: usize,
    t0: u32,
    sampler: BlockSampler,
    /// Where to put the kept requests (a buffer handed back by the caller, reused).
    out: Vec<Request>,
}

/// The range sent to the thread and not yet taken.
struct Pending {
    start: usize,
    records: usize,
    sampler: BlockSampler,
}

/// A thread that scans a mapped oracleGeneral file ahead of a sampled read: while the caller
/// scans (and uses) one range of records, the thread scans the one after it, so that the scan
/// of the file — bound by memory and by the kernel's mapping of the file's pages, not by the
/// decoding — runs on two cores. One range at a time is in flight, so its memory is that of one
/// read's kept requests. The results are the serial read's: each range is decoded by the same
/// loop with the same sampler's decisions, and handed out in order.
struct Ahead {
    jobs: Option<mpsc::SyncSender<Job>>,
    done: mpsc::Receiver<Vec<Request>>,
    thread: Option<std::thread::JoinHandle<()>>,
    pending: Option<Pending>,
    /// A buffer to send with the next job.
    spare: Vec<Request>,
}

impl Ahead {
    /// Starts the thread, or `None` on a single core or when it cannot be started.
    fn spawn(map: Arc<Mapped>) -> Option<Ahead> {
        if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
            return None;
        }
        let (jobs, inbox) = mpsc::sync_channel::<Job>(1);
        let (outbox, done) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("flashbuf-trace-ahead".into())
            .spawn(move || {
                let mut cache: Option<SampleCache> = None;
                while let Ok(mut job) = inbox.recv() {
                    let mut c = match cache.take() {
                        Some(c) if *c.sampler() == job.sampler => c,
                        _ => SampleCache::new(job.sampler.clone()),
                    };
                    let (mut missed, end) = (0, job.start + job.records * ORACLE_RECORD_BYTES);
                    job.out.clear();
                    decode(&map.bytes()[job.start..end], job.t0, &mut job.out, |page| c.keeps(page, &mut missed));
                    c.update(job.records as u64, missed);
                    cache = Some(c);
                    let (a, b) = (job.start.next_multiple_of(RELEASE_BYTES), end / RELEASE_BYTES * RELEASE_BYTES);
                    if b > a {
                        map.release(a, b);
                    }
                    if outbox.send(job.out).is_err() {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Ahead { jobs: Some(jobs), done, thread: Some(thread), pending: None, spare: Vec::new() })
    }

    fn send(&mut self, start: usize, records: usize, t0: u32, sampler: &BlockSampler) {
        let out = std::mem::take(&mut self.spare);
        let job = Job { start, records, t0, sampler: sampler.clone(), out };
        if self.jobs.as_ref().is_some_and(|j| j.send(job).is_ok()) {
            self.pending = Some(Pending { start, records, sampler: sampler.clone() });
        }
    }

    /// Puts the pending range's kept requests in `out` (`None` if the thread is gone).
    fn take(&mut self, out: &mut Vec<Request>) -> Option<()> {
        self.pending = None;
        let mut got = self.done.recv().ok()?;
        std::mem::swap(out, &mut got);
        self.spare = got;
        Some(())
    }

    /// Drops the pending range's result.
    fn discard(&mut self) {
        if self.pending.take().is_some()
            && let Ok(v) = self.done.recv()
        {
            self.spare = v;
        }
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop once it has finished its range.
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl<R: Read + Send> TraceSource for OracleReader<R> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        out.reserve(max);
        if let Some(a) = &mut self.ahead {
            a.discard();
        }
        self.read_records(out, max, |_| true)
    }

    /// Every record is a read; a dropped one costs the load of its page and a bit test (the
    /// sampler's decisions are cached, [`SampleCache`]).
    fn next_sampled(
        &mut self,
        out: &mut Vec<Request>,
        max: usize,
        sampler: &BlockSampler,
    ) -> Result<Scanned, TraceError> {
        out.clear();
        if let Some(n) = self.sampled_ahead(out, max, sampler) {
            return Ok(Scanned { requests: n as u64, writes: 0 });
        }
        let mut cache = match self.cache.take() {
            Some(c) if c.sampler() == sampler => c,
            _ => SampleCache::new(sampler.clone()),
        };
        let mut missed = 0;
        let read = self.read_records(out, max, |page| cache.keeps(page, &mut missed));
        if let Ok(n) = read {
            cache.update(n as u64, missed);
        }
        self.cache = Some(cache);
        Ok(Scanned { requests: read? as u64, writes: 0 })
    }
}
