//! `flashbuf stats`: what a trace contains.

use anyhow::Result;
use clap::Args;
use flashbuf_trace::TraceSpec;

use crate::traces::{TraceArgs, scan};

#[derive(Args)]
pub struct StatsArgs {
    /// Trace files or generators (`gen:adlru-zipf`).
    #[arg(required = true, value_name = "FILE|gen:SPEC")]
    traces: Vec<String>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    trace_args: TraceArgs,
}

pub fn run(a: StatsArgs) -> Result<()> {
    let opts = a.trace_args.options()?;
    for t in &a.traces {
        let spec = TraceSpec::parse(t)?;
        let s = scan(&spec, &opts, a.quiet)?;
        let pct = |n: u64| if s.requests == 0 { 0.0 } else { 100.0 * n as f64 / s.requests as f64 };
        println!("{}", spec.label());
        println!("  requests         {}", s.requests);
        println!("  reads            {} ({:.1}%)", s.reads, pct(s.reads));
        println!("  writes           {} ({:.1}%)", s.writes, pct(s.writes));
        println!("  distinct pages   {} ({} written)", s.distinct_pages, s.distinct_written_pages);
        match (s.min_page, s.max_page) {
            (Some(lo), Some(hi)) => println!("  page range       {lo} ..= {hi}"),
            _ => println!("  page range       (empty trace)"),
        }
        println!(
            "  footprint        {} bytes ({:.1} MiB at {} bytes per page)",
            s.footprint_bytes,
            s.footprint_bytes as f64 / (1u64 << 20) as f64,
            opts.page_size
        );
    }
    Ok(())
}
