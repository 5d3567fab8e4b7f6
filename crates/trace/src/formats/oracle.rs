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

use std::io::{self, Read};

use crate::{AccessKind, Request, TraceError, TraceSource};

/// Size of one oracleGeneral record in bytes.
pub const ORACLE_RECORD_BYTES: usize = 24;

const CHUNK_RECORDS: usize = 1 << 16;

/// Streaming reader of oracleGeneral records.
pub struct OracleReader<R> {
    inner: R,
    path: String,
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
            buf: vec![0; CHUNK_RECORDS * ORACLE_RECORD_BYTES],
            start: 0,
            end: 0,
            eof: false,
            done: false,
            records: 0,
            first_clock: None,
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

impl<R: Read + Send> TraceSource for OracleReader<R> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        while out.len() < max && !self.done {
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
            let n = available.min(max - out.len());
            let bytes = &self.buf[self.start..self.start + n * ORACLE_RECORD_BYTES];
            let t0 =
                *self.first_clock.get_or_insert_with(|| u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
            out.extend(bytes.chunks_exact(ORACLE_RECORD_BYTES).map(|r| {
                let clock = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
                let page = u64::from_le_bytes([r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]]);
                Request { page, kind: AccessKind::Read, time_us: Some(u64::from(clock.saturating_sub(t0)) * 1_000_000) }
            }));
            self.start += n * ORACLE_RECORD_BYTES;
            self.records += n as u64;
        }
        Ok(out.len())
    }
}
