//! How a claim is judged: per-seed samples, the tie rule, tolerance bands and quantifiers.
//!
//! Every measured quantity is a [`Sample`]: one value per seed of the generated trace (or of
//! the engine's transaction mix), shown as its mean ± its *spread*, the sample standard deviation
//! over the seeds (n − 1 in the denominator; 0 for a single value). A claim's tolerance is one
//! of a handful of rules fixed in the code before anything runs, from the paper's own words and
//! numbers only:
//!
//! * **Direction** (`a < b`, "A writes less than B"): [`compare`]. The difference of the means is
//!   a result only when it exceeds the spread of *either* side, `|mean(a) − mean(b)| >
//!   max(sd(a), sd(b))`; otherwise the two are a **tie** — the seeds cannot tell them apart, and
//!   neither the claim nor its negation is supported. (With one value per side, a real trace,
//!   only equality is a tie.)
//! * **Band** (the paper gives a number X): [`within`], X/1.25 … 1.25·X unless the claim says
//!   otherwise — a factor of 1.25 either way, fixed before measuring ([`band_around`]). The
//!   verdict is *agree* when mean ± sd lies inside the band, *disagree* when it lies wholly
//!   outside, and a tie when a band edge falls within mean ± sd.
//! * **Quantifiers** over several points (buffer sizes, traces, devices): [`combine`]. "In all
//!   cases" ([`Quant::All`]) disagrees as soon as one point disagrees; otherwise it agrees when
//!   the agreeing points outnumber the tied ones, and is a tie when they do not. "Generally",
//!   "for most" ([`Quant::Most`]) agrees when more than half of the points agree, disagrees when
//!   more than half disagree, and is a tie otherwise.

use crate::report::Verdict;

/// One quantity measured once per seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    values: Vec<f64>,
}

impl Sample {
    /// The per-seed values (at least one).
    pub fn new(values: Vec<f64>) -> Self {
        assert!(!values.is_empty(), "a sample needs at least one value");
        Sample { values }
    }

    /// A single value (a real trace, or a quantity that does not depend on the seed).
    pub fn one(v: f64) -> Self {
        Sample { values: vec![v] }
    }

    /// The values, in seed order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Number of values.
    pub fn n(&self) -> usize {
        self.values.len()
    }

    /// Arithmetic mean.
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    /// Sample standard deviation (n − 1); 0 for one value.
    pub fn sd(&self) -> f64 {
        let n = self.values.len();
        if n < 2 {
            return 0.0;
        }
        let m = self.mean();
        (self.values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1) as f64).sqrt()
    }

    /// Smallest value.
    pub fn min(&self) -> f64 {
        self.values.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Largest value.
    pub fn max(&self) -> f64 {
        self.values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    /// Element-wise map (per seed).
    pub fn map(&self, f: impl Fn(f64) -> f64) -> Sample {
        Sample { values: self.values.iter().map(|&v| f(v)).collect() }
    }

    /// Element-wise combination of two samples over the same seeds (a ratio, a difference).
    pub fn zip(&self, other: &Sample, f: impl Fn(f64, f64) -> f64) -> Sample {
        assert_eq!(self.n(), other.n(), "samples over different seeds");
        Sample { values: self.values.iter().zip(&other.values).map(|(&a, &b)| f(a, b)).collect() }
    }

    /// `mean ± sd` with `fmt` for both numbers (just the mean for one value).
    pub fn show(&self, fmt: impl Fn(f64) -> String) -> String {
        if self.n() < 2 {
            fmt(self.mean())
        } else {
            // The spread is a size: no sign, whatever the format of the mean.
            format!("{} ± {}", fmt(self.mean()), fmt(self.sd()).trim_start_matches('+'))
        }
    }
}

/// The direction a comparison wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// `a` below `b`.
    Less,
    /// `a` above `b`.
    Greater,
}

/// Whether the difference of the means is within the larger of the two spreads.
pub fn is_tie(a: &Sample, b: &Sample) -> bool {
    (a.mean() - b.mean()).abs() <= a.sd().max(b.sd())
}

/// Compares `a` with `b` in the direction `want`, with the tie rule of the module docs.
pub fn compare(a: &Sample, b: &Sample, want: Want) -> Verdict {
    if is_tie(a, b) {
        return Verdict::Tie;
    }
    let below = a.mean() < b.mean();
    if below == (want == Want::Less) { Verdict::Agree } else { Verdict::Disagree }
}

/// `a` equal to `b`: agree when they tie (or differ by at most `slack`, relative to `b`'s
/// mean), disagree otherwise. For claims that two things are "the same".
pub fn same(a: &Sample, b: &Sample, slack: f64) -> Verdict {
    let rel = if b.mean() != 0.0 { (a.mean() / b.mean() - 1.0).abs() } else { (a.mean() - b.mean()).abs() };
    if is_tie(a, b) || rel <= slack { Verdict::Agree } else { Verdict::Disagree }
}

/// `x` inside `[lo, hi]`, with the tie rule of the module docs.
pub fn within(x: &Sample, lo: f64, hi: f64) -> Verdict {
    let (m, s) = (x.mean(), x.sd());
    if m - s >= lo && m + s <= hi {
        Verdict::Agree
    } else if m + s < lo || m - s > hi {
        Verdict::Disagree
    } else {
        Verdict::Tie
    }
}

/// At least `lo`: agree above, disagree below, tie when `lo` is within mean ± sd.
pub fn at_least(x: &Sample, lo: f64) -> Verdict {
    within(x, lo, f64::INFINITY)
}

/// At most `hi`.
pub fn at_most(x: &Sample, hi: f64) -> Verdict {
    within(x, f64::NEG_INFINITY, hi)
}

/// The default band around a paper's number `x` (positive): `x / 1.25 … 1.25 · x`.
pub fn band_around(x: f64) -> (f64, f64) {
    (x / BAND_FACTOR, x * BAND_FACTOR)
}

/// The factor of [`band_around`].
pub const BAND_FACTOR: f64 = 1.25;

/// A quantifier over several points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quant {
    /// "In all cases".
    All,
    /// "Generally", "for most".
    Most,
}

/// Counts of point verdicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Points that agree.
    pub agree: usize,
    /// Points that disagree.
    pub disagree: usize,
    /// Tied points.
    pub tie: usize,
}

impl Counts {
    /// Counts `vs` (not-comparable points are not counted).
    pub fn of(vs: &[Verdict]) -> Self {
        let mut c = Counts::default();
        for v in vs {
            match v {
                Verdict::Agree => c.agree += 1,
                Verdict::Disagree => c.disagree += 1,
                Verdict::Tie => c.tie += 1,
                Verdict::NotComparable => {}
            }
        }
        c
    }

    /// Number of points counted.
    pub fn total(&self) -> usize {
        self.agree + self.disagree + self.tie
    }

    /// "agree at 5 of 9, tie at 4" (only the non-zero parts).
    pub fn describe(&self) -> String {
        let n = self.total();
        let mut parts = Vec::new();
        for (k, label) in [(self.agree, "agree"), (self.disagree, "disagree"), (self.tie, "tie")] {
            if k > 0 {
                parts.push(format!("{label} at {k} of {n}"));
            }
        }
        if parts.is_empty() { "no point".to_string() } else { parts.join(", ") }
    }
}

/// The verdict of a claim over several points.
pub fn combine(vs: &[Verdict], q: Quant) -> Verdict {
    let c = Counts::of(vs);
    if c.total() == 0 {
        return Verdict::NotComparable;
    }
    match q {
        Quant::All => {
            if c.disagree > 0 {
                Verdict::Disagree
            } else if c.agree > c.tie {
                Verdict::Agree
            } else {
                Verdict::Tie
            }
        }
        Quant::Most => {
            if 2 * c.agree > c.total() {
                Verdict::Agree
            } else if 2 * c.disagree > c.total() {
                Verdict::Disagree
            } else {
                Verdict::Tie
            }
        }
    }
}

/// The verdict of "`a` is below (above) every one of `others`" at one point: disagree if one
/// of them is clearly on the wrong side, agree if all are clearly on the right side, tie
/// otherwise.
pub fn extreme(a: &Sample, others: &[&Sample], want: Want) -> Verdict {
    let vs: Vec<Verdict> = others.iter().map(|o| compare(a, o, want)).collect();
    if vs.contains(&Verdict::Disagree) {
        Verdict::Disagree
    } else if vs.iter().all(|v| *v == Verdict::Agree) {
        Verdict::Agree
    } else {
        Verdict::Tie
    }
}

/// The text every report prints under "How claims are judged".
pub fn rules_text() -> String {
    format!(
        "Every run on a generated trace (and every run of the engine's transaction mix) is replicated with {n} seeds \
         (the generator's own seed s and s + 1 … s + {m}); a quantity is shown as mean ± sd, the sample standard \
         deviation over the seeds (n − 1), and the CSVs hold the means with a `_sd` column beside every number \
         (`*-seeds.csv`: every run). A real trace is one run (n = 1, no spread). Each claim's tolerance is fixed in the \
         code before anything runs, from the paper's words and numbers only, and is printed beside it:\n\n\
         * **direction** (A below B): the difference of the means counts only when it exceeds the spread of either \
         side, |mean(A) − mean(B)| > max(sd(A), sd(B)); otherwise A and B **tie**: the seeds cannot tell them apart \
         and the claim is neither supported nor contradicted;\n\
         * **band** (the paper gives a number X): X/{f} … {f}·X unless the row says otherwise; agree when \
         mean ± sd lies in the band, disagree when it lies wholly outside, tie when a band edge falls within mean ± sd;\n\
         * **all** (\"in all cases\"): disagree if any point disagrees, else agree if agreeing points outnumber tied \
         ones, else tie; **most** (\"generally\"): agree if more than half agree, disagree if more than half disagree, \
         else tie;\n\
         * **not comparable**: the paper's setting (its device, its trace, its metric) is not one flashbuf can \
         reproduce, or the paper never used the setting; the row says which.\n\n\
         Where a quantity does not depend on any seed (a real trace, the paper's model with the paper's figures), the \
         tolerance column says \"deterministic: one run\" and the seeds column 1.",
        n = crate::runner::SEEDS,
        m = crate::runner::SEEDS - 1,
        f = BAND_FACTOR
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample::new(v.to_vec())
    }

    #[test]
    fn mean_and_spread() {
        let a = s(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(a.mean(), 3.0);
        assert!((a.sd() - 2.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(Sample::one(7.0).sd(), 0.0);
        assert_eq!(a.show(|x| format!("{x:.1}")), "3.0 ± 1.6");
        assert_eq!(Sample::one(7.0).show(|x| format!("{x:.1}")), "7.0");
        assert_eq!(a.show(|x| format!("{x:+.1}%")), "+3.0% ± 1.6%");
    }

    #[test]
    fn ties_are_differences_within_either_spread() {
        // Means 10 and 11, spreads 1.58 and 0: a tie.
        let a = s(&[8.0, 9.0, 10.0, 11.0, 12.0]);
        let b = s(&[11.0, 11.0, 11.0, 11.0, 11.0]);
        assert!(is_tie(&a, &b));
        assert_eq!(compare(&a, &b, Want::Less), Verdict::Tie);
        // Means 10 and 13: a result, in either direction.
        let c = s(&[13.0, 13.0, 13.0, 13.0, 13.0]);
        assert_eq!(compare(&a, &c, Want::Less), Verdict::Agree);
        assert_eq!(compare(&a, &c, Want::Greater), Verdict::Disagree);
        // Single values: only equality ties.
        assert_eq!(compare(&Sample::one(1.0), &Sample::one(1.0), Want::Less), Verdict::Tie);
        assert_eq!(compare(&Sample::one(1.0), &Sample::one(1.0 + 1e-9), Want::Less), Verdict::Agree);
    }

    #[test]
    fn bands_and_their_edges() {
        assert_eq!(band_around(10.0), (8.0, 12.5));
        let x = s(&[10.0, 10.0, 10.0]);
        assert_eq!(within(&x, 8.0, 12.5), Verdict::Agree);
        assert_eq!(within(&x, 11.0, 12.5), Verdict::Disagree);
        let y = s(&[7.0, 9.0, 11.0]); // 9 ± 2: the lower edge 8 is inside
        assert_eq!(within(&y, 8.0, 12.5), Verdict::Tie);
        assert_eq!(at_least(&x, 9.0), Verdict::Agree);
        assert_eq!(at_most(&x, 9.0), Verdict::Disagree);
    }

    #[test]
    fn quantifiers() {
        use Verdict::{Agree as A, Disagree as D, Tie as T};
        assert_eq!(combine(&[A, A, T], Quant::All), A);
        assert_eq!(combine(&[A, T, T], Quant::All), T);
        assert_eq!(combine(&[A, A, D], Quant::All), D);
        assert_eq!(combine(&[A, A, D], Quant::Most), A);
        assert_eq!(combine(&[A, D, T], Quant::Most), T);
        assert_eq!(combine(&[D, D, A], Quant::Most), D);
        assert_eq!(combine(&[], Quant::All), Verdict::NotComparable);
        assert_eq!(Counts::of(&[A, T, T]).describe(), "agree at 1 of 3, tie at 2 of 3");
    }

    #[test]
    fn extremes_need_every_comparison() {
        let a = s(&[1.0, 1.0]);
        let far = s(&[5.0, 5.0]);
        let near = s(&[1.0, 1.0]);
        let below = s(&[0.0, 0.0]);
        assert_eq!(extreme(&a, &[&far, &far], Want::Less), Verdict::Agree);
        assert_eq!(extreme(&a, &[&far, &near], Want::Less), Verdict::Tie);
        assert_eq!(extreme(&a, &[&far, &below], Want::Less), Verdict::Disagree);
    }
}
