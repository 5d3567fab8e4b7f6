//! The worked examples of the REF paper (Seo and Shin 2008, §II.A Fig. 1, §III.A Figs. 3 and 4)
//! and one hand-built sequence per merge type, with exact counts.
//!
//! Setting of the figures: blocks of 4 pages, 5 data blocks B0..B4 holding pages p0..p19 (the
//! device is filled sequentially first), 2 log blocks. Timings are the paper's Table I.

mod common;

use common::*;
use flashbuf_flash::{Device, DeviceStats};

/// Writes the pages, checking the invariants after each one.
fn write_all<D: Device>(d: &mut D, pages: &[u64]) {
    for &p in pages {
        d.write(p).unwrap();
        d.check_invariants().unwrap();
    }
}

fn counts(s: &DeviceStats) -> (u64, u64, u64, u64, u64) {
    (s.merges_switch, s.merges_partial, s.merges_full, s.page_copies, s.erases)
}

fn time(s: &DeviceStats) -> u64 {
    s.flash_reads * READ_NS + s.flash_programs * PROGRAM_NS + s.erases * ERASE_NS
}

#[test]
fn fig1_bast_merges_on_every_write() {
    let mut d = bast(4, 5, 2);
    fill(&mut d);
    write_all(&mut d, &[0, 4]); // log blocks L0 → B0, L1 → B1
    assert_eq!(d.stats().merges(), 0);
    d.reset_stats();
    for (i, p) in [8, 12, 1, 5, 9, 13].into_iter().enumerate() {
        d.write(p).unwrap();
        d.check_invariants().unwrap();
        assert_eq!(d.stats().merges(), i as u64 + 1, "write of p{p} merges");
    }
    // Victims in LRU order: B0's log [p0] and B1's [p4] (in order: partial, 3 copies each), then
    // B2's [p8] and B3's [p12] (partial), then B0's [p1] and B1's [p5]: p1 sits at log offset 0,
    // not in offset order, so full merges (4 copies, 2 erases each).
    let s = d.stats();
    assert_eq!(counts(&s), (0, 4, 2, 4 * 3 + 2 * 4, 4 + 2 * 2));
    assert_eq!(s.flash_programs, 6 + 20);
    assert_eq!(s.flash_reads, 20);
    assert_eq!(s.time_ns, time(&s));
    assert_eq!(s.time_ns, 20 * READ_NS + 26 * PROGRAM_NS + 8 * ERASE_NS);
    assert_eq!(d.log_owners(), [2, 3], "logs now hold p9 (B2) and p13 (B3)");
}

/// The REF paper draws FAST's two log blocks in Fig. 1(b) as shared random logs (p0, p4, p8 and
/// p12 share a log block), so this test turns the sequential log off (`seq_log = false`); with
/// Lee et al.'s SW log, see the next test.
#[test]
fn fig1_fast_random_logs_merge_on_none_then_one_eviction_copies_16_pages() {
    let mut d = fast(4, 5, 2, false);
    fill(&mut d);
    write_all(&mut d, &[0, 4, 8, 12, 1, 5, 9, 13]);
    assert_eq!(d.stats().merges(), 0, "FAST merges on none of the 8 writes");
    assert_eq!(d.stats().erases, 0);
    assert_eq!(d.rw_associativity(), [4, 4], "each log block holds pages of B0..B3");
    d.reset_stats();
    // One more random write needs a log page: the oldest log, L0 = [p0 p4 p8 p12], is evicted.
    // For each of B0..B3 a full merge gathers the newest version of its 4 pages — one from L0,
    // one from L1 (p1, p5, p9, p13), two from the data block — into a free block: 4 × 4 = 16
    // copies, as the paper counts; 4 old data blocks and L0 are erased.
    d.write(2).unwrap();
    d.check_invariants().unwrap();
    let s = d.stats();
    assert_eq!(counts(&s), (0, 0, 4, 16, 5));
    assert_eq!((s.flash_reads, s.flash_programs), (16, 17));
    assert_eq!(s.time_ns, 16 * READ_NS + 17 * PROGRAM_NS + 5 * ERASE_NS);
    // L1's pages were all superseded by the merges: it holds no valid page any more.
    assert_eq!(d.rw_associativity(), [0, 1]);
}

/// The same sequence with Lee et al.'s sequential log on (1 SW log + 1 RW log): every offset-0
/// write (p0, p4, p8, p12) starts a new SW log, so the previous one is partial-merged (3 copies:
/// offsets 1..3 from its data block; 1 erase). p1, p5, p9 go to the RW log; p13 continues the SW
/// log of B3 ([p12 p13]).
#[test]
fn fig1_fast_with_the_sequential_log() {
    let mut d = fast(4, 5, 2, true);
    fill(&mut d);
    write_all(&mut d, &[0, 4, 8, 12, 1, 5, 9, 13]);
    let s = d.stats();
    assert_eq!(counts(&s), (0, 3, 0, 9, 3));
    assert_eq!((s.flash_reads, s.flash_programs), (9, 17));
    assert_eq!(s.time_ns, 9 * READ_NS + 17 * PROGRAM_NS + 3 * ERASE_NS);
    assert_eq!(d.sw_log(), Some((3, 2)));
    assert_eq!(d.rw_associativity(), [3]);
}

fn fig3_bast(order: [u64; 6]) -> (DeviceStats, Vec<u64>) {
    let mut d = bast(4, 5, 2);
    fill(&mut d);
    write_all(&mut d, &[8, 12]); // the log blocks hold p8 (B2) and p12 (B3)
    d.reset_stats();
    write_all(&mut d, &order);
    (d.stats(), d.log_owners())
}

#[test]
fn fig3_lru_eviction_order_merges_six_times() {
    let (s, owners) = fig3_bast([0, 4, 9, 13, 1, 5]);
    // p0 evicts B2's log [p8] (LRU), p4 evicts B3's [p12], p9 evicts B0's [p0], p13 evicts B1's
    // [p4]: four partial merges of 3 copies. p1 evicts B2's log [p9] and p5 evicts B3's [p13]:
    // p9/p13 sit at log offset 0 but are offset 1 — full merges, 4 copies and 2 erases each.
    assert_eq!(s.merges(), 6);
    assert_eq!(counts(&s), (0, 4, 2, 20, 8));
    assert_eq!(s.time_ns, 20 * READ_NS + 26 * PROGRAM_NS + 8 * ERASE_NS);
    assert_eq!(owners, [0, 1]);
}

#[test]
fn fig3_ref_eviction_order_merges_twice() {
    let (s, owners) = fig3_bast([9, 13, 0, 4, 1, 5]);
    // p9 and p13 join their logs ([p8 p9], [p12 p13]); p0 evicts B2's log (LRU): partial merge,
    // copies p10, p11; p4 evicts B3's: partial, copies p14, p15; p1 and p5 join the new logs.
    assert_eq!(s.merges(), 2);
    assert_eq!(counts(&s), (0, 2, 0, 4, 2));
    assert_eq!(s.time_ns, 4 * READ_NS + 10 * PROGRAM_NS + 2 * ERASE_NS);
    assert_eq!(owners, [0, 1]);
}

/// Fig. 4: the same two orders under FAST (random logs only, as drawn): LRU order leaves both
/// logs with block associativity 4, REF order with 2; evicting the first log then costs 4 or 2
/// full merges.
#[test]
fn fig4_fast_block_associativity() {
    for (order, assoc, merges) in [([0, 4, 9, 13, 1, 5], [4, 4], 4), ([9, 13, 0, 4, 1, 5], [2, 2], 2)] {
        let mut d = fast(4, 5, 2, false);
        fill(&mut d);
        write_all(&mut d, &[8, 12]);
        write_all(&mut d, &order);
        assert_eq!(d.rw_associativity(), assoc, "order {order:?}");
        d.reset_stats();
        d.write(18).unwrap(); // B4: not in any log; needs log space
        d.check_invariants().unwrap();
        let s = d.stats();
        assert_eq!((s.merges_full, s.page_copies), (merges, 4 * merges), "order {order:?}");
    }
}

#[test]
fn bast_switch_merge() {
    let mut d = bast(4, 2, 1);
    fill(&mut d);
    // p0..p3 into B0's log in offset order: the write that fills it merges by switching.
    write_all(&mut d, &[0, 1, 2]);
    assert_eq!(d.stats().merges(), 0);
    let t = d.write(3).unwrap();
    let s = d.stats();
    assert_eq!(counts(&s), (1, 0, 0, 0, 1));
    assert_eq!((s.flash_reads, s.flash_programs), (0, 4));
    assert_eq!(t, PROGRAM_NS + ERASE_NS, "the last write pays its program and the erase of the old data block");
    assert_eq!(s.time_ns, 4 * PROGRAM_NS + ERASE_NS);
    assert!(d.log_owners().is_empty());
}

#[test]
fn bast_lazy_merge_waits_until_a_log_block_is_needed() {
    // The same in-order fill of B0's log, merged lazily: nothing happens when the log fills.
    let mut d = bast_with(4, 3, 1, false);
    fill(&mut d);
    write_all(&mut d, &[0, 1, 2, 3]);
    assert_eq!(d.stats().merges(), 0, "a full log block waits");
    assert_eq!(d.log_owners(), [0]);
    d.check_invariants().unwrap();
    // Reads find the newest copies in the full log.
    for p in 0..4 {
        d.read(p).unwrap();
    }
    // Another data block needs the only log block: the full, in-order log switches.
    let t = d.write(5).unwrap();
    assert_eq!(counts(&d.stats()), (1, 0, 0, 0, 1));
    assert_eq!(t, ERASE_NS + PROGRAM_NS);
    assert_eq!(d.log_owners(), [1]);
    // B1's log [p5 p6 p7 p4]: full, out of order; a fifth write to B1 needs space: full merge
    // of the old log first (4 copies, 2 erases), then the write opens a fresh log.
    write_all(&mut d, &[6, 7, 4]);
    assert_eq!(d.stats().merges(), 1);
    d.write(5).unwrap();
    let s = d.stats();
    assert_eq!((s.merges_switch, s.merges_full, s.page_copies), (1, 1, 4));
    assert_eq!(d.log_owners(), [1]);
    d.check_invariants().unwrap();
}

#[test]
fn bast_partial_merge() {
    let mut d = bast(4, 2, 1);
    fill(&mut d);
    write_all(&mut d, &[4, 5]); // B1's log [p4 p5]: in order, k = 2
    // p0 needs the only log block: B1's is merged: copies p6, p7 into it (2 reads, 2 programs),
    // erases the old B1; then p0 is programmed into a new log.
    let t = d.write(0).unwrap();
    assert_eq!(t, 2 * READ_NS + 3 * PROGRAM_NS + ERASE_NS);
    let s = d.stats();
    assert_eq!(counts(&s), (0, 1, 0, 2, 1));
    assert_eq!(d.log_owners(), [0]);
}

#[test]
fn bast_full_merge() {
    let mut d = bast(4, 2, 1);
    fill(&mut d);
    write_all(&mut d, &[5, 4, 5]); // B1's log [p5 p4 p5]: not in offset order
    // p0 forces the merge: newest p4 and p5 from the log, p6 and p7 from the data block, into a
    // free block (4 copies); the log and the old data block are erased.
    let t = d.write(0).unwrap();
    assert_eq!(t, 4 * READ_NS + 5 * PROGRAM_NS + 2 * ERASE_NS);
    let s = d.stats();
    assert_eq!(counts(&s), (0, 0, 1, 4, 2));
    // A log that fills up out of order merges at once, fully.
    let mut d = bast(4, 2, 1);
    fill(&mut d);
    write_all(&mut d, &[1, 1, 1]);
    let t = d.write(1).unwrap();
    assert_eq!(t, 4 * READ_NS + 5 * PROGRAM_NS + 2 * ERASE_NS);
    assert_eq!(counts(&d.stats()), (0, 0, 1, 4, 2));
}

#[test]
fn bast_evicts_the_least_recently_written_log() {
    let mut d = bast(4, 4, 2);
    fill(&mut d);
    write_all(&mut d, &[1, 5, 2]); // B0's log written last
    assert_eq!(d.log_owners(), [1, 0]);
    d.write(9).unwrap(); // B1's log (least recently written) is the victim, not B0's
    assert_eq!(d.log_owners(), [0, 2]);
    assert_eq!(d.stats().merges_full, 1, "B1's log [p5] is not in offset order");
}

#[test]
fn fast_sw_switch_and_partial_merges() {
    // Switch: a whole block written from offset 0, in order, through the SW log.
    let mut d = fast(4, 3, 2, true);
    fill(&mut d);
    write_all(&mut d, &[4, 5, 6]);
    assert_eq!(d.sw_log(), Some((1, 3)));
    let t = d.write(7).unwrap();
    assert_eq!(t, PROGRAM_NS + ERASE_NS);
    assert_eq!(counts(&d.stats()), (1, 0, 0, 0, 1));
    assert_eq!(d.sw_log(), None);
    // Partial, triggered by a non-sequential write to the SW log's block: [p0 p1] gets p2, p3
    // copied from the data block; then p3 itself goes to the RW log.
    let mut d = fast(4, 3, 2, true);
    fill(&mut d);
    write_all(&mut d, &[0, 1]);
    let t = d.write(3).unwrap();
    assert_eq!(t, 2 * READ_NS + 3 * PROGRAM_NS + ERASE_NS);
    assert_eq!(counts(&d.stats()), (0, 1, 0, 2, 1));
    assert_eq!(d.rw_associativity(), [1]);
    // Partial, triggered by a new offset-0 write; the newest p1 is in the RW log, so it is
    // copied from there (and dropped from the RW log).
    let mut d = fast(4, 3, 2, true);
    fill(&mut d);
    write_all(&mut d, &[0, 5, 8]); // SW [p0]; RW [p5]; p8 starts a new SW log: B0 partial (3 copies)
    d.reset_stats();
    write_all(&mut d, &[1, 9]); // RW [p5 p1]; SW [p8 p9]
    d.write(0).unwrap(); // SW (B2) partial: p10, p11 copied; new SW [p0] for B0
    assert_eq!(counts(&d.stats()), (0, 1, 0, 2, 1));
    d.write(4).unwrap(); // SW (B0) partial: p1 from the RW log, p2, p3 from the data block
    assert_eq!(counts(&d.stats()), (0, 2, 0, 5, 2));
    assert_eq!(d.rw_associativity(), [1], "only p5 is still valid in the RW log");
    d.check_invariants().unwrap();
}

#[test]
fn fast_full_merge_of_the_sw_logs_block_consumes_the_sw_log() {
    // 1 SW log + 2 RW logs. B0's p3 goes to an RW log, then p0 starts an SW log for B0.
    let mut d = fast(4, 3, 3, true);
    fill(&mut d);
    write_all(&mut d, &[3, 0, 5, 6, 7, 9, 10, 11, 9]); // L0 = [p3 p5 p6 p7], L1 = [p9 p10 p11 p9]
    assert_eq!(d.sw_log(), Some((0, 1)));
    d.reset_stats();
    // The next RW write evicts L0: B0 is fully merged from the SW log (p0), its data block (p1,
    // p2) and L0 (p3) — 4 copies — and both the old data block and the SW log are erased; B1 is
    // merged from its data block (p4) and L0 (p5..p7) — 4 copies, 1 erase; then L0 is erased.
    d.write(5).unwrap();
    d.check_invariants().unwrap();
    let s = d.stats();
    assert_eq!(counts(&s), (0, 0, 2, 8, 4));
    assert_eq!(d.sw_log(), None);
    assert_eq!(s.time_ns, 8 * READ_NS + 9 * PROGRAM_NS + 4 * ERASE_NS);
}
