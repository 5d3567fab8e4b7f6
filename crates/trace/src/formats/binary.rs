//! The flashbuf compact binary trace (`.fbt`), version 1: a few bytes per request, fast to
//! decode, and checked end to end so that truncation and corruption are detected.
//!
//! # Layout
//!
//! All fixed-width integers are little-endian.
//!
//! ```text
//! offset  size  field
//! 0       8     magic: 89 46 42 54 0D 0A 1A 0A  ("\x89FBT\r\n\x1a\n": a non-ASCII first byte and
//!               a CR LF pair, so a transfer in text mode is caught, as in PNG)
//! 8       4     u32 version = 1
//! 12      4     u32 flags = 0 (reserved; a reader refuses other values)
//! 16      ...   blocks, each:
//!                 u32 record_count   (1 ..= 65,536)
//!                 u32 payload_bytes  (record_count ..= 20 · record_count)
//!                 payload            (record_count records, exactly payload_bytes bytes)
//! then    4     u32 0               (end marker: a block with no record)
//!         8     u64 total number of records
//!         4     u32 CRC-32C (Castagnoli) of every byte before it, from the magic on
//! ```
//!
//! Nothing may follow the CRC.
//!
//! # Records
//!
//! Each record starts with the page as a delta from the previous record's page (the first is
//! relative to page 0), `delta = page − previous` in wrapping 64-bit arithmetic read as signed,
//! zigzag-encoded (`z = (delta << 1) ^ (delta >> 63)`, so small forward and backward steps are
//! small numbers), and stored as a varint whose first byte also carries two flags:
//!
//! ```text
//! first byte:  bit 0    kind: 0 read, 1 write
//!              bit 1    1 if a timestamp follows
//!              bits 2-6 the low 5 bits of z
//!              bit 7    1 if more bytes of z follow
//! next bytes:  LEB128 of z >> 5: 7 bits each, least significant first, bit 7 = more follow;
//!              at most 9 bytes, the 9th carrying the top 3 bits of z (value ≤ 7, no bit 7)
//! ```
//!
//! If bit 1 is set, the timestamp follows as the LEB128 (at most 10 bytes, the 10th ≤ 1) of the
//! zigzag-encoded wrapping difference from the previous timestamp in the file (the first is
//! relative to 0). Timestamps are microseconds, as in [`crate::Request`]. A record takes 1 to
//! 20 bytes; a Zipf trace over 50,000 pages takes about 3 bytes per request without
//! timestamps.
//!
//! The reader streams: records are returned as blocks are decoded, so corruption inside a
//! block's varints is reported where it breaks the structure, and any other corruption when the
//! CRC is checked at the end of the file — a consumer that needs certainty reads to the end
//! before trusting the results (the simulator does, as it runs whole traces).

use std::io::{self, Read};

use crate::{AccessKind, Request, TraceError, TraceSource};

/// The first eight bytes of every `.fbt` file.
pub const BINARY_MAGIC: [u8; 8] = [0x89, b'F', b'B', b'T', b'\r', b'\n', 0x1a, b'\n'];

/// The version this crate writes and reads.
pub const BINARY_VERSION: u32 = 1;

/// Most records in one block.
pub const MAX_BLOCK_RECORDS: u32 = 1 << 16;

/// Longest encoding of one record (10 bytes of page, 10 of time).
pub const MAX_RECORD_BYTES: u32 = 20;

#[inline]
pub(crate) fn zigzag(v: u64) -> u64 {
    let s = v as i64;
    ((s << 1) ^ (s >> 63)) as u64
}

#[inline]
pub(crate) fn unzigzag(z: u64) -> u64 {
    (z >> 1) ^ (z & 1).wrapping_neg()
}

/// Appends one record (see the module documentation).
#[inline]
pub(crate) fn encode_record(out: &mut Vec<u8>, prev_page: &mut u64, prev_time: &mut u64, r: &Request) {
    let z = zigzag(r.page.wrapping_sub(*prev_page));
    *prev_page = r.page;
    let mut first = u8::from(r.kind.is_write()) | (u8::from(r.time_us.is_some()) << 1) | (((z & 0x1f) as u8) << 2);
    let mut rest = z >> 5;
    if rest != 0 {
        first |= 0x80;
    }
    out.push(first);
    while rest != 0 {
        let byte = (rest & 0x7f) as u8;
        rest >>= 7;
        out.push(if rest != 0 { byte | 0x80 } else { byte });
    }
    if let Some(t) = r.time_us {
        let mut z = zigzag(t.wrapping_sub(*prev_time));
        *prev_time = t;
        loop {
            let byte = (z & 0x7f) as u8;
            z >>= 7;
            if z == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }
}

/// Decodes one record at `*pos` of `buf`.
#[inline]
fn decode_record(
    buf: &[u8],
    pos: &mut usize,
    prev_page: &mut u64,
    prev_time: &mut u64,
) -> Result<Request, &'static str> {
    const TRUNCATED: &str = "record runs past the end of its block";
    let first = *buf.get(*pos).ok_or(TRUNCATED)?;
    *pos += 1;
    let mut z = u64::from((first >> 2) & 0x1f);
    if first & 0x80 != 0 {
        let mut shift = 5;
        loop {
            let b = *buf.get(*pos).ok_or(TRUNCATED)?;
            *pos += 1;
            if shift == 61 {
                if b > 0x07 {
                    return Err("page delta overflows 64 bits");
                }
                z |= u64::from(b) << 61;
                break;
            }
            z |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
    }
    let page = prev_page.wrapping_add(unzigzag(z));
    *prev_page = page;
    let kind = if first & 1 == 1 { AccessKind::Write } else { AccessKind::Read };
    let time_us = if first & 2 != 0 {
        let mut t = 0u64;
        let mut shift = 0;
        loop {
            let b = *buf.get(*pos).ok_or(TRUNCATED)?;
            *pos += 1;
            if shift == 63 {
                if b > 1 {
                    return Err("timestamp delta overflows 64 bits");
                }
                t |= u64::from(b) << 63;
                break;
            }
            t |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        let time = prev_time.wrapping_add(unzigzag(t));
        *prev_time = time;
        Some(time)
    } else {
        None
    };
    Ok(Request { page, kind, time_us })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Header,
    Blocks,
    Done,
}

/// Streaming reader of `.fbt` traces.
pub struct BinaryReader<R> {
    inner: R,
    path: String,
    state: State,
    crc: u32,
    block: Vec<u8>,
    pos: usize,
    block_left: u32,
    prev_page: u64,
    prev_time: u64,
    records: u64,
}

impl<R: Read + Send> BinaryReader<R> {
    /// Reads a trace from `inner`; `path` names the input in errors.
    pub fn new(inner: R, path: &str) -> Self {
        BinaryReader {
            inner,
            path: path.to_string(),
            state: State::Header,
            crc: 0,
            block: Vec::new(),
            pos: 0,
            block_left: 0,
            prev_page: 0,
            prev_time: 0,
            records: 0,
        }
    }

    fn error(&mut self, message: impl Into<String>) -> TraceError {
        self.state = State::Done;
        // Record numbers are 1-based; structural errors name the record being read.
        TraceError::Parse { path: self.path.clone(), line: self.records + 1, message: message.into() }
    }

    /// Fills `buf` completely; returns how many bytes were available (less only at the end).
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, TraceError> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    self.state = State::Done;
                    return Err(TraceError::Io { path: self.path.clone(), source });
                }
            }
        }
        Ok(got)
    }

    fn exact<const N: usize>(&mut self, what: &str) -> Result<[u8; N], TraceError> {
        let mut b = [0u8; N];
        let got = self.fill(&mut b)?;
        if got < N {
            let records = self.records;
            return Err(self.error(format!("truncated file: it ends in the {what}, after {records} records")));
        }
        self.crc = crc32c::crc32c_append(self.crc, &b);
        Ok(b)
    }

    fn read_header(&mut self) -> Result<(), TraceError> {
        let h: [u8; 16] = self.exact("header")?;
        if h[..8] != BINARY_MAGIC {
            return Err(self.error("not a flashbuf binary trace (bad magic)"));
        }
        let version = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
        if version != BINARY_VERSION {
            return Err(self.error(format!("unsupported binary trace version {version} (this reader knows 1)")));
        }
        let flags = u32::from_le_bytes([h[12], h[13], h[14], h[15]]);
        if flags != 0 {
            return Err(self.error(format!("unknown header flags {flags:#x}")));
        }
        self.state = State::Blocks;
        Ok(())
    }

    /// Loads the next block, or checks the trailer and finishes. Returns `false` at the end.
    fn next_block(&mut self) -> Result<bool, TraceError> {
        if self.pos != self.block.len() {
            let extra = self.block.len() - self.pos;
            return Err(self.error(format!("block has {extra} bytes after its last record")));
        }
        let count = u32::from_le_bytes(self.exact::<4>("block header")?);
        if count == 0 {
            let total = u64::from_le_bytes(self.exact::<8>("trailer")?);
            let after_total = self.crc;
            let stored = u32::from_le_bytes(self.exact::<4>("trailer")?);
            if total != self.records {
                let records = self.records;
                return Err(self.error(format!("trailer says {total} records, the file holds {records}")));
            }
            if stored != after_total {
                return Err(self.error(format!(
                    "CRC-32C mismatch: stored {stored:#010x}, computed {after_total:#010x} (the file is corrupt)"
                )));
            }
            let mut probe = [0u8; 1];
            if self.fill(&mut probe)? != 0 {
                return Err(self.error("unexpected bytes after the trailer"));
            }
            self.state = State::Done;
            return Ok(false);
        }
        let payload = u32::from_le_bytes(self.exact::<4>("block header")?);
        if count > MAX_BLOCK_RECORDS
            || payload < count
            || u64::from(payload) > u64::from(count) * u64::from(MAX_RECORD_BYTES)
        {
            return Err(self.error(format!("corrupt block header: {count} records in {payload} bytes")));
        }
        let mut block = std::mem::take(&mut self.block);
        block.resize(payload as usize, 0);
        let got = self.fill(&mut block)?;
        self.block = block;
        if got < payload as usize {
            let records = self.records;
            return Err(self.error(format!("truncated file: it ends inside a block, after {records} records")));
        }
        self.crc = crc32c::crc32c_append(self.crc, &self.block);
        self.pos = 0;
        self.block_left = count;
        Ok(true)
    }
}

impl<R: Read + Send> TraceSource for BinaryReader<R> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        if self.state == State::Header {
            self.read_header()?;
        }
        while out.len() < max && self.state == State::Blocks {
            if self.block_left == 0 {
                if !self.next_block()? {
                    break;
                }
                continue;
            }
            let n = (self.block_left as usize).min(max - out.len());
            let mut pos = self.pos;
            let mut prev_page = self.prev_page;
            let mut prev_time = self.prev_time;
            for i in 0..n {
                match decode_record(&self.block, &mut pos, &mut prev_page, &mut prev_time) {
                    Ok(r) => out.push(r),
                    Err(m) => {
                        self.records += i as u64;
                        return Err(self.error(m));
                    }
                }
            }
            self.pos = pos;
            self.prev_page = prev_page;
            self.prev_time = prev_time;
            self.block_left -= n as u32;
            self.records += n as u64;
        }
        Ok(out.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips_extremes() {
        for v in [0u64, 1, u64::MAX, 1 << 63, (1 << 63) - 1, 12345] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(u64::MAX), 1); // −1
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn records_round_trip_at_the_varint_limits() {
        let reqs = [
            Request::read(0),
            Request::write(u64::MAX),
            Request { page: 1 << 63, kind: AccessKind::Write, time_us: Some(u64::MAX) },
            Request { page: 31, kind: AccessKind::Read, time_us: Some(0) },
            Request { page: 32, kind: AccessKind::Read, time_us: Some(1 << 63) },
            Request::read(u64::MAX >> 1),
        ];
        let (mut pp, mut pt) = (0, 0);
        let mut buf = Vec::new();
        for r in &reqs {
            let before = buf.len();
            encode_record(&mut buf, &mut pp, &mut pt, r);
            assert!(buf.len() - before <= MAX_RECORD_BYTES as usize);
        }
        let (mut pos, mut pp, mut pt) = (0, 0, 0);
        for r in &reqs {
            assert_eq!(decode_record(&buf, &mut pos, &mut pp, &mut pt).unwrap(), *r);
        }
        assert_eq!(pos, buf.len());
        // A read of page 0 after page 0 is one byte.
        let mut one = Vec::new();
        encode_record(&mut one, &mut 0, &mut 0, &Request::read(0));
        assert_eq!(one, [0]);
    }

    #[test]
    fn overlong_varints_are_errors() {
        let mut buf = vec![0x80];
        buf.extend([0xff; 8]);
        buf.push(0x08);
        assert_eq!(decode_record(&buf, &mut 0, &mut 0, &mut 0), Err("page delta overflows 64 bits"));
        assert_eq!(decode_record(&[0x80, 0x80], &mut 0, &mut 0, &mut 0), Err("record runs past the end of its block"));
        let mut t = vec![0x02];
        t.extend([0xff; 9]);
        t.push(0x02);
        assert_eq!(decode_record(&t, &mut 0, &mut 0, &mut 0), Err("timestamp delta overflows 64 bits"));
    }
}
