//! LRU's curves of hit ratio, page reads and page writes at every buffer size, in one pass over
//! the trace: exact, or estimated by SHARDS from a spatially sampled trace.
//!
//! For every access the pass finds its stack distance `d` ([`super::stack`]). LRU with `C`
//! frames hits it exactly when `d ≤ C`, so a histogram of distances gives the hits at every
//! size. Write-backs come from the same pass (proof in `docs/curves.md`): the eviction before
//! access `k` of a page writes it back at the sizes `C` with `M_k ≤ C < d_k`, where `M_k` is
//! the largest stack distance among the page's accesses since its last write (0 when there is
//! none between), and at no size when the page has not been written before `k` (in the sample);
//! after the last access, a page of final depth `s` is written by an eviction at the sizes
//! `M ≤ C < s` and by the final flush at the sizes `C ≥ max(M, s)`. Each interval is added to
//! a difference array over sizes, so the whole write curve costs two array updates per access.
//!
//! **SHARDS** (Waldspurger et al., FAST 2015) runs the same pass over the requests of a random
//! subset of blocks, sampled at rate `R` ([`crate::sample::BlockSampler`]): a distance `d` in
//! the sample stands for `(d − 1) / R + 1` in the full trace — the page itself is surely in the
//! sample, each of the `d − 1` others stands for `1 / R` pages (the paper and libCacheSim scale
//! `d` itself, which puts every distance `1 / R − 1` pages too far) — and each sampled event for
//! `1 / R` events.
//! *Fixed rate* keeps `R`. *Fixed size* bounds the pages tracked: when they exceed the limit, the
//! block with the largest hash leaves the sample and the threshold drops below its hash (so the
//! rate falls as the trace goes on); each event is weighted by `1 / R` at its time, as
//! libCacheSim's profiler does. Counts are estimated by their weighted sums (Horvitz–Thompson);
//! the hits then get the SHARDS adjustment: the difference between the requests of the trace and
//! the weighted sampled requests, which the paper attributes to frequently accessed blocks, is
//! added to the hits at every size (separately for reads and writes). Misses, reads and writes
//! follow from the adjusted hits and the weighted write-back counts.
//!
//! Distances are kept in *bins*: exactly the sample distance for the exact pass and fixed-rate
//! SHARDS; for fixed size, the distance scaled to the rate of the bins, `(d − 1) · R_bin / R`
//! rounded up, plus 1, where `R_bin` follows the rate down by halvings (the histogram and the stored `M` values
//! are rebinned then), so that the histogram never holds more bins than pages tracked.

use flashbuf_trace::{AccessKind, Request, Scanned};

use super::slots::{CLEAN, PageState, Slots};
use super::stack::{NO_POS, Stack};
use crate::buffer::{Counters, WriteMiss};
use crate::sample::BlockSampler;
use flashbuf_trace::sample::SampleCache;

/// The histogram over bins, one array per quantity so that a trace without writes touches only
/// the hits: weighted hits by kind (read, write), write-back intervals opening and closing at a
/// bin, and final flushes opening at it.
#[derive(Clone, Debug, Default)]
struct Histogram {
    hits: Vec<[f64; 2]>,
    open: Vec<f64>,
    close: Vec<f64>,
    flush: Vec<f64>,
}

impl Histogram {
    fn with_len(n: usize) -> Self {
        Histogram { hits: vec![[0.0; 2]; n], open: vec![0.0; n], close: vec![0.0; n], flush: vec![0.0; n] }
    }

    #[inline]
    fn len(&self) -> usize {
        self.hits.len()
    }

    fn resize(&mut self, n: usize) {
        self.hits.resize(n, [0.0; 2]);
        self.open.resize(n, 0.0);
        self.close.resize(n, 0.0);
        self.flush.resize(n, 0.0);
    }

    #[inline(always)]
    fn prefetch(&self, pending: &Pending) {
        prefetch(self.hits.as_ptr().wrapping_add(pending.bin as usize));
        if pending.lo != 0 {
            prefetch(self.open.as_ptr().wrapping_add(pending.lo as usize));
            prefetch(self.close.as_ptr().wrapping_add(pending.bin as usize));
        }
    }

    #[inline(always)]
    fn apply(&mut self, p: &Pending) {
        self.hits[p.bin as usize][p.kind as usize] += p.weight;
        if p.lo != 0 {
            self.open[p.lo as usize] += p.weight;
            self.close[p.bin as usize] += p.weight;
        }
    }

    fn memory_bytes(&self) -> u64 {
        (self.hits.capacity() * 16 + (self.open.capacity() + self.close.capacity() + self.flush.capacity()) * 8) as u64
    }
}

/// Hints the CPU to load the cache line of `p` (no effect on the program's meaning).
#[inline(always)]
pub(super) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults or writes, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A histogram update waiting for its cache lines: the hit at `bin` and, when `lo > 0`, the
/// write-back interval `[lo, bin)`.
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    bin: u32,
    lo: u32,
    kind: u8,
    weight: f64,
}

/// How many accesses a histogram update waits, its lines being prefetched meanwhile: the
/// histogram is as large as the footprint, and each update would otherwise wait for memory at
/// the end of a chain of dependent loads (page state → stack distance → bin).
const LAG: usize = 16;

#[derive(Clone, Debug)]
enum Mode {
    Exact,
    FixedRate(Decisions),
    FixedSize(FixedSize),
}

/// Requests per chunk of fixed-rate SHARDS' decisions.
const CHUNK: usize = 256;

/// Fixed-rate SHARDS' sampling decisions: the sampler's, cached as one bit per block
/// ([`SampleCache`]: at most two hashes per request to fill, whatever the page numbers), so that
/// the test on the 99% of requests that are not sampled is a shift and a bit test rather than a
/// hash. The decisions are the sampler's own, so the sample is the same.
#[derive(Clone, Debug)]
struct Decisions {
    cache: SampleCache,
}

impl Decisions {
    fn new(sampler: BlockSampler) -> Self {
        Decisions { cache: SampleCache::new(sampler) }
    }

    /// Calls `kept` for every request of `batch` that the sampler keeps, in order, and returns
    /// the writes of the batch. The decisions are taken first, a chunk at a time, without a call
    /// or a branch that the sample's 1% could mispredict ([`decide`](Self::decide)); the cache
    /// then grows to the largest block it missed.
    #[inline]
    fn filter(&mut self, batch: &[Request], mut kept: impl FnMut(&Request)) -> u64 {
        let (mut writes, mut missed) = (0, 0);
        let mut index = [0u16; CHUNK];
        for chunk in batch.chunks(CHUNK) {
            let n = self.decide(chunk, &mut index, &mut writes, &mut missed);
            for &i in &index[..n] {
                kept(&chunk[i as usize]);
            }
        }
        self.cache.update(batch.len() as u64, missed);
        writes
    }

    /// Stores in `kept` the indices of the kept requests of `chunk` (at most [`CHUNK`]) and
    /// returns how many; adds the writes of the chunk to `writes`, and raises `missed` to the
    /// largest block that the cache did not cover and could. A function of its own, so that its
    /// loop keeps everything in registers.
    #[inline(never)]
    fn decide(&self, chunk: &[Request], kept: &mut [u16; CHUNK], writes: &mut u64, missed: &mut u64) -> usize {
        let cache = &self.cache;
        let (mut n, mut w, mut top) = (0, 0, *missed);
        for (i, r) in chunk.iter().enumerate() {
            w += r.kind as u64;
            if cache.keeps(r.page, &mut top) {
                kept[n % CHUNK] = i as u16;
                n += 1;
            }
        }
        *writes += w;
        *missed = top;
        n
    }

    /// Blocks whose decisions are cached.
    #[cfg(test)]
    fn cached(&self) -> u64 {
        self.cache.cached()
    }
}

/// The state of fixed-size SHARDS: the sampled blocks by hash and their pages.
#[derive(Clone, Debug)]
struct FixedSize {
    sampler: BlockSampler,
    max_pages: u32,
    /// Sampled blocks, largest hash on top.
    blocks: std::collections::BinaryHeap<(u64, u64)>,
    /// First hashed slot of each sampled block's page list.
    heads: rustc_hash::FxHashMap<u64, u32>,
    /// Next slot in the block's page list, by hashed slot index.
    next: Vec<u32>,
}

const END: u32 = u32::MAX;

/// Builds [`LruCurve`]s in one pass (see the module documentation).
#[derive(Clone, Debug)]
pub struct LruCurveBuilder {
    stack: Stack,
    slots: Slots,
    hist: Histogram,
    /// Updates waiting for their cache lines (a ring of `LAG`; `bin == 0` is empty).
    pending: [Pending; LAG],
    next_pending: usize,
    /// Requests of the trace by kind (read, write).
    requests: [u64; 2],
    /// Weighted sampled requests by kind.
    sampled: [f64; 2],
    /// Current weight of an event, `1 / R`.
    weight: f64,
    /// Bins per sample-distance unit, `R_bin / R` (1 except for fixed size).
    scale: f64,
    /// Bins per page of the full trace, `R_bin`.
    bin_rate: f64,
    mode: Mode,
}

impl Default for LruCurveBuilder {
    fn default() -> Self {
        Self::exact(crate::DENSE_LIMIT)
    }
}

impl LruCurveBuilder {
    /// The exact pass. Pages below `dense_pages` are direct-mapped (give the page space of a
    /// dense or remapped trace), the others hashed.
    pub fn exact(dense_pages: u64) -> Self {
        Self::with_mode(Mode::Exact, dense_pages)
    }

    /// Fixed-rate SHARDS over `sampler`'s blocks.
    pub fn shards(sampler: BlockSampler) -> Self {
        let rate = sampler.rate();
        let mut b = Self::with_mode(Mode::FixedRate(Decisions::new(sampler)), 0);
        b.weight = 1.0 / rate;
        b.bin_rate = rate;
        b
    }

    /// Fixed-size SHARDS tracking at most `max_pages` pages (at least two sampling blocks),
    /// sampling blocks of `block_pages` pages with the hash salt `salt`.
    pub fn shards_fixed_size(max_pages: u32, block_pages: u64, salt: u64) -> Result<Self, String> {
        if u64::from(max_pages) < 2 * block_pages.max(1) {
            return Err(format!(
                "a SHARDS sample of {max_pages} pages is too small: it must hold at least two sampling blocks \
                 ({} pages)",
                2 * block_pages.max(1)
            ));
        }
        let fixed = FixedSize {
            sampler: BlockSampler::with_limit(u64::MAX, block_pages, salt),
            max_pages,
            blocks: Default::default(),
            heads: Default::default(),
            next: Vec::new(),
        };
        Ok(Self::with_mode(Mode::FixedSize(fixed), 0))
    }

    fn with_mode(mode: Mode, dense_pages: u64) -> Self {
        LruCurveBuilder {
            stack: Stack::new(),
            slots: Slots::new(dense_pages),
            hist: Histogram::with_len(1024),
            pending: [Pending::default(); LAG],
            next_pending: 0,
            requests: [0; 2],
            sampled: [0.0; 2],
            weight: 1.0,
            scale: 1.0,
            bin_rate: 1.0,
            mode,
        }
    }

    /// Feeds the next requests of the trace.
    pub fn feed(&mut self, batch: &[Request]) {
        // Requests are counted in the loop that handles them (one pass over the batch, which
        // may not fit in the cache), as writes in a register: `AccessKind` is 0 or 1.
        let mut writes = 0u64;
        match &self.mode {
            Mode::Exact => {
                for (i, r) in batch.iter().enumerate() {
                    writes += r.kind as u64;
                    if let Some(ahead) = batch.get(i + LAG) {
                        self.slots.prefetch(ahead.page);
                    }
                    self.access(r.page, r.kind);
                }
            }
            Mode::FixedRate(_) => {
                let Mode::FixedRate(mut keep) = std::mem::replace(&mut self.mode, Mode::Exact) else {
                    unreachable!("fixed-rate mode")
                };
                writes = keep.filter(batch, |r| {
                    self.access(r.page, r.kind);
                });
                self.mode = Mode::FixedRate(keep);
            }
            Mode::FixedSize(_) => {
                for r in batch {
                    writes += r.kind as u64;
                    self.access_fixed_size(r.page, r.kind);
                }
            }
        }
        self.requests[1] += writes;
        self.requests[0] += batch.len() as u64 - writes;
    }

    /// The sampler of fixed-rate SHARDS (`None` for the exact pass and fixed-size SHARDS): a
    /// reader may apply it (or one keeping more) while decoding, and hand what it kept to
    /// [`feed_sampled`](Self::feed_sampled).
    pub fn sampler(&self) -> Option<&BlockSampler> {
        match &self.mode {
            Mode::FixedRate(d) => Some(d.cache.sampler()),
            _ => None,
        }
    }

    /// Feeds the next requests of the trace when a reader has already dropped some of them
    /// ([`flashbuf_trace::TraceSource::next_sampled`]): `kept` must hold, in order, every request
    /// of the `scanned` ones that this pass's sampler keeps (it may hold more: they are dropped
    /// here). The curve is then the one [`feed`](Self::feed) gives over all of them.
    ///
    /// # Panics
    ///
    /// Unless this is fixed-rate SHARDS (see [`sampler`](Self::sampler)).
    pub fn feed_sampled(&mut self, kept: &[Request], scanned: Scanned) {
        let Mode::FixedRate(d) = &self.mode else { panic!("feed_sampled is for fixed-rate SHARDS") };
        let sampler = d.cache.sampler().clone();
        for r in kept {
            if sampler.keeps(r.page) {
                self.access(r.page, r.kind);
            }
        }
        self.requests[1] += scanned.writes;
        self.requests[0] += scanned.requests - scanned.writes;
    }

    /// Pages tracked (on the stack) now: all distinct pages of the sample so far; for fixed
    /// size, at most its limit.
    pub fn tracked_pages(&self) -> u32 {
        self.stack.len()
    }

    /// The current sampling rate (1 for the exact pass).
    pub fn rate(&self) -> f64 {
        match &self.mode {
            Mode::Exact => 1.0,
            Mode::FixedRate(s) => s.cache.sampler().rate(),
            Mode::FixedSize(f) => f.sampler.rate(),
        }
    }

    /// Bytes held by the pass (stack, page table, histogram).
    pub fn memory_bytes(&self) -> u64 {
        self.stack.memory_bytes() + self.slots.memory_bytes() + self.hist.memory_bytes()
    }

    #[inline]
    fn bin(&self, d: u32) -> u32 {
        if self.scale == 1.0 { d } else { (f64::from(d - 1) * self.scale).ceil() as u32 + 1 }
    }

    /// One sampled access; returns the page's owner code.
    #[inline]
    fn access(&mut self, page: u64, kind: AccessKind) -> u32 {
        if self.stack.full() {
            self.compact();
        }
        let w = self.weight;
        self.sampled[kind as usize] += w;
        let code = self.slots.code(page);
        let st = *self.slots.state(code);
        let write = kind.is_write();
        let new = if st.pos == NO_POS {
            let pos = self.stack.push(code);
            let live = self.stack.len() as usize;
            if live >= self.hist.len() {
                self.grow_bins(live);
            }
            PageState { pos, m: if write { 0 } else { CLEAN } }
        } else {
            let (d, pos) = self.stack.touch(st.pos, code);
            let b = self.bin(d);
            let m = st.m;
            let lo = if m != CLEAN && m.max(1) < b { m.max(1) } else { 0 };
            let update = Pending { bin: b, lo, kind: kind as u8, weight: w };
            self.hist.prefetch(&update);
            let slot = self.next_pending;
            self.next_pending = (slot + 1) % LAG;
            let due = std::mem::replace(&mut self.pending[slot], update);
            if due.bin != 0 {
                self.hist.apply(&due);
            }
            let m = if write {
                0
            } else if m == CLEAN {
                CLEAN
            } else {
                m.max(b)
            };
            PageState { pos, m }
        };
        *self.slots.state(code) = new;
        code
    }

    #[cold]
    fn grow_bins(&mut self, live: usize) {
        let want = (2 * self.hist.len()).max(live + 1);
        self.hist.resize(want);
    }

    /// Applies the updates still waiting.
    fn drain(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            if p.bin != 0 {
                self.hist.apply(&p);
            }
        }
    }

    #[cold]
    fn compact(&mut self) {
        let owners = self.stack.compact_owners();
        // A random write per tracked page: prefetched, so that the misses overlap.
        for (pos, &code) in owners.iter().enumerate() {
            if let Some(&ahead) = owners.get(pos + LAG) {
                self.slots.prefetch_code(ahead);
            }
            self.slots.state(code).pos = pos as u32;
        }
    }

    fn access_fixed_size(&mut self, page: u64, kind: AccessKind) {
        let Mode::FixedSize(f) = &mut self.mode else { unreachable!("fixed-size mode") };
        let block = f.sampler.block(page);
        let hash = f.sampler.hash(block);
        if hash > f.sampler.limit() {
            return;
        }
        let new_block = !f.heads.contains_key(&block);
        if new_block {
            f.blocks.push((hash, block));
            f.heads.insert(block, END);
        }
        let was_on_stack = {
            let code = self.slots.code(page);
            self.slots.get(code).pos != NO_POS
        };
        let code = self.access(page, kind);
        let Mode::FixedSize(f) = &mut self.mode else { unreachable!("fixed-size mode") };
        if !was_on_stack {
            let i = Slots::hashed_index(code).expect("fixed-size SHARDS hashes every page");
            if f.next.len() <= i {
                f.next.resize(i + 1, END);
            }
            let head = f.heads.get_mut(&block).expect("the block was registered");
            f.next[i] = *head;
            *head = code;
        }
        let max_pages = f.max_pages;
        while self.stack.len() > max_pages {
            self.evict_block();
        }
    }

    /// Removes the sampled block with the largest hash and lowers the rate below it.
    fn evict_block(&mut self) {
        let Mode::FixedSize(f) = &mut self.mode else { unreachable!("fixed-size mode") };
        let Some((hash, block)) = f.blocks.pop() else { return };
        f.sampler.exclude_from(hash);
        let mut code = f.heads.remove(&block).unwrap_or(END);
        while code != END {
            let i = Slots::hashed_index(code).expect("hashed");
            let next = f.next[i];
            let st = self.slots.get(code);
            if st.pos != NO_POS {
                self.stack.remove(st.pos);
            }
            self.slots.forget(code);
            code = next;
        }
        let rate = f.sampler.rate();
        self.weight = 1.0 / rate;
        if rate < self.bin_rate / 2.0 {
            self.rebin(rate);
        }
        self.scale = self.bin_rate / rate;
    }

    /// Moves the histogram and the stored `M` values to bins of rate `rate`.
    fn rebin(&mut self, rate: f64) {
        let ratio = rate / self.bin_rate;
        let map = |b: u32| -> u32 { (f64::from(b - 1) * ratio).ceil() as u32 + 1 };
        self.drain();
        let mut hist = Histogram::with_len(self.hist.len());
        for b in 1..self.hist.len() {
            let t = map(b as u32) as usize;
            hist.hits[t][0] += self.hist.hits[b][0];
            hist.hits[t][1] += self.hist.hits[b][1];
            hist.open[t] += self.hist.open[b];
            hist.close[t] += self.hist.close[b];
            hist.flush[t] += self.hist.flush[b];
        }
        self.hist = hist;
        let codes: Vec<u32> = self.stack.owners_newest_first().collect();
        for code in codes {
            let st = self.slots.state(code);
            if st.m != CLEAN && st.m != 0 {
                st.m = map(st.m);
            }
        }
        self.bin_rate = rate;
    }

    /// Ends the pass: the write-backs after each page's last access and the final flush, and the
    /// cumulative curves.
    pub fn finish(mut self) -> LruCurve {
        self.drain();
        let w = self.weight;
        let owners: Vec<u32> = self.stack.owners_newest_first().collect();
        let tracked = owners.len() as u64;
        for (depth, &code) in owners.iter().enumerate() {
            // One random read per tracked page: prefetched, so that the misses overlap.
            if let Some(&ahead) = owners.get(depth + LAG) {
                self.slots.prefetch_code(ahead);
            }
            let st = self.slots.get(code);
            if st.m == CLEAN {
                continue;
            }
            let lo = st.m.max(1);
            let s = self.bin(depth as u32 + 1);
            if s as usize >= self.hist.len() {
                self.grow_bins(s as usize);
            }
            if lo < s {
                self.hist.open[lo as usize] += w;
                self.hist.close[s as usize] += w;
            }
            self.hist.flush[lo.max(s) as usize] += w;
        }
        // The cumulative curves overwrite the histogram, bin by bin (no fresh arrays as large
        // as the footprint to fault in).
        let Histogram { mut hits, open: mut evict, close, mut flush } = std::mem::take(&mut self.hist);
        let (mut h0, mut h1, mut e, mut f) = (0.0, 0.0, 0.0, 0.0);
        for (((h, ev), c), fl) in hits.iter_mut().zip(evict.iter_mut()).zip(&close).zip(flush.iter_mut()) {
            h0 += h[0];
            h1 += h[1];
            e += *ev - c;
            f += *fl;
            *h = [h0, h1];
            *ev = e;
            *fl = f;
        }
        let (method, rate) = match &self.mode {
            Mode::Exact => (CurveMethod::Exact, 1.0),
            Mode::FixedRate(s) => (CurveMethod::Shards, s.cache.sampler().rate()),
            Mode::FixedSize(f) => (CurveMethod::ShardsFixedSize, f.sampler.rate()),
        };
        let footprint = if method == CurveMethod::Exact { tracked } else { (tracked as f64 / rate).round() as u64 };
        LruCurve {
            method,
            rate,
            bin_rate: self.bin_rate,
            requests: self.requests,
            sampled: self.sampled,
            footprint,
            hits,
            evict,
            flush,
        }
    }
}

/// How a curve was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CurveMethod {
    /// Stack distances of the whole trace (LRU): exact.
    Exact,
    /// SHARDS at a fixed sampling rate (LRU).
    Shards,
    /// SHARDS with a fixed sample size (LRU).
    ShardsFixedSize,
    /// Miniature simulation of a sampled trace in a scaled buffer and device (any policy).
    Minisim,
    /// Full simulation at each size (any policy).
    Simulation,
}

impl CurveMethod {
    /// The name in result rows.
    pub fn name(self) -> &'static str {
        match self {
            CurveMethod::Exact => "exact",
            CurveMethod::Shards => "shards",
            CurveMethod::ShardsFixedSize => "shards-fixed-size",
            CurveMethod::Minisim => "minisim",
            CurveMethod::Simulation => "simulation",
        }
    }
}

/// One point of a curve: what a buffer of a given size does over the trace, as counts (exact,
/// or estimates of the full trace's counts).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CurvePoint {
    /// Buffer size in pages.
    pub frames: u64,
    /// Requests of the trace.
    pub requests: f64,
    /// Read requests.
    pub read_requests: f64,
    /// Write requests.
    pub write_requests: f64,
    /// Hits.
    pub hits: f64,
    /// Read hits.
    pub read_hits: f64,
    /// Pages read from the device.
    pub page_reads: f64,
    /// Dirty victims written back.
    pub evict_writes: f64,
    /// Pages written by the final flush.
    pub flush_writes: f64,
    /// Pages evicted.
    pub evictions: f64,
}

impl CurvePoint {
    /// Pages written to the device.
    pub fn page_writes(&self) -> f64 {
        self.evict_writes + self.flush_writes
    }

    /// hits / requests.
    pub fn hit_ratio(&self) -> f64 {
        if self.requests > 0.0 { self.hits / self.requests } else { 0.0 }
    }

    /// The simulator's counters, rounded (exact for an exact curve). Padding and bypass, which
    /// LRU never does, are 0.
    pub fn counters(&self) -> Counters {
        let r = |v: f64| v.max(0.0).round() as u64;
        let requests = r(self.requests);
        let hits = r(self.hits).min(requests);
        Counters {
            requests,
            read_requests: r(self.read_requests),
            write_requests: r(self.write_requests),
            hits,
            misses: requests - hits,
            fetches: r(self.page_reads),
            padding_reads: 0,
            evict_writes: r(self.evict_writes),
            padding_writes: 0,
            bypass_writes: 0,
            flush_writes: r(self.flush_writes),
            evictions: r(self.evictions),
        }
    }
}

/// LRU's curves at every buffer size (see the module documentation).
#[derive(Clone, Debug)]
pub struct LruCurve {
    method: CurveMethod,
    rate: f64,
    bin_rate: f64,
    requests: [u64; 2],
    sampled: [f64; 2],
    footprint: u64,
    /// Cumulative weighted hits by kind, by bin.
    hits: Vec<[f64; 2]>,
    /// Cumulative weighted eviction write-backs, by bin.
    evict: Vec<f64>,
    /// Cumulative weighted final flushes, by bin.
    flush: Vec<f64>,
}

impl LruCurve {
    /// How the curve was obtained.
    pub fn method(&self) -> CurveMethod {
        self.method
    }

    /// The sampling rate at the end (1 for the exact curve).
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Requests of the trace.
    pub fn requests(&self) -> u64 {
        self.requests[0] + self.requests[1]
    }

    /// Requests of the sample, unweighted where the rate is fixed (the trace's own for the exact
    /// curve); for fixed size, the weighted count.
    pub fn sampled_requests(&self) -> f64 {
        (self.sampled[0] + self.sampled[1]) * self.rate
    }

    /// Distinct pages of the trace (estimated from the sample for SHARDS).
    pub fn footprint(&self) -> u64 {
        self.footprint
    }

    /// The curve at a buffer of `frames` pages (at least 1).
    pub fn at(&self, frames: u64, write_miss: WriteMiss, final_flush: bool) -> CurvePoint {
        let frames = frames.max(1);
        let last = self.evict.len() - 1;
        let b = if self.bin_rate == 1.0 {
            frames.min(last as u64) as usize
        } else {
            (((frames - 1) as f64 * self.bin_rate * (1.0 + 1e-12)).floor() as u64 + 1).min(last as u64) as usize
        };
        let [nr, nw] = self.requests.map(|n| n as f64);
        // SHARDS adjustment: the requests the sample misses or over-counts are hits.
        let read_hits = (self.hits[b][0] + nr - self.sampled[0]).clamp(0.0, nr);
        let write_hits = (self.hits[b][1] + nw - self.sampled[1]).clamp(0.0, nw);
        let (read_misses, write_misses) = (nr - read_hits, nw - write_hits);
        let page_reads = match write_miss {
            WriteMiss::Fetch => read_misses + write_misses,
            WriteMiss::NoFetch => read_misses,
        };
        let resident = frames.min(self.footprint) as f64;
        CurvePoint {
            frames,
            requests: nr + nw,
            read_requests: nr,
            write_requests: nw,
            hits: read_hits + write_hits,
            read_hits,
            page_reads,
            evict_writes: self.evict[b],
            flush_writes: if final_flush { self.flush[b] } else { 0.0 },
            evictions: (read_misses + write_misses - resident).max(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_huge_page_number_does_not_stop_the_cache_growing() {
        let sampler = BlockSampler::with_rate(0.01, 64, 7).unwrap();
        let mut batch: Vec<Request> = (0..100_000u64).map(Request::read).collect();
        batch[5] = Request::read(1 << 60);
        let mut d = Decisions::new(sampler.clone());
        let mut got = Vec::new();
        d.filter(&batch, |r| got.push(*r));
        // The 1,563 blocks of the small pages are cached despite the page beyond the bound.
        assert!(d.cached() >= 100_000 / 64, "cached {} blocks", d.cached());
        let want: Vec<Request> = batch.iter().copied().filter(|r| sampler.keeps(r.page)).collect();
        assert_eq!(got, want);
    }

    proptest! {
        /// The cached decisions are the sampler's, in order, for dense and sparse pages, across
        /// chunks and batches, before, while and after the cache grows; the writes are counted.
        #[test]
        fn cached_decisions_are_the_samplers(
            requests in proptest::collection::vec(
                (prop_oneof![0u64..3_000, 0u64..100_000, any::<u64>()], any::<bool>()), 0..3_000),
            batch in 1usize..700,
            block_pages in prop_oneof![Just(1u64), Just(4), Just(64), Just(3)],
            rate in 0.01f64..1.0,
        ) {
            let sampler = BlockSampler::with_rate(rate, block_pages, 7).unwrap();
            let trace: Vec<Request> = requests
                .iter()
                .map(|&(p, w)| Request { page: p, kind: if w { AccessKind::Write } else { AccessKind::Read }, time_us: None })
                .collect();
            let mut d = Decisions::new(sampler.clone());
            let mut got = Vec::new();
            let mut writes = 0;
            for b in trace.chunks(batch) {
                writes += d.filter(b, |r| got.push(*r));
            }
            let want: Vec<Request> = trace.iter().copied().filter(|r| sampler.keeps(r.page)).collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(writes, trace.iter().filter(|r| r.kind.is_write()).count() as u64);
            prop_assert!(d.cached() <= flashbuf_trace::sample::CACHED_BLOCKS.max(64));
            prop_assert!(d.cached() <= 2 * trace.len() as u64 + 64, "cache of {} blocks", d.cached());
        }
    }
}
