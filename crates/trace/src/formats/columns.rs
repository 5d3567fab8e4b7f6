//! Delimited traces in any layout: the user says which column holds what.
//!
//! A [`ColumnMap`] is written as comma-separated `key=value` items (the CLI's `--columns`, a
//! sweep's `columns`):
//!
//! | key | value | default |
//! | --- | --- | --- |
//! | `offset` | 1-based column of the request's position (required) | — |
//! | `size` | column of its length | none: every request is one page |
//! | `op` | column of the operation | none: every request is a read |
//! | `time` | column of the timestamp | none |
//! | `volume` | column of the volume/disk number (an integer) | none |
//! | `offset-unit`, `size-unit` | `bytes`, `sectors` (512 bytes), `pages`, or a number of bytes | `bytes` |
//! | `time-unit` | `s`, `ms`, `us`, `ns`, `filetime` | `us` |
//! | `write` | op values meaning write, `\|`-separated, case-insensitive | `w\|write\|1` |
//! | `read` | op values meaning read; when given, any other op value is an error | any other value |
//! | `delimiter` | `,` `;` `tab` `space` (runs of whitespace) or one character | `,` |
//! | `header` | `auto` (skip line 1 when its offset field is not a number), `yes`, `no` | `auto` |
//!
//! Example, MSR Cambridge written out by hand: `time=1,volume=3,op=4,offset=5,size=6,
//! time-unit=filetime,write=Write,read=Read`. A request in bytes or sectors is split into
//! pages like the built-in formats; a request in pages is `size` pages from `offset`.

use std::fmt;
use std::str::FromStr;

use crate::{AccessKind, TraceError};

use super::TimeUnit;
use super::lines::{LineFormat, Record, parse_time_us, parse_u64, show};

/// Unit of a position or length column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// A number of bytes per unit (1 for bytes, 512 for sectors).
    Bytes(u64),
    /// Pages of the reader's page size.
    Pages,
}

impl Unit {
    fn parse(key: &str, v: &str) -> Result<Unit, String> {
        match v.to_ascii_lowercase().as_str() {
            "bytes" | "b" => Ok(Unit::Bytes(1)),
            "sectors" | "sector" => Ok(Unit::Bytes(512)),
            "pages" | "page" => Ok(Unit::Pages),
            other => match other.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Unit::Bytes(n)),
                _ => Err(format!("{key}={v}: expected bytes, sectors, pages or a positive number of bytes")),
            },
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Bytes(1) => f.write_str("bytes"),
            Unit::Bytes(512) => f.write_str("sectors"),
            Unit::Bytes(n) => write!(f, "{n}"),
            Unit::Pages => f.write_str("pages"),
        }
    }
}

/// How fields are separated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Delimiter {
    /// One byte separates fields (fields are trimmed of whitespace).
    Byte(u8),
    /// Runs of ASCII whitespace separate fields.
    Whitespace,
}

/// Whether the first line is a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Header {
    /// Skip line 1 when its offset field is not a number.
    Auto,
    /// Always skip line 1.
    Yes,
    /// Never skip.
    No,
}

/// Which column holds what (see the module documentation). Columns are 0-based here.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ColumnMap {
    /// Position column.
    pub offset: usize,
    /// Length column.
    pub size: Option<usize>,
    /// Operation column.
    pub op: Option<usize>,
    /// Timestamp column.
    pub time: Option<usize>,
    /// Volume column.
    pub volume: Option<usize>,
    /// Unit of `offset`.
    pub offset_unit: Unit,
    /// Unit of `size`.
    pub size_unit: Unit,
    /// Unit of `time`.
    pub time_unit: TimeUnit,
    /// Op values meaning write, lower case.
    pub write_ops: Vec<String>,
    /// Op values meaning read, lower case (empty: anything not a write).
    pub read_ops: Vec<String>,
    /// Field separator.
    pub delimiter: Delimiter,
    /// Header handling.
    pub header: Header,
}

impl ColumnMap {
    /// Number of fields a line needs.
    fn needed(&self) -> usize {
        [Some(self.offset), self.size, self.op, self.time, self.volume].into_iter().flatten().max().unwrap_or(0) + 1
    }
}

impl FromStr for ColumnMap {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Self, TraceError> {
        let bad = |m: String| TraceError::Invalid(format!("--columns: {m}"));
        let mut offset = None;
        let mut m = ColumnMap {
            offset: 0,
            size: None,
            op: None,
            time: None,
            volume: None,
            offset_unit: Unit::Bytes(1),
            size_unit: Unit::Bytes(1),
            time_unit: TimeUnit::Micros,
            write_ops: vec!["w".into(), "write".into(), "1".into()],
            read_ops: Vec::new(),
            delimiter: Delimiter::Byte(b','),
            header: Header::Auto,
        };
        let mut seen: Vec<&str> = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((key, value)) = item.split_once('=') else {
                return Err(bad(format!("'{item}' is not key=value")));
            };
            let (key, value) = (key.trim(), value.trim());
            if seen.contains(&key) {
                return Err(bad(format!("'{key}' is given twice")));
            }
            let column = || match value.parse::<usize>() {
                Ok(c) if (1..=1024).contains(&c) => Ok(c - 1),
                _ => Err(bad(format!("{key}={value}: expected a column number from 1 to 1024"))),
            };
            match key {
                "offset" => offset = Some(column()?),
                "size" => m.size = Some(column()?),
                "op" => m.op = Some(column()?),
                "time" => m.time = Some(column()?),
                "volume" => m.volume = Some(column()?),
                "offset-unit" => m.offset_unit = Unit::parse(key, value).map_err(bad)?,
                "size-unit" => m.size_unit = Unit::parse(key, value).map_err(bad)?,
                "time-unit" => m.time_unit = value.parse()?,
                "write" | "read" => {
                    let ops: Vec<String> =
                        value.split('|').map(|v| v.trim().to_ascii_lowercase()).filter(|v| !v.is_empty()).collect();
                    if ops.is_empty() {
                        return Err(bad(format!("{key}= names no op value")));
                    }
                    if key == "write" { m.write_ops = ops } else { m.read_ops = ops }
                }
                "delimiter" => {
                    m.delimiter = match value {
                        "tab" | "\\t" => Delimiter::Byte(b'\t'),
                        "space" | "whitespace" => Delimiter::Whitespace,
                        "comma" => Delimiter::Byte(b','),
                        "semicolon" => Delimiter::Byte(b';'),
                        v if v.len() == 1 && v.is_ascii() => Delimiter::Byte(v.as_bytes()[0]),
                        _ => return Err(bad(format!("delimiter={value}: expected one character, tab or space"))),
                    }
                }
                "header" => {
                    m.header = match value {
                        "auto" => Header::Auto,
                        "yes" | "true" => Header::Yes,
                        "no" | "false" => Header::No,
                        _ => return Err(bad(format!("header={value}: expected auto, yes or no"))),
                    }
                }
                _ => {
                    return Err(bad(format!(
                        "unknown key '{key}'; valid keys: offset, size, op, time, volume, offset-unit, size-unit, \
                         time-unit, write, read, delimiter, header"
                    )));
                }
            }
            seen.push(key);
        }
        m.offset = offset.ok_or_else(|| bad("the offset column is required (offset=N)".into()))?;
        let cols = [("offset", Some(m.offset)), ("size", m.size), ("op", m.op), ("time", m.time), ("volume", m.volume)];
        for (i, (a, ca)) in cols.iter().enumerate() {
            for (b, cb) in &cols[i + 1..] {
                if ca.is_some() && ca == cb {
                    return Err(bad(format!("{a} and {b} are the same column")));
                }
            }
        }
        if let Some(w) = m.write_ops.iter().find(|w| m.read_ops.contains(w)) {
            return Err(bad(format!("op value '{w}' is both a read and a write")));
        }
        Ok(m)
    }
}

impl fmt::Display for ColumnMap {
    /// The canonical form, parseable again.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset={}", self.offset + 1)?;
        for (k, c) in [("size", self.size), ("op", self.op), ("time", self.time), ("volume", self.volume)] {
            if let Some(c) = c {
                write!(f, ",{k}={}", c + 1)?;
            }
        }
        write!(f, ",offset-unit={},size-unit={},time-unit={}", self.offset_unit, self.size_unit, self.time_unit)?;
        write!(f, ",write={}", self.write_ops.join("|"))?;
        if !self.read_ops.is_empty() {
            write!(f, ",read={}", self.read_ops.join("|"))?;
        }
        match self.delimiter {
            Delimiter::Whitespace => f.write_str(",delimiter=space")?,
            Delimiter::Byte(b'\t') => f.write_str(",delimiter=tab")?,
            Delimiter::Byte(b',') => f.write_str(",delimiter=comma")?,
            Delimiter::Byte(b) => write!(f, ",delimiter={}", b as char)?,
        }
        let h = match self.header {
            Header::Auto => "auto",
            Header::Yes => "yes",
            Header::No => "no",
        };
        write!(f, ",header={h}")
    }
}

/// The line format of a column map.
pub(crate) struct Columns {
    map: ColumnMap,
    page_size: u64,
    fields: Vec<(usize, usize)>,
}

impl Columns {
    pub(crate) fn new(map: ColumnMap, page_size: u64) -> Self {
        Columns { map, page_size, fields: Vec::with_capacity(16) }
    }
}

fn to_bytes(v: u64, unit: Unit, page_size: u64, name: &str) -> Result<u64, String> {
    let per = match unit {
        Unit::Bytes(n) => n,
        Unit::Pages => page_size,
    };
    v.checked_mul(per).ok_or_else(|| format!("{name} {v} × {per} bytes overflows 64 bits"))
}

impl LineFormat for Columns {
    const NAME: &'static str = "csv";
    const HAS_VOLUME: bool = true;

    fn parse(&mut self, line: &[u8], line_no: u64) -> Result<Option<Record>, String> {
        self.fields.clear();
        let base = line.as_ptr() as usize;
        let mut push = |f: &[u8]| self.fields.push((f.as_ptr() as usize - base, f.len()));
        match self.map.delimiter {
            Delimiter::Byte(d) => line.split(|&b| b == d).map(<[u8]>::trim_ascii).for_each(&mut push),
            Delimiter::Whitespace => line.split(u8::is_ascii_whitespace).filter(|f| !f.is_empty()).for_each(&mut push),
        }
        let field = |c: usize| {
            let (s, n) = self.fields[c];
            &line[s..s + n]
        };
        let needed = self.map.needed();
        if self.fields.len() < needed {
            return Err(format!("expected at least {needed} fields, found {}", self.fields.len()));
        }
        let offset = field(self.map.offset);
        let header = match self.map.header {
            Header::Yes => true,
            Header::No => false,
            Header::Auto => parse_u64(offset).is_none(),
        };
        if line_no == 1 && header {
            return Ok(None);
        }
        let num = |c: usize, name: &str| {
            let f = field(c);
            parse_u64(f).ok_or_else(|| format!("{name} '{}' (column {}) is not a non-negative integer", show(f), c + 1))
        };
        let kind = match self.map.op {
            None => AccessKind::Read,
            Some(c) => {
                let v = String::from_utf8_lossy(field(c)).to_ascii_lowercase();
                if self.map.write_ops.contains(&v) {
                    AccessKind::Write
                } else if self.map.read_ops.is_empty() || self.map.read_ops.contains(&v) {
                    AccessKind::Read
                } else {
                    return Err(format!(
                        "op '{}' (column {}) is neither a read ({}) nor a write ({})",
                        show(field(c)),
                        c + 1,
                        self.map.read_ops.join("|"),
                        self.map.write_ops.join("|")
                    ));
                }
            }
        };
        let off = num(self.map.offset, "offset")?;
        let mut rec = match (self.map.offset_unit, self.map.size, self.map.size_unit) {
            (Unit::Pages, None, _) => Record::pages(off, 1, kind),
            (Unit::Pages, Some(c), Unit::Pages) => Record::pages(off, num(c, "size")?, kind),
            (unit, size, size_unit) => {
                let offset = to_bytes(off, unit, self.page_size, "offset")?;
                let size = match size {
                    Some(c) => to_bytes(num(c, "size")?, size_unit, self.page_size, "size")?,
                    None => 0,
                };
                Record::bytes(offset, size, kind)
            }
        };
        if let Some(c) = self.map.volume {
            rec.volume = Some(num(c, "volume")?);
        }
        if let Some(c) = self.map.time {
            rec.time_us = Some(parse_time_us(field(c), self.map.time_unit, "time")?);
        }
        Ok(Some(rec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_canonically() {
        let m: ColumnMap =
            "time=1, volume=3,op=4,offset=5,size=6,time-unit=filetime,write=Write,read=Read".parse().unwrap();
        assert_eq!((m.offset, m.size, m.op, m.time, m.volume), (4, Some(5), Some(3), Some(0), Some(2)));
        assert_eq!(m.time_unit, TimeUnit::FileTime);
        let again: ColumnMap = m.to_string().parse().unwrap();
        assert_eq!(again, m);
    }

    #[test]
    fn mistakes_are_named() {
        let e = |s: &str| s.parse::<ColumnMap>().unwrap_err().to_string();
        assert!(e("size=2").contains("offset column is required"), "{}", e("size=2"));
        assert!(e("offset=0").contains("column number from 1"));
        assert!(e("offset=2,size=2").contains("offset and size are the same column"));
        assert!(e("offset=2,colour=3").contains("unknown key 'colour'"));
        assert!(e("offset=2,offset-unit=furlongs").contains("offset-unit=furlongs"));
        assert!(e("offset=2,write=x,read=x").contains("both a read and a write"));
        assert!(e("offset=2,offset=3").contains("given twice"));
        assert!(e("offset").contains("not key=value"));
    }
}
