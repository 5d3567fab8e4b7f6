//! Many runs over one decoding of their trace.
//!
//! Every run of a group reads the same requests (same trace, read options and remapping:
//! [`RunSpec::same_requests`]). The trace is opened once and decoded batch by batch; each batch
//! is handed to every run of the group, the runs spread over the threads of the current rayon
//! pool, a window of [`GROUP_WINDOW`] batches at a time, while the next window is being decoded.
//! Two windows are alive at a time, whatever the trace's length; each run holds its own buffer,
//! policy and device.
//!
//! Offline policies (MIN) need the position of every request's next use, hence the whole trace:
//! when a group holds one, the decoded requests are also kept, compactly (8 bytes and a bit
//! each, plus 8 bytes for the next-use positions computed at the end), and the offline runs go
//! through them after the stream ends. Only offline runs cost memory in the trace's length.
//!
//! A run that fails (its device refuses a request, its policy cannot evict) stops there with its
//! error; the others go on. A trace that cannot be read fails every run of the group.

use flashbuf_trace::{AccessKind, Remapped, Request, TraceSource};
use rayon::prelude::*;

use crate::buffer::SimError;
use crate::job::{JobError, RunSpec};
use crate::run::{RunError, RunOutput, next_uses_by};
use crate::step::{Stepper, stepper_any};

/// Requests per batch of a group: large enough that handing a batch to a run costs nothing
/// next to simulating it, small enough to stay in the last-level cache.
pub const GROUP_BATCH: usize = 1 << 16;

fn run_error(spec: &RunSpec, source: RunError) -> JobError {
    JobError::Run { policy: spec.policy.label(), trace: spec.trace_label.clone(), frames: spec.frames, source }
}

fn trace_error(spec: &RunSpec, source: flashbuf_trace::TraceError) -> JobError {
    JobError::Trace { trace: spec.trace_label.clone(), source }
}

/// Builds the device and the stepper of `spec`.
pub fn build(spec: &RunSpec) -> Result<Box<dyn Stepper>, JobError> {
    let device = spec.device.build(spec.logical_pages).map_err(|source| JobError::Device {
        device: spec.device.label(),
        pages: spec.logical_pages,
        source,
    })?;
    // A device-aware policy takes what it left to the device (`auto`) from this run's device.
    let policy = spec.policy.for_device(&spec.device_profile());
    stepper_any(&policy, device, &spec.options()).map_err(|e| run_error(spec, e.into()))
}

/// The requests kept for offline runs: pages and a bit per request for writes.
#[derive(Default)]
struct Kept {
    pages: Vec<u64>,
    writes: Vec<u64>,
}

impl Kept {
    fn push(&mut self, batch: &[Request]) {
        for r in batch {
            let i = self.pages.len();
            if i.is_multiple_of(64) {
                self.writes.push(0);
            }
            self.writes[i / 64] |= u64::from(r.kind.is_write()) << (i % 64);
            self.pages.push(r.page);
        }
    }

    fn request(&self, i: usize) -> Request {
        let write = (self.writes[i / 64] >> (i % 64)) & 1 == 1;
        Request { page: self.pages[i], kind: if write { AccessKind::Write } else { AccessKind::Read }, time_us: None }
    }
}

struct Member {
    index: usize,
    stepper: Box<dyn Stepper>,
    error: Option<SimError>,
}

impl Member {
    fn feed(&mut self, batch: &[Request], next: Option<&[u64]>) {
        if self.error.is_none()
            && let Err(e) = self.stepper.feed(batch, next)
        {
            self.error = Some(e);
        }
    }
}

/// What a group reports as it goes, on the thread that executes it.
#[derive(Clone, Copy, Debug)]
pub enum GroupEvent<'a> {
    /// The trace was opened; how (the detected format, or the generator).
    Opened {
        /// The trace's label.
        trace: &'a str,
        /// How it was opened.
        how: &'a str,
    },
    /// Requests simulated since the last event (a batch's length times the runs it fed).
    Simulated(u64),
}

/// [`execute_group`] with only a count of simulated requests reported.
pub fn execute_group(specs: &[&RunSpec], progress: &mut dyn FnMut(u64)) -> Vec<Result<RunOutput, JobError>> {
    execute_group_with(specs, &mut |e| {
        if let GroupEvent::Simulated(n) = e {
            progress(n)
        }
    })
}

/// Executes `specs`, which must all read the same requests ([`RunSpec::same_requests`]), from one
/// decoding of their trace, on the threads of the current rayon pool. Returns one result per
/// spec, in order. `events` is called on the calling thread: once when the trace is opened, and
/// after every batch.
///
/// # Panics
///
/// If two specs read different requests.
pub fn execute_group_with(
    specs: &[&RunSpec],
    events: &mut dyn FnMut(GroupEvent<'_>),
) -> Vec<Result<RunOutput, JobError>> {
    let Some(first) = specs.first() else { return Vec::new() };
    assert!(specs.iter().all(|s| s.same_requests(first)), "a group's runs read the same requests");
    let mut results: Vec<Option<Result<RunOutput, JobError>>> = specs.iter().map(|_| None).collect();
    let mut online = Vec::new();
    let mut offline = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        match build(spec) {
            Ok(stepper) if stepper.needs_future() => offline.push(Member { index, stepper, error: None }),
            Ok(stepper) => online.push(Member { index, stepper, error: None }),
            Err(e) => results[index] = Some(Err(e)),
        }
    }
    if !online.is_empty() || !offline.is_empty() {
        let read = decode_and_feed(first, &mut online, !offline.is_empty(), events);
        match read {
            Err(e) => {
                let msg = e.to_string();
                for m in online.iter().chain(&offline) {
                    let source = flashbuf_trace::TraceError::Invalid(msg.clone());
                    results[m.index] = Some(Err(trace_error(specs[m.index], source)));
                }
                online.clear();
                offline.clear();
            }
            Ok(kept) => {
                if let Some(kept) = kept {
                    run_offline(&kept, &mut offline, &mut |n| events(GroupEvent::Simulated(n)));
                }
            }
        }
    }
    let finished: Vec<(usize, Result<RunOutput, SimError>)> = online
        .into_par_iter()
        .chain(offline)
        .map(|m| {
            let r = match m.error {
                Some(e) => Err(e),
                None => m.stepper.finish(),
            };
            (m.index, r)
        })
        .collect();
    for (index, r) in finished {
        results[index] = Some(r.map_err(|e| run_error(specs[index], e.into())));
    }
    results.into_iter().map(|r| r.expect("every run has a result")).collect()
}

/// Batches a run is handed at a time: the runs meet (every run has finished the window) once per
/// window rather than once per batch, so that the core that finishes its share of a window first
/// waits less often for the other (the runs' costs differ by an order of magnitude), while the
/// next window is decoded. Two windows are alive at a time: 8 batches, 16 MiB.
pub const GROUP_WINDOW: usize = 4;

/// Decodes up to [`GROUP_WINDOW`] batches into `window`; returns how many hold requests.
fn fill(source: &mut dyn TraceSource, window: &mut [Vec<Request>]) -> Result<usize, flashbuf_trace::TraceError> {
    for (i, batch) in window.iter_mut().enumerate() {
        if source.next_batch(batch, GROUP_BATCH)? == 0 {
            return Ok(i);
        }
    }
    Ok(window.len())
}

/// Decodes the trace once, feeding every online member; keeps the requests when `keep`.
fn decode_and_feed(
    spec: &RunSpec,
    online: &mut [Member],
    keep: bool,
    events: &mut dyn FnMut(GroupEvent<'_>),
) -> Result<Option<Kept>, flashbuf_trace::TraceError> {
    let opened = spec.trace.open(&spec.read)?;
    events(GroupEvent::Opened { trace: &spec.trace_label, how: &opened.reason });
    let mut source: Box<dyn TraceSource> = match spec.remap {
        Some(extent) => Box::new(Remapped::new(opened.source, extent)),
        None => opened.source,
    };
    let mut kept = keep.then(Kept::default);
    let new_window = || (0..GROUP_WINDOW).map(|_| Vec::with_capacity(GROUP_BATCH)).collect::<Vec<Vec<Request>>>();
    let (mut current, mut next) = (new_window(), new_window());
    let mut filled = fill(source.as_mut(), &mut current)?;
    while filled > 0 {
        let window = &current[..filled];
        if let Some(k) = &mut kept {
            for batch in window {
                k.push(batch);
            }
        }
        let (decoded, ()) = rayon::join(
            || fill(source.as_mut(), &mut next),
            || {
                online.par_iter_mut().for_each(|m| {
                    for batch in window {
                        m.feed(batch, None);
                    }
                })
            },
        );
        let requests: usize = window.iter().map(Vec::len).sum();
        events(GroupEvent::Simulated(requests as u64 * online.len() as u64));
        // A window cut short ended the trace: what was read past its end is not used.
        filled = if filled < GROUP_WINDOW { 0 } else { decoded? };
        std::mem::swap(&mut current, &mut next);
    }
    Ok(kept)
}

/// Runs the offline members over the kept requests.
fn run_offline(kept: &Kept, offline: &mut [Member], progress: &mut dyn FnMut(u64)) {
    if offline.is_empty() {
        return;
    }
    let next = next_uses_by(kept.pages.len(), |i| kept.pages[i]);
    let n = kept.pages.len();
    let mut batch = Vec::with_capacity(GROUP_BATCH);
    let mut start = 0;
    while start < n {
        let end = (start + GROUP_BATCH).min(n);
        batch.clear();
        batch.extend((start..end).map(|i| kept.request(i)));
        let slice = &next[start..end];
        offline.par_iter_mut().for_each(|m| m.feed(&batch, Some(slice)));
        progress((end - start) as u64 * offline.len() as u64);
        start = end;
    }
}
