//! Simulated storage devices for flashbuf.
//!
//! Every device implements [`Device`]: it is told logical pages and answers with the simulated
//! time the operation took, keeping its own counters ([`DeviceStats`]). Policies never see
//! devices and devices never see policies; the simulator and the engine's buffer manager are
//! the only places where the two meet.
//!
//! * [`IdealDevice`] — fixed read and write latencies per page, no erase, no translation.
//! * [`nand::Nand`] — a NAND chip that enforces the rules of flash (in-order programming, erase
//!   before rewrite, endurance) and counts every read, program and erase.
//! * Flash translation layers on top of it ([`ftl`]): [`PageFtl`] (page-mapped, garbage
//!   collection, wear levelling), [`BlockFtl`] (block-mapped), [`BastFtl`] (1:1 log blocks) and
//!   [`FastFtl`] (1:N log blocks with a sequential log).
//! * [`DeviceConfig`] builds any of them by name, sized and preconditioned, as an [`AnyDevice`].
//! * [`PageStore`] — devices that keep data, for the engine and the gathering layer:
//!   [`MemStore`], [`SimStore`] (data in memory, costs from any simulated device) and
//!   [`FileStore`] (a real file with direct I/O where available).
//! * [`analytic`] — Lambert W and Desnoyers' write amplification model, against which the
//!   page-mapped FTL is tested.
//!
//! The crate's `README.md` explains the translation layers and their merges with diagrams.
//!
//! ```
//! use flashbuf_flash::{Device, DeviceConfig, DeviceKind};
//!
//! let cfg = DeviceConfig { kind: DeviceKind::Bast, ..Default::default() };
//! assert_eq!(cfg.label(), "bast/micron/log8");
//! let mut dev = cfg.build(1 << 16)?; // sized, filled sequentially, counters zeroed
//! let t_ns = dev.write(42)?; // goes to a log block: one program, 220 µs on the MICRON chip
//! assert_eq!(t_ns, 220_000);
//! assert_eq!(dev.stats().host_writes, 1);
//! # Ok::<(), flashbuf_flash::DeviceError>(())
//! ```

#![warn(missing_docs)]

pub mod analytic;
mod config;
mod device;
pub mod ftl;
pub mod gather;
mod ideal;
pub mod nand;
mod store;

pub use config::{AnyDevice, DeviceConfig, DeviceKind, Precondition, precondition};
pub use device::{Device, DeviceError, DeviceStats, Nanos, thread_cpu_s};
pub use ftl::bast::{BastFtl, BastFtlConfig};
pub use ftl::block::{BlockFtl, BlockFtlConfig};
pub use ftl::fast::{FastFtl, FastFtlConfig};
pub use ftl::page::{GcPolicy, PageFtl, PageFtlConfig};
pub use gather::{Gather, GatherConfig, GatherStats, GatherStore, PoolSize, RecoverMode, RecoveryReport};
pub use ideal::{IdealConfig, IdealDevice};
pub use nand::{NandConfig, NandGeometry, NandPreset, NandTiming, PageTag};
pub use store::{FileOptions, FileStore, MemStore, PageStore, SimStore, StoreError};
