//! Logical writes per second through the write-gathering layer: the CPU cost of the pool lookup
//! (the successor of f in the pool) and of the table updates, separated from any device cost.
//!
//! * `gather/ideal`: [`Gather`] over the ideal device (a counter increment per page), uniform
//!   random logical sectors, for several logical sizes and pool sizes, including a one-sector
//!   pool (the successor search then climbs the bitmap's levels on every write);
//! * `btreeset`: the same algorithm with the pool in a `BTreeSet<u32>` (the paper's ordered
//!   list, as a balanced tree), to compare with the hierarchical bitmap;
//! * `store/mem`: [`GatherStore`] over a [`MemStore`] with 4 KiB sectors (header, CRC32C over
//!   the sector, copies);
//! * `direct/ideal`: the ideal device alone, the floor (stream generation included in all).
//!
//! Every layer is first driven to its steady state (`FLASHBUF_BENCH_WARMUP_PASSES` passes over
//! its physical sectors, default 2: from the initial placement, the first |P| writes are
//! sequential and unrepresentative).
//!
//! `cargo bench -p flashbuf-flash --bench gather` (time per configuration:
//! `FLASHBUF_BENCH_SECS`, default 1).

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

use flashbuf_flash::{
    Device, Gather, GatherConfig, GatherStore, IdealConfig, IdealDevice, MemStore, PageStore, PoolSize,
};

/// The `i`-th logical sector of a uniform stream over `0..l`: SplitMix64 of the counter, reduced
/// by multiplication (a few ns, no table to repeat or to miss in cache).
#[inline]
fn pick(i: usize, l: u64) -> u64 {
    let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z as u128 * l as u128) >> 64) as u64
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// CPU time of this process in seconds (Linux; `None` elsewhere).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Runs `op(i)` in batches until the budget is spent; prints writes/s (wall and CPU).
fn measure(label: &str, budget: Duration, mut op: impl FnMut(usize)) {
    // Warm up: one batch.
    for i in 0..65_536 {
        op(i);
    }
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    let mut n = 0usize;
    while start.elapsed() < budget {
        for _ in 0..65_536 {
            op(n);
            n += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) if b > a => format!("{:.1}", n as f64 / (b - a) / 1e6),
        _ => "-".into(),
    };
    println!("{label:<44} {:>10.1} {:>10} {:>8.1}", n as f64 / secs / 1e6, cpu, secs * 1e9 / n as f64);
}

/// The paper's algorithm with the pool as a `BTreeSet` (for comparison only).
struct TreeGather {
    t: Vec<u32>,
    pool: BTreeSet<u32>,
    last: u32,
    physical: u32,
}

impl TreeGather {
    fn new(l: u32, f: u32) -> Self {
        TreeGather { t: (0..l).collect(), pool: (l..f).collect(), last: l - 1, physical: f }
    }
    #[inline]
    fn write(&mut self, l: u32) -> u32 {
        let next = if self.last + 1 == self.physical { 0 } else { self.last + 1 };
        let target = *self.pool.range(next..).next().or_else(|| self.pool.first()).expect("pool not empty");
        self.pool.remove(&target);
        let old = std::mem::replace(&mut self.t[l as usize], target);
        self.pool.insert(old);
        self.last = target;
        target
    }
}

fn main() {
    let budget = Duration::from_secs(env_u64("FLASHBUF_BENCH_SECS", 1));
    let passes = env_u64("FLASHBUF_BENCH_WARMUP_PASSES", 2);
    println!("uniform random logical sector writes, after one warm-up batch; ns/op is wall-clock");
    println!("{:<44} {:>10} {:>10} {:>8}", "configuration", "M writes/s", "M/CPU-s", "ns/op");

    let ideal = |pages| IdealDevice::new(IdealConfig { logical_pages: pages, ..Default::default() }).unwrap();
    for l in [100_000u64, 1_000_000, 4_000_000] {
        let mut dev = ideal(l);
        measure(&format!("direct/ideal L={l}"), budget, |i| {
            black_box(dev.write(pick(i, l)).unwrap());
        });
        for pool in [PoolSize::Sectors(1), PoolSize::Percent(5.0), PoolSize::Percent(50.0), PoolSize::Percent(300.0)] {
            let cfg = GatherConfig::new(l, pool);
            let f = cfg.physical_sectors().unwrap();
            if pool == PoolSize::Sectors(1) && l > 1_000_000 {
                continue;
            }
            let mut g = Gather::new(ideal(f), &cfg).unwrap();
            let mut t = TreeGather::new(l as u32, f as u32);
            for i in 0..(passes * f) as usize {
                g.write(pick(i, l)).unwrap();
                t.write(pick(i, l) as u32);
            }
            g.reset_gather_stats();
            measure(&format!("gather/ideal L={l} pool={pool}"), budget, |i| {
                black_box(g.write(pick(i, l)).unwrap());
            });
            println!("{:<44} mean distance {:.2}", "", g.gather_stats().mean_distance());
            measure(&format!("btreeset L={l} pool={pool}"), budget, |i| {
                black_box(t.write(pick(i, l) as u32));
            });
        }
    }

    let l = 65_536u64;
    for pool in [PoolSize::Percent(5.0), PoolSize::Percent(50.0)] {
        let f = l + pool.sectors(l).unwrap();
        let mut s = GatherStore::format(MemStore::new(4096, f), l, pool).unwrap();
        let mut buf = vec![0xA5u8; s.page_size()];
        for i in 0..(passes * f) as usize {
            s.write_page(pick(i, l), &buf).unwrap();
        }
        measure(&format!("store/mem 4 KiB L={l} pool={pool} write"), budget, |i| {
            buf[0] = i as u8;
            black_box(s.write_page(pick(i, l), &buf).unwrap());
        });
        measure(&format!("store/mem 4 KiB L={l} pool={pool} read"), budget, |i| {
            black_box(s.read_page(pick(i, l), &mut buf).unwrap());
        });
    }
}
