//! `flashbuf run`: every combination of traces × devices × policies × buffer sizes, one result
//! row each (or one per interval with `--interval`).
//!
//! Each trace is decoded once for all its runs (`flashbuf_sim::group`), spread over the cores,
//! as many runs at a time as memory allows. What the runs must know in advance (the footprint,
//! for `%` buffer sizes and flash devices) comes from the summary cache or one first pass
//! (`flashbuf_sim::prepare`).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{Result, bail};
use clap::Args;
use flashbuf_flash::DeviceKind;
use flashbuf_sim::plan::{PlanOptions, PlanProgress, PolicySlot, TraceInput, plan_runs};
use flashbuf_sim::prepare::{RemapMode, Warmup};
use flashbuf_sim::sweep::{SweepRun, memory_budget, run_scheduled, schedule};
use flashbuf_sim::{GroupEvent, ResultRow, WriteMiss};
use flashbuf_trace::SummaryCache;

use crate::args::{OutputFormat, WriteMissArg, parse_buffers, parse_policies, parse_remap, threads};
use crate::devices::DeviceArgs;
use crate::traces::{TraceArgs, observer};
use flashbuf_report::OutputFile;

/// The policies compared when `--policy` is not given.
pub const DEFAULT_POLICIES: &str = "lru,arc,cflru,lru-wsr,ccf-lru,cflru-c,ad-lru,cfdc,min";

#[derive(Args)]
pub struct RunArgs {
    /// Traces: files (format auto-detected), `-` for standard input (with --format), or
    /// generators such as `gen:adlru-zipf` (the AD-LRU paper's Table 6 trace) or
    /// `gen:zipf,requests=1000000,pages=100000,write-ratio=0.5`. Repeat the flag for several
    /// traces.
    #[arg(short, long = "trace", value_name = "FILE|-|gen:SPEC", default_value = "gen:adlru-zipf")]
    traces: Vec<String>,
    /// Policies, comma-separated, each `name` or `name:key=value,key=value`
    /// (see `flashbuf list`).
    #[arg(short, long = "policy", value_name = "LIST", default_value = DEFAULT_POLICIES)]
    policies: Vec<String>,
    /// Buffer sizes, comma-separated: pages (`4096`), bytes (`16MB`, `1GiB`, divided by
    /// --page-size) or a share of the trace's distinct pages (`5%`).
    #[arg(short, long = "buffer", value_name = "LIST", default_value = "512,1024,2048,4096,8192")]
    buffers: String,
    /// What a write miss does: `fetch` the page first (a database buffer) or not (`no-fetch`,
    /// a write buffer as in the REF and BPLRU papers).
    #[arg(long, value_enum, default_value_t = WriteMissArg::Fetch)]
    write_miss: WriteMissArg,
    /// Page numbering: `auto` renumbers sparse and multi-volume traces into a compact space of
    /// flash-block-aligned extents (keeping every block whole), `on` always, `off` never (see
    /// docs/address-space.md).
    #[arg(long, default_value = "auto", value_parser = parse_remap)]
    remap: RemapMode,
    /// Requests to run before counting (a number, or a share of the trace such as `10%`):
    /// every counter, the device's included, then restarts; pages and device state stay.
    #[arg(long, default_value = "0", value_parser = parse_warmup)]
    warmup: Warmup,
    /// Emit one row per this many requests (after the warm-up) instead of one per run: hit
    /// ratio, reads, writes, erases, write amplification over time (plot them against
    /// `position`).
    #[arg(long, value_name = "REQUESTS")]
    interval: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
    /// Write the output to this file instead of standard output (appears only when complete).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    force: bool,
    /// Threads (default: one per core; more than the cores is lowered to the cores).
    #[arg(short, long)]
    jobs: Option<usize>,
    /// Check every invariant of buffer, policy and device after every request (slow; for
    /// debugging policies).
    #[arg(long)]
    check: bool,
    /// Do not write back the dirty pages left at the end of the trace (the final flush is
    /// counted by default, as in the AD-LRU paper).
    #[arg(long)]
    no_final_flush: bool,
    /// Neither read nor write the trace summary cache ($FLASHBUF_CACHE_DIR, else
    /// ~/.cache/flashbuf).
    #[arg(long)]
    no_cache: bool,
    /// Add the offline bounds to every row: the fewest page writes and the least device time any
    /// policy can achieve with the buffer, and the run's distance from them (see docs/curves.md).
    /// Reads each trace once more and keeps it in memory (about 9 bytes a request).
    #[arg(long, conflicts_with_all = ["interval", "warmup"])]
    bound: bool,
    /// No progress bar and no format detection messages.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    trace_args: TraceArgs,
    #[command(flatten)]
    device_args: DeviceArgs,
}

fn parse_warmup(s: &str) -> Result<Warmup, String> {
    s.parse()
}

pub fn run(a: RunArgs) -> Result<()> {
    let opts = a.trace_args.options()?;
    let policies = parse_policies(&a.policies)?;
    let buffers = parse_buffers(&a.buffers)?;
    if a.interval == Some(0) {
        bail!("--interval must be at least 1 request");
    }
    // Refuse an existing output file before doing any work.
    let mut out_file = a.out.as_deref().map(|p| OutputFile::create(p, a.force)).transpose()?;
    let write_miss = WriteMiss::from(a.write_miss);
    let jobs = threads(a.jobs, a.quiet);
    let devices = a.device_args.configs();
    if a.bound && a.traces.iter().any(|t| flashbuf_trace::TraceSpec::parse(t).is_ok_and(|s| !s.rereadable())) {
        bail!("--bound reads the trace again after the runs, which a trace read from a pipe cannot be");
    }
    let options = PlanOptions {
        read: opts,
        buffers,
        devices: devices.clone(),
        capacity: a.device_args.capacity,
        write_miss,
        remap: a.remap,
        warmup: a.warmup,
        interval: a.interval,
        check: a.check,
        final_flush: !a.no_final_flush,
        cache: if a.no_cache { SummaryCache::disabled() } else { SummaryCache::from_env() },
        memory_bytes: flashbuf_sim::sweep::total_memory(),
    };
    let traces: Vec<TraceInput> = a.traces.iter().map(TraceInput::new).collect();
    let slots: Vec<PolicySlot> = policies.into_iter().map(PolicySlot::Registered).collect();
    // One progress bar per trace prepared (a first pass over a file, when one is needed).
    let mut bar: Option<indicatif::ProgressBar> = None;
    let planned = plan_runs(&traces, &slots, &options, &mut |p| match p {
        PlanProgress::Trace(_) => {
            if let Some(b) = bar.replace(crate::progress::bar(0, "requests", a.quiet)) {
                b.finish_and_clear();
            }
        }
        PlanProgress::Prepare(label, e) => {
            if let Some(b) = &bar {
                observer(label, b, a.quiet)(e);
            }
        }
    });
    if let Some(b) = bar.take() {
        b.finish_and_clear();
    }
    let runs: Vec<SweepRun> =
        planned.map_err(anyhow::Error::msg)?.into_iter().map(|p| SweepRun::new(p.spec, p.requests)).collect();

    let refs: Vec<&SweepRun> = runs.iter().collect();
    let plan = schedule(&refs, memory_budget());
    let known = runs.iter().all(|r| r.requests > 0);
    let total = if known { runs.iter().map(|r| r.requests).sum() } else { 0 };
    let bar = crate::progress::bar(total, "requests", a.quiet);
    let quiet = a.quiet;
    let announced: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let events = |e: GroupEvent<'_>| match e {
        GroupEvent::Opened { trace, how } => {
            let mut seen = announced.lock().expect("not poisoned");
            if !quiet && !seen.iter().any(|s| s == trace) {
                seen.push(trace.to_string());
                bar.suspend(|| eprintln!("flashbuf: {trace}: {how}"));
            }
        }
        GroupEvent::Simulated(n) => bar.inc(n),
    };
    let mut outputs: Vec<Option<flashbuf_sim::RunOutput>> = vec![None; runs.len()];
    run_scheduled(&refs, &plan, jobs, &events, &mut |i, _, out| {
        outputs[i] = Some(out);
        Ok(())
    })?;
    bar.finish_and_clear();
    let mut rows: Vec<ResultRow> = Vec::new();
    for (run, out) in runs.iter().zip(outputs) {
        let out = out.expect("no error, so every run produced its output");
        if a.interval.is_some() { rows.extend(run.interval_rows(&out)) } else { rows.push(run.row(&out)) }
    }
    if a.bound {
        crate::cmd_curve::attach_bounds(&runs, &mut rows, jobs, a.quiet)?;
    }

    let mut buf = Vec::new();
    match a.output {
        OutputFormat::Table => {
            let mut columns = flashbuf_report::DEFAULT_COLUMNS.to_vec();
            if a.interval.is_some() {
                columns.splice(3..3, flashbuf_report::INTERVAL_COLUMNS.iter().cloned());
            }
            if rows.iter().any(|r| r.buffer_share.is_some()) {
                columns.insert(3, flashbuf_report::SHARE_COLUMN);
            }
            if devices.len() > 1 {
                columns.insert(2, flashbuf_report::DEVICE_COLUMN);
            }
            if devices.iter().any(|d| d.kind != DeviceKind::Ideal) {
                columns.extend_from_slice(flashbuf_report::DEVICE_COLUMNS);
            }
            if a.bound {
                columns.extend_from_slice(flashbuf_report::BOUND_COLUMNS);
            }
            buf.extend_from_slice(flashbuf_report::format_table(&rows, &columns).as_bytes())
        }
        OutputFormat::Csv => flashbuf_report::write_csv(&rows, &mut buf)?,
        OutputFormat::Json => flashbuf_report::write_json(&rows, &mut buf)?,
    }
    match out_file.take() {
        Some(mut f) => {
            f.write_all(&buf)?;
            f.commit()?;
            Ok(())
        }
        None => crate::output::write(&buf),
    }
}
