//! `flashbuf bench`: simulator throughput, in requests per second, on one core.
//!
//! The default workload is the foundation benchmark: 10 million requests, Zipf with exponent
//! 0.99 over 1 million pages, a 100,000-page buffer, read from a libCacheSim oracleGeneral file
//! (generated once into `--dir` and reused). Each policy runs single-threaded over each device
//! (default: the ideal device); the best of `--repeat` runs is reported, trace decoding
//! included, as requests per second of wall time and per second of the thread's CPU time
//! (steadier on a busy machine). A device is built and preconditioned before its run, and that
//! time is reported apart: the rates cover the simulation loop only.
//!
//! The runs go in rounds, each round running every policy on every device once, so that a slow
//! spell of a shared machine falls on all of them alike rather than on whichever was running;
//! the last column is each run's best rate relative to the first policy's on the first device.
//!
//! `scripts/bench-libcachesim.sh` runs `flashbuf run` and libCacheSim's Python package on the
//! same file as whole processes, interleaved, and prints both rates.

use crate::output::outln;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use flashbuf_flash::{AnyDevice, DeviceConfig, DeviceKind, Precondition};
use flashbuf_sim::RunOptions;
use flashbuf_trace::{Format, GenSpec, ReadOptions, TraceSpec, create_writer};

use crate::args::parse_policies;

#[derive(Args)]
pub struct BenchArgs {
    /// Policies to measure.
    #[arg(short, long = "policy", value_name = "LIST", default_value = "lru,arc")]
    policies: Vec<String>,
    /// Devices to run over, comma-separated: `ideal`, `page`, `block`, `bast`, `fast` (each with
    /// its defaults, as in `flashbuf run`).
    #[arg(long = "device", value_name = "LIST", value_delimiter = ',', default_value = "ideal", value_parser = parse_kind)]
    devices: Vec<DeviceKind>,
    /// State of a flash device when its run starts: `empty`, `sequential` or `aged[:...]` (as in
    /// `flashbuf run`); the time it takes is reported apart.
    #[arg(long, default_value = "sequential", value_parser = parse_precondition)]
    precondition: Precondition,
    /// Use this trace file instead of the generated benchmark trace.
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// Requests of the generated trace.
    #[arg(long, default_value_t = 10_000_000)]
    requests: u64,
    /// Pages of the generated trace.
    #[arg(long, default_value_t = 1_000_000)]
    pages: u64,
    /// Zipf exponent of the generated trace.
    #[arg(long, default_value_t = 0.99)]
    alpha: f64,
    /// Write ratio of the generated trace; 0 writes an oracleGeneral file (which has no
    /// read/write flag), anything else a flashbuf binary file.
    #[arg(long, default_value_t = 0.0)]
    write_ratio: f64,
    /// Buffer size in pages.
    #[arg(short, long, default_value_t = 100_000)]
    buffer: usize,
    /// Runs per policy and device, in rounds over all of them; the fastest is reported.
    #[arg(long, default_value_t = 3)]
    repeat: u32,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Where the generated trace is kept between runs.
    #[arg(long, default_value = "target/flashbuf-bench")]
    dir: PathBuf,
    /// Only generate the benchmark trace (if needed) and print its path.
    #[arg(long)]
    trace_only: bool,
}

fn parse_kind(s: &str) -> Result<DeviceKind, String> {
    s.parse().map_err(|e: flashbuf_flash::DeviceError| e.to_string())
}

fn parse_precondition(s: &str) -> Result<Precondition, String> {
    s.parse().map_err(|e: flashbuf_flash::DeviceError| e.to_string())
}

/// The best run of one policy on one device.
struct Best {
    rate: f64,
    out: flashbuf_sim::RunOutput,
    precondition_s: f64,
}

pub fn run(a: BenchArgs) -> Result<()> {
    let policies = parse_policies(&a.policies)?;
    let trace = match &a.trace {
        Some(t) => t.clone(),
        None => generate(&a)?,
    };
    if a.trace_only {
        outln!("{trace}");
        return Ok(());
    }
    let spec = TraceSpec::parse(&trace)?;
    let opts = ReadOptions::default();
    // Flash devices are sized to the trace (largest page + 1), as `flashbuf run` sizes them; a
    // trace file is scanned for that only when a flash device needs it (the ideal device takes
    // any page, and the page table grows as pages come).
    let ideal_only = a.devices.iter().all(|&k| k == DeviceKind::Ideal);
    let pages = match &a.trace {
        None => a.pages,
        Some(_) if ideal_only => 0,
        Some(_) => {
            let mut opened = spec.open(&opts)?;
            flashbuf_trace::stats(opened.source.as_mut(), opts.page_size)?.max_page.map_or(1, |m| m + 1)
        }
    };
    let configs: Vec<DeviceConfig> = a
        .devices
        .iter()
        .map(|&kind| DeviceConfig { kind, precondition: a.precondition, ..DeviceConfig::default() })
        .collect();
    outln!("trace: {trace}");
    outln!("buffer: {} pages, one thread, best of {}, device preconditioning timed apart", a.buffer, a.repeat);
    let rounds = a.repeat.max(1);
    let runs = policies.len() * configs.len();
    let bar = crate::progress::bar(u64::from(rounds) * runs as u64, "runs", a.quiet);
    let mut best: Vec<Option<Best>> = (0..runs).map(|_| None).collect();
    for _ in 0..rounds {
        for (d, config) in configs.iter().enumerate() {
            for (p, policy) in policies.iter().enumerate() {
                let mut opened = spec.open(&opts)?;
                let t = Instant::now();
                let logical = if pages == 0 { u64::MAX } else { pages };
                let device = config.build(logical).with_context(|| config.label())?;
                let precondition_s = t.elapsed().as_secs_f64();
                let options = RunOptions { pages_hint: pages, ..RunOptions::new(a.buffer) };
                // A device-aware policy sees this device, as under `flashbuf run`.
                let policy = policy.for_device(&flashbuf_sim::device_profile(config));
                // The ideal device and the page-mapped FTL run in loops of their own (as in
                // `flashbuf run`, see `flashbuf_sim::stepper_any`).
                let source = opened.source.as_mut();
                let out = match device {
                    AnyDevice::Ideal(d) => flashbuf_sim::run(&policy, d, source, &options, &mut |_| {})?,
                    AnyDevice::Page(d) => flashbuf_sim::run(&policy, d, source, &options, &mut |_| {})?,
                    d => flashbuf_sim::run(&policy, d, source, &options, &mut |_| {})?,
                };
                let rate = out.counters.requests as f64 / out.elapsed_s;
                let slot = &mut best[d * policies.len() + p];
                if slot.as_ref().is_none_or(|b| rate > b.rate) {
                    *slot = Some(Best { rate, out, precondition_s });
                }
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    let width = policies.iter().map(|p| p.label().len()).max().unwrap_or(0).max(6);
    let dwidth = configs.iter().map(|c| c.label().len()).max().unwrap_or(0).max(6);
    let first =
        format!("/ {}", policies.first().map(|p| p.label()).unwrap_or_default().split(':').next().unwrap_or_default());
    outln!(
        "{:<width$} {:<dwidth$} {:>12} {:>10} {:>14} {:>16} {:>9} {:>15}",
        "policy",
        "device",
        "requests",
        "hit ratio",
        "requests/s",
        "per CPU second",
        first,
        "precondition"
    );
    let base = best.first().and_then(|b| b.as_ref()).map_or(1.0, |b| b.rate);
    for (d, config) in configs.iter().enumerate() {
        for (p, policy) in policies.iter().enumerate() {
            let b = best[d * policies.len() + p].as_ref().expect("at least one run");
            outln!(
                "{:<width$} {:<dwidth$} {:>12} {:>9.2}% {:>11.2} M/s {:>13.2} M/s {:>9.2} {:>13.2} s",
                policy.label(),
                config.label(),
                b.out.counters.requests,
                100.0 * b.out.counters.hit_ratio(),
                b.rate / 1e6,
                b.out.counters.requests as f64 / b.out.cpu_s / 1e6,
                b.rate / base,
                b.precondition_s,
            );
        }
    }
    Ok(())
}

fn generate(a: &BenchArgs) -> Result<String> {
    std::fs::create_dir_all(&a.dir).with_context(|| a.dir.display().to_string())?;
    let (ext, format) = if a.write_ratio > 0.0 { ("fbt", Format::Binary) } else { ("oracleGeneral", Format::Oracle) };
    let name = format!("zipf-a{}-r{}-p{}-w{}.{ext}", a.alpha, a.requests, a.pages, a.write_ratio);
    let path = a.dir.join(name);
    if !path.exists() {
        let spec = format!(
            "zipf,requests={},pages={},alpha={},write-ratio={},seed=42",
            a.requests, a.pages, a.alpha, a.write_ratio
        );
        let generator: GenSpec = spec.parse()?;
        eprintln!("flashbuf: generating {} (once)", path.display());
        let mut src = generator.open()?;
        let mut w = create_writer(format, &path, false)?;
        flashbuf_trace::copy_trace(src.as_mut(), w.as_mut())?;
        w.finish()?;
    }
    Ok(path.display().to_string())
}
