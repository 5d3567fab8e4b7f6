//! `flashbuf stats`: what a trace contains — requests, reads and writes, distinct pages, page
//! range, the volumes of a multi-volume trace, and what the compact address space would be.

use anyhow::{Context, Result};
use clap::Args;
use flashbuf_report::thousands;
use flashbuf_sim::prepare::{Ask, Needs, RemapMode, prepare};
use flashbuf_trace::{SummaryCache, TraceSpec};

use crate::traces::{TraceArgs, observer};

#[derive(Args)]
pub struct StatsArgs {
    /// Trace files, `-` for standard input, or generators (`gen:adlru-zipf`).
    #[arg(required = true, value_name = "FILE|-|gen:SPEC")]
    traces: Vec<String>,
    /// Extent size, in pages, whose touched extents to count (the compact address space's
    /// unit; default: 64, the pages per block of the default chip).
    #[arg(long, default_value_t = 64, value_name = "PAGES")]
    extent: u64,
    /// Neither read nor write the trace summary cache.
    #[arg(long)]
    no_cache: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    trace_args: TraceArgs,
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

pub fn run(a: StatsArgs) -> Result<()> {
    let opts = a.trace_args.options()?;
    anyhow::ensure!(a.extent >= 1, "--extent must be at least 1 page");
    let cache = if a.no_cache { SummaryCache::disabled() } else { SummaryCache::from_env() };
    let needs = Needs { distinct_pages: true, page_space: true, requests: true };
    let mut out = String::new();
    for t in &a.traces {
        let spec = TraceSpec::parse(t).with_context(|| format!("trace '{t}'"))?;
        let label = spec.label();
        // Standard input and FIFOs can be summarised: their one pass is this one.
        let summary = if spec.rereadable() {
            let bar = crate::progress::bar(0, "requests", a.quiet);
            let ask = Ask { needs, remap: RemapMode::On, extent_pages: a.extent };
            let p = prepare(&spec, &opts, &label, ask, &cache, &mut observer(&label, &bar, a.quiet));
            bar.finish_and_clear();
            let p = p?;
            if let (false, Some(flashbuf_sim::prepare::SummaryOrigin::Cache(dir))) = (a.quiet, &p.origin) {
                eprintln!("flashbuf: {label}: summary from the cache in {}", dir.display());
            }
            p.summary.expect("stats needs the summary")
        } else {
            let mut opened = spec.open(&opts).with_context(|| format!("trace '{label}'"))?;
            if !a.quiet {
                eprintln!("flashbuf: {label}: {}", opened.reason);
            }
            let volumes = opened.format.is_some_and(|f| opts.combines_volumes(f));
            flashbuf_trace::summarize(opened.source.as_mut(), opts.page_size, volumes, &[a.extent])?
        };
        let s = &summary.stats;
        let pct = |n: u64| if s.requests == 0 { 0.0 } else { 100.0 * n as f64 / s.requests as f64 };
        out.push_str(&format!("{label}\n"));
        out.push_str(&format!("  requests         {}\n", thousands(s.requests)));
        out.push_str(&format!("  reads            {} ({:.1}%)\n", thousands(s.reads), pct(s.reads)));
        out.push_str(&format!("  writes           {} ({:.1}%)\n", thousands(s.writes), pct(s.writes)));
        out.push_str(&format!(
            "  distinct pages   {} ({} written)\n",
            thousands(s.distinct_pages),
            thousands(s.distinct_written_pages)
        ));
        match (s.min_page, s.max_page) {
            (Some(lo), Some(hi)) => out.push_str(&format!("  page range       {lo} ..= {hi}\n")),
            _ => out.push_str("  page range       (empty trace)\n"),
        }
        out.push_str(&format!(
            "  footprint        {} bytes ({} at {} bytes per page)\n",
            thousands(s.footprint_bytes),
            mib(s.footprint_bytes),
            opts.page_size
        ));
        if let Some(extents) = summary.extents_of(a.extent) {
            let compact = extents * a.extent;
            let range = s.page_range();
            out.push_str(&format!(
                "  extents          {} of {} pages: a compact space of {} pages{}\n",
                thousands(extents),
                a.extent,
                thousands(compact),
                if compact > 0 && range > 2 * compact {
                    format!(", {:.0}× smaller than the page range (remapped by default)", range as f64 / compact as f64)
                } else {
                    " (the page range is dense enough: not remapped by default)".to_string()
                }
            ));
        }
        if !summary.volumes.is_empty() {
            out.push_str(&format!("  volumes          {}\n", summary.volumes.len()));
            out.push_str("    volume      requests      writes  distinct pages  page range\n");
            for v in &summary.volumes {
                out.push_str(&format!(
                    "    {:>6}  {:>12}  {:>10}  {:>14}  {} ..= {}\n",
                    v.volume,
                    thousands(v.requests),
                    thousands(v.writes),
                    thousands(v.distinct_pages),
                    v.min_page,
                    v.max_page
                ));
            }
            out.push_str("    (select one with --volume N; together their pages are volume << 40 | page)\n");
        }
        out.push_str(&format!(
            "  index memory     {} (exact distinct counts: about 40 bytes per touched 64-page granule)\n",
            mib(summary.index_bytes)
        ));
    }
    crate::output::print(&out)
}
