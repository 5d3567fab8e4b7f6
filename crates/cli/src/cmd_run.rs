//! `flashbuf run`: every combination of traces × policies × buffer sizes, one result row each.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use flashbuf_flash::DeviceConfig;
use flashbuf_policy::PolicyConfig;
use flashbuf_sim::{ResultRow, RunSpec, WriteMiss};
use rayon::prelude::*;

use crate::args::{parse_buffers, parse_policies};
use crate::devices::{DeviceArgs, check};
use crate::traces::{CliTrace, TraceArgs, resolve};
use flashbuf_report::OutputFile;

/// The policies compared when `--policy` is not given.
pub const DEFAULT_POLICIES: &str = "lru,arc,cflru,lru-wsr,ccf-lru,cflru-c,ad-lru,cfdc,min";

#[derive(Args)]
pub struct RunArgs {
    /// Traces: files (format auto-detected) or generators such as `gen:adlru-zipf` (the AD-LRU
    /// paper's Table 6 trace) or `gen:zipf,requests=1000000,pages=100000,write-ratio=0.5`.
    /// Repeat the flag for several traces.
    #[arg(short, long = "trace", value_name = "FILE|gen:SPEC", default_value = "gen:adlru-zipf")]
    traces: Vec<String>,
    /// Policies, comma-separated, each `name` or `name:key=value,key=value`
    /// (see `flashbuf list`).
    #[arg(short, long = "policy", value_name = "LIST", default_value = DEFAULT_POLICIES)]
    policies: Vec<String>,
    /// Buffer sizes, comma-separated: pages (`4096`), bytes (`16MB`, `1GiB`, divided by
    /// --page-size) or a share of the trace's page space (`5%`).
    #[arg(short, long = "buffer", value_name = "LIST", default_value = "512,1024,2048,4096,8192")]
    buffers: String,
    /// What a write miss does: `fetch` the page first (a database buffer) or not (`no-fetch`,
    /// a write buffer as in the REF and BPLRU papers).
    #[arg(long, value_enum, default_value_t = WriteMissArg::Fetch)]
    write_miss: WriteMissArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
    /// Write the output to this file instead of standard output (appears only when complete).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    force: bool,
    /// Parallel runs (default: one per core).
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
    /// No progress bar and no format detection messages.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    trace_args: TraceArgs,
    #[command(flatten)]
    device_args: DeviceArgs,
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

struct Job<'a> {
    trace: &'a CliTrace,
    policy: &'a PolicyConfig,
    frames: usize,
    device: &'a DeviceConfig,
    logical_pages: u64,
}

pub fn run(a: RunArgs) -> Result<()> {
    let opts = a.trace_args.options()?;
    let policies = parse_policies(&a.policies)?;
    let buffers = parse_buffers(&a.buffers)?;
    // Refuse an existing output file before doing any work.
    let mut out_file = a.out.as_deref().map(|p| OutputFile::create(p, a.force)).transpose()?;
    let write_miss = match a.write_miss {
        WriteMissArg::Fetch => WriteMiss::Fetch,
        WriteMissArg::NoFetch => WriteMiss::NoFetch,
    };

    let device = a.device_args.config();
    let traces: Vec<CliTrace> = a.traces.iter().map(|t| resolve(t, &opts, a.quiet)).collect::<Result<_>>()?;
    let mut jobs = Vec::new();
    for trace in &traces {
        let logical_pages = a.device_args.logical_pages(trace.pages)?;
        // Check the device once per trace before anything runs.
        check(&device, logical_pages).with_context(|| format!("trace {}", trace.label))?;
        for policy in &policies {
            for b in &buffers {
                let frames = b.pages(opts.page_size, trace.pages).map_err(anyhow::Error::msg)?;
                let frames = usize::try_from(frames).context("buffer too large")?;
                jobs.push(Job { trace, policy, frames, device: &device, logical_pages });
            }
        }
    }

    let total: u64 = jobs.iter().map(|j| j.trace.requests).sum();
    let bar = crate::progress::bar(total, "requests", a.quiet);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(a.jobs.unwrap_or(0)).build()?;
    let first_error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let rows: Vec<Option<ResultRow>> = pool.install(|| {
        jobs.par_iter()
            .map(|job| {
                if first_error.lock().unwrap().is_some() {
                    return None;
                }
                match run_job(job, &opts, write_miss, a.check, !a.no_final_flush, &bar) {
                    Ok(row) => Some(row),
                    Err(e) => {
                        first_error.lock().unwrap().get_or_insert(e);
                        None
                    }
                }
            })
            .collect()
    });
    bar.finish_and_clear();
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    let rows: Vec<ResultRow> = rows.into_iter().map(|r| r.expect("no error, so every run produced a row")).collect();

    let mut buf = Vec::new();
    match a.output {
        OutputFormat::Table => {
            let mut columns = flashbuf_report::DEFAULT_COLUMNS.to_vec();
            if device.kind != flashbuf_flash::DeviceKind::Ideal {
                columns.extend_from_slice(flashbuf_report::DEVICE_COLUMNS);
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
        }
        None => std::io::stdout().write_all(&buf)?,
    }
    Ok(())
}

fn run_job(
    job: &Job<'_>,
    opts: &flashbuf_trace::ReadOptions,
    write_miss: WriteMiss,
    check: bool,
    final_flush: bool,
    bar: &indicatif::ProgressBar,
) -> Result<ResultRow> {
    let spec = RunSpec {
        trace: job.trace.spec.clone(),
        read: *opts,
        trace_label: job.trace.label.clone(),
        trace_pages: job.trace.pages,
        policy: job.policy.clone(),
        frames: job.frames,
        device: job.device.clone(),
        logical_pages: job.logical_pages,
        write_miss,
        check_every: check.then_some(1),
        final_flush,
    };
    Ok(flashbuf_sim::execute(&spec, &mut |n| bar.inc(n))?)
}
