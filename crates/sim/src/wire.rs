//! Runs and result rows as JSON: a [`RunSpec`] sent to another process or machine is executed
//! there by [`crate::execute`], exactly as a local run, and its [`ResultRow`] comes back. The
//! Python package's Ray backend sends runs this way.
//!
//! A spec is written field by field with the text every part already round-trips through: the
//! trace as its command-line specification, the read options, the policy's label, the device's
//! serde form. A row is its serde form; its floating-point fields come back bit for bit (JSON
//! numbers are written shortest-exact and parsed correctly rounded).

use std::path::PathBuf;
use std::sync::Arc;

use flashbuf_flash::DeviceConfig;
use flashbuf_trace::{ColumnMap, Format, ReadOptions, TimeUnit, TraceSpec};
use serde::{Deserialize, Serialize};

use crate::buffer::WriteMiss;
use crate::job::RunSpec;
use crate::run::ResultRow;

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
enum WireTrace {
    Generated { spec: String },
    File { path: PathBuf, format: Option<String> },
    Stdin { format: Option<String> },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireRead {
    format: String,
    page_size: u64,
    volume: Option<u64>,
    time_unit: Option<String>,
    columns: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireSpec {
    trace: WireTrace,
    read: WireRead,
    trace_label: String,
    trace_pages: u64,
    footprint_pages: Option<u64>,
    remap: Option<u64>,
    policy: String,
    frames: u64,
    device: DeviceConfig,
    logical_pages: u64,
    write_miss: WriteMiss,
    check_every: Option<u64>,
    final_flush: bool,
    warmup: u64,
    interval: Option<u64>,
}

/// `spec` as one line of JSON.
pub fn spec_to_json(spec: &RunSpec) -> String {
    let format = |f: &Option<Format>| f.map(|f| f.to_string());
    let trace = match &spec.trace {
        TraceSpec::Generated(_) => WireTrace::Generated { spec: spec.trace.to_string() },
        TraceSpec::File { path, format: f } => WireTrace::File { path: path.clone(), format: format(f) },
        TraceSpec::Stdin { format: f } => WireTrace::Stdin { format: format(f) },
    };
    let r = &spec.read;
    let wire = WireSpec {
        trace,
        read: WireRead {
            format: r.format.to_string(),
            page_size: r.page_size,
            volume: r.volume,
            time_unit: r.time_unit.map(|t| t.to_string()),
            columns: r.columns.as_ref().map(|c| c.to_string()),
        },
        trace_label: spec.trace_label.clone(),
        trace_pages: spec.trace_pages,
        footprint_pages: spec.footprint_pages,
        remap: spec.remap,
        policy: spec.policy.label(),
        frames: spec.frames as u64,
        device: spec.device.clone(),
        logical_pages: spec.logical_pages,
        write_miss: spec.write_miss,
        check_every: spec.check_every,
        final_flush: spec.final_flush,
        warmup: spec.warmup,
        interval: spec.interval,
    };
    serde_json::to_string(&wire).expect("a run specification serialises")
}

/// The spec [`spec_to_json`] wrote.
pub fn spec_from_json(text: &str) -> Result<RunSpec, String> {
    let bad = |what: &str, e: String| format!("run specification: {what}: {e}");
    let w: WireSpec = serde_json::from_str(text).map_err(|e| bad("not valid", e.to_string()))?;
    let format =
        |f: Option<String>| f.map(|f| f.parse::<Format>()).transpose().map_err(|e| bad("trace format", e.to_string()));
    let trace = match w.trace {
        WireTrace::Generated { spec } => TraceSpec::parse(&spec).map_err(|e| bad("trace", e.to_string()))?,
        WireTrace::File { path, format: f } => TraceSpec::File { path, format: format(f)? },
        WireTrace::Stdin { format: f } => TraceSpec::Stdin { format: format(f)? },
    };
    let read = ReadOptions {
        format: w.read.format.parse().map_err(|e: flashbuf_trace::TraceError| bad("format", e.to_string()))?,
        page_size: w.read.page_size,
        volume: w.read.volume,
        time_unit: w
            .read
            .time_unit
            .map(|t| t.parse::<TimeUnit>())
            .transpose()
            .map_err(|e| bad("time unit", e.to_string()))?,
        columns: w
            .read
            .columns
            .map(|c| c.parse::<ColumnMap>().map(Arc::new))
            .transpose()
            .map_err(|e| bad("columns", e.to_string()))?,
    };
    let policy = w.policy.parse().map_err(|e: flashbuf_policy::PolicyError| bad("policy", e.to_string()))?;
    let frames = usize::try_from(w.frames).map_err(|_| bad("frames", w.frames.to_string()))?;
    Ok(RunSpec {
        trace,
        read,
        trace_label: w.trace_label,
        trace_pages: w.trace_pages,
        footprint_pages: w.footprint_pages,
        remap: w.remap,
        policy,
        frames,
        device: w.device,
        logical_pages: w.logical_pages,
        write_miss: w.write_miss,
        check_every: w.check_every,
        final_flush: w.final_flush,
        warmup: w.warmup,
        interval: w.interval,
    })
}

/// `row` as one line of JSON.
pub fn row_to_json(row: &ResultRow) -> String {
    serde_json::to_string(row).expect("a result row serialises")
}

/// The row [`row_to_json`] wrote.
pub fn row_from_json(text: &str) -> Result<ResultRow, String> {
    serde_json::from_str(text).map_err(|e| format!("result row: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_flash::{DeviceKind, Precondition};

    #[test]
    fn specs_round_trip_and_execute_to_the_same_row() {
        let mut specs = Vec::new();
        let mut a = RunSpec::new(
            TraceSpec::parse("gen:adlru-zipf,requests=5000,seed=9").unwrap(),
            50_000,
            "cflru:w=0.3".parse().unwrap(),
            300,
            DeviceConfig { kind: DeviceKind::Fast, log_blocks: 4, ..DeviceConfig::default() },
        );
        a.trace_label = "my label".into();
        a.footprint_pages = Some(4321);
        a.remap = Some(64);
        a.write_miss = WriteMiss::NoFetch;
        a.check_every = Some(1);
        a.final_flush = false;
        a.warmup = 100;
        a.interval = Some(1000);
        a.logical_pages = 50_048;
        specs.push(a);
        let mut b = RunSpec::new(
            TraceSpec::parse("msr:/data/hm_0.csv").unwrap(),
            0,
            "lru".parse().unwrap(),
            10,
            DeviceConfig { precondition: Precondition::Empty, ..DeviceConfig::default() },
        );
        b.read = ReadOptions {
            format: Format::Csv,
            page_size: 2048,
            volume: Some(3),
            time_unit: Some(TimeUnit::Nanos),
            columns: Some(Arc::new("offset=5,size=6,op=4,time=1,write=Write".parse().unwrap())),
        };
        specs.push(b);
        specs.push(RunSpec::new(
            TraceSpec::parse("-").unwrap(),
            0,
            "bp-ref".parse().unwrap(),
            1,
            DeviceConfig::default(),
        ));
        for s in &specs {
            let back = spec_from_json(&spec_to_json(s)).unwrap();
            assert_eq!(format!("{back:?}"), format!("{s:?}"));
            assert_eq!(back.fingerprint(), s.fingerprint());
        }
        let row = crate::execute(&specs[0], &mut |_| {}).unwrap();
        let again = crate::execute(&spec_from_json(&spec_to_json(&specs[0])).unwrap(), &mut |_| {}).unwrap();
        let timeless =
            |r: &ResultRow| ResultRow { elapsed_s: 0.0, cpu_s: 0.0, runtime_s: 0.0, requests_per_s: 0.0, ..r.clone() };
        assert_eq!(timeless(&again), timeless(&row));
        assert_eq!(row_from_json(&row_to_json(&row)).unwrap(), row);
    }

    #[test]
    fn rows_keep_every_float_bit_for_bit() {
        let trace = TraceSpec::parse("gen:zipf,requests=3000,pages=700").unwrap();
        let spec = RunSpec::new(trace, 700, "arc".parse().unwrap(), 77, DeviceConfig::default());
        let mut row = crate::execute(&spec, &mut |_| {}).unwrap();
        for (i, x) in [0.1 + 0.2, 1.0 / 3.0, 2.0f64.sqrt(), 1e-300, 123456.789e10, f64::MIN_POSITIVE].iter().enumerate()
        {
            row.hit_ratio = *x;
            row.erase_count_std = x * (i as f64 + 1.0);
            let back = row_from_json(&row_to_json(&row)).unwrap();
            assert_eq!(
                (back.hit_ratio.to_bits(), back.erase_count_std.to_bits()),
                (row.hit_ratio.to_bits(), row.erase_count_std.to_bits())
            );
        }
        assert!(spec_from_json("{\"trace\": 1}").unwrap_err().starts_with("run specification: not valid"));
    }
}
