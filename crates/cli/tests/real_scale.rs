//! End-to-end tests of what real traces need: standard input and FIFOs, shares of the working
//! set, volumes, thread caps, conversion.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{stderr, stdout};

fn flashbuf(args: &[&str]) -> Output {
    flashbuf_stdin(args, None)
}

fn flashbuf_stdin(args: &[&str], input: Option<&[u8]>) -> Output {
    common::flashbuf_in("real-scale", args, input)
}

/// CSV rows without the columns that depend on timing or on the trace's label.
fn csv_rows(o: &Output) -> Vec<Vec<String>> {
    let text = stdout(o);
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let skip = ["trace", "run_id", "elapsed_s", "cpu_s", "runtime_s", "requests_per_s"];
    r.records()
        .map(|rec| {
            rec.unwrap()
                .iter()
                .zip(&header)
                .filter(|(_, h)| !skip.contains(&h.as_str()))
                .map(|(v, _)| v.to_string())
                .collect()
        })
        .collect()
}

/// A small MSR-format trace over two disks, sparse offsets, reads and writes.
fn msr_trace(dir: &Path) -> PathBuf {
    let mut s = String::new();
    let mut x: u64 = 12345;
    for i in 0..3000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let disk = (x >> 60) % 2;
        let hot = (x >> 20) % 50;
        let offset = (hot * 1_000_003 % 4000) * (1 << 24) + ((x >> 40) % 8) * 4096;
        let op = if (x >> 33).is_multiple_of(3) { "Write" } else { "Read" };
        s.push_str(&format!(
            "{},hm,{disk},{op},{offset},{},100\n",
            128166385295514663 + i * 1000,
            4096 * (1 + (x >> 50) % 3)
        ));
    }
    let p = dir.join("hm.csv");
    std::fs::write(&p, s).unwrap();
    p
}

#[test]
fn a_trace_on_standard_input_gives_the_rows_of_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let trace = msr_trace(dir.path());
    let args = ["run", "-q", "-p", "lru,cfdc,bplru,min", "-b", "20,100", "--device", "ideal", "--output", "csv"];
    let from_file = flashbuf(&[&args[..], &["-t", trace.to_str().unwrap()]].concat());
    let data = std::fs::read(&trace).unwrap();
    let from_pipe = flashbuf_stdin(&[&args[..], &["-t", "-", "--format", "msr"]].concat(), Some(&data));
    assert_eq!(csv_rows(&from_pipe), csv_rows(&from_file));
    assert_eq!(csv_rows(&from_file).len(), 8);
    // `msr:-` names the format in the trace argument, compressed input is recognised.
    let mut z = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    z.write_all(&data).unwrap();
    let zdata = z.finish().unwrap();
    let from_zpipe = flashbuf_stdin(&[&args[..], &["-t", "msr:-"]].concat(), Some(&zdata));
    assert_eq!(csv_rows(&from_zpipe), csv_rows(&from_file));
}

#[test]
fn what_a_pipe_cannot_give_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(msr_trace(dir.path())).unwrap();
    let o = flashbuf_stdin(&["run", "-q", "-t", "msr:-", "-p", "lru", "-b", "5%", "--device", "ideal"], Some(&data));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("percent") && e.contains("read only once") && e.contains("in pages or bytes"), "{e}");
    let o = flashbuf_stdin(&["run", "-q", "-t", "msr:-", "-p", "lru", "-b", "100", "--device", "page"], Some(&data));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("flash device") && e.contains("--capacity"), "{e}");
    // With an explicit capacity a flash device runs from a pipe.
    let o = flashbuf_stdin(
        &["run", "-q", "-t", "msr:-", "-p", "lru", "-b", "100", "--device", "page", "--capacity", "100000"],
        Some(&data),
    );
    assert!(stdout(&o).contains("lru"));
}

#[cfg(unix)]
#[test]
fn a_fifo_is_read_once_and_never_blocks_on_a_second_open() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(msr_trace(dir.path())).unwrap();
    let fifo = dir.path().join("fifo.csv");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, data).unwrap())
    };
    let o = flashbuf(&[
        "run",
        "-q",
        "-t",
        fifo.to_str().unwrap(),
        "--format",
        "msr",
        "-p",
        "lru,arc",
        "-b",
        "50",
        "--device",
        "ideal",
        "--output",
        "csv",
    ]);
    writer.join().unwrap();
    let rows = csv_rows(&o);
    assert_eq!(rows.len(), 2);
    // Every run saw every request: 3,000 records of one to three pages.
    let text = stdout(&o);
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let i = r.headers().unwrap().iter().position(|h| h == "requests").unwrap();
    for rec in r.records() {
        let n: u64 = rec.unwrap()[i].parse().unwrap();
        assert!((3000..=9000).contains(&n), "{n}");
    }
}

#[test]
fn percent_buffer_sizes_are_shares_of_distinct_pages() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    // Pages 0..10 and one page far away: 11 distinct pages, a range of 1,000,001.
    let mut s = String::from("# flashbuf-trace v1\n");
    for p in 0..10 {
        s.push_str(&format!("R {p}\nW {p}\n"));
    }
    s.push_str("R 1000000\n");
    std::fs::write(&trace, s).unwrap();
    let o = flashbuf(&[
        "run",
        "-q",
        "-t",
        trace.to_str().unwrap(),
        "-p",
        "lru",
        "-b",
        "50%,100%",
        "--device",
        "ideal",
        "--output",
        "json",
    ]);
    let rows: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = rows.as_array().unwrap();
    let pages: Vec<u64> = rows.iter().map(|r| r["buffer_pages"].as_u64().unwrap()).collect();
    assert_eq!(pages, [6, 11]);
    assert_eq!(rows[1]["footprint_pages"].as_u64(), Some(11));
    assert_eq!(rows[1]["buffer_share"].as_f64(), Some(1.0));
    // The largest share gives the buffer that holds the whole working set: only cold misses.
    assert_eq!(rows[1]["hits"].as_u64(), Some(10));
}

#[test]
fn stats_lists_the_volumes_of_a_multi_volume_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = msr_trace(dir.path());
    let s = stdout(&flashbuf(&["stats", "-q", trace.to_str().unwrap()]));
    assert!(s.contains("volumes          2"), "{s}");
    assert!(
        s.lines().any(|l| l.trim_start().starts_with("0 ")) && s.lines().any(|l| l.trim_start().starts_with("1 ")),
        "{s}"
    );
    assert!(s.contains("remapped by default"), "{s}");
    // The summary is cached: the second time, no pass (the message says where it came from).
    let o = flashbuf(&["stats", trace.to_str().unwrap()]);
    assert!(stderr(&o).contains("summary from the cache"), "{}", stderr(&o));
    assert_eq!(stdout(&o), s);
}

#[test]
fn jobs_above_the_cores_are_lowered_and_said() {
    let o = flashbuf(&[
        "run",
        "-t",
        "gen:uniform,requests=1000,pages=100",
        "-p",
        "lru",
        "-b",
        "10",
        "--device",
        "ideal",
        "-j",
        "100000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("-j 100000 lowered to"), "{}", stderr(&o));
}

#[test]
fn every_device_runs_a_sparse_multi_volume_trace_with_default_options() {
    let dir = tempfile::tempdir().unwrap();
    let trace = msr_trace(dir.path());
    let o = flashbuf(&[
        "run",
        "-q",
        "-t",
        trace.to_str().unwrap(),
        "-p",
        "lru,fab",
        "-b",
        "1%,10%",
        "--device",
        "page,block,bast,fast,ideal",
        "--output",
        "json",
    ]);
    let rows: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 20);
    for r in rows {
        assert_eq!(r["remap_extent_pages"].as_u64(), Some(64), "{r}");
        assert!(r["logical_pages"].as_u64().unwrap() < 1 << 20, "{r}");
    }
}

#[test]
fn convert_keeps_every_request_and_what_each_format_can_hold() {
    let dir = tempfile::tempdir().unwrap();
    let trace = msr_trace(dir.path());
    let t = trace.to_str().unwrap();
    let run = |path: &str, extra: &[&str]| {
        let args = [
            &["run", "-q", "-t", path, "-p", "lru,cflru", "-b", "30,300", "--device", "ideal", "--output", "csv"][..],
            extra,
        ]
        .concat();
        csv_rows(&flashbuf(&args))
    };
    let original = run(t, &[]);
    for (name, keeps_writes) in [("c.fbt", true), ("c.txt", true), ("c.oracleGeneral", false)] {
        let out = dir.path().join(name);
        let o = flashbuf(&["convert", t, out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("wrote "), "{}", stderr(&o));
        if keeps_writes {
            // The same pages, kinds and order: the same rows (no remapping question: the
            // converted trace holds the combined volume page numbers).
            assert_eq!(run(out.to_str().unwrap(), &[]), original, "{name}");
        } else {
            assert!(stderr(&o).contains("no read/write flag"), "{}", stderr(&o));
            let rows = run(out.to_str().unwrap(), &[]);
            assert_eq!(rows.len(), original.len());
        }
        // Never overwritten without --force; with it, replaced.
        let again = flashbuf(&["convert", t, out.to_str().unwrap()]);
        assert!(!again.status.success() && stderr(&again).contains("exists"), "{}", stderr(&again));
        assert!(flashbuf(&["convert", "-q", t, out.to_str().unwrap(), "--force"]).status.success());
    }
    // The column-mapped reader reads the MSR file like the MSR reader.
    let mapped = run(
        t,
        &[
            "--format",
            "csv",
            "--columns",
            "time=1,volume=3,op=4,offset=5,size=6,time-unit=filetime,write=Write,read=Read",
        ],
    );
    assert_eq!(mapped, original);
    let o = flashbuf(&["convert", t, dir.path().join("x.csv").to_str().unwrap(), "--to", "msr"]);
    assert!(!o.status.success() && stderr(&o).contains("writes the binary, text and oracle formats"), "{}", stderr(&o));
}
