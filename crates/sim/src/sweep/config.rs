//! The TOML sweep configuration: parsing with locations, validation, expansion into runs.
//!
//! ```toml
//! output = "results/zipf"                 # directory of results.csv and results.jsonl
//! traces = ["gen:adlru-zipf", { gen = "zipf", requests = 100000, seed = [1, 2, 3] }]
//! policies = ["lru", "arc", { name = "cflru", w = [0.1, 0.25, 0.5] }]
//! buffers = [512, 1024, "4MB", "5%"]
//! devices = ["ideal", { kind = ["bast", "fast"], preset = "ref", log_blocks = [4, 8, 16] }]
//! write_miss = "fetch"
//! ```
//!
//! Every list element is either the string a user would type on the command line or a table
//! whose list-valued keys multiply (a cross product in the order the keys are written). The full
//! format is documented in `docs/sweeps.md`. Relative paths (trace files, `output`) are relative
//! to the directory of the configuration file.
//!
//! Everything that can be checked without reading a trace is checked by [`SweepConfig::parse`]:
//! unknown keys, policies, parameters and their values, generator specifications, device fields
//! and their values (each distinct device is built once at the smallest size), that trace files
//! exist, that trace labels are unique. [`SweepConfig::plan`] reads each trace file once to learn
//! its size and then checks buffer sizes and device sizes against every trace. Errors name the
//! configuration file, the line and column of the offending value and the valid choices.

use std::ops::Range;
use std::path::{Path, PathBuf};

use flashbuf_flash::{DeviceConfig, DeviceKind, Precondition};
use flashbuf_policy::PolicyConfig;
use flashbuf_trace::{ColumnMap, Format, GenKind, GenSpec, ReadOptions, SummaryCache, TimeUnit, TraceSpec};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::buffer_size::BufferSize;
use super::{ConfigError, Sweep, SweepError, SweepRun};
use crate::buffer::WriteMiss;
use crate::prepare::{Ask, Needs, PrepareEvent, RemapMode, Warmup, extent_pages, prepare};

/// A position in the configuration file (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Line.
    pub line: usize,
    /// Column, in characters.
    pub column: usize,
}

/// A value with the place in the configuration that gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub at: Location,
}

/// One trace of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEntry {
    /// The trace (relative file paths already resolved against the configuration's directory).
    pub spec: TraceSpec,
    /// How to read it.
    pub read: ReadOptions,
    /// Its label in result rows.
    pub label: String,
    /// Where it was written.
    pub at: Location,
}

/// A parsed and checked sweep configuration: the lists whose cross product is the sweep.
#[derive(Clone, Debug)]
pub struct SweepConfig {
    /// The configuration file (for messages).
    pub path: PathBuf,
    /// Optional description (`name`).
    pub name: Option<String>,
    /// Traces, expanded.
    pub traces: Vec<TraceEntry>,
    /// Policies, expanded, each label once.
    pub policies: Vec<PolicyConfig>,
    /// Buffer sizes.
    pub buffers: Vec<Located<BufferSize>>,
    /// Devices, expanded.
    pub devices: Vec<Located<DeviceConfig>>,
    /// Write-miss modes.
    pub write_miss: Vec<WriteMiss>,
    /// Check every invariant after every `n` requests (debugging).
    pub check_every: Option<u64>,
    /// Write back the dirty pages left at the end of each run (default true).
    pub final_flush: bool,
    /// Output directory, resolved against the configuration's directory.
    pub output: Option<PathBuf>,
    /// Page numbering (default `auto`; see [`crate::prepare`]).
    pub remap: RemapMode,
    /// Requests run before counting starts in every run (default none).
    pub warmup: Warmup,
    /// Where trace summaries are cached (default: the environment's, see
    /// [`SummaryCache::from_env`]).
    pub cache: SummaryCache,
}

/// What [`SweepConfig::plan`] reports while it reads trace files.
#[derive(Clone, Copy, Debug)]
pub enum PlanEvent<'a> {
    /// A trace file was opened; `how` says how it is read (detected format).
    Opened {
        /// Trace label.
        trace: &'a str,
        /// How it was opened.
        how: &'a str,
    },
    /// Requests scanned since the last event.
    Scanned(u64),
    /// The scan of the current file ended.
    ScanDone,
    /// A trace's summary was stored in the cache.
    Stored(&'a Path),
    /// A trace's summary could not be stored in the cache (the sweep goes on).
    StoreFailed(&'a str),
}

const TOP_KEYS: &[&str] = &[
    "name",
    "output",
    "traces",
    "policies",
    "buffers",
    "devices",
    "write_miss",
    "page_size",
    "format",
    "volume",
    "time_unit",
    "check_every",
    "final_flush",
    "columns",
    "remap",
    "warmup",
];
const FILE_TRACE_KEYS: &[&str] = &["trace", "label", "format", "volume", "time_unit", "page_size", "columns"];
const WRITE_MISS: &[(&str, WriteMiss)] = &[("fetch", WriteMiss::Fetch), ("no-fetch", WriteMiss::NoFetch)];

type Val<'i> = Spanned<DeValue<'i>>;

struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
    dir: PathBuf,
}

impl Ctx<'_> {
    fn loc(&self, span: Range<usize>) -> Location {
        let start = span.start.min(self.text.len());
        let before = &self.text[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Location { line, column: self.text[line_start..start].chars().count() + 1 }
    }

    fn err(&self, span: Range<usize>, message: impl Into<String>) -> ConfigError {
        ConfigError { path: self.path.to_path_buf(), at: Some(self.loc(span)), message: message.into() }
    }

    fn err_at(&self, at: Location, message: impl Into<String>) -> ConfigError {
        ConfigError { path: self.path.to_path_buf(), at: Some(at), message: message.into() }
    }

    fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() || self.dir.as_os_str().is_empty() { p.to_path_buf() } else { self.dir.join(p) }
    }
}

/// The elements of a list, or the value itself when it is not a list.
fn items<'v, 'i>(v: &'v Val<'i>) -> Vec<&'v Val<'i>> {
    match v.get_ref() {
        DeValue::Array(a) => a.iter().collect(),
        _ => vec![v],
    }
}

fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a number",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date",
        DeValue::Array(_) => "a list",
        DeValue::Table(_) => "a table",
    }
}

fn integer(v: &DeValue<'_>) -> Option<i128> {
    match v {
        DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix()).ok(),
        _ => None,
    }
}

/// A scalar as a policy or generator would read it from the command line.
fn scalar_text(v: &DeValue<'_>) -> Option<String> {
    match v {
        DeValue::String(s) => Some(s.to_string()),
        DeValue::Integer(_) => integer(v).map(|i| i.to_string()),
        DeValue::Float(f) => Some(f.as_str().to_string()),
        DeValue::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn to_toml(v: &DeValue<'_>) -> Option<toml::Value> {
    Some(match v {
        DeValue::String(s) => toml::Value::String(s.to_string()),
        DeValue::Integer(_) => toml::Value::Integer(i64::try_from(integer(v)?).ok()?),
        DeValue::Float(f) => toml::Value::Float(f.as_str().parse().ok()?),
        DeValue::Boolean(b) => toml::Value::Boolean(*b),
        DeValue::Datetime(d) => toml::Value::Datetime(*d),
        DeValue::Array(a) => toml::Value::Array(a.iter().map(|x| to_toml(x.get_ref())).collect::<Option<_>>()?),
        DeValue::Table(t) => toml::Value::Table(
            t.iter().map(|(k, x)| Some((k.get_ref().to_string(), to_toml(x.get_ref())?))).collect::<Option<_>>()?,
        ),
    })
}

/// Every combination of one value per dimension, the last dimension varying fastest.
fn cross<T: Clone>(dims: &[Vec<T>]) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = vec![Vec::new()];
    for dim in dims {
        let mut next = Vec::with_capacity(out.len() * dim.len());
        for prefix in &out {
            for v in dim {
                let mut p = prefix.clone();
                p.push(v.clone());
                next.push(p);
            }
        }
        out = next;
    }
    out
}

fn normalise(key: &str) -> String {
    key.replace('-', "_")
}

fn did_you_mean(valid: &[&str]) -> String {
    valid.join(", ")
}

impl SweepConfig {
    /// Parses and checks a configuration. `path` names the file in messages; relative paths in
    /// the configuration are resolved against its directory. No trace is read (file traces are
    /// only checked to exist).
    pub fn parse(text: &str, path: &Path) -> Result<SweepConfig, ConfigError> {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let cx = Ctx { path, text, dir };
        let doc = DeTable::parse(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            cx.err(span, format!("not valid TOML: {}", e.message().trim()))
        })?;
        let doc = doc.get_ref();

        let mut top: Vec<(String, &Spanned<std::borrow::Cow<'_, str>>, &Val<'_>)> = Vec::new();
        for (k, v) in doc.iter() {
            let key = normalise(k.get_ref());
            if !TOP_KEYS.contains(&key.as_str()) {
                return Err(
                    cx.err(k.span(), format!("unknown key '{}'; valid keys: {}", k.get_ref(), did_you_mean(TOP_KEYS)))
                );
            }
            top.push((key, k, v));
        }
        let get = |name: &str| top.iter().find(|(k, _, _)| k == name).map(|(_, _, v)| *v);
        let missing = |what: &str, hint: &str| ConfigError {
            path: path.to_path_buf(),
            at: None,
            message: format!("missing '{what}': {hint}"),
        };

        let name = get("name").map(|v| string(&cx, v, "name")).transpose()?;
        let output = get("output").map(|v| string(&cx, v, "output").map(|s| cx.resolve(Path::new(&s)))).transpose()?;

        let mut defaults = ReadOptions::default();
        if let Some(v) = get("page_size") {
            defaults.page_size = page_size(&cx, v)?;
        }
        if let Some(v) = get("format") {
            defaults.format = format(&cx, v)?;
        }
        if let Some(v) = get("volume") {
            defaults.volume = Some(volume(&cx, v)?);
        }
        if let Some(v) = get("time_unit") {
            defaults.time_unit = Some(time_unit(&cx, v)?);
        }
        if let Some(v) = get("columns") {
            defaults.columns = Some(columns(&cx, v)?);
        }
        let remap = match get("remap") {
            None => RemapMode::Auto,
            Some(v) => string(&cx, v, "remap")?.parse::<RemapMode>().map_err(|e| cx.err(v.span(), e))?,
        };
        let warmup = match get("warmup") {
            None => Warmup::default(),
            Some(v) => match v.get_ref() {
                DeValue::String(s) => s.parse::<Warmup>().map_err(|e| cx.err(v.span(), e))?,
                _ => match integer(v.get_ref()) {
                    Some(n) if n >= 0 && n <= u64::MAX as i128 => Warmup::Requests(n as u64),
                    _ => {
                        return Err(cx.err(
                            v.span(),
                            "warmup must be a whole number of requests or a percentage string like \"10%\"",
                        ));
                    }
                },
            },
        };
        let check_every = get("check_every")
            .map(|v| match integer(v.get_ref()) {
                Some(n) if n >= 1 && n <= u64::MAX as i128 => Ok(n as u64),
                _ => Err(cx.err(v.span(), "check_every must be a whole number of requests, at least 1")),
            })
            .transpose()?;
        let final_flush = match get("final_flush") {
            None => true,
            Some(v) => match v.get_ref() {
                DeValue::Boolean(b) => *b,
                _ => return Err(cx.err(v.span(), "final_flush must be true or false")),
            },
        };

        let traces_v = get("traces").ok_or_else(|| {
            missing("traces", "a list of trace files or generators, e.g. traces = [\"gen:adlru-zipf\"]")
        })?;
        let mut traces: Vec<TraceEntry> = Vec::new();
        for item in nonempty(&cx, traces_v, "traces")? {
            for t in trace_entries(&cx, item, &defaults)? {
                if let Some(other) = traces.iter().find(|o| o.label == t.label) {
                    if other.spec == t.spec && other.read == t.read {
                        continue; // the same trace twice
                    }
                    return Err(cx.err_at(
                        t.at,
                        format!(
                            "trace label '{}' is already used by the trace at line {}; give one of them a \
                             distinct label: {{ trace = \"...\", label = \"...\" }}",
                            t.label, other.at.line
                        ),
                    ));
                }
                traces.push(t);
            }
        }

        let policies_v = get("policies").ok_or_else(|| {
            missing("policies", "a list of policies, e.g. policies = [\"lru\", { name = \"cflru\", w = [0.25, 0.5] }]")
        })?;
        let mut policies: Vec<PolicyConfig> = Vec::new();
        for item in nonempty(&cx, policies_v, "policies")? {
            for p in policy_entries(&cx, item)? {
                if !policies.iter().any(|q| q.label() == p.label()) {
                    policies.push(p);
                }
            }
        }

        let buffers_v = get("buffers").ok_or_else(|| {
            missing(
                "buffers",
                "a list of buffer sizes in pages, bytes or percent, e.g. buffers = [512, \"4MB\", \"5%\"]",
            )
        })?;
        let mut buffers = Vec::new();
        for item in nonempty(&cx, buffers_v, "buffers")? {
            buffers.push(buffer(&cx, item)?);
        }

        let mut devices = Vec::new();
        match get("devices") {
            None => devices.push(Located { value: DeviceConfig::default(), at: Location { line: 1, column: 1 } }),
            Some(v) => {
                for item in nonempty(&cx, v, "devices")? {
                    devices.extend(device_entries(&cx, item)?);
                }
            }
        }

        let mut write_miss = Vec::new();
        match get("write_miss") {
            None => write_miss.push(WriteMiss::Fetch),
            Some(v) => {
                for item in nonempty(&cx, v, "write_miss")? {
                    let s = item.get_ref().as_str();
                    let w = WRITE_MISS.iter().find(|(n, _)| Some(*n) == s).map(|(_, w)| *w).ok_or_else(|| {
                        cx.err(item.span(), format!("unknown write-miss mode; valid modes: {}", write_miss_names()))
                    })?;
                    if !write_miss.contains(&w) {
                        write_miss.push(w);
                    }
                }
            }
        }

        Ok(SweepConfig {
            path: path.to_path_buf(),
            name,
            traces,
            policies,
            buffers,
            devices,
            write_miss,
            check_every,
            final_flush,
            output,
            remap,
            warmup,
            cache: SummaryCache::from_env(),
        })
    }

    /// Number of runs before traces are read (buffer sizes that coincide for a trace are counted
    /// twice here and run once).
    pub fn combinations(&self) -> usize {
        self.traces.len() * self.devices.len() * self.write_miss.len() * self.policies.len() * self.buffers.len()
    }

    /// Prepares every trace ([`crate::prepare`]: its summary from the cache or one streaming pass
    /// when the runs need it), checks buffer sizes and devices against every trace, and expands
    /// the cross product, in the order traces × devices × write-miss modes × policies × buffer
    /// sizes.
    pub fn plan(&self, observer: &mut (dyn FnMut(PlanEvent<'_>) + Send)) -> Result<Sweep, SweepError> {
        let cx = Ctx { path: &self.path, text: "", dir: PathBuf::new() };
        let mut runs = Vec::with_capacity(self.combinations());
        let devices: Vec<DeviceConfig> = self.devices.iter().map(|d| d.value.clone()).collect();
        let buffers: Vec<BufferSize> = self.buffers.iter().map(|b| b.value).collect();
        let extent =
            extent_pages(&self.policies, &devices).map_err(|e| cx.err_at(Location { line: 1, column: 1 }, e))?;
        let needs = Needs::of(&buffers, &devices, None, self.warmup);
        let memory = super::total_memory();
        for t in &self.traces {
            let mut forward = |e: PrepareEvent<'_>| match e {
                PrepareEvent::PassStarted(how) => observer(PlanEvent::Opened { trace: &t.label, how }),
                PrepareEvent::Scanned(n) => observer(PlanEvent::Scanned(n)),
                PrepareEvent::PassDone => observer(PlanEvent::ScanDone),
                PrepareEvent::Stored(p) => observer(PlanEvent::Stored(p)),
                PrepareEvent::StoreFailed(e) => observer(PlanEvent::StoreFailed(&e.to_string())),
            };
            let ask = Ask { needs, remap: self.remap, extent_pages: extent };
            let prepared = prepare(&t.spec, &t.read, &t.label, ask, &self.cache, &mut forward)
                .map_err(|e| cx.err_at(t.at, e.to_string()))?;
            let warmup = self
                .warmup
                .requests(prepared.requests)
                .map_err(|e| cx.err_at(t.at, format!("trace '{}': {e}", t.label)))?;
            let requests = prepared.requests.unwrap_or(0);
            for d in &self.devices {
                let logical_pages = prepared
                    .logical_pages(&d.value, None)
                    .map_err(|e| cx.err_at(d.at, format!("trace '{}': {e}", t.label)))?;
                if d.value.kind != DeviceKind::Ideal {
                    d.value.physical_blocks(logical_pages).map_err(|e| {
                        cx.err_at(
                            d.at,
                            format!("device {} for trace '{}' ({logical_pages} pages): {e}", d.value.label(), t.label),
                        )
                    })?;
                }
                for &write_miss in &self.write_miss {
                    for policy in &self.policies {
                        for b in &self.buffers {
                            let frames = prepared
                                .frames(b.value)
                                .map_err(|e| cx.err_at(b.at, format!("trace '{}': {e}", t.label)))?;
                            let mut spec = prepared.run_spec(policy, frames, &d.value, logical_pages);
                            spec.write_miss = write_miss;
                            spec.check_every = self.check_every;
                            spec.final_flush = self.final_flush;
                            spec.warmup = warmup;
                            spec.check_memory(memory)
                                .map_err(|e| cx.err_at(b.at, format!("trace '{}': {e}", t.label)))?;
                            runs.push(SweepRun::new(spec, requests));
                        }
                    }
                }
            }
        }
        let mut sweep = Sweep::new(runs)?;
        sweep.output.clone_from(&self.output);
        Ok(sweep)
    }
}

fn nonempty<'v, 'i>(cx: &Ctx<'_>, v: &'v Val<'i>, what: &str) -> Result<Vec<&'v Val<'i>>, ConfigError> {
    let list = items(v);
    if list.is_empty() {
        return Err(cx.err(v.span(), format!("'{what}' is an empty list")));
    }
    Ok(list)
}

fn string(cx: &Ctx<'_>, v: &Val<'_>, what: &str) -> Result<String, ConfigError> {
    v.get_ref()
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| cx.err(v.span(), format!("'{what}' must be a string, not {}", type_name(v.get_ref()))))
}

fn page_size(cx: &Ctx<'_>, v: &Val<'_>) -> Result<u64, ConfigError> {
    match integer(v.get_ref()) {
        Some(n) if n >= 1 && n <= u32::MAX as i128 => Ok(n as u64),
        _ => Err(cx.err(v.span(), "page_size must be a positive whole number of bytes, e.g. 4096")),
    }
}

fn volume(cx: &Ctx<'_>, v: &Val<'_>) -> Result<u64, ConfigError> {
    match integer(v.get_ref()) {
        Some(n) if n >= 0 && n <= u64::MAX as i128 => Ok(n as u64),
        _ => Err(cx.err(v.span(), "volume must be a whole number (the volume or disk number of the trace)")),
    }
}

fn format(cx: &Ctx<'_>, v: &Val<'_>) -> Result<Format, ConfigError> {
    string(cx, v, "format")?.parse::<Format>().map_err(|e| cx.err(v.span(), e.to_string()))
}

fn columns(cx: &Ctx<'_>, v: &Val<'_>) -> Result<std::sync::Arc<ColumnMap>, ConfigError> {
    let text = string(cx, v, "columns")?;
    text.parse::<ColumnMap>().map(std::sync::Arc::new).map_err(|e| cx.err(v.span(), e.to_string()))
}

fn time_unit(cx: &Ctx<'_>, v: &Val<'_>) -> Result<TimeUnit, ConfigError> {
    string(cx, v, "time_unit")?.parse::<TimeUnit>().map_err(|e| cx.err(v.span(), e.to_string()))
}

/// A trace given as a string: `gen:...`, `format:path` or a path.
fn trace_from_str(cx: &Ctx<'_>, v: &Val<'_>, s: &str) -> Result<TraceSpec, ConfigError> {
    let spec = TraceSpec::parse(s).map_err(|e| cx.err(v.span(), format!("trace '{s}': {e}")))?;
    Ok(match spec {
        TraceSpec::File { path, format } => {
            let path = cx.resolve(&path);
            if !path.is_file() {
                let why = if path.exists() { "is not a file" } else { "does not exist" };
                return Err(cx.err(
                    v.span(),
                    format!(
                        "trace file {} {why} (relative paths are relative to the configuration's directory; \
                         generators are written gen:KIND,key=value,... with KIND one of {})",
                        path.display(),
                        GenKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            TraceSpec::File { path, format }
        }
        generated => generated,
    })
}

fn trace_entries(cx: &Ctx<'_>, v: &Val<'_>, defaults: &ReadOptions) -> Result<Vec<TraceEntry>, ConfigError> {
    let at = cx.loc(v.span());
    match v.get_ref() {
        DeValue::String(s) => {
            let spec = trace_from_str(cx, v, s)?;
            Ok(vec![TraceEntry { label: spec.label(), spec, read: defaults.clone(), at }])
        }
        DeValue::Table(t) => {
            let has = |k: &str| t.iter().any(|(key, _)| normalise(key.get_ref()) == k);
            match (has("trace"), has("gen")) {
                (true, true) => Err(cx.err(v.span(), "a trace table has either 'trace' or 'gen', not both")),
                (true, false) => file_trace_table(cx, v, t, defaults).map(|e| vec![e]),
                (false, true) => gen_trace_table(cx, v, t, defaults),
                (false, false) => Err(cx.err(
                    v.span(),
                    "a trace table needs 'trace' (a file or \"gen:...\") or 'gen' (a generator kind or preset), \
                     e.g. { trace = \"hm_0.csv\", volume = 0 } or { gen = \"zipf\", seed = [1, 2] }",
                )),
            }
        }
        other => Err(cx.err(
            v.span(),
            format!(
                "a trace is a string (\"gen:adlru-zipf\", \"msr:hm_0.csv\", a path) or a table, not {}",
                type_name(other)
            ),
        )),
    }
}

fn file_trace_table(
    cx: &Ctx<'_>,
    v: &Val<'_>,
    t: &DeTable<'_>,
    defaults: &ReadOptions,
) -> Result<TraceEntry, ConfigError> {
    let mut read = defaults.clone();
    let mut spec = None;
    let mut label = None;
    for (k, x) in t.iter() {
        match normalise(k.get_ref()).as_str() {
            "trace" => spec = Some(trace_from_str(cx, x, &string(cx, x, "trace")?)?),
            "label" => label = Some(string(cx, x, "label")?),
            "format" => read.format = format(cx, x)?,
            "volume" => read.volume = Some(volume(cx, x)?),
            "time_unit" => read.time_unit = Some(time_unit(cx, x)?),
            "page_size" => read.page_size = page_size(cx, x)?,
            "columns" => read.columns = Some(columns(cx, x)?),
            _ => {
                return Err(cx.err(
                    k.span(),
                    format!(
                        "unknown key '{}' in a trace table; valid keys: {}",
                        k.get_ref(),
                        did_you_mean(FILE_TRACE_KEYS)
                    ),
                ));
            }
        }
    }
    let spec = spec.expect("checked by the caller");
    Ok(TraceEntry { label: label.unwrap_or_else(|| spec.label()), spec, read, at: cx.loc(v.span()) })
}

fn gen_trace_table(
    cx: &Ctx<'_>,
    v: &Val<'_>,
    t: &DeTable<'_>,
    defaults: &ReadOptions,
) -> Result<Vec<TraceEntry>, ConfigError> {
    let mut read = defaults.clone();
    let mut label: Option<(String, Range<usize>)> = None;
    let mut kinds: Vec<String> = Vec::new();
    let mut dims: Vec<Vec<String>> = Vec::new(); // "key=value" alternatives per key
    for (k, x) in t.iter() {
        match normalise(k.get_ref()).as_str() {
            "gen" => {
                for item in nonempty(cx, x, "gen")? {
                    let s = string(cx, item, "gen")?;
                    gen_spec(&s).map_err(|e| cx.err(item.span(), e))?;
                    kinds.push(s);
                }
            }
            "label" => label = Some((string(cx, x, "label")?, x.span())),
            "page_size" => read.page_size = page_size(cx, x)?,
            "format" | "volume" | "time_unit" | "columns" => {
                return Err(cx.err(k.span(), format!("'{}' applies to trace files, not to generators", k.get_ref())));
            }
            _ => {}
        }
    }
    for (k, x) in t.iter() {
        if matches!(normalise(k.get_ref()).as_str(), "gen" | "label" | "page_size") {
            continue;
        }
        let key = k.get_ref().replace('_', "-");
        let mut alternatives = Vec::new();
        for item in nonempty(cx, x, &key)? {
            let value = scalar_text(item.get_ref()).ok_or_else(|| {
                cx.err(
                    item.span(),
                    format!("generator key '{key}' takes a number, string or boolean (or a list of them)"),
                )
            })?;
            let part = format!("{key}={value}");
            for kind in &kinds {
                gen_spec(&format!("{kind},{part}")).map_err(|e| {
                    let span = if e.contains("unknown key") { k.span() } else { item.span() };
                    cx.err(span, e)
                })?;
            }
            alternatives.push(part);
        }
        dims.push(alternatives);
    }
    let mut out = Vec::new();
    for kind in &kinds {
        for combo in cross(&dims) {
            let mut text = kind.clone();
            for part in &combo {
                text.push(',');
                text.push_str(part);
            }
            let g = gen_spec(&text).map_err(|e| cx.err(v.span(), format!("generator {text}: {e}")))?;
            let spec = TraceSpec::Generated(g);
            out.push(TraceEntry { label: spec.label(), spec, read: read.clone(), at: cx.loc(v.span()) });
        }
    }
    if let Some((l, span)) = label {
        if out.len() != 1 {
            return Err(cx.err(span, format!("'label' names one trace, but this table describes {}", out.len())));
        }
        out[0].label = l;
    }
    Ok(out)
}

fn gen_spec(s: &str) -> Result<GenSpec, String> {
    s.parse::<GenSpec>().map_err(|e| e.to_string())
}

fn policy_entries(cx: &Ctx<'_>, v: &Val<'_>) -> Result<Vec<PolicyConfig>, ConfigError> {
    match v.get_ref() {
        DeValue::String(s) => Ok(vec![s.parse::<PolicyConfig>().map_err(|e| cx.err(v.span(), e.to_string()))?]),
        DeValue::Table(t) => {
            let Some((_, names_v)) = t.iter().find(|(k, _)| k.get_ref() == "name") else {
                return Err(cx.err(
                    v.span(),
                    format!(
                        "a policy table needs 'name', e.g. {{ name = \"cflru\", w = [0.25, 0.5] }}; valid policies: {}",
                        PolicyConfig::valid_names()
                    ),
                ));
            };
            let mut bases = Vec::new();
            for item in nonempty(cx, names_v, "name")? {
                let name = string(cx, item, "name")?;
                let base = name.parse::<PolicyConfig>().map_err(|e| cx.err(item.span(), e.to_string()))?;
                bases.push(base);
            }
            let mut keys = Vec::new();
            let mut dims: Vec<Vec<(String, Range<usize>)>> = Vec::new();
            for (k, x) in t.iter() {
                if k.get_ref() == "name" {
                    continue;
                }
                let mut alternatives = Vec::new();
                for item in nonempty(cx, x, k.get_ref())? {
                    let value = scalar_text(item.get_ref()).ok_or_else(|| {
                        cx.err(
                            item.span(),
                            format!("parameter '{}' takes a number (or a list of numbers)", k.get_ref()),
                        )
                    })?;
                    alternatives.push((value, item.span()));
                }
                keys.push(k);
                dims.push(alternatives);
            }
            let mut out = Vec::new();
            for base in &bases {
                for combo in cross(&dims) {
                    let mut p = base.clone();
                    for (k, (value, span)) in keys.iter().zip(&combo) {
                        p.set(k.get_ref(), value).map_err(|e| {
                            let known = p.keys().iter().any(|d| d.key == k.get_ref());
                            cx.err(if known { span.clone() } else { k.span() }, e.to_string())
                        })?;
                    }
                    out.push(p);
                }
            }
            Ok(out)
        }
        other => Err(cx.err(
            v.span(),
            format!(
                "a policy is a string (\"cflru:w=0.5\") or a table ({{ name = \"cflru\", w = [0.25, 0.5] }}), not {}",
                type_name(other)
            ),
        )),
    }
}

fn buffer(cx: &Ctx<'_>, v: &Val<'_>) -> Result<Located<BufferSize>, ConfigError> {
    let at = cx.loc(v.span());
    let value = match v.get_ref() {
        DeValue::Integer(_) => match integer(v.get_ref()) {
            Some(n) if n >= 1 && n < u32::MAX as i128 => BufferSize::Pages(n as u64),
            _ => return Err(cx.err(v.span(), "a buffer size in pages must be between 1 and 2^32 - 2")),
        },
        DeValue::String(s) => s.parse::<BufferSize>().map_err(|e| cx.err(v.span(), e))?,
        other => {
            return Err(cx.err(
                v.span(),
                format!(
                    "a buffer size is a whole number of pages or a string like \"16MB\" or \"5%\", not {}",
                    type_name(other)
                ),
            ));
        }
    };
    if value == BufferSize::Pages(0) {
        return Err(cx.err(v.span(), "a buffer needs at least one page"));
    }
    Ok(Located { value, at })
}

fn device_entries(cx: &Ctx<'_>, v: &Val<'_>) -> Result<Vec<Located<DeviceConfig>>, ConfigError> {
    let at = cx.loc(v.span());
    let configs = match v.get_ref() {
        DeValue::String(s) => {
            let kind = s.parse::<DeviceKind>().map_err(|e| cx.err(v.span(), e.to_string()))?;
            vec![DeviceConfig { kind, ..DeviceConfig::default() }]
        }
        DeValue::Table(t) => {
            let mut keys = Vec::new();
            let mut dims: Vec<Vec<toml::Value>> = Vec::new();
            for (k, x) in t.iter() {
                let key = normalise(k.get_ref());
                let mut alternatives = Vec::new();
                for item in nonempty(cx, x, &key)? {
                    let value = device_value(&key, item.get_ref())
                        .map_err(|e| cx.err(item.span(), format!("device field '{key}': {e}")))?;
                    // Check the field alone, to point at it when it is wrong.
                    let mut single = toml::Table::new();
                    single.insert(key.clone(), value.clone());
                    if let Err(e) = toml::Value::Table(single).try_into::<DeviceConfig>() {
                        let unknown = e.message().contains("unknown field");
                        let span = if unknown { k.span() } else { item.span() };
                        return Err(cx.err(span, format!("device field '{key}': {}", e.message().trim())));
                    }
                    alternatives.push(value);
                }
                keys.push(key);
                dims.push(alternatives);
            }
            let mut out = Vec::new();
            for combo in cross(&dims) {
                let table: toml::Table = keys.iter().cloned().zip(combo).collect();
                let c: DeviceConfig = toml::Value::Table(table)
                    .try_into()
                    .map_err(|e| cx.err(v.span(), format!("device: {}", e.message().trim())))?;
                out.push(c);
            }
            out
        }
        other => {
            return Err(cx.err(
                v.span(),
                format!(
                    "a device is a kind (\"page\", \"bast\", ...) or a table ({{ kind = \"bast\", log_blocks = [4, 8] }}), not {}",
                    type_name(other)
                ),
            ));
        }
    };
    let mut out = Vec::new();
    for c in configs {
        // Build the smallest such device: every parameter check of the device crate runs now,
        // not in the middle of the sweep.
        let probe = DeviceConfig { precondition: Precondition::Empty, verify: false, ..c.clone() };
        probe.build(1).map_err(|e| cx.err_at(at, format!("device {}: {e}", c.label())))?;
        out.push(Located { value: c, at });
    }
    Ok(out)
}

/// A device field's value; `precondition` also accepts the command-line strings
/// (`aged:100000:7`).
fn device_value(key: &str, v: &DeValue<'_>) -> Result<toml::Value, String> {
    if let ("precondition", DeValue::String(s)) = (key, v) {
        let p = s.parse::<Precondition>().map_err(|e| e.to_string())?;
        return toml::Value::try_from(p).map_err(|e| e.to_string());
    }
    to_toml(v).ok_or_else(|| "value out of range".to_string())
}

/// The write-miss mode names, for messages.
pub(super) fn write_miss_names() -> String {
    WRITE_MISS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sweep::write_miss_name;

    fn parse(text: &str) -> Result<SweepConfig, ConfigError> {
        SweepConfig::parse(text, Path::new("t.toml")).map(|mut c| {
            c.cache = SummaryCache::disabled();
            c
        })
    }

    #[test]
    fn cross_product_varies_the_last_dimension_fastest() {
        let c = cross(&[vec![1, 2], vec![10, 20, 30]]);
        assert_eq!(c, vec![vec![1, 10], vec![1, 20], vec![1, 30], vec![2, 10], vec![2, 20], vec![2, 30]]);
        assert_eq!(cross::<u8>(&[]), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn lists_in_tables_multiply() {
        let c = parse(
            r#"
traces = [{ gen = "uniform", requests = 100, pages = [10, 20], seed = [1, 2, 3] }]
policies = ["lru", { name = ["cflru", "cflru-c"], w = [0.1, 0.5] }, "lru"]
buffers = [4, "8KB", "50%"]
devices = ["ideal", { kind = ["bast", "fast"], preset = "ref", log_blocks = [4, 8] }]
write_miss = ["fetch", "no-fetch"]
"#,
        )
        .unwrap();
        assert_eq!(c.traces.len(), 6);
        assert_eq!(c.traces[1].label, "uniform,requests=100,pages=10,write-ratio=0.5,seed=2");
        let labels: Vec<String> = c.policies.iter().map(|p| p.label()).collect();
        assert_eq!(labels, ["lru", "cflru:w=0.1", "cflru:w=0.5", "cflru-c:w=0.1", "cflru-c:w=0.5"]);
        assert_eq!(c.buffers.len(), 3);
        let devices: Vec<String> = c.devices.iter().map(|d| d.value.label()).collect();
        assert_eq!(devices, ["ideal/micron", "bast/ref/log4", "bast/ref/log8", "fast/ref/log4", "fast/ref/log8"]);
        assert_eq!(c.write_miss, [WriteMiss::Fetch, WriteMiss::NoFetch]);
        assert_eq!(c.combinations(), 6 * 5 * 3 * 5 * 2);
        let sweep = c.plan(&mut |_| {}).unwrap();
        // 50% of 10 pages is 5 pages, of 20 pages 10: no coincidence with 4 or 2 (8KB / 4096).
        assert_eq!(sweep.len(), c.combinations());
        assert_eq!(sweep.runs()[0].spec.frames, 4);
        assert_eq!(sweep.runs()[1].spec.frames, 2);
        assert_eq!(sweep.runs()[2].spec.frames, 5);
    }

    #[test]
    fn coinciding_buffer_sizes_run_once() {
        // 2,000 uniform requests over 100 pages touch all 100: 50% is 50 pages.
        let c = parse("traces = ['gen:uniform,requests=2000,pages=100']\npolicies = ['lru']\nbuffers = [50, '50%']\ndevices = ['ideal']").unwrap();
        assert_eq!(c.plan(&mut |_| {}).unwrap().len(), 1);
    }

    #[test]
    fn precondition_strings_and_devices_differing_outside_their_label() {
        let c = parse(
            "traces = ['gen:uniform,requests=10,pages=100']\npolicies = ['lru']\nbuffers = [5]\n\
             devices = [{ kind = 'page', precondition = ['empty', 'aged:100:7'] }, 'page']",
        )
        .unwrap();
        assert_eq!(c.devices[1].value.precondition, Precondition::Aged { writes: Some(100), seed: 7 });
        let sweep = c.plan(&mut |_| {}).unwrap();
        let labels: Vec<&str> = sweep.runs().iter().map(|r| r.key().device.as_str()).collect();
        assert_eq!(
            labels,
            [
                "page/micron/greedy/op7/precondition=empty",
                "page/micron/greedy/op7/precondition=aged:100:7",
                "page/micron/greedy/op7/precondition=sequential"
            ]
        );
    }

    #[test]
    fn write_miss_names_are_listed() {
        assert_eq!(write_miss_names(), "fetch, no-fetch");
        assert_eq!(write_miss_name(WriteMiss::NoFetch), "no-fetch");
    }
}
