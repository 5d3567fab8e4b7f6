//! Parsing of list-valued command-line arguments.

use anyhow::{Context, Result, bail};
use flashbuf_policy::PolicyConfig;

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

/// A buffer size as written on the command line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BufferSize {
    /// A number of pages.
    Pages(u64),
    /// A number of bytes (divided by the page size).
    Bytes(u64),
    /// A percentage of the trace's page space (largest page number + 1).
    Percent(f64),
}

impl BufferSize {
    /// The size in pages for a given page size and trace page space.
    pub fn pages(self, page_size: u64, trace_pages: Option<u64>) -> Result<u64> {
        let pages = match self {
            BufferSize::Pages(p) => p,
            BufferSize::Bytes(b) => b / page_size,
            BufferSize::Percent(pc) => {
                let total = trace_pages.context("a buffer size in percent needs the trace's page count")?;
                (total as f64 * pc / 100.0).round() as u64
            }
        };
        if pages == 0 {
            bail!("buffer size {self:?} is less than one page");
        }
        Ok(pages)
    }
}

/// Parses `512,1024,2MB,16MiB,5%` into buffer sizes. Plain numbers are pages; `K`/`M`/`G` with
/// or without `B`, and `KiB`/`MiB`/`GiB`, are bytes (powers of 1024, as buffer sizes are
/// conventionally quoted in the papers: "1 MB = 512 pages of 2 KB"); `%` is a share of the trace.
pub fn parse_buffers(arg: &str) -> Result<Vec<BufferSize>> {
    let mut out = Vec::new();
    for item in arg.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        out.push(parse_buffer(item).with_context(|| format!("bad buffer size '{item}'"))?);
    }
    if out.is_empty() {
        bail!("no buffer size given");
    }
    Ok(out)
}

fn parse_buffer(item: &str) -> Result<BufferSize> {
    if let Some(pc) = item.strip_suffix('%') {
        let v: f64 = pc.trim().parse().context("not a number")?;
        if !(v > 0.0 && v <= 100.0) {
            bail!("a percentage must be in (0, 100]");
        }
        return Ok(BufferSize::Percent(v));
    }
    let digits_end = item.find(|c: char| !c.is_ascii_digit() && c != '_').unwrap_or(item.len());
    let (num, unit) = item.split_at(digits_end);
    let n: u64 = num.replace('_', "").parse().context("expected a whole number of pages, or a size like 16MB")?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "p" | "pages" => return Ok(BufferSize::Pages(n)),
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => bail!("unknown unit '{other}' (use pages, KB, MB, GB or %)"),
    };
    Ok(BufferSize::Bytes(n.checked_mul(mult).context("size overflows")?))
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
