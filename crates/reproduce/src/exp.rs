//! Small helpers shared by the papers' experiments.

use std::collections::BTreeSet;

use anyhow::{Context, Result};
use flashbuf_flash::DeviceConfig;
use flashbuf_policy::PolicyConfig;
use flashbuf_sim::{ResultRow, RunSpec};
use flashbuf_trace::{ReadOptions, TraceSpec};

use flashbuf_report::PlotSpec;
use flashbuf_report::plot::{ChartKind, Filter};

use crate::report::markdown_table;

/// A trace with what the runs need to know about it.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The spec.
    pub spec: TraceSpec,
    /// Label for rows and reports.
    pub label: String,
    /// Largest page number + 1.
    pub pages: u64,
    /// Number of requests.
    pub requests: u64,
    /// How to read it (files).
    pub read: ReadOptions,
}

impl Trace {
    /// A generated trace, e.g. `adlru-zipf` or `zipf,requests=...`.
    pub fn generated(gen_spec: &str) -> Result<Self> {
        let spec = TraceSpec::parse(&format!("gen:{gen_spec}")).with_context(|| format!("generator {gen_spec}"))?;
        let TraceSpec::Generated(g) = &spec else { unreachable!("gen: prefix") };
        Ok(Trace {
            label: g.label(),
            pages: g.page_count(),
            requests: g.total_requests(),
            read: ReadOptions::default(),
            spec,
        })
    }

    /// A trace file, scanned once for its size.
    pub fn file(path: &std::path::Path, read: ReadOptions) -> Result<Self> {
        let spec = TraceSpec::File { path: path.to_path_buf(), format: None };
        let mut opened = spec.open(&read).with_context(|| path.display().to_string())?;
        let stats = flashbuf_trace::stats(opened.source.as_mut(), read.page_size)?;
        Ok(Trace {
            label: spec.label(),
            pages: stats.max_page.map_or(1, |m| m + 1),
            requests: stats.requests,
            read,
            spec,
        })
    }

    /// The same generated trace with its seed moved by `k` (the seeds of
    /// [`crate::runner::Ctx::run_seeded`]); a trace file is returned unchanged.
    pub fn seeded(&self, k: u64) -> Self {
        let mut t = self.clone();
        if let TraceSpec::Generated(g) = &mut t.spec {
            g.seed = g.seed.wrapping_add(k);
        }
        t
    }

    /// The trace once per seed of a replicated experiment (once for a trace file).
    pub fn replicas(&self) -> Vec<Self> {
        match self.spec {
            TraceSpec::Generated(_) => (0..crate::runner::SEEDS).map(|k| self.seeded(k)).collect(),
            _ => vec![self.clone()],
        }
    }

    /// A run of this trace.
    pub fn run(&self, policy: &PolicyConfig, frames: usize, device: &DeviceConfig) -> RunSpec {
        let mut s = RunSpec::new(self.spec.clone(), self.pages, policy.clone(), frames, device.clone());
        s.read = self.read.clone();
        s.trace_label = self.label.clone();
        s
    }
}

/// A line chart of `y` (one or more comma-separated columns) against `x`, one series per value
/// of `series` (comma-separated columns, or none), keeping rows that match every `column=value`
/// filter.
pub fn line(x: &str, y: &str, series: &str, filters: &[(&str, &str)], title: &str) -> PlotSpec {
    let mut s = PlotSpec::new(x, y);
    s.y = y.split(',').map(str::to_string).collect();
    s.series = series.split(',').filter(|c| !c.is_empty()).map(str::to_string).collect();
    s.filters = filters.iter().map(|(c, v)| Filter { column: c.to_string(), value: v.to_string() }).collect();
    s.title = Some(title.to_string());
    s
}

/// As [`line`], a grouped bar chart (categorical x).
pub fn bars(x: &str, y: &str, series: &str, filters: &[(&str, &str)], title: &str) -> PlotSpec {
    let mut s = line(x, y, series, filters, title);
    s.kind = ChartKind::Bar;
    s
}

/// Parses policy specs (they are literals of the experiments: a failure is a bug).
pub fn policies(specs: &[&str]) -> Vec<PolicyConfig> {
    specs.iter().map(|s| s.parse().unwrap_or_else(|e| panic!("policy literal {s}: {e}"))).collect()
}

/// The row of `policy` (by label) at buffer `frames` on `trace`.
pub fn find<'a>(rows: &'a [ResultRow], trace: &str, policy: &str, frames: u64) -> &'a ResultRow {
    rows.iter()
        .find(|r| r.trace == trace && r.policy == policy && r.buffer_pages == frames)
        .unwrap_or_else(|| panic!("no row for {policy} at {frames} on {trace}"))
}

/// A Markdown table with one row per x value and one column per series.
pub fn pivot(
    rows: &[ResultRow],
    x_header: &str,
    x: impl Fn(&ResultRow) -> u64,
    series: impl Fn(&ResultRow) -> String,
    value: impl Fn(&ResultRow) -> String,
) -> String {
    let xs: BTreeSet<u64> = rows.iter().map(&x).collect();
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        let s = series(r);
        if !names.contains(&s) {
            names.push(s);
        }
    }
    let mut header: Vec<&str> = vec![x_header];
    header.extend(names.iter().map(String::as_str));
    let body: Vec<Vec<String>> = xs
        .iter()
        .map(|&xv| {
            let mut line = vec![thousands(xv)];
            for n in &names {
                line.push(rows.iter().find(|r| x(r) == xv && &series(r) == n).map(&value).unwrap_or_default());
            }
            line
        })
        .collect();
    markdown_table(&header, &body)
}

pub use flashbuf_report::thousands;

/// Pearson correlation of two equally long series.
pub fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    sab / (saa.sqrt() * sbb.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert!((correlation(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.5]) - 0.997_948_7).abs() < 1e-6);
        assert!((correlation(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
    }
}
