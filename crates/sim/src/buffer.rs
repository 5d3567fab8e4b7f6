//! The simulated buffer: N frames, a policy, a device, and the counters of one run.
//!
//! Per request: one page-table lookup; on a hit, the policy's `on_hit`; on a miss, an eviction
//! when no frame is free (write-backs, block padding, bypass), a fetch from the device (unless a
//! write miss in write-buffer mode), the policy's `on_insert`. A bypassed miss (the policy keeps
//! the page out of the buffer) is fetched on the same rule — a read always, a write unless in
//! write-buffer mode — and a bypassed write is then written straight to the device. Everything is generic over the
//! policy and the device, so this loop is monomorphised and makes no dynamic call; it allocates
//! nothing once the page table has reached its size.
//!
//! Metric definitions (documented once, here):
//! * `hit_ratio` = hits / requests.
//! * `page_reads` = pages read from the device: demand fetches + padding reads.
//! * `page_writes` = pages written to the device: dirty victims + padding writes + pages written
//!   through (bypass) + the final flush of dirty pages at the end of the run (which the AD-LRU
//!   paper counts: "at the end of each test, we flushed the dirty pages").
//! * `device_time_ns` = the device's simulated time for all of the above.

use flashbuf_flash::{Device, DeviceError, DeviceStats};
use flashbuf_policy::bits::FrameBits;
use flashbuf_policy::{Access, EvictError, Evictions, FrameId, Pins, Replacer};
use flashbuf_trace::Request;
use serde::{Deserialize, Serialize};

use crate::page_table::PageTable;

/// The buffer as a policy sees it while choosing victims: nothing is pinned, and pages are found
/// through the page table (BP-REF's padding asks). `None` when the policy keeps the page map
/// itself ([`Replacer::KEEPS_PAGE_MAP`]): the buffer then has no table to offer, and such a
/// policy asks for none.
struct Resident<'a>(Option<&'a PageTable>);

impl Pins for Resident<'_> {
    #[inline(always)]
    fn is_pinned(&self, _frame: FrameId) -> bool {
        false
    }

    #[inline]
    fn frame_of(&self, page: u64) -> Option<FrameId> {
        self.0.expect("a policy that keeps its own page map asks the host for none").get(page)
    }

    #[inline(always)]
    fn prefetch_victim(&self, frame: FrameId) {
        if let Some(t) = self.0 {
            t.prefetch_page_of(frame);
        }
    }
}

/// What a write miss does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteMiss {
    /// A database buffer: the page is fetched before it is modified (default).
    #[default]
    Fetch,
    /// A write buffer (the REF/BPLRU setting): the page is overwritten whole, no fetch.
    NoFetch,
}

/// Counters of one run, filled by [`Buffer`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Page accesses processed.
    pub requests: u64,
    /// Of which reads.
    pub read_requests: u64,
    /// Of which writes.
    pub write_requests: u64,
    /// Accesses that found their page buffered.
    pub hits: u64,
    /// Accesses that did not.
    pub misses: u64,
    /// Demand fetches (misses that read the page from the device).
    pub fetches: u64,
    /// Pages read only to pad a block.
    pub padding_reads: u64,
    /// Dirty victims written back.
    pub evict_writes: u64,
    /// Pages written as part of a padded block (buffered or padded).
    pub padding_writes: u64,
    /// Incoming writes sent straight to the device (policy bypass).
    pub bypass_writes: u64,
    /// Dirty pages written by the final flush.
    pub flush_writes: u64,
    /// Pages evicted (clean or dirty).
    pub evictions: u64,
}

impl Counters {
    /// Pages read from the device.
    pub fn page_reads(&self) -> u64 {
        self.fetches + self.padding_reads
    }

    /// Pages written to the device.
    pub fn page_writes(&self) -> u64 {
        self.evict_writes + self.padding_writes + self.bypass_writes + self.flush_writes
    }

    /// hits / requests (0 for an empty run).
    pub fn hit_ratio(&self) -> f64 {
        if self.requests == 0 { 0.0 } else { self.hits as f64 / self.requests as f64 }
    }

    /// What was counted since `before` (an earlier snapshot of the same run).
    pub fn since(&self, before: &Counters) -> Counters {
        Counters {
            requests: self.requests - before.requests,
            read_requests: self.read_requests - before.read_requests,
            write_requests: self.write_requests - before.write_requests,
            hits: self.hits - before.hits,
            misses: self.misses - before.misses,
            fetches: self.fetches - before.fetches,
            padding_reads: self.padding_reads - before.padding_reads,
            evict_writes: self.evict_writes - before.evict_writes,
            padding_writes: self.padding_writes - before.padding_writes,
            bypass_writes: self.bypass_writes - before.bypass_writes,
            flush_writes: self.flush_writes - before.flush_writes,
            evictions: self.evictions - before.evictions,
        }
    }
}

/// What can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The device refused an operation (out of range, worn out, integrity).
    #[error("request {request}: {source}")]
    Device {
        /// 0-based index of the request being served.
        request: u64,
        /// The device's error.
        #[source]
        source: DeviceError,
    },
    /// The policy could not free a frame.
    #[error("request {request}: {source}")]
    Evict {
        /// 0-based index of the request being served.
        request: u64,
        /// The policy's error.
        #[source]
        source: EvictError,
    },
    /// Invalid simulator configuration.
    #[error("{0}")]
    Config(String),
}

/// A buffer of frames managed by policy `R` over device `D`.
pub struct Buffer<R: Replacer, D: Device> {
    policy: R,
    device: D,
    table: PageTable,
    frames: usize,
    dirty: FrameBits,
    free: Vec<FrameId>,
    ev: Evictions,
    write_miss: WriteMiss,
    counters: Counters,
}

impl<R: Replacer, D: Device> Buffer<R, D> {
    /// An empty buffer of `frames` frames. `pages_hint` pre-sizes the page table (the trace's
    /// largest page + 1, when known; 0 otherwise).
    pub fn new(policy: R, device: D, frames: usize, write_miss: WriteMiss, pages_hint: u64) -> Result<Self, SimError> {
        Self::with_table(policy, device, frames, write_miss, PageTable::new(frames, pages_hint))
    }

    /// An empty buffer of `frames` frames whose pages are looked up in `table` (an empty table
    /// for `frames` frames). A policy that keeps its own page map
    /// ([`Replacer::KEEPS_PAGE_MAP`]) is asked instead, and the table is dropped unused.
    pub fn with_table(
        policy: R,
        device: D,
        frames: usize,
        write_miss: WriteMiss,
        table: PageTable,
    ) -> Result<Self, SimError> {
        let table = if R::KEEPS_PAGE_MAP { PageTable::with_limit(0, 0, 0) } else { table };
        if frames == 0 {
            return Err(SimError::Config("the buffer needs at least one frame".into()));
        }
        if frames >= u32::MAX as usize {
            return Err(SimError::Config(format!("{frames} frames is more than flashbuf supports (2^32 - 1)")));
        }
        Ok(Buffer {
            policy,
            device,
            table,
            frames,
            dirty: FrameBits::new(frames),
            free: (0..frames as FrameId).rev().collect(),
            ev: Evictions { victims: Vec::with_capacity(64), pad: None, bypass: false },
            write_miss,
            counters: Counters::default(),
        })
    }

    /// Hints that `page` will be requested soon (see [`PageTable::prefetch`],
    /// [`Replacer::prefetch`] and [`Device::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, page: u64) {
        if !R::KEEPS_PAGE_MAP {
            self.table.prefetch(page);
        }
        self.policy.prefetch(page);
        self.device.prefetch(page);
    }

    /// Hints that `page` will be requested very soon, after [`prefetch`](Self::prefetch) was
    /// given it some requests earlier: the page table's slot is in cache by now and names the
    /// frame, whose records (the page table's reverse map, the policy's per-frame record) are
    /// brought into cache in turn. For the frame the policy will most likely evict next
    /// ([`Replacer::likely_victim`]), the device's record of its page is brought in too, for its
    /// write-back, when the device keeps one ([`Device::prefetches`]); otherwise only the
    /// frame's reverse-map entry, which the eviction reads.
    #[inline(always)]
    pub fn prefetch_frame(&self, page: u64) {
        if !R::KEEPS_PAGE_MAP {
            // A policy with its own map prefetches its frame records itself, from its map.
            let f = self.table.prefetch_frame_of(page);
            if f != flashbuf_policy::NIL {
                self.policy.prefetch_frame(f);
            }
        }
        if let Some(v) = self.policy.likely_victim() {
            if !self.device.prefetches() {
                if !R::KEEPS_PAGE_MAP {
                    self.table.prefetch_page_of(v);
                }
            } else if let Some(victim_page) = self.page_of(v) {
                self.device.prefetch(victim_page);
            }
        }
    }

    /// The frame holding `page`: from the page table, or from the policy's own map.
    #[inline(always)]
    fn frame_of(&self, page: u64) -> Option<FrameId> {
        if R::KEEPS_PAGE_MAP { self.policy.frame_of(page) } else { self.table.get(page) }
    }

    /// The page in the buffered `frame` (`None` for a free frame).
    #[inline]
    fn page_of(&self, frame: FrameId) -> Option<u64> {
        if R::KEEPS_PAGE_MAP {
            let p = self.policy.page_in(frame);
            (self.policy.frame_of(p) == Some(frame)).then_some(p)
        } else {
            self.table.page_of(frame)
        }
    }

    /// Serves one request. `next_use` is the virtual time of the page's next access, for
    /// policies that need the future ([`flashbuf_policy::NEVER`] otherwise).
    #[inline(always)]
    pub fn access(&mut self, req: &Request, next_use: u64) -> Result<bool, SimError> {
        // The hit path, inlined into the caller's loop: no branch on the access kind.
        let time = self.counters.requests;
        let is_write = req.kind.is_write();
        self.counters.requests += 1;
        self.counters.write_requests += u64::from(is_write);
        self.counters.read_requests += u64::from(!is_write);
        if let Some(frame) = self.frame_of(req.page) {
            self.counters.hits += 1;
            self.dirty.or(frame, is_write);
            self.policy.on_hit(frame, &Access { page: req.page, kind: req.kind, time, next_use });
            return Ok(true);
        }
        self.miss(req, next_use, time)
    }

    /// A miss: an eviction when no frame is free, then the fetch and the insertion.
    #[inline(never)]
    fn miss(&mut self, req: &Request, next_use: u64, time: u64) -> Result<bool, SimError> {
        let access = Access { page: req.page, kind: req.kind, time, next_use };
        let is_write = req.kind.is_write();
        self.counters.misses += 1;
        if self.free.is_empty() && self.evict(&access, time)? {
            // The policy bypassed the buffer for this page. A write miss still fetches the page
            // first in a database buffer (it modifies part of the page), then writes it through.
            if !is_write || self.write_miss == WriteMiss::Fetch {
                self.fetch(req.page, time)?;
            }
            if is_write {
                self.device.write(req.page).map_err(|source| SimError::Device { request: time, source })?;
                self.counters.bypass_writes += 1;
            }
            return Ok(false);
        }
        if !is_write || self.write_miss == WriteMiss::Fetch {
            self.fetch(req.page, time)?;
        }
        let frame = self.free.pop().expect("an eviction frees at least one frame");
        if !R::KEEPS_PAGE_MAP {
            self.table.insert(req.page, frame);
        }
        // A free frame is clean (its bit was cleared when it was freed): only a write sets it.
        debug_assert!(!self.dirty.get(frame), "free frame {frame} is dirty");
        self.dirty.or(frame, is_write);
        self.policy.on_insert(frame, &access);
        Ok(false)
    }

    #[inline]
    fn fetch(&mut self, page: u64, time: u64) -> Result<(), SimError> {
        self.device.read(page).map_err(|source| SimError::Device { request: time, source })?;
        self.counters.fetches += 1;
        Ok(())
    }

    /// Frees at least one frame (or decides to bypass); returns `true` for a bypass.
    #[inline]
    fn evict(&mut self, incoming: &Access, time: u64) -> Result<bool, SimError> {
        self.ev.clear();
        self.policy
            .victims(incoming, &Resident((!R::KEEPS_PAGE_MAP).then_some(&self.table)), &mut self.ev)
            .map_err(|source| SimError::Evict { request: time, source })?;
        let dev_err = |source| SimError::Device { request: time, source };
        if let Some(pad) = self.ev.pad {
            let end = (pad.first_page + pad.pages as u64).min(self.device.logical_pages());
            if pad.pages <= 64 {
                // The victims are the block's buffered pages (the `Evictions::pad` contract): a
                // mask of their offsets says which pages need a padding read, instead of asking
                // the page table for each page of the block (a random access per page once
                // buffered, whose slot is stale).
                let mut buffered = 0u64;
                for &frame in &self.ev.victims {
                    let page =
                        if R::KEEPS_PAGE_MAP { Some(self.policy.page_in(frame)) } else { self.table.page_of(frame) };
                    let offset = page.map_or(u64::MAX, |p| p.wrapping_sub(pad.first_page));
                    if offset < u64::from(pad.pages) {
                        buffered |= 1 << offset;
                    }
                }
                for page in pad.first_page..end {
                    debug_assert_eq!(
                        buffered >> (page - pad.first_page) & 1 != 0,
                        self.buffered_during_eviction(page),
                        "page {page}: victims of a padded block"
                    );
                }
                // One call for the block: the device adds up what it can (the ideal device
                // makes no call per page).
                let pages = end.saturating_sub(pad.first_page) as u32;
                let reads = self.device.pad_run(pad.first_page, pages, buffered).map_err(dev_err)?;
                self.counters.padding_reads += u64::from(reads);
                self.counters.padding_writes += u64::from(pages);
            } else {
                for page in pad.first_page..end {
                    if !self.buffered_during_eviction(page) {
                        self.device.read(page).map_err(dev_err)?;
                        self.counters.padding_reads += 1;
                    }
                    self.device.write(page).map_err(dev_err)?;
                    self.counters.padding_writes += 1;
                }
            }
        }
        let padded = self.ev.pad.is_some();
        Self::release(
            &self.ev.victims,
            padded,
            &self.policy,
            &mut self.device,
            &mut self.table,
            &mut self.dirty,
            &mut self.free,
            &mut self.counters.evict_writes,
        )
        .map_err(dev_err)?;
        self.counters.evictions += self.ev.victims.len() as u64;
        Ok(self.ev.bypass)
    }

    /// Writes back the dirty `victims` (unless their block was padded) and frees their frames.
    /// The fields it needs come in as separate references, so the compiler knows that a store
    /// into the free list or the dirty bits changes none of them and keeps them in registers
    /// across the loop (through `&mut self` it reloads the lists' addresses after every store).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn release(
        victims: &[FrameId],
        padded: bool,
        policy: &R,
        device: &mut D,
        table: &mut PageTable,
        dirty: &mut FrameBits,
        free: &mut Vec<FrameId>,
        evict_writes: &mut u64,
    ) -> Result<(), DeviceError> {
        for &frame in victims {
            let page = if R::KEEPS_PAGE_MAP {
                None
            } else {
                Some(table.remove_frame(frame).expect("a victim frame holds a page"))
            };
            if dirty.take(frame) && !padded {
                // With its own page map, the policy is asked for the page only for a
                // write-back: a clean victim's record is not read.
                device.write(page.unwrap_or_else(|| policy.page_in(frame)))?;
                *evict_writes += 1;
            }
        }
        // A block policy frees a dozen frames at once: one copy, not a push per frame.
        if let [frame] = victims {
            free.push(*frame);
        } else {
            free.extend_from_slice(victims);
        }
        Ok(())
    }

    /// Whether `page` is buffered while the victims just named are not yet freed (padding): a
    /// policy with its own map no longer tracks its victims by then, so they are asked too.
    fn buffered_during_eviction(&self, page: u64) -> bool {
        if R::KEEPS_PAGE_MAP {
            self.frame_of(page).is_some() || self.ev.victims.iter().any(|&f| self.policy.page_in(f) == page)
        } else {
            self.table.get(page).is_some()
        }
    }

    /// Writes back every dirty page, in ascending page order, and counts them as the final
    /// flush. The pages stay buffered (clean).
    pub fn flush(&mut self) -> Result<(), SimError> {
        let mut pages: Vec<(u64, FrameId)> = (0..self.frames as FrameId)
            .filter(|&f| self.dirty.get(f))
            .map(|f| (self.page_of(f).expect("a dirty frame holds a page"), f))
            .collect();
        pages.sort_unstable();
        let request = self.counters.requests;
        for (page, frame) in pages {
            self.device.write(page).map_err(|source| SimError::Device { request, source })?;
            self.dirty.set(frame, false);
            self.counters.flush_writes += 1;
        }
        Ok(())
    }

    /// The counters so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The device's counters.
    pub fn device_stats(&self) -> DeviceStats {
        self.device.stats()
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The policy.
    pub fn policy(&self) -> &R {
        &self.policy
    }

    /// Number of buffered pages.
    pub fn len(&self) -> usize {
        self.frames - self.free.len()
    }

    /// `true` when no page is buffered.
    pub fn is_empty(&self) -> bool {
        self.free.len() == self.frames
    }

    /// Cross-checks buffer, page table, policy and device (tests).
    pub fn check_invariants(&self) -> Result<(), String> {
        let frames = self.frames;
        if !R::KEEPS_PAGE_MAP && self.table.len() + self.free.len() != frames {
            return Err(format!("{} buffered + {} free != {frames} frames", self.table.len(), self.free.len()));
        }
        if self.policy.len() != self.len() {
            return Err(format!("policy tracks {} frames, buffer holds {}", self.policy.len(), self.len()));
        }
        let mut is_free = vec![false; frames];
        for &f in &self.free {
            if std::mem::replace(&mut is_free[f as usize], true) {
                return Err(format!("frame {f} is free twice"));
            }
        }
        for (f, &free) in is_free.iter().enumerate() {
            if free {
                continue;
            }
            let Some(page) = self.page_of(f as FrameId) else {
                return Err(format!("frame {f} is neither free nor holding a page"));
            };
            if self.frame_of(page) != Some(f as FrameId) {
                return Err(format!("frame {f} holds page {page} but the table disagrees"));
            }
            if let Some(d) = self.policy.is_dirty(f as FrameId)
                && d != self.dirty.get(f as FrameId)
            {
                return Err(format!("frame {f}: policy dirty={d}, buffer dirty={}", self.dirty.get(f as FrameId)));
            }
        }
        self.policy.check_invariants()?;
        self.device.check_invariants()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_flash::{IdealConfig, IdealDevice};
    use flashbuf_policy::ref_policy::{Ref, RefConfig};
    use flashbuf_policy::{AccessKind, NEVER};

    /// REF with VW = 100% writes p6 and p7 through (see its `incoming_page_of_an_emptied_victim_
    /// block_is_written_through` test). A bypassed write miss is still a write miss: fetched
    /// first in a database buffer, not in a write buffer.
    #[test]
    fn a_bypassed_write_miss_is_fetched_unless_in_write_buffer_mode() {
        for (mode, fetches) in [(WriteMiss::Fetch, 6), (WriteMiss::NoFetch, 0)] {
            let policy = Ref::new(2, &RefConfig { vw: 1.0, vb: 1, ppb: 4 });
            let device = IdealDevice::new(IdealConfig::default()).unwrap();
            let mut b = Buffer::new(policy, device, 2, mode, 16).unwrap();
            for p in [0, 4, 5, 8, 6, 7] {
                b.access(&Request { page: p, kind: AccessKind::Write, time_us: None }, NEVER).unwrap();
                b.check_invariants().unwrap();
            }
            let c = b.counters();
            assert_eq!((c.bypass_writes, c.evict_writes, c.fetches), (2, 2, fetches), "{mode:?}");
            let d = b.device_stats();
            assert_eq!((d.host_reads, d.host_writes), (fetches, 4), "{mode:?}");
        }
    }
}
