//! The self-similar distribution of Gray, Sundaresan, Englert, Baclawski and Weinberger,
//! "Quickly generating billion-record synthetic databases" (SIGMOD 1994), used by the AD-LRU
//! paper's 100-million-request trace (§4.6) and by CFDC's B*-tree workload.
//!
//! With skew `h` (80–20 → h = 0.2) over N pages:
//!
//! ```text
//! value = 1 + floor(N · u^(log h / log(1 − h))),  u uniform in [0, 1),  clamped to N
//! page  = value − 1
//! ```
//!
//! so the first h·N pages receive exactly a fraction 1 − h of the references (at every scale:
//! the distribution is self-similar), and page 0 is the hottest (hot set clustered at low page
//! numbers, like the Zipf trace; [`SelfSimilarTrace::scattered`] spreads it with a seeded
//! permutation instead). `pow` and `log` come from `libm`.
//!
//! Evaluation: `floor(N·u^e) <= j` exactly when `u < ((j + 1)/N)^(1/e)`, so up to
//! [`TABLE_MAX_OUTCOMES`](super::table::TABLE_MAX_OUTCOMES) pages the generator inverts a table
//! of these bounds (built once with `libm::pow`, 12 bytes per page, shared between generators
//! of the same shape), which is faster while the table stays in the CPU caches. Larger page
//! counts evaluate the formula per request, computing `u^e` as `exp(e · ln u)` (`libm`), about
//! twice as fast as `libm::pow`. Either way, for the same `u` the page is the formula's except
//! when `N·u^e` falls within rounding error of an integer (the tests compare both evaluations
//! with `pow` on a million draws and find no difference).
//!
//! Draws per request: one uniform for the page, then one for the kind (`unit < write_ratio`).

use std::sync::Arc;

use crate::rng::{Permutation, PortableRng, mix64};
use crate::{AccessKind, Request, TraceError, TraceSource};

use super::table::{InversionTable, TABLE_MAX_OUTCOMES, TableKind};
use super::{Locality, check_pages, check_write_ratio};

/// A stream of self-similar page references.
#[derive(Clone, Debug)]
pub struct SelfSimilarTrace {
    rng: PortableRng,
    pages: u64,
    pages_f64: f64,
    power: f64,
    table: Option<Arc<InversionTable>>,
    permutation: Option<Permutation>,
    write_ratio: f64,
    remaining: u64,
}

impl SelfSimilarTrace {
    /// `requests` references over pages `0..pages` with the skew `h = b` of an a–b locality.
    pub fn new(requests: u64, pages: u64, write_ratio: f64, locality: Locality, seed: u64) -> Result<Self, TraceError> {
        check_pages("self-similar", pages)?;
        check_write_ratio(write_ratio)?;
        if pages > 1 << 53 {
            return Err(TraceError::Invalid(format!(
                "self-similar: at most 2^53 pages (the formula works in double precision), got {pages}"
            )));
        }
        let h = locality.b();
        let power = libm::log(h) / libm::log(1.0 - h);
        let table = (pages <= TABLE_MAX_OUTCOMES).then(|| {
            // floor(N·u^e) <= j  ⇔  u < ((j + 1) / N)^(1/e): the cumulative distribution.
            let inverse = libm::log(1.0 - h) / libm::log(h);
            InversionTable::shared(TableKind::SelfSimilar, pages, h, || {
                (1..=pages).map(|j| libm::pow(j as f64 / pages as f64, inverse)).collect()
            })
        });
        Ok(SelfSimilarTrace {
            rng: PortableRng::new(seed),
            pages,
            pages_f64: pages as f64,
            power,
            table,
            permutation: None,
            write_ratio,
            remaining: requests,
        })
    }

    /// Maps `value − 1` through a seeded permutation of the pages instead of using it directly
    /// (the permutation's seed is derived from `seed`; the draws are unchanged).
    pub fn scattered(mut self, seed: u64) -> Self {
        self.permutation = Some(Permutation::new(self.pages, mix64(seed ^ 0x005C_A77E_2ED0)));
        self
    }
}

impl TraceSource for SelfSimilarTrace {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let n = self.remaining.min(max as u64);
        out.reserve(n as usize);
        for _ in 0..n {
            let u = self.rng.unit_f64();
            let rank = match &self.table {
                Some(table) => table.index(u) as u64,
                // value − 1 = floor(N · u^power), clamped to N − 1 (u = 0 gives exp(−∞) = 0).
                None => ((self.pages_f64 * libm::exp(self.power * libm::log(u))) as u64).min(self.pages - 1),
            };
            let page = match &self.permutation {
                None => rank,
                Some(p) => p.apply(rank),
            };
            let kind = if self.rng.chance(self.write_ratio) { AccessKind::Write } else { AccessKind::Read };
            out.push(Request { page, kind, time_us: None });
        }
        self.remaining -= n;
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_direct_evaluation_returns_the_formulas_page() {
        let pages = 10_000_000u64;
        let trace = SelfSimilarTrace::new(0, pages, 0.0, Locality::eighty_twenty(), 1).unwrap();
        assert!(trace.table.is_none());
        let mut rng = PortableRng::new(3);
        for _ in 0..1_000_000 {
            let u = rng.unit_f64();
            let by_pow = libm::pow(u, trace.power);
            let by_exp = libm::exp(trace.power * libm::log(u));
            assert_eq!((pages as f64 * by_pow) as u64, (pages as f64 * by_exp) as u64, "u = {u}");
        }
    }

    #[test]
    fn the_table_returns_the_formulas_page() {
        let pages = 200_000u64;
        let locality = Locality::eighty_twenty();
        let trace = SelfSimilarTrace::new(0, pages, 0.0, locality, 1).unwrap();
        let table = trace.table.as_ref().expect("a table at this size");
        let mut rng = PortableRng::new(2);
        let mut differ = 0;
        for _ in 0..1_000_000 {
            let u = rng.unit_f64();
            let formula = ((pages as f64 * libm::pow(u, trace.power)) as u64).min(pages - 1);
            if table.index(u) as u64 != formula {
                differ += 1;
            }
        }
        // Only rounding at the boundaries may differ; none did on this sample.
        assert_eq!(differ, 0);
    }
}
