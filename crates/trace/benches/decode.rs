//! Decoding and generation throughput, in requests per second.
//!
//! `cargo bench -p flashbuf-trace --bench decode` (optionally followed by `-- <requests>`,
//! default 10,000,000). The decoders read a Zipf trace (`adlru-zipf` shape: 80–20 over 50,000
//! pages, half writes) from memory, so the figures are the decoders' own cost, not the disk's;
//! each figure is the best of three runs, consuming batches of 4,096 requests the way the
//! simulator does. When the shared real traces are present (`../shared/traces` or
//! `$FLASHBUF_TRACES`), `OLTP.lis.zst` is also read end to end from its file (zstd
//! decompression + ARC parsing).

use std::hint::black_box;
use std::io::Cursor;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use flashbuf_trace::formats::{BinaryReader, OracleReader, open_reader};
use flashbuf_trace::generators::ZipfSampler;
use flashbuf_trace::rng::PortableRng;
use flashbuf_trace::writers::{BinaryWriter, OracleWriter, TextWriter};
use flashbuf_trace::{Format, GenSpec, ReadOptions, Request, TraceSource, collect, open_path};

const BATCH: usize = 4096;

/// Drains `source`, returning the number of requests and a checksum that keeps the work alive.
fn drain(source: &mut dyn TraceSource) -> (u64, u64) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut n = 0u64;
    let mut sum = 0u64;
    while source.next_batch(&mut batch, BATCH).expect("bench input is valid") > 0 {
        n += batch.len() as u64;
        for r in &batch {
            sum = sum.wrapping_add(r.page ^ u64::from(r.kind.is_write()));
        }
    }
    (n, sum)
}

fn best_of_three(name: &str, mut make: impl FnMut() -> Box<dyn TraceSource>) {
    let mut best = Duration::MAX;
    let mut count = 0;
    for _ in 0..3 {
        let mut src = make();
        let start = Instant::now();
        let (n, sum) = drain(&mut *src);
        let elapsed = start.elapsed();
        black_box(sum);
        best = best.min(elapsed);
        count = n;
    }
    let rate = count as f64 / best.as_secs_f64();
    println!("{name:<44} {count:>11} requests  {:>8.1} M requests/s", rate / 1e6);
}

fn main() {
    let requests: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000_000);
    println!("flashbuf-trace decode/generate throughput ({requests} requests per run, batches of {BATCH})");

    let spec: GenSpec = format!("zipf,requests={requests},pages=50000,write-ratio=0.5").parse().unwrap();
    let reqs: Vec<Request> = collect(&mut *spec.open().unwrap()).unwrap();
    let timed: Vec<Request> =
        reqs.iter().enumerate().map(|(i, r)| Request { time_us: Some(i as u64 * 10), ..*r }).collect();

    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, f: &dyn Fn(&PathBuf)| -> Vec<u8> {
        let path = dir.path().join(name);
        f(&path);
        std::fs::read(&path).unwrap()
    };
    let oracle = write("t.oracleGeneral", &|p| {
        let mut w = OracleWriter::create(p, false, 4096).unwrap();
        reqs.iter().for_each(|r| w.write(r).unwrap());
        w.finish().unwrap();
    });
    let binary = write("t.fbt", &|p| {
        let mut w = BinaryWriter::create(p, false).unwrap();
        reqs.iter().for_each(|r| w.write(r).unwrap());
        w.finish().unwrap();
    });
    let binary_timed = write("timed.fbt", &|p| {
        let mut w = BinaryWriter::create(p, false).unwrap();
        timed.iter().for_each(|r| w.write(r).unwrap());
        w.finish().unwrap();
    });
    let text = write("t.txt", &|p| {
        let mut w = TextWriter::create(p, false).unwrap();
        reqs.iter().for_each(|r| w.write(r).unwrap());
        w.finish().unwrap();
    });
    let per = |bytes: &Vec<u8>| bytes.len() as f64 / requests as f64;
    println!(
        "file sizes: oracle {:.1} B/request, binary {:.2} B/request ({:.2} with timestamps), text {:.2} B/request",
        per(&oracle),
        per(&binary),
        per(&binary_timed),
        per(&text)
    );

    best_of_three("decode oracle (memory)", || Box::new(OracleReader::new(Cursor::new(oracle.clone()), "mem")));
    best_of_three("decode binary (memory)", || Box::new(BinaryReader::new(Cursor::new(binary.clone()), "mem")));
    best_of_three("decode binary with timestamps (memory)", || {
        Box::new(BinaryReader::new(Cursor::new(binary_timed.clone()), "mem"))
    });
    best_of_three("decode text (memory)", || {
        open_reader(Format::Text, Cursor::new(text.clone()), "mem", &ReadOptions::default()).unwrap()
    });
    let arc: Vec<u8> = reqs.iter().map(|r| format!("{} 1 0 0\n", r.page)).collect::<String>().into_bytes();
    best_of_three("decode arc .lis (memory)", || {
        open_reader(Format::Arc, Cursor::new(arc.clone()), "mem", &ReadOptions::default()).unwrap()
    });

    for (name, g) in [
        ("generate uniform (50,000 pages)", format!("uniform,requests={requests},pages=50000")),
        ("generate zipf 80-20 (1,000,000 pages)", format!("zipf,requests={requests},pages=1000000")),
        (
            "generate zipf 80-20 scattered (1,000,000 pages)",
            format!("zipf,requests={requests},pages=1000000,scatter=true"),
        ),
        ("generate self-similar 80-20 (10,000,000 pages)", format!("self-similar,requests={requests},pages=10000000")),
    ] {
        let spec: GenSpec = g.parse().unwrap();
        best_of_three(name, || spec.open().unwrap());
    }

    // The Zipf rank samplers alone: inversion table against rejection-inversion.
    for pages in [50_000u64, 1_000_000, 10_000_000] {
        for table in [true, false] {
            let z = if table {
                ZipfSampler::with_table(pages, 0.8614)
            } else {
                ZipfSampler::rejection_inversion(pages, 0.8614)
            }
            .unwrap();
            let mut rng = PortableRng::new(1);
            let mut best = Duration::MAX;
            for _ in 0..3 {
                let start = Instant::now();
                let mut sum = 0u64;
                for _ in 0..requests {
                    sum = sum.wrapping_add(z.sample(&mut rng));
                }
                black_box(sum);
                best = best.min(start.elapsed());
            }
            let method = if table { "table" } else { "rejection-inversion" };
            println!(
                "{:<44} {requests:>11} samples   {:>8.1} M samples/s",
                format!("zipf ranks, {method} ({pages} pages)"),
                requests as f64 / best.as_secs_f64() / 1e6
            );
        }
    }

    let shared = std::env::var_os("FLASHBUF_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"));
    let oltp = shared.join("OLTP.lis.zst");
    if oltp.exists() {
        best_of_three("read OLTP.lis.zst (file, zstd + arc)", || {
            open_path(&oltp, &ReadOptions::default()).unwrap().source
        });
    } else {
        println!("(shared traces not found at {}: real-trace figure skipped)", shared.display());
    }
}
