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
