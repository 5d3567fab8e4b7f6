//! Properties every policy must have inside the simulator: capacity respected, only buffered
//! pages evicted, every dirty page written back exactly once per eviction or final flush, and
//! the counters consistent with what the device saw.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use flashbuf_flash::{Device, DeviceError, DeviceStats, Nanos};
use flashbuf_policy::{NEVER, POLICIES, PolicyConfig, PolicyVisitor, Replacer};
use flashbuf_sim::{Buffer, Counters, WriteMiss, next_uses};
use flashbuf_trace::{AccessKind, Request};
use proptest::prelude::*;

/// What the device saw, in order: (request index, page, is_write).
type Log = Rc<RefCell<Vec<(u64, u64, bool)>>>;

struct Recorder {
    log: Log,
    clock: Rc<RefCell<u64>>,
    stats: DeviceStats,
}

impl Device for Recorder {
    fn name(&self) -> String {
        "recorder".into()
    }
    fn logical_pages(&self) -> u64 {
        1 << 20
    }
    fn read(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        self.log.borrow_mut().push((*self.clock.borrow(), page, false));
        self.stats.host_reads += 1;
        Ok(1)
    }
    fn write(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        self.log.borrow_mut().push((*self.clock.borrow(), page, true));
        self.stats.host_writes += 1;
        Ok(1)
    }
    fn stats(&self) -> DeviceStats {
        self.stats.clone()
    }
}

struct Check<'a> {
    trace: &'a [Request],
    frames: usize,
    write_miss: WriteMiss,
}

impl PolicyVisitor for Check<'_> {
    type Output = (Counters, Vec<(u64, u64, bool)>, usize);
    fn visit<R: Replacer>(self, policy: R) -> Self::Output {
        let log: Log = Rc::default();
        let clock = Rc::new(RefCell::new(0u64));
        let dev = Recorder { log: log.clone(), clock: clock.clone(), stats: DeviceStats::default() };
        let mut buf = Buffer::new(policy, dev, self.frames, self.write_miss, 0).unwrap();
        let next = if R::NEEDS_FUTURE { next_uses(self.trace) } else { vec![NEVER; self.trace.len()] };
        let mut max_len = 0;
        for (i, r) in self.trace.iter().enumerate() {
            *clock.borrow_mut() = i as u64;
            buf.access(r, next[i]).unwrap();
            buf.check_invariants().unwrap_or_else(|e| panic!("after request {i}: {e}"));
            max_len = max_len.max(buf.len());
        }
        *clock.borrow_mut() = self.trace.len() as u64;
        buf.flush().unwrap();
        let log = log.borrow().clone();
        (buf.counters().clone(), log, max_len)
    }
}

fn trace_strategy() -> impl Strategy<Value = Vec<Request>> {
    proptest::collection::vec(
        (0u64..40, any::<bool>()).prop_map(|(p, w)| Request {
            page: p,
            kind: if w { AccessKind::Write } else { AccessKind::Read },
            time_us: None,
        }),
        1..400,
    )
}

/// Every policy with parameters small enough that blocks matter on 40-page traces.
fn all_policies() -> Vec<PolicyConfig> {
    POLICIES
        .iter()
        .map(|(name, _)| {
            let mut c = PolicyConfig::with_defaults(name).unwrap();
            for k in c.keys() {
                if k.key == "ppb" {
                    c.set("ppb", "4").unwrap();
                }
                if k.key == "cluster" {
                    c.set("cluster", "4").unwrap();
                }
            }
            c
        })
        .collect()
}

fn check_run(
    policy: &PolicyConfig,
    trace: &[Request],
    frames: usize,
    write_miss: WriteMiss,
) -> Result<(), TestCaseError> {
    let (c, log, max_len) = policy.build(frames, Check { trace, frames, write_miss });
    let name = policy.label();
    prop_assert!(max_len <= frames, "{name}: {max_len} pages buffered in {frames} frames");
    prop_assert_eq!(c.requests, trace.len() as u64);
    prop_assert_eq!(c.hits + c.misses, c.requests);
    let writes: Vec<&(u64, u64, bool)> = log.iter().filter(|e| e.2).collect();
    let reads = log.len() - writes.len();
    prop_assert_eq!(writes.len() as u64, c.page_writes(), "{}: device saw {} writes", name, writes.len());
    prop_assert_eq!(reads as u64, c.page_reads(), "{}: device saw {} reads", name, reads);

    // Exactly once: between two write-backs of a page (and before its first), the trace wrote
    // it at least once; and the last write of every page reached the device after it happened.
    let mut last_write_req: HashMap<u64, Vec<u64>> = HashMap::new();
    for (i, r) in trace.iter().enumerate() {
        if r.kind.is_write() {
            last_write_req.entry(r.page).or_default().push(i as u64);
        }
    }
    let padded = c.padding_writes > 0;
    let mut durable_upto: HashMap<u64, u64> = HashMap::new(); // page -> write requests covered
    for &&(at, page, _) in &writes {
        let reqs = last_write_req.get(&page).map(|v| v.as_slice()).unwrap_or(&[]);
        // Number of write requests to `page` issued up to and including request `at`
        // (a bypassed write is sent while serving its own request).
        let issued = reqs.partition_point(|&i| i <= at) as u64;
        let covered = durable_upto.entry(page).or_insert(0);
        if !padded {
            prop_assert!(
                issued > *covered,
                "{}: page {} written back at request {} without a new write",
                name,
                page,
                at
            );
        }
        *covered = issued;
    }
    for (page, reqs) in &last_write_req {
        prop_assert_eq!(
            durable_upto.get(page).copied(),
            Some(reqs.len() as u64),
            "{}: last write of page {} lost",
            name,
            page
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_keeps_the_contract(trace in trace_strategy(), frames in 1usize..24) {
        for p in all_policies() {
            check_run(&p, &trace, frames, WriteMiss::Fetch)?;
        }
    }

    #[test]
    fn every_policy_keeps_the_contract_without_write_fetch(trace in trace_strategy(), frames in 1usize..24) {
        for p in all_policies() {
            check_run(&p, &trace, frames, WriteMiss::NoFetch)?;
        }
    }
}
