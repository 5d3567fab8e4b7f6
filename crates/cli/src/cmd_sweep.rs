//! `flashbuf sweep CONFIG.toml`: a parameter sweep described in TOML (see `docs/sweeps.md`),
//! run in parallel, each run's row appended to `results.csv` and `results.jsonl` as it finishes.

use crate::output::outln;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use flashbuf_sim::sweep::{OpenMode, PlanEvent, ResultFiles, SweepConfig, SweepSession};
use indicatif::ProgressBar;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    action: Option<SweepAction>,
    /// The sweep configuration (TOML): traces, policies with parameter lists, buffer sizes,
    /// devices; see docs/sweeps.md and examples/sweep.toml.
    #[arg(value_name = "CONFIG.toml", required = true)]
    config: Option<PathBuf>,
    /// Run only shard I of N (1-based): every N-th run of the plan from the I-th, for one task
    /// of a job array (Slurm: --shard $((SLURM_ARRAY_TASK_ID+1))/$SLURM_ARRAY_TASK_COUNT).
    /// Results go to `<out>/shard-I-of-N`; `flashbuf sweep merge` puts the shards together.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Directory of results.csv and results.jsonl (default: the configuration's `output`, else
    /// `<config name>-results` in the current directory).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: Option<PathBuf>,
    /// Parallel runs (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    /// Keep existing results, skip the runs they hold and append the others.
    #[arg(long, conflicts_with = "force")]
    resume: bool,
    /// Replace existing results.
    #[arg(long)]
    force: bool,
    /// List the runs without running them.
    #[arg(long)]
    dry_run: bool,
    /// No progress bar and no format detection messages.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Subcommand)]
enum SweepAction {
    /// Merge the results of a sharded sweep into the files the unsharded sweep writes.
    Merge(MergeArgs),
}

#[derive(Args)]
struct MergeArgs {
    /// The sweep configuration the shards ran.
    #[arg(value_name = "CONFIG.toml")]
    config: PathBuf,
    /// The shards' result directories (default: every `shard-*` directory of the output).
    #[arg(value_name = "SHARD_DIR")]
    shards: Vec<PathBuf>,
    /// Directory of the merged results.csv and results.jsonl (default: the configuration's
    /// output, as for the sweep).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: Option<PathBuf>,
    /// Replace existing merged files.
    #[arg(long)]
    force: bool,
    /// No messages.
    #[arg(short, long)]
    quiet: bool,
}

fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let bad = || anyhow::anyhow!("--shard {s}: expected I/N with 1 <= I <= N, e.g. 3/8");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if n == 0 || i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

fn default_dir(config: &Path) -> PathBuf {
    let stem = config.file_stem().map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}-results"))
}

fn plan(config: &SweepConfig, quiet: bool) -> Result<flashbuf_sim::sweep::Sweep> {
    let mut scan_bar: Option<ProgressBar> = None;
    Ok(config.plan(&mut |event| match event {
        PlanEvent::Opened { trace, how } => {
            if !quiet {
                eprintln!("flashbuf: {trace}: {how}");
            }
            scan_bar = Some(crate::progress::bar(0, "requests scanned", quiet));
        }
        PlanEvent::Scanned(n) => {
            if let Some(b) = &scan_bar {
                b.inc(n);
                b.set_length(b.position());
            }
        }
        PlanEvent::ScanDone => {
            if let Some(b) = scan_bar.take() {
                b.finish_and_clear();
            }
        }
        PlanEvent::Stored(p) => {
            if !quiet {
                eprintln!("flashbuf: trace summary cached in {}", p.display());
            }
        }
        PlanEvent::StoreFailed(e) => eprintln!("flashbuf: warning: a trace summary could not be cached: {e}"),
    })?)
}

fn read_config(path: &Path) -> Result<SweepConfig> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(SweepConfig::parse(&text, path)?)
}

fn merge(a: MergeArgs) -> Result<()> {
    let config = read_config(&a.config)?;
    let out = a.out.clone().or_else(|| config.output.clone()).unwrap_or_else(|| default_dir(&a.config));
    let shards: Vec<PathBuf> = if a.shards.is_empty() {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&out)
            .with_context(|| format!("{}: no shard directories given and none found", out.display()))?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("shard-") && e.path().is_dir())
            .map(|e| e.path())
            .collect();
        found.sort();
        anyhow::ensure!(!found.is_empty(), "{}: no shard-* directories to merge", out.display());
        found
    } else {
        a.shards.clone()
    };
    let sweep = plan(&config, a.quiet)?;
    let n = flashbuf_sim::sweep::merge_results(&sweep.keys(), &shards, &out, a.force)?;
    if !a.quiet {
        eprintln!("flashbuf: merged {n} runs from {} shard(s)", shards.len());
    }
    outln!("{n} runs -> {}, {}", out.join(ResultFiles::CSV).display(), out.join(ResultFiles::JSONL).display());
    Ok(())
}

pub fn run(a: SweepArgs) -> Result<()> {
    if let Some(SweepAction::Merge(m)) = a.action {
        return merge(m);
    }
    let config_path = a.config.clone().expect("clap requires the configuration");
    let shard = a.shard.as_deref().map(parse_shard).transpose()?;
    let config = read_config(&config_path)?;
    let mut dir = a.out.clone().or_else(|| config.output.clone()).unwrap_or_else(|| default_dir(&config_path));
    if let Some((i, n)) = shard {
        dir = dir.join(format!("shard-{i}-of-{n}"));
    }
    let mode = match (a.resume, a.force) {
        (true, _) => OpenMode::Resume,
        (false, true) => OpenMode::Overwrite,
        (false, false) => OpenMode::New,
    };
    if !a.dry_run {
        // Refuse existing results before reading any trace.
        ResultFiles::check(&dir, mode)?;
    }

    let sweep = plan(&config, a.quiet)?;
    let sweep = match shard {
        Some((i, n)) => sweep.shard(i, n)?,
        None => sweep,
    };

    if a.dry_run {
        for run in sweep.runs() {
            let k = run.key();
            outln!(
                "{}\t{}\t{}\t{}\t{}\t{} requests",
                k.trace,
                k.policy,
                k.buffer_pages,
                k.device,
                k.write_miss,
                run.requests
            );
        }
        outln!("{} runs, {} requests; results would go to {}", sweep.len(), sweep.total_requests(), dir.display());
        return Ok(());
    }

    let session = SweepSession::open(&sweep, &dir, mode)?;
    let bar = crate::progress::bar(session.pending_requests(), "requests", a.quiet);
    let resume_hint = || {
        format!(
            "the finished runs are in {}; `flashbuf sweep {} --resume{}{}` completes the sweep",
            dir.display(),
            config_path.display(),
            a.out.as_ref().map(|o| format!(" --out {}", o.display())).unwrap_or_default(),
            a.shard.as_ref().map(|s| format!(" --shard {s}")).unwrap_or_default()
        )
    };
    let result = session.run(crate::args::threads(a.jobs, a.quiet), &|n| bar.inc(n));
    bar.finish_and_clear();
    let report = result.map_err(|e| anyhow::anyhow!("{e}; {}", resume_hint()))?;
    let mut msg = format!("{} runs", report.planned);
    if report.skipped > 0 {
        msg.push_str(&format!(" ({} already done, {} run now)", report.skipped, report.executed));
    }
    if report.dropped > 0 {
        msg.push_str(&format!("; {} incomplete row(s) of an interrupted sweep removed and rerun", report.dropped));
    }
    outln!("{msg} -> {}, {}", report.csv.display(), report.jsonl.display());
    Ok(())
}
