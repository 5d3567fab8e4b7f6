//! Runs of a policy that is not in the registry: a policy written in Python (through the
//! binding in `python/`), or any [`Replacer`] value built in code.
//!
//! A registered policy is named by a [`flashbuf_policy::PolicyConfig`] inside its [`RunSpec`];
//! a custom one cannot be, so it travels beside the spec: a [`CustomPolicy`] names it (label,
//! name, the block size it reasons about) and the [`Replacer`] value itself is handed to
//! [`execute_custom`]. Everything else is the registered policies' path: the spec's trace is
//! opened and renumbered as [`crate::execute_group`] does, its device is built from the spec,
//! the run is a [`crate::Stepper`] over the same [`crate::Buffer`] ([`crate::step::stepper_of`]),
//! and the rows are [`ResultRow::of_run`]'s with the policy columns and the run identity
//! replaced.
//!
//! The spec's own `policy` field is not run; [`CustomPolicy::spec_policy`] is what the spec
//! should carry (it only sizes the memory estimate of [`RunSpec::memory_bytes`]).

use flashbuf_policy::{PolicyConfig, Replacer};
use flashbuf_trace::{Remapped, TraceSource};

use crate::job::{JobError, RunSpec};
use crate::run::{RunError, RunOutput, next_uses};
use crate::{BATCH, ResultRow};

/// A policy outside the registry, as result rows name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomPolicy {
    /// The `policy` column (the label with parameters, if the policy has any).
    pub label: String,
    /// The `policy_name` column.
    pub name: String,
    /// Pages of the spatial unit the policy reasons about (a flash block or a cluster), which
    /// address remapping keeps whole, as [`PolicyConfig::block_pages`] says for registered
    /// policies.
    pub block_pages: Option<u64>,
}

impl CustomPolicy {
    /// The policy a spec of a custom run carries in its `policy` field: LRU, whose per-frame
    /// memory the estimate of [`RunSpec::memory_bytes`] uses (the custom policy's own memory is
    /// not known to the simulator).
    pub fn spec_policy() -> PolicyConfig {
        PolicyConfig::with_defaults("lru").expect("lru is registered")
    }

    /// The run identity of `spec` run with this policy: [`RunSpec::fingerprint`] extended by
    /// the policy's label.
    pub fn fingerprint(&self, spec: &RunSpec) -> String {
        let text = format!("{}|custom:{}", spec.fingerprint(), self.label);
        let a = crc32c::crc32c(text.as_bytes());
        let b = crc32c::crc32c_append(0x9e37_79b9, text.as_bytes());
        format!("{a:08x}{b:08x}")
    }

    /// The row of a whole run of `spec` with this policy.
    pub fn row(&self, spec: &RunSpec, out: &RunOutput) -> ResultRow {
        let mut row = ResultRow::of_run(spec, out);
        self.relabel(spec, &mut row);
        row
    }

    /// The interval rows of a run of `spec` with this policy.
    pub fn interval_rows(&self, spec: &RunSpec, out: &RunOutput) -> Vec<ResultRow> {
        let mut rows = ResultRow::of_intervals(spec, out);
        for r in &mut rows {
            self.relabel(spec, r);
        }
        rows
    }

    fn relabel(&self, spec: &RunSpec, row: &mut ResultRow) {
        row.policy.clone_from(&self.label);
        row.policy_name.clone_from(&self.name);
        row.run_id = self.fingerprint(spec);
    }

    fn run_error(&self, spec: &RunSpec, source: RunError) -> JobError {
        JobError::Run { policy: self.label.clone(), trace: spec.trace_label.clone(), frames: spec.frames, source }
    }
}

/// Executes `spec` with `policy` (named by `custom`) in place of `spec.policy`, on the calling
/// thread: the spec's trace, renumbering, device, buffer size and options. `progress` receives
/// the number of requests of each batch simulated.
pub fn execute_custom<R: Replacer>(
    spec: &RunSpec,
    custom: &CustomPolicy,
    policy: R,
    progress: &mut dyn FnMut(u64),
) -> Result<RunOutput, JobError> {
    let trace_error = |source| JobError::Trace { trace: spec.trace_label.clone(), source };
    let device = spec.device.build(spec.logical_pages).map_err(|source| JobError::Device {
        device: spec.device.label(),
        pages: spec.logical_pages,
        source,
    })?;
    let mut stepper = crate::step::stepper_of(policy, device, &spec.options())
        .map_err(|e| custom.run_error(spec, RunError::Sim(e)))?;
    let opened = spec.trace.open(&spec.read).map_err(trace_error)?;
    let mut source: Box<dyn TraceSource> = match spec.remap {
        Some(extent) => Box::new(Remapped::new(opened.source, extent)),
        None => opened.source,
    };
    let sim = |e| custom.run_error(spec, RunError::Sim(e));
    if stepper.needs_future() {
        let all = flashbuf_trace::collect(source.as_mut()).map_err(trace_error)?;
        let next = next_uses(&all);
        for (chunk, next) in all.chunks(BATCH).zip(next.chunks(BATCH)) {
            stepper.feed(chunk, Some(next)).map_err(sim)?;
            progress(chunk.len() as u64);
        }
    } else {
        let mut batch = Vec::with_capacity(BATCH);
        while source.next_batch(&mut batch, BATCH).map_err(trace_error)? > 0 {
            stepper.feed(&batch, None).map_err(sim)?;
            progress(batch.len() as u64);
        }
    }
    stepper.finish().map_err(sim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_flash::{DeviceConfig, DeviceKind};
    use flashbuf_trace::TraceSpec;

    fn spec(policy: &str) -> RunSpec {
        let trace = TraceSpec::parse("gen:zipf,requests=20000,pages=2000,seed=3").unwrap();
        let device = DeviceConfig { kind: DeviceKind::Bast, ..DeviceConfig::default() };
        let mut s = RunSpec::new(trace, 2048, policy.parse().unwrap(), 100, device);
        s.logical_pages = 2048;
        s
    }

    /// A registered policy run as a custom one gives the registered run's row, but for the
    /// policy columns and the run identity.
    #[test]
    fn a_registered_policy_run_as_custom_counts_exactly_the_same() {
        for name in ["lru", "bplru:ppb=4", "min"] {
            let registered = spec(name);
            let expected = crate::execute(&registered, &mut |_| {}).unwrap();
            let custom = CustomPolicy { label: format!("my-{name}"), name: "mine".into(), block_pages: None };
            let mut as_custom = spec(name);
            as_custom.policy = CustomPolicy::spec_policy();
            let policy: flashbuf_policy::PolicyConfig = name.parse().unwrap();
            struct Exec<'a>(&'a RunSpec, &'a CustomPolicy);
            impl flashbuf_policy::PolicyVisitor for Exec<'_> {
                type Output = Result<RunOutput, JobError>;
                fn visit<R: Replacer>(self, policy: R) -> Self::Output {
                    execute_custom(self.0, self.1, policy, &mut |_| {})
                }
            }
            let out = policy.build(100, Exec(&as_custom, &custom)).unwrap();
            let row = custom.row(&as_custom, &out);
            assert_eq!((row.policy.as_str(), row.policy_name.as_str()), (custom.label.as_str(), "mine"));
            assert_ne!(row.run_id, expected.run_id);
            assert_eq!(
                (row.hits, row.page_reads, row.page_writes, row.padding_writes, row.erases, row.merges_full),
                (
                    expected.hits,
                    expected.page_reads,
                    expected.page_writes,
                    expected.padding_writes,
                    expected.erases,
                    expected.merges_full
                ),
                "{name}"
            );
        }
    }
}
