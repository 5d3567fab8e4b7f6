//! `flashbuf sweep CONFIG.toml`: a parameter sweep described in TOML (see `docs/sweeps.md`),
//! run in parallel, each run's row appended to `results.csv` and `results.jsonl` as it finishes.

use crate::output::outln;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use flashbuf_sim::sweep::{OpenMode, PlanEvent, ResultFiles, SweepConfig, SweepSession};
use indicatif::ProgressBar;

#[derive(Args)]
pub struct SweepArgs {
    /// The sweep configuration (TOML): traces, policies with parameter lists, buffer sizes,
    /// devices; see docs/sweeps.md and examples/sweep.toml.
    #[arg(value_name = "CONFIG.toml")]
    config: PathBuf,
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

fn default_dir(config: &Path) -> PathBuf {
    let stem = config.file_stem().map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}-results"))
}

pub fn run(a: SweepArgs) -> Result<()> {
    let text = std::fs::read_to_string(&a.config).with_context(|| format!("cannot read {}", a.config.display()))?;
    let config = SweepConfig::parse(&text, &a.config)?;
    let dir = a.out.clone().or_else(|| config.output.clone()).unwrap_or_else(|| default_dir(&a.config));
    let mode = match (a.resume, a.force) {
        (true, _) => OpenMode::Resume,
        (false, true) => OpenMode::Overwrite,
        (false, false) => OpenMode::New,
    };
    if !a.dry_run {
        // Refuse existing results before reading any trace.
        ResultFiles::check(&dir, mode)?;
    }

    let quiet = a.quiet;
    let mut scan_bar: Option<ProgressBar> = None;
    let sweep = config.plan(&mut |event| match event {
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
    })?;

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
            "the finished runs are in {}; `flashbuf sweep {} --resume{}` completes the sweep",
            dir.display(),
            a.config.display(),
            a.out.as_ref().map(|o| format!(" --out {}", o.display())).unwrap_or_default()
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
