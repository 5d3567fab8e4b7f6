//! The B+-tree against `BTreeMap` over random operation sequences (inserts, updates, lookups,
//! range scans, range updates), in buffers of 8–16 frames that force constant eviction, under
//! every registered policy (block-level ones evicting several pages at once, BP-REF padding,
//! REF with a full victim window bypassing) and three test policies (padding, two victims,
//! bypass), on a memory store and on simulated flash. After each sequence: the tree's structure
//! check, the buffer's invariants, no pin left, and a clean shutdown and reopen that must give
//! back every record.

mod common;

use std::collections::BTreeMap;

use common::{BlockPadLru, BypassFifth, TestRng, TwoAtOnce, any, bm_on, mem_bm, policy_matrix};
use flashbuf_engine::btree::BTree;
use flashbuf_engine::buffer::{BufferManager, BufferPolicy, Mono};
use flashbuf_engine::fault::{FaultConfig, FaultStore};
use flashbuf_engine::page::PageFile;
use flashbuf_engine::workload::fill_value;
use flashbuf_flash::{DeviceConfig, DeviceKind, MemStore, NandPreset, PageStore, Precondition, SimStore};
use flashbuf_policy::{NoParams, Replacer};
use proptest::prelude::*;

const PAGE: usize = 512;
const VALUE: usize = 24;
const STORE_PAGES: u64 = 3000;

fn value_for(key: u32, version: u64) -> Vec<u8> {
    let mut v = vec![0; VALUE];
    fill_value(key, version, &mut v);
    v
}

/// One operation of a sequence.
#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    Update(u32),
    Get(u32),
    Scan(u32, usize),
    UpdateRange(u32, usize),
}

fn random_ops(seed: u64, n: usize, keys: u64) -> Vec<Op> {
    let mut rng = TestRng(seed);
    (0..n)
        .map(|_| {
            let key = rng.below(keys) as u32;
            match rng.below(20) {
                0..=7 => Op::Insert(key),
                8..=11 => Op::Update(key),
                12..=15 => Op::Get(key),
                16..=18 => Op::Scan(key, 1 + rng.below(40) as usize),
                _ => Op::UpdateRange(key, 1 + rng.below(40) as usize),
            }
        })
        .collect()
}

/// Applies `ops` to the tree and to a `BTreeMap`, comparing every answer; returns the model.
fn apply<S: PageStore, P: BufferPolicy>(tree: &BTree<S, P>, ops: &[Op], label: &str) -> BTreeMap<u32, Vec<u8>> {
    let mut model: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let mut out = vec![0u8; VALUE];
    for (i, op) in ops.iter().enumerate() {
        let version = i as u64 + 1;
        let ctx = || format!("{label}: op {i} {op:?}");
        match *op {
            Op::Insert(k) => {
                let v = value_for(k, version);
                let expect = !model.contains_key(&k);
                assert_eq!(tree.insert(k, &v).unwrap_or_else(|e| panic!("{}: {e}", ctx())), expect, "{}", ctx());
                model.entry(k).or_insert(v);
            }
            Op::Update(k) => {
                let v = value_for(k, version);
                let expect = model.contains_key(&k);
                assert_eq!(tree.update(k, &v).unwrap_or_else(|e| panic!("{}: {e}", ctx())), expect, "{}", ctx());
                if expect {
                    model.insert(k, v);
                }
            }
            Op::Get(k) => {
                let found = tree.get(k, &mut out).unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                assert_eq!(found, model.contains_key(&k), "{}", ctx());
                if found {
                    assert_eq!(&out, &model[&k], "{}", ctx());
                }
            }
            Op::Scan(start, limit) => {
                let mut got: Vec<(u32, Vec<u8>)> = Vec::new();
                let n = tree
                    .scan(start, limit, |k, v| {
                        got.push((k, v.to_vec()));
                        true
                    })
                    .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                let want: Vec<(u32, Vec<u8>)> =
                    model.range(start..).take(limit).map(|(k, v)| (*k, v.clone())).collect();
                assert_eq!(n, want.len(), "{}", ctx());
                assert_eq!(got, want, "{}", ctx());
            }
            Op::UpdateRange(start, limit) => {
                let n = tree
                    .update_range(start, limit, |k, v| fill_value(k, version, v))
                    .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                let keys: Vec<u32> = model.range(start..).take(limit).map(|(k, _)| *k).collect();
                assert_eq!(n, keys.len(), "{}", ctx());
                for k in keys {
                    model.insert(k, value_for(k, version));
                }
            }
        }
        if i % 50 == 0 {
            tree.buffer().check_invariants().unwrap_or_else(|e| panic!("{}: {e}", ctx()));
        }
    }
    tree.check().unwrap_or_else(|e| panic!("{label}: {e}"));
    tree.buffer().check_invariants().unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(tree.buffer().pinned_frames(), 0, "{label}: pins left");
    assert_eq!(tree.records(), model.len() as u64, "{label}");
    model
}

/// Reopens a closed tree's store with a fresh LRU buffer and compares every record.
fn reopen_and_compare<S: PageStore>(file: PageFile<S>, model: &BTreeMap<u32, Vec<u8>>, label: &str) {
    let store = file.into_store();
    let (file, header) = PageFile::open(store).unwrap_or_else(|e| panic!("{label}: reopen: {e}"));
    let bm = BufferManager::new(file, header, any("lru", 8), 8).unwrap();
    let tree = BTree::open(bm).unwrap_or_else(|e| panic!("{label}: reopen tree: {e}"));
    assert_eq!(tree.records(), model.len() as u64, "{label}");
    let mut got = BTreeMap::new();
    tree.scan(0, usize::MAX, |k, v| {
        got.insert(k, v.to_vec());
        true
    })
    .unwrap();
    assert!(got == *model, "{label}: contents after a clean shutdown and reopen differ");
    tree.check().unwrap();
}

fn differential<S: PageStore, P: BufferPolicy>(bm: BufferManager<S, P>, seed: u64, ops: usize, label: &str) {
    let tree = BTree::create(bm, VALUE).unwrap();
    let model = apply(&tree, &random_ops(seed, ops, 3000), label);
    let (file, _) = tree.close().unwrap();
    reopen_and_compare(file, &model, label);
}

#[test]
fn every_policy_matches_the_model_in_a_tiny_buffer() {
    for (i, policy) in policy_matrix().into_iter().enumerate() {
        for (frames, seed) in [(8usize, 1u64), (16, 2)] {
            let label = format!("{} with {frames} frames, seed {seed}", policy.label());
            let bm = mem_bm(PAGE, STORE_PAGES, flashbuf_policy::AnyPolicy::new(frames, &policy), frames);
            let tree = BTree::create(bm, VALUE).unwrap();
            let model = apply(&tree, &random_ops(seed * 1000 + i as u64, 1500, 3000), &label);
            assert!(tree.height() >= 3, "{label}: a tree of three levels at least");
            let s = tree.buffer().stats();
            assert!(s.evictions > 300 && s.page_writes() > 100, "{label}: constant eviction ({s:?})");
            let (file, _) = tree.close().unwrap();
            reopen_and_compare(file, &model, &label);
        }
    }
}

/// With a write-ahead log (small enough that the log runs out of room and checkpoints often):
/// the same answers as the model under every policy and the three test policies, and after a
/// power cut with nothing unsynced lost but what was never acknowledged, every record back.
#[test]
fn with_a_log_every_policy_matches_the_model_and_a_power_cut_loses_no_record() {
    fn run<P: BufferPolicy>(policy: P, frames: usize, seed: u64, label: &str) {
        let store = FaultStore::new(MemStore::new(PAGE, STORE_PAGES + 64), FaultConfig { seed, ..Default::default() });
        let (file, header) = PageFile::create_with_log(store, 64).unwrap();
        let bm = BufferManager::new(file, header, policy, frames).unwrap();
        let tree = BTree::create(bm, VALUE).unwrap();
        let model = apply(&tree, &random_ops(seed, 1500, 3000), label);
        let log = tree.buffer().log_stats().unwrap();
        assert!(log.space_checkpoints > 0, "{label}: the log ran out of room and checkpointed ({log:?})");
        // Power fails with the last operations only in the log.
        let durable = tree.buffer().with_store(|s| {
            s.cut_power().unwrap();
            std::mem::replace(s, FaultStore::new(MemStore::new(PAGE, 1), FaultConfig::default())).into_durable()
        });
        drop(tree);
        let (file, _) = PageFile::open(durable).unwrap_or_else(|e| panic!("{label}: recovery: {e}"));
        assert!(file.recovery().unwrap().groups > 0, "{label}: recovery replayed the log");
        reopen_and_compare(file, &model, label);
    }
    for (i, policy) in policy_matrix().into_iter().enumerate() {
        let label = format!("{} with a log", policy.label());
        run(flashbuf_policy::AnyPolicy::new(24, &policy), 24, 100 + i as u64, &label);
    }
    run(mono::<BlockPadLru>(24), 24, 7, "block padding with a log");
    run(mono::<TwoAtOnce>(24), 24, 8, "two victims with a log");
    run(mono::<BypassFifth>(24), 24, 9, "bypass with a log");
}

fn mono<R: Replacer<Config = NoParams> + Send>(frames: usize) -> Mono<R> {
    Mono(R::new(frames, &NoParams))
}

#[test]
fn padding_multi_victim_and_bypass_evictions_keep_every_record() {
    for seed in 1..=3u64 {
        differential(mem_bm(PAGE, STORE_PAGES, mono::<BlockPadLru>(8), 8), seed, 2000, "block padding");
        differential(mem_bm(PAGE, STORE_PAGES, mono::<TwoAtOnce>(8), 8), seed, 2000, "two victims");
        differential(mem_bm(PAGE, STORE_PAGES, mono::<BypassFifth>(8), 8), seed, 2000, "bypass");
    }
}

#[test]
fn padding_is_counted_like_the_simulator() {
    // A padded eviction writes the whole block: buffered victims plus padding copies of the
    // pages not buffered; reads only the latter.
    let tree = BTree::create(mem_bm(PAGE, STORE_PAGES, mono::<BlockPadLru>(8), 8), VALUE).unwrap();
    let _ = apply(&tree, &random_ops(9, 1500, 3000), "padding counts");
    let s = tree.buffer().stats();
    assert!(s.padding_writes > 0, "the test policy pads");
    assert!(s.evict_writes < s.padding_writes / 4, "single-page write-backs only when a block page is pinned");
    assert!(s.padding_reads > 0 && s.padding_reads < s.padding_writes);
    assert_eq!(s.padding_writes % common::PAD_PPB, 0, "whole blocks");
    let t = BTree::create(mem_bm(PAGE, STORE_PAGES, mono::<BypassFifth>(8), 8), VALUE).unwrap();
    let _ = apply(&t, &random_ops(9, 1500, 3000), "bypass counts");
    assert!(t.buffer().stats().bypass_writes > 0);
}

#[test]
fn simulated_flash_stores_keep_every_record_and_stay_consistent() {
    let mut specs = vec!["lru", "cflru", "ad-lru"];
    for extra in ["cfdc", "fab:ppb=4", "bp-ref:ppb=4,pad=0"] {
        if extra.parse::<flashbuf_policy::PolicyConfig>().is_ok() {
            specs.push(extra);
        }
    }
    for kind in [DeviceKind::Page, DeviceKind::Bast, DeviceKind::Fast] {
        for spec in &specs {
            let config = DeviceConfig {
                kind,
                preset: NandPreset::Ref,
                log_blocks: 4,
                op_percent: 10.0,
                precondition: Precondition::Sequential,
                verify: true,
                ..Default::default()
            };
            let store = SimStore::new(config.build(STORE_PAGES).unwrap(), PAGE);
            let label = format!("{spec} on {kind}");
            let bm = bm_on(store, any(spec, 12), 12);
            let tree = BTree::create(bm, VALUE).unwrap();
            let model = apply(&tree, &random_ops(77, 1500, 3000), &label);
            let dev = tree.buffer().device_stats();
            let s = tree.buffer().stats();
            assert_eq!(dev.host_writes, s.page_writes(), "{label}: every device write is a counted page write");
            assert_eq!(dev.host_reads, s.page_reads(), "{label}: every device read is a counted page read");
            tree.buffer().with_store(|s| flashbuf_flash::Device::check_invariants(s.device())).unwrap();
            let (file, _) = tree.close().unwrap();
            reopen_and_compare(file, &model, &label);
        }
    }
}

#[test]
fn bulk_load_builds_the_shape_it_promises() {
    for (count, fill) in [(0u64, 0.5), (1, 0.5), (16, 1.0), (17, 1.0), (5000, 0.5), (5000, 1.0), (12_345, 0.3)] {
        let bm = mem_bm(PAGE, 20_000, any("lru", 16), 16);
        let tree = BTree::bulk_load(bm, VALUE, count, fill, 1.0, |i, v| {
            fill_value(3 * i as u32, 0, v);
            3 * i as u32
        })
        .unwrap();
        tree.check().unwrap();
        let layout = tree.layout();
        let per_leaf = ((layout.leaf_cap as f64 * fill).floor() as u64).max(1);
        let leaves = count.div_ceil(per_leaf).max(1);
        assert_eq!(tree.records(), count);
        assert!(tree.buffer().page_count() - 1 <= layout.pages_for(count, fill, 1.0), "pages_for is an upper bound");
        // Leaves are pages 1..=leaves, in key order.
        let mut expect_key = 0u32;
        let n = tree
            .scan(0, usize::MAX, |k, v| {
                assert_eq!(k, expect_key);
                assert_eq!(v, value_for(k, 0).as_slice());
                expect_key += 3;
                true
            })
            .unwrap();
        assert_eq!(n as u64, count);
        let mut out = vec![0u8; VALUE];
        if count > 0 {
            assert!(tree.get(3 * (count as u32 - 1), &mut out).unwrap());
            assert!(!tree.get(1, &mut out).unwrap());
        }
        assert!(tree.buffer().page_count() > leaves);
        let (file, _) = tree.close().unwrap();
        let (file, header) = PageFile::open(file.into_store()).unwrap();
        let t = BTree::open(BufferManager::new(file, header, any("lru", 8), 8).unwrap()).unwrap();
        assert_eq!(t.records(), count);
        t.check().unwrap();
    }
    // The paper's layout: 4 KiB pages, 256-byte values: 15 records per leaf, 7 when half full.
    let layout = flashbuf_engine::btree::Layout::new(4096 - 32, 256).unwrap();
    assert_eq!((layout.leaf_cap, layout.inner_cap), (15, 336));
    assert_eq!(layout.pages_for(1_000_000, 0.5, 1.0), 142_858 + 424 + 2 + 1);
}

#[test]
fn bad_tree_input_is_an_error() {
    let bm = mem_bm(PAGE, 100, any("lru", 8), 8);
    let e = BTree::bulk_load(bm, VALUE, 3, 0.5, 1.0, |i, _| 10 - i as u32).err().unwrap();
    assert!(e.to_string().contains("strictly ascending"), "{e}");
    let tree = BTree::create(mem_bm(PAGE, 100, any("lru", 8), 8), VALUE).unwrap();
    assert!(tree.insert(1, &[0u8; 3]).is_err());
    assert!(BTree::create(mem_bm(PAGE, 100, any("lru", 8), 8), 400).is_err(), "one record per leaf is too few");
    // A database without a tree.
    let bm = mem_bm(PAGE, 100, any("lru", 8), 8);
    assert!(BTree::open(bm).err().unwrap().to_string().contains("no B+-tree"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Shrinkable sequences over a narrow key range (many duplicates, splits, range updates).
    #[test]
    fn shrinkable_sequences_match_the_model(ops in proptest::collection::vec(
        (0u8..5, 0u32..600, 1usize..30).prop_map(|(k, key, len)| match k {
            0 | 1 => Op::Insert(key),
            2 => Op::Update(key),
            3 => Op::Scan(key, len),
            _ => Op::UpdateRange(key, len),
        }),
        1..600,
    )) {
        let tree = BTree::create(mem_bm(PAGE, 2000, mono::<BlockPadLru>(8), 8), VALUE).unwrap();
        let model = apply(&tree, &ops, "proptest");
        let (file, _) = tree.close().unwrap();
        reopen_and_compare(file, &model, "proptest");
    }
}

#[test]
fn a_store_without_room_is_an_error_not_a_panic() {
    let tree = BTree::create(mem_bm(PAGE, 20, any("lru", 8), 8), VALUE).unwrap();
    let mut last = Ok(true);
    for k in 0..10_000u32 {
        last = tree.insert(k, &value_for(k, 1));
        if last.is_err() {
            break;
        }
    }
    let e = last.expect_err("the store fills up");
    assert!(e.to_string().contains("full"), "{e}");
    // The failed insert changed nothing: the tree is whole and every earlier record is there.
    tree.check().unwrap();
    let mut out = vec![0u8; VALUE];
    for k in 0..tree.records() as u32 {
        assert!(tree.get(k, &mut out).unwrap(), "key {k}");
    }
}
