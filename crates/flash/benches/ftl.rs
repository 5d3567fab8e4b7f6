//! Host page writes per second through each FTL under uniform random writes, after aging the
//! device to steady state. Prints writes/s, write amplification and erases per host write.
//!
//! `cargo bench -p flashbuf-flash --bench ftl` (logical size: `FLASHBUF_BENCH_PAGES`, default
//! 131,072 pages = 256 MiB of 2 KiB pages; time per configuration: `FLASHBUF_BENCH_SECS`,
//! default 2; only the labels containing `FLASHBUF_BENCH_ONLY`, default all).

use std::time::{Duration, Instant};

use flashbuf_flash::{Device, DeviceConfig, DeviceKind, GcPolicy, NandPreset, Precondition};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// CPU time of this process in seconds, from `/proc/self/stat` (Linux; `None` elsewhere). On a
/// shared machine, writes per CPU second is the steadier figure.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the command name: state is field 3, utime 14 and stime 15 (1-based, whole line).
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0) // USER_HZ is 100 on Linux
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let logical = env_u64("FLASHBUF_BENCH_PAGES", 131_072);
    let budget = Duration::from_secs(env_u64("FLASHBUF_BENCH_SECS", 2));
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

    println!("uniform random page writes, {logical} logical pages, aged to steady state");
    println!(
        "{:<34} {:>14} {:>14} {:>8} {:>12} {:>10}",
        "device", "host writes/s", "per CPU-s", "WA", "erases/write", "writes"
    );
    for cfg in configs {
        let label = format!(
            "{}{}",
            cfg.label(),
            if cfg.kind == DeviceKind::Page && cfg.wear_threshold.is_none() { "/nowl" } else { "" }
        );
        if !label.contains(&only) {
            continue;
        }
        let t = Instant::now();
        let mut dev = match cfg.build(logical) {
            Ok(d) => d,
            Err(e) => {
                println!("{label:<34} build failed: {e}");
                continue;
            }
        };
        let aging = t.elapsed();
        let start = Instant::now();
        let cpu0 = cpu_seconds();
        let mut n = 0usize;
        while start.elapsed() < budget {
            for _ in 0..16_384 {
                dev.write(pages[n % pages.len()] as u64).expect("write");
                n += 1;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        let cpu = match (cpu0, cpu_seconds()) {
            (Some(a), Some(b)) if b > a => format!("{:.0}", n as f64 / (b - a)),
            _ => "-".to_string(),
        };
        let s = dev.stats();
        println!(
            "{label:<34} {:>14.0} {cpu:>14} {:>8.3} {:>12.4} {:>10}   (aging {:.1} s)",
            n as f64 / secs,
            s.write_amplification(),
            s.erases as f64 / s.host_writes as f64,
            n,
            aging.as_secs_f64()
        );
    }
}
