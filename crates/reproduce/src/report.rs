//! The Markdown report of a reproduction: each experiment's numbers beside the paper's claims,
//! with a verdict and its reason.

use std::fmt::Write as _;

/// How our result relates to a claim of the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Our numbers support the claim.
    Agree,
    /// Our numbers contradict the claim.
    Disagree,
    /// The difference the claim is about is within the seeds' spread (see [`crate::judge`]).
    Tie,
    /// The claim cannot be checked with what flashbuf simulates (the reason says why).
    NotComparable,
}

impl Verdict {
    /// The plain word: agree, disagree, tie, not comparable.
    pub fn word(self) -> &'static str {
        self.label().trim_matches('*')
    }

    /// The label in verdict tables (a disagreement in bold).
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Disagree => "**disagree**",
            Verdict::Tie => "tie",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// One claim of the paper, checked.
#[derive(Clone, Debug)]
pub struct Claim {
    /// The paper's statement (quoted or closely paraphrased, with its location).
    pub paper: String,
    /// The tolerance, fixed before measuring: the metric and workload it is judged on, the
    /// direction or band, and the quantifier (see [`crate::judge`]).
    pub tolerance: String,
    /// What we measured (mean ± sd over the seeds).
    pub ours: String,
    /// Runs behind each number: the number of seeds, or 1 for a real trace or an exact example.
    pub seeds: usize,
    /// The verdict.
    pub verdict: Verdict,
    /// Why: the figures behind the verdict, or why it cannot be compared.
    pub reason: String,
}

impl Claim {
    /// A claim with its tolerance, measurement and verdict.
    pub fn check(
        paper: impl Into<String>,
        tolerance: impl Into<String>,
        ours: impl Into<String>,
        seeds: usize,
        verdict: Verdict,
        reason: impl Into<String>,
    ) -> Self {
        Claim {
            paper: paper.into(),
            tolerance: tolerance.into(),
            ours: ours.into(),
            seeds,
            verdict,
            reason: reason.into(),
        }
    }

    /// A claim that cannot be compared.
    pub fn not_comparable(paper: impl Into<String>, ours: impl Into<String>, reason: impl Into<String>) -> Self {
        Claim {
            paper: paper.into(),
            tolerance: "—".into(),
            ours: ours.into(),
            seeds: 0,
            verdict: Verdict::NotComparable,
            reason: reason.into(),
        }
    }
}

/// One experiment (a figure or table of the paper) in the report.
#[derive(Clone, Debug, Default)]
pub struct Section {
    /// Heading, e.g. "Fig. 7d — write count vs buffer size, Zipf 500k-50k".
    pub title: String,
    /// What was run (traces, devices, parameters, choices where the paper is silent).
    pub setup: String,
    /// A Markdown table of our numbers.
    pub table: String,
    /// Result files (CSV) relative to the report.
    pub files: Vec<String>,
    /// Plot images (PNG, with SVG beside them) relative to the report.
    pub plots: Vec<String>,
    /// The paper's claims with verdicts.
    pub claims: Vec<Claim>,
}

/// A whole report.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Title line.
    pub title: String,
    /// Introduction: what the paper is, what was run, quick or full.
    pub intro: String,
    /// How claims are judged (seeds, spread, tie rule, bands).
    pub rules: String,
    /// Warnings: experiments skipped for a missing trace, and the like.
    pub warnings: Vec<String>,
    /// The experiments.
    pub sections: Vec<Section>,
}

/// Counts of verdicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Claims that agree.
    pub agree: usize,
    /// Claims that disagree.
    pub disagree: usize,
    /// Claims whose difference is within the seeds' spread.
    pub tie: usize,
    /// Claims that cannot be compared.
    pub not_comparable: usize,
}

impl Tally {
    /// All claims.
    pub fn total(&self) -> usize {
        self.agree + self.disagree + self.tie + self.not_comparable
    }

    fn of<'a>(claims: impl Iterator<Item = &'a Claim>) -> Self {
        let mut t = Tally::default();
        for c in claims {
            match c.verdict {
                Verdict::Agree => t.agree += 1,
                Verdict::Disagree => t.disagree += 1,
                Verdict::Tie => t.tie += 1,
                Verdict::NotComparable => t.not_comparable += 1,
            }
        }
        t
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} claims: {} agree, {} disagree, {} tie, {} not comparable",
            self.total(),
            self.agree,
            self.disagree,
            self.tie,
            self.not_comparable
        )
    }
}

impl Report {
    /// Counts of verdicts over every section.
    pub fn tally(&self) -> Tally {
        Tally::of(self.sections.iter().flat_map(|s| &s.claims))
    }

    /// Renders the report as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# {}\n", self.title);
        let _ = writeln!(s, "{}\n", self.intro.trim());
        for w in &self.warnings {
            let _ = writeln!(s, "> **Warning:** {}\n", w.trim());
        }
        let _ = writeln!(s, "Claims checked: {}.\n", self.tally());
        let _ =
            writeln!(s, "| experiment | agree | disagree | tie | not comparable |\n| --- | --- | --- | --- | --- |");
        for sec in &self.sections {
            let t = Tally::of(sec.claims.iter());
            let _ = writeln!(s, "| {} | {} | {} | {} | {} |", sec.title, t.agree, t.disagree, t.tie, t.not_comparable);
        }
        s.push('\n');
        if !self.rules.trim().is_empty() {
            let _ = writeln!(s, "## How claims are judged\n\n{}\n", self.rules.trim());
        }
        for sec in &self.sections {
            let _ = writeln!(s, "## {}\n", sec.title);
            if !sec.setup.trim().is_empty() {
                let _ = writeln!(s, "{}\n", sec.setup.trim());
            }
            for p in &sec.plots {
                let _ = writeln!(s, "![{p}]({p})\n");
            }
            if !sec.table.trim().is_empty() {
                let _ = writeln!(s, "{}\n", sec.table.trim());
            }
            if !sec.files.is_empty() {
                let links: Vec<String> = sec.files.iter().map(|f| format!("[{f}]({f})")).collect();
                let _ = writeln!(s, "Data: {}\n", links.join(", "));
            }
            if !sec.claims.is_empty() {
                let _ = writeln!(
                    s,
                    "| the paper says | tolerance (fixed before measuring) | we measured (mean ± sd) | seeds | verdict | why |\n\
                     | --- | --- | --- | --- | --- | --- |"
                );
                for c in &sec.claims {
                    let _ = writeln!(
                        s,
                        "| {} | {} | {} | {} | {} | {} |",
                        cell(&c.paper),
                        cell(&c.tolerance),
                        cell(&c.ours),
                        if c.seeds == 0 { "—".to_string() } else { c.seeds.to_string() },
                        c.verdict.label(),
                        cell(&c.reason)
                    );
                }
                s.push('\n');
            }
        }
        s
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown table from a header and rows.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| {} |", header.join(" | "));
    let _ = writeln!(s, "|{}", " --- |".repeat(header.len()));
    for r in rows {
        let _ = writeln!(s, "| {} |", r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    }
    s
}

/// `a` relative to `b` as a signed percentage ("−23.1%").
pub fn pct_change(a: f64, b: f64) -> String {
    if b == 0.0 {
        return "n/a".into();
    }
    let p = 100.0 * (a - b) / b;
    if p < 0.0 { format!("−{:.1}%", -p) } else { format!("+{p:.1}%") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_renders_verdicts_and_tally() {
        let r = Report {
            title: "T".into(),
            intro: "I".into(),
            rules: "R".into(),
            warnings: vec!["W missing".into()],
            sections: vec![Section {
                title: "Fig. 1".into(),
                claims: vec![
                    Claim::check("x < y", "direction", "3 < 4", 5, Verdict::Agree, "because"),
                    Claim::check("a | b", "band 1–2", "no", 5, Verdict::Disagree, "c"),
                    Claim::check("p < q", "direction", "1 ± 1 vs 1.5 ± 1", 5, Verdict::Tie, "within the spread"),
                    Claim::not_comparable("z", "-", "no writes"),
                ],
                ..Default::default()
            }],
        };
        let t = r.tally();
        assert_eq!((t.agree, t.disagree, t.tie, t.not_comparable, t.total()), (1, 1, 1, 1, 4));
        let md = r.to_markdown();
        assert!(md.contains("| Fig. 1 | 1 | 1 | 1 | 1 |"), "{md}");
        assert!(md.contains("a \\| b"), "pipes escaped");
        assert!(md.contains("**disagree**") && md.contains("not comparable") && md.contains("| tie |"));
        assert!(md.contains("> **Warning:** W missing"));
        assert!(md.contains("## How claims are judged"));
        assert!(md.contains("| band 1–2 | no | 5 |"), "tolerance and seeds columns");
        assert!(md.contains("Claims checked: 4 claims: 1 agree, 1 disagree, 1 tie, 1 not comparable."));
        assert_eq!(pct_change(77.0, 100.0), "−23.0%");
        assert_eq!(pct_change(110.0, 100.0), "+10.0%");
    }
}
