//! `flashbuf reproduce`: the papers' experiments, one command each.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use flashbuf_reproduce::{Options, Paper, Progress, reproduce};
use indicatif::ProgressBar;

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper: adlru (AD-LRU, Jin et al.), cfdc (CFDC, Ou et al., on the storage engine),
    /// ref (REF and BP-REF, Seo & Shin), gather (write gathering, Chardin et al.), or all.
    #[arg(value_name = "PAPER")]
    paper: String,
    /// Fewer points and no huge traces: every paper in minutes on a small machine.
    #[arg(long)]
    quick: bool,
    /// Output directory (one sub-directory per paper with REPORT.md, CSVs and plots).
    #[arg(long, default_value = "reproduce")]
    out: PathBuf,
    /// Directory of the shared real traces (OLTP.lis.zst, ...) [default: `shared/traces` beside
    /// the repository, found from the repository's location, not the current directory].
    #[arg(long)]
    traces: Option<PathBuf>,
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

/// `shared/traces` beside the repository this binary was built from (`<repo>/../shared/traces`),
/// else `../shared/traces` from the current directory.
fn default_traces_dir() -> PathBuf {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let beside = repo.join("../shared/traces");
    if beside.is_dir() {
        return beside.canonicalize().unwrap_or(beside);
    }
    PathBuf::from("../shared/traces")
}

pub fn run(a: ReproduceArgs) -> Result<()> {
    let papers: Vec<Paper> =
        if a.paper == "all" { Paper::ALL.to_vec() } else { vec![a.paper.parse().map_err(anyhow::Error::msg)?] };
    let traces = a.traces.clone().unwrap_or_else(default_traces_dir);
    let traces_dir = traces.is_dir().then(|| traces.clone());
    if traces_dir.is_none() {
        // A warning even with -q: a report without its real traces is a different report.
        eprintln!(
            "flashbuf: warning: trace directory {} not found: experiments on the shared real traces are skipped \
             (give --traces DIR)",
            traces.display()
        );
    }
    for &paper in &papers {
        flashbuf_reproduce::check_existing(paper, &a.out, a.force)?;
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
        for w in &report.warnings {
            eprintln!("flashbuf: warning: {}: {w}", paper.name());
        }
        eprintln!(
            "flashbuf: {}: {} ({:.0} s) -> {}",
            paper.name(),
            report.tally(),
            started.elapsed().as_secs_f64(),
            a.out.join(paper.name()).join("REPORT.md").display()
        );
    }
    Ok(())
}
