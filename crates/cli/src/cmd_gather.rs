//! `flashbuf gather`: the FTL-independent write-gathering layer of Chardin, Pasteur and Petit.
//!
//! * `probe` — measure cost(d), the write latency at a fixed distance from the previous write,
//!   on a file (the paper's Fig. 2);
//! * `model` — the paper's §5 model (and the forward-sweep model): predicted writes per second
//!   versus pool size, for a measured or parametric cost curve;
//! * `bench` — uniform random writes directly and through the layer over simulated BAST, FAST
//!   and page-mapped FTLs (and optionally a real file), for pool sizes from 5% to 300%, with the
//!   model beside each measurement (Figs. 5–7).

use crate::output::outln;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use flashbuf_flash::gather::experiment::{
    self, DEFAULT_POOLS_PERCENT, ExperimentConfig, ExperimentRow, FileExperimentConfig, Mode,
};
use flashbuf_flash::gather::model::{CostCurve, predict};
use flashbuf_flash::gather::probe::{
    DEFAULT_PROBE_FILE_BYTES, ProbeConfig, ProbeFileOptions, ProbeRow, open_probe_file, probe_store,
};
use flashbuf_flash::{DeviceConfig, DeviceKind, FileOptions, NandPreset, PoolSize};
use rayon::prelude::*;

use flashbuf_report::OutputFile;

#[derive(Args)]
pub struct GatherArgs {
    #[command(subcommand)]
    command: GatherCommand,
}

#[derive(Subcommand)]
enum GatherCommand {
    /// Measure write latency versus the distance between consecutive writes on a file.
    Probe(ProbeArgs),
    /// Predict writes per second versus pool size (the paper's §5 model).
    Model(ModelArgs),
    /// Random writes directly and through the layer, simulated devices and optionally a file.
    Bench(BenchArgs),
}

pub fn run(a: GatherArgs) -> Result<()> {
    match a.command {
        GatherCommand::Probe(a) => probe(a),
        GatherCommand::Model(a) => model(a),
        GatherCommand::Bench(a) => bench(a),
    }
}

#[derive(Args)]
struct ProbeArgs {
    /// The file to write to. Created (of --size) if absent, marked as a probe file in its first
    /// sector; an existing file not created by the probe is refused without --force-file.
    #[arg(long, value_name = "PATH")]
    file: PathBuf,
    /// Sector size in bytes (a multiple of 512).
    #[arg(long, default_value_t = 4096)]
    sector: usize,
    /// Distances in sectors: 0 rewrites in place, 1 is sequential, -1 reverse, n skips n-1.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, default_value = "0,1,-1,2,4,8,16,32,64,128,256,1024")]
    distances: String,
    /// Do not measure uniformly random writes.
    #[arg(long)]
    no_random: bool,
    /// Timed writes per distance.
    #[arg(long, default_value_t = 4096)]
    writes: u64,
    /// Writes per distance made first and dropped.
    #[arg(long, default_value_t = 512)]
    warmup: u64,
    /// Size of the file to create (or of a probe file to resize): bytes, or with K/M/G/KiB/MiB/GiB
    /// (powers of 1024). Default 256 MiB.
    #[arg(long, value_name = "BYTES")]
    size: Option<String>,
    /// fdatasync after every write.
    #[arg(long)]
    sync: bool,
    /// Buffered I/O instead of direct I/O.
    #[arg(long)]
    no_direct: bool,
    /// Use an existing file that the probe did not create (its contents are destroyed).
    #[arg(long)]
    force_file: bool,
    /// Seed of the start positions and random writes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the rows as CSV to this file (appears only when complete).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    force: bool,
}

/// Parses `268435456`, `256MiB`, `1G`, `64k` into bytes (units are powers of 1024).
fn parse_bytes(s: &str) -> Result<u64> {
    let t = s.trim();
    let end = t.find(|c: char| !c.is_ascii_digit() && c != '_').unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let n: u64 = num.replace('_', "").parse().with_context(|| format!("bad size '{s}'"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => bail!("bad size '{s}': unknown unit '{other}' (use K, M, G, KiB, MiB, GiB)"),
    };
    n.checked_mul(mult).with_context(|| format!("size '{s}' overflows"))
}

fn parse_list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>>
where
    T::Err: std::fmt::Display,
{
    let v: Vec<T> = s
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse::<T>().map_err(|e| anyhow::anyhow!("bad {what} '{x}': {e}")))
        .collect::<Result<_>>()?;
    if v.is_empty() {
        bail!("no {what} given");
    }
    Ok(v)
}

/// Pool sizes in percent: `5,10,50%,300`.
fn parse_pools(s: &str) -> Result<Vec<f64>> {
    let v: Vec<f64> = parse_list::<String>(s, "pool size")?
        .iter()
        .map(|x| x.trim_end_matches('%').parse::<f64>().map_err(|e| anyhow::anyhow!("bad pool size '{x}': {e}")))
        .collect::<Result<_>>()?;
    if let Some(bad) = v.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
        bail!("pool size {bad}% is not a positive percentage of the logical space");
    }
    Ok(v)
}

fn default_pools() -> String {
    DEFAULT_POOLS_PERCENT.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(",")
}

/// Names the flag that overrides a refusal to touch a file flashbuf did not create.
fn explain_file_error(e: flashbuf_flash::StoreError) -> anyhow::Error {
    match e {
        flashbuf_flash::StoreError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists => {
            anyhow::anyhow!("{e} (--force-file overwrites it)")
        }
        e => e.into(),
    }
}

fn print_probe_header() -> Result<()> {
    outln!("{:>9} {:>8} {:>12} {:>12} {:>12} {:>10}", "distance", "writes", "median µs", "p99 µs", "mean µs", "IOPS");
    Ok(())
}

fn print_probe_row(r: &ProbeRow) -> Result<()> {
    outln!(
        "{:>9} {:>8} {:>12.1} {:>12.1} {:>12.1} {:>10.0}",
        r.pattern.to_string(),
        r.writes,
        r.median_ns / 1e3,
        r.p99_ns / 1e3,
        r.mean_ns / 1e3,
        r.iops
    );
    Ok(())
}

fn probe(a: ProbeArgs) -> Result<()> {
    let mut out = a.out.as_deref().map(|p| OutputFile::create(p, a.force)).transpose()?;
    let distances: Vec<i64> = parse_list(&a.distances, "distance")?;
    let mut opts = ProbeFileOptions::new(a.file.clone());
    opts.sector_bytes = a.sector;
    opts.size_bytes = a.size.as_deref().map(parse_bytes).transpose()?;
    opts.force = a.force_file;
    opts.file = FileOptions { direct: !a.no_direct, sync_each_write: a.sync };
    let mut pf = open_probe_file(&opts).map_err(explain_file_error)?;
    let file = pf.store.inner();
    outln!(
        "file: {} ({} MiB{}, {} sectors of {} B probed after a marker sector)",
        a.file.display(),
        pf.size_bytes >> 20,
        if pf.created { ", created" } else { "" },
        flashbuf_flash::PageStore::pages(&pf.store),
        a.sector
    );
    outln!(
        "I/O: {}{}; preconditioned (written fully once); {} warm-up + {} timed writes per pattern, queue depth 1",
        if file.is_direct() { "direct" } else { "buffered" },
        if a.sync { " + fdatasync per write" } else { "" },
        a.warmup,
        a.writes
    );
    if let Some(why) = file.fallback_reason() {
        eprintln!("flashbuf: warning: {why}");
    }
    let cfg = ProbeConfig { distances, random: !a.no_random, writes: a.writes, warmup: a.warmup, seed: a.seed };
    print_probe_header()?;
    let mut printing: Result<()> = Ok(());
    let rows = probe_store(&mut pf.store, &cfg, &mut |r| {
        if printing.is_ok() {
            printing = print_probe_row(r);
        }
    })?;
    printing?;
    if let Some(f) = out.as_mut() {
        writeln!(f, "{}", ProbeRow::CSV_HEADER)?;
        for r in &rows {
            writeln!(f, "{}", r.csv())?;
        }
    }
    if let Some(f) = out {
        f.commit()?;
    }
    Ok(())
}

#[derive(Args)]
struct ModelArgs {
    /// |L|: logical sectors.
    #[arg(long, default_value_t = 100_000)]
    logical: u64,
    /// Pool sizes in percent of the logical space.
    #[arg(long, value_name = "LIST", default_value_t = default_pools())]
    pools: String,
    /// A measured cost curve: a CSV from `flashbuf gather probe -o` (columns distance, mean_us).
    #[arg(long, value_name = "CSV", conflicts_with_all = ["dmax", "random_cost"])]
    cost: Option<PathBuf>,
    /// Parametric curve cost(d) = C · min(d, D) / D: the distance D from which writes cost as
    /// much as random writes (32 for the paper's USB key, 256 for its SSD).
    #[arg(long, default_value_t = 32)]
    dmax: u64,
    /// Parametric curve: C, the cost of a random write in µs (default: 30 IOPS, the paper's USB
    /// key).
    #[arg(long, value_name = "US", default_value_t = 1e6 / 30.0)]
    random_cost: f64,
    /// Write the table as CSV to this file.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    force: bool,
}

/// Checks the logical size and that every pool size gives at least one sector.
fn check_sizes(logical: u64, pools: &[f64], what: &str) -> Result<()> {
    if logical == 0 {
        bail!("{what} must be at least 1 sector");
    }
    for &pc in pools {
        PoolSize::Percent(pc).sectors(logical)?;
    }
    Ok(())
}

fn model(a: ModelArgs) -> Result<()> {
    let out = a.out.as_deref().map(|p| OutputFile::create(p, a.force)).transpose()?;
    let pools = parse_pools(&a.pools)?;
    check_sizes(a.logical, &pools, "--logical")?;
    let curve = match &a.cost {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
            CostCurve::from_csv(&text).with_context(|| path.display().to_string())?
        }
        None => CostCurve::parametric(a.dmax, a.random_cost * 1e3)?,
    };
    outln!("|L| = {} sectors; {}", a.logical, curve.describe());
    outln!("random writes without the layer: {:.1} writes/s", 1e9 / curve.random_ns());
    outln!(
        "{:>8} {:>10} {:>10} {:>12} {:>9} {:>10} {:>12} {:>9}",
        "pool %",
        "|P|",
        "E[d]",
        "writes/s",
        "speedup",
        "E[d] sweep",
        "sweep w/s",
        "speedup"
    );
    let mut csv = String::from(
        "logical_sectors,pool_percent,pool_sectors,mean_distance,cost_avg_us,writes_per_s,sweep_mean_distance,\
         sweep_cost_avg_us,sweep_writes_per_s,random_writes_per_s\n",
    );
    for pc in pools {
        let pool = PoolSize::Percent(pc).sectors(a.logical)?;
        let p = predict(a.logical, pool, &curve)?;
        outln!(
            "{:>8} {:>10} {:>10.3} {:>12.1} {:>8.2}× {:>10.3} {:>12.1} {:>8.2}×",
            pc,
            pool,
            p.mean_distance,
            p.writes_per_s,
            p.writes_per_s / p.random_writes_per_s,
            p.sweep_mean_distance,
            p.sweep_writes_per_s,
            p.sweep_writes_per_s / p.random_writes_per_s
        );
        csv += &format!(
            "{},{},{},{:.6},{:.3},{:.3},{:.6},{:.3},{:.3},{:.3}\n",
            a.logical,
            pc,
            pool,
            p.mean_distance,
            p.cost_avg_ns / 1e3,
            p.writes_per_s,
            p.sweep_mean_distance,
            p.sweep_cost_avg_ns / 1e3,
            p.sweep_writes_per_s,
            p.random_writes_per_s
        );
    }
    outln!(
        "(E[d] and writes/s: the paper's model, pool sectors uniformly placed; sweep: the forward-only steady state)"
    );
    if let Some(mut f) = out {
        f.write_all(csv.as_bytes())?;
        f.commit()?;
    }
    Ok(())
}

#[derive(Args)]
struct BenchArgs {
    /// |L|: logical sectors of the simulated runs (the paper: 100,000 and 200,000).
    #[arg(long, default_value_t = 100_000)]
    logical: u64,
    /// Pool sizes in percent of the logical space.
    #[arg(long, value_name = "LIST", default_value_t = default_pools())]
    pools: String,
    /// Simulated devices: bast, fast, page (block and ideal are accepted too); empty for none.
    #[arg(long, value_name = "LIST", default_value = "bast,fast,page")]
    devices: String,
    /// NAND preset of the simulated devices.
    #[arg(long, default_value = "ref")]
    preset: String,
    /// Log blocks of BAST and FAST.
    #[arg(long, default_value_t = 8)]
    log_blocks: u32,
    /// Timed writes per simulated run.
    #[arg(long, default_value_t = 100_000)]
    writes: u64,
    /// Warm-up writes, in passes over the device's sectors.
    #[arg(long, default_value_t = 2.0)]
    warmup_passes: f64,
    /// Seed of the logical write stream.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Also run on this real file (a probe file: created if absent, see `gather probe`).
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// |L| of the file runs (the file holds 1 + |L| × (1 + largest pool) sectors).
    #[arg(long, default_value_t = 16_384)]
    file_logical: u64,
    /// Timed writes per file run.
    #[arg(long, default_value_t = 16_384)]
    file_writes: u64,
    /// fdatasync after every write to the file.
    #[arg(long)]
    sync: bool,
    /// Buffered I/O on the file instead of direct I/O.
    #[arg(long)]
    no_direct: bool,
    /// Use an existing file that flashbuf did not create (its contents are destroyed).
    #[arg(long)]
    force_file: bool,
    /// Write all rows as CSV to this file.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    force: bool,
    /// Parallel simulated runs (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

fn print_rows_header(real: bool) -> Result<()> {
    outln!(
        "{:<24} {:>6} {:>7} {:>11} {:>11} {:>7} {:>7} {:>8} {:>9} {:>7} {:>11} {:>11} {:>8}",
        "device",
        "mode",
        "pool %",
        if real { "wall µs/w" } else { "dev µs/w" },
        "writes/s",
        "switch",
        "partial",
        "full",
        "erases",
        "E[d]",
        "model w/s",
        "sweep w/s",
        "speedup"
    );
    Ok(())
}

fn print_row(r: &ExperimentRow) -> Result<()> {
    let label = match r.device.char_indices().rev().nth(22) {
        Some((i, _)) if r.device.chars().count() > 24 => format!("…{}", &r.device[i..]),
        _ => r.device.clone(),
    };
    outln!(
        "{:<24} {:>6} {:>7} {:>11.1} {:>11.1} {:>7} {:>7} {:>8} {:>9} {:>7.3} {:>11.1} {:>11.1} {:>7.2}×",
        label,
        r.mode.name(),
        if r.mode == Mode::Direct { "-".to_string() } else { format!("{:.1}", r.pool_percent) },
        r.time_per_write_ns / 1e3,
        r.writes_per_s,
        r.merges_switch,
        r.merges_partial,
        r.merges_full,
        r.erases,
        r.mean_distance,
        r.model_writes_per_s,
        r.sweep_model_writes_per_s,
        r.speedup
    );
    Ok(())
}

fn bench(a: BenchArgs) -> Result<()> {
    let mut out = a.out.as_deref().map(|p| OutputFile::create(p, a.force)).transpose()?;
    let pools = parse_pools(&a.pools)?;
    if !a.devices.trim().is_empty() {
        check_sizes(a.logical, &pools, "--logical")?;
    }
    if a.file.is_some() {
        check_sizes(a.file_logical, &pools, "--file-logical")?;
    }
    let preset: NandPreset = a.preset.parse()?;
    let kinds: Vec<DeviceKind> =
        if a.devices.trim().is_empty() { Vec::new() } else { parse_list(&a.devices, "device")? };
    let devices: Vec<DeviceConfig> = kinds
        .iter()
        .map(|&kind| DeviceConfig { kind, preset, log_blocks: a.log_blocks, ..Default::default() })
        .collect();
    let cfg = ExperimentConfig {
        logical_sectors: a.logical,
        pools_percent: pools.clone(),
        warmup_passes: a.warmup_passes,
        measure_writes: a.writes,
        seed: a.seed,
        ..Default::default()
    };
    let mut all_rows = Vec::new();

    if !devices.is_empty() {
        outln!(
            "simulated: {} logical sectors of {} B, uniform random writes (seed {}), {} warm-up passes, {} timed writes; \
             cost(d) probed per device for the model",
            cfg.logical_sectors,
            cfg.sector_bytes,
            cfg.seed,
            cfg.warmup_passes,
            cfg.measure_writes
        );
        let pool = rayon::ThreadPoolBuilder::new().num_threads(a.jobs.unwrap_or(0)).build()?;
        let bar = crate::progress::bar((devices.len() * (pools.len() + 2)) as u64, "runs", a.quiet);
        let curves: Vec<CostCurve> = pool.install(|| {
            devices
                .par_iter()
                .map(|d| {
                    let c = experiment::cost_curve(&cfg, d).map(|(c, _)| c).with_context(|| d.label());
                    bar.inc(1);
                    c
                })
                .collect::<Result<_>>()
        })?;
        // One job per (device, direct or pool size), largest first to balance the cores.
        let mut jobs: Vec<(usize, Option<f64>)> = Vec::new();
        for i in 0..devices.len() {
            jobs.push((i, None));
            jobs.extend(pools.iter().map(|&p| (i, Some(p))));
        }
        let done: Mutex<Vec<(usize, usize, ExperimentRow)>> = Mutex::new(Vec::new());
        pool.install(|| {
            jobs.par_iter().enumerate().try_for_each(|(order, &(i, p))| -> Result<()> {
                let d = &devices[i];
                let row = match p {
                    None => experiment::simulate_direct(&cfg, d, &curves[i]),
                    Some(pc) => experiment::simulate_gather(&cfg, d, pc, &curves[i]),
                }
                .with_context(|| match p {
                    None => format!("{}, direct writes", d.label()),
                    Some(pc) => format!("{}, pool of {pc}%", d.label()),
                })?;
                bar.inc(1);
                done.lock().unwrap().push((i, order, row));
                Ok(())
            })
        })?;
        bar.finish_and_clear();
        let mut done = done.into_inner().unwrap();
        done.sort_by_key(|(i, order, _)| (*i, *order));
        let mut rows: Vec<ExperimentRow> = done.into_iter().map(|(_, _, r)| r).collect();
        experiment::fill_speedups(&mut rows);
        print_rows_header(false)?;
        for (i, r) in rows.iter().enumerate() {
            if i > 0 && rows[i - 1].device != r.device {
                outln!();
            }
            print_row(r)?;
        }
        for (d, c) in devices.iter().zip(&curves) {
            outln!("cost curve of {}: {}", d.label(), c.describe());
        }
        all_rows.extend(rows);
    }

    if let Some(path) = &a.file {
        let mut fc = FileExperimentConfig::new(path.clone());
        fc.force = a.force_file;
        fc.file = FileOptions { direct: !a.no_direct, sync_each_write: a.sync };
        fc.logical_sectors = a.file_logical;
        fc.pools_percent = pools.clone();
        fc.measure_writes = a.file_writes;
        fc.seed = a.seed;
        let needed = (fc.sectors_needed()? + 1) * fc.sector_bytes as u64;
        outln!();
        outln!(
            "file {}: {} logical sectors of {} B ({} B of payload through the layer), file of {} MiB (default size \
             {} MiB for probes), {}{}",
            path.display(),
            fc.logical_sectors,
            fc.sector_bytes,
            fc.sector_bytes - flashbuf_flash::gather::HEADER_BYTES,
            needed >> 20,
            DEFAULT_PROBE_FILE_BYTES >> 20,
            if a.no_direct { "buffered" } else { "direct I/O" },
            if a.sync { " + fdatasync per write" } else { "" }
        );
        print_rows_header(true)?;
        let mut printing: Result<()> = Ok(());
        let res = experiment::run_file(&fc, &mut |r| {
            if printing.is_ok() {
                printing = print_row(r);
            }
        })
        .map_err(explain_file_error)?;
        printing?;
        if let Some(why) = &res.fallback_reason {
            eprintln!("flashbuf: warning: {why}");
        }
        outln!("cost curve of the file (probed first):");
        print_probe_header()?;
        for r in &res.probe {
            print_probe_row(r)?;
        }
        outln!("(speedups of the file rows are against the file's direct row)");
        all_rows.extend(res.rows);
    }

    if let Some(f) = out.as_mut() {
        writeln!(f, "{}", ExperimentRow::CSV_HEADER)?;
        for r in &all_rows {
            writeln!(f, "{}", r.csv())?;
        }
    }
    if let Some(f) = out {
        f.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_lists_parse() {
        assert_eq!(parse_bytes("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("1g").unwrap(), 1 << 30);
        assert!(parse_bytes("12 parsecs").is_err());
        assert_eq!(parse_list::<i64>("0,1,-1, 1024", "distance").unwrap(), vec![0, 1, -1, 1024]);
        assert!(parse_list::<i64>("1,x", "distance").is_err());
        assert_eq!(parse_pools("5,50%,300").unwrap(), vec![5.0, 50.0, 300.0]);
        assert!(parse_pools("0").is_err());
        assert!(parse_pools("").is_err());
        assert_eq!(default_pools().split(',').count(), DEFAULT_POOLS_PERCENT.len());
    }
}
