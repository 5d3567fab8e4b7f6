//! MSR Cambridge block traces (SNIA IOTTA): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,
//! ResponseTime`.
//!
//! * Timestamp: Windows filetime (100 ns ticks); converted to µs since the first record.
//! * DiskNumber: the volume. Hostname and ResponseTime are not used.
//! * Type: `Read` or `Write` (any case). Offset and Size: bytes.
//!
//! Exactly seven fields per line; a first line naming the columns is skipped.

use crate::AccessKind;

use super::TimeUnit;
use super::lines::{LineFormat, Record, csv_fields, field_u64, is_header, parse_time_us, show, take_fields};

pub(crate) struct Msr;

pub(crate) const MSR_COLUMNS: [&str; 7] =
    ["timestamp", "hostname", "disknumber", "type", "offset", "size", "responsetime"];

impl LineFormat for Msr {
    const NAME: &'static str = "msr";
    const HAS_VOLUME: bool = true;

    fn parse(&mut self, line: &[u8], line_no: u64) -> Result<Option<Record>, String> {
        let f = take_fields::<7>(csv_fields(line)).map_err(|n| {
            format!(
                "expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {n}"
            )
        })?;
        if line_no == 1 && is_header(&f, &MSR_COLUMNS) {
            return Ok(None);
        }
        let [time, _host, disk, op, offset, size, _response] = f;
        let kind = if op.eq_ignore_ascii_case(b"read") {
            AccessKind::Read
        } else if op.eq_ignore_ascii_case(b"write") {
            AccessKind::Write
        } else {
            return Err(format!("type '{}' is neither Read nor Write", show(op)));
        };
        let mut rec = Record::bytes(field_u64(offset, "offset")?, field_u64(size, "size")?, kind);
        rec.volume = Some(field_u64(disk, "disk number")?);
        rec.time_us = Some(parse_time_us(time, TimeUnit::FileTime, "timestamp")?);
        Ok(Some(rec))
    }
}
