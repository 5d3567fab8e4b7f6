//! The runs of `flashbuf run` (and of `flashbuf.run` in Python): every trace × device × policy ×
//! buffer size, in that order, each trace prepared once ([`crate::prepare`]).
//!
//! [`plan_runs`] turns what the user asked into [`RunSpec`]s, with the checks `flashbuf run`
//! makes before any run starts (trace specifications, the extent of the compact space, the
//! warm-up against the trace's length, every device against every trace, buffer sizes, memory)
//! and the same messages. Policies are registered ones or custom ones ([`crate::custom`]): a
//! custom policy's runs are planned like the others and executed by the caller, which holds the
//! policy values.

use flashbuf_flash::{DeviceConfig, DeviceKind};
use flashbuf_policy::PolicyConfig;
use flashbuf_trace::{ReadOptions, SummaryCache, TraceSpec};

use crate::buffer::WriteMiss;
use crate::custom::CustomPolicy;
use crate::job::RunSpec;
use crate::prepare::{Ask, Needs, PrepareEvent, RemapMode, Warmup, prepare};
use crate::sweep::BufferSize;

/// A policy of a plan: registered, or custom (run by the caller).
#[derive(Clone, Debug, PartialEq)]
pub enum PolicySlot {
    /// A registered policy.
    Registered(PolicyConfig),
    /// A policy outside the registry.
    Custom(CustomPolicy),
}

/// A trace of a plan: a command-line trace argument, with an optional label replacing the
/// trace's own in result rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceInput {
    /// The trace as `flashbuf run --trace` takes it (`gen:SPEC`, `FORMAT:PATH`, a path, `-`).
    pub arg: String,
    /// The label in result rows (default: [`TraceSpec::label`]).
    pub label: Option<String>,
    /// Whether the summary cache may be used for this trace (off for temporary files).
    pub cache: bool,
}

impl TraceInput {
    /// A trace argument with its own label, the cache on.
    pub fn new(arg: impl Into<String>) -> Self {
        TraceInput { arg: arg.into(), label: None, cache: true }
    }
}

/// Everything of a plan but its traces and policies; [`Default`] is `flashbuf run`'s defaults
/// except for the buffer sizes (which have no default here).
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// How trace files are read.
    pub read: ReadOptions,
    /// Buffer sizes.
    pub buffers: Vec<BufferSize>,
    /// Devices (each once).
    pub devices: Vec<DeviceConfig>,
    /// Logical capacity of the devices in pages (default: the trace's page space).
    pub capacity: Option<u64>,
    /// What a write miss does.
    pub write_miss: WriteMiss,
    /// Page numbering.
    pub remap: RemapMode,
    /// Requests run before counting.
    pub warmup: Warmup,
    /// One row per this many requests.
    pub interval: Option<u64>,
    /// Check every invariant after every request.
    pub check: bool,
    /// Write back the dirty pages left at the end.
    pub final_flush: bool,
    /// Where trace summaries are cached.
    pub cache: SummaryCache,
    /// The machine's memory in bytes: a run that needs more is refused.
    pub memory_bytes: u64,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            read: ReadOptions::default(),
            buffers: Vec::new(),
            devices: vec![DeviceConfig::default()],
            capacity: None,
            write_miss: WriteMiss::Fetch,
            remap: RemapMode::Auto,
            warmup: Warmup::default(),
            interval: None,
            check: false,
            final_flush: true,
            cache: SummaryCache::from_env(),
            memory_bytes: crate::sweep::total_memory(),
        }
    }
}

/// One planned run.
#[derive(Clone, Debug)]
pub struct PlannedRun {
    /// What to run (for a custom policy, `spec.policy` is [`CustomPolicy::spec_policy`]).
    pub spec: RunSpec,
    /// Index of the run's policy in the plan's policy list.
    pub policy: usize,
    /// Requests of the trace, when known (progress; 0 otherwise).
    pub requests: u64,
}

/// What [`plan_runs`] reports while it prepares a trace.
#[derive(Debug)]
pub enum PlanProgress<'a> {
    /// Preparing this trace (its label) starts.
    Trace(&'a str),
    /// An event of its preparation.
    Prepare(&'a str, PrepareEvent<'a>),
}

/// Splits a policy list such as `lru,cflru:w=0.25,arc` or `cflru:w=0.25,cfdc:pw=0.5,cluster=32`
/// (the syntax of `flashbuf run --policy`): items are separated by commas; an item of the form
/// `key=value` (without a `:`) continues the parameter list of the policy before it; the lists
/// of `args` are concatenated.
pub fn parse_policies(args: &[String]) -> Result<Vec<PolicyConfig>, String> {
    let mut specs: Vec<String> = Vec::new();
    for arg in args {
        for item in arg.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item.contains('=') && !item.contains(':') {
                let Some(last) = specs.last_mut() else {
                    return Err(format!("'{item}' is a parameter but no policy comes before it"));
                };
                last.push(if last.contains(':') { ',' } else { ':' });
                last.push_str(item);
            } else {
                specs.push(item.to_string());
            }
        }
    }
    if specs.is_empty() {
        return Err(format!("no policy given; valid policies: {}", PolicyConfig::valid_names()));
    }
    specs.iter().map(|s| s.parse::<PolicyConfig>().map_err(|e| e.to_string())).collect()
}

/// Parses `512,1024,2MB,16MiB,5%` into buffer sizes (the syntax of `flashbuf run --buffer`, see
/// [`BufferSize`]).
pub fn parse_buffers(arg: &str) -> Result<Vec<BufferSize>, String> {
    let mut out = Vec::new();
    for item in arg.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        out.push(item.parse::<BufferSize>().map_err(|m| format!("bad buffer size '{item}': {m}"))?);
    }
    if out.is_empty() {
        return Err("no buffer size given".into());
    }
    Ok(out)
}

/// Joins the messages of an error chain, outermost first, by `": "`, leaving out a message the
/// text so far already holds: how the command line prints an error and its contexts.
pub fn render_chain(chain: &[String]) -> String {
    let mut msg = String::new();
    for c in chain {
        if msg.is_empty() {
            msg.clone_from(c);
        } else if !msg.contains(c.as_str()) {
            msg.push_str(": ");
            msg.push_str(c);
        }
    }
    msg
}

/// The messages of `e` and its sources, outermost first.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut chain = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        chain.push(s.to_string());
        source = s.source();
    }
    chain
}

/// `e` under the contexts `outer` (outermost first), rendered as by [`render_chain`].
fn in_context(outer: &[&str], e: &(dyn std::error::Error + 'static)) -> String {
    let mut chain: Vec<String> = outer.iter().map(|s| s.to_string()).collect();
    chain.extend(error_chain(e));
    render_chain(&chain)
}

fn join(context: &str, message: &str) -> String {
    render_chain(&[context.to_string(), message.to_string()])
}

/// The extent of the compact space for `policies` over `devices` (see
/// [`crate::prepare::extent_pages`]), custom policies' block sizes included.
pub fn extent_for(policies: &[PolicySlot], devices: &[DeviceConfig]) -> Result<u64, String> {
    let registered: Vec<PolicyConfig> = policies
        .iter()
        .filter_map(|p| match p {
            PolicySlot::Registered(c) => Some(c.clone()),
            PolicySlot::Custom(_) => None,
        })
        .collect();
    let base = crate::prepare::extent_pages(&registered, devices)?;
    let custom = policies.iter().filter_map(|p| match p {
        PolicySlot::Custom(c) => c.block_pages,
        PolicySlot::Registered(_) => None,
    });
    flashbuf_trace::extent_pages_for(std::iter::once(base).chain(custom))
        .filter(|&e| e <= 1 << 24)
        .ok_or_else(|| "the block sizes of the policies and devices have no common multiple below 2^24 pages".into())
}

/// Plans the runs of `traces` × `o.devices` × `policies` × `o.buffers`, in that order, with the
/// checks and messages of `flashbuf run` (see the module documentation). `progress` hears of
/// every trace prepared.
pub fn plan_runs(
    traces: &[TraceInput],
    policies: &[PolicySlot],
    o: &PlanOptions,
    progress: &mut (dyn FnMut(PlanProgress<'_>) + Send),
) -> Result<Vec<PlannedRun>, String> {
    if o.interval == Some(0) {
        return Err("--interval must be at least 1 request".into());
    }
    if policies.is_empty() {
        return Err(format!("no policy given; valid policies: {}", PolicyConfig::valid_names()));
    }
    if o.buffers.is_empty() {
        return Err("no buffer size given".into());
    }
    let extent = extent_for(policies, &o.devices)?;
    let needs = Needs::of(&o.buffers, &o.devices, o.capacity, o.warmup);
    if traces.iter().filter(|t| TraceSpec::parse(&t.arg).is_ok_and(|s| !s.rereadable())).count() > 1 {
        return Err("standard input can be given only once".into());
    }
    let disabled = SummaryCache::disabled();
    let mut runs = Vec::new();
    for t in traces {
        let context = format!("trace '{}'", t.arg);
        let spec = TraceSpec::parse(&t.arg).map_err(|e| in_context(&[&context], &e))?;
        if let TraceSpec::Generated(g) = &spec {
            g.validate().map_err(|e| in_context(&[&context], &e))?;
        }
        let label = t.label.clone().unwrap_or_else(|| spec.label());
        progress(PlanProgress::Trace(&label));
        let ask = Ask { needs, remap: o.remap, extent_pages: extent };
        let cache = if t.cache { &o.cache } else { &disabled };
        let prepared = prepare(&spec, &o.read, &label, ask, cache, &mut |e| progress(PlanProgress::Prepare(&label, e)))
            .map_err(|e| in_context(&[], &e))?;
        let warmup = o.warmup.requests(prepared.requests).map_err(|m| join(&label, &m))?;
        for device in &o.devices {
            let logical_pages = prepared.logical_pages(device, o.capacity)?;
            if device.kind != DeviceKind::Ideal
                && let Err(e) = device.physical_blocks(logical_pages)
            {
                let inner = format!("device {} for {logical_pages} logical pages", device.label());
                return Err(in_context(&[&format!("trace {label}"), &inner], &e));
            }
            for (index, policy) in policies.iter().enumerate() {
                let config = match policy {
                    PolicySlot::Registered(c) => c.clone(),
                    PolicySlot::Custom(_) => CustomPolicy::spec_policy(),
                };
                for b in &o.buffers {
                    let frames = prepared.frames(*b).map_err(|m| join(&label, &m))?;
                    let mut spec = prepared.run_spec(&config, frames, device, logical_pages);
                    spec.write_miss = o.write_miss;
                    spec.check_every = o.check.then_some(1);
                    spec.final_flush = o.final_flush;
                    spec.warmup = warmup;
                    spec.interval = o.interval;
                    spec.check_memory(o.memory_bytes)?;
                    runs.push(PlannedRun { spec, policy: index, requests: prepared.requests.unwrap_or(0) });
                }
            }
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(buffers: &str) -> PlanOptions {
        PlanOptions {
            buffers: buffers.split(',').map(|b| b.parse().unwrap()).collect(),
            cache: SummaryCache::disabled(),
            ..PlanOptions::default()
        }
    }

    #[test]
    fn runs_come_in_trace_device_policy_buffer_order() {
        let traces = [TraceInput::new("gen:uniform,requests=1000,pages=100"), TraceInput::new("gen:zipf,pages=50")];
        let policies = [
            PolicySlot::Registered("lru".parse().unwrap()),
            PolicySlot::Custom(CustomPolicy { label: "py".into(), name: "py".into(), block_pages: Some(4) }),
        ];
        let mut o = options("10,50%");
        o.devices.push(DeviceConfig { kind: DeviceKind::Ideal, ..DeviceConfig::default() });
        let runs = plan_runs(&traces, &policies, &o, &mut |_| {}).unwrap();
        assert_eq!(runs.len(), 2 * 2 * 2 * 2);
        let r = &runs[5];
        assert_eq!(
            (r.spec.trace_label.as_str(), r.spec.device.kind, r.policy, r.spec.frames),
            ("uniform,requests=1000,pages=100,write-ratio=0.5,seed=42", DeviceKind::Ideal, 0, 50)
        );
        assert_eq!(runs[6].spec.policy, CustomPolicy::spec_policy());
        assert_eq!(runs[6].requests, 1000);
    }

    #[test]
    fn policy_and_buffer_lists_read_as_on_the_command_line() {
        let labels = |a: &[&str]| -> Vec<String> {
            let a: Vec<String> = a.iter().map(|s| s.to_string()).collect();
            parse_policies(&a).unwrap().iter().map(|p| p.label()).collect()
        };
        assert_eq!(
            labels(&["lru-2:history=2,clock", "2q:kin=0.3,kout=0.6"]),
            ["lru-2:history=2", "clock", "2q:kin=0.3,kout=0.6"]
        );
        assert_eq!(labels(&["2q,kin=0.3"]), ["2q:kin=0.3,kout=0.5"]);
        assert!(parse_policies(&["kin=3".into()]).unwrap_err().contains("no policy comes before"));
        assert!(parse_policies(&["lru,nope".into()]).unwrap_err().contains("unknown policy 'nope'"));
        assert_eq!(parse_buffers(" 512, 1MB,5%").unwrap().len(), 3);
        assert!(parse_buffers("12XB").unwrap_err().starts_with("bad buffer size '12XB': "));
        assert_eq!(parse_buffers(" , ").unwrap_err(), "no buffer size given");
    }

    #[test]
    fn mistakes_are_refused_with_the_command_line_messages() {
        let lru = [PolicySlot::Registered("lru".parse().unwrap())];
        let e = plan_runs(&[TraceInput::new("gen:nope")], &lru, &options("10"), &mut |_| {}).unwrap_err();
        assert!(e.starts_with("trace 'gen:nope': "), "{e}");
        let mut o = options("10");
        o.interval = Some(0);
        let e = plan_runs(&[TraceInput::new("gen:uniform")], &lru, &o, &mut |_| {}).unwrap_err();
        assert_eq!(e, "--interval must be at least 1 request");
        let e = plan_runs(&[TraceInput::new("gen:uniform")], &[], &options("10"), &mut |_| {}).unwrap_err();
        assert!(e.starts_with("no policy given; valid policies: lru"), "{e}");
        let mut o = options("10");
        o.warmup = Warmup::Requests(5);
        o.capacity = Some(3);
        let e = plan_runs(&[TraceInput::new("gen:uniform,requests=100,pages=10")], &lru, &o, &mut |_| {}).unwrap_err();
        assert!(e.contains("--capacity 3 pages is smaller than the trace's page space of 10 pages"), "{e}");
    }
}
