//! Trace specifications as given on the command line: a generator or a file.
//!
//! * `gen:<GenSpec>`: a generator, e.g. `gen:adlru-zipf,seed=7` (syntax in
//!   [`crate::generators`]).
//! * `<format>:<path>`: a file read in the named format (`msr:/data/hm_0.csv`), where
//!   `<format>` is one of [`Format::valid_names`] other than `auto`.
//! * `-` or `<format>:-`: standard input, read once as it streams (detection works on its
//!   content; naming the format is safer).
//! * anything else: a file path, read in the format of [`ReadOptions::format`] (auto-detected
//!   by default). A path that is not a regular file (a FIFO, `/dev/stdin`) is read once, like
//!   standard input.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::formats::{Compression, Format, ReadOptions, open_path};
use crate::generators::GenSpec;
use crate::{TraceError, TraceSource};

/// A trace to run: a generator or a file.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceSpec {
    /// A synthetic trace.
    Generated(GenSpec),
    /// A trace file; `format` is `Some` when the spec named it (`msr:path`), overriding
    /// [`ReadOptions::format`].
    File {
        /// The file.
        path: PathBuf,
        /// The format named in the spec, if any.
        format: Option<Format>,
    },
    /// Standard input.
    Stdin {
        /// The format named in the spec, if any.
        format: Option<Format>,
    },
}

/// An opened trace with what is known about it.
pub struct OpenedTrace {
    /// The requests.
    pub source: Box<dyn TraceSource>,
    /// The file format read (`None` for a generator).
    pub format: Option<Format>,
    /// The compression removed (`None` for a generator).
    pub compression: Option<Compression>,
    /// One line saying how the trace was opened (format detection reason, or the generator).
    pub reason: String,
    /// For generators, the number of pages (every page number is below it).
    pub page_count: Option<u64>,
}

impl fmt::Debug for OpenedTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenedTrace")
            .field("format", &self.format)
            .field("compression", &self.compression)
            .field("reason", &self.reason)
            .field("page_count", &self.page_count)
            .finish_non_exhaustive()
    }
}

impl TraceSpec {
    /// Parses a command-line trace argument (see the module documentation).
    pub fn parse(s: &str) -> Result<TraceSpec, TraceError> {
        let s = s.trim();
        if let Some(gen_spec) = s.strip_prefix("gen:") {
            return Ok(TraceSpec::Generated(gen_spec.parse()?));
        }
        if s.is_empty() {
            return Err(TraceError::Invalid("empty trace specification".into()));
        }
        if s == "-" {
            return Ok(TraceSpec::Stdin { format: None });
        }
        if let Some((prefix, rest)) = s.split_once(':') {
            match prefix.parse::<Format>() {
                Ok(format) if format != Format::Auto && rest == "-" => {
                    return Ok(TraceSpec::Stdin { format: Some(format) });
                }
                Ok(format) if format != Format::Auto && !rest.is_empty() => {
                    return Ok(TraceSpec::File { path: PathBuf::from(rest), format: Some(format) });
                }
                _ => {}
            }
        }
        Ok(TraceSpec::File { path: PathBuf::from(s), format: None })
    }

    /// The name for result rows: the generator's label ([`GenSpec::label`]) or the file name.
    pub fn label(&self) -> String {
        match self {
            TraceSpec::Generated(g) => g.label(),
            TraceSpec::File { path, .. } => {
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
            }
            TraceSpec::Stdin { .. } => "stdin".to_string(),
        }
    }

    /// `true` when the trace can be read more than once: a generator or a regular file. Standard
    /// input, a FIFO or a device can be read only once, so whatever a run needs to know in
    /// advance (the footprint) cannot come from a first pass.
    pub fn rereadable(&self) -> bool {
        match self {
            TraceSpec::Generated(_) => true,
            TraceSpec::File { path, .. } => std::fs::metadata(path).is_ok_and(|m| m.is_file()),
            TraceSpec::Stdin { .. } => false,
        }
    }

    /// For generators, the number of pages: every page number is below it. `None` for files
    /// (read the trace, e.g. with [`crate::stats`], to know).
    pub fn page_count(&self) -> Option<u64> {
        match self {
            TraceSpec::Generated(g) => Some(g.page_count()),
            TraceSpec::File { .. } | TraceSpec::Stdin { .. } => None,
        }
    }

    /// The file path, for file specs.
    pub fn path(&self) -> Option<&Path> {
        match self {
            TraceSpec::Generated(_) | TraceSpec::Stdin { .. } => None,
            TraceSpec::File { path, .. } => Some(path),
        }
    }

    /// Opens the trace. For files, `opts` says how to read them (a format named in the spec
    /// overrides `opts.format`); generators ignore `opts`.
    pub fn open(&self, opts: &ReadOptions) -> Result<OpenedTrace, TraceError> {
        match self {
            TraceSpec::Generated(g) => Ok(OpenedTrace {
                source: g.open()?,
                format: None,
                compression: None,
                reason: format!("generator {}", g.canonical()),
                page_count: Some(g.page_count()),
            }),
            TraceSpec::File { path, format } => {
                let opts = ReadOptions { format: format.unwrap_or(opts.format), ..opts.clone() };
                let opened = open_path(path, &opts)?;
                Ok(OpenedTrace {
                    source: opened.source,
                    format: Some(opened.format),
                    compression: Some(opened.compression),
                    reason: opened.reason,
                    page_count: None,
                })
            }
            TraceSpec::Stdin { format } => {
                let opts = ReadOptions { format: format.unwrap_or(opts.format), ..opts.clone() };
                let opened = crate::formats::open_stream(std::io::stdin(), "stdin", &opts).map_err(|e| match e {
                    TraceError::Format(m) => TraceError::Format(format!("{m} (name the format: --format or FORMAT:-)")),
                    other => other,
                })?;
                Ok(OpenedTrace {
                    source: opened.source,
                    format: Some(opened.format),
                    compression: Some(opened.compression),
                    reason: opened.reason,
                    page_count: None,
                })
            }
        }
    }
}

impl FromStr for TraceSpec {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Self, TraceError> {
        TraceSpec::parse(s)
    }
}

impl fmt::Display for TraceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceSpec::Generated(g) => write!(f, "gen:{}", g.label()),
            TraceSpec::File { path, format: Some(format) } => write!(f, "{format}:{}", path.display()),
            TraceSpec::File { path, format: None } => write!(f, "{}", path.display()),
            TraceSpec::Stdin { format: Some(format) } => write!(f, "{format}:-"),
            TraceSpec::Stdin { format: None } => f.write_str("-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_generators_paths_and_format_prefixes() {
        let g = TraceSpec::parse("gen:adlru-zipf,seed=7").unwrap();
        assert_eq!(g.label(), "adlru-zipf,seed=7");
        assert_eq!(g.page_count(), Some(50_000));
        assert_eq!(g.to_string(), "gen:adlru-zipf,seed=7");
        assert!(TraceSpec::parse("gen:nonsense").is_err());

        let f = TraceSpec::parse("/data/traces/OLTP.lis.zst").unwrap();
        assert_eq!(f, TraceSpec::File { path: "/data/traces/OLTP.lis.zst".into(), format: None });
        assert_eq!(f.label(), "OLTP.lis.zst");
        assert_eq!(f.page_count(), None);

        let m = TraceSpec::parse("msr:/data/hm_0.csv").unwrap();
        assert_eq!(m, TraceSpec::File { path: "/data/hm_0.csv".into(), format: Some(Format::Msr) });
        assert_eq!(m.to_string(), "msr:/data/hm_0.csv");
        // A prefix that is no format name is part of the path.
        assert_eq!(TraceSpec::parse("C:/x.csv").unwrap(), TraceSpec::File { path: "C:/x.csv".into(), format: None });
        assert!(TraceSpec::parse("").is_err());
        assert_eq!(TraceSpec::parse("-").unwrap(), TraceSpec::Stdin { format: None });
        let s = TraceSpec::parse("msr:-").unwrap();
        assert_eq!(s, TraceSpec::Stdin { format: Some(Format::Msr) });
        assert_eq!((s.label(), s.to_string(), s.rereadable()), ("stdin".into(), "msr:-".into(), false));
        assert!(TraceSpec::parse("gen:uniform").unwrap().rereadable());
    }

    #[test]
    fn generator_opens_with_its_page_count() {
        let opened =
            TraceSpec::parse("gen:uniform,requests=10,pages=7").unwrap().open(&ReadOptions::default()).unwrap();
        assert_eq!(opened.page_count, Some(7));
        assert_eq!(opened.format, None);
        let mut src = opened.source;
        let reqs = crate::collect(&mut *src).unwrap();
        assert_eq!(reqs.len(), 10);
        assert!(reqs.iter().all(|r| r.page < 7));
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = TraceSpec::parse("/nonexistent/dir/t.csv").unwrap().open(&ReadOptions::default()).unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/dir/t.csv:"), "{e}");
    }
}
