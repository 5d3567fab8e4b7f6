//! Several threads on one B+-tree and buffer manager, with the buffer's invariants checked
//! continuously by another thread and a watchdog that fails the test on a hang (no deadlock:
//! every run must finish within its time limit).

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use common::{BlockPadLru, BypassFifth, TestRng, TwoAtOnce, any, mem_bm};
use flashbuf_engine::btree::BTree;
use flashbuf_engine::buffer::{BufferManager, BufferPolicy, Mono};
use flashbuf_engine::page::PageFile;
use flashbuf_engine::workload::{WorkloadConfig, fill_value, run_txn, transactions, value_version};
use flashbuf_flash::PageStore;
use flashbuf_policy::{AnyPolicy, NoParams, PolicyConfig, Replacer};

const PAGE: usize = 1024;
const VALUE: usize = 64;
const WORKERS: usize = 4;
/// Generous: each run takes well under a second; a hang is far beyond this.
const WATCHDOG: Duration = Duration::from_secs(60);

/// Runs `f` on its own thread and fails if it does not finish within [`WATCHDOG`].
fn with_watchdog(label: &str, f: impl FnOnce() + Send + 'static) {
    with_watchdog_for(WATCHDOG, label, f)
}

fn with_watchdog_for(limit: Duration, label: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(limit) {
        Ok(()) => handle.join().expect("the test thread panicked"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The thread panicked: surface its panic.
            if let Err(p) = handle.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{label}: no progress within {limit:?}: deadlock or hang"),
    }
}

fn loaded_tree<P: BufferPolicy>(policy: P, frames: usize, records: u64) -> BTree<flashbuf_flash::MemStore, P> {
    loaded_tree_with_log(policy, frames, records, 0)
}

/// `loaded_tree` with a write-ahead log of `log_pages` pages (0: none).
fn loaded_tree_with_log<P: BufferPolicy>(
    policy: P,
    frames: usize,
    records: u64,
    log_pages: u64,
) -> BTree<flashbuf_flash::MemStore, P> {
    let bm = if log_pages == 0 {
        mem_bm(PAGE, 4 * records, policy, frames)
    } else {
        let store = flashbuf_flash::MemStore::new(PAGE, 4 * records + log_pages);
        let (file, header) = PageFile::create_with_log(store, log_pages).unwrap();
        BufferManager::new(file, header, policy, frames).unwrap()
    };
    BTree::bulk_load(bm, VALUE, records, 0.5, 1.0, |i, v| {
        fill_value(i as u32, 0, v);
        i as u32
    })
    .unwrap()
}

/// The CFDC workload's transactions on `WORKERS` threads plus a thread checking invariants.
fn workload_run<P: BufferPolicy + 'static>(label: String, policy: P, frames: usize) {
    workload_run_with_log(label, policy, frames, 0)
}

/// `workload_run` on a database with a write-ahead log of `log_pages` pages (0: none).
fn workload_run_with_log<P: BufferPolicy + 'static>(label: String, policy: P, frames: usize, log_pages: u64) {
    with_watchdog(&label.clone(), move || {
        let records = 6000u64;
        let tree = loaded_tree_with_log(policy, frames, records, log_pages);
        let mut config = WorkloadConfig::baseline("lru".parse().unwrap()).scaled(0.02);
        config.records = records;
        config.value_size = VALUE;
        config.range_len = 40;
        config.buffer_pages = frames;
        let txns = transactions(&config).unwrap();
        let next = AtomicUsize::new(0);
        let done = AtomicBool::new(false);
        let checks = AtomicUsize::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                // At least one check, then as many as fit while the workers run.
                loop {
                    tree.buffer().check_invariants().unwrap_or_else(|e| panic!("{label}: {e}"));
                    checks.fetch_add(1, Ordering::Relaxed);
                    if done.load(Ordering::Acquire) {
                        break;
                    }
                    std::thread::yield_now();
                }
            });
            let workers: Vec<_> = (0..WORKERS)
                .map(|_| {
                    s.spawn(|| {
                        let mut value = vec![0u8; VALUE];
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(t) = txns.get(i) else { break };
                            run_txn(&tree, &config, t, i as u64 + 1, &mut value)
                                .unwrap_or_else(|e| panic!("{label}: txn {i}: {e}"));
                        }
                    })
                })
                .collect();
            for w in workers {
                w.join().unwrap();
            }
            done.store(true, Ordering::Release);
        });
        assert!(checks.load(Ordering::Relaxed) > 0);
        assert_eq!(tree.buffer().pinned_frames(), 0, "{label}: pins left");
        tree.buffer().check_invariants().unwrap();
        tree.check().unwrap();
        let s = tree.buffer().stats();
        assert!(s.evictions > 1000, "{label}: the buffer is under pressure ({s:?})");
        // Every record holds a value some transaction (or the load) wrote for it, whole.
        let mut n = 0u64;
        tree.scan(0, usize::MAX, |k, v| {
            assert_eq!(k as u64, n, "{label}");
            assert!(value_version(k, v).is_some(), "{label}: key {k} holds a torn or foreign value");
            n += 1;
            true
        })
        .unwrap();
        assert_eq!(n, records);
        if log_pages > 0 {
            let log = tree.buffer().log_stats().unwrap();
            assert!(log.space_checkpoints > 0, "{label}: the small log checkpointed for room ({log:?})");
        }
        let (file, _) = tree.close().unwrap();
        assert!(file.store().stats().host_writes > 0);
    });
}

/// The same with a write-ahead log: range updates hold their leaves until they commit, and a
/// log of 200 pages runs out of room and checkpoints while the workers run.
#[test]
fn four_workers_run_the_cfdc_workload_with_a_log() {
    let mut specs = vec!["lru", "cflru", "ad-lru"];
    for extra in ["cfdc", "fab:ppb=4", "bp-ref:ppb=4,pad=0", "ref:ppb=4,vw=1"] {
        if extra.parse::<PolicyConfig>().is_ok() {
            specs.push(extra);
        }
    }
    let frames = 64;
    for spec in specs {
        let policy = AnyPolicy::new(frames, &spec.parse().unwrap());
        workload_run_with_log(format!("{spec} with a log, {frames} frames"), policy, frames, 200);
    }
    workload_run_with_log("bypass with a log".into(), Mono(BypassFifth::new(frames, &NoParams)), frames, 200);
}

#[test]
fn four_workers_run_the_cfdc_workload_with_invariants_checked() {
    let mut specs = vec!["lru", "cflru", "ad-lru", "arc"];
    for extra in ["cfdc", "fab:ppb=4", "bp-ref:ppb=4,pad=0", "ref:ppb=4,vw=1"] {
        if extra.parse::<PolicyConfig>().is_ok() {
            specs.push(extra);
        }
    }
    for spec in specs {
        let frames = 16;
        workload_run(format!("{spec}, {frames} frames"), AnyPolicy::new(frames, &spec.parse().unwrap()), frames);
    }
    workload_run("block padding".into(), Mono(BlockPadLru::new(16, &NoParams)), 16);
    workload_run("two victims".into(), Mono(TwoAtOnce::new(16, &NoParams)), 16);
    workload_run("bypass".into(), Mono(BypassFifth::new(16, &NoParams)), 16);
}

/// Threads own disjoint key classes (key ≡ thread mod 4) and insert (splitting nodes under the
/// exclusive tree lock), update, read and scan concurrently; each keeps a model of its own
/// keys. At the end the tree must hold exactly the union: no update lost, no record lost.
fn disjoint_writers<P: BufferPolicy + 'static>(label: String, policy: P, frames: usize) {
    with_watchdog(&label.clone(), move || {
        let loaded = 3000u64;
        let tree = loaded_tree(policy, frames, loaded);
        let models: Vec<BTreeMap<u32, u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..WORKERS as u64)
                .map(|t| {
                    let tree = &tree;
                    let label = &label;
                    s.spawn(move || {
                        let mut model: BTreeMap<u32, u64> =
                            (0..loaded as u32).filter(|k| *k as u64 % WORKERS as u64 == t).map(|k| (k, 0)).collect();
                        let mut rng = TestRng(t + 99);
                        let mut value = vec![0u8; VALUE];
                        for i in 0..2500u64 {
                            let version = (t << 32) | (i + 1);
                            let own = (rng.below(3 * loaded / WORKERS as u64) * WORKERS as u64 + t) as u32;
                            match rng.below(8) {
                                0..=2 => {
                                    fill_value(own, version, &mut value);
                                    let inserted = tree.insert(own, &value).unwrap();
                                    assert_eq!(inserted, !model.contains_key(&own), "{label}");
                                    model.entry(own).or_insert(version);
                                }
                                3..=4 => {
                                    fill_value(own, version, &mut value);
                                    let updated = tree.update(own, &value).unwrap();
                                    assert_eq!(updated, model.contains_key(&own), "{label}");
                                    if updated {
                                        model.insert(own, version);
                                    }
                                }
                                5..=6 => {
                                    let any_key = rng.below(3 * loaded) as u32;
                                    if tree.get(any_key, &mut value).unwrap() {
                                        assert!(value_version(any_key, &value).is_some(), "{label}: key {any_key}");
                                    }
                                    if let Some(&v) = model.get(&own) {
                                        assert!(tree.get(own, &mut value).unwrap());
                                        assert_eq!(value_version(own, &value), Some(v), "{label}: key {own}");
                                    }
                                }
                                _ => {
                                    let mut prev: Option<u32> = None;
                                    tree.scan(rng.below(3 * loaded) as u32, 50, |k, v| {
                                        assert!(prev.is_none_or(|p| p < k), "{label}: scan order");
                                        assert!(value_version(k, v).is_some(), "{label}: key {k}");
                                        prev = Some(k);
                                        true
                                    })
                                    .unwrap();
                                }
                            }
                        }
                        model
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(tree.buffer().pinned_frames(), 0);
        tree.buffer().check_invariants().unwrap();
        tree.check().unwrap();
        let expected: BTreeMap<u32, u64> = models.into_iter().flatten().collect();
        let mut got = BTreeMap::new();
        tree.scan(0, usize::MAX, |k, v| {
            got.insert(k, value_version(k, v).expect("well-formed"));
            true
        })
        .unwrap();
        assert!(got == expected, "{label}: the tree differs from the union of the threads' models");
        assert!(tree.height() >= 3);
    });
}

#[test]
fn concurrent_inserts_updates_and_scans_lose_nothing() {
    let mut specs = vec!["lru", "cflru"];
    for extra in ["cfdc", "bp-ref:ppb=4,pad=0"] {
        if extra.parse::<PolicyConfig>().is_ok() {
            specs.push(extra);
        }
    }
    for spec in specs {
        disjoint_writers(spec.to_string(), any(spec, 16), 16);
    }
    disjoint_writers("block padding".into(), Mono(BlockPadLru::new(16, &NoParams)), 16);
    disjoint_writers("bypass".into(), Mono(BypassFifth::new(16, &NoParams)), 16);
}

/// A longer soak of both concurrency tests over several seeds and buffer sizes (run with
/// `cargo test -p flashbuf-engine --test concurrency -- --ignored`).
#[test]
#[ignore]
fn soak() {
    for round in 0..20u64 {
        for spec in ["lru", "cflru", "cfdc", "fab:ppb=4", "bp-ref:ppb=4,pad=0", "ref:ppb=4,vw=1"] {
            let Ok(policy) = spec.parse::<PolicyConfig>() else { continue };
            let frames = 12 + (round as usize % 3) * 8;
            workload_run(format!("soak {round} {spec}"), AnyPolicy::new(frames, &policy), frames);
            disjoint_writers(format!("soak {round} {spec}"), AnyPolicy::new(frames, &policy), frames);
        }
        workload_run(format!("soak {round} padding"), Mono(BlockPadLru::new(12, &NoParams)), 12);
        disjoint_writers(format!("soak {round} bypass"), Mono(BypassFifth::new(12, &NoParams)), 12);
    }
}

#[test]
fn the_watchdog_reports_a_hang() {
    // The watchdog itself must work: a closure that never finishes in time is reported.
    let result = std::panic::catch_unwind(|| {
        with_watchdog_for(Duration::from_millis(50), "blocked", || std::thread::sleep(Duration::from_secs(2)))
    });
    let message = result.err().and_then(|p| p.downcast::<String>().ok()).expect("a panic with a message");
    assert!(message.contains("deadlock or hang"), "{message}");
}

#[allow(dead_code)]
fn assert_send_sync<S: PageStore, P: BufferPolicy>() {
    fn is<T: Send + Sync>() {}
    is::<flashbuf_engine::buffer::BufferManager<S, P>>();
    is::<BTree<S, P>>();
}
