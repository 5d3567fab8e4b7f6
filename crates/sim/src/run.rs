//! One simulation run: a trace, a policy configuration, a device, a buffer size → a result row.

use std::hash::BuildHasherDefault;
use std::time::Instant;

use flashbuf_flash::{Device, DeviceStats, thread_cpu_s};
use flashbuf_policy::{NEVER, PolicyConfig};
use flashbuf_trace::{Request, TraceError, TraceSource};
use hashbrown::HashMap;
use rustc_hash::FxHasher;
use serde::{Deserialize, Serialize};

use crate::buffer::{Counters, SimError, WriteMiss};
use crate::job::RunSpec;

/// Requests read from the trace per batch.
pub const BATCH: usize = 1 << 14;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The simulation stopped.
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Buffer size in frames (pages).
    pub frames: usize,
    /// Fetch on write miss (database buffer) or not (write buffer).
    pub write_miss: WriteMiss,
    /// Pages direct-mapped by the page table: the size of the page space when it is dense
    /// (the compact space of a remapped trace, or the largest page + 1 of a dense one); 0 when
    /// unknown or sparse (the table then grows with the pages it meets, never past its limit).
    pub pages_hint: u64,
    /// The page numbers are dense although their number is not known in advance (a trace
    /// renumbered into a compact space as it is read): the page table direct-maps them all,
    /// growing with the largest one met, instead of hashing those beyond 16 per frame.
    pub dense_pages: bool,
    /// Check every invariant of buffer, policy and device after every `n` requests (tests).
    pub check_every: Option<u64>,
    /// Write back the dirty pages left at the end of the trace (default true: the AD-LRU paper
    /// counts them; the REF paper measures only the trace period).
    pub final_flush: bool,
    /// Requests run before counting starts (every counter, the device's included, counts from
    /// there; the buffer's pages and the device's state stay).
    pub warmup: u64,
    /// Also keep the counters of every `n` requests after the warm-up ([`RunOutput::intervals`]).
    pub interval: Option<u64>,
}

impl RunOptions {
    /// Defaults for a buffer of `frames` frames.
    pub fn new(frames: usize) -> Self {
        RunOptions {
            frames,
            write_miss: WriteMiss::Fetch,
            pages_hint: 0,
            dense_pages: false,
            check_every: None,
            final_flush: true,
            warmup: 0,
            interval: None,
        }
    }
}

/// The counters of one period of a run: one interval ([`RunOptions::interval`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Period {
    /// 1-based interval number.
    pub interval: Option<u64>,
    /// Requests of the trace consumed at the end of the period (warm-up included).
    pub position: u64,
    /// The buffer's counters over the period.
    pub counters: Counters,
    /// The device's counters over the period.
    pub device: DeviceStats,
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    /// The buffer's counters after the warm-up, to the end (final flush included).
    pub counters: Counters,
    /// The device's counters over the same period.
    pub device: DeviceStats,
    /// Requests consumed, warm-up included.
    pub position: u64,
    /// Requests of the warm-up.
    pub warmup: u64,
    /// One period per interval, when intervals were asked for.
    pub intervals: Vec<Period>,
    /// Wall time of the simulation, in seconds: for [`run()`], trace decoding included; for a
    /// run sharing its decoding with others ([`crate::execute_group`]), the time spent
    /// simulating this run alone.
    pub elapsed_s: f64,
    /// CPU time of the simulating thread(s) over the same (policy and buffer bookkeeping, and
    /// decoding where `elapsed_s` includes it), in seconds: the "CPU time" of the AD-LRU
    /// paper's runtime definition.
    pub cpu_s: f64,
}

/// Runs `trace` through a buffer managed by `policy` over `device`, on the calling thread,
/// decoding as it goes. `progress` is called after every batch with the number of requests it
/// held.
pub fn run<D: Device + Send + 'static>(
    policy: &PolicyConfig,
    device: D,
    trace: &mut dyn TraceSource,
    options: &RunOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<RunOutput, RunError> {
    let start = Instant::now();
    let cpu_start = thread_cpu_s();
    let mut stepper = crate::step::stepper(policy, device, options)?;
    let mut batch = Vec::with_capacity(BATCH);
    if stepper.needs_future() {
        // Offline policies see the whole trace: read it into memory and compute, for every
        // request, the position of the next request to the same page.
        let all = flashbuf_trace::collect(trace)?;
        let next = next_uses(&all);
        for (chunk, next) in all.chunks(BATCH).zip(next.chunks(BATCH)) {
            stepper.feed_untimed(chunk, Some(next))?;
            progress(chunk.len() as u64);
        }
    } else {
        while trace.next_batch(&mut batch, BATCH)? > 0 {
            stepper.feed_untimed(&batch, None)?;
            progress(batch.len() as u64);
        }
    }
    let mut out = stepper.finish()?;
    out.elapsed_s = start.elapsed().as_secs_f64();
    out.cpu_s = thread_cpu_s() - cpu_start;
    Ok(out)
}

/// For each request, the index of the next request to the same page ([`NEVER`] if none).
pub fn next_uses(requests: &[Request]) -> Vec<u64> {
    next_uses_by(requests.len(), |i| requests[i].page)
}

/// For each of `n` requests whose pages `page(i)` gives, the index of the next request to the
/// same page ([`NEVER`] if none). Memory: the result and a hash map of the distinct pages.
pub(crate) fn next_uses_by(n: usize, page: impl Fn(usize) -> u64) -> Vec<u64> {
    let mut next = vec![NEVER; n];
    let mut last: HashMap<u64, u64, BuildHasherDefault<FxHasher>> = HashMap::default();
    for i in (0..n).rev() {
        if let Some(j) = last.insert(page(i), i as u64) {
            next[i] = j;
        }
    }
    next
}

/// One result row: everything a run measured, flat, for tables, CSV and JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// Trace label (file name or generator spec).
    pub trace: String,
    /// Policy label with every parameter, e.g. `cflru:w=0.5`.
    pub policy: String,
    /// Policy name without parameters, e.g. `cflru` (for grouping and plot series).
    pub policy_name: String,
    /// Buffer size in pages.
    pub buffer_pages: u64,
    /// The buffer as a share of the trace's footprint: `buffer_pages / footprint_pages` (empty
    /// when the footprint is not known, e.g. a trace read once from a pipe).
    pub buffer_share: Option<f64>,
    /// Distinct pages of the trace (empty when not known).
    pub footprint_pages: Option<u64>,
    /// Device label.
    pub device: String,
    /// Logical pages of the device (0 for a device sized as it goes).
    pub logical_pages: u64,
    /// Extent size of the compact address space the pages were renumbered into, in pages; 0
    /// when page numbers are the trace's own (see `docs/address-space.md`).
    pub remap_extent_pages: u64,
    /// Write-miss mode.
    pub write_miss: WriteMiss,
    /// Requests run before counting started (not counted in this row).
    pub warmup_requests: u64,
    /// 1-based number of the interval this row describes (empty: the whole run after the
    /// warm-up).
    pub interval: Option<u64>,
    /// Requests of the trace consumed at the end of the period this row describes (warm-up
    /// included).
    pub position: u64,
    /// Page accesses.
    pub requests: u64,
    /// Read accesses.
    pub read_requests: u64,
    /// Write accesses.
    pub write_requests: u64,
    /// Buffer hits.
    pub hits: u64,
    /// Buffer misses.
    pub misses: u64,
    /// hits / requests.
    pub hit_ratio: f64,
    /// Pages read from the device (fetches + padding reads).
    pub page_reads: u64,
    /// Demand fetches.
    pub fetches: u64,
    /// Padding reads.
    pub padding_reads: u64,
    /// Pages written to the device (victims + padding + bypass + final flush).
    pub page_writes: u64,
    /// Dirty victims written back.
    pub evict_writes: u64,
    /// Pages written as part of padded blocks.
    pub padding_writes: u64,
    /// Incoming writes sent straight to the device.
    pub bypass_writes: u64,
    /// Dirty pages written by the final flush.
    pub flush_writes: u64,
    /// NAND page reads.
    pub flash_reads: u64,
    /// NAND page programs.
    pub flash_programs: u64,
    /// NAND block erases.
    pub erases: u64,
    /// Pages copied by GC, merges and wear levelling.
    pub page_copies: u64,
    /// Switch merges.
    pub merges_switch: u64,
    /// Partial merges.
    pub merges_partial: u64,
    /// Full merges.
    pub merges_full: u64,
    /// Flash programs per host write.
    pub write_amplification: f64,
    /// Smallest erase count of a block.
    pub erase_count_min: u64,
    /// Largest erase count of a block.
    pub erase_count_max: u64,
    /// Mean erase count.
    pub erase_count_mean: f64,
    /// Standard deviation of erase counts.
    pub erase_count_std: f64,
    /// Simulated device time, microseconds.
    pub device_time_us: f64,
    /// Wall time of the simulation, seconds.
    pub elapsed_s: f64,
    /// CPU time of the simulation (policy, bookkeeping, trace decoding), seconds.
    pub cpu_s: f64,
    /// The AD-LRU paper's runtime (§4.2): CPU time + flash read time + flash write time, i.e.
    /// `cpu_s` + device time, in seconds.
    pub runtime_s: f64,
    /// Requests simulated per second of wall time.
    pub requests_per_s: f64,
    /// A fingerprint of every option that can change the result ([`RunSpec::fingerprint`]).
    pub run_id: String,
    /// The fewest page writes any policy can achieve with this buffer on this trace
    /// ([`crate::bound`]; empty unless asked for, e.g. `flashbuf run --bound`).
    pub write_bound: Option<u64>,
    /// `page_writes / write_bound`: how far the policy is from the fewest writes (empty when the
    /// bound is 0 or not computed).
    pub writes_over_bound: Option<f64>,
    /// The least device time any policy can achieve, microseconds (with the bound).
    pub time_bound_us: Option<f64>,
    /// `device_time_us / time_bound_us` (with the bound).
    pub time_over_bound: Option<f64>,
}

impl ResultRow {
    /// The row of a whole run (after its warm-up).
    pub fn of_run(spec: &RunSpec, out: &RunOutput) -> Self {
        Self::build(spec, &out.counters, &out.device, out.warmup, None, out.position, out.elapsed_s, out.cpu_s)
    }

    /// One row per interval of a run ([`RunOptions::interval`]); timing columns are 0 in them.
    pub fn of_intervals(spec: &RunSpec, out: &RunOutput) -> Vec<Self> {
        out.intervals
            .iter()
            .map(|p| Self::build(spec, &p.counters, &p.device, out.warmup, p.interval, p.position, 0.0, 0.0))
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        spec: &RunSpec,
        c: &Counters,
        d: &DeviceStats,
        warmup: u64,
        interval: Option<u64>,
        position: u64,
        elapsed_s: f64,
        cpu_s: f64,
    ) -> Self {
        let policy = &spec.policy;
        ResultRow {
            trace: spec.trace_label.clone(),
            policy: policy.label(),
            policy_name: policy.name().to_string(),
            buffer_pages: spec.frames as u64,
            buffer_share: spec.footprint_pages.filter(|&f| f > 0).map(|f| spec.frames as f64 / f as f64),
            footprint_pages: spec.footprint_pages,
            device: spec.device.label(),
            logical_pages: spec.logical_pages,
            remap_extent_pages: spec.remap.unwrap_or(0),
            write_miss: spec.write_miss,
            warmup_requests: warmup,
            interval,
            position,
            requests: c.requests,
            read_requests: c.read_requests,
            write_requests: c.write_requests,
            hits: c.hits,
            misses: c.misses,
            hit_ratio: c.hit_ratio(),
            page_reads: c.page_reads(),
            fetches: c.fetches,
            padding_reads: c.padding_reads,
            page_writes: c.page_writes(),
            evict_writes: c.evict_writes,
            padding_writes: c.padding_writes,
            bypass_writes: c.bypass_writes,
            flush_writes: c.flush_writes,
            flash_reads: d.flash_reads,
            flash_programs: d.flash_programs,
            erases: d.erases,
            page_copies: d.page_copies,
            merges_switch: d.merges_switch,
            merges_partial: d.merges_partial,
            merges_full: d.merges_full,
            write_amplification: d.write_amplification(),
            erase_count_min: d.erase_count_min,
            erase_count_max: d.erase_count_max,
            erase_count_mean: d.erase_count_mean,
            erase_count_std: d.erase_count_std,
            device_time_us: d.time_ns as f64 / 1e3,
            elapsed_s,
            cpu_s,
            runtime_s: cpu_s + d.time_ns as f64 / 1e9,
            requests_per_s: if elapsed_s > 0.0 { c.requests as f64 / elapsed_s } else { 0.0 },
            run_id: spec.fingerprint(),
            write_bound: None,
            writes_over_bound: None,
            time_bound_us: None,
            time_over_bound: None,
        }
    }

    /// Fills the bound columns from `b`, the bounds of this row's trace and buffer size.
    pub fn set_bound(&mut self, b: &crate::bound::Bound) {
        self.write_bound = Some(b.writes);
        self.writes_over_bound = (b.writes > 0).then(|| self.page_writes as f64 / b.writes as f64);
        let t = b.time_ns as f64 / 1e3;
        self.time_bound_us = Some(t);
        self.time_over_bound = (b.time_ns > 0).then(|| self.device_time_us / t);
    }
}
