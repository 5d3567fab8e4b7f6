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
    /// The claim cannot be checked with what flashbuf simulates (the reason says why).
    NotComparable,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Disagree => "**disagree**",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// One claim of the paper, checked.
#[derive(Clone, Debug)]
pub struct Claim {
    /// The paper's statement (quoted or closely paraphrased, with its location).
    pub paper: String,
    /// What we measured.
    pub ours: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why: the figures behind the verdict, or why it cannot be compared.
    pub reason: String,
}

impl Claim {
    /// A claim judged by `ok` (agree if true, disagree if false).
    pub fn judged(paper: impl Into<String>, ours: impl Into<String>, ok: bool, reason: impl Into<String>) -> Self {
        Claim {
            paper: paper.into(),
            ours: ours.into(),
            verdict: if ok { Verdict::Agree } else { Verdict::Disagree },
            reason: reason.into(),
        }
    }

    /// A claim that cannot be compared.
    pub fn not_comparable(paper: impl Into<String>, ours: impl Into<String>, reason: impl Into<String>) -> Self {
        Claim { paper: paper.into(), ours: ours.into(), verdict: Verdict::NotComparable, reason: reason.into() }
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
    /// The experiments.
    pub sections: Vec<Section>,
}

impl Report {
    /// Counts of verdicts: (agree, disagree, not comparable).
    pub fn tally(&self) -> (usize, usize, usize) {
        let mut t = (0, 0, 0);
        for c in self.sections.iter().flat_map(|s| &s.claims) {
            match c.verdict {
                Verdict::Agree => t.0 += 1,
                Verdict::Disagree => t.1 += 1,
                Verdict::NotComparable => t.2 += 1,
            }
        }
        t
    }

    /// Renders the report as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# {}\n", self.title);
        let _ = writeln!(s, "{}\n", self.intro.trim());
        let (a, d, n) = self.tally();
        let _ = writeln!(s, "Claims checked: {a} agree, {d} disagree, {n} not comparable.\n");
        let _ = writeln!(s, "| experiment | agree | disagree | not comparable |\n| --- | --- | --- | --- |");
        for sec in &self.sections {
            let count = |v: Verdict| sec.claims.iter().filter(|c| c.verdict == v).count();
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                sec.title,
                count(Verdict::Agree),
                count(Verdict::Disagree),
                count(Verdict::NotComparable)
            );
        }
        s.push('\n');
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
                let _ = writeln!(s, "| the paper says | we measured | verdict | why |\n| --- | --- | --- | --- |");
                for c in &sec.claims {
                    let _ = writeln!(
                        s,
                        "| {} | {} | {} | {} |",
                        cell(&c.paper),
                        cell(&c.ours),
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
            sections: vec![Section {
                title: "Fig. 1".into(),
                claims: vec![
                    Claim::judged("x < y", "3 < 4", true, "because"),
                    Claim::judged("a | b", "no", false, "c"),
                    Claim::not_comparable("z", "-", "no writes"),
                ],
                ..Default::default()
            }],
        };
        assert_eq!(r.tally(), (1, 1, 1));
        let md = r.to_markdown();
        assert!(md.contains("| Fig. 1 | 1 | 1 | 1 |"));
        assert!(md.contains("a \\| b"), "pipes escaped");
        assert!(md.contains("**disagree**") && md.contains("not comparable"));
        assert_eq!(pct_change(77.0, 100.0), "−23.0%");
        assert_eq!(pct_change(110.0, 100.0), "+10.0%");
    }
}
