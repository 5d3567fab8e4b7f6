//! The adaptive REF against a slow, obviously-correct model written from its header: the REF /
//! BP-REF model of the paper's text (window = the `w` LRU-most pages, recomputed at every
//! access) whose `w`, |VB| and padding threshold are set at every epoch's end by the same tuner
//! from the cost of the events the *model* counted itself, priced with the header's table of
//! prices per FTL class (written out again here, not taken from the policy). Victim by victim,
//! on random traces over every FTL class; plus the tuner's convergence on separable unimodal
//! costs, and the replacer contract with pins.

use std::collections::{BTreeSet, HashMap};

use flashbuf_policy::ref_adaptive::{PAD_STEPS, RefAdaptive, RefAdaptiveConfig, Tuner, VW_STEPS};
use flashbuf_policy::testing::Harness;
use flashbuf_policy::{DeviceProfile, FtlClass, PolicyParams, Replacer};
use proptest::prelude::*;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Step {
    evicted: Vec<u64>,
    padding_reads: Vec<u64>,
    written: Vec<u64>,
    bypassed: bool,
    hit: bool,
}

fn step<R: Replacer>(h: &mut Harness<R>, page: u64, write: bool) -> Step {
    let (e, p, w, b) = (h.evicted.len(), h.padding_reads.len(), h.written.len(), h.bypassed.len());
    let hit = if write { h.write(page) } else { h.read(page) };
    Step {
        evicted: h.evicted[e..].iter().map(|x| x.page).collect(),
        padding_reads: h.padding_reads[p..].to_vec(),
        written: h.written[w..].to_vec(),
        bypassed: h.bypassed.len() > b,
        hit,
    }
}

/// REF/BP-REF as in `block_family.rs`'s model, with settable parameters, plus the adaptation.
struct Model {
    cap: usize,
    ppb: u64,
    w: usize,
    vb_max: usize,
    pad_above: u64,
    dirty: HashMap<u64, bool>,
    /// Pages, LRU first.
    lru: Vec<u64>,
    vb: Vec<u64>,
    last_access: HashMap<u64, u64>,
    now: u64,
    // Adaptation.
    tuner: Tuner,
    /// Prices of a read, a single-page write-back, an episode, a padded block (the header's
    /// table).
    prices: [f64; 4],
    /// Whether the threshold is tuned (padding can pay); otherwise it is 1 (never pad).
    pads: bool,
    epoch_len: u64,
    requests: u64,
    read_misses: u64,
    dirty_evictions: u64,
    /// (block, selection) pairs that had a dirty single-page eviction (ever: a pair counts once
    /// even when its evictions straddle two epochs).
    episode_pairs: BTreeSet<(u64, u64)>,
    /// Episodes begun this epoch.
    episodes: u64,
    padded_blocks: u64,
    padding_pages: u64,
    selections: u64,
}

impl Model {
    fn new(cap: usize, vb_max: u32, d: DeviceProfile) -> Self {
        let vb_cap = (vb_max as usize).min(cap + 1);
        let vb = 3.min(vb_cap);
        let n = d.pages_per_block as f64;
        let (r, p, e) = (d.read_us, d.program_us, d.erase_us);
        let (page, episode, block) = match d.ftl {
            FtlClass::Ideal => (p, 0.0, n * p),
            FtlClass::PageMapped => (p + e / n, 0.0, n * p + e),
            FtlClass::BlockMapped => (p + n * (r + p) + e, 0.0, n * p + e),
            FtlClass::LogBlock => (p, n * (r + p) + 2.0 * e, n * p + e),
            FtlClass::SharedLog => (p + e / n, n * (r + p) + e, n * p + e),
        };
        // Padding's best case: a block whole and dirty, against its pages written apart.
        let pads = block < n * page + episode;
        let mut m = Model {
            cap,
            ppb: d.pages_per_block as u64,
            w: 0,
            vb_max: vb,
            pad_above: 0,
            dirty: HashMap::new(),
            lru: Vec::new(),
            vb: Vec::new(),
            last_access: HashMap::new(),
            now: 0,
            tuner: if pads {
                Tuner::new([4, vb - 1, 3], [VW_STEPS.len(), vb_cap, PAD_STEPS.len()])
            } else {
                Tuner::new([4, vb - 1, 0], [VW_STEPS.len(), vb_cap, 1])
            },
            prices: [r, page, episode, block],
            pads,
            epoch_len: cap.max(64) as u64,
            requests: 0,
            read_misses: 0,
            dirty_evictions: 0,
            episode_pairs: BTreeSet::new(),
            episodes: 0,
            padded_blocks: 0,
            padding_pages: 0,
            selections: 0,
        };
        m.apply();
        m
    }

    /// The threshold in force: a step of the grid, or 1 when padding is not tuned.
    fn pad(&self) -> f64 {
        if self.pads { PAD_STEPS[self.tuner.idx[2]] } else { 1.0 }
    }

    fn apply(&mut self) {
        let vw = VW_STEPS[self.tuner.idx[0]];
        // Never the whole buffer, unless it is one frame.
        self.w = ((vw * self.cap as f64).round() as usize).clamp(1, self.cap.saturating_sub(1).max(1));
        self.vb_max = self.tuner.idx[1] + 1;
        self.pad_above = (self.pad() * self.ppb as f64).floor() as u64;
    }

    fn served(&mut self, read_miss: bool) {
        self.requests += 1;
        self.read_misses += read_miss as u64;
        if self.requests < self.epoch_len {
            return;
        }
        let [read, page, episode, block] = self.prices;
        let cost = read * (self.read_misses + self.padding_pages) as f64
            + page * self.dirty_evictions as f64
            + episode * self.episodes as f64
            + block * self.padded_blocks as f64;
        self.tuner.epoch(cost / self.requests as f64);
        self.apply();
        self.requests = 0;
        self.read_misses = 0;
        self.dirty_evictions = 0;
        self.episodes = 0;
        self.padded_blocks = 0;
        self.padding_pages = 0;
    }

    fn window(&self) -> Vec<u64> {
        self.lru.iter().take(self.w).copied().collect()
    }

    fn select_vb(&mut self, incoming: Option<u64>) {
        self.selections += 1;
        let mut count: HashMap<u64, (u64, u64)> = HashMap::new();
        for p in self.window() {
            let b = p / self.ppb;
            count.entry(b).or_insert((0, self.last_access[&b])).0 += 1;
        }
        if let Some(p) = incoming {
            let e = count.entry(p / self.ppb).or_default();
            *e = (e.0 + 1, self.now);
        }
        let mut blocks: Vec<(u64, (u64, u64))> = count.into_iter().collect();
        blocks.sort_by_key(|&(_, (c, t))| (std::cmp::Reverse(c), t));
        self.vb = blocks.into_iter().take(self.vb_max).map(|(b, _)| b).collect();
    }

    fn access(&mut self, page: u64, write: bool) -> Step {
        self.now += 1;
        let mut s = Step { hit: self.dirty.contains_key(&page), ..Default::default() };
        if s.hit {
            self.last_access.insert(page / self.ppb, self.now);
            *self.dirty.get_mut(&page).unwrap() |= write;
            self.lru.retain(|&p| p != page);
            self.lru.push(page);
            self.served(false);
            return s;
        }
        if self.dirty.len() == self.cap {
            let inc_in_window = self.w == self.cap;
            let mut victim = None;
            for attempt in 0..2 {
                let list: Vec<u64> = self.window().into_iter().filter(|p| self.vb.contains(&(p / self.ppb))).collect();
                if let Some(&v) = list.first() {
                    victim = Some(v);
                    break;
                }
                if inc_in_window && self.vb.contains(&(page / self.ppb)) {
                    s.bypassed = true;
                    if write {
                        s.written.push(page);
                        self.dirty_evictions += 1;
                        self.episodes += 1;
                    }
                    self.served(!write);
                    return s;
                }
                if attempt == 0 {
                    self.select_vb(inc_in_window.then_some(page));
                }
            }
            let v = victim.expect("a victim without pins");
            let b = v / self.ppb;
            let in_window = self.window().iter().filter(|p| *p / self.ppb == b).count() as u64;
            let block_dirty = self.dirty.iter().any(|(&p, &d)| d && p / self.ppb == b);
            if block_dirty && in_window > self.pad_above {
                let mut pages: Vec<u64> = self.lru.iter().copied().filter(|p| p / self.ppb == b).collect();
                pages.sort_unstable();
                for p in b * self.ppb..(b + 1) * self.ppb {
                    if !pages.contains(&p) {
                        s.padding_reads.push(p);
                        self.padding_pages += 1;
                    }
                    s.written.push(p);
                }
                for &p in &pages {
                    self.dirty.remove(&p);
                    s.evicted.push(p);
                }
                self.padded_blocks += 1;
                self.lru.retain(|x| !pages.contains(x));
            } else {
                if self.dirty.remove(&v).unwrap() {
                    s.written.push(v);
                    self.dirty_evictions += 1;
                    if self.episode_pairs.insert((b, self.selections)) {
                        self.episodes += 1;
                    }
                }
                s.evicted.push(v);
                self.lru.retain(|&x| x != v);
            }
        }
        self.last_access.insert(page / self.ppb, self.now);
        *self.dirty.entry(page).or_insert(false) |= write;
        self.lru.push(page);
        self.served(!write);
        s
    }
}

/// Traces with sequential write runs and a hot region, so that clustering, padding and hits all
/// happen and the settings move.
fn trace(pages: u64, len: usize) -> impl Strategy<Value = Vec<(u64, bool)>> {
    proptest::collection::vec(
        prop_oneof![
            3 => (0..pages, any::<bool>()).prop_map(|x| vec![x]),
            2 => (0..pages / 4, any::<bool>()).prop_map(|x| vec![x]),
            1 => (0..pages, 1u64..9).prop_map(|(start, n)| (start..start + n).map(|p| (p, true)).collect()),
        ],
        1..len,
    )
    .prop_map(|v| v.into_iter().flatten().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn ref_adaptive_matches_model(
        cap in 1usize..40,
        ppb in 1u32..6,
        vb_max in 1u32..5,
        erase in prop_oneof![Just(0.0), Just(2000.0)],
        ftl in prop_oneof![
            Just(FtlClass::Ideal),
            Just(FtlClass::PageMapped),
            Just(FtlClass::BlockMapped),
            Just(FtlClass::LogBlock),
            Just(FtlClass::SharedLog),
        ],
        t in trace(80, 500),
    ) {
        let d = DeviceProfile { read_us: 10.0, program_us: 200.0, erase_us: erase, pages_per_block: ppb, ftl, logical_pages: 0 };
        let mut cfg = RefAdaptiveConfig { vb_max, ..Default::default() };
        cfg.fill_device(&d);
        let mut h = Harness::<RefAdaptive>::new(cap, cfg);
        let mut m = Model::new(cap, vb_max, d);
        for (i, &(page, write)) in t.iter().enumerate() {
            let got = step(&mut h, page, write);
            let want = m.access(page, write);
            prop_assert_eq!(&got, &want, "access {} ({} of page {})", i, if write { "write" } else { "read" }, page);
            let want = (VW_STEPS[m.tuner.idx[0]], m.tuner.idx[1] as u32 + 1, m.pad());
            prop_assert_eq!(h.policy.settings(), want, "settings after access {}", i);
            prop_assert_eq!(h.policy.window_pages(), m.w);
        }
    }

    /// On a separable cost with one minimum per parameter, the tuner reaches the minimum and
    /// then stays within one step of it.
    #[test]
    fn tuner_settles_next_to_the_minimum(
        start in (0usize..7, 0usize..8, 0usize..7),
        best in (0usize..7, 0usize..8, 0usize..7),
        weights in (1.0f64..10.0, 1.0f64..10.0, 1.0f64..10.0),
    ) {
        let len = [7, 8, 7];
        let best = [best.0, best.1, best.2];
        let wts = [weights.0, weights.1, weights.2];
        let mut t = Tuner::new([start.0, start.1, start.2], len);
        let cost = |idx: [usize; 3]| (0..3).map(|i| wts[i] * (idx[i] as f64 - best[i] as f64).powi(2)).sum::<f64>();
        for _ in 0..120 {
            let c = cost(t.idx);
            t.epoch(c);
        }
        for _ in 0..30 {
            let c = cost(t.idx);
            t.epoch(c);
            for (i, (&at, &b)) in t.idx.iter().zip(&best).enumerate() {
                prop_assert!(at.abs_diff(b) <= 1, "parameter {} at {} with the minimum at {}", i, at, b);
            }
        }
    }
}

#[test]
fn ref_adaptive_moves_its_settings_and_writes_back_every_page() {
    // 32 frames, 4-page blocks: a hot region re-written, sequential runs; the settings must
    // leave their start, and the harness checks every write-back and invariant.
    let mut cfg = RefAdaptiveConfig::default();
    cfg.fill_device(&DeviceProfile { pages_per_block: 4, ftl: FtlClass::LogBlock, ..DeviceProfile::MICRON_PAGE });
    let mut h = Harness::<RefAdaptive>::new(32, cfg);
    let mut seen = BTreeSet::new();
    let mut x = 12345u64;
    for i in 0..20_000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let page = if i % 10 < 3 { (x >> 33) % 24 } else { (x >> 33) % 400 };
        if (x >> 20).is_multiple_of(5) {
            h.read(page);
        } else {
            h.write(page);
        }
        seen.insert(format!("{:?}", h.policy.settings()));
    }
    h.flush();
    assert!(seen.len() > 3, "settings barely moved: {seen:?}");
}
