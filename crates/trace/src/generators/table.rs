//! Inversion tables for the skewed generators: sampling a discrete distribution over `0..n` by
//! inverting its cumulative distribution, fast.
//!
//! The table holds the cumulative probabilities `cdf[0..n]` (non-decreasing, `cdf[n − 1] = 1`)
//! and a guide of `n` cells, cell `g` holding the first index whose cumulative probability
//! exceeds `g / n` (Chen and Asau's indexed search). A uniform `u` in `[0, 1)` maps to the
//! first index `k` with `cdf[k] > u`: one guide lookup and, on average, about one comparison.
//! Memory: 12 bytes per outcome. Tables are built with `libm` only, so they are the same on
//! every machine, and are shared between generators of the same shape through a cache that
//! holds them weakly (a parameter sweep opens the same trace many times; the memory goes with
//! the last user).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Most outcomes for which the generators build a table (3 MiB at this size); larger
/// distributions are sampled without one.
///
/// A table lookup costs two dependent memory accesses, so it wins while the table stays in the
/// CPU caches. Measured (`benches/decode.rs`, 2-core AMD EPYC VM, 2 MiB L2): over 50,000 Zipf
/// ranks about 2.3 times faster than rejection-inversion; over 1,000,000 ranks (12 MiB) 1.4
/// times faster on a quiet machine but slower when other processes compete for the shared L3
/// cache (as the simulator's own data will); over 10,000,000 ranks 1.8 times slower. The limit
/// is therefore conservative. It is part of the definition of the generated traces (it selects
/// the sampling method, and the methods consume the random stream differently): changing it
/// changes the traces, which the golden tests would show.
pub const TABLE_MAX_OUTCOMES: u64 = 1 << 18;

/// Which distribution a cached table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum TableKind {
    /// Zipf over ranks, keyed by the exponent's bits.
    Zipf,
    /// Gray's self-similar distribution, keyed by the skew's bits.
    SelfSimilar,
}

#[derive(Debug)]
pub(crate) struct InversionTable {
    pub(crate) cdf: Vec<f64>,
    guide: Vec<u32>,
}

impl InversionTable {
    /// A table over `cdf`, which must be non-empty; it is made non-decreasing and its last
    /// entry 1, so every `u < 1` finds an index.
    pub(crate) fn from_cdf(mut cdf: Vec<f64>) -> InversionTable {
        let n = cdf.len();
        assert!(n > 0 && n as u64 <= 1 << 26, "table of {n} outcomes");
        for k in 1..n {
            if cdf[k] < cdf[k - 1] {
                cdf[k] = cdf[k - 1];
            }
        }
        cdf[n - 1] = 1.0;
        let mut guide = Vec::with_capacity(n);
        let mut k = 0usize;
        for g in 0..n {
            let threshold = g as f64 / n as f64;
            while cdf[k] <= threshold {
                k += 1;
            }
            guide.push(k as u32);
        }
        InversionTable { cdf, guide }
    }

    /// The cached table of `kind` over `n` outcomes with parameter `param`, built by `build`
    /// when absent.
    pub(crate) fn shared(kind: TableKind, n: u64, param: f64, build: impl FnOnce() -> Vec<f64>) -> Arc<InversionTable> {
        type Cache = Mutex<HashMap<(TableKind, u64, u64), Weak<InversionTable>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let key = (kind, n, param.to_bits());
        let mut map = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(table) = map.get(&key).and_then(Weak::upgrade) {
            return table;
        }
        map.retain(|_, weak| weak.strong_count() > 0);
        let table = Arc::new(InversionTable::from_cdf(build()));
        map.insert(key, Arc::downgrade(&table));
        table
    }

    /// The first index `k` with `cdf[k] > u`, for `0 <= u < 1`.
    #[inline]
    pub(crate) fn index(&self, u: f64) -> usize {
        let n = self.cdf.len();
        let g = ((u * n as f64) as usize).min(n - 1);
        let mut k = self.guide[g] as usize;
        // The guide cell is right up to the rounding of g / n and u · n; walk to the exact index.
        while k > 0 && self.cdf[k - 1] > u {
            k -= 1;
        }
        while self.cdf[k] <= u {
            k += 1;
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::PortableRng;

    #[test]
    fn lookup_equals_a_linear_search() {
        let shapes: Vec<Vec<f64>> = vec![
            vec![1.0],
            vec![0.5, 1.0],
            vec![0.0, 0.0, 0.3, 0.3, 0.3, 1.0],
            (1..=1000).map(|k| (k as f64 / 1000.0).powi(3)).collect(),
            (1..=977).map(|k| 1.0 - (-(k as f64) / 50.0).exp()).collect(),
        ];
        for cdf in shapes {
            let table = InversionTable::from_cdf(cdf);
            let naive = |u: f64| table.cdf.iter().position(|&c| c > u).unwrap();
            let mut probes = vec![0.0, 0.5, 1.0 - f64::EPSILON / 2.0];
            for &c in &table.cdf {
                probes.extend([c, f64::from_bits(c.to_bits().saturating_sub(1)), f64::from_bits(c.to_bits() + 1)]);
            }
            let mut rng = PortableRng::new(table.cdf.len() as u64);
            probes.extend((0..10_000).map(|_| rng.unit_f64()));
            for u in probes.into_iter().filter(|u| (0.0..1.0).contains(u)) {
                assert_eq!(table.index(u), naive(u), "n={} u={u}", table.cdf.len());
            }
        }
    }

    #[test]
    fn tables_are_repaired_to_be_monotone_and_complete() {
        let t = InversionTable::from_cdf(vec![0.2, 0.1, 0.7, 0.9999]);
        assert_eq!(t.cdf, [0.2, 0.2, 0.7, 1.0]);
        assert_eq!(t.index(0.15), 0);
        assert_eq!(t.index(0.2), 2);
        assert_eq!(t.index(0.99995), 3);
    }

    #[test]
    fn tables_of_the_same_shape_are_shared() {
        let build = || (1..=100).map(|k| k as f64 / 100.0).collect();
        let a = InversionTable::shared(TableKind::Zipf, 100, 0.25, build);
        let b = InversionTable::shared(TableKind::Zipf, 100, 0.25, || unreachable!("cached"));
        assert!(Arc::ptr_eq(&a, &b));
        let c = InversionTable::shared(TableKind::SelfSimilar, 100, 0.25, build);
        assert!(!Arc::ptr_eq(&a, &c));
    }
}
