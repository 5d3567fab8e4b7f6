//! `flashbuf bench`: simulator throughput, in requests per second, on one core.
//!
//! The default workload is the foundation benchmark: 10 million requests, Zipf with exponent
//! 0.99 over 1 million pages, a 100,000-page buffer, read from a libCacheSim oracleGeneral file
//! (generated once into `--dir` and reused). Each policy runs single-threaded over the ideal
//! device; the best of `--repeat` runs is reported, trace decoding included, as requests per
//! second of wall time and per second of the thread's CPU time (steadier on a busy machine).
//!
//! The runs go in rounds, each round running every policy once, so that a slow spell of a
//! shared machine falls on all policies alike rather than on whichever was running; the last
//! column is each policy's best rate relative to the first policy's.

use crate::output::outln;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use flashbuf_flash::{IdealConfig, IdealDevice};
use flashbuf_sim::RunOptions;
use flashbuf_trace::{Format, GenSpec, ReadOptions, TraceSpec, create_writer};

use crate::args::parse_policies;

#[derive(Args)]
pub struct BenchArgs {
    /// Policies to measure.
    #[arg(short, long = "policy", value_name = "LIST", default_value = "lru,arc")]
    policies: Vec<String>,
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
    /// Runs per policy, in rounds over all policies; the fastest is reported.
    #[arg(long, default_value_t = 3)]
    repeat: u32,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Where the generated trace is kept between runs.
    #[arg(long, default_value = "target/flashbuf-bench")]
    dir: PathBuf,
}

pub fn run(a: BenchArgs) -> Result<()> {
    let policies = parse_policies(&a.policies)?;
    let trace = match &a.trace {
        Some(t) => t.clone(),
        None => generate(&a)?,
    };
    let spec = TraceSpec::parse(&trace)?;
    let opts = ReadOptions::default();
    outln!("trace: {trace}");
    outln!("buffer: {} pages, device: ideal, one thread, best of {}", a.buffer, a.repeat);
    let rounds = a.repeat.max(1);
    let bar = crate::progress::bar(u64::from(rounds) * policies.len() as u64, "runs", a.quiet);
    let mut best: Vec<Option<(f64, flashbuf_sim::RunOutput)>> = policies.iter().map(|_| None).collect();
    for _ in 0..rounds {
        for (policy, best) in policies.iter().zip(&mut best) {
            let mut opened = spec.open(&opts)?;
            let device = IdealDevice::new(IdealConfig::default())?;
            let options = RunOptions::new(a.buffer);
            let out = flashbuf_sim::run(policy, device, opened.source.as_mut(), &options, &mut |_| {})?;
            let rate = out.counters.requests as f64 / out.elapsed_s;
            if best.as_ref().is_none_or(|(r, _)| rate > *r) {
                *best = Some((rate, out));
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let width = policies.iter().map(|p| p.label().len()).max().unwrap_or(0).max(6);
    let first = policies.first().map(|p| p.label()).unwrap_or_default();
    outln!(
        "{:<width$} {:>12} {:>10} {:>14} {:>16} {:>9}",
        "policy",
        "requests",
        "hit ratio",
        "requests/s",
        "per CPU second",
        format!("/ {first}")
    );
    let base = best.first().and_then(|b| b.as_ref()).map_or(1.0, |(r, _)| *r);
    for (policy, best) in policies.iter().zip(best) {
        let (rate, out) = best.expect("at least one run");
        outln!(
            "{:<width$} {:>12} {:>9.2}% {:>11.2} M/s {:>13.2} M/s {:>9.2}",
            policy.label(),
            out.counters.requests,
            100.0 * out.counters.hit_ratio(),
            rate / 1e6,
            out.counters.requests as f64 / out.cpu_s / 1e6,
            rate / base,
        );
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
