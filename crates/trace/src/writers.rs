//! Trace writers: flashbuf text, flashbuf binary (`.fbt`) and libCacheSim oracleGeneral.
//!
//! Every writer writes to a temporary file in the target's directory and renames it into place
//! only in `finish()` ([`crate::output`]): dropping a writer without finishing removes the
//! temporary file, so a failed run leaves no half-written trace behind. An existing target is
//! refused unless `overwrite` is set, and only a regular file is ever replaced.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use rustc_hash::FxHashMap;

use crate::formats::{BINARY_MAGIC, BINARY_VERSION, Format, ORACLE_RECORD_BYTES, TEXT_HEADER, encode_record};
use crate::output::AtomicFile;
use crate::{Request, TraceError, TraceSource};

/// Bytes buffered before a write to the file.
const FLUSH_BYTES: usize = 1 << 20;

/// Records per block of the binary writer (the reader accepts up to
/// [`crate::formats::MAX_BLOCK_RECORDS`]).
const BINARY_BLOCK_RECORDS: u32 = 4096;

/// A sink of requests that becomes a trace file on [`TraceWriter::finish`].
pub trait TraceWriter: Send {
    /// Appends `requests`.
    fn write_batch(&mut self, requests: &[Request]) -> Result<(), TraceError>;

    /// Completes the file and moves it into place; returns the number of requests written.
    fn finish(self: Box<Self>) -> Result<u64, TraceError>;
}

/// A writer for `format` (`text`, `binary` or `oracle`) creating `path`.
pub fn create_writer(format: Format, path: &Path, overwrite: bool) -> Result<Box<dyn TraceWriter>, TraceError> {
    Ok(match format {
        Format::Text => Box::new(TextWriter::create(path, overwrite)?),
        Format::Binary => Box::new(BinaryWriter::create(path, overwrite)?),
        Format::Oracle => Box::new(OracleWriter::create(path, overwrite, 4096)?),
        other => {
            return Err(TraceError::Format(format!(
                "cannot write the {other} format; writable formats: text, binary, oracle"
            )));
        }
    })
}

/// Copies every request of `source` to `writer` (which the caller then finishes); returns the
/// number of requests copied.
pub fn copy_trace(source: &mut dyn TraceSource, writer: &mut dyn TraceWriter) -> Result<u64, TraceError> {
    let mut batch = Vec::with_capacity(1 << 16);
    let mut n = 0u64;
    while source.next_batch(&mut batch, 1 << 16)? > 0 {
        writer.write_batch(&batch)?;
        n += batch.len() as u64;
    }
    Ok(n)
}

/// A temporary file that becomes `target` on commit ([`crate::output::AtomicFile`]), with a
/// write buffer.
struct OutputFile {
    file: AtomicFile,
    buf: Vec<u8>,
}

impl OutputFile {
    fn create(target: &Path, overwrite: bool) -> Result<Self, TraceError> {
        let file = AtomicFile::create(target, overwrite).map_err(|m| TraceError::Io {
            path: target.display().to_string(),
            source: io::Error::new(io::ErrorKind::AlreadyExists, m),
        })?;
        Ok(OutputFile { file, buf: Vec::with_capacity(FLUSH_BYTES + 4096) })
    }

    fn io_error(&self, source: io::Error) -> TraceError {
        TraceError::Io { path: self.file.dest().display().to_string(), source }
    }

    fn file(&mut self) -> &mut File {
        self.file.file()
    }

    #[inline]
    fn maybe_flush(&mut self) -> Result<(), TraceError> {
        if self.buf.len() >= FLUSH_BYTES { self.flush() } else { Ok(()) }
    }

    fn flush(&mut self) -> Result<(), TraceError> {
        let buf = std::mem::take(&mut self.buf);
        let result = self.file().write_all(&buf);
        self.buf = buf;
        self.buf.clear();
        result.map_err(|e| self.io_error(e))
    }

    fn commit(mut self) -> Result<(), TraceError> {
        self.flush()?;
        let dest = self.file.dest().display().to_string();
        self.file.commit().map_err(|m| TraceError::Io { path: dest, source: io::Error::other(m) })
    }
}

/// Appends the decimal digits of `v`.
#[inline]
fn push_decimal(buf: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// Writes the flashbuf text format ([`crate::formats`] `text`): the header, then `R <page>` or
/// `W <page> <time_us>` per request.
pub struct TextWriter {
    out: OutputFile,
    count: u64,
}

impl TextWriter {
    /// Creates `path` (see the module documentation for `overwrite`).
    pub fn create(path: &Path, overwrite: bool) -> Result<Self, TraceError> {
        let mut out = OutputFile::create(path, overwrite)?;
        out.buf.extend_from_slice(TEXT_HEADER.as_bytes());
        out.buf.push(b'\n');
        Ok(TextWriter { out, count: 0 })
    }

    /// Appends one request.
    #[inline]
    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        let buf = &mut self.out.buf;
        buf.push(r.kind.letter() as u8);
        buf.push(b' ');
        push_decimal(buf, r.page);
        if let Some(t) = r.time_us {
            buf.push(b' ');
            push_decimal(buf, t);
        }
        buf.push(b'\n');
        self.count += 1;
        self.out.maybe_flush()
    }

    /// Completes the file; returns the number of requests written.
    pub fn finish(self) -> Result<u64, TraceError> {
        self.out.commit()?;
        Ok(self.count)
    }
}

impl TraceWriter for TextWriter {
    fn write_batch(&mut self, requests: &[Request]) -> Result<(), TraceError> {
        requests.iter().try_for_each(|r| self.write(r))
    }

    fn finish(self: Box<Self>) -> Result<u64, TraceError> {
        TextWriter::finish(*self)
    }
}

/// Writes the flashbuf binary format (layout in [`crate::formats`] `binary`).
pub struct BinaryWriter {
    out: OutputFile,
    crc: u32,
    block: Vec<u8>,
    block_records: u32,
    prev_page: u64,
    prev_time: u64,
    count: u64,
}

impl BinaryWriter {
    /// Creates `path` (see the module documentation for `overwrite`).
    pub fn create(path: &Path, overwrite: bool) -> Result<Self, TraceError> {
        let mut w = BinaryWriter {
            out: OutputFile::create(path, overwrite)?,
            crc: 0,
            block: Vec::with_capacity(BINARY_BLOCK_RECORDS as usize * 4),
            block_records: 0,
            prev_page: 0,
            prev_time: 0,
            count: 0,
        };
        let mut header = [0u8; 16];
        header[..8].copy_from_slice(&BINARY_MAGIC);
        header[8..12].copy_from_slice(&BINARY_VERSION.to_le_bytes());
        w.emit(&header);
        Ok(w)
    }

    fn emit(&mut self, bytes: &[u8]) {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.out.buf.extend_from_slice(bytes);
    }

    fn flush_block(&mut self) -> Result<(), TraceError> {
        if self.block_records == 0 {
            return Ok(());
        }
        let mut head = [0u8; 8];
        head[..4].copy_from_slice(&self.block_records.to_le_bytes());
        head[4..].copy_from_slice(&(self.block.len() as u32).to_le_bytes());
        self.emit(&head);
        let block = std::mem::take(&mut self.block);
        self.emit(&block);
        self.block = block;
        self.block.clear();
        self.block_records = 0;
        self.out.maybe_flush()
    }

    /// Appends one request.
    #[inline]
    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        encode_record(&mut self.block, &mut self.prev_page, &mut self.prev_time, r);
        self.block_records += 1;
        self.count += 1;
        if self.block_records == BINARY_BLOCK_RECORDS { self.flush_block() } else { Ok(()) }
    }

    /// Completes the file (end marker, count, CRC); returns the number of requests written.
    pub fn finish(mut self) -> Result<u64, TraceError> {
        self.flush_block()?;
        self.emit(&0u32.to_le_bytes());
        let count = self.count;
        self.emit(&count.to_le_bytes());
        let crc = self.crc;
        self.out.buf.extend_from_slice(&crc.to_le_bytes());
        self.out.commit()?;
        Ok(count)
    }
}

impl TraceWriter for BinaryWriter {
    fn write_batch(&mut self, requests: &[Request]) -> Result<(), TraceError> {
        requests.iter().try_for_each(|r| self.write(r))
    }

    fn finish(self: Box<Self>) -> Result<u64, TraceError> {
        BinaryWriter::finish(*self)
    }
}

/// Writes libCacheSim's oracleGeneral format (layout in [`crate::formats`] `oracle`), for
/// running the same trace through libCacheSim.
///
/// `clock_time` is the request's time in whole seconds (0 without a timestamp, saturating at
/// `u32::MAX`), `obj_id` the page, `obj_size` the given page size in bytes, and
/// `next_access_vtime` the 1-based index of the next request to the same page, or −1 when there
/// is none (libCacheSim's `traceConv` convention). Computing it needs the future: records are
/// written as they come with −1, then `finish` walks the file backwards, chunk by chunk, and
/// fills the field in with a map of the distinct pages (memory: 16 bytes per distinct page, never
/// per request). Access kinds are not stored: the format has no operation.
pub struct OracleWriter {
    out: OutputFile,
    obj_size: u32,
    count: u64,
}

impl OracleWriter {
    /// Creates `path`; every record gets `obj_size_bytes` as its size.
    pub fn create(path: &Path, overwrite: bool, obj_size_bytes: u32) -> Result<Self, TraceError> {
        Ok(OracleWriter { out: OutputFile::create(path, overwrite)?, obj_size: obj_size_bytes, count: 0 })
    }

    /// Appends one request.
    #[inline]
    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        let clock = r.time_us.map_or(0, |t| u32::try_from(t / 1_000_000).unwrap_or(u32::MAX));
        let mut record = [0u8; ORACLE_RECORD_BYTES];
        record[0..4].copy_from_slice(&clock.to_le_bytes());
        record[4..12].copy_from_slice(&r.page.to_le_bytes());
        record[12..16].copy_from_slice(&self.obj_size.to_le_bytes());
        record[16..24].copy_from_slice(&(-1i64).to_le_bytes());
        self.out.buf.extend_from_slice(&record);
        self.count += 1;
        self.out.maybe_flush()
    }

    /// Fills in the next-access indices (a backward pass over the file), completes the file;
    /// returns the number of requests.
    pub fn finish(mut self) -> Result<u64, TraceError> {
        use std::io::{Read, Seek, SeekFrom};
        self.out.flush()?;
        let n = self.count;
        let chunk_records: u64 = 1 << 16;
        let mut chunk = vec![0u8; chunk_records as usize * ORACLE_RECORD_BYTES];
        let mut last_seen: FxHashMap<u64, u64> = FxHashMap::default();
        let mut end = n;
        while end > 0 {
            let start = end.saturating_sub(chunk_records);
            let bytes = &mut chunk[..(end - start) as usize * ORACLE_RECORD_BYTES];
            let offset = start * ORACLE_RECORD_BYTES as u64;
            let file = self.out.file();
            let io = file.seek(SeekFrom::Start(offset)).and_then(|_| file.read_exact(bytes));
            io.map_err(|e| self.out.io_error(e))?;
            for i in (0..(end - start) as usize).rev() {
                let rec = &mut bytes[i * ORACLE_RECORD_BYTES..(i + 1) * ORACLE_RECORD_BYTES];
                let page = u64::from_le_bytes(rec[4..12].try_into().expect("8 bytes"));
                let index = start + i as u64;
                let next = last_seen.insert(page, index).map_or(-1, |j| j as i64 + 1);
                rec[16..24].copy_from_slice(&next.to_le_bytes());
            }
            let file = self.out.file();
            let io = file.seek(SeekFrom::Start(offset)).and_then(|_| file.write_all(bytes));
            io.map_err(|e| self.out.io_error(e))?;
            end = start;
        }
        let file = self.out.file();
        file.seek(SeekFrom::End(0)).map_err(|e| self.out.io_error(e))?;
        self.out.commit()?;
        Ok(n)
    }
}

impl TraceWriter for OracleWriter {
    fn write_batch(&mut self, requests: &[Request]) -> Result<(), TraceError> {
        requests.iter().try_for_each(|r| self.write(r))
    }

    fn finish(self: Box<Self>) -> Result<u64, TraceError> {
        OracleWriter::finish(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits() {
        for v in [0u64, 7, 10, 99, 1234567890, u64::MAX] {
            let mut b = Vec::new();
            push_decimal(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
    }
}
