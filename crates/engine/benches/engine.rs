//! Throughput of the engine's hot paths, in operations per second of wall-clock time:
//!
//! * buffer manager fix + unfix of a buffered page (read and write guards), all hits, with 1 and
//!   2 threads (each thread does the same number of operations; the figure is the total over
//!   the wall-clock time);
//! * B+-tree point lookups when every page is cached (100,000 records of 256 bytes on 4 KiB
//!   pages, leaves half full: 14,286 leaves, 3 levels), uniform keys, with 1 and 2 threads;
//! * B+-tree point updates on the same tree, without and with a write-ahead log (on a memory
//!   store, where syncs are free: the log's CPU cost), with 1 and 2 threads.
//!
//! Each measurement is repeated and the best run kept. Run with
//! `cargo bench -p flashbuf-engine --bench engine`; `ENGINE_BENCH_OPS` sets the operations per
//! thread (default 2,000,000), `ENGINE_BENCH_POLICIES` the policies (default `lru,cflru,cfdc`;
//! those not registered are skipped).

use std::hint::black_box;
use std::time::Instant;

use flashbuf_engine::btree::BTree;
use flashbuf_engine::buffer::BufferManager;
use flashbuf_engine::page::PageFile;
use flashbuf_engine::workload::fill_value;
use flashbuf_flash::MemStore;
use flashbuf_policy::{AnyPolicy, PolicyConfig};

const REPEATS: usize = 3;

fn ops_per_thread() -> u64 {
    std::env::var("ENGINE_BENCH_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(2_000_000)
}

/// A tiny deterministic generator (SplitMix64) for page and key choices.
struct Mix(u64);

impl Mix {
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Best of `REPEATS` runs of `threads` threads each calling `work(thread, ops)`; returns total
/// operations per second.
fn measure(threads: usize, ops: u64, work: &(dyn Fn(usize, u64) + Sync)) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..REPEATS {
        let start = Instant::now();
        std::thread::scope(|s| {
            for t in 0..threads {
                s.spawn(move || work(t, ops));
            }
        });
        best = best.min(start.elapsed().as_secs_f64());
    }
    (threads as u64 * ops) as f64 / best
}

fn fix_unfix(policy: &PolicyConfig, ops: u64) {
    const PAGES: u64 = 512;
    const FRAMES: usize = 1024;
    let (file, header) = PageFile::create(MemStore::new(4096, PAGES + 1)).unwrap();
    let bm = BufferManager::new(file, header, AnyPolicy::new(FRAMES, policy), FRAMES).unwrap();
    for _ in 1..=PAGES {
        drop(bm.new_page().unwrap());
    }
    for threads in [1, 2] {
        let read = measure(threads, ops, &|t, n| {
            let mut rng = Mix(t as u64 + 1);
            for _ in 0..n {
                let page = 1 + rng.next() % PAGES;
                let g = bm.read(page).unwrap();
                black_box(g[0]);
            }
        });
        let write = measure(threads, ops, &|t, n| {
            let mut rng = Mix(t as u64 + 7);
            for _ in 0..n {
                let page = 1 + rng.next() % PAGES;
                let mut g = bm.write(page).unwrap();
                g[0] = g[0].wrapping_add(1);
            }
        });
        assert_eq!(bm.stats().misses, PAGES, "every fix after the first touch is a hit");
        println!(
            "bufmgr fix+unfix hits  {:<12} {threads} thread{}: read {:>6.2} M ops/s   write {:>6.2} M ops/s",
            policy.label(),
            if threads == 1 { " " } else { "s" },
            read / 1e6,
            write / 1e6
        );
    }
}

fn lookups(policy: &PolicyConfig, ops: u64) {
    const RECORDS: u64 = 100_000;
    const FRAMES: usize = 16_384;
    let (file, header) = PageFile::create(MemStore::new(4096, 20_000)).unwrap();
    let bm = BufferManager::new(file, header, AnyPolicy::new(FRAMES, policy), FRAMES).unwrap();
    let tree = BTree::bulk_load(bm, 256, RECORDS, 0.5, 1.0, |i, v| {
        fill_value(i as u32, 0, v);
        i as u32
    })
    .unwrap();
    assert!(tree.buffer().page_count() as usize <= FRAMES, "the whole tree fits");
    let misses = tree.buffer().stats().misses;
    for threads in [1, 2] {
        let rate = measure(threads, ops / 4, &|t, n| {
            let mut rng = Mix(t as u64 + 3);
            let mut out = [0u8; 256];
            for _ in 0..n {
                let key = (rng.next() % RECORDS) as u32;
                assert!(tree.get(key, &mut out).unwrap());
                black_box(out[0]);
            }
        });
        println!(
            "btree point lookups     {:<12} {threads} thread{}: {:>6.2} M lookups/s (height {}, all cached)",
            policy.label(),
            if threads == 1 { " " } else { "s" },
            rate / 1e6,
            tree.height()
        );
    }
    assert_eq!(tree.buffer().stats().misses, misses, "cached: no miss during the lookups");
}

/// Point updates with every page cached, without and with a write-ahead log (on a memory
/// store: syncs cost nothing, so this is the log's CPU cost — before-images, diffs, CRC32C,
/// appends — and the group commit's locking), in interleaved rounds.
fn updates(policy: &PolicyConfig, ops: u64) {
    const RECORDS: u64 = 100_000;
    const FRAMES: usize = 16_384;
    const LOG_PAGES: u64 = 65_536; // 256 MiB: no checkpoint during the measurement
    let tree_with = |log: bool| {
        let store = MemStore::new(4096, 20_000 + if log { LOG_PAGES } else { 0 });
        let (file, header) =
            if log { PageFile::create_with_log(store, LOG_PAGES).unwrap() } else { PageFile::create(store).unwrap() };
        let bm = BufferManager::new(file, header, AnyPolicy::new(FRAMES, policy), FRAMES).unwrap();
        BTree::bulk_load(bm, 256, RECORDS, 0.5, 1.0, |i, v| {
            fill_value(i as u32, 0, v);
            i as u32
        })
        .unwrap()
    };
    let trees = [tree_with(false), tree_with(true)];
    for threads in [1, 2] {
        let mut rates = [0.0f64; 2];
        for (i, tree) in trees.iter().enumerate() {
            rates[i] = measure(threads, ops / 8, &|t, n| {
                let mut rng = Mix(t as u64 + 5);
                let mut value = [0u8; 256];
                for v in 0..n {
                    let key = (rng.next() % RECORDS) as u32;
                    fill_value(key, v + 1, &mut value);
                    assert!(tree.update(key, &value).unwrap());
                }
            });
        }
        println!(
            "btree point updates     {:<12} {threads} thread{}: no log {:>6.3} M/s   log {:>6.3} M/s   ({:.2}x)",
            policy.label(),
            if threads == 1 { " " } else { "s" },
            rates[0] / 1e6,
            rates[1] / 1e6,
            rates[1] / rates[0]
        );
    }
}

fn main() {
    let ops = ops_per_thread();
    let list = std::env::var("ENGINE_BENCH_POLICIES").unwrap_or_else(|_| "lru,cflru,cfdc".into());
    let policies: Vec<PolicyConfig> = list.split(',').filter_map(|s| s.trim().parse().ok()).collect();
    println!("flashbuf engine benchmark: {ops} operations per thread, best of {REPEATS}");
    for p in &policies {
        fix_unfix(p, ops);
    }
    for p in &policies {
        lookups(p, ops);
    }
    for p in &policies {
        updates(p, ops);
    }
}
