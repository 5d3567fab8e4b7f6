//! One simulation run: a trace, a policy configuration, a device, a buffer size → a result row.

use std::hash::BuildHasherDefault;
use std::time::Instant;

use flashbuf_flash::{Device, DeviceStats, thread_cpu_s};
use flashbuf_policy::{NEVER, PolicyConfig, PolicyVisitor, Replacer};
use flashbuf_trace::{Request, TraceError, TraceSource};
use hashbrown::HashMap;
use rustc_hash::FxHasher;
use serde::Serialize;

use crate::buffer::{Buffer, Counters, SimError, WriteMiss};

/// Requests read from the trace per batch.
pub const BATCH: usize = 1 << 14;

/// How many requests ahead the page-table slot of a request is prefetched: far enough for the
/// memory access to complete, near enough to stay in cache.
const PREFETCH_AHEAD: usize = 16;

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
    /// Largest page number + 1, when known (pre-sizes the page table).
    pub pages_hint: u64,
    /// Check every invariant of buffer, policy and device after every `n` requests (tests).
    pub check_every: Option<u64>,
    /// Write back the dirty pages left at the end of the trace (default true: the AD-LRU paper
    /// counts them; the REF paper measures only the trace period).
    pub final_flush: bool,
}

impl RunOptions {
    /// Defaults for a buffer of `frames` frames.
    pub fn new(frames: usize) -> Self {
        RunOptions { frames, write_miss: WriteMiss::Fetch, pages_hint: 0, check_every: None, final_flush: true }
    }
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    /// The buffer's counters.
    pub counters: Counters,
    /// The device's counters.
    pub device: DeviceStats,
    /// Wall time of the simulation (trace decoding included), in seconds.
    pub elapsed_s: f64,
    /// CPU time of the simulating thread (policy, buffer bookkeeping and trace decoding), in
    /// seconds: the "CPU time" of the AD-LRU paper's runtime definition.
    pub cpu_s: f64,
}

/// Runs `trace` through a buffer managed by `policy` over `device`. `progress` is called after
/// every batch with the number of requests it held.
pub fn run<D: Device>(
    policy: &PolicyConfig,
    device: D,
    trace: &mut dyn TraceSource,
    options: &RunOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<RunOutput, RunError> {
    policy.build(options.frames, Drive { device, trace, options, progress })
}

struct Drive<'a, D> {
    device: D,
    trace: &'a mut dyn TraceSource,
    options: &'a RunOptions,
    progress: &'a mut dyn FnMut(u64),
}

impl<D: Device> PolicyVisitor for Drive<'_, D> {
    type Output = Result<RunOutput, RunError>;

    fn visit<R: Replacer>(self, policy: R) -> Self::Output {
        let o = self.options;
        let mut buffer = Buffer::new(policy, self.device, o.frames, o.write_miss, o.pages_hint)?;
        let start = Instant::now();
        let cpu_start = thread_cpu_s();
        let check = o.check_every.unwrap_or(u64::MAX).max(1);
        let mut batch = Vec::with_capacity(BATCH);
        if R::NEEDS_FUTURE {
            // Offline policies see the whole trace: read it into memory and compute, for every
            // request, the position of the next request to the same page.
            let all = flashbuf_trace::collect(self.trace)?;
            let next = next_uses(&all);
            for (chunk_no, chunk) in all.chunks(BATCH).enumerate() {
                let base = chunk_no * BATCH;
                for (i, req) in chunk.iter().enumerate() {
                    buffer.access(req, next[base + i])?;
                    if ((base + i) as u64 + 1).is_multiple_of(check) {
                        buffer.check_invariants().map_err(SimError::Config)?;
                    }
                }
                (self.progress)(chunk.len() as u64);
            }
        } else {
            let mut seen = 0u64;
            while self.trace.next_batch(&mut batch, BATCH)? > 0 {
                if check == u64::MAX {
                    for (i, req) in batch.iter().enumerate() {
                        if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
                            buffer.prefetch(ahead.page);
                        }
                        buffer.access(req, NEVER)?;
                    }
                } else {
                    for req in &batch {
                        buffer.access(req, NEVER)?;
                        seen += 1;
                        if seen.is_multiple_of(check) {
                            buffer.check_invariants().map_err(SimError::Config)?;
                        }
                    }
                }
                (self.progress)(batch.len() as u64);
            }
        }
        if o.final_flush {
            buffer.flush()?;
        }
        if check != u64::MAX {
            buffer.check_invariants().map_err(SimError::Config)?;
        }
        let elapsed_s = start.elapsed().as_secs_f64();
        let cpu_s = thread_cpu_s() - cpu_start;
        Ok(RunOutput { counters: buffer.counters().clone(), device: buffer.device_stats(), elapsed_s, cpu_s })
    }
}

/// For each request, the index of the next request to the same page ([`NEVER`] if none).
pub fn next_uses(requests: &[Request]) -> Vec<u64> {
    let mut next = vec![NEVER; requests.len()];
    let mut last: HashMap<u64, u64, BuildHasherDefault<FxHasher>> = HashMap::default();
    for (i, r) in requests.iter().enumerate().rev() {
        if let Some(j) = last.insert(r.page, i as u64) {
            next[i] = j;
        }
    }
    next
}

/// One result row: everything a run measured, flat, for tables, CSV and JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResultRow {
    /// Trace label (file name or generator spec).
    pub trace: String,
    /// Policy label with every parameter, e.g. `cflru:w=0.5`.
    pub policy: String,
    /// Policy name without parameters, e.g. `cflru` (for grouping and plot series).
    pub policy_name: String,
    /// Buffer size in pages.
    pub buffer_pages: u64,
    /// Device label.
    pub device: String,
    /// Write-miss mode.
    pub write_miss: WriteMiss,
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
}

impl ResultRow {
    /// Assembles a row from a run's output and its labels.
    pub fn new(trace: &str, policy: &PolicyConfig, device: &str, options: &RunOptions, out: &RunOutput) -> Self {
        let c = &out.counters;
        let d = &out.device;
        ResultRow {
            trace: trace.to_string(),
            policy: policy.label(),
            policy_name: policy.name().to_string(),
            buffer_pages: options.frames as u64,
            device: device.to_string(),
            write_miss: options.write_miss,
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
            elapsed_s: out.elapsed_s,
            cpu_s: out.cpu_s,
            runtime_s: out.cpu_s + d.time_ns as f64 / 1e9,
            requests_per_s: if out.elapsed_s > 0.0 { c.requests as f64 / out.elapsed_s } else { 0.0 },
        }
    }
}
