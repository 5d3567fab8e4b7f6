//! Helpers shared by the engine's integration tests: stores, policy lists, and three small test
//! policies that exercise the eviction features no classic policy uses (several victims at
//! once, block padding, bypass) with obvious O(n) logic.

#![allow(dead_code)]

use flashbuf_engine::buffer::{BufferManager, BufferPolicy};
use flashbuf_engine::page::PageFile;
use flashbuf_flash::{MemStore, PageStore};
use flashbuf_policy::{
    Access, AnyPolicy, BlockPad, EvictError, Evictions, FrameId, NoParams, POLICIES, Pins, PolicyConfig, Replacer,
};

/// A buffer manager over a fresh memory store.
pub fn mem_bm<P: BufferPolicy>(page_size: usize, pages: u64, policy: P, frames: usize) -> BufferManager<MemStore, P> {
    bm_on(MemStore::new(page_size, pages), policy, frames)
}

/// A buffer manager over a freshly formatted store.
pub fn bm_on<S: PageStore, P: BufferPolicy>(store: S, policy: P, frames: usize) -> BufferManager<S, P> {
    let (file, header) = PageFile::create(store).expect("format the store");
    BufferManager::new(file, header, policy, frames).expect("buffer manager")
}

/// Policy specs the tests run when their policy is registered: every registered policy with
/// its defaults (the offline ones, MIN and MIN-COST, excepted: they need the future), plus variants that make the block-level
/// policies evict, pad and bypass often on small test databases.
pub fn policy_matrix() -> Vec<PolicyConfig> {
    let mut out: Vec<PolicyConfig> = POLICIES
        .iter()
        .map(|(n, _)| n.parse().expect("registered"))
        .filter(|p| !AnyPolicy::new(1, p).needs_future())
        .collect();
    for spec in [
        "cflru:w=0.25",
        "cfdc:pw=0.5,cluster=4",
        "fab:ppb=4",
        "bplru:ppb=4",
        "ref:ppb=4,vw=1",
        "bp-ref:ppb=4,pad=0",
        "bp-ref:ppb=8,pad=0.25",
    ] {
        if let Ok(p) = spec.parse::<PolicyConfig>() {
            out.push(p);
        }
    }
    for required in ["lru", "cflru", "ad-lru"] {
        assert!(out.iter().any(|p| p.name() == required), "{required} is registered");
    }
    out
}

/// An [`AnyPolicy`] from a spec.
pub fn any(spec: &str, frames: usize) -> AnyPolicy {
    AnyPolicy::new(frames, &spec.parse::<PolicyConfig>().expect("policy spec"))
}

/// Per-frame LRU state shared by the test policies.
struct LruModel {
    page: Vec<u64>,
    stamp: Vec<u64>,
    tracked: Vec<bool>,
    clock: u64,
    n: usize,
}

impl LruModel {
    fn new(capacity: usize) -> Self {
        LruModel { page: vec![0; capacity], stamp: vec![0; capacity], tracked: vec![false; capacity], clock: 0, n: 0 }
    }
    fn touch(&mut self, f: FrameId) {
        self.clock += 1;
        self.stamp[f as usize] = self.clock;
    }
    fn insert(&mut self, f: FrameId, page: u64) {
        assert!(!self.tracked[f as usize], "frame {f} inserted twice");
        self.tracked[f as usize] = true;
        self.page[f as usize] = page;
        self.n += 1;
        self.touch(f);
    }
    fn untrack(&mut self, f: FrameId) {
        assert!(self.tracked[f as usize], "frame {f} not tracked");
        self.tracked[f as usize] = false;
        self.n -= 1;
    }
    /// Unpinned tracked frames, least recently used first.
    fn lru_order<P: Pins + ?Sized>(&self, pins: &P) -> Vec<FrameId> {
        let mut v: Vec<FrameId> =
            (0..self.page.len() as FrameId).filter(|&f| self.tracked[f as usize] && !pins.is_pinned(f)).collect();
        v.sort_by_key(|&f| self.stamp[f as usize]);
        v
    }
    fn none_left(&self) -> EvictError {
        if self.n == 0 { EvictError::Empty } else { EvictError::AllPinned }
    }
    fn check(&self) -> Result<(), String> {
        let n = self.tracked.iter().filter(|&&t| t).count();
        if n != self.n { Err(format!("{n} tracked, counted {}", self.n)) } else { Ok(()) }
    }
}

/// LRU whose victim takes its whole block (4 pages) with it, padded, when no page of the
/// block is pinned; otherwise the single LRU page.
pub struct BlockPadLru(LruModel);

/// Pages per block of [`BlockPadLru`].
pub const PAD_PPB: u64 = 4;

impl Replacer for BlockPadLru {
    type Config = NoParams;
    fn new(capacity: usize, _: &NoParams) -> Self {
        BlockPadLru(LruModel::new(capacity))
    }
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        self.0.touch(frame)
    }
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.0.insert(frame, access.page)
    }
    fn victims<P: Pins + ?Sized>(&mut self, _: &Access, pins: &P, out: &mut Evictions) -> Result<(), EvictError> {
        let Some(&v) = self.0.lru_order(pins).first() else { return Err(self.0.none_left()) };
        let block = self.0.page[v as usize] / PAD_PPB;
        let mut members: Vec<FrameId> = (0..self.0.page.len() as FrameId)
            .filter(|&f| self.0.tracked[f as usize] && self.0.page[f as usize] / PAD_PPB == block)
            .collect();
        if members.iter().all(|&f| !pins.is_pinned(f)) {
            members.sort_by_key(|&f| self.0.page[f as usize]);
            for f in members {
                self.0.untrack(f);
                out.victims.push(f);
            }
            out.pad = Some(BlockPad { first_page: block * PAD_PPB, pages: PAD_PPB as u32 });
        } else {
            self.0.untrack(v);
            out.victims.push(v);
        }
        Ok(())
    }
    fn remove(&mut self, frame: FrameId) {
        self.0.untrack(frame)
    }
    fn len(&self) -> usize {
        self.0.n
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.0.check()
    }
}

/// LRU that evicts the two least recently used unpinned pages at once (when there are two).
pub struct TwoAtOnce(LruModel);

impl Replacer for TwoAtOnce {
    type Config = NoParams;
    fn new(capacity: usize, _: &NoParams) -> Self {
        TwoAtOnce(LruModel::new(capacity))
    }
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        self.0.touch(frame)
    }
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.0.insert(frame, access.page)
    }
    fn victims<P: Pins + ?Sized>(&mut self, _: &Access, pins: &P, out: &mut Evictions) -> Result<(), EvictError> {
        let order = self.0.lru_order(pins);
        if order.is_empty() {
            return Err(self.0.none_left());
        }
        for &f in order.iter().take(2) {
            self.0.untrack(f);
            out.victims.push(f);
        }
        Ok(())
    }
    fn remove(&mut self, frame: FrameId) {
        self.0.untrack(frame)
    }
    fn len(&self) -> usize {
        self.0.n
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.0.check()
    }
}

/// LRU that refuses to buffer pages whose number is a multiple of 5 when the buffer is full:
/// they are served from the store (bypass) and written through.
pub struct BypassFifth(LruModel);

impl Replacer for BypassFifth {
    type Config = NoParams;
    fn new(capacity: usize, _: &NoParams) -> Self {
        BypassFifth(LruModel::new(capacity))
    }
    fn on_hit(&mut self, frame: FrameId, _: &Access) {
        self.0.touch(frame)
    }
    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        self.0.insert(frame, access.page)
    }
    fn victims<P: Pins + ?Sized>(
        &mut self,
        incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if incoming.page.is_multiple_of(5) {
            out.bypass = true;
            return Ok(());
        }
        let Some(&v) = self.0.lru_order(pins).first() else { return Err(self.0.none_left()) };
        self.0.untrack(v);
        out.victims.push(v);
        Ok(())
    }
    fn remove(&mut self, frame: FrameId) {
        self.0.untrack(frame)
    }
    fn len(&self) -> usize {
        self.0.n
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.0.check()
    }
}

/// A tiny deterministic generator for test operation sequences (SplitMix64).
pub struct TestRng(pub u64);

impl TestRng {
    /// Next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (slightly biased; fine for tests).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
