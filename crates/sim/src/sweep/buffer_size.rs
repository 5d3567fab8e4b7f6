//! Buffer sizes as users write them: pages, bytes with a unit, or a share of the trace.
//!
//! The same syntax as `flashbuf run --buffer`: a plain number is pages; `K`/`M`/`G` with or
//! without `B`, and `KiB`/`MiB`/`GiB`, are bytes in powers of 1024 (as the papers quote buffer
//! sizes: "1 MB = 512 pages of 2 KB"), divided by the page size; `5%` is a share of the trace's
//! working set — its distinct pages, as libCacheSim defines it — rounded to the nearest page.

use std::fmt;
use std::str::FromStr;

/// A buffer size before it is resolved against a trace and a page size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BufferSize {
    /// A number of pages.
    Pages(u64),
    /// A number of bytes (divided by the page size).
    Bytes(u64),
    /// A percentage of the trace's distinct pages, in (0, 100].
    Percent(f64),
}

impl BufferSize {
    /// The size in pages for pages of `page_size` bytes and a trace of `distinct_pages`
    /// distinct pages (needed for percentages). Errors when the result is less than one page or
    /// a percentage has no footprint to apply to.
    pub fn pages(self, page_size: u64, distinct_pages: Option<u64>) -> Result<u64, String> {
        let pages = match self {
            BufferSize::Pages(p) => p,
            BufferSize::Bytes(b) => b / page_size.max(1),
            BufferSize::Percent(pc) => {
                let Some(d) = distinct_pages else {
                    return Err(format!("buffer size {self} needs the trace's distinct pages, which are not known"));
                };
                (d as f64 * pc / 100.0).round() as u64
            }
        };
        if pages == 0 {
            return Err(format!("buffer size {self} is less than one page for this trace"));
        }
        Ok(pages)
    }
}

impl fmt::Display for BufferSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferSize::Pages(p) => write!(f, "{p} pages"),
            BufferSize::Bytes(b) => write!(f, "{b} bytes"),
            BufferSize::Percent(pc) => write!(f, "{pc}%"),
        }
    }
}

impl FromStr for BufferSize {
    type Err = String;

    /// Parses `512`, `2MB`, `16MiB`, `2k`, `5%`.
    fn from_str(item: &str) -> Result<Self, String> {
        let item = item.trim();
        if let Some(pc) = item.strip_suffix('%') {
            let v: f64 = pc.trim().parse().map_err(|_| format!("'{item}': not a percentage"))?;
            if !(v > 0.0 && v <= 100.0) {
                return Err(format!("'{item}': a percentage must be in (0, 100]"));
            }
            return Ok(BufferSize::Percent(v));
        }
        let digits_end = item.find(|c: char| !c.is_ascii_digit() && c != '_').unwrap_or(item.len());
        let (num, unit) = item.split_at(digits_end);
        let n: u64 = num.replace('_', "").parse().map_err(|_| {
            format!("'{item}': expected a whole number of pages, a size like 16MB, or a percentage like 5%")
        })?;
        let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "p" | "pages" => return Ok(BufferSize::Pages(n)),
            "k" | "kb" | "kib" => 1 << 10,
            "m" | "mb" | "mib" => 1 << 20,
            "g" | "gb" | "gib" => 1 << 30,
            other => return Err(format!("'{item}': unknown unit '{other}' (valid: pages, KB, MB, GB, %)")),
        };
        Ok(BufferSize::Bytes(n.checked_mul(mult).ok_or_else(|| format!("'{item}': size overflows"))?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_bytes_and_percent_like_the_command_line() {
        let p = |s: &str| s.parse::<BufferSize>().unwrap();
        assert_eq!(p("512").pages(2048, None).unwrap(), 512);
        assert_eq!(p("1MB").pages(2048, None).unwrap(), 512);
        assert_eq!(p("16MiB").pages(2048, None).unwrap(), 8192);
        assert_eq!(p("2k").pages(2048, None).unwrap(), 1);
        assert_eq!(p("1_024").pages(4096, None).unwrap(), 1024);
        assert_eq!(p("5%").pages(4096, Some(100_000)).unwrap(), 5000);
        // Rounded to the nearest page.
        assert_eq!(p("1%").pages(4096, Some(150)).unwrap(), 2);
        assert!(p("1%").pages(4096, Some(40)).is_err());
        assert!(p("1%").pages(4096, None).unwrap_err().contains("distinct pages"));
        assert!(p("100").pages(4096, None).is_ok());
        assert!(BufferSize::Bytes(100).pages(2048, None).unwrap_err().contains("less than one page"));
        for bad in ["12XB", "0%", "101%", "abc", "", "-5"] {
            assert!(bad.parse::<BufferSize>().is_err(), "{bad}");
        }
        assert!("12XB".parse::<BufferSize>().unwrap_err().contains("KB, MB, GB"));
    }
}
