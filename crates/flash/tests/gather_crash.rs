//! Crash safety of [`GatherStore`]: power cuts at random points, with the last write torn.
//!
//! [`CrashStore`] is a fault-injecting [`PageStore`]: it accepts a given number of writes,
//! then "loses power" — the next write reaches the medium only as a prefix of its bytes (any
//! length, from nothing to everything) and fails, and every later write fails. The durable image
//! is the inner [`MemStore`]. After each cut the test recovers from that image and checks that
//! every acknowledged write reads back, that the write in flight reads back old or new and never
//! anything else, that recovery reports the torn sector (and nothing as damaged), and that the
//! recovered layer keeps working — over several crash/recover cycles per case.

use std::collections::HashMap;

use flashbuf_flash::gather::{SectorFaultKind, SectorWindow};
use flashbuf_flash::{DeviceStats, GatherStore, MemStore, Nanos, PageStore, PoolSize, RecoverMode, StoreError};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug)]
struct Torn {
    physical: u64,
    /// The sector equals what the write wanted (the prefix reached everything that differed).
    as_new: bool,
    /// The sector equals what it held before (nothing that differed reached it).
    as_old: bool,
}

/// A store that cuts power after `budget` writes, tearing the write in flight to `tear` bytes.
struct CrashStore {
    inner: MemStore,
    budget: u64,
    tear: usize,
    cut: bool,
    /// The torn write: where it went and what the sector now holds.
    torn: Option<Torn>,
}

impl CrashStore {
    fn new(inner: MemStore, budget: u64, tear: usize) -> Self {
        CrashStore { inner, budget, tear, cut: false, torn: None }
    }
}

fn power_cut() -> StoreError {
    StoreError::Io { path: "crash-store".into(), source: std::io::Error::other("power cut") }
}

impl PageStore for CrashStore {
    fn page_size(&self) -> usize {
        self.inner.page_size()
    }
    fn pages(&self) -> u64 {
        self.inner.pages()
    }
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        if self.cut {
            return Err(power_cut());
        }
        self.inner.read_page(page, buf)
    }
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        if self.cut {
            return Err(power_cut());
        }
        if self.budget == 0 {
            self.cut = true;
            let n = self.tear.min(buf.len());
            let mut old = vec![0u8; buf.len()];
            self.inner.read_page(page, &mut old)?;
            let mut now = old.clone();
            now[..n].copy_from_slice(&buf[..n]);
            self.inner.write_page(page, &now)?;
            self.torn = Some(Torn { physical: page, as_new: now == buf, as_old: now == old });
            return Err(power_cut());
        }
        self.budget -= 1;
        self.inner.write_page(page, buf)
    }
    fn sync(&mut self) -> Result<Nanos, StoreError> {
        if self.cut { Err(power_cut()) } else { Ok(0) }
    }
    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }
    fn label(&self) -> String {
        "crash".into()
    }
}

const SECTOR: usize = 64; // 32-byte payloads

fn payload(stamp: u64) -> Vec<u8> {
    (0..SECTOR - 32).map(|i| (stamp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 8 * 8)) as u8 ^ i as u8).collect()
}

/// Reads every logical sector and checks it against the acknowledged model, allowing the write
/// in flight to show old or new data; returns the model updated with what is now durable.
fn check_recovered(
    g: &mut GatherStore<MemStore>,
    acked: &HashMap<u64, u64>,
    pending: Option<(u64, u64)>,
    context: &str,
) -> HashMap<u64, u64> {
    let mut now = acked.clone();
    let mut buf = vec![0u8; SECTOR - 32];
    for l in 0..g.pages() {
        g.read_page(l, &mut buf).unwrap_or_else(|e| panic!("{context}: read {l}: {e}"));
        let old = acked.get(&l).map(|&s| payload(s)).unwrap_or_else(|| vec![0; SECTOR - 32]);
        if buf == old {
            continue;
        }
        match pending {
            Some((pl, stamp)) if pl == l && buf == payload(stamp) => {
                now.insert(l, stamp);
            }
            _ => panic!("{context}: logical {l} reads data that was never acknowledged (pending {pending:?})"),
        }
    }
    now
}

/// Runs the crash cycles; returns how many cuts recovery reported as torn and how many left the
/// write in flight visible.
fn run_case(l: u64, pool: u64, seed: u64, cycles: &[(u64, usize)]) -> (u32, u32) {
    let (mut torn_reports, mut new_visible) = (0, 0);
    let f = l + pool;
    let g = GatherStore::format(MemStore::new(SECTOR, f), l, PoolSize::Sectors(pool)).unwrap();
    let mut image = g.into_inner();
    let mut acked: HashMap<u64, u64> = HashMap::new();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut stamp = 0u64;
    for (cycle, &(budget, tear)) in cycles.iter().enumerate() {
        let context =
            format!("|L| {l}, |P| {pool}, seed {seed}, cycle {cycle} (cut after {budget} writes, tear {tear})");
        let (g, report) = GatherStore::recover(CrashStore::new(image, budget, tear), RecoverMode::Strict)
            .unwrap_or_else(|e| panic!("{context}: recovery before the run: {e}"));
        assert!(report.is_consistent(), "{context}: {report:?}");
        let mut g = g;
        let mut pending = None;
        let mut buf = vec![0u8; SECTOR - 32];
        loop {
            let lsec = rng.random_range(0..l);
            if rng.random_bool(0.15) {
                match g.read_page(lsec, &mut buf) {
                    Ok(_) => {
                        let want = acked.get(&lsec).map(|&s| payload(s)).unwrap_or_else(|| vec![0; SECTOR - 32]);
                        assert_eq!(buf, want, "{context}: live read of {lsec}");
                    }
                    Err(_) => break, // reads fail only after the cut, which a write causes first
                }
                continue;
            }
            stamp += 1;
            match g.write_page(lsec, &payload(stamp)) {
                Ok(_) => {
                    acked.insert(lsec, stamp);
                }
                Err(_) => {
                    pending = Some((lsec, stamp));
                    break;
                }
            }
        }
        let target = g.next_target();
        let crash = g.into_inner();
        let torn = crash.torn.expect("the cut write was attempted");
        assert_eq!(torn.physical, target, "{context}: the write in flight went to the layer's next target");
        image = crash.inner;

        // Recover from the durable image.
        let (mut r, report) = GatherStore::recover(image.clone(), RecoverMode::Strict)
            .unwrap_or_else(|e| panic!("{context}: recovery refused: {e}"));
        r.check_invariants().unwrap();
        assert!(report.damaged.is_empty() && report.missing.is_empty(), "{context}: {report:?}");
        match report.torn {
            Some(p) => {
                torn_reports += 1;
                assert_eq!(p, torn.physical, "{context}: the torn sector is where the write went");
                assert!(!torn.as_new, "{context}: a completely written sector reported torn");
            }
            // A mix of old and new bytes never passes the checksum (the sequence numbers
            // differ), so a valid sector there is entirely old or entirely new. (An untouched
            // sector may still be reported torn: the one torn by the previous cycle's cut.)
            None => assert!(torn.as_new || torn.as_old, "{context}: a torn write was not reported"),
        }
        let now = check_recovered(&mut r, &acked, pending, &context);
        if now != acked {
            new_visible += 1;
        }
        acked = now;
        image = r.into_inner();
    }
    // After the last cycle, a clean run: everything reads back, the report is clean.
    let (mut r, report) = GatherStore::recover(image, RecoverMode::Strict).unwrap();
    assert_eq!(report.live, l);
    check_recovered(&mut r, &acked, None, "final");
    (torn_reports, new_visible)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_acknowledged_write_is_lost(
        l in 1u64..48,
        pool in 1u64..64,
        seed in any::<u64>(),
        cycles in prop::collection::vec((0u64..300, prop_oneof![Just(0usize), Just(SECTOR), 1..SECTOR]), 1..5),
    ) {
        run_case(l, pool, seed, &cycles);
    }
}

#[test]
fn many_seeds_small_geometries() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut torn, mut visible) = (0, 0);
    for case in 0..300 {
        let l = rng.random_range(1..20);
        let pool = rng.random_range(1..20);
        let cycles: Vec<(u64, usize)> =
            (0..rng.random_range(1..8)).map(|_| (rng.random_range(0..80), rng.random_range(0..=SECTOR))).collect();
        let (t, v) = run_case(l, pool, case, &cycles);
        torn += t;
        visible += v;
    }
    // Both outcomes of a cut are exercised: torn sectors recovered as never written, and
    // complete-but-unacknowledged writes that became visible.
    assert!(torn > 100 && visible > 10, "torn {torn}, visible {visible}");
}

/// A long soak over larger geometries:
/// `cargo test -p flashbuf-flash --test gather_crash -- --ignored`.
#[test]
#[ignore]
fn soak_crash_cycles() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for case in 0..20_000 {
        let l = rng.random_range(1..200);
        let pool = rng.random_range(1..300);
        let cycles: Vec<(u64, usize)> =
            (0..rng.random_range(1..10)).map(|_| (rng.random_range(0..2000), rng.random_range(0..=SECTOR))).collect();
        run_case(l, pool, 1000 + case, &cycles);
    }
}

fn formatted(l: u64, pool: u64, writes: u64) -> (MemStore, HashMap<u64, u64>) {
    let mut g = GatherStore::format(MemStore::new(SECTOR, l + pool), l, PoolSize::Sectors(pool)).unwrap();
    let mut acked = HashMap::new();
    let mut rng = ChaCha8Rng::seed_from_u64(l * 31 + pool);
    for s in 1..=writes {
        let lsec = rng.random_range(0..l);
        g.write_page(lsec, &payload(s)).unwrap();
        acked.insert(lsec, s);
    }
    (g.into_inner(), acked)
}

fn corrupt(store: &mut MemStore, p: u64, byte: usize) {
    let mut b = vec![0u8; SECTOR];
    store.read_page(p, &mut b).unwrap();
    b[byte] ^= 0x40;
    store.write_page(p, &b).unwrap();
}

/// A logical sector whose live copy lies beyond the next write target (in the circular order
/// from f): damage there cannot pass for the torn write in flight. Returns (store, l, T(l)).
fn live_beyond_target(store: MemStore, acked: &HashMap<u64, u64>) -> (MemStore, u64, u64) {
    let (g, _) = GatherStore::recover(store, RecoverMode::Strict).unwrap();
    let (f, c, t) = (g.physical_sectors(), g.last_written(), g.next_target());
    let ahead = |p: u64| (p + f - c) % f;
    let mut ls: Vec<u64> = acked.keys().copied().collect();
    ls.sort();
    let l = ls.into_iter().find(|&l| ahead(g.physical_of(l).unwrap()) > ahead(t)).expect("some live sector beyond");
    let p = g.physical_of(l).unwrap();
    (g.into_inner(), l, p)
}

#[test]
fn a_damaged_live_sector_is_refused_then_salvaged_and_reported() {
    let (store, acked) = formatted(20, 10, 200);
    let (mut store, victim, p) = live_beyond_target(store, &acked);
    corrupt(&mut store, p, 40); // a payload byte of a live sector
    let e = GatherStore::recover(store.clone(), RecoverMode::Strict).err().expect("strict recovery refuses");
    let msg = e.to_string();
    assert!(msg.contains(&format!("sector {p} (bad checksum)")), "{msg}");
    assert!(msg.contains(&format!("without a valid copy: {victim}")) || msg.contains("damaged"), "{msg}");

    let (mut g, report) = GatherStore::recover(store, RecoverMode::Salvage).unwrap();
    assert_eq!(report.damaged.len(), 1);
    assert_eq!(report.damaged[0].physical, p);
    assert_eq!(report.damaged[0].kind, SectorFaultKind::BadChecksum);
    assert_eq!(report.torn, None);
    // The victim either fell back to an older valid copy or, if none survived, was zeroed.
    let mut buf = vec![0u8; SECTOR - 32];
    g.read_page(victim, &mut buf).unwrap();
    if report.missing.contains(&victim) {
        assert_eq!(report.zeroed, report.missing);
        assert!(buf.iter().all(|&b| b == 0));
    } else {
        assert_ne!(buf, payload(acked[&victim]), "the damaged newest copy cannot come back");
    }
    for (&l, &s) in &acked {
        if l != victim {
            g.read_page(l, &mut buf).unwrap();
            assert_eq!(buf, payload(s), "logical {l} untouched by the salvage");
        }
    }
    // Salvage left a clean store, which keeps working: the scrubbed sectors' sequence numbers
    // are never reused, so later recoveries stay clean.
    let scrub_seq = g.sequence();
    let (mut g, again) = GatherStore::recover(g.into_inner(), RecoverMode::Strict).unwrap();
    assert!(again.is_consistent() && again.torn.is_none() && again.live == 20, "{again:?}");
    assert_eq!(again.last_sequence, scrub_seq);
    for i in 0..100 {
        g.write_page(i % 20, &payload(10_000 + i)).unwrap();
    }
    let (_, again) = GatherStore::recover(g.into_inner(), RecoverMode::Strict).unwrap();
    assert!(again.is_consistent() && again.torn.is_none(), "{again:?}");
}

/// The documented limit of the torn-write rule: damage to a live sector that lies exactly where
/// the next write would go (nothing but live sectors between f and it) looks like a torn write.
/// It is still reported — as torn, never silently — and the sector's logical page falls back
/// to its previous copy.
#[test]
fn damage_right_after_the_cursor_is_reported_as_torn() {
    // Find a history in which the sector right after f is live (usually it is free: the sweep
    // meets free sectors ahead of it at a higher density than on average).
    let (mut store, acked, first_after, victim) = (100..400)
        .find_map(|writes| {
            let (store, acked) = formatted(20, 10, writes);
            let (g, _) = GatherStore::recover(store, RecoverMode::Strict).unwrap();
            let first_after = (g.last_written() + 1) % g.physical_sectors();
            let victim = (0..20).find(|&l| g.physical_of(l).unwrap() == first_after)?;
            Some((g.into_inner(), acked, first_after, victim))
        })
        .expect("some history has a live sector right after f");
    corrupt(&mut store, first_after, 40);
    match GatherStore::recover(store, RecoverMode::Strict) {
        Ok((mut r, report)) => {
            assert_eq!(report.torn, Some(first_after), "{report:?}");
            let mut buf = vec![0u8; SECTOR - 32];
            r.read_page(victim, &mut buf).unwrap();
            assert_ne!(buf, payload(acked[&victim]), "an older copy, not the damaged one");
        }
        Err(e) => assert!(e.to_string().contains(&format!("without a valid copy: {victim}")), "{e}"),
    }
}

#[test]
fn corruption_away_from_the_write_cursor_is_damage_not_a_torn_write() {
    let (store, _) = formatted(30, 10, 500);
    let (g, _) = GatherStore::recover(store, RecoverMode::Strict).unwrap();
    let target = g.next_target();
    let mut store = g.into_inner();
    // A free sector that is not the next target: corrupting it loses nothing, but it is not
    // what a crash can do, so it is reported as damage.
    let (g2, _) = GatherStore::recover(store.clone(), RecoverMode::Strict).unwrap();
    let other = (0..40).find(|&p| p != target && (0..30).all(|l| g2.physical_of(l).unwrap() != p)).unwrap();
    corrupt(&mut store, other, 3); // the magic
    let e = GatherStore::recover(store.clone(), RecoverMode::Strict).err().unwrap().to_string();
    assert!(e.contains(&format!("sector {other} (no header (bad magic))")), "{e}");
    // The same corruption at the target is a torn write.
    let (mut clean, _) = formatted(30, 10, 500);
    corrupt(&mut clean, target, 3);
    let (_, report) = GatherStore::recover(clean.clone(), RecoverMode::Strict).unwrap();
    assert_eq!(report.torn, Some(target));
    // Two bad sectors, one at the target: damage.
    corrupt(&mut clean, other, 50);
    assert!(GatherStore::recover(clean, RecoverMode::Strict).is_err());

    // Salvage of the damaged free sector only scrubs it (with a fresh sequence number above
    // every live one); that number must never be reused by later writes.
    let (g, report) = GatherStore::recover(store, RecoverMode::Salvage).unwrap();
    assert_eq!((report.damaged.len(), report.missing.len(), report.zeroed.len()), (1, 0, 0));
    let scrub_seq = g.sequence();
    assert_eq!(scrub_seq, report.last_sequence + 1);
    let (mut g, again) = GatherStore::recover(g.into_inner(), RecoverMode::Strict).unwrap();
    assert_eq!(again.last_sequence, scrub_seq, "the scrubbed free sector's sequence counts");
    assert_eq!(again.free, 1);
    for i in 0..50 {
        g.write_page(i % 30, &payload(20_000 + i)).unwrap();
    }
    let (_, again) = GatherStore::recover(g.into_inner(), RecoverMode::Strict).unwrap();
    assert!(again.is_consistent() && again.torn.is_none(), "{again:?}");
}

#[test]
fn misplaced_and_foreign_headers_are_reported() {
    let (mut store, _) = formatted(10, 6, 30);
    // Copy sector 2 over sector 5: valid checksum, wrong place.
    let mut b = vec![0u8; SECTOR];
    store.read_page(2, &mut b).unwrap();
    store.write_page(5, &b).unwrap();
    let (_, report) = GatherStore::recover(store, RecoverMode::Salvage).unwrap();
    assert!(
        report.damaged.iter().any(|f| f.physical == 5 && matches!(f.kind, SectorFaultKind::Misplaced { recorded: 2 })),
        "{report:?}"
    );
    // A sector of another store's geometry.
    let (mut store, _) = formatted(10, 6, 30);
    let mut other = GatherStore::format(MemStore::new(SECTOR, 40), 20, PoolSize::Sectors(20)).unwrap().into_inner();
    other.read_page(7, &mut b).unwrap();
    store.write_page(7, &b).unwrap();
    let (_, report) = GatherStore::recover(store, RecoverMode::Salvage).unwrap();
    assert!(
        report.damaged.iter().any(|f| f.physical == 7 && matches!(f.kind, SectorFaultKind::ForeignGeometry { .. })),
        "{report:?}"
    );
}

#[test]
fn a_crash_during_format_is_refused() {
    let mut crash = CrashStore::new(MemStore::new(SECTOR, 30), 12, 20);
    assert!(GatherStore::format(ByRef(&mut crash), 20, PoolSize::Sectors(10)).is_err());
    let image = crash.inner;
    let e = GatherStore::recover(image.clone(), RecoverMode::Strict).err().unwrap().to_string();
    assert!(e.contains("recovery refused") && e.contains("bad magic"), "{e}");
    // Salvage gives every logical sector a readable (zero) copy and reports the losses.
    let (mut g, report) = GatherStore::recover(image, RecoverMode::Salvage).unwrap();
    assert_eq!(report.missing, (12..20).collect::<Vec<u64>>());
    assert_eq!(report.zeroed, report.missing);
    let mut buf = vec![1u8; SECTOR - 32];
    for l in 0..20 {
        g.read_page(l, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 0));
    }
}

/// `format` takes its store by value; this lets the test keep the crash store afterwards.
struct ByRef<'a>(&'a mut CrashStore);

impl PageStore for ByRef<'_> {
    fn page_size(&self) -> usize {
        self.0.page_size()
    }
    fn pages(&self) -> u64 {
        self.0.pages()
    }
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        self.0.read_page(page, buf)
    }
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        self.0.write_page(page, buf)
    }
    fn sync(&mut self) -> Result<Nanos, StoreError> {
        self.0.sync()
    }
    fn stats(&self) -> DeviceStats {
        self.0.stats()
    }
    fn label(&self) -> String {
        self.0.label()
    }
}

#[test]
fn recovery_over_a_window_of_a_larger_store() {
    // The layer in sectors 1..13 of a 16-sector store (sector 0 could hold a marker).
    let w = SectorWindow::new(MemStore::new(SECTOR, 16), 1, 13).unwrap();
    let mut g = GatherStore::format(w, 9, PoolSize::Sectors(4)).unwrap();
    g.write_page(4, &payload(1)).unwrap();
    let inner = g.into_inner().into_inner();
    let (mut r, report) = GatherStore::recover(SectorWindow::new(inner, 1, 15).unwrap(), RecoverMode::Strict).unwrap();
    assert_eq!((report.physical_sectors, report.live), (13, 9));
    let mut buf = vec![0u8; SECTOR - 32];
    r.read_page(4, &mut buf).unwrap();
    assert_eq!(buf, payload(1));
}

/// The layer over a real file: written, closed without any shutdown step, reopened and
/// recovered from the headers alone.
#[test]
fn recovery_from_a_real_file() {
    use flashbuf_flash::{FileOptions, FileStore};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gather.db");
    let opts = FileOptions { direct: true, sync_each_write: false };
    let file = FileStore::create(&path, 4096, 300, false, opts).unwrap();
    let mut g = GatherStore::format(file, 200, PoolSize::Percent(50.0)).unwrap();
    assert_eq!(g.page_size(), 4064);
    let mut model = HashMap::new();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut buf = vec![0u8; 4064];
    for i in 0..2000u64 {
        let l = rng.random_range(0..200);
        buf.iter_mut().enumerate().for_each(|(j, b)| *b = (i as usize * 7 + j) as u8);
        g.write_page(l, &buf).unwrap();
        model.insert(l, i);
    }
    g.sync().unwrap();
    drop(g);
    let file = FileStore::open(&path, 4096, opts).unwrap();
    let (mut r, report) = GatherStore::recover(file, RecoverMode::Strict).unwrap();
    assert!(report.is_consistent() && report.torn.is_none(), "{report:?}");
    assert_eq!((report.live, report.last_sequence), (200, 2000));
    for (&l, &i) in &model {
        r.read_page(l, &mut buf).unwrap();
        assert!(buf.iter().enumerate().all(|(j, &b)| b == (i as usize * 7 + j) as u8), "logical {l}");
    }
}
