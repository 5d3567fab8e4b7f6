//! The Zipf trace of the AD-LRU paper (Jin et al., §4.1, formula (1)).
//!
//! The probability of referencing the i-th of N pages is
//!
//! ```text
//! P_i = 1 / (H_N^(1−θ) · i^(1−θ)),   θ = log a / log b,   H_N^s = 1^−s + 2^−s + … + N^−s
//! ```
//!
//! for an "a–b" locality (80–20: a = 0.8, b = 0.2, θ ≈ 0.1386, exponent s = 1 − θ ≈ 0.8614).
//! Following the paper, the i-th page is page number `i − 1`: the hot pages are the lowest page
//! numbers, so the hot set is spatially clustered, which matters for cluster- and block-based
//! policies (CFDC, FAB, BPLRU, REF). [`ZipfTrace::scattered`] instead maps rank `i` to a seeded
//! pseudo-random permutation of the pages (constant memory; off by default).
//!
//! Note on the locality: formula (1) reaches "a of the references to the hottest b of the
//! pages" only as N grows without bound. At the paper's N = 50,000 the hottest 20 % of the
//! pages receive 74.8 % of the references (75.4 % at N = 100,000, 76.9 % at N = 1,000,000);
//! [`ZipfSampler::mass_of_first`] computes the exact figure. The generator follows the formula
//! and does not correct this (the paper's distinct-page counts, 47,023 for Table 6 and 93,870
//! for Table 7, agree with the formula's expectations of 47,075 and 93,828).
//!
//! Sampling is exact for the distribution (up to double rounding) and O(1) per sample:
//! * up to [`TABLE_MAX_OUTCOMES`](super::table::TABLE_MAX_OUTCOMES) pages (16.7 million), by inverting a table of the cumulative
//!   distribution built with `libm::pow`, through a guide table (Chen and Asau's indexed
//!   search): one uniform draw per rank, 12 bytes of memory per page, shared between
//!   generators of the same shape;
//! * beyond, by rejection-inversion (Hörmann and Derflinger, "Rejection-inversion to generate
//!   variates from monotone discrete distributions", ACM TOMACS 6(3), 1996) in the formulation
//!   that handles every exponent s > 0 through `log1p`/`expm1` helpers: constant memory, one
//!   uniform draw per rank plus one per rejected candidate (about 1 % of them), and two or three
//!   `libm` transcendental functions per sample (several times slower).
//!
//! Random draws per request: the rank's, then one uniform for the access kind
//! (`unit < write_ratio` → write).

use std::sync::Arc;

use crate::rng::{Permutation, PortableRng, mix64};
use crate::{AccessKind, Request, TraceError, TraceSource};

use super::table::{InversionTable, TABLE_MAX_OUTCOMES, TableKind};
use super::{Locality, check_pages, check_write_ratio};

#[derive(Clone, Debug)]
enum Method {
    Table(Arc<InversionTable>),
    RejectionInversion { h_integral_x1: f64, h_integral_n: f64, cut: f64 },
}

/// Exact sampler of ranks `1..=n` with `P(k) ∝ k^−s`, `s > 0`.
///
/// Up to [`TABLE_MAX_OUTCOMES`](super::table::TABLE_MAX_OUTCOMES) ranks it inverts a table of
/// the cumulative distribution built with `libm::pow` (one uniform draw, a guide-table lookup
/// and about one comparison per sample; 12 bytes of memory per rank, shared between samplers of
/// the same shape); beyond, it uses rejection-inversion (Hörmann and Derflinger), which needs
/// no memory but two or three transcendental functions per sample. Both are exact for the
/// distribution up to double rounding; they consume the random stream differently, so the two
/// methods give different (equally distributed) traces for the same seed.
#[derive(Clone, Debug)]
pub struct ZipfSampler {
    n: u64,
    exponent: f64,
    method: Method,
}

impl ZipfSampler {
    /// A sampler over `1..=n` (`n >= 1`) with exponent `s > 0` (finite).
    pub fn new(n: u64, exponent: f64) -> Result<Self, TraceError> {
        Self::check(n, exponent)?;
        if n <= TABLE_MAX_OUTCOMES { Self::with_table(n, exponent) } else { Self::rejection_inversion(n, exponent) }
    }

    /// A sampler that inverts a table whatever `n` (12 bytes per rank; for comparisons: beyond
    /// [`TABLE_MAX_OUTCOMES`](super::table::TABLE_MAX_OUTCOMES) it is slower than
    /// rejection-inversion). At most 2^26 ranks.
    pub fn with_table(n: u64, exponent: f64) -> Result<Self, TraceError> {
        Self::check(n, exponent)?;
        if n > 1 << 26 {
            return Err(TraceError::Invalid(format!("zipf: a table of {n} ranks is too large (at most 2^26)")));
        }
        let table = InversionTable::shared(TableKind::Zipf, n, exponent, || {
            let mut cdf = Vec::with_capacity(n as usize);
            let mut acc = 0.0;
            for k in 1..=n {
                acc += libm::pow(k as f64, -exponent);
                cdf.push(acc);
            }
            for c in &mut cdf {
                *c /= acc;
            }
            cdf
        });
        Ok(ZipfSampler { n, exponent, method: Method::Table(table) })
    }

    /// A sampler that uses rejection-inversion whatever `n` (constant memory).
    pub fn rejection_inversion(n: u64, exponent: f64) -> Result<Self, TraceError> {
        Self::check(n, exponent)?;
        let mut z = ZipfSampler {
            n,
            exponent,
            method: Method::RejectionInversion { h_integral_x1: 0.0, h_integral_n: 0.0, cut: 0.0 },
        };
        let h_integral_x1 = z.h_integral(1.5) - 1.0;
        let h_integral_n = z.h_integral(n as f64 + 0.5);
        let cut = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z.method = Method::RejectionInversion { h_integral_x1, h_integral_n, cut };
        Ok(z)
    }

    fn check(n: u64, exponent: f64) -> Result<(), TraceError> {
        if n == 0 {
            return Err(TraceError::Invalid("zipf: the number of pages must be at least 1".into()));
        }
        if !(exponent.is_finite() && exponent > 0.0) {
            return Err(TraceError::Invalid(format!("zipf: the exponent must be positive, got {exponent}")));
        }
        Ok(())
    }

    /// The sampler of the paper's formula (1) for an a–b locality: exponent `1 − log a / log b`.
    pub fn for_locality(n: u64, locality: Locality) -> Result<Self, TraceError> {
        Self::new(n, 1.0 - locality.theta())
    }

    /// The exponent `s`.
    pub fn exponent(&self) -> f64 {
        self.exponent
    }

    /// `true` when sampling by table inversion, `false` for rejection-inversion.
    pub fn uses_table(&self) -> bool {
        matches!(self.method, Method::Table(_))
    }

    /// Exact probability mass of ranks `1..=k` (an O(n) sum; for tests and reports).
    pub fn mass_of_first(&self, k: u64) -> f64 {
        let mut head = 0.0;
        let mut total = 0.0;
        // Sum from the smallest terms up for accuracy.
        for i in (1..=self.n).rev() {
            let w = libm::pow(i as f64, -self.exponent);
            total += w;
            if i <= k {
                head += w;
            }
        }
        head / total
    }

    /// Exact probability of rank `k` (an O(n) normalisation; for tests).
    pub fn probability(&self, k: u64) -> f64 {
        let total: f64 = (1..=self.n).rev().map(|i| libm::pow(i as f64, -self.exponent)).sum();
        libm::pow(k as f64, -self.exponent) / total
    }

    /// A rank in `1..=n`.
    #[inline]
    pub fn sample(&self, rng: &mut PortableRng) -> u64 {
        match &self.method {
            Method::Table(table) => table.index(rng.unit_f64()) as u64 + 1,
            &Method::RejectionInversion { h_integral_x1, h_integral_n, cut } => loop {
                let u = h_integral_n + rng.unit_f64() * (h_integral_x1 - h_integral_n);
                let x = self.h_integral_inverse(u);
                // x is positive; `as` saturates, and the clamp keeps k in 1..=n.
                let k = ((x + 0.5) as u64).clamp(1, self.n);
                let kf = k as f64;
                if kf - x <= cut || u >= self.h_integral(kf + 0.5) - self.h(kf) {
                    return k;
                }
            },
        }
    }

    /// The hat function h(x) = x^−s.
    #[inline]
    fn h(&self, x: f64) -> f64 {
        libm::exp(-self.exponent * libm::log(x))
    }

    /// H(x) = ∫₁ˣ h = (x^(1−s) − 1) / (1 − s), continuous at s = 1 (where it is log x).
    #[inline]
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = libm::log(x);
        helper2((1.0 - self.exponent) * log_x) * log_x
    }

    /// The inverse of H.
    #[inline]
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.exponent);
        if t < -1.0 {
            // Only rounding can push t below −1 (the domain edge for s < 1).
            t = -1.0;
        }
        libm::exp(helper1(t) * x)
    }
}

/// log(1 + x) / x, continued to 1 at x = 0.
#[inline]
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 { libm::log1p(x) / x } else { 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x)) }
}

/// (exp(x) − 1) / x, continued to 1 at x = 0.
#[inline]
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 { libm::expm1(x) / x } else { 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x)) }
}

/// A stream of Zipf-distributed page references (see the module documentation).
#[derive(Clone, Debug)]
pub struct ZipfTrace {
    pub(super) rng: PortableRng,
    sampler: ZipfSampler,
    permutation: Option<Permutation>,
    write_ratio: f64,
    remaining: u64,
}

impl ZipfTrace {
    /// `requests` references over pages `0..pages`, rank i → page i − 1.
    pub fn new(requests: u64, pages: u64, write_ratio: f64, locality: Locality, seed: u64) -> Result<Self, TraceError> {
        Self::with_exponent(requests, pages, write_ratio, 1.0 - locality.theta(), seed)
    }

    /// `requests` references over pages `0..pages` with P(rank i) ∝ i^−`exponent` (the
    /// conventional Zipf α; formula (1) of the AD-LRU paper is α = 1 − θ).
    pub fn with_exponent(
        requests: u64,
        pages: u64,
        write_ratio: f64,
        exponent: f64,
        seed: u64,
    ) -> Result<Self, TraceError> {
        check_pages("zipf", pages)?;
        check_write_ratio(write_ratio)?;
        Ok(ZipfTrace {
            rng: PortableRng::new(seed),
            sampler: ZipfSampler::new(pages, exponent)?,
            permutation: None,
            write_ratio,
            remaining: requests,
        })
    }

    /// Maps ranks to pages through a seeded permutation instead of rank i → page i − 1. The
    /// permutation's seed is derived from `seed`, so the reference stream itself is unchanged.
    pub fn scattered(mut self, seed: u64) -> Self {
        self.permutation = Some(Permutation::new(self.sampler.n, mix64(seed ^ 0x005C_A77E_2ED0)));
        self
    }

    /// The next reference (the caller checks `remaining`).
    #[inline]
    pub(crate) fn next_request(&mut self) -> Request {
        let rank = self.sampler.sample(&mut self.rng);
        let page = match &self.permutation {
            None => rank - 1,
            Some(p) => p.apply(rank - 1),
        };
        let kind = if self.rng.chance(self.write_ratio) { AccessKind::Write } else { AccessKind::Read };
        Request { page, kind, time_us: None }
    }
}

impl TraceSource for ZipfTrace {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let n = self.remaining.min(max as u64);
        out.reserve(n as usize);
        for _ in 0..n {
            let r = self.next_request();
            out.push(r);
        }
        self.remaining -= n;
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pearson's chi-square statistic of `counts` against the exact probabilities.
    fn chi_square(sampler: &ZipfSampler, counts: &[u64], draws: u64) -> f64 {
        counts
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let e = sampler.probability(i as u64 + 1) * draws as f64;
                (c as f64 - e).powi(2) / e
            })
            .sum()
    }

    #[test]
    fn sampler_matches_the_exact_distribution() {
        // 10 ranks → 9 degrees of freedom; the 99.9 % quantile of χ²(9) is 27.9.
        for (exponent, table) in [
            (0.8614, true),
            (0.3, true),
            (1.0, true),
            (1.7, true),
            (0.8614, false),
            (0.3, false),
            (1.0, false),
            (1.7, false),
        ] {
            let z = if table { ZipfSampler::new(10, exponent) } else { ZipfSampler::rejection_inversion(10, exponent) }
                .unwrap();
            assert_eq!(z.uses_table(), table);
            let mut rng = PortableRng::new(5);
            let draws = 400_000u64;
            let mut counts = vec![0u64; 10];
            for _ in 0..draws {
                let k = z.sample(&mut rng);
                assert!((1..=10).contains(&k));
                counts[k as usize - 1] += 1;
            }
            let chi = chi_square(&z, &counts, draws);
            assert!(chi < 27.9, "s={exponent}, table {table}: chi² = {chi}, counts {counts:?}");
        }
    }

    #[test]
    fn both_methods_give_the_formulas_head_mass() {
        let n = 2000;
        for z in [ZipfSampler::new(n, 0.8614).unwrap(), ZipfSampler::rejection_inversion(n, 0.8614).unwrap()] {
            let mut rng = PortableRng::new(11);
            let draws = 500_000;
            let head = (0..draws).filter(|_| z.sample(&mut rng) <= n / 5).count() as f64 / draws as f64;
            let exact = z.mass_of_first(n / 5);
            // Binomial standard deviation ≈ 0.0006.
            assert!((head - exact).abs() < 0.003, "table {}: {head} vs {exact}", z.uses_table());
        }
    }

    #[test]
    fn samplers_of_the_same_shape_share_their_table() {
        let a = ZipfSampler::new(12_345, 0.5).unwrap();
        let b = ZipfSampler::new(12_345, 0.5).unwrap();
        match (&a.method, &b.method) {
            (Method::Table(x), Method::Table(y)) => assert!(Arc::ptr_eq(x, y)),
            _ => panic!("expected tables"),
        }
    }

    #[test]
    fn sampler_handles_one_page_and_huge_ranges() {
        let mut rng = PortableRng::new(1);
        let one = ZipfSampler::new(1, 0.86).unwrap();
        assert!((0..100).all(|_| one.sample(&mut rng) == 1));
        let huge = ZipfSampler::new(10_000_000_000, 0.86).unwrap();
        assert!(!huge.uses_table());
        assert!((0..10_000).all(|_| (1..=10_000_000_000).contains(&huge.sample(&mut rng))));
        assert!(ZipfSampler::new(0, 0.86).is_err());
        assert!(ZipfSampler::new(10, 0.0).is_err());
        assert!(ZipfSampler::new(10, f64::NAN).is_err());
    }

    #[test]
    fn eighty_twenty_exponent_and_exact_head_mass() {
        let z = ZipfSampler::for_locality(50_000, Locality::new(80.0, 20.0).unwrap()).unwrap();
        assert!((z.exponent() - 0.861_353_116).abs() < 1e-9);
        // The formula's hottest 20 % get 74.8 % of the mass at N = 50,000 (see module docs).
        let head = z.mass_of_first(10_000);
        assert!((head - 0.748_255).abs() < 1e-5, "{head}");
    }

    #[test]
    fn scattering_keeps_the_rank_stream_and_permutes_pages() {
        let loc = Locality::new(80.0, 20.0).unwrap();
        let plain = crate::collect(&mut ZipfTrace::new(2000, 1000, 0.5, loc, 3).unwrap()).unwrap();
        let mut scattered = ZipfTrace::new(2000, 1000, 0.5, loc, 3).unwrap().scattered(3);
        let perm = Permutation::new(1000, mix64(3 ^ 0x005C_A77E_2ED0));
        let s = crate::collect(&mut scattered).unwrap();
        for (a, b) in plain.iter().zip(&s) {
            assert_eq!(perm.apply(a.page), b.page);
            assert_eq!(a.kind, b.kind);
        }
    }
}
