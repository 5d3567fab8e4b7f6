//! The flashbuf text trace, version 1: human-readable, diff-able, easy to write by hand.
//!
//! ```text
//! # flashbuf-trace v1
//! R 17
//! W 18 1500
//! # a comment
//! r 17
//! ```
//!
//! * Line 1 is exactly the header `# flashbuf-trace v1` (another version is refused).
//! * Then one request per line: the kind `R` or `W` (either case), whitespace, the page number,
//!   and optionally whitespace and a timestamp in microseconds since the start of the trace
//!   (taken as written, not re-based). Requests with and without timestamps may be mixed.
//! * Blank lines and lines whose first non-blank character is `#` are skipped.
//!
//! Page numbers are pages: no splitting, no volumes.

use crate::AccessKind;

use super::lines::{LineFormat, Record, field_u64, show, ws_fields};

/// The first line of every flashbuf text trace.
pub const TEXT_HEADER: &str = "# flashbuf-trace v1";

pub(crate) struct Text {
    seen_header: bool,
}

impl Text {
    pub(crate) fn new() -> Self {
        Text { seen_header: false }
    }
}

impl LineFormat for Text {
    const NAME: &'static str = "text";
    const HAS_VOLUME: bool = false;
    const RELATIVE_TIME: bool = false;

    #[inline]
    fn parse(&mut self, line: &[u8], line_no: u64) -> Result<Option<Record>, String> {
        if !self.seen_header {
            let l = line.trim_ascii();
            if line_no == 1 && l == TEXT_HEADER.as_bytes() {
                self.seen_header = true;
                return Ok(None);
            }
            if l.starts_with(b"# flashbuf-trace") {
                return Err(format!("unsupported text trace version '{}' (this reader knows v1)", show(l)));
            }
            return Err(format!("missing header line '{TEXT_HEADER}' (found '{}')", show(l)));
        }
        let mut fields = ws_fields(line);
        let kind = match fields.next() {
            Some(b"R" | b"r") => AccessKind::Read,
            Some(b"W" | b"w") => AccessKind::Write,
            Some(f) if f.starts_with(b"#") => return Ok(None),
            Some(f) => return Err(format!("expected R or W, found '{}'", show(f))),
            None => return Ok(None),
        };
        let page = field_u64(fields.next().ok_or("missing page number after the kind")?, "page")?;
        let mut rec = Record::pages(page, 1, kind);
        if let Some(t) = fields.next() {
            rec.time_us = Some(field_u64(t, "timestamp")?);
        }
        if let Some(extra) = fields.next() {
            return Err(format!("unexpected fourth field '{}'", show(extra)));
        }
        Ok(Some(rec))
    }

    fn finish(&mut self) -> Result<(), String> {
        if self.seen_header { Ok(()) } else { Err(format!("empty file: missing header line '{TEXT_HEADER}'")) }
    }
}
