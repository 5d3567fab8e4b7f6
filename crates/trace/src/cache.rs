//! A cache of trace summaries, so that what a run must know before it starts (the footprint for
//! `%` buffer sizes and device sizing, the volumes, the extents) costs one pass over a trace
//! file once, not once per run.
//!
//! A summary is stored as JSON in the cache directory under a name derived from the trace's
//! path, and is valid only for the exact file it describes: its key holds the canonical path,
//! the file's length and modification time, and every read option that changes the requests
//! (format, page size, volume, time unit, column map). A file that changed, or other options,
//! miss the cache. The directory is `$FLASHBUF_CACHE_DIR`, else `$XDG_CACHE_HOME/flashbuf`,
//! else `$HOME/.cache/flashbuf`; with none of them set the cache is off. Entries are written
//! atomically (temporary file, then rename) and are never needed: deleting the directory only
//! costs a pass.
//!
//! Only regular files are cached: a pipe or a FIFO cannot be read twice, and its content has no
//! identity.

use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::formats::ReadOptions;
use crate::stats::TraceSummary;

/// The version of the entries' layout; entries of another version are ignored.
const ENTRY_VERSION: u32 = 1;

/// Where summaries are kept (or nowhere).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryCache {
    dir: Option<PathBuf>,
}

/// What identifies a summary: the file and how it is read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheKey {
    /// Canonical path of the trace file.
    pub path: String,
    /// Its length in bytes.
    pub len: u64,
    /// Its modification time, nanoseconds since the Unix epoch.
    pub modified_ns: u128,
    /// The read options ([`ReadOptions::describe`]).
    pub read: String,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    version: u32,
    key: CacheKey,
    summary: TraceSummary,
}

impl SummaryCache {
    /// The cache in the directory the environment names (see the module documentation).
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = var("FLASHBUF_CACHE_DIR")
            .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("flashbuf")))
            .or_else(|| var("HOME").map(|d| d.join(".cache").join("flashbuf")));
        SummaryCache { dir }
    }

    /// A cache in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        SummaryCache { dir: Some(dir.into()) }
    }

    /// No cache: nothing is read or written.
    pub fn disabled() -> Self {
        SummaryCache { dir: None }
    }

    /// The directory, when the cache is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The key of the trace file at `path` read with `opts`; `None` when `path` is not a
    /// regular file (a pipe, a FIFO, a device) or cannot be examined.
    pub fn key(path: &Path, opts: &ReadOptions) -> Option<CacheKey> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() {
            return None;
        }
        let modified_ns = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
        let canonical = std::fs::canonicalize(path).ok()?;
        Some(CacheKey {
            path: canonical.to_string_lossy().into_owned(),
            len: meta.len(),
            modified_ns,
            read: opts.describe(),
        })
    }

    /// The key of a generator's trace (generators are deterministic: the canonical
    /// specification and the version of the crate identify the trace).
    pub fn generator_key(canonical: &str) -> CacheKey {
        CacheKey {
            path: format!("gen:{canonical}"),
            len: 0,
            modified_ns: 0,
            read: format!("generator of flashbuf-trace {}", env!("CARGO_PKG_VERSION")),
        }
    }

    fn entry_path(&self, key: &CacheKey) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        let name = Path::new(&key.path).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let safe: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' })
            .take(64)
            .collect();
        let id = format!("{}\n{}", key.path, key.read);
        let h1 = crc32c::crc32c(id.as_bytes());
        let h2 = crc32c::crc32c_append(0x9e37_79b9, id.as_bytes());
        Some(dir.join("summaries").join(format!("{safe}-{h1:08x}{h2:08x}.json")))
    }

    /// The cached summary for `key`, if there is a valid one.
    pub fn load(&self, key: &CacheKey) -> Option<TraceSummary> {
        let text = std::fs::read_to_string(self.entry_path(key)?).ok()?;
        let entry: Entry = serde_json::from_str(&text).ok()?;
        (entry.version == ENTRY_VERSION && entry.key == *key).then_some(entry.summary)
    }

    /// Stores `summary` for `key`; returns where (`Ok(None)` when the cache is off).
    pub fn store(&self, key: &CacheKey, summary: &TraceSummary) -> io::Result<Option<PathBuf>> {
        let Some(path) = self.entry_path(key) else { return Ok(None) };
        let dir = path.parent().expect("an entry lives in the summaries directory");
        std::fs::create_dir_all(dir)?;
        let entry = Entry { version: ENTRY_VERSION, key: key.clone(), summary: summary.clone() };
        let text = serde_json::to_string(&entry).map_err(io::Error::other)?;
        let mut tmp = tempfile::Builder::new().prefix(".flashbuf-summary.").suffix(".tmp").tempfile_in(dir)?;
        io::Write::write_all(&mut tmp, text.as_bytes())?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(Some(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TraceStats;

    #[test]
    fn round_trip_and_invalidation() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SummaryCache::at(dir.path().join("cache"));
        let trace = dir.path().join("t.txt");
        std::fs::write(&trace, "# flashbuf-trace v1\nR 1\n").unwrap();
        let opts = ReadOptions::default();
        let key = SummaryCache::key(&trace, &opts).unwrap();
        assert_eq!(cache.load(&key), None);
        let summary = TraceSummary {
            stats: TraceStats { requests: 1, reads: 1, distinct_pages: 1, ..Default::default() },
            extents: vec![1; 21],
            ..Default::default()
        };
        let stored = cache.store(&key, &summary).unwrap().unwrap();
        assert!(stored.starts_with(dir.path().join("cache")));
        assert_eq!(cache.load(&key), Some(summary.clone()));
        // Other read options: another key, a miss.
        let other = SummaryCache::key(&trace, &ReadOptions { page_size: 512, ..ReadOptions::default() }).unwrap();
        assert_ne!(other, key);
        assert_eq!(cache.load(&other), None);
        // The file changes: its key changes.
        std::fs::write(&trace, "# flashbuf-trace v1\nR 1\nR 2\n").unwrap();
        let changed = SummaryCache::key(&trace, &opts).unwrap();
        assert_ne!(changed, key);
        assert_eq!(cache.load(&changed), None);
        // A disabled cache stores nothing.
        assert_eq!(SummaryCache::disabled().store(&key, &summary).unwrap(), None);
        // Not a regular file: no key.
        assert_eq!(SummaryCache::key(dir.path(), &opts), None);
    }
}
