//! The trace-driven simulator of flashbuf: a buffer of N frames, a replacement policy and a
//! device, fed by a trace.
//!
//! * [`Buffer`] — the per-request loop and its counters (metric definitions are documented
//!   there, once).
//! * [`run()`] — one run of a trace through a policy configuration over a device, producing a
//!   [`RunOutput`]; [`ResultRow`] flattens it for tables, CSV and JSON.
//! * [`RunSpec`] and [`execute`] — a run described by value (trace, policy, buffer, device),
//!   the unit of the CLI, sweeps and reproductions; [`execute_group`] runs many of them over
//!   one decoding of their trace ([`group`]), each fed batch by batch ([`step`]).
//! * [`sweep`] — parameter sweeps: TOML configurations, the cross product of traces, policies,
//!   buffer sizes and devices, run in parallel with results streamed to CSV and JSON Lines.
//! * [`plan`] — the runs of `flashbuf run`: traces × devices × policies × buffer sizes, with its
//!   checks; [`custom`] — runs of a policy outside the registry (a policy written in Python);
//!   [`wire`] — runs and rows as JSON, to execute runs elsewhere (the Ray backend).
//! * [`PageTable`] — page number → frame, direct-mapped for dense page ranges.

#![warn(missing_docs)]

pub mod bound;
mod buffer;
pub mod curve;
pub mod custom;
pub mod group;
mod job;
mod page_table;
pub mod plan;
pub mod prepare;
mod run;
pub mod sample;
pub mod step;
pub mod sweep;
pub mod wire;

pub use buffer::{Buffer, Counters, SimError, WriteMiss};
pub use group::{GroupEvent, execute_group, execute_group_with};
pub use job::{JobError, RunSpec, device_profile, execute};
pub use page_table::{DENSE_LIMIT, PageTable};
pub use prepare::{Needs, PreparedTrace, RemapMode, prepare};
pub use run::{BATCH, Period, ResultRow, RunError, RunOptions, RunOutput, next_uses, run};
pub use step::{Stepper, stepper_any};
