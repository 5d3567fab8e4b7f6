//! Writes a large, sparse, multi-volume block trace in the MSR Cambridge CSV format,
//! zstd-compressed: the workload of the real-scale benchmark (`scripts/bench-real-scale.sh`).
//!
//! ```sh
//! cargo run --release -p flashbuf-trace --example msr_trace -- --requests 100000000 -o msr.csv.zst
//! ```
//!
//! The trace: `volumes` disks (default 8) of 2 TiB each; on each, `regions` (default 4,000)
//! regions of 64 pages of 4 KiB placed at random 256 KiB-aligned offsets (about 2 million
//! distinct pages, 8 GiB, scattered over 16 TiB of address space). Each request picks a region
//! by a Zipf law (exponent 0.9) over all regions, a page in it uniformly, and a size of 4 KiB
//! (80%), 8 KiB (10%) or 16 to 64 KiB (10%); 30% are writes; timestamps advance by 10 µs per
//! request in Windows filetime ticks. Deterministic for a given seed.

use std::io::Write;

/// SplitMix64: a small, portable generator (the trace must be the same on every machine).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let num = |name: &str, default: u64| arg(&args, name).map_or(default, |v| v.parse().expect("a number"));
    let requests = num("--requests", 100_000_000);
    let volumes = num("--volumes", 8);
    let regions_per_volume = num("--regions", 4_000);
    let seed = num("--seed", 1);
    let Some(out) = arg(&args, "-o") else {
        eprintln!("usage: msr_trace [--requests N] [--volumes V] [--regions R] [--seed S] -o FILE.csv.zst");
        std::process::exit(2);
    };
    let mut rng = Rng(seed);
    let page = 4096u64;
    let region_bytes = 64 * page;
    let volume_regions = (2u64 << 40) / region_bytes;
    // Region placement: random distinct slots per volume.
    let mut regions: Vec<(u64, u64)> = Vec::new();
    for v in 0..volumes {
        let mut slots = std::collections::HashSet::new();
        while (slots.len() as u64) < regions_per_volume {
            slots.insert(rng.next() % volume_regions);
        }
        let mut slots: Vec<u64> = slots.into_iter().collect();
        slots.sort_unstable();
        regions.extend(slots.into_iter().map(|s| (v, s * region_bytes)));
    }
    // Shuffle so that popularity is not tied to volume or offset.
    for i in (1..regions.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        regions.swap(i, j);
    }
    // Zipf(0.9) over the regions: cumulative weights, sampled by binary search.
    let mut cdf: Vec<f64> = Vec::with_capacity(regions.len());
    let mut total = 0.0;
    for k in 1..=regions.len() {
        total += 1.0 / (k as f64).powf(0.9);
        cdf.push(total);
    }
    let file = std::fs::File::create(&out)?;
    let mut z = zstd::stream::Encoder::new(file, 3)?;
    let mut buf = String::with_capacity(1 << 20);
    let mut time: u64 = 128_166_385_295_514_663;
    for _ in 0..requests {
        let u = rng.unit() * total;
        let r = cdf.partition_point(|&c| c < u).min(regions.len() - 1);
        let (volume, base) = regions[r];
        let s = rng.unit();
        let pages = if s < 0.8 {
            1
        } else if s < 0.9 {
            2
        } else {
            4 << (rng.next() % 3)
        };
        let first = rng.next() % (64 - pages + 1);
        let op = if rng.unit() < 0.3 { "Write" } else { "Read" };
        time += 100;
        buf.push_str(&format!(
            "{time},bench,{volume},{op},{},{},{}\n",
            base + first * page,
            pages * page,
            50 + rng.next() % 1000
        ));
        if buf.len() >= 1 << 20 {
            z.write_all(buf.as_bytes())?;
            buf.clear();
        }
    }
    z.write_all(buf.as_bytes())?;
    z.finish()?.sync_all()?;
    Ok(())
}
