//! The traces of the ARC paper (Megiddo and Modha, FAST 2003), `.lis` files:
//! `start_block num_blocks ignore request_id` (whitespace-separated).
//!
//! Each 512-byte block is one page: the reader's page size does not apply. A line becomes
//! `num_blocks` reads of pages `start_block ..= start_block + num_blocks − 1` (`num_blocks` 0
//! counts as one page, like a zero-length request elsewhere). The third and fourth columns are
//! required but not interpreted. No op column, so every request is a read; no volume, no time.

use crate::AccessKind;

use super::lines::{LineFormat, Record, field_u64, take_fields, ws_fields};

pub(crate) struct Arc;

impl LineFormat for Arc {
    const NAME: &'static str = "arc";
    const HAS_VOLUME: bool = false;

    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Record>, String> {
        let [start, count, _, _] = take_fields::<4>(ws_fields(line)).map_err(|n| {
            format!("expected 4 whitespace-separated fields (start_block num_blocks ignore request_id), found {n}")
        })?;
        Ok(Some(Record::pages(field_u64(start, "start block")?, field_u64(count, "block count")?, AccessKind::Read)))
    }
}
