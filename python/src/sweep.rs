//! Sweeps: a TOML configuration (or a Python dict turned into one) planned by
//! [`SweepConfig::plan`], its results in the resumable [`ResultFiles`] of an output directory.
//! The runs execute here on every core ([`SweepOutput::run_local`]) or elsewhere: the Python
//! package's Ray backend sends each pending run as JSON ([`SweepOutput::spec_json`]) to a task
//! that executes it with [`execute_json`] — [`flashbuf_sim::execute`], the local path — and
//! hands the row back to [`SweepOutput::append`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use flashbuf_sim::plan::{error_chain, render_chain};
use flashbuf_sim::sweep::{
    ConfigError, OpenMode, ResultFiles, Sweep, SweepConfig, SweepError, merge_results, run_parallel,
};
use flashbuf_sim::wire::{row_from_json, row_to_json, spec_from_json, spec_to_json};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::{background, error};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(toml_of_dict, m)?)?;
    m.add_function(wrap_pyfunction!(plan_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_dir, m)?)?;
    m.add_function(wrap_pyfunction!(execute_json, m)?)?;
    m.add_function(wrap_pyfunction!(merge_sweep, m)?)?;
    m.add_class::<SweepPlan>()?;
    m.add_class::<SweepOutput>()?;
    Ok(())
}

fn sweep_error(e: &SweepError) -> PyErr {
    error(render_chain(&error_chain(e)))
}

fn toml_value(v: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        let i: i64 = v.extract().map_err(|_| error(format!("sweep configuration: {at}: integer out of range")))?;
        return Ok(toml::Value::Integer(i));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(v.extract()?));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let key: String =
                k.extract().map_err(|_| error(format!("sweep configuration: {at}: keys must be strings, not {k}")))?;
            let inner = toml_value(&x, &format!("{at}.{key}"))?;
            t.insert(key, inner);
        }
        return Ok(toml::Value::Table(t));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
        let values =
            items.iter().enumerate().map(|(i, x)| toml_value(x, &format!("{at}[{i}]"))).collect::<PyResult<_>>()?;
        return Ok(toml::Value::Array(values));
    }
    if let Ok(p) = v.extract::<PathBuf>() {
        return Ok(toml::Value::String(p.to_string_lossy().into_owned()));
    }
    let type_name = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    Err(error(format!(
        "sweep configuration: {at}: a {type_name} cannot be written in a sweep configuration (use strings, numbers, \
         booleans, lists and dicts)"
    )))
}

/// The TOML text of a sweep configuration given as a dict (keys in the dict's order, which is
/// the order in which list-valued keys multiply).
#[pyfunction]
fn toml_of_dict(config: &Bound<'_, PyDict>) -> PyResult<String> {
    let toml::Value::Table(t) = toml_value(config.as_any(), "config")? else { unreachable!("a dict is a table") };
    toml::to_string(&t).map_err(|e| error(format!("sweep configuration: {e}")))
}

fn config_error(e: &ConfigError, text: &str, from_dict: bool) -> PyErr {
    if !from_dict {
        return error(e.to_string());
    }
    // The line numbers of a dict's generated TOML mean nothing to its author: quote the line.
    let line = e.at.and_then(|at| text.lines().nth(at.line - 1)).map(str::trim);
    match line {
        Some(l) => error(format!("sweep configuration: {} (at `{l}`)", e.message)),
        None => error(format!("sweep configuration: {}", e.message)),
    }
}

fn parse_config(text: &str, path: &str, from_dict: bool) -> PyResult<SweepConfig> {
    SweepConfig::parse(text, Path::new(path)).map_err(|e| config_error(&e, text, from_dict))
}

fn plan(py: Python<'_>, config: &SweepConfig, text: &str, from_dict: bool) -> PyResult<Sweep> {
    py.detach(|| config.plan(&mut |_| {})).map_err(|e| match &e {
        SweepError::Config(c) => config_error(c, text, from_dict),
        other => sweep_error(other),
    })
}

/// The output directory of a sweep configuration: `out`, else its `output`, else
/// `<name>-results` in the current directory.
fn output_dir(config: &SweepConfig, path: &str, out: Option<PathBuf>) -> PathBuf {
    let stem = Path::new(path).file_stem().map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned());
    out.or_else(|| config.output.clone()).unwrap_or_else(|| PathBuf::from(format!("{stem}-results")))
}

/// The default output directory of a sweep configuration (its `output`, else
/// `<name>-results`), without planning it.
#[pyfunction]
fn sweep_dir(text: &str, path: &str, from_dict: bool) -> PyResult<PathBuf> {
    Ok(output_dir(&parse_config(text, path, from_dict)?, path, None))
}

/// A planned sweep and its output directory.
#[pyclass(module = "flashbuf._native")]
pub struct SweepPlan {
    sweep: Arc<Sweep>,
    dir: PathBuf,
    mode: OpenMode,
}

/// Parses and plans a sweep configuration (TOML `text`; `path` names it in messages and
/// anchors its relative paths); its results go to `out`, else the configuration's `output`,
/// else `<name>-results`, in `shard-I-of-N` for a shard.
#[pyfunction]
#[pyo3(signature = (text, path, from_dict, out, shard, mode))]
fn plan_sweep(
    py: Python<'_>,
    text: &str,
    path: &str,
    from_dict: bool,
    out: Option<PathBuf>,
    shard: Option<(usize, usize)>,
    mode: &str,
) -> PyResult<SweepPlan> {
    let mode = open_mode(mode)?;
    let config = parse_config(text, path, from_dict)?;
    let mut dir = output_dir(&config, path, out);
    if let Some((i, n)) = shard {
        if n == 0 || i == 0 || i > n {
            return Err(error(format!("shard {i}/{n}: expected I/N with 1 <= I <= N, e.g. 3/8")));
        }
        dir = dir.join(format!("shard-{i}-of-{n}"));
    }
    // Refuse existing results before reading any trace, as the command line does.
    ResultFiles::check(&dir, mode).map_err(|e| sweep_error(&e))?;
    let mut sweep = plan(py, &config, text, from_dict)?;
    if let Some((i, n)) = shard {
        sweep = sweep.shard(i, n).map_err(|e| sweep_error(&e))?;
    }
    Ok(SweepPlan { sweep: Arc::new(sweep), dir, mode })
}

fn open_mode(mode: &str) -> PyResult<OpenMode> {
    match mode {
        "new" => Ok(OpenMode::New),
        "overwrite" => Ok(OpenMode::Overwrite),
        "resume" => Ok(OpenMode::Resume),
        other => Err(error(format!("unknown mode '{other}'; valid: new, overwrite, resume"))),
    }
}

#[pymethods]
impl SweepPlan {
    /// Number of runs.
    fn __len__(&self) -> usize {
        self.sweep.len()
    }

    /// The output directory.
    #[getter]
    fn dir(&self) -> PathBuf {
        self.dir.clone()
    }

    /// Opens the result files in the plan's mode: `new` (refuse existing files), `overwrite`
    /// or `resume` (keep the runs they hold).
    fn open(&self) -> PyResult<SweepOutput> {
        let files = ResultFiles::open(&self.dir, self.mode).map_err(|e| sweep_error(&e))?;
        let done = files.done();
        let pending = (0..self.sweep.len()).filter(|&i| !done.contains(self.sweep.runs()[i].key())).collect();
        Ok(SweepOutput { sweep: self.sweep.clone(), files: Some(files), pending, executed: 0 })
    }
}

/// The result files of a sweep being run.
#[pyclass(module = "flashbuf._native")]
pub struct SweepOutput {
    sweep: Arc<Sweep>,
    files: Option<ResultFiles>,
    pending: Vec<usize>,
    executed: usize,
}

impl SweepOutput {
    fn files(&mut self) -> PyResult<&mut ResultFiles> {
        self.files.as_mut().ok_or_else(|| error("the sweep's result files are closed"))
    }
}

#[pymethods]
impl SweepOutput {
    /// Indices (in plan order) of the runs the files do not hold yet.
    fn pending(&self) -> Vec<usize> {
        self.pending.clone()
    }

    /// Requests of the pending runs.
    fn pending_requests(&self) -> u64 {
        self.pending.iter().map(|&i| self.sweep.runs()[i].requests).sum()
    }

    /// Requests of run `index` (progress).
    fn requests(&self, index: usize) -> PyResult<u64> {
        let run = self.sweep.runs().get(index).ok_or_else(|| error(format!("no run {index} in this sweep")))?;
        Ok(run.requests)
    }

    /// Run `index` of the plan as JSON, for [`execute_json`].
    fn spec_json(&self, index: usize) -> PyResult<String> {
        let run = self.sweep.runs().get(index).ok_or_else(|| error(format!("no run {index} in this sweep")))?;
        Ok(spec_to_json(&run.spec))
    }

    /// Appends the row [`execute_json`] returned for run `index` to the files.
    fn append(&mut self, index: usize, row_json: &str) -> PyResult<()> {
        let sweep = self.sweep.clone();
        let run = sweep.runs().get(index).ok_or_else(|| error(format!("no run {index} in this sweep")))?;
        let mut row = row_from_json(row_json).map_err(error)?;
        if (row.trace.as_str(), row.policy.as_str(), row.buffer_pages)
            != (run.key().trace.as_str(), run.key().policy.as_str(), run.key().buffer_pages)
        {
            return Err(error(format!("the row given for run {index} is of another run ({})", run.key())));
        }
        // As a local sweep writes it: the device label of the run's key.
        row.device.clone_from(&run.key().device);
        self.files()?.append(&row).map_err(|e| sweep_error(&e))?;
        self.pending.retain(|&i| i != index);
        self.executed += 1;
        Ok(())
    }

    /// Runs the pending runs here, on `jobs` threads, appending each row as it finishes.
    #[pyo3(signature = (jobs, progress))]
    fn run_local(&mut self, py: Python<'_>, jobs: usize, progress: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let sweep = self.sweep.clone();
        let pending: Vec<usize> = self.pending.clone();
        let total = self.pending_requests();
        let mut files = self.files.take().ok_or_else(|| error("the sweep's result files are closed"))?;
        let (result, files, appended) = background(py, progress.as_ref(), total, |done, stop| {
            let runs: Vec<&flashbuf_sim::sweep::SweepRun> = pending.iter().map(|&i| &sweep.runs()[i]).collect();
            let mut appended = Vec::new();
            let result = run_parallel(
                &runs,
                jobs,
                &|n| {
                    done.fetch_add(n, Ordering::Relaxed);
                },
                &mut |run, row| {
                    files.append(&row)?;
                    appended.push(run.key().clone());
                    if stop.load(Ordering::Relaxed) {
                        return Err(SweepError::Threads("interrupted".into()));
                    }
                    Ok(())
                },
            );
            (result, files, appended)
        })?;
        self.files = Some(files);
        self.executed += appended.len();
        self.pending.retain(|&i| !appended.contains(self.sweep.runs()[i].key()));
        result.map(|_| ()).map_err(|e| sweep_error(&e))
    }

    /// Rewrites the files in plan order and closes them; returns `(planned, skipped,
    /// executed, dropped, csv path, jsonl path)`.
    fn finish(&mut self) -> PyResult<(usize, usize, usize, usize, PathBuf, PathBuf)> {
        if !self.pending.is_empty() {
            return Err(error(format!("{} runs of the sweep have not run", self.pending.len())));
        }
        let files = self.files.take().ok_or_else(|| error("the sweep's result files are closed"))?;
        let (csv, jsonl, dropped) = (files.csv_path().to_path_buf(), files.jsonl_path().to_path_buf(), files.dropped());
        files.finish(&self.sweep.keys()).map_err(|e| sweep_error(&e))?;
        let planned = self.sweep.len();
        Ok((planned, planned - self.executed, self.executed, dropped, csv, jsonl))
    }

    /// Closes the files without rewriting them (what they hold stays, for a resume).
    fn close(&mut self) {
        self.files = None;
    }
}

/// Executes one run sent as JSON ([`SweepOutput::spec_json`]) exactly as a local run, and
/// returns its row as JSON. The trace must be readable here at the same path.
#[pyfunction]
fn execute_json(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    let spec = spec_from_json(spec_json).map_err(error)?;
    let row = py.detach(|| flashbuf_sim::execute(&spec, &mut |_| {}));
    match row {
        Ok(r) => Ok(row_to_json(&r)),
        Err(e) => Err(error(render_chain(&error_chain(&e)))),
    }
}

/// Merges the results of a sharded sweep (`shards`: their directories) into `out`, exactly the
/// files the unsharded sweep writes; returns the number of runs.
#[pyfunction]
#[pyo3(signature = (text, path, from_dict, shards, out, force))]
fn merge_sweep(
    py: Python<'_>,
    text: &str,
    path: &str,
    from_dict: bool,
    shards: Vec<PathBuf>,
    out: PathBuf,
    force: bool,
) -> PyResult<usize> {
    let config = parse_config(text, path, from_dict)?;
    let sweep = plan(py, &config, text, from_dict)?;
    py.detach(|| merge_results(&sweep.keys(), &shards, &out, force)).map_err(|e| sweep_error(&e))
}
