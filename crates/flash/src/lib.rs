//! Simulated storage devices for flashbuf.
//!
//! Every device implements [`Device`]: it is told logical pages and answers with the simulated
//! time the operation took, keeping its own counters ([`DeviceStats`]). Policies never see
//! devices and devices never see policies; the simulator and the engine's buffer manager are
//! the only places where the two meet.
//!
//! * [`IdealDevice`] — fixed read and write latencies per page, no erase, no translation.

#![warn(missing_docs)]

mod device;
mod ideal;

pub use device::{Device, DeviceError, DeviceStats, Nanos};
pub use ideal::{IdealConfig, IdealDevice};
