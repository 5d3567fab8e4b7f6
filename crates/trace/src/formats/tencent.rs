//! Tencent Cloud Block Storage traces (SNIA IOTTA): `Timestamp,Offset,Size,IOType,VolumeID`.
//!
//! * Timestamp: seconds; made relative to the first record (records stamped earlier than the
//!   first one, which the published traces contain, get time 0).
//! * Offset and Size: 512-byte sectors. IOType: `0` read, `1` write. VolumeID: the volume.
//!
//! Exactly five fields per line; a first line naming the columns is skipped.

use crate::AccessKind;

use super::TimeUnit;
use super::lines::{LineFormat, Record, csv_fields, field_u64, is_header, parse_time_us, show, take_fields};

pub(crate) struct Tencent;

impl LineFormat for Tencent {
    const NAME: &'static str = "tencent";
    const HAS_VOLUME: bool = true;

    fn parse(&mut self, line: &[u8], line_no: u64) -> Result<Option<Record>, String> {
        let f = take_fields::<5>(csv_fields(line)).map_err(|n| {
            format!("expected 5 comma-separated fields (Timestamp,Offset,Size,IOType,VolumeID), found {n}")
        })?;
        if line_no == 1 && is_header(&f, &["timestamp", "offset", "size", "iotype", "volumeid"]) {
            return Ok(None);
        }
        let [time, offset, size, op, volume] = f;
        let kind = match op {
            b"0" => AccessKind::Read,
            b"1" => AccessKind::Write,
            _ => return Err(format!("IOType '{}' is neither 0 (read) nor 1 (write)", show(op))),
        };
        let sectors = field_u64(offset, "offset")?;
        let offset =
            sectors.checked_mul(512).ok_or_else(|| format!("offset {sectors} overflows 64-bit byte offsets"))?;
        let length = field_u64(size, "size")?;
        let size = length.checked_mul(512).ok_or_else(|| format!("size {length} overflows 64-bit byte counts"))?;
        let mut rec = Record::bytes(offset, size, kind);
        rec.volume = Some(field_u64(volume, "volume ID")?);
        rec.time_us = Some(parse_time_us(time, TimeUnit::Seconds, "timestamp")?);
        Ok(Some(rec))
    }
}
