//! Presenting flashbuf results: aligned text tables for people, CSV and JSON rows for tools,
//! and plots.
//!
//! Tables, CSV and JSON are built from [`flashbuf_sim::ResultRow`]s, the one flat record of a
//! run. Plots ([`plot`]) read any CSV file ([`CsvTable`]) — flashbuf's result files and other
//! tools' alike — and draw SVG and PNG figures in the style of the papers.

#![warn(missing_docs)]

pub mod csvtable;
mod output;
pub mod plot;
mod raster;
mod table;

pub use csvtable::CsvTable;
pub use output::{OutputError, OutputFile};
pub use plot::{PlotError, PlotSpec};
pub use table::{
    BOUND_COLUMNS, Column, DEFAULT_COLUMNS, DEVICE_COLUMN, DEVICE_COLUMNS, INTERVAL_COLUMNS, SHARE_COLUMN,
    format_table, thousands,
};

use std::io::Write;

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

/// Writes `rows` as CSV with a header line (every field of the row type, e.g. [`flashbuf_sim::ResultRow`]).
pub fn write_csv<T: serde::Serialize, W: Write>(rows: &[T], out: W) -> Result<(), ReportError> {
    let mut w = csv::Writer::from_writer(out);
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Writes `rows` as a pretty-printed JSON array of objects.
pub fn write_json<T: serde::Serialize, W: Write>(rows: &[T], mut out: W) -> Result<(), ReportError> {
    serde_json::to_writer_pretty(&mut out, rows)?;
    writeln!(out)?;
    Ok(())
}
