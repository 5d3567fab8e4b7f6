//! Tests of the readers, decompression and detection on small inputs the tests write
//! themselves.

use std::io::{Cursor, Write};

use proptest::prelude::*;

use super::*;
use crate::writers::{BinaryWriter, OracleWriter, TextWriter};
use crate::{AccessKind, Request, collect};

fn read_with(format: Format, data: &[u8], opts: &ReadOptions) -> Result<Vec<Request>, TraceError> {
    let mut src = open_reader(format, Cursor::new(data.to_vec()), "t", opts)?;
    collect(&mut *src)
}

fn read(format: Format, data: &str) -> Vec<Request> {
    read_with(format, data.as_bytes(), &ReadOptions::default()).unwrap_or_else(|e| panic!("{format}: {e}"))
}

fn parse_err(format: Format, data: &str) -> (u64, String) {
    match read_with(format, data.as_bytes(), &ReadOptions::default()) {
        Err(TraceError::Parse { path, line, message }) => {
            assert_eq!(path, "t");
            (line, message)
        }
        other => panic!("{format}: expected a parse error, got {other:?}"),
    }
}

fn req(page: u64, kind: AccessKind, time_us: Option<u64>) -> Request {
    Request { page, kind, time_us }
}

use AccessKind::{Read as R, Write as W};

const V1: u64 = 1 << VOLUME_SHIFT;

#[test]
fn spc_lines_split_into_pages_with_volumes() {
    // LBA 8 sectors = byte 4096; 8192 bytes → pages 1 and 2 of ASU 0. ASU 1, LBA 7 (byte 3584),
    // 1024 bytes → bytes 3584..4607 → pages 0 and 1 of volume 1.
    let got = read(Format::Spc, "0,8,8192,w,0.000000\n1,7,1024,R,1.5\n0,0,0,r,2\n");
    assert_eq!(
        got,
        [
            req(1, W, Some(0)),
            req(2, W, Some(0)),
            req(V1, R, Some(1_500_000)),
            req(V1 | 1, R, Some(1_500_000)),
            req(0, R, Some(2_000_000)),
        ]
    );
    let only1 = read_with(
        Format::Spc,
        b"0,8,8192,w,0\n1,7,1024,R,1.5\n",
        &ReadOptions { volume: Some(1), ..Default::default() },
    )
    .unwrap();
    assert_eq!(only1, [req(0, R, Some(1_500_000)), req(1, R, Some(1_500_000))]);
    // Header skipped.
    assert_eq!(read(Format::Spc, "ASU,LBA,Size,Opcode,Timestamp\n0,0,1,r,0\n").len(), 1);
    assert_eq!(parse_err(Format::Spc, "0,0,1,r,0\n0,0,1,x,0\n"), (2, "opcode 'x' is neither r nor w".into()));
    assert_eq!(
        parse_err(Format::Spc, "0,0,1,r\n").1,
        "expected 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found 4"
    );
    assert_eq!(parse_err(Format::Spc, "0,zz,1,r,0\n").1, "LBA 'zz' is not a non-negative integer");
    assert_eq!(parse_err(Format::Spc, "0,0,1,r,-1\n").1, "timestamp '-1' is not a non-negative number");
}

#[test]
fn msr_records() {
    // The first records of MSR hm_0 (times in 100 ns ticks).
    let data = "128166385295514663,hm,0,Write,9056014336,2048,2833\n\
                128166385295514878,hm,0,Write,11855351808,512,2617\n\
                128166385295515175,hm,1,Read,5548077056,8192,2320\n";
    let got = read(Format::Msr, data);
    let p = |off: u64| off / 4096;
    assert_eq!(
        got,
        [
            req(p(9_056_014_336), W, Some(0)),
            req(p(11_855_351_808), W, Some(21)),
            req(V1 | p(5_548_077_056), R, Some(51)),
            req(V1 | (p(5_548_077_056) + 1), R, Some(51)),
        ]
    );
    assert_eq!(parse_err(Format::Msr, "1,hm,0,Erase,0,1,1\n").1, "type 'Erase' is neither Read nor Write");
    assert_eq!(read(Format::Msr, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n").len(), 0);
}

#[test]
fn cloudphysics_records() {
    let data = "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633900,28,4096,8\n1,5633901,88,1,0\n";
    let got = read(Format::CloudPhysics, data);
    assert_eq!(got, [req(42_932_745 * 512 / 4096, W, Some(0)), req(1, R, Some(2)), req(0, R, Some(3))]);
    let (line, m) = parse_err(Format::CloudPhysics, "version,time,op,size,lbn\n1,5,35,0,0\n");
    assert_eq!(line, 2);
    assert!(m.starts_with("op '35' is not a SCSI read"), "{m}");
    // A volume cannot be selected: the format has none.
    let e = read_with(Format::CloudPhysics, b"", &ReadOptions { volume: Some(0), ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("no volume column"), "{e}");
}

#[test]
fn tencent_records_in_sectors_and_out_of_order_times() {
    // Offset 8 sectors (4096 B), size 16 sectors (8192 B) → pages 1, 2; the second record is
    // stamped a second before the first and gets time 0.
    let got = read(Format::Tencent, "1538323200,8,16,1,3\n1538323199,0,1,0,3\n1538323201,0,1,0,3\n");
    let v3 = 3 << VOLUME_SHIFT;
    assert_eq!(
        got,
        [req(v3 | 1, W, Some(0)), req(v3 | 2, W, Some(0)), req(v3, R, Some(0)), req(v3, R, Some(1_000_000))]
    );
    assert_eq!(parse_err(Format::Tencent, "1,0,1,2,0\n").1, "IOType '2' is neither 0 (read) nor 1 (write)");
}

#[test]
fn disksim_and_mqsim_time_units() {
    let disksim = read(Format::Disksim, "0.000000 0 8 8 1\n1.5 0 0 1 0\n");
    assert_eq!(disksim, [req(1, R, Some(0)), req(0, W, Some(1_500))]);
    // MQSim: integer nanoseconds, type 1 = read, 0 = write; 16 sectors = 2 pages.
    let mqsim = read(Format::Mqsim, "938513000 4 16 16 0\n938828000 3 0 1 1\n");
    let v4 = 4 << VOLUME_SHIFT;
    let v3 = 3 << VOLUME_SHIFT;
    assert_eq!(mqsim, [req(v4 | 2, W, Some(0)), req(v4 | 3, W, Some(0)), req(v3, R, Some(315))]);
    let seconds = read_with(
        Format::Disksim,
        b"1 0 0 1 1\n3 0 0 1 1\n",
        &ReadOptions { time_unit: Some(TimeUnit::Seconds), ..Default::default() },
    )
    .unwrap();
    assert_eq!(seconds[1].time_us, Some(2_000_000));
    assert!(parse_err(Format::Disksim, "0 0 0 1\n").1.starts_with("expected 5 whitespace-separated fields"));
}

#[test]
fn arc_blocks_are_pages_regardless_of_page_size() {
    let opts = ReadOptions { page_size: 8192, ..Default::default() };
    let got = read_with(Format::Arc, b"1 1 0 0\n1936993 3 0 1\n5 0 0 2\n", &opts).unwrap();
    assert_eq!(
        got,
        [
            Request::read(1),
            Request::read(1_936_993),
            Request::read(1_936_994),
            Request::read(1_936_995),
            Request::read(5)
        ]
    );
    assert_eq!(
        parse_err(Format::Arc, "1 1 0\n").1,
        "expected 4 whitespace-separated fields (start_block num_blocks ignore request_id), found 3"
    );
}

#[test]
fn lirs_skips_blank_lines_and_comments() {
    assert_eq!(
        read(Format::Lirs, "# multi2\n0\n\n  17  \r\n3"),
        [Request::read(0), Request::read(17), Request::read(3)]
    );
    assert_eq!(parse_err(Format::Lirs, "1\n2 3\n"), (2, "expected one block number per line, found 2 fields".into()));
    assert_eq!(parse_err(Format::Lirs, "1\n-2\n"), (2, "block number '-2' is not a non-negative integer".into()));
}

#[test]
fn text_format() {
    let data = "# flashbuf-trace v1\nR 17\nW 18 1500\n# comment\n\n  r 17\nw 0 0\n";
    assert_eq!(
        read(Format::Text, data),
        [req(17, R, None), req(18, W, Some(1500)), req(17, R, None), req(0, W, Some(0))]
    );
    assert_eq!(parse_err(Format::Text, "R 1\n"), (1, "missing header line '# flashbuf-trace v1' (found 'R 1')".into()));
    assert!(parse_err(Format::Text, "# flashbuf-trace v2\n").1.starts_with("unsupported text trace version"));
    assert_eq!(parse_err(Format::Text, "").1, "empty file: missing header line '# flashbuf-trace v1'");
    assert_eq!(parse_err(Format::Text, "# flashbuf-trace v1\nX 1\n"), (2, "expected R or W, found 'X'".into()));
    assert_eq!(parse_err(Format::Text, "# flashbuf-trace v1\nR\n").1, "missing page number after the kind");
    assert_eq!(parse_err(Format::Text, "# flashbuf-trace v1\nR 1 2 3\n").1, "unexpected fourth field '3'");
}

#[test]
fn oversized_and_overflowing_requests_are_errors() {
    let (_, m) = parse_err(Format::Msr, "0,h,0,Read,0,18446744073709551615,0\n");
    assert!(m.contains("more than the limit"), "{m}");
    let (_, m) = parse_err(Format::Msr, "0,h,0,Read,18446744073709551615,2,0\n");
    assert_eq!(m, "offset + size overflows 64 bits");
    let (_, m) = parse_err(Format::Spc, "0,36028797018963968,1,r,0\n");
    assert!(m.contains("overflows 64-bit byte offsets"), "{m}");
    // Volume combination limits.
    let (_, m) = parse_err(Format::Tencent, "0,0,1,0,16777216\n");
    assert!(m.contains("volume 16777216 does not fit"), "{m}");
    let big_sector = (1u64 << VOLUME_SHIFT) * 8; // page 2^40 at 4 KiB pages
    let (_, m) = parse_err(Format::Tencent, &format!("0,{big_sector},1,0,1\n"));
    assert!(m.contains("does not fit the combined page number"), "{m}");
    // ... but fine when one volume is selected.
    let one = read_with(
        Format::Tencent,
        format!("0,{big_sector},1,0,1\n").as_bytes(),
        &ReadOptions { volume: Some(1), ..Default::default() },
    )
    .unwrap();
    assert_eq!(one, [req(1 << VOLUME_SHIFT, R, Some(0))]);
    assert!(read_with(Format::Lirs, b"1\n", &ReadOptions { page_size: 0, ..Default::default() }).is_err());
}

#[test]
fn too_long_line_names_its_line() {
    let mut data = b"1\n".to_vec();
    data.extend(std::iter::repeat_n(b'1', MAX_LINE_BYTES + 10));
    match read_with(Format::Lirs, &data, &ReadOptions::default()) {
        Err(TraceError::Parse { line: 2, message, .. }) => assert!(message.contains("longer than")),
        other => panic!("{other:?}"),
    }
}

proptest! {
    /// A byte range becomes exactly the pages its bytes fall in (checked byte by byte).
    #[test]
    fn byte_ranges_split_like_the_naive_model(offset in 0u64..1_000_000, size in 0u64..20_000, ps_log in 9u32..14, odd in any::<bool>()) {
        let page_size = if odd { (1u64 << ps_log) + 3 } else { 1u64 << ps_log };
        let line = format!("0,h,0,Read,{offset},{size},0\n");
        let got: Vec<u64> = read_with(Format::Msr, line.as_bytes(), &ReadOptions { page_size, ..Default::default() })
            .unwrap().iter().map(|r| r.page).collect();
        let mut naive: Vec<u64> = (offset..offset + size.max(1)).map(|b| b / page_size).collect();
        naive.dedup();
        prop_assert_eq!(got, naive);
    }
}

// ---------------------------------------------------------------------------------------------
// Compression

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn compressed(c: Compression, data: &[u8]) -> Vec<u8> {
    match c {
        Compression::None => data.to_vec(),
        Compression::Gzip => gzip(data),
        Compression::Zstd => zstd::encode_all(data, 3).unwrap(),
        Compression::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Compression::Xz => {
            let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
    }
}

const ALL_COMPRESSIONS: [Compression; 5] =
    [Compression::None, Compression::Gzip, Compression::Zstd, Compression::Bzip2, Compression::Xz];

#[test]
fn decompression_is_chosen_by_magic_whatever_the_name() {
    let plain = "0\n1\n2\n".repeat(1000);
    let expected = read(Format::Lirs, &plain);
    let dir = tempfile::tempdir().unwrap();
    for c in ALL_COMPRESSIONS {
        let data = compressed(c, plain.as_bytes());
        assert_eq!(Compression::sniff(&data), c);
        // Right suffix, no suffix, a wrong suffix.
        for name in [format!("t.trace.{}", c.name()), "t.trace".to_string(), "t.trace.zst".to_string()] {
            let path = dir.path().join(&name);
            std::fs::write(&path, &data).unwrap();
            let opened = open_path(&path, &ReadOptions::default()).unwrap();
            assert_eq!(opened.compression, c, "{name}");
            assert_eq!(opened.format, Format::Lirs, "{name}: {}", opened.reason);
            let mut src = opened.source;
            assert_eq!(collect(&mut *src).unwrap(), expected, "{name}");
        }
    }
}

#[test]
fn multi_member_gzip_and_multi_frame_zstd_are_read_whole() {
    let mut gz = gzip(b"1\n2\n");
    gz.extend(gzip(b"3\n"));
    let mut zs = zstd::encode_all(&b"1\n2\n"[..], 1).unwrap();
    zs.extend(zstd::encode_all(&b"3\n"[..], 1).unwrap());
    for data in [gz, zs] {
        let opened =
            open_stream(Cursor::new(data), "x", &ReadOptions { format: Format::Lirs, ..Default::default() }).unwrap();
        let mut src = opened.source;
        assert_eq!(collect(&mut *src).unwrap(), [Request::read(1), Request::read(2), Request::read(3)]);
    }
}

#[test]
fn corrupt_compressed_input_is_an_io_error() {
    let mut data = zstd::encode_all(&b"1\n2\n3\n"[..], 1).unwrap();
    let n = data.len();
    data.truncate(n - 4);
    data.extend([0xde, 0xad]);
    let r = open_stream(Cursor::new(data), "bad.zst", &ReadOptions { format: Format::Lirs, ..Default::default() })
        .and_then(|mut o| collect(&mut *o.source));
    assert!(matches!(r, Err(TraceError::Io { ref path, .. }) if path == "bad.zst"), "{r:?}");
}

// ---------------------------------------------------------------------------------------------
// Detection

#[test]
fn detection_by_name_and_content() {
    let cases: &[(&str, &str, Format)] = &[
        ("OLTP.lis.zst", "1 1 0 0\n", Format::Arc),
        ("x.fbt", "", Format::Binary),
        ("x.oracleGeneral.bin", "", Format::Oracle),
        ("cluster52.oracleGeneral.sample10.zst", "", Format::Oracle),
        ("x.oracle", "", Format::Oracle),
        ("Financial1.spc", "0,1,2,w,0.0\n", Format::Spc),
        ("t.txt", "# flashbuf-trace v1\nR 1\n", Format::Text),
        ("t.trace", "# flashbuf-trace v1\nR 1\n", Format::Text),
        ("cp.csv", "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n", Format::CloudPhysics),
        ("cp.csv", "1,5633898,2a,512,42932745\n1,5633899,28,512,1\n", Format::CloudPhysics),
        ("hm_0.csv", "128166385295514663,hm,0,Write,9056014336,2048,2833\n", Format::Msr),
        ("a.csv", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n", Format::Msr),
        ("a.csv", "0,303567,3584,w,0.000000\n1,8,512,R,0.1\n", Format::Spc),
        (
            "tencent-cloud_storage-sample.bz2",
            "1538323200,4247200,128,1,1058\n1538323199,13896880,128,0,1063\n",
            Format::Tencent,
        ),
        ("tpcc-small.trace.zst", "938513000 4 264719034 16 0\n938828000 3 197570570 16 1\n", Format::Mqsim),
        ("x.trace", "0.000000 0 264719034 16 0\n1.25 3 197570570 16 1\n", Format::Disksim),
        ("x.trace", "1936993 8 0 0\n793041 16 0 1\n", Format::Arc),
        ("lirs-ps.trace.gz", "0\n1\n\n2\n", Format::Lirs),
        ("noext", "# comment\n5\n", Format::Lirs),
        ("notes.txt", "0\n1\n", Format::Lirs),
    ];
    for (name, content, want) in cases {
        let d = detect_format(name, content.as_bytes(), true).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(d.format, *want, "{name}: {content:?} → {}", d.reason);
        assert!(!d.reason.is_empty() && !d.reason.contains('\n'));
    }
    // The binary magic wins over any name.
    let mut fbt = BINARY_MAGIC.to_vec();
    fbt.extend([1, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(detect_format("weird.csv", &fbt, true).unwrap().format, Format::Binary);
}

#[test]
fn detection_failures_explain_themselves() {
    for (name, content) in [
        ("a.csv", "a,b,c\n"),
        ("a.csv", "1,2,3,4,5\n1,2,3\n"),
        ("a", "R 1\nW 2\n"),
        ("a", ""),
        ("a", "\n\n"),
        ("a", "# only a comment\n"),
        ("a", "\u{0}\u{1}\u{2}"),
    ] {
        let e = detect_format(name, content.as_bytes(), true).unwrap_err().to_string();
        assert!(e.contains("valid formats"), "{name} {content:?}: {e}");
    }
    let e = detect_format("a.csv", b"x,y,z\n", true).unwrap_err().to_string();
    assert!(e.contains("line 1 'x,y,z'"), "{e}");
    // The line that breaks the pattern is named, with why.
    let e = detect_format("a.csv", b"1,2,3,4,5\n\n1,2,3\n", true).unwrap_err().to_string();
    assert!(e.contains("line 3 '1,2,3': 3 comma-separated fields where line 1 has 5"), "{e}");
    let msr = "1,hm,0,Read,0,512,1\n2,hm,0,Write,0,512,1\n3,hm,0,Erase,0,512,1\n";
    let e = detect_format("a.csv", msr.as_bytes(), true).unwrap_err().to_string();
    assert!(e.contains("line 3 '3,hm,0,Erase,0,512,1': as msr, its 4th field is not Read or Write"), "{e}");
    let e = detect_format("a", b"1 2 3 4\n5 6 x 8\n", true).unwrap_err().to_string();
    assert!(e.contains("line 2 '5 6 x 8': as ARC .lis, a field is not an integer"), "{e}");
    // Control bytes of the file never reach the terminal raw.
    let text = format!("\x1b[31mred,1\n{}", "1,2\n".repeat(40));
    let e = detect_format("a.csv", text.as_bytes(), true).unwrap_err().to_string();
    assert!(!e.contains('\x1b') && e.contains("\\u{1b}[31mred,1"), "{e}");
}

#[test]
fn a_text_trace_with_a_stray_byte_is_text_and_the_reader_names_the_line() {
    // An MSR CSV of exactly 24 × k bytes with one byte that is not UTF-8: it was once taken
    // for oracleGeneral and simulated as garbage.
    let mut data = Vec::new();
    let mut i = 0u64;
    while data.len() < 2400 || data.len() % ORACLE_RECORD_BYTES != 0 {
        data.extend_from_slice(format!("{},hm,0,Read,{},4096,10\n", 1000 + i, 4096 * (i % 97)).as_bytes());
        i += 1;
        if data.len() > 100_000 {
            break;
        }
    }
    while data.len() % ORACLE_RECORD_BYTES != 0 {
        let n = data.len();
        data.insert(n - 1, b' ');
    }
    let line7 = data.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(5).unwrap().0 + 3;
    data[line7] = 0xff;
    let d = detect_format("trace", &data, true).unwrap();
    assert_eq!(d.format, Format::Msr, "{}", d.reason);
    let e = read_with(Format::Msr, &data, &ReadOptions::default()).unwrap_err();
    match e {
        TraceError::Parse { line, message, .. } => {
            assert_eq!(line, 7, "{message}");
            assert!(message.contains("\\xff"), "{message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    // Genuine oracleGeneral records still validate; text bytes never do.
    assert!(oracle_looking_text_is_refused());
}

/// 48 bytes of text read as two oracleGeneral records: `next_access_vtime` is 8 ASCII bytes, a
/// number far above any real trace's length.
fn oracle_looking_text_is_refused() -> bool {
    let text = b"1000,hm,0,Read,4096,4096,10\n1001,hm,0,Read,8192\x00";
    assert_eq!(text.len(), 48);
    detect_format("x", text, true).is_err()
}

#[test]
fn detection_ignores_a_line_cut_by_the_sniff_window() {
    // The last line is cut ("93") and would not match; incomplete input ignores it.
    assert_eq!(detect_format("a", b"1 2 3 4\n5 6 7 8\n9", false).unwrap().format, Format::Arc);
    assert!(detect_format("a", b"1 2 3 4\n5 6 7 8\n9", true).is_err());
}

#[test]
fn oracle_content_is_recognised_without_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.bin");
    let mut w = OracleWriter::create(&path, false, 4096).unwrap();
    for p in [1u64, 2, 1, 3, 2, 1] {
        w.write(&Request::read(p)).unwrap();
    }
    w.finish().unwrap();
    let data = std::fs::read(&path).unwrap();
    let d = detect_format("noname", &data, true).unwrap();
    assert_eq!(d.format, Format::Oracle, "{}", d.reason);
    // Random binary data is not mistaken for it.
    let mut junk = data.clone();
    junk[16..24].copy_from_slice(&0i64.to_le_bytes());
    assert!(detect_format("noname", &junk, true).is_err());
}

// ---------------------------------------------------------------------------------------------
// Oracle and binary specifics

#[test]
fn oracle_records_and_truncation() {
    let mut data = Vec::new();
    for (clock, id) in [(100u32, 7u64), (101, 9), (99, 7)] {
        data.extend(clock.to_le_bytes());
        data.extend(id.to_le_bytes());
        data.extend(4096u32.to_le_bytes());
        data.extend((-1i64).to_le_bytes());
    }
    let got = read_with(Format::Oracle, &data, &ReadOptions::default()).unwrap();
    assert_eq!(got, [req(7, R, Some(0)), req(9, R, Some(1_000_000)), req(7, R, Some(0))]);
    data.extend([1, 2, 3]);
    match read_with(Format::Oracle, &data, &ReadOptions::default()) {
        Err(TraceError::Parse { line: 4, message, .. }) => {
            assert!(message.contains("truncated record: 3 of 24"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

/// A file opened by path is memory-mapped and decoded in place; it must give what the stream
/// reader gives for the same bytes: the requests in batches of any size, and the same error
/// for a truncated last record.
#[test]
fn mapped_oracle_file_reads_as_the_stream_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    for i in 0..10_000u64 {
        data.extend((1000 + (i / 7) as u32).to_le_bytes());
        data.extend((i * 7919 % 1009).to_le_bytes());
        data.extend(4096u32.to_le_bytes());
        data.extend((-1i64).to_le_bytes());
    }
    for cut in [0usize, 5, 24, 23] {
        let bytes = &data[..data.len() - cut];
        let path = dir.path().join(format!("t{cut}.oracleGeneral"));
        std::fs::write(&path, bytes).unwrap();
        let streamed = read_with(Format::Oracle, bytes, &ReadOptions::default());
        for max in [1usize, 7, 4096, 1 << 16] {
            let mut src = open_path(&path, &ReadOptions::default()).unwrap().source;
            let mut got = Vec::new();
            let mut batch = Vec::new();
            let r = loop {
                match src.next_batch(&mut batch, max) {
                    Ok(0) => break Ok(got.clone()),
                    Ok(_) => got.extend_from_slice(&batch),
                    Err(e) => break Err(e),
                }
            };
            match (&streamed, r) {
                (Ok(want), Ok(got)) => assert_eq!(&got, want, "cut {cut}, batches of {max}"),
                (
                    Err(TraceError::Parse { line: l1, message: m1, .. }),
                    Err(TraceError::Parse { path: p2, line: l2, message: m2 }),
                ) => {
                    assert_eq!((l2, &m2), (*l1, m1), "cut {cut}, batches of {max}");
                    assert_eq!(p2, path.display().to_string());
                }
                (want, got) => panic!("cut {cut}, batches of {max}: {want:?} against {got:?}"),
            }
        }
    }
}

/// Reads `src` to its end with `next_sampled`: the kept requests and the totals scanned.
fn read_sampled(
    src: &mut dyn TraceSource,
    max: usize,
    sampler: &crate::BlockSampler,
) -> (Vec<Request>, crate::Scanned) {
    let (mut kept, mut total, mut batch) = (Vec::new(), crate::Scanned::default(), Vec::new());
    loop {
        let s = src.next_sampled(&mut batch, max, sampler).unwrap();
        assert!(batch.len() as u64 <= s.requests && s.requests <= max as u64);
        if s.requests == 0 {
            return (kept, total);
        }
        kept.extend_from_slice(&batch);
        total.requests += s.requests;
        total.writes += s.writes;
    }
}

/// A sampled read keeps exactly the requests a filter over the whole decoded trace keeps, in
/// order, and counts every request it read: the oracleGeneral reader (mapped and streamed), which
/// drops records before building them, and the default of every other reader.
#[test]
fn a_sampled_read_keeps_what_filtering_the_whole_trace_keeps() {
    let dir = tempfile::tempdir().unwrap();
    let reqs: Vec<Request> = (0..20_000u64)
        .map(|i| Request {
            page: (i * 7919) % 30_011,
            kind: if i % 3 == 0 { W } else { R },
            time_us: Some(i * 1_000_000),
        })
        .collect();
    let mut oracle = Vec::new();
    for r in &reqs {
        oracle.extend(((r.time_us.unwrap() / 1_000_000) as u32).to_le_bytes());
        oracle.extend(r.page.to_le_bytes());
        oracle.extend(4096u32.to_le_bytes());
        oracle.extend((-1i64).to_le_bytes());
    }
    let oracle_path = dir.path().join("t.oracleGeneral");
    std::fs::write(&oracle_path, &oracle).unwrap();
    let binary = binary_file(&reqs);
    for (rate, block) in [(0.01, 64u64), (0.1, 1), (0.5, 16), (1.0, 64)] {
        let sampler = crate::BlockSampler::with_rate(rate, block, 7).unwrap();
        for max in [1usize, 100, 4096, 1 << 16] {
            // oracleGeneral: every request a read.
            let all = read_with(Format::Oracle, &oracle, &ReadOptions::default()).unwrap();
            let want: Vec<Request> = all.iter().filter(|r| sampler.keeps(r.page)).copied().collect();
            let mut mapped = open_path(&oracle_path, &ReadOptions::default()).unwrap().source;
            let mut streamed =
                open_reader(Format::Oracle, Cursor::new(oracle.clone()), "t", &ReadOptions::default()).unwrap();
            for src in [&mut mapped, &mut streamed] {
                let (kept, total) = read_sampled(&mut **src, max, &sampler);
                assert_eq!(kept, want, "oracle, rate {rate}, batches of {max}");
                assert_eq!(total, crate::Scanned { requests: 20_000, writes: 0 });
            }
            // flashbuf binary: the default, with writes counted.
            let all = read_with(Format::Binary, &binary, &ReadOptions::default()).unwrap();
            let want: Vec<Request> = all.iter().filter(|r| sampler.keeps(r.page)).copied().collect();
            let mut src =
                open_reader(Format::Binary, Cursor::new(binary.clone()), "t", &ReadOptions::default()).unwrap();
            let (kept, total) = read_sampled(&mut *src, max, &sampler);
            assert_eq!(kept, want, "binary, rate {rate}, batches of {max}");
            assert_eq!(
                total,
                crate::Scanned { requests: 20_000, writes: all.iter().filter(|r| r.kind == W).count() as u64 }
            );
        }
    }
}

fn binary_file(reqs: &[Request]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.fbt");
    let mut w = BinaryWriter::create(&path, false).unwrap();
    for r in reqs {
        w.write(r).unwrap();
    }
    assert_eq!(w.finish().unwrap(), reqs.len() as u64);
    std::fs::read(&path).unwrap()
}

fn sample_requests(n: u64) -> Vec<Request> {
    (0..n)
        .map(|i| {
            let page = ((i * 7919) % 1000).wrapping_add(if i % 5 == 0 { u64::MAX - 10 } else { 0 });
            let kind = if i % 3 == 0 { W } else { R };
            req(page, kind, if i % 4 == 0 { None } else { Some(i * 1000) })
        })
        .collect()
}

#[test]
fn binary_truncation_at_every_length_is_an_error() {
    let reqs = sample_requests(300);
    let data = binary_file(&reqs);
    assert_eq!(read_with(Format::Binary, &data, &ReadOptions::default()).unwrap(), reqs);
    for len in 0..data.len() {
        let r = read_with(Format::Binary, &data[..len], &ReadOptions::default());
        assert!(matches!(r, Err(TraceError::Parse { .. })), "length {len}: {r:?}");
    }
    // Trailing garbage too.
    let mut longer = data.clone();
    longer.push(0);
    assert!(read_with(Format::Binary, &longer, &ReadOptions::default()).is_err());
}

#[test]
fn binary_errors_name_the_problem() {
    let data = binary_file(&sample_requests(10));
    let msg = |d: &[u8]| match read_with(Format::Binary, d, &ReadOptions::default()) {
        Err(TraceError::Parse { message, .. }) => message,
        other => panic!("{other:?}"),
    };
    let mut bad = data.clone();
    bad[0] = b'X';
    assert!(msg(&bad).contains("bad magic"));
    let mut bad = data.clone();
    bad[8] = 2;
    assert!(msg(&bad).contains("version 2"));
    let mut bad = data.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x40;
    assert!(msg(&bad).contains("CRC-32C mismatch"));
    assert!(msg(&data[..data.len() - 20]).contains("truncated"));
}

#[test]
fn binary_is_compact() {
    // Zipf over 50,000 pages without timestamps: about 3 bytes per request.
    let mut src = "adlru-zipf".parse::<crate::GenSpec>().unwrap().open().unwrap();
    let reqs = collect(&mut *src).unwrap();
    let bytes = binary_file(&reqs).len() as f64 / reqs.len() as f64;
    assert!(bytes < 3.2, "{bytes} bytes per request");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any single flipped bit of a binary trace is detected (structure or CRC).
    #[test]
    fn binary_detects_any_bit_flip(pos in any::<prop::sample::Index>(), bit in 0u8..8) {
        let data = binary_file(&sample_requests(200));
        let mut bad = data.clone();
        let i = pos.index(bad.len());
        bad[i] ^= 1 << bit;
        let r = read_with(Format::Binary, &bad, &ReadOptions::default());
        prop_assert!(r.is_err(), "flip at byte {} bit {} went unnoticed", i, bit);
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips through the writers

fn arb_request(with_time: bool) -> impl Strategy<Value = Request> {
    let page = prop_oneof![0u64..100, any::<u64>(), (0u64..1 << 40)];
    let time = if with_time { prop::option::of(any::<u64>()).boxed() } else { Just(None).boxed() };
    (page, any::<bool>(), time).prop_map(|(page, w, time_us)| Request { page, kind: if w { W } else { R }, time_us })
}

fn round_trip(format: Format, reqs: &[Request]) -> Vec<Request> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(match format {
        Format::Text => "t.txt",
        Format::Binary => "t.fbt",
        _ => "t.oracleGeneral",
    });
    let mut w = crate::writers::create_writer(format, &path, false).unwrap();
    w.write_batch(reqs).unwrap();
    assert_eq!(w.finish().unwrap(), reqs.len() as u64);
    let opened = open_path(&path, &ReadOptions::default()).unwrap();
    assert_eq!(opened.format, format, "{}", opened.reason);
    let mut src = opened.source;
    collect(&mut *src).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn text_round_trip(reqs in prop::collection::vec(arb_request(true), 0..300)) {
        prop_assert_eq!(round_trip(Format::Text, &reqs), reqs);
    }

    #[test]
    fn binary_round_trip_with_timestamps(reqs in prop::collection::vec(arb_request(true), 0..10_000)) {
        prop_assert_eq!(round_trip(Format::Binary, &reqs), reqs);
    }

    #[test]
    fn binary_round_trip_without_timestamps(reqs in prop::collection::vec(arb_request(false), 0..10_000)) {
        prop_assert_eq!(round_trip(Format::Binary, &reqs), reqs);
    }

    /// Oracle keeps pages; kinds become reads (the format has no operation) and times whole
    /// seconds since the first request; next_access_vtime matches a quadratic model.
    #[test]
    fn oracle_round_trip(pages in prop::collection::vec(0u64..50, 0..300), start_s in 0u64..1000) {
        let reqs: Vec<Request> = pages
            .iter()
            .enumerate()
            .map(|(i, &p)| req(p, if i % 2 == 0 { W } else { R }, Some((start_s + i as u64) * 1_000_000 + 999)))
            .collect();
        let got = round_trip(Format::Oracle, &reqs);
        let want: Vec<Request> =
            pages.iter().enumerate().map(|(i, &p)| req(p, R, Some(i as u64 * 1_000_000))).collect();
        prop_assert_eq!(got, want);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.bin");
        let mut w = OracleWriter::create(&path, false, 512).unwrap();
        reqs.iter().for_each(|r| w.write(r).unwrap());
        w.finish().unwrap();
        let raw = std::fs::read(&path).unwrap();
        prop_assert_eq!(raw.len(), pages.len() * ORACLE_RECORD_BYTES);
        for (i, rec) in raw.chunks_exact(ORACLE_RECORD_BYTES).enumerate() {
            let next = i64::from_le_bytes(rec[16..24].try_into().unwrap());
            let model = pages[i + 1..].iter().position(|&q| q == pages[i]).map_or(-1, |k| (i + 1 + k) as i64 + 1);
            prop_assert_eq!(next, model, "record {}", i);
            prop_assert_eq!(u32::from_le_bytes(rec[12..16].try_into().unwrap()), 512);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// No panic on any input

const READABLE: [Format; 11] = [
    Format::Spc,
    Format::Msr,
    Format::CloudPhysics,
    Format::Tencent,
    Format::Disksim,
    Format::Mqsim,
    Format::Arc,
    Format::Lirs,
    Format::Oracle,
    Format::Text,
    Format::Binary,
];

/// Reads at most a bounded number of requests (random input can describe huge requests).
fn read_some(format: Format, data: Vec<u8>) -> Result<usize, TraceError> {
    let mut src = open_reader(format, Cursor::new(data), "fuzz", &ReadOptions::default())?;
    let mut batch = Vec::new();
    let mut total = 0;
    while total < 200_000 {
        let n = src.next_batch(&mut batch, 4096)?;
        if n == 0 {
            break;
        }
        total += n;
    }
    Ok(total)
}

fn line_soup() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b",".to_vec()),
        Just(b" ".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"#".to_vec()),
        Just(b"R".to_vec()),
        Just(b"w".to_vec()),
        Just(b"Read".to_vec()),
        Just(b"2a".to_vec()),
        Just(b"-".to_vec()),
        Just(b".".to_vec()),
        Just(b"# flashbuf-trace v1\n".to_vec()),
        Just(b"version,time,op,size,lbn\n".to_vec()),
        "[0-9]{1,22}".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 1..4),
    ];
    prop::collection::vec(token, 0..60).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn readers_never_panic_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..2000)) {
        for f in READABLE {
            let _ = read_some(f, data.clone());
        }
        let _ = open_stream(Cursor::new(data), "fuzz", &ReadOptions::default()).and_then(|mut o| collect(&mut *o.source));
    }

    #[test]
    fn readers_never_panic_on_random_lines(data in line_soup()) {
        for f in READABLE {
            let _ = read_some(f, data.clone());
        }
        let _ = detect_format("fuzz.csv", &data, true);
        let _ = detect_format("fuzz", &data, false);
    }

    #[test]
    fn readers_never_panic_on_damaged_binary(cut in 0usize..4000, flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4)) {
        let mut data = binary_file(&sample_requests(300));
        for (i, v) in flips {
            let at = i.index(data.len());
            data[at] = v;
        }
        data.truncate(cut.min(data.len()));
        let _ = read_some(Format::Binary, data);
    }

    #[test]
    fn compressed_garbage_is_an_error_not_a_panic(c in 1usize..5, tail in prop::collection::vec(any::<u8>(), 0..200)) {
        let magic: &[u8] = match c {
            1 => &[0x1f, 0x8b, 0x08],
            2 => &[0x28, 0xb5, 0x2f, 0xfd],
            3 => b"BZh9",
            _ => &[0xfd, b'7', b'z', b'X', b'Z', 0x00],
        };
        let mut data = magic.to_vec();
        data.extend(tail);
        let _ = open_stream(Cursor::new(data), "fuzz", &ReadOptions { format: Format::Lirs, ..Default::default() })
            .and_then(|mut o| collect(&mut *o.source));
    }
}

// ---------------------------------------------------------------------------------------------
// Writers: atomic replacement and overwrite protection

#[test]
fn writers_refuse_to_overwrite_and_leave_nothing_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt");
    // Dropped without finish: no file, no temporary left behind.
    {
        let mut w = TextWriter::create(&path, false).unwrap();
        w.write(&Request::read(1)).unwrap();
    }
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Finished: the file appears.
    let mut w = TextWriter::create(&path, false).unwrap();
    w.write(&Request::write(5)).unwrap();
    w.finish().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# flashbuf-trace v1\nW 5\n");
    // Existing: refused at creation unless overwrite.
    let e = TextWriter::create(&path, false).err().unwrap();
    assert!(matches!(&e, TraceError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists), "{e}");
    let e = BinaryWriter::create(&path, false).err().unwrap();
    assert!(e.to_string().contains("already exists"));
    // Created while a writer was running: refused at the rename, the original kept.
    let other = dir.path().join("late.fbt");
    let w = BinaryWriter::create(&other, false).unwrap();
    std::fs::write(&other, b"keep").unwrap();
    assert!(w.finish().is_err());
    assert_eq!(std::fs::read(&other).unwrap(), b"keep");
    // Overwrite allowed.
    let mut w = TextWriter::create(&path, true).unwrap();
    w.write(&Request::read(6)).unwrap();
    w.finish().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# flashbuf-trace v1\nR 6\n");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(crate::writers::create_writer(Format::Msr, &dir.path().join("x"), false).is_err());
}

#[test]
fn format_names() {
    for f in Format::ALL {
        assert_eq!(f.name().parse::<Format>().unwrap(), f);
        assert_eq!(f.to_string().to_uppercase().parse::<Format>().unwrap(), f);
    }
    assert_eq!("lis".parse::<Format>().unwrap(), Format::Arc);
    assert_eq!("fbt".parse::<Format>().unwrap(), Format::Binary);
    let e = "tsv".parse::<Format>().unwrap_err().to_string();
    assert!(e.contains("unknown trace format 'tsv'") && e.contains("cloudphysics") && e.contains("auto"), "{e}");
    assert_eq!("ns".parse::<TimeUnit>().unwrap(), TimeUnit::Nanos);
    assert!("fortnights".parse::<TimeUnit>().is_err());
}

fn csv_opts(map: &str) -> ReadOptions {
    ReadOptions { columns: Some(std::sync::Arc::new(map.parse().unwrap())), ..ReadOptions::default() }
}

#[test]
fn column_map_reads_msr_like_the_msr_reader() {
    let data = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\
                128166385295514663,hm,0,Write,9056014336,2048,2833\n\
                128166385295514878,hm,0,Write,11855351808,512,2617\n\
                128166385295515175,hm,1,Read,5548077056,8192,2320\n";
    let opts = csv_opts("time=1,volume=3,op=4,offset=5,size=6,time-unit=filetime,write=Write,read=Read");
    assert_eq!(read_with(Format::Csv, data.as_bytes(), &opts).unwrap(), read(Format::Msr, data));
    let one = ReadOptions { volume: Some(1), ..opts.clone() };
    let msr_one = read_with(Format::Msr, data.as_bytes(), &ReadOptions { volume: Some(1), ..Default::default() });
    assert_eq!(read_with(Format::Csv, data.as_bytes(), &one).unwrap(), msr_one.unwrap());
    // Auto-detection takes the column map as the format.
    let opened = open_stream(Cursor::new(data.as_bytes().to_vec()), "x.csv", &opts).unwrap();
    assert_eq!(opened.format, Format::Csv);
}

#[test]
fn column_map_units_delimiters_and_errors() {
    // Tab-separated, offset in sectors, size in sectors, ops 0/1, no header.
    let got = read_with(
        Format::Csv,
        b"7\t1\t16\n9\t0\t0\n",
        &csv_opts("offset=1,op=2,size=3,offset-unit=sectors,size-unit=sectors,write=1,read=0,delimiter=tab"),
    )
    .unwrap();
    // 7 sectors = byte 3584, 16 sectors = 8192 bytes → pages 0..=2; 9 sectors, size 0 → page 1.
    assert_eq!(got, [req(0, W, None), req(1, W, None), req(2, W, None), req(1, R, None)]);
    // Pages with a page count, whitespace separated, no op column: reads.
    let got = read_with(
        Format::Csv,
        b"  5   2\n",
        &csv_opts("offset=1,size=2,offset-unit=pages,size-unit=pages,delimiter=space"),
    );
    assert_eq!(got.unwrap(), [req(5, R, None), req(6, R, None)]);
    // Errors name the line and the column.
    let err = |data: &str, map: &str| match read_with(Format::Csv, data.as_bytes(), &csv_opts(map)) {
        Err(TraceError::Parse { line, message, .. }) => (line, message),
        other => panic!("expected a parse error, got {other:?}"),
    };
    let (line, m) = err("1,R\n2,X\n", "offset=1,op=2,write=w,read=r");
    assert_eq!(line, 2);
    assert!(m.contains("op 'X' (column 2)"), "{m}");
    let (line, m) = err("1,2\n3\n", "offset=1,size=2");
    assert_eq!((line, m.as_str()), (2, "expected at least 2 fields, found 1"));
    let (line, m) = err("offset\nx\n", "offset=1");
    assert_eq!(line, 2);
    assert!(m.contains("offset 'x' (column 1)"), "{m}");
    // A map is required for csv and refused for other formats.
    assert!(
        read_with(Format::Csv, b"1\n", &ReadOptions::default()).unwrap_err().to_string().contains("needs a column map")
    );
    assert!(
        read_with(Format::Lirs, b"1\n", &csv_opts("offset=1")).unwrap_err().to_string().contains("csv format only")
    );
    let no_vol = ReadOptions { volume: Some(1), ..csv_opts("offset=1") };
    assert!(read_with(Format::Csv, b"1\n", &no_vol).unwrap_err().to_string().contains("no volume column"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn column_reader_never_panics(data in line_soup()) {
        for map in ["offset=1", "offset=2,size=1,op=3,time=4,volume=5,delimiter=space", "offset=1,size=2,offset-unit=pages,size-unit=pages"] {
            let mut src = match open_reader(Format::Csv, Cursor::new(data.clone()), "fuzz", &csv_opts(map)) {
                Ok(s) => s,
                Err(_) => continue,
            };
            let mut batch = Vec::new();
            let mut total = 0;
            while total < 200_000 {
                match src.next_batch(&mut batch, 4096) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => total += n,
                }
            }
        }
    }
}

#[test]
fn oracle_next_access_crosses_the_backward_pass_chunks() {
    // 150,000 records (more than two chunks of the backward pass) over 7 pages: the next use of
    // each record is found across chunk boundaries, as a forward model computes it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.oracleGeneral");
    let mut w = OracleWriter::create(&path, false, 4096).unwrap();
    let pages: Vec<u64> = (0..150_000u64).map(|i| (i * i + 3 * i) % 7 + if i == 70_000 { 100 } else { 0 }).collect();
    for &p in &pages {
        w.write(&Request::read(p)).unwrap();
    }
    assert_eq!(w.finish().unwrap(), 150_000);
    let raw = std::fs::read(&path).unwrap();
    let mut next_model = vec![-1i64; pages.len()];
    let mut seen = std::collections::HashMap::new();
    for i in (0..pages.len()).rev() {
        if let Some(&j) = seen.get(&pages[i]) {
            next_model[i] = j as i64 + 1;
        }
        seen.insert(pages[i], i);
    }
    for (i, rec) in raw.chunks_exact(ORACLE_RECORD_BYTES).enumerate() {
        assert_eq!(u64::from_le_bytes(rec[4..12].try_into().unwrap()), pages[i]);
        assert_eq!(i64::from_le_bytes(rec[16..24].try_into().unwrap()), next_model[i], "record {i}");
    }
}
