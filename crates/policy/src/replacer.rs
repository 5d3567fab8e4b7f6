//! The contract between a buffer (the simulator's or the engine's) and a replacement policy.

pub use flashbuf_trace::AccessKind;

use crate::params::PolicyParams;

/// Index of a buffer frame: frames are `0..capacity`.
pub type FrameId = u32;

/// "No frame" marker in dense per-frame arrays.
pub const NIL: FrameId = FrameId::MAX;

/// One access as the policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The page accessed (page numbers keep their spatial meaning).
    pub page: u64,
    /// Read or write: a write makes the buffered page dirty.
    pub kind: AccessKind,
    /// Virtual time: the 0-based position of the request in the trace.
    pub time: u64,
    /// Virtual time of the next access to the same page, or [`NEVER`] when there is none or it
    /// is unknown. Filled in only for policies with [`Replacer::NEEDS_FUTURE`].
    pub next_use: u64,
}

/// `next_use` of a page that is never accessed again (or when the future is unknown).
pub const NEVER: u64 = u64::MAX;

impl Access {
    /// An access without knowledge of the future.
    pub fn new(page: u64, kind: AccessKind, time: u64) -> Self {
        Access { page, kind, time, next_use: NEVER }
    }
}

/// What a policy may ask its host while choosing victims: which frames may not be evicted right
/// now, and which frame holds a given page. The simulator pins nothing; the engine's buffer
/// manager pins frames that a thread is using.
pub trait Pins {
    /// `true` if `frame` must not be chosen as a victim.
    fn is_pinned(&self, frame: FrameId) -> bool;

    /// The frame holding `page`, if it is buffered and the host keeps a page table (the
    /// simulator, the engine and the test harness do). A policy that evicts a whole block at
    /// once without tracking where each of its pages sits asks this (BP-REF when it pads); a
    /// host answering `None` makes it fall back to evicting one page.
    #[inline(always)]
    fn frame_of(&self, page: u64) -> Option<FrameId> {
        let _ = page;
        None
    }

    /// `frame` is about to be named a victim: a host that will read its own record of the
    /// frame right after [`Replacer::victims`] returns (the simulator's reverse map) may bring
    /// it into cache now, so that the misses of a many-page eviction overlap. A hint only;
    /// by default does nothing.
    #[inline(always)]
    fn prefetch_victim(&self, frame: FrameId) {
        let _ = frame;
    }
}

/// Nothing is pinned and no page table is offered (policy unit tests and benchmarks). Compiles
/// away entirely.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoPins;

impl Pins for NoPins {
    #[inline(always)]
    fn is_pinned(&self, _frame: FrameId) -> bool {
        false
    }
}

impl Pins for [bool] {
    #[inline]
    fn is_pinned(&self, frame: FrameId) -> bool {
        self[frame as usize]
    }
}

/// A request to write one whole flash block (block padding, as BPLRU and BP-REF do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockPad {
    /// First page of the block (a multiple of `pages`).
    pub first_page: u64,
    /// Pages per block.
    pub pages: u32,
}

/// What one eviction decided. Reused across calls: the caller clears it before each call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evictions {
    /// Frames to evict, in the order their dirty pages are to be written. Usually one; FAB,
    /// BPLRU and BP-REF name every buffered page of a block.
    pub victims: Vec<FrameId>,
    /// When set, the victims are written as one whole block: the caller walks the block's pages
    /// in order, writes every buffered page of it (clean or dirty), and for every page of the
    /// block that is not buffered performs a *padding read* and a *padding write*. Every buffered
    /// page of the block must then be among `victims`.
    pub pad: Option<BlockPad>,
    /// When set, the incoming page is not buffered: a write goes straight to the device (after
    /// the fetch a write miss makes in a database buffer), a read is served from the device, and
    /// `on_insert` is not called for it. `victims` may then be
    /// empty. (REF with a 100% victim window does this when the incoming page is the only page
    /// of a victim block: the REF paper's Fig. 6 writes it through.)
    pub bypass: bool,
}

impl Evictions {
    /// Empties the victim list and clears the padding and bypass requests.
    pub fn clear(&mut self) {
        self.victims.clear();
        self.pad = None;
        self.bypass = false;
    }
}

/// Why a policy could not name a victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvictError {
    /// The policy tracks no frame at all.
    #[error("the buffer holds no page to evict")]
    Empty,
    /// Every candidate frame is pinned.
    #[error("every buffered page is pinned: the buffer is too small for the pages in use")]
    AllPinned,
}

/// A buffer replacement policy over a fixed set of frames `0..capacity`.
///
/// The buffer (simulator or buffer manager) owns the page table and the frames; the policy owns
/// its queues and per-frame state, kept in dense arrays indexed by [`FrameId`], and is told every
/// event. Call sequence contract:
///
/// * A hit on a buffered page: [`on_hit`](Replacer::on_hit).
/// * A miss: if no frame is free, [`victims`](Replacer::victims) first; then the page is placed
///   in a free frame and [`on_insert`](Replacer::on_insert) is called.
/// * The policy learns dirtiness from the access kinds: a write access makes a frame dirty until
///   the frame is evicted. (The buffer keeps its own dirty bits to decide write-backs; tests
///   check the two agree where a policy exposes them.)
///
/// Implementations do no allocation and no dynamic call in any of these methods. A policy is
/// `Send + 'static` (it owns its state), so that runs can move between threads.
pub trait Replacer: Send + 'static {
    /// The policy's parameters (use [`crate::params::NoParams`] for none).
    type Config: PolicyParams;

    /// Whether the caller must fill in [`Access::next_use`] (offline policies such as MIN).
    const NEEDS_FUTURE: bool = false;

    /// Whether the policy keeps an exact map of its tracked pages, so that a host may use
    /// [`frame_of`](Replacer::frame_of) and [`page_in`](Replacer::page_in) instead of a page
    /// table of its own. A host that does keeps no page table, so such a policy must not ask
    /// for one ([`Pins::frame_of`]). For a block policy (FAB) whose frame table already maps
    /// each buffered page, a second table in the host would be a second random cache line per
    /// request, and its stale entries a third.
    const KEEPS_PAGE_MAP: bool = false;

    /// With [`KEEPS_PAGE_MAP`](Replacer::KEEPS_PAGE_MAP): the frame holding `page` if the
    /// policy tracks it (`None` otherwise, and for every policy without a map).
    #[inline(always)]
    fn frame_of(&self, page: u64) -> Option<FrameId> {
        let _ = page;
        None
    }

    /// With [`KEEPS_PAGE_MAP`](Replacer::KEEPS_PAGE_MAP): the page of `frame`'s last insertion,
    /// for a frame the policy tracks or has named a victim since (unspecified otherwise, and
    /// for every policy without a map).
    #[inline(always)]
    fn page_in(&self, frame: FrameId) -> u64 {
        let _ = frame;
        u64::MAX
    }

    /// A policy for `capacity` frames (`capacity >= 1`), all of them initially free.
    fn new(capacity: usize, config: &Self::Config) -> Self;

    /// `access.page`, buffered in `frame`, was accessed again.
    fn on_hit(&mut self, frame: FrameId, access: &Access);

    /// `access.page` was just placed in the free frame `frame` after a miss.
    fn on_insert(&mut self, frame: FrameId, access: &Access);

    /// A request for `page` is coming soon (the simulator says so some requests ahead, as it
    /// prefetches its own page-table slot): a policy that looks pages up in a directory of its
    /// own (ghost entries) may bring that entry into cache. Changes nothing; by default does
    /// nothing.
    #[inline(always)]
    fn prefetch(&self, page: u64) {
        let _ = page;
    }

    /// A request for the page in `frame` is probably coming soon (the simulator says so a few
    /// requests ahead, once its page table has named the frame; the frame may hold another page
    /// by then): a policy may bring that frame's record into cache. Changes nothing; by default
    /// does nothing.
    #[inline(always)]
    fn prefetch_frame(&self, frame: FrameId) {
        let _ = frame;
    }

    /// The frame the next eviction will most likely name, when the policy can tell at the cost
    /// of reading a field it keeps in cache (LRU: the back of its queue): the simulator then
    /// brings the victim's page-table entry and the device's record of its page into cache
    /// before the miss that evicts it. A hint only; by default `None`.
    #[inline(always)]
    fn likely_victim(&self) -> Option<FrameId> {
        None
    }

    /// The buffer needs a free frame to bring in `incoming`: choose one or more victims and
    /// push them onto `out.victims` (which the caller has cleared), skipping pinned frames.
    /// When this returns `Ok`, the victims are no longer tracked by the policy: the caller
    /// writes back the dirty ones, frees the frames and reuses them in later `on_insert` calls.
    /// At least one victim must be named unless `out.bypass` is set.
    fn victims<P: Pins + ?Sized>(&mut self, incoming: &Access, pins: &P, out: &mut Evictions)
    -> Result<(), EvictError>;

    /// Stops tracking `frame` (the buffer dropped its page for a reason of its own).
    fn remove(&mut self, frame: FrameId);

    /// Number of frames currently tracked.
    fn len(&self) -> usize;

    /// `true` when no frame is tracked.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The policy's view of whether `frame` is dirty, for policies that keep one (`None` for
    /// policies that do not track dirtiness). Used by tests to cross-check the buffer's bits.
    fn is_dirty(&self, _frame: FrameId) -> Option<bool> {
        None
    }

    /// Recounts every queue and per-frame field and reports the first inconsistency.
    fn check_invariants(&self) -> Result<(), String>;
}
