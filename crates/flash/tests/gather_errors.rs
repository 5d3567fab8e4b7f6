//! Bad input to the gathering layer and the probe: clear errors, never a panic; and the probe's
//! file-safety rules (creates, marks, refuses foreign files without force, writes only inside).

use flashbuf_flash::gather::probe::{PROBE_MARKER, ProbeConfig, ProbeFileOptions, open_probe_file, probe_store};
use flashbuf_flash::{
    Device, DeviceError, FileOptions, Gather, GatherConfig, GatherStore, IdealConfig, IdealDevice, MemStore, PageStore,
    PoolSize, StoreError,
};

fn ideal(pages: u64) -> IdealDevice {
    IdealDevice::new(IdealConfig { logical_pages: pages, ..Default::default() }).unwrap()
}

fn config_message(e: DeviceError) -> String {
    match e {
        DeviceError::Config(m) => m,
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

#[test]
fn layer_geometry_errors() {
    let e = Gather::new(ideal(100), &GatherConfig::new(50, PoolSize::Sectors(0))).err().unwrap();
    assert!(config_message(e).contains("zero sectors"));
    let e = Gather::new(ideal(100), &GatherConfig::new(90, PoolSize::Percent(20.0))).err().unwrap();
    let m = config_message(e);
    assert!(m.contains("need 108 device pages") && m.contains("has 100"), "{m}");
    let e = Gather::new(ideal(100), &GatherConfig::new(0, PoolSize::Sectors(5))).err().unwrap();
    assert!(config_message(e).contains("at least one sector"));
    let cfg = GatherConfig { logical_sectors: 10, pool: PoolSize::Sectors(5), pages_per_sector: 0 };
    assert!(Gather::new(ideal(100), &cfg).is_err());
    let cfg = GatherConfig { logical_sectors: 10, pool: PoolSize::Sectors(5), pages_per_sector: 8 };
    assert!(Gather::new(ideal(100), &cfg).is_err(), "15 sectors of 8 pages do not fit in 100 pages");
    // A device larger than needed is fine: the layer uses its first sectors.
    let mut g = Gather::new(ideal(1000), &GatherConfig::new(10, PoolSize::Sectors(5))).unwrap();
    assert!(matches!(g.write(10), Err(DeviceError::OutOfRange { page: 10, logical_pages: 10 })));
}

#[test]
fn store_errors() {
    let e = GatherStore::format(MemStore::new(64, 10), 10, PoolSize::Percent(10.0)).err().unwrap().to_string();
    assert!(e.contains("need 11 physical sectors"), "{e}");
    assert!(GatherStore::format(MemStore::new(64, 10), 5, PoolSize::Percent(1.0)).is_err(), "a pool rounding to 0");
    let mut g = GatherStore::format(MemStore::new(64, 10), 5, PoolSize::Sectors(5)).unwrap();
    assert!(matches!(g.write_page(0, &[0u8; 64]), Err(StoreError::BadBuffer { expected: 32, got: 64 })));
    assert!(matches!(g.read_page(5, &mut [0u8; 32]), Err(StoreError::OutOfRange { page: 5, pages: 5 })));
}

fn opts(path: &std::path::Path) -> ProbeFileOptions {
    let mut o = ProbeFileOptions::new(path);
    o.size_bytes = Some(64 * 4096);
    o.file = FileOptions { direct: false, sync_each_write: false };
    o
}

fn io_message(e: StoreError) -> String {
    match e {
        StoreError::Io { .. } => e.to_string(),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn probe_refuses_directories_unwritable_paths_and_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    let m = io_message(open_probe_file(&opts(dir.path())).err().unwrap());
    assert!(m.contains("is a directory"), "{m}");

    let plain = dir.path().join("notes.txt");
    std::fs::write(&plain, b"precious data").unwrap();
    // A path under a regular file cannot be created.
    assert!(open_probe_file(&opts(&plain.join("probe"))).is_err());
    // A file the probe did not create is refused without force, and left alone.
    let m = io_message(open_probe_file(&opts(&plain)).err().unwrap());
    assert!(m.contains("refusing") && m.contains("unless forced"), "{m}");
    assert_eq!(std::fs::read(&plain).unwrap(), b"precious data");
    // With force, a foreign file is never resized: its size must be a whole number of sectors.
    let mut o = opts(&plain);
    o.force = true;
    assert!(open_probe_file(&o).is_err(), "13 bytes, and --size differs");
    o.size_bytes = None;
    assert!(open_probe_file(&o).is_err(), "13 bytes is not a whole number of sectors");
    assert_eq!(std::fs::read(&plain).unwrap(), b"precious data");
    // Bad sizes for a new file.
    let mut o = opts(&dir.path().join("new"));
    o.size_bytes = Some(4096);
    assert!(open_probe_file(&o).is_err(), "needs a marker sector and one to probe");
    o.size_bytes = Some(5000);
    assert!(open_probe_file(&o).is_err());
    o.sector_bytes = 1000;
    assert!(open_probe_file(&o).is_err());
}

#[test]
fn probe_creates_marks_reuses_and_writes_only_inside() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probe.bin");
    let mut pf = open_probe_file(&opts(&path)).unwrap();
    assert!(pf.created);
    assert_eq!(pf.store.pages(), 63, "sector 0 is the marker");
    let cfg = ProbeConfig { distances: vec![0, 1, -1, 7, 1024], random: true, writes: 50, warmup: 5, seed: 9 };
    let rows = probe_store(&mut pf.store, &cfg, &mut |_| {}).unwrap();
    assert_eq!(rows.len(), 6);
    assert!(rows.iter().all(|r| r.writes == 50 && r.mean_ns > 0.0 && r.p99_ns >= r.median_ns));
    assert_eq!(pf.store.stats().host_writes, 6 * 55);
    drop(pf);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), 64 * 4096, "the file keeps its size");
    assert!(bytes.starts_with(PROBE_MARKER), "the marker survives probing");
    // The probe file is recognised and reused without force, and may be resized.
    let mut o = opts(&path);
    o.size_bytes = Some(32 * 4096);
    o.precondition = false;
    let pf = open_probe_file(&o).unwrap();
    assert!(!pf.created);
    assert_eq!((pf.size_bytes, pf.store.pages()), (32 * 4096, 31));
}

#[test]
fn probe_of_a_foreign_file_with_force_overwrites_and_marks_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scratch.img");
    std::fs::write(&path, vec![7u8; 8 * 4096]).unwrap();
    let mut o = opts(&path);
    o.force = true;
    o.size_bytes = None;
    let pf = open_probe_file(&o).unwrap();
    assert!(!pf.created);
    assert_eq!(pf.store.pages(), 7);
    drop(pf);
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(PROBE_MARKER));
    assert!(bytes[4096..].iter().any(|&b| b != 7), "preconditioning wrote the whole file");
}
