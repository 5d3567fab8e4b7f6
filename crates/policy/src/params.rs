//! Policy parameters as given on the command line: `name:key=value,key=value`.

use std::fmt::Write as _;

/// One parameter of a policy, for help texts and error messages.
#[derive(Clone, Copy, Debug)]
pub struct ParamDoc {
    /// The key as written on the command line, e.g. `w`.
    pub key: &'static str,
    /// What it means, with its unit or range.
    pub help: &'static str,
}

/// A policy's parameter set: defaults from the paper, overridable key by key.
pub trait PolicyParams: Clone + Default + PartialEq + std::fmt::Debug {
    /// Every key this policy accepts.
    const KEYS: &'static [ParamDoc];

    /// Sets one parameter, validating the value. The error says what is wrong (the caller adds
    /// the policy name and the list of valid keys).
    fn set(&mut self, key: &str, value: &str) -> Result<(), String>;

    /// Current values, one per key in [`KEYS`](PolicyParams::KEYS) order, formatted so that
    /// `set(key, value)` would reproduce them.
    fn values(&self) -> Vec<String>;

    /// Fills the parameters that describe the device (costs, geometry) and that were left to be
    /// taken from it (`auto`), for a run on the device `d`. The run path calls it before it
    /// builds the policy; parameters given explicitly stay as given. By default does nothing:
    /// only device-aware policies have such parameters.
    fn fill_device(&mut self, d: &DeviceProfile) {
        let _ = d;
    }
}

/// What a device-aware policy may know of the device a run simulates: its page costs and
/// block geometry (the chip's data sheet) and the kind of translation layer, never its state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceProfile {
    /// Page read latency, µs.
    pub read_us: f64,
    /// Page program latency, µs.
    pub program_us: f64,
    /// Block erase latency, µs.
    pub erase_us: f64,
    /// Pages per flash block.
    pub pages_per_block: u32,
    /// The translation layer.
    pub ftl: FtlClass,
    /// Logical pages of the device (its size, fixed for the run, not its state); 0 when unknown.
    pub logical_pages: u64,
}

/// The kinds of translation layer, as far as a buffer policy cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FtlClass {
    /// Fixed read and program latencies, nothing else (no erase, no mapping).
    Ideal,
    /// Page-mapped: any page can go anywhere; erases and copies come from garbage collection.
    PageMapped,
    /// Block-mapped without log blocks: rewriting a page rewrites its block.
    BlockMapped,
    /// Log blocks each dedicated to one data block (BAST): a write to a block without a log
    /// block merges one; a whole block written in order is switched in without copies.
    LogBlock,
    /// Log blocks shared by all data blocks (FAST): a log block's pages of one data block are
    /// merged together when the log block is reclaimed, so pages of a block written apart
    /// share one merge.
    SharedLog,
}

impl DeviceProfile {
    /// The MICRON chip of the AD-LRU paper (Table 2) behind a page-mapped FTL: flashbuf's
    /// default device, and what a device-aware policy assumes when no run path told it more.
    pub const MICRON_PAGE: DeviceProfile = DeviceProfile {
        read_us: 25.0,
        program_us: 220.0,
        erase_us: 1500.0,
        pages_per_block: 64,
        ftl: FtlClass::PageMapped,
        logical_pages: 0,
    };
}

/// The parameter set of a policy without parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NoParams;

impl PolicyParams for NoParams {
    const KEYS: &'static [ParamDoc] = &[];

    fn set(&mut self, key: &str, _value: &str) -> Result<(), String> {
        Err(format!("unknown parameter '{key}'"))
    }

    fn values(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Parses a fraction in `[lo, hi]` (e.g. a window size `0..=1`).
pub fn parse_fraction(key: &str, value: &str, lo: f64, hi: f64) -> Result<f64, String> {
    let v: f64 = value.trim().parse().map_err(|_| format!("{key}={value}: not a number"))?;
    if !(lo..=hi).contains(&v) || v.is_nan() {
        return Err(format!("{key}={value}: must be between {lo} and {hi}"));
    }
    Ok(v)
}

/// Parses an integer in `[lo, hi]`.
pub fn parse_int(key: &str, value: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let v: u64 = value.trim().parse().map_err(|_| format!("{key}={value}: not a whole number"))?;
    if !(lo..=hi).contains(&v) {
        return Err(format!("{key}={value}: must be between {lo} and {hi}"));
    }
    Ok(v)
}

/// Formats a float parameter without trailing noise (`0.5`, `0.25`, `64`).
pub fn fmt_float(v: f64) -> String {
    let mut s = format!("{v}");
    if s.contains('e') {
        s.clear();
        let _ = write!(s, "{v:.6}");
    }
    s
}

/// Describes keys for messages: `w (clean-first window ...), x (...)`, or `none`.
pub fn describe_keys(keys: &[ParamDoc]) -> String {
    if keys.is_empty() {
        return "none".to_string();
    }
    keys.iter().map(|k| format!("{} ({})", k.key, k.help)).collect::<Vec<_>>().join(", ")
}
