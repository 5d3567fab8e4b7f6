//! Streaming readers for real trace formats, transparent decompression and format detection.
//!
//! | [`Format`] | file | unit of position | kind | volume |
//! | --- | --- | --- | --- | --- |
//! | `spc` | UMass SPC `ASU,LBA,Size,Opcode,Timestamp` | bytes from 512-byte sectors | r/w | ASU |
//! | `msr` | MSR Cambridge `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | bytes | Read/Write | DiskNumber |
//! | `cloudphysics` | libCacheSim CSV `version,time,op,size,lbn` | bytes from sectors | SCSI opcode | — |
//! | `tencent` | Tencent CBS `Timestamp,Offset,Size,IOType,VolumeID` | bytes from sectors | 0/1 | VolumeID |
//! | `disksim`, `mqsim` | `time devno blkno size flags` | bytes from sectors | flags bit 0 | devno |
//! | `arc` | ARC `.lis` `start_block num_blocks ignore request_id` | block = page | all reads | — |
//! | `lirs` | one block number per line | block = page | all reads | — |
//! | `oracle` | libCacheSim oracleGeneral, 24-byte records | obj_id = page | all reads | — |
//! | `text` | flashbuf text (`# flashbuf-trace v1`, `R 17`) | page | R/W | — |
//! | `binary` | flashbuf `.fbt` | page | R/W | — |
//! | `csv` | any delimited layout, columns named by a [`ColumnMap`] | as mapped | as mapped | as mapped |
//!
//! Every module documents its format and the choices made where the source is silent.
//!
//! # Pages
//!
//! A byte-addressed request of `size` bytes at `offset` becomes one read or write per page it
//! touches, in ascending order: pages `floor(offset / page_size) ..= floor((offset + size − 1) /
//! page_size)` for [`ReadOptions::page_size`] (default 4096 bytes); a request of size 0 touches
//! one page. Block-numbered formats (arc, lirs, oracle, text, binary) are not split: one block
//! is one page.
//!
//! # Volumes
//!
//! For formats with a volume column, [`ReadOptions::volume`] keeps only that volume's requests
//! (page numbers unchanged). Without it every volume is kept and the page number becomes
//! `(volume << 40) | page`, so pages of different volumes never collide and neighbouring pages
//! of a volume stay neighbours; a volume of 2^24 or more, or a page of 2^40 or more, is then an
//! error (select a volume).
//!
//! # Time
//!
//! Timestamps are converted to microseconds since the first record of the file (records
//! stamped earlier than the first one get 0). The text and binary formats store that time
//! directly.
//!
//! # Compression
//!
//! Input compressed with gzip, zstd, bzip2 or xz is decompressed on the fly, multi-member
//! streams included. The compression is recognised by its magic bytes, whatever the file is
//! called (a `.zst` suffix on a plain file or a compressed file without a suffix both work):
//! gzip `1f 8b 08`, zstd `28 b5 2f fd`, bzip2 `BZh` + block size digit `1`–`9`, xz
//! `fd 37 7a 58 5a 00`. The suffixes `.gz`, `.gzip`, `.zst`, `.zstd`, `.bz2`, `.xz` are stripped
//! before the file name is used for format detection.

mod arc;
mod binary;
mod cloudphysics;
mod columns;
mod detect;
mod disksim;
mod lines;
mod lirs;
mod msr;
mod oracle;
mod spc;
mod tencent;
mod text;

#[cfg(test)]
mod tests;

pub use binary::{BINARY_MAGIC, BINARY_VERSION, BinaryReader, MAX_BLOCK_RECORDS};
pub use columns::{ColumnMap, Delimiter, Header, Unit};
pub use detect::{Detection, SNIFF_BYTES, detect_format};
pub use lines::{MAX_LINE_BYTES, MAX_PAGES_PER_REQUEST, VOLUME_SHIFT};
pub use oracle::{ORACLE_RECORD_BYTES, OracleReader};
pub use text::TEXT_HEADER;

pub(crate) use binary::encode_record;

use std::fmt;
use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use crate::{TraceError, TraceSource};

use lines::LineReader;

/// A trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Detect from the file name and content ([`detect_format`]).
    Auto,
    /// UMass SPC.
    Spc,
    /// MSR Cambridge.
    Msr,
    /// CloudPhysics CSV (libCacheSim `data/`).
    CloudPhysics,
    /// Tencent CBS.
    Tencent,
    /// DiskSim ASCII (time in milliseconds by default).
    Disksim,
    /// MQSim ASCII (DiskSim's columns, time in nanoseconds by default).
    Mqsim,
    /// ARC `.lis`.
    Arc,
    /// LIRS block list.
    Lirs,
    /// libCacheSim oracleGeneral binary.
    Oracle,
    /// flashbuf text.
    Text,
    /// flashbuf binary (`.fbt`).
    Binary,
    /// Any delimited trace, its columns named by [`ReadOptions::columns`].
    Csv,
}

impl Format {
    /// Every format, `Auto` first.
    pub const ALL: [Format; 13] = [
        Format::Auto,
        Format::Spc,
        Format::Msr,
        Format::CloudPhysics,
        Format::Tencent,
        Format::Disksim,
        Format::Mqsim,
        Format::Arc,
        Format::Lirs,
        Format::Oracle,
        Format::Text,
        Format::Binary,
        Format::Csv,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Spc => "spc",
            Format::Msr => "msr",
            Format::CloudPhysics => "cloudphysics",
            Format::Tencent => "tencent",
            Format::Disksim => "disksim",
            Format::Mqsim => "mqsim",
            Format::Arc => "arc",
            Format::Lirs => "lirs",
            Format::Oracle => "oracle",
            Format::Text => "text",
            Format::Binary => "binary",
            Format::Csv => "csv",
        }
    }

    /// One line about the format.
    pub fn description(self) -> &'static str {
        match self {
            Format::Auto => "detect from the file name and content",
            Format::Spc => "UMass SPC: ASU,LBA,Size,Opcode,Timestamp",
            Format::Msr => "MSR Cambridge: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
            Format::CloudPhysics => "CloudPhysics CSV (libCacheSim data/): version,time,op,size,lbn",
            Format::Tencent => "Tencent CBS: Timestamp,Offset,Size,IOType,VolumeID",
            Format::Disksim => "DiskSim ASCII: time(ms) devno blkno size flags",
            Format::Mqsim => "MQSim ASCII: time(ns) devno lba size type",
            Format::Arc => "ARC .lis: start_block num_blocks ignore request_id (block = page, all reads)",
            Format::Lirs => "LIRS: one block number per line (all reads)",
            Format::Oracle => "libCacheSim oracleGeneral: 24-byte binary records (all reads)",
            Format::Text => "flashbuf text: '# flashbuf-trace v1', then 'R <page> [time_us]' lines",
            Format::Binary => "flashbuf compact binary (.fbt)",
            Format::Csv => "any delimited trace, its columns given by --columns (e.g. offset=5,size=6,op=4,time=1)",
        }
    }

    /// `true` for byte-addressed formats, whose requests are split into pages of
    /// [`ReadOptions::page_size`].
    pub fn splits_pages(self) -> bool {
        matches!(
            self,
            Format::Spc
                | Format::Msr
                | Format::CloudPhysics
                | Format::Tencent
                | Format::Disksim
                | Format::Mqsim
                | Format::Csv
        )
    }

    /// `true` for formats with a volume column ([`ReadOptions::volume`] applies).
    pub fn has_volumes(self) -> bool {
        matches!(self, Format::Spc | Format::Msr | Format::Tencent | Format::Disksim | Format::Mqsim | Format::Csv)
    }

    /// `false` for formats without a read/write flag (every request is a read).
    pub fn has_writes(self) -> bool {
        !matches!(self, Format::Arc | Format::Lirs | Format::Oracle)
    }

    /// The valid names, comma-separated (for messages).
    pub fn valid_names() -> String {
        Format::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Self, TraceError> {
        let lower = s.trim().to_ascii_lowercase();
        let alias = match lower.as_str() {
            "lis" => Some(Format::Arc),
            "fbt" => Some(Format::Binary),
            "oraclegeneral" => Some(Format::Oracle),
            _ => None,
        };
        alias.or_else(|| Format::ALL.into_iter().find(|f| f.name() == lower)).ok_or_else(|| {
            TraceError::Format(format!("unknown trace format '{s}'; valid formats: {}", Format::valid_names()))
        })
    }
}

/// The unit of a timestamp column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// Seconds (`s`).
    Seconds,
    /// Milliseconds (`ms`).
    Millis,
    /// Microseconds (`us`).
    Micros,
    /// Nanoseconds (`ns`).
    Nanos,
    /// Windows filetime ticks of 100 ns (`filetime`).
    FileTime,
}

impl TimeUnit {
    /// Microseconds in one unit.
    pub fn micros_per_unit(self) -> f64 {
        match self {
            TimeUnit::Seconds => 1e6,
            TimeUnit::Millis => 1e3,
            TimeUnit::Micros => 1.0,
            TimeUnit::Nanos => 1e-3,
            TimeUnit::FileTime => 0.1,
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "us",
            TimeUnit::Nanos => "ns",
            TimeUnit::FileTime => "filetime",
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TimeUnit {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Self, TraceError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "s" | "sec" | "seconds" => Ok(TimeUnit::Seconds),
            "ms" | "millis" | "milliseconds" => Ok(TimeUnit::Millis),
            "us" | "µs" | "micros" | "microseconds" => Ok(TimeUnit::Micros),
            "ns" | "nanos" | "nanoseconds" => Ok(TimeUnit::Nanos),
            "filetime" => Ok(TimeUnit::FileTime),
            _ => Err(TraceError::Invalid(format!("unknown time unit '{s}'; valid units: s, ms, us, ns, filetime"))),
        }
    }
}

/// How to read a trace file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The format; [`Format::Auto`] (the default) detects it.
    pub format: Format,
    /// Page size in bytes for byte-addressed formats (default 4096).
    pub page_size: u64,
    /// Keep only this volume (formats with a volume column); `None` keeps all, combined into the
    /// page number as `(volume << 40) | page`.
    pub volume: Option<u64>,
    /// Unit of the `disksim`/`mqsim` time column; `None`: milliseconds for `disksim`,
    /// nanoseconds for `mqsim`. Other formats define their unit and ignore this.
    pub time_unit: Option<TimeUnit>,
    /// The column map of the `csv` format (required for it, refused for the others).
    pub columns: Option<Arc<ColumnMap>>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { format: Format::Auto, page_size: 4096, volume: None, time_unit: None, columns: None }
    }
}

impl ReadOptions {
    /// Every option that changes the requests read, in one line (summary cache keys, run
    /// identities).
    pub fn describe(&self) -> String {
        let mut s = format!("format={},page_size={}", self.format, self.page_size);
        if let Some(v) = self.volume {
            s.push_str(&format!(",volume={v}"));
        }
        if let Some(t) = self.time_unit {
            s.push_str(&format!(",time_unit={t}"));
        }
        if let Some(c) = &self.columns {
            s.push_str(&format!(",columns=[{c}]"));
        }
        s
    }

    /// `true` when page numbers combine several volumes as `volume << 40 | page` (a format with
    /// a volume column and no volume selected).
    pub fn combines_volumes(&self, format: Format) -> bool {
        self.volume.is_none()
            && match format {
                Format::Csv => self.columns.as_ref().is_some_and(|c| c.volume.is_some()),
                f => f.has_volumes(),
            }
    }
}

/// A compression wrapper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Plain.
    None,
    /// gzip (`.gz`).
    Gzip,
    /// Zstandard (`.zst`).
    Zstd,
    /// bzip2 (`.bz2`).
    Bzip2,
    /// xz (`.xz`).
    Xz,
}

impl Compression {
    /// The name (`none`, `gzip`, `zstd`, `bzip2`, `xz`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
        }
    }

    /// The compression whose magic bytes start `head` (at least 6 bytes are needed to see all).
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b, 0x08]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Compression::Bzip2
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    /// `name` without a trailing compression suffix (`OLTP.lis.zst` → `OLTP.lis`).
    pub fn strip_suffix(name: &str) -> &str {
        let lower = name.to_ascii_lowercase();
        for suffix in [".gz", ".gzip", ".zst", ".zstd", ".bz2", ".xz"] {
            if lower.ends_with(suffix) {
                return &name[..name.len() - suffix.len()];
            }
        }
        name
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Reads until `buf` is full or the input ends; returns the number of bytes read.
fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Wraps `input` in the decompressor its magic bytes call for (see the module documentation).
pub fn decompress<R: Read + Send + 'static>(mut input: R) -> io::Result<(Box<dyn Read + Send>, Compression)> {
    let mut head = [0u8; 6];
    let n = read_full(&mut input, &mut head)?;
    let compression = Compression::sniff(&head[..n]);
    let joined = Cursor::new(head[..n].to_vec()).chain(input);
    let reader: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(joined),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(joined)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(joined)?),
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(joined)),
        Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(joined)),
    };
    Ok((reader, compression))
}

/// A reader for `format` over already decompressed `input`; `path` names the input in errors.
/// [`Format::Auto`] is refused (detect first: [`open_stream`] does both).
pub fn open_reader<R: Read + Send + 'static>(
    format: Format,
    input: R,
    path: &str,
    opts: &ReadOptions,
) -> Result<Box<dyn TraceSource>, TraceError> {
    if opts.page_size == 0 {
        return Err(TraceError::Invalid("page size must be at least 1 byte".into()));
    }
    if opts.columns.is_some() && format != Format::Csv && format != Format::Auto {
        return Err(TraceError::Invalid(format!(
            "{path}: a column map applies to the csv format only, not to {format}"
        )));
    }
    if opts.volume.is_some() && !format.has_volumes() && format != Format::Auto {
        return Err(TraceError::Invalid(format!(
            "{path}: the {format} format has no volume column, so a volume cannot be selected"
        )));
    }
    Ok(match format {
        Format::Auto => {
            return Err(TraceError::Format(format!("{path}: the format must be detected before a reader is opened")));
        }
        Format::Spc => Box::new(LineReader::new(input, spc::Spc, path, opts)?),
        Format::Msr => Box::new(LineReader::new(input, msr::Msr, path, opts)?),
        Format::CloudPhysics => Box::new(LineReader::new(input, cloudphysics::CloudPhysics, path, opts)?),
        Format::Tencent => Box::new(LineReader::new(input, tencent::Tencent, path, opts)?),
        Format::Disksim => {
            let f = disksim::DiskSim { time_unit: opts.time_unit.unwrap_or(TimeUnit::Millis), name: "disksim" };
            Box::new(LineReader::new(input, f, path, opts)?)
        }
        Format::Mqsim => {
            let f = disksim::DiskSim { time_unit: opts.time_unit.unwrap_or(TimeUnit::Nanos), name: "mqsim" };
            Box::new(LineReader::new(input, f, path, opts)?)
        }
        Format::Arc => Box::new(LineReader::new(input, arc::Arc, path, opts)?),
        Format::Lirs => Box::new(LineReader::new(input, lirs::Lirs, path, opts)?),
        Format::Text => Box::new(LineReader::new(input, text::Text::new(), path, opts)?),
        Format::Oracle => Box::new(OracleReader::new(input, path)),
        Format::Binary => Box::new(BinaryReader::new(input, path)),
        Format::Csv => {
            let Some(map) = &opts.columns else {
                return Err(TraceError::Invalid(format!(
                    "{path}: the csv format needs a column map (--columns offset=N,...; see `flashbuf list`)"
                )));
            };
            if opts.volume.is_some() && map.volume.is_none() {
                return Err(TraceError::Invalid(format!(
                    "{path}: a volume is selected but the column map names no volume column"
                )));
            }
            Box::new(LineReader::new(input, columns::Columns::new((**map).clone(), opts.page_size), path, opts)?)
        }
    })
}

/// A trace opened for reading, with how its format was chosen.
pub struct OpenedStream {
    /// The requests.
    pub source: Box<dyn TraceSource>,
    /// The format read.
    pub format: Format,
    /// The compression removed.
    pub compression: Compression,
    /// One line saying why this format (given, or the detection's reason).
    pub reason: String,
}

impl fmt::Debug for OpenedStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenedStream")
            .field("format", &self.format)
            .field("compression", &self.compression)
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

/// Decompresses `input`, detects its format when [`ReadOptions::format`] is
/// [`Format::Auto`] (from `name`, the file name, and the first [`SNIFF_BYTES`] of content),
/// and opens the reader. Works on any stream (a file, standard input); nothing is read twice.
pub fn open_stream<R: Read + Send + 'static>(
    input: R,
    name: &str,
    opts: &ReadOptions,
) -> Result<OpenedStream, TraceError> {
    open_named(input, name, name, opts)
}

/// Opens the trace file at `path` (see [`open_stream`]); errors name the path as given.
pub fn open_path(path: &Path, opts: &ReadOptions) -> Result<OpenedStream, TraceError> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|source| TraceError::Io { path: shown.clone(), source })?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| shown.clone());
    let again = file.try_clone().ok();
    let mut opened = open_named(file, &name, &shown, opts)?;
    // An uncompressed oracleGeneral file is decoded in place from a memory map instead (see
    // `oracle`): the detection above read it as a stream, which is dropped.
    if opened.format == Format::Oracle
        && opened.compression == Compression::None
        && let Some(map) = again.as_ref().and_then(oracle::Mapped::of)
    {
        opened.source = Box::new(OracleReader::mapped(map, &shown));
    }
    Ok(opened)
}

/// [`open_stream`] with the name used for detection (`name`) apart from the one errors show.
fn open_named<R: Read + Send + 'static>(
    input: R,
    name: &str,
    shown: &str,
    opts: &ReadOptions,
) -> Result<OpenedStream, TraceError> {
    let io_err = |source| TraceError::Io { path: shown.to_string(), source };
    let (mut reader, compression) = decompress(input).map_err(io_err)?;
    let compressed = match compression {
        Compression::None => String::new(),
        c => format!("{c}-compressed; "),
    };
    let (format, reason, reader): (Format, String, Box<dyn Read + Send>) =
        if opts.format == Format::Auto && opts.columns.is_some() {
            (Format::Csv, format!("{compressed}a column map is given: csv"), reader)
        } else if opts.format == Format::Auto {
            let mut head = vec![0u8; SNIFF_BYTES];
            let n = read_full(&mut reader, &mut head).map_err(io_err)?;
            head.truncate(n);
            let detection = detect_format(name, &head, n < SNIFF_BYTES).map_err(|e| match e {
                TraceError::Format(m) => TraceError::Format(format!("{shown}: {m}")),
                other => other,
            })?;
            (detection.format, format!("{compressed}{}", detection.reason), Box::new(Cursor::new(head).chain(reader)))
        } else {
            (opts.format, format!("{compressed}format given: {}", opts.format), reader)
        };
    let source = open_reader(format, reader, shown, opts)?;
    Ok(OpenedStream { source, format, compression, reason })
}
