//! The flashbuf storage engine: the bottom layers of a database system, built to measure
//! buffer replacement policies where the CFDC and AD-LRU papers measured them — inside an
//! engine running transactions over flash.
//!
//! * [`page`] — the page file: fixed-size pages with a CRC32C-checksummed header (page number,
//!   version) on any [`PageStore`](flashbuf_flash::PageStore): memory, simulated flash
//!   ([`SimStore`](flashbuf_flash::SimStore) over any FTL) or a real file with direct I/O.
//! * [`buffer`] — the buffer manager: frames, page table, pins and latches through RAII
//!   guards, operations ([`Op`]: atomic sets of page changes), write-back, statistics,
//!   page-reference trace recording, and *the simulator's own* replacement policies through
//!   the [`Replacer`](flashbuf_policy::Replacer) contract (multi-page evictions, block padding
//!   and bypass included). Thread-safe; the latching protocol is documented there.
//! * [`wal`] — the write-ahead log: checksummed groups in a ring at the end of the store,
//!   checkpoint anchors, redo recovery. With a log an operation is acknowledged — durable —
//!   once its commit is; a power cut loses nothing acknowledged and leaves nothing half done
//!   (`docs/engine.md` draws the records and states the invariants).
//! * [`btree`] — a B+-tree of `u32` keys and fixed-size values on the buffer manager: lookup,
//!   insert with splits, update in place, range scans and range updates, and a bulk loader;
//!   every change is one operation.
//! * [`workload`] — the CFDC paper's transaction workload (§4.2: point and range queries and
//!   updates over one million records, 80–20 self-similar keys) and its measurements
//!   (transactions per second, page flushes, cost per flush, and the log's writes apart), as a
//!   library function returning a serialisable [`WorkloadResult`]; [`store`] builds the store
//!   a run uses.
//! * [`fault`] — a fault-injecting page store for crash tests: durable and volatile images,
//!   seeded power cuts that lose unsynced writes and tear the write in flight.
//!
//! ```
//! use flashbuf_engine::btree::BTree;
//! use flashbuf_engine::buffer::BufferManager;
//! use flashbuf_engine::page::PageFile;
//! use flashbuf_flash::MemStore;
//! use flashbuf_policy::{AnyPolicy, PolicyConfig};
//!
//! let (file, header) = PageFile::create(MemStore::new(4096, 1000))?;
//! let policy = AnyPolicy::new(16, &"cflru:w=0.5".parse::<PolicyConfig>()?);
//! let bm = BufferManager::new(file, header, policy, 16)?;
//! let tree = BTree::create(bm, 8)?;
//! tree.insert(7, b"seven...")?;
//! let mut value = [0u8; 8];
//! assert!(tree.get(7, &mut value)?);
//! assert_eq!(&value, b"seven...");
//! let (file, _header) = tree.close()?; // a clean shutdown: everything is on the store
//! # let _ = file;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod btree;
pub mod buffer;
pub mod fault;
pub mod page;
pub mod store;
pub mod wal;
pub mod workload;

pub use btree::{BTree, TreeError};
pub use buffer::{BufferError, BufferManager, BufferPolicy, BufferStats, Mono, Op, PageMut, PageRef};
pub use page::{PageFile, PageFileError};
pub use store::{AnyStore, StoreSpec};
pub use workload::{CfdcPoint, WorkloadConfig, WorkloadError, WorkloadResult, run_cfdc, run_workload};
