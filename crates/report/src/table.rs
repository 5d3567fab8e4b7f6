//! Aligned plain-text tables of rows of any type.

use flashbuf_sim::ResultRow;

/// One column of a text table over rows of type `T`: a header and how to render a row's cell.
pub struct Column<T> {
    /// Header text (with unit).
    pub header: &'static str,
    /// Renders the cell.
    pub cell: fn(&T) -> String,
    /// Right-align (numbers) or left-align (labels).
    pub numeric: bool,
}

impl<T> Clone for Column<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Column<T> {}

/// `1234567` → `1,234,567`: the thousands separators of every table and report.
pub fn thousands(v: u64) -> String {
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

/// The columns of a buffer comparison: policy, buffer, hit ratio, reads, writes, device time.
pub const DEFAULT_COLUMNS: &[Column<ResultRow>] = &[
    Column { header: "trace", cell: |r| r.trace.clone(), numeric: false },
    Column { header: "policy", cell: |r| r.policy.clone(), numeric: false },
    Column { header: "buffer (pages)", cell: |r| thousands(r.buffer_pages), numeric: true },
    Column { header: "hit ratio (%)", cell: |r| format!("{:.2}", 100.0 * r.hit_ratio), numeric: true },
    Column { header: "page reads", cell: |r| thousands(r.page_reads), numeric: true },
    Column { header: "page writes", cell: |r| thousands(r.page_writes), numeric: true },
    Column { header: "device time (s)", cell: |r| format!("{:.3}", r.device_time_us / 1e6), numeric: true },
    Column { header: "Mreq/s", cell: |r| format!("{:.1}", r.requests_per_s / 1e6), numeric: true },
];

/// The device, shown when rows are on several devices.
pub const DEVICE_COLUMN: Column<ResultRow> = Column { header: "device", cell: |r| r.device.clone(), numeric: false };

/// The buffer as a share of the trace's distinct pages, shown when known.
pub const SHARE_COLUMN: Column<ResultRow> = Column {
    header: "buffer (%)",
    cell: |r| r.buffer_share.map_or_else(|| "-".to_string(), |s| format!("{:.2}", 100.0 * s)),
    numeric: true,
};

/// The interval and the position in the trace, shown for interval rows.
pub const INTERVAL_COLUMNS: &[Column<ResultRow>] = &[
    Column {
        header: "interval",
        cell: |r| r.interval.map_or_else(|| "-".to_string(), |i| i.to_string()),
        numeric: true,
    },
    Column { header: "position", cell: |r| thousands(r.position), numeric: true },
];

/// Extra columns shown when the device is a flash translation layer.
pub const DEVICE_COLUMNS: &[Column<ResultRow>] = &[
    Column { header: "erases", cell: |r| thousands(r.erases), numeric: true },
    Column { header: "page copies", cell: |r| thousands(r.page_copies), numeric: true },
    Column {
        header: "merges s/p/f",
        cell: |r| format!("{}/{}/{}", r.merges_switch, r.merges_partial, r.merges_full),
        numeric: true,
    },
    Column { header: "WA", cell: |r| format!("{:.2}", r.write_amplification), numeric: true },
];

/// The distance from the offline bounds, shown with `flashbuf run --bound`.
pub const BOUND_COLUMNS: &[Column<ResultRow>] = &[
    Column { header: "write bound", cell: |r| r.write_bound.map_or_else(|| "-".into(), thousands), numeric: true },
    Column {
        header: "writes/bound",
        cell: |r| r.writes_over_bound.map_or_else(|| "-".into(), |v| format!("{v:.3}")),
        numeric: true,
    },
    Column {
        header: "time/bound",
        cell: |r| r.time_over_bound.map_or_else(|| "-".into(), |v| format!("{v:.3}")),
        numeric: true,
    },
];

/// Renders `rows` under `columns`, each column as wide as its widest cell.
pub fn format_table<T>(rows: &[T], columns: &[Column<T>]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(|r| columns.iter().map(|c| (c.cell)(r)).collect()).collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| cells.iter().map(|row| row[i].chars().count()).chain([c.header.len()]).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, values: &mut dyn Iterator<Item = (usize, &str)>| {
        let mut first = true;
        for (i, v) in values {
            if !first {
                out.push_str("  ");
            }
            first = false;
            let pad = widths[i].saturating_sub(v.chars().count());
            if columns[i].numeric {
                out.extend(std::iter::repeat_n(' ', pad));
                out.push_str(v);
            } else {
                out.push_str(v);
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
    };
    line(&mut out, &mut columns.iter().enumerate().map(|(i, c)| (i, c.header)));
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(&mut out, &mut rule.iter().enumerate().map(|(i, s)| (i, s.as_str())));
    for row in &cells {
        line(&mut out, &mut row.iter().enumerate().map(|(i, s)| (i, s.as_str())));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
