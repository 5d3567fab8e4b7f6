//! Running an experiment's runs in parallel and saving their rows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use flashbuf_report::{CsvTable, OutputFile, PlotSpec};
use flashbuf_sim::sweep::{RunKey, SweepRun, run_parallel};
use flashbuf_sim::{ResultRow, RunSpec};

/// Receives progress: the total number of requests to simulate grows as experiments start, and
/// every simulated batch is reported.
pub trait Progress: Sync {
    /// `n` more requests will be simulated.
    fn add_total(&self, n: u64);
    /// `n` requests were simulated.
    fn inc(&self, n: u64);
    /// A one-line status (the experiment being run).
    fn status(&self, msg: &str);
}

/// Progress that goes nowhere.
pub struct Silent;

impl Progress for Silent {
    fn add_total(&self, _: u64) {}
    fn inc(&self, _: u64) {}
    fn status(&self, _: &str) {}
}

/// Where and how a reproduction runs.
pub struct Ctx<'a> {
    /// Output directory of this paper's report.
    pub out: PathBuf,
    /// Quick mode: fewer points, smaller traces.
    pub quick: bool,
    /// Directory of the shared real traces (`../shared/traces`), if present.
    pub traces_dir: Option<PathBuf>,
    /// Progress sink.
    pub progress: &'a dyn Progress,
    /// Warnings gathered while running (a missing trace, ...): printed in the report.
    pub warnings: std::sync::Mutex<Vec<String>>,
}

impl Ctx<'_> {
    /// Runs `specs` in parallel (each deterministic and independent; the sweep runner, longest
    /// first), writes their rows to `<out>/<name>.csv`, and returns the rows in the order of
    /// `specs`.
    pub fn run(&self, name: &str, specs: &[RunSpec], requests_per_run: &[u64]) -> Result<Vec<ResultRow>> {
        self.progress.status(name);
        self.progress.add_total(requests_per_run.iter().sum());
        let runs: Vec<SweepRun> =
            specs.iter().zip(requests_per_run).map(|(s, &n)| SweepRun::new(s.clone(), n)).collect();
        let index: HashMap<&RunKey, usize> = runs.iter().enumerate().map(|(i, r)| (r.key(), i)).collect();
        anyhow::ensure!(index.len() == runs.len(), "experiment {name}: two runs are identical");
        let refs: Vec<&SweepRun> = runs.iter().collect();
        let mut rows: Vec<Option<ResultRow>> = vec![None; runs.len()];
        run_parallel(&refs, 0, &|n| self.progress.inc(n), &mut |run, row| {
            rows[index[run.key()]] = Some(row);
            Ok(())
        })
        .map_err(|e| anyhow::anyhow!("experiment {name}: {e}"))?;
        let rows: Vec<ResultRow> = rows.into_iter().map(|r| r.expect("every run produced a row")).collect();
        self.write_csv(&format!("{name}.csv"), &rows)?;
        Ok(rows)
    }

    /// Writes `rows` as CSV to `<out>/<file>` (complete or not at all).
    pub fn write_csv<T: serde::Serialize>(&self, file: &str, rows: &[T]) -> Result<()> {
        let path = self.out.join(file);
        write_atomic(&path, |w| {
            let mut c = csv::Writer::from_writer(w);
            for r in rows {
                c.serialize(r)?;
            }
            c.flush()?;
            Ok(())
        })
    }

    /// Plots one of this report's CSV files (`<out>/<csv>`) as `spec` says into
    /// `<out>/<name>.svg` and `<out>/<name>.png`; returns the PNG's file name for the report.
    pub fn plot(&self, csv: &str, name: &str, spec: &PlotSpec) -> Result<String> {
        let table = CsvTable::read(&self.out.join(csv))?;
        flashbuf_report::plot::plot(&table, spec, &self.out.join(name))
            .map_err(|e| anyhow::anyhow!("plot {name}: {e}"))?;
        Ok(format!("{name}.png"))
    }

    /// A real trace from the shared directory, if present; if not, a warning naming what is
    /// skipped (`skipped`) is recorded for the report.
    pub fn real_trace(&self, name: &str, skipped: &str) -> Option<PathBuf> {
        let found = self.traces_dir.as_ref().map(|d| d.join(name)).filter(|p| p.is_file());
        if found.is_none() {
            let where_ = match &self.traces_dir {
                Some(d) => format!("not found in {}", d.display()),
                None => "not found (no trace directory; give --traces)".to_string(),
            };
            self.warn(format!("trace {name} {where_}: {skipped} skipped"));
        }
        found
    }

    /// Records a warning for the report.
    pub fn warn(&self, msg: String) {
        self.warnings.lock().unwrap_or_else(|e| e.into_inner()).push(msg);
    }

    /// The warnings recorded so far.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Writes `path` completely through `write`, or not at all (reports are regenerated, so an
/// existing file is replaced).
pub fn write_atomic(path: &Path, write: impl FnOnce(&mut dyn std::io::Write) -> Result<()>) -> Result<()> {
    let mut f = OutputFile::create(path, true)?;
    write(&mut f)?;
    f.commit()?;
    Ok(())
}
