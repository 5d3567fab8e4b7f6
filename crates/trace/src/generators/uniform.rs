//! Uniform random references: the random, read-most and write-most traces of the AD-LRU paper
//! (Tables 3–5: 100,000 references over pages 0..49,999 with write ratios 0.5, 0.1, 0.9).
//!
//! Draws per request, in this order: the page, `below(pages)` (exactly uniform, see
//! [`crate::rng`]), then the kind, `unit < write_ratio` → write.

use crate::rng::PortableRng;
use crate::{AccessKind, Request, TraceError, TraceSource};

use super::{check_pages, check_write_ratio};

/// A stream of uniformly distributed page references.
#[derive(Clone, Debug)]
pub struct UniformTrace {
    rng: PortableRng,
    pages: u64,
    write_ratio: f64,
    remaining: u64,
}

impl UniformTrace {
    /// `requests` references over pages `0..pages`, each a write with probability `write_ratio`.
    pub fn new(requests: u64, pages: u64, write_ratio: f64, seed: u64) -> Result<Self, TraceError> {
        check_pages("uniform", pages)?;
        check_write_ratio(write_ratio)?;
        Ok(UniformTrace { rng: PortableRng::new(seed), pages, write_ratio, remaining: requests })
    }
}

impl TraceSource for UniformTrace {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let n = self.remaining.min(max as u64);
        out.reserve(n as usize);
        for _ in 0..n {
            let page = self.rng.below(self.pages);
            let kind = if self.rng.chance(self.write_ratio) { AccessKind::Write } else { AccessKind::Read };
            out.push(Request { page, kind, time_us: None });
        }
        self.remaining -= n;
        Ok(n as usize)
    }
}
