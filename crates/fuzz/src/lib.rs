//! Fuzz targets of flashbuf: everything that reads bytes a user (or a crash) hands it.
//!
//! Each target takes arbitrary bytes and must never panic, hang or allocate without bound; an
//! error is the right answer to bad input. The same functions run
//!
//! * under libFuzzer, coverage-guided (`fuzz/`, `cargo +nightly fuzz run TARGET`), for long runs;
//! * under [`fuzz`], a mutational fuzzer on stable Rust (`cargo run --release -p flashbuf-fuzz --
//!   TARGET --seconds N`), which CI runs for a few seconds per target over the seed corpus.
//!
//! The seed corpus ([`seeds`]) is generated: valid files of every format (plain and
//! compressed), sweep configurations, and databases with a write-ahead log, so that mutations
//! start from inputs that reach deep into each reader.

#![warn(missing_docs)]

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use flashbuf_engine::page::PageFile;
use flashbuf_flash::{MemStore, PageStore};
use flashbuf_trace::{ColumnMap, Format, ReadOptions, TraceSource, open_stream};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

/// Most requests a target reads from one input (a random request may describe a huge extent).
const MAX_REQUESTS: usize = 100_000;

/// A fuzz target: its name and the function that takes the bytes.
#[derive(Clone, Copy)]
pub struct Target {
    /// Name on the command line.
    pub name: &'static str,
    /// What it exercises.
    pub about: &'static str,
    /// The function.
    pub run: fn(&[u8]),
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target { name: "readers", about: "every trace reader, each format named", run: readers },
    Target { name: "detect", about: "decompression and format detection of unnamed input", run: detect },
    Target { name: "columns", about: "column maps and the csv reader they drive", run: columns },
    Target { name: "sweep-config", about: "sweep configurations (TOML) up to their plan", run: sweep_config },
    Target {
        name: "engine-file",
        about: "a database file's header, log anchors, recovery and pages",
        run: engine_file,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

fn drain(mut src: Box<dyn TraceSource>) {
    let mut batch = Vec::new();
    let mut total = 0;
    while total < MAX_REQUESTS {
        match src.next_batch(&mut batch, 4096) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
}

/// Every reader, the format named.
pub fn readers(data: &[u8]) {
    for format in Format::ALL {
        if matches!(format, Format::Auto | Format::Csv) {
            continue;
        }
        let opts = ReadOptions { format, ..ReadOptions::default() };
        if let Ok(o) = open_stream(Cursor::new(data.to_vec()), "fuzz", &opts) {
            drain(o.source);
        }
    }
}

/// Decompression and detection of unnamed input, then the reader chosen.
pub fn detect(data: &[u8]) {
    for name in ["fuzz", "fuzz.csv", "fuzz.txt", "fuzz.lis.zst"] {
        if let Ok(o) = open_stream(Cursor::new(data.to_vec()), name, &ReadOptions::default()) {
            drain(o.source);
        }
    }
}

/// The first line is a column map, the rest a trace read with it.
pub fn columns(data: &[u8]) {
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let Ok(spec) = std::str::from_utf8(&data[..split]) else { return };
    let Ok(map) = spec.parse::<ColumnMap>() else { return };
    let rest = data.get(split + 1..).unwrap_or_default().to_vec();
    for volume in [None, Some(1)] {
        let opts = ReadOptions { columns: Some(Arc::new(map.clone())), volume, ..ReadOptions::default() };
        if let Ok(o) = open_stream(Cursor::new(rest.clone()), "fuzz.csv", &opts) {
            drain(o.source);
        }
    }
}

/// A sweep configuration, parsed and checked (planning is not run: it could read any file).
pub fn sweep_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = flashbuf_sim::sweep::SweepConfig::parse(text, Path::new("/nonexistent/fuzz.toml"));
}

/// Page size of the database images the engine target opens.
pub const ENGINE_PAGE_SIZE: usize = 512;

/// The bytes are a database image (pages of [`ENGINE_PAGE_SIZE`] bytes): open it (header, log
/// anchors, recovery) and read every page through its checks.
pub fn engine_file(data: &[u8]) {
    let pages = data.len().div_ceil(ENGINE_PAGE_SIZE).clamp(4, 4096) as u64;
    let mut store = MemStore::new(ENGINE_PAGE_SIZE, pages);
    let mut buf = vec![0u8; ENGINE_PAGE_SIZE];
    for (i, chunk) in data.chunks(ENGINE_PAGE_SIZE).take(pages as usize).enumerate() {
        buf.fill(0);
        buf[..chunk.len()].copy_from_slice(chunk);
        let _ = store.write_page(i as u64, &buf);
    }
    if let Ok((mut file, _header)) = PageFile::open(store) {
        for p in 0..file.capacity_pages().min(4096) {
            let _ = file.read_page(p, &mut buf);
        }
    }
}

/// The generated seed corpus: `(target, name, bytes)`.
pub fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out: Vec<(&'static str, String, Vec<u8>)> = Vec::new();
    let lines: Vec<(&str, String)> = vec![
        (
            "msr",
            "128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295514878,hm,1,Read,11855351808,8192,2617\n"
                .into(),
        ),
        ("spc", "0,8,8192,w,0.000000\n1,7,1024,R,1.5\n".into()),
        ("cloudphysics", "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633900,28,4096,8\n".into()),
        ("tencent", "1538323200,2048,16,1,1283\n1538323201,4096,8,0,7\n".into()),
        ("disksim", "0.5 0 2048 8 1\n1.25 1 4096 16 0\n".into()),
        ("mqsim", "1000 0 2048 8 1\n2500 1 4096 16 0\n".into()),
        ("arc", "100 3 0 1\n7 1 0 2\n".into()),
        ("lirs", "5\n17\n5\n".into()),
        ("text", "# flashbuf-trace v1\nR 1\nW 99 1500\nR 5\n".into()),
    ];
    for (name, text) in &lines {
        out.push(("readers", format!("{name}.txt"), text.as_bytes().to_vec()));
        out.push(("detect", format!("{name}.txt"), text.as_bytes().to_vec()));
        let mut z = Vec::new();
        {
            let mut e = zstd::stream::Encoder::new(&mut z, 1).expect("zstd");
            std::io::Write::write_all(&mut e, text.as_bytes()).expect("memory");
            e.finish().expect("memory");
        }
        out.push(("detect", format!("{name}.zst"), z));
        let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut g, text.as_bytes()).expect("memory");
        out.push(("detect", format!("{name}.gz"), g.finish().expect("memory")));
    }
    // Binary formats, written by the project's writers.
    let dir = std::env::temp_dir().join(format!("flashbuf-fuzz-seeds-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let reqs: Vec<flashbuf_trace::Request> = (0..200u64)
        .map(|i| flashbuf_trace::Request {
            page: (i * 7919) % 97,
            kind: if i % 3 == 0 { flashbuf_trace::AccessKind::Write } else { flashbuf_trace::AccessKind::Read },
            time_us: Some(i * 10),
        })
        .collect();
    for (name, format) in [("t.fbt", Format::Binary), ("t.oracleGeneral", Format::Oracle)] {
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        let written = flashbuf_trace::create_writer(format, &path, true)
            .ok()
            .and_then(|mut w| w.write_batch(&reqs).ok().and_then(|()| w.finish().ok()))
            .and_then(|_| std::fs::read(&path).ok());
        if let Some(bytes) = written {
            out.push(("readers", name.to_string(), bytes.clone()));
            out.push(("detect", name.to_string(), bytes));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    out.push((
        "columns",
        "msr-map".into(),
        b"time=1,volume=3,op=4,offset=5,size=6,time-unit=filetime,write=Write,read=Read\n1,hm,0,Write,4096,8192,1\n2,hm,1,Read,0,512,1\n".to_vec(),
    ));
    out.push((
        "columns",
        "tab-map".into(),
        b"offset=1,op=2,size=3,offset-unit=sectors,size-unit=sectors,write=1,read=0,delimiter=tab\n7\t1\t16\n9\t0\t0\n"
            .to_vec(),
    ));
    out.push((
        "sweep-config",
        "sweep.toml".into(),
        b"name = 'x'\ntraces = ['gen:adlru-zipf', { gen = 'zipf', requests = 1000, seed = [1, 2] }]\npolicies = ['lru', { name = 'cflru', w = [0.25, 0.5] }]\nbuffers = [512, '4MB', '5%']\ndevices = ['ideal', { kind = ['bast', 'fast'], preset = 'ref', log_blocks = [4, 8] }]\nwrite_miss = ['fetch', 'no-fetch']\nremap = 'auto'\nwarmup = '10%'\n".to_vec(),
    ));
    out.push(("engine-file", "database".into(), engine_seed()));
    out
}

/// A small database with a write-ahead log, taken at a point where its log holds operations
/// (the engine's own image: header, anchors, log groups, checksummed pages).
fn engine_seed() -> Vec<u8> {
    use flashbuf_engine::btree::BTree;
    use flashbuf_engine::buffer::BufferManager;
    use flashbuf_policy::{AnyPolicy, PolicyConfig};
    let build = || -> Option<Vec<u8>> {
        let store = MemStore::new(ENGINE_PAGE_SIZE, 256);
        let (file, header) = PageFile::create(store).ok()?;
        let policy = AnyPolicy::new(8, &"lru".parse::<PolicyConfig>().ok()?);
        let bm = BufferManager::new(file, header, policy, 8).ok()?;
        let tree = BTree::create(bm, 8).ok()?;
        for k in 0..200u32 {
            tree.insert(k, &k.to_le_bytes().repeat(2)).ok()?;
        }
        let (file, _) = tree.close().ok()?;
        let mut store = file.into_store();
        let mut image = Vec::new();
        let mut buf = vec![0u8; ENGINE_PAGE_SIZE];
        for p in 0..store.pages() {
            store.read_page(p, &mut buf).ok()?;
            image.extend_from_slice(&buf);
        }
        Some(image)
    };
    build().unwrap_or_default()
}

/// What a fuzzing session found and did.
#[derive(Debug, Default)]
pub struct Report {
    /// Inputs run.
    pub executions: u64,
    /// Inputs that panicked (each saved as a file when a directory is given).
    pub crashes: Vec<Vec<u8>>,
}

/// Mutates `input` in place: bit flips, interesting bytes, insertions, deletions, duplicated
/// ranges, splices with another seed.
fn mutate(rng: &mut ChaCha8Rng, input: &mut Vec<u8>, other: &[u8]) {
    let n = 1 + rng.next_u32() % 8;
    for _ in 0..n {
        let len = input.len();
        let pos = if len == 0 { 0 } else { (rng.next_u32() as usize) % len };
        match rng.next_u32() % 8 {
            0 if len > 0 => input[pos] ^= 1 << (rng.next_u32() % 8),
            1 if len > 0 => {
                const INTERESTING: [u8; 12] = [0, 1, 0x7f, 0x80, 0xff, b'\n', b',', b' ', b'-', b'9', b'#', 0x1b];
                input[pos] = INTERESTING[(rng.next_u32() % 12) as usize];
            }
            2 => {
                let k = 1 + rng.next_u32() as usize % 16;
                for _ in 0..k {
                    input.insert(pos.min(input.len()), rng.next_u32() as u8);
                }
            }
            3 if len > 0 => {
                let k = (1 + rng.next_u32() as usize % 32).min(len - pos);
                input.drain(pos..pos + k);
            }
            4 if len > 0 => {
                let k = (1 + rng.next_u32() as usize % 64).min(len - pos);
                let chunk: Vec<u8> = input[pos..pos + k].to_vec();
                let at = rng.next_u32() as usize % (input.len() + 1);
                input.splice(at..at, chunk);
            }
            5 if !other.is_empty() => {
                let from = rng.next_u32() as usize % other.len();
                let k = (1 + rng.next_u32() as usize % 128).min(other.len() - from);
                let at = rng.next_u32() as usize % (input.len() + 1);
                input.splice(at..at, other[from..from + k].iter().copied());
            }
            6 if len >= 8 => {
                let at = rng.next_u32() as usize % (len - 7);
                let v: u64 = match rng.next_u32() % 4 {
                    0 => 0,
                    1 => u64::MAX,
                    2 => 1 << 40,
                    _ => rng.next_u64(),
                };
                input[at..at + 8].copy_from_slice(&v.to_le_bytes());
            }
            _ => {
                let digits = format!("{}", rng.next_u64());
                let at = rng.next_u32() as usize % (input.len() + 1);
                input.splice(at..at, digits.bytes());
            }
        }
        if input.len() > 1 << 16 {
            input.truncate(1 << 16);
        }
    }
}

/// Fuzzes `target` for `seconds` (at most `max_executions` inputs) from its seeds, with a seeded
/// random stream (the same session on every machine, but for the time limit). A panic is caught,
/// recorded and, when `crash_dir` is given, saved there.
pub fn fuzz(target: &Target, seconds: f64, max_executions: u64, seed: u64, crash_dir: Option<&Path>) -> Report {
    let corpus: Vec<Vec<u8>> = seeds().into_iter().filter(|(t, _, _)| *t == target.name).map(|(_, _, b)| b).collect();
    let corpus = if corpus.is_empty() { vec![Vec::new()] } else { corpus };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut report = Report::default();
    let start = std::time::Instant::now();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // The seeds themselves first.
    let mut inputs: Vec<Vec<u8>> = corpus.clone();
    while report.executions < max_executions && start.elapsed().as_secs_f64() < seconds {
        let input = match inputs.pop() {
            Some(i) => i,
            None => {
                let mut i = corpus[rng.next_u32() as usize % corpus.len()].clone();
                let other = &corpus[rng.next_u32() as usize % corpus.len()];
                mutate(&mut rng, &mut i, other);
                i
            }
        };
        let run = target.run;
        let result = std::panic::catch_unwind(|| run(&input));
        report.executions += 1;
        if result.is_err() {
            if let Some(dir) = crash_dir {
                let _ = std::fs::create_dir_all(dir);
                let _ = std::fs::write(dir.join(format!("{}-crash-{}", target.name, report.crashes.len())), &input);
            }
            report.crashes.push(input);
        }
    }
    std::panic::set_hook(previous);
    report
}
