//! The engine's buffer manager makes the simulator's decisions: a single-threaded workload run
//! records its page-reference string; replaying that trace through `flashbuf_sim` with the same
//! policy, buffer size and padding range gives the same hits, misses, fetches, write-backs,
//! padding and final flush, for every registered policy. On the ideal device the simulated
//! device times agree too.

mod common;

use common::policy_matrix;
use flashbuf_engine::store::StoreSpec;
use flashbuf_engine::workload::{WorkloadConfig, WorkloadResult, run_workload};
use flashbuf_flash::{DeviceConfig, DeviceKind, IdealConfig, IdealDevice};
use flashbuf_policy::PolicyConfig;
use flashbuf_sim::{RunOptions, RunOutput};
use flashbuf_trace::{ReadOptions, open_path};

fn small(policy: PolicyConfig, trace: std::path::PathBuf) -> WorkloadConfig {
    let mut c = WorkloadConfig::baseline(policy).scaled(0.03);
    c.records = 20_000;
    c.page_size = 1024;
    c.value_size = 64;
    c.range_len = 64;
    c.buffer_pages = 48;
    c.record_trace = Some(trace);
    c.verify = true;
    c
}

fn replay(config: &WorkloadConfig) -> RunOutput {
    let pages = config.database_pages().unwrap();
    let device = IdealDevice::new(IdealConfig { read_ns: 25_000, write_ns: 220_000, logical_pages: pages }).unwrap();
    let mut opened = open_path(config.record_trace.as_ref().unwrap(), &ReadOptions::default()).unwrap();
    let options = RunOptions { pages_hint: pages, ..RunOptions::new(config.buffer_pages) };
    flashbuf_sim::run(&config.policy, device, &mut *opened.source, &options, &mut |_| {}).unwrap()
}

fn compare(label: &str, e: &WorkloadResult, s: &RunOutput) {
    let c = &s.counters;
    assert_eq!(e.requests, c.requests, "{label}: requests");
    assert_eq!(e.hits, c.hits, "{label}: hits");
    assert_eq!(e.misses, c.misses, "{label}: misses");
    // A write the policy bypasses is read first by both (a transaction changes part of the
    // page; the simulator fetches a bypassed write miss unless in write-buffer mode).
    assert_eq!(e.fetches, c.fetches, "{label}: fetches");
    assert_eq!(e.padding_reads, c.padding_reads, "{label}: padding reads");
    assert_eq!(e.evict_writes, c.evict_writes, "{label}: victim write-backs");
    assert_eq!(e.padding_writes, c.padding_writes, "{label}: padding writes");
    assert_eq!(e.bypass_writes, c.bypass_writes, "{label}: bypass writes");
    assert_eq!(e.flush_writes, c.flush_writes, "{label}: final flush");
}

#[test]
fn a_recorded_run_replays_identically_in_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (i, policy) in policy_matrix().into_iter().enumerate() {
        let label = policy.label();
        let trace = dir.path().join(format!("run{i}.fbt"));
        let config = small(policy, trace);
        let engine = run_workload(&config, &StoreSpec::Memory).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert!(engine.misses > engine.requests / 20, "{label}: the buffer is small enough to evict");
        let sim = replay(&config);
        compare(&label, &engine, &sim);
        checked += 1;
    }
    assert!(checked >= 11);
}

#[test]
fn device_time_on_the_ideal_device_matches_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    for spec in ["lru", "cflru", "cfdc", "bp-ref:ppb=4,pad=0"] {
        let Ok(policy) = spec.parse::<PolicyConfig>() else { continue };
        let config = small(policy, dir.path().join(format!("{spec}.txt")));
        let store = StoreSpec::Sim(DeviceConfig { kind: DeviceKind::Ideal, ..Default::default() });
        let engine = run_workload(&config, &store).unwrap();
        let sim = replay(&config);
        compare(spec, &engine, &sim);
        // The engine's device time includes the file header written by the final checkpoint.
        let header_ns = 220_000;
        assert_eq!((engine.device_s * 1e9).round() as u64, sim.device.time_ns + header_ns, "{spec}");
        assert_eq!(engine.time_model, "wall+device");
        assert!((engine.time_s - engine.wall_s - engine.device_s).abs() < 1e-9);
    }
}
