//! The machinery shared by the line-oriented formats: a line splitter over any [`Read`] that
//! reuses one buffer, field splitting and number parsing on bytes, and the generic reader that
//! turns parsed records into page requests (page splitting, volume selection, timestamps).

use std::io::{self, Read};

use crate::{AccessKind, Request, TraceError, TraceSource};

use super::{ReadOptions, TimeUnit};

/// Size of the read buffer of a line-oriented reader.
const BUF_BYTES: usize = 1 << 18;

/// Longest accepted line; longer lines are malformed input (for example a binary file read as
/// text), reported instead of growing the buffer without bound.
pub const MAX_LINE_BYTES: usize = 1 << 16;

/// Most pages one request may span; a larger request is reported as malformed (it would be a
/// request of 64 GiB at 4 KiB pages).
pub const MAX_PAGES_PER_REQUEST: u64 = 1 << 24;

/// Volumes are combined into page numbers as `(volume << VOLUME_SHIFT) | page` when no single
/// volume is selected.
pub const VOLUME_SHIFT: u32 = 40;

pub(crate) enum LineError {
    Io(io::Error),
    TooLong,
}

/// Splits a byte stream into lines without allocating per line.
pub(crate) struct LineBuf<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes after `start` already searched for a newline.
    scanned: usize,
    eof: bool,
    line_no: u64,
}

impl<R: Read> LineBuf<R> {
    pub(crate) fn new(inner: R) -> Self {
        LineBuf { inner, buf: vec![0; BUF_BYTES], start: 0, end: 0, scanned: 0, eof: false, line_no: 0 }
    }

    /// 1-based number of the line last returned (or of the line being read after an error).
    pub(crate) fn line_no(&self) -> u64 {
        self.line_no
    }

    /// The next line and its 1-based number, without its `\n` or `\r\n`; `None` at the end. A
    /// last line without a newline is returned too.
    pub(crate) fn next_line(&mut self) -> Result<Option<(u64, &[u8])>, LineError> {
        loop {
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.start + self.scanned..self.end]) {
                let s = self.start;
                let e = s + self.scanned + pos;
                self.start = e + 1;
                self.scanned = 0;
                self.line_no += 1;
                if e - s > MAX_LINE_BYTES {
                    return Err(LineError::TooLong);
                }
                return Ok(Some((self.line_no, strip_cr(&self.buf[s..e]))));
            }
            self.scanned = self.end - self.start;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let s = self.start;
                self.start = self.end;
                self.scanned = 0;
                self.line_no += 1;
                return Ok(Some((self.line_no, strip_cr(&self.buf[s..self.end]))));
            }
            if self.scanned > MAX_LINE_BYTES {
                self.line_no += 1;
                return Err(LineError::TooLong);
            }
            if self.end == self.buf.len() {
                // Keep the partial line, drop what was consumed.
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(LineError::Io(e)),
            }
        }
    }
}

#[inline]
fn strip_cr(line: &[u8]) -> &[u8] {
    match line {
        [rest @ .., b'\r'] => rest,
        _ => line,
    }
}

/// Comma-separated fields, each trimmed of ASCII whitespace.
#[inline]
pub(crate) fn csv_fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b == b',').map(<[u8]>::trim_ascii)
}

/// Fields separated by runs of ASCII whitespace.
#[inline]
pub(crate) fn ws_fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(u8::is_ascii_whitespace).filter(|f| !f.is_empty())
}

/// Exactly `N` fields, or the number found.
#[inline]
pub(crate) fn take_fields<'a, const N: usize>(mut it: impl Iterator<Item = &'a [u8]>) -> Result<[&'a [u8]; N], usize> {
    let mut out: [&[u8]; N] = [&[]; N];
    for (i, slot) in out.iter_mut().enumerate() {
        match it.next() {
            Some(f) => *slot = f,
            None => return Err(i),
        }
    }
    let extra = it.count();
    if extra > 0 { Err(N + extra) } else { Ok(out) }
}

/// `true` when the fields are the column names `names` (case-insensitive): a header line.
pub(crate) fn is_header(fields: &[&[u8]], names: &[&str]) -> bool {
    fields.len() == names.len() && fields.iter().zip(names).all(|(f, n)| f.eq_ignore_ascii_case(n.as_bytes()))
}

/// A field for an error message: at most 40 characters, invalid UTF-8 bytes as `\xNN` and
/// control characters escaped (`\u{1b}`), so that no byte of a trace file reaches the terminal
/// as a control sequence.
pub(crate) fn show(field: &[u8]) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for chunk in field.utf8_chunks() {
        for c in chunk.valid().chars() {
            if shown == 40 {
                out.push('…');
                return out;
            }
            if c.is_control() {
                out.extend(c.escape_default())
            } else {
                out.push(c)
            }
            shown += 1;
        }
        for b in chunk.invalid() {
            if shown == 40 {
                out.push('…');
                return out;
            }
            out.push_str(&format!("\\x{b:02x}"));
            shown += 1;
        }
    }
    out
}

/// A decimal `u64` (digits only, no sign).
#[inline]
pub(crate) fn parse_u64(field: &[u8]) -> Option<u64> {
    if field.is_empty() || field.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in field {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// A named `u64` field or a message saying what was wrong.
#[inline]
pub(crate) fn field_u64(field: &[u8], name: &str) -> Result<u64, String> {
    parse_u64(field).ok_or_else(|| format!("{name} '{}' is not a non-negative integer", show(field)))
}

/// A hexadecimal byte (`2a`, `0x2A`).
pub(crate) fn parse_hex_u8(field: &[u8]) -> Option<u8> {
    let digits = field.strip_prefix(b"0x").or_else(|| field.strip_prefix(b"0X")).unwrap_or(field);
    if digits.is_empty() || digits.len() > 2 {
        return None;
    }
    let s = std::str::from_utf8(digits).ok()?;
    u8::from_str_radix(s, 16).ok()
}

/// A timestamp in `unit` converted to whole microseconds: an integer is converted exactly
/// (nanoseconds truncated), a decimal number is rounded to the nearest microsecond. Negative,
/// non-finite or out-of-range values are errors.
pub(crate) fn parse_time_us(field: &[u8], unit: TimeUnit, name: &str) -> Result<u64, String> {
    let err = || format!("{name} '{}' is not a non-negative number", show(field));
    if let Some(v) = parse_u64(field) {
        let v = u128::from(v);
        let us = match unit {
            TimeUnit::Seconds => v * 1_000_000,
            TimeUnit::Millis => v * 1_000,
            TimeUnit::Micros => v,
            TimeUnit::Nanos => v / 1_000,
            TimeUnit::FileTime => v / 10,
        };
        return u64::try_from(us).map_err(|_| format!("{name} '{}' is out of range", show(field)));
    }
    let s = std::str::from_utf8(field).map_err(|_| err())?;
    let v: f64 = s.parse().map_err(|_| err())?;
    if !v.is_finite() || v < 0.0 {
        return Err(err());
    }
    let us = (v * unit.micros_per_unit()).round();
    if us >= 18_446_744_073_709_551_616.0 {
        return Err(format!("{name} '{}' is out of range", show(field)));
    }
    Ok(us as u64)
}

/// Where a record's pages are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Extent {
    /// A byte range, split into pages of the reader's page size.
    Bytes { offset: u64, size: u64 },
    /// Pages already (`count` 0 counts as 1).
    Pages { first: u64, count: u64 },
}

/// One parsed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub volume: Option<u64>,
    pub extent: Extent,
    pub kind: AccessKind,
    pub time_us: Option<u64>,
}

impl Record {
    pub(crate) fn bytes(offset: u64, size: u64, kind: AccessKind) -> Self {
        Record { volume: None, extent: Extent::Bytes { offset, size }, kind, time_us: None }
    }

    pub(crate) fn pages(first: u64, count: u64, kind: AccessKind) -> Self {
        Record { volume: None, extent: Extent::Pages { first, count }, kind, time_us: None }
    }
}

/// A line-oriented trace format.
pub(crate) trait LineFormat: Send {
    /// Format name for messages.
    const NAME: &'static str;
    /// `false` when the format has no volume column (a volume filter is then refused).
    const HAS_VOLUME: bool;
    /// `true`: timestamps are made relative to the first record's; `false`: taken as they are.
    const RELATIVE_TIME: bool = true;

    /// Parses one line; `Ok(None)` skips it (header, comment, blank line).
    fn parse(&mut self, line: &[u8], line_no: u64) -> Result<Option<Record>, String>;

    /// Called at the end of the input; an error here is reported on the last line.
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// A multi-page request being emitted.
#[derive(Clone, Copy, Debug)]
struct Pending {
    next: u64,
    left: u64,
    kind: AccessKind,
    time_us: Option<u64>,
}

/// The generic streaming reader of a [`LineFormat`].
pub(crate) struct LineReader<R, F> {
    lines: LineBuf<R>,
    format: F,
    path: String,
    page_size: u64,
    volume: Option<u64>,
    first_time_us: Option<u64>,
    pending: Pending,
    done: bool,
}

impl<R: Read + Send, F: LineFormat> LineReader<R, F> {
    pub(crate) fn new(inner: R, format: F, path: &str, opts: &ReadOptions) -> Result<Self, TraceError> {
        if opts.page_size == 0 {
            return Err(TraceError::Invalid("page size must be at least 1 byte".into()));
        }
        if opts.volume.is_some() && !F::HAS_VOLUME {
            return Err(TraceError::Invalid(format!(
                "{path}: the {} format has no volume column, so a volume cannot be selected",
                F::NAME
            )));
        }
        Ok(LineReader {
            lines: LineBuf::new(inner),
            format,
            path: path.to_string(),
            page_size: opts.page_size,
            volume: opts.volume,
            first_time_us: None,
            pending: Pending { next: 0, left: 0, kind: AccessKind::Read, time_us: None },
            done: false,
        })
    }

    fn parse_error(&mut self, line: u64, message: String) -> TraceError {
        self.done = true;
        TraceError::Parse { path: self.path.clone(), line, message }
    }

    /// Turns a record into the pending page run (or skips it: other volume).
    fn start(&mut self, rec: Record) -> Result<(), String> {
        let (mut first, count) = match rec.extent {
            Extent::Bytes { offset, size } => {
                let first = offset / self.page_size;
                let last = if size == 0 {
                    first
                } else {
                    offset.checked_add(size - 1).ok_or("offset + size overflows 64 bits")? / self.page_size
                };
                (first, last - first + 1)
            }
            Extent::Pages { first, count } => {
                let count = count.max(1);
                first.checked_add(count - 1).ok_or("first page + page count overflows 64 bits")?;
                (first, count)
            }
        };
        if count > MAX_PAGES_PER_REQUEST {
            return Err(format!("request spans {count} pages, more than the limit of {MAX_PAGES_PER_REQUEST}"));
        }
        let time_us = match rec.time_us {
            Some(t) if F::RELATIVE_TIME => {
                let t0 = *self.first_time_us.get_or_insert(t);
                Some(t.saturating_sub(t0))
            }
            t => t,
        };
        match (rec.volume, self.volume) {
            (Some(v), Some(wanted)) if v != wanted => return Ok(()),
            (Some(v), None) => {
                if v >= 1 << (64 - VOLUME_SHIFT) {
                    return Err(format!(
                        "volume {v} does not fit the combined page number (volume << {VOLUME_SHIFT} | page); \
                         select one volume"
                    ));
                }
                let last = first + (count - 1);
                if last >= 1 << VOLUME_SHIFT {
                    return Err(format!(
                        "page {last} of volume {v} does not fit the combined page number (pages below 2^{VOLUME_SHIFT}); \
                         select one volume"
                    ));
                }
                first |= v << VOLUME_SHIFT;
            }
            _ => {}
        }
        self.pending = Pending { next: first, left: count, kind: rec.kind, time_us };
        Ok(())
    }
}

impl<R: Read + Send, F: LineFormat> TraceSource for LineReader<R, F> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        while out.len() < max {
            if self.pending.left > 0 {
                let n = self.pending.left.min((max - out.len()) as u64);
                let p = self.pending;
                out.extend((0..n).map(|i| Request { page: p.next + i, kind: p.kind, time_us: p.time_us }));
                self.pending.next += n;
                self.pending.left -= n;
                continue;
            }
            if self.done {
                break;
            }
            let (line_no, line) = match self.lines.next_line() {
                Ok(Some(numbered)) => numbered,
                Ok(None) => {
                    self.done = true;
                    if let Err(m) = self.format.finish() {
                        let at = self.lines.line_no().max(1);
                        return Err(self.parse_error(at, m));
                    }
                    break;
                }
                Err(LineError::Io(source)) => {
                    self.done = true;
                    return Err(TraceError::Io { path: self.path.clone(), source });
                }
                Err(LineError::TooLong) => {
                    let at = self.lines.line_no();
                    return Err(self.parse_error(at, format!("line longer than {MAX_LINE_BYTES} bytes")));
                }
            };
            let parsed = if line.trim_ascii().is_empty() { Ok(None) } else { self.format.parse(line, line_no) };
            match parsed {
                Ok(Some(rec)) => {
                    if let Err(m) = self.start(rec) {
                        return Err(self.parse_error(line_no, m));
                    }
                }
                Ok(None) => {}
                Err(m) => return Err(self.parse_error(line_no, m)),
            }
        }
        Ok(out.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `chunk` bytes per call, to exercise buffer boundaries.
    struct Trickle<'a> {
        data: &'a [u8],
        chunk: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.chunk.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn all_lines(data: &[u8], chunk: usize) -> Vec<Vec<u8>> {
        let mut lb = LineBuf::new(Trickle { data, chunk });
        let mut out = Vec::new();
        while let Ok(Some((_, l))) = lb.next_line() {
            out.push(l.to_vec());
        }
        out
    }

    #[test]
    fn lines_split_on_any_boundary() {
        let data = b"a,b\r\n\nlast line without newline";
        for chunk in [1, 2, 3, 7, 1 << 20] {
            assert_eq!(
                all_lines(data, chunk),
                vec![b"a,b".to_vec(), b"".to_vec(), b"last line without newline".to_vec()],
                "chunk {chunk}"
            );
        }
        assert!(all_lines(b"", 4).is_empty());
        assert_eq!(all_lines(b"x\n", 4), vec![b"x".to_vec()]);
    }

    #[test]
    fn long_lines_across_buffer_refills() {
        // Lines near the limit force the buffer to be compacted many times.
        let line = vec![b'7'; MAX_LINE_BYTES - 1];
        let mut data = Vec::new();
        for _ in 0..10 {
            data.extend_from_slice(&line);
            data.push(b'\n');
        }
        let got = all_lines(&data, 50_000);
        assert_eq!(got.len(), 10);
        assert!(got.iter().all(|l| *l == line));
    }

    #[test]
    fn too_long_line_is_an_error_not_a_growth() {
        let data = vec![b'x'; MAX_LINE_BYTES * 3];
        let mut lb = LineBuf::new(&data[..]);
        assert!(matches!(lb.next_line(), Err(LineError::TooLong)));
        assert_eq!(lb.line_no(), 1);
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b"1.5"), None);
        assert_eq!(parse_hex_u8(b"2a"), Some(0x2a));
        assert_eq!(parse_hex_u8(b"0x2A"), Some(0x2a));
        assert_eq!(parse_hex_u8(b"2g"), None);
        assert_eq!(parse_hex_u8(b"123"), None);
        assert_eq!(parse_time_us(b"1.5", TimeUnit::Seconds, "t"), Ok(1_500_000));
        assert_eq!(parse_time_us(b"0.000000", TimeUnit::Seconds, "t"), Ok(0));
        assert_eq!(parse_time_us(b"2", TimeUnit::Millis, "t"), Ok(2_000));
        assert_eq!(parse_time_us(b"2.0004", TimeUnit::Millis, "t"), Ok(2_000));
        assert_eq!(parse_time_us(b"938513000", TimeUnit::Nanos, "t"), Ok(938_513));
        assert_eq!(parse_time_us(b"128166385295514663", TimeUnit::FileTime, "t"), Ok(12_816_638_529_551_466));
        assert!(parse_time_us(b"-1", TimeUnit::Seconds, "t").is_err());
        assert!(parse_time_us(b"nan", TimeUnit::Seconds, "t").is_err());
        assert!(parse_time_us(b"inf", TimeUnit::Seconds, "t").is_err());
        assert!(parse_time_us(b"1e300", TimeUnit::Seconds, "t").is_err());
        assert!(parse_time_us(b"18446744073709551615", TimeUnit::Seconds, "t").is_err());
    }

    #[test]
    fn fields() {
        assert_eq!(take_fields::<3>(csv_fields(b" a, b ,c")), Ok([&b"a"[..], b"b", b"c"]));
        assert_eq!(take_fields::<3>(csv_fields(b"a,b")), Err(2));
        assert_eq!(take_fields::<3>(csv_fields(b"a,b,c,d,e")), Err(5));
        assert_eq!(take_fields::<2>(ws_fields(b"  1 \t 2  ")), Ok([&b"1"[..], b"2"]));
        assert!(is_header(&[b"Version", b"TIME"], &["version", "time"]));
    }
}
