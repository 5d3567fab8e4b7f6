//! Summary statistics of a trace, computed in one streaming pass.

use std::fmt;

use rustc_hash::FxHashSet;

use crate::{TraceError, TraceSource};

/// What a trace contains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Number of requests.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Distinct page numbers.
    pub distinct_pages: u64,
    /// Distinct pages that were written at least once.
    pub distinct_written_pages: u64,
    /// Smallest page number (`None` for an empty trace).
    pub min_page: Option<u64>,
    /// Largest page number (`None` for an empty trace).
    pub max_page: Option<u64>,
    /// `distinct_pages × page size`: the data the trace touches.
    pub footprint_bytes: u64,
}

impl TraceStats {
    /// Reads as a fraction of the requests (0 for an empty trace).
    pub fn read_fraction(&self) -> f64 {
        if self.requests == 0 { 0.0 } else { self.reads as f64 / self.requests as f64 }
    }
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requests ({} reads, {} writes), {} distinct pages ({} written), pages {}..={}, footprint {} bytes",
            self.requests,
            self.reads,
            self.writes,
            self.distinct_pages,
            self.distinct_written_pages,
            self.min_page.map_or("-".to_string(), |p| p.to_string()),
            self.max_page.map_or("-".to_string(), |p| p.to_string()),
            self.footprint_bytes
        )
    }
}

/// Reads `source` to the end and summarises it; `page_size_bytes` sizes the footprint. Memory
/// grows with the number of distinct pages (a hash set), not with the trace.
pub fn stats(source: &mut dyn TraceSource, page_size_bytes: u64) -> Result<TraceStats, TraceError> {
    let mut s = TraceStats::default();
    let mut pages: FxHashSet<u64> = FxHashSet::default();
    let mut written: FxHashSet<u64> = FxHashSet::default();
    let mut min = u64::MAX;
    let mut max = 0u64;
    let mut batch = Vec::with_capacity(1 << 16);
    while source.next_batch(&mut batch, 1 << 16)? > 0 {
        for r in &batch {
            s.requests += 1;
            if r.kind.is_write() {
                s.writes += 1;
                written.insert(r.page);
            }
            pages.insert(r.page);
            min = min.min(r.page);
            max = max.max(r.page);
        }
    }
    s.reads = s.requests - s.writes;
    s.distinct_pages = pages.len() as u64;
    s.distinct_written_pages = written.len() as u64;
    if s.requests > 0 {
        s.min_page = Some(min);
        s.max_page = Some(max);
    }
    s.footprint_bytes = s.distinct_pages.saturating_mul(page_size_bytes);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Request, VecSource};

    #[test]
    fn counts_a_small_trace() {
        let reqs = vec![Request::read(5), Request::write(3), Request::write(5), Request::read(9), Request::read(5)];
        let s = stats(&mut VecSource::new(reqs), 4096).unwrap();
        assert_eq!(
            s,
            TraceStats {
                requests: 5,
                reads: 3,
                writes: 2,
                distinct_pages: 3,
                distinct_written_pages: 2,
                min_page: Some(3),
                max_page: Some(9),
                footprint_bytes: 3 * 4096,
            }
        );
        assert_eq!(s.read_fraction(), 0.6);
    }

    #[test]
    fn empty_trace() {
        let s = stats(&mut VecSource::new(Vec::new()), 4096).unwrap();
        assert_eq!(s, TraceStats::default());
        assert_eq!(s.read_fraction(), 0.0);
    }
}
