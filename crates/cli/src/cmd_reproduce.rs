//! `flashbuf reproduce`: the papers' experiments, one command each.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use flashbuf_reproduce::{Options, Paper, Progress, reproduce};
use indicatif::ProgressBar;

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper: adlru, or all.
    #[arg(value_name = "PAPER")]
    paper: String,
    /// Fewer points and no huge traces: every paper in minutes on a small machine.
    #[arg(long)]
    quick: bool,
    /// Output directory (one sub-directory per paper with REPORT.md, CSVs and plots).
    #[arg(long, default_value = "reproduce")]
    out: PathBuf,
    /// Directory of the shared real traces (OLTP.lis.zst, ...).
    #[arg(long, default_value = "../shared/traces")]
    traces: PathBuf,
    /// Parallel runs (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Replace existing reports (and their CSVs and plots); without it an existing report,
    /// which may hold your edits, is refused before anything runs.
    #[arg(long)]
    force: bool,
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn add_total(&self, n: u64) {
        self.0.inc_length(n);
    }
    fn inc(&self, n: u64) {
        self.0.inc(n);
    }
    fn status(&self, msg: &str) {
        self.0.set_message(msg.to_string());
    }
}

pub fn run(a: ReproduceArgs) -> Result<()> {
    let papers: Vec<Paper> =
        if a.paper == "all" { Paper::ALL.to_vec() } else { vec![a.paper.parse().map_err(anyhow::Error::msg)?] };
    for &paper in &papers {
        flashbuf_reproduce::check_existing(paper, &a.out, a.force)?;
    }
    let traces_dir = a.traces.is_dir().then(|| a.traces.clone());
    if traces_dir.is_none() && !a.quiet {
        eprintln!("flashbuf: {} not found: experiments on the shared real traces are skipped", a.traces.display());
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(a.jobs.unwrap_or(0)).build()?;
    for paper in papers {
        let bar = Bar(crate::progress::bar(0, "requests", a.quiet));
        let opts = Options {
            out: a.out.clone(),
            quick: a.quick,
            traces_dir: traces_dir.clone(),
            progress: &bar,
            force: a.force,
        };
        let started = std::time::Instant::now();
        let report = pool.install(|| reproduce(paper, &opts))?;
        bar.0.finish_and_clear();
        let (agree, disagree, na) = report.tally();
        eprintln!(
            "flashbuf: {}: {agree} claims agree, {disagree} disagree, {na} not comparable ({:.0} s) -> {}",
            paper.name(),
            started.elapsed().as_secs_f64(),
            a.out.join(paper.name()).join("REPORT.md").display()
        );
    }
    Ok(())
}
