//! Helpers shared by the integration tests: tiny chips and devices built directly.
#![allow(dead_code)]

use flashbuf_flash::{
    AnyDevice, BastFtl, BastFtlConfig, BlockFtl, BlockFtlConfig, Device, FastFtl, FastFtlConfig, GcPolicy, NandConfig,
    NandGeometry, NandTiming, PageFtl, PageFtlConfig, PageTag, Precondition, precondition,
};

/// REF paper Table I timings (10 µs read, 200 µs program, 2 ms erase).
pub const READ_NS: u64 = 10_000;
pub const PROGRAM_NS: u64 = 200_000;
pub const ERASE_NS: u64 = 2_000_000;

pub fn chip(ppb: u32, blocks: u32, endurance: u32) -> NandConfig {
    NandConfig {
        geometry: NandGeometry { page_size_bytes: 2048, pages_per_block: ppb, blocks },
        timing: NandTiming { read_ns: READ_NS, program_ns: PROGRAM_NS, erase_ns: ERASE_NS },
        endurance_cycles: endurance,
    }
}

/// BAST with `data_blocks` logical blocks of `ppb` pages and `logs` log blocks, on the smallest
/// chip that fits (data + logs + 1), merging full log blocks at once.
pub fn bast(ppb: u32, data_blocks: u32, logs: u32) -> BastFtl {
    bast_with(ppb, data_blocks, logs, true)
}

/// As [`bast`], choosing eager or lazy merging of full log blocks.
pub fn bast_with(ppb: u32, data_blocks: u32, logs: u32, eager_merge: bool) -> BastFtl {
    BastFtl::new(BastFtlConfig {
        nand: chip(ppb, data_blocks + logs + 1, 1_000_000),
        logical_pages: (ppb * data_blocks) as u64,
        log_blocks: logs,
        eager_merge,
        verify: true,
        label: "bast".into(),
    })
    .unwrap()
}

pub fn fast(ppb: u32, data_blocks: u32, logs: u32, seq_log: bool) -> FastFtl {
    FastFtl::new(FastFtlConfig {
        nand: chip(ppb, data_blocks + logs + 1, 1_000_000),
        logical_pages: (ppb * data_blocks) as u64,
        log_blocks: logs,
        seq_log,
        verify: true,
        label: "fast".into(),
    })
    .unwrap()
}

pub fn block(ppb: u32, data_blocks: u32) -> BlockFtl {
    BlockFtl::new(BlockFtlConfig {
        nand: chip(ppb, data_blocks + 1, 1_000_000),
        logical_pages: (ppb * data_blocks) as u64,
        verify: true,
        label: "block".into(),
    })
    .unwrap()
}

pub fn page(ppb: u32, data_blocks: u32, spare: u32, gc: GcPolicy, wear: Option<u32>) -> PageFtl {
    PageFtl::new(PageFtlConfig {
        nand: chip(ppb, data_blocks + spare + 1, 1_000_000),
        logical_pages: (ppb * data_blocks) as u64,
        gc,
        gc_threshold: 1,
        wear_threshold: wear,
        verify: true,
        label: "page".into(),
    })
    .unwrap()
}

/// Devices whose counters can be zeroed.
pub trait Reset: Device {
    fn reset(&mut self);
}

macro_rules! reset {
    ($($t:ty),*) => {$(impl Reset for $t { fn reset(&mut self) { self.reset_stats() } })*};
}
reset!(PageFtl, BlockFtl, BastFtl, FastFtl, AnyDevice);

/// Writes every logical page once in order, then zeroes the counters.
pub fn fill<D: Reset>(d: &mut D) {
    precondition(d, &Precondition::Sequential).unwrap();
    d.reset();
}

/// Every FTL kind the model tests exercise, on a tiny chip (4 pages per block, 12 logical
/// blocks).
pub fn all_tiny(seq_fill: bool) -> Vec<(&'static str, AnyDevice)> {
    let mut v: Vec<(&'static str, AnyDevice)> = vec![
        ("page/greedy", AnyDevice::Page(page(4, 12, 2, GcPolicy::Greedy, None))),
        ("page/cost-benefit/wl", AnyDevice::Page(page(4, 12, 2, GcPolicy::CostBenefit, Some(4)))),
        ("page/fifo", AnyDevice::Page(page(4, 12, 1, GcPolicy::Fifo, None))),
        ("page/greedy/wl", AnyDevice::Page(page(4, 12, 3, GcPolicy::Greedy, Some(2)))),
        ("block", AnyDevice::Block(block(4, 12))),
        ("bast/2", AnyDevice::Bast(bast(4, 12, 2))),
        ("bast/3", AnyDevice::Bast(bast(4, 12, 3))),
        ("bast/2/lazy", AnyDevice::Bast(bast_with(4, 12, 2, false))),
        ("fast/sw", AnyDevice::Fast(fast(4, 12, 3, true))),
        ("fast/nosw", AnyDevice::Fast(fast(4, 12, 2, false))),
    ];
    if seq_fill {
        for (_, d) in &mut v {
            d.precondition(&Precondition::Sequential).unwrap();
        }
    }
    v
}

/// Reads `page` and returns the version found, checking it holds the right logical page.
pub fn version_of(d: &mut AnyDevice, page: u64) -> u32 {
    let tag: PageTag = d.read_tag(page).unwrap().expect("an FTL stores tags");
    assert_eq!(tag.lpn as u64, page, "read of page {page} returned another logical page");
    tag.version
}
