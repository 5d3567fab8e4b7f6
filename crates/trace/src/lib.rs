//! Page-reference traces: the request model every other flashbuf crate consumes, seeded
//! generators of the papers' synthetic workloads, and streaming readers for real trace formats.
//!
//! A trace is a sequence of [`Request`]s: a page number (`u64`, keeping its spatial meaning,
//! because clustering and block-level policies reason about neighbouring pages), an access kind
//! (read or write) and an optional timestamp. Traces are consumed in batches through
//! [`TraceSource`], so a trace of any length streams in constant memory and the simulator's
//! per-request loop never makes a dynamic call.
//!
//! # Components
//!
//! * [`generators`]: uniform, Zipf (the AD-LRU paper's formula), self-similar (Gray et al.) and
//!   the AD-LRU scan mix, described by a [`GenSpec`] (`"zipf,requests=500000,pages=50000"`, or
//!   a preset of the papers' traces such as `"adlru-zipf"`). Portable: same seed, same trace,
//!   on every machine ([`rng`]).
//! * [`formats`]: streaming readers of SPC, MSR Cambridge, CloudPhysics, Tencent CBS,
//!   DiskSim/MQSim, ARC `.lis`, LIRS, libCacheSim oracleGeneral and flashbuf's own text and
//!   binary formats, with transparent decompression (gzip, zstd, bzip2, xz), page splitting,
//!   volume selection and format auto-detection ([`open_path`], [`detect_format`]).
//! * [`writers`]: text, binary and oracleGeneral writers that never leave a half-written file.
//! * [`TraceSpec`]: a command-line trace argument (`gen:<spec>`, `<format>:<path>` or a path)
//!   opened into an [`OpenedTrace`]; [`stats`] summarises a trace in one pass.
//!
//! ```
//! use flashbuf_trace::{ReadOptions, TraceSpec, collect, stats};
//!
//! let spec = TraceSpec::parse("gen:adlru-zipf,requests=1000").unwrap();
//! assert_eq!(spec.page_count(), Some(50_000));
//! let mut opened = spec.open(&ReadOptions::default()).unwrap();
//! let summary = stats(&mut *opened.source, 2048).unwrap();
//! assert_eq!(summary.requests, 1000);
//! ```

#![warn(missing_docs)]

pub mod cache;
pub mod footprint;
pub mod formats;
pub mod generators;
pub mod output;
pub mod remap;
pub mod rng;
pub mod sample;
mod spec;
mod stats;
pub mod writers;

pub use cache::{CacheKey, SummaryCache};
pub use footprint::FootprintIndex;
pub use formats::{
    ColumnMap, Compression, Detection, Format, ReadOptions, TimeUnit, detect_format, open_path, open_stream,
};
pub use generators::{GenKind, GenSpec, Locality, PRESETS};
pub use remap::{Remapped, Remapper, extent_pages_for};
pub use sample::BlockSampler;
pub use spec::{OpenedTrace, TraceSpec};
pub use stats::{EXTENT_LEVELS, TraceStats, TraceSummary, VolumeStats, stats, summarize};
pub use writers::{BinaryWriter, OracleWriter, TextWriter, TraceWriter, copy_trace, create_writer};

use std::fmt;

/// Whether a request reads or writes its page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum AccessKind {
    /// The page is read; a buffered copy stays clean.
    Read = 0,
    /// The page is modified; a buffered copy becomes dirty.
    Write = 1,
}

impl AccessKind {
    /// `true` for [`AccessKind::Write`].
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, AccessKind::Write)
    }

    /// One-letter code used by the text trace format: `R` or `W`.
    pub fn letter(self) -> char {
        match self {
            AccessKind::Read => 'R',
            AccessKind::Write => 'W',
        }
    }
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
        })
    }
}

/// One page access.
///
/// Multi-page requests of real traces are split into one `Request` per page by the readers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    /// Page number. Neighbouring numbers are neighbouring pages on the device.
    pub page: u64,
    /// Read or write.
    pub kind: AccessKind,
    /// Timestamp in microseconds since the start of the trace, when the trace has one.
    pub time_us: Option<u64>,
}

impl Request {
    /// A read of `page` without timestamp.
    pub fn read(page: u64) -> Self {
        Request { page, kind: AccessKind::Read, time_us: None }
    }

    /// A write of `page` without timestamp.
    pub fn write(page: u64) -> Self {
        Request { page, kind: AccessKind::Write, time_us: None }
    }
}

/// Why a trace could not be produced. Every variant that concerns a file names it, and parse
/// errors name the line (or record) and what was wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line or record of the file is malformed.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file concerned.
        path: String,
        /// 1-based line number, or record number for binary formats.
        line: u64,
        /// What was wrong.
        message: String,
    },
    /// The format could not be determined or was named wrongly.
    #[error("{0}")]
    Format(String),
    /// A generator or reader option is invalid.
    #[error("{0}")]
    Invalid(String),
}

/// A stream of requests, consumed in batches.
///
/// Implementations stream: they never need the whole trace in memory. The batch interface keeps
/// the consumer's per-request loop free of dynamic calls (one call per batch).
pub trait TraceSource: Send {
    /// Clears `out` and fills it with up to `max` following requests. Returns the number of
    /// requests written; `Ok(0)` means the trace is exhausted (and stays exhausted).
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError>;

    /// Reads the next up to `max` requests, as [`next_batch`](Self::next_batch) would, but puts
    /// in `out` (cleared first) only those whose page `sampler` keeps, in order; returns what
    /// was read, kept or not (`requests == 0`: the trace is exhausted). The default decodes the
    /// batch and filters it; a reader that can see a record's page without building the request
    /// (an oracleGeneral file) overrides it, so that the 99% a 1% sample drops cost only a hash.
    fn next_sampled(
        &mut self,
        out: &mut Vec<Request>,
        max: usize,
        sampler: &BlockSampler,
    ) -> Result<Scanned, TraceError> {
        let requests = self.next_batch(out, max)? as u64;
        let writes = out.iter().map(|r| r.kind as u64).sum();
        out.retain(|r| sampler.keeps(r.page));
        Ok(Scanned { requests, writes })
    }
}

/// What a sampled read ([`TraceSource::next_sampled`]) went through: every request read, kept or
/// not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scanned {
    /// Requests read.
    pub requests: u64,
    /// Of which writes.
    pub writes: u64,
}

impl<T: TraceSource + ?Sized> TraceSource for Box<T> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        (**self).next_batch(out, max)
    }

    fn next_sampled(
        &mut self,
        out: &mut Vec<Request>,
        max: usize,
        sampler: &BlockSampler,
    ) -> Result<Scanned, TraceError> {
        (**self).next_sampled(out, max, sampler)
    }
}

/// A finite in-memory trace, mostly for tests and for replaying recorded traces.
pub struct VecSource {
    requests: Vec<Request>,
    pos: usize,
}

impl VecSource {
    /// A source that yields `requests` in order.
    pub fn new(requests: Vec<Request>) -> Self {
        VecSource { requests, pos: 0 }
    }
}

impl TraceSource for VecSource {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let end = (self.pos + max).min(self.requests.len());
        out.extend_from_slice(&self.requests[self.pos..end]);
        self.pos = end;
        Ok(out.len())
    }
}

/// Reads a whole source into memory (tests and small traces only).
pub fn collect(source: &mut dyn TraceSource) -> Result<Vec<Request>, TraceError> {
    let mut all = Vec::new();
    let mut batch = Vec::with_capacity(4096);
    while source.next_batch(&mut batch, 4096)? > 0 {
        all.extend_from_slice(&batch);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vec_source_yields_everything_in_batches_then_stays_empty() {
        let reqs: Vec<Request> =
            (0..10).map(|p| if p % 3 == 0 { Request::write(p) } else { Request::read(p) }).collect();
        let mut src = VecSource::new(reqs.clone());
        let mut batch = Vec::new();
        assert_eq!(src.next_batch(&mut batch, 4).unwrap(), 4);
        assert_eq!(batch, reqs[0..4]);
        assert_eq!(collect(&mut src).unwrap(), reqs[4..]);
        assert_eq!(src.next_batch(&mut batch, 4).unwrap(), 0);
        assert!(batch.is_empty());
    }

    #[test]
    fn parse_errors_name_file_and_line() {
        let e = TraceError::Parse { path: "a.csv".into(), line: 7, message: "bad op 'X'".into() };
        assert_eq!(e.to_string(), "a.csv:7: bad op 'X'");
    }
}
