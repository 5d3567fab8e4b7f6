//! The offline bounds against every policy and against the true optimum.
//!
//! * On random traces, no registered policy writes fewer pages, reads fewer pages or spends
//!   less device time (on the ideal device and on every FTL) than the bounds say (property
//!   test, both write-miss modes, with and without the final flush).
//! * On tiny traces, an exhaustive search over every schedule of flashbuf's buffer model (at a
//!   miss with a full buffer, evict any one buffered page, or — where allowed — bypass) finds the
//!   true optimum: the write bound *equals* the fewest writes of schedules that may bypass, and
//!   the read bound of a write buffer their fewest reads; with every missed page admitted, the optimum is at least
//!   MIN over the writes (the tighter bound) and at most what the offline policy `min-cost`
//!   writes; the least device time of either model is at least the time bound and, admitting,
//!   at most `min-cost`'s.

use std::collections::HashMap;

use flashbuf_flash::{Device, DeviceConfig, DeviceKind, IdealConfig, IdealDevice};
use flashbuf_policy::{POLICIES, PolicyConfig};
use flashbuf_sim::bound::{KeptTrace, TraceBounds};
use flashbuf_sim::{RunOptions, RunOutput, WriteMiss};
use flashbuf_trace::{AccessKind, Request, VecSource};
use proptest::prelude::*;

const READ_NS: u64 = 25_000;
const WRITE_NS: u64 = 220_000;

fn run_on<D: Device + Send + 'static>(
    policy: &PolicyConfig,
    device: D,
    trace: &[Request],
    frames: usize,
    write_miss: WriteMiss,
    final_flush: bool,
) -> RunOutput {
    let mut options = RunOptions::new(frames);
    options.write_miss = write_miss;
    options.final_flush = final_flush;
    flashbuf_sim::run(policy, device, &mut VecSource::new(trace.to_vec()), &options, &mut |_| {}).unwrap()
}

fn ideal() -> IdealDevice {
    IdealDevice::new(IdealConfig { read_ns: READ_NS, write_ns: WRITE_NS, logical_pages: u64::MAX }).unwrap()
}

/// Every policy, block sizes small enough that blocks matter on small traces.
fn all_policies() -> Vec<PolicyConfig> {
    POLICIES
        .iter()
        .map(|(name, _)| {
            let mut c = PolicyConfig::with_defaults(name).unwrap();
            for k in c.keys() {
                if matches!(k.key, "ppb" | "cluster") {
                    c.set(k.key, "4").unwrap();
                }
            }
            c
        })
        .chain(["ref:ppb=4,vw=1", "bp-ref:ppb=4,pad=0"].iter().map(|s| s.parse().unwrap()))
        .collect()
}

fn trace_strategy(pages: u64, len: usize) -> impl Strategy<Value = Vec<Request>> {
    proptest::collection::vec(
        (0..pages, any::<bool>()).prop_map(|(p, w)| Request {
            page: p,
            kind: if w { AccessKind::Write } else { AccessKind::Read },
            time_us: None,
        }),
        1..len,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_policy_beats_the_bounds(trace in trace_strategy(30, 300), frames in 1usize..10) {
        let bounds = TraceBounds::new(&KeptTrace::of(&trace));
        for write_miss in [WriteMiss::Fetch, WriteMiss::NoFetch] {
            for final_flush in [true, false] {
                let b = bounds.at(frames, write_miss, final_flush, READ_NS, WRITE_NS);
                for policy in all_policies() {
                    let out = run_on(&policy, ideal(), &trace, frames, write_miss, final_flush);
                    let c = &out.counters;
                    let name = policy.label();
                    prop_assert!(c.page_writes() >= b.writes, "{name}: {} writes < bound {}", c.page_writes(), b.writes);
                    prop_assert!(c.page_reads() >= b.reads, "{name}: {} reads < bound {}", c.page_reads(), b.reads);
                    prop_assert!(out.device.time_ns >= b.time_ns, "{name}: time {} < bound {}", out.device.time_ns, b.time_ns);
                }
            }
        }
    }

    /// Flash devices pay at least the chip's read and program latencies per host read and write.
    #[test]
    fn device_time_on_flash_is_above_the_bound(trace in trace_strategy(60, 400), frames in 1usize..12) {
        let bounds = TraceBounds::new(&KeptTrace::of(&trace));
        for kind in [DeviceKind::Page, DeviceKind::Block, DeviceKind::Bast, DeviceKind::Fast] {
            let config = DeviceConfig { kind, ..DeviceConfig::default() };
            let timing = config.preset.config(1).timing;
            let b = bounds.at(frames, WriteMiss::Fetch, true, timing.read_ns, timing.program_ns);
            for name in ["lru", "cflru", "min", "min-cost", "bplru:ppb=4"] {
                let policy: PolicyConfig = name.parse().unwrap();
                let out = run_on(&policy, config.build(64).unwrap(), &trace, frames, WriteMiss::Fetch, true);
                prop_assert!(out.device.time_ns >= b.time_ns, "{name} on {kind}: {} < {}", out.device.time_ns, b.time_ns);
            }
        }
    }
}

/// Buffered pages with their dirty bits, sorted: a state of the search.
type State = Vec<(u64, bool)>;

/// The least cost over every schedule of the buffer model: at a miss with a full buffer, evict
/// one buffered page, or (when `bypass`) serve the page without buffering it. Cost = reads ·
/// `read` + writes · `write`. Returns (cost, reads, writes) of one optimal schedule.
struct Search<'a> {
    trace: &'a [Request],
    frames: usize,
    bypass: bool,
    write_miss: WriteMiss,
    final_flush: bool,
    read: u64,
    write: u64,
    memo: HashMap<(usize, State), (u64, u64, u64)>,
}

impl Search<'_> {
    fn best(&mut self, i: usize, state: State) -> (u64, u64, u64) {
        if i == self.trace.len() {
            let dirty = if self.final_flush { state.iter().filter(|e| e.1).count() as u64 } else { 0 };
            return (dirty * self.write, 0, dirty);
        }
        if let Some(&v) = self.memo.get(&(i, state.clone())) {
            return v;
        }
        let r = self.trace[i];
        let w = r.kind.is_write();
        let add = |(c, rd, wr): (u64, u64, u64), reads: u64, writes: u64, s: &Self| {
            (c + reads * s.read + writes * s.write, rd + reads, wr + writes)
        };
        let result = if let Some(pos) = state.iter().position(|e| e.0 == r.page) {
            let mut s = state.clone();
            s[pos].1 |= w;
            self.best(i + 1, s)
        } else {
            let fetch = u64::from(!w || self.write_miss == WriteMiss::Fetch);
            let with = |s: &mut Self, mut next: State, writes: u64| {
                next.push((r.page, w));
                next.sort_unstable();
                let sub = s.best(i + 1, next);
                add(sub, fetch, writes, s)
            };
            if state.len() < self.frames {
                with(self, state.clone(), 0)
            } else {
                let mut best = (u64::MAX, 0, 0);
                for v in 0..state.len() {
                    let mut next = state.clone();
                    let (_, dirty) = next.remove(v);
                    let c = with(self, next, u64::from(dirty));
                    best = best.min(c);
                }
                if self.bypass {
                    let sub = self.best(i + 1, state.clone());
                    let c = if w { add(sub, 0, 1, self) } else { add(sub, 1, 0, self) };
                    best = best.min(c);
                }
                best
            }
        };
        self.memo.insert((i, state), result);
        result
    }
}

fn optimum(trace: &[Request], frames: usize, bypass: bool, write_miss: WriteMiss, cost: (u64, u64)) -> (u64, u64, u64) {
    let mut s = Search {
        trace,
        frames,
        bypass,
        write_miss,
        final_flush: true,
        read: cost.0,
        write: cost.1,
        memo: HashMap::new(),
    };
    s.best(0, Vec::new())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn bounds_against_exhaustive_search(trace in trace_strategy(5, 11), frames in 1usize..4, fetch in any::<bool>()) {
        let write_miss = if fetch { WriteMiss::Fetch } else { WriteMiss::NoFetch };
        let bounds = TraceBounds::new(&KeptTrace::of(&trace));
        let b = bounds.at(frames, write_miss, true, READ_NS, WRITE_NS);

        // With bypass the write bound is exact, and so is the read bound of a write buffer; a
        // database buffer must fetch a page written while a frame is free (a policy is asked to
        // bypass only when the buffer is full), which the read bound does not count.
        let fewest_writes = optimum(&trace, frames, true, write_miss, (0, 1)).0;
        prop_assert_eq!(fewest_writes, b.writes);
        let fewest_reads = optimum(&trace, frames, true, write_miss, (1, 0)).0;
        match write_miss {
            WriteMiss::NoFetch => prop_assert_eq!(fewest_reads, b.reads),
            WriteMiss::Fetch => prop_assert!(fewest_reads >= b.reads),
        }

        // Admitting every missed page: MIN over the writes bounds the optimum, which the
        // offline policy does not beat.
        let admitting = optimum(&trace, frames, false, write_miss, (0, 1)).0;
        prop_assert!(bounds.writes_admitting(frames, true) <= admitting);
        prop_assert!(b.writes <= bounds.writes_admitting(frames, true));
        let min_cost: PolicyConfig = "min-cost".parse().unwrap();
        let out = run_on(&min_cost, ideal(), &trace, frames, write_miss, true);
        prop_assert!(admitting <= out.counters.page_writes(), "optimum {} > min-cost {}", admitting, out.counters.page_writes());

        // Device time: bound ≤ optimum (either model) ≤ min-cost's.
        let cheapest_bypass = optimum(&trace, frames, true, write_miss, (READ_NS, WRITE_NS)).0;
        let cheapest = optimum(&trace, frames, false, write_miss, (READ_NS, WRITE_NS)).0;
        prop_assert!(b.time_ns <= cheapest_bypass && cheapest_bypass <= cheapest);
        prop_assert!(cheapest <= out.device.time_ns, "optimum {} > min-cost {}", cheapest, out.device.time_ns);
    }
}
