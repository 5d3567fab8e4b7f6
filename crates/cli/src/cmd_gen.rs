//! `flashbuf gen`: write a synthetic trace to a file.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use flashbuf_trace::{Format, GenSpec, create_writer};

#[derive(Args)]
pub struct GenArgs {
    /// Generator: `uniform`, `zipf`, `self-similar`, `scan-mix`, or a paper preset such as
    /// `adlru-zipf` (see `flashbuf list`).
    #[arg(value_name = "KIND")]
    kind: String,
    /// Number of requests.
    #[arg(long)]
    requests: Option<u64>,
    /// Number of pages: page numbers are 0..PAGES.
    #[arg(long)]
    pages: Option<u64>,
    /// Probability that a request is a write.
    #[arg(long)]
    write_ratio: Option<f64>,
    /// Locality "a-b": a percent of the references go to b percent of the pages (zipf,
    /// self-similar, scan-mix), e.g. 80-20.
    #[arg(long)]
    locality: Option<String>,
    /// Seed of the random stream (same seed, same trace, on every machine).
    #[arg(long)]
    seed: Option<u64>,
    /// Any other generator parameter as key=value (e.g. `scan-length=500`, `scatter=true`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Output file: `.txt` writes flashbuf text, `.oracleGeneral` libCacheSim's binary format,
    /// anything else flashbuf's compact binary format (`.fbt`).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: PathBuf,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    force: bool,
}

/// The writer format implied by a file name.
pub fn format_for(path: &std::path::Path) -> Format {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if name.ends_with(".txt") {
        Format::Text
    } else if name.contains(".oraclegeneral") || name.ends_with(".oracle") {
        Format::Oracle
    } else {
        Format::Binary
    }
}

pub fn run(a: GenArgs) -> Result<()> {
    let mut spec = a.kind.clone();
    let mut push = |k: &str, v: String| {
        spec.push(',');
        spec.push_str(k);
        spec.push('=');
        spec.push_str(&v);
    };
    if let Some(v) = a.requests {
        push("requests", v.to_string());
    }
    if let Some(v) = a.pages {
        push("pages", v.to_string());
    }
    if let Some(v) = a.write_ratio {
        push("write-ratio", v.to_string());
    }
    if let Some(v) = &a.locality {
        push("locality", v.clone());
    }
    if let Some(v) = a.seed {
        push("seed", v.to_string());
    }
    for kv in &a.set {
        if !kv.contains('=') {
            bail!("--set {kv}: expected key=value");
        }
        spec.push(',');
        spec.push_str(kv);
    }
    let generator: GenSpec = spec.parse()?;
    let mut source = generator.open()?;
    let mut writer = create_writer(format_for(&a.out), &a.out, a.force)?;
    let n =
        flashbuf_trace::copy_trace(source.as_mut(), writer.as_mut()).with_context(|| a.out.display().to_string())?;
    writer.finish()?;
    eprintln!("flashbuf: wrote {n} requests of {} to {}", generator.label(), a.out.display());
    Ok(())
}
