//! CloudPhysics VM block traces in the CSV form bundled with libCacheSim (`data/`):
//! header `version,time,op,size,lbn`, then one request per line.
//!
//! * time: microseconds; made relative to the first record.
//! * op: the SCSI command's opcode in hexadecimal. Accepted: READ(6) `08`, READ(10) `28`,
//!   READ(12) `a8`, READ(16) `88` as reads; WRITE(6) `0a`, WRITE(10) `2a`, WRITE(12) `aa`,
//!   WRITE(16) `8a` as writes. Any other opcode (a command that moves no data) is an error, so
//!   nothing is dropped silently.
//! * size: bytes. lbn: start in 512-byte sectors.
//!
//! The header line is optional; `version` must be an integer and is not otherwise used. No
//! volume column.

use crate::AccessKind;

use super::TimeUnit;
use super::lines::{
    LineFormat, Record, csv_fields, field_u64, is_header, parse_hex_u8, parse_time_us, show, take_fields,
};

pub(crate) struct CloudPhysics;

pub(crate) const CLOUDPHYSICS_COLUMNS: [&str; 5] = ["version", "time", "op", "size", "lbn"];

/// The access kind of a SCSI opcode, if it is one of the accepted reads and writes.
pub(crate) fn scsi_kind(op: u8) -> Option<AccessKind> {
    match op {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(AccessKind::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(AccessKind::Write),
        _ => None,
    }
}

impl LineFormat for CloudPhysics {
    const NAME: &'static str = "cloudphysics";
    const HAS_VOLUME: bool = false;

    fn parse(&mut self, line: &[u8], line_no: u64) -> Result<Option<Record>, String> {
        let f = take_fields::<5>(csv_fields(line))
            .map_err(|n| format!("expected 5 comma-separated fields (version,time,op,size,lbn), found {n}"))?;
        if line_no == 1 && is_header(&f, &CLOUDPHYSICS_COLUMNS) {
            return Ok(None);
        }
        let [version, time, op, size, lbn] = f;
        field_u64(version, "version")?;
        let kind = parse_hex_u8(op).and_then(scsi_kind).ok_or_else(|| {
            format!("op '{}' is not a SCSI read (08, 28, a8, 88) or write (0a, 2a, aa, 8a) opcode", show(op))
        })?;
        let lbn = field_u64(lbn, "lbn")?;
        let offset = lbn.checked_mul(512).ok_or_else(|| format!("lbn {lbn} overflows 64-bit byte offsets"))?;
        let mut rec = Record::bytes(offset, field_u64(size, "size")?, kind);
        rec.time_us = Some(parse_time_us(time, TimeUnit::Micros, "time")?);
        Ok(Some(rec))
    }
}
