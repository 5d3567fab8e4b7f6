//! Closed-form models the simulated devices are checked against.
//!
//! * [`lambert_w0`] — the principal branch of the Lambert W function (`W(x)·e^{W(x)} = x`).
//! * [`desnoyers_fifo_wa`] — write amplification of FIFO cleaning under uniform random writes,
//!   from P. Desnoyers, *Analytic modeling of SSD write performance*, SYSTOR 2012.
//!
//! Desnoyers' model: `α` is the ratio of the physical pages the cleaner circulates through to the
//! logical pages. With FIFO cleaning, a page survives until its block is cleaned, i.e. for as long
//! as the write frontier takes to go once around the `α·U` physical pages; uniform random writes
//! leave it valid with probability `x = e^{−α(1−x)}` (each host write hits it with probability
//! `1/U`, and `α·U·(1−x)` host writes happen per round since a fraction `x` of the programs are
//! copies). Solving with Lambert W gives `x = −W(−α e^{−α})/α` and the write amplification
//! `1/(1−x) = α / (α + W(−α e^{−α}))`.

/// Principal branch `W₀(x)` of the Lambert W function, for `x ≥ −1/e`; `None` below `−1/e` or for
/// NaN. Halley's iteration from a branch-point series (near `−1/e`), `ln(1+x)` (moderate `x`) or
/// `ln x − ln ln x` (large `x`); converges to within a few ulps in a handful of steps.
pub fn lambert_w0(x: f64) -> Option<f64> {
    const INV_E: f64 = 1.0 / std::f64::consts::E;
    if x.is_nan() || x < -INV_E - 1e-15 {
        return None;
    }
    if x == 0.0 {
        return Some(0.0);
    }
    if x.is_infinite() {
        return Some(f64::INFINITY);
    }
    let p2 = 2.0 * (std::f64::consts::E * x + 1.0);
    if p2 <= 0.0 {
        return Some(-1.0);
    }
    let mut w = if x < -0.25 {
        let p = p2.sqrt();
        -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p
    } else if x < 3.0 {
        x.ln_1p()
    } else {
        let l = x.ln();
        l - l.ln()
    };
    for _ in 0..64 {
        let ew = w.exp();
        let f = w * ew - x;
        let wp1 = w + 1.0;
        if wp1.abs() < 1e-300 {
            break;
        }
        let denom = ew * wp1 - (w + 2.0) * f / (2.0 * wp1);
        let step = f / denom;
        if !step.is_finite() {
            break;
        }
        w -= step;
        if step.abs() <= 1e-15 * (1.0 + w.abs()) {
            break;
        }
    }
    Some(w)
}

/// Desnoyers' write amplification of FIFO cleaning under uniform random writes, for a ratio
/// `alpha` of physical to logical pages (`None` unless `alpha > 1`).
pub fn desnoyers_fifo_wa(alpha: f64) -> Option<f64> {
    if alpha.is_nan() || alpha <= 1.0 {
        return None;
    }
    let w = lambert_w0(-alpha * (-alpha).exp())?;
    Some(alpha / (alpha + w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + b.abs())
    }

    #[test]
    fn lambert_w_matches_known_values() {
        let e = std::f64::consts::E;
        let known = [
            (0.0, 0.0),
            (1.0, 0.567_143_290_409_783_8), // the omega constant
            (e, 1.0),
            (-1.0 / e, -1.0),
            (10.0, 1.745_528_002_740_699_4),
            (100.0, 3.385_630_140_290_05),
            (-0.1, -0.111_832_559_158_962_97),
            (-0.3, -0.489_402_227_180_214_9),
            (2.0 * 2f64.exp(), 2.0),
            (-2.0 * (-2f64).exp(), -0.406_375_739_959_959_6), // W(−2e⁻²) on the principal branch
        ];
        for (x, w) in known {
            let got = lambert_w0(x).unwrap();
            assert!(close(got, w, 1e-12), "W({x}) = {got}, expected {w}");
        }
        assert_eq!(lambert_w0(-0.5), None);
        assert_eq!(lambert_w0(f64::NAN), None);
    }

    #[test]
    fn lambert_w_inverts_w_exp_w() {
        let mut x = -1.0 / std::f64::consts::E + 1e-9;
        while x < 1e6 {
            let w = lambert_w0(x).unwrap();
            assert!(w >= -1.0);
            assert!(close(w * w.exp(), x, 1e-9), "x = {x}, w = {w}");
            x = if x < 0.0 { x * 0.9 + 1e-4 } else { x * 1.7 + 0.01 };
        }
    }

    #[test]
    fn desnoyers_formula_at_known_points() {
        // At α = 2, x solves x = e^{−2(1−x)}: x ≈ 0.2031878700, WA = 1/(1−x).
        let wa = desnoyers_fifo_wa(2.0).unwrap();
        let x = 1.0 - 1.0 / wa;
        assert!(close(x, (-2.0 * (1.0 - x)).exp(), 1e-12));
        assert!(close(x, 0.203_187_869_979_980, 1e-9), "x = {x}");
        // WA falls as spare space grows and explodes as it vanishes.
        assert!(desnoyers_fifo_wa(1.07).unwrap() > desnoyers_fifo_wa(1.15).unwrap());
        assert!(desnoyers_fifo_wa(1.001).unwrap() > 100.0);
        assert!(close(desnoyers_fifo_wa(50.0).unwrap(), 1.0, 1e-12));
        assert_eq!(desnoyers_fifo_wa(1.0), None);
    }
}
