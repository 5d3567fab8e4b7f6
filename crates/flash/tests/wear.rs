//! Endurance: every FTL retires worn-out blocks and ends with `DeviceError::WornOut` (never a
//! flash-rule violation, a panic or a wrong read).

mod common;

use std::collections::HashMap;

use common::chip;
use flashbuf_flash::{
    AnyDevice, BastFtl, BastFtlConfig, BlockFtl, BlockFtlConfig, Device, DeviceError, FastFtl, FastFtlConfig, GcPolicy,
    PageFtl, PageFtlConfig,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ENDURANCE: u32 = 6;

fn devices() -> Vec<AnyDevice> {
    let nand = |blocks| chip(4, blocks, ENDURANCE);
    vec![
        AnyDevice::Page(
            PageFtl::new(PageFtlConfig {
                nand: nand(16),
                logical_pages: 40,
                gc: GcPolicy::Greedy,
                gc_threshold: 1,
                wear_threshold: Some(2),
                verify: true,
                label: "page".into(),
            })
            .unwrap(),
        ),
        AnyDevice::Block(
            BlockFtl::new(BlockFtlConfig { nand: nand(14), logical_pages: 40, verify: true, label: "block".into() })
                .unwrap(),
        ),
        AnyDevice::Bast(
            BastFtl::new(BastFtlConfig {
                nand: nand(16),
                logical_pages: 40,
                log_blocks: 2,
                eager_merge: false,
                verify: true,
                label: "bast".into(),
            })
            .unwrap(),
        ),
        AnyDevice::Fast(
            FastFtl::new(FastFtlConfig {
                nand: nand(16),
                logical_pages: 40,
                log_blocks: 3,
                seq_log: true,
                verify: true,
                label: "fast".into(),
            })
            .unwrap(),
        ),
    ]
}

#[test]
fn every_ftl_wears_out_cleanly() {
    for mut d in devices() {
        let name = d.name();
        let mut model: HashMap<u64, u32> = HashMap::new();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let err = loop {
            let p = rng.random_range(0..40u64);
            match d.write(p) {
                Ok(_) => *model.entry(p).or_insert(0) += 1,
                Err(e) => break e,
            }
            d.check_invariants().unwrap_or_else(|e| panic!("{name}: {e}"));
            let q = rng.random_range(0..40u64);
            let tag = d.read_tag(q).unwrap().unwrap();
            assert_eq!(tag.version, model.get(&q).copied().unwrap_or(0), "{name}: page {q}");
        };
        assert!(matches!(err, DeviceError::WornOut { .. }), "{name}: ended with {err:?}");
        let s = d.stats();
        assert!(s.erase_count_max <= ENDURANCE as u64, "{name}: {s:?}");
        assert!(s.erase_count_max == ENDURANCE as u64, "{name}: some block reached its endurance");
    }
}
