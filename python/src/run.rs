//! `run`: the runs of `flashbuf run`, planned by [`flashbuf_sim::plan::plan_runs`] and executed
//! as the command line executes them, their rows returned as the command line's CSV.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use flashbuf_flash::{DeviceConfig, DeviceKind, GcPolicy, NandPreset, Precondition};
use flashbuf_policy::Replacer;
use flashbuf_sim::custom::{CustomPolicy, execute_custom};
use flashbuf_sim::plan::{PlanOptions, PolicySlot, TraceInput, parse_buffers, parse_policies, plan_runs, render_chain};
use flashbuf_sim::prepare::{RemapMode, Warmup};
use flashbuf_sim::sweep::{SweepRun, memory_budget, run_scheduled, schedule};
use flashbuf_sim::{GroupEvent, ResultRow, RunOutput, WriteMiss};
use flashbuf_trace::{ColumnMap, Format, ReadOptions, SummaryCache, TimeUnit};
use pyo3::prelude::*;

use crate::policy::{Failure, FailureSlot, PyPolicyConfig, PyReplacer};
use crate::{PolicyContractError, background, error};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(cores, m)?)?;
    Ok(())
}

/// Parses `s` with `FromStr`, the error as the command line words it.
fn parse<T: std::str::FromStr>(s: &str) -> PyResult<T>
where
    T::Err: std::fmt::Display,
{
    s.parse::<T>().map_err(|e| error(e.to_string()))
}

/// The reader options, checked as `flashbuf run` checks them.
pub(crate) fn read_options(
    page_size: u64,
    format: &str,
    volume: Option<u64>,
    time_unit: Option<&str>,
    columns: Option<&str>,
) -> PyResult<ReadOptions> {
    if page_size == 0 {
        return Err(error("--page-size must be a positive number of bytes"));
    }
    let format: Format = parse(format)?;
    let columns = columns.map(|c| parse::<ColumnMap>(c).map(Arc::new)).transpose()?;
    if columns.is_none() && format == Format::Csv {
        return Err(error("--format csv needs --columns (which column holds the offset, size, op, time, volume)"));
    }
    Ok(ReadOptions { format, page_size, volume, time_unit: time_unit.map(parse::<TimeUnit>).transpose()?, columns })
}

/// A policy argument: a command-line policy list, or a Python policy as
/// `(factory, label, name, block_pages)`.
#[derive(FromPyObject)]
enum PolicyArg {
    Spec(String),
    Python(Py<PyAny>, String, String, Option<u64>),
}

/// The number of cores (the default number of threads).
#[pyfunction]
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs every trace × device × policy × buffer size, as `flashbuf run` does, and returns the
/// rows as `flashbuf run --output csv` writes them. `traces` holds `(argument, label, cache)`.
#[pyfunction]
#[pyo3(signature = (
    traces, policies, buffers, devices, *, preset, log_blocks, seq_log, eager_merge, gc, op_percent,
    gc_threshold, precondition, verify, capacity, page_size, format, volume, time_unit, columns,
    write_miss, remap, warmup, interval, check, final_flush, cache, jobs, progress
))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    traces: Vec<(String, Option<String>, bool)>,
    policies: Vec<PolicyArg>,
    buffers: Vec<String>,
    devices: Vec<String>,
    preset: &str,
    log_blocks: u32,
    seq_log: bool,
    eager_merge: bool,
    gc: &str,
    op_percent: f64,
    gc_threshold: u32,
    precondition: &str,
    verify: bool,
    capacity: Option<u64>,
    page_size: u64,
    format: &str,
    volume: Option<u64>,
    time_unit: Option<&str>,
    columns: Option<&str>,
    write_miss: &str,
    remap: &str,
    warmup: &str,
    interval: Option<u64>,
    check: bool,
    final_flush: bool,
    cache: bool,
    jobs: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let read = read_options(page_size, format, volume, time_unit, columns)?;
    let mut slots: Vec<PolicySlot> = Vec::new();
    let mut factories: Vec<Option<Py<PyAny>>> = Vec::new();
    for p in policies {
        match p {
            PolicyArg::Spec(s) => {
                for c in parse_policies(&[s]).map_err(error)? {
                    slots.push(PolicySlot::Registered(c));
                    factories.push(None);
                }
            }
            PolicyArg::Python(factory, label, name, block_pages) => {
                slots.push(PolicySlot::Custom(CustomPolicy { label, name, block_pages }));
                factories.push(Some(factory));
            }
        }
    }
    let buffers = parse_buffers(&buffers.join(",")).map_err(error)?;
    let mut kinds: Vec<DeviceKind> = Vec::new();
    for d in devices.iter().flat_map(|d| d.split(',')).map(str::trim).filter(|d| !d.is_empty()) {
        let k: DeviceKind = parse(d)?;
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    if kinds.is_empty() {
        return Err(error("no device given"));
    }
    let (preset, gc, precondition): (NandPreset, GcPolicy, Precondition) =
        (parse(preset)?, parse(gc)?, parse(precondition)?);
    let devices: Vec<DeviceConfig> = kinds
        .into_iter()
        .map(|kind| DeviceConfig {
            kind,
            preset,
            log_blocks,
            seq_log,
            eager_merge,
            gc,
            op_percent,
            gc_threshold,
            precondition,
            verify,
            ..DeviceConfig::default()
        })
        .collect();
    let write_miss = match write_miss {
        "fetch" => WriteMiss::Fetch,
        "no-fetch" => WriteMiss::NoFetch,
        other => return Err(error(format!("unknown write-miss mode '{other}'; valid: fetch, no-fetch"))),
    };
    let options = PlanOptions {
        read,
        buffers,
        devices,
        capacity,
        write_miss,
        remap: parse::<RemapMode>(remap)?,
        warmup: parse::<Warmup>(warmup)?,
        interval,
        check,
        final_flush,
        cache: if cache { SummaryCache::from_env() } else { SummaryCache::disabled() },
        memory_bytes: flashbuf_sim::sweep::total_memory(),
    };
    let traces: Vec<TraceInput> =
        traces.into_iter().map(|(arg, label, cache)| TraceInput { arg, label, cache }).collect();
    let jobs = jobs.filter(|&j| j > 0).unwrap_or_else(cores).min(cores());

    let planned = py.detach(|| plan_runs(&traces, &slots, &options, &mut |_| {})).map_err(error)?;
    let total: u64 = planned.iter().map(|r| r.requests).sum();
    let runs: Vec<SweepRun> = planned.iter().map(|p| SweepRun::new(p.spec.clone(), p.requests)).collect();
    let registered: Vec<usize> = (0..planned.len()).filter(|&i| factories[planned[i].policy].is_none()).collect();
    let custom: Vec<usize> = (0..planned.len()).filter(|&i| factories[planned[i].policy].is_some()).collect();
    // One failure slot and one configuration per custom run, made while attached.
    let configs: Vec<(usize, PyPolicyConfig, FailureSlot)> = custom
        .iter()
        .map(|&i| {
            let slot: FailureSlot = Arc::new(Mutex::new(None));
            let PolicySlot::Custom(c) = &slots[planned[i].policy] else { unreachable!("a custom slot") };
            let factory = factories[planned[i].policy].as_ref().expect("a custom run has a factory").clone_ref(py);
            (i, PyPolicyConfig::new(factory, c.label.clone(), slot.clone()), slot)
        })
        .collect();

    let outputs = background(py, progress.as_ref(), total, |done: &AtomicU64, stop: &AtomicBool| {
        let mut outputs: Vec<Option<Result<RunOutput, String>>> = vec![None; planned.len()];
        let refs: Vec<&SweepRun> = registered.iter().map(|&i| &runs[i]).collect();
        let events = |e: GroupEvent<'_>| {
            if let GroupEvent::Simulated(n) = e {
                done.fetch_add(n, Ordering::Relaxed);
            }
        };
        let result = run_scheduled(&refs, &schedule(&refs, memory_budget()), jobs, &events, &mut |k, _, out| {
            outputs[registered[k]] = Some(Ok(out));
            if stop.load(Ordering::Relaxed) {
                return Err(flashbuf_sim::sweep::SweepError::Threads("interrupted".into()));
            }
            Ok(())
        });
        if let Err(e) = result {
            return Err(render_chain(&flashbuf_sim::plan::error_chain(&e)));
        }
        for (i, config, _) in &configs {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let PolicySlot::Custom(c) = &slots[planned[*i].policy] else { unreachable!("a custom slot") };
            let spec = &planned[*i].spec;
            // Attached for the whole run, so that the policy's calls (each attaching in turn)
            // do not make a thread state of their own every time; the interpreter still
            // switches to the calling thread between them (progress, Ctrl-C).
            let r = Python::attach(|_| {
                let policy = PyReplacer::new(spec.frames, config);
                execute_custom(spec, c, policy, &mut |n| {
                    done.fetch_add(n, Ordering::Relaxed);
                })
            });
            outputs[*i] = Some(r.map_err(|e| render_chain(&flashbuf_sim::plan::error_chain(&e))));
        }
        Ok(outputs)
    })?;
    let outputs = outputs.map_err(error)?;
    // A Python policy's own failure is the error to raise, whatever the run made of it.
    for (i, _, slot) in &configs {
        let failure = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        let spec = &planned[*i].spec;
        let PolicySlot::Custom(c) = &slots[planned[*i].policy] else { unreachable!("a custom slot") };
        let context = format!("policy {} on trace {} with {} frames", c.label, spec.trace_label, spec.frames);
        match failure {
            Some(Failure::Python(e, what)) => {
                let note = format!("raised by {what} of {context}");
                let _ = e.value(py).call_method1("add_note", (note,));
                return Err(e);
            }
            Some(Failure::Contract(m)) => return Err(PolicyContractError::new_err(format!("{m} ({context})"))),
            None => {}
        }
    }
    let mut rows: Vec<ResultRow> = Vec::new();
    for (i, out) in outputs.into_iter().enumerate() {
        let out = match out {
            Some(Ok(out)) => out,
            Some(Err(e)) => return Err(error(e)),
            None => return Err(error("interrupted before every run finished")),
        };
        let spec = &planned[i].spec;
        match &slots[planned[i].policy] {
            PolicySlot::Registered(_) if interval.is_some() => rows.extend(runs[i].interval_rows(&out)),
            PolicySlot::Registered(_) => rows.push(runs[i].row(&out)),
            PolicySlot::Custom(c) if interval.is_some() => rows.extend(c.interval_rows(spec, &out)),
            PolicySlot::Custom(c) => rows.push(c.row(spec, &out)),
        }
    }
    csv_text(&rows)
}

/// `rows` as `flashbuf run --output csv` writes them (a header line, then one line per row).
pub(crate) fn csv_text(rows: &[ResultRow]) -> PyResult<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = flashbuf_sim::sweep::csv_header();
    if rows.is_empty() {
        w.write_record(&header).map_err(|e| error(e.to_string()))?;
    }
    for r in rows {
        w.serialize(r).map_err(|e| error(e.to_string()))?;
    }
    let bytes = w.into_inner().map_err(|e| error(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| error(e.to_string()))
}
