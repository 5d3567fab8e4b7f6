//! A run that is fed its trace batch by batch: the unit that lets many runs share one decoding
//! of a trace ([`crate::group`]).
//!
//! A [`Stepper`] owns a [`Buffer`] (policy and device, monomorphised) and the run's position in
//! the trace. The only dynamic call is [`Stepper::feed`], once per batch; inside it the
//! per-request loop is the buffer's own. Two events can fall inside a batch, and the batch is
//! cut there so that the loop itself never tests for them:
//!
//! * the end of the **warm-up** (`warmup` requests): every counter restarts from there, the
//!   buffer's and the device's (the buffer keeps its pages, the device its state and wear; the
//!   erase-count distribution still describes lifetime wear), so the result describes the rest
//!   of the trace;
//! * the end of an **interval** (every `interval` requests after the warm-up): a snapshot of the
//!   counters is kept, and the interval's row is the difference between two snapshots. An
//!   interval's row is completed lazily, when the next request arrives, so that the final flush
//!   belongs to the last interval instead of forming an empty one.

use std::time::Instant;

use flashbuf_flash::{AnyDevice, Device, DeviceStats, thread_cpu_s};
use flashbuf_policy::{NEVER, PolicyConfig, PolicyVisitor, Replacer};
use flashbuf_trace::Request;

use crate::buffer::{Buffer, Counters, SimError};
use crate::page_table::PageTable;
use crate::run::{Period, RunOptions, RunOutput};

/// How many requests ahead the page-table slot of a request is prefetched: far enough for the
/// memory access to complete, near enough to stay in cache.
const PREFETCH_AHEAD: usize = 16;

/// How many requests ahead the frame a request's page-table slot names is prefetched (its
/// reverse-map entry and the policy's record): after the slot itself has arrived.
const PREFETCH_FRAME_AHEAD: usize = 6;

/// A run fed batch by batch (see the module documentation).
pub trait Stepper: Send {
    /// `true` when the run needs [`flashbuf_policy::Access::next_use`] (offline policies):
    /// then [`feed`](Stepper::feed) must be given `next`.
    fn needs_future(&self) -> bool;

    /// Serves `batch`; `next[i]` is the position of the next request to the page of
    /// `batch[i]` for offline policies. After an error the run ignores what follows.
    fn feed(&mut self, batch: &[Request], next: Option<&[u64]>) -> Result<(), SimError>;

    /// [`feed`](Stepper::feed) without timing the batch, for a caller that times the whole run
    /// itself (two clock reads per batch, one of them a system call, are then saved); the
    /// output's `elapsed_s` and `cpu_s` then leave such batches out.
    fn feed_untimed(&mut self, batch: &[Request], next: Option<&[u64]>) -> Result<(), SimError> {
        self.feed(batch, next)
    }

    /// Ends the run: the final flush, the last interval, the counters.
    fn finish(self: Box<Self>) -> Result<RunOutput, SimError>;
}

/// Builds the stepper of `policy` over `device`.
pub fn stepper<D: Device + Send + 'static>(
    policy: &PolicyConfig,
    device: D,
    options: &RunOptions,
) -> Result<Box<dyn Stepper>, SimError> {
    policy.build(options.frames, Make { device, options })
}

/// Builds the stepper of `policy` over a device chosen at run time. The ideal device and the
/// page-mapped FTL get loops of their own, in which their per-request work is inlined (the
/// ideal device's few additions; the FTL's mapping, allocation and cleaning); the block-level
/// FTLs share one, dispatching each device operation on the device's kind.
pub fn stepper_any(
    policy: &PolicyConfig,
    device: AnyDevice,
    options: &RunOptions,
) -> Result<Box<dyn Stepper>, SimError> {
    match device {
        AnyDevice::Ideal(d) => stepper(policy, d, options),
        AnyDevice::Page(d) => stepper(policy, d, options),
        d => stepper(policy, d, options),
    }
}

/// Builds the stepper of a policy given as a value: a policy outside the registry (a policy
/// written in Python, through the binding), run exactly as [`stepper`] runs a registered one.
pub fn stepper_of<R: Replacer, D: Device + Send + 'static>(
    policy: R,
    device: D,
    options: &RunOptions,
) -> Result<Box<dyn Stepper>, SimError> {
    Ok(Box::new(Run::new(policy, device, options)?))
}

struct Make<'a, D> {
    device: D,
    options: &'a RunOptions,
}

impl<D: Device + Send + 'static> PolicyVisitor for Make<'_, D> {
    type Output = Result<Box<dyn Stepper>, SimError>;

    fn visit<R: Replacer>(self, policy: R) -> Self::Output {
        Ok(Box::new(Run::new(policy, self.device, self.options)?))
    }
}

impl<R: Replacer, D: Device> Run<R, D> {
    pub(crate) fn new(policy: R, device: D, o: &RunOptions) -> Result<Self, SimError> {
        let table = if o.dense_pages && o.pages_hint == 0 {
            PageTable::dense(o.frames)
        } else {
            PageTable::new(o.frames, o.pages_hint)
        };
        let buffer = Buffer::with_table(policy, device, o.frames, o.write_miss, table)?;
        let interval = o.interval.filter(|&n| n > 0);
        let first_event = if o.warmup > 0 { o.warmup } else { interval.unwrap_or(u64::MAX) };
        Ok(Run {
            buffer,
            check: o.check_every.unwrap_or(u64::MAX).max(1),
            final_flush: o.final_flush,
            warmup: o.warmup,
            warm: o.warmup == 0,
            interval,
            position: 0,
            next_event: first_event,
            warm_mark: None,
            mark: None,
            pending_boundary: false,
            intervals: Vec::new(),
            elapsed_s: 0.0,
            cpu_s: 0.0,
            failed: false,
        })
    }
}

struct Mark {
    position: u64,
    counters: Counters,
    device: DeviceStats,
}

pub(crate) struct Run<R: Replacer, D: Device> {
    buffer: Buffer<R, D>,
    check: u64,
    final_flush: bool,
    warmup: u64,
    /// The warm-up is over (or there is none).
    warm: bool,
    interval: Option<u64>,
    /// Requests served.
    position: u64,
    /// Position of the next warm-up end or interval boundary (`u64::MAX`: none).
    next_event: u64,
    /// Snapshot at the end of the warm-up (what the results are counted from).
    warm_mark: Option<Mark>,
    /// Snapshot at the start of the current interval.
    mark: Option<Mark>,
    /// An interval ended and its row waits for the next request (or the finish).
    pending_boundary: bool,
    intervals: Vec<Period>,
    elapsed_s: f64,
    cpu_s: f64,
    failed: bool,
}

impl<R: Replacer, D: Device> Run<R, D> {
    fn snapshot(&self) -> Mark {
        Mark { position: self.position, counters: self.buffer.counters().clone(), device: self.buffer.device_stats() }
    }

    /// The period from the start of the current interval to now.
    fn current_period(&self) -> Period {
        let now = self.snapshot();
        let (counters, device) = match &self.mark {
            Some(m) => (now.counters.since(&m.counters), now.device.since(&m.device)),
            None => (now.counters.clone(), now.device.clone()),
        };
        Period { interval: Some(self.intervals.len() as u64 + 1), position: now.position, counters, device }
    }

    /// The warm-up ended or an interval boundary was reached.
    fn on_event(&mut self) {
        if !self.warm {
            self.warm = true;
            self.warm_mark = Some(self.snapshot());
            self.mark = Some(self.snapshot());
        } else {
            self.pending_boundary = true;
        }
        self.next_event = self.interval.map_or(u64::MAX, |n| self.position.saturating_add(n));
    }

    #[inline]
    fn serve(&mut self, chunk: &[Request], next: Option<&[u64]>) -> Result<(), SimError> {
        if self.pending_boundary && !chunk.is_empty() {
            self.pending_boundary = false;
            let period = self.current_period();
            self.intervals.push(period);
            self.mark = Some(self.snapshot());
        }
        if self.check == u64::MAX {
            match next {
                None => {
                    // The requests of the previous batch could not look into this one: the
                    // first few slots are asked for at once (their misses overlap) instead of
                    // each stalling its request in turn.
                    for req in chunk.iter().take(PREFETCH_AHEAD) {
                        self.buffer.prefetch(req.page);
                    }
                    for (i, req) in chunk.iter().enumerate() {
                        if let Some(ahead) = chunk.get(i + PREFETCH_AHEAD) {
                            self.buffer.prefetch(ahead.page);
                        }
                        if let Some(near) = chunk.get(i + PREFETCH_FRAME_AHEAD) {
                            self.buffer.prefetch_frame(near.page);
                        }
                        self.buffer.access(req, NEVER)?;
                    }
                }
                Some(next) => {
                    for (req, &n) in chunk.iter().zip(next) {
                        self.buffer.access(req, n)?;
                    }
                }
            }
        } else {
            for (i, req) in chunk.iter().enumerate() {
                self.buffer.access(req, next.map_or(NEVER, |n| n[i]))?;
                if (self.position + i as u64 + 1).is_multiple_of(self.check) {
                    self.buffer.check_invariants().map_err(SimError::Config)?;
                }
            }
        }
        self.position += chunk.len() as u64;
        Ok(())
    }

    fn feed_inner(&mut self, batch: &[Request], next: Option<&[u64]>) -> Result<(), SimError> {
        let mut done = 0usize;
        while done < batch.len() {
            let left = (batch.len() - done) as u64;
            let n = left.min(self.next_event.saturating_sub(self.position)) as usize;
            self.serve(&batch[done..done + n], next.map(|x| &x[done..done + n]))?;
            done += n;
            if self.position == self.next_event {
                self.on_event();
            }
        }
        Ok(())
    }
}

impl<R: Replacer, D: Device + Send> Stepper for Run<R, D> {
    fn needs_future(&self) -> bool {
        R::NEEDS_FUTURE
    }

    fn feed(&mut self, batch: &[Request], next: Option<&[u64]>) -> Result<(), SimError> {
        if self.failed {
            return Ok(());
        }
        debug_assert!(!R::NEEDS_FUTURE || next.is_some_and(|n| n.len() == batch.len()));
        let start = Instant::now();
        let cpu = thread_cpu_s();
        let r = self.feed_inner(batch, next);
        self.cpu_s += thread_cpu_s() - cpu;
        self.elapsed_s += start.elapsed().as_secs_f64();
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    fn feed_untimed(&mut self, batch: &[Request], next: Option<&[u64]>) -> Result<(), SimError> {
        if self.failed {
            return Ok(());
        }
        let r = self.feed_inner(batch, next);
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    fn finish(self: Box<Self>) -> Result<RunOutput, SimError> {
        (*self).finish_run()
    }
}

impl<R: Replacer, D: Device> Run<R, D> {
    /// Ends the run (see [`Stepper::finish`]).
    pub(crate) fn finish_run(mut self) -> Result<RunOutput, SimError> {
        let start = Instant::now();
        let cpu = thread_cpu_s();
        // Checked before the final flush: the flush cleans pages without telling the policy
        // (the run is over), so afterwards the two views of dirtiness differ on purpose.
        if self.check != u64::MAX {
            self.buffer.check_invariants().map_err(SimError::Config)?;
        }
        if self.final_flush {
            self.buffer.flush()?;
        }
        if !self.warm {
            return Err(SimError::Config(format!(
                "the warm-up of {} requests is longer than the trace ({} requests)",
                self.warmup, self.position
            )));
        }
        // The last interval: whatever followed the last completed one, final flush included (an
        // interval that ended exactly at the end of the trace takes the flush).
        if self.interval.is_some() {
            let last = self.current_period();
            if last.counters.requests > 0 || last.counters.page_writes() > 0 {
                self.intervals.push(last);
            }
        }
        self.cpu_s += thread_cpu_s() - cpu;
        self.elapsed_s += start.elapsed().as_secs_f64();
        let (mut counters, mut device) = (self.buffer.counters().clone(), self.buffer.device_stats());
        if let Some(m) = &self.warm_mark {
            counters = counters.since(&m.counters);
            device = device.since(&m.device);
        }
        Ok(RunOutput {
            counters,
            device,
            position: self.position,
            warmup: self.warmup,
            intervals: std::mem::take(&mut self.intervals),
            elapsed_s: self.elapsed_s,
            cpu_s: self.cpu_s,
        })
    }
}
