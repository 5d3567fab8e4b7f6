//! Bad input and faults: corrupted, misdirected and lost page writes are errors naming the page;
//! a file that is not a flashbuf database, or was created with another page size, is refused
//! with a clear error; a clean shutdown loses nothing (on a real file with direct I/O); a failed
//! write-back stops the buffer manager without a panic.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use common::{TestRng, any};
use flashbuf_engine::TreeError;
use flashbuf_engine::btree::BTree;
use flashbuf_engine::buffer::{BufferError, BufferManager};
use flashbuf_engine::page::{PageFile, PageFileError, create_file, open_file};
use flashbuf_engine::workload::{fill_value, value_version};
use flashbuf_flash::{DeviceStats, FileOptions, FileStore, MemStore, Nanos, PageStore, StoreError};
use flashbuf_policy::AnyPolicy;

const PAGE: usize = 4096;
const VALUE: usize = 256;
/// With 4 KiB pages and 256-byte values a half-full leaf holds 7 records: key k is in leaf
/// page 1 + k / 7.
const PER_LEAF: u32 = 7;

fn direct() -> FileOptions {
    FileOptions { direct: true, sync_each_write: false }
}

/// A database file of `records` bulk-loaded records, closed.
fn make_db(path: &Path, records: u64) {
    let (file, header) = create_file(path, PAGE, 2 * records / PER_LEAF as u64 + 64, false, direct()).unwrap();
    let bm = BufferManager::new(file, header, any("lru", 32), 32).unwrap();
    let tree = BTree::bulk_load(bm, VALUE, records, 0.5, 1.0, |i, v| {
        fill_value(i as u32, 0, v);
        i as u32
    })
    .unwrap();
    tree.close().unwrap();
}

fn open_db(path: &Path, frames: usize) -> BTree<FileStore, AnyPolicy> {
    let (file, header) = open_file(path, PAGE, direct()).unwrap();
    BTree::open(BufferManager::new(file, header, any("lru", frames), frames).unwrap()).unwrap()
}

fn patch(path: &Path, offset: u64, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(bytes).unwrap();
}

fn read_at(path: &Path, offset: u64, len: usize) -> Vec<u8> {
    let mut f = std::fs::File::open(path).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    let mut buf = vec![0u8; len];
    f.read_exact(&mut buf).unwrap();
    buf
}

fn corrupt_page_of(e: &TreeError) -> Option<u64> {
    match e {
        TreeError::Buffer(BufferError::PageFile(PageFileError::Corrupt { page, .. })) => Some(*page),
        _ => None,
    }
}

#[test]
fn a_flipped_byte_on_disk_is_an_error_naming_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    make_db(&path, 2000);
    // Flip one byte in the middle of leaf page 5 (keys 28..35).
    let offset = 5 * PAGE as u64 + 1000;
    let mut b = read_at(&path, offset, 1);
    b[0] ^= 0x40;
    patch(&path, offset, &b);

    let tree = open_db(&path, 16);
    let mut out = vec![0u8; VALUE];
    let e = tree.get(30, &mut out).unwrap_err();
    assert_eq!(corrupt_page_of(&e), Some(5), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("page 5") && msg.contains("checksum mismatch"), "{msg}");
    // The failed load leaves the buffer consistent; other pages still read, and the bad page
    // keeps failing rather than returning data.
    tree.buffer().check_invariants().unwrap();
    assert_eq!(tree.buffer().pinned_frames(), 0);
    assert!(tree.get(100, &mut out).unwrap());
    assert_eq!(value_version(100, &out), Some(0));
    assert!(tree.get(29, &mut out).is_err());
    assert!(tree.scan(0, 100, |_, _| true).is_err(), "a scan over the page fails too");
}

#[test]
fn a_page_written_to_the_wrong_place_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    make_db(&path, 2000);
    // Page 3's bytes land where page 7 belongs (keys 42..49).
    let page3 = read_at(&path, 3 * PAGE as u64, PAGE);
    patch(&path, 7 * PAGE as u64, &page3);
    let tree = open_db(&path, 16);
    let mut out = vec![0u8; VALUE];
    let e = tree.get(45, &mut out).unwrap_err();
    assert_eq!(corrupt_page_of(&e), Some(7), "{e}");
    assert!(e.to_string().contains("holds page 3"), "{e}");
}

#[test]
fn a_lost_write_is_detected_within_a_session() {
    let (file, header) = PageFile::create(MemStore::new(PAGE, 200)).unwrap();
    let bm = BufferManager::new(file, header, any("lru", 8), 8).unwrap();
    let tree = BTree::bulk_load(bm, VALUE, 300, 0.5, 1.0, |i, v| {
        fill_value(i as u32, 0, v);
        i as u32
    })
    .unwrap();
    tree.flush().unwrap();
    let page = 1 + 10 / PER_LEAF as u64;
    let mut old = vec![0u8; PAGE];
    tree.buffer().with_store(|s| s.read_page(page, &mut old)).unwrap();
    let mut value = vec![0u8; VALUE];
    fill_value(10, 1, &mut value);
    assert!(tree.update(10, &value).unwrap());
    tree.flush().unwrap();
    // The device "loses" the write: the old version comes back.
    tree.buffer().with_store(|s| s.write_page(page, &old)).unwrap();
    tree.buffer().evict_all().unwrap();
    let e = tree.get(10, &mut value).unwrap_err();
    assert_eq!(corrupt_page_of(&e), Some(page), "{e}");
    assert!(e.to_string().contains("a write was lost"), "{e}");
}

#[test]
fn clean_shutdown_on_a_real_file_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let records = 3000u64;
    make_db(&path, records);
    let mut model: BTreeMap<u32, u64> = (0..records as u32).map(|k| (k, 0)).collect();
    {
        let tree = open_db(&path, 24);
        let mut rng = TestRng(5);
        let mut value = vec![0u8; VALUE];
        for version in 1..=4000u64 {
            let key = rng.below(records + 500) as u32;
            fill_value(key, version, &mut value);
            if model.contains_key(&key) {
                assert!(tree.update(key, &value).unwrap());
            } else {
                assert!(tree.insert(key, &value).unwrap());
            }
            model.insert(key, version);
        }
        let s = tree.buffer().stats();
        assert!(s.page_writes() > 0 && s.misses > 0);
        tree.close().unwrap();
    }
    let tree = open_db(&path, 8);
    assert_eq!(tree.records(), model.len() as u64);
    tree.check().unwrap();
    let mut got = BTreeMap::new();
    tree.scan(0, usize::MAX, |k, v| {
        got.insert(k, value_version(k, v).expect("well-formed"));
        true
    })
    .unwrap();
    assert!(got == model, "every committed update is on the file after a clean shutdown");
}

/// A memory store shared with the test, so it can be read after the manager is dropped.
#[derive(Clone)]
struct SharedStore(Arc<Mutex<MemStore>>);

impl PageStore for SharedStore {
    fn page_size(&self) -> usize {
        self.0.lock().unwrap().page_size()
    }
    fn pages(&self) -> u64 {
        self.0.lock().unwrap().pages()
    }
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        self.0.lock().unwrap().read_page(page, buf)
    }
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        self.0.lock().unwrap().write_page(page, buf)
    }
    fn sync(&mut self) -> Result<Nanos, StoreError> {
        Ok(0)
    }
    fn stats(&self) -> DeviceStats {
        self.0.lock().unwrap().stats()
    }
    fn label(&self) -> String {
        "shared".into()
    }
}

#[test]
fn dropping_the_tree_without_close_still_writes_everything() {
    let shared = SharedStore(Arc::new(Mutex::new(MemStore::new(512, 200))));
    let (file, header) = PageFile::create(shared.clone()).unwrap();
    let tree = BTree::create(BufferManager::new(file, header, any("lru", 4), 4).unwrap(), 16).unwrap();
    for k in 0..300u32 {
        tree.insert(k, &[k as u8; 16]).unwrap();
    }
    tree.flush().unwrap();
    for k in 0..300u32 {
        tree.update(k, &[!(k as u8); 16]).unwrap();
    }
    for k in 300..400u32 {
        tree.insert(k, &[!(k as u8); 16]).unwrap();
    }
    drop(tree);
    let (file, header) = PageFile::open(shared).unwrap();
    let tree = BTree::open(BufferManager::new(file, header, any("lru", 4), 4).unwrap()).unwrap();
    assert_eq!(tree.records(), 400);
    tree.check().unwrap();
    let mut out = [0u8; 16];
    for k in 0..400u32 {
        assert!(tree.get(k, &mut out).unwrap());
        assert_eq!(out, [!(k as u8); 16], "key {k}");
    }
}

#[test]
fn a_file_that_is_not_a_database_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "dear diary, ".repeat(1000)).unwrap();
    let e = open_file(&path, PAGE, direct()).err().unwrap();
    assert!(matches!(e, PageFileError::NotADatabase { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("not a flashbuf database") && msg.contains("notes.txt"), "{msg}");

    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let e = open_file(&empty, PAGE, direct()).err().unwrap().to_string();
    assert!(e.contains("not a flashbuf database"), "{e}");

    let zeros = dir.path().join("zeros");
    std::fs::write(&zeros, vec![0u8; 3 * PAGE]).unwrap();
    let e = open_file(&zeros, PAGE, direct()).err().unwrap().to_string();
    assert!(e.contains("not a flashbuf database") && e.contains("all zeros"), "{e}");

    let missing = dir.path().join("missing");
    assert!(open_file(&missing, PAGE, direct()).is_err());
}

#[test]
fn a_database_opened_with_another_page_size_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    make_db(&path, 500);
    for other in [2048usize, 8192, 512] {
        let e = open_file(&path, other, direct()).err().unwrap();
        assert!(
            matches!(e, PageFileError::WrongPageSize { file_page_size: 4096, opened_page_size, .. } if opened_page_size == other as u64),
            "{e}"
        );
        assert!(e.to_string().contains("created with 4096-byte pages"), "{e}");
    }
    // And it still opens with the right size.
    open_db(&path, 8).check().unwrap();
}

/// A memory store whose writes fail after a budget.
struct FailingStore {
    inner: MemStore,
    writes_left: u64,
}

impl PageStore for FailingStore {
    fn page_size(&self) -> usize {
        self.inner.page_size()
    }
    fn pages(&self) -> u64 {
        self.inner.pages()
    }
    fn read_page(&mut self, page: u64, buf: &mut [u8]) -> Result<Nanos, StoreError> {
        self.inner.read_page(page, buf)
    }
    fn write_page(&mut self, page: u64, buf: &[u8]) -> Result<Nanos, StoreError> {
        if self.writes_left == 0 {
            return Err(StoreError::Io {
                path: "failing".into(),
                source: std::io::Error::other("injected write error"),
            });
        }
        self.writes_left -= 1;
        self.inner.write_page(page, buf)
    }
    fn sync(&mut self) -> Result<Nanos, StoreError> {
        Ok(0)
    }
    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }
    fn label(&self) -> String {
        "failing".into()
    }
}

#[test]
fn a_failed_write_back_stops_the_manager_without_a_panic() {
    let store = FailingStore { inner: MemStore::new(512, 500), writes_left: 40 };
    let (file, header) = PageFile::create(store).unwrap();
    let bm = BufferManager::new(file, header, any("lru", 6), 6).unwrap();
    let tree = BTree::create(bm, 16).unwrap();
    let mut first = None;
    for k in 0..5000u32 {
        if let Err(e) = tree.insert(k, &[1u8; 16]) {
            first = Some(e);
            break;
        }
    }
    let e = first.expect("writes run out");
    assert!(e.to_string().contains("injected write error"), "{e}");
    let again = tree.get(0, &mut [0u8; 16]).unwrap_err();
    assert!(matches!(again, TreeError::Buffer(BufferError::Failed(_))), "{again}");
    assert!(tree.buffer().flush_all().is_err());
    drop(tree); // no panic, no flush attempt
}
