//! DiskSim ASCII traces and MQSim's ASCII traces, which share the columns
//! `time devno blkno size flags` (whitespace-separated).
//!
//! * time: DiskSim writes milliseconds as a decimal number, MQSim integer nanoseconds. The unit
//!   is [`super::ReadOptions::time_unit`]; without one, the `disksim` format assumes
//!   milliseconds and the `mqsim` format nanoseconds (auto-detection picks `mqsim` when every
//!   sniffed time is an integer, `disksim` otherwise). Made relative to the first record.
//! * devno: the volume. blkno: start in 512-byte sectors. size: 512-byte sectors.
//! * flags: decimal; bit 0 set = read, clear = write (DiskSim's `READ` flag; MQSim's type
//!   column, 1 = read and 0 = write, follows the same rule).

use crate::AccessKind;

use super::TimeUnit;
use super::lines::{LineFormat, Record, field_u64, parse_time_us, take_fields, ws_fields};

pub(crate) struct DiskSim {
    pub(crate) time_unit: TimeUnit,
    pub(crate) name: &'static str,
}

impl LineFormat for DiskSim {
    const NAME: &'static str = "disksim/mqsim";
    const HAS_VOLUME: bool = true;

    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Record>, String> {
        let [time, dev, blk, size, flags] = take_fields::<5>(ws_fields(line)).map_err(|n| {
            format!("expected 5 whitespace-separated fields (time devno blkno size flags) for {}, found {n}", self.name)
        })?;
        let flags = field_u64(flags, "flags")?;
        let kind = if flags & 1 == 1 { AccessKind::Read } else { AccessKind::Write };
        let blk = field_u64(blk, "blkno")?;
        let offset = blk.checked_mul(512).ok_or_else(|| format!("blkno {blk} overflows 64-bit byte offsets"))?;
        let sectors = field_u64(size, "size")?;
        let size = sectors.checked_mul(512).ok_or_else(|| format!("size {sectors} overflows 64-bit byte counts"))?;
        let mut rec = Record::bytes(offset, size, kind);
        rec.volume = Some(field_u64(dev, "devno")?);
        rec.time_us = Some(parse_time_us(time, self.time_unit, "time")?);
        Ok(Some(rec))
    }
}
