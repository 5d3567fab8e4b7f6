//! The list of policies: command-line names, parameters, and dispatch to monomorphised code.
//!
//! To add a policy, write its file (see `docs/adding-a-policy.md`) and add one line to the
//! `registry!` invocation at the bottom of this file.

use std::fmt;
use std::str::FromStr;

use crate::params::{ParamDoc, PolicyParams, describe_keys};
use crate::replacer::Replacer;

/// Receives a concrete policy built from a [`PolicyConfig`], so that the code running it is
/// monomorphised for that policy (no dynamic call per request).
pub trait PolicyVisitor {
    /// What the visit produces.
    type Output;
    /// Called once with the freshly built policy.
    fn visit<R: Replacer>(self, policy: R) -> Self::Output;
}

/// A malformed policy specification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The name is not one of [`POLICIES`].
    #[error("unknown policy '{name}'; valid policies: {valid}")]
    UnknownPolicy {
        /// The name given.
        name: String,
        /// The valid names, comma-separated.
        valid: String,
    },
    /// A parameter is unknown or its value is invalid.
    #[error("policy '{policy}': {message}; valid parameters: {valid}")]
    BadParameter {
        /// The policy concerned.
        policy: String,
        /// What was wrong.
        message: String,
        /// The keys the policy accepts.
        valid: String,
    },
}

macro_rules! registry {
    ($( $variant:ident => $name:literal, $ty:ty, $doc:literal; )*) => {
        /// A replacement policy with its parameters, as named on the command line
        /// (`name` or `name:key=value,key=value`).
        #[derive(Debug, Clone, PartialEq)]
        pub enum PolicyConfig {
            $( #[doc = $doc] $variant(<$ty as Replacer>::Config), )*
        }

        /// Every policy: command-line name and one-line description.
        pub const POLICIES: &[(&str, &str)] = &[ $( ($name, $doc), )* ];

        impl PolicyConfig {
            /// The policy with its paper's default parameters.
            pub fn with_defaults(name: &str) -> Option<Self> {
                match name {
                    $( $name => Some(PolicyConfig::$variant(Default::default())), )*
                    _ => None,
                }
            }

            /// The command-line name, e.g. `cflru`.
            pub fn name(&self) -> &'static str {
                match self { $( PolicyConfig::$variant(_) => $name, )* }
            }

            /// The parameters this policy accepts.
            pub fn keys(&self) -> &'static [ParamDoc] {
                match self { $( PolicyConfig::$variant(_) => <<$ty as Replacer>::Config as PolicyParams>::KEYS, )* }
            }

            fn values(&self) -> Vec<String> {
                match self { $( PolicyConfig::$variant(c) => c.values(), )* }
            }

            /// Sets one parameter.
            pub fn set(&mut self, key: &str, value: &str) -> Result<(), PolicyError> {
                let r = match self { $( PolicyConfig::$variant(c) => c.set(key, value), )* };
                r.map_err(|message| PolicyError::BadParameter {
                    policy: self.name().to_string(),
                    message,
                    valid: describe_keys(self.keys()),
                })
            }

            /// This configuration with its device parameters left to the device (`auto`) filled
            /// from `d` ([`PolicyParams::fill_device`]); unchanged for policies without such
            /// parameters.
            pub fn for_device(&self, d: &crate::params::DeviceProfile) -> Self {
                let mut c = self.clone();
                match &mut c { $( PolicyConfig::$variant(p) => p.fill_device(d), )* }
                c
            }

            /// Builds the policy for `capacity` frames and hands it to `visitor`.
            pub fn build<V: PolicyVisitor>(&self, capacity: usize, visitor: V) -> V::Output {
                match self {
                    $( PolicyConfig::$variant(c) => visitor.visit(<$ty as Replacer>::new(capacity, c)), )*
                }
            }
        }

        /// Any policy, dispatched by `match` (for callers that need one concrete type, like the
        /// engine's buffer manager). The simulator uses [`PolicyConfig::build`] instead.
        #[allow(clippy::large_enum_variant)]
        pub enum AnyPolicy {
            $( #[doc = $doc] $variant($ty), )*
        }

        impl AnyPolicy {
            /// Builds the policy described by `config` for `capacity` frames.
            pub fn new(capacity: usize, config: &PolicyConfig) -> Self {
                match config {
                    $( PolicyConfig::$variant(c) => AnyPolicy::$variant(<$ty as Replacer>::new(capacity, c)), )*
                }
            }

            /// Called on a hit; see [`Replacer::on_hit`].
            pub fn on_hit(&mut self, frame: crate::FrameId, access: &crate::Access) {
                match self { $( AnyPolicy::$variant(p) => p.on_hit(frame, access), )* }
            }

            /// Called after a miss filled `frame`; see [`Replacer::on_insert`].
            pub fn on_insert(&mut self, frame: crate::FrameId, access: &crate::Access) {
                match self { $( AnyPolicy::$variant(p) => p.on_insert(frame, access), )* }
            }

            /// Chooses victims; see [`Replacer::victims`].
            pub fn victims<P: crate::Pins + ?Sized>(&mut self, incoming: &crate::Access, pins: &P, out: &mut crate::Evictions) -> Result<(), crate::EvictError> {
                match self { $( AnyPolicy::$variant(p) => p.victims(incoming, pins, out), )* }
            }

            /// Stops tracking a frame; see [`Replacer::remove`].
            pub fn remove(&mut self, frame: crate::FrameId) {
                match self { $( AnyPolicy::$variant(p) => p.remove(frame), )* }
            }

            /// Frames tracked; see [`Replacer::len`].
            pub fn len(&self) -> usize {
                match self { $( AnyPolicy::$variant(p) => p.len(), )* }
            }

            /// `true` when no frame is tracked.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Whether the policy needs [`crate::Access::next_use`].
            pub fn needs_future(&self) -> bool {
                match self { $( AnyPolicy::$variant(_) => <$ty as Replacer>::NEEDS_FUTURE, )* }
            }

            /// The policy's dirty bit for `frame`, if it keeps one.
            pub fn is_dirty(&self, frame: crate::FrameId) -> Option<bool> {
                match self { $( AnyPolicy::$variant(p) => p.is_dirty(frame), )* }
            }

            /// See [`Replacer::check_invariants`].
            pub fn check_invariants(&self) -> Result<(), String> {
                match self { $( AnyPolicy::$variant(p) => p.check_invariants(), )* }
            }
        }
    };
}

impl PolicyConfig {
    /// The canonical label used in result rows: the name followed by every parameter, e.g.
    /// `cflru:w=0.5`. Parsing the label gives back the same configuration.
    pub fn label(&self) -> String {
        let keys = self.keys();
        if keys.is_empty() {
            return self.name().to_string();
        }
        let values = self.values();
        let params: Vec<String> = keys.iter().zip(values).map(|(k, v)| format!("{}={}", k.key, v)).collect();
        format!("{}:{}", self.name(), params.join(","))
    }

    /// Pages of the spatial unit the policy reasons about — a flash block (FAB, BPLRU, REF,
    /// BP-REF: parameter `ppb`) or a cluster (CFDC: `cluster`) — if it has one. Address
    /// remapping keeps such units whole (see `flashbuf_trace::remap`).
    pub fn block_pages(&self) -> Option<u64> {
        let values = self.values();
        self.keys()
            .iter()
            .zip(values)
            .find(|(k, _)| matches!(k.key, "ppb" | "cluster"))
            .and_then(|(_, v)| v.parse().ok())
    }

    /// An upper estimate of a simulated run's memory per frame of this policy, in bytes: the
    /// policy's per-frame arrays, queues and ghost directories plus the simulator's own
    /// per-frame state, measured (peak resident memory over 2 million full frames, rounded up by
    /// a quarter), and the history some policies keep as a multiple of the buffer (LRU-2's
    /// `history`: a map entry and a queue slot per remembered page). Used to refuse a run that
    /// cannot fit in memory before it starts.
    pub fn bytes_per_frame(&self) -> u64 {
        let measured: u64 = match self.name() {
            "lru" | "clock" | "cflru" | "lru-wsr" | "ccf-lru" | "cflru-c" | "ad-lru" | "sieve" | "casa" => 72,
            "2q" | "min" => 112,
            "s3fifo" => 136,
            "fab" | "bplru" | "ref" | "bp-ref" | "ref-adaptive" => 176,
            "lru-2" | "arc" => 200,
            _ => 320,
        };
        let values = self.values();
        let history = self
            .keys()
            .iter()
            .zip(values)
            .find(|(k, _)| k.key == "history")
            .and_then(|(_, v)| v.parse::<f64>().ok())
            .unwrap_or(0.0);
        measured + (history * 80.0).ceil() as u64
    }

    /// Every valid name, comma-separated.
    pub fn valid_names() -> String {
        POLICIES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_pages_of_block_and_cluster_policies() {
        let b = |s: &str| s.parse::<PolicyConfig>().unwrap().block_pages();
        assert_eq!(b("lru"), None);
        assert_eq!(b("fab"), Some(64));
        assert_eq!(b("bplru:ppb=4"), Some(4));
        assert_eq!(b("ref:ppb=16"), Some(16));
        assert_eq!(b("bp-ref"), Some(64));
        assert_eq!(b("cfdc:cluster=32"), Some(32));
    }
}

impl fmt::Display for PolicyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl FromStr for PolicyConfig {
    type Err = PolicyError;

    /// Parses `name` or `name:key=value,key=value`.
    fn from_str(spec: &str) -> Result<Self, PolicyError> {
        let spec = spec.trim();
        let (name, params) = match spec.split_once(':') {
            Some((n, p)) => (n.trim(), Some(p)),
            None => (spec, None),
        };
        let lower = name.to_ascii_lowercase();
        let mut config = PolicyConfig::with_defaults(&lower)
            .ok_or_else(|| PolicyError::UnknownPolicy { name: name.to_string(), valid: PolicyConfig::valid_names() })?;
        if let Some(params) = params {
            for item in params.split(',').filter(|s| !s.trim().is_empty()) {
                let Some((key, value)) = item.split_once('=') else {
                    return Err(PolicyError::BadParameter {
                        policy: config.name().to_string(),
                        message: format!("'{}' is not of the form key=value", item.trim()),
                        valid: describe_keys(config.keys()),
                    });
                };
                config.set(key.trim(), value.trim())?;
            }
        }
        Ok(config)
    }
}

registry! {
    Lru => "lru", crate::lru::Lru, "LRU: evict the least recently used page";
    Clock => "clock", crate::clock::Clock, "CLOCK: second chance with a reference bit (Corbató 1969)";
    Lru2 => "lru-2", crate::lru_k::Lru2, "LRU-2: LRU-K with K = 2 (O'Neil, O'Neil, Weikum 1993)";
    TwoQ => "2q", crate::two_q::TwoQ, "2Q: A1in FIFO, A1out ghost queue, Am LRU (Johnson & Shasha 1994)";
    Arc => "arc", crate::arc::Arc, "ARC: adaptive replacement cache (Megiddo & Modha 2003)";
    Min => "min", crate::min::Min, "MIN: Belady's offline optimum for hit ratio (needs the future)";
    MinCost => "min-cost", crate::min_cost::MinCost, "MIN-COST: offline, evicts the page cheapest per unit of time it would hold (reads and writes priced; needs the future)";
    Cflru => "cflru", crate::cflru::Cflru, "CFLRU: clean pages first inside a window at the LRU end (Park et al. 2006)";
    LruWsr => "lru-wsr", crate::lru_wsr::LruWsr, "LRU-WSR: LRU with a second chance for hot dirty pages (Jung et al. 2008)";
    CcfLru => "ccf-lru", crate::ccf_lru::CcfLru, "CCF-LRU: cold clean pages first, then LRU-WSR on a mixed queue (Li et al. 2009)";
    CflruC => "cflru-c", crate::cflru_c::CflruC, "CFLRU/C: CFLRU, else the window's dirty page with the fewest writes (Yoo et al. 2007)";
    AdLru => "ad-lru", crate::ad_lru::AdLru, "AD-LRU: adaptive cold and hot LRU queues, clean first, second chance (Jin et al.)";
    Cfdc => "cfdc", crate::cfdc::Cfdc, "CFDC: clean-first, dirty-clustered two-region policy (Ou, Härder, Jin 2009)";
    Fab => "fab", crate::fab::Fab, "FAB: evict the block with the most buffered pages (Jo et al. 2006)";
    Bplru => "bplru", crate::bplru::Bplru, "BPLRU: block-level LRU with page padding and LRU compensation (Kim & Ahn 2008)";
    Ref => "ref", crate::ref_policy::Ref, "REF: recently-evicted-first, victim pages from victim blocks (Seo & Shin 2008)";
    BpRef => "bp-ref", crate::bp_ref::BpRef, "BP-REF: REF with selective block padding (Seo & Shin 2008)";
    RefAdaptive => "ref-adaptive", crate::ref_adaptive::RefAdaptive, "REF-ADAPTIVE: BP-REF whose window, victim blocks and padding threshold are hill-climbed on the flash cost they cause (Seo & Shin 2008, §VI)";
    Casa => "casa", crate::casa::Casa, "CASA: clean and dirty LRU lists sized by read/write costs and hits (Ou & Härder 2010)";
    Lirs => "lirs", crate::lirs::Lirs, "LIRS: low inter-reference recency set, LIRS stack and HIR queue (Jiang & Zhang 2002)";
    S3Fifo => "s3fifo", crate::s3fifo::S3Fifo, "S3-FIFO: small, main and ghost FIFO queues (Yang et al. 2023)";
    Sieve => "sieve", crate::sieve::Sieve, "SIEVE: a FIFO queue sifted by a hand over visited bits (Zhang et al. 2024)";
    Fbp => "fbp", crate::fbp::Fbp, "FBP: flashbuf's policy: clean and dirty lists balanced by the device cost of regretted evictions, second chance, write-back by flash block";
    Fbx => "fbx", crate::fbx::Fbx, "FBX: flashbuf's policy: the expert (AD-LRU, CFDC, BPLRU, FAB, BP-REF, FBP) whose miniature simulation on a block-sampled substream costs least device time manages the buffer";
}
