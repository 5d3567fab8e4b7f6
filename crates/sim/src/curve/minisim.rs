//! Miniature simulation (Waldspurger et al., *Cache modeling and optimization using miniature
//! simulations*, USENIX ATC 2017): the curve of any policy, estimated by simulating a spatially
//! sampled trace through a buffer and a device both scaled by the sampling rate.
//!
//! The trace is sampled by block ([`crate::sample::BlockSampler`]) as it streams and the kept
//! requests are renumbered into a compact space of extents ([`SampleCollector`]), so that every
//! flash block, FAB/BPLRU/REF block and CFDC cluster of the sample is a whole block of the trace.
//! A buffer of `C` pages is estimated by a run of the same policy with `round(C · R)` frames
//! (at least one) over a device sized to the sample's compact space — the full device scaled by
//! `R` — fed the kept requests ([`minisim`]).
//!
//! **Estimators** (our choice where the ATC paper, which reports miss ratios only, is silent;
//! the same as SHARDS's in [`super::lru`]): every count of the run — misses, page reads, page
//! writes by kind, the device's reads, programs, erases, copies, merges and time — stands for
//! `1 / R` such events of the full trace (Horvitz–Thompson); the requests are the trace's own,
//! counted as it streams, and the hits are the requests less the estimated misses (the SHARDS
//! adjustment: requests the sample over- or under-represents are taken as hits, as libCacheSim's
//! miniature simulation does). Ratios (write amplification) are the run's own.
//!
//! Memory: the sample is kept, 8 bytes and a bit per sampled request, plus 8 bytes per sampled
//! request for the next-use positions when an offline policy (MIN, MIN-COST) is among the runs.

use flashbuf_flash::{DeviceConfig, DeviceStats};
use flashbuf_policy::PolicyConfig;
use flashbuf_trace::{AccessKind, Remapper, Request, Scanned, TraceSpec};
use rayon::prelude::*;

use crate::buffer::{Counters, SimError, WriteMiss};
use crate::group::GROUP_BATCH;
use crate::job::{JobError, RunSpec};
use crate::run::next_uses_by;
use crate::sample::BlockSampler;

/// Samples a trace as it streams (see the module documentation).
pub struct SampleCollector {
    sampler: BlockSampler,
    remap: Remapper,
    pages: Vec<u64>,
    writes: Vec<u64>,
    requests: [u64; 2],
}

impl SampleCollector {
    /// Samples with `sampler`.
    pub fn new(sampler: BlockSampler) -> Self {
        let remap = Remapper::new(sampler.block_pages());
        SampleCollector { sampler, remap, pages: Vec::new(), writes: Vec::new(), requests: [0; 2] }
    }

    /// Feeds the next requests of the trace.
    pub fn feed(&mut self, batch: &[Request]) {
        for r in batch {
            self.requests[r.kind as usize] += 1;
            if self.sampler.keeps(r.page) {
                self.keep(r);
            }
        }
    }

    /// The sampler: a reader may apply it (or one keeping more) while decoding, and hand what
    /// it kept to [`feed_sampled`](Self::feed_sampled).
    pub fn sampler(&self) -> &BlockSampler {
        &self.sampler
    }

    /// Feeds the next requests of the trace when a reader has already dropped some of them
    /// ([`flashbuf_trace::TraceSource::next_sampled`]): `kept` must hold, in order, every request
    /// of the `scanned` ones that this sampler keeps (it may hold more: they are dropped here).
    /// The sample is then the one [`feed`](Self::feed) takes from all of them.
    pub fn feed_sampled(&mut self, kept: &[Request], scanned: Scanned) {
        for r in kept {
            if self.sampler.keeps(r.page) {
                self.keep(r);
            }
        }
        self.requests[1] += scanned.writes;
        self.requests[0] += scanned.requests - scanned.writes;
    }

    #[inline]
    fn keep(&mut self, r: &Request) {
        let i = self.pages.len();
        if i.is_multiple_of(64) {
            self.writes.push(0);
        }
        self.writes[i / 64] |= u64::from(r.kind.is_write()) << (i % 64);
        self.pages.push(self.remap.map(r.page));
    }

    /// The sample.
    pub fn finish(self) -> SampledTrace {
        SampledTrace {
            rate: self.sampler.rate(),
            page_space: self.remap.pages(),
            pages: self.pages,
            writes: self.writes,
            requests: self.requests,
        }
    }
}

/// A sampled trace in memory, renumbered compactly, with the counts of the full trace.
pub struct SampledTrace {
    rate: f64,
    page_space: u64,
    pages: Vec<u64>,
    writes: Vec<u64>,
    requests: [u64; 2],
}

impl SampledTrace {
    /// The sampling rate.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Requests sampled.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// `true` when nothing was sampled.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Requests of the full trace (reads, writes).
    pub fn full_requests(&self) -> [u64; 2] {
        self.requests
    }

    /// Size of the sample's compact page space: the logical size of a scaled device.
    pub fn page_space(&self) -> u64 {
        self.page_space
    }

    /// The frames of the miniature buffer standing for `frames` frames: `round(frames · R)`,
    /// at least 1.
    pub fn mini_frames(&self, frames: u64) -> usize {
        ((frames as f64 * self.rate).round() as usize).max(1)
    }

    fn request(&self, i: usize) -> Request {
        let write = (self.writes[i / 64] >> (i % 64)) & 1 == 1;
        Request { page: self.pages[i], kind: if write { AccessKind::Write } else { AccessKind::Read }, time_us: None }
    }
}

/// One curve point to estimate: a policy at a buffer size over a device.
#[derive(Clone, Debug)]
pub struct MiniPoint {
    /// The policy.
    pub policy: PolicyConfig,
    /// The full buffer size, pages.
    pub frames: u64,
    /// The full-size device (sized to the sample's space for the run).
    pub device: DeviceConfig,
    /// What a write miss does.
    pub write_miss: WriteMiss,
    /// Write back the dirty pages left at the end.
    pub final_flush: bool,
}

/// What a miniature run estimates for the full trace.
#[derive(Clone, Debug, PartialEq)]
pub struct MiniEstimate {
    /// Frames of the miniature buffer.
    pub mini_frames: usize,
    /// The miniature run's own counters.
    pub sample: Counters,
    /// The miniature device's counters.
    pub sample_device: DeviceStats,
    /// The estimated counters of the full trace (see the module documentation), rounded.
    pub counters: Counters,
    /// The estimated device counters of the full trace, rounded (lifetime wear fields are the
    /// miniature device's).
    pub device: DeviceStats,
}

/// Runs every point of `points` over `sample`, on the threads of the current rayon pool, and
/// estimates the full trace's counters. `progress` receives the sampled requests simulated.
pub fn minisim(
    sample: &SampledTrace,
    trace: &TraceSpec,
    points: &[MiniPoint],
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Result<MiniEstimate, JobError>> {
    let specs: Vec<RunSpec> = points
        .iter()
        .map(|p| {
            let frames = sample.mini_frames(p.frames);
            let space = sample.page_space.max(1);
            let mut s = RunSpec::new(trace.clone(), space, p.policy.clone(), frames, p.device.clone());
            s.write_miss = p.write_miss;
            s.final_flush = p.final_flush;
            s.logical_pages = space;
            s
        })
        .collect();
    struct Member {
        stepper: Box<dyn crate::step::Stepper>,
        error: Option<SimError>,
    }
    let mut members: Vec<Result<Member, JobError>> =
        specs.iter().map(|s| crate::group::build(s).map(|stepper| Member { stepper, error: None })).collect();
    let offline = members.iter().any(|m| m.as_ref().is_ok_and(|m| m.stepper.needs_future()));
    let next = offline.then(|| next_uses_by(sample.len(), |i| sample.pages[i]));
    let mut batch = Vec::with_capacity(GROUP_BATCH);
    let mut start = 0;
    while start < sample.len() {
        let end = (start + GROUP_BATCH).min(sample.len());
        batch.clear();
        batch.extend((start..end).map(|i| sample.request(i)));
        let live = members.iter_mut().filter_map(|m| m.as_mut().ok()).filter(|m| m.error.is_none());
        let live: Vec<&mut Member> = live.collect();
        let n = live.len() as u64;
        live.into_par_iter().for_each(|m| {
            let nx = if m.stepper.needs_future() { next.as_ref().map(|n| &n[start..end]) } else { None };
            if let Err(e) = m.stepper.feed(&batch, nx) {
                m.error = Some(e);
            }
        });
        progress((end - start) as u64 * n);
        start = end;
    }
    members
        .into_par_iter()
        .zip(specs.par_iter())
        .map(|(m, spec)| {
            let m = m?;
            let out = match m.error {
                Some(e) => Err(e),
                None => m.stepper.finish(),
            }
            .map_err(|e| JobError::Run {
                policy: spec.policy.label(),
                trace: spec.trace_label.clone(),
                frames: spec.frames,
                source: e.into(),
            })?;
            Ok(estimate(sample, spec.frames, out.counters, out.device))
        })
        .collect()
}

fn estimate(sample: &SampledTrace, mini_frames: usize, c: Counters, d: DeviceStats) -> MiniEstimate {
    let k = 1.0 / sample.rate;
    let s = |v: u64| (v as f64 * k).round() as u64;
    let [nr, nw] = sample.requests;
    let requests = nr + nw;
    let misses = s(c.misses).min(requests);
    let counters = Counters {
        requests,
        read_requests: nr,
        write_requests: nw,
        hits: requests - misses,
        misses,
        fetches: s(c.fetches),
        padding_reads: s(c.padding_reads),
        evict_writes: s(c.evict_writes),
        padding_writes: s(c.padding_writes),
        bypass_writes: s(c.bypass_writes),
        flush_writes: s(c.flush_writes),
        evictions: s(c.evictions),
    };
    let device = DeviceStats {
        host_reads: s(d.host_reads),
        host_writes: s(d.host_writes),
        flash_reads: s(d.flash_reads),
        flash_programs: s(d.flash_programs),
        erases: s(d.erases),
        page_copies: s(d.page_copies),
        merges_switch: s(d.merges_switch),
        merges_partial: s(d.merges_partial),
        merges_full: s(d.merges_full),
        time_ns: s(d.time_ns),
        ..d.clone()
    };
    MiniEstimate { mini_frames, sample: c, sample_device: d, counters, device }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_flash::DeviceKind;

    fn collect(trace: &str, rate: f64) -> SampledTrace {
        let spec = TraceSpec::parse(trace).unwrap();
        let mut src = spec.open(&Default::default()).unwrap().source;
        let mut c = SampleCollector::new(BlockSampler::with_rate(rate, 64, 1).unwrap());
        let mut batch = Vec::new();
        while src.next_batch(&mut batch, 4096).unwrap() > 0 {
            c.feed(&batch);
        }
        c.finish()
    }

    #[test]
    fn at_rate_one_it_is_the_full_simulation() {
        let trace = "gen:zipf,requests=20000,pages=3000,write-ratio=0.4,seed=5";
        let sample = collect(trace, 1.0);
        assert_eq!(sample.len(), 20_000);
        let spec = TraceSpec::parse(trace).unwrap();
        let device = DeviceConfig { kind: DeviceKind::Ideal, ..Default::default() };
        let points: Vec<MiniPoint> = ["lru", "cflru", "min-cost", "bplru"]
            .iter()
            .map(|p| MiniPoint {
                policy: p.parse().unwrap(),
                frames: 300,
                device: device.clone(),
                write_miss: WriteMiss::Fetch,
                final_flush: true,
            })
            .collect();
        let est = minisim(&sample, &spec, &points, &|_| {});
        for (p, e) in points.iter().zip(est) {
            let e = e.unwrap();
            // The full run, pages renumbered by 64-page extents (which changes nothing).
            let mut full = RunSpec::new(spec.clone(), 3000, p.policy.clone(), 300, device.clone());
            full.remap = Some(64);
            full.logical_pages = u64::MAX;
            let row = crate::execute(&full, &mut |_| {}).unwrap();
            assert_eq!((e.counters.hits, e.counters.page_writes()), (row.hits, row.page_writes), "{}", p.policy);
        }
    }

    #[test]
    fn the_device_is_scaled_with_the_sample() {
        let sample = collect("gen:uniform,requests=50000,pages=64000,write-ratio=0.5", 0.1);
        let blocks = sample.page_space() / 64;
        // Binomial(1000, 0.1): 100 ± 30.
        assert!((70..=130).contains(&blocks), "{blocks} blocks");
        assert_eq!(sample.mini_frames(1000), 100);
        assert_eq!(sample.mini_frames(1), 1);
    }
}
