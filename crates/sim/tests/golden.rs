//! Golden numbers: the exact hits and page writes of every policy at three buffer sizes, and
//! the exact flash programs, erases and merges over the page-mapped and BAST devices, on a small
//! trace flashbuf generates itself (portable generator, fixed seed).
//!
//! Any change of behaviour shows here. When a change is intended, the failure message prints the
//! new table in Rust syntax: paste it below and say why in the commit message. A policy added to
//! the registry without a line here fails too.

use flashbuf_flash::{DeviceConfig, DeviceKind, NandPreset};
use flashbuf_policy::{POLICIES, PolicyConfig};
use flashbuf_sim::{RunSpec, execute};
use flashbuf_trace::TraceSpec;

const TRACE: &str = "gen:zipf,requests=20000,pages=2000,write-ratio=0.5,seed=7";
const BUFFERS: [usize; 3] = [64, 256, 1024];

/// (policy, [(hits, page writes); 3 buffers]) over the ideal device.
const BUFFER_GOLDEN: &[(&str, [(u64, u64); 3])] = &[
    ("lru", [(5781, 7674), (10277, 5537), (15941, 2710)]),
    ("clock", [(5527, 7858), (10002, 5777), (15811, 2873)]),
    ("lru-2", [(7909, 6262), (11536, 4620), (16256, 2428)]),
    ("2q", [(7589, 6382), (11296, 4756), (15778, 2945)]),
    ("arc", [(7766, 6357), (11409, 4678), (16100, 2588)]),
    ("min", [(10432, 5439), (14309, 3561), (17664, 1852)]),
    ("min-cost", [(9997, 5116), (13901, 3270), (17418, 1739)]),
    ("cflru", [(5967, 7246), (10531, 4982), (16069, 2304)]),
    ("lru-wsr", [(5938, 7365), (10483, 5158), (16026, 2460)]),
    ("ccf-lru", [(6653, 6640), (11070, 4514), (16240, 2118)]),
    ("cflru-c", [(7563, 6322), (11484, 4438), (16192, 2237)]),
    ("ad-lru", [(8159, 5916), (11745, 4169), (16279, 2130)]),
    ("cfdc", [(5246, 7708), (9712, 5554), (15842, 2473)]),
    ("fab", [(1720, 9537), (4826, 8447), (12761, 5098)]),
    ("bplru", [(7210, 236367), (11906, 92129), (16414, 10177)]),
    ("ref", [(3859, 8609), (8145, 6692), (15268, 3270)]),
    ("bp-ref", [(3859, 8609), (8083, 6986), (15198, 5405)]),
    ("ref-adaptive", [(5035, 8038), (9384, 6029), (15207, 3320)]),
    ("casa", [(6079, 6978), (10559, 4780), (16096, 2208)]),
    ("lirs", [(7900, 6254), (11476, 4620), (16245, 2418)]),
    ("s3fifo", [(8126, 6068), (11708, 4431), (16184, 2481)]),
    ("sieve", [(8117, 5966), (11642, 4324), (16289, 2316)]),
    ("fbp", [(6619, 6670), (11053, 4529), (16217, 2174)]),
    ("fbx", [(8159, 5916), (11745, 4169), (16279, 2130)]),
];

/// (policy, page-mapped at 256 frames: (flash programs, erases), BAST at 256 frames: (flash
/// programs, erases, switch, partial, full merges)).
type FlashRow = (&'static str, (u64, u64), (u64, u64, u64, u64, u64));
const FLASH_GOLDEN: &[FlashRow] = &[
    ("lru", (26538, 411), (213859, 6508, 0, 30, 3239)),
    ("clock", (27617, 428), (212561, 6458, 0, 32, 3213)),
    ("lru-2", (22102, 342), (193380, 5885, 0, 39, 2923)),
    ("2q", (22540, 349), (197135, 6004, 0, 36, 2984)),
    ("arc", (22314, 346), (194741, 5933, 0, 33, 2950)),
    ("min", (15737, 243), (149715, 4570, 0, 22, 2274)),
    ("min-cost", (13941, 215), (138096, 4216, 0, 22, 2097)),
    ("cflru", (23169, 359), (199162, 6068, 0, 28, 3020)),
    ("lru-wsr", (24956, 387), (205095, 6245, 0, 31, 3107)),
    ("ccf-lru", (21295, 329), (189857, 5787, 0, 33, 2877)),
    ("cflru-c", (22037, 341), (186588, 5694, 0, 26, 2834)),
    ("ad-lru", (20508, 317), (177809, 5431, 1, 24, 2703)),
    ("cfdc", (24601, 381), (44082, 1228, 0, 0, 614)),
    ("fab", (39646, 616), (45903, 1172, 0, 0, 586)),
    ("bplru", (129235, 2016), (92897, 1475, 1451, 0, 12)),
    ("ref", (30953, 480), (51524, 1404, 0, 0, 702)),
    ("bp-ref", (32139, 499), (50730, 1377, 7, 0, 685)),
    ("ref-adaptive", (29056, 451), (48554, 923, 527, 0, 198)),
    ("casa", (22119, 342), (192366, 5860, 0, 30, 2915)),
    ("lirs", (22021, 341), (194364, 5924, 0, 32, 2946)),
    ("s3fifo", (20848, 322), (187275, 5707, 1, 36, 2835)),
    ("sieve", (21971, 340), (181860, 5545, 1, 32, 2756)),
    ("fbp", (21232, 328), (25026, 415, 375, 0, 20)),
    ("fbx", (21349, 330), (26580, 462, 370, 0, 46)),
];

fn row(policy: &str, frames: usize, device: DeviceConfig) -> flashbuf_sim::ResultRow {
    let trace = TraceSpec::parse(TRACE).unwrap();
    let policy: PolicyConfig = policy.parse().unwrap();
    let spec = RunSpec::new(trace, 2000, policy, frames, device);
    execute(&spec, &mut |_| {}).unwrap()
}

#[test]
fn every_policy_matches_its_golden_numbers() {
    let ideal = DeviceConfig { kind: DeviceKind::Ideal, ..Default::default() };
    let page = DeviceConfig { kind: DeviceKind::Page, ..Default::default() };
    let bast = DeviceConfig { kind: DeviceKind::Bast, preset: NandPreset::Ref, ..Default::default() };
    let mut buffer_table = Vec::new();
    let mut flash_table = Vec::new();
    for (name, _) in POLICIES {
        let b = BUFFERS.map(|f| {
            let r = row(name, f, ideal.clone());
            (r.hits, r.page_writes)
        });
        buffer_table.push((name.to_string(), b));
        let p = row(name, 256, page.clone());
        let q = row(name, 256, bast.clone());
        flash_table.push((
            *name,
            (p.flash_programs, p.erases),
            (q.flash_programs, q.erases, q.merges_switch, q.merges_partial, q.merges_full),
        ));
    }
    let got_buffer: Vec<(&str, [(u64, u64); 3])> = buffer_table.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    let got_flash: Vec<FlashRow> = flash_table.iter().map(|(n, p, q)| (*n, *p, *q)).collect();
    let mut printed = String::from("const BUFFER_GOLDEN: &[(&str, [(u64, u64); 3])] = &[\n");
    for (n, b) in &got_buffer {
        printed.push_str(&format!("    (\"{n}\", {b:?}),\n"));
    }
    printed.push_str("];\n\nconst FLASH_GOLDEN: &[FlashRow] = &[\n");
    for (n, p, q) in &got_flash {
        printed.push_str(&format!("    (\"{n}\", {p:?}, {q:?}),\n"));
    }
    printed.push_str("];\n");
    assert_eq!(got_buffer, BUFFER_GOLDEN, "buffer golden numbers changed; new table:\n{printed}");
    assert_eq!(got_flash, FLASH_GOLDEN, "flash golden numbers changed; new table:\n{printed}");
}

#[test]
fn golden_runs_are_consistent() {
    // Sanity relations the golden numbers must satisfy, independent of the pinned values.
    let ideal = DeviceConfig { kind: DeviceKind::Ideal, ..Default::default() };
    let lru = BUFFERS.map(|f| row("lru", f, ideal.clone()));
    let min = BUFFERS.map(|f| row("min", f, ideal.clone()));
    for i in 0..3 {
        assert!(min[i].hits >= lru[i].hits, "MIN is the hit-ratio bound");
        if i > 0 {
            assert!(lru[i].hits >= lru[i - 1].hits, "LRU is a stack algorithm: more frames, no fewer hits");
        }
    }
}
