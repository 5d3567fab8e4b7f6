//! `flashbuf engine`: the storage engine. `engine bench` runs the CFDC paper's transaction
//! workload (B+-tree of one million records; point and range queries and updates) for every
//! combination of policies × buffer sizes, one result row each, on simulated flash or a file.
//!
//! Every size is checked against what it needs (memory, disk, buffer, log) for every run
//! before the first run starts. With `--file`, the database lives in a scratch file next to the
//! given path; the given path is touched only to be replaced by the finished database with
//! `--keep-file --force`, and only if it is a regular file.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use flashbuf_engine::store::StoreSpec;
use flashbuf_engine::workload::{DEFAULT_LOG_BYTES, WorkloadConfig, WorkloadResult, run_workload, with_window};
use flashbuf_flash::{DeviceConfig, DeviceKind, NandPreset};
use flashbuf_policy::PolicyConfig;

use crate::args::{OutputFormat, parse_buffers, parse_policies};
use flashbuf_report::{Column, OutputFile, format_table, thousands, write_csv, write_json};

/// The policies compared when `--policy` is not given (the CFDC paper's three; those not built
/// into this binary are left out).
const DEFAULT_POLICIES: &[&str] = &["lru", "cflru", "cfdc"];

#[derive(Args)]
pub struct EngineArgs {
    #[command(subcommand)]
    command: EngineCommand,
}

#[derive(Subcommand)]
enum EngineCommand {
    /// Run the CFDC paper's transaction workload on the engine (B+-tree, buffer manager, page
    /// file) and report transactions per second, page flushes and cost per flush.
    ///
    /// The database is bulk-loaded (leaves half full), the buffer starts cold, and the
    /// transactions run in random order, then every dirty page is flushed. Time is wall-clock on
    /// a file, and wall-clock plus simulated device time on a simulated device.
    Bench(BenchArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// Policies, comma-separated, each `name` or `name:key=value,...` (default: lru, cflru,
    /// cfdc).
    #[arg(short, long = "policy", value_name = "LIST")]
    policies: Vec<String>,
    /// Buffer sizes, comma-separated: pages (`4096`), bytes (`16MB`) or a share of the
    /// database (`1%`).
    #[arg(short, long = "buffer", value_name = "LIST", default_value = "4096")]
    buffers: String,
    /// Simulated device: `page` (page-mapped FTL), `block`, `bast`, `fast`, `ideal` (fixed
    /// latencies), or `memory` (no I/O cost). Ignored with --file.
    #[arg(long, default_value = "page")]
    device: String,
    /// Flash chip preset of the simulated device: `micron` (AD-LRU Table 2) or `ref` (REF
    /// Table I).
    #[arg(long, default_value = "micron")]
    preset: String,
    /// Log blocks of the `bast` and `fast` devices.
    #[arg(long, default_value_t = 8)]
    log_blocks: u32,
    /// Use a real file instead of a simulated device (direct I/O where the file system allows
    /// it). Each run creates its database in a scratch file next to PATH and removes it
    /// afterwards; PATH itself is only written by --keep-file. Symbolic links and special files
    /// (FIFOs, devices, sockets, directories) are refused.
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// With --file: buffered I/O instead of direct I/O.
    #[arg(long)]
    buffered: bool,
    /// With --file: move the last run's database to PATH when every run succeeded (an existing
    /// regular file there is replaced only with --force).
    #[arg(long)]
    keep_file: bool,
    /// The write-ahead log: `on` (a crash-safe engine: every update is durable when its
    /// transaction commits) or `off` (the paper's setup: file, buffer and index managers only).
    #[arg(long, value_enum, default_value_t = Wal::On)]
    wal: Wal,
    /// Size of the write-ahead log in MiB (on the same store, after the database).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_LOG_BYTES >> 20)]
    log_mb: u64,
    /// Records in the database (keys 0..N).
    #[arg(long, default_value_t = 1_000_000)]
    records: u64,
    /// Point queries (baseline 100,000).
    #[arg(long, default_value_t = 100_000)]
    point_queries: u64,
    /// Point updates (baseline 100,000).
    #[arg(long, default_value_t = 100_000)]
    point_updates: u64,
    /// Range queries (baseline 200).
    #[arg(long, default_value_t = 200)]
    range_queries: u64,
    /// Range updates (baseline 200).
    #[arg(long, default_value_t = 200)]
    range_updates: u64,
    /// Records per range query or update.
    #[arg(long, default_value_t = 256)]
    range_len: u32,
    /// Share of updates, 0..1, keeping the numbers of point and range transactions (Fig. 7);
    /// applied after --scans.
    #[arg(long)]
    update_intensity: Option<f64>,
    /// Number of range transactions, split between queries and updates as before (Fig. 8).
    #[arg(long)]
    scans: Option<u64>,
    /// Window of the policies that have one (CFDC `pw`, CFLRU and CFLRU/C `w`), as a fraction
    /// of the buffer between 0 and 1 (Fig. 9); policies without one run unchanged, and at least
    /// one policy must have one.
    #[arg(long)]
    window: Option<f64>,
    /// Worker threads running transactions.
    #[arg(short, long, default_value_t = 1)]
    workers: usize,
    /// Page size in bytes.
    #[arg(long, default_value_t = 4096)]
    page_size: usize,
    /// Value size in bytes.
    #[arg(long, default_value_t = 256)]
    value_size: usize,
    /// Fill fraction of the bulk-loaded leaves.
    #[arg(long, default_value_t = 0.5)]
    leaf_fill: f64,
    /// Seed of the transaction mix and keys.
    #[arg(long, default_value_t = flashbuf_engine::workload::DEFAULT_SEED)]
    seed: u64,
    /// Record the page-reference string of the run as a trace (`.fbt` binary or `.txt` text;
    /// one run only), for replay with `flashbuf run`.
    #[arg(long, value_name = "FILE")]
    record_trace: Option<PathBuf>,
    /// After each run, read every record back and check its value (not timed).
    #[arg(long)]
    verify: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
    /// Write the output to this file instead of standard output (appears only when complete).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Overwrite the output file and the trace file if they exist, and let --keep-file replace
    /// an existing regular file at the --file path.
    #[arg(long)]
    force: bool,
    /// No progress messages.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Wal {
    /// A write-ahead log.
    On,
    /// No log.
    Off,
}

pub fn run(a: EngineArgs) -> Result<()> {
    match a.command {
        EngineCommand::Bench(b) => bench(b),
    }
}

/// The simulated store `--device` and `--preset` describe.
fn sim_spec(a: &BenchArgs) -> Result<StoreSpec> {
    if a.device == "memory" {
        return Ok(StoreSpec::Memory);
    }
    let kind: DeviceKind = a.device.parse().map_err(|e| anyhow::anyhow!("--device: {e} (or memory)"))?;
    let preset: NandPreset = a.preset.parse().map_err(|e| anyhow::anyhow!("--preset: {e}"))?;
    Ok(StoreSpec::Sim(DeviceConfig { kind, preset, log_blocks: a.log_blocks, ..Default::default() }))
}

/// What is at `path`: refuses symbolic links and anything but a regular file; `Ok(true)` when a
/// regular file is there, `Ok(false)` when nothing is.
fn regular_or_absent(path: &Path, what: &str) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(anyhow::Error::new(e).context(format!("{what} {}", path.display()))),
        Ok(m) => {
            let t = m.file_type();
            if t.is_symlink() {
                bail!(
                    "{what} {} is a symbolic link; refusing to use it (give the path of a regular file)",
                    path.display()
                );
            }
            if t.is_file() {
                return Ok(true);
            }
            let kind = if t.is_dir() {
                "a directory"
            } else {
                use std::os::unix::fs::FileTypeExt;
                if t.is_fifo() {
                    "a FIFO"
                } else if t.is_char_device() || t.is_block_device() {
                    "a device"
                } else if t.is_socket() {
                    "a socket"
                } else {
                    "not a regular file"
                }
            };
            bail!("{what} {} is {kind}; only a regular file may be replaced", path.display())
        }
    }
}

/// The scratch database next to `path`: `.<name>.flashbuf-bench-<pid>` in its directory.
fn scratch_path(path: &Path) -> Result<PathBuf> {
    let name = path.file_name().with_context(|| format!("--file {}: not a file name", path.display()))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!("--file {}: directory {} does not exist", path.display(), dir.display());
    }
    Ok(dir.join(format!(".{}.flashbuf-bench-{}", name.to_string_lossy(), std::process::id())))
}

/// The window option applied to `policies`: a fraction in 0..=1, set on every policy that has
/// a window (CFDC `pw`, CFLRU `w`); an error when none has one.
fn apply_window(policies: Vec<PolicyConfig>, window: Option<f64>) -> Result<Vec<PolicyConfig>> {
    let Some(w) = window else { return Ok(policies) };
    if !(0.0..=1.0).contains(&w) {
        bail!("--window {w}: the window is a fraction of the buffer, between 0 and 1 (e.g. 0.25)");
    }
    let mut any = false;
    let mut out = Vec::with_capacity(policies.len());
    for p in policies {
        match with_window(&p, w) {
            Ok(q) => {
                any = true;
                out.push(q);
            }
            // No window parameter: this policy runs unchanged.
            Err(flashbuf_engine::WorkloadError::Config(_)) => out.push(p),
            Err(e) => return Err(anyhow::Error::new(e).context(format!("--window {w}"))),
        }
    }
    if !any {
        let names: Vec<String> = out.iter().map(|p| p.label()).collect();
        bail!(
            "--window {w}: none of the policies ({}) has a window parameter (CFDC pw, CFLRU w); give one that has",
            names.join(", ")
        );
    }
    Ok(out)
}

fn bench(a: BenchArgs) -> Result<()> {
    let policies: Vec<PolicyConfig> = if a.policies.is_empty() {
        DEFAULT_POLICIES.iter().filter_map(|p| p.parse().ok()).collect()
    } else {
        parse_policies(&a.policies)?
    };
    let policies = apply_window(policies, a.window)?;
    let buffers = parse_buffers(&a.buffers)?;
    // Where each run's database lives: a scratch file next to --file, or a simulated device.
    let (spec, scratch) = match &a.file {
        Some(path) => {
            let exists = regular_or_absent(path, "--file")?;
            if exists && a.keep_file && !a.force {
                bail!("{} already exists; use --force to let --keep-file replace it", path.display());
            }
            let scratch = scratch_path(path)?;
            (StoreSpec::File { path: scratch.clone(), direct: !a.buffered }, Some(scratch))
        }
        None => (sim_spec(&a)?, None),
    };
    if let Some(path) = &a.record_trace {
        if policies.len() * buffers.len() != 1 {
            bail!("--record-trace records one run: give one policy and one buffer size");
        }
        if regular_or_absent(path, "--record-trace")? && !a.force {
            bail!("{} already exists; use --force to overwrite it", path.display());
        }
    }
    if let Some(path) = &a.out {
        regular_or_absent(path, "--out")?;
    }
    let mut out_file = a.out.as_deref().map(|p| OutputFile::create(p, a.force)).transpose()?;

    let mut base = WorkloadConfig::baseline(policies[0].clone());
    base.records = a.records;
    base.point_queries = a.point_queries;
    base.point_updates = a.point_updates;
    base.range_queries = a.range_queries;
    base.range_updates = a.range_updates;
    base.range_len = a.range_len;
    base.workers = a.workers;
    base.page_size = a.page_size;
    base.value_size = a.value_size;
    base.leaf_fill = a.leaf_fill;
    base.seed = a.seed;
    base.verify = a.verify;
    base.record_trace = a.record_trace.clone();
    if let Some(s) = a.scans {
        base = base.with_scans(s);
    }
    if let Some(u) = a.update_intensity {
        base = base.with_update_intensity(u)?;
    }
    flashbuf_engine::page::check_page_size(a.page_size)?;
    base.log_pages = match a.wal {
        Wal::Off => 0,
        Wal::On => a
            .log_mb
            .checked_mul(1 << 20)
            .map(|bytes| bytes / a.page_size as u64)
            .with_context(|| format!("--log-mb {}: too large", a.log_mb))?,
    };
    let db_pages = base.database_pages()?;

    // Every run's configuration, checked before the first one starts.
    let mut configs = Vec::with_capacity(policies.len() * buffers.len());
    for policy in &policies {
        for b in &buffers {
            let frames = b.pages(a.page_size as u64, Some(db_pages)).map_err(anyhow::Error::msg)?;
            let frames = usize::try_from(frames)
                .map_err(|_| anyhow::anyhow!("buffer of {frames} pages: more than this machine can address"))?;
            let mut config = base.clone();
            config.policy = policy.clone();
            config.buffer_pages = frames;
            config.validate().with_context(|| format!("{} with {frames} buffer pages", policy.label()))?;
            config.check_resources(&spec).with_context(|| format!("{} with {frames} buffer pages", policy.label()))?;
            configs.push(config);
        }
    }

    // Rows and messages name the path the user gave, not the scratch file next to it.
    let store_label = match &a.file {
        Some(path) => format!("file:{}{}", path.display(), if a.buffered { " (buffered)" } else { "" }),
        None => spec.label(),
    };
    let mut rows = Vec::new();
    for (i, config) in configs.iter().enumerate() {
        let (label, frames) = (config.policy.label(), config.buffer_pages);
        if !a.quiet {
            eprintln!(
                "flashbuf: {label} with {frames} buffer pages on {store_label}{}: loading {} records, then {} transactions",
                if config.log_pages > 0 { " with a write-ahead log" } else { "" },
                config.records,
                config.transactions()
            );
        }
        let result = run_workload(config, &spec);
        if let Some(scratch) = &scratch {
            // The scratch database is ours: the last one is kept with --keep-file when every
            // run succeeded; otherwise it goes, whatever happened.
            let keep = a.keep_file && result.is_ok() && i + 1 == configs.len();
            if !keep {
                let _ = std::fs::remove_file(scratch);
            }
        }
        let mut row = result.with_context(|| format!("{label} with {frames} buffer pages on {store_label}"))?;
        row.store = store_label.clone();
        if !a.quiet && !row.note.is_empty() {
            eprintln!("flashbuf: warning: {}", row.note);
        }
        rows.push(row);
    }
    if let (Some(path), Some(scratch)) = (&a.file, &scratch)
        && a.keep_file
    {
        // Checked again right before the move: rename replaces a link or file at `path`
        // itself, never what a link points to.
        let replace = regular_or_absent(path, "--file");
        let moved = replace.and_then(|exists| {
            if exists && !a.force {
                bail!("{} appeared during the run; use --force to replace it", path.display());
            }
            std::fs::rename(scratch, path).with_context(|| format!("moving the database to {}", path.display()))
        });
        if let Err(e) = moved {
            let _ = std::fs::remove_file(scratch);
            return Err(e);
        }
    }

    let mut buf = Vec::new();
    match a.output {
        OutputFormat::Table => buf.extend_from_slice(format_table(&rows, ENGINE_COLUMNS).as_bytes()),
        OutputFormat::Csv => write_csv(&rows, &mut buf)?,
        OutputFormat::Json => write_json(&rows, &mut buf)?,
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

/// The columns of the engine's result table.
const ENGINE_COLUMNS: &[Column<WorkloadResult>] = &[
    Column { header: "policy", cell: |r| r.policy.clone(), numeric: false },
    Column { header: "store", cell: |r| r.store.clone(), numeric: false },
    Column { header: "buffer (pages)", cell: |r| thousands(r.buffer_pages), numeric: true },
    Column { header: "workers", cell: |r| r.workers.to_string(), numeric: true },
    Column { header: "TPS", cell: |r| format!("{:.1}", r.tps), numeric: true },
    Column { header: "time (s)", cell: |r| format!("{:.2}", r.time_s), numeric: true },
    Column { header: "device (s)", cell: |r| format!("{:.2}", r.device_s), numeric: true },
    Column { header: "hit ratio (%)", cell: |r| format!("{:.2}", 100.0 * r.hit_ratio), numeric: true },
    Column { header: "page reads", cell: |r| thousands(r.page_reads), numeric: true },
    Column { header: "page flushes", cell: |r| thousands(r.page_flushes), numeric: true },
    Column { header: "µs/flush", cell: |r| format!("{:.1}", r.avg_flush_us), numeric: true },
    Column { header: "log writes", cell: |r| thousands(r.log_writes), numeric: true },
    Column { header: "erases", cell: |r| thousands(r.erases), numeric: true },
    Column {
        header: "merges s/p/f",
        cell: |r| format!("{}/{}/{}", r.merges_switch, r.merges_partial, r.merges_full),
        numeric: true,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn args(extra: &[&str]) -> BenchArgs {
        let mut v = vec!["bench", "--records", "3000", "--point-queries", "300", "--point-updates", "300"];
        v.extend_from_slice(&["--range-queries", "2", "--range-updates", "2", "--range-len", "32", "-q"]);
        v.extend_from_slice(extra);
        Cli::try_parse_from(v).unwrap().bench
    }

    #[test]
    fn a_small_run_writes_one_csv_row_per_policy_and_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rows.csv");
        let o = out.to_str().unwrap();
        let a = args(&["--policy", "lru,cflru", "--buffer", "32,64", "--device", "bast", "--preset", "ref"]);
        bench(BenchArgs { out: Some(out.clone()), output: OutputFormat::Csv, verify: true, ..a }).unwrap();
        let text = std::fs::read_to_string(o).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0].starts_with("policy,store,buffer_pages") && lines[0].contains(",tps,"), "{}", lines[0]);
        assert!(lines[1].starts_with("lru,sim:bast/ref/log8,32,") && lines[4].starts_with("cflru:w=0.5,"), "{text}");
    }

    #[test]
    fn a_run_on_a_real_file_removes_the_file_and_records_a_trace() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let trace = dir.path().join("refs.txt");
        let out = dir.path().join("rows.json");
        let a = args(&["--policy", "lru", "--buffer", "64"]);
        let a = BenchArgs {
            file: Some(db.clone()),
            record_trace: Some(trace.clone()),
            out: Some(out.clone()),
            output: OutputFormat::Json,
            ..a
        };
        bench(a).unwrap();
        assert!(!db.exists(), "the scratch database is removed");
        let json = std::fs::read_to_string(&out).unwrap();
        assert!(json.contains("\"time_model\": \"wall\""), "{json}");
        let refs = std::fs::read_to_string(&trace).unwrap();
        assert!(refs.lines().filter(|l| l.starts_with('R') || l.starts_with('W')).count() > 600);
    }

    #[test]
    fn bad_options_are_clear_errors() {
        let e = bench(args(&["--device", "ssd"])).unwrap_err().to_string();
        assert!(e.contains("ssd") && e.contains("bast"), "{e}");
        let e = bench(BenchArgs { record_trace: Some("x.fbt".into()), ..args(&["--policy", "lru,cflru"]) })
            .unwrap_err()
            .to_string();
        assert!(e.contains("one run"), "{e}");
        let e = bench(args(&["--policy", "min", "--device", "memory"])).unwrap_err();
        assert!(format!("{e:#}").contains("future"), "{e:#}");
    }
}
