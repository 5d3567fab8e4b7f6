//! The experts of [`crate::fbx`] and their *shadows*: miniature simulations of each expert on a
//! spatially sampled substream, over a scaled model of the run's device.
//!
//! * [`Expert`] is an enum over the expert policies (static dispatch by `match`, no `dyn`).
//! * [`Shadow`] runs one expert as a database buffer of `round(C · R)` frames (at least one)
//!   over a simulated device of the run's class ([`flashbuf_flash::AnyDevice`], built by
//!   [`flashbuf_flash::DeviceConfig`]), fed only the requests whose flash block the sampler
//!   keeps. It follows the simulator's buffer contract: a miss fetches its page (a write miss
//!   too), a dirty victim is written back, a padded block is written whole (missing pages read
//!   and written), a bypassed write goes to the device. Its cost is the device's flash reads,
//!   programs and erases priced with the profile's latencies.
//!
//! Sampled blocks are numbered compactly in order of first appearance (a flash block of the
//! trace stays a flash block of the sample, as in miniature simulation) into a device scaled like
//! the sample: the run's device size times the rate (miniature simulation's scaling; what a
//! page-mapped FTL's garbage collection costs depends on how full the device is), or, when the
//! size is unknown, [`SPACE_BUFFERS`] times the miniature buffer. When the sample touches more
//! blocks than the device holds, later blocks share a device block by hash (an approximation,
//! said in `docs/policy-fbx.md`).
//! Everything is allocated when the shadow is built; a request allocates nothing.

use flashbuf_flash::{AnyDevice, Device, DeviceConfig, DeviceKind};
use rustc_hash::FxHashMap;

use crate::ad_lru::{AdLru, AdLruConfig};
use crate::blocks::{DENSE_PAGES, prefetch};
use crate::bp_ref::{BpRef, BpRefConfig};
use crate::bplru::{Bplru, BplruConfig};
use crate::cfdc::{Cfdc, CfdcConfig};
use crate::fab::{Fab, FabConfig};
use crate::fbp::{Fbp, FbpConfig};
use crate::params::{DeviceProfile, FtlClass};
use crate::replacer::{Access, AccessKind, EvictError, Evictions, FrameId, Pins, Replacer};

/// The experts, in the order [`ExpertKind::ALL`] lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpertKind {
    /// AD-LRU (best seed on the ideal and page-mapped devices in most cells).
    AdLru,
    /// CFDC (best on log-block FTLs in most cells).
    Cfdc,
    /// BPLRU (block-level LRU with padding).
    Bplru,
    /// FAB (largest block first).
    Fab,
    /// BP-REF (REF with selective padding).
    BpRef,
    /// FBP, flashbuf's cost-balanced clean/dirty lists.
    Fbp,
}

impl ExpertKind {
    /// Every expert.
    pub const ALL: [ExpertKind; 6] =
        [ExpertKind::AdLru, ExpertKind::Cfdc, ExpertKind::Bplru, ExpertKind::Fab, ExpertKind::BpRef, ExpertKind::Fbp];

    /// The registry name of the expert.
    pub fn name(self) -> &'static str {
        match self {
            ExpertKind::AdLru => "ad-lru",
            ExpertKind::Cfdc => "cfdc",
            ExpertKind::Bplru => "bplru",
            ExpertKind::Fab => "fab",
            ExpertKind::BpRef => "bp-ref",
            ExpertKind::Fbp => "fbp",
        }
    }
}

/// One expert policy, dispatched by `match`.
///
/// An explicit one-byte tag (`repr(u8)`): otherwise the compiler hides the tag in a niche of a
/// variant's field, and every `match` (FBX dispatches on its leader four times a request)
/// decodes it first (a load, an xor, a test and a conditional move before the jump).
#[allow(clippy::large_enum_variant)]
#[repr(u8)]
pub enum Expert {
    /// AD-LRU.
    AdLru(AdLru),
    /// CFDC.
    Cfdc(Cfdc),
    /// BPLRU.
    Bplru(Bplru),
    /// FAB.
    Fab(Fab),
    /// BP-REF.
    BpRef(BpRef),
    /// FBP.
    Fbp(Fbp),
}

macro_rules! each {
    ($s:expr, $p:ident => $e:expr) => {
        match $s {
            Expert::AdLru($p) => $e,
            Expert::Cfdc($p) => $e,
            Expert::Bplru($p) => $e,
            Expert::Fab($p) => $e,
            Expert::BpRef($p) => $e,
            Expert::Fbp($p) => $e,
        }
    };
}

impl Expert {
    /// The expert `kind` for `capacity` frames, with its paper's parameters, its block size set
    /// to the device's pages per block, and FBP's device figures from `d`.
    pub fn new(kind: ExpertKind, capacity: usize, d: &DeviceProfile, fbp: &FbpConfig) -> Self {
        let ppb = d.pages_per_block.max(1);
        match kind {
            ExpertKind::AdLru => Expert::AdLru(AdLru::new(capacity, &AdLruConfig::default())),
            ExpertKind::Cfdc => {
                Expert::Cfdc(Cfdc::new(capacity, &CfdcConfig { cluster: ppb, ..CfdcConfig::default() }))
            }
            ExpertKind::Bplru => Expert::Bplru(Bplru::new(capacity, &BplruConfig { ppb })),
            ExpertKind::Fab => Expert::Fab(Fab::new(capacity, &FabConfig { ppb })),
            ExpertKind::BpRef => Expert::BpRef(BpRef::new(capacity, &BpRefConfig { ppb, ..BpRefConfig::default() })),
            ExpertKind::Fbp => Expert::Fbp(Fbp::new(capacity, fbp)),
        }
    }

    /// Which expert this is.
    pub fn kind(&self) -> ExpertKind {
        match self {
            Expert::AdLru(_) => ExpertKind::AdLru,
            Expert::Cfdc(_) => ExpertKind::Cfdc,
            Expert::Bplru(_) => ExpertKind::Bplru,
            Expert::Fab(_) => ExpertKind::Fab,
            Expert::BpRef(_) => ExpertKind::BpRef,
            Expert::Fbp(_) => ExpertKind::Fbp,
        }
    }

    /// See [`Replacer::on_hit`].
    #[inline(always)]
    pub fn on_hit(&mut self, frame: FrameId, a: &Access) {
        each!(self, p => p.on_hit(frame, a))
    }

    /// See [`Replacer::on_insert`].
    #[inline(always)]
    pub fn on_insert(&mut self, frame: FrameId, a: &Access) {
        each!(self, p => p.on_insert(frame, a))
    }

    /// See [`Replacer::victims`].
    #[inline(always)]
    pub fn victims<P: Pins + ?Sized>(&mut self, a: &Access, pins: &P, out: &mut Evictions) -> Result<(), EvictError> {
        each!(self, p => p.victims(a, pins, out))
    }

    /// See [`Replacer::remove`].
    #[inline(always)]
    pub fn remove(&mut self, frame: FrameId) {
        each!(self, p => p.remove(frame))
    }

    /// See [`Replacer::prefetch`].
    #[inline(always)]
    pub fn prefetch(&self, page: u64) {
        each!(self, p => p.prefetch(page))
    }

    /// See [`Replacer::prefetch_frame`].
    #[inline(always)]
    pub fn prefetch_frame(&self, frame: FrameId) {
        each!(self, p => p.prefetch_frame(frame))
    }

    /// See [`Replacer::likely_victim`].
    #[inline(always)]
    pub fn likely_victim(&self) -> Option<FrameId> {
        each!(self, p => p.likely_victim())
    }

    /// Whether the expert keeps every frame's page and last access time in the record each
    /// access touches anyway ([`Expert::frame_record`]; BPLRU), so that [`crate::fbx::Fbx`]
    /// need not track them per request while it leads.
    #[inline(always)]
    pub fn keeps_frames(&self) -> bool {
        matches!(self, Expert::Bplru(_))
    }

    /// The page of `frame` and the time of its last access, where the expert keeps them
    /// ([`Expert::keeps_frames`]); `None` for a frame holding no page, or from other experts.
    #[inline]
    pub fn frame_record(&self, frame: FrameId) -> Option<(u64, u64)> {
        match self {
            Expert::Bplru(p) => p.frame_record(frame),
            _ => None,
        }
    }

    /// See [`Replacer::is_dirty`].
    pub fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        each!(self, p => p.is_dirty(frame))
    }

    /// See [`Replacer::len`].
    pub fn len(&self) -> usize {
        each!(self, p => p.len())
    }

    /// `true` when no frame is tracked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// See [`Replacer::check_invariants`].
    pub fn check_invariants(&self) -> Result<(), String> {
        each!(self, p => p.check_invariants())
    }
}

/// When the run's device size is unknown, the device of a shadow holds this many times its
/// miniature buffer (in pages, at least [`SPACE_MIN_BLOCKS`] blocks): the matrix's buffers are
/// 1% to 20% of a trace's footprint, so a sample's footprint is up to about 100 miniature
/// buffers.
pub const SPACE_BUFFERS: u64 = 128;

/// Smallest shadow device of an unknown size, in flash blocks.
pub const SPACE_MIN_BLOCKS: u64 = 64;

/// The fewest log blocks a log-block FTL works with: one for BAST, two for FAST (its sequential
/// log and one random log block); 1 for the others (which have none).
pub fn min_log_blocks(kind: DeviceKind) -> u32 {
    if kind == DeviceKind::Fast { 2 } else { 1 }
}

/// The device kind standing for an FTL class.
pub fn device_kind(f: FtlClass) -> DeviceKind {
    match f {
        FtlClass::Ideal => DeviceKind::Ideal,
        FtlClass::PageMapped => DeviceKind::Page,
        FtlClass::BlockMapped => DeviceKind::Block,
        FtlClass::LogBlock => DeviceKind::Bast,
        FtlClass::SharedLog => DeviceKind::Fast,
    }
}

/// The host side of a shadow's buffer, as its expert sees it: nothing pinned, its column of
/// the page table.
struct Table<'a, 'b, S>(&'a Column<'b, S>);

impl<S: Slot> Pins for Table<'_, '_, S> {
    #[inline(always)]
    fn is_pinned(&self, _frame: FrameId) -> bool {
        false
    }
    #[inline]
    fn frame_of(&self, page: u64) -> Option<FrameId> {
        self.0.get(page).checked_sub(1)
    }
}

/// A slot of a [`ShadowTable`]: `frame + 1`, 0 for none.
trait Slot: Copy {
    fn load(self) -> u32;
    fn of(v: u32) -> Self;
}

impl Slot for u16 {
    #[inline(always)]
    fn load(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn of(v: u32) -> Self {
        // The table is narrow only for buffers of at most `u16::MAX` frames.
        v as u16
    }
}

impl Slot for u32 {
    #[inline(always)]
    fn load(self) -> u32 {
        self
    }
    #[inline(always)]
    fn of(v: u32) -> Self {
        v
    }
}

/// One shadow's column of a [`ShadowTable`] whose rows are of `S` (the width chosen once per
/// access, not per slot).
struct Column<'a, S> {
    rows: &'a mut [[S; COLUMNS]],
    sparse: &'a mut FxHashMap<u64, u32>,
    /// The column, below [`COLUMNS`].
    col: usize,
}

impl<S: Slot> Column<'_, S> {
    #[inline(always)]
    fn get(&self, page: u64) -> u32 {
        match self.rows.get(page as usize) {
            Some(r) => r[self.col % COLUMNS].load(),
            None => self.sparse.get(&page).copied().unwrap_or(0),
        }
    }

    /// Sets `v` (nonzero) for `page`.
    #[inline(always)]
    fn set(&mut self, page: u64, v: u32) {
        match self.rows.get_mut(page as usize) {
            Some(r) => r[self.col % COLUMNS] = S::of(v),
            None => {
                self.sparse.insert(page, v);
            }
        }
    }

    #[inline(always)]
    fn clear(&mut self, page: u64) {
        match self.rows.get_mut(page as usize) {
            Some(r) => r[self.col % COLUMNS] = S::of(0),
            None => {
                self.sparse.remove(&page);
            }
        }
    }
}

/// Columns of a [`ShadowTable`] row: one per expert, padded to a power of two (a row is then
/// 16 or 32 bytes, inside one cache line).
const COLUMNS: usize = 8;

/// The page tables of the shadows of one FBX, side by side: row `page` holds `frame + 1` (0:
/// none) of every shadow, one column each. Every shadow is fed the same compact page, so one
/// sampled request reads one line of table where six tables were six lines (a shadow is fed
/// about one request in a hundred: its lines have left the cache by its next request).
/// Direct-mapped over the compact space (zeroed, so only the rows the sample has reached are
/// backed), in 2 bytes a slot while a frame number fits; pages beyond [`DENSE_PAGES`] (a space
/// of more than 2²⁶ pages only) are hashed per column.
pub(crate) struct ShadowTable {
    /// The rows of the pages below `min(pages, DENSE_PAGES)`.
    rows: Rows,
    /// The other pages of each column.
    sparse: Vec<FxHashMap<u64, u32>>,
}

enum Rows {
    Narrow(Vec<[u16; COLUMNS]>),
    Wide(Vec<[u32; COLUMNS]>),
}

impl Default for ShadowTable {
    fn default() -> Self {
        ShadowTable { rows: Rows::Narrow(Vec::new()), sparse: (0..COLUMNS).map(|_| FxHashMap::default()).collect() }
    }
}

impl ShadowTable {
    /// A table of the compact pages below `pages` for miniature buffers of `frames` frames.
    pub(crate) fn new(pages: u64, frames: usize) -> Self {
        Self::with_dense(pages, frames, DENSE_PAGES)
    }

    /// [`ShadowTable::new`] with the rows of the pages below `dense` only (tests: the hashed
    /// pages).
    fn with_dense(pages: u64, frames: usize, dense: u64) -> Self {
        let dense = pages.min(dense);
        // `vec!` of zeroes: the allocation is zeroed memory, backed only where written.
        let rows = if frames <= usize::from(u16::MAX) {
            Rows::Narrow(vec![[0; COLUMNS]; dense as usize])
        } else {
            Rows::Wide(vec![[0; COLUMNS]; dense as usize])
        };
        let sparse = (0..COLUMNS)
            .map(|_| {
                let mut m = FxHashMap::default();
                if dense < pages {
                    m.reserve(frames);
                }
                m
            })
            .collect();
        ShadowTable { rows, sparse }
    }

    /// `frame + 1` of `page` in column `col` (0: none).
    #[inline(always)]
    fn get(&self, page: u64, col: usize) -> u32 {
        let row = match &self.rows {
            Rows::Narrow(r) => r.get(page as usize).map(|r| u32::from(r[col % COLUMNS])),
            Rows::Wide(r) => r.get(page as usize).map(|r| r[col % COLUMNS]),
        };
        row.unwrap_or_else(|| self.sparse[col].get(&page).copied().unwrap_or(0))
    }

    /// Brings the row of `page` into cache (changes nothing).
    #[inline(always)]
    pub(crate) fn prefetch(&self, page: u64) {
        match &self.rows {
            Rows::Narrow(r) => prefetch(r, page as usize),
            Rows::Wide(r) => prefetch(r, page as usize),
        }
    }

    /// [`Column::set`] of column `col`.
    #[cfg(test)]
    fn set(&mut self, page: u64, col: usize, v: u32) {
        let sparse = &mut self.sparse[col];
        match &mut self.rows {
            Rows::Narrow(rows) => Column { rows, sparse, col }.set(page, v),
            Rows::Wide(rows) => Column { rows, sparse, col }.set(page, v),
        }
    }

    /// [`Column::clear`] of column `col`, checking [`Column::get`] against
    /// [`ShadowTable::get`] first.
    #[cfg(test)]
    fn clear(&mut self, page: u64, col: usize) {
        let want = self.get(page, col);
        let sparse = &mut self.sparse[col];
        match &mut self.rows {
            Rows::Narrow(rows) => {
                let mut c = Column { rows, sparse, col };
                assert_eq!(c.get(page), want);
                c.clear(page);
            }
            Rows::Wide(rows) => {
                let mut c = Column { rows, sparse, col };
                assert_eq!(c.get(page), want);
                c.clear(page);
            }
        }
    }

    /// Pages mapped in column `col` (for invariant checks; O(table)).
    fn entries(&self, col: usize) -> usize {
        let dense = match &self.rows {
            Rows::Narrow(r) => r.iter().filter(|x| x[col] != 0).count(),
            Rows::Wide(r) => r.iter().filter(|x| x[col] != 0).count(),
        };
        dense + self.sparse[col].len()
    }
}

/// Numbers the sampled flash blocks compactly, in order of first appearance, into a shadow
/// device of `space_blocks` blocks; beyond that, blocks share a device block by hash. Every
/// shadow of a run sees the same sampled requests, so one compactor serves them all.
pub struct Compactor {
    /// Compact block + 1 of each trace block below its length (0: not met yet), as
    /// [`Compactor::with_direct`] asks: one load instead of a hash look-up.
    direct: Vec<u32>,
    /// The compact blocks of trace blocks beyond `direct`.
    blocks: FxHashMap<u64, u64>,
    /// Compact blocks handed out so far.
    assigned: u64,
    space_blocks: u64,
    ppb: u64,
    /// `log2(ppb)` when `ppb` is a power of two.
    shift: Option<u32>,
}

impl Compactor {
    /// A compactor for blocks of `ppb` pages (at least 1) into `space_blocks` device blocks (at
    /// least 1); its map is reserved for them now.
    pub fn new(space_blocks: u64, ppb: u64) -> Self {
        Self::with_direct(space_blocks, ppb, 0)
    }

    /// [`Compactor::new`], with the trace's blocks below `direct_blocks` numbered through an
    /// array (4 bytes a block, zeroed: only the lines of the blocks met are backed) instead of
    /// the hash map: the same numbers.
    pub fn with_direct(space_blocks: u64, ppb: u64, direct_blocks: u64) -> Self {
        let space_blocks = space_blocks.max(1);
        let direct_blocks = if space_blocks < u64::from(u32::MAX) { direct_blocks } else { 0 };
        let mut blocks = FxHashMap::default();
        blocks.reserve(space_blocks as usize);
        let ppb = ppb.max(1);
        Compactor {
            direct: vec![0; direct_blocks as usize],
            blocks,
            assigned: 0,
            space_blocks,
            ppb,
            shift: ppb.is_power_of_two().then(|| ppb.trailing_zeros()),
        }
    }

    /// The compact page standing for the sampled `page`.
    #[inline]
    pub fn compact(&mut self, page: u64) -> u64 {
        let (block, offset) = match self.shift {
            Some(s) => (page >> s, page & (self.ppb - 1)),
            None => (page / self.ppb, page % self.ppb),
        };
        let n = self.assigned;
        let b = if block < self.direct.len() as u64 {
            let d = &mut self.direct[block as usize];
            if *d != 0 {
                u64::from(*d - 1)
            } else if n < self.space_blocks {
                *d = n as u32 + 1;
                self.assigned += 1;
                n
            } else {
                crate::fbx::mix(block) % self.space_blocks
            }
        } else if let Some(&b) = self.blocks.get(&block) {
            b
        } else if n < self.space_blocks {
            self.blocks.insert(block, n);
            self.assigned += 1;
            n
        } else {
            crate::fbx::mix(block) % self.space_blocks
        };
        b * self.ppb + offset
    }
}

/// The device blocks of a shadow of `frames` frames (blocks of `ppb` pages): `space_blocks`
/// when known, else [`SPACE_BUFFERS`] miniature buffers (at least [`SPACE_MIN_BLOCKS`]).
pub fn space_blocks(space_blocks: Option<u64>, frames: usize, ppb: u64) -> u64 {
    space_blocks
        .unwrap_or_else(|| (frames.max(1) as u64 * SPACE_BUFFERS).div_ceil(ppb.max(1)).max(SPACE_MIN_BLOCKS))
        .max(1)
}

/// The flag of a dirty frame in [`Shadow`]'s page array (compact pages are far below 2⁶³).
const DIRTY: u64 = 1 << 63;

/// One expert simulated on the sampled substream (see the module documentation).
pub struct Shadow {
    expert: Expert,
    device: AnyDevice,
    /// The page table of a shadow built alone ([`Shadow::new`]); empty in FBX's shadows, whose
    /// page tables are the columns of FBX's [`ShadowTable`] (a direct slot is one line where a
    /// hash look-up is two).
    own: ShadowTable,
    /// The shadow's column in its page table.
    col: usize,
    /// The compact page of each frame with [`DIRTY`] set while it is dirty (`u64::MAX`: no
    /// page): one word where a page array and a flag array were two lines per access.
    page: Vec<u64>,
    free: Vec<FrameId>,
    out: Evictions,
    prices_ns: [f64; 3],
    dirty_frames: u64,
    filled: bool,
    failed: bool,
    /// Sampled requests simulated.
    pub requests: u64,
    /// Misses among them.
    pub misses: u64,
}

/// A shadow's frames (at least one), the device's pages per block and the flash blocks of its
/// space ([`space_blocks`]): what [`Shadow::new`] and [`Shadow::in_table`] both derive.
fn geometry(frames: usize, d: &DeviceProfile, space: Option<u64>) -> (usize, u64, u64) {
    let frames = frames.max(1);
    let ppb = u64::from(d.pages_per_block.max(1));
    (frames, ppb, space_blocks(space, frames, ppb))
}

impl Shadow {
    /// A shadow of `kind` with `frames` frames over a device of the class and chip of `d`
    /// (`log_blocks` log blocks on log-block FTLs) holding `space_blocks` flash blocks (`None`:
    /// [`SPACE_BUFFERS`] miniature buffers; see [`space_blocks`]). Its requests' pages are
    /// compact pages of that space ([`Compactor`]).
    pub fn new(
        kind: ExpertKind,
        frames: usize,
        d: &DeviceProfile,
        log_blocks: u32,
        fbp: &FbpConfig,
        space_blocks: Option<u64>,
    ) -> Self {
        let (mini, ppb, blocks) = geometry(frames, d, space_blocks);
        Shadow {
            own: ShadowTable::new(blocks.saturating_mul(ppb), mini),
            ..Self::in_table(kind, frames, d, log_blocks, fbp, space_blocks, 0)
        }
    }

    /// [`Shadow::new`] with its page table in column `col` of a [`ShadowTable`] of
    /// `space_pages(space_blocks, frames, ppb)` pages held by the caller, who feeds it with
    /// [`Shadow::access_in`].
    pub(crate) fn in_table(
        kind: ExpertKind,
        frames: usize,
        d: &DeviceProfile,
        log_blocks: u32,
        fbp: &FbpConfig,
        space_blocks: Option<u64>,
        col: usize,
    ) -> Self {
        assert!(col < COLUMNS);
        let (frames, ppb, space_blocks) = geometry(frames, d, space_blocks);
        let kind_ = device_kind(d.ftl);
        let cfg =
            DeviceConfig { kind: kind_, log_blocks: log_blocks.max(min_log_blocks(kind_)), ..DeviceConfig::default() };
        // The presets' chips have 64 pages a block; the space is counted in the device's blocks.
        let dev_ppb = 64;
        let logical = space_blocks.saturating_mul(ppb).min(1 << 31).div_ceil(dev_ppb) * dev_ppb;
        let (device, failed) = match cfg.build(logical) {
            Ok(dev) => (dev, false),
            Err(_) => (
                DeviceConfig { kind: DeviceKind::Ideal, ..DeviceConfig::default() }
                    .build(logical)
                    .expect("ideal device"),
                true,
            ),
        };
        Shadow {
            expert: Expert::new(kind, frames, d, fbp),
            device,
            own: ShadowTable::default(),
            col,
            page: vec![u64::MAX; frames],
            free: (0..frames as FrameId).rev().collect(),
            out: Evictions { victims: Vec::with_capacity(4 * ppb as usize + 4), pad: None, bypass: false },
            prices_ns: [d.read_us * 1e3, d.program_us * 1e3, d.erase_us * 1e3],
            dirty_frames: 0,
            filled: false,
            failed,
            requests: 0,
            misses: 0,
        }
    }

    /// The expert simulated.
    pub fn kind(&self) -> ExpertKind {
        self.expert.kind()
    }

    /// Frames of the miniature buffer.
    pub fn frames(&self) -> usize {
        self.page.len()
    }

    /// `true` once the expert or the device failed (the shadow is then never chosen).
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Device time so far, ns: flash reads, programs and erases priced with the profile's
    /// latencies (`f64::INFINITY` for a failed shadow).
    pub fn cost_ns(&self) -> f64 {
        if self.failed {
            return f64::INFINITY;
        }
        let s = self.device.stats();
        s.flash_reads as f64 * self.prices_ns[0]
            + s.flash_programs as f64 * self.prices_ns[1]
            + s.erases as f64 * self.prices_ns[2]
    }

    /// Device time so far plus the write-backs owed, ns: every dirty page of the miniature
    /// buffer priced at what this expert's write-backs have cost on average so far (device time
    /// less the host's reads, per page written), at least `floor_ns` (`f64::INFINITY` for a
    /// failed shadow). A policy that defers its writes (clean first) is charged for them now.
    pub fn score_ns(&self, floor_ns: f64) -> f64 {
        if self.failed {
            return f64::INFINITY;
        }
        let s = self.device.stats();
        let cost = s.flash_reads as f64 * self.prices_ns[0]
            + s.flash_programs as f64 * self.prices_ns[1]
            + s.erases as f64 * self.prices_ns[2];
        let per_write = if s.host_writes > 0 {
            ((cost - s.host_reads as f64 * self.prices_ns[0]) / s.host_writes as f64).max(floor_ns)
        } else {
            floor_ns
        };
        cost + self.dirty_frames as f64 * per_write
    }

    /// The shadow's device counters (reads, programs, erases, merges, garbage collection).
    pub fn device_stats(&self) -> flashbuf_flash::DeviceStats {
        self.device.stats()
    }

    /// Pages written to the shadow's device so far.
    pub fn pages_written(&self) -> u64 {
        self.device.stats().host_writes
    }

    /// Dirty pages in the miniature buffer: write-backs owed.
    pub fn dirty_frames(&self) -> u64 {
        self.dirty_frames
    }

    /// `true` once the miniature buffer has been full (its expert has had to evict).
    pub fn is_full(&self) -> bool {
        self.filled || self.failed
    }

    fn read(&mut self, page: u64) {
        if self.device.read(page).is_err() {
            self.failed = true;
        }
    }

    fn write(&mut self, page: u64) {
        if self.device.write(page).is_err() {
            self.failed = true;
        }
    }

    /// Hints that an access to compact `page` comes (changes nothing): the expert's own entry
    /// for it ([`Replacer::prefetch`]) is brought into cache (the page-table row by
    /// [`ShadowTable::prefetch`], once for every shadow). A shadow is fed about one request in
    /// a hundred, so its lines have left the cache between two of its accesses;
    /// [`crate::fbx::Fbx`] names each sampled page a few sampled requests before simulating it.
    #[inline]
    pub(crate) fn prefetch(&self, page: u64) {
        self.expert.prefetch(page);
    }

    /// After the page-table row of `page` in `t` has been prefetched (and has arrived): the
    /// expert's record of the frame holding it, if any ([`Replacer::prefetch_frame`]). Changes
    /// nothing.
    #[inline]
    pub(crate) fn prefetch_frame(&self, page: u64, t: &ShadowTable) {
        if let Some(f) = t.get(page, self.col).checked_sub(1) {
            self.expert.prefetch_frame(f);
        }
    }

    /// Simulates one sampled request (`a.page` is a compact page: [`Compactor::compact`]) on a
    /// shadow built alone ([`Shadow::new`]: its own page table).
    pub fn access(&mut self, a: &Access) {
        let mut t = std::mem::take(&mut self.own);
        self.access_in(a, &mut t);
        self.own = t;
    }

    /// [`Shadow::access`] for a shadow whose page table is a column of `t`
    /// ([`Shadow::in_table`]).
    pub(crate) fn access_in(&mut self, a: &Access, t: &mut ShadowTable) {
        if self.failed {
            return;
        }
        let col = self.col;
        let sparse = &mut t.sparse[col];
        match &mut t.rows {
            Rows::Narrow(rows) => self.step(a, Column { rows, sparse, col }),
            Rows::Wide(rows) => self.step(a, Column { rows, sparse, col }),
        }
    }

    /// [`Shadow::access_in`] on the shadow's column.
    #[inline(always)]
    fn step<S: Slot>(&mut self, a: &Access, mut t: Column<'_, S>) {
        self.requests += 1;
        let page = a.page;
        if let Some(f) = t.get(page).checked_sub(1) {
            if a.kind.is_write() && self.page[f as usize] & DIRTY == 0 {
                self.page[f as usize] |= DIRTY;
                self.dirty_frames += 1;
            }
            self.expert.on_hit(f, a);
            return;
        }
        self.misses += 1;
        if self.free.is_empty() {
            self.filled = true;
            self.out.clear();
            let mut out = std::mem::take(&mut self.out);
            let r = self.expert.victims(a, &Table(&t), &mut out);
            if r.is_err() || (out.victims.is_empty() && !out.bypass) {
                self.out = out;
                self.failed = true;
                return;
            }
            if let Some(pad) = out.pad {
                for p in pad.first_page..pad.first_page + u64::from(pad.pages) {
                    if t.get(p) != 0 {
                        self.write(p);
                    } else {
                        self.read(p);
                        self.write(p);
                    }
                }
            }
            for &v in &out.victims {
                let v = v as usize;
                if v >= self.page.len() || self.page[v] == u64::MAX {
                    self.failed = true;
                    break;
                }
                let p = self.page[v] & !DIRTY;
                let dirty = self.page[v] & DIRTY != 0;
                let in_pad = out.pad.is_some_and(|b| (b.first_page..b.first_page + u64::from(b.pages)).contains(&p));
                if dirty && !in_pad {
                    self.write(p);
                }
                t.clear(p);
                self.dirty_frames -= u64::from(dirty);
                self.page[v] = u64::MAX;
                self.free.push(v as FrameId);
            }
            let bypass = out.bypass;
            self.out = out;
            if bypass {
                self.read(page);
                if a.kind.is_write() {
                    self.write(page);
                }
                return;
            }
        }
        let Some(f) = self.free.pop() else {
            self.failed = true;
            return;
        };
        // A database buffer: a miss (a write miss too) fetches its page.
        self.read(page);
        t.set(page, f + 1);
        self.page[f as usize] = page | if a.kind == AccessKind::Write { DIRTY } else { 0 };
        self.dirty_frames += u64::from(a.kind == AccessKind::Write);
        self.expert.on_insert(f, a);
    }

    /// Recounts the shadow's buffer against its expert and page table (a shadow built alone:
    /// [`Shadow::new`]).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.check_invariants_in(&self.own)
    }

    /// [`Shadow::check_invariants`] for a shadow whose page table is a column of `t`.
    pub(crate) fn check_invariants_in(&self, t: &ShadowTable) -> Result<(), String> {
        if self.failed {
            return Ok(());
        }
        self.expert.check_invariants()?;
        let used = self.page.iter().filter(|&&p| p != u64::MAX).count();
        let dirty = self.page.iter().filter(|&&p| p != u64::MAX && p & DIRTY != 0).count() as u64;
        if dirty != self.dirty_frames {
            return Err(format!("shadow {}: {dirty} dirty frames, {} counted", self.kind().name(), self.dirty_frames));
        }
        let mapped = t.entries(self.col);
        if used != mapped || used != self.expert.len() || used + self.free.len() != self.page.len() {
            return Err(format!(
                "shadow {}: {used} frames used, {mapped} in the page table, {} tracked by the expert, {} free of {}",
                self.kind().name(),
                self.expert.len(),
                self.free.len(),
                self.page.len()
            ));
        }
        // As many entries as used frames, and each used frame's page maps to it: the table
        // holds exactly those pairs.
        for (f, &p) in self.page.iter().enumerate() {
            if p != u64::MAX && t.get(p & !DIRTY, self.col) != f as u32 + 1 {
                return Err(format!("shadow {}: frame {f} holds page {p}, which maps elsewhere", self.kind().name()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_direct_compactor_numbers_blocks_as_the_hashed_one() {
        // Blocks below and beyond the direct part, more of them than the space holds (the
        // overflow shares blocks by hash), ppb a power of two and not.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for (ppb, space, direct) in [(64, 40, 100), (4, 200, 64), (3, 50, 1000), (1, 10, 5)] {
            let mut hashed = Compactor::new(space, ppb);
            let mut mapped = Compactor::with_direct(space, ppb, direct);
            for _ in 0..5000 {
                let page = if rng.random::<bool>() {
                    rng.random_range(0..direct * ppb)
                } else {
                    rng.random_range(0..4 * direct * ppb)
                };
                assert_eq!(mapped.compact(page), hashed.compact(page), "ppb {ppb}, page {page}");
            }
            assert_eq!(mapped.assigned, space);
        }
    }

    #[test]
    fn a_shared_page_table_answers_as_a_hash_map_per_column() {
        // The shadows' page table: `frame + 1` per page in each of three columns, rows below
        // page 500, hashed beyond; 2-byte slots for 64 frames, 4-byte ones for 70,000 (frame
        // numbers beyond `u16` stored whole).
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        for frames in [64usize, 70_000] {
            let mut m = ShadowTable::with_dense(1000, frames, 500);
            assert_eq!(matches!(m.rows, Rows::Wide(_)), frames > 65_535);
            let mut model: Vec<FxHashMap<u64, FrameId>> = vec![FxHashMap::default(); 3];
            let step = (frames / 64) as FrameId;
            let mut free: Vec<Vec<FrameId>> = vec![(0..64).map(|i| i * step).collect(); 3];
            for _ in 0..30_000 {
                let page = rng.random_range(0..1000u64);
                let col = rng.random_range(0..3usize);
                assert_eq!(m.get(page, col).checked_sub(1), model[col].get(&page).copied(), "page {page}");
                match model[col].get(&page).copied() {
                    Some(f) => {
                        m.clear(page, col);
                        model[col].remove(&page);
                        free[col].push(f);
                    }
                    None => {
                        if let Some(f) = free[col].pop() {
                            m.set(page, col, f + 1);
                            model[col].insert(page, f);
                        }
                    }
                }
                assert_eq!(m.entries(col), model[col].len());
            }
            for (col, model) in model.into_iter().enumerate() {
                let pairs: Vec<(u64, FrameId)> =
                    (0..1000).filter_map(|p| m.get(p, col).checked_sub(1).map(|f| (p, f))).collect();
                let mut want: Vec<(u64, FrameId)> = model.into_iter().collect();
                want.sort_unstable();
                assert_eq!(pairs, want);
            }
        }
    }
}
