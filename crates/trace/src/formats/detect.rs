//! Format auto-detection from the file name and the first bytes of (decompressed) content.
//!
//! In order:
//! 1. Content starting with the `.fbt` magic → `binary`.
//! 2. The file name, compression suffix stripped, case-insensitive: `*.fbt` → `binary`;
//!    `*.oracleGeneral*` or `*.oracle` → `oracle`; `*.lis` → `arc`; `*.spc` → `spc`; `*.txt` →
//!    `text` if the content starts with the text header (otherwise go on sniffing).
//! 3. Binary content (a NUL byte, or bytes that are mostly not text) → `oracle` only if its
//!    records validate as oracleGeneral: every `next_access_vtime` is −1 or the 1-based index of
//!    a later request (below 2^40), and where that request lies in the sniffed bytes it names the
//!    same object; else an error. Content that is text but for a few bytes (a stray non-UTF-8
//!    byte in a CSV file) is text: its reader names the line of the bad byte.
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
//! Anything else is an error that names the line that fits no format (and why), shows it with
//! control bytes escaped, and lists the formats to choose from.

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

/// Binary content: a NUL byte, or more than 1% of the bytes neither printable ASCII,
/// whitespace nor part of valid UTF-8. A text file with a stray bad byte stays text.
fn looks_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    let mut bad = 0usize;
    let mut rest = head;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                bad += s.chars().filter(|c| c.is_control() && !c.is_ascii_whitespace()).count();
                break;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                let text = std::str::from_utf8(&rest[..valid]).expect("valid up to here");
                bad += text.chars().filter(|c| c.is_control() && !c.is_ascii_whitespace()).count();
                // A character cut by the end of the sniff window is not an error.
                let skip = e.error_len().unwrap_or(rest.len() - valid);
                bad += e.error_len().map_or(0, |n| n);
                rest = &rest[valid + skip..];
            }
        }
    }
    bad * 100 > head.len()
}

/// Checks the records of binary content against the oracleGeneral layout (see the module
/// documentation); the number of records checked.
fn oracle_records(head: &[u8], complete: bool) -> Option<usize> {
    let whole_records = head.len() / ORACLE_RECORD_BYTES * ORACLE_RECORD_BYTES == head.len();
    if head.len() < ORACLE_RECORD_BYTES || (complete && !whole_records) {
        return None;
    }
    let records: Vec<&[u8]> = head.chunks_exact(ORACLE_RECORD_BYTES).collect();
    let id = |r: &[u8]| u64::from_le_bytes(r[4..12].try_into().expect("8 bytes"));
    for (i, r) in records.iter().enumerate() {
        let next = i64::from_le_bytes(r[16..24].try_into().expect("8 bytes"));
        // next_access_vtime is the 1-based index of the next request to the object, or −1.
        if next == -1 {
            continue;
        }
        if next <= i as i64 + 1 || next >= 1 << 40 {
            return None;
        }
        if let Some(later) = records.get(next as usize - 1)
            && id(later) != id(r)
        {
            return None;
        }
    }
    Some(records.len())
}

/// A sniffed line: its 1-based number, the line, its fields.
type Row<'a> = (u64, &'a [u8], Vec<&'a [u8]>);

fn sniff(head: &[u8], complete: bool) -> Result<Detection, TraceError> {
    let suggest = || format!("give the format explicitly; valid formats: {}", Format::valid_names());
    if head.is_empty() {
        return Err(TraceError::Format(format!("cannot detect the format of an empty file; {}", suggest())));
    }
    if looks_binary(head) {
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
    // (1-based line number, line), blank lines skipped.
    let mut lines = pieces
        .into_iter()
        .enumerate()
        .map(|(i, l)| (i as u64 + 1, l.strip_suffix(b"\r").unwrap_or(l)))
        .filter(|(_, l)| !l.trim_ascii().is_empty());
    let Some((first_no, first)) = lines.next() else {
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
    let mut sample: Vec<(u64, &[u8])> = vec![(first_no, first)];
    sample.extend(lines.filter(|(_, l)| !l.trim_ascii().starts_with(b"#")).take(SNIFF_LINES - 1));
    if first.starts_with(b"#") {
        sample.remove(0);
    }
    let Some(&(_, line1)) = sample.first() else {
        return Err(TraceError::Format(format!("only comments in the first {} bytes; {}", head.len(), suggest())));
    };
    let n = sample.len();
    // A line that fits no format: its number, the line (escaped), why, and what to do.
    let unknown = |at: u64, line: &[u8], why: String| {
        TraceError::Format(format!("cannot detect the format: line {at} '{}': {why}; {}", show(line), suggest()))
    };
    if line1.contains(&b',') {
        let rows: Vec<Row<'_>> = sample.iter().map(|&(i, l)| (i, l, csv_fields(l).collect())).collect();
        let width = rows[0].2.len();
        if let Some((at, line, r)) = rows.iter().find(|(_, _, r)| r.len() != width) {
            return Err(unknown(
                *at,
                line,
                format!("{} comma-separated fields where line {} has {width}", r.len(), rows[0].0),
            ));
        }
        // The comma-separated formats by width: what a line must look like, and why not.
        type Check = fn(&[&[u8]]) -> Result<(), &'static str>;
        let checks: [(usize, Format, &str, Check); 4] = [
            (7, Format::Msr, "Read/Write 4th (MSR Cambridge)", |r| {
                let rw = r[3].eq_ignore_ascii_case(b"read") || r[3].eq_ignore_ascii_case(b"write");
                if rw { Ok(()) } else { Err("its 4th field is not Read or Write") }
            }),
            (5, Format::Spc, "r/w 4th (SPC)", |r| {
                if matches!(r[3], b"r" | b"R" | b"w" | b"W") { Ok(()) } else { Err("its 4th field is not r or w") }
            }),
            (5, Format::Tencent, "0/1 4th (Tencent CBS)", |r| match (matches!(r[3], b"0" | b"1"), parse_u64(r[4])) {
                (false, _) => Err("its 4th field is not 0 or 1"),
                (true, None) => Err("its 5th field (the volume) is not an integer"),
                (true, Some(_)) => Ok(()),
            }),
            (5, Format::CloudPhysics, "a SCSI read/write opcode 3rd (CloudPhysics)", |r| {
                if parse_hex_u8(r[2]).and_then(scsi_kind).is_some() {
                    Ok(())
                } else {
                    Err("its 3rd field is not a SCSI read or write opcode")
                }
            }),
        ];
        let mut failures: Vec<(u64, &[u8], String)> = Vec::new();
        for (w, format, what, check) in checks {
            if w != width {
                continue;
            }
            match rows.iter().find_map(|(at, line, r)| check(r).err().map(|why| (*at, *line, why))) {
                None => return found(format, format!("{n} lines of {width} comma-separated fields with {what}")),
                Some((at, line, why)) => failures.push((at, line, format!("as {format}, {why}"))),
            }
        }
        // Report the candidate that got furthest (its first bad line is the latest).
        if let Some((at, line, why)) = failures.into_iter().max_by_key(|(at, _, _)| *at) {
            return Err(unknown(at, line, why));
        }
        return Err(unknown(rows[0].0, line1, format!("{width} comma-separated fields fit no known format")));
    }
    let rows: Vec<Row<'_>> = sample.iter().map(|&(i, l)| (i, l, ws_fields(l).collect())).collect();
    let width = rows[0].2.len();
    if let Some((at, line, r)) = rows.iter().find(|(_, _, r)| r.len() != width) {
        return Err(unknown(*at, line, format!("{} fields where line {} has {width}", r.len(), rows[0].0)));
    }
    // The first line with a field from `col` on that is not an integer.
    let not_integers_from = |col: usize| rows.iter().find(|(_, _, r)| r[col..].iter().any(|f| parse_u64(f).is_none()));
    let decimal = |f: &[u8]| {
        std::str::from_utf8(f).ok().and_then(|s| s.parse::<f64>().ok()).is_some_and(|v| v.is_finite() && v >= 0.0)
    };
    match width {
        5 => {
            if let Some((at, line, _)) = not_integers_from(1) {
                return Err(unknown(*at, line, "as DiskSim/MQSim, a field after the time is not an integer".into()));
            }
            if let Some((at, line, _)) = rows.iter().find(|(_, _, r)| !decimal(r[0])) {
                return Err(unknown(*at, line, "as DiskSim/MQSim, the time is not a number".into()));
            }
            if not_integers_from(0).is_none() {
                found(Format::Mqsim, format!("{n} lines of 5 whitespace-separated integers (MQSim ASCII, time in ns)"))
            } else {
                found(
                    Format::Disksim,
                    format!("{n} lines of 5 whitespace-separated numbers, decimal times (DiskSim ASCII, time in ms)"),
                )
            }
        }
        4 | 1 => match not_integers_from(0) {
            Some((at, line, _)) => Err(unknown(
                *at,
                line,
                format!("as {}, a field is not an integer", if width == 4 { "ARC .lis" } else { "LIRS" }),
            )),
            None if width == 4 => {
                found(Format::Arc, format!("{n} lines of 4 whitespace-separated integers (ARC .lis)"))
            }
            None => found(Format::Lirs, format!("{n} lines of one integer each (LIRS)")),
        },
        _ => Err(unknown(rows[0].0, line1, format!("{width} whitespace-separated fields fit no known format"))),
    }
}
