//! The traces of the LIRS paper (Jiang and Zhang, SIGMETRICS 2002): one block number per line,
//! each a read of that page. Blank lines and lines starting with `#` are skipped (comments are
//! not part of the original traces but cost nothing to allow); anything else that is not a
//! single non-negative integer is an error. No volume, no time.

use crate::AccessKind;

use super::lines::{LineFormat, Record, field_u64, take_fields, ws_fields};

pub(crate) struct Lirs;

impl LineFormat for Lirs {
    const NAME: &'static str = "lirs";
    const HAS_VOLUME: bool = false;

    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Record>, String> {
        let line = line.trim_ascii();
        if line.starts_with(b"#") {
            return Ok(None);
        }
        let [block] = take_fields::<1>(ws_fields(line))
            .map_err(|n| format!("expected one block number per line, found {n} fields"))?;
        Ok(Some(Record::pages(field_u64(block, "block number")?, 1, AccessKind::Read)))
    }
}
