//! One complete run described by value: trace, policy, buffer size, device, write-miss mode.
//! The CLI's `run`, sweeps and the papers' reproductions all execute runs through
//! [`execute_group`] (many runs over one decoding of their trace) or [`execute`] (one run), so a
//! result row means the same thing wherever it comes from.

use flashbuf_flash::DeviceKind;
use flashbuf_flash::{DeviceConfig, DeviceError};
use flashbuf_policy::{DeviceProfile, FtlClass, PolicyConfig};
use flashbuf_trace::{ReadOptions, TraceError, TraceSpec};

use crate::buffer::WriteMiss;
use crate::run::{ResultRow, RunError, RunOptions};

/// A run, fully described.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The trace.
    pub trace: TraceSpec,
    /// How to read it (file traces).
    pub read: ReadOptions,
    /// Label of the trace in result rows (defaults to `trace.label()` when built with
    /// [`RunSpec::new`]).
    pub trace_label: String,
    /// Size of the page space the run sees: the largest page number + 1, or, when `remap` is
    /// set, the compact space (touched extents × extent size). Sizes the page table's direct
    /// part; 0 when unknown.
    pub trace_pages: u64,
    /// Distinct pages of the trace, when known (the `footprint_pages` and `buffer_share`
    /// columns).
    pub footprint_pages: Option<u64>,
    /// Renumber the trace's pages into a compact space of extents of this many pages (see
    /// [`flashbuf_trace::remap`]); `None` keeps the trace's page numbers.
    pub remap: Option<u64>,
    /// The policy.
    pub policy: PolicyConfig,
    /// Buffer size in frames.
    pub frames: usize,
    /// The device.
    pub device: DeviceConfig,
    /// Logical capacity of the device in pages (at least `trace_pages`).
    pub logical_pages: u64,
    /// What a write miss does.
    pub write_miss: WriteMiss,
    /// Check every invariant after every `n` requests (debugging).
    pub check_every: Option<u64>,
    /// Write back the dirty pages left at the end (default true).
    pub final_flush: bool,
    /// Requests run before counting starts.
    pub warmup: u64,
    /// Keep the counters of every `n` requests (interval rows).
    pub interval: Option<u64>,
}

/// Why a run could not be executed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The trace could not be opened.
    #[error("trace {trace}: {source}")]
    Trace {
        /// Trace label.
        trace: String,
        /// The error.
        #[source]
        source: TraceError,
    },
    /// The device could not be built.
    #[error("device {device} for {pages} logical pages: {source}")]
    Device {
        /// Device label.
        device: String,
        /// Logical pages asked for.
        pages: u64,
        /// The error.
        #[source]
        source: DeviceError,
    },
    /// The run stopped.
    #[error("{policy} on {trace} with {frames} frames: {source}")]
    Run {
        /// Policy label.
        policy: String,
        /// Trace label.
        trace: String,
        /// Buffer size.
        frames: usize,
        /// The error.
        #[source]
        source: RunError,
    },
}

impl RunSpec {
    /// A run with defaults: the trace's own label, a device exactly as large as the trace, fetch
    /// on write miss, no checking.
    pub fn new(trace: TraceSpec, trace_pages: u64, policy: PolicyConfig, frames: usize, device: DeviceConfig) -> Self {
        RunSpec {
            trace_label: trace.label(),
            trace,
            read: ReadOptions::default(),
            trace_pages,
            footprint_pages: None,
            remap: None,
            policy,
            frames,
            device,
            logical_pages: trace_pages.max(1),
            write_miss: WriteMiss::Fetch,
            check_every: None,
            final_flush: true,
            warmup: 0,
            interval: None,
        }
    }

    /// What a device-aware policy may know of this run's device: the chip's latencies and
    /// geometry and the kind of FTL ([`flashbuf_policy::PolicyParams::fill_device`]).
    pub fn device_profile(&self) -> DeviceProfile {
        DeviceProfile { logical_pages: self.logical_pages, ..device_profile(&self.device) }
    }

    /// How the run is simulated (the [`RunOptions`] of its stepper).
    pub fn options(&self) -> RunOptions {
        RunOptions {
            frames: self.frames,
            write_miss: self.write_miss,
            pages_hint: self.trace_pages,
            dense_pages: self.remap.is_some(),
            check_every: self.check_every,
            final_flush: self.final_flush,
            warmup: self.warmup,
            interval: self.interval,
        }
    }

    /// An estimate of the memory the run holds, in bytes: its buffer (frames, policy state,
    /// page table) and its device (about 20 bytes per physical page of a simulated flash
    /// chip and its translation layer). Used to decide how many runs share one decoding
    /// ([`crate::sweep::run_parallel`]); it errs on the large side.
    pub fn memory_bytes(&self) -> u64 {
        let frames = self.frames as u64;
        // A renumbered trace's pages are direct-mapped up to the largest one met: about twice
        // the footprint (the compact space rounds up to extents; the array grows by doubling).
        let pages = match (self.remap, self.footprint_pages) {
            (Some(_), Some(f)) => self.trace_pages.max(f.saturating_mul(2)),
            _ => self.trace_pages,
        };
        let table = pages.max(16 * frames).min(crate::DENSE_LIMIT) * 4;
        let buffer = frames.saturating_mul(self.policy.bytes_per_frame()).saturating_add(table);
        let device = match self.device.kind {
            flashbuf_flash::DeviceKind::Ideal => 0,
            _ => {
                let ppb = u64::from(self.device.preset.config(1).geometry.pages_per_block);
                self.device.physical_blocks(self.logical_pages).unwrap_or(0).saturating_mul(ppb).saturating_mul(20)
            }
        };
        buffer.saturating_add(device)
    }

    /// Refuses a run that could not fit in `total_bytes` of memory ([`RunSpec::memory_bytes`]),
    /// before anything is allocated: the message says how much it needs.
    pub fn check_memory(&self, total_bytes: u64) -> Result<(), String> {
        let need = self.memory_bytes();
        if need > total_bytes {
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            return Err(format!(
                "{} with {} frames over {} of {} pages needs about {:.1} GiB of memory, more than this \
                 machine's {:.1} GiB",
                self.policy.label(),
                self.frames,
                self.device.label(),
                self.logical_pages,
                gib(need),
                gib(total_bytes)
            ));
        }
        Ok(())
    }

    /// A fingerprint of everything that can change the run's result: the trace (a generator's
    /// canonical specification; a file's name and length; standard input), how it is read,
    /// the policy and its parameters, the buffer, every field of the device and its size, the
    /// write-miss mode, the final flush, the warm-up, the intervals, the page numbering and the
    /// checking. Sixteen hexadecimal digits; result files carry it (`run_id`) so that a resumed
    /// sweep never keeps a row of a run made with other options.
    pub fn fingerprint(&self) -> String {
        let trace = match &self.trace {
            TraceSpec::Generated(g) => format!("gen:{}", g.canonical()),
            TraceSpec::File { path, format } => {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                format!("file:{name}:{len}:{format:?}")
            }
            TraceSpec::Stdin { format } => format!("stdin:{format:?}"),
        };
        let device = serde_json::to_string(&self.device).expect("a device configuration serialises");
        let text = format!(
            "{trace}|{}|{}|{}|{device}|{}|{:?}|{}|{}|{:?}|{:?}|{:?}",
            self.read.describe(),
            self.policy.label(),
            self.frames,
            self.logical_pages,
            self.write_miss,
            self.final_flush,
            self.warmup,
            self.interval,
            self.remap,
            self.check_every
        );
        let a = crc32c::crc32c(text.as_bytes());
        let b = crc32c::crc32c_append(0x9e37_79b9, text.as_bytes());
        format!("{a:08x}{b:08x}")
    }

    /// `true` when `self` and `other` read the same requests (same trace, read options and
    /// remapping), so that one decoding can feed both.
    pub fn same_requests(&self, other: &RunSpec) -> bool {
        self.trace == other.trace && self.read == other.read && self.remap == other.remap
    }
}

/// Executes `spec` alone: opens the trace, builds the device, runs, and returns the result row.
/// `progress` receives the number of requests of each batch simulated.
pub fn execute(spec: &RunSpec, progress: &mut dyn FnMut(u64)) -> Result<ResultRow, JobError> {
    let out = crate::group::execute_group(&[spec], progress).pop().expect("one result per run")?;
    Ok(ResultRow::of_run(spec, &out))
}

/// What a device-aware policy may know of `device`: its chip's read, program and erase latencies
/// and pages per block, and the class of its translation layer (its size is the run's:
/// [`RunSpec::device_profile`] fills it in).
pub fn device_profile(device: &DeviceConfig) -> DeviceProfile {
    let nand = device.preset.config(1);
    let ns = |t: u64| t as f64 / 1e3;
    DeviceProfile {
        read_us: ns(nand.timing.read_ns),
        program_us: ns(nand.timing.program_ns),
        erase_us: ns(nand.timing.erase_ns),
        pages_per_block: nand.geometry.pages_per_block,
        ftl: match device.kind {
            DeviceKind::Ideal => FtlClass::Ideal,
            DeviceKind::Page => FtlClass::PageMapped,
            DeviceKind::Block => FtlClass::BlockMapped,
            DeviceKind::Bast => FtlClass::LogBlock,
            DeviceKind::Fast => FtlClass::SharedLog,
        },
        logical_pages: 0,
    }
}
