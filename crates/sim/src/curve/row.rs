//! One point of a curve as a flat row for tables, CSV and JSON: the columns of a run's
//! [`crate::ResultRow`] that a curve gives, under the same names (so `flashbuf plot` draws
//! curves and runs alike), plus how the point was obtained, its error against full simulation
//! and its distance from the offline bounds when asked for.

use flashbuf_flash::DeviceStats;
use serde::Serialize;

use crate::bound::Bound;
use crate::buffer::{Counters, WriteMiss};

use super::lru::CurveMethod;

/// One point of a curve (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CurveRow {
    /// Trace label.
    pub trace: String,
    /// Policy label with every parameter.
    pub policy: String,
    /// Policy name without parameters.
    pub policy_name: String,
    /// How the point was obtained: `exact`, `shards`, `shards-fixed-size`, `minisim` or
    /// `simulation`.
    pub method: CurveMethod,
    /// Sampling rate (1 for `exact` and `simulation`; for `shards-fixed-size`, the rate at the
    /// end of the trace).
    pub sample_rate: f64,
    /// Pages of the sampling unit (sampled methods): requests are kept or dropped a whole unit
    /// at a time.
    pub sample_block: Option<u64>,
    /// Seed of the sampling hash (sampled methods).
    pub sample_seed: Option<u64>,
    /// Device label.
    pub device: String,
    /// Write-miss mode.
    pub write_miss: WriteMiss,
    /// Buffer size in pages.
    pub buffer_pages: u64,
    /// `buffer_pages / footprint_pages`, when the footprint is known.
    pub buffer_share: Option<f64>,
    /// Distinct pages of the trace (estimated from the sample when no pass counted them).
    pub footprint_pages: Option<u64>,
    /// Frames of the miniature buffer (`minisim`).
    pub sample_frames: Option<u64>,
    /// Page accesses.
    pub requests: u64,
    /// Read accesses.
    pub read_requests: u64,
    /// Write accesses.
    pub write_requests: u64,
    /// Buffer hits (estimated for sampled methods).
    pub hits: u64,
    /// hits / requests.
    pub hit_ratio: f64,
    /// Pages read from the device.
    pub page_reads: u64,
    /// Pages written to the device (victims, padding, bypass and the final flush).
    pub page_writes: u64,
    /// Of which written by the final flush.
    pub flush_writes: u64,
    /// NAND block erases.
    pub erases: u64,
    /// Flash programs per host write.
    pub write_amplification: f64,
    /// Simulated device time, microseconds.
    pub device_time_us: f64,
    /// The hit ratio of full simulation at this size (with `--error`).
    pub full_hit_ratio: Option<f64>,
    /// The page writes of full simulation at this size (with `--error`).
    pub full_page_writes: Option<u64>,
    /// `hit_ratio − full_hit_ratio`.
    pub hit_ratio_error: Option<f64>,
    /// `page_writes / full_page_writes − 1` (empty when full simulation writes nothing).
    pub page_writes_error: Option<f64>,
    /// The fewest page writes any policy can achieve at this size (with `--bound`).
    pub write_bound: Option<u64>,
    /// `page_writes / write_bound` (empty when the bound is 0).
    pub writes_over_bound: Option<f64>,
    /// The least device time any policy can achieve at this size, microseconds.
    pub time_bound_us: Option<f64>,
    /// `device_time_us / time_bound_us` (empty when the bound is 0).
    pub time_over_bound: Option<f64>,
}

/// What identifies the series a point belongs to.
#[derive(Clone, Debug)]
pub struct CurveMeta {
    /// Trace label.
    pub trace: String,
    /// Policy label.
    pub policy: String,
    /// Policy name.
    pub policy_name: String,
    /// Method.
    pub method: CurveMethod,
    /// Sampling rate.
    pub sample_rate: f64,
    /// Pages of the sampling unit (sampled methods).
    pub sample_block: Option<u64>,
    /// Seed of the sampling hash (sampled methods).
    pub sample_seed: Option<u64>,
    /// Device label.
    pub device: String,
    /// Write-miss mode.
    pub write_miss: WriteMiss,
    /// Distinct pages of the trace, when known.
    pub footprint_pages: Option<u64>,
}

impl CurveRow {
    /// The row of a point of `meta`'s series at `frames` frames.
    pub fn new(meta: &CurveMeta, frames: u64, c: &Counters, d: &DeviceStats) -> Self {
        CurveRow {
            trace: meta.trace.clone(),
            policy: meta.policy.clone(),
            policy_name: meta.policy_name.clone(),
            method: meta.method,
            sample_rate: meta.sample_rate,
            sample_block: meta.sample_block,
            sample_seed: meta.sample_seed,
            device: meta.device.clone(),
            write_miss: meta.write_miss,
            buffer_pages: frames,
            buffer_share: meta.footprint_pages.filter(|&f| f > 0).map(|f| frames as f64 / f as f64),
            footprint_pages: meta.footprint_pages,
            sample_frames: None,
            requests: c.requests,
            read_requests: c.read_requests,
            write_requests: c.write_requests,
            hits: c.hits,
            hit_ratio: c.hit_ratio(),
            page_reads: c.page_reads(),
            page_writes: c.page_writes(),
            flush_writes: c.flush_writes,
            erases: d.erases,
            write_amplification: d.write_amplification(),
            device_time_us: d.time_ns as f64 / 1e3,
            full_hit_ratio: None,
            full_page_writes: None,
            hit_ratio_error: None,
            page_writes_error: None,
            write_bound: None,
            writes_over_bound: None,
            time_bound_us: None,
            time_over_bound: None,
        }
    }

    /// Sets the error columns against full simulation's `hit_ratio` and `page_writes`.
    pub fn set_reference(&mut self, hit_ratio: f64, page_writes: u64) {
        self.full_hit_ratio = Some(hit_ratio);
        self.full_page_writes = Some(page_writes);
        self.hit_ratio_error = Some(self.hit_ratio - hit_ratio);
        self.page_writes_error = (page_writes > 0).then(|| self.page_writes as f64 / page_writes as f64 - 1.0);
    }

    /// Sets the bound columns.
    pub fn set_bound(&mut self, b: &Bound) {
        self.write_bound = Some(b.writes);
        self.writes_over_bound = (b.writes > 0).then(|| self.page_writes as f64 / b.writes as f64);
        let t = b.time_ns as f64 / 1e3;
        self.time_bound_us = Some(t);
        self.time_over_bound = (b.time_ns > 0).then(|| self.device_time_us / t);
    }
}

/// The ideal device's counters for a run with these buffer counters: every page read costs
/// `read_ns`, every page written `write_ns` (what [`flashbuf_flash::IdealDevice`] reports).
pub fn ideal_device_stats(c: &Counters, read_ns: u64, write_ns: u64) -> DeviceStats {
    let (reads, writes) = (c.page_reads(), c.page_writes());
    DeviceStats {
        host_reads: reads,
        host_writes: writes,
        flash_reads: reads,
        flash_programs: writes,
        time_ns: reads * read_ns + writes * write_ns,
        ..DeviceStats::default()
    }
}

/// Mean absolute errors of a series of rows with reference columns: of the hit ratio, of page
/// writes per request, and of page writes relative to full simulation's (over the rows where
/// full simulation writes). `None` when no row has a reference.
pub fn mean_errors(rows: &[&CurveRow]) -> Option<(f64, f64, f64)> {
    let with: Vec<&&CurveRow> = rows.iter().filter(|r| r.full_hit_ratio.is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let n = with.len() as f64;
    let hit = with.iter().map(|r| r.hit_ratio_error.unwrap_or(0.0).abs()).sum::<f64>() / n;
    let per_request = with
        .iter()
        .map(|r| {
            let full = r.full_page_writes.unwrap_or(0) as f64;
            (r.page_writes as f64 - full).abs() / r.requests.max(1) as f64
        })
        .sum::<f64>()
        / n;
    let rel: Vec<f64> = with.iter().filter_map(|r| r.page_writes_error.map(f64::abs)).collect();
    let relative = if rel.is_empty() { 0.0 } else { rel.iter().sum::<f64>() / rel.len() as f64 };
    Some((hit, per_request, relative))
}
