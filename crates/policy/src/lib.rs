//! Buffer replacement policies for flash-aware database buffer management.
//!
//! Every policy implements [`Replacer`]: it works on dense frame indices, is told the kind of
//! every access (read or write), and may name several victims and ask for block padding in one
//! eviction ([`Evictions`]). Policies are chosen at run time through [`PolicyConfig`]
//! (`name:key=value,...` on the command line) and run monomorphised through
//! [`PolicyConfig::build`], so the per-request path makes no dynamic call.
//!
//! Classic policies: [`lru`], [`clock`], [`lru_k`] (LRU-2), [`two_q`] (2Q), [`arc`] (ARC) and
//! [`min`] (Belady's offline MIN, the hit-ratio bound). Today's baselines from the caching
//! literature: [`lirs`] (LIRS), [`s3fifo`] (S3-FIFO) and [`sieve`] (SIEVE).
//!
//! Flash-aware policies, each faithful to its paper (the file header of each names the paper,
//! the section, and every choice made where the paper is silent):
//! * clean-first, from the AD-LRU paper's comparison: [`cflru`] (CFLRU), [`lru_wsr`] (LRU-WSR),
//!   [`ccf_lru`] (CCF-LRU), [`cflru_c`] (CFLRU/C) and [`ad_lru`] (AD-LRU);
//! * clustered: [`cfdc`] (CFDC: clean queue + priority queue of dirty clusters, Formula 1);
//! * cost-aware: [`casa`] (CASA: clean and dirty lists balanced by the device's read and write
//!   costs, from CFDC's authors) and flashbuf's own [`fbp`] (FBP: the same lists balanced by
//!   what regretted evictions cost on the device, a second chance, write-back by flash block;
//!   device-aware through [`PolicyParams::fill_device`]); and [`fbx`] (FBX: the buffer managed by
//!   whichever expert — AD-LRU, CFDC, BPLRU, FAB, BP-REF or FBP — costs least on the run's device,
//!   measured by miniature simulations of each on a sampled substream, [`shadow`]);
//! * block-level, for log-block FTLs: [`fab`] (FAB), [`bplru`] (BPLRU, with page padding),
//!   [`ref_policy`] (REF) and [`bp_ref`] (BP-REF, REF with selective padding), and
//!   [`ref_adaptive`] (BP-REF tuning its own window, victim blocks and padding threshold, the
//!   REF paper's open item).
//!
//! Building blocks: [`lists::FrameLists`] (index-linked queues) and [`heap::IndexedHeap`]
//! (a priority queue with changeable keys); [`testing`] drives a policy through the contract
//! checks every policy must pass.

#![warn(missing_docs)]

pub mod arc;
pub mod bits;
mod blocks;
pub mod bp_ref;
pub mod bplru;
pub mod casa;
pub mod cfdc;
pub mod clock;
pub mod fab;
pub mod fbp;
pub mod fbx;
pub mod heap;
pub mod lirs;
pub mod lists;
pub mod lru;
pub mod lru_k;
pub mod min;
pub mod min_cost;
pub mod params;
mod recs;
pub mod ref_adaptive;
pub mod ref_policy;
mod registry;
mod replacer;
pub mod s3fifo;
pub mod shadow;
pub mod sieve;
pub mod testing;
pub mod two_q;

// Flash-aware policies of the AD-LRU paper's comparison.
pub mod ad_lru;
pub mod ccf_lru;
pub mod cflru;
pub mod cflru_c;
pub mod lru_wsr;

pub use params::{DeviceProfile, FtlClass, NoParams, ParamDoc, PolicyParams};
pub use registry::{AnyPolicy, POLICIES, PolicyConfig, PolicyError, PolicyVisitor};
pub use replacer::{Access, AccessKind, BlockPad, EvictError, Evictions, FrameId, NEVER, NIL, NoPins, Pins, Replacer};
