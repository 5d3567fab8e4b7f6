//! UMass Trace Repository SPC format (Storage Performance Council): one request per line,
//! `ASU,LBA,Size,Opcode,Timestamp`.
//!
//! * ASU: application storage unit, used as the volume.
//! * LBA: start in 512-byte sectors. Size: bytes. Opcode: `r`/`R` read, `w`/`W` write.
//! * Timestamp: seconds (decimal) since the start of the trace.
//!
//! Exactly five fields per line; a first line naming the columns is skipped.

use crate::AccessKind;

use super::TimeUnit;
use super::lines::{LineFormat, Record, csv_fields, field_u64, is_header, parse_time_us, show, take_fields};

pub(crate) struct Spc;

impl LineFormat for Spc {
    const NAME: &'static str = "spc";
    const HAS_VOLUME: bool = true;

    fn parse(&mut self, line: &[u8], line_no: u64) -> Result<Option<Record>, String> {
        let [asu, lba, size, op, time] = take_fields::<5>(csv_fields(line))
            .map_err(|n| format!("expected 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found {n}"))?;
        if line_no == 1 && is_header(&[asu, lba, size, op, time], &["asu", "lba", "size", "opcode", "timestamp"]) {
            return Ok(None);
        }
        let kind = match op {
            b"r" | b"R" => AccessKind::Read,
            b"w" | b"W" => AccessKind::Write,
            _ => return Err(format!("opcode '{}' is neither r nor w", show(op))),
        };
        let lba = field_u64(lba, "LBA")?;
        let offset = lba.checked_mul(512).ok_or_else(|| format!("LBA {lba} overflows 64-bit byte offsets"))?;
        let mut rec = Record::bytes(offset, field_u64(size, "size")?, kind);
        rec.volume = Some(field_u64(asu, "ASU")?);
        rec.time_us = Some(parse_time_us(time, TimeUnit::Seconds, "timestamp")?);
        Ok(Some(rec))
    }
}
