//! Curves: what a policy does at every buffer size, from one pass over the trace or a sample.
//!
//! * [`LruCurveBuilder`] / [`LruCurve`]: LRU's exact curves of hit ratio, page reads and page
//!   writes at every size from stack distances ([`lru`]), or SHARDS estimates of them.
//! * [`stack`]: the stack-distance structure behind them.
//!
//! The proofs (the write-back curve, SHARDS' estimators) are in `docs/curves.md`.

pub mod lru;
mod slots;
pub mod stack;

pub use lru::{CurveMethod, CurvePoint, LruCurve, LruCurveBuilder};
