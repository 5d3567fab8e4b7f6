//! Traces as columns: generated or read by the flashbuf readers into three byte buffers (pages
//! as little-endian `u64`, write flags as bytes, timestamps as little-endian `f64` microseconds,
//! NaN where a request has none), which the Python package views as numpy arrays; and the same
//! columns written back to a trace file that every flashbuf command reads.

use flashbuf_trace::{AccessKind, Format, Request, TraceSource, TraceSpec, create_writer};
use pyo3::prelude::*;
use pyo3::types::PyByteArray;

use crate::error;
use crate::run::read_options;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(write_trace, m)?)?;
    Ok(())
}

/// The three columns being filled.
#[derive(Default)]
struct Columns {
    page: Vec<u8>,
    is_write: Vec<u8>,
    time_us: Vec<u8>,
}

impl Columns {
    fn read_all(source: &mut dyn TraceSource) -> Result<Columns, String> {
        let mut c = Columns::default();
        let mut batch = Vec::with_capacity(1 << 16);
        while source.next_batch(&mut batch, 1 << 16).map_err(|e| e.to_string())? > 0 {
            for r in &batch {
                c.page.extend_from_slice(&r.page.to_le_bytes());
                c.is_write.push(u8::from(r.kind.is_write()));
                let t = r.time_us.map_or(f64::NAN, |t| t as f64);
                c.time_us.extend_from_slice(&t.to_le_bytes());
            }
        }
        Ok(c)
    }

    fn into_py<'py>(self, py: Python<'py>, label: String) -> ColumnBytes<'py> {
        (
            PyByteArray::new(py, &self.page),
            PyByteArray::new(py, &self.is_write),
            PyByteArray::new(py, &self.time_us),
            label,
        )
    }
}

type ColumnBytes<'py> = (Bound<'py, PyByteArray>, Bound<'py, PyByteArray>, Bound<'py, PyByteArray>, String);

/// Generates the trace of `spec` (`flashbuf gen`'s generators: `zipf,requests=1000,...`);
/// returns the columns and the generator's label.
#[pyfunction]
fn generate<'py>(py: Python<'py>, spec: &str) -> PyResult<ColumnBytes<'py>> {
    let parsed = TraceSpec::parse(&format!("gen:{spec}")).map_err(|e| error(e.to_string()))?;
    let TraceSpec::Generated(g) = &parsed else { unreachable!("a gen: specification is a generator") };
    g.validate().map_err(|e| error(e.to_string()))?;
    let label = g.label();
    let columns = py.detach(|| {
        let mut source = g.open().map_err(|e| e.to_string())?;
        Columns::read_all(source.as_mut())
    });
    Ok(columns.map_err(error)?.into_py(py, label))
}

/// Reads the trace `arg` (a path, or `FORMAT:PATH`) with the reader options of `flashbuf run`;
/// returns the columns and the trace's label (its file name).
#[pyfunction]
#[pyo3(signature = (arg, *, page_size, format, volume, time_unit, columns))]
fn read_trace<'py>(
    py: Python<'py>,
    arg: &str,
    page_size: u64,
    format: &str,
    volume: Option<u64>,
    time_unit: Option<&str>,
    columns: Option<&str>,
) -> PyResult<ColumnBytes<'py>> {
    let read = read_options(page_size, format, volume, time_unit, columns)?;
    let spec = TraceSpec::parse(arg).map_err(|e| error(format!("trace '{arg}': {e}")))?;
    if matches!(spec, TraceSpec::Generated(_)) {
        return Err(error(format!("trace '{arg}': a generator; use flashbuf.gen for generated traces")));
    }
    let result = py.detach(|| {
        let mut opened = spec.open(&read).map_err(|e| e.to_string())?;
        Columns::read_all(opened.source.as_mut())
    });
    Ok(result.map_err(error)?.into_py(py, spec.label()))
}

/// Writes the columns to `path`: flashbuf text for `.txt`, libCacheSim's oracleGeneral for
/// `.oracleGeneral`, flashbuf's binary format otherwise (as `flashbuf gen -o` chooses). `time_us`
/// may be absent; a NaN there is a request without timestamp. Returns the number of requests.
#[pyfunction]
#[pyo3(signature = (path, page, is_write, time_us, force))]
fn write_trace(
    py: Python<'_>,
    path: std::path::PathBuf,
    page: &[u8],
    is_write: &[u8],
    time_us: Option<&[u8]>,
    force: bool,
) -> PyResult<u64> {
    let n = is_write.len();
    if page.len() != 8 * n || time_us.is_some_and(|t| t.len() != 8 * n) {
        return Err(error(format!(
            "page, is_write and time_us must have one entry per request: {}, {n} and {} entries",
            page.len() / 8,
            time_us.map_or(n, |t| t.len() / 8)
        )));
    }
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let format = if name.ends_with(".txt") {
        Format::Text
    } else if name.contains(".oraclegeneral") || name.ends_with(".oracle") {
        Format::Oracle
    } else {
        Format::Binary
    };
    let result = py.detach(|| -> Result<u64, String> {
        let mut writer = create_writer(format, &path, force).map_err(|e| e.to_string())?;
        let mut batch: Vec<Request> = Vec::with_capacity(1 << 16);
        for start in (0..n).step_by(1 << 16) {
            batch.clear();
            for i in start..(start + (1 << 16)).min(n) {
                let p = u64::from_le_bytes(page[8 * i..8 * i + 8].try_into().expect("8 bytes"));
                let time = match time_us {
                    None => None,
                    Some(t) => {
                        let v = f64::from_le_bytes(t[8 * i..8 * i + 8].try_into().expect("8 bytes"));
                        if v.is_nan() {
                            None
                        } else if v >= 0.0 && v.fract() == 0.0 && v < 18_446_744_073_709_551_616.0 {
                            Some(v as u64)
                        } else {
                            return Err(format!(
                                "time_us[{i}] = {v}: a timestamp is a whole, non-negative number of microseconds \
                                 (NaN for none)"
                            ));
                        }
                    }
                };
                let kind = if is_write[i] != 0 { AccessKind::Write } else { AccessKind::Read };
                batch.push(Request { page: p, kind, time_us: time });
            }
            writer.write_batch(&batch).map_err(|e| e.to_string())?;
        }
        writer.finish().map_err(|e| e.to_string())
    });
    result.map_err(error)
}
