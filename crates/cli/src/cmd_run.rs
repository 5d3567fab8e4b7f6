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

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use flashbuf_flash::DeviceKind;
use flashbuf_sim::prepare::{Ask, Needs, RemapMode, Warmup, extent_pages, prepare};
use flashbuf_sim::sweep::{SweepRun, memory_budget, run_scheduled, schedule};
use flashbuf_sim::{GroupEvent, ResultRow, RunSpec, WriteMiss};
use flashbuf_trace::{SummaryCache, TraceSpec};

use crate::args::{parse_buffers, parse_policies, threads};
use crate::devices::{DeviceArgs, check};
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

fn parse_remap(s: &str) -> Result<RemapMode, String> {
    s.parse()
}

fn parse_warmup(s: &str) -> Result<Warmup, String> {
    s.parse()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum WriteMissArg {
    Fetch,
    NoFetch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    /// An aligned text table.
    Table,
    /// CSV with a header line, every measured field.
    Csv,
    /// A JSON array of objects, every measured field.
    Json,
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
    let write_miss = match a.write_miss {
        WriteMissArg::Fetch => WriteMiss::Fetch,
        WriteMissArg::NoFetch => WriteMiss::NoFetch,
    };
    let jobs = threads(a.jobs, a.quiet);
    let devices = a.device_args.configs();
    let capacity = a.device_args.capacity;
    let extent = extent_pages(&policies, &devices).map_err(anyhow::Error::msg)?;
    let needs = Needs::of(&buffers, &devices, capacity, a.warmup);
    let cache = if a.no_cache { SummaryCache::disabled() } else { SummaryCache::from_env() };
    if a.traces.iter().filter(|t| TraceSpec::parse(t).is_ok_and(|s| !s.rereadable())).count() > 1 {
        bail!("standard input can be given only once");
    }
    if a.bound && a.traces.iter().any(|t| TraceSpec::parse(t).is_ok_and(|s| !s.rereadable())) {
        bail!("--bound reads the trace again after the runs, which a trace read from a pipe cannot be");
    }

    let memory = flashbuf_sim::sweep::total_memory();
    let mut runs: Vec<SweepRun> = Vec::new();
    for t in &a.traces {
        let spec = TraceSpec::parse(t).with_context(|| format!("trace '{t}'"))?;
        if let TraceSpec::Generated(g) = &spec {
            g.validate().with_context(|| format!("trace '{t}'"))?;
        }
        let label = spec.label();
        let bar = crate::progress::bar(0, "requests", a.quiet);
        let ask = Ask { needs, remap: a.remap, extent_pages: extent };
        let prepared = prepare(&spec, &opts, &label, ask, &cache, &mut observer(&label, &bar, a.quiet));
        bar.finish_and_clear();
        let prepared = prepared?;
        let warmup = a.warmup.requests(prepared.requests).map_err(anyhow::Error::msg).with_context(|| label.clone())?;
        for device in &devices {
            let logical_pages = prepared.logical_pages(device, capacity).map_err(anyhow::Error::msg)?;
            check(device, logical_pages).with_context(|| format!("trace {label}"))?;
            for policy in &policies {
                for b in &buffers {
                    let frames = prepared.frames(*b).map_err(anyhow::Error::msg).with_context(|| label.clone())?;
                    let mut spec: RunSpec = prepared.run_spec(policy, frames, device, logical_pages);
                    spec.write_miss = write_miss;
                    spec.check_every = a.check.then_some(1);
                    spec.final_flush = !a.no_final_flush;
                    spec.warmup = warmup;
                    spec.interval = a.interval;
                    spec.check_memory(memory).map_err(anyhow::Error::msg)?;
                    runs.push(SweepRun::new(spec, prepared.requests.unwrap_or(0)));
                }
            }
        }
    }

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
