//! Offline bounds: the fewest page writes, and the least device time, that any policy can
//! achieve with `C` frames on a trace.
//!
//! **Writes.** Every write-back ends one *dirty episode* of a page (from the write that dirties
//! a clean or absent page to the write-back that cleans it), and with the final flush every
//! episode ends in exactly one write-back; a write sent straight to the device (bypass) is an
//! episode of its own. The dirty pages are a cache of at most `C` pages over the trace's *write*
//! accesses, in which an access is a hit when the page is already dirty and a miss starts an
//! episode. Belady's MIN over the write accesses alone — in the variant that may decline to
//! admit the page, since flashbuf's policies may bypass — minimises the misses of such a cache,
//! hence bounds the page writes of every policy from below ([`TraceBounds::writes`]). The
//! bound is also achieved by an offline schedule that keeps only MIN's dirty set and bypasses
//! every read that misses a full buffer, so it is exactly the least number of page writes in
//! flashbuf's buffer model. For policies that admit every missed page, MIN without bypass is a
//! tighter bound ([`TraceBounds::writes_admitting`]). Proofs: `docs/curves.md`.
//!
//! **Reads.** In a database buffer (fetch on write miss) every page brought in costs a read, and
//! so does every read that misses; MIN over the read accesses bounds the page reads. In a write
//! buffer (no fetch) a write brings its page in for free: MIN over the trace with every write
//! starting a new version of its page bounds the read misses.
//!
//! **Device time.** A page read costs at least the device's read latency and a page write at
//! least its program latency (erases, copies and merges only add), so
//! `reads bound · t_read + writes bound · t_write` bounds the device time of every policy on that
//! device. It is not achieved by one schedule (fewest writes and fewest reads pull apart); the
//! offline policy `min-cost` gives an achieved cost above it, and the optimum lies between.
//!
//! Memory: the trace is kept as one 32-bit page id per request plus a bit (5 bytes a request),
//! and each bound needs the next-use positions of its subsequence (4 bytes a request) while it is
//! computed. Each bound at one size is one pass over its subsequence with a heap of at most `C`
//! pages: O(n log C).

use std::cmp::Reverse;

use flashbuf_policy::heap::IndexedHeap;
use flashbuf_trace::Request;
use rustc_hash::FxHashMap;

use crate::buffer::WriteMiss;

/// "No next use" in a subsequence.
const NONE: u32 = u32::MAX;

/// A trace held for offline bounds: dense page ids and write flags.
#[derive(Clone, Debug, Default)]
pub struct KeptTrace {
    ids: Vec<u32>,
    writes: Vec<u64>,
    map: FxHashMap<u64, u32>,
}

impl KeptTrace {
    /// An empty trace.
    pub fn new() -> Self {
        Self::default()
    }

    /// The trace of `requests`.
    pub fn of(requests: &[Request]) -> Self {
        let mut t = Self::new();
        t.push(requests);
        t
    }

    /// Appends `batch`. Fails past 2^32 − 1 requests or distinct pages.
    pub fn push(&mut self, batch: &[Request]) {
        for r in batch {
            let next = self.map.len() as u32;
            let id = *self.map.entry(r.page).or_insert(next);
            let i = self.ids.len();
            if i.is_multiple_of(64) {
                self.writes.push(0);
            }
            self.writes[i / 64] |= u64::from(r.kind.is_write()) << (i % 64);
            self.ids.push(id);
        }
    }

    /// Requests held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// `true` when no request is held.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Distinct pages.
    pub fn distinct(&self) -> u32 {
        self.map.len() as u32
    }

    #[inline]
    fn is_write(&self, i: usize) -> bool {
        (self.writes[i / 64] >> (i % 64)) & 1 == 1
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> u64 {
        (self.ids.capacity() * 4 + self.writes.capacity() * 8 + self.map.capacity() * 13) as u64
    }
}

/// A subsequence of the trace: page ids and, for each, the position (in the subsequence) of the
/// same page's next use, or [`NONE`].
struct Subsequence {
    ids: Vec<u32>,
    next: Vec<u32>,
    /// Accesses that are misses whatever the schedule and cost nothing (new versions).
    free: Vec<bool>,
}

impl Subsequence {
    /// The accesses `keep(i)` of `t`, each page's next use being its next kept access.
    fn of(t: &KeptTrace, keep: impl Fn(usize) -> bool) -> Self {
        let ids: Vec<u32> = (0..t.len()).filter(|&i| keep(i)).map(|i| t.ids[i]).collect();
        let next = next_positions(&ids, t.distinct());
        Subsequence { ids, next, free: Vec::new() }
    }

    /// The whole trace with every write starting a new version of its page: a read's next use is
    /// the page's next access if that is a read, none otherwise; a write is free and its version
    /// is used next at the page's next access if that is a read.
    fn versioned(t: &KeptTrace) -> Self {
        let ids = t.ids.clone();
        let mut next = next_positions(&ids, t.distinct());
        for n in next.iter_mut() {
            if *n != NONE && t.is_write(*n as usize) {
                *n = NONE;
            }
        }
        let free = (0..t.len()).map(|i| t.is_write(i)).collect();
        Subsequence { ids, next, free }
    }
}

fn next_positions(ids: &[u32], distinct: u32) -> Vec<u32> {
    let mut next = vec![NONE; ids.len()];
    let mut last = vec![NONE; distinct as usize];
    for (i, &id) in ids.iter().enumerate().rev() {
        next[i] = last[id as usize];
        last[id as usize] = i as u32;
    }
    next
}

/// Misses of Belady's MIN with `frames` frames over `seq` (free accesses not counted), with or
/// without bypass (declining to admit a page whose next use is no nearer than every buffered
/// page's).
fn min_misses(seq: &Subsequence, distinct: u32, frames: usize, bypass: bool) -> u64 {
    let frames = frames.max(1);
    // Buffered ids, the farthest next use on top.
    let mut heap: IndexedHeap<Reverse<u32>> = IndexedHeap::new(distinct as usize);
    let mut misses = 0u64;
    for (i, (&id, &next)) in seq.ids.iter().zip(&seq.next).enumerate() {
        let free = seq.free.get(i).copied().unwrap_or(false);
        if free {
            // A new version: the old one is dead.
            heap.remove(id);
        } else if heap.contains(id) {
            heap.change(id, Reverse(next));
            continue;
        } else {
            misses += 1;
        }
        if heap.len() < frames {
            heap.push(id, Reverse(next));
            continue;
        }
        let (far, Reverse(far_next)) = heap.peek().expect("a full buffer");
        if bypass && next >= far_next {
            continue;
        }
        heap.remove(far);
        heap.push(id, Reverse(next));
    }
    misses
}

/// The offline bounds of one trace (see the module documentation).
pub struct TraceBounds {
    distinct: u32,
    distinct_written: u32,
    writes: Subsequence,
    reads: Subsequence,
    versioned: Subsequence,
}

/// The bounds at one buffer size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// Fewest page writes any policy can achieve.
    pub writes: u64,
    /// Fewest page reads any policy can achieve.
    pub reads: u64,
    /// Least device time, ns: `reads · read_ns + writes · write_ns`.
    pub time_ns: u64,
}

impl TraceBounds {
    /// Prepares the bounds of `trace`.
    pub fn new(trace: &KeptTrace) -> Self {
        let distinct_written = {
            let mut seen = vec![false; trace.distinct() as usize];
            (0..trace.len())
                .filter(|&i| trace.is_write(i))
                .filter(|&i| !std::mem::replace(&mut seen[trace.ids[i] as usize], true))
                .count() as u32
        };
        TraceBounds {
            distinct: trace.distinct(),
            distinct_written,
            writes: Subsequence::of(trace, |i| trace.is_write(i)),
            reads: Subsequence::of(trace, |i| !trace.is_write(i)),
            versioned: Subsequence::versioned(trace),
        }
    }

    /// The fewest page writes any policy can achieve with `frames` frames: MIN with bypass over
    /// the write accesses; without the final flush, less the dirty pages that can be left at the
    /// end (at most `min(frames, distinct written pages)`).
    pub fn writes(&self, frames: usize, final_flush: bool) -> u64 {
        let episodes = min_misses(&self.writes, self.distinct, frames, true);
        self.flush_adjusted(episodes, frames, final_flush)
    }

    /// The fewest page writes of a policy that admits every missed page (no bypass): MIN over
    /// the write accesses.
    pub fn writes_admitting(&self, frames: usize, final_flush: bool) -> u64 {
        let episodes = min_misses(&self.writes, self.distinct, frames, false);
        self.flush_adjusted(episodes, frames, final_flush)
    }

    fn flush_adjusted(&self, episodes: u64, frames: usize, final_flush: bool) -> u64 {
        if final_flush { episodes } else { episodes.saturating_sub(frames.min(self.distinct_written as usize) as u64) }
    }

    /// The fewest page reads any policy can achieve with `frames` frames.
    pub fn reads(&self, frames: usize, write_miss: WriteMiss) -> u64 {
        match write_miss {
            WriteMiss::Fetch => min_misses(&self.reads, self.distinct, frames, true),
            WriteMiss::NoFetch => min_misses(&self.versioned, self.distinct, frames, true),
        }
    }

    /// Every bound at `frames` frames on a device of latencies `read_ns` and `write_ns`.
    pub fn at(&self, frames: usize, write_miss: WriteMiss, final_flush: bool, read_ns: u64, write_ns: u64) -> Bound {
        let writes = self.writes(frames, final_flush);
        let reads = self.reads(frames, write_miss);
        Bound { writes, reads, time_ns: reads * read_ns + writes * write_ns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(s: &str) -> KeptTrace {
        let reqs: Vec<Request> = s
            .split_whitespace()
            .map(|t| {
                let (k, p) = t.split_at(1);
                let page: u64 = p.parse().unwrap();
                if k == "w" { Request::write(page) } else { Request::read(page) }
            })
            .collect();
        KeptTrace::of(&reqs)
    }

    #[test]
    fn belady_on_the_textbook_string() {
        // 7 0 1 2 0 3 0 4 2 3 0 3 2, 3 frames: 7 faults without bypass; as reads, the read bound.
        let t = trace("r7 r0 r1 r2 r0 r3 r0 r4 r2 r3 r0 r3 r2");
        let b = TraceBounds::new(&t);
        assert_eq!(min_misses(&b.reads, b.distinct, 3, false), 7);
        assert!(b.reads(3, WriteMiss::Fetch) <= 7);
        assert_eq!(b.writes(3, true), 0);
    }

    #[test]
    fn bypass_beats_admission_and_the_flush_is_counted() {
        // One frame, writes 1 2 1: admitting 2 costs 1's episode (3 writes); bypassing 2 keeps 1
        // dirty (2 writes: 2 through, 1 at the flush).
        let t = trace("w1 w2 w1");
        let b = TraceBounds::new(&t);
        assert_eq!(b.writes_admitting(1, true), 3);
        assert_eq!(b.writes(1, true), 2);
        assert_eq!(b.writes(1, false), 1);
        assert_eq!(b.writes(2, true), 2);
    }

    #[test]
    fn a_write_buffer_gets_written_pages_for_free() {
        // w1 r1 r2 r1. Fetching, page 1 costs a read (the write miss fetches it, or the read
        // does) and so does page 2: 2 reads. Without fetch, the write brings page 1 in for free;
        // with one frame, r2 is read through (bypass) and r1 hits: 1 read.
        let t = trace("w1 r1 r2 r1");
        let b = TraceBounds::new(&t);
        assert_eq!(b.reads(1, WriteMiss::NoFetch), 1);
        assert_eq!(b.reads(2, WriteMiss::NoFetch), 1);
        assert_eq!(b.reads(2, WriteMiss::Fetch), 2);
        assert_eq!(b.reads(1, WriteMiss::Fetch), 2);
    }
}
