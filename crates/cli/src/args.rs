//! Parsing of list-valued command-line arguments, and the option values several commands share.

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use flashbuf_policy::PolicyConfig;
use flashbuf_sim::WriteMiss;
use flashbuf_sim::prepare::RemapMode;
use flashbuf_sim::sweep::BufferSize;

/// `--write-miss`: what a write miss does (`run`, `curve`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WriteMissArg {
    /// Fetch the page first (a database buffer).
    Fetch,
    /// Overwrite it whole without a fetch (a write buffer).
    NoFetch,
}

impl From<WriteMissArg> for WriteMiss {
    fn from(a: WriteMissArg) -> Self {
        match a {
            WriteMissArg::Fetch => WriteMiss::Fetch,
            WriteMissArg::NoFetch => WriteMiss::NoFetch,
        }
    }
}

/// `--output`: how a table of results is printed (`run`, `curve`, `engine bench`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// An aligned text table.
    Table,
    /// CSV with a header line, every measured field.
    Csv,
    /// A JSON array of objects, every measured field.
    Json,
}

/// `--remap auto|on|off` (see docs/address-space.md).
pub fn parse_remap(s: &str) -> Result<RemapMode, String> {
    s.parse()
}

/// Splits a policy list such as `lru,cflru:w=0.25,arc` or `cflru:w=0.25,cfdc:pw=0.5,cluster=32`.
///
/// Items are separated by commas; an item of the form `key=value` (without a `:`) continues the
/// parameter list of the policy before it. Repeated `--policy` flags are concatenated.
pub fn parse_policies(args: &[String]) -> Result<Vec<PolicyConfig>> {
    let mut specs: Vec<String> = Vec::new();
    for arg in args {
        for item in arg.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item.contains('=') && !item.contains(':') {
                let Some(last) = specs.last_mut() else {
                    bail!("'{item}' is a parameter but no policy comes before it");
                };
                last.push(if last.contains(':') { ',' } else { ':' });
                last.push_str(item);
            } else {
                specs.push(item.to_string());
            }
        }
    }
    if specs.is_empty() {
        bail!("no policy given; valid policies: {}", PolicyConfig::valid_names());
    }
    specs.iter().map(|s| s.parse::<PolicyConfig>().map_err(anyhow::Error::from)).collect()
}

/// The number of worker threads for `-j`: one per core by default; a request above the number
/// of cores is lowered to it, and the user is told (unless `quiet`).
pub fn threads(requested: Option<usize>, quiet: bool) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match requested {
        None | Some(0) => cores,
        Some(j) if j > cores => {
            if !quiet {
                eprintln!("flashbuf: -j {j} lowered to {cores}, the number of cores");
            }
            cores
        }
        Some(j) => j,
    }
}

/// Parses `512,1024,2MB,16MiB,5%` into buffer sizes (the syntax of
/// [`flashbuf_sim::sweep::BufferSize`]: plain numbers are pages, `K`/`M`/`G` with or without `B`
/// and `KiB`/`MiB`/`GiB` are bytes, `%` is a share of the trace's page space).
pub fn parse_buffers(arg: &str) -> Result<Vec<BufferSize>> {
    let mut out = Vec::new();
    for item in arg.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        out.push(
            item.parse::<BufferSize>()
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("bad buffer size '{item}'"))?,
        );
    }
    if out.is_empty() {
        bail!("no buffer size given");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(args: &[&str]) -> Vec<String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse_policies(&args).unwrap().iter().map(|p| p.label()).collect()
    }

    #[test]
    fn policy_lists_attach_parameters_to_the_policy_before() {
        assert_eq!(labels(&["lru,arc"]), ["lru", "arc"]);
        assert_eq!(
            labels(&["lru-2:history=2,clock", "2q:kin=0.3,kout=0.6"]),
            ["lru-2:history=2", "clock", "2q:kin=0.3,kout=0.6"]
        );
        assert_eq!(labels(&["2q,kin=0.3"]), ["2q:kin=0.3,kout=0.5"]);
    }

    #[test]
    fn policy_errors_name_the_valid_choices() {
        let e = parse_policies(&["lru,nope".to_string()]).unwrap_err().to_string();
        assert!(e.contains("unknown policy 'nope'") && e.contains("lru") && e.contains("arc"), "{e}");
        let e = parse_policies(&["kin=3".to_string()]).unwrap_err().to_string();
        assert!(e.contains("no policy comes before"), "{e}");
        let e = parse_policies(&["2q:kin=7".to_string()]).unwrap_err().to_string();
        assert!(e.contains("kin=7") && e.contains("kout"), "{e}");
    }

    #[test]
    fn buffer_sizes_in_pages_bytes_and_percent() {
        let b = parse_buffers("512, 1MB,16MiB,2k,5%").unwrap();
        assert_eq!(b[0].pages(2048, None).unwrap(), 512);
        assert_eq!(b[1].pages(2048, None).unwrap(), 512);
        assert_eq!(b[2].pages(2048, None).unwrap(), 8192);
        assert_eq!(b[3].pages(2048, None).unwrap(), 1);
        assert_eq!(b[4].pages(2048, Some(100_000)).unwrap(), 5000);
        assert!(b[4].pages(2048, None).is_err());
        assert!(parse_buffers("12XB").is_err());
        assert!(parse_buffers("0%").is_err());
        assert!(BufferSize::Bytes(100).pages(2048, None).is_err());
    }
}
