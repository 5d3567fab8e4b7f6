//! Running sweeps: runs on a rayon pool, rows handed to a sink on the calling thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use super::results::{OpenMode, ResultFiles};
use super::{Sweep, SweepError, SweepRun};
use crate::job::JobError;
use crate::run::ResultRow;

/// Executes `runs` on `jobs` threads (0: one per core), longest first (ties in the given
/// order). `progress` receives the requests of every simulated batch, from the worker threads.
/// `sink` receives each finished run's row on the calling thread, in completion order.
///
/// After a run fails or the sink fails, no new run starts; the runs in flight finish (their
/// rows still go to the sink, unless the sink is what failed) and the first error is returned.
/// Returns the number of rows the sink accepted.
pub fn run_parallel(
    runs: &[&SweepRun],
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
    sink: &mut dyn FnMut(&SweepRun, ResultRow) -> Result<(), SweepError>,
) -> Result<usize, SweepError> {
    if runs.is_empty() {
        return Ok(0);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("flashbuf-sweep-{i}"))
        .build()
        .map_err(|e| SweepError::Threads(e.to_string()))?;
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| runs[b].requests.cmp(&runs[a].requests));
    let workers = pool.current_num_threads().min(runs.len()).max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Result<ResultRow, JobError>)>();

    let mut accepted = 0usize;
    let mut first_error: Option<SweepError> = None;
    let mut sink_failed = false;
    std::thread::scope(|s| {
        let (next, stop, order) = (&next, &stop, &order);
        s.spawn(move || {
            pool.scope(|ps| {
                for _ in 0..workers {
                    let tx = tx.clone();
                    ps.spawn(move |_| {
                        while !stop.load(Ordering::Relaxed) {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&i) = order.get(k) else { break };
                            let result = runs[i].execute(&mut |n| progress(n));
                            if tx.send((i, result)).is_err() {
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
                Ok(row) if !sink_failed => match sink(runs[i], row) {
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
