//! `flashbuf convert`: any readable trace to flashbuf's binary or text format or to
//! libCacheSim's oracleGeneral, streaming, with a progress bar.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use flashbuf_trace::{Format, Request, TraceError, TraceSource, TraceSpec, create_writer};

use crate::traces::TraceArgs;

#[derive(Args)]
pub struct ConvertArgs {
    /// The trace to read: a file (format auto-detected, or --format / --columns), `-` for
    /// standard input, or a generator (`gen:adlru-zipf`).
    #[arg(value_name = "IN")]
    input: String,
    /// The file to write (appears only when complete).
    #[arg(value_name = "OUT")]
    output: PathBuf,
    /// Output format: `binary` (flashbuf's compact `.fbt`: pages, read/write flags, times),
    /// `text` (`R 17 1500` lines), or `oracle` (libCacheSim's oracleGeneral: pages and times in
    /// seconds, no read/write flag). Default: from OUT's name (`.txt` text, `.oracleGeneral`
    /// oracle, anything else binary).
    #[arg(long, value_name = "FORMAT")]
    to: Option<String>,
    /// Overwrite OUT if it exists (a regular file only).
    #[arg(long)]
    force: bool,
    /// No progress bar and no messages.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    trace_args: TraceArgs,
}

struct Counted<'a> {
    inner: &'a mut dyn TraceSource,
    bar: &'a indicatif::ProgressBar,
    writes: u64,
}

impl TraceSource for Counted<'_> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let n = self.inner.next_batch(out, max)?;
        self.writes += out.iter().filter(|r| r.kind.is_write()).count() as u64;
        self.bar.inc(n as u64);
        Ok(n)
    }
}

pub fn run(a: ConvertArgs) -> Result<()> {
    let opts = a.trace_args.options()?;
    let to = match &a.to {
        Some(name) => name.parse::<Format>()?,
        None => crate::cmd_gen::format_for(&a.output),
    };
    if !matches!(to, Format::Binary | Format::Text | Format::Oracle) {
        bail!("--to {to}: flashbuf writes the binary, text and oracle formats");
    }
    let spec = TraceSpec::parse(&a.input).with_context(|| format!("trace '{}'", a.input))?;
    let label = spec.label();
    let known = spec
        .path()
        .and_then(|p| flashbuf_trace::SummaryCache::key(p, &opts))
        .and_then(|k| flashbuf_trace::SummaryCache::from_env().load(&k).map(|s| s.stats.requests));
    let mut opened = spec.open(&opts).with_context(|| format!("trace '{label}'"))?;
    if !a.quiet {
        eprintln!("flashbuf: {label}: {}", opened.reason);
    }
    let mut writer = create_writer(to, &a.output, a.force)?;
    let bar = crate::progress::bar(known.unwrap_or(0), "requests", a.quiet);
    let mut counted = Counted { inner: opened.source.as_mut(), bar: &bar, writes: 0 };
    let n = flashbuf_trace::copy_trace(&mut counted, writer.as_mut())?;
    let writes = counted.writes;
    bar.set_message("finishing");
    writer.finish()?;
    bar.finish_and_clear();
    if !a.quiet {
        eprintln!("flashbuf: wrote {n} requests of {label} to {} ({to})", a.output.display());
        if to == Format::Oracle && writes > 0 {
            eprintln!(
                "flashbuf: note: oracleGeneral has no read/write flag: the {writes} writes are stored as plain \
                 requests (use the binary or text format to keep them)"
            );
        }
    }
    Ok(())
}
