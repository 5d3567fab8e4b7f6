//! Curves: what a policy does at every buffer size, from one pass over the trace or a sample.
//!
//! * [`LruCurveBuilder`] / [`LruCurve`]: LRU's exact curves of hit ratio, page reads and page
//!   writes at every size from stack distances ([`lru`]), or SHARDS estimates of them.
//! * [`minisim`]: miniature simulation of any policy over any device, from a block-sampled
//!   trace through a buffer and a device scaled by the sampling rate.
//! * [`row`]: a point of a curve as a result row ([`CurveRow`]), with its error against full
//!   simulation and its distance from the offline bounds ([`crate::bound`]).
//! * [`stack`]: the stack-distance structure behind the LRU curves.
//!
//! The proofs (the write-back curve, SHARDS' estimators) are in `docs/curves.md`.

pub mod lru;
pub mod minisim;
pub mod row;
mod slots;
pub mod stack;

pub use lru::{CurveMethod, CurvePoint, LruCurve, LruCurveBuilder};
pub use minisim::{MiniEstimate, MiniPoint, SampleCollector, SampledTrace, minisim};
pub use row::{CurveMeta, CurveRow, ideal_device_stats, mean_errors};
