//! The model of §5: the distribution p(d) of the distance between consecutive writes, and the
//! average write cost `cost_avg = Σ_{d=1}^{|L|} p(d) · cost(d)`, hence writes per second for a
//! given logical space, pool size and cost curve.
//!
//! # p(d) under the paper's assumption (pool sectors uniformly placed)
//!
//! The last written sector f holds live data; the |P| pool sectors lie uniformly at random among
//! the other |F| − 1 sectors. The nearest pool sector after f is at distance d exactly when the
//! d − 1 sectors after f hold no pool sector and the d-th does: the other |P| − 1 pool sectors
//! are among the |F| − 1 − d sectors beyond it. So
//!
//! ```text
//!           C(|F| − 1 − d, |P| − 1)
//!   p(d) = ────────────────────────    d = 1 .. |L|      (|F| − |P| = |L|)
//!              C(|F| − 1, |P|)
//! ```
//!
//! The text of the paper prints this garbled (`C(|P|−d−1, |P|−1) / C(|P|−1, |P|)`, which is
//! not a probability); the formula above is the reading that makes it one, and it sums to 1 by
//! the hockey-stick identity `Σ_{d≥1} C(|F|−1−d, |P|−1) = C(|F|−1, |P|)`. It is evaluated by
//! the ratio `p(d+1) / p(d) = (|L| − d) / (|F| − 1 − d)` from `p(1) = |P| / (|F| − 1)`, in
//! floating point, without factorials. Mean distance: `|F| / (|P| + 1)`.
//!
//! # The forward sweep (this implementation; not in the paper)
//!
//! The paper observes (§6) that its experiments beat the model because writes go one way only.
//! A steady-state argument captures why. The cursor takes every pool sector it passes, so right
//! behind it no free sector is left; a used sector becomes free again when its logical sector is
//! rewritten (probability 1/|L| per write). The sectors just ahead of the cursor were passed one
//! revolution ago — `|F| / v` writes ago if the cursor advances `v` sectors per write — so they are
//! free with probability `ρ = 1 − exp(−|F| / (v·|L|))`, and the cursor, meeting free sectors at
//! density ρ, advances `v = 1/ρ` per write. Hence ρ solves
//!
//! ```text
//!   ρ = 1 − exp(−ρ · |F| / |L|)
//! ```
//!
//! and distances are about geometric: `p_sweep(d) = ρ (1 − ρ)^(d−1)`. (Free sectors then add up
//! to `|F| − v·|L|·ρ = |P|`, as they must.) At |P| = 50% of |L| this gives a mean distance of
//! 1.72 against 3.0 for the uniform model. `predict` reports both; the tests compare them with
//! the layer's measured distances.
//!
//! # cost(d)
//!
//! [`CostCurve`] is either measured ([`CostCurve::measured`], e.g. from [`super::probe`] rows or
//! a probe CSV) or the paper's parametric form (Definition 2, `cost(d) ∝ |d|` for `|d| ≤ d_max`)
//! made concrete as
//!
//! ```text
//!   cost(d) = c_random · min(|d|, d_max) / d_max
//! ```
//!
//! — proportional to |d| as the paper states, and continuous at d_max, where writes cost what a
//! random write costs (the paper's devices: sequential writes 20–100× faster than random ones,
//! d_max 32 for its USB key and 256 for its SSD). An affine form with a separate sequential cost
//! would add a parameter the paper does not have.

use serde::Serialize;

use super::probe::{Pattern, ProbeRow};
use crate::device::DeviceError;

/// Write cost as a function of the distance from the previous write.
#[derive(Debug, Clone, PartialEq)]
pub enum CostCurve {
    /// `cost(d) = random_ns · min(|d|, d_max) / d_max`.
    Parametric {
        /// Distance from which writes cost as much as random writes.
        d_max: u64,
        /// Cost of a random write, in nanoseconds.
        random_ns: f64,
    },
    /// Measured points, linearly interpolated; below the first point, the first point's cost;
    /// beyond the last, `beyond_ns`.
    Measured {
        /// `(distance ≥ 1, cost in ns)`, increasing distances.
        points: Vec<(u64, f64)>,
        /// Cost beyond the last point: the measured random-write cost if there is one, else the
        /// last point's cost.
        beyond_ns: f64,
    },
}

fn config(message: String) -> DeviceError {
    DeviceError::Config(message)
}

impl CostCurve {
    /// The parametric curve; `d_max ≥ 1` and a positive finite cost are required.
    pub fn parametric(d_max: u64, random_ns: f64) -> Result<Self, DeviceError> {
        if d_max == 0 {
            return Err(config("d_max must be at least 1".into()));
        }
        if !random_ns.is_finite() || random_ns <= 0.0 {
            return Err(config(format!("the random write cost must be positive (got {random_ns} ns)")));
        }
        Ok(CostCurve::Parametric { d_max, random_ns })
    }

    /// A measured curve from `(distance, cost_ns)` points with positive distances (others are
    /// ignored: the layer only writes forward) and `random_ns`, the cost of random writes, if
    /// measured. Duplicate distances keep the first.
    pub fn measured(points: &[(i64, f64)], random_ns: Option<f64>) -> Result<Self, DeviceError> {
        let mut pts: Vec<(u64, f64)> = points.iter().filter(|(d, _)| *d > 0).map(|&(d, c)| (d as u64, c)).collect();
        // A write takes time: a cost of zero would predict infinitely many writes per second.
        if let Some(&(d, c)) = pts.iter().find(|(_, c)| !c.is_finite() || *c <= 0.0) {
            return Err(config(format!("cost {c} at distance {d} is not a positive number")));
        }
        pts.sort_by_key(|p| p.0);
        pts.dedup_by_key(|p| p.0);
        let Some(&(_, last)) = pts.last() else {
            return Err(config("the cost curve has no point at a positive distance".into()));
        };
        let beyond_ns = match random_ns {
            Some(r) if r.is_finite() && r > 0.0 => r,
            Some(r) => return Err(config(format!("random write cost {r} is not a positive number"))),
            None => last,
        };
        Ok(CostCurve::Measured { points: pts, beyond_ns })
    }

    /// The curve from probe rows: mean latency per fixed distance, and the random row if any.
    pub fn from_probe(rows: &[ProbeRow]) -> Result<Self, DeviceError> {
        let points: Vec<(i64, f64)> = rows
            .iter()
            .filter_map(|r| match r.pattern {
                Pattern::Distance(d) => Some((d, r.mean_ns)),
                Pattern::Random => None,
            })
            .collect();
        let random = rows.iter().find(|r| r.pattern == Pattern::Random).map(|r| r.mean_ns);
        Self::measured(&points, random)
    }

    /// The curve from a probe CSV (as written by `flashbuf gather probe`): a header line naming
    /// at least `distance` and `mean_us` columns; `distance` is an integer or `random`. Lines
    /// are numbered from 1 in errors.
    pub fn from_csv(text: &str) -> Result<Self, DeviceError> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            return Err(config("the cost CSV is empty".into()));
        };
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        let col = |name: &str| {
            cols.iter()
                .position(|c| *c == name)
                .ok_or_else(|| config(format!("the cost CSV has no `{name}` column (header: {header})")))
        };
        let (cd, cm) = (col("distance")?, col("mean_us")?);
        let mut points = Vec::new();
        let mut random = None;
        for (i, line) in lines {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let bad = |what: &str| config(format!("cost CSV line {}: {what}: {line}", i + 1));
            let (d, m) =
                (f.get(cd).ok_or_else(|| bad("missing distance"))?, f.get(cm).ok_or_else(|| bad("missing mean_us"))?);
            let mean_ns = m.parse::<f64>().map_err(|_| bad("mean_us is not a number"))? * 1000.0;
            if *d == "random" {
                random = Some(mean_ns);
            } else {
                points.push((d.parse::<i64>().map_err(|_| bad("distance is not an integer or `random`"))?, mean_ns));
            }
        }
        Self::measured(&points, random)
    }

    /// cost(d) in nanoseconds, for d ≥ 1.
    pub fn cost_ns(&self, d: u64) -> f64 {
        match self {
            CostCurve::Parametric { d_max, random_ns } => random_ns * d.min(*d_max) as f64 / *d_max as f64,
            CostCurve::Measured { points, beyond_ns } => {
                let i = points.partition_point(|p| p.0 < d);
                if i == points.len() {
                    return *beyond_ns;
                }
                let (d1, c1) = points[i];
                if d1 == d || i == 0 {
                    return c1;
                }
                let (d0, c0) = points[i - 1];
                c0 + (c1 - c0) * (d - d0) as f64 / (d1 - d0) as f64
            }
        }
    }

    /// The cost of a random write: c_random, or the measured random (or farthest) cost.
    pub fn random_ns(&self) -> f64 {
        match self {
            CostCurve::Parametric { random_ns, .. } => *random_ns,
            CostCurve::Measured { beyond_ns, .. } => *beyond_ns,
        }
    }

    /// Short description for tables.
    pub fn describe(&self) -> String {
        match self {
            CostCurve::Parametric { d_max, random_ns } => {
                format!("cost(d) = {:.1} µs · min(d, {d_max}) / {d_max}", random_ns / 1000.0)
            }
            CostCurve::Measured { points, beyond_ns } => format!(
                "measured at {} distances ({}..{}), random {:.1} µs",
                points.len(),
                points[0].0,
                points[points.len() - 1].0,
                beyond_ns / 1000.0
            ),
        }
    }
}

/// p(d) of §5 for d = 1 ..= |L| (index 0 unused, 0): the distribution of the distance to the
/// nearest pool sector after f when the pool is uniformly placed. Errors: |L| = 0 or |P| = 0.
pub fn distance_distribution(logical: u64, pool: u64) -> Result<Vec<f64>, DeviceError> {
    check_sizes(logical, pool)?;
    let f = logical + pool;
    let mut p = vec![0.0; logical as usize + 1];
    let mut x = pool as f64 / (f - 1) as f64;
    for (d, slot) in p.iter_mut().enumerate().skip(1) {
        *slot = x;
        let d = d as u64;
        if d < logical {
            x *= (logical - d) as f64 / (f - 1 - d) as f64;
        }
    }
    Ok(p)
}

fn check_sizes(logical: u64, pool: u64) -> Result<(), DeviceError> {
    if logical == 0 {
        return Err(config("the logical space needs at least one sector".into()));
    }
    if pool == 0 {
        return Err(config("the pool needs at least one sector".into()));
    }
    Ok(())
}

/// ρ, the density of free sectors the forward sweep meets in steady state (module docs): the
/// root in (0, 1] of `ρ = 1 − exp(−ρ·|F|/|L|)`, by bisection to machine precision.
pub fn sweep_density(logical: u64, pool: u64) -> Result<f64, DeviceError> {
    check_sizes(logical, pool)?;
    let r = (logical + pool) as f64 / logical as f64;
    // g(ρ) = 1 − exp(−ρ r) − ρ is positive near 0 (slope r − 1 > 0) and negative at 1.
    let g = |x: f64| -(-x * r).exp_m1() - x;
    // Start where g > 0, just below the root: ρ ≈ 2(r − 1)/r² for small pools.
    let mut lo = (2.0 * (r - 1.0) / (r * r)).min(0.5);
    while g(lo) <= 0.0 && lo > 1e-300 {
        lo *= 0.5;
    }
    let mut hi = 1.0f64;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if g(mid) > 0.0 { lo = mid } else { hi = mid }
    }
    Ok(0.5 * (lo + hi))
}

/// What the model predicts for one pool size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// |L|.
    pub logical_sectors: u64,
    /// |P|.
    pub pool_sectors: u64,
    /// |P| / |L| in percent.
    pub pool_percent: f64,
    /// Σ d·p(d), the paper's model.
    pub mean_distance: f64,
    /// cost_avg of the paper's model, in ns.
    pub cost_avg_ns: f64,
    /// 1 / cost_avg.
    pub writes_per_s: f64,
    /// Mean distance of the forward-sweep model (1/ρ).
    pub sweep_mean_distance: f64,
    /// cost_avg under the forward-sweep model, in ns.
    pub sweep_cost_avg_ns: f64,
    /// 1 / sweep cost_avg.
    pub sweep_writes_per_s: f64,
    /// Random writes per second without the layer (1 / c_random).
    pub random_writes_per_s: f64,
}

/// The model's prediction for |L| = `logical`, |P| = `pool` and a cost curve (O(|L|)).
pub fn predict(logical: u64, pool: u64, cost: &CostCurve) -> Result<Prediction, DeviceError> {
    let p = distance_distribution(logical, pool)?;
    let rho = sweep_density(logical, pool)?;
    let (mut mean, mut avg) = (0.0, 0.0);
    let (mut s_mass, mut s_mean, mut s_avg) = (0.0, 0.0, 0.0);
    let mut q = rho; // ρ(1 − ρ)^(d − 1)
    for (d, &pd) in p.iter().enumerate().skip(1) {
        let c = cost.cost_ns(d as u64);
        mean += d as f64 * pd;
        avg += pd * c;
        s_mass += q;
        s_mean += d as f64 * q;
        s_avg += q * c;
        q *= 1.0 - rho;
    }
    // The geometric law is truncated at |L|: renormalise (the lost mass is (1 − ρ)^|L|).
    let (s_mean, s_avg) = (s_mean / s_mass, s_avg / s_mass);
    Ok(Prediction {
        logical_sectors: logical,
        pool_sectors: pool,
        pool_percent: 100.0 * pool as f64 / logical as f64,
        mean_distance: mean,
        cost_avg_ns: avg,
        writes_per_s: 1e9 / avg,
        sweep_mean_distance: s_mean,
        sweep_cost_avg_ns: s_avg,
        sweep_writes_per_s: 1e9 / s_avg,
        random_writes_per_s: 1e9 / cost.random_ns(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_sums_to_one_with_the_closed_form_mean() {
        for (l, p) in [(1u64, 1u64), (10, 1), (10, 5), (100, 5), (100, 300), (100_000, 50_000), (100_000, 5_000)] {
            let dist = distance_distribution(l, p).unwrap();
            let sum: f64 = dist.iter().sum();
            assert!((sum - 1.0).abs() < 1e-9, "L={l} P={p}: Σp = {sum}");
            let mean: f64 = dist.iter().enumerate().map(|(d, x)| d as f64 * x).sum();
            let expected = (l + p) as f64 / (p + 1) as f64;
            assert!((mean - expected).abs() < 1e-6 * expected, "L={l} P={p}: mean {mean} vs {expected}");
        }
    }

    #[test]
    fn p_matches_exact_binomials_on_a_small_case() {
        // |F| = 8, |P| = 3: p(d) = C(7 − d, 2) / C(7, 3) = C(7−d,2)/35.
        let dist = distance_distribution(5, 3).unwrap();
        let c2 = |n: u64| (n * n.saturating_sub(1) / 2) as f64;
        for d in 1..=5u64 {
            assert!((dist[d as usize] - c2(7 - d) / 35.0).abs() < 1e-12, "d={d}");
        }
    }

    #[test]
    fn sweep_density_solves_its_equation() {
        for (l, p) in [(100_000u64, 5_000u64), (100_000, 50_000), (100_000, 300_000), (1000, 1)] {
            let rho = sweep_density(l, p).unwrap();
            let r = (l + p) as f64 / l as f64;
            assert!((rho - (1.0 - (-rho * r).exp())).abs() < 1e-12, "L={l} P={p} ρ={rho}");
            assert!(rho > 0.0 && rho <= 1.0);
        }
        let rho = sweep_density(100_000, 50_000).unwrap();
        assert!((1.0 / rho - 1.71582).abs() < 1e-4, "mean distance {}", 1.0 / rho);
    }

    #[test]
    fn parametric_and_measured_costs() {
        let c = CostCurve::parametric(32, 32_000.0).unwrap();
        assert_eq!(
            (c.cost_ns(1), c.cost_ns(16), c.cost_ns(32), c.cost_ns(1000)),
            (1000.0, 16_000.0, 32_000.0, 32_000.0)
        );
        let m = CostCurve::measured(&[(0, 5.0), (1, 10.0), (4, 40.0), (-1, 99.0), (8, 50.0)], Some(100.0)).unwrap();
        assert_eq!(
            (m.cost_ns(1), m.cost_ns(2), m.cost_ns(4), m.cost_ns(6), m.cost_ns(9)),
            (10.0, 20.0, 40.0, 45.0, 100.0)
        );
        assert!(CostCurve::measured(&[(0, 1.0)], None).is_err());
        assert!(CostCurve::parametric(0, 1.0).is_err());
        let csv = "pattern,distance,writes,median_us,p99_us,mean_us,iops\nfixed,1,10,1,1,2.5,1\nfixed,2,10,1,1,5,1\nrandom,random,10,1,1,50,1\n";
        let m = CostCurve::from_csv(csv).unwrap();
        assert_eq!((m.cost_ns(1), m.cost_ns(2), m.cost_ns(3)), (2500.0, 5000.0, 50_000.0));
        let e = CostCurve::from_csv("distance,mean_us\n1,x\n").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        assert!(CostCurve::from_csv("distance\n1\n").is_err());
    }

    #[test]
    fn prediction_of_the_usb_key() {
        // The paper's USB key: 30 random writes/s, d_max 32, 100,000 logical sectors (Fig. 5).
        let c = CostCurve::parametric(32, 1e9 / 30.0).unwrap();
        let at = |pc: u64| predict(100_000, 1000 * pc, &c).unwrap();
        let (p5, p50, p300) = (at(5), at(50), at(300));
        assert!((p50.mean_distance - 3.0).abs() < 1e-3);
        assert!(p5.writes_per_s < p50.writes_per_s && p50.writes_per_s < p300.writes_per_s);
        assert!(p50.sweep_writes_per_s > p50.writes_per_s, "the sweep beats the uniform model");
        // Mean cost is 30·E[min(d, 32)]/32 writes/s → at 300%, E[d] = 4/3: ~720 writes/s.
        assert!((p300.writes_per_s - 720.0).abs() < 10.0, "{}", p300.writes_per_s);
        assert!(predict(10, 0, &c).is_err() && predict(0, 10, &c).is_err());
    }
}
