//! Running an experiment's runs in parallel and saving their rows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use flashbuf_report::{CsvTable, OutputFile, PlotSpec};
use flashbuf_sim::sweep::{RunKey, SweepRun, run_parallel};
use flashbuf_sim::{ResultRow, RunSpec};
use flashbuf_trace::TraceSpec;

use crate::judge::Sample;

/// Seeds of every generated trace in a replicated experiment.
pub const SEEDS: u64 = 5;

/// The runs of an experiment replicated over seeds ([`Ctx::run_seeded`]).
#[derive(Clone, Debug)]
pub struct Seeded {
    /// Per spec, its rows: one per seed (one for a trace file).
    pub per_spec: Vec<Vec<ResultRow>>,
    /// Per spec, the mean of its rows (numeric columns averaged; integers rounded), labelled
    /// as the spec.
    pub mean: Vec<ResultRow>,
}

impl Seeded {
    /// The index of the first spec whose mean row satisfies `pred`.
    pub fn index(&self, pred: impl Fn(&ResultRow) -> bool) -> Option<usize> {
        self.mean.iter().position(pred)
    }

    /// `f` of spec `i`'s rows, one value per seed.
    pub fn sample(&self, i: usize, f: impl Fn(&ResultRow) -> f64) -> Sample {
        Sample::new(self.per_spec[i].iter().map(f).collect())
    }

    /// `f` of the first spec whose mean row satisfies `pred`, one value per seed.
    pub fn sample_of(&self, pred: impl Fn(&ResultRow) -> bool, f: impl Fn(&ResultRow) -> f64) -> Sample {
        let i = self.index(pred).expect("a row of the experiment matches");
        self.sample(i, f)
    }
}

/// The mean row of each spec's runs, and the CSV of the means with a `_sd` column for every
/// column that is numeric in every run.
fn mean_rows(per_spec: &[Vec<ResultRow>], specs: &[RunSpec]) -> Result<(Vec<ResultRow>, String)> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in per_spec.iter().flatten() {
        w.serialize(r)?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut rd = csv::Reader::from_reader(bytes.as_slice());
    let header = rd.headers()?.clone();
    let records: Vec<csv::StringRecord> = rd.records().collect::<Result<_, _>>()?;
    let is_num = |v: &str| v.parse::<f64>().is_ok_and(f64::is_finite);
    let numeric: Vec<bool> = (0..header.len()).map(|c| records.iter().all(|r| is_num(&r[c]))).collect();
    let mut out = csv::Writer::from_writer(Vec::new());
    let mut h: Vec<String> = header.iter().map(str::to_string).collect();
    h.extend(header.iter().zip(&numeric).filter(|(_, n)| **n).map(|(c, _)| format!("{c}_sd")));
    out.write_record(&h)?;
    let mut means = Vec::with_capacity(per_spec.len());
    let mut start = 0;
    for (rows, spec) in per_spec.iter().zip(specs) {
        let recs = &records[start..start + rows.len()];
        start += rows.len();
        let mut mean = csv::StringRecord::new();
        let mut sds = Vec::new();
        for (c, name) in header.iter().enumerate() {
            let vals: Vec<&str> = recs.iter().map(|r| &r[c]).collect();
            if vals.iter().all(|v| is_num(v)) {
                let sample = Sample::new(vals.iter().map(|v| v.parse::<f64>().unwrap_or(0.0)).collect());
                let integer = vals.iter().all(|v| !v.contains(['.', 'e', 'E']));
                let m = sample.mean();
                mean.push_field(&if integer { format!("{}", m.round() as i128) } else { format!("{m}") });
                if numeric[c] {
                    sds.push(format!("{}", sample.sd()));
                }
            } else {
                mean.push_field(if name == "trace" { &spec.trace_label } else { vals[0] });
            }
        }
        means.push(mean.deserialize::<ResultRow>(Some(&header))?);
        let mut rec: Vec<String> = mean.iter().map(str::to_string).collect();
        rec.extend(sds);
        out.write_record(&rec)?;
    }
    let csv = String::from_utf8(out.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?;
    Ok((means, csv))
}

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
        let rows = self.run_rows(name, specs, requests_per_run)?;
        self.write_csv(&format!("{name}.csv"), &rows)?;
        Ok(rows)
    }

    /// As [`Ctx::run`], each run on a generated trace replicated over [`SEEDS`] seeds (the
    /// trace's own seed s and s + 1 … s + 4; a trace file is run once). Writes every run's row
    /// to `<out>/<name>-seeds.csv` and, to `<out>/<name>.csv`, one row per spec with the mean
    /// over its seeds (its trace label that of the spec) followed by a `<column>_sd` column for
    /// every numeric column: the sample standard deviation over the seeds.
    pub fn run_seeded(&self, name: &str, specs: &[RunSpec], requests_per_run: &[u64]) -> Result<Seeded> {
        let mut all = Vec::new();
        let mut all_req = Vec::new();
        let mut owner = Vec::new();
        for (i, (s, &n)) in specs.iter().zip(requests_per_run).enumerate() {
            match &s.trace {
                TraceSpec::Generated(g) => {
                    for k in 0..SEEDS {
                        let mut r = s.clone();
                        let mut g = g.clone();
                        g.seed = g.seed.wrapping_add(k);
                        if k > 0 {
                            r.trace_label = format!("{} (seed {})", s.trace_label, g.seed);
                        }
                        r.trace = TraceSpec::Generated(g);
                        all.push(r);
                        all_req.push(n);
                        owner.push(i);
                    }
                }
                _ => {
                    all.push(s.clone());
                    all_req.push(n);
                    owner.push(i);
                }
            }
        }
        let rows = self.run_rows(name, &all, &all_req)?;
        self.write_csv(&format!("{name}-seeds.csv"), &rows)?;
        let mut per_spec: Vec<Vec<ResultRow>> = vec![Vec::new(); specs.len()];
        for (row, &i) in rows.into_iter().zip(&owner) {
            per_spec[i].push(row);
        }
        let (mean, csv) = mean_rows(&per_spec, specs)?;
        let path = self.out.join(format!("{name}.csv"));
        write_atomic(&path, |w| Ok(w.write_all(csv.as_bytes())?))?;
        Ok(Seeded { per_spec, mean })
    }

    fn run_rows(&self, name: &str, specs: &[RunSpec], requests_per_run: &[u64]) -> Result<Vec<ResultRow>> {
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
        Ok(rows.into_iter().map(|r| r.expect("every run produced a row")).collect())
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
    /// The PNG is rendered at 300 dpi (print size that of the SVG); where the CSV holds a
    /// `<y>_sd` column for every y column (the seeds' spread), each point gets an error bar of
    /// ± that much; the series of a line chart are shifted apart by a marker's width so that
    /// coinciding points do not hide each other.
    pub fn plot(&self, csv: &str, name: &str, spec: &PlotSpec) -> Result<String> {
        use flashbuf_report::plot::{ChartKind, Figure, Panel};
        let table = CsvTable::read(&self.out.join(csv))?;
        let sd: Vec<String> = spec.y.iter().map(|y| format!("{y}_sd")).collect();
        let errors = if sd.iter().all(|c| table.column(c).is_ok()) { sd } else { Vec::new() };
        let mut fig = Figure::single(Panel { spec: spec.clone(), errors, dodge: spec.kind == ChartKind::Line });
        // Printed at 4/5 of the spec's nominal size (640 × 400 units, 6.7 × 4.2 inches for the
        // default): a journal column's width at 300 dpi, and committed PNGs of a reasonable size.
        fig.panel_width = spec.width * 4 / 5;
        fig.panel_height = spec.height * 4 / 5;
        flashbuf_report::plot::plot_figure(&table, &fig, &self.out.join(name))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exp::{Trace, policies};

    #[test]
    fn seeded_runs_replicate_generated_traces_and_average_them() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx {
            out: dir.path().to_path_buf(),
            quick: true,
            traces_dir: None,
            progress: &Silent,
            warnings: Default::default(),
        };
        let t = Trace::generated("zipf,requests=3000,pages=800,write-ratio=0.5,seed=9").unwrap();
        let dev = flashbuf_flash::DeviceConfig::default();
        let specs: Vec<RunSpec> = policies(&["lru", "cflru:w=0.5"]).iter().map(|p| t.run(p, 64, &dev)).collect();
        let s = ctx.run_seeded("exp", &specs, &[t.requests, t.requests]).unwrap();
        assert_eq!(s.per_spec.len(), 2);
        for (i, rows) in s.per_spec.iter().enumerate() {
            assert_eq!(rows.len(), SEEDS as usize);
            // Five different traces: the seeds 9..13 give different write counts.
            let w = s.sample(i, |r| r.page_writes as f64);
            assert!(w.sd() > 0.0, "{:?}", w.values());
            assert_eq!(s.mean[i].page_writes, w.mean().round() as u64);
            assert!((s.mean[i].hit_ratio - s.sample(i, |r| r.hit_ratio).mean()).abs() < 1e-12);
            assert_eq!(s.mean[i].trace, t.label);
        }
        // The first seed is the trace's own.
        assert_eq!(s.per_spec[0][0].trace, t.label);
        let text = std::fs::read_to_string(dir.path().join("exp.csv")).unwrap();
        assert!(text.lines().next().unwrap().contains("page_writes_sd"));
        assert_eq!(text.lines().count(), 3, "a header and one mean row per spec");
        let all = std::fs::read_to_string(dir.path().join("exp-seeds.csv")).unwrap();
        assert_eq!(all.lines().count(), 1 + 2 * SEEDS as usize);
    }
}
