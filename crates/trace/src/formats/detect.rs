//! Format auto-detection from the file name and the first bytes of (decompressed) content.
//!
//! In order:
//! 1. Content starting with the `.fbt` magic → `binary`.
//! 2. The file name, compression suffix stripped, case-insensitive: `*.fbt` → `binary`;
//!    `*.oracleGeneral*` or `*.oracle` → `oracle`; `*.lis` → `arc`; `*.spc` → `spc`; `*.txt` →
//!    `text` if the content starts with the text header (otherwise go on sniffing).
//! 3. Binary content (a NUL byte or invalid UTF-8) → `oracle` if its first records look like
//!    oracleGeneral (each `next_access_vtime` is −1 or the index of a later request), else an
//!    error.
//! 4. The first lines of text (up to 32, blank lines and `#` comments skipped; a last line cut
//!    by the sniff window is ignored):
//!    * `# flashbuf-trace` header → `text`;
//!    * a header naming the columns: `version,time,op,size,lbn` → `cloudphysics`, the MSR,
//!      SPC or Tencent column names → that format;
//!    * comma-separated, the same number of fields on every line: 7 with `Read`/`Write` 4th →
//!      `msr`; 5 with `r`/`w` 4th → `spc`; 5 with `0`/`1` 4th → `tencent`; 5 with a SCSI
//!      read/write opcode 3rd → `cloudphysics` (no header);
//!    * whitespace-separated integers (first column may be decimal), the same count on every
//!      line: 5 → `mqsim` if every first column is an integer (MQSim writes integer
//!      nanoseconds), else `disksim` (milliseconds with a fraction); 4 → `arc`; 1 → `lirs`.
//!
//! Anything else is an error that shows the first line and lists the formats to choose from.

use crate::TraceError;

use super::Compression;
use super::Format;
use super::binary::BINARY_MAGIC;
use super::cloudphysics::{CLOUDPHYSICS_COLUMNS, scsi_kind};
use super::lines::{csv_fields, is_header, parse_hex_u8, parse_u64, show, ws_fields};
use super::msr::MSR_COLUMNS;
use super::oracle::ORACLE_RECORD_BYTES;
use super::text::TEXT_HEADER;

/// How many bytes of decompressed content detection looks at.
pub const SNIFF_BYTES: usize = 1 << 16;

const SNIFF_LINES: usize = 32;

/// A detected format and the reason, one line (the CLI prints it; the library never does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detection {
    /// The format.
    pub format: Format,
    /// Why.
    pub reason: String,
}

fn found(format: Format, reason: impl Into<String>) -> Result<Detection, TraceError> {
    Ok(Detection { format, reason: reason.into() })
}

/// Detects the format of a file called `name` (compression suffix allowed) whose decompressed
/// content starts with `head`; `complete` says `head` is the whole content.
pub fn detect_format(name: &str, head: &[u8], complete: bool) -> Result<Detection, TraceError> {
    if head.starts_with(&BINARY_MAGIC) {
        return found(Format::Binary, "content starts with the flashbuf binary magic");
    }
    let stem = Compression::strip_suffix(name);
    let lower = stem.to_ascii_lowercase();
    if lower.ends_with(".fbt") {
        return found(Format::Binary, format!("file name '{stem}' ends in .fbt (flashbuf binary)"));
    }
    if lower.contains(".oraclegeneral") || lower.ends_with(".oracle") {
        return found(Format::Oracle, format!("file name '{stem}' names a libCacheSim oracleGeneral trace"));
    }
    if lower.ends_with(".lis") {
        return found(Format::Arc, format!("file name '{stem}' ends in .lis (ARC trace)"));
    }
    if lower.ends_with(".spc") {
        return found(Format::Spc, format!("file name '{stem}' ends in .spc (UMass SPC trace)"));
    }
    let txt_note = if lower.ends_with(".txt") {
        if head.starts_with(TEXT_HEADER.as_bytes()) {
            return found(Format::Text, format!("file name '{stem}' ends in .txt and starts with '{TEXT_HEADER}'"));
        }
        "a .txt without the flashbuf header; "
    } else {
        ""
    };
    sniff(head, complete).map(|d| Detection { format: d.format, reason: format!("{txt_note}{}", d.reason) })
}

fn looks_binary(head: &[u8], complete: bool) -> bool {
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        // A multi-byte character cut by the sniff window is fine.
        Err(e) => complete || e.error_len().is_some(),
    }
}

/// Checks the first records of binary content against the oracleGeneral layout.
fn oracle_records(head: &[u8], complete: bool) -> Option<usize> {
    let whole_records = head.len() / ORACLE_RECORD_BYTES * ORACLE_RECORD_BYTES == head.len();
    if head.len() < ORACLE_RECORD_BYTES || (complete && !whole_records) {
        return None;
    }
    let records = (head.len() / ORACLE_RECORD_BYTES).min(1000);
    for (i, r) in head.chunks_exact(ORACLE_RECORD_BYTES).take(records).enumerate() {
        let next = i64::from_le_bytes([r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23]]);
        // next_access_vtime is the 1-based index of the next request to the object, or −1.
        if next != -1 && next <= i as i64 + 1 {
            return None;
        }
    }
    Some(records)
}

fn sniff(head: &[u8], complete: bool) -> Result<Detection, TraceError> {
    let suggest = || format!("give the format explicitly; valid formats: {}", Format::valid_names());
    if head.is_empty() {
        return Err(TraceError::Format(format!("cannot detect the format of an empty file; {}", suggest())));
    }
    if looks_binary(head, complete) {
        if let Some(n) = oracle_records(head, complete) {
            return found(
                Format::Oracle,
                format!("binary content whose first {n} records fit oracleGeneral (next_access_vtime −1 or later)"),
            );
        }
        return Err(TraceError::Format(format!("binary content of no known format; {}", suggest())));
    }
    let mut pieces: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
    if !complete {
        // The last piece may be cut by the sniff window.
        pieces.pop();
    }
    let mut lines =
        pieces.into_iter().map(|l| l.strip_suffix(b"\r").unwrap_or(l)).filter(|l| !l.trim_ascii().is_empty());
    let Some(first) = lines.next() else {
        return Err(TraceError::Format(format!("no complete line in the first {} bytes; {}", head.len(), suggest())));
    };
    let first = first.trim_ascii();
    if first.starts_with(b"# flashbuf-trace") {
        return found(Format::Text, format!("content starts with '{}'", show(first)));
    }
    let header: Vec<&[u8]> = csv_fields(first).collect();
    for (format, names) in [
        (Format::CloudPhysics, &CLOUDPHYSICS_COLUMNS[..]),
        (Format::Msr, &MSR_COLUMNS[..]),
        (Format::Spc, &["asu", "lba", "size", "opcode", "timestamp"][..]),
        (Format::Tencent, &["timestamp", "offset", "size", "iotype", "volumeid"][..]),
    ] {
        if is_header(&header, names) {
            return found(format, format!("content starts with the header '{}'", show(first)));
        }
    }
    let mut sample: Vec<&[u8]> = vec![first];
    sample.extend(lines.filter(|l| !l.trim_ascii().starts_with(b"#")).take(SNIFF_LINES - 1));
    if first.starts_with(b"#") {
        sample.remove(0);
    }
    let Some(&line1) = sample.first() else {
        return Err(TraceError::Format(format!("only comments in the first {} bytes; {}", head.len(), suggest())));
    };
    let n = sample.len();
    let unknown = |why: String| {
        TraceError::Format(format!("cannot detect the format: first line '{}' ({why}); {}", show(line1), suggest()))
    };
    if line1.contains(&b',') {
        let rows: Vec<Vec<&[u8]>> = sample.iter().map(|l| csv_fields(l).collect()).collect();
        let width = rows[0].len();
        if rows.iter().any(|r| r.len() != width) {
            return Err(unknown("comma-separated lines with different numbers of fields".into()));
        }
        let all = |col: usize, ok: &dyn Fn(&[u8]) -> bool| rows.iter().all(|r| ok(r[col]));
        if width == 7 && all(3, &|f| f.eq_ignore_ascii_case(b"read") || f.eq_ignore_ascii_case(b"write")) {
            return found(
                Format::Msr,
                format!("{n} lines of 7 comma-separated fields with Read/Write 4th (MSR Cambridge)"),
            );
        }
        if width == 5 && all(3, &|f| matches!(f, b"r" | b"R" | b"w" | b"W")) {
            return found(Format::Spc, format!("{n} lines of 5 comma-separated fields with r/w 4th (SPC)"));
        }
        if width == 5 && all(3, &|f| matches!(f, b"0" | b"1")) && all(4, &|f| parse_u64(f).is_some()) {
            return found(Format::Tencent, format!("{n} lines of 5 comma-separated fields with 0/1 4th (Tencent CBS)"));
        }
        if width == 5 && all(2, &|f| parse_hex_u8(f).and_then(scsi_kind).is_some()) {
            return found(
                Format::CloudPhysics,
                format!("{n} lines of 5 comma-separated fields with a SCSI read/write opcode 3rd (CloudPhysics)"),
            );
        }
        return Err(unknown(format!("{width} comma-separated fields fit no known format")));
    }
    let rows: Vec<Vec<&[u8]>> = sample.iter().map(|l| ws_fields(l).collect()).collect();
    let width = rows[0].len();
    if rows.iter().any(|r| r.len() != width) {
        return Err(unknown("lines with different numbers of fields".into()));
    }
    let integers_from = |col: usize| rows.iter().all(|r| r[col..].iter().all(|f| parse_u64(f).is_some()));
    let decimal = |f: &[u8]| {
        std::str::from_utf8(f).ok().and_then(|s| s.parse::<f64>().ok()).is_some_and(|v| v.is_finite() && v >= 0.0)
    };
    match width {
        5 if integers_from(1) && rows.iter().all(|r| decimal(r[0])) => {
            if integers_from(0) {
                found(Format::Mqsim, format!("{n} lines of 5 whitespace-separated integers (MQSim ASCII, time in ns)"))
            } else {
                found(
                    Format::Disksim,
                    format!("{n} lines of 5 whitespace-separated numbers, decimal times (DiskSim ASCII, time in ms)"),
                )
            }
        }
        4 if integers_from(0) => found(Format::Arc, format!("{n} lines of 4 whitespace-separated integers (ARC .lis)")),
        1 if integers_from(0) => found(Format::Lirs, format!("{n} lines of one integer each (LIRS)")),
        _ => Err(unknown(format!("{width} whitespace-separated fields fit no known format"))),
    }
}
