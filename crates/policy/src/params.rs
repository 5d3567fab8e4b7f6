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

/// The device figures of a device-aware policy (FBP, FBX), each `auto` (`None`: taken from the
/// run's device by [`DeviceParams::fill_device`]) unless given: the keys `read-us`,
/// `program-us`, `erase-us`, `ppb` and `ftl`, parsed and printed alike for every such policy.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DeviceParams {
    /// Page read latency, µs (`auto`: the device's).
    pub read_us: Option<f64>,
    /// Page program latency, µs (`auto`: the device's).
    pub program_us: Option<f64>,
    /// Block erase latency, µs (`auto`: the device's).
    pub erase_us: Option<f64>,
    /// Pages per flash block (`auto`: the device's).
    pub ppb: Option<u32>,
    /// The FTL class (`auto`: the device's).
    pub ftl: Option<FtlClass>,
}

impl DeviceParams {
    /// The keys, in the order [`DeviceParams::values`] gives them.
    pub const KEYS: [ParamDoc; 5] = [
        ParamDoc { key: "read-us", help: "page read latency in µs, default auto (the device's)" },
        ParamDoc { key: "program-us", help: "page program latency in µs, default auto (the device's)" },
        ParamDoc { key: "erase-us", help: "block erase latency in µs, default auto (the device's)" },
        ParamDoc { key: "ppb", help: "pages per flash block, default auto (the device's)" },
        ParamDoc {
            key: "ftl",
            help: "FTL class: ideal, page, block, log (BAST) or shared-log (FAST), default auto (the device's)",
        },
    ];

    /// Sets `key` when it is one of [`DeviceParams::KEYS`] (`Ok(true)`), validating the value;
    /// `Ok(false)` for any other key.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        match key {
            "read-us" => {
                self.read_us = auto(key, value, |k, v| parse_fraction(k, v, 0.0, 1e9))?;
                if self.read_us == Some(0.0) {
                    return Err("read-us=0: a read must cost something (costs are relative to it)".to_string());
                }
            }
            "program-us" => self.program_us = auto(key, value, |k, v| parse_fraction(k, v, 0.0, 1e9))?,
            "erase-us" => self.erase_us = auto(key, value, |k, v| parse_fraction(k, v, 0.0, 1e9))?,
            "ppb" => self.ppb = auto(key, value, |k, v| parse_int(k, v, 1, 1 << 20).map(|n| n as u32))?,
            "ftl" => {
                self.ftl = auto(key, value, |k, v| match v.trim() {
                    "ideal" => Ok(FtlClass::Ideal),
                    "page" => Ok(FtlClass::PageMapped),
                    "block" => Ok(FtlClass::BlockMapped),
                    "log" => Ok(FtlClass::LogBlock),
                    "shared-log" => Ok(FtlClass::SharedLog),
                    _ => Err(format!("{k}={v}: must be ideal, page, block, log, shared-log or auto")),
                })?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The values, in [`DeviceParams::KEYS`] order (`auto` where not given).
    pub fn values(&self) -> Vec<String> {
        let f = |v: Option<f64>| v.map_or_else(|| "auto".to_string(), fmt_float);
        vec![
            f(self.read_us),
            f(self.program_us),
            f(self.erase_us),
            self.ppb.map_or_else(|| "auto".to_string(), |n| n.to_string()),
            self.ftl.map_or_else(|| "auto".to_string(), |c| c.name().to_string()),
        ]
    }

    /// Takes every figure left `auto` from the run's device `d` ([`PolicyParams::fill_device`]).
    pub fn fill_device(&mut self, d: &DeviceProfile) {
        self.read_us.get_or_insert(d.read_us);
        self.program_us.get_or_insert(d.program_us);
        self.erase_us.get_or_insert(d.erase_us);
        self.ppb.get_or_insert(d.pages_per_block);
        self.ftl.get_or_insert(d.ftl);
    }

    /// The device figures in force: the given ones, the rest from MICRON behind a page-mapped
    /// FTL ([`DeviceProfile::MICRON_PAGE`], flashbuf's default device); size unknown.
    pub fn profile(&self) -> DeviceProfile {
        let d = DeviceProfile::MICRON_PAGE;
        DeviceProfile {
            read_us: self.read_us.unwrap_or(d.read_us),
            program_us: self.program_us.unwrap_or(d.program_us),
            erase_us: self.erase_us.unwrap_or(d.erase_us),
            pages_per_block: self.ppb.unwrap_or(d.pages_per_block),
            ftl: self.ftl.unwrap_or(d.ftl),
            logical_pages: 0,
        }
    }
}

impl FtlClass {
    /// The class's name as the `ftl` parameter writes it.
    pub fn name(self) -> &'static str {
        match self {
            FtlClass::Ideal => "ideal",
            FtlClass::PageMapped => "page",
            FtlClass::BlockMapped => "block",
            FtlClass::LogBlock => "log",
            FtlClass::SharedLog => "shared-log",
        }
    }
}

/// `None` for `auto`, else the value parsed.
pub fn auto<T>(key: &str, value: &str, parse: impl Fn(&str, &str) -> Result<T, String>) -> Result<Option<T>, String> {
    if value.trim() == "auto" { Ok(None) } else { parse(key, value).map(Some) }
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
