//! One complete run described by value: trace, policy, buffer size, device, write-miss mode.
//! The CLI's `run`, sweeps and the papers' reproductions all execute runs through [`execute`],
//! so a result row means the same thing wherever it comes from.

use flashbuf_flash::{DeviceConfig, DeviceError};
use flashbuf_policy::PolicyConfig;
use flashbuf_trace::{ReadOptions, TraceError, TraceSpec};

use crate::buffer::WriteMiss;
use crate::run::{ResultRow, RunError, RunOptions, run};

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
    /// Largest page number + 1 (sizes the device and the page table).
    pub trace_pages: u64,
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
            policy,
            frames,
            device,
            logical_pages: trace_pages.max(1),
            write_miss: WriteMiss::Fetch,
            check_every: None,
            final_flush: true,
        }
    }
}

/// Executes `spec`: opens the trace, builds the device, runs, and returns the result row.
/// `progress` receives the number of requests of each batch simulated.
pub fn execute(spec: &RunSpec, progress: &mut dyn FnMut(u64)) -> Result<ResultRow, JobError> {
    let mut opened =
        spec.trace.open(&spec.read).map_err(|source| JobError::Trace { trace: spec.trace_label.clone(), source })?;
    let device = spec.device.build(spec.logical_pages).map_err(|source| JobError::Device {
        device: spec.device.label(),
        pages: spec.logical_pages,
        source,
    })?;
    let options = RunOptions {
        frames: spec.frames,
        write_miss: spec.write_miss,
        pages_hint: spec.trace_pages,
        check_every: spec.check_every,
        final_flush: spec.final_flush,
    };
    let out = run(&spec.policy, device, opened.source.as_mut(), &options, progress).map_err(|source| {
        JobError::Run { policy: spec.policy.label(), trace: spec.trace_label.clone(), frames: spec.frames, source }
    })?;
    Ok(ResultRow::new(&spec.trace_label, &spec.policy, &spec.device.label(), &options, &out))
}
