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
//! bus error), as for any memory-mapped input.

use std::fs::File;
use std::io::{self, Read};

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
}

/// Streaming reader of oracleGeneral records.
pub struct OracleReader<R> {
    inner: R,
    path: String,
    /// The whole input when it is memory-mapped (`buf` is then unused and `eof` set).
    mapped: Option<Mapped>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    done: bool,
    records: u64,
    first_clock: Option<u32>,
}

impl<R: Read + Send> OracleReader<R> {
    /// Reads records from `inner`; `path` names the input in errors.
    pub fn new(inner: R, path: &str) -> Self {
        OracleReader {
            inner,
            path: path.to_string(),
            mapped: None,
            buf: vec![0; CHUNK_RECORDS * ORACLE_RECORD_BYTES],
            start: 0,
            end: 0,
            eof: false,
            done: false,
            records: 0,
            first_clock: None,
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
            mapped: Some(map),
            buf: Vec::new(),
            start: 0,
            end,
            eof: true,
            done: false,
            records: 0,
            first_clock: None,
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
        keep: impl Fn(u64) -> bool,
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
            let start = self.start;
            let t0 = match self.first_clock {
                Some(t) => t,
                None => {
                    let b = &self.bytes()[start..start + 4];
                    *self.first_clock.insert(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                }
            };
            let bytes = &self.bytes()[start..start + n * ORACLE_RECORD_BYTES];
            for r in bytes.chunks_exact(ORACLE_RECORD_BYTES) {
                let page = u64::from_le_bytes([r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]]);
                if keep(page) {
                    let clock = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
                    let time_us = Some(u64::from(clock.saturating_sub(t0)) * 1_000_000);
                    out.push(Request { page, kind: AccessKind::Read, time_us });
                }
            }
            self.start += n * ORACLE_RECORD_BYTES;
            self.records += n as u64;
            read += n;
        }
        Ok(read)
    }
}

impl<R: Read + Send> TraceSource for OracleReader<R> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        out.reserve(max);
        self.read_records(out, max, |_| true)
    }

    /// Every record is a read; a dropped one costs the load of its page and a hash.
    fn next_sampled(
        &mut self,
        out: &mut Vec<Request>,
        max: usize,
        sampler: &BlockSampler,
    ) -> Result<Scanned, TraceError> {
        out.clear();
        let requests = self.read_records(out, max, |page| sampler.keeps(page))? as u64;
        Ok(Scanned { requests, writes: 0 })
    }
}
