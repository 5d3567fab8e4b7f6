//! FBX — flashbuf's expert-choosing policy: the buffer is managed by whichever of a few expert
//! policies costs least on *this* device for *this* workload, measured online by miniature
//! simulations of every expert on a spatially sampled substream.
//!
//! Source: no single paper. The comparison matrix (`docs/comparison.md`) shows that no policy of
//! the four papers is best everywhere — AD-LRU leads on the ideal and page-mapped devices, CFDC,
//! BPLRU, FAB and BP-REF on the log-block FTLs, each depending on the workload — while the
//! device is known to the policy. So FBX does not guess one rule; it runs a tournament:
//! * **Experts** ([`crate::shadow::ExpertKind`]): AD-LRU, CFDC, BPLRU, FAB, BP-REF (the seed
//!   policies that win cells of the matrix, chosen once from its summary, not per cell) and FBP
//!   (flashbuf's cost-balanced lists, best on many BAST cells). Each with its paper's
//!   parameters, its block size the device's pages per block.
//! * **Shadows** (miniature simulation, Waldspurger et al., USENIX ATC 2017): every expert runs
//!   on the requests whose flash block a hash keeps (rate `R`), in a buffer of `round(C · R)`
//!   frames, over a simulated device of the run's class (same FTL, chip latencies from the
//!   profile, the run's size and its log blocks scaled by `R`), and its device time is measured
//!   ([`crate::shadow::Shadow`]). Sampling by flash block keeps every block whole, so the
//!   block-level experts and the FTLs see what they would see at full size.
//! * **Leader**: the real buffer is managed by one expert at a time. At the end of each epoch the
//!   expert whose shadow spent the least device time in recent epochs becomes the leader if it
//!   beats the current leader by the hysteresis margin. The new leader receives every resident
//!   page in recency order (least recent first) with its dirty flag, as `on_insert` calls with
//!   the page's last access time and kind; the old leader's history (second-chance marks, ghost
//!   lists, block statistics) is lost, the price of a switch.
//!
//! Choices where nothing above decides (each a rule, none fitted to a cell of the matrix):
//! * **Rate** `R = min(1, F / C)` with `F = 16 · ppb` frames (1,024 on the MICRON chip): every
//!   miniature buffer holds at least 16 flash blocks' worth of pages — enough for the block-level
//!   experts to have several candidate blocks and for the miss ratio of a miniature buffer of
//!   that size to be within a few per cent of the full one (the error tables of
//!   `docs/curves.md`). Buffers of up to `F` frames are shadowed in full (`R = 1`).
//! * **Sampling**: a page is sampled when `mix(page / ppb) < R · 2⁶⁴`, `mix` the SplitMix64
//!   finaliser (deterministic: the same trace gives the same choices).
//! * **Epoch**: `2 ·` (miniature buffer) sampled requests. **Score**: each shadow's device time
//!   *plus the write-backs it owes* (its dirty pages, priced at what its write-backs have cost on
//!   average so far, at least the FTL's best case per page: [`crate::shadow::Shadow::score_ns`])
//!   per epoch, the previous score kept at 3/4 (a memory of about four epochs, so a workload's
//!   phases are followed). Without the owed writes a clean-first expert looks cheapest early,
//!   when it has deferred every write. **Readiness**: no decision until every shadow's buffer
//!   has been full and every shadow holding dirty pages has written back at least a block's
//!   worth (until then what its deferred writes cost is not measured). **Hysteresis**: a switch
//!   needs a score 5% below the leader's (about the sampling error of miniature simulation at
//!   these sizes), so that two experts that tie do not alternate. The epoch and the memory were
//!   shortened (from 8 buffers and 1/2) and the owed writes and readiness added after the first
//!   matrix run showed the first decision coming too late on the 100,000-request traces and a
//!   clean-first expert chosen too early on BAST; see `docs/policy-fbx.md`.
//! * **First leader** (before any measurement): AD-LRU on the ideal and page-mapped devices,
//!   CFDC on block-mapped and log-block FTLs — the experts that win most cells of those devices
//!   in the matrix. A wrong first choice costs at most one epoch of the wrong expert.
//! * The shadow device holds `R ·` the run's device blocks plus three standard deviations
//!   ([`shadow_space`]; 128 miniature buffers when the run's size is unknown), sampled blocks
//!   numbered in order of appearance; beyond that, blocks share device blocks by hash
//!   ([`crate::shadow`]). Its log blocks (BAST, FAST) are the run's scaled by `R` too, at least
//!   what the FTL needs ([`shadow_log_blocks`]): a log block stays with a data block until so
//!   many other blocks have been written, and a sample writes `R` times as many other blocks in
//!   the same time. With the run's 8 log blocks in every shadow, merges were rarer there than on
//!   the device, which favoured the experts that write page by page over BPLRU's whole blocks
//!   (added after the matrix showed it: BAST 22 → 24 and FAST 20 → 21 cells ≤ the best seed).
//!
//! Device awareness: the chip's read, program and erase latencies, pages per block and FTL class
//! and the device's size come from the run path ([`PolicyParams::fill_device`], `auto` by
//! default, as FBP's), the number of the device's log blocks is a parameter (default 8,
//! flashbuf's device default). No parameter
//! describes the workload.
//!
//! Cost per request: the leader's own, plus the block's sample bit (a hash beyond the
//! precomputed map) and, while the leader does not keep every frame's page and last access time
//! itself, up to three per-frame stores (a switch needs them; BPLRU keeps them in the frame
//! record each access touches anyway, so under BPLRU FBX stores nothing per frame and a switch
//! reads BPLRU's records: the same pages, ticks and clamps, the same hand-over); per sampled
//! request, one step of each of the six shadows (a miniature buffer and a simulated FTL).
//! Allocation: none per request; a switch builds the new leader (O(C), at most once an epoch).

use crate::bits::FrameBits;
use crate::fbp::FbpConfig;
use crate::params::{DeviceParams, DeviceProfile, FtlClass, ParamDoc, PolicyParams, parse_int};
use crate::replacer::{Access, AccessKind, EvictError, Evictions, FrameId, Pins, Replacer};
use crate::shadow::{Compactor, Expert, ExpertKind, Shadow, ShadowTable};

/// Miniature buffers hold at least this many flash blocks of frames.
pub const MIN_SAMPLED_BLOCKS: u64 = 16;
/// Epoch length in miniature buffers of sampled requests.
pub const EPOCH_BUFFERS: u64 = 2;
/// Each epoch's score keeps this share of the previous score (a memory of about four epochs).
pub const DECAY: f64 = 0.75;
/// A challenger must score this fraction below the leader to take over.
pub const HYSTERESIS: f64 = 0.05;

/// Sampled requests queued for the shadows: each is simulated this many sampled requests after
/// it came, its lines prefetched in two stages meanwhile ([`Fbx::flush_shadows`]).
pub const PIPELINE: usize = 2;

/// Blocks whose sampling is precomputed in a bit map (32 KiB; 16 Mi pages of 64-page blocks;
/// the device's blocks when fewer): beyond them, the hash is computed per request.
pub const SAMPLE_MAP_BLOCKS: u64 = 1 << 18;

/// SplitMix64's finaliser: a well-mixed hash of a block number.
#[inline(always)]
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Parameters of [`Fbx`]: the device's figures (`auto`: the run's device) and its log blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct FbxConfig {
    /// Device figures ([`DeviceParams`], as FBP's; the FBP expert gets them).
    pub device: DeviceParams,
    /// Log blocks of a log-block FTL (BAST, FAST), for the shadows' devices.
    pub log_blocks: u32,
    /// The run's device size in pages, filled by the run path ([`PolicyParams::fill_device`]);
    /// not a command-line parameter. `None`: unknown.
    pub logical_pages: Option<u64>,
}

impl Default for FbxConfig {
    fn default() -> Self {
        FbxConfig { device: DeviceParams::default(), log_blocks: 8, logical_pages: None }
    }
}

/// The flash blocks of a shadow's device: the run's device scaled by the rate, `R · L` blocks of
/// `L`, plus three standard deviations of the sampled count (binomial) when `R < 1`, and at least
/// the miniature buffer's blocks and two more; `None` when the device size is unknown (or not a
/// device's: 2³² pages or more, as a run of unbounded logical space says).
pub fn shadow_space(logical_pages: Option<u64>, ppb: u64, rate: f64, mini_frames: usize) -> Option<u64> {
    let blocks = logical_pages.filter(|&l| l > 0 && l < 1 << 32)?.div_ceil(ppb);
    let expected = blocks as f64 * rate;
    let space = if rate >= 1.0 { blocks } else { (expected + 3.0 * expected.sqrt()).ceil() as u64 };
    Some(space.max((mini_frames as u64).div_ceil(ppb) + 2))
}

/// The log blocks of a shadow's device: the run's scaled by the rate, as its data blocks are
/// (rounded; [`crate::shadow::Shadow::new`] raises it to what the FTL needs).
pub fn shadow_log_blocks(log_blocks: u32, rate: f64) -> u32 {
    if rate >= 1.0 { log_blocks } else { (f64::from(log_blocks) * rate).round() as u32 }
}

impl PolicyParams for FbxConfig {
    const KEYS: &'static [ParamDoc] = &[
        DeviceParams::KEYS[0],
        DeviceParams::KEYS[1],
        DeviceParams::KEYS[2],
        DeviceParams::KEYS[3],
        DeviceParams::KEYS[4],
        ParamDoc {
            key: "log-blocks",
            help: "log blocks of the run's BAST/FAST device (the shadows' are scaled by the sampling rate), 2..=4096, default 8",
        },
    ];

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if self.device.set(key, value)? {
            return Ok(());
        }
        match key {
            "log-blocks" => self.log_blocks = parse_int(key, value, 2, 4096)? as u32,
            _ => return Err(format!("unknown parameter '{key}'")),
        }
        Ok(())
    }

    fn values(&self) -> Vec<String> {
        let mut v = self.device.values();
        v.push(self.log_blocks.to_string());
        v
    }

    fn fill_device(&mut self, d: &DeviceProfile) {
        self.device.fill_device(d);
        if d.logical_pages > 0 {
            self.logical_pages.get_or_insert(d.logical_pages);
        }
    }
}

/// The FBX policy (see the module documentation).
pub struct Fbx {
    leader: Expert,
    shadows: Vec<Shadow>,
    /// The shadows' page tables, one column each.
    table: ShadowTable,
    compactor: Compactor,
    scores: Vec<f64>,
    last_cost: Vec<f64>,
    profile: DeviceProfile,
    fbp: FbpConfig,
    /// The page of each frame, valid where `used` is set: written on insertion only, read only
    /// by a switch.
    /// Stored in 4 bytes while every page number fits (half the footprint of this array, which
    /// every insertion writes at a random frame: most of FBX's own L2 misses on the miss path);
    /// in `wide` once one does not ([`Fbx::widen`]).
    page: Vec<u32>,
    /// The pages of the frames once a page number beyond `u32` has been seen (allocated zeroed
    /// at construction, so untouched and unmapped until then).
    wide: Vec<u64>,
    /// Whether `wide` holds the pages (`page` is then unused).
    is_wide: bool,
    /// The low 16 bits of each frame's last access tick (`time >> tick_shift`): one 2-byte
    /// store per hit (the switch needs the recency order), in an array an eighth of the size of
    /// the frames' pages.
    last: Vec<u16>,
    /// A tick is `2^tick_shift` requests ([`tick_shift`]).
    tick_shift: u32,
    /// Frames holding a page, one bit each (12.5 KiB for 100,000 frames: it stays in cache).
    /// Their dirty flags are the leader's ([`Replacer::is_dirty`]: every expert keeps them).
    used: FrameBits,
    /// When [`Fbx::refresh`] next clamps the ages.
    refresh_at: u64,
    /// Requests before this time go straight to a BPLRU leader's hooks: [`Fbx::refresh_at`]
    /// while BPLRU leads and FBX tracks nothing, 0 otherwise ([`Fbx::set_direct`]). One compare
    /// stands for the refresh test, the tracking test and the leader's tag; the hints test it
    /// for zero.
    bplru_until: u64,
    /// The same for an AD-LRU leader that FBX tracks (its hit and insertion store the frame's
    /// tick, then go straight to AD-LRU's hooks); nonzero exactly while AD-LRU leads (FBX
    /// always tracks it).
    adlru_until: u64,
    /// The tick of the last [`Fbx::refresh`]: every age was clamped then, so a frame's
    /// effective tick is at least this minus [`AGE_CAP`] (what a switch from a leader that keeps
    /// its frames' access times computes).
    refreshed: Option<u64>,
    /// Whether FBX tracks the frames (`page`, `last`, `used`) itself: unless the leader keeps
    /// each frame's page and access time in its own record ([`Expert::keeps_frames`]), which a
    /// switch then reads instead (same pages, same effective ticks: the same hand-over).
    tracking: bool,
    /// Track the frames whatever the leader (tests: the reference for the hand-over).
    #[cfg(test)]
    always_track: bool,
    tracked: usize,
    order: Vec<u64>,
    ppb: u64,
    /// `log2(ppb)` when `ppb` is a power of two (the sampler's block number is then a shift;
    /// 0 otherwise, unused).
    block_shift: u32,
    /// A sampled block's hash is at most this (`u64::MAX` when every block is sampled).
    limit: u64,
    /// Whether each of the first blocks of the device is sampled, one bit each (the same answer
    /// as the hash, precomputed: a load from a small array instead of a hash per request), when
    /// `ppb` is a power of two: the map the request path reads after a shift (empty otherwise).
    sample_map: Vec<u64>,
    /// The same map when `ppb` is not a power of two (the block number is then a division,
    /// out of line; empty otherwise).
    sample_map_div: Vec<u64>,
    epoch_len: u64,
    /// Sampled requests (compact pages) waiting for the shadows, oldest first
    /// ([`Fbx::feed_sampled`]).
    queue: [Access; PIPELINE],
    queued: usize,
    owed_ns: f64,
    in_epoch: u64,
    epochs: u64,
    switches: u64,
}

/// Ages (ticks since a frame's last access) are exact below this; older frames are clamped to
/// it, so that 16-bit wrapping ages stay unambiguous (the handover order of frames untouched for
/// that long is then by frame number).
const AGE_CAP: u16 = 1 << 15;
/// Ticks between two clamps of the ages: at most `AGE_CAP + AGE_REFRESH < 2¹⁶` old.
const AGE_REFRESH: u64 = 1 << 14;

/// The tick of a buffer of `capacity` frames: the smallest power of two of requests for which
/// [`AGE_CAP`] ticks span at least 16 times the buffer (a page untouched for that long has seen
/// the buffer turn over many times: its exact age no longer matters), one request up to 2,048
/// frames.
pub fn tick_shift(capacity: usize) -> u32 {
    (16 * capacity as u64).div_ceil(u64::from(AGE_CAP)).next_power_of_two().trailing_zeros()
}

/// The expert in `$leader` as its `$variant`, without testing the tag in release builds (a
/// debug assertion tests it). Unsafe: the caller knows which expert leads (see
/// [`Fbx::set_direct`]); any other is undefined behaviour.
macro_rules! leader_as {
    ($leader:expr, $variant:ident) => {
        match $leader {
            Expert::$variant(p) => p,
            other => {
                debug_assert!(false, "a direct path to {} while {} leads", stringify!($variant), other.kind().name());
                std::hint::unreachable_unchecked()
            }
        }
    };
}

impl Fbx {
    /// The expert managing the buffer now.
    pub fn leader(&self) -> ExpertKind {
        self.leader.kind()
    }

    /// Leader changes so far.
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// Epochs completed so far.
    pub fn epochs(&self) -> u64 {
        self.epochs
    }

    /// The shadows, in [`ExpertKind::ALL`] order, as of the last sampled request they have
    /// simulated: up to [`PIPELINE`] sampled requests may be queued ([`Fbx::flush_shadows`]
    /// simulates them; an epoch's end does).
    pub fn shadows(&self) -> &[Shadow] {
        &self.shadows
    }

    /// The current scores (decayed device time per epoch, ns), in [`ExpertKind::ALL`] order.
    pub fn scores(&self) -> &[f64] {
        &self.scores
    }

    /// The sampling rate in force.
    pub fn rate(&self) -> f64 {
        if self.limit == u64::MAX { 1.0 } else { (self.limit as f64 + 1.0) / 2f64.powi(64) }
    }

    /// Whether `page`'s block is sampled: a shift and one word of the map on the request path;
    /// the hash, or a division, out of line.
    #[inline(always)]
    fn sampled(&self, page: u64) -> bool {
        let block = page >> self.block_shift;
        match self.sample_map.get((block >> 6) as usize) {
            Some(w) => w >> (block & 63) & 1 != 0,
            None => self.sampled_beyond_map(page),
        }
    }

    /// [`Fbx::sampled`] for a page beyond the map (by the hash), or for any page when `ppb` is
    /// not a power of two.
    #[cold]
    #[inline(never)]
    fn sampled_beyond_map(&self, page: u64) -> bool {
        if !self.sample_map_div.is_empty() {
            let block = page / self.ppb;
            if let Some(w) = self.sample_map_div.get((block >> 6) as usize) {
                return w >> (block & 63) & 1 != 0;
            }
            return mix(block) <= self.limit;
        }
        mix(page >> self.block_shift) <= self.limit
    }

    #[inline(always)]
    fn feed(&mut self, a: &Access) {
        if self.sampled(a.page) {
            self.feed_sampled(a.page, a.kind, a.time, a.next_use);
        }
    }

    /// Queues a sampled request for the shadows (about one request in `1 / R`; the fields are
    /// passed apart so that the hit path need not build an [`Access`] in memory).
    ///
    /// The shadows simulate each sampled request [`PIPELINE`] sampled requests after it came:
    /// meanwhile its page-table slots, then the expert records that they name, are brought
    /// into cache. Each shadow still sees the same requests in the same order, and nothing
    /// reads a shadow before [`Fbx::flush_shadows`] has simulated every queued request (the
    /// end of an epoch does it first), so every score and switch is what simulating each
    /// request at once gives.
    #[inline(never)]
    fn feed_sampled(&mut self, page: u64, kind: AccessKind, time: u64, next_use: u64) {
        let a = Access { page: self.compactor.compact(page), kind, time, next_use };
        self.in_epoch += 1;
        if self.in_epoch >= self.epoch_len {
            self.flush_shadows();
            for s in &mut self.shadows {
                s.access_in(&a, &mut self.table);
            }
            self.end_epoch(a.time);
            return;
        }
        if self.queued == PIPELINE {
            let oldest = self.queue[0];
            for s in &mut self.shadows {
                s.access_in(&oldest, &mut self.table);
            }
            self.queue.copy_within(1.., 0);
            self.queued -= 1;
        }
        // Second stage for the request queued before: its slots have arrived.
        if self.queued > 0 {
            let p = self.queue[self.queued - 1].page;
            for s in &self.shadows {
                s.prefetch_frame(p, &self.table);
            }
        }
        self.table.prefetch(a.page);
        for s in &self.shadows {
            s.prefetch(a.page);
        }
        self.queue[self.queued] = a;
        self.queued += 1;
    }

    /// Simulates every sampled request still queued for the shadows ([`Fbx::feed_sampled`]):
    /// afterwards [`Fbx::shadows`] describe every sampled request seen.
    pub fn flush_shadows(&mut self) {
        for i in 0..self.queued {
            let a = self.queue[i];
            for s in &mut self.shadows {
                s.access_in(&a, &mut self.table);
            }
        }
        self.queued = 0;
    }

    #[cold]
    fn end_epoch(&mut self, now: u64) {
        self.in_epoch = 0;
        self.epochs += 1;
        let ppb = self.ppb;
        if !self.shadows.iter().all(|s| s.is_full() && (s.dirty_frames() == 0 || s.pages_written() >= ppb)) {
            // Still filling, or an expert has not yet written back a block's worth of pages:
            // what its deferred writes will cost is not measured yet.
            return;
        }
        for (i, s) in self.shadows.iter().enumerate() {
            // Device time spent plus the write-backs owed ([`Shadow::score_ns`]), so that
            // deferring writes earns nothing.
            let c = s.score_ns(self.owed_ns);
            let delta = c - self.last_cost[i];
            self.last_cost[i] = c;
            self.scores[i] = if c.is_finite() { self.scores[i] * DECAY + delta } else { f64::INFINITY };
        }
        let lead = ExpertKind::ALL.iter().position(|&k| k == self.leader.kind()).unwrap_or(0);
        let mut best = lead;
        for i in 0..self.scores.len() {
            if self.scores[i] < self.scores[best] {
                best = i;
            }
        }
        if best != lead && self.scores[best] < (1.0 - HYSTERESIS) * self.scores[lead] {
            self.switch_to(ExpertKind::ALL[best], now);
        }
    }

    /// Hands the buffer to a new expert at time `now` (no earlier than any access seen): every
    /// resident page, least recent first, with its last access time and its dirty flag.
    fn switch_to(&mut self, kind: ExpertKind, now: u64) {
        if now >= self.refresh_at {
            self.refresh(now);
        }
        let capacity = self.page.len();
        let mut next = Expert::new(kind, capacity, &self.profile, &self.fbp);
        let tick = now >> self.tick_shift;
        self.order.clear();
        // Largest age first: sorting `2¹⁶ − 1 − age` ascending (frames of one tick, or clamped,
        // in frame order).
        if self.tracking {
            for f in 0..capacity {
                if self.used.get(f as u32) {
                    let age = (tick as u16).wrapping_sub(self.last[f]);
                    self.order.push(u64::from(u16::MAX - age) << 32 | f as u64);
                }
            }
        } else {
            // The tick FBX would have stored at the frame's last access, clamped as the last
            // refresh would have clamped it.
            let floor = self.refreshed.map_or(0, |r| r.saturating_sub(u64::from(AGE_CAP)));
            for f in 0..capacity {
                if let Some((_, time)) = self.leader.frame_record(f as FrameId) {
                    let age = tick.wrapping_sub((time >> self.tick_shift).max(floor)) as u16;
                    self.order.push(u64::from(u16::MAX - age) << 32 | f as u64);
                }
            }
        }
        self.order.sort_unstable();
        #[cfg(test)]
        let tracking = !next.keeps_frames() || self.always_track;
        #[cfg(not(test))]
        let tracking = !next.keeps_frames();
        // FBX takes the tracking over from a leader that kept the frames.
        let take_over = tracking && !self.tracking;
        if take_over {
            self.used.clear();
            self.tracked = 0;
        }
        for i in 0..self.order.len() {
            let k = self.order[i];
            let f = k as u32 as usize;
            let age = u16::MAX - (k >> 32) as u16;
            let page = if self.tracking {
                self.page_of(f)
            } else {
                self.leader.frame_record(f as FrameId).map_or(0, |(p, _)| p)
            };
            if take_over {
                self.tracked += 1;
                self.set_page(f, page);
                self.used.set(f as u32, true);
                self.last[f] = (tick as u16).wrapping_sub(age);
            }
            let dirty = self.leader.is_dirty(f as FrameId).unwrap_or(false);
            let kind = if dirty { AccessKind::Write } else { AccessKind::Read };
            let age = u64::from(age) << self.tick_shift;
            next.on_insert(f as FrameId, &Access::new(page, kind, now - age.min(now)));
        }
        self.leader = next;
        self.tracking = tracking;
        self.set_direct();
        self.switches += 1;
    }

    /// Clamps every age beyond [`AGE_CAP`] to it (every [`AGE_REFRESH`] ticks, O(frames)).
    /// While the leader keeps the access times, only the refresh's tick is recorded (a switch
    /// clamps the leader's times to it).
    #[cold]
    fn refresh(&mut self, now: u64) {
        if self.tracking {
            let tick = (now >> self.tick_shift) as u16;
            for t in &mut self.last {
                if tick.wrapping_sub(*t) > AGE_CAP {
                    *t = tick.wrapping_sub(AGE_CAP);
                }
            }
        }
        self.refreshed = Some(now >> self.tick_shift);
        self.refresh_at = now.saturating_add(AGE_REFRESH << self.tick_shift);
        self.set_direct();
    }

    /// Sets [`Fbx::bplru_until`] and [`Fbx::adlru_until`] from the leader, the tracking and
    /// [`Fbx::refresh_at`] (after every change of one of them): the direct paths of
    /// [`Fbx::on_hit`] and [`Fbx::on_insert`] rely on them naming the leader's kind.
    fn set_direct(&mut self) {
        let bplru = !self.tracking && matches!(self.leader, Expert::Bplru(_));
        let adlru = self.tracking && matches!(self.leader, Expert::AdLru(_));
        self.bplru_until = if bplru { self.refresh_at } else { 0 };
        self.adlru_until = if adlru { self.refresh_at } else { 0 };
    }

    /// Records an access to a tracked frame: its tick (one store; the caller has refreshed).
    #[inline(always)]
    fn touch(&mut self, f: usize, a: &Access) {
        self.last[f] = (a.time >> self.tick_shift) as u16;
    }

    #[inline(always)]
    fn track_insert(&mut self, frame: FrameId, a: &Access) {
        let f = frame as usize;
        self.tracked += 1;
        self.set_page(f, a.page);
        self.used.set(f as u32, true);
        self.touch(f, a);
    }

    #[inline(always)]
    fn set_page(&mut self, f: usize, page: u64) {
        match u32::try_from(page) {
            Ok(p) if !self.is_wide => self.page[f] = p,
            _ => self.store_wide(f, page),
        }
    }

    /// The page of tracked frame `f`.
    fn page_of(&self, f: usize) -> u64 {
        if self.is_wide { self.wide[f] } else { u64::from(self.page[f]) }
    }

    /// Stores a page in `wide`, moving every frame's page there first if it is the first page
    /// beyond `u32` (once a run).
    #[cold]
    fn store_wide(&mut self, f: usize, page: u64) {
        if !self.is_wide {
            for (w, &p) in self.wide.iter_mut().zip(&self.page) {
                *w = u64::from(p);
            }
            self.is_wide = true;
        }
        self.wide[f] = page;
    }

    /// [`Replacer::on_hit`] off the direct paths: a due refresh, a tracked leader other than
    /// AD-LRU, an untracked one other than BPLRU (tests), a BPLRU leader tracked (tests).
    #[inline(always)]
    fn hit_general(&mut self, frame: FrameId, a: &Access) {
        if a.time >= self.refresh_at {
            self.refresh(a.time);
        }
        if self.tracking {
            self.touch(frame as usize, a);
            self.leader.on_hit(frame, a);
        } else if let Expert::Bplru(p) = &mut self.leader {
            p.on_hit(frame, a);
        } else {
            self.leader.on_hit(frame, a);
        }
    }

    /// [`Replacer::on_insert`] off the direct paths (as [`Fbx::hit_general`]).
    #[inline(always)]
    fn insert_general(&mut self, frame: FrameId, a: &Access) {
        if a.time >= self.refresh_at {
            self.refresh(a.time);
        }
        if self.tracking {
            self.track_insert(frame, a);
            self.leader.on_insert(frame, a);
        } else if let Expert::Bplru(p) = &mut self.leader {
            p.on_insert(frame, a);
        } else {
            self.leader.on_insert(frame, a);
        }
    }

    /// [`Replacer::victims`] for every leader but an untracked BPLRU.
    #[inline(never)]
    fn victims_general<P: Pins + ?Sized>(
        &mut self,
        incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if let Expert::Bplru(p) = &mut self.leader {
            p.victims(incoming, pins, out)?;
        } else {
            self.leader.victims(incoming, pins, out)?;
        }
        if self.tracking {
            for &v in &out.victims {
                self.untrack(v);
            }
        }
        if out.bypass {
            // The incoming page is not buffered: its request reaches the shadows here.
            self.feed(incoming);
        }
        Ok(())
    }

    #[inline(never)]
    fn prefetch_other(leader: &Expert, page: u64) {
        leader.prefetch(page);
    }

    #[inline(never)]
    fn prefetch_frame_other(leader: &Expert, frame: FrameId) {
        leader.prefetch_frame(frame);
    }

    #[inline(never)]
    fn likely_victim_other(leader: &Expert) -> Option<FrameId> {
        leader.likely_victim()
    }

    #[inline]
    fn untrack(&mut self, frame: FrameId) {
        let f = frame as usize;
        if f < self.page.len() && self.used.get(f as u32) {
            self.used.set(f as u32, false);
            self.tracked -= 1;
        }
    }
}

impl Replacer for Fbx {
    type Config = FbxConfig;

    fn new(capacity: usize, config: &FbxConfig) -> Self {
        let capacity = capacity.max(1);
        let profile = DeviceProfile { logical_pages: config.logical_pages.unwrap_or(0), ..config.device.profile() };
        let mut fbp = FbpConfig { device: config.device.clone(), pad: None };
        fbp.fill_device(&profile);
        let ppb = u64::from(profile.pages_per_block.max(1));
        let floor = MIN_SAMPLED_BLOCKS * ppb;
        let all = capacity as u64 <= floor;
        let rate = if all { 1.0 } else { floor as f64 / capacity as f64 };
        let limit = if all { u64::MAX } else { ((rate * 2f64.powi(64)) as u64).saturating_sub(1) };
        let mini = if all { capacity } else { ((capacity as f64 * rate).round() as usize).max(1) };
        let space = shadow_space(config.logical_pages, ppb, rate, mini);
        let logs = shadow_log_blocks(config.log_blocks, rate);
        // The device's blocks (all the map's blocks when its size is unknown).
        let blocks = config.logical_pages.filter(|&l| l > 0).map_or(SAMPLE_MAP_BLOCKS, |l| l.div_ceil(ppb));
        let mapped = blocks.min(SAMPLE_MAP_BLOCKS).div_ceil(64);
        let sample_map: Vec<u64> =
            (0..mapped).map(|w| (0..64).fold(0u64, |acc, i| acc | u64::from(mix(w * 64 + i) <= limit) << i)).collect();
        let (sample_map, sample_map_div) =
            if ppb.is_power_of_two() { (sample_map, Vec::new()) } else { (Vec::new(), sample_map) };
        let shadows: Vec<Shadow> = ExpertKind::ALL
            .iter()
            .enumerate()
            .map(|(i, &k)| Shadow::in_table(k, mini, &profile, logs, &fbp, space, i))
            .collect();
        let table = ShadowTable::new(crate::shadow::space_blocks(space, mini, ppb).saturating_mul(ppb), mini);
        let first = match profile.ftl {
            FtlClass::Ideal | FtlClass::PageMapped => ExpertKind::AdLru,
            FtlClass::BlockMapped | FtlClass::LogBlock | FtlClass::SharedLog => ExpertKind::Cfdc,
        };
        let leader = Expert::new(first, capacity, &profile, &fbp);
        let mut fbx = Fbx {
            compactor: Compactor::with_direct(crate::shadow::space_blocks(space, mini, ppb), ppb, mapped * 64),
            tracking: !leader.keeps_frames(),
            leader,
            scores: vec![0.0; shadows.len()],
            last_cost: vec![0.0; shadows.len()],
            shadows,
            table,
            profile,
            fbp,
            page: vec![0; capacity],
            wide: vec![0; capacity],
            is_wide: false,
            last: vec![0; capacity],
            used: FrameBits::new(capacity),
            refresh_at: AGE_REFRESH << tick_shift(capacity),
            bplru_until: 0,
            adlru_until: 0,
            refreshed: None,
            #[cfg(test)]
            always_track: false,
            tick_shift: tick_shift(capacity),
            tracked: 0,
            order: Vec::with_capacity(capacity),
            ppb,
            block_shift: if ppb.is_power_of_two() { ppb.trailing_zeros() } else { 0 },
            limit,
            sample_map,
            sample_map_div,
            epoch_len: EPOCH_BUFFERS * mini as u64,
            queue: [Access::new(0, AccessKind::Read, 0); PIPELINE],
            queued: 0,
            owed_ns: crate::fbp::write_cost_us(&profile) * 1e3,
            in_epoch: 0,
            epochs: 0,
            switches: 0,
        };
        fbx.set_direct();
        fbx
    }

    // The leaders of the foundation benchmark go straight to their hooks: BPLRU (which keeps
    // its own frames, so FBX tracks nothing) and AD-LRU (tracked: one store of the tick). One
    // compare of the request's time against `bplru_until` (then `adlru_until`) replaces the
    // refresh test, the tracking test and the leader's tag (a `match` over the six experts is an
    // indirect jump through a table on every request). Every other case, and a due refresh,
    // takes the general path, as before.
    #[inline(always)]
    fn on_hit(&mut self, frame: FrameId, a: &Access) {
        if a.time < self.bplru_until {
            // SAFETY: `bplru_until` is nonzero only while BPLRU leads.
            unsafe { leader_as!(&mut self.leader, Bplru) }.on_hit(frame, a);
        } else if a.time < self.adlru_until {
            self.touch(frame as usize, a);
            // SAFETY: `adlru_until` is nonzero only while AD-LRU leads.
            unsafe { leader_as!(&mut self.leader, AdLru) }.on_hit(frame, a);
        } else {
            self.hit_general(frame, a);
        }
        self.feed(a);
    }

    #[inline(always)]
    fn on_insert(&mut self, frame: FrameId, a: &Access) {
        if a.time < self.bplru_until {
            // SAFETY: as in `on_hit`.
            unsafe { leader_as!(&mut self.leader, Bplru) }.on_insert(frame, a);
        } else if a.time < self.adlru_until {
            self.track_insert(frame, a);
            // SAFETY: as in `on_hit`.
            unsafe { leader_as!(&mut self.leader, AdLru) }.on_insert(frame, a);
        } else {
            self.insert_general(frame, a);
        }
        self.feed(a);
    }

    // The hints test `bplru_until`, then `adlru_until`, for zero, and call out of line for the
    // other leaders: a `match` on the leader's tag, or a tag test followed by one, compiles to a
    // jump through a table on every hint (two separate fields, unlike one byte naming the
    // leader, keep BPLRU's test first and alone).
    #[inline(always)]
    fn prefetch(&self, page: u64) {
        if self.bplru_until != 0 {
            // SAFETY: nonzero only while BPLRU leads (`set_direct`).
            unsafe { leader_as!(&self.leader, Bplru) }.prefetch(page);
        } else if self.adlru_until != 0 {
            // SAFETY: as above.
            unsafe { leader_as!(&self.leader, AdLru) }.prefetch(page);
        } else {
            Self::prefetch_other(&self.leader, page);
        }
    }

    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        if self.bplru_until != 0 {
            // SAFETY: as in `prefetch`.
            unsafe { leader_as!(&self.leader, Bplru) }.prefetch_frame(frame);
        } else if self.adlru_until != 0 {
            // SAFETY: as in `prefetch`.
            unsafe { leader_as!(&self.leader, AdLru) }.prefetch_frame(frame);
        } else {
            Self::prefetch_frame_other(&self.leader, frame);
        }
    }

    #[inline(always)]
    fn likely_victim(&self) -> Option<FrameId> {
        if self.bplru_until != 0 {
            // SAFETY: as in `prefetch`.
            unsafe { leader_as!(&self.leader, Bplru) }.likely_victim()
        } else if self.adlru_until != 0 {
            // SAFETY: as in `prefetch`.
            unsafe { leader_as!(&self.leader, AdLru) }.likely_victim()
        } else {
            Self::likely_victim_other(&self.leader)
        }
    }

    // Inlined into the host's miss path: an untracked BPLRU leader is called directly (its
    // eviction is out of line), instead of through a call of FBX's own that dispatches on the
    // leader's tag (with its own prologue and epilogue, about 25 instructions an eviction).
    #[inline(always)]
    fn victims<P: Pins + ?Sized>(
        &mut self,
        incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.bplru_until != 0 {
            // SAFETY: nonzero only while BPLRU leads (`set_direct`).
            unsafe { leader_as!(&mut self.leader, Bplru) }.victims(incoming, pins, out)?;
            if out.bypass {
                // The incoming page is not buffered: its request reaches the shadows here.
                self.feed(incoming);
            }
            return Ok(());
        }
        self.victims_general(incoming, pins, out)
    }

    fn remove(&mut self, frame: FrameId) {
        self.leader.remove(frame);
        if self.tracking {
            self.untrack(frame);
        }
    }

    fn len(&self) -> usize {
        self.leader.len()
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        let f = frame as usize;
        let held = if self.tracking {
            f < self.page.len() && self.used.get(f as u32)
        } else {
            self.leader.frame_record(frame).is_some()
        };
        if held { self.leader.is_dirty(frame) } else { None }
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.leader.check_invariants()?;
        if !self.tracking {
            let held = (0..self.last.len()).filter(|&f| self.leader.frame_record(f as FrameId).is_some()).count();
            if held != self.leader.len() {
                return Err(format!(
                    "leader {} holds {} frames, records {held}",
                    self.leader.kind().name(),
                    self.leader.len()
                ));
            }
            for s in &self.shadows {
                s.check_invariants_in(&self.table)?;
            }
            return Ok(());
        }
        if self.leader.len() != self.tracked {
            return Err(format!(
                "leader {} tracks {} frames, FBX {}",
                self.leader.kind().name(),
                self.leader.len(),
                self.tracked
            ));
        }
        let used = self.used.count_ones();
        if used != self.tracked {
            return Err(format!("{used} frames hold a page, {} counted", self.tracked));
        }

        for s in &self.shadows {
            s.check_invariants_in(&self.table)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ad_lru::{AdLru, AdLruConfig};
    use crate::testing::{Harness, check_contract};
    use proptest::prelude::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn config(ftl: &str) -> FbxConfig {
        let mut c = FbxConfig::default();
        c.set("ftl", ftl).unwrap();
        c
    }

    fn zipfish(n: usize, pages: u64, write: f64, seed: u64) -> Vec<(u64, AccessKind)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let u: f64 = rng.random();
                let p = ((pages as f64).powf(u) as u64).min(pages - 1);
                let k = if rng.random::<f64>() < write { AccessKind::Write } else { AccessKind::Read };
                (p, k)
            })
            .collect()
    }

    #[test]
    fn the_rate_follows_the_rule() {
        let f = Fbx::new(1024, &config("page"));
        assert_eq!(f.rate(), 1.0);
        assert_eq!(f.shadows()[0].frames(), 1024);
        let f = Fbx::new(100_000, &config("page"));
        assert!((f.rate() - 0.01024).abs() < 1e-9);
        assert_eq!(f.shadows()[0].frames(), 1024);
        assert_eq!(f.leader(), ExpertKind::AdLru);
        assert_eq!(Fbx::new(10, &config("log")).leader(), ExpertKind::Cfdc);
    }

    #[test]
    fn before_its_first_switch_it_is_its_first_expert() {
        // Fully shadowed (C ≤ 16 blocks): the leader's own shadow sees every request, so its
        // misses are the real buffer's, and the real buffer is AD-LRU's until the first switch.
        let reqs = zipfish(4000, 600, 0.3, 7);
        let mut a = Harness::<Fbx>::new(100, config("ideal"));
        let mut b = Harness::<AdLru>::new(100, AdLruConfig::default());
        for &(p, k) in &reqs {
            a.access(p, k, crate::NEVER);
            b.access(p, k, crate::NEVER);
            if a.policy.switches() > 0 {
                break;
            }
            assert_eq!(a.misses, b.misses);
            a.policy.flush_shadows();
            assert_eq!(a.policy.shadows()[0].misses, b.misses);
        }
    }

    #[test]
    fn the_leader_is_the_cheapest_shadow_unless_within_the_margin() {
        for ftl in ["ideal", "page", "log", "shared-log"] {
            let reqs = zipfish(30_000, 3000, 0.5, 3);
            let mut h = Harness::<Fbx>::new(64, config(ftl));
            h.checking = false;
            let mut last_epoch = 0;
            for &(p, k) in &reqs {
                h.access(p, k, crate::NEVER);
                let f = &h.policy;
                if f.epochs() != last_epoch {
                    last_epoch = f.epochs();
                    let lead = ExpertKind::ALL.iter().position(|&k| k == f.leader()).unwrap();
                    let best = f.scores().iter().cloned().fold(f64::INFINITY, f64::min);
                    assert!(best >= (1.0 - HYSTERESIS) * f.scores()[lead], "{ftl}: {:?}", f.scores());
                }
            }
            h.check().unwrap();
            assert!(h.policy.epochs() > 10, "{ftl}");
        }
    }

    #[test]
    fn a_switch_hands_over_every_page_with_its_dirty_flag() {
        let mut c = config("page");
        c.set("ppb", "4").unwrap();
        let mut h = Harness::<Fbx>::new(8, c);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut now = 0;
        for round in 0..4 {
            for to in ExpertKind::ALL {
                for _ in 0..20 {
                    now += 1;
                    let p = rng.random_range(0..40u64);
                    if rng.random::<bool>() {
                        h.write(p)
                    } else {
                        h.read(p)
                    };
                }
                let resident = h.resident();
                h.policy.switch_to(to, now);
                assert_eq!(h.policy.leader(), to);
                h.check().unwrap();
                assert_eq!(h.policy.leader.len(), resident.len());
                for &p in &resident {
                    let f = h.frame_of(p).unwrap();
                    // The new expert's own dirty view, where it keeps one, is the buffer's.
                    if let Some(d) = h.policy.leader.is_dirty(f) {
                        assert_eq!(d, h.is_dirty(p), "round {round}, {}, page {p}", to.name());
                    }
                }
            }
        }
        // Epochs end on their own too (64 sampled requests here) and may switch as well.
        assert!(h.policy.switches() >= 4 * ExpertKind::ALL.len() as u64);
    }

    #[test]
    fn pages_beyond_32_bits_keep_every_frames_page() {
        let mut h = Harness::<Fbx>::new(16, config("ideal"));
        let wide = [1u64 << 32, u64::MAX - 5, (1 << 40) + 3];
        for i in 0..40u64 {
            let p = if i % 13 == 12 { wide[(i / 13) as usize % 3] } else { i * 7 };
            h.read(p);
            assert_eq!(h.policy.is_wide, i >= 12);
            for p in h.resident() {
                assert_eq!(h.policy.page_of(h.frame_of(p).unwrap() as usize), p, "after {i} requests");
            }
        }
    }

    #[test]
    fn the_sampling_maps_answer_as_the_hash() {
        // Power-of-two blocks (the shifted map), other sizes (the division), pages beyond the
        // map and beyond the device (the hash), rates below and at 1.
        for (ppb, frames, pages) in [(64, 100_000, Some(1u64 << 20)), (4, 5000, None), (100, 100_000, Some(1 << 20))] {
            let mut c = config("page");
            c.set("ppb", &ppb.to_string()).unwrap();
            c.logical_pages = pages;
            for frames in [frames, 16 * ppb as usize] {
                let f = Fbx::new(frames, &c);
                let mut rng = ChaCha8Rng::seed_from_u64(ppb);
                let mut sampled = 0;
                for i in 0..200_000u64 {
                    let page = match i % 3 {
                        0 => rng.random_range(0..1u64 << 20),
                        1 => rng.random_range(0..1u64 << 26),
                        _ => rng.random::<u64>(),
                    };
                    let want = mix(page / ppb) <= f.limit;
                    assert_eq!(f.sampled(page), want, "ppb {ppb}, {frames} frames, page {page}");
                    sampled += u64::from(want);
                }
                assert!(sampled > 0);
            }
        }
    }

    #[test]
    fn the_shadow_device_is_the_run_device_scaled_by_the_rate() {
        // Fully sampled: the run's own 32 blocks.
        assert_eq!(shadow_space(Some(2048), 64, 1.0, 256), Some(32));
        // 1,000 blocks at 10%: 100 expected, plus three standard deviations (30).
        assert_eq!(shadow_space(Some(64_000), 64, 0.1, 1024), Some(130));
        // Never smaller than the miniature buffer and two blocks.
        assert_eq!(shadow_space(Some(640), 64, 0.1, 1024), Some(18));
        assert_eq!(shadow_space(None, 64, 0.1, 1024), None);
        assert_eq!(shadow_space(Some(u64::MAX), 64, 0.1, 1024), None);
        let mut c = FbxConfig::default();
        c.fill_device(&DeviceProfile { logical_pages: 5000, ..DeviceProfile::MICRON_PAGE });
        assert_eq!(c.logical_pages, Some(5000));
        assert_eq!(c.values().len(), FbxConfig::KEYS.len());
    }

    #[test]
    fn the_shadows_log_blocks_scale_with_the_rate() {
        assert_eq!(shadow_log_blocks(8, 1.0), 8);
        assert_eq!(shadow_log_blocks(16, 0.25), 4);
        assert_eq!(shadow_log_blocks(8, 0.1), 1);
        // Below one, the shadow raises it to what its FTL needs.
        assert_eq!(shadow_log_blocks(8, 0.01), 0);
        assert_eq!(crate::shadow::min_log_blocks(flashbuf_flash::DeviceKind::Bast), 1);
        assert_eq!(crate::shadow::min_log_blocks(flashbuf_flash::DeviceKind::Fast), 2);
        let f = Fbx::new(100_000, &config("shared-log"));
        assert!(f.shadows().iter().all(|s| !s.failed()));
    }

    #[test]
    fn ticks_span_sixteen_buffers() {
        assert_eq!(tick_shift(1), 0);
        assert_eq!(tick_shift(2048), 0);
        assert_eq!(tick_shift(2049), 1);
        assert_eq!(tick_shift(100_000), 6);
        for c in [1, 100, 2048, 5000, 100_000, 1 << 24] {
            assert!(u64::from(AGE_CAP) << tick_shift(c) >= 16 * c as u64, "{c}");
            assert!(c <= 2048 || u64::from(AGE_CAP) << (tick_shift(c) - 1) < 16 * c as u64, "{c}");
        }
    }

    #[test]
    fn a_handover_puts_frames_untouched_for_long_first() {
        // 4 frames (a tick is a request). Page 0 is never touched after time 0, page 1 until
        // 60,000, page 3 at 69,500, page 2 at 70,000; the switch comes at 70,001, when 16-bit
        // ticks have wrapped: page 0's age is clamped to the cap, and the handover order is
        // 0, 1, 3, 2 (by wrapped ages alone page 1 would look older than page 0). The new leader
        // (AD-LRU, every page clean and cold) evicts in that order.
        let mut f = Fbx::new(4, &config("ideal"));
        let read = |p, t| Access::new(p, AccessKind::Read, t);
        for fr in 0..4 {
            f.on_insert(fr, &read(u64::from(fr), u64::from(fr)));
        }
        let mut hits: Vec<(u64, FrameId)> = (1..=60).map(|k| (k * 1000, 1)).collect();
        hits.extend([(69_500, 3), (70_000, 2)]);
        for (t, fr) in hits {
            f.on_hit(fr, &read(u64::from(fr), t));
        }
        assert_eq!(f.switches(), 0);
        f.switch_to(ExpertKind::AdLru, 70_001);
        let mut out = Evictions::default();
        let mut order = Vec::new();
        for _ in 0..4 {
            out.clear();
            f.victims(&read(9, 70_002), &crate::replacer::NoPins, &mut out).unwrap();
            order.extend_from_slice(&out.victims);
        }
        assert_eq!(order, vec![0, 1, 3, 2]);
    }

    #[test]
    fn a_leader_keeping_its_frames_hands_over_as_fbx_tracking_them_would() {
        // Two FBX buffers: one tracks the frames itself whatever the leader (the reference),
        // the other leaves that to its BPLRU leader and reads the leader's records at a switch.
        // Switches are forced (epochs never end). A tick is a request here (32 frames): while
        // BPLRU leads (60,000 requests), three pages of each of four hot blocks are touched
        // twice at the start, in the reverse of their frame order, then never again, so their
        // ages pass the cap and a refresh clamps them (then they go in frame order, not by
        // age). Every hand-over and every decision must be the same.
        let mut c = config("page");
        c.set("ppb", "4").unwrap();
        let mut a = Harness::<Fbx>::new(32, c.clone());
        let mut b = Harness::<Fbx>::new(32, c);
        for h in [&mut a, &mut b] {
            h.checking = false;
            h.policy.epoch_len = u64::MAX;
        }
        b.policy.always_track = true;
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let plan = [
            ExpertKind::Bplru,
            ExpertKind::AdLru,
            ExpertKind::Bplru,
            ExpertKind::Cfdc,
            ExpertKind::Bplru,
            ExpertKind::Fbp,
        ];
        let mut reqs: Vec<(u64, AccessKind)> = Vec::new();
        for (round, &to) in plan.iter().enumerate() {
            reqs.clear();
            let bplru = a.policy.leader() == ExpertKind::Bplru;
            if bplru {
                let old: Vec<u64> = (0..4u64).flat_map(|b| [4 * b, 4 * b + 2, 4 * b + 3]).collect();
                reqs.extend(old.iter().chain(old.iter().rev()).map(|&p| (p, AccessKind::Read)));
            }
            for _ in 0..if bplru { 60_000 } else { 2_000 } {
                let p = if rng.random::<f64>() < 0.9 {
                    rng.random_range(0..4u64) * 4 + if bplru { 1 } else { rng.random_range(0..4u64) }
                } else {
                    rng.random_range(16..400u64)
                };
                reqs.push((p, if rng.random::<f64>() < 0.3 { AccessKind::Write } else { AccessKind::Read }));
            }
            for &(p, k) in &reqs {
                assert_eq!(a.access(p, k, crate::NEVER), b.access(p, k, crate::NEVER), "round {round}");
            }
            assert_eq!(a.policy.tracking, !bplru);
            assert!(b.policy.tracking);
            // The time of the next request: after every access seen.
            let now = a.hits + a.misses;
            a.policy.switch_to(to, now);
            b.policy.switch_to(to, now);
            assert_eq!(a.policy.order, b.policy.order, "round {round}: hand-over order");
            a.check().unwrap();
            b.check().unwrap();
            assert_eq!(a.evicted.len(), b.evicted.len(), "round {round}");
            assert!(a.evicted.iter().zip(&b.evicted).all(|(x, y)| x.page == y.page), "round {round}");
            assert_eq!(a.written, b.written, "round {round}");
        }
        // Ages were clamped while BPLRU led (refreshes every 16,384 requests).
        assert!(a.policy.refreshed.is_some());
        assert_eq!(a.policy.switches(), plan.len() as u64);
    }

    #[test]
    fn queued_shadows_score_and_switch_as_shadows_fed_at_once() {
        // Two FBX buffers on every device class, one of them flushing its shadows' queue after
        // every request (each sampled request simulated at once). Sampling at 1/4 (capacity 64
        // with 4-page blocks), so that the queue holds requests between sampled ones. Same
        // decisions, epochs, scores and switches; after a last flush, the same shadows.
        let mut switches = 0;
        for ftl in ["ideal", "page", "log", "shared-log"] {
            let mut c = config(ftl);
            c.set("ppb", "4").unwrap();
            let reqs = zipfish(40_000, 3000, 0.4, 11);
            let mut a = Harness::<Fbx>::new(256, c.clone());
            let mut b = Harness::<Fbx>::new(256, c);
            a.checking = false;
            b.checking = false;
            assert!(a.policy.rate() < 1.0);
            let mut queued = 0;
            for (i, &(p, k)) in reqs.iter().enumerate() {
                assert_eq!(a.access(p, k, crate::NEVER), b.access(p, k, crate::NEVER), "{ftl}, request {i}");
                b.policy.flush_shadows();
                queued = queued.max(a.policy.queued);
                assert_eq!(a.policy.epochs(), b.policy.epochs(), "{ftl}, request {i}");
                assert_eq!(a.policy.switches(), b.policy.switches(), "{ftl}, request {i}");
                assert_eq!(a.policy.scores(), b.policy.scores(), "{ftl}, request {i}");
            }
            assert_eq!(queued, PIPELINE, "{ftl}");
            assert!(a.policy.epochs() > 10, "{ftl}");
            switches += a.policy.switches();
            a.policy.flush_shadows();
            for (x, y) in a.policy.shadows().iter().zip(b.policy.shadows()) {
                assert_eq!((x.requests, x.misses), (y.requests, y.misses), "{ftl}");
                assert_eq!(x.cost_ns(), y.cost_ns(), "{ftl}");
            }
            a.check().unwrap();
            b.check().unwrap();
        }
        assert!(switches > 0);
    }

    #[test]
    fn parameters_round_trip() {
        let mut c = FbxConfig::default();
        assert_eq!(c.values(), vec!["auto", "auto", "auto", "auto", "auto", "8"]);
        c.set("log-blocks", "16").unwrap();
        c.set("ftl", "log").unwrap();
        let mut again = FbxConfig::default();
        for (k, v) in FbxConfig::KEYS.iter().zip(c.values()) {
            again.set(k.key, &v).unwrap();
        }
        assert_eq!(again, c);
        assert!(c.set("log-blocks", "1").is_err());
        assert!(c.set("pad", "on").is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn the_contract_holds_on_every_device(
            reqs in proptest::collection::vec((0u64..400, any::<bool>()), 1..1500),
            cap in 1usize..40,
            ftl in 0usize..5,
        ) {
            let ftl = ["ideal", "page", "block", "log", "shared-log"][ftl];
            let mut c = config(ftl);
            // Small blocks, so that the block-level experts and the epochs move on small traces.
            c.set("ppb", "4").unwrap();
            let reqs: Vec<(u64, AccessKind)> =
                reqs.into_iter().map(|(p, w)| (p, if w { AccessKind::Write } else { AccessKind::Read })).collect();
            check_contract::<Fbx>(cap, c, &reqs);
        }
    }
}
