//! `flashbuf engine`: the storage engine. `engine bench` runs the CFDC paper's transaction
//! workload (B+-tree of one million records; point and range queries and updates) for every
//! combination of policies × buffer sizes, one result row each, on simulated flash or a file.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use flashbuf_engine::store::StoreSpec;
use flashbuf_engine::workload::{WorkloadConfig, WorkloadResult, run_workload, with_window};
use flashbuf_flash::{DeviceConfig, DeviceKind, NandPreset};
use flashbuf_policy::PolicyConfig;

use crate::args::{parse_buffers, parse_policies};
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
    /// Use a real file at this path instead of a simulated device (direct I/O where the file
    /// system allows it). The file is created for each run and removed at the end unless
    /// --keep-file.
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// With --file: buffered I/O instead of direct I/O.
    #[arg(long)]
    buffered: bool,
    /// With --file: keep the database file after the last run.
    #[arg(long)]
    keep_file: bool,
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
    /// Window of the policies that have one (CFDC `pw`, CFLRU `w`), as a fraction of the
    /// buffer (Fig. 9); other policies are run unchanged.
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
    /// Overwrite the output file, the trace file and the --file database if they exist.
    #[arg(long)]
    force: bool,
    /// No progress messages.
    #[arg(short, long)]
    quiet: bool,
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

pub fn run(a: EngineArgs) -> Result<()> {
    match a.command {
        EngineCommand::Bench(b) => bench(b),
    }
}

fn store_spec(a: &BenchArgs) -> Result<StoreSpec> {
    if let Some(path) = &a.file {
        return Ok(StoreSpec::File { path: path.clone(), direct: !a.buffered });
    }
    if a.device == "memory" {
        return Ok(StoreSpec::Memory);
    }
    let kind: DeviceKind = a.device.parse().map_err(|e| anyhow::anyhow!("--device: {e} (or memory)"))?;
    let preset: NandPreset = a.preset.parse().map_err(|e| anyhow::anyhow!("--preset: {e}"))?;
    Ok(StoreSpec::Sim(DeviceConfig { kind, preset, log_blocks: a.log_blocks, ..Default::default() }))
}

fn bench(a: BenchArgs) -> Result<()> {
    let policies: Vec<PolicyConfig> = if a.policies.is_empty() {
        DEFAULT_POLICIES.iter().filter_map(|p| p.parse().ok()).collect()
    } else {
        parse_policies(&a.policies)?
    };
    let policies: Vec<PolicyConfig> = match a.window {
        Some(w) => policies.iter().map(|p| with_window(p, w).unwrap_or_else(|_| p.clone())).collect(),
        None => policies,
    };
    let buffers = parse_buffers(&a.buffers)?;
    let spec = store_spec(&a)?;
    let mut out_file = a.out.as_deref().map(|p| OutputFile::create(p, a.force)).transpose()?;
    if let Some(path) = &a.file
        && path.exists()
        && !a.force
    {
        bail!("{} already exists; use --force to let the benchmark replace it", path.display());
    }
    if let Some(path) = &a.record_trace {
        if policies.len() * buffers.len() != 1 {
            bail!("--record-trace records one run: give one policy and one buffer size");
        }
        if path.exists() && !a.force {
            bail!("{} already exists; use --force to overwrite it", path.display());
        }
    }

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
    let db_pages = base.database_pages()?;

    let mut rows = Vec::new();
    let result = (|| -> Result<()> {
        for policy in &policies {
            for b in &buffers {
                let frames = usize::try_from(b.pages(a.page_size as u64, Some(db_pages)).map_err(anyhow::Error::msg)?)
                    .context("buffer too large")?;
                let mut config = base.clone();
                config.policy = policy.clone();
                config.buffer_pages = frames;
                if !a.quiet {
                    eprintln!(
                        "flashbuf: {} with {frames} buffer pages on {}: loading {} records, then {} transactions",
                        policy.label(),
                        spec.label(),
                        config.records,
                        config.transactions()
                    );
                }
                let row = run_workload(&config, &spec)
                    .with_context(|| format!("{} with {frames} buffer pages on {}", policy.label(), spec.label()))?;
                if !a.quiet && !row.note.is_empty() {
                    eprintln!("flashbuf: warning: {}", row.note);
                }
                rows.push(row);
            }
        }
        Ok(())
    })();
    if let Some(path) = &a.file
        && !a.keep_file
    {
        let _ = std::fs::remove_file(path);
    }
    result?;

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
        }
        None => std::io::stdout().write_all(&buf)?,
    }
    Ok(())
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
