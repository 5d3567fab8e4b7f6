//! Impossible geometries and parameters are refused with `DeviceError::Config` and a message
//! saying why, before anything runs — never a panic or a hang.

mod common;

use common::chip;
use flashbuf_flash::{
    BastFtl, BastFtlConfig, BlockFtl, BlockFtlConfig, DeviceConfig, DeviceError, DeviceKind, FastFtl, FastFtlConfig,
    GcPolicy, NandPreset, PageFtl, PageFtlConfig, Precondition,
};

fn config_error(r: Result<impl std::fmt::Debug, DeviceError>, needle: &str) {
    match r {
        Err(DeviceError::Config(msg)) => assert!(msg.contains(needle), "message `{msg}` lacks `{needle}`"),
        other => panic!("expected a configuration error about `{needle}`, got {other:?}"),
    }
}

fn cfg(kind: DeviceKind) -> DeviceConfig {
    DeviceConfig { kind, precondition: Precondition::Empty, ..Default::default() }
}

#[test]
fn zero_logical_pages() {
    for kind in DeviceKind::ALL {
        config_error(cfg(kind).build(0), "at least one");
    }
}

#[test]
fn over_provisioning_too_small_for_gc() {
    config_error(DeviceConfig { op_percent: 0.0, ..cfg(DeviceKind::Page) }.build(64 * 100), "no spare block");
    config_error(DeviceConfig { op_percent: -5.0, ..cfg(DeviceKind::Page) }.build(64 * 100), "non-negative");
    config_error(DeviceConfig { op_percent: f64::NAN, ..cfg(DeviceKind::Page) }.build(64 * 100), "non-negative");
    // 0.5% of 100 blocks rounds up to one spare block: allowed.
    assert!(DeviceConfig { op_percent: 0.5, ..cfg(DeviceKind::Page) }.build(64 * 100).is_ok());
    // Direct construction: a chip without a spare block.
    config_error(
        PageFtl::new(PageFtlConfig {
            nand: chip(4, 10, 100),
            logical_pages: 36,
            gc: GcPolicy::Greedy,
            gc_threshold: 1,
            wear_threshold: None,
            verify: false,
            label: String::new(),
        }),
        "spare block",
    );
}

#[test]
fn gc_threshold_zero() {
    config_error(DeviceConfig { gc_threshold: 0, ..cfg(DeviceKind::Page) }.build(6400), "at least 1");
}

#[test]
fn log_block_counts() {
    config_error(DeviceConfig { log_blocks: 0, ..cfg(DeviceKind::Bast) }.build(6400), "at least 1 log block");
    config_error(DeviceConfig { log_blocks: 1, ..cfg(DeviceKind::Fast) }.build(6400), "at least 2 log blocks");
    config_error(DeviceConfig { log_blocks: 0, seq_log: false, ..cfg(DeviceKind::Fast) }.build(6400), "at least 1");
    assert!(DeviceConfig { log_blocks: 1, seq_log: false, ..cfg(DeviceKind::Fast) }.build(6400).is_ok());
    // Direct construction: as many log blocks as the chip has blocks (or more than it can hold
    // next to the data blocks).
    config_error(
        BastFtl::new(BastFtlConfig {
            nand: chip(4, 8, 100),
            logical_pages: 4,
            log_blocks: 8,
            eager_merge: false,
            verify: false,
            label: String::new(),
        }),
        "cannot hold",
    );
    config_error(
        FastFtl::new(FastFtlConfig {
            nand: chip(4, 8, 100),
            logical_pages: 16,
            log_blocks: 4,
            seq_log: true,
            verify: false,
            label: String::new(),
        }),
        "cannot hold",
    );
    config_error(
        BlockFtl::new(BlockFtlConfig { nand: chip(4, 4, 100), logical_pages: 16, verify: false, label: String::new() }),
        "cannot hold",
    );
}

#[test]
fn logical_space_that_does_not_fit() {
    config_error(cfg(DeviceKind::Page).build(u32::MAX as u64 * 2), "too large");
    config_error(cfg(DeviceKind::Bast).build(1 << 40), "too large");
}

#[test]
fn impossible_chips_and_thresholds() {
    config_error(DeviceConfig { wear_threshold: Some(0), ..cfg(DeviceKind::Page) }.build(6400), "wear levelling");
    config_error(DeviceConfig { endurance: Some(0), ..cfg(DeviceKind::Bast) }.build(6400), "endurance");
    let mut c = chip(0, 10, 100);
    config_error(
        BlockFtl::new(BlockFtlConfig { nand: c, logical_pages: 16, verify: false, label: String::new() }),
        "at least one block",
    );
    c.geometry.pages_per_block = 4;
    c.geometry.blocks = 0;
    config_error(
        BlockFtl::new(BlockFtlConfig { nand: c, logical_pages: 16, verify: false, label: String::new() }),
        "at least one block",
    );
}

#[test]
fn unknown_names_list_the_valid_ones() {
    config_error("nvme".parse::<DeviceKind>(), "valid: ideal, page, block, bast, fast");
    config_error("tlc".parse::<NandPreset>(), "valid: micron, ref");
    config_error("random".parse::<GcPolicy>(), "valid: greedy, cost-benefit, fifo");
    config_error("hot".parse::<Precondition>(), "valid: empty, sequential, aged");
}
