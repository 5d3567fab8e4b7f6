//! Running sweeps: runs on a rayon pool, rows handed to a sink on the calling thread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use super::results::{OpenMode, ResultFiles};
use super::{Sweep, SweepError, SweepRun};
use crate::group::GroupEvent;
use crate::job::{JobError, RunSpec};
use crate::run::{ResultRow, RunOutput};

/// The memory runs may hold at once, in bytes: `$FLASHBUF_MEMORY` (a size such as `8GiB`) when
/// set, else half of the memory the operating system reports available, else 4 GiB.
pub fn memory_budget() -> u64 {
    if let Some(v) = std::env::var_os("FLASHBUF_MEMORY")
        && let Ok(super::BufferSize::Bytes(b)) = v.to_string_lossy().parse::<super::BufferSize>()
    {
        return b.max(1);
    }
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    available.map_or(4 << 30, |a| a / 2)
}

/// The machine's physical memory in bytes (`MemTotal`), or `u64::MAX` when it cannot be read.
pub fn total_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(u64::MAX, |kb| kb.saturating_mul(1024))
}

/// How runs are scheduled: groups of runs sharing one decoding, in waves that fit the memory
/// budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Waves, run one after the other; each holds groups run at the same time; a group holds
    /// indices of runs that share one decoding of their trace.
    pub waves: Vec<Vec<Vec<usize>>>,
}

impl Schedule {
    /// Decodings the schedule makes (one per group).
    pub fn decodes(&self) -> usize {
        self.waves.iter().map(Vec::len).sum()
    }
}

/// Groups `runs` by the requests they read ([`crate::RunSpec::same_requests`]), splits groups whose
/// runs together would hold more than `budget` bytes, orders groups longest first (ties in plan
/// order), and packs them into waves of at most `budget` bytes (a group larger than the budget
/// forms a wave of its own).
pub fn schedule(runs: &[&SweepRun], budget: u64) -> Schedule {
    let mut by_requests: HashMap<(String, String, Option<u64>), usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let s = &r.spec;
        let key = (s.trace.to_string(), s.read.describe(), s.remap);
        let g = *by_requests.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    let mut parts: Vec<(Vec<usize>, u64)> = Vec::new();
    for g in groups {
        let mut part = Vec::new();
        let mut bytes = 0u64;
        for i in g {
            let m = runs[i].spec.memory_bytes();
            if !part.is_empty() && bytes.saturating_add(m) > budget {
                parts.push((std::mem::take(&mut part), bytes));
                bytes = 0;
            }
            part.push(i);
            bytes = bytes.saturating_add(m);
        }
        if !part.is_empty() {
            parts.push((part, bytes));
        }
    }
    parts.sort_by_key(|(p, _)| std::cmp::Reverse(runs[p[0]].requests));
    let mut waves: Vec<Vec<Vec<usize>>> = Vec::new();
    let mut wave_bytes = 0u64;
    for (p, bytes) in parts {
        match waves.last_mut() {
            Some(w) if wave_bytes.saturating_add(bytes) <= budget => {
                w.push(p);
                wave_bytes += bytes;
            }
            _ => {
                waves.push(vec![p]);
                wave_bytes = bytes;
            }
        }
    }
    Schedule { waves }
}

/// Executes `runs` on `jobs` threads (0: one per core): runs that read the same requests share
/// one decoding of their trace ([`crate::execute_group`]), as many at once as the memory budget
/// ([`memory_budget`]) allows, longest traces first. `progress` receives the requests of every
/// simulated batch. `sink` receives each finished run's row on the calling thread, in completion
/// order (the runs of a group finish together).
///
/// After a run fails or the sink fails, no new group starts; the groups in flight finish (their
/// rows still go to the sink, unless the sink is what failed) and the first error is returned.
/// Returns the number of rows the sink accepted.
pub fn run_parallel(
    runs: &[&SweepRun],
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
    sink: &mut dyn FnMut(&SweepRun, ResultRow) -> Result<(), SweepError>,
) -> Result<usize, SweepError> {
    let events = |e: GroupEvent<'_>| {
        if let GroupEvent::Simulated(n) = e {
            progress(n)
        }
    };
    run_scheduled(runs, &schedule(runs, memory_budget()), jobs, &events, &mut |_, run, out| sink(run, run.row(&out)))
}

/// [`run_parallel`] with a given schedule, reporting every [`GroupEvent`] (from the worker
/// threads) and handing the sink each run's index in `runs`, the run and its whole output.
pub fn run_scheduled(
    runs: &[&SweepRun],
    plan: &Schedule,
    jobs: usize,
    events: &(dyn Fn(GroupEvent<'_>) + Sync),
    sink: &mut dyn FnMut(usize, &SweepRun, RunOutput) -> Result<(), SweepError>,
) -> Result<usize, SweepError> {
    if runs.is_empty() {
        return Ok(0);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("flashbuf-sweep-{i}"))
        .build()
        .map_err(|e| SweepError::Threads(e.to_string()))?;
    let stop = AtomicBool::new(false);
    let mut accepted = 0usize;
    let mut first_error: Option<SweepError> = None;
    let mut sink_failed = false;
    for wave in &plan.waves {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let (tx, rx) = mpsc::channel::<(usize, Result<RunOutput, JobError>)>();
        std::thread::scope(|s| {
            let pool = &pool;
            s.spawn(move || {
                pool.scope(|ps| {
                    for group in wave {
                        let tx = tx.clone();
                        ps.spawn(move |_| {
                            let specs: Vec<&RunSpec> = group.iter().map(|&i| &runs[i].spec).collect();
                            let results = crate::group::execute_group_with(&specs, &mut |e| events(e));
                            for (&i, r) in group.iter().zip(results) {
                                if tx.send((i, r)).is_err() {
                                    break;
                                }
                            }
                        });
                    }
                    drop(tx);
                });
            });
            for (i, result) in rx {
                match result {
                    Ok(out) if !sink_failed => match sink(i, runs[i], out) {
                        Ok(()) => accepted += 1,
                        Err(e) => {
                            stop.store(true, Ordering::Relaxed);
                            sink_failed = true;
                            first_error.get_or_insert(e);
                        }
                    },
                    Ok(_) => {}
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        first_error.get_or_insert(e.into());
                    }
                }
            }
        });
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(accepted),
    }
}

/// What a sweep written to a directory did.
#[derive(Clone, Debug)]
pub struct SweepReport {
    /// Runs in the sweep.
    pub planned: usize,
    /// Runs skipped because the result files held them already.
    pub skipped: usize,
    /// Runs executed now.
    pub executed: usize,
    /// Rows removed from the files when resuming (see [`ResultFiles::dropped`]).
    pub dropped: usize,
    /// The CSV file.
    pub csv: PathBuf,
    /// The JSON Lines file.
    pub jsonl: PathBuf,
}

/// A sweep bound to its result files: what is left to run, then running it.
pub struct SweepSession<'a> {
    sweep: &'a Sweep,
    files: ResultFiles,
    pending: Vec<&'a SweepRun>,
}

impl<'a> SweepSession<'a> {
    /// Opens the result files of `dir` (see [`ResultFiles::open`]) and determines the runs of
    /// `sweep` they do not hold.
    pub fn open(sweep: &'a Sweep, dir: &Path, mode: OpenMode) -> Result<Self, SweepError> {
        let files = ResultFiles::open(dir, mode)?;
        let pending = sweep.pending(files.done());
        Ok(SweepSession { sweep, files, pending })
    }

    /// The runs still to do, in plan order.
    pub fn pending(&self) -> &[&'a SweepRun] {
        &self.pending
    }

    /// Requests of the runs still to do (the total of a progress bar).
    pub fn pending_requests(&self) -> u64 {
        self.pending.iter().map(|r| r.requests).sum()
    }

    /// Runs what is left (see [`run_parallel`]), appending each row to the files as it comes,
    /// and when everything succeeded rewrites the files in plan order.
    pub fn run(mut self, jobs: usize, progress: &(dyn Fn(u64) + Sync)) -> Result<SweepReport, SweepError> {
        let files = &mut self.files;
        let executed = run_parallel(&self.pending, jobs, progress, &mut |_, row| files.append(&row))?;
        let report = SweepReport {
            planned: self.sweep.len(),
            skipped: self.sweep.len() - self.pending.len(),
            executed,
            dropped: self.files.dropped(),
            csv: self.files.csv_path().to_path_buf(),
            jsonl: self.files.jsonl_path().to_path_buf(),
        };
        self.files.finish(&self.sweep.keys())?;
        Ok(report)
    }
}

/// Runs `sweep` into the result files of `dir`: [`SweepSession::open`] then
/// [`SweepSession::run`].
pub fn run_to_dir(
    sweep: &Sweep,
    dir: &Path,
    mode: OpenMode,
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SweepReport, SweepError> {
    SweepSession::open(sweep, dir, mode)?.run(jobs, progress)
}
