//! Differential tests: every FTL against a `HashMap<page, version>` model. The chip enforces the
//! rules of flash, so any FTL bug that programs out of order, rewrites without erase or reads an
//! unprogrammed page fails the `unwrap` of the operation; every read must return the logical page
//! asked for with the last version written; `check_invariants` recounts the FTL's bookkeeping
//! (after every step in the property tests, periodically in the long runs).

mod common;

use std::collections::HashMap;

use common::*;
use flashbuf_flash::{AnyDevice, Device, GcPolicy};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone)]
enum Op {
    Write(u64),
    Read(u64),
    /// Writes `len` consecutive pages from `start` (wrapping): gives switch and partial merges.
    Run(u64, u64),
}

const PAGES: u64 = 48; // 12 logical blocks of 4 pages (see `all_tiny`)

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..PAGES).prop_map(Op::Write),
        2 => (0..6u64).prop_map(Op::Write), // a hot spot
        3 => (0..PAGES).prop_map(Op::Read),
        1 => (0..PAGES, 1..13u64).prop_map(|(s, l)| Op::Run(s, l)),
    ]
}

struct Model {
    versions: HashMap<u64, u32>,
    /// Sum of the times the device returned (must equal its `time_ns`).
    time_ns: u64,
}

impl Model {
    fn new(filled: bool, pages: u64) -> Self {
        Model { versions: if filled { (0..pages).map(|p| (p, 1)).collect() } else { HashMap::new() }, time_ns: 0 }
    }

    fn write(&mut self, d: &mut AnyDevice, p: u64) {
        self.time_ns += d.write(p).unwrap_or_else(|e| panic!("{}: write {p}: {e}", d.name()));
        *self.versions.entry(p).or_insert(0) += 1;
    }

    fn read(&mut self, d: &mut AnyDevice, p: u64) {
        let t0 = d.stats().time_ns;
        let got = version_of(d, p);
        self.time_ns += d.stats().time_ns - t0;
        assert_eq!(got, self.versions.get(&p).copied().unwrap_or(0), "{}: read of page {p}", d.name());
        // `read` costs what `read_tag` costs and returns it.
        let t = d.read(p).unwrap();
        assert_eq!(d.stats().time_ns - t0, 2 * t);
        self.time_ns += t;
    }
}

fn run_case(kind: usize, filled: bool, ops: &[Op]) {
    let (name, mut d) = all_tiny(filled).swap_remove(kind);
    let mut m = Model::new(filled, PAGES);
    for o in ops {
        match *o {
            Op::Write(p) => m.write(&mut d, p),
            Op::Read(p) => m.read(&mut d, p),
            Op::Run(s, l) => {
                for i in 0..l {
                    m.write(&mut d, (s + i) % PAGES);
                }
            }
        }
        if let Err(e) = d.check_invariants() {
            panic!("{name}: after {o:?}: {e}");
        }
    }
    for p in 0..PAGES {
        m.read(&mut d, p);
    }
    let s = d.stats();
    assert_eq!(s.host_writes, m.versions.values().map(|&v| v as u64).sum::<u64>() - if filled { PAGES } else { 0 });
    assert_eq!(s.time_ns, m.time_ns, "{name}: the times returned add up to the device time");
}

macro_rules! model_props {
    ($($fn:ident => $kind:expr),* $(,)?) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
            $(
                #[test]
                fn $fn(filled in any::<bool>(), ops in prop::collection::vec(op(), 0..2500)) {
                    run_case($kind, filled, &ops);
                }
            )*
        }
    };
}

// Indices into `all_tiny`.
model_props! {
    page_greedy_matches_the_model => 0,
    page_cost_benefit_with_wear_levelling_matches_the_model => 1,
    page_fifo_matches_the_model => 2,
    page_greedy_with_aggressive_wear_levelling_matches_the_model => 3,
    block_matches_the_model => 4,
    bast_2_logs_matches_the_model => 5,
    bast_3_logs_matches_the_model => 6,
    bast_2_logs_lazy_merging_matches_the_model => 7,
    fast_with_sequential_log_matches_the_model => 8,
    fast_random_logs_only_matches_the_model => 9,
}

#[test]
fn the_tiny_device_list_is_what_the_indices_say() {
    let names: Vec<&str> = all_tiny(false).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "page/greedy",
            "page/cost-benefit/wl",
            "page/fifo",
            "page/greedy/wl",
            "block",
            "bast/2",
            "bast/3",
            "bast/2/lazy",
            "fast/sw",
            "fast/nosw"
        ]
    );
}

/// A few million operations on a small device (8 pages per block, 32 logical blocks): heavy
/// garbage collection and merging. Mixed workload: uniform writes, a hot spot, sequential runs
/// and reads; invariants every 20,000 operations.
fn long_run(mut d: AnyDevice, ops: u64, seed: u64) {
    let pages = d.logical_pages();
    let mut m = Model::new(false, pages);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut i = 0u64;
    while i < ops {
        let r = rng.random_range(0..100u32);
        if r < 45 {
            m.write(&mut d, rng.random_range(0..pages));
        } else if r < 60 {
            m.write(&mut d, rng.random_range(0..pages / 16));
        } else if r < 65 {
            let start = rng.random_range(0..pages);
            let len = rng.random_range(1..24u64);
            for k in 0..len {
                m.write(&mut d, (start + k) % pages);
            }
            i += len - 1;
        } else {
            m.read(&mut d, rng.random_range(0..pages));
        }
        i += 1;
        if i.is_multiple_of(20_000) {
            d.check_invariants().unwrap_or_else(|e| panic!("{}: after {i} operations: {e}", d.name()));
        }
    }
    d.check_invariants().unwrap();
    for p in 0..pages {
        m.read(&mut d, p);
    }
    let s = d.stats();
    assert!(s.erases > 1000, "{}: the run exercised erasing ({s:?})", d.name());
    assert_eq!(s.time_ns, m.time_ns, "{}: the times returned add up to the device time", d.name());
    let t = d.nand().expect("an FTL has a chip").config().timing;
    assert_eq!(s.time_ns, s.flash_reads * t.read_ns + s.flash_programs * t.program_ns + s.erases * t.erase_ns);
}

/// Devices built through `DeviceConfig` (64-page blocks, a logical size that is not a whole
/// number of blocks, every preconditioning), against the model.
#[test]
fn built_devices_match_the_model() {
    use flashbuf_flash::{DeviceConfig, DeviceKind, Precondition};
    let logical = 1000u64; // 15 blocks and 40 pages
    for kind in [DeviceKind::Page, DeviceKind::Block, DeviceKind::Bast, DeviceKind::Fast] {
        for (pi, pre) in
            [Precondition::Empty, Precondition::Sequential, Precondition::Aged { writes: Some(3000), seed: 5 }]
                .into_iter()
                .enumerate()
        {
            let cfg = DeviceConfig {
                kind,
                log_blocks: 3,
                op_percent: 10.0,
                gc_threshold: 1,
                wear_threshold: Some(3),
                precondition: pre,
                verify: true,
                ..Default::default()
            };
            let mut d = cfg.build(logical).unwrap();
            d.check_invariants().unwrap();
            // Versions after preconditioning, read back from the device itself.
            let mut m = Model::new(false, logical);
            for p in 0..logical {
                let v = version_of(&mut d, p);
                if v > 0 {
                    m.versions.insert(p, v);
                }
            }
            assert_eq!(m.versions.len() as u64, if pi == 0 { 0 } else { logical }, "{kind} {pre}");
            d.reset_stats();
            let mut rng = ChaCha8Rng::seed_from_u64(kind as u64 * 10 + pi as u64);
            for i in 0..60_000u64 {
                let p =
                    if rng.random_range(0..4u32) == 0 { rng.random_range(0..40) } else { rng.random_range(0..logical) };
                if rng.random_range(0..3u32) == 0 {
                    m.read(&mut d, p);
                } else {
                    m.write(&mut d, p);
                }
                if i.is_multiple_of(1000) {
                    d.check_invariants().unwrap_or_else(|e| panic!("{kind} {pre} after {i}: {e}"));
                }
            }
            for p in 0..logical {
                m.read(&mut d, p);
            }
            assert_eq!(d.stats().time_ns, m.time_ns);
        }
    }
}

const LONG_OPS: u64 = 3_000_000;

#[test]
fn long_run_page_greedy() {
    long_run(AnyDevice::Page(page(8, 32, 2, GcPolicy::Greedy, Some(8))), LONG_OPS, 1);
}

#[test]
fn long_run_page_cost_benefit() {
    long_run(AnyDevice::Page(page(8, 32, 2, GcPolicy::CostBenefit, Some(8))), LONG_OPS, 2);
}

#[test]
fn long_run_page_fifo() {
    long_run(AnyDevice::Page(page(8, 32, 1, GcPolicy::Fifo, None)), LONG_OPS, 3);
}

#[test]
fn long_run_block() {
    long_run(AnyDevice::Block(block(8, 32)), LONG_OPS, 4);
}

#[test]
fn long_run_bast() {
    long_run(AnyDevice::Bast(bast(8, 32, 4)), LONG_OPS, 5);
}

#[test]
fn long_run_fast() {
    long_run(AnyDevice::Fast(fast(8, 32, 4, true)), LONG_OPS, 6);
}

#[test]
fn long_run_fast_without_sequential_log() {
    long_run(AnyDevice::Fast(fast(8, 32, 4, false)), LONG_OPS, 7);
}

/// Blocks of 1, 2, 3 and 5 pages (including pages-per-block that are not powers of two, which
/// take the page-mapped FTL off its shift fast path) and a logical size that is not a whole
/// number of blocks.
#[test]
fn odd_geometries_match_the_model() {
    for ppb in [1u32, 2, 3, 5] {
        let logical = 10 * ppb as u64 - u64::from(ppb > 1);
        let nand = |blocks| chip(ppb, blocks, 1_000_000);
        let devices = vec![
            AnyDevice::Page(
                flashbuf_flash::PageFtl::new(flashbuf_flash::PageFtlConfig {
                    nand: nand(13),
                    logical_pages: logical,
                    gc: GcPolicy::CostBenefit,
                    gc_threshold: 1,
                    wear_threshold: Some(3),
                    verify: true,
                    label: format!("page/ppb{ppb}"),
                })
                .unwrap(),
            ),
            AnyDevice::Page(
                flashbuf_flash::PageFtl::new(flashbuf_flash::PageFtlConfig {
                    nand: nand(12),
                    logical_pages: logical,
                    gc: GcPolicy::Greedy,
                    gc_threshold: 1,
                    wear_threshold: None,
                    verify: true,
                    label: format!("page-greedy/ppb{ppb}"),
                })
                .unwrap(),
            ),
            AnyDevice::Block(
                flashbuf_flash::BlockFtl::new(flashbuf_flash::BlockFtlConfig {
                    nand: nand(11),
                    logical_pages: logical,
                    verify: true,
                    label: format!("block/ppb{ppb}"),
                })
                .unwrap(),
            ),
            AnyDevice::Bast(
                flashbuf_flash::BastFtl::new(flashbuf_flash::BastFtlConfig {
                    nand: nand(13),
                    logical_pages: logical,
                    log_blocks: 2,
                    eager_merge: false,
                    verify: true,
                    label: format!("bast/ppb{ppb}"),
                })
                .unwrap(),
            ),
            AnyDevice::Fast(
                flashbuf_flash::FastFtl::new(flashbuf_flash::FastFtlConfig {
                    nand: nand(14),
                    logical_pages: logical,
                    log_blocks: 3,
                    seq_log: true,
                    verify: true,
                    label: format!("fast/ppb{ppb}"),
                })
                .unwrap(),
            ),
        ];
        for mut d in devices {
            let mut m = Model::new(false, logical);
            let mut rng = ChaCha8Rng::seed_from_u64(ppb as u64);
            for i in 0..30_000u32 {
                let r = rng.random_range(0..10u32);
                if r < 5 {
                    m.write(&mut d, rng.random_range(0..logical));
                } else if r < 7 {
                    let s = rng.random_range(0..logical);
                    for k in 0..rng.random_range(1..8u64) {
                        m.write(&mut d, (s + k) % logical);
                    }
                } else {
                    m.read(&mut d, rng.random_range(0..logical));
                }
                if i.is_multiple_of(50) {
                    d.check_invariants().unwrap_or_else(|e| panic!("{} after {i}: {e}", d.name()));
                }
            }
            for p in 0..logical {
                m.read(&mut d, p);
            }
            assert_eq!(d.stats().time_ns, m.time_ns);
        }
    }
}
