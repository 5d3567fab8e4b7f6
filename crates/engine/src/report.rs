//! Workload results for people and tools: an aligned text table, CSV with a header line, JSON.
//!
//! (`flashbuf_report` formats the simulator's `ResultRow`; an engine run measures different
//! things — transactions per second, cost per flush — so it has its own row type,
//! [`WorkloadResult`], and these three writers.)

use std::io::Write;

use crate::workload::WorkloadResult;

/// Why output could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// CSV encoding failed.
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// JSON encoding failed.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

fn int(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

type Cell = fn(&WorkloadResult) -> String;

const COLUMNS: &[(&str, Cell, bool)] = &[
    ("policy", |r| r.policy.clone(), false),
    ("store", |r| r.store.clone(), false),
    ("buffer (pages)", |r| int(r.buffer_pages), true),
    ("workers", |r| r.workers.to_string(), true),
    ("TPS", |r| format!("{:.1}", r.tps), true),
    ("time (s)", |r| format!("{:.2}", r.time_s), true),
    ("device (s)", |r| format!("{:.2}", r.device_s), true),
    ("hit ratio (%)", |r| format!("{:.2}", 100.0 * r.hit_ratio), true),
    ("page reads", |r| int(r.page_reads), true),
    ("page flushes", |r| int(r.page_flushes), true),
    ("µs/flush", |r| format!("{:.1}", r.avg_flush_us), true),
    ("erases", |r| int(r.erases), true),
    ("merges s/p/f", |r| format!("{}/{}/{}", r.merges_switch, r.merges_partial, r.merges_full), true),
];

/// Renders `rows` as an aligned table: policy, store, buffer, workers, TPS, time, device time,
/// hit ratio, page reads, page flushes, cost per flush, erases, merges.
pub fn format_table(rows: &[WorkloadResult]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(|r| COLUMNS.iter().map(|c| (c.1)(r)).collect()).collect();
    let widths: Vec<usize> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, c)| cells.iter().map(|row| row[i].chars().count()).chain([c.0.chars().count()]).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let pad = |out: &mut String, text: &str, width: usize, right: bool| {
        let fill = width - text.chars().count();
        if right {
            out.extend(std::iter::repeat_n(' ', fill));
            out.push_str(text);
        } else {
            out.push_str(text);
            out.extend(std::iter::repeat_n(' ', fill));
        }
    };
    for (i, c) in COLUMNS.iter().enumerate() {
        if i > 0 {
            out.push_str("  ");
        }
        pad(&mut out, c.0, widths[i], c.2);
    }
    out.push('\n');
    for row in &cells {
        for (i, c) in COLUMNS.iter().enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            pad(&mut out, &row[i], widths[i], c.2);
        }
        out.push('\n');
    }
    out
}

/// Writes `rows` as CSV with a header line (every field of [`WorkloadResult`]).
pub fn write_csv<W: Write>(rows: &[WorkloadResult], out: W) -> Result<(), ReportError> {
    let mut w = csv::Writer::from_writer(out);
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Writes `rows` as a pretty-printed JSON array.
pub fn write_json<W: Write>(rows: &[WorkloadResult], mut out: W) -> Result<(), ReportError> {
    serde_json::to_writer_pretty(&mut out, rows)?;
    writeln!(out)?;
    Ok(())
}
