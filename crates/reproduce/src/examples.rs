//! The papers' worked examples, run through flashbuf's policies and printed in the reports.
//!
//! Each example replays the reference string of the unit test that pins it (same pages, same
//! parameters: `crates/policy/src/{ad_lru,cfdc,ref_policy,bp_ref}.rs` and
//! `crates/policy/tests/block_family.rs`), so the report and the test show the same thing. The
//! policies run in the test harness of `flashbuf_policy::testing`, which checks the replacer
//! contract after every step. A worked example does not depend on a seed: its tolerance is
//! "deterministic: one run, exact".

use flashbuf_policy::ad_lru::{AdLru, AdLruConfig};
use flashbuf_policy::bp_ref::{BpRef, BpRefConfig};
use flashbuf_policy::bplru::{Bplru, BplruConfig};
use flashbuf_policy::cfdc::{Cfdc, CfdcConfig};
use flashbuf_policy::cflru::{Cflru, CflruConfig};
use flashbuf_policy::fab::{Fab, FabConfig};
use flashbuf_policy::lru::Lru;
use flashbuf_policy::ref_policy::{Ref, RefConfig};
use flashbuf_policy::testing::Harness;
use flashbuf_policy::{AccessKind, Replacer};

use crate::report::{Claim, Section, Verdict, markdown_table};

const EXACT: &str = "deterministic: one run; exact (the paper's stated outcome, page for page)";

fn pages(v: &[u64]) -> String {
    if v.is_empty() { "—".into() } else { v.iter().map(|p| format!("p{p}")).collect::<Vec<_>>().join(" ") }
}

fn verdict(ok: bool) -> Verdict {
    if ok { Verdict::Agree } else { Verdict::Disagree }
}

/// One request's effect on the buffer.
struct Step {
    request: String,
    evicted: Vec<u64>,
    written: Vec<u64>,
    padding_reads: Vec<u64>,
    bypassed: bool,
}

fn step<R: Replacer>(h: &mut Harness<R>, page: u64, kind: AccessKind) -> Step {
    let (e, w, p, b) = (h.evicted.len(), h.written.len(), h.padding_reads.len(), h.bypassed.len());
    h.access(page, kind, flashbuf_policy::NEVER);
    Step {
        request: format!("{} p{page}", if kind.is_write() { "Write" } else { "Read" }),
        evicted: h.evicted[e..].iter().map(|x| x.page).collect(),
        written: h.written[w..].to_vec(),
        padding_reads: h.padding_reads[p..].to_vec(),
        bypassed: h.bypassed.len() > b,
    }
}

/// AD-LRU Fig. 3: a cold clean page is evicted where CFLRU takes a hot clean one.
pub fn adlru_fig3() -> Section {
    use AccessKind::{Read as R, Write as W};
    let refs = [(1, W), (2, R), (2, R), (4, R), (3, W), (3, W), (5, W), (6, W), (6, W), (7, R)];
    let mut ad = Harness::<AdLru>::new(6, AdLruConfig { min_lc: 0.1 });
    let mut cf = Harness::<Cflru>::new(6, CflruConfig { w: 0.5 });
    let mut rows = Vec::new();
    for &(p, k) in &refs {
        let a = step(&mut ad, p, k);
        let c = step(&mut cf, p, k);
        rows.push(vec![a.request.clone(), pages(&a.evicted), pages(&c.evicted)]);
    }
    let (ae, ce) = (ad.evicted_pages(), cf.evicted_pages());
    Section {
        title: "Worked example — Fig. 3: AD-LRU vs CFLRU on one eviction".into(),
        setup: "Six frames; AD-LRU min_lc = 0.1, CFLRU w = 0.5. The figure's image is missing from the text: the state is \
                rebuilt from what the text says (six buffered pages; page 4 cold and clean; page 2 hot and clean and the \
                least recently used clean page; dirty pages in the cold queue), by the reference string below; the last \
                request (Read p7) needs a victim. Same string as the unit test `figure_3_cold_clean_page_is_chosen`."
            .into(),
        table: markdown_table(&["request", "AD-LRU evicts", "CFLRU evicts"], &rows),
        claims: vec![Claim::check(
            "§3, Fig. 3: AD-LRU evicts the cold clean page (page 4) where CFLRU evicts the hot clean page 2",
            EXACT,
            format!("AD-LRU evicts {}, CFLRU evicts {}", pages(&ae), pages(&ce)),
            1,
            verdict(ae == [4] && ce == [2]),
            "AD-LRU takes its victim from the cold queue (c = 3 > min_lc · 6 = 0), its least recently used clean page",
        )],
        ..Default::default()
    }
}

/// CFDC Fig. 3: four clusters with priorities 2/9, 1/8, 1/14, 1/18 and the eviction order.
pub fn cfdc_fig3() -> Section {
    let writes = [4u64, 192, 70, 130, 0, 195, 132, 16, 193, 196];
    let mut h = Harness::<Cfdc>::new(20, CfdcConfig { pw: 19.0 / 20.0, cluster: 64 });
    for &p in &writes {
        h.write(p);
    }
    h.read(5000); // displaces 196: globaltime 10
    let g = h.policy.globaltime();
    let mut rows = Vec::new();
    let mut prios = Vec::new();
    for c in 0..4u64 {
        let pr = h.policy.priority(c);
        prios.push(pr);
        rows.push(vec![
            format!("{c}"),
            pages(&h.policy.cluster_pages(c)),
            h.policy.timestamp(c).map_or("—".into(), |t| t.to_string()),
            pr.map_or("—".into(), |(a, b)| format!("{a}/{b}")),
        ]);
    }
    // Victims at globaltime 10: the policy asked for a victim eleven times in a row (on a
    // copy, as the unit test does), the buffer drained one fault at a time.
    let mut p = h.policy.clone();
    let incoming = flashbuf_policy::Access::new(9999, AccessKind::Read, 100);
    let mut order = Vec::new();
    for _ in 0..11 {
        let mut ev = flashbuf_policy::Evictions::default();
        if p.victims(&incoming, &flashbuf_policy::NoPins, &mut ev).is_err() {
            break;
        }
        let Some(&f) = ev.victims.first() else { break };
        if let Some(pg) = h.resident().into_iter().find(|&pg| h.frame_of(pg) == Some(f)) {
            order.push(pg);
        }
    }
    let want_prios = [Some((2, 9)), Some((1, 8)), Some((1, 14)), Some((1, 18))];
    let want_first = [192u64, 195, 193, 196, 130, 132, 70, 4, 0, 16];
    Section {
        title: "Worked example — Fig. 3: cluster priorities (Formula 1)".into(),
        setup: format!(
            "Twenty frames, MAX_CLUSTER_SIZE 64, priority window 19/20 so that every written page is displaced into the \
             priority region. The figure's image is missing from the text: the clusters are reconstructed from Formula 1 \
             (the unit test `fig3_priorities_and_victim_order` explains the search) by writing p4 p192 p70 p130 p0 p195 \
             p132 p16 p193 p196 and reading p5000, which brings globaltime to {g}. Then eleven victim selections drain \
             the buffer one fault at a time (the page read last sits in the working region and goes last)."
        ),
        table: markdown_table(&["cluster", "pages (entry order)", "timestamp", "priority"], &rows),
        claims: vec![
            Claim::check(
                "§3.3, Fig. 3: at globaltime 10 the four clusters have priorities 2/9, 1/8, 1/14, 1/18",
                EXACT,
                format!(
                    "globaltime {g}; priorities {}",
                    prios
                        .iter()
                        .map(|p| p.map_or("—".into(), |(a, b)| format!("{a}/{b}")))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                1,
                verdict(g == 10 && prios == want_prios),
                "Formula 1 in exact integer arithmetic",
            ),
            Claim::check(
                "§3.3: the victim is the first page of the lowest-priority cluster, whose priority then drops to 0 so that it is emptied first",
                EXACT,
                format!("eviction order {}", pages(&order)),
                1,
                verdict(order.len() >= want_first.len() && order[..want_first.len()] == want_first),
                "clusters in priority order 1/18, 1/14, 1/8, 2/9, each from its first page on",
            ),
        ],
        ..Default::default()
    }
}

/// Block merges of a write sequence on BAST with two log blocks, as the paper's Fig. 6 table
/// assigns them: a log block serves one data block; a write to a block without a log block takes
/// a free one, else merges the one assigned longest ago and takes it.
fn bast2_merges(writes: &[u64], ppb: u64) -> usize {
    let mut logs: Vec<u64> = Vec::new(); // data blocks, oldest assignment first
    let mut merges = 0;
    for p in writes {
        let b = p / ppb;
        if logs.contains(&b) {
            continue;
        }
        if logs.len() == 2 {
            logs.remove(0);
            merges += 1;
        }
        logs.push(b);
    }
    merges
}

fn fig6_run<R: Replacer>(config: R::Config) -> Vec<Step> {
    let mut h = Harness::<R>::new(3, config);
    [0u64, 4, 8, 5, 9, 1, 10, 2, 6].iter().map(|&p| step(&mut h, p, AccessKind::Write)).collect()
}

/// REF Figs. 3, 5, 6 and 7 (the buffer side; Figs. 1, 2 and 4 are about the FTL's log blocks).
pub fn ref_examples() -> Vec<Section> {
    let mut out = Vec::new();

    // Fig. 3: recently-evicted blocks first.
    let mut r = Harness::<Ref>::new(6, RefConfig { vw: 1.0, vb: 2, ppb: 4 });
    let mut l = Harness::<Lru>::new(6, Default::default());
    for p in [8u64, 12, 0, 4, 9, 13, 1, 5] {
        r.write(p);
        l.write(p);
    }
    let (r0, l0) = (r.evicted_pages().len(), l.evicted_pages().len());
    for p in [16u64, 20, 24, 28, 32, 36] {
        r.write(p);
        l.write(p);
    }
    let (re, le) = (r.evicted_pages()[r0..].to_vec(), l.evicted_pages()[l0..].to_vec());
    let blocks = |v: &[u64]| {
        let mut n = 0;
        let mut last = None;
        for p in v {
            if last != Some(p / 4) {
                n += 1;
                last = Some(p / 4);
            }
        }
        n
    };
    out.push(Section {
        title: "Worked example — Fig. 3: LRU eviction vs REF eviction (4-page blocks)".into(),
        setup: "Six frames; REF with VW = 100%, |VB| = 2. Writes p8 p12 p0 p4 p9 p13 fill the buffer, p1 and p5 evict p8 and \
                p12 (VB = {B2, B3}); the buffer then holds p0 p4 p9 p13 p1 p5 in LRU order, the figure's state. Six writes to \
                new blocks show the eviction order. Same string as the unit test `fig3_recently_evicted_blocks_first`."
            .into(),
        table: markdown_table(
            &["policy", "evicts, in order", "runs of one block (each a log-block switch under BAST)"],
            &[
                vec!["LRU".into(), pages(&le), blocks(&le).to_string()],
                vec!["REF".into(), pages(&re), blocks(&re).to_string()],
            ],
        ),
        claims: vec![Claim::check(
            "§III, Fig. 3: LRU evicts p0 p4 p9 p13 p1 p5; REF evicts \"p9, p13, p0, p4, p1, p5\", keeping B2 and B3, the blocks it evicted last, as victim blocks",
            EXACT,
            format!("LRU {}; REF {}", pages(&le), pages(&re)),
            1,
            verdict(le == [0, 4, 9, 13, 1, 5] && re == [9, 13, 0, 4, 1, 5]),
            "the REF order groups the pages of each block, so fewer log blocks are involved",
        )],
        ..Default::default()
    });

    // Fig. 5: victim block selection.
    let mut h = Harness::<Ref>::new(8, RefConfig { vw: 0.75, vb: 2, ppb: 4 });
    for p in [8u64, 12, 0, 4, 9, 13, 1, 5] {
        h.write(p);
    }
    h.write(2);
    let vb1 = h.policy.victim_blocks();
    for p in [6u64, 10, 14] {
        h.write(p);
    }
    let ev1 = h.evicted_pages();
    h.write(20);
    let vb2 = h.policy.victim_blocks();
    out.push(Section {
        title: "Worked example — Fig. 5: victim block selection (VW = 75%, |VB| = 2)".into(),
        setup: "Eight frames, 4-page blocks, LRU order p8 p12 p0 p4 p9 p13 | p1 p5 (the 6-page window first). The figure's \
                image is missing; the buffer is reconstructed from the text's statements. Same string as the unit test \
                `fig5_victim_block_selection`."
            .into(),
        table: markdown_table(
            &["after", "victim blocks", "evicted so far"],
            &[
                vec!["Write p2".into(), format!("{vb1:?}"), pages(&ev1[..1.min(ev1.len())])],
                vec!["Write p6 p10 p14".into(), format!("{vb1:?}"), pages(&ev1)],
                vec!["Write p20".into(), format!("{vb2:?}"), pages(&h.evicted_pages())],
            ],
        ),
        claims: vec![Claim::check(
            "§III, Fig. 5: B2 and B3 (most pages in the window) become the victim blocks; p2, p6, p10, p14 evict p8, p12, p9, p13; then VB becomes {B0, B1}",
            EXACT,
            format!("VB {vb1:?}, evictions {}, then VB {vb2:?}", pages(&ev1)),
            1,
            verdict(vb1 == [2, 3] && ev1 == [8, 12, 9, 13] && vb2 == [0, 1]),
            "the window is round(0.75 · 8) = 6 pages",
        )],
        ..Default::default()
    });

    // Fig. 6: four policies on nine writes.
    let runs: Vec<(&str, Vec<Step>)> = vec![
        ("LRU", fig6_run::<Lru>(Default::default())),
        ("FAB", fig6_run::<Fab>(FabConfig { ppb: 4 })),
        ("BPLRU", fig6_run::<Bplru>(BplruConfig { ppb: 4 })),
        ("REF", fig6_run::<Ref>(RefConfig { vw: 1.0, vb: 2, ppb: 4 })),
    ];
    let mut rows = Vec::new();
    for (i, p) in [0u64, 4, 8, 5, 9, 1, 10, 2, 6].iter().enumerate() {
        let mut line = vec![format!("Write p{p}")];
        for (_, st) in &runs {
            let s = &st[i];
            line.push(if s.bypassed {
                format!("E {} (not buffered)", pages(&s.written))
            } else if s.evicted.is_empty() {
                "—".into()
            } else {
                format!(
                    "E {}; L {}{}",
                    pages(&s.evicted),
                    pages(&s.written),
                    if s.padding_reads.is_empty() {
                        String::new()
                    } else {
                        format!("; pad {}", pages(&s.padding_reads))
                    }
                )
            });
        }
        rows.push(line);
    }
    let written = |name: &str| -> Vec<u64> {
        runs.iter()
            .find(|r| r.0 == name)
            .map(|r| r.1.iter().flat_map(|s| s.written.clone()).collect())
            .unwrap_or_default()
    };
    let merges: Vec<(&str, usize)> = runs.iter().map(|r| (r.0, bast2_merges(&written(r.0), 4))).collect();
    let m = |name: &str| merges.iter().find(|x| x.0 == name).map_or(0, |x| x.1);
    rows.push({
        let mut line = vec!["block merges (BAST, 2 log blocks)".to_string()];
        line.extend(merges.iter().map(|x| x.1.to_string()));
        line
    });
    out.push(Section {
        title: "Worked example — Fig. 6: LRU, FAB, BPLRU and REF on one write sequence".into(),
        setup: "Three frames, 4-page blocks, REF with VW = 100% and |VB| = 2; the writes p0 p4 p8 p5 p9 p1 p10 p2 p6. Each \
                cell: pages evicted (E), pages written to the log blocks (L), pages read to pad a block. The buffer side is \
                what the unit tests (`crates/policy/tests/block_family.rs`, `fig6_*`) pin, with the paper's two misprints \
                noted there. The last row counts the merges of the written pages on BAST with two log blocks, as the \
                paper's table assigns them (a log block per data block; the one assigned longest ago is merged when a \
                third block needs one)."
            .into(),
        table: markdown_table(&["request", "LRU", "FAB", "BPLRU", "REF"], &rows),
        claims: vec![Claim::check(
            "§III, Fig. 6: \"The REF scheme generates no block merge while LRU, FAB and BPLRU invoke 2 or 3 number of block merges respectively\"",
            EXACT,
            merges.iter().map(|(n, k)| format!("{n} {k}")).collect::<Vec<_>>().join(", "),
            1,
            verdict(m("REF") == 0 && [m("LRU"), m("FAB"), m("BPLRU")].iter().all(|&k| (2..=3).contains(&k))),
            "REF writes p2 and p6 straight through (their blocks are victim blocks), so every write lands in the log block of B0 or B1",
        )],
        ..Default::default()
    });

    // Fig. 7 and the padding rule: BP-REF pads a victim block only when it holds a dirty page.
    let cfg = BpRefConfig { vw: 1.0, vb: 1, ppb: 4, pad: 0.5 };
    let mut w = Harness::<BpRef>::new(5, cfg.clone());
    for p in [0u64, 1, 2, 4, 8, 12] {
        w.write(p);
    }
    let mut r = Harness::<BpRef>::new(5, cfg);
    for p in [0u64, 1, 2, 4, 8, 12] {
        r.read(p);
    }
    out.push(Section {
        title: "Worked example — Fig. 7: block padding in BP-REF".into(),
        setup: "Five frames, 4-page blocks, VW = 100%, |VB| = 1, padding threshold 50%: B0 holds p0 p1 p2 (three victim \
                pages, more than 0.5 · 4), then p12 needs a frame. Written pages: BP-REF reads p3 and writes the whole block, \
                as in the paper's Fig. 7 (there with p14 and p15 of B1), so the FTL can switch-merge. Read pages: nothing to \
                write, so no padding (the fix of issue 16; unit test `no_padding_of_a_block_without_a_dirty_page`)."
            .into(),
        table: markdown_table(
            &["B0's pages were", "evicted", "padding reads", "written to flash"],
            &[
                vec!["written".into(), pages(&w.evicted_pages()), pages(&w.padding_reads), pages(&w.written)],
                vec!["read".into(), pages(&r.evicted_pages()), pages(&r.padding_reads), pages(&r.written)],
            ],
        ),
        claims: vec![Claim::check(
            "§IV, Fig. 7: \"BP-REF uses the block padding ... reads the pages ... into the buffer cache and evicts all the pages of B1 at a time to the log block\"",
            EXACT,
            format!(
                "dirty block: evicts {}, pads {}, writes {}; clean block: evicts {}, writes {}",
                pages(&w.evicted_pages()),
                pages(&w.padding_reads),
                pages(&w.written),
                pages(&r.evicted_pages()),
                pages(&r.written)
            ),
            1,
            verdict(
                w.evicted_pages() == [0, 1, 2] && w.padding_reads == [3] && w.written == [0, 1, 2, 3] && r.written.is_empty(),
            ),
            "padding a block that holds no dirty page would write pages nobody changed; BP-REF pads only blocks with a dirty page",
        )],
        ..Default::default()
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_worked_example_agrees() {
        let mut sections = vec![adlru_fig3(), cfdc_fig3()];
        sections.extend(ref_examples());
        for s in &sections {
            for c in &s.claims {
                assert_eq!(c.verdict, Verdict::Agree, "{}: {} — {}", s.title, c.paper, c.ours);
            }
        }
        assert_eq!(sections.len(), 6);
    }
}
