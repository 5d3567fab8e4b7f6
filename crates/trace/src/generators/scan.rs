//! The scan-resistance workload of the AD-LRU paper (§4.4): a Zipf trace of 100,000 references
//! over pages 0..39,999 into which 50 scans are mixed, each a run of `scan_length` consecutive
//! page reads within pages 40,000..49,999.
//!
//! Choices where the paper is silent:
//! * "The scans are distributed uniformly among the Zipf trace": scan j (0-based) of S starts
//!   right after Zipf reference number `floor((j + 1) · R / (S + 1))` (evenly spaced; with
//!   R = 100,000 and S = 50, one scan every 1,960 or 1,961 Zipf references, none at the very
//!   start or end).
//! * Each scan starts at a page drawn uniformly so that the whole scan fits in the scan range
//!   (`scan_start + below(scan_pages − scan_length + 1)`, "clamped", never wrapping), so every
//!   scan is exactly `scan_length` consecutive pages; `scan_length > scan_pages` is an error.
//! * Scans are reads (the paper: "each scan contains a fixed number of read operations"); the
//!   Zipf references use the write ratio. With `scan_writes` the scans are sequential *write*
//!   runs instead (not in the AD-LRU paper: files written whole among random metadata updates,
//!   the desktop workloads of the REF paper's §V).
//!
//! The random stream is shared: Zipf references draw as in [`super::zipf`], a scan draws its
//! start page when it begins.

use crate::rng::PortableRng;
use crate::{AccessKind, Request, TraceError, TraceSource};

use super::Locality;
use super::zipf::ZipfTrace;

/// The Zipf + scans mix.
#[derive(Clone, Debug)]
pub struct ScanMixTrace {
    zipf: ZipfTrace,
    requests: u64,
    scans: u64,
    scan_length: u64,
    scan_start: u64,
    scan_pages: u64,
    scan_kind: AccessKind,
    /// Zipf references produced so far.
    zipf_done: u64,
    /// Scans started so far.
    scans_done: u64,
    /// Next page of the scan in progress and how many pages it still has.
    scan_next: u64,
    scan_left: u64,
}

/// Parameters of [`ScanMixTrace`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScanMixParams {
    /// Zipf references (the paper: 100,000).
    pub requests: u64,
    /// Pages of the Zipf part, `0..pages` (the paper: 40,000).
    pub pages: u64,
    /// Write ratio of the Zipf references.
    pub write_ratio: f64,
    /// Locality of the Zipf part.
    pub locality: Locality,
    /// Number of scans (the paper: 50).
    pub scans: u64,
    /// Pages per scan.
    pub scan_length: u64,
    /// Size of the scan range `pages..pages + scan_pages` (the paper: 10,000).
    pub scan_pages: u64,
    /// Scans write their pages instead of reading them.
    pub scan_writes: bool,
    /// Seed.
    pub seed: u64,
}

impl ScanMixTrace {
    /// The mix described by `p`.
    pub fn new(p: ScanMixParams) -> Result<Self, TraceError> {
        if p.scans > 0 && p.scan_length == 0 {
            return Err(TraceError::Invalid("scan-mix: scan-length must be at least 1".into()));
        }
        if p.scans > 0 && p.scan_length > p.scan_pages {
            return Err(TraceError::Invalid(format!(
                "scan-mix: scan-length ({}) exceeds scan-pages ({}); scans do not wrap",
                p.scan_length, p.scan_pages
            )));
        }
        if p.pages.checked_add(p.scan_pages).is_none() {
            return Err(TraceError::Invalid("scan-mix: pages + scan-pages overflows".into()));
        }
        if p.scans.checked_mul(p.scan_length).and_then(|s| s.checked_add(p.requests)).is_none() {
            return Err(TraceError::Invalid("scan-mix: the total number of requests overflows".into()));
        }
        Ok(ScanMixTrace {
            zipf: ZipfTrace::new(p.requests, p.pages, p.write_ratio, p.locality, p.seed)?,
            requests: p.requests,
            scans: p.scans,
            scan_length: p.scan_length,
            scan_start: p.pages,
            scan_pages: p.scan_pages,
            scan_kind: if p.scan_writes { AccessKind::Write } else { AccessKind::Read },
            zipf_done: 0,
            scans_done: 0,
            scan_next: 0,
            scan_left: 0,
        })
    }

    /// Zipf references after which scan `j` starts.
    #[inline]
    fn scan_position(&self, j: u64) -> u64 {
        ((u128::from(j + 1) * u128::from(self.requests)) / u128::from(self.scans + 1)) as u64
    }

    #[inline]
    fn rng(&mut self) -> &mut PortableRng {
        &mut self.zipf.rng
    }
}

impl TraceSource for ScanMixTrace {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        while out.len() < max {
            if self.scan_left > 0 {
                out.push(Request { page: self.scan_next, kind: self.scan_kind, time_us: None });
                self.scan_next += 1;
                self.scan_left -= 1;
                continue;
            }
            if self.scans_done < self.scans && self.zipf_done == self.scan_position(self.scans_done) {
                let span = self.scan_pages - self.scan_length + 1;
                let offset = self.rng().below(span);
                self.scan_next = self.scan_start + offset;
                self.scan_left = self.scan_length;
                self.scans_done += 1;
                continue;
            }
            if self.zipf_done == self.requests {
                break;
            }
            out.push(self.zipf.next_request());
            self.zipf_done += 1;
        }
        Ok(out.len())
    }
}
