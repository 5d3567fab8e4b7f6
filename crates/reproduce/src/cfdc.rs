//! The CFDC paper: Ou, Härder, Jin, *CFDC — a flash-aware replacement policy for database buffer
//! management* (DaMoN 2009; `../shared/papers/000_7b9f09a183fb51b5.txt`), §4: Figs. 4–9.
//!
//! The paper measured an XTC engine on an MTRON MSP-SATA7525 SSD. flashbuf runs its own engine
//! (B+-tree of one million 260-byte records, leaves half full, 4 KiB pages, the paper's baseline
//! mix of point and range transactions) over simulated flash: FAST with the REF paper's timings
//! (a log-block FTL, the class of FTL whose merges make scattered writes expensive, standing in
//! for the MTRON drive), BAST, and the page-mapped MICRON device for contrast. Time is wall-clock
//! time of the run + simulated device time. Then the engine's page-reference trace is replayed through the
//! simulator to compare every policy on the same workload.

use anyhow::Result;
use flashbuf_engine::{StoreSpec, WorkloadConfig, WorkloadResult, run_workload};
use flashbuf_flash::{DeviceConfig, DeviceKind, NandPreset};
use flashbuf_policy::PolicyConfig;
use rayon::prelude::*;

use crate::exp::{Trace, bars, line, thousands};
use crate::judge::{BAND_FACTOR, Counts, Quant, Sample, combine, within};
use crate::report::{Claim, Report, Section, Verdict, markdown_table, pct_change};
use crate::runner::Ctx;

fn fast() -> DeviceConfig {
    DeviceConfig { kind: DeviceKind::Fast, preset: NandPreset::Ref, log_blocks: 8, ..Default::default() }
}

fn bast() -> DeviceConfig {
    DeviceConfig { kind: DeviceKind::Bast, preset: NandPreset::Ref, log_blocks: 8, ..Default::default() }
}

fn page() -> DeviceConfig {
    DeviceConfig::default()
}

/// Scale of a quick run: records, transactions and buffer sizes divided by 10.
struct Scale {
    quick: bool,
}

impl Scale {
    fn records(&self) -> u64 {
        if self.quick { 100_000 } else { 1_000_000 }
    }
    fn factor(&self) -> f64 {
        if self.quick { 0.1 } else { 1.0 }
    }
    fn frames(&self, paper: usize) -> usize {
        ((paper as f64 * self.factor()).round() as usize).max(16)
    }
    fn base(&self, policy: &PolicyConfig) -> WorkloadConfig {
        let mut c = WorkloadConfig::baseline(policy.clone()).scaled(self.factor());
        c.records = self.records();
        c.buffer_pages = self.frames(4096);
        c
    }
}

struct Point {
    config: WorkloadConfig,
    store: StoreSpec,
}

fn policy(s: &str) -> PolicyConfig {
    s.parse().unwrap_or_else(|e| panic!("policy literal {s}: {e}"))
}

/// Runs engine points in parallel; writes `<name>.csv`.
fn run_points(ctx: &Ctx, name: &str, points: Vec<Point>) -> Result<Vec<WorkloadResult>> {
    ctx.progress.status(name);
    ctx.progress.add_total(points.iter().map(|p| p.config.transactions()).sum());
    let rows: Vec<WorkloadResult> = points
        .par_iter()
        .map(|p| {
            let r = run_workload(&p.config, &p.store);
            ctx.progress.inc(p.config.transactions());
            r
        })
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("experiment {name}: {e}"))?;
    ctx.write_csv(&format!("{name}.csv"), &rows)?;
    Ok(rows)
}

fn short(r: &WorkloadResult) -> &str {
    r.policy.split(':').next().unwrap_or(&r.policy)
}

fn device_of(r: &WorkloadResult) -> String {
    r.store.trim_start_matches("sim:").split('/').next().unwrap_or("").to_uppercase()
}

/// Runs every experiment.
pub fn reproduce(ctx: &Ctx) -> Result<Report> {
    let sc = Scale { quick: ctx.quick };
    let three = [policy("lru"), policy("cflru"), policy("cfdc")];
    let mut report = Report {
        title: "CFDC (Ou, Härder, Jin) reproduced with flashbuf".into(),
        intro: format!(
            "Mode: {}. flashbuf's engine: a B+-tree of {} records (4-byte keys, 256-byte values, 4 KiB pages, leaves half \
             full, bulk-loaded, buffer started cold), the paper's baseline transaction mix (100,000 point queries, 100,000 \
             point updates, 200 range queries and 200 range updates of 256 records, keys 80–20 self-similar, range starts \
             uniform){}, one worker. Devices: FAST with the REF paper's timings (0.01 ms read, 0.2 ms write, 2 ms erase, \
             64-page blocks, 8 log blocks) standing in for the paper's MTRON SSD, BAST with the same timings, and the \
             page-mapped MICRON device; one engine page is one device page. TPS = transactions / (wall-clock time of the \
             run + simulated device time). CFLRU w = 0.5, CFDC priority window 0.5 and MAX_CLUSTER_SIZE 64, as in the paper.",
            if ctx.quick { "quick (100,000 records, a tenth of the transactions and buffer sizes)" } else { "full" },
            thousands(sc.records()),
            if ctx.quick { ", all scaled by 1/10" } else { "" }
        ),
        rules: crate::judge::rules_text(),
        warnings: Vec::new(),
        sections: Vec::new(),
    };

    // Figs. 4–6: buffer size.
    let sizes: Vec<usize> = [1024, 2048, 4096, 8192].iter().map(|&s| sc.frames(s)).collect();
    let devices = if ctx.quick { vec![fast(), bast()] } else { vec![fast(), bast(), page()] };
    let mut points = Vec::new();
    for d in &devices {
        for p in &three {
            for &b in &sizes {
                let mut c = sc.base(p);
                c.buffer_pages = b;
                points.push(Point { config: c, store: StoreSpec::Sim(d.clone()) });
            }
        }
    }
    let rows = run_points(ctx, "cfdc-figs4-6", points)?;
    let get = |dev: &str, pol: &str, b: usize| {
        rows.iter().find(|r| device_of(r) == dev && short(r) == pol && r.buffer_pages == b as u64).unwrap()
    };
    let mut t4 = Vec::new();
    for r in &rows {
        t4.push(vec![
            device_of(r),
            short(r).to_string(),
            thousands(r.buffer_pages),
            format!("{:.0}", r.tps),
            thousands(r.page_flushes),
            format!("{:.0}", r.avg_flush_us),
            format!("{:.2}%", 100.0 * r.hit_ratio),
            format!("{}/{}/{}", r.merges_switch, r.merges_partial, r.merges_full),
        ]);
    }
    let mut claims = Vec::new();
    for dev in devices.iter().map(|d| d.kind.name().to_uppercase()) {
        let gains: Vec<f64> =
            sizes.iter().map(|&b| get(&dev, "cfdc", b).tps / get(&dev, "cflru", b).tps - 1.0).collect();
        let g = gains.iter().map(|x| format!("{:+.0}%", 100.0 * x)).collect::<Vec<_>>().join(", ");
        let claim = format!(
            "§4.3, Fig. 4 ({dev}): \"CFDC clearly outperforms both competing policies, with a performance gain between 14% (at 1,024 pages) and 41% (at 8,192 pages) over CFLRU\""
        );
        let ours = format!(
            "CFDC vs CFLRU TPS at {}: {g}",
            sizes.iter().map(|s| thousands(*s as u64)).collect::<Vec<_>>().join(" / ")
        );
        if dev == "PAGE" {
            claims.push(Claim::not_comparable(
                claim,
                ours,
                "the paper ran CFDC on a block-mapped SSD only, never on a page-mapped FTL (which writes every page at \
                 the same cost wherever it lands, so clustering cannot pay off)",
            ));
            continue;
        }
        // The paper's numbers: 14% at the smallest size, 41% at the largest; every size must
        // lie in the band from 14%/1.25 to 1.25 × 41%.
        let (lo, hi) = (0.14 / BAND_FACTOR, 0.41 * BAND_FACTOR);
        let vs: Vec<Verdict> = gains.iter().map(|&x| within(&Sample::one(x), lo, hi)).collect();
        claims.push(Claim::check(
            claim,
            format!(
                "TPS (transactions per wall-clock second, the paper's metric) of the CFDC workload on the engine, on \
                 the {dev} device; gain over CFLRU in the band {:.1}% … {:.1}% (the paper's 14–41% widened by ×{BAND_FACTOR}) \
                 at every buffer size (all)",
                100.0 * lo,
                100.0 * hi
            ),
            ours,
            1,
            combine(&vs, Quant::All),
            format!(
                "{}; the size of the gain is device-specific (the paper's MTRON drive is a black box): ours ranges \
                 {:+.0}% … {:+.0}% against the paper's 14–41%. One run of the engine (its transaction mix is not yet \
                 replicated over seeds).",
                Counts::of(&vs).describe(),
                100.0 * gains.iter().cloned().fold(f64::MAX, f64::min),
                100.0 * gains.iter().cloned().fold(f64::MIN, f64::max)
            ),
        ));
    }
    let dev0 = "FAST";
    let cl_vs_lru: Vec<f64> =
        sizes.iter().map(|&b| get(dev0, "cflru", b).tps / get(dev0, "lru", b).tps - 1.0).collect();
    claims.push(Claim::judged(
        "§4.3, Fig. 4: CFLRU \"is only slightly better than LRU with a maximum performance gain of 6% at 8,192 pages\"",
        format!(
            "CFLRU vs LRU TPS on FAST: {}",
            cl_vs_lru.iter().map(|x| format!("{:+.1}%", 100.0 * x)).collect::<Vec<_>>().join(", ")
        ),
        cl_vs_lru.iter().all(|&x| (-0.02..=0.12).contains(&x)),
        "slightly better taken as between −2% and +12%",
    ));
    let fewer: Vec<f64> = sizes
        .iter()
        .map(|&b| 1.0 - get(dev0, "cflru", b).page_flushes as f64 / get(dev0, "lru", b).page_flushes as f64)
        .collect();
    claims.push(Claim::judged(
        "§4.3, Fig. 5: \"Compared to LRU, CFLRU has to perform fewer (about 3–5%) page flushes\"",
        format!(
            "CFLRU flushes fewer pages than LRU by {}",
            fewer.iter().map(|x| format!("{:.1}%", 100.0 * x)).collect::<Vec<_>>().join(", ")
        ),
        fewer.iter().all(|&x| (0.01..=0.08).contains(&x)),
        "about 3–5% taken as 1–8%",
    ));
    let more: Vec<i64> = sizes
        .iter()
        .map(|&b| get(dev0, "cfdc", b).page_flushes as i64 - get(dev0, "cflru", b).page_flushes as i64)
        .collect();
    claims.push(Claim::judged(
        "§4.3, Fig. 5: \"Although CFDC gives higher priority to dirty pages, too, it has to achieve more page flushes than CFLRU\"",
        format!("CFDC − CFLRU flushes: {more:?}"),
        more.iter().all(|&x| x > 0),
        "flush counts do not depend on the device",
    ));
    for dev in ["FAST", "BAST"] {
        let ratio: Vec<f64> =
            sizes.iter().map(|&b| get(dev, "cfdc", b).avg_flush_us / get(dev, "cflru", b).avg_flush_us).collect();
        claims.push(Claim::judged(
            format!("§4.3, Fig. 6 ({dev}): \"For most of the buffer sizes, the cost of flushing a single page is only a half of the cost of LRU or CFLRU\""),
            format!("CFDC's cost per flush / CFLRU's: {}", ratio.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(", ")),
            ratio.iter().filter(|&&x| x <= 0.65).count() * 2 > ratio.len(),
            "about half taken as at most 0.65 at most buffer sizes",
        ));
    }
    report.sections.push(Section {
        title: "Figs. 4–6 — buffer size: throughput, page flushes, cost per flush".into(),
        setup: format!(
            "Buffer sizes {} pages (the paper's 1,024–8,192{}).",
            sizes.iter().map(|s| thousands(*s as u64)).collect::<Vec<_>>().join(", "),
            if ctx.quick { ", divided by 10" } else { "" }
        ),
        table: markdown_table(
            &["device", "policy", "buffer", "TPS", "page flushes", "µs per flush", "hit ratio", "merges s/p/f"],
            &t4,
        ),
        files: vec!["cfdc-figs4-6.csv".into()],
        plots: vec![
            ctx.plot(
                "cfdc-figs4-6.csv",
                "fig4-tps",
                &line(
                    "buffer_pages",
                    "tps",
                    "policy",
                    &[("store", "sim:fast/ref/log8")],
                    "Fig. 4: throughput vs buffer size (FAST)",
                ),
            )?,
            ctx.plot(
                "cfdc-figs4-6.csv",
                "fig5-flushes",
                &line(
                    "buffer_pages",
                    "page_flushes",
                    "policy",
                    &[("store", "sim:fast/ref/log8")],
                    "Fig. 5: page flushes (FAST)",
                ),
            )?,
            ctx.plot(
                "cfdc-figs4-6.csv",
                "fig6-flush-cost",
                &line(
                    "buffer_pages",
                    "avg_flush_us",
                    "policy",
                    &[("store", "sim:fast/ref/log8")],
                    "Fig. 6: cost per page flush (FAST)",
                ),
            )?,
            ctx.plot(
                "cfdc-figs4-6.csv",
                "fig4-tps-bast",
                &line(
                    "buffer_pages",
                    "tps",
                    "policy",
                    &[("store", "sim:bast/ref/log8")],
                    "Fig. 4: throughput vs buffer size (BAST)",
                ),
            )?,
        ],
        claims,
    });

    // Fig. 7: update intensity (FAST, 4,096 pages).
    let intensities: Vec<f64> = if ctx.quick { vec![0.0, 0.5, 1.0] } else { vec![0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0] };
    let mut points = Vec::new();
    for p in &three {
        for &u in &intensities {
            let c = sc.base(p).with_update_intensity(u)?;
            points.push(Point { config: c, store: StoreSpec::Sim(fast()) });
        }
    }
    let rows7 = run_points(ctx, "cfdc-fig7", points)?;
    let upd = |r: &WorkloadResult| (r.point_updates + r.range_updates) as f64 / r.transactions as f64;
    let at7 = |pol: &str, u: f64| rows7.iter().find(|r| short(r) == pol && (upd(r) - u).abs() < 0.01).unwrap();
    let u0: Vec<f64> = ["lru", "cflru", "cfdc"].iter().map(|p| at7(p, 0.0).tps).collect();
    let io0: Vec<(u64, u64)> =
        ["lru", "cflru", "cfdc"].iter().map(|p| (at7(p, 0.0).page_reads, at7(p, 0.0).page_flushes)).collect();
    let (c1, f1, l1) = (at7("cfdc", 1.0).tps, at7("cflru", 1.0).tps, at7("lru", 1.0).tps);
    let t7: Vec<Vec<String>> = intensities
        .iter()
        .map(|&u| {
            let mut line = vec![format!("{:.0}%", 100.0 * u)];
            line.extend(["lru", "cflru", "cfdc"].iter().map(|p| format!("{:.0}", at7(p, u).tps)));
            line
        })
        .collect();
    #[derive(serde::Serialize)]
    struct Xy<'a> {
        x: f64,
        policy: &'a str,
        tps: f64,
    }
    let d7: Vec<Xy> = rows7.iter().map(|r| Xy { x: 100.0 * upd(r), policy: short(r), tps: r.tps }).collect();
    ctx.write_csv("cfdc-fig7-by-intensity.csv", &d7)?;
    let mut spec7 = line("x", "tps", "policy", &[], "Fig. 7: throughput vs update intensity (FAST)");
    spec7.x_label = Some("update intensity (%)".into());
    spec7.y_label = Some("transactions per second".into());
    spec7.log_y = true;
    let plot7 = ctx.plot("cfdc-fig7-by-intensity.csv", "fig7-update-intensity", &spec7)?;
    report.sections.push(Section {
        title: "Fig. 7 — update intensity".into(),
        setup: "TPS on FAST at 4,096 pages (scaled in quick mode), the share of update transactions varied with the total fixed.".into(),
        table: markdown_table(&["update intensity", "LRU", "CFLRU", "CFDC"], &t7),
        files: vec!["cfdc-fig7.csv".into(), "cfdc-fig7-by-intensity.csv".into()],
        plots: vec![plot7],
        claims: vec![
            Claim::judged(
                "§4.4: \"With 0% update intensity, i.e., no updates at all, CFDC and CFLRU degenerate to LRU and all three algorithms reached a very high throughput level of around 9,500 TPS\"",
                format!(
                    "at 0%: page reads {:?}, page flushes {:?} (LRU, CFLRU, CFDC); TPS {:.0} / {:.0} / {:.0}",
                    io0.iter().map(|x| x.0).collect::<Vec<_>>(),
                    io0.iter().map(|x| x.1).collect::<Vec<_>>(),
                    u0[0],
                    u0[1],
                    u0[2]
                ),
                io0.windows(2).all(|w| w[0] == w[1]),
                "degenerating to LRU judged on the I/O, which is exact: identical page reads and flushes. TPS at 0% is almost all wall-clock \
                 time (no writes) and varies with the machine's load; the absolute level (9,500 TPS on the paper's SSD) is device-specific",
            ),
            Claim::judged(
                "§4.4: \"Under 100% update intensity, the throughput achieved by CFDC (702 TPS) is 1.73 times of that achieved by CFLRU (407 TPS) and LRU (406 TPS)\"",
                format!("CFDC {c1:.0}, CFLRU {f1:.0}, LRU {l1:.0} TPS: ×{:.2} over CFLRU; CFLRU {} vs LRU", c1 / f1, pct_change(f1, l1)),
                c1 / f1 > 1.2 && (f1 / l1 - 1.0).abs() < 0.05,
                "agree if CFDC is clearly ahead (over ×1.2) and CFLRU within 5% of LRU (\"it degenerates to LRU if all buffer pages are dirty\"); the factor itself is device-specific",
            ),
        ],
    });

    // Fig. 8: number of scans.
    let scans: Vec<u64> = if ctx.quick { vec![0, 40, 160] } else { vec![0, 200, 400, 800, 1600] };
    let mut points = Vec::new();
    for p in &three {
        for &s in &scans {
            let c = sc.base(p).with_scans(s);
            points.push(Point { config: c, store: StoreSpec::Sim(fast()) });
        }
    }
    let rows8 = run_points(ctx, "cfdc-fig8", points)?;
    let at8 =
        |pol: &str, s: u64| rows8.iter().find(|r| short(r) == pol && r.range_queries + r.range_updates == s).unwrap();
    let declining =
        ["lru", "cflru", "cfdc"].iter().all(|p| scans.windows(2).all(|w| at8(p, w[1]).tps < at8(p, w[0]).tps));
    let gain: Vec<f64> = scans.iter().map(|&s| at8("cfdc", s).tps / at8("cflru", s).tps - 1.0).collect();
    let t8: Vec<Vec<String>> = scans
        .iter()
        .map(|&s| {
            let mut line = vec![thousands(s)];
            line.extend(["lru", "cflru", "cfdc"].iter().map(|p| format!("{:.0}", at8(p, s).tps)));
            line
        })
        .collect();
    let d8: Vec<Xy> = rows8
        .iter()
        .map(|r| Xy { x: (r.range_queries + r.range_updates) as f64, policy: short(r), tps: r.tps })
        .collect();
    ctx.write_csv("cfdc-fig8-by-scans.csv", &d8)?;
    let mut spec8 = line("x", "tps", "policy", &[], "Fig. 8: throughput vs number of scans (FAST)");
    spec8.x_label = Some("range transactions".into());
    spec8.y_label = Some("transactions per second".into());
    let plot8 = ctx.plot("cfdc-fig8-by-scans.csv", "fig8-scans", &spec8)?;
    report.sections.push(Section {
        title: "Fig. 8 — sequentiality (number of scans)".into(),
        setup: "TPS on FAST at 4,096 pages; the number of range transactions (half queries, half updates) varied, point transactions as in the baseline.".into(),
        table: markdown_table(&["range transactions", "LRU", "CFLRU", "CFDC"], &t8),
        files: vec!["cfdc-fig8.csv".into(), "cfdc-fig8-by-scans.csv".into()],
        plots: vec![plot8],
        claims: vec![
            Claim::judged(
                "§4.5: \"Obviously, the performance declines with an increasing sequentiality of the workload, because a scan lasts much longer than a single random access\"",
                "TPS of each policy against the number of scans (table)".to_string(),
                declining,
                "agree if every policy's TPS falls as scans are added",
            ),
            Claim::judged(
                "§4.5: CFDC's \"performance gain over LRU and CFLRU should be less noticeable, if the workload consists of a larger part of sequential accesses\"",
                format!("CFDC over CFLRU: {}", gain.iter().map(|x| format!("{:+.0}%", 100.0 * x)).collect::<Vec<_>>().join(", ")),
                gain.last() < gain.first(),
                "agree if the gain with the most scans is below the gain with none",
            ),
        ],
    });

    // Fig. 9: window size.
    let windows: Vec<f64> =
        if ctx.quick { vec![0.25, 0.5, 0.75] } else { vec![0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875] };
    let mut points = Vec::new();
    for base in [policy("cflru"), policy("cfdc")] {
        for &w in &windows {
            let p = flashbuf_engine::workload::with_window(&base, w)?;
            points.push(Point { config: sc.base(&p), store: StoreSpec::Sim(fast()) });
        }
    }
    let rows9 = run_points(ctx, "cfdc-fig9", points)?;
    let t9: Vec<Vec<String>> = windows
        .iter()
        .enumerate()
        .map(|(i, w)| {
            vec![
                format!("{:.1}%", 100.0 * w),
                format!("{:.0}", rows9[i].tps),
                format!("{:.0}", rows9[windows.len() + i].tps),
            ]
        })
        .collect();
    let (cl, cd) = (&rows9[..windows.len()], &rows9[windows.len()..]);
    let grows = |v: &[WorkloadResult]| v.last().unwrap().tps > v.first().unwrap().tps;
    let (gcl, gcd) = (cl.last().unwrap().tps - cl[0].tps, cd.last().unwrap().tps - cd[0].tps);
    let d9: Vec<Xy> = windows
        .iter()
        .enumerate()
        .flat_map(|(i, &w)| {
            [Xy { x: 100.0 * w, policy: "cflru", tps: cl[i].tps }, Xy { x: 100.0 * w, policy: "cfdc", tps: cd[i].tps }]
        })
        .collect();
    ctx.write_csv("cfdc-fig9-by-window.csv", &d9)?;
    let mut spec9 = line("x", "tps", "policy", &[], "Fig. 9: throughput vs priority window (FAST)");
    spec9.x_label = Some("window (% of the buffer)".into());
    spec9.y_label = Some("transactions per second".into());
    let plot9 = ctx.plot("cfdc-fig9-by-window.csv", "fig9-window", &spec9)?;
    report.sections.push(Section {
        title: "Fig. 9 — priority window size".into(),
        setup: "TPS on FAST at 4,096 pages for CFLRU (clean-first window w) and CFDC (priority window) from 12.5% to 87.5% of the buffer (the paper's axis says \"0.125% to 0.875%\", read as fractions).".into(),
        table: markdown_table(&["window", "CFLRU", "CFDC"], &t9),
        files: vec!["cfdc-fig9.csv".into(), "cfdc-fig9-by-window.csv".into()],
        plots: vec![plot9],
        claims: vec![
            Claim::judged(
                "§4.6: \"both policies benefit from a larger priority window\"",
                format!("CFLRU {:.0} → {:.0} TPS, CFDC {:.0} → {:.0} TPS from the smallest to the largest window", cl[0].tps, cl.last().unwrap().tps, cd[0].tps, cd.last().unwrap().tps),
                grows(cl) && grows(cd),
                "TPS at the largest window above the smallest",
            ),
            Claim::judged(
                "§4.6: \"but CFDC utilizes this resource more efficiently\"",
                format!("TPS gained over the window range: CFDC +{gcd:.0}, CFLRU +{gcl:.0}"),
                gcd > gcl,
                "agree if CFDC gains more throughput than CFLRU from the larger window",
            ),
        ],
    });

    // The engine's page trace through the simulator: every policy on the same reference string.
    let trace_path = ctx.out.join("engine-trace.fbt");
    if trace_path.exists() {
        std::fs::remove_file(&trace_path)?;
    }
    let mut rec = sc.base(&policy("lru"));
    rec.record_trace = Some(trace_path.clone());
    ctx.progress.status("cfdc: recording the engine's page trace");
    run_workload(&rec, &StoreSpec::Memory).map_err(|e| anyhow::anyhow!("recording the engine trace: {e}"))?;
    let t = Trace::file(&trace_path, flashbuf_trace::ReadOptions::default())?;
    let sim_policies: Vec<PolicyConfig> =
        ["lru", "cflru", "cfdc", "ad-lru", "ccf-lru", "lru-wsr", "cflru-c", "fab", "bplru", "ref", "bp-ref"]
            .iter()
            .map(|p| policy(p))
            .collect();
    let frames = sc.frames(4096);
    let mut specs = Vec::new();
    for d in [fast(), bast(), page()] {
        for p in &sim_policies {
            specs.push(t.run(p, frames, &d));
        }
    }
    let sim = ctx.run("cfdc-trace-replay", &specs, &vec![t.requests; specs.len()])?;
    let mut tr = Vec::new();
    for r in &sim {
        tr.push(vec![
            r.device.split('/').next().unwrap_or("").to_uppercase(),
            r.policy_name.clone(),
            thousands(r.page_writes),
            format!("{:.0}", r.device_time_us / r.page_writes.max(1) as f64),
            format!("{:.1}", r.device_time_us / 1e6),
            format!("{}/{}/{}", r.merges_switch, r.merges_partial, r.merges_full),
            format!("{:.2}%", 100.0 * r.hit_ratio),
        ]);
    }
    let find = |dev: &str, p: &str| sim.iter().find(|r| r.device.starts_with(dev) && r.policy_name == p).unwrap();
    let mut replay_claims = Vec::new();
    for dev in ["fast", "bast"] {
        let (cd, cl) = (find(dev, "cfdc"), find(dev, "cflru"));
        replay_claims.push(Claim::judged(
            format!("CFDC's claim is cheaper writes, not fewer (§4.3) — replayed on {}", dev.to_uppercase()),
            format!(
                "CFDC writes {} pages vs CFLRU {} ({}), device time {:.1} s vs {:.1} s ({})",
                thousands(cd.page_writes),
                thousands(cl.page_writes),
                pct_change(cd.page_writes as f64, cl.page_writes as f64),
                cd.device_time_us / 1e6,
                cl.device_time_us / 1e6,
                pct_change(cd.device_time_us, cl.device_time_us)
            ),
            cd.device_time_us < cl.device_time_us,
            "agree if CFDC's device time is lower whatever its write count",
        ));
    }
    report.sections.push(Section {
        title: "The engine's page trace through the simulator".into(),
        setup: format!(
            "The baseline's page-reference string ({} fixes, recorded by the buffer manager: it does not depend on the policy with one worker) \
             replayed through the simulator at {} frames for eleven policies on FAST, BAST and the page-mapped device (each filled sequentially).",
            thousands(t.requests),
            thousands(frames as u64)
        ),
        table: markdown_table(&["device", "policy", "page writes", "µs per write", "device time (s)", "merges s/p/f", "hit ratio"], &tr),
        files: vec!["cfdc-trace-replay.csv".into(), "engine-trace.fbt".into()],
        plots: vec![ctx.plot(
            "cfdc-trace-replay.csv",
            "replay-device-time",
            &bars("policy_name", "device_time_us", "device", &[], "The engine's page trace: device time per policy"),
        )?],
        claims: replay_claims,
    });
    Ok(report)
}
