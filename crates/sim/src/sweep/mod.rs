//! Parameter sweeps: the cross product of traces × devices × write-miss modes × policies (with
//! parameter lists) × buffer sizes, every combination one [`RunSpec`] executed with
//! [`execute`](crate::execute), in parallel, its [`ResultRow`] streamed to CSV and JSON Lines as
//! soon as it finishes.
//!
//! # Pieces
//!
//! * [`SweepConfig::parse`] reads a TOML sweep description (format in `docs/sweeps.md`) and
//!   rejects every mistake — unknown key, policy, parameter, device field, malformed generator,
//!   missing trace file — with the file, line and column and the valid choices, before anything
//!   runs. [`SweepConfig::plan`] then learns the size of file traces (one streaming scan each),
//!   checks every device for every trace, and expands the cross product into a [`Sweep`].
//! * [`Sweep::new`] builds a sweep from runs made in code (the papers' reproductions), with the
//!   same checks on run identities.
//! * [`run_parallel`] executes runs on a rayon pool (`jobs` threads), calling a progress
//!   callback with simulated request counts and handing each finished row to a sink on the
//!   calling thread.
//! * [`ResultFiles`] is the standard sink: `results.csv` and `results.jsonl` in an output
//!   directory, one line per run, flushed as each run completes, so an interrupted sweep keeps
//!   what it finished; opened in [`OpenMode::Resume`], it reports the runs already present
//!   ([`ResultFiles::done`]) so that only the others run. [`run_to_dir`] puts the three together.
//!
//! # Run identity
//!
//! A run is identified by its [`RunKey`]: trace label, policy label, buffer pages, device label,
//! write-miss mode and `run_id`, a fingerprint of every other option that can change the result
//! (page size, volume, format, every device field, final flush, warm-up, numbering, ...), the
//! columns a result row already has: a sweep resumed with other options reruns what changed. Two runs of one sweep must differ
//! in their keys. Identical runs listed twice (the same policy named twice, a percentage buffer
//! size that equals a page count for some trace) are run once. Device labels
//! ([`DeviceConfig::label`]) name only the main parameters of a device; when a sweep holds two
//! devices with the same label that differ in another field (e.g. `precondition` or
//! `gc_threshold`), each of their labels is extended by the differing fields —
//! `page/micron/greedy/op7/precondition=empty` — so that the rows stay distinguishable. Two
//! different traces with one label (two files named `trace.csv` in different directories, one file
//! read with two volumes) are an error: give them a `label`.
//!
//! # Choices where nothing else decides
//!
//! * Runs are started longest first (by requests; ties in plan order), which keeps every core
//!   busy to the end of a sweep whose runs differ in length. Rows therefore arrive out of plan
//!   order; when a sweep completes, [`ResultFiles::finish`] rewrites both files in plan order
//!   (atomically), so a finished sweep's files do not depend on scheduling. Rows of the files
//!   that the current plan does not contain (an earlier, different configuration resumed into
//!   the same directory) are kept, after the planned ones.
//! * After the first failed run, no new run starts; the runs in flight finish and their rows
//!   are written; the error is returned. A resumed sweep redoes only what is missing.

mod buffer_size;
mod config;
mod results;
mod runner;

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

use flashbuf_flash::DeviceConfig;

use crate::buffer::WriteMiss;
use crate::job::{JobError, RunSpec};
use crate::run::ResultRow;

pub use buffer_size::BufferSize;
pub use config::{Located, Location, PlanEvent, SweepConfig, TraceEntry};
pub use results::{OpenMode, ResultFiles, csv_header, merge_results};
pub use runner::{
    Schedule, SweepReport, SweepSession, memory_budget, run_parallel, run_scheduled, run_to_dir, schedule, total_memory,
};

/// The identity of a run in result files: the columns that say what was run.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunKey {
    /// Trace label (`trace` column).
    pub trace: String,
    /// Policy label with every parameter (`policy` column).
    pub policy: String,
    /// Buffer size in pages (`buffer_pages` column).
    pub buffer_pages: u64,
    /// Device label (`device` column).
    pub device: String,
    /// Write-miss mode as written in result files, `fetch` or `no-fetch` (`write_miss` column).
    pub write_miss: String,
    /// Fingerprint of every other option that can change the result (`run_id` column).
    pub run_id: String,
}

impl RunKey {
    /// The key of a result row.
    pub fn of_row(row: &ResultRow) -> Self {
        RunKey {
            trace: row.trace.clone(),
            policy: row.policy.clone(),
            buffer_pages: row.buffer_pages,
            device: row.device.clone(),
            write_miss: write_miss_name(row.write_miss).to_string(),
            run_id: row.run_id.clone(),
        }
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "trace {}, policy {}, {} buffer pages, device {}, write miss {}, run {}",
            self.trace, self.policy, self.buffer_pages, self.device, self.write_miss, self.run_id
        )
    }
}

/// The name of a write-miss mode in result files and sweep configurations.
pub fn write_miss_name(w: WriteMiss) -> &'static str {
    match w {
        WriteMiss::Fetch => "fetch",
        WriteMiss::NoFetch => "no-fetch",
    }
}

/// One run of a sweep: its description, its length (for progress) and its identity.
#[derive(Clone, Debug)]
pub struct SweepRun {
    /// What to run.
    pub spec: RunSpec,
    /// Requests the trace holds (the progress the run will report; 0 if unknown).
    pub requests: u64,
    key: RunKey,
}

impl SweepRun {
    /// A run of `spec`, whose trace holds `requests` requests. Its key uses
    /// `spec.trace_label`, `spec.policy.label()`, `spec.frames`, `spec.device.label()` and
    /// `spec.write_miss`; [`Sweep::new`] may extend the device label (see the module
    /// documentation).
    pub fn new(spec: RunSpec, requests: u64) -> Self {
        let key = RunKey {
            trace: spec.trace_label.clone(),
            policy: spec.policy.label(),
            buffer_pages: spec.frames as u64,
            device: spec.device.label(),
            write_miss: write_miss_name(spec.write_miss).to_string(),
            run_id: spec.fingerprint(),
        };
        SweepRun { spec, requests, key }
    }

    /// A run of `spec` whose length is known without reading the trace: generators know theirs;
    /// file traces count as 0 (use [`SweepRun::new`] with the count when known).
    pub fn from_spec(spec: RunSpec) -> Self {
        let requests = match &spec.trace {
            flashbuf_trace::TraceSpec::Generated(g) => g.total_requests(),
            flashbuf_trace::TraceSpec::File { .. } | flashbuf_trace::TraceSpec::Stdin { .. } => 0,
        };
        SweepRun::new(spec, requests)
    }

    /// The run's identity; its `device` is the label written in the run's result row.
    pub fn key(&self) -> &RunKey {
        &self.key
    }

    /// Runs it: [`execute`](crate::execute), with the row's device label set to the key's.
    pub fn execute(&self, progress: &mut dyn FnMut(u64)) -> Result<ResultRow, JobError> {
        let mut row = crate::job::execute(&self.spec, progress)?;
        row.device.clone_from(&self.key.device);
        Ok(row)
    }

    /// The result row of this run's output, with the key's device label.
    pub fn row(&self, out: &crate::RunOutput) -> ResultRow {
        let mut row = ResultRow::of_run(&self.spec, out);
        row.device.clone_from(&self.key.device);
        row
    }

    /// The interval rows of this run's output ([`crate::RunOptions::interval`]), with the key's
    /// device label.
    pub fn interval_rows(&self, out: &crate::RunOutput) -> Vec<ResultRow> {
        let mut rows = ResultRow::of_intervals(&self.spec, out);
        for r in &mut rows {
            r.device.clone_from(&self.key.device);
        }
        rows
    }

    fn same_run(&self, other: &SweepRun) -> bool {
        let (a, b) = (&self.spec, &other.spec);
        a.trace == b.trace
            && a.read == b.read
            && a.trace_label == b.trace_label
            && a.trace_pages == b.trace_pages
            && a.policy == b.policy
            && a.frames == b.frames
            && a.device == b.device
            && a.logical_pages == b.logical_pages
            && a.write_miss == b.write_miss
            && a.check_every == b.check_every
            && a.final_flush == b.final_flush
            && a.remap == b.remap
            && a.warmup == b.warmup
            && a.interval == b.interval
            && a.footprint_pages == b.footprint_pages
    }
}

/// A planned sweep: runs with distinct keys, in plan order.
#[derive(Clone, Debug, Default)]
pub struct Sweep {
    runs: Vec<SweepRun>,
    /// Where the configuration asked results to go (`output`, resolved against the
    /// configuration's directory), if it did.
    pub output: Option<PathBuf>,
}

impl Sweep {
    /// A sweep of `runs`, in this order. Device labels are extended where two different device
    /// configurations share one; identical runs are kept once; two different runs with one key
    /// are an error ([`SweepError::Duplicate`]).
    pub fn new(runs: Vec<SweepRun>) -> Result<Self, SweepError> {
        let mut runs = runs;
        // Labels are computed once per distinct device configuration (a sweep of a million runs
        // has a handful of devices).
        let mut distinct: Vec<&DeviceConfig> = Vec::new();
        let mut which: Vec<usize> = Vec::with_capacity(runs.len());
        for r in &runs {
            let i = match distinct.iter().position(|d| **d == r.spec.device) {
                Some(i) => i,
                None => {
                    distinct.push(&r.spec.device);
                    distinct.len() - 1
                }
            };
            which.push(i);
        }
        let labels = device_labels(&distinct);
        for (run, i) in runs.iter_mut().zip(which) {
            if run.key.device != labels[i] {
                run.key.device.clone_from(&labels[i]);
            }
        }
        // Runs must differ in the columns a reader sees, not only in their fingerprints: index
        // them by a hash of those columns and compare on a match (no copy of the keys is kept).
        let readable_hash = |k: &RunKey| {
            use std::hash::{Hash, Hasher};
            let mut h = rustc_hash::FxHasher::default();
            (&k.trace, &k.policy, k.buffer_pages, &k.device, &k.write_miss).hash(&mut h);
            h.finish()
        };
        let same_readable = |a: &RunKey, b: &RunKey| {
            a.trace == b.trace
                && a.policy == b.policy
                && a.buffer_pages == b.buffer_pages
                && a.device == b.device
                && a.write_miss == b.write_miss
        };
        let mut seen: HashMap<u64, Vec<usize>> = HashMap::with_capacity(runs.len());
        let mut keep = vec![true; runs.len()];
        for i in 0..runs.len() {
            let bucket = seen.entry(readable_hash(&runs[i].key)).or_default();
            match bucket.iter().copied().find(|&j| same_readable(&runs[j].key, &runs[i].key)) {
                Some(j) if runs[j].same_run(&runs[i]) => keep[i] = false,
                Some(j) => {
                    return Err(SweepError::Duplicate {
                        key: Box::new(runs[i].key.clone()),
                        first: describe(&runs[j]),
                        second: describe(&runs[i]),
                    });
                }
                None => bucket.push(i),
            }
        }
        drop(seen);
        let mut keep = keep.into_iter();
        runs.retain(|_| keep.next().expect("one flag per run"));
        runs.shrink_to_fit();
        Ok(Sweep { runs, output: None })
    }

    /// Parses a TOML configuration and plans it ([`SweepConfig::parse`] then
    /// [`SweepConfig::plan`]); `path` names the file in messages and anchors relative paths.
    pub fn from_toml(
        text: &str,
        path: &std::path::Path,
        observer: &mut (dyn FnMut(PlanEvent<'_>) + Send),
    ) -> Result<Self, SweepError> {
        SweepConfig::parse(text, path)?.plan(observer)
    }

    /// The runs, in plan order.
    pub fn runs(&self) -> &[SweepRun] {
        &self.runs
    }

    /// Number of runs.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// `true` for a sweep without runs.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The runs whose keys are not in `done`, in plan order.
    pub fn pending<'a>(&'a self, done: &std::collections::HashSet<RunKey>) -> Vec<&'a SweepRun> {
        self.runs.iter().filter(|r| !done.contains(r.key())).collect()
    }

    /// Requests over all runs (the total of a progress bar).
    pub fn total_requests(&self) -> u64 {
        self.runs.iter().map(|r| r.requests).sum()
    }

    /// Shard `index` of `count` (1-based, `1 ..= count`): every `count`-th run of the plan,
    /// starting with the `index`-th, in plan order — a deterministic share for one task of a job
    /// array. The shards of a sweep are disjoint and together hold every run;
    /// [`merge_results`] puts their result files back together.
    pub fn shard(&self, index: usize, count: usize) -> Result<Sweep, SweepError> {
        if count == 0 || index == 0 || index > count {
            return Err(SweepError::Shard(format!("shard {index}/{count}: expected I/N with 1 <= I <= N")));
        }
        let runs =
            self.runs.iter().enumerate().filter(|(k, _)| k % count == index - 1).map(|(_, r)| r.clone()).collect();
        Ok(Sweep { runs, output: self.output.clone() })
    }

    /// The keys in plan order.
    pub fn keys(&self) -> Vec<RunKey> {
        self.runs.iter().map(|r| r.key.clone()).collect()
    }
}

fn describe(run: &SweepRun) -> String {
    let s = &run.spec;
    format!(
        "trace {} ({:?}), policy {}, {} frames, device {:?}, write miss {}",
        s.trace,
        s.read,
        s.policy,
        s.frames,
        s.device,
        write_miss_name(s.write_miss)
    )
}

/// Labels for `devices`: [`DeviceConfig::label`], extended by `/field=value` for every field in
/// which two different configurations with the same label differ.
pub fn device_labels(devices: &[&DeviceConfig]) -> Vec<String> {
    let base: Vec<String> = devices.iter().map(|d| d.label()).collect();
    let fields: Vec<Vec<(String, String)>> = devices.iter().map(|d| device_fields(d)).collect();
    let mut out = base.clone();
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, b) in base.iter().enumerate() {
        groups.entry(b.as_str()).or_default().push(i);
    }
    for members in groups.values() {
        let distinct = members.iter().any(|&i| devices[i] != devices[members[0]]);
        if !distinct {
            continue;
        }
        let first = &fields[members[0]];
        let varying: Vec<usize> =
            (0..first.len()).filter(|&f| members.iter().any(|&i| fields[i][f].1 != first[f].1)).collect();
        for &i in members {
            for &f in &varying {
                let (name, value) = &fields[i][f];
                out[i].push_str(&format!("/{name}={value}"));
            }
        }
    }
    out
}

/// Every field of a device configuration as `(name, value)`, in a fixed order.
fn device_fields(d: &DeviceConfig) -> Vec<(String, String)> {
    let value = serde_json::to_value(d).expect("a device configuration serialises");
    let serde_json::Value::Object(map) = value else { unreachable!("a struct serialises to an object") };
    map.into_iter()
        .map(|(k, v)| {
            let s = match (k.as_str(), v) {
                ("precondition", _) => d.precondition.to_string(),
                (_, serde_json::Value::String(s)) => s,
                (_, serde_json::Value::Null) => "none".to_string(),
                (_, other) => other.to_string(),
            };
            (k, s)
        })
        .collect()
}

/// A mistake in a sweep configuration, located in its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ConfigError {
    /// The configuration file.
    pub path: PathBuf,
    /// Where in it (`None` when the mistake is an absence, e.g. a missing key).
    pub at: Option<Location>,
    /// What is wrong, with the valid choices.
    pub message: String,
}

impl ConfigError {
    fn render(&self) -> String {
        match self.at {
            Some(at) => format!("{}:{}:{}: {}", self.path.display(), at.line, at.column, self.message),
            None => format!("{}: {}", self.path.display(), self.message),
        }
    }
}

/// Why a sweep could not be planned, run or recorded.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The configuration is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Two different runs of the sweep have the same identity.
    #[error(
        "two different runs would write result rows with the same identity ({key}): {first}; and {second}; \
         give the traces distinct labels"
    )]
    Duplicate {
        /// The shared key.
        key: Box<RunKey>,
        /// The first run.
        first: String,
        /// The second run.
        second: String,
    },
    /// Result files exist and neither overwriting nor resuming was asked for.
    #[error("{path} already exists; use --resume to complete it or --force to overwrite it")]
    Exists {
        /// The existing file.
        path: PathBuf,
    },
    /// Another sweep is writing into the same directory.
    #[error("{dir}: another sweep is writing its results here; wait for it or choose another output directory")]
    Busy {
        /// The output directory.
        dir: PathBuf,
    },
    /// An existing result file cannot be resumed.
    #[error("{path}:{line}: {message}")]
    Results {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A run failed.
    #[error(transparent)]
    Run(#[from] JobError),
    /// The thread pool could not be built.
    #[error("cannot start the worker threads: {0}")]
    Threads(String),
    /// A shard specification or a merge of shards is wrong.
    #[error("{0}")]
    Shard(String),
}
