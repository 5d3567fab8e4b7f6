//! Adaptive REF (`ref-adaptive`): BP-REF whose victim window, victim-block count and padding
//! threshold are tuned at run time from what the policy observes.
//!
//! Source: Seo & Shin, *Recently-evicted-first buffer replacement policy for flash storage
//! devices* (IEEE Trans. Consumer Electronics 54(3), 2008). The policy itself is REF/BP-REF of
//! §III–IV (`ref_policy.rs`, `bp_ref.rs`: same `RefCore`, same documented choices). What this
//! file adds is the paper's own open item, §VI: "a dynamic adaptation technique is required,
//! which adjusts the sizes of victim window and victim block observing the I/O pattern at run
//! time. The block padding threshold also should be adjusted based on the I/O pattern." The
//! paper gives the trade-offs but no rule: "If the size of VW is too large, recently-used pages
//! are evicted thus increasing the miss ratio of buffer cache. If the size of VW is too small,
//! REF acts like the original LRU scheme thus invoking the log block thrashing" (§III.B); "the
//! block padding threshold should be determined carefully considering the write pattern and the
//! FTL scheme" (§V); its best fixed values differ by trace and FTL (VW 75%, |VB| 3; padding 10%
//! under BAST, 40% under FAST).
//!
//! # The adaptation rule (ours)
//!
//! Every *epoch* of `B` requests (`B` = buffer frames) the policy prices what its own decisions
//! caused during that epoch, with what the device it runs on charges for them (the chip's read,
//! program and erase latencies `r`, `p`, `e`, its pages per block and the class of its FTL, all
//! told by the run path: [`PolicyParams::fill_device`], as FBP and FBX are told):
//!
//! ```text
//! cost = r · (read misses + padding reads)
//!      + page · dirty single-page evictions       (pages written back one at a time)
//!      + episode · write-back episodes            (what the FTL adds for a block written apart)
//!      + block · padded blocks                    (whole blocks written in order)
//! ```
//!
//! An *episode* is one (block, VB selection) pair that wrote at least one dirty page without
//! padding: the scattered writes of one block that the FTL must bring together later (REF's
//! whole point, Fig. 3: fewer episodes, fewer merges). The prices per FTL class (`P` = pages per
//! block):
//!
//! | FTL | page | episode | block |
//! | --- | --- | --- | --- |
//! | ideal | `p` | 0 | `P·p` |
//! | page-mapped | `p + e/P` | 0 | `P·p + e` |
//! | block-mapped | `p + P·(r + p) + e` | 0 | `P·p + e` |
//! | BAST (log blocks, 1:1) | `p` | `P·(r + p) + 2e` | `P·p + e` |
//! | FAST (shared log blocks) | `p + e/P` | `P·(r + p) + e` | `P·p + e` |
//!
//! * **Ideal device**: a write-back is one program, a read one read; nothing else exists, so
//!   the order of writes is worth nothing and the rule minimises misses and write-backs.
//! * **Page-mapped FTL**: any page goes anywhere; a write-back costs a program plus its share of
//!   the erase that garbage collection eventually spends on the block it lands in, `e/P`, the
//!   best case (FBP's price, [`crate::fbp::write_cost_us`]). Which logical blocks a batch of
//!   write-backs belongs to does not change where they land, so an episode costs nothing extra.
//! * **Block-mapped FTL**: every page write rewrites its block (copies and an erase), FBP's
//!   price again; a whole block written at once is one block write.
//! * **BAST**: each episode occupies one log block that a full merge reclaims (copy the
//!   block's `P` pages, erase the data block and the log block); a whole block written in order
//!   is switched in (erase the old data block). This is the model the rule had for every device.
//! * **FAST**: log blocks are shared, so a log block's erase is shared by the `P` pages it holds
//!   (`e/P` per page written apart), and reclaiming it costs one merge *per associated block*
//!   (copy that block's `P` pages, erase its old data block): an episode is one association.
//!   (Episodes of one block that happen to share a log block share one merge; the policy does
//!   not see the log, so this price is an upper bound.) A whole block written from its first page
//!   goes to the sequential log and is switched in.
//!
//! Both trade-offs the paper names show up in this one number: a window too large evicts
//! recently used pages (more misses, more write-backs of pages written again), a window too
//! small or too many victim blocks spread the write-backs over more blocks (more episodes, where
//! the device charges for them); padding trades `P − k` padding reads and writes for an episode.
//!
//! The three parameters are then tuned by coordinate-wise hill climbing on the cost per request:
//! one parameter moves one step per epoch, in turn (window, victim blocks, padding threshold);
//! if the epoch after a move cost more per request than the epoch before it, that parameter's
//! direction reverses (it steps back the next time its turn comes); a parameter at the end of
//! its range turns around. The settings therefore drift towards the cheapest neighbour and then
//! oscillate by one step around it, following the workload as it changes.
//!
//! Why this rule: it needs nothing of the FTL's *state* (REF's premise, §III.B: the buffer "can
//! be implemented without changing the current FTLs ... using the recent history of buffer
//! eviction"), only the data sheet and the FTL's kind; it uses only events the policy itself
//! produces (misses, write-backs, the blocks they hit, paddings); it has no per-workload
//! constant; and it optimises the quantity the paper measures (flash execution time) on the
//! device at hand rather than on one FTL. Its limits: consecutive epochs see different
//! requests, so a change of workload can be mistaken for the effect of a move (one wrong step,
//! undone on that parameter's next turn); the FAST price is an upper bound (see above).
//!
//! # The ranges
//!
//! * **Padding only where it can pay.** Padding a block whose `d` dirty victim pages would
//!   otherwise be written apart replaces `d · page + episode` by `block + m · r` (`m` missing
//!   pages). Its best case is a block already whole and dirty (`d = P`, `m = 0`): if even then
//!   `block ≥ P · page + episode`, padding never saves anything on this device, and the
//!   threshold is fixed at 1 (never pad: plain REF), out of the tuner's hands. That is the case
//!   on the ideal device and the page-mapped FTL (`P·p` against `P·p`, and `P·p + e` against
//!   `P·p + e`): there a padded block is `P − d` page writes and reads of pure loss, which the
//!   tuner, driven by noisy epochs, would otherwise keep trying one step in three. On BAST, FAST
//!   and the block-mapped FTL padding can pay and the threshold is tuned.
//! * **No window of the whole buffer.** The window exists "to prevent the recently-used pages
//!   from being evicted" (§III.B); at VW = 100% it protects none, not even the page being
//!   requested: when the victim page list holds no buffered page the incoming page itself is
//!   the victim and goes straight through (`ref_policy.rs`, derived from Fig. 6, which uses
//!   VW = 100% on a 3-page buffer to show the eviction order, not as a setting). The buffer
//!   then stops caching the pages of the victim blocks, which a short epoch can mistake for a
//!   saving. The paper recommends 75% and warns that a window "too large" raises the miss ratio;
//!   so the range stops at 7/8, and the window is at most `B − 1` pages (a 7/8 window of a
//!   buffer of 3 frames or fewer would round up to the whole buffer). A buffer of one frame has
//!   only the whole buffer for a window.
//!
//! # Every choice made where nothing prescribes it
//!
//! * Epoch = `max(B, 64)` requests: long enough for every frame to turn over about once at a
//!   50% hit ratio, so that a window change has had its effect; independent of the workload.
//! * Steps (the grids of the paper's own experiments, §V, Figs. 8 and 11): VW in eighths of the
//!   buffer from 1/4 to 7/8 (1/4, 3/8, ..., 7/8); |VB| = 1, 2, ..., `vb-max`; padding threshold
//!   0, 0.1, 0.2, 0.4, 0.6, 0.8, 1 (1 never pads: plain REF), or 1 alone (see above).
//! * Start: the paper's recommended settings, VW = 75%, |VB| = 3 (lowered to `vb-max` if that
//!   is smaller), threshold 0.4 (its best under FAST, BP-REF's default) where padding is tuned;
//!   first move: the window, upwards; |VB| and the threshold start moving down (towards the
//!   paper's BAST findings: "better as the number of VB is smaller", threshold 10%).
//! * `vb-max` defaults to 8, the paper's log-block count (Table I) and largest |VB| (Fig. 8):
//!   "the number of VB should be smaller than the number of log blocks" (§III.B).
//! * The device figures (`read-us`, `program-us`, `erase-us`, `ppb`, `ftl`) are `auto` by
//!   default: the run's device's. A policy built without a run path (tests, the engine) assumes
//!   flashbuf's default device, the MICRON chip behind a page-mapped FTL
//!   ([`DeviceProfile::MICRON_PAGE`]), as FBP does. `write-us` is accepted for `program-us`
//!   (the key's earlier name).
//! * A request is counted when it is served: a hit, an insertion after a miss, or a bypass
//!   (the incoming page written or read straight through, only possible with a one-frame
//!   buffer; a bypassed read counts as a read miss, a bypassed write as a page write of its own
//!   episode).
//! * A read miss is priced as a read; a write miss is not (a write buffer need not fetch it; its
//!   cost comes when the page is written back).
//! * The adaptation runs at the end of the call that completes an epoch (after the eviction or
//!   insertion of that request), so the contract's call sequence is unchanged. A window change
//!   moves the window's MRU end one page at a time (`RefCore::set_window`), O(change); a |VB|
//!   change applies from the next VB selection; a threshold change from the next eviction.
//! * Ties (equal cost per request) keep the direction.

use crate::blocks::{MAX_PPB, parse_ppb};
use crate::params::{DeviceParams, DeviceProfile, FtlClass, ParamDoc, PolicyParams, auto, parse_int};
use crate::ref_policy::{EvictionEvents, RefCore};
use crate::replacer::{Access, EvictError, Evictions, FrameId, Pins, Replacer};

/// Victim-window steps, fractions of the buffer (eighths from 1/4 to 7/8: never the whole
/// buffer, see the module docs).
pub const VW_STEPS: [f64; 6] = [0.25, 0.375, 0.5, 0.625, 0.75, 0.875];
/// Padding-threshold steps (the paper's Fig. 11 grid, thinned above 0.2; 1 = never pad).
pub const PAD_STEPS: [f64; 7] = [0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0];

/// Parameters of [`RefAdaptive`]: the device, never the workload.
#[derive(Clone, Debug, PartialEq)]
pub struct RefAdaptiveConfig {
    /// The device's figures ([`DeviceParams`]: latencies, pages per block, FTL class), each
    /// `auto` (the run's device's) by default.
    pub device: DeviceParams,
    /// Largest number of victim blocks tried (paper: 8, its log-block count).
    pub vb_max: u32,
}

impl Default for RefAdaptiveConfig {
    fn default() -> Self {
        RefAdaptiveConfig { device: DeviceParams::default(), vb_max: 8 }
    }
}

impl RefAdaptiveConfig {
    /// The device figures in force ([`DeviceParams::profile`]: the given ones, the rest from
    /// flashbuf's default device).
    pub fn profile(&self) -> DeviceProfile {
        self.device.profile()
    }
}

impl PolicyParams for RefAdaptiveConfig {
    const KEYS: &'static [ParamDoc] = &[
        DeviceParams::KEYS[0],
        DeviceParams::KEYS[1],
        DeviceParams::KEYS[2],
        DeviceParams::KEYS[3],
        DeviceParams::KEYS[4],
        ParamDoc { key: "vb-max", help: "largest number of victim blocks tried, default 8 (the paper's log blocks)" },
    ];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            // REF's blocks index per-block arrays: the block policies' bound applies.
            "ppb" => self.device.ppb = auto(key, value, parse_ppb)?,
            // The key's earlier name.
            "write-us" => {
                self.device.set("program-us", value)?;
            }
            "vb-max" => self.vb_max = parse_int(key, value, 1, 64)? as u32,
            _ => {
                if !self.device.set(key, value)? {
                    return Err(format!("unknown parameter '{key}'"));
                }
            }
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        let mut v = self.device.values();
        v.push(self.vb_max.to_string());
        v
    }

    fn fill_device(&mut self, d: &DeviceProfile) {
        self.device.fill_device(d);
    }
}

/// What the device charges, µs, for each event the policy counts (the module docs' table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prices {
    /// A page read (a read miss, a padding read).
    pub read: f64,
    /// A dirty page written back on its own.
    pub page: f64,
    /// A write-back episode: what the FTL adds for a block whose pages were written apart.
    pub episode: f64,
    /// A whole block written in order (padding), apart from its padding reads.
    pub block: f64,
}

impl Prices {
    /// The prices on `d`.
    pub fn of(d: &DeviceProfile) -> Prices {
        let n = f64::from(d.pages_per_block.max(1));
        let (r, p, e) = (d.read_us, d.program_us, d.erase_us);
        let copy = n * (r + p);
        let block = n * p + e;
        let (page, episode, block) = match d.ftl {
            FtlClass::Ideal => (p, 0.0, n * p),
            FtlClass::PageMapped => (p + e / n, 0.0, block),
            FtlClass::BlockMapped => (p + copy + e, 0.0, block),
            FtlClass::LogBlock => (p, copy + 2.0 * e, block),
            FtlClass::SharedLog => (p + e / n, copy + e, block),
        };
        Prices { read: r, page, episode, block }
    }

    /// Whether padding can ever cost less than writing the block's pages apart: in its best
    /// case (every page of the block buffered and dirty, nothing to read) a padded block must
    /// be cheaper than its pages written one by one in one episode.
    pub fn padding_can_pay(&self, ppb: u32) -> bool {
        self.block < f64::from(ppb.max(1)) * self.page + self.episode
    }
}

/// The coordinate-wise hill climber over three step indices (window, victim blocks, padding).
/// Pure: it is told each epoch's cost per request and answers the next indices.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuner {
    /// Current step index of each parameter.
    pub idx: [usize; 3],
    /// Number of steps of each parameter.
    pub len: [usize; 3],
    /// Direction of each parameter's next move (+1 or −1).
    dir: [i8; 3],
    /// The parameter moved last.
    last: usize,
    /// Cost per request of the previous epoch, once there was one.
    prev: Option<f64>,
}

impl Tuner {
    /// A tuner starting at `idx` within ranges of `len` steps.
    pub fn new(idx: [usize; 3], len: [usize; 3]) -> Self {
        let idx = [0, 1, 2].map(|i| idx[i].min(len[i].max(1) - 1));
        // The window moves first, upwards; the others downwards (see the header). `last` = 2
        // so that the first move is the window's.
        Tuner { idx, len: len.map(|l| l.max(1)), dir: [1, -1, -1], last: 2, prev: None }
    }

    /// Ends an epoch that cost `cost` per request: judges the last move, makes the next one.
    pub fn epoch(&mut self, cost: f64) {
        if let Some(prev) = self.prev
            && cost > prev
        {
            self.dir[self.last] = -self.dir[self.last];
        }
        self.prev = Some(cost);
        // Next parameter with more than one step.
        let mut i = self.last;
        for _ in 0..3 {
            i = (i + 1) % 3;
            if self.len[i] > 1 {
                break;
            }
        }
        self.last = i;
        if self.len[i] <= 1 {
            return;
        }
        let at_end = |idx: usize, d: i8| (d > 0 && idx + 1 >= self.len[i]) || (d < 0 && idx == 0);
        if at_end(self.idx[i], self.dir[i]) {
            self.dir[i] = -self.dir[i];
        }
        self.idx[i] = if self.dir[i] > 0 { self.idx[i] + 1 } else { self.idx[i] - 1 };
    }
}

/// The window in pages for a fraction `vw` of `capacity` frames: `round(vw · B)`, at least 1
/// and at most `B − 1` (never the whole buffer, unless the buffer is one frame).
pub fn window_for(capacity: usize, vw: f64) -> usize {
    RefCore::window_pages(capacity, vw).min(capacity.saturating_sub(1).max(1))
}

/// The adaptive REF policy.
#[derive(Clone, Debug)]
pub struct RefAdaptive {
    core: RefCore,
    tuner: Tuner,
    /// The padding thresholds the tuner moves over: [`PAD_STEPS`], or its last step alone
    /// (never pad) where padding cannot pay.
    pad_steps: &'static [f64],
    /// Requests per epoch.
    epoch_len: u64,
    /// Requests served in this epoch.
    requests: u64,
    read_misses: u64,
    /// `core.events` when the epoch began.
    start: EvictionEvents,
    prices: Prices,
}

impl RefAdaptive {
    /// The current (window fraction, |VB|, padding threshold).
    pub fn settings(&self) -> (f64, u32, f64) {
        (VW_STEPS[self.tuner.idx[0]], self.tuner.idx[1] as u32 + 1, self.pad_steps[self.tuner.idx[2]])
    }

    /// The window size in pages.
    pub fn window_pages(&self) -> usize {
        self.core_window()
    }

    fn core_window(&self) -> usize {
        window_for(self.core.capacity(), VW_STEPS[self.tuner.idx[0]])
    }

    /// The current victim blocks, sorted (for tests and reports).
    pub fn victim_blocks(&self) -> Vec<u64> {
        self.core.victim_blocks()
    }

    /// Requests per epoch.
    pub fn epoch_requests(&self) -> u64 {
        self.epoch_len
    }

    /// The prices the epochs are costed with.
    pub fn prices(&self) -> Prices {
        self.prices
    }

    /// The cost per request of the epoch ending now, in µs, from the events since it began.
    fn epoch_cost(&self) -> f64 {
        let e = self.core.events;
        let s = self.start;
        let c = self.prices;
        let cost = c.read * (self.read_misses + e.padding_pages - s.padding_pages) as f64
            + c.page * (e.dirty_evictions - s.dirty_evictions) as f64
            + c.episode * (e.episodes - s.episodes) as f64
            + c.block * (e.padded_blocks - s.padded_blocks) as f64;
        cost / self.requests.max(1) as f64
    }

    /// Counts one served request; at the end of an epoch, adapts.
    #[inline(always)]
    fn served(&mut self, read_miss: bool) {
        self.requests += 1;
        self.read_misses += u64::from(read_miss);
        if self.requests >= self.epoch_len {
            self.adapt();
        }
    }

    #[cold]
    #[inline(never)]
    fn adapt(&mut self) {
        let cost = self.epoch_cost();
        self.tuner.epoch(cost);
        self.apply();
        self.requests = 0;
        self.read_misses = 0;
        self.start = self.core.events;
    }

    fn apply(&mut self) {
        let w = self.core_window();
        self.core.set_window(w);
        self.core.set_vb(self.tuner.idx[1] + 1);
        if self.pad_steps.len() > 1 {
            self.core.set_pad(self.pad_steps[self.tuner.idx[2]]);
        }
    }
}

impl Replacer for RefAdaptive {
    type Config = RefAdaptiveConfig;

    fn new(capacity: usize, c: &RefAdaptiveConfig) -> Self {
        let d = c.profile();
        // |VB| is at most the frames + 1 (as REF's): more victim blocks than that cannot hold
        // a page each.
        let vb_max = (c.vb_max.max(1) as usize).min(capacity + 1) as u32;
        let vb = 3u32.min(vb_max);
        let ppb = d.pages_per_block.clamp(1, MAX_PPB as u32);
        let mut core = RefCore::with_vb_cap(capacity, VW_STEPS[4], vb, vb_max, ppb, None);
        let ppb = core.ppb() as u32;
        let prices = Prices::of(&DeviceProfile { pages_per_block: ppb, ..d });
        // Where padding cannot pay the threshold stays at 1 and the core does not pad at all
        // (no threshold: REF's eviction, without BP-REF's checks).
        let (pad_steps, pad_start) = if prices.padding_can_pay(ppb) {
            core.set_pad(PAD_STEPS[3]);
            (&PAD_STEPS[..], 3)
        } else {
            (&PAD_STEPS[PAD_STEPS.len() - 1..], 0)
        };
        let tuner = Tuner::new([4, vb as usize - 1, pad_start], [VW_STEPS.len(), vb_max as usize, pad_steps.len()]);
        // The start window capped at B − 1 (a buffer of 4 frames or fewer).
        core.set_window(window_for(capacity, VW_STEPS[4]));
        RefAdaptive {
            core,
            tuner,
            pad_steps,
            epoch_len: capacity.max(64) as u64,
            requests: 0,
            read_misses: 0,
            start: EvictionEvents::default(),
            prices,
        }
    }

    #[inline(always)]
    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        self.core.on_hit(frame, access);
        self.served(false);
    }

    #[inline(always)]
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.core.on_insert(frame, access);
        self.served(!access.kind.is_write());
    }

    #[inline(always)]
    fn prefetch(&self, page: u64) {
        self.core.prefetch(page)
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        self.core.prefetch_frame(frame)
    }

    #[inline(always)]
    fn likely_victim(&self) -> Option<FrameId> {
        self.core.likely_victim()
    }

    #[inline(always)]
    fn victims<P: Pins + ?Sized>(
        &mut self,
        incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        self.core.victims(incoming, pins, out)?;
        if out.bypass {
            // Served straight through: a read costs a read; a write is a page write (the
            // buffer writes it), priced like a dirty eviction of its own episode.
            if incoming.kind.is_write() {
                self.core.events.dirty_evictions += 1;
                self.core.events.episodes += 1;
            }
            self.served(!incoming.kind.is_write());
        }
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        self.core.remove(frame)
    }

    fn len(&self) -> usize {
        self.core.len()
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        Some(self.core.is_dirty(frame))
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.core.check()?;
        if self.core_window() != self.core.window() {
            return Err(format!(
                "ref-adaptive: window {} pages, the tuner's setting is {}",
                self.core.window(),
                self.core_window()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;

    fn cfg(ppb: u32, ftl: FtlClass) -> RefAdaptiveConfig {
        let mut c = RefAdaptiveConfig::default();
        c.fill_device(&DeviceProfile { pages_per_block: ppb, ftl, ..DeviceProfile::MICRON_PAGE });
        c
    }

    #[test]
    fn starts_at_the_papers_settings() {
        let h = Harness::<RefAdaptive>::new(100, cfg(4, FtlClass::LogBlock));
        assert_eq!(h.policy.settings(), (0.75, 3, 0.4));
        assert_eq!(h.policy.window_pages(), 75);
        assert_eq!(h.policy.epoch_requests(), 100);
        let h = Harness::<RefAdaptive>::new(10, RefAdaptiveConfig { vb_max: 2, ..cfg(4, FtlClass::SharedLog) });
        assert_eq!(h.policy.settings(), (0.75, 2, 0.4));
        assert_eq!(h.policy.epoch_requests(), 64);
        // Where padding cannot pay, the threshold is 1 (plain REF) from the start.
        for ftl in [FtlClass::Ideal, FtlClass::PageMapped] {
            let h = Harness::<RefAdaptive>::new(100, cfg(4, ftl));
            assert_eq!(h.policy.settings(), (0.75, 3, 1.0), "{ftl:?}");
        }
        // Built without a run path: flashbuf's default device (MICRON, page-mapped).
        let h = Harness::<RefAdaptive>::new(100, RefAdaptiveConfig::default());
        assert_eq!(h.policy.prices(), Prices::of(&DeviceProfile::MICRON_PAGE));
        // The window is never the whole buffer (but for one frame).
        for (cap, w) in [(1, 1), (2, 1), (3, 2), (4, 3), (5, 4), (8, 6)] {
            assert_eq!(Harness::<RefAdaptive>::new(cap, cfg(4, FtlClass::Ideal)).policy.window_pages(), w, "{cap}");
        }
    }

    #[test]
    fn prices_follow_the_ftl_and_padding_pays_only_where_episodes_cost() {
        let d = DeviceProfile { read_us: 10.0, program_us: 200.0, erase_us: 2000.0, ..DeviceProfile::MICRON_PAGE };
        let at = |ftl| Prices::of(&DeviceProfile { ftl, ..d });
        let merge = 64.0 * 210.0;
        assert_eq!(at(FtlClass::Ideal), Prices { read: 10.0, page: 200.0, episode: 0.0, block: 64.0 * 200.0 });
        assert_eq!(
            at(FtlClass::PageMapped),
            Prices { read: 10.0, page: 200.0 + 2000.0 / 64.0, episode: 0.0, block: 64.0 * 200.0 + 2000.0 }
        );
        assert_eq!(
            at(FtlClass::PageMapped).page,
            crate::fbp::write_cost_us(&DeviceProfile { ftl: FtlClass::PageMapped, ..d })
        );
        assert_eq!(
            at(FtlClass::BlockMapped).page,
            crate::fbp::write_cost_us(&DeviceProfile { ftl: FtlClass::BlockMapped, ..d })
        );
        assert_eq!(
            at(FtlClass::LogBlock),
            Prices { read: 10.0, page: 200.0, episode: merge + 4000.0, block: 64.0 * 200.0 + 2000.0 }
        );
        assert_eq!(
            at(FtlClass::SharedLog),
            Prices { read: 10.0, page: 200.0 + 2000.0 / 64.0, episode: merge + 2000.0, block: 64.0 * 200.0 + 2000.0 }
        );
        for (ftl, pays) in [
            (FtlClass::Ideal, false),
            (FtlClass::PageMapped, false),
            (FtlClass::BlockMapped, true),
            (FtlClass::LogBlock, true),
            (FtlClass::SharedLog, true),
        ] {
            assert_eq!(at(ftl).padding_can_pay(64), pays, "{ftl:?}");
        }
    }

    #[test]
    fn parameters_are_the_devices_and_write_us_is_program_us() {
        let mut c = RefAdaptiveConfig::default();
        assert_eq!(c.values(), ["auto", "auto", "auto", "auto", "auto", "8"]);
        c.set("write-us", "200").unwrap();
        c.set("ftl", "log").unwrap();
        c.set("ppb", "32").unwrap();
        assert_eq!(c.values(), ["auto", "200", "auto", "32", "log", "8"]);
        assert!(c.set("ppb", "5000").is_err());
        assert!(c.set("pad", "1").is_err());
        c.fill_device(&DeviceProfile::MICRON_PAGE);
        assert_eq!(c.values(), ["25", "200", "1500", "32", "log", "8"]);
    }

    #[test]
    fn tuner_reverses_a_move_that_cost_more() {
        let mut t = Tuner::new([4, 2, 3], [6, 8, 7]);
        t.epoch(10.0); // first epoch: nothing to judge; the window moves up
        assert_eq!(t.idx, [5, 2, 3]);
        t.epoch(12.0); // the window's move cost more: its direction turns; |VB| moves down
        assert_eq!(t.idx, [5, 1, 3]);
        t.epoch(11.0); // |VB|'s move helped: it keeps going down next time; padding moves down
        assert_eq!(t.idx, [5, 1, 2]);
        t.epoch(11.0); // a tie keeps the direction; the window steps back down
        assert_eq!(t.idx, [4, 1, 2]);
        t.epoch(11.0);
        assert_eq!(t.idx, [4, 0, 2]);
        t.epoch(11.0);
        t.epoch(11.0);
        // |VB| at its end turns around rather than leaving the range.
        t.epoch(11.0);
        assert_eq!(t.idx[1], 1);
    }

    #[test]
    fn the_window_follows_the_tuner_and_invariants_hold() {
        // 16 frames, epochs of 64 requests: a run of writes over few blocks moves the settings;
        // after every request the core's window is the tuner's and every invariant holds.
        let mut h = Harness::<RefAdaptive>::new(16, cfg(4, FtlClass::LogBlock));
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..2000u64 {
            let p = (i * 7 + i / 13) % 48;
            if i % 3 == 0 {
                h.read(p);
            } else {
                h.write(p);
            }
            h.policy.check_invariants().unwrap();
            seen.insert(h.policy.window_pages());
        }
        assert!(seen.len() >= 2, "the window never moved: {seen:?}");
    }
}
