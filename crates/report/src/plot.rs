//! Plots of result tables in the style of the papers' figures, as SVG and PNG.
//!
//! [`plot`] takes any [`CsvTable`] and a [`PlotSpec`] — an x column, one or more y columns, the
//! columns whose values make the series, `column=value` filters, line or bar chart, log axes —
//! and writes `out_base.svg` and `out_base.png`, each atomically (a temporary file renamed into
//! place). [`prepare`] is the data half on its own: selection, grouping, scaling, checks.
//!
//! Choices (the papers give none beyond their figures):
//!
//! * **Units.** Known result columns get labelled axes with units, scaled for reading:
//!   `device_time_us` is shown in seconds, `hit_ratio` in percent ([`column_label`]). Other
//!   columns are labelled by name, with a unit read from a `_us`, `_ns`, `_ms`, `_s`, `_pages`
//!   or `_bytes` suffix.
//! * **Series.** One series per distinct value of the series columns (joined by ` / ` when
//!   several; a numeric value is shown as `column=value`), in order of first appearance in the
//!   file, times each y column. Rows lacking
//!   the x, a y or a series value (an empty cell; a policy without the parameter of `param:KEY`)
//!   are left out.
//! * **One point per series and x.** Several rows on the same point are an error that names the
//!   columns in which they differ, unless an [`Aggregate`] (mean, min, max) is asked for:
//!   silently picking one would misreport.
//! * **Filters.** Rows are kept when every filtered column matches; several filters on the same
//!   column are alternatives (`--filter policy=lru --filter policy=arc`). A cell matches a
//!   value when the text is equal or both are numbers and equal (`512` matches `512.0`).
//! * **Axes.** Line charts need a numeric x and draw each series sorted by x, with tick marks at
//!   the data's x values when they are few (≤ 12) and their labels fit, as the papers do for
//!   buffer sizes; otherwise at round numbers. A linear y axis starts at zero when the data's
//!   minimum is at most half its maximum, else it spans the data. Bar charts take x as
//!   categories (numeric ones sorted), draw grouped bars from zero (or from the lower end of a
//!   log axis), and need no numeric x. Log axes need positive values. Tick labels use
//!   thousands separators below a million and `M`/`G` suffixes above.
//! * **Print.** Each series has a colour (the Okabe–Ito palette, distinguishable by colour-blind
//!   readers) *and* a marker shape with alternating filled and hollow markers (bars: hatching;
//!   a series of more than 40 points, such as a curve at every buffer size, gets a dozen markers
//!   evenly spaced across the plot),
//!   so that figures stay readable in greyscale. The legend sits to the right of the plot, never
//!   over the data; a single series gets no legend.
//! * **Fonts.** Text uses DejaVu Sans, bundled in the crate (`assets/`, Bitstream Vera licence)
//!   and registered with plotters at first use: the PNG renders the same on a machine without
//!   fonts. The SVG names the family `sans-serif` and is laid out with DejaVu's metrics.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, FontTransform, register_font};

use crate::csvtable::{ColumnRef, CsvTable};
use crate::raster::GlyphBitmap;

/// DejaVu Sans (Bitstream Vera licence, see `assets/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bundled font is a valid TrueType file; failing to parse it is a build defect.
        if register_font(FAMILY, FontStyle::Normal, FONT).is_err() {
            panic!("the bundled DejaVu Sans font does not parse");
        }
    });
}

/// Line or bar chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ChartKind {
    /// Lines with markers over a numeric x axis.
    #[default]
    Line,
    /// Grouped bars over categories.
    Bar,
}

/// How several rows on one point combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// Arithmetic mean.
    Mean,
    /// Smallest value.
    Min,
    /// Largest value.
    Max,
}

impl FromStr for Aggregate {
    type Err = PlotError;
    fn from_str(s: &str) -> Result<Self, PlotError> {
        match s {
            "mean" => Ok(Aggregate::Mean),
            "min" => Ok(Aggregate::Min),
            "max" => Ok(Aggregate::Max),
            _ => Err(PlotError::Spec(format!("unknown aggregate '{s}'; valid: mean, min, max"))),
        }
    }
}

/// A row filter: keep rows whose `column` equals `value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// Column name (or `param:KEY`).
    pub column: String,
    /// Required value.
    pub value: String,
}

impl FromStr for Filter {
    type Err = PlotError;
    /// Parses `column=value`.
    fn from_str(s: &str) -> Result<Self, PlotError> {
        let (c, v) = s
            .split_once('=')
            .filter(|(c, _)| !c.trim().is_empty())
            .ok_or_else(|| PlotError::Spec(format!("filter '{s}': expected COLUMN=VALUE")))?;
        Ok(Filter { column: c.trim().to_string(), value: v.trim().to_string() })
    }
}

/// What to plot and how.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotSpec {
    /// The x column (or `param:KEY`).
    pub x: String,
    /// The y columns (at least one).
    pub y: Vec<String>,
    /// Columns whose values make the series (none: one series per y column).
    pub series: Vec<String>,
    /// Row filters.
    pub filters: Vec<Filter>,
    /// Line or bar chart.
    pub kind: ChartKind,
    /// Logarithmic x axis (line charts).
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Title above the plot (none by default: figures get captions).
    pub title: Option<String>,
    /// x axis label (default: from the column, see [`column_label`]).
    pub x_label: Option<String>,
    /// y axis label (default: from the column(s)).
    pub y_label: Option<String>,
    /// Image width in pixels (SVG user units).
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// How several rows on one point combine (default: an error).
    pub aggregate: Option<Aggregate>,
}

impl PlotSpec {
    /// A line chart of `y` against `x`, 800 × 500, no series, filters or log axes.
    pub fn new(x: &str, y: &str) -> Self {
        PlotSpec {
            x: x.to_string(),
            y: vec![y.to_string()],
            series: Vec::new(),
            filters: Vec::new(),
            kind: ChartKind::Line,
            log_x: false,
            log_y: false,
            title: None,
            x_label: None,
            y_label: None,
            width: 800,
            height: 500,
            aggregate: None,
        }
    }
}

/// Why a plot could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The CSV input is malformed.
    #[error("{input}:{line}: {message}")]
    Csv {
        /// The input.
        input: String,
        /// 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A column name is not in the table.
    #[error("{input}: unknown column '{name}'{}; columns: {available}", if note.is_empty() { String::new() } else { format!(" ({note})") })]
    UnknownColumn {
        /// The name asked for.
        name: String,
        /// The input.
        input: String,
        /// The columns there are.
        available: String,
        /// More about it.
        note: String,
    },
    /// No row is left to plot.
    #[error("{0}")]
    EmptySelection(String),
    /// A cell that must be a number is not.
    #[error("{input}:{line}: column '{column}' must be numeric, but holds '{value}'{hint}")]
    NotNumeric {
        /// The column.
        column: String,
        /// The cell.
        value: String,
        /// The input.
        input: String,
        /// 1-based line.
        line: u64,
        /// How to get on.
        hint: String,
    },
    /// Several rows fall on one point.
    #[error("{0}")]
    Ambiguous(String),
    /// A value cannot be shown on a log axis.
    #[error("{axis} is logarithmic but {column} has the value {value} (a log axis needs positive values)")]
    LogScale {
        /// `x` or `y`.
        axis: &'static str,
        /// The column.
        column: String,
        /// The value.
        value: f64,
    },
    /// The specification is inconsistent.
    #[error("{0}")]
    Spec(String),
    /// Drawing failed.
    #[error("drawing failed: {0}")]
    Render(String),
}

/// One series of prepared data.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesData {
    /// Legend text.
    pub label: String,
    /// Points sorted by x, y already scaled (for bar charts x is the category index).
    pub points: Vec<(f64, f64)>,
}

/// Data ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotData {
    /// x axis label.
    pub x_label: String,
    /// y axis label.
    pub y_label: String,
    /// Bar charts: the category names, in axis order.
    pub categories: Vec<String>,
    /// The series, in legend order.
    pub series: Vec<SeriesData>,
}

/// The axis label of a column and the factor its values are multiplied by for display.
pub fn column_label(name: &str) -> (String, f64) {
    let known: Option<(&str, f64)> = match name {
        "buffer_pages" => Some(("buffer size (pages)", 1.0)),
        "buffer_share" => Some(("buffer size (% of the trace's distinct pages)", 100.0)),
        "footprint_pages" => Some(("distinct pages of the trace", 1.0)),
        "position" => Some(("requests into the trace", 1.0)),
        "interval" => Some(("interval", 1.0)),
        "requests" => Some(("requests", 1.0)),
        "read_requests" => Some(("read requests", 1.0)),
        "write_requests" => Some(("write requests", 1.0)),
        "hits" => Some(("buffer hits", 1.0)),
        "misses" => Some(("buffer misses", 1.0)),
        "hit_ratio" => Some(("hit ratio (%)", 100.0)),
        "page_reads" => Some(("page reads", 1.0)),
        "fetches" => Some(("demand fetches", 1.0)),
        "padding_reads" => Some(("padding reads", 1.0)),
        "page_writes" => Some(("page writes", 1.0)),
        "evict_writes" => Some(("dirty victims written", 1.0)),
        "padding_writes" => Some(("padding writes", 1.0)),
        "bypass_writes" => Some(("bypass writes", 1.0)),
        "flush_writes" => Some(("final flush writes", 1.0)),
        "flash_reads" => Some(("flash page reads", 1.0)),
        "flash_programs" => Some(("flash page programs", 1.0)),
        "erases" => Some(("block erases", 1.0)),
        "page_copies" => Some(("page copies", 1.0)),
        "merges_switch" => Some(("switch merges", 1.0)),
        "merges_partial" => Some(("partial merges", 1.0)),
        "merges_full" => Some(("full merges", 1.0)),
        "write_amplification" => Some(("write amplification", 1.0)),
        "erase_count_min" => Some(("erase count (min)", 1.0)),
        "erase_count_max" => Some(("erase count (max)", 1.0)),
        "erase_count_mean" => Some(("erase count (mean)", 1.0)),
        "erase_count_std" => Some(("erase count (std. dev.)", 1.0)),
        "device_time_us" => Some(("device time (s)", 1e-6)),
        "elapsed_s" => Some(("wall time (s)", 1.0)),
        "requests_per_s" => Some(("throughput (requests/s)", 1.0)),
        "cpu_s" => Some(("CPU time (s)", 1.0)),
        "runtime_s" => Some(("runtime (s)", 1.0)),
        "tps" => Some(("transactions per second", 1.0)),
        "write_bound" => Some(("fewest page writes (bound)", 1.0)),
        "writes_over_bound" => Some(("page writes / write bound", 1.0)),
        "time_bound_us" => Some(("least device time (bound, s)", 1e-6)),
        "time_over_bound" => Some(("device time / time bound", 1.0)),
        "full_hit_ratio" => Some(("hit ratio of full simulation (%)", 100.0)),
        "full_page_writes" => Some(("page writes of full simulation", 1.0)),
        "hit_ratio_error" => Some(("hit ratio error (percentage points)", 100.0)),
        "page_writes_error" => Some(("page writes error (%)", 100.0)),
        "sample_rate" => Some(("sampling rate (%)", 100.0)),
        _ => None,
    };
    if let Some((label, scale)) = known {
        return (label.to_string(), scale);
    }
    if let Some(key) = name.strip_prefix("param:") {
        return (format!("parameter {key}"), 1.0);
    }
    // A rate: `writes_per_s` is "writes per second", not a duration.
    if let Some(base) = name.strip_suffix("_per_s").filter(|b| !b.is_empty()) {
        return (format!("{} per second", base.replace('_', " ")), 1.0);
    }
    for (suffix, unit) in
        [("_us", "µs"), ("_ns", "ns"), ("_ms", "ms"), ("_s", "s"), ("_pages", "pages"), ("_bytes", "bytes")]
    {
        if let Some(base) = name.strip_suffix(suffix).filter(|b| !b.is_empty()) {
            return (format!("{} ({unit})", base.replace('_', " ")), 1.0);
        }
    }
    (name.replace('_', " "), 1.0)
}

fn parse_num(s: &str) -> Option<f64> {
    let v: f64 = s.trim().parse().ok()?;
    v.is_finite().then_some(v)
}

fn cell_matches(cell: &str, value: &str) -> bool {
    cell == value || matches!((parse_num(cell), parse_num(value)), (Some(a), Some(b)) if a == b)
}

/// (series label index, y index, x key) → (values, their rows).
type Points = HashMap<(usize, usize, String), (Vec<f64>, Vec<usize>)>;

/// Selects, groups, scales and checks the data of `spec` (everything but drawing).
pub fn prepare(table: &CsvTable, spec: &PlotSpec) -> Result<PlotData, PlotError> {
    if spec.y.is_empty() {
        return Err(PlotError::Spec("no y column given".into()));
    }
    if spec.kind == ChartKind::Bar && spec.log_x {
        return Err(PlotError::Spec("a logarithmic x axis needs a line chart (bar charts have categories)".into()));
    }
    let x = table.column(&spec.x)?;
    let ys: Vec<ColumnRef> = spec.y.iter().map(|y| table.column(y)).collect::<Result<_, _>>()?;
    let series_cols: Vec<ColumnRef> = spec.series.iter().map(|s| table.column(s)).collect::<Result<_, _>>()?;
    let mut filters: Vec<(ColumnRef, &str, Vec<&str>)> = Vec::new();
    for f in &spec.filters {
        let c = table.column(&f.column)?;
        match filters.iter_mut().find(|(col, _, _)| *col == c) {
            Some(entry) => entry.2.push(&f.value),
            None => filters.push((c, &f.column, vec![&f.value])),
        }
    }

    let passes = |row: usize, (col, _, values): &(ColumnRef, &str, Vec<&str>)| {
        table.cell(row, col).is_some_and(|cell| values.iter().any(|v| cell_matches(&cell, v)))
    };
    let selected: Vec<usize> = (0..table.rows.len()).filter(|&r| filters.iter().all(|f| passes(r, f))).collect();
    if selected.is_empty() {
        return Err(PlotError::EmptySelection(explain_empty(table, &filters)));
    }

    let (x_label, _) = column_label(&spec.x);
    let y_styles: Vec<(String, f64)> = spec.y.iter().map(|y| column_label(y)).collect();

    // Category order (bar charts), series order, and the values on each point.
    let mut categories: Vec<String> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut points: Points = HashMap::new();
    for &row in &selected {
        let Some(xcell) = table.cell(row, &x).filter(|c| !c.trim().is_empty()) else { continue };
        let mut parts = Vec::with_capacity(series_cols.len());
        for (c, name) in series_cols.iter().zip(&spec.series) {
            match table.cell(row, c).filter(|v| !v.trim().is_empty()) {
                // A bare number says nothing in a legend: name its column.
                Some(v) if parse_num(&v).is_some() => parts.push(format!("{name}={v}")),
                Some(v) => parts.push(v.into_owned()),
                None => break,
            }
        }
        if parts.len() != series_cols.len() {
            continue;
        }
        let xkey = match spec.kind {
            ChartKind::Line => {
                let v = parse_num(&xcell).ok_or_else(|| PlotError::NotNumeric {
                    column: spec.x.clone(),
                    value: xcell.to_string(),
                    input: table.source.clone(),
                    line: table.lines[row],
                    hint: "; a line chart needs a numeric x (use a bar chart for categories)".into(),
                })?;
                if spec.log_x && v <= 0.0 {
                    return Err(PlotError::LogScale { axis: "x", column: spec.x.clone(), value: v });
                }
                v.to_string()
            }
            ChartKind::Bar => {
                let key = xcell.trim().to_string();
                if !categories.contains(&key) {
                    categories.push(key.clone());
                }
                key
            }
        };
        let label = parts.join(" / ");
        let li = match labels.iter().position(|l| *l == label) {
            Some(i) => i,
            None => {
                labels.push(label);
                labels.len() - 1
            }
        };
        for (yi, ycol) in ys.iter().enumerate() {
            let Some(ycell) = table.cell(row, ycol).filter(|c| !c.trim().is_empty()) else { continue };
            let v = parse_num(&ycell).ok_or_else(|| PlotError::NotNumeric {
                column: spec.y[yi].clone(),
                value: ycell.to_string(),
                input: table.source.clone(),
                line: table.lines[row],
                hint: String::new(),
            })? * y_styles[yi].1;
            if spec.log_y && v <= 0.0 {
                return Err(PlotError::LogScale { axis: "y", column: spec.y[yi].clone(), value: v });
            }
            let e = points.entry((li, yi, xkey.clone())).or_default();
            e.0.push(v);
            e.1.push(row);
        }
    }
    if points.is_empty() {
        return Err(PlotError::EmptySelection(format!(
            "{}: none of the {} selected rows has values in {} and {}{}",
            table.source,
            selected.len(),
            spec.x,
            spec.y.join(", "),
            if spec.series.is_empty() { String::new() } else { format!(" and {}", spec.series.join(", ")) }
        )));
    }
    if spec.kind == ChartKind::Bar && categories.iter().all(|c| parse_num(c).is_some()) {
        categories.sort_by(|a, b| parse_num(a).unwrap_or(0.0).total_cmp(&parse_num(b).unwrap_or(0.0)));
    }

    let mut series = Vec::new();
    for (li, label) in labels.iter().enumerate() {
        for (yi, (ylabel, _)) in y_styles.iter().enumerate() {
            let mut pts: Vec<(f64, f64)> = Vec::new();
            let mut keys: Vec<&(usize, usize, String)> = points.keys().filter(|k| k.0 == li && k.1 == yi).collect();
            keys.sort_by(|a, b| a.2.cmp(&b.2));
            for key in keys {
                let (values, rows) = &points[key];
                let y = match (values.len(), spec.aggregate) {
                    (1, _) => values[0],
                    (_, Some(Aggregate::Mean)) => values.iter().sum::<f64>() / values.len() as f64,
                    (_, Some(Aggregate::Min)) => values.iter().copied().fold(f64::INFINITY, f64::min),
                    (_, Some(Aggregate::Max)) => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    (_, None) => return Err(PlotError::Ambiguous(explain_ambiguous(table, spec, label, &key.2, rows))),
                };
                let xv = match spec.kind {
                    ChartKind::Line => key.2.parse::<f64>().expect("stored as a number"),
                    ChartKind::Bar => categories.iter().position(|c| *c == key.2).expect("a category") as f64,
                };
                pts.push((xv, y));
            }
            if pts.is_empty() {
                continue;
            }
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let text = match (spec.series.is_empty(), spec.y.len()) {
                (true, _) => ylabel.clone(),
                (false, 1) => label.clone(),
                (false, _) => format!("{label} — {ylabel}"),
            };
            series.push(SeriesData { label: text, points: pts });
        }
    }
    let y_label = match &spec.y_label {
        Some(l) => l.clone(),
        None => {
            let mut uniq: Vec<&str> = Vec::new();
            for (l, _) in &y_styles {
                if !uniq.contains(&l.as_str()) {
                    uniq.push(l);
                }
            }
            uniq.join(", ")
        }
    };
    Ok(PlotData { x_label: spec.x_label.clone().unwrap_or(x_label), y_label, categories, series })
}

fn distinct_values(table: &CsvTable, col: &ColumnRef, rows: &[usize], max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for &r in rows {
        let v = table.cell(r, col).map_or_else(|| "(none)".to_string(), |c| c.into_owned());
        if !out.contains(&v) {
            out.push(v);
            if out.len() > max {
                break;
            }
        }
    }
    out
}

fn explain_empty(table: &CsvTable, filters: &[(ColumnRef, &str, Vec<&str>)]) -> String {
    let all: Vec<usize> = (0..table.rows.len()).collect();
    if all.is_empty() {
        return format!("{}: the file has no data rows", table.source);
    }
    for (col, name, values) in filters {
        let any = all.iter().any(|&r| table.cell(r, col).is_some_and(|c| values.iter().any(|v| cell_matches(&c, v))));
        if !any {
            let mut seen = distinct_values(table, col, &all, 12);
            if seen.len() > 12 {
                seen.truncate(12);
                seen.push("...".into());
            }
            return format!(
                "{}: no row has {name}={}; values of {name}: {}",
                table.source,
                values.join(" or "),
                seen.join(", ")
            );
        }
    }
    let desc: Vec<String> = filters.iter().map(|(_, n, v)| format!("{n}={}", v.join("|"))).collect();
    format!("{}: no row matches all filters together ({})", table.source, desc.join(", "))
}

fn explain_ambiguous(table: &CsvTable, spec: &PlotSpec, label: &str, x: &str, rows: &[usize]) -> String {
    let mut differing: Vec<(bool, String)> = Vec::new();
    for (i, name) in table.columns.iter().enumerate() {
        let col = ColumnRef::Index(i);
        let vals = distinct_values(table, &col, rows, 3);
        if vals.len() > 1 && !spec.y.contains(name) {
            let numeric = vals.iter().all(|v| parse_num(v).is_some());
            let mut shown = vals;
            if shown.len() > 3 {
                shown.truncate(3);
                shown.push("...".into());
            }
            differing.push((numeric, format!("{name} ({})", shown.join(" | "))));
        }
    }
    // Labels (text columns) say best what tells the rows apart; measurements come last.
    differing.sort_by_key(|(numeric, _)| *numeric);
    let list: Vec<String> = differing.into_iter().take(4).map(|(_, s)| s).collect();
    let at = if label.is_empty() { String::new() } else { format!(" of series '{label}'") };
    format!(
        "{}: {} rows{at} fall on {}={x}; they differ in {}. Choose one with --filter COLUMN=VALUE, make \
         the column a series with --series, or combine them with --aggregate mean|min|max",
        table.source,
        rows.len(),
        spec.x,
        if list.is_empty() { "nothing (duplicate rows)".to_string() } else { list.join(", ") }
    )
}

// ---------------------------------------------------------------------------------------------
// Drawing

/// Okabe & Ito's colour-blind-safe palette (without its yellow, too light on white).
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Filled for even series within each round of shapes, hollow for odd, alternating per round.
fn filled(i: usize) -> bool {
    (i % 7 + i / 7).is_multiple_of(2)
}

/// Vertices of marker `i`'s shape around (0, 0) for radius `r` (pixels).
fn marker_shape(i: usize, r: f64) -> Vec<(f64, f64)> {
    let poly = |n: usize, radius: f64, phase: f64| -> Vec<(f64, f64)> {
        (0..n)
            .map(|k| {
                let a = phase + k as f64 * std::f64::consts::TAU / n as f64;
                (radius * a.cos(), radius * a.sin())
            })
            .collect()
    };
    let plus = |rot: f64| -> Vec<(f64, f64)> {
        let (l, w) = (r * 1.15, r * 0.38);
        let pts = [
            (w, w),
            (w, l),
            (-w, l),
            (-w, w),
            (-l, w),
            (-l, -w),
            (-w, -w),
            (-w, -l),
            (w, -l),
            (w, -w),
            (l, -w),
            (l, w),
        ];
        pts.iter().map(|&(x, y)| (x * rot.cos() - y * rot.sin(), x * rot.sin() + y * rot.cos())).collect()
    };
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4};
    match i % 7 {
        0 => poly(20, r, 0.0),
        1 => poly(4, r * 1.2, FRAC_PI_4),
        2 => poly(3, r * 1.3, -FRAC_PI_2),
        3 => poly(4, r * 1.3, 0.0),
        4 => poly(3, r * 1.3, FRAC_PI_2),
        5 => plus(0.0),
        _ => plus(FRAC_PI_4),
    }
}

/// An axis: linear or logarithmic, with explicit tick positions.
#[derive(Clone, Debug)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
    /// Tick spacing used to choose decimals (linear axes).
    step: f64,
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = |v: f64| if self.log { v.max(f64::MIN_POSITIVE).ln() } else { v };
        let (a, b) = (t(self.lo), t(self.hi));
        let frac = if b > a { (t(*value) - a) / (b - a) } else { 0.5 };
        limit.0 + (frac * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() { Vec::new() } else { self.ticks.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let n = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 2.5 {
        2.5
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// A linear axis over `[min, max]` with about `target` round ticks. `from_zero` extends it to
/// zero; `tight` pads the data range by 3% instead of rounding the ends out to ticks (x axes).
fn linear_axis(min: f64, max: f64, from_zero: bool, tight: bool, target: f64) -> Axis {
    let (mut min, mut max) = (min, max);
    if from_zero {
        min = min.min(0.0);
        max = max.max(0.0);
    }
    if max <= min {
        let pad = if min == 0.0 { 1.0 } else { min.abs() * 0.1 };
        min -= pad;
        max += pad;
    }
    let step = nice_step(max - min, target);
    let (lo, hi) = if tight {
        let pad = (max - min) * 0.03;
        (if from_zero && min == 0.0 { 0.0 } else { min - pad }, max + pad)
    } else {
        ((min / step).floor() * step, (max / step).ceil() * step)
    };
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let ticks = (first..=last).map(|k| k as f64 * step).map(|v| if v.abs() < step * 1e-9 { 0.0 } else { v }).collect();
    Axis { lo, hi, log: false, ticks, step }
}

fn log_axis(min: f64, max: f64) -> Axis {
    let (l0, l1) = (min.log10(), max.log10());
    let pad = ((l1 - l0) * 0.05).max(0.05);
    let (lo, hi) = (10f64.powf(l0 - pad), 10f64.powf(l1 + pad));
    let candidates = |mults: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        for e in (lo.log10().floor() as i32)..=(hi.log10().ceil() as i32) {
            for m in mults {
                let v = m * 10f64.powi(e);
                if v >= lo * (1.0 - 1e-12) && v <= hi * (1.0 + 1e-12) {
                    out.push(v);
                }
            }
        }
        out
    };
    if hi / lo < 10.0 {
        // Less than a decade: round linear ticks read better than 1-2-5 (which may be one or two).
        let mut a = linear_axis(lo, hi, false, true, 6.0);
        a.ticks.retain(|&t| t > 0.0 && t >= lo && t <= hi);
        if a.ticks.len() >= 3 {
            return Axis { lo, hi, log: true, ticks: a.ticks, step: a.step };
        }
    }
    let mut ticks = candidates(&[1.0, 2.0, 5.0]);
    if ticks.len() > 10 {
        ticks = candidates(&[1.0]);
    }
    if ticks.len() < 3 {
        ticks = candidates(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    }
    if ticks.len() > 10 {
        ticks = candidates(&[1.0, 3.0]);
    }
    Axis { lo, hi, log: true, ticks, step: 0.0 }
}

/// A tick label: thousands separators below a million, `M`/`G` above, decimals as the tick
/// spacing `step` needs (`step` 0: as the value itself needs, for log axes).
pub fn format_tick(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let step = if step > 0.0 { step } else { v.abs() };
    let decimals = |unit: f64| -> usize {
        let s = step / unit;
        if s >= 1.0 - 1e-9 && (s - s.round()).abs() < 1e-9 {
            0
        } else {
            let mut d = 0;
            while d < 6 && ((s * 10f64.powi(d as i32)) - (s * 10f64.powi(d as i32)).round()).abs() > 1e-6 {
                d += 1;
            }
            d.max((-(s.log10().floor())).max(0.0) as usize)
        }
    };
    let a = v.abs();
    let sign = if v < 0.0 { "-" } else { "" };
    for (unit, suffix) in [(1e9, "G"), (1e6, "M")] {
        if a >= unit {
            let d = decimals(unit).min(3);
            return format!("{sign}{:.d$}{suffix}", a / unit);
        }
    }
    let d = decimals(1.0);
    if d == 0 {
        return format!("{sign}{}", crate::table::thousands(a.round() as u64));
    }
    format!("{v:.d$}")
}

struct Fonts {
    tick: f64,
    label: f64,
    legend: f64,
    title: f64,
    scale: f64,
}

impl Fonts {
    fn new(width: u32, height: u32) -> Self {
        let s = (width as f64 / 800.0).min(height as f64 / 500.0).clamp(0.6, 4.0);
        Fonts { tick: 15.0 * s, label: 17.0 * s, legend: 15.0 * s, title: 20.0 * s, scale: s }
    }
}

fn style(size: f64) -> TextStyle<'static> {
    TextStyle::from((FAMILY, size).into_font()).color(&BLACK)
}

type DrawResult<T> = Result<T, String>;

fn text_width<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str, size: f64) -> DrawResult<u32> {
    area.estimate_text_size(text, &style(size)).map(|(w, _)| w).map_err(|e| e.to_string())
}

/// The axes of a line chart for a plot area `plot_w` pixels wide.
fn line_axes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &PlotData,
    spec: &PlotSpec,
    fonts: &Fonts,
    plot_w: f64,
    extra_y: &[f64],
) -> DrawResult<(Axis, Axis)> {
    let xs: Vec<f64> = data.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    let mut ys: Vec<f64> = data.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
    ys.extend_from_slice(extra_y);
    let (xmin, xmax) =
        (xs.iter().copied().fold(f64::INFINITY, f64::min), xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let (ymin, ymax) =
        (ys.iter().copied().fold(f64::INFINITY, f64::min), ys.iter().copied().fold(f64::NEG_INFINITY, f64::max));

    let mut distinct: Vec<f64> = xs.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let mut x = if spec.log_x { log_axis(xmin, xmax) } else { linear_axis(xmin, xmax, false, true, 6.0) };
    if distinct.len() <= 12 && distinct.len() >= 2 {
        // Ticks at the data's x values, if their labels fit side by side.
        let mut data_axis = if spec.log_x {
            let pad = ((xmax / xmin).log10() * 0.04).max(0.02);
            Axis {
                lo: xmin / 10f64.powf(pad),
                hi: xmax * 10f64.powf(pad),
                log: true,
                ticks: distinct.clone(),
                step: 0.0,
            }
        } else {
            let pad = (xmax - xmin) * 0.04;
            Axis { lo: xmin - pad, hi: xmax + pad, log: false, ticks: distinct.clone(), step: 0.0 }
        };
        let gaps: Vec<f64> = distinct.windows(2).map(|w| w[1] - w[0]).collect();
        data_axis.step = gaps.iter().copied().fold(f64::INFINITY, f64::min);
        let mut fits = true;
        for w in distinct.windows(2) {
            let px = |v: f64| data_axis.map(&v, (0, plot_w as i32)) as f64;
            let need = (text_width(area, &format_tick(w[0], data_axis.step), fonts.tick)?
                + text_width(area, &format_tick(w[1], data_axis.step), fonts.tick)?) as f64
                / 2.0
                + 8.0 * fonts.scale;
            if px(w[1]) - px(w[0]) < need {
                fits = false;
            }
        }
        if fits {
            x = data_axis;
        }
    }
    let y = if spec.log_y {
        log_axis(ymin, ymax)
    } else {
        linear_axis(ymin, ymax, ymin >= 0.0 && ymin <= 0.5 * ymax, false, 6.0)
    };
    Ok((x, y))
}

/// How the category labels of a bar chart are set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CategoryLabels {
    Row,
    Staggered,
    Upright,
}

/// A category as shown on the axis: whole numbers with thousands separators, others as given.
fn category_text(c: &str) -> String {
    match parse_num(c) {
        Some(n) if n.fract() == 0.0 && n.abs() < 1e15 => format_tick(n, 1.0),
        _ => c.to_string(),
    }
}

/// `text`, shortened to at most `max_w` pixels by an ellipsis in the middle (labels often
/// differ only at their ends: `uniform,...,seed=1` and `uniform,...,seed=2`).
fn fit_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: f64,
    max_w: u32,
) -> DrawResult<String> {
    if text_width(area, text, size)? <= max_w {
        return Ok(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    for n in (1..chars.len()).rev() {
        let (head, tail) = (n.div_ceil(2), n / 2);
        let t: String = chars[..head].iter().chain(['…'].iter()).chain(chars[chars.len() - tail..].iter()).collect();
        if text_width(area, &t, size)? <= max_w {
            return Ok(t);
        }
    }
    Ok("…".to_string())
}

/// What a figure's panel adds to a plain plot (see [`Panel`]).
#[derive(Clone, Copy, Debug)]
struct Extras<'a> {
    /// Per series, per point: the error (± this much) around the point's y, already scaled.
    errors: Option<&'a [Vec<f64>]>,
    /// Offset the series horizontally by a few pixels each.
    dodge: bool,
    /// Pixels per unit of the figure's nominal size (1 for SVG; dpi / 96 for a print PNG).
    px: f64,
}

impl Default for Extras<'_> {
    fn default() -> Self {
        Extras { errors: None, dodge: false, px: 1.0 }
    }
}

/// Draws the whole figure on `root`.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    spec: &PlotSpec,
    extras: &Extras,
) -> DrawResult<()> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (w, h) = root.dim_in_pixel();
    // Text and strokes scale with the area's nominal size (its pixels over `px`), then by `px`.
    let mut fonts = Fonts::new((w as f64 / extras.px) as u32, (h as f64 / extras.px) as u32);
    fonts.tick *= extras.px;
    fonts.label *= extras.px;
    fonts.legend *= extras.px;
    fonts.title *= extras.px;
    fonts.scale *= extras.px;
    let s = fonts.scale;
    // Error bar ends, for the y axis range.
    let mut err_ends: Vec<f64> = Vec::new();
    if let Some(errs) = extras.errors {
        for (sd, es) in data.series.iter().zip(errs) {
            for (p, &err) in sd.points.iter().zip(es) {
                if err.is_finite() && err > 0.0 {
                    err_ends.push(p.1 + err);
                    if !spec.log_y || p.1 - err > 0.0 {
                        err_ends.push(p.1 - err);
                    }
                }
            }
        }
    }

    let mut top = ((12.0 * s) as i32).max((fonts.tick * 0.7) as i32 + 4);
    if let Some(title) = &spec.title {
        let tw = text_width(root, title, fonts.title)? as i32;
        root.draw_text(title, &style(fonts.title), ((w as i32 - tw) / 2, top)).map_err(e)?;
        top += (fonts.title * 1.6) as i32;
    }

    // Legend to the right of the plot.
    let with_legend = data.series.len() > 1;
    let sample_w = (34.0 * s) as i32;
    let mut legend_w = 0i32;
    let mut legend_labels: Vec<String> = data.series.iter().map(|sd| sd.label.clone()).collect();
    if with_legend {
        let chrome = sample_w + (24.0 * s) as i32;
        let room = ((w as f64 * 0.45) as i32 - chrome).max(1) as u32;
        let mut widest = 0;
        for l in &mut legend_labels {
            *l = fit_text(root, l, fonts.legend, room)?;
            widest = widest.max(text_width(root, l, fonts.legend)?);
        }
        legend_w = chrome + widest as i32;
    }

    let bar = spec.kind == ChartKind::Bar;
    let margin = (12.0 * s) as i32;
    let provisional_plot_w = w as f64 - legend_w as f64 - 2.0 * margin as f64 - 90.0 * s;
    let (xaxis, yaxis) = if bar {
        let n = data.categories.len();
        let mut ys: Vec<f64> = data.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
        ys.extend_from_slice(&err_ends);
        let (ymin, ymax) =
            (ys.iter().copied().fold(f64::INFINITY, f64::min), ys.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        let y = if spec.log_y { log_axis(ymin, ymax) } else { linear_axis(ymin, ymax, true, false, 6.0) };
        let x = Axis { lo: -0.5, hi: n as f64 - 0.5, log: false, ticks: (0..n).map(|i| i as f64).collect(), step: 1.0 };
        (x, y)
    } else {
        line_axes(root, data, spec, &fonts, provisional_plot_w, &err_ends)?
    };
    let y_ticks: Vec<String> = yaxis.ticks.iter().map(|&v| format_tick(v, yaxis.step)).collect();
    let mut widest_y = 0;
    for t in &y_ticks {
        widest_y = widest_y.max(text_width(root, t, fonts.tick)?);
    }
    let y_area = (widest_y as f64 + fonts.label * 1.4 + 16.0 * s) as i32;

    // Axis label area below the plot: tick labels plus the axis description. Category labels
    // of bar charts go on one row if they fit their slots, on two staggered rows if they fit
    // two, and upright (rotated) otherwise.
    let tick_row = fonts.tick * 1.2;
    let mut x_area = (tick_row + fonts.label * 1.2 + 8.0 * s) as i32;
    let mut cat_labels: Vec<String> = data.categories.iter().map(|c| category_text(c)).collect();
    let mut cat_mode = CategoryLabels::Row;
    if bar && !cat_labels.is_empty() {
        let plot_w = (w as i32 - legend_w - 2 * margin - y_area).max(1) as f64;
        let slot = plot_w / cat_labels.len() as f64;
        let mut widest = 0;
        for c in &cat_labels {
            widest = widest.max(text_width(root, c, fonts.tick)?);
        }
        let widest = widest as f64 + 6.0 * s;
        if widest > 1.9 * slot {
            cat_mode = CategoryLabels::Upright;
            x_area = ((widest + fonts.label * 1.2 + 14.0 * s) as i32).min((h as f64 * 0.4) as i32);
            // Labels longer than the area allows are shortened, with an ellipsis.
            let room = (x_area as f64 - fonts.label * 1.2 - 14.0 * s).max(0.0) as u32;
            for c in &mut cat_labels {
                *c = fit_text(root, c, fonts.tick, room)?;
            }
        } else if widest > 0.95 * slot {
            cat_mode = CategoryLabels::Staggered;
            x_area += tick_row as i32;
        }
    }

    let (chart_area, legend_area) = root.split_horizontally(w as i32 - legend_w);
    let chart_area = chart_area.margin(top, margin, margin, margin);
    let mut chart = ChartBuilder::on(&chart_area)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(xaxis.clone(), yaxis.clone())
        .map_err(e)?;

    let xfmt = move |v: &f64| -> String { if bar { String::new() } else { format_tick(*v, xaxis.step) } };
    let ystep = yaxis.step;
    let yfmt = move |v: &f64| format_tick(*v, ystep);
    let grid = RGBColor(222, 222, 222);
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(64)
        .y_labels(64)
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .x_desc(data.x_label.clone())
        .y_desc(data.y_label.clone())
        .label_style(style(fonts.tick))
        .axis_desc_style(style(fonts.label))
        .bold_line_style(grid.stroke_width(1))
        .light_line_style(WHITE.stroke_width(0))
        .axis_style(BLACK.stroke_width((1.0 * s).max(1.0) as u32))
        .set_all_tick_mark_size((5.0 * s) as i32);
    if bar {
        mesh.disable_x_mesh();
    }
    mesh.draw().map_err(e)?;

    // A frame around the plot area, as in the papers' figures.
    // Pixel positions relative to `root` (a figure's panel is not at the backend's origin).
    let origin = root.get_base_pixel();
    let at = |p: (i32, i32)| (p.0 - origin.0, p.1 - origin.1);
    let (px, py) = chart.plotting_area().get_pixel_range();
    let (px, py) = (px.start - origin.0..px.end - origin.0, py.start - origin.1..py.end - origin.1);
    root.draw(&PathElement::new(
        vec![
            (px.start, py.start),
            (px.end - 1, py.start),
            (px.end - 1, py.end - 1),
            (px.start, py.end - 1),
            (px.start, py.start),
        ],
        BLACK.stroke_width((1.0 * s).max(1.0) as u32),
    ))
    .map_err(e)?;

    if bar {
        let y0 = py.end + (9.0 * s) as i32;
        for (i, label) in cat_labels.iter().enumerate() {
            let (cx, _) = at(chart.backend_coord(&(i as f64, yaxis.lo)));
            let (text_style, at) = match cat_mode {
                CategoryLabels::Row => (style(fonts.tick).pos(Pos::new(HPos::Center, VPos::Top)), (cx, y0)),
                CategoryLabels::Staggered => (
                    style(fonts.tick).pos(Pos::new(HPos::Center, VPos::Top)),
                    (cx, y0 + if i % 2 == 1 { tick_row as i32 } else { 0 }),
                ),
                CategoryLabels::Upright => (
                    style(fonts.tick).transform(FontTransform::Rotate270).pos(Pos::new(HPos::Right, VPos::Center)),
                    (cx, y0),
                ),
            };
            root.draw_text(label, &text_style, at).map_err(e)?;
        }
    }

    let line_w = (2.0 * s).max(1.0) as u32;
    let r = 4.5 * s;
    if bar {
        let m = data.series.len().max(1) as f64;
        let group = 0.8;
        let base = if yaxis.log { yaxis.lo } else { 0.0 };
        for (si, sd) in data.series.iter().enumerate() {
            for &(c, v) in &sd.points {
                let x0 = c - group / 2.0 + si as f64 * group / m;
                let x1 = x0 + group / m * 0.9;
                let (a, b) = (at(chart.backend_coord(&(x0, base))), at(chart.backend_coord(&(x1, v))));
                draw_bar(root, (a.0, b.1.min(a.1)), (b.0, b.1.max(a.1)), si, s).map_err(e)?;
            }
        }
    } else {
        // Dodging: series i is shifted by (i − (n − 1)/2) · δ pixels, δ a marker's width, so that
        // points that coincide sit side by side instead of hiding each other.
        let n = data.series.len();
        let shift = |si: usize| -> i32 {
            if extras.dodge && n > 1 { ((si as f64 - (n - 1) as f64 / 2.0) * 1.15 * r).round() as i32 } else { 0 }
        };
        for (si, sd) in data.series.iter().enumerate() {
            if extras.dodge {
                let pts: Vec<(i32, i32)> = sd
                    .points
                    .iter()
                    .map(|p| {
                        let (x, y) = at(chart.backend_coord(p));
                        (x + shift(si), y)
                    })
                    .collect();
                root.draw(&PathElement::new(pts, colour(si).stroke_width(line_w))).map_err(e)?;
            } else {
                chart
                    .draw_series(LineSeries::new(sd.points.iter().copied(), colour(si).stroke_width(line_w)))
                    .map_err(e)?;
            }
        }
        if let Some(errs) = extras.errors {
            let cap = (0.6 * r).round() as i32;
            let stroke = (1.3 * s).max(1.0) as u32;
            for (si, (sd, es)) in data.series.iter().zip(errs).enumerate() {
                for (p, &err) in sd.points.iter().zip(es) {
                    if !(err.is_finite() && err > 0.0) {
                        continue;
                    }
                    let lo = if yaxis.log { (p.1 - err).max(yaxis.lo) } else { p.1 - err };
                    let (x, y0) = at(chart.backend_coord(&(p.0, lo)));
                    let (_, y1) = at(chart.backend_coord(&(p.0, p.1 + err)));
                    let x = x + shift(si);
                    let (y0, y1) = (y0.clamp(py.start, py.end), y1.clamp(py.start, py.end));
                    let c = colour(si).stroke_width(stroke);
                    root.draw(&PathElement::new(vec![(x, y0), (x, y1)], c)).map_err(e)?;
                    for y in [y0, y1] {
                        root.draw(&PathElement::new(vec![(x - cap, y), (x + cap, y)], c)).map_err(e)?;
                    }
                }
            }
        }
        let spacing = f64::from(chart.plotting_area().dim_in_pixel().0) / MARKERS_ON_LONG_SERIES as f64;
        for (si, sd) in data.series.iter().enumerate() {
            let long = sd.points.len() > MAX_MARKED_POINTS;
            let mut last_x: Option<i32> = None;
            for (i, p) in sd.points.iter().enumerate() {
                let (x, y) = at(chart.backend_coord(p));
                // A long series (a curve at every buffer size) gets markers evenly spaced across
                // the plot: they still tell it apart in greyscale without hiding the line.
                let due = last_x.is_none_or(|lx| f64::from(x - lx) >= spacing) || i + 1 == sd.points.len();
                if !long || due {
                    draw_marker(root, (x + shift(si), y), si, r, s).map_err(e)?;
                    last_x = Some(x);
                }
            }
        }
    }

    if with_legend {
        let row_h = (fonts.legend * 1.55) as i32;
        let x0 = (6.0 * s) as i32;
        let mut y = py.start + (4.0 * s) as i32;
        for (si, label) in legend_labels.iter().enumerate() {
            let cy = y + row_h / 2;
            if bar {
                let half = (fonts.legend * 0.5) as i32;
                let (a, b) = ((x0 + sample_w / 2 - half - 2, cy - half), (x0 + sample_w / 2 + half + 2, cy + half));
                draw_bar(&legend_area, a, b, si, s).map_err(e)?;
            } else {
                legend_area
                    .draw(&PathElement::new(vec![(x0, cy), (x0 + sample_w, cy)], colour(si).stroke_width(line_w)))
                    .map_err(e)?;
                draw_marker(&legend_area, (x0 + sample_w / 2, cy), si, r, s).map_err(e)?;
            }
            let text_style = style(fonts.legend).pos(Pos::new(HPos::Left, VPos::Center));
            legend_area.draw_text(label, &text_style, (x0 + sample_w + (8.0 * s) as i32, cy)).map_err(e)?;
            y += row_h;
            if y + row_h > h as i32 {
                break; // no room for more entries
            }
        }
    }
    root.present().map_err(e)?;
    Ok(())
}

/// Series longer than this get about [`MARKERS_ON_LONG_SERIES`] markers, evenly spaced across
/// the plot.
const MAX_MARKED_POINTS: usize = 40;
/// Markers on a long series (a curve at every buffer size).
const MARKERS_ON_LONG_SERIES: usize = 12;

fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (cx, cy): (i32, i32),
    i: usize,
    r: f64,
    s: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let pts: Vec<(i32, i32)> =
        marker_shape(i, r).iter().map(|&(dx, dy)| (cx + dx.round() as i32, cy + dy.round() as i32)).collect();
    let c = colour(i);
    let stroke = (1.6 * s).max(1.0) as u32;
    if i.is_multiple_of(7) {
        let radius = r.round() as i32;
        area.draw(&Circle::new((cx, cy), radius, if filled(i) { c.filled() } else { WHITE.filled() }))?;
        return area.draw(&Circle::new((cx, cy), radius, c.stroke_width(stroke)));
    }
    area.draw(&Polygon::new(pts.clone(), if filled(i) { c.filled() } else { WHITE.filled() }))?;
    let mut outline = pts;
    outline.push(outline[0]);
    area.draw(&PathElement::new(outline, c.stroke_width(stroke)))
}

/// A bar from `(x0, y0)` (top left) to `(x1, y1)` (bottom right), in pixels: filled with the
/// series colour, hatched in white by series (none, /, \, x), outlined in black.
fn draw_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
    i: usize,
    s: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    area.draw(&Rectangle::new([(x0, y0), (x1, y1)], colour(i).filled()))?;
    let spacing = (7.0 * s).max(4.0) as i32;
    let hatch = WHITE.stroke_width((1.5 * s).max(1.0) as u32);
    let pattern = (i + i / PALETTE.len()) % 4;
    if pattern == 1 || pattern == 3 {
        // x + y = c
        let mut c = x0 + y0 + spacing;
        while c < x1 + y1 {
            let (xa, xb) = ((c - y1).max(x0), (c - y0).min(x1));
            if xa < xb {
                area.draw(&PathElement::new(vec![(xa, c - xa), (xb, c - xb)], hatch))?;
            }
            c += spacing;
        }
    }
    if pattern == 2 || pattern == 3 {
        // x - y = c
        let mut c = x0 - y1 + spacing;
        while c < x1 - y0 {
            let (xa, xb) = ((c + y0).max(x0), (c + y1).min(x1));
            if xa < xb {
                area.draw(&PathElement::new(vec![(xa, xa - c), (xb, xb - c)], hatch))?;
            }
            c += spacing;
        }
    }
    area.draw(&Rectangle::new([(x0, y0), (x1, y1)], BLACK.stroke_width(1)))
}

/// Renders prepared data as an SVG document.
pub fn render_svg(data: &PlotData, spec: &PlotSpec) -> Result<String, PlotError> {
    check_size(spec)?;
    register_fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (spec.width, spec.height)).into_drawing_area();
        draw(&root, data, spec, &Extras::default()).map_err(PlotError::Render)?;
    }
    Ok(out)
}

/// Renders prepared data as a PNG image (8-bit RGB).
pub fn render_png(data: &PlotData, spec: &PlotSpec) -> Result<Vec<u8>, PlotError> {
    check_size(spec)?;
    register_fonts();
    let mut pixels = vec![255u8; spec.width as usize * spec.height as usize * 3];
    {
        let bitmap = BitMapBackend::with_buffer(&mut pixels, (spec.width, spec.height));
        let backend = GlyphBitmap::new(bitmap, FONT).expect("the bundled font parses");
        let root = backend.into_drawing_area();
        draw(&root, data, spec, &Extras::default()).map_err(PlotError::Render)?;
    }
    let mut png_bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut png_bytes, spec.width, spec.height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| PlotError::Render(e.to_string()))?;
    writer.write_image_data(&pixels).map_err(|e| PlotError::Render(e.to_string()))?;
    writer.finish().map_err(|e| PlotError::Render(e.to_string()))?;
    Ok(png_bytes)
}

fn check_size(spec: &PlotSpec) -> Result<(), PlotError> {
    if !(200..=10_000).contains(&spec.width) || !(150..=10_000).contains(&spec.height) {
        return Err(PlotError::Spec(format!(
            "image size {}x{}: the width must be 200..10000 and the height 150..10000 pixels",
            spec.width, spec.height
        )));
    }
    Ok(())
}

/// The files [`plot`] writes for `out_base`: `out_base.svg` and `out_base.png` (a trailing
/// `.svg` or `.png` of `out_base` is replaced, not doubled).
pub fn output_paths(out_base: &Path) -> [PathBuf; 2] {
    let base = match out_base.extension().and_then(|e| e.to_str()) {
        Some("svg" | "png") => out_base.with_extension(""),
        _ => out_base.to_path_buf(),
    };
    let with = |ext: &str| {
        let mut s = base.clone().into_os_string();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    };
    [with("svg"), with("png")]
}

fn write_atomic(dest: &Path, bytes: &[u8]) -> Result<(), PlotError> {
    let io = |e: crate::OutputError| PlotError::Io { path: e.path, source: std::io::Error::other(e.message) };
    let mut f = crate::OutputFile::create(dest, true).map_err(io)?;
    f.write_all(bytes).map_err(|source| PlotError::Io { path: dest.display().to_string(), source })?;
    f.commit().map_err(io)
}

/// Plots `table` as `spec` says into `out_base.svg` and `out_base.png` (see [`output_paths`]),
/// each written atomically; existing files are replaced. Returns the two paths.
pub fn plot(table: &CsvTable, spec: &PlotSpec, out_base: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let data = prepare(table, spec)?;
    let svg = render_svg(&data, spec)?;
    let png = render_png(&data, spec)?;
    let [svg_path, png_path] = output_paths(out_base);
    write_atomic(&svg_path, svg.as_bytes())?;
    write_atomic(&png_path, &png)?;
    Ok(vec![svg_path, png_path])
}

// ---------------------------------------------------------------------------------------------
// Figures: panels, error bars, dodging, print resolution

/// One panel of a [`Figure`]: a plot plus what figures of replicated runs need.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// What to plot; its `title` is the panel's caption, its `width` and `height` are ignored
    /// (the figure sets them).
    pub spec: PlotSpec,
    /// For each y column, the column holding its error (drawn as a bar of ± that much around
    /// the point, in the y column's units); empty for no error bars.
    pub errors: Vec<String>,
    /// Line charts: shift each series horizontally by about a marker's width, so that points
    /// that coincide sit side by side instead of hiding each other.
    pub dodge: bool,
}

impl Panel {
    /// A panel of `spec` without error bars or dodging.
    pub fn new(spec: PlotSpec) -> Self {
        Panel { spec, errors: Vec::new(), dodge: false }
    }
}

/// Several panels drawn as one image (small multiples), written as SVG and as a PNG at print
/// resolution.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The panels, row by row.
    pub panels: Vec<Panel>,
    /// Panels per row.
    pub columns: usize,
    /// Nominal size of one panel (SVG units; 96 per inch).
    pub panel_width: u32,
    /// See `panel_width`.
    pub panel_height: u32,
    /// Resolution of the PNG: it is rendered at `dpi / 96` pixels per SVG unit and tagged with
    /// this resolution, so that it prints at the SVG's size.
    pub dpi: u32,
}

impl Figure {
    /// One panel of 800 × 500 at 300 dpi.
    pub fn single(panel: Panel) -> Self {
        Figure { panels: vec![panel], columns: 1, panel_width: 800, panel_height: 500, dpi: 300 }
    }

    /// Several panels in rows of `columns`, each 640 × 420, at 300 dpi.
    pub fn grid(panels: Vec<Panel>, columns: usize) -> Self {
        Figure { panels, columns: columns.max(1), panel_width: 640, panel_height: 420, dpi: 300 }
    }

    fn size(&self) -> (u32, u32) {
        let rows = self.panels.len().div_ceil(self.columns.max(1)).max(1);
        let cols = self.columns.clamp(1, self.panels.len().max(1));
        (self.panel_width * cols as u32, self.panel_height * rows as u32)
    }
}

/// A panel's data and error bars, ready to draw.
struct PreparedPanel {
    data: PlotData,
    errors: Option<Vec<Vec<f64>>>,
}

fn prepare_panel(table: &CsvTable, panel: &Panel) -> Result<PreparedPanel, PlotError> {
    let data = prepare(table, &panel.spec)?;
    if panel.errors.is_empty() {
        return Ok(PreparedPanel { data, errors: None });
    }
    if panel.errors.len() != panel.spec.y.len() {
        return Err(PlotError::Spec(format!(
            "{} error column(s) for {} y column(s): give one error column per y column",
            panel.errors.len(),
            panel.spec.y.len()
        )));
    }
    // The error columns, selected and grouped exactly as the y columns, scaled as they are.
    let mut espec = panel.spec.clone();
    espec.y = panel.errors.clone();
    espec.log_y = false;
    let edata = prepare(table, &espec)?;
    let factors: Vec<f64> =
        panel.spec.y.iter().zip(&panel.errors).map(|(y, e)| column_label(y).1 / column_label(e).1).collect();
    if edata.series.len() != data.series.len() {
        return Err(PlotError::Spec("the error columns have values where the y columns have none".into()));
    }
    let ny = panel.spec.y.len();
    let mut errors = Vec::with_capacity(data.series.len());
    for (i, (sd, ed)) in data.series.iter().zip(&edata.series).enumerate() {
        let f = factors[i % ny];
        let mut es = Vec::with_capacity(sd.points.len());
        for p in &sd.points {
            let err = ed.points.iter().find(|q| q.0 == p.0).map_or(0.0, |q| q.1 * f);
            es.push(err.abs());
        }
        errors.push(es);
    }
    Ok(PreparedPanel { data, errors: Some(errors) })
}

fn draw_figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &Figure,
    panels: &[PreparedPanel],
    px: f64,
) -> DrawResult<()> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let cols = fig.columns.clamp(1, panels.len().max(1));
    let rows = panels.len().div_ceil(cols).max(1);
    let areas = root.split_evenly((rows, cols));
    for ((area, prepared), panel) in areas.iter().zip(panels).zip(&fig.panels) {
        let mut spec = panel.spec.clone();
        spec.width = fig.panel_width;
        spec.height = fig.panel_height;
        let extras = Extras { errors: prepared.errors.as_deref(), dodge: panel.dodge, px };
        draw(area, &prepared.data, &spec, &extras)?;
    }
    Ok(())
}

/// Renders a figure as SVG.
pub fn render_figure_svg(table: &CsvTable, fig: &Figure) -> Result<String, PlotError> {
    check_figure(fig)?;
    register_fonts();
    let panels: Vec<PreparedPanel> = fig.panels.iter().map(|p| prepare_panel(table, p)).collect::<Result<_, _>>()?;
    let (w, h) = fig.size();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        draw_figure(&root, fig, &panels, 1.0).map_err(PlotError::Render)?;
    }
    Ok(out)
}

/// Renders a figure as a PNG at `fig.dpi` (8-bit RGB, with the resolution recorded).
pub fn render_figure_png(table: &CsvTable, fig: &Figure) -> Result<Vec<u8>, PlotError> {
    check_figure(fig)?;
    register_fonts();
    let panels: Vec<PreparedPanel> = fig.panels.iter().map(|p| prepare_panel(table, p)).collect::<Result<_, _>>()?;
    let px = fig.dpi as f64 / 96.0;
    let (w, h) = fig.size();
    let (pw, ph) = ((w as f64 * px).round() as u32, (h as f64 * px).round() as u32);
    let mut pixels = vec![255u8; pw as usize * ph as usize * 3];
    {
        let bitmap = BitMapBackend::with_buffer(&mut pixels, (pw, ph));
        let backend = GlyphBitmap::new(bitmap, FONT).expect("the bundled font parses");
        let root = backend.into_drawing_area();
        draw_figure(&root, fig, &panels, px).map_err(PlotError::Render)?;
    }
    let mut png_bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut png_bytes, pw, ph);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    // Print-resolution images are large and mostly flat colour: the best deflate level with
    // per-row adaptive filters makes them several times smaller (they are committed).
    enc.set_compression(png::Compression::Best);
    enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let per_metre = (fig.dpi as f64 / 0.0254).round() as u32;
    enc.set_pixel_dims(Some(png::PixelDimensions { xppu: per_metre, yppu: per_metre, unit: png::Unit::Meter }));
    let mut writer = enc.write_header().map_err(|e| PlotError::Render(e.to_string()))?;
    writer.write_image_data(&pixels).map_err(|e| PlotError::Render(e.to_string()))?;
    writer.finish().map_err(|e| PlotError::Render(e.to_string()))?;
    Ok(png_bytes)
}

fn check_figure(fig: &Figure) -> Result<(), PlotError> {
    if fig.panels.is_empty() {
        return Err(PlotError::Spec("a figure needs at least one panel".into()));
    }
    if !(200..=4_000).contains(&fig.panel_width) || !(150..=4_000).contains(&fig.panel_height) {
        return Err(PlotError::Spec(format!(
            "panel size {}x{}: the width must be 200..4000 and the height 150..4000 units",
            fig.panel_width, fig.panel_height
        )));
    }
    if !(72..=600).contains(&fig.dpi) {
        return Err(PlotError::Spec(format!("{} dpi: the resolution must be 72..600", fig.dpi)));
    }
    let (w, h) = fig.size();
    let px = fig.dpi as f64 / 96.0;
    if (w as f64 * px) * (h as f64 * px) > 60e6 {
        return Err(PlotError::Spec(format!(
            "{} panels of {}x{} at {} dpi make an image of over 60 million pixels",
            fig.panels.len(),
            fig.panel_width,
            fig.panel_height,
            fig.dpi
        )));
    }
    Ok(())
}

/// Draws `fig` from `table` into `out_base.svg` and `out_base.png` (see [`output_paths`]), each
/// written atomically; existing files are replaced. Returns the two paths.
pub fn plot_figure(table: &CsvTable, fig: &Figure, out_base: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let svg = render_figure_svg(table, fig)?;
    let png = render_figure_png(table, fig)?;
    let [svg_path, png_path] = output_paths(out_base);
    write_atomic(&svg_path, svg.as_bytes())?;
    write_atomic(&png_path, &png)?;
    Ok(vec![svg_path, png_path])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels() {
        assert_eq!(format_tick(0.0, 1.0), "0");
        assert_eq!(format_tick(2048.0, 512.0), "2,048");
        assert_eq!(format_tick(250_000.0, 50_000.0), "250,000");
        assert_eq!(format_tick(1_500_000.0, 500_000.0), "1.5M");
        assert_eq!(format_tick(2_000_000.0, 500_000.0), "2.0M");
        assert_eq!(format_tick(3e9, 1e9), "3G");
        assert_eq!(format_tick(0.25, 0.05), "0.25");
        assert_eq!(column_label("writes_per_s").0, "writes per second");
        assert_eq!(column_label("model_writes_per_s").0, "model writes per second");
        assert_eq!(column_label("mean_us").0, "mean (µs)");
        assert_eq!(format_tick(0.3, 0.1), "0.3");
        assert_eq!(format_tick(12.5, 2.5), "12.5");
        assert_eq!(format_tick(-20.0, 10.0), "-20");
        assert_eq!(format_tick(0.02, 0.0), "0.02");
        assert_eq!(format_tick(5000.0, 0.0), "5,000");
    }

    #[test]
    fn nice_linear_axes_cover_the_data() {
        let a = linear_axis(31_000.0, 44_000.0, false, false, 6.0);
        assert_eq!((a.lo, a.hi, a.step), (30_000.0, 45_000.0, 2_500.0));
        assert_eq!(a.ticks.len(), 7);
        let a = linear_axis(12.0, 61.0, true, false, 6.0);
        assert_eq!((a.lo, a.hi, a.step), (0.0, 80.0, 20.0));
        let a = linear_axis(5.0, 5.0, false, false, 6.0);
        assert!(a.lo < 5.0 && a.hi > 5.0);
        let a = linear_axis(512.0, 8192.0, false, true, 6.0);
        assert!(a.lo < 512.0 && a.lo > 0.0 && a.hi > 8192.0 && a.hi < 8500.0, "{a:?}");
        assert_eq!(a.ticks, [2000.0, 4000.0, 6000.0, 8000.0]);
    }

    #[test]
    fn log_axes_tick_at_one_two_five() {
        let a = log_axis(300.0, 90_000.0);
        assert!(a.lo < 300.0 && a.hi > 90_000.0);
        assert_eq!(a.ticks, [500.0, 1000.0, 2000.0, 5000.0, 10_000.0, 20_000.0, 50_000.0, 100_000.0]);
        let a = log_axis(1.0, 1e9);
        assert!(a.ticks.iter().all(|t| t.log10().fract().abs() < 1e-9), "{:?}", a.ticks);
        // Within a decade: round linear steps.
        let a = log_axis(83_000.0, 192_000.0);
        assert_eq!(a.ticks, [75_000.0, 100_000.0, 125_000.0, 150_000.0, 175_000.0, 200_000.0]);
    }

    #[test]
    fn labels_with_units_and_scales() {
        assert_eq!(column_label("device_time_us"), ("device time (s)".to_string(), 1e-6));
        assert_eq!(column_label("hit_ratio"), ("hit ratio (%)".to_string(), 100.0));
        assert_eq!(column_label("buffer_pages").0, "buffer size (pages)");
        assert_eq!(column_label("latency_us").0, "latency (µs)");
        assert_eq!(column_label("gather_window_pages").0, "gather window (pages)");
        assert_eq!(column_label("param:w").0, "parameter w");
        assert_eq!(column_label("odd_column").0, "odd column");
    }

    #[test]
    fn output_paths_replace_a_known_extension() {
        assert_eq!(output_paths(Path::new("a/fig")), [PathBuf::from("a/fig.svg"), PathBuf::from("a/fig.png")]);
        assert_eq!(output_paths(Path::new("fig.png")), [PathBuf::from("fig.svg"), PathBuf::from("fig.png")]);
        assert_eq!(output_paths(Path::new("fig.v2")), [PathBuf::from("fig.v2.svg"), PathBuf::from("fig.v2.png")]);
    }

    #[test]
    fn markers_differ_in_shape_or_fill_for_fourteen_series() {
        let sig: Vec<(usize, bool)> = (0..14).map(|i| (i % 7, filled(i))).collect();
        for a in 0..14 {
            for b in a + 1..14 {
                assert_ne!(sig[a], sig[b], "series {a} and {b}");
            }
        }
    }

    fn table(csv: &str) -> CsvTable {
        CsvTable::from_reader(csv.as_bytes(), "test").unwrap()
    }

    #[test]
    fn figures_are_printed_at_their_resolution() {
        let t = table("buffer_pages,page_writes,sd,policy\n1,10,1,a\n2,20,2,a\n1,10,0,b\n2,21,0,b\n");
        let mut spec = PlotSpec::new("buffer_pages", "page_writes");
        spec.series = vec!["policy".into()];
        let panel = Panel { spec, errors: vec!["sd".into()], dodge: true };
        let fig = Figure::grid(vec![panel.clone(), panel.clone(), panel], 2);
        let png = render_figure_png(&t, &fig).unwrap();
        let dec = png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
        let info = dec.info();
        // Two columns by two rows of 640 x 420 units at 300/96 pixels per unit.
        assert_eq!((info.width, info.height), (4000, 2625));
        let dims = info.pixel_dims.unwrap();
        assert_eq!(dims.xppu, (300.0f64 / 0.0254).round() as u32);
        let svg = render_figure_svg(&t, &fig).unwrap();
        assert!(svg.contains("width=\"1280\"") && svg.contains("height=\"840\""), "{}", &svg[..200]);
    }

    #[test]
    fn error_bars_widen_the_axis_and_need_one_column_per_y() {
        let t = table("x,y,e\n1,10,50\n2,20,1\n");
        let mut spec = PlotSpec::new("x", "y");
        spec.series = vec![];
        let p = prepare_panel(&t, &Panel { spec: spec.clone(), errors: vec!["e".into()], dodge: false }).unwrap();
        assert_eq!(p.errors.unwrap(), vec![vec![50.0, 1.0]]);
        let bad = Panel { spec, errors: vec!["e".into(), "e".into()], dodge: false };
        assert!(matches!(prepare_panel(&t, &bad), Err(PlotError::Spec(_))));
        // The error bar of ±50 around 10 reaches 60: the SVG's y ticks must cover it.
        let mut spec = PlotSpec::new("x", "y");
        spec.series = vec![];
        let fig = Figure::single(Panel { spec, errors: vec!["e".into()], dodge: false });
        let svg = render_figure_svg(&t, &fig).unwrap();
        let texts: Vec<&str> =
            svg.split('>').filter_map(|p| p.split('<').next()).map(str::trim).filter(|t| !t.is_empty()).collect();
        // ... and, below, 10 − 50 = −40.
        assert!(texts.contains(&"60") && texts.contains(&"-40"), "the y axis covers the error bars: {texts:?}");
        let mut too_big = fig.clone();
        too_big.dpi = 1200;
        assert!(matches!(render_figure_png(&t, &too_big), Err(PlotError::Spec(_))));
    }
}
