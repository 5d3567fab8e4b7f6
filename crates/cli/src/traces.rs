//! Opening traces from the command line, with what the CLI needs to know about them.

use anyhow::{Context, Result};
use clap::Args;
use flashbuf_trace::{Format, ReadOptions, TimeUnit, TraceSpec, TraceStats};

/// How trace files are read (shared by every command that reads traces).
#[derive(Args, Clone, Debug)]
pub struct TraceArgs {
    /// Trace file format; `auto` guesses from the file name (compression suffix included) and
    /// the first lines, and says on stderr what it chose.
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: Format,
    /// Page size in bytes: byte- and sector-addressed requests are split into pages of this
    /// size. Buffer sizes given in bytes are divided by it.
    #[arg(long, default_value_t = 4096, value_name = "BYTES")]
    pub page_size: u64,
    /// Keep only this volume/disk of a multi-volume trace (MSR, Tencent, SPC, DiskSim). Without
    /// it, every volume is kept and the page number is (volume << 40) | page.
    #[arg(long)]
    pub volume: Option<u64>,
    /// Unit of the time column of DiskSim/MQSim traces (s, ms, us, ns).
    #[arg(long, value_parser = parse_time_unit)]
    pub time_unit: Option<TimeUnit>,
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse::<Format>().map_err(|e| e.to_string())
}

fn parse_time_unit(s: &str) -> Result<TimeUnit, String> {
    s.parse::<TimeUnit>().map_err(|e| e.to_string())
}

impl TraceArgs {
    /// The reader options.
    pub fn options(&self) -> Result<ReadOptions> {
        if self.page_size == 0 {
            anyhow::bail!("--page-size must be a positive number of bytes");
        }
        Ok(ReadOptions {
            format: self.format,
            page_size: self.page_size,
            volume: self.volume,
            time_unit: self.time_unit,
        })
    }
}

/// A trace named on the command line, with its size once known.
#[derive(Clone, Debug)]
pub struct CliTrace {
    /// The parsed spec.
    pub spec: TraceSpec,
    /// Label for result rows.
    pub label: String,
    /// Largest page number + 1.
    pub pages: u64,
    /// Number of requests.
    pub requests: u64,
}

/// Parses `arg` and learns its size: generators know theirs; files are scanned once (streaming)
/// with a progress bar. Prints the format detection on stderr.
pub fn resolve(arg: &str, opts: &ReadOptions, quiet: bool) -> Result<CliTrace> {
    let spec = TraceSpec::parse(arg).with_context(|| format!("trace '{arg}'"))?;
    let label = spec.label();
    if let flashbuf_trace::TraceSpec::Generated(g) = &spec {
        g.validate().with_context(|| format!("trace '{arg}'"))?;
        return Ok(CliTrace { spec: spec.clone(), label, pages: g.page_count(), requests: g.total_requests() });
    }
    let stats = scan(&spec, opts, quiet)?;
    let pages = stats.max_page.map_or(0, |m| m.saturating_add(1));
    Ok(CliTrace { spec, label, pages, requests: stats.requests })
}

/// Reads a trace once to the end and summarises it, announcing the detected format.
pub fn scan(spec: &TraceSpec, opts: &ReadOptions, quiet: bool) -> Result<TraceStats> {
    let mut opened = spec.open(opts).with_context(|| format!("trace '{}'", spec.label()))?;
    if !quiet {
        eprintln!("flashbuf: {}: {}", spec.label(), opened.reason);
    }
    let bar = crate::progress::bar(0, "requests", quiet);
    bar.set_length(0);
    let mut counting = Counting { inner: opened.source.as_mut(), bar: &bar };
    let stats = flashbuf_trace::stats(&mut counting, opts.page_size)?;
    bar.finish_and_clear();
    Ok(stats)
}

struct Counting<'a> {
    inner: &'a mut dyn flashbuf_trace::TraceSource,
    bar: &'a indicatif::ProgressBar,
}

impl flashbuf_trace::TraceSource for Counting<'_> {
    fn next_batch(
        &mut self,
        out: &mut Vec<flashbuf_trace::Request>,
        max: usize,
    ) -> Result<usize, flashbuf_trace::TraceError> {
        let n = self.inner.next_batch(out, max)?;
        self.bar.inc(n as u64);
        self.bar.set_length(self.bar.position());
        Ok(n)
    }
}
