//! Seeded synthetic workloads: uniform, Zipf (the AD-LRU paper's formula), self-similar (Gray et
//! al.) and the AD-LRU scan mix, plus [`GenSpec`], their command-line description with named
//! presets for the papers' traces.
//!
//! Every generator is a streaming [`TraceSource`] in constant memory, and is portable: the same
//! spec gives the same trace on every machine (ChaCha8 bit stream, integer-only uniform draws,
//! `libm` for transcendental functions; see [`crate::rng`]). Generated requests carry no
//! timestamp.
//!
//! # Spec syntax
//!
//! `kind,key=value,...`, kind first. Kinds and their keys, with their defaults:
//!
//! | kind | keys |
//! | --- | --- |
//! | `uniform` | `requests` = 100000, `pages` = 50000, `write-ratio` = 0.5, `seed` = 42 |
//! | `zipf` | the above + `locality` = 80-20, `scatter` = false, `alpha` (unset) |
//! | `self-similar` | the above + `locality` = 80-20, `scatter` = false |
//! | `scan-mix` | `requests` = 100000, `pages` = 40000, `write-ratio` = 0.5, `locality` = 80-20, `scans` = 50, `scan-length` = 1000, `scan-pages` = 10000, `scan-writes` = false, `seed` = 42 |
//!
//! Counts accept `_` separators and the decimal suffixes `k`, `m`, `g` (`10m` = 10,000,000).
//! `locality` is `a-b` in percent with a + b = 100 and 0 < b < a. `scatter=true` maps the i-th
//! hottest page to a seeded pseudo-random page instead of page i − 1. `alpha` (zipf only) sets
//! the exponent of P(i) ∝ i^−alpha directly, replacing the one derived from `locality`
//! (α = 1 − log a / log b); it is omitted from labels when unset. `_` and `-` are
//! interchangeable in key names.
//!
//! The draws of a request are its page first, then its kind (`unit < write-ratio` → write), so
//! two specs that differ only in the write ratio reference the same pages in the same order;
//! the presets `adlru-random`, `adlru-read-most` and `adlru-write-most` share the default seed
//! and therefore differ only in which requests are writes (a controlled comparison; pass a
//! `seed` to decouple them).
//!
//! A preset name may stand in place of the kind, and its keys can be overridden
//! (`adlru-zipf,seed=7`); see [`PRESETS`]. The default scan length of `scan-mix` (1,000) is our
//! choice: the paper varies it (Fig. 12) without listing the values in its text.

mod scan;
mod selfsim;
pub mod table;
mod uniform;
mod zipf;

pub use scan::{ScanMixParams, ScanMixTrace};
pub use selfsim::SelfSimilarTrace;
pub use uniform::UniformTrace;
pub use zipf::{ZipfSampler, ZipfTrace};

use std::fmt;
use std::str::FromStr;

use crate::{TraceError, TraceSource};

/// The default seed of every generator.
pub const DEFAULT_SEED: u64 = 42;

pub(crate) fn check_pages(what: &str, pages: u64) -> Result<(), TraceError> {
    if pages == 0 {
        return Err(TraceError::Invalid(format!("{what}: pages must be at least 1")));
    }
    Ok(())
}

pub(crate) fn check_write_ratio(r: f64) -> Result<(), TraceError> {
    if !(0.0..=1.0).contains(&r) {
        return Err(TraceError::Invalid(format!("write-ratio must be between 0 and 1, got {r}")));
    }
    Ok(())
}

/// An "a–b" reference locality: a percent of the references go to the hottest b percent of the
/// pages (80–20). Stored in percent; a + b = 100 and 0 < b < a.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Locality {
    a_percent: f64,
    b_percent: f64,
}

impl Locality {
    /// `a`–`b` in percent. Errors unless both are finite, a + b = 100 (within 1e-9) and 0 < b < a.
    pub fn new(a_percent: f64, b_percent: f64) -> Result<Self, TraceError> {
        if !(a_percent.is_finite() && b_percent.is_finite()) || (a_percent + b_percent - 100.0).abs() > 1e-9 {
            return Err(TraceError::Invalid(format!(
                "locality {a_percent}-{b_percent}: the two parts must add up to 100 (e.g. 80-20)"
            )));
        }
        if !(0.0 < b_percent && b_percent < a_percent) {
            return Err(TraceError::Invalid(format!(
                "locality {a_percent}-{b_percent}: need 0 < b < a (e.g. 80-20; 50-50 would be uniform)"
            )));
        }
        Ok(Locality { a_percent, b_percent })
    }

    /// The paper's 80–20.
    pub fn eighty_twenty() -> Self {
        Locality { a_percent: 80.0, b_percent: 20.0 }
    }

    /// a as a fraction (0.8 for 80–20).
    pub fn a(self) -> f64 {
        self.a_percent / 100.0
    }

    /// b as a fraction (0.2 for 80–20); also the self-similar skew h.
    pub fn b(self) -> f64 {
        self.b_percent / 100.0
    }

    /// θ = log a / log b of the AD-LRU paper's formula (1).
    pub fn theta(self) -> f64 {
        libm::log(self.a()) / libm::log(self.b())
    }
}

impl Default for Locality {
    fn default() -> Self {
        Locality::eighty_twenty()
    }
}

impl fmt::Display for Locality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.a_percent, self.b_percent)
    }
}

impl FromStr for Locality {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Self, TraceError> {
        let bad = || TraceError::Invalid(format!("locality '{s}': expected a-b in percent, e.g. 80-20"));
        let (a, b) = s.split_once(['-', '–', '/', ':']).ok_or_else(bad)?;
        let a: f64 = a.trim().parse().map_err(|_| bad())?;
        let b: f64 = b.trim().parse().map_err(|_| bad())?;
        Locality::new(a, b)
    }
}

/// The generator families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenKind {
    /// [`UniformTrace`].
    Uniform,
    /// [`ZipfTrace`].
    Zipf,
    /// [`SelfSimilarTrace`].
    SelfSimilar,
    /// [`ScanMixTrace`].
    ScanMix,
}

impl GenKind {
    /// All kinds.
    pub const ALL: [GenKind; 4] = [GenKind::Uniform, GenKind::Zipf, GenKind::SelfSimilar, GenKind::ScanMix];

    /// The spec name.
    pub fn name(self) -> &'static str {
        match self {
            GenKind::Uniform => "uniform",
            GenKind::Zipf => "zipf",
            GenKind::SelfSimilar => "self-similar",
            GenKind::ScanMix => "scan-mix",
        }
    }

    /// The keys this kind accepts, in canonical order.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            GenKind::Uniform => &["requests", "pages", "write-ratio", "seed"],
            GenKind::Zipf => &["requests", "pages", "write-ratio", "locality", "alpha", "scatter", "seed"],
            GenKind::SelfSimilar => &["requests", "pages", "write-ratio", "locality", "scatter", "seed"],
            GenKind::ScanMix => &[
                "requests",
                "pages",
                "write-ratio",
                "locality",
                "scans",
                "scan-length",
                "scan-pages",
                "scan-writes",
                "seed",
            ],
        }
    }

    fn from_name(s: &str) -> Option<GenKind> {
        match s {
            "uniform" | "random" => Some(GenKind::Uniform),
            "zipf" => Some(GenKind::Zipf),
            "self-similar" | "selfsimilar" | "selfsim" | "self_similar" => Some(GenKind::SelfSimilar),
            "scan-mix" | "scan_mix" | "scanmix" | "scan" => Some(GenKind::ScanMix),
            _ => None,
        }
    }
}

impl fmt::Display for GenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A named preset: a paper's trace.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The name used in place of a kind.
    pub name: &'static str,
    /// Where the trace comes from.
    pub description: &'static str,
    /// Builds the preset's spec.
    pub spec: fn() -> GenSpec,
}

fn base(kind: GenKind) -> GenSpec {
    GenSpec {
        kind,
        preset: None,
        requests: 100_000,
        pages: if kind == GenKind::ScanMix { 40_000 } else { 50_000 },
        write_ratio: 0.5,
        locality: Locality::eighty_twenty(),
        seed: DEFAULT_SEED,
        scatter: false,
        scans: 50,
        scan_length: 1_000,
        scan_pages: 10_000,
        scan_writes: false,
        alpha: None,
    }
}

fn preset(name: &'static str, kind: GenKind, requests: u64, pages: u64, write_ratio: f64) -> GenSpec {
    GenSpec { preset: Some(name), requests, pages, write_ratio, ..base(kind) }
}

/// The papers' traces, usable as a spec's kind.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "adlru-random",
        description: "AD-LRU Table 3: uniform, 100,000 requests over 50,000 pages, 50% writes",
        spec: || preset("adlru-random", GenKind::Uniform, 100_000, 50_000, 0.5),
    },
    Preset {
        name: "adlru-read-most",
        description: "AD-LRU Table 4: uniform, 100,000 requests over 50,000 pages, 10% writes",
        spec: || preset("adlru-read-most", GenKind::Uniform, 100_000, 50_000, 0.1),
    },
    Preset {
        name: "adlru-write-most",
        description: "AD-LRU Table 5: uniform, 100,000 requests over 50,000 pages, 90% writes",
        spec: || preset("adlru-write-most", GenKind::Uniform, 100_000, 50_000, 0.9),
    },
    Preset {
        name: "adlru-zipf",
        description: "AD-LRU Table 6: Zipf 80-20, 500,000 requests over 50,000 pages, 50% writes",
        spec: || preset("adlru-zipf", GenKind::Zipf, 500_000, 50_000, 0.5),
    },
    Preset {
        name: "adlru-zipf-1000k",
        description: "AD-LRU Table 7: Zipf 80-20, 1,000,000 requests over 100,000 pages, 49% writes",
        spec: || preset("adlru-zipf-1000k", GenKind::Zipf, 1_000_000, 100_000, 0.49),
    },
    Preset {
        name: "adlru-zipf-10m",
        description: "AD-LRU §4.6: Zipf 80-20, 10 million requests over 1 million pages, 50% writes",
        spec: || preset("adlru-zipf-10m", GenKind::Zipf, 10_000_000, 1_000_000, 0.5),
    },
    Preset {
        name: "adlru-selfsim-100m",
        description: "AD-LRU §4.6: self-similar 80-20, 100 million requests over 10 million pages, 80% writes",
        spec: || preset("adlru-selfsim-100m", GenKind::SelfSimilar, 100_000_000, 10_000_000, 0.8),
    },
    Preset {
        name: "adlru-scan",
        description: "AD-LRU §4.4: Zipf 80-20, 100,000 requests over 40,000 pages, plus 50 read scans \
                      in pages 40,000..49,999 (scan-length: 1000 by default)",
        spec: || preset("adlru-scan", GenKind::ScanMix, 100_000, 40_000, 0.5),
    },
];

/// A generator description: kind (or preset) and parameters. Parse it with [`FromStr`]; the
/// syntax is in the [module documentation](self).
#[derive(Clone, Debug, PartialEq)]
pub struct GenSpec {
    /// The generator family.
    pub kind: GenKind,
    /// The preset this spec started from, if any (used by [`GenSpec::label`]).
    pub preset: Option<&'static str>,
    /// Number of requests (for `scan-mix`: of Zipf references, scans come on top).
    pub requests: u64,
    /// Pages `0..pages` (for `scan-mix`: of the Zipf part).
    pub pages: u64,
    /// Probability that a request is a write.
    pub write_ratio: f64,
    /// Locality of `zipf`, `self-similar` and `scan-mix`.
    pub locality: Locality,
    /// Seed of the random stream.
    pub seed: u64,
    /// `zipf`/`self-similar`: spread the hot pages with a seeded permutation.
    pub scatter: bool,
    /// `scan-mix`: number of scans.
    pub scans: u64,
    /// `scan-mix`: pages per scan.
    pub scan_length: u64,
    /// `scan-mix`: size of the scan range, which follows the Zipf range.
    pub scan_pages: u64,
    /// `scan-mix`: scans write instead of read.
    pub scan_writes: bool,
    /// `zipf`: the exponent α of P(i) ∝ i^−α, overriding the one implied by `locality`.
    pub alpha: Option<f64>,
}

impl GenSpec {
    /// The spec of `kind` with every key at its default.
    pub fn new(kind: GenKind) -> Self {
        base(kind)
    }

    /// The preset called `name`.
    pub fn preset(name: &str) -> Option<GenSpec> {
        PRESETS.iter().find(|p| p.name == name).map(|p| (p.spec)())
    }

    /// Number of pages the trace may touch: every page number is below this (sizes the device
    /// without reading the trace).
    pub fn page_count(&self) -> u64 {
        match self.kind {
            GenKind::ScanMix => self.pages.saturating_add(self.scan_pages),
            _ => self.pages,
        }
    }

    /// Total number of requests the trace yields.
    pub fn total_requests(&self) -> u64 {
        match self.kind {
            GenKind::ScanMix => self.requests.saturating_add(self.scans.saturating_mul(self.scan_length)),
            _ => self.requests,
        }
    }

    fn value_of(&self, key: &str) -> String {
        match key {
            "requests" => self.requests.to_string(),
            "pages" => self.pages.to_string(),
            "write-ratio" => self.write_ratio.to_string(),
            "locality" => self.locality.to_string(),
            "seed" => self.seed.to_string(),
            "scatter" => self.scatter.to_string(),
            "scans" => self.scans.to_string(),
            "scan-length" => self.scan_length.to_string(),
            "scan-pages" => self.scan_pages.to_string(),
            "scan-writes" => self.scan_writes.to_string(),
            "alpha" => self.alpha.map(|a| a.to_string()).unwrap_or_default(),
            _ => unreachable!("unknown key {key}"),
        }
    }

    /// The fully expanded form: kind and every key of the kind, in canonical order. Parsing it
    /// gives the same trace.
    pub fn canonical(&self) -> String {
        let mut s = self.kind.name().to_string();
        for key in self.kind.keys() {
            let v = self.value_of(key);
            if v.is_empty() {
                continue; // an unset optional key (alpha)
            }
            s.push(',');
            s.push_str(key);
            s.push('=');
            s.push_str(&v);
        }
        s
    }

    /// A short canonical label for result rows: the preset name followed by the keys that
    /// differ from the preset (`adlru-zipf,seed=7`), or [`GenSpec::canonical`] without a preset.
    /// Parsing it gives the same trace.
    pub fn label(&self) -> String {
        let Some(name) = self.preset else { return self.canonical() };
        let Some(reference) = GenSpec::preset(name) else { return self.canonical() };
        if reference.kind != self.kind {
            return self.canonical();
        }
        let mut s = name.to_string();
        for key in self.kind.keys() {
            let v = self.value_of(key);
            if v != reference.value_of(key) {
                s.push(',');
                s.push_str(key);
                s.push('=');
                s.push_str(&v);
            }
        }
        s
    }

    /// Checks every parameter (the same checks as [`GenSpec::open`]).
    pub fn validate(&self) -> Result<(), TraceError> {
        self.open().map(|_| ())
    }

    /// The generator.
    pub fn open(&self) -> Result<Box<dyn TraceSource>, TraceError> {
        Ok(match self.kind {
            GenKind::Uniform => Box::new(UniformTrace::new(self.requests, self.pages, self.write_ratio, self.seed)?),
            GenKind::Zipf => {
                let t = match self.alpha {
                    Some(a) => ZipfTrace::with_exponent(self.requests, self.pages, self.write_ratio, a, self.seed)?,
                    None => ZipfTrace::new(self.requests, self.pages, self.write_ratio, self.locality, self.seed)?,
                };
                Box::new(if self.scatter { t.scattered(self.seed) } else { t })
            }
            GenKind::SelfSimilar => {
                let t = SelfSimilarTrace::new(self.requests, self.pages, self.write_ratio, self.locality, self.seed)?;
                Box::new(if self.scatter { t.scattered(self.seed) } else { t })
            }
            GenKind::ScanMix => Box::new(ScanMixTrace::new(ScanMixParams {
                requests: self.requests,
                pages: self.pages,
                write_ratio: self.write_ratio,
                locality: self.locality,
                scans: self.scans,
                scan_length: self.scan_length,
                scan_pages: self.scan_pages,
                scan_writes: self.scan_writes,
                seed: self.seed,
            })?),
        })
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), TraceError> {
        match key {
            "requests" => self.requests = parse_count(key, value)?,
            "pages" => self.pages = parse_count(key, value)?,
            "write-ratio" => {
                self.write_ratio =
                    value.parse::<f64>().ok().filter(|r| (0.0..=1.0).contains(r)).ok_or_else(|| {
                        TraceError::Invalid(format!("write-ratio '{value}': expected a number in [0, 1]"))
                    })?
            }
            "locality" => self.locality = value.parse()?,
            "seed" => self.seed = parse_count(key, value)?,
            "scatter" => self.scatter = parse_bool(key, value)?,
            "scans" => self.scans = parse_count(key, value)?,
            "scan-length" => self.scan_length = parse_count(key, value)?,
            "scan-pages" => self.scan_pages = parse_count(key, value)?,
            "scan-writes" => self.scan_writes = parse_bool(key, value)?,
            "alpha" => {
                self.alpha =
                    Some(
                        value.parse::<f64>().ok().filter(|a| a.is_finite() && *a > 0.0).ok_or_else(|| {
                            TraceError::Invalid(format!("alpha '{value}': expected a positive number"))
                        })?,
                    )
            }
            _ => unreachable!("unknown key {key}"),
        }
        Ok(())
    }
}

impl fmt::Display for GenSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

fn valid_kinds() -> String {
    let mut names: Vec<&str> = GenKind::ALL.iter().map(|k| k.name()).collect();
    names.extend(PRESETS.iter().map(|p| p.name));
    names.join(", ")
}

impl FromStr for GenSpec {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Self, TraceError> {
        let mut parts = s.split(',').map(str::trim);
        let head = parts.next().unwrap_or("").to_ascii_lowercase();
        let mut spec = if let Some(kind) = GenKind::from_name(&head) {
            GenSpec::new(kind)
        } else if let Some(p) = GenSpec::preset(&head) {
            p
        } else {
            return Err(TraceError::Invalid(format!(
                "unknown generator '{head}'; valid generators and presets: {}",
                valid_kinds()
            )));
        };
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| TraceError::Invalid(format!("generator option '{part}': expected key=value")))?;
            let key = key.trim().to_ascii_lowercase().replace('_', "-");
            let Some(&key) = spec.kind.keys().iter().find(|k| **k == key) else {
                return Err(TraceError::Invalid(format!(
                    "unknown key '{key}' for generator {}; valid keys: {}",
                    spec.kind,
                    spec.kind.keys().join(", ")
                )));
            };
            spec.set(key, value.trim())?;
        }
        spec.validate()?;
        Ok(spec)
    }
}

/// A count: digits with optional `_` separators and an optional decimal suffix k, m or g.
fn parse_count(key: &str, value: &str) -> Result<u64, TraceError> {
    let bad =
        || TraceError::Invalid(format!("{key} '{value}': expected a whole number (e.g. 500000, 500_000 or 500k)"));
    let cleaned: String = value.chars().filter(|&c| c != '_').collect();
    let (digits, multiplier) = match cleaned.chars().last().map(|c| c.to_ascii_lowercase()) {
        Some('k') => (&cleaned[..cleaned.len() - 1], 1_000u64),
        Some('m') => (&cleaned[..cleaned.len() - 1], 1_000_000),
        Some('g') => (&cleaned[..cleaned.len() - 1], 1_000_000_000),
        _ => (&cleaned[..], 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    digits.parse::<u64>().ok().and_then(|v| v.checked_mul(multiplier)).ok_or_else(bad)
}

fn parse_bool(key: &str, value: &str) -> Result<bool, TraceError> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(TraceError::Invalid(format!("{key} '{value}': expected true or false"))),
    }
}

#[cfg(test)]
mod tests;
