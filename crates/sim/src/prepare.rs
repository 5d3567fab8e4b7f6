//! What the runs over a trace must know before they start, and how they number its pages.
//!
//! Most runs need nothing in advance: they read the trace as it streams. Two things do need
//! the trace's footprint first:
//!
//! * a buffer size given as a share of the trace (`5%` = 5% of its distinct pages), and
//! * a flash device, which is sized from the page space the trace uses (plus its
//!   over-provisioning), and preconditioned before the first request.
//!
//! [`prepare`] finds out what is needed and gets it as cheaply as it can: a generator knows its
//! page count; a trace file's [`TraceSummary`] comes from the summary cache
//! ([`SummaryCache`]) or, the first time, from one streaming pass over the file, which is then
//! cached (so a file is decoded twice the first time it is run, and once after that). A trace
//! that can be read only once (standard input, a FIFO) cannot have a first pass: a run that
//! needs one is refused with a message saying what to change.
//!
//! It also decides the page numbering ([`RemapMode`]): the trace's own page numbers, or a
//! compact space of extents renumbered in first-touch order (`flashbuf_trace::remap`). In
//! `auto` mode the compact space is used when the trace's page range is more than twice the
//! compact space (sparse or multi-volume traces), or when the range is not known before the run
//! (nothing needed a first pass); generators, dense by construction, keep their numbers. The
//! whole story, with what remapping does to each policy family, is `docs/address-space.md`.

use std::fmt;
use std::str::FromStr;

use flashbuf_flash::{DeviceConfig, DeviceKind};
use flashbuf_policy::PolicyConfig;
use flashbuf_trace::{CacheKey, ReadOptions, SummaryCache, TraceError, TraceSource, TraceSpec, TraceSummary};

use crate::job::RunSpec;
use crate::sweep::BufferSize;

/// How pages are numbered for the simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RemapMode {
    /// Compact when the trace is sparse or its range is unknown (see the module documentation).
    #[default]
    Auto,
    /// Always the compact space.
    On,
    /// Always the trace's own page numbers.
    Off,
}

impl fmt::Display for RemapMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RemapMode::Auto => "auto",
            RemapMode::On => "on",
            RemapMode::Off => "off",
        })
    }
}

impl FromStr for RemapMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(RemapMode::Auto),
            "on" | "yes" | "true" => Ok(RemapMode::On),
            "off" | "no" | "false" => Ok(RemapMode::Off),
            _ => Err(format!("unknown remapping mode '{s}'; valid: auto, on, off")),
        }
    }
}

/// The extent size of the compact space for runs of `policies` over `devices`: the least common
/// multiple of every device's pages per block and every policy's block or cluster size, so that
/// remapping keeps each of them whole.
pub fn extent_pages(policies: &[PolicyConfig], devices: &[DeviceConfig]) -> Result<u64, String> {
    let sizes = devices
        .iter()
        .map(|d| u64::from(d.preset.config(1).geometry.pages_per_block))
        .chain(policies.iter().filter_map(PolicyConfig::block_pages));
    flashbuf_trace::extent_pages_for(sizes)
        .filter(|&e| e <= 1 << 24)
        .ok_or_else(|| "the block sizes of the policies and devices have no common multiple below 2^24 pages".into())
}

/// A warm-up: a number of requests or a share of the trace's requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Warmup {
    /// This many requests.
    Requests(u64),
    /// This percentage of the trace's requests, in [0, 100).
    Percent(f64),
}

impl Default for Warmup {
    fn default() -> Self {
        Warmup::Requests(0)
    }
}

impl Warmup {
    /// The warm-up in requests for a trace of `requests` requests (needed for percentages).
    pub fn requests(self, requests: Option<u64>) -> Result<u64, String> {
        match self {
            Warmup::Requests(n) => Ok(n),
            Warmup::Percent(p) => requests
                .map(|r| (r as f64 * p / 100.0).round() as u64)
                .ok_or_else(|| format!("a warm-up of {p}% needs the trace's length, which is not known")),
        }
    }
}

impl fmt::Display for Warmup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warmup::Requests(n) => write!(f, "{n}"),
            Warmup::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl FromStr for Warmup {
    type Err = String;

    /// `100000` (requests) or `10%` (of the trace's requests).
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(p) = s.strip_suffix('%') {
            let v: f64 = p.trim().parse().map_err(|_| format!("warm-up '{s}': not a percentage"))?;
            if !(0.0..100.0).contains(&v) {
                return Err(format!("warm-up '{s}': a percentage must be in [0, 100)"));
            }
            return Ok(Warmup::Percent(v));
        }
        s.replace('_', "")
            .parse::<u64>()
            .map(Warmup::Requests)
            .map_err(|_| format!("warm-up '{s}': expected a number of requests or a percentage like 10%"))
    }
}

/// What must be known before the runs start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// The distinct pages (buffer sizes in percent).
    pub distinct_pages: bool,
    /// The size of the page space (a flash device without an explicit capacity).
    pub page_space: bool,
    /// The number of requests (a warm-up in percent).
    pub requests: bool,
}

impl Needs {
    /// What `buffers`, `devices` and `warmup` need; `capacity` is an explicit device size.
    pub fn of(buffers: &[BufferSize], devices: &[DeviceConfig], capacity: Option<u64>, warmup: Warmup) -> Needs {
        Needs {
            distinct_pages: buffers.iter().any(|b| matches!(b, BufferSize::Percent(_))),
            page_space: capacity.is_none() && devices.iter().any(|d| d.kind != DeviceKind::Ideal),
            requests: matches!(warmup, Warmup::Percent(_)),
        }
    }
}

/// Where a summary came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SummaryOrigin {
    /// The summary cache (this entry).
    Cache(std::path::PathBuf),
    /// A pass over the trace made now.
    Pass,
}

/// What [`prepare`] reports as it goes.
#[derive(Debug)]
pub enum PrepareEvent<'a> {
    /// A pass over the trace starts (how it was opened: the detected format).
    PassStarted(&'a str),
    /// Requests read by the pass since the last event.
    Scanned(u64),
    /// The pass ended.
    PassDone,
    /// The summary was stored in the cache, here.
    Stored(&'a std::path::Path),
    /// The summary could not be stored (the run goes on).
    StoreFailed(&'a std::io::Error),
}

/// A trace ready to be run: what is known about it and how its pages are numbered.
#[derive(Clone, Debug)]
pub struct PreparedTrace {
    /// The trace.
    pub spec: TraceSpec,
    /// How it is read.
    pub read: ReadOptions,
    /// Its label in result rows.
    pub label: String,
    /// Its summary, when known before the run.
    pub summary: Option<TraceSummary>,
    /// Where the summary came from.
    pub origin: Option<SummaryOrigin>,
    /// Requests of the trace, when known (progress bars).
    pub requests: Option<u64>,
    /// Extent size of the compact space (whether or not it is used).
    pub extent_pages: u64,
    /// The compact space's extent size when pages are renumbered.
    pub remap: Option<u64>,
    /// Every page number the runs see is below this, when known before the run.
    pub page_space: Option<u64>,
}

/// Why a trace cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// Reading the trace failed.
    #[error("trace {trace}: {source}")]
    Trace {
        /// The trace's label.
        trace: String,
        /// The error.
        #[source]
        source: TraceError,
    },
    /// The runs need a first pass over a trace that can be read only once.
    #[error(
        "trace {trace}: {what} needs the trace's footprint before the run starts, but {trace} can be read \
         only once (a pipe or standard input), so there can be no first pass; {hint}"
    )]
    NeedsPass {
        /// The trace's label.
        trace: String,
        /// What needs it.
        what: String,
        /// What to do instead.
        hint: String,
    },
}

struct Counting<'a, 'b> {
    inner: &'a mut dyn TraceSource,
    observer: &'a mut (dyn FnMut(PrepareEvent<'b>) + Send),
}

impl TraceSource for Counting<'_, '_> {
    fn next_batch(&mut self, out: &mut Vec<flashbuf_trace::Request>, max: usize) -> Result<usize, TraceError> {
        let n = self.inner.next_batch(out, max)?;
        (self.observer)(PrepareEvent::Scanned(n as u64));
        Ok(n)
    }
}

fn cache_key(spec: &TraceSpec, read: &ReadOptions) -> Option<CacheKey> {
    match spec {
        TraceSpec::Generated(g) => Some(SummaryCache::generator_key(&g.canonical())),
        TraceSpec::File { path, format } => {
            let read = ReadOptions { format: format.unwrap_or(read.format), ..read.clone() };
            SummaryCache::key(path, &read)
        }
        TraceSpec::Stdin { .. } => None,
    }
}

/// One pass over the trace: its summary, with the extent counts of `extent_pages` included.
fn pass(
    spec: &TraceSpec,
    read: &ReadOptions,
    label: &str,
    extent_pages: u64,
    observer: &mut (dyn FnMut(PrepareEvent<'_>) + Send),
) -> Result<TraceSummary, PrepareError> {
    let fail = |source| PrepareError::Trace { trace: label.to_string(), source };
    let mut opened = spec.open(read).map_err(fail)?;
    observer(PrepareEvent::PassStarted(&opened.reason));
    let volumes = opened.format.is_some_and(|f| read.combines_volumes(f));
    let mut counting = Counting { inner: opened.source.as_mut(), observer };
    let summary = flashbuf_trace::summarize(&mut counting, read.page_size, volumes, &[extent_pages]).map_err(fail)?;
    observer(PrepareEvent::PassDone);
    Ok(summary)
}

/// What the runs over a trace ask of [`prepare`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    /// What must be known in advance.
    pub needs: Needs,
    /// How pages are numbered.
    pub remap: RemapMode,
    /// Extent size of the compact space ([`extent_pages`]).
    pub extent_pages: u64,
}

/// Prepares `spec` for runs that ask `ask`: what they need, numbering pages as `ask.remap` says
/// with extents of `ask.extent_pages`. Summaries are looked up in and stored to `cache`.
pub fn prepare(
    spec: &TraceSpec,
    read: &ReadOptions,
    label: &str,
    ask: Ask,
    cache: &SummaryCache,
    observer: &mut (dyn FnMut(PrepareEvent<'_>) + Send),
) -> Result<PreparedTrace, PrepareError> {
    let Ask { needs, remap: mode, extent_pages } = ask;
    let generated_pages = spec.page_count();
    let is_generator = generated_pages.is_some();
    let key = cache_key(spec, read);
    let cached = key.as_ref().and_then(|k| cache.load(k));
    // Whether the decision needs the summary: percentages always; a page space unless a
    // generator keeps its own (dense) numbering.
    let keeps_numbering = is_generator && mode != RemapMode::On;
    let need_summary =
        needs.distinct_pages || (needs.page_space && !keeps_numbering) || (needs.requests && !is_generator);
    let mut summary = None;
    let mut origin = None;
    if need_summary {
        let from_cache = cached.clone().filter(|s| s.extents_of(extent_pages).is_some());
        let s = match (from_cache, &key) {
            (Some(s), Some(k)) => {
                origin = Some(SummaryOrigin::Cache(cache.dir().map(|d| d.join("summaries")).unwrap_or_default()));
                let _ = k;
                s
            }
            _ if !spec.rereadable() => {
                let what = if needs.distinct_pages {
                    "a buffer size given in percent".to_string()
                } else if needs.requests {
                    "a warm-up given in percent".to_string()
                } else {
                    "a flash device".to_string()
                };
                let hint = if needs.distinct_pages {
                    "give buffer sizes in pages or bytes".to_string()
                } else if needs.requests {
                    "give the warm-up in requests".to_string()
                } else {
                    "use --device ideal, give the device's size with --capacity PAGES, or read the trace from \
                     a file"
                        .to_string()
                };
                return Err(PrepareError::NeedsPass { trace: label.to_string(), what, hint });
            }
            _ => {
                let s = pass(spec, read, label, extent_pages, observer)?;
                origin = Some(SummaryOrigin::Pass);
                if let Some(k) = &key {
                    match cache.store(k, &s) {
                        Ok(Some(path)) => observer(PrepareEvent::Stored(&path)),
                        Ok(None) => {}
                        Err(e) => observer(PrepareEvent::StoreFailed(&e)),
                    }
                }
                s
            }
        };
        summary = Some(s);
    }
    let remap = match mode {
        RemapMode::Off => None,
        RemapMode::On => Some(extent_pages),
        RemapMode::Auto => match &summary {
            Some(s) if need_summary => {
                let compact = s.extents_of(extent_pages).expect("the pass counted these extents") * extent_pages;
                let range = s.stats.page_range();
                (range > 2 * compact.max(1) || range >= 1 << 32).then_some(extent_pages)
            }
            _ if is_generator => None,
            _ => Some(extent_pages),
        },
    };
    let page_space = match (remap, &summary) {
        (Some(e), Some(s)) => s.extents_of(e).map(|n| n * e),
        (Some(_), None) => None,
        (None, Some(s)) => Some(s.stats.page_range()),
        (None, None) => generated_pages,
    };
    let requests = summary
        .as_ref()
        .or(cached.as_ref())
        .map(|s| s.stats.requests)
        .or_else(|| if let TraceSpec::Generated(g) = spec { Some(g.total_requests()) } else { None });
    Ok(PreparedTrace {
        spec: spec.clone(),
        read: read.clone(),
        label: label.to_string(),
        summary,
        origin,
        requests,
        extent_pages,
        remap,
        page_space,
    })
}

impl PreparedTrace {
    /// Distinct pages of the trace, when known.
    pub fn footprint(&self) -> Option<u64> {
        self.summary.as_ref().map(|s| s.stats.distinct_pages)
    }

    /// Frames of a buffer of size `b` for this trace.
    pub fn frames(&self, b: BufferSize) -> Result<usize, String> {
        let pages = b.pages(self.read.page_size, self.footprint())?;
        usize::try_from(pages)
            .ok()
            .filter(|&f| f < u32::MAX as usize)
            .ok_or_else(|| format!("a buffer of {pages} pages is more than flashbuf supports (2^32 - 1 frames)"))
    }

    /// Logical pages of `device` for this trace: `capacity` when given (at least the page
    /// space), else the page space (the ideal device, which stores nothing, accepts any page
    /// when the space is not known in advance).
    pub fn logical_pages(&self, device: &DeviceConfig, capacity: Option<u64>) -> Result<u64, String> {
        match (capacity, self.page_space) {
            (Some(c), Some(space)) if c < space => Err(format!(
                "--capacity {c} pages is smaller than the trace's page space of {space} pages{}",
                if self.remap.is_some() { " (touched extents × extent size)" } else { " (largest page + 1)" }
            )),
            (Some(0), _) => Err("--capacity must be at least 1 page".into()),
            (Some(c), _) => Ok(c),
            (None, Some(space)) => Ok(space.max(1)),
            (None, None) if device.kind == DeviceKind::Ideal => Ok(u64::MAX),
            (None, None) => Err(format!("device {} needs the trace's page space in advance", device.label())),
        }
    }

    /// A run of `policy` with `frames` frames over `device` of `logical_pages` pages.
    pub fn run_spec(&self, policy: &PolicyConfig, frames: usize, device: &DeviceConfig, logical_pages: u64) -> RunSpec {
        // Direct-map the page space only when it is dense: remapped, or a range within a few
        // times the footprint; a sparse space is hashed (memory follows what is touched).
        let dense = match (self.remap, self.page_space, self.footprint()) {
            (Some(_), Some(space), _) => space,
            (None, Some(space), Some(f)) if space <= 4 * f.max(1) => space,
            (None, Some(space), None) if self.spec.page_count().is_some() => space,
            _ => 0,
        };
        let mut spec = RunSpec::new(self.spec.clone(), dense, policy.clone(), frames, device.clone());
        spec.read = self.read.clone();
        spec.trace_label.clone_from(&self.label);
        spec.footprint_pages = self.footprint();
        spec.remap = self.remap;
        spec.logical_pages = logical_pages;
        spec
    }
}
