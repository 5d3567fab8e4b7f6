//! Host page writes per second through each FTL under uniform random writes, after aging the
//! device to steady state. Prints writes/s (wall and per CPU second of the thread), write
//! amplification and erases per host write.
//!
//! Every device is built and aged once; then the measurement goes in rounds, each round running
//! every device for the time budget, so that a slow spell of a shared machine falls on all
//! devices alike; the best round of each device is reported.
//!
//! `cargo bench -p flashbuf-flash --bench ftl` (logical size: `FLASHBUF_BENCH_PAGES`, default
//! 131,072 pages = 256 MiB of 2 KiB pages; time per device and round: `FLASHBUF_BENCH_SECS`,
//! default 1; rounds: `FLASHBUF_BENCH_ROUNDS`, default 3; only the labels containing
//! `FLASHBUF_BENCH_ONLY`, default all, or the label equal to it without a trailing `$`).

use std::time::{Duration, Instant};

use flashbuf_flash::{Device, DeviceConfig, DeviceKind, GcPolicy, NandPreset, Precondition, thread_cpu_s};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let logical = env_u64("FLASHBUF_BENCH_PAGES", 131_072);
    let budget = Duration::from_secs_f64(env_u64("FLASHBUF_BENCH_SECS", 1) as f64);
    let rounds = env_u64("FLASHBUF_BENCH_ROUNDS", 3).max(1);
    let only = std::env::var("FLASHBUF_BENCH_ONLY").unwrap_or_default();
    // Page numbers are drawn up front so the generator's cost stays out of the measurement.
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let pages: Vec<u32> = (0..1 << 22).map(|_| rng.random_range(0..logical) as u32).collect();

    let base = DeviceConfig {
        preset: NandPreset::Micron,
        precondition: Precondition::Aged { writes: None, seed: 7 },
        ..Default::default()
    };
    let mut configs = Vec::new();
    for gc in GcPolicy::ALL {
        configs.push(DeviceConfig { kind: DeviceKind::Page, gc, op_percent: 7.0, ..base.clone() });
    }
    configs.push(DeviceConfig { kind: DeviceKind::Page, gc: GcPolicy::Greedy, wear_threshold: None, ..base.clone() });
    configs.push(DeviceConfig { kind: DeviceKind::Block, ..base.clone() });
    configs.push(DeviceConfig { kind: DeviceKind::Bast, log_blocks: 8, ..base.clone() });
    configs.push(DeviceConfig { kind: DeviceKind::Fast, log_blocks: 8, ..base.clone() });

    println!("uniform random page writes, {logical} logical pages, aged to steady state, best of {rounds} rounds");
    // (label, device, aging seconds, writes so far, best wall rate, best CPU rate)
    let mut devices = Vec::new();
    for cfg in configs {
        let label = format!(
            "{}{}",
            cfg.label(),
            if cfg.kind == DeviceKind::Page && cfg.wear_threshold.is_none() { "/nowl" } else { "" }
        );
        // A filter ending in `$` names one label exactly.
        let wanted = match only.strip_suffix('$') {
            Some(exact) => label == exact,
            None => label.contains(&only),
        };
        if !wanted {
            continue;
        }
        let t = Instant::now();
        match cfg.build(logical) {
            Ok(d) => devices.push((label, d, t.elapsed().as_secs_f64(), 0usize, 0f64, 0f64)),
            Err(e) => println!("{label:<34} build failed: {e}"),
        }
    }
    // A fixed number of writes per device and round instead of the time budget (for
    // instruction counts: `valgrind --tool=callgrind --toggle-collect='*ftl::measure*'`).
    let fixed = env_u64("FLASHBUF_BENCH_WRITES", 0) as usize;
    for _ in 0..rounds {
        for (_, dev, _, n, best_wall, best_cpu) in &mut devices {
            let start = Instant::now();
            let cpu0 = thread_cpu_s();
            let mut done = 0usize;
            while if fixed > 0 { done < fixed } else { start.elapsed() < budget } {
                measure(dev, &pages, n, 16_384);
                done += 16_384;
            }
            let (wall, cpu) = (start.elapsed().as_secs_f64(), thread_cpu_s() - cpu0);
            *best_wall = best_wall.max(done as f64 / wall);
            if cpu > 0.0 {
                *best_cpu = best_cpu.max(done as f64 / cpu);
            }
        }
    }
    println!(
        "{:<34} {:>14} {:>14} {:>8} {:>12} {:>10}",
        "device", "host writes/s", "per CPU-s", "WA", "erases/write", "writes"
    );
    for (label, dev, aging, n, wall, cpu) in devices {
        let s = dev.stats();
        println!(
            "{label:<34} {wall:>14.0} {cpu:>14.0} {:>8.3} {:>12.4} {n:>10}   (aging {aging:.1} s)",
            s.write_amplification(),
            s.erases as f64 / s.host_writes as f64,
        );
    }
}

/// `count` writes of the pre-drawn pages, from position `*n` on.
#[inline(never)]
fn measure(dev: &mut impl Device, pages: &[u32], n: &mut usize, count: usize) {
    for _ in 0..count {
        dev.write(pages[*n % pages.len()] as u64).expect("write");
        *n += 1;
    }
}
