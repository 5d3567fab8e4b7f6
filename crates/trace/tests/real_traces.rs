//! Reads every real trace of the shared trace directory (`/work/shared/traces`, or
//! `$FLASHBUF_TRACES`) with format auto-detection and checks the detected format and the
//! request, read, write and distinct-page counts. The expected counts were computed by an
//! independent script (Python, the splitting rule of `formats` written out directly) at a page
//! size of 4096 bytes, all volumes combined as `(volume << 40) | page`.
//!
//! The traces are not part of the repository; without them the test says so and passes.

use std::path::PathBuf;

use flashbuf_trace::{Format, ReadOptions, TraceStats, open_path, stats};

fn trace_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("FLASHBUF_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"));
    dir.is_dir().then_some(dir)
}

#[test]
fn every_shared_trace_is_detected_and_read_to_the_end() {
    let Some(dir) = trace_dir() else {
        eprintln!("skipped: no shared trace directory (set FLASHBUF_TRACES to run this test)");
        return;
    };
    // (file, format, requests, reads, writes, distinct pages)
    let expected: &[(&str, Format, u64, u64, u64, u64)] = &[
        ("OLTP.lis.zst", Format::Arc, 914_145, 914_145, 0, 186_880),
        ("P3.lis.zst", Format::Arc, 3_912_296, 3_912_296, 0, 762_543),
        ("P12.lis.zst", Format::Arc, 13_208_930, 13_208_930, 0, 3_153_310),
        ("cloudPhysicsIO.csv.zst", Format::CloudPhysics, 1_141_869, 485_700, 656_169, 269_210),
        ("msr-cambridge1-sample.csv", Format::Msr, 2_473, 1_537, 936, 1_917),
        ("tencent-cloud_storage-sample.bz2", Format::Tencent, 378_253, 161_418, 216_835, 348_239),
        ("tpcc-small.trace.zst", Format::Mqsim, 20_669, 12_674, 7_995, 20_470),
        ("lirs-multi2.trace.gz", Format::Lirs, 26_311, 26_311, 0, 5_684),
        ("lirs-ps.trace.gz", Format::Lirs, 10_448, 10_448, 0, 3_083),
    ];
    for &(file, format, requests, reads, writes, distinct) in expected {
        let path = dir.join(file);
        if !path.exists() {
            eprintln!("skipped {file}: not present in {}", dir.display());
            continue;
        }
        let mut opened = open_path(&path, &ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(opened.format, format, "{file}: {}", opened.reason);
        let s: TraceStats = stats(&mut *opened.source, 4096).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("{file}: {} [{}]: {s}", opened.format, opened.reason);
        assert_eq!((s.requests, s.reads, s.writes, s.distinct_pages), (requests, reads, writes, distinct), "{file}");
    }
}

#[test]
fn one_volume_of_a_multi_volume_trace() {
    let Some(dir) = trace_dir() else {
        eprintln!("skipped: no shared trace directory");
        return;
    };
    let path = dir.join("tpcc-small.trace.zst");
    if !path.exists() {
        eprintln!("skipped: tpcc-small.trace.zst not present");
        return;
    }
    // Summed over the 16 devices, the per-volume traces are the whole trace.
    let mut total = 0;
    for volume in 0..16 {
        let mut opened = open_path(&path, &ReadOptions { volume: Some(volume), ..Default::default() }).unwrap();
        let s = stats(&mut *opened.source, 4096).unwrap();
        assert!(s.max_page.is_none_or(|p| p < 1 << 40), "pages stay within the volume");
        total += s.requests;
    }
    assert_eq!(total, 20_669);
}
