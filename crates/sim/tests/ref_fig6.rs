//! The REF paper's Fig. 6, both halves: the buffer events of LRU, FAB, BPLRU and REF for the
//! write sequence p0 p4 p8 p5 p9 p1 p10 p2 p6 (3-page write buffer, 4 pages per block, VW = 100%,
//! |VB| = 2) and the log-block events they cause under BAST with 2 log blocks. "REF causes no
//! merge, the others 2 or 3": LRU 2, FAB 2, BPLRU 3, REF 0.
//!
//! The device is flashbuf's BAST with lazy merging (a full log block waits until a log block is
//! needed), the semantics the figure's BPLRU column shows. Data blocks B0..B2 hold p0..p11,
//! written sequentially beforehand; the buffer does not fetch on a write miss (a write buffer).
//!
//! Printed cells that contradict their own row, checked in their consistent reading:
//! * BPLRU, `Write [p2]`: the log column reads `L1 [p0] L1 [p1] L1 [p2] L1 [p4]`; padding block
//!   B0 around the victim p1 writes p0, p1, p2 and **p3** (p4 is in B1, and the next row's
//!   padding of B1 shows the figure's own rule). We check p3.
//! * FAB, `Write [p9]`: the cache column shows only `E [p4]`, but its log column writes p4 and
//!   p5 and the next request (p1) is inserted without an eviction: FAB evicted both pages of B1.
//!   We check both evictions.

use std::cell::RefCell;
use std::rc::Rc;

use flashbuf_flash::{
    BastFtl, BastFtlConfig, Device, DeviceError, DeviceStats, NandConfig, NandGeometry, NandTiming, Nanos,
};
use flashbuf_policy::{NEVER, PolicyConfig, PolicyVisitor, Replacer};
use flashbuf_sim::{Buffer, WriteMiss};
use flashbuf_trace::Request;

const SEQUENCE: [u64; 9] = [0, 4, 8, 5, 9, 1, 10, 2, 6];

/// BAST that also records the pages written to it.
struct Logged {
    inner: BastFtl,
    writes: Rc<RefCell<Vec<u64>>>,
}

impl Device for Logged {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn logical_pages(&self) -> u64 {
        self.inner.logical_pages()
    }
    fn read(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        self.inner.read(page)
    }
    fn write(&mut self, page: u64) -> Result<Nanos, DeviceError> {
        self.writes.borrow_mut().push(page);
        self.inner.write(page)
    }
    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.inner.check_invariants()
    }
}

fn bast() -> BastFtl {
    let mut d = BastFtl::new(BastFtlConfig {
        nand: NandConfig {
            geometry: NandGeometry { page_size_bytes: 2048, pages_per_block: 4, blocks: 3 + 2 + 1 },
            timing: NandTiming { read_ns: 10_000, program_ns: 200_000, erase_ns: 2_000_000 },
            endurance_cycles: 100_000,
        },
        logical_pages: 12,
        log_blocks: 2,
        eager_merge: false,
        verify: true,
        label: "bast/fig6".into(),
    })
    .unwrap();
    for p in 0..12 {
        d.write(p).unwrap();
    }
    d.reset_stats();
    d
}

/// Runs the sequence; returns the pages written to flash and the merge count after each request.
struct Fig6;

impl PolicyVisitor for Fig6 {
    type Output = (Vec<u64>, Vec<u64>, DeviceStats);
    fn visit<R: Replacer>(self, policy: R) -> Self::Output {
        let writes = Rc::default();
        let dev = Logged { inner: bast(), writes: Rc::clone(&writes) };
        let mut buf = Buffer::new(policy, dev, 3, WriteMiss::NoFetch, 12).unwrap();
        let mut merges = Vec::new();
        for p in SEQUENCE {
            buf.access(&Request::write(p), NEVER).unwrap();
            buf.check_invariants().unwrap();
            merges.push(buf.device_stats().merges());
        }
        let pages = writes.borrow().clone();
        (pages, merges, buf.device_stats())
    }
}

fn run(policy: &str) -> (Vec<u64>, Vec<u64>, DeviceStats) {
    policy.parse::<PolicyConfig>().unwrap().build(3, Fig6)
}

#[test]
fn lru_merges_twice() {
    let (pages, merges, s) = run("lru");
    // L0[p0] L1[p4] M[L0] L0[p8] L1[p5] L0[p9] M[L1] L1[p1]
    assert_eq!(pages, [0, 4, 8, 5, 9, 1]);
    assert_eq!(merges, [0, 0, 0, 0, 0, 1, 1, 1, 2]);
    // Both victims hold an in-order prefix (p0; p4 p5): partial merges.
    assert_eq!((s.merges_switch, s.merges_partial, s.merges_full), (0, 2, 0));
}

#[test]
fn fab_merges_twice() {
    let (pages, merges, s) = run("fab:ppb=4");
    // L0[p0] L1[p4] L1[p5] M[L0] L0[p8] L0[p9] M[L1] L1[p1] L1[p2]
    assert_eq!(pages, [0, 4, 5, 8, 9, 1, 2]);
    assert_eq!(merges, [0, 0, 0, 0, 0, 0, 1, 1, 2]);
    assert_eq!((s.merges_switch, s.merges_partial, s.merges_full), (0, 2, 0));
}

#[test]
fn bplru_merges_three_times_by_switching() {
    let (pages, merges, s) = run("bplru:ppb=4");
    // Whole blocks, padded: B0 at p5, B2 at p9, B1 at p1, B0 at p2 (p3, not the printed p4),
    // B2 at p6.
    assert_eq!(pages, [0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11]);
    assert_eq!(merges, [0, 0, 0, 0, 0, 1, 1, 2, 3]);
    assert_eq!((s.merges_switch, s.merges_partial, s.merges_full), (3, 0, 0));
    assert_eq!(s.page_copies, 0, "padding makes every merge a switch");
}

#[test]
fn ref_causes_no_merge() {
    let (pages, merges, s) = run("ref:vw=1,vb=2,ppb=4");
    // L0[p0] L1[p4] L1[p5] L0[p1] L0[p2] L1[p6]: only B0 and B1 ever reach the log blocks.
    assert_eq!(pages, [0, 4, 5, 1, 2, 6]);
    assert_eq!(merges, [0; 9]);
    assert_eq!(s.merges(), 0);
}
