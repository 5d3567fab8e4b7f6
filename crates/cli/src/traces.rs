//! Opening traces from the command line, with what the CLI needs to know about them.

use anyhow::Result;
use clap::Args;
use flashbuf_trace::{Format, ReadOptions, TimeUnit};

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
    /// Read a delimited trace of any layout (the `csv` format): which 1-based column holds
    /// what, e.g. `offset=5,size=6,op=4,time=1,volume=3,time-unit=filetime,write=Write`. Keys:
    /// offset (required), size, op, time, volume, offset-unit and size-unit (bytes, sectors,
    /// pages or a number of bytes), time-unit, write and read (op values, `|`-separated),
    /// delimiter (`,` `;` tab space), header (auto, yes, no).
    #[arg(long, value_name = "MAP")]
    pub columns: Option<String>,
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
        let columns = self
            .columns
            .as_deref()
            .map(|c| c.parse::<flashbuf_trace::ColumnMap>().map(std::sync::Arc::new))
            .transpose()?;
        if columns.is_none() && self.format == Format::Csv {
            anyhow::bail!("--format csv needs --columns (which column holds the offset, size, op, time, volume)");
        }
        Ok(ReadOptions {
            format: self.format,
            page_size: self.page_size,
            volume: self.volume,
            time_unit: self.time_unit,
            columns,
        })
    }
}

/// Prints, unless quiet, how a trace was opened and what a first pass did.
pub fn observer<'a>(
    label: &'a str,
    bar: &'a indicatif::ProgressBar,
    quiet: bool,
) -> impl FnMut(flashbuf_sim::prepare::PrepareEvent<'_>) + Send + 'a {
    use flashbuf_sim::prepare::PrepareEvent;
    move |e| match e {
        PrepareEvent::PassStarted(how) => {
            if !quiet {
                bar.suspend(|| eprintln!("flashbuf: {label}: {how}; reading it once for its footprint"));
            }
            bar.set_message(format!("{label}: footprint"));
        }
        PrepareEvent::Scanned(n) => {
            bar.inc(n);
        }
        PrepareEvent::PassDone => {}
        PrepareEvent::Stored(p) => {
            if !quiet {
                bar.suspend(|| eprintln!("flashbuf: {label}: summary cached in {}", p.display()));
            }
        }
        PrepareEvent::StoreFailed(e) => {
            bar.suspend(|| eprintln!("flashbuf: warning: {label}: the trace summary could not be cached: {e}"));
        }
    }
}
