//! `flashbuf plot RESULTS.csv --x COLUMN --y COLUMN [--series COLUMN]`: an SVG and a PNG
//! figure from any CSV file with a header line (see `docs/plots.md`).

use crate::output::outln;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;
use flashbuf_report::CsvTable;
use flashbuf_report::plot::{Aggregate, ChartKind, Filter, PlotSpec, output_paths, plot};

#[derive(Args)]
pub struct PlotArgs {
    /// A CSV file with a header line: results of `flashbuf sweep` or `flashbuf run --output
    /// csv`, or any other tool's.
    #[arg(value_name = "RESULTS.csv")]
    csv: PathBuf,
    /// The x column, e.g. `buffer_pages`, or `param:KEY` for a policy parameter read from the
    /// `policy` column (`param:w` of `cflru:w=0.25`).
    #[arg(long, value_name = "COLUMN")]
    x: String,
    /// The y column(s), comma-separated or repeated, e.g. `page_writes` or `hit_ratio`.
    #[arg(long, value_name = "COLUMN", required = true, value_delimiter = ',')]
    y: Vec<String>,
    /// Column(s) whose values make the series, e.g. `policy` (comma-separated for combinations).
    #[arg(long, value_name = "COLUMN", value_delimiter = ',')]
    series: Vec<String>,
    /// Keep only rows where COLUMN equals VALUE; repeat for several columns (all must match)
    /// or for several values of one column (any may match).
    #[arg(long = "filter", value_name = "COLUMN=VALUE")]
    filters: Vec<String>,
    /// A grouped bar chart over the x values as categories (default: lines over a numeric x).
    #[arg(long)]
    bar: bool,
    /// Logarithmic x axis (line charts).
    #[arg(long)]
    log_x: bool,
    /// Logarithmic y axis.
    #[arg(long)]
    log_y: bool,
    /// Title above the plot.
    #[arg(long)]
    title: Option<String>,
    /// x axis label (default: from the column, with its unit).
    #[arg(long, value_name = "TEXT")]
    x_label: Option<String>,
    /// y axis label (default: from the column, with its unit).
    #[arg(long, value_name = "TEXT")]
    y_label: Option<String>,
    /// Image size in pixels, WIDTHxHEIGHT.
    #[arg(long, default_value = "800x500", value_name = "WxH")]
    size: String,
    /// Combine several rows falling on one point: mean, min or max (default: an error that
    /// says which columns differ).
    #[arg(long, value_name = "HOW")]
    aggregate: Option<String>,
    /// Output file name without extension: BASE.svg and BASE.png are written (default: next to
    /// the CSV, named after it and the columns).
    #[arg(short = 'o', long = "out", value_name = "BASE")]
    out: Option<PathBuf>,
    /// Overwrite existing output files.
    #[arg(long)]
    force: bool,
}

fn default_base(csv: &Path, x: &str, y: &[String]) -> PathBuf {
    let stem = csv.file_stem().map_or_else(|| "plot".into(), |s| s.to_string_lossy().into_owned());
    let clean = |s: &str| s.replace([':', '/', '\\', ' '], "-");
    let name = format!("{stem}-{}-vs-{}", clean(&y.join("+")), clean(x));
    csv.with_file_name(name)
}

fn parse_size(s: &str) -> Result<(u32, u32)> {
    let parsed = s.split_once(['x', 'X']).and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
    match parsed {
        Some(size) => Ok(size),
        None => bail!("--size '{s}': expected WIDTHxHEIGHT in pixels, e.g. 800x500"),
    }
}

pub fn run(a: PlotArgs) -> Result<()> {
    let (width, height) = parse_size(&a.size)?;
    let filters = a.filters.iter().map(|f| f.parse::<Filter>()).collect::<Result<Vec<_>, _>>()?;
    let aggregate = a.aggregate.as_deref().map(str::parse::<Aggregate>).transpose()?;
    let spec = PlotSpec {
        x: a.x.clone(),
        y: a.y.clone(),
        series: a.series.clone(),
        filters,
        kind: if a.bar { ChartKind::Bar } else { ChartKind::Line },
        log_x: a.log_x,
        log_y: a.log_y,
        title: a.title.clone(),
        x_label: a.x_label.clone(),
        y_label: a.y_label.clone(),
        width,
        height,
        aggregate,
    };
    let base = a.out.clone().unwrap_or_else(|| default_base(&a.csv, &a.x, &a.y));
    if let Some(p) = output_paths(&base).iter().find(|p| p.exists() && !a.force) {
        bail!("{} already exists; use --force to overwrite it", p.display());
    }
    let table = CsvTable::read(&a.csv)?;
    for p in plot(&table, &spec, &base)? {
        outln!("{}", p.display());
    }
    Ok(())
}
