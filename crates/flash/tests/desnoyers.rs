//! The page-mapped FTL against Desnoyers' analytic write amplification (*Analytic modeling of
//! SSD write performance*, SYSTOR 2012) under uniform random writes.
//!
//! **What "physical" means.** The model's `α` is the ratio of the physical pages the cleaner
//! circulates through to the logical pages. In our FTL those are the logical blocks plus the
//! over-provisioned blocks; the `gc_threshold` reserve is not part of it (it is only dipped into
//! while a victim's pages are being copied, and is refilled before host writes continue). So
//! `α = (logical blocks + spare blocks) / logical blocks`, i.e. `1 + op_percent / 100` when the
//! spare space is a whole number of blocks, as here. The remaining mismatch is a fraction of a
//! block (the open frontier, the pool oscillating between `threshold` and `threshold + 1`), so the
//! device is large (8,000 logical blocks) to make it negligible.
//!
//! **Steady state.** The device is filled sequentially, aged by 3× its logical capacity of random
//! writes, then write amplification is measured over the next 3× capacity.

mod common;

use common::*;
use flashbuf_flash::analytic::desnoyers_fifo_wa;
use flashbuf_flash::{Device, GcPolicy};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PPB: u32 = 32;
const LOGICAL_BLOCKS: u32 = 8_000;

/// Steady-state WA of uniform random writes, and the model's α for that device.
fn steady_wa(gc: GcPolicy, op_percent: u32) -> (f64, f64) {
    let spare = LOGICAL_BLOCKS * op_percent / 100;
    assert_eq!(spare * 100, LOGICAL_BLOCKS * op_percent, "whole spare blocks keep α exact");
    let mut d = page(PPB, LOGICAL_BLOCKS, spare, gc, None);
    let pages = d.logical_pages();
    for p in 0..pages {
        d.write(p).unwrap();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(op_percent as u64);
    for _ in 0..3 * pages {
        d.write(rng.random_range(0..pages)).unwrap();
    }
    let before = d.stats();
    for _ in 0..3 * pages {
        d.write(rng.random_range(0..pages)).unwrap();
    }
    let after = d.stats();
    let wa = (after.flash_programs - before.flash_programs) as f64 / (after.host_writes - before.host_writes) as f64;
    let alpha = (LOGICAL_BLOCKS + spare) as f64 / LOGICAL_BLOCKS as f64;
    (wa, alpha)
}

fn check(op_percent: u32) {
    let (fifo, alpha) = steady_wa(GcPolicy::Fifo, op_percent);
    let model = desnoyers_fifo_wa(alpha).unwrap();
    let err = (fifo - model).abs() / model;
    assert!(
        err < 0.01,
        "OP {op_percent}%: FIFO WA {fifo:.4}, Desnoyers {model:.4} (α = {alpha}), error {:.3}%",
        err * 100.0
    );
    let (greedy, _) = steady_wa(GcPolicy::Greedy, op_percent);
    assert!(greedy <= model, "OP {op_percent}%: greedy WA {greedy:.4} above FIFO's model {model:.4}");
    eprintln!(
        "OP {op_percent:>2}%: α = {alpha:.2}, Desnoyers {model:.4}, FIFO {fifo:.4} ({:+.3}%), greedy {greedy:.4}",
        (fifo - model) / model * 100.0
    );
}

#[test]
fn fifo_matches_desnoyers_at_7_percent_over_provisioning() {
    check(7);
}

#[test]
fn fifo_matches_desnoyers_at_15_percent_over_provisioning() {
    check(15);
}

#[test]
fn fifo_matches_desnoyers_at_28_percent_over_provisioning() {
    check(28);
}
