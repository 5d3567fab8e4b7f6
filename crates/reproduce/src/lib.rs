//! One-command reproduction of the papers' experiments.
//!
//! For each paper, [`reproduce`] runs the experiments of every figure and table that flashbuf can
//! re-create and writes, into one directory per paper, the result CSVs and a `REPORT.md` that
//! puts each result beside the paper's claim with a verdict (agree / disagree / not comparable)
//! and its reason. `quick` mode runs fewer points and skips the largest traces so that every
//! paper finishes in minutes on a small machine; the full mode uses the papers' sizes.

#![warn(missing_docs)]

pub mod adlru;
pub mod cfdc;
pub mod examples;
mod exp;
pub mod gather;
pub mod judge;
pub mod ref_paper;
pub mod report;
pub mod runner;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub use report::{Claim, Report, Section, Verdict};
pub use runner::{Ctx, Progress, Silent};

/// The papers flashbuf reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paper {
    /// Jin, Ou, Härder, Li: AD-LRU.
    Adlru,
    /// Ou, Härder, Jin: CFDC (on the storage engine).
    Cfdc,
    /// Seo & Shin: REF and BP-REF.
    Ref,
    /// Chardin, Pasteur, Petit: the write-gathering layer.
    Gather,
}

impl Paper {
    /// Every paper, in report order.
    pub const ALL: [Paper; 4] = [Paper::Adlru, Paper::Cfdc, Paper::Ref, Paper::Gather];

    /// The command-line name, also the output sub-directory.
    pub fn name(self) -> &'static str {
        match self {
            Paper::Adlru => "adlru",
            Paper::Cfdc => "cfdc",
            Paper::Ref => "ref",
            Paper::Gather => "gather",
        }
    }
}

impl std::str::FromStr for Paper {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Paper::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Paper::ALL.iter().map(|p| p.name()).collect();
            format!("unknown paper '{s}'; valid: {}, all", names.join(", "))
        })
    }
}

/// Options of a reproduction.
pub struct Options<'a> {
    /// Output directory; each paper writes into `<out>/<paper>/`.
    pub out: PathBuf,
    /// Quick mode.
    pub quick: bool,
    /// The shared real traces, if present.
    pub traces_dir: Option<PathBuf>,
    /// Progress sink.
    pub progress: &'a dyn Progress,
    /// Replace an existing report (default: refuse, it may hold a user's edits).
    pub force: bool,
}

/// Fails when `paper`'s report directory under `out` already holds a report and `force` is not
/// set: a report may have been edited, and reproducing would replace it.
pub fn check_existing(paper: Paper, out: &Path, force: bool) -> Result<()> {
    let report = out.join(paper.name()).join("REPORT.md");
    if !force && std::fs::symlink_metadata(&report).is_ok() {
        anyhow::bail!(
            "{}: a report is already there (it may hold your edits); use --force to replace it and its data, \
             or --out another directory",
            report.display()
        );
    }
    Ok(())
}

/// Reproduces `paper`, writing `<out>/<paper>/REPORT.md` and its data. Returns the report.
pub fn reproduce(paper: Paper, opts: &Options) -> Result<Report> {
    check_existing(paper, &opts.out, opts.force)?;
    let out = opts.out.join(paper.name());
    std::fs::create_dir_all(&out).with_context(|| out.display().to_string())?;
    let ctx = Ctx {
        out: out.clone(),
        quick: opts.quick,
        traces_dir: opts.traces_dir.clone(),
        progress: opts.progress,
        warnings: Default::default(),
    };
    let mut report = match paper {
        Paper::Adlru => adlru::reproduce(&ctx)?,
        Paper::Cfdc => cfdc::reproduce(&ctx)?,
        Paper::Ref => ref_paper::reproduce(&ctx)?,
        Paper::Gather => gather::reproduce(&ctx)?,
    };
    report.warnings.extend(ctx.take_warnings());
    write_report(&out.join("REPORT.md"), &report)?;
    Ok(report)
}

fn write_report(path: &Path, report: &Report) -> Result<()> {
    runner::write_atomic(path, |w| Ok(w.write_all(report.to_markdown().as_bytes())?))
}
