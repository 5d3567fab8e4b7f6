//! `flashbuf curve`: hit ratio, page reads, page writes and device time against buffer size, for
//! several policies, from one pass over each trace where possible (see `docs/curves.md`).
//!
//! Each (policy, device) pair gets a method:
//!
//! * LRU on the ideal device: the **exact** curve at every size from one stack-distance pass;
//!   with `--rate`, **SHARDS** at that rate; with `--sample-size`, fixed-size SHARDS;
//! * any other pair: **miniature simulation** with `--rate` (a block-sampled trace through a
//!   buffer and a device scaled by the rate), else full **simulation** at every size.
//!
//! The pass decodes the trace once for all the LRU curves, the sample of the miniature
//! simulations and the trace kept for `--bound`; full simulations (and the references of
//! `--error`) then run like `flashbuf run`'s, one decoding per group of runs.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use flashbuf_flash::{DeviceConfig, DeviceKind, DeviceStats};
use flashbuf_policy::PolicyConfig;
use flashbuf_report::plot::{Filter, PlotSpec, output_paths, plot};
use flashbuf_report::{Column, CsvTable, OutputFile, thousands};
use flashbuf_sim::bound::{Bound, KeptTrace, TraceBounds};
use flashbuf_sim::curve::{
    CurveMeta, CurveMethod, CurveRow, LruCurve, LruCurveBuilder, MiniPoint, SampleCollector, ideal_device_stats,
    mean_errors, minisim,
};
use flashbuf_sim::prepare::{Ask, Needs, PreparedTrace, RemapMode, extent_pages, prepare};
use flashbuf_sim::sample::{BlockSampler, DEFAULT_SALT};
use flashbuf_sim::sweep::{BufferSize, SweepRun, memory_budget, run_scheduled, schedule};
use flashbuf_sim::{GroupEvent, WriteMiss};
use flashbuf_trace::{Remapped, SummaryCache, TraceSource, TraceSpec};

use crate::args::{OutputFormat, WriteMissArg, parse_buffers, parse_policies, parse_remap, threads};
use crate::devices::DeviceArgs;
use crate::traces::{TraceArgs, observer};

#[derive(Args)]
#[command(mut_arg("devices", |a| a.default_value("ideal")))]
pub struct CurveArgs {
    /// Traces: files (format auto-detected), `-` for standard input, or generators such as
    /// `gen:adlru-zipf`. Repeat the flag for several traces.
    #[arg(short, long = "trace", value_name = "FILE|-|gen:SPEC", default_value = "gen:adlru-zipf")]
    traces: Vec<String>,
    /// Policies, comma-separated (see `flashbuf list`). LRU on the ideal device gets its exact
    /// curve (or SHARDS with --rate/--sample-size); the others are simulated (miniature
    /// simulation with --rate).
    #[arg(short, long = "policy", value_name = "LIST", default_value = "lru")]
    policies: Vec<String>,
    /// Buffer sizes, comma-separated: pages, bytes (`16MB`) or shares of the footprint (`5%`).
    /// Default: --points sizes spread geometrically from 1/500 of the footprint to all of it.
    #[arg(short, long = "buffer", value_name = "LIST")]
    buffers: Option<String>,
    /// Number of sizes of the default grid.
    #[arg(long, default_value_t = 32, value_name = "N")]
    points: usize,
    /// Every size from 1 to the footprint (LRU's exact and SHARDS curves only).
    #[arg(long, conflicts_with = "buffers")]
    every_size: bool,
    /// Sampling rate, e.g. `1%` or `0.01`: SHARDS for LRU on the ideal device, miniature
    /// simulation for every other policy and device.
    /// Several rates, comma-separated, draw one curve each (the full simulations of --error are
    /// shared).
    #[arg(long, value_parser = parse_rate, value_name = "RATE", value_delimiter = ',')]
    rate: Vec<f64>,
    /// Fixed-size SHARDS for LRU: track at most this many pages (the rate falls as the trace
    /// goes on).
    #[arg(long, value_name = "PAGES")]
    sample_size: Option<u32>,
    /// Sampling unit in pages. Default: the least common multiple of the blocks the series
    /// reasons about — the flash block of a flash device, the block of FAB, BPLRU, REF and
    /// BP-REF, CFDC's cluster — so that they see whole blocks; single pages for page-level
    /// policies on the ideal device.
    #[arg(long, value_name = "PAGES")]
    sample_block: Option<u64>,
    /// Seed of the sampling hash (a different seed, a different sample).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Draw every sampled curve from this many samples (seeds SEED, SEED+1, ...): with --error,
    /// the mean absolute errors are averaged over them and their range shown.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seeds: u64,
    /// Also simulate every sampled point fully (LRU: the exact curve) and report the error:
    /// per row, and the mean absolute errors per curve.
    #[arg(long)]
    error: bool,
    /// Add the offline bounds: the fewest page writes and the least device time any policy can
    /// achieve at each size, and each point's distance from them (keeps the trace in memory:
    /// about 9 bytes per request).
    #[arg(long)]
    bound: bool,
    /// What a write miss does: `fetch` the page first (a database buffer) or not (`no-fetch`).
    #[arg(long, value_enum, default_value_t = WriteMissArg::Fetch)]
    write_miss: WriteMissArg,
    /// Page numbering: `auto`, `on` or `off` (see docs/address-space.md).
    #[arg(long, default_value = "auto", value_parser = parse_remap)]
    remap: RemapMode,
    /// Do not write back the dirty pages left at the end of the trace.
    #[arg(long)]
    no_final_flush: bool,
    /// Output format (the table also gives the mean errors of --error).
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
    /// Write the output to this file instead of standard output (appears only when complete).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also plot hit ratio and page writes against buffer size: BASE-hit-ratio.{svg,png} and
    /// BASE-page-writes.{svg,png} (one pair per trace when there are several).
    #[arg(long, value_name = "BASE")]
    plot: Option<PathBuf>,
    /// Overwrite output files that exist.
    #[arg(long)]
    force: bool,
    /// Threads (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    /// Neither read nor write the trace summary cache.
    #[arg(long)]
    no_cache: bool,
    /// No progress bar and no format detection messages.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    trace_args: TraceArgs,
    #[command(flatten)]
    device_args: DeviceArgs,
}

/// `1%`, `0.5%` or `0.01`: a rate in (0, 1].
fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("'{s}': expected a rate such as 1% or 0.01"))?;
    if !(v > 0.0 && v <= 1.0) {
        return Err(format!("'{s}': a sampling rate must be above 0 and at most 100%"));
    }
    Ok(v)
}

/// How one (policy, device) series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Method {
    Exact,
    Shards(f64),
    ShardsFixed(u32),
    Minisim(f64),
    Simulation,
}

struct Series {
    policy: PolicyConfig,
    device: DeviceConfig,
    method: Method,
    /// Sampling unit in pages (sampled methods).
    unit: u64,
    /// Seed of the sampling hash (sampled methods).
    seed: u64,
}

/// The sampling unit of `policy` on `device`: the least common multiple of the blocks they
/// reason about (the device's flash block unless it is the ideal device; the policy's block or
/// cluster), 1 for a page-level policy on the ideal device.
fn sampling_unit(policy: &PolicyConfig, device: &DeviceConfig) -> Result<u64> {
    let devices: &[DeviceConfig] = if device.kind == DeviceKind::Ideal { &[] } else { std::slice::from_ref(device) };
    extent_pages(std::slice::from_ref(policy), devices).map_err(anyhow::Error::msg)
}

/// A full simulation whose result goes into a row: as the row's values, or as its reference.
struct SimTarget {
    row: usize,
    reference: bool,
}

pub fn run(a: CurveArgs) -> Result<()> {
    let opts = a.trace_args.options()?;
    let policies = parse_policies(&a.policies)?;
    let buffers = a.buffers.as_deref().map(parse_buffers).transpose()?;
    let write_miss = WriteMiss::from(a.write_miss);
    let final_flush = !a.no_final_flush;
    if a.points == 0 {
        bail!("--points must be at least 1");
    }
    let devices = a.device_args.configs();
    let capacity = a.device_args.capacity;
    let extent = extent_pages(&policies, &devices).map_err(anyhow::Error::msg)?;
    if a.sample_block == Some(0) {
        bail!("--sample-block must be at least 1 page");
    }
    if a.seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    let mut series = Vec::new();
    for device in &devices {
        for policy in &policies {
            let lru_ideal = policy.name() == "lru" && device.kind == DeviceKind::Ideal;
            let methods: Vec<Method> = match (lru_ideal, a.rate.is_empty(), a.sample_size) {
                (true, _, Some(n)) => vec![Method::ShardsFixed(n)],
                (true, false, None) => a.rate.iter().map(|&r| Method::Shards(r)).collect(),
                (true, true, None) => vec![Method::Exact],
                (false, false, _) => a.rate.iter().map(|&r| Method::Minisim(r)).collect(),
                (false, true, None) => vec![Method::Simulation],
                (false, true, Some(_)) => bail!(
                    "--sample-size is for LRU's SHARDS curve on the ideal device; give --rate for the miniature \
                     simulation of {} on {}",
                    policy.label(),
                    device.label()
                ),
            };
            if a.every_size && methods.iter().any(|m| matches!(m, Method::Minisim(_) | Method::Simulation)) {
                bail!(
                    "--every-size is for LRU's exact and SHARDS curves; {} on {} is simulated at each size: give \
                     --buffer or --points",
                    policy.label(),
                    device.label()
                );
            }
            let unit = match a.sample_block {
                Some(u) => u,
                None => sampling_unit(policy, device)?,
            };
            for method in methods {
                let sampled = !matches!(method, Method::Exact | Method::Simulation);
                for seed in a.seed..a.seed + if sampled { a.seeds } else { 1 } {
                    series.push(Series { policy: policy.clone(), device: device.clone(), method, unit, seed });
                }
            }
        }
    }
    let mut out_file = a.out.as_deref().map(|p| OutputFile::create(p, a.force)).transpose()?;
    if let Some(base) = &a.plot {
        let labels: Vec<String> =
            a.traces.iter().map(|t| TraceSpec::parse(t).map(|s| s.label()).unwrap_or_default()).collect();
        check_plot_files(&plot_files(base, &labels), a.force)?;
    }
    if a.traces.iter().filter(|t| TraceSpec::parse(t).is_ok_and(|s| !s.rereadable())).count() > 1 {
        bail!("standard input can be given only once");
    }
    let jobs = threads(a.jobs, a.quiet);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().context("thread pool")?;
    let cache = if a.no_cache { SummaryCache::disabled() } else { SummaryCache::from_env() };
    let needs_sim = a.error || series.iter().any(|s| s.method == Method::Simulation);

    let mut rows: Vec<CurveRow> = Vec::new();
    // Full simulations, each once, with the rows that take its result.
    let mut sims: Vec<(SweepRun, Vec<SimTarget>)> = Vec::new();
    for t in &a.traces {
        let spec = TraceSpec::parse(t).with_context(|| format!("trace '{t}'"))?;
        if let TraceSpec::Generated(g) = &spec {
            g.validate().with_context(|| format!("trace '{t}'"))?;
        }
        let label = spec.label();
        if needs_sim && !spec.rereadable() {
            bail!(
                "trace {label} can be read only once, but full simulation (a policy without --rate, or --error) \
                 reads it again: read it from a file, or draw LRU's exact or SHARDS curves and miniature \
                 simulations only"
            );
        }
        let exact_needed = series.iter().any(|s| s.method == Method::Exact)
            || (a.error && series.iter().any(|s| matches!(s.method, Method::Shards(_) | Method::ShardsFixed(_))));
        let sizes_need_footprint =
            buffers.as_ref().is_none_or(|b| b.iter().any(|s| matches!(s, BufferSize::Percent(_))));
        let sim_on_flash = series.iter().any(|s| {
            s.device.kind != DeviceKind::Ideal
                && (s.method == Method::Simulation || (a.error && matches!(s.method, Method::Minisim(_))))
        });
        let needs = Needs {
            distinct_pages: sizes_need_footprint && !exact_needed && spec.rereadable(),
            page_space: sim_on_flash && capacity.is_none(),
            requests: false,
        };
        let bar = crate::progress::bar(0, "requests", a.quiet);
        let ask = Ask { needs, remap: a.remap, extent_pages: extent };
        let prepared = prepare(&spec, &opts, &label, ask, &cache, &mut observer(&label, &bar, a.quiet));
        bar.finish_and_clear();
        let prepared = prepared?;

        // The pass.
        let pass = pool.install(|| one_pass(&prepared, &series, &a, exact_needed))?;
        let footprint = pass
            .exact
            .as_ref()
            .map(LruCurve::footprint)
            .or(prepared.footprint())
            .or_else(|| pass.shards.first().map(|(_, c)| c.footprint()));
        let sizes = resolve_sizes(buffers.as_deref(), a.every_size, a.points, footprint, opts.page_size)
            .with_context(|| format!("trace {label}"))?;
        let bounds = pass.kept.as_ref().map(|k| {
            let b = TraceBounds::new(k);
            let per_size: Vec<(u64, u64)> = pool.install(|| {
                use rayon::prelude::*;
                sizes
                    .par_iter()
                    .map(|&f| (b.writes(f as usize, final_flush), b.reads(f as usize, write_miss)))
                    .collect()
            });
            per_size
        });
        let bound_at = |i: usize, device: &DeviceConfig| -> Option<Bound> {
            let (writes, reads) = bounds.as_ref()?[i];
            let t = device.preset.config(1).timing;
            Some(Bound { writes, reads, time_ns: reads * t.read_ns + writes * t.program_ns })
        };

        // Per sample (rate, unit): its points and rows.
        let mut minis: Vec<(usize, Vec<MiniPoint>, Vec<MiniRow>)> =
            (0..pass.samples.len()).map(|i| (i, Vec::new(), Vec::new())).collect();
        for s in &series {
            let meta = |method: CurveMethod, rate: f64| CurveMeta {
                trace: label.clone(),
                policy: s.policy.label(),
                policy_name: s.policy.name().to_string(),
                method,
                sample_rate: rate,
                sample_block: sampled(method).then_some(s.unit),
                sample_seed: sampled(method).then_some(s.seed),
                device: s.device.label(),
                write_miss,
                footprint_pages: footprint,
            };
            let timing = s.device.preset.config(1).timing;
            let lru_rows = |curve: &LruCurve, rows: &mut Vec<CurveRow>| {
                let m = meta(curve.method(), curve.rate());
                for (i, &f) in sizes.iter().enumerate() {
                    let c = curve.at(f, write_miss, final_flush).counters();
                    let d = ideal_device_stats(&c, timing.read_ns, timing.program_ns);
                    let mut row = CurveRow::new(&m, f, &c, &d);
                    if let Some(exact) = pass.exact.as_ref().filter(|_| a.error && curve.method() != CurveMethod::Exact)
                    {
                        let full = exact.at(f, write_miss, final_flush).counters();
                        row.set_reference(full.hit_ratio(), full.page_writes());
                    }
                    if let Some(b) = bound_at(i, &s.device) {
                        row.set_bound(&b);
                    }
                    rows.push(row);
                }
            };
            match s.method {
                Method::Exact => lru_rows(pass.exact.as_ref().expect("the pass drew the exact curve"), &mut rows),
                Method::Shards(_) | Method::ShardsFixed(_) => {
                    let key = (s.method, s.unit, s.seed);
                    let curve = pass.shards.iter().find(|(k, _)| *k == key).map(|(_, c)| c).expect("drawn");
                    lru_rows(curve, &mut rows);
                }
                Method::Minisim(rate) => {
                    let key = (rate.to_bits(), s.unit, s.seed);
                    let k = pass.samples.iter().position(|(k, _)| *k == key).expect("sampled");
                    let (_, mini_points, mini_rows) = &mut minis[k];
                    for (i, &f) in sizes.iter().enumerate() {
                        mini_points.push(MiniPoint {
                            policy: s.policy.clone(),
                            frames: f,
                            device: s.device.clone(),
                            write_miss,
                            final_flush,
                        });
                        let m = meta(CurveMethod::Minisim, rate);
                        mini_rows.push((m, f, i, s.device.clone()));
                    }
                }
                Method::Simulation => {
                    let m = meta(CurveMethod::Simulation, 1.0);
                    for (i, &f) in sizes.iter().enumerate() {
                        let mut row = CurveRow::new(&m, f, &Default::default(), &DeviceStats::default());
                        if let Some(b) = bound_at(i, &s.device) {
                            row.set_bound(&b);
                        }
                        rows.push(row);
                        let run = sim_run(&prepared, &s.policy, f, &s.device, capacity, write_miss, final_flush)?;
                        add_sim(&mut sims, run, SimTarget { row: rows.len() - 1, reference: false });
                    }
                }
            }
        }
        for (k, mini_points, mini_rows) in minis {
            let sample = &pass.samples[k].1;
            let total = sample.len() as u64 * mini_points.len() as u64;
            let bar = crate::progress::bar(total, "sampled requests", a.quiet);
            let trace = prepared.spec.clone();
            let estimates = pool.install(|| minisim(sample, &trace, &mini_points, &|n| bar.inc(n)));
            bar.finish_and_clear();
            for ((m, f, i, device), e) in mini_rows.into_iter().zip(estimates) {
                let e = e?;
                let mut row = CurveRow::new(&m, f, &e.counters, &e.device);
                row.sample_frames = Some(e.mini_frames as u64);
                if let Some(b) = bound_at(i, &device) {
                    row.set_bound(&b);
                }
                rows.push(row);
                if a.error {
                    let policy: PolicyConfig = m.policy.parse().expect("a label parses back");
                    let run = sim_run(&prepared, &policy, f, &device, capacity, write_miss, final_flush)?;
                    add_sim(&mut sims, run, SimTarget { row: rows.len() - 1, reference: true });
                }
            }
        }
    }

    if !sims.is_empty() {
        let runs: Vec<&SweepRun> = sims.iter().map(|(r, _)| r).collect();
        let plan = schedule(&runs, memory_budget());
        let known = runs.iter().all(|r| r.requests > 0);
        let total = if known { runs.iter().map(|r| r.requests).sum() } else { 0 };
        let bar = crate::progress::bar(total, "requests simulated", a.quiet);
        let events = |e: GroupEvent<'_>| {
            if let GroupEvent::Simulated(n) = e {
                bar.inc(n)
            }
        };
        let mut outputs: Vec<Option<flashbuf_sim::RunOutput>> = vec![None; runs.len()];
        run_scheduled(&runs, &plan, jobs, &events, &mut |i, _, out| {
            outputs[i] = Some(out);
            Ok(())
        })?;
        bar.finish_and_clear();
        for ((run, targets), out) in sims.iter().zip(outputs) {
            let out = out.expect("no error, so every run produced its output");
            for target in targets {
                let row = &mut rows[target.row];
                if target.reference {
                    row.set_reference(out.counters.hit_ratio(), out.counters.page_writes());
                } else {
                    let mut full = CurveRow::new(
                        &CurveMeta {
                            trace: row.trace.clone(),
                            policy: row.policy.clone(),
                            policy_name: row.policy_name.clone(),
                            method: row.method,
                            sample_rate: row.sample_rate,
                            sample_block: row.sample_block,
                            sample_seed: row.sample_seed,
                            device: run.key().device.clone(),
                            write_miss: row.write_miss,
                            footprint_pages: row.footprint_pages,
                        },
                        row.buffer_pages,
                        &out.counters,
                        &out.device,
                    );
                    if let (Some(wb), Some(tb)) = (row.write_bound, row.time_bound_us) {
                        full.set_bound(&Bound { writes: wb, reads: 0, time_ns: (tb * 1e3).round() as u64 });
                    }
                    *row = full;
                }
            }
        }
    }

    let mut buf = Vec::new();
    match a.output {
        OutputFormat::Table => {
            buf.extend_from_slice(
                flashbuf_report::format_table(&rows, &table_columns(&rows, devices.len())).as_bytes(),
            );
            if a.error {
                buf.extend_from_slice(b"\n");
                buf.extend_from_slice(error_summary(&rows).as_bytes());
            }
        }
        OutputFormat::Csv => flashbuf_report::write_csv(&rows, &mut buf)?,
        OutputFormat::Json => flashbuf_report::write_json(&rows, &mut buf)?,
    }
    if let Some(base) = &a.plot {
        for p in plot_curves(base, &rows, a.force)? {
            if !a.quiet {
                eprintln!("flashbuf: wrote {}", p.display());
            }
        }
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

/// Adds `run` for `target`, or only `target` when the same run is already there.
fn add_sim(sims: &mut Vec<(SweepRun, Vec<SimTarget>)>, run: SweepRun, target: SimTarget) {
    match sims.iter_mut().find(|(r, _)| r.key() == run.key() && r.spec.same_requests(&run.spec)) {
        Some((_, targets)) => targets.push(target),
        None => sims.push((run, vec![target])),
    }
}

/// What the pass over a trace produced.
struct Pass {
    exact: Option<LruCurve>,
    shards: Vec<(ShardsKey, LruCurve)>,
    samples: Vec<(SampleKey, flashbuf_sim::curve::SampledTrace)>,
    kept: Option<KeptTrace>,
}

/// A SHARDS curve: method, sampling unit, seed.
type ShardsKey = (Method, u64, u64);
/// A sample for miniature simulation: rate (as bits), sampling unit, seed.
type SampleKey = (u64, u64, u64);

/// A row of a miniature simulation to come: its series, size, index in the sizes, device.
type MiniRow = (CurveMeta, u64, usize, DeviceConfig);

/// Decodes the trace once, feeding the exact curve, the SHARDS curves, the sample of the
/// miniature simulations and the trace kept for the bounds.
fn one_pass(prepared: &PreparedTrace, series: &[Series], a: &CurveArgs, exact_needed: bool) -> Result<Pass> {
    let label = &prepared.label;
    let mut exact = exact_needed.then(|| {
        let dense = if prepared.remap.is_some() || prepared.spec.page_count().is_some() {
            prepared.page_space.unwrap_or(flashbuf_sim::DENSE_LIMIT)
        } else {
            prepared.page_space.unwrap_or(0).min(1 << 20)
        };
        LruCurveBuilder::exact(dense.max(1))
    });
    let mut shards: Vec<(ShardsKey, LruCurveBuilder)> = Vec::new();
    let mut samples: Vec<(SampleKey, SampleCollector)> = Vec::new();
    for s in series {
        let salt = DEFAULT_SALT.wrapping_add(s.seed);
        let key = (s.method, s.unit, s.seed);
        match s.method {
            Method::Shards(r) if !shards.iter().any(|(k, _)| *k == key) => {
                let sampler = BlockSampler::with_rate(r, s.unit, salt).map_err(anyhow::Error::msg)?;
                shards.push((key, LruCurveBuilder::shards(sampler)));
            }
            Method::ShardsFixed(n) if !shards.iter().any(|(k, _)| *k == key) => {
                let b = LruCurveBuilder::shards_fixed_size(n, s.unit, salt).map_err(anyhow::Error::msg)?;
                shards.push((key, b));
            }
            Method::Minisim(r) if !samples.iter().any(|(k, _)| *k == (r.to_bits(), s.unit, s.seed)) => {
                let sampler = BlockSampler::with_rate(r, s.unit, salt).map_err(anyhow::Error::msg)?;
                samples.push(((r.to_bits(), s.unit, s.seed), SampleCollector::new(sampler)));
            }
            _ => {}
        }
    }
    let mut kept = a.bound.then(KeptTrace::new);

    let opened = prepared.spec.open(&prepared.read).with_context(|| format!("trace {label}"))?;
    if !a.quiet {
        eprintln!("flashbuf: {label}: {}", opened.reason);
    }
    let mut source: Box<dyn TraceSource> = match prepared.remap {
        Some(e) => Box::new(Remapped::new(opened.source, e)),
        None => opened.source,
    };
    let bar = crate::progress::bar(prepared.requests.unwrap_or(0), "requests", a.quiet);
    let mut batch = Vec::with_capacity(flashbuf_sim::group::GROUP_BATCH);
    // A pass of sampled series only: the reader drops what no sampler keeps as it decodes.
    if exact.is_none()
        && kept.is_none()
        && let Some(keep) = common_sampler(&shards, &samples)
    {
        loop {
            let scanned = source
                .next_sampled(&mut batch, flashbuf_sim::group::GROUP_BATCH, &keep)
                .with_context(|| format!("trace {label}"))?;
            if scanned.requests == 0 {
                break;
            }
            for (_, s) in &mut shards {
                s.feed_sampled(&batch, scanned);
            }
            for (_, s) in &mut samples {
                s.feed_sampled(&batch, scanned);
            }
            bar.inc(scanned.requests);
        }
    }
    loop {
        let n = source
            .next_batch(&mut batch, flashbuf_sim::group::GROUP_BATCH)
            .with_context(|| format!("trace {label}"))?;
        if n == 0 {
            break;
        }
        let b = &batch;
        rayon::join(
            || {
                if let Some(e) = &mut exact {
                    e.feed(b)
                }
            },
            || {
                for (_, s) in &mut shards {
                    s.feed(b);
                }
                for (_, s) in &mut samples {
                    s.feed(b);
                }
                if let Some(k) = &mut kept {
                    k.push(b);
                }
            },
        );
        bar.inc(n as u64);
    }
    bar.finish_and_clear();
    Ok(Pass {
        exact: exact.map(LruCurveBuilder::finish),
        shards: shards.into_iter().map(|(k, b)| (k, b.finish())).collect(),
        samples: samples.into_iter().map(|(k, c)| (k, c.finish())).collect(),
        kept,
    })
}

/// The sampler that keeps what every sampled series of a pass keeps, when they all sample by
/// the same unit and hash (rates may differ: the largest threshold keeps every smaller one's
/// blocks); `None` when there is none or a series is fixed-size SHARDS, whose rate changes.
fn common_sampler(
    shards: &[(ShardsKey, LruCurveBuilder)],
    samples: &[(SampleKey, SampleCollector)],
) -> Option<BlockSampler> {
    let mut all = Vec::new();
    for (_, b) in shards {
        all.push(b.sampler()?);
    }
    all.extend(samples.iter().map(|(_, c)| c.sampler()));
    let widest = all.iter().max_by_key(|s| s.limit())?;
    all.iter().all(|s| s.block_pages() == widest.block_pages() && s.salt() == widest.salt()).then(|| (*widest).clone())
}

/// The sizes of the curve: the given ones; every size; or `points` sizes spread geometrically
/// from 1/500 of the footprint to the footprint.
fn resolve_sizes(
    buffers: Option<&[BufferSize]>,
    every: bool,
    points: usize,
    footprint: Option<u64>,
    page_size: u64,
) -> Result<Vec<u64>> {
    if let Some(b) = buffers {
        let mut v = b
            .iter()
            .map(|s| s.pages(page_size, footprint))
            .collect::<Result<Vec<_>, _>>()
            .map_err(anyhow::Error::msg)?;
        v.sort_unstable();
        v.dedup();
        return Ok(v);
    }
    let Some(fp) = footprint.filter(|&f| f > 0) else {
        bail!("the trace's footprint is not known, so the default sizes cannot be chosen: give --buffer in pages");
    };
    if every {
        return Ok((1..=fp).collect());
    }
    let lo = (fp as f64 / 500.0).max(1.0);
    let hi = fp as f64;
    let mut v: Vec<u64> = (0..points)
        .map(|i| {
            let x = if points == 1 { hi } else { lo * (hi / lo).powf(i as f64 / (points - 1) as f64) };
            x.round().max(1.0) as u64
        })
        .collect();
    v.dedup();
    Ok(v)
}

fn sim_run(
    prepared: &PreparedTrace,
    policy: &PolicyConfig,
    frames: u64,
    device: &DeviceConfig,
    capacity: Option<u64>,
    write_miss: WriteMiss,
    final_flush: bool,
) -> Result<SweepRun> {
    let label = &prepared.label;
    let logical_pages = prepared.logical_pages(device, capacity).map_err(anyhow::Error::msg)?;
    if device.kind != flashbuf_flash::DeviceKind::Ideal {
        device
            .physical_blocks(logical_pages)
            .with_context(|| format!("device {} for {logical_pages} logical pages", device.label()))
            .with_context(|| format!("trace {label}"))?;
    }
    let frames = usize::try_from(frames).ok().filter(|&f| f < u32::MAX as usize).context("buffer too large")?;
    let mut spec = prepared.run_spec(policy, frames, device, logical_pages);
    spec.write_miss = write_miss;
    spec.final_flush = final_flush;
    Ok(SweepRun::new(spec, prepared.requests.unwrap_or(0)))
}

fn table_columns(rows: &[CurveRow], devices: usize) -> Vec<Column<CurveRow>> {
    let mut c: Vec<Column<CurveRow>> = vec![
        Column { header: "trace", cell: |r: &CurveRow| r.trace.clone(), numeric: false },
        Column { header: "policy", cell: |r: &CurveRow| r.policy.clone(), numeric: false },
        Column { header: "method", cell: method_label, numeric: false },
    ];
    if devices > 1 {
        c.push(Column { header: "device", cell: |r: &CurveRow| r.device.clone(), numeric: false });
    }
    c.extend([
        Column { header: "buffer (pages)", cell: |r: &CurveRow| thousands(r.buffer_pages), numeric: true },
        Column {
            header: "buffer (%)",
            cell: |r: &CurveRow| r.buffer_share.map_or_else(|| "-".into(), |s| format!("{:.2}", 100.0 * s)),
            numeric: true,
        },
        Column { header: "hit ratio (%)", cell: |r: &CurveRow| format!("{:.2}", 100.0 * r.hit_ratio), numeric: true },
        Column { header: "page reads", cell: |r: &CurveRow| thousands(r.page_reads), numeric: true },
        Column { header: "page writes", cell: |r: &CurveRow| thousands(r.page_writes), numeric: true },
        Column {
            header: "device time (s)",
            cell: |r: &CurveRow| format!("{:.3}", r.device_time_us / 1e6),
            numeric: true,
        },
    ]);
    if rows.iter().any(|r| r.erases > 0) {
        c.push(Column { header: "erases", cell: |r: &CurveRow| thousands(r.erases), numeric: true });
    }
    if rows.iter().any(|r| r.sample_frames.is_some()) {
        c.push(Column {
            header: "mini frames",
            cell: |r: &CurveRow| r.sample_frames.map_or_else(|| "-".into(), thousands),
            numeric: true,
        });
    }
    if rows.iter().any(|r| r.full_hit_ratio.is_some()) {
        c.extend([
            Column {
                header: "Δ hit ratio (pp)",
                cell: |r: &CurveRow| r.hit_ratio_error.map_or_else(|| "-".into(), |e| format!("{:+.2}", 100.0 * e)),
                numeric: true,
            },
            Column {
                header: "Δ writes (%)",
                cell: |r: &CurveRow| r.page_writes_error.map_or_else(|| "-".into(), |e| format!("{:+.2}", 100.0 * e)),
                numeric: true,
            },
        ]);
    }
    if rows.iter().any(|r| r.write_bound.is_some()) {
        c.extend([
            Column {
                header: "write bound",
                cell: |r: &CurveRow| r.write_bound.map_or_else(|| "-".into(), thousands),
                numeric: true,
            },
            Column {
                header: "writes/bound",
                cell: |r: &CurveRow| r.writes_over_bound.map_or_else(|| "-".into(), |v| format!("{v:.3}")),
                numeric: true,
            },
            Column {
                header: "time/bound",
                cell: |r: &CurveRow| r.time_over_bound.map_or_else(|| "-".into(), |v| format!("{v:.3}")),
                numeric: true,
            },
        ]);
    }
    c
}

fn sampled(m: CurveMethod) -> bool {
    matches!(m, CurveMethod::Shards | CurveMethod::ShardsFixedSize | CurveMethod::Minisim)
}

/// A rate in percent with as many decimals as it needs (`1`, `0.5`, `0.123`).
fn pct(rate: f64) -> String {
    let s = format!("{:.4}", 100.0 * rate);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What identifies a curve's method across samples (a fixed-size sample ends at a rate of its
/// own, so its rate is left out).
fn method_key(r: &CurveRow) -> String {
    match r.method {
        CurveMethod::ShardsFixedSize => format!("{} {:?}", r.method.name(), r.sample_block),
        _ => format!("{} {} {:?}", r.method.name(), r.sample_rate, r.sample_block),
    }
}

/// The method as the tables show it.
fn method_label(r: &CurveRow) -> String {
    match r.method {
        CurveMethod::Exact | CurveMethod::Simulation => r.method.name().to_string(),
        CurveMethod::ShardsFixedSize => {
            format!("{} ≈{}% /{}", r.method.name(), pct(r.sample_rate), r.sample_block.unwrap_or(1))
        }
        _ => format!("{} {}% /{}", r.method.name(), pct(r.sample_rate), r.sample_block.unwrap_or(1)),
    }
}

/// Mean absolute errors per curve (trace, policy, method, device), averaged over the samples
/// (seeds) with the range of the hit ratio's.
fn error_summary(rows: &[CurveRow]) -> String {
    struct Summary {
        trace: String,
        policy: String,
        method: String,
        device: String,
        points: usize,
        seeds: usize,
        hit: f64,
        hit_range: (f64, f64),
        per_request: f64,
        relative: f64,
    }
    let mut keys: Vec<(String, String, String, String)> = Vec::new();
    for r in rows.iter().filter(|r| r.full_hit_ratio.is_some()) {
        let k = (r.trace.clone(), r.policy.clone(), method_key(r), r.device.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let summaries: Vec<Summary> = keys
        .into_iter()
        .filter_map(|(trace, policy, method, device)| {
            let of: Vec<&CurveRow> = rows
                .iter()
                .filter(|r| r.trace == trace && r.policy == policy && method_key(r) == method && r.device == device)
                .collect();
            let mut seeds: Vec<Option<u64>> = of.iter().map(|r| r.sample_seed).collect();
            seeds.sort_unstable();
            seeds.dedup();
            let per_seed: Vec<(f64, f64, f64)> = seeds
                .iter()
                .filter_map(|s| mean_errors(&of.iter().copied().filter(|r| r.sample_seed == *s).collect::<Vec<_>>()))
                .collect();
            if per_seed.is_empty() {
                return None;
            }
            let n = per_seed.len() as f64;
            let mean = |f: fn(&(f64, f64, f64)) -> f64| per_seed.iter().map(f).sum::<f64>() / n;
            let hit_range = per_seed.iter().fold((f64::MAX, f64::MIN), |(lo, hi), e| (lo.min(e.0), hi.max(e.0)));
            let method = method_label(of[0]);
            Some(Summary {
                trace,
                policy,
                method,
                device,
                points: of.len() / per_seed.len(),
                seeds: per_seed.len(),
                hit: mean(|e| e.0),
                hit_range,
                per_request: mean(|e| e.1),
                relative: mean(|e| e.2),
            })
        })
        .collect();
    if summaries.is_empty() {
        return String::new();
    }
    let many = summaries.iter().any(|s| s.seeds > 1);
    let mut columns: Vec<Column<Summary>> = vec![
        Column { header: "trace", cell: |s| s.trace.clone(), numeric: false },
        Column { header: "policy", cell: |s| s.policy.clone(), numeric: false },
        Column { header: "method", cell: |s| s.method.clone(), numeric: false },
        Column { header: "device", cell: |s| s.device.clone(), numeric: false },
        Column { header: "sizes", cell: |s| s.points.to_string(), numeric: true },
    ];
    if many {
        columns.push(Column { header: "samples", cell: |s| s.seeds.to_string(), numeric: true });
    }
    columns.push(Column { header: "MAE hit ratio (pp)", cell: |s| format!("{:.3}", 100.0 * s.hit), numeric: true });
    if many {
        columns.push(Column {
            header: "range (pp)",
            cell: |s| format!("{:.3}–{:.3}", 100.0 * s.hit_range.0, 100.0 * s.hit_range.1),
            numeric: true,
        });
    }
    columns.extend([
        Column {
            header: "MAE writes/request (pp)",
            cell: |s: &Summary| format!("{:.3}", 100.0 * s.per_request),
            numeric: true,
        },
        Column {
            header: "mean |Δ writes| (%)",
            cell: |s: &Summary| format!("{:.2}", 100.0 * s.relative),
            numeric: true,
        },
    ]);
    format!("mean absolute errors against full simulation:\n{}", flashbuf_report::format_table(&summaries, &columns))
}

/// Plots hit ratio and page writes against buffer size, one pair of figures per trace; the write
/// bound, when computed, is a series of the page-writes figure.
fn plot_curves(base: &Path, rows: &[CurveRow], force: bool) -> Result<Vec<PathBuf>> {
    let mut csv = Vec::new();
    flashbuf_report::write_csv(rows, &mut csv)?;
    let table = CsvTable::from_reader(csv.as_slice(), "curve")?;
    // The write bound as rows of a series of its own (once per trace and size).
    let mut with_bound: Vec<CurveRow> = rows.to_vec();
    for r in rows {
        if let Some(b) = r.write_bound
            && !with_bound
                .iter()
                .any(|x| x.policy == "write bound" && x.trace == r.trace && x.buffer_pages == r.buffer_pages)
        {
            let mut x = r.clone();
            x.policy = "write bound".into();
            x.policy_name = "bound".into();
            x.page_writes = b;
            with_bound.push(x);
        }
    }
    let mut csv = Vec::new();
    flashbuf_report::write_csv(&with_bound, &mut csv)?;
    let writes_table = CsvTable::from_reader(csv.as_slice(), "curve")?;
    let mut traces: Vec<&str> = Vec::new();
    for r in rows {
        if !traces.contains(&r.trace.as_str()) {
            traces.push(&r.trace);
        }
    }
    let distinct = |f: fn(&CurveRow) -> String| {
        let mut v: Vec<String> = rows.iter().map(f).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    let mut series = vec!["policy".to_string()];
    if distinct(method_key) > 1 {
        series.push("method".into());
    }
    if distinct(|r| r.device.clone()) > 1 {
        series.push("device".into());
    }
    if distinct(|r| format!("{:?}", r.sample_seed)) > 1 {
        series.push("sample_seed".into());
    }
    let (lo, hi) = rows.iter().fold((u64::MAX, 0), |(lo, hi), r| (lo.min(r.buffer_pages), hi.max(r.buffer_pages)));
    let log_x = lo > 0 && hi >= 20 * lo;
    let labels: Vec<String> = traces.iter().map(|t| t.to_string()).collect();
    let files = plot_files(base, &labels);
    check_plot_files(&files, force)?;
    let mut jobs = Vec::new();
    for (trace, out, y) in files {
        let mut spec = PlotSpec::new("buffer_pages", y);
        spec.series = series.clone();
        spec.log_x = log_x;
        spec.filters.push(Filter { column: "trace".into(), value: trace });
        jobs.push((out, spec, if y == "hit_ratio" { &table } else { &writes_table }));
    }
    let mut written = Vec::new();
    for (out, spec, table) in jobs {
        written.extend(plot(table, &spec, &out)?);
    }
    Ok(written)
}

/// The figures of `--plot BASE` for traces labelled `labels`: (trace, base of the SVG and PNG,
/// y column).
fn plot_files(base: &Path, labels: &[String]) -> Vec<(String, PathBuf, &'static str)> {
    let clean = |s: &str| s.replace([':', '/', '\\', ' ', ','], "-");
    let mut out = Vec::new();
    for trace in labels {
        let stem = if labels.len() > 1 {
            let name = base.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            base.with_file_name(format!("{name}-{}", clean(trace)))
        } else {
            base.to_path_buf()
        };
        for (y, suffix) in [("hit_ratio", "hit-ratio"), ("page_writes", "page-writes")] {
            out.push((trace.clone(), PathBuf::from(format!("{}-{suffix}", stem.display())), y));
        }
    }
    out
}

fn check_plot_files(files: &[(String, PathBuf, &'static str)], force: bool) -> Result<()> {
    for (_, out, _) in files {
        if let Some(p) = output_paths(out).iter().find(|p| p.exists() && !force) {
            bail!("{} already exists; use --force to overwrite it", p.display());
        }
    }
    Ok(())
}

/// Fills the bound columns of `rows` (one per run of `runs`, in order): each trace is read once
/// more and kept in memory (about 5 bytes a request, and 4 more while a bound is computed), and
/// the bounds are computed once per buffer size.
pub fn attach_bounds(runs: &[SweepRun], rows: &mut [flashbuf_sim::ResultRow], jobs: usize, quiet: bool) -> Result<()> {
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().context("thread pool")?;
    let mut done = vec![false; runs.len()];
    for i in 0..runs.len() {
        if done[i] {
            continue;
        }
        let spec = &runs[i].spec;
        let label = &spec.trace_label;
        let mut source = spec.trace.open(&spec.read).with_context(|| format!("trace {label}"))?.source;
        let bar = crate::progress::bar(runs[i].requests, "requests kept for the bounds", quiet);
        let mut kept = KeptTrace::new();
        let mut batch = Vec::with_capacity(flashbuf_sim::group::GROUP_BATCH);
        while source
            .next_batch(&mut batch, flashbuf_sim::group::GROUP_BATCH)
            .with_context(|| format!("trace {label}"))?
            > 0
        {
            kept.push(&batch);
            bar.inc(batch.len() as u64);
        }
        bar.finish_and_clear();
        let bounds = TraceBounds::new(&kept);
        drop(kept);
        let members: Vec<usize> = (i..runs.len()).filter(|&j| runs[j].spec.same_requests(spec)).collect();
        let mut keys: Vec<(usize, WriteMiss, bool)> =
            members.iter().map(|&j| (runs[j].spec.frames, runs[j].spec.write_miss, runs[j].spec.final_flush)).collect();
        keys.sort_unstable_by_key(|k| (k.0, k.1 == WriteMiss::Fetch, k.2));
        keys.dedup();
        let values: Vec<(u64, u64)> =
            pool.install(|| keys.par_iter().map(|&(f, wm, ff)| (bounds.writes(f, ff), bounds.reads(f, wm))).collect());
        for j in members {
            let s = &runs[j].spec;
            let k = keys.iter().position(|k| *k == (s.frames, s.write_miss, s.final_flush)).expect("computed");
            let (writes, reads) = values[k];
            let t = s.device.preset.config(1).timing;
            rows[j].set_bound(&Bound { writes, reads, time_ns: reads * t.read_ns + writes * t.program_ns });
            done[j] = true;
        }
    }
    Ok(())
}
