//! A replacement policy written in Python, run as a [`Replacer`] by the simulator.
//!
//! The Python object (an instance of a `flashbuf.Policy` subclass) is told every event with the
//! [`Replacer`] contract: `on_hit(frame, access)`, `on_insert(frame, access)`,
//! `victims(incoming)`, `remove(frame)`, `__len__()`, and optionally `is_dirty(frame)` and
//! `check_invariants()`. Each call attaches to the interpreter (the simulation itself runs
//! detached), so a Python policy sees exactly the call sequence of a Rust one.
//!
//! What a Python policy answers is checked before the buffer acts on it, since a mistake there
//! would otherwise corrupt the buffer: every victim must be a buffered frame, named once; at
//! least one is named unless the incoming page bypasses the buffer; a padded block
//! (`pad=(first_page, pages)`) starts at a multiple of its size, holds every victim's page and
//! has every one of its buffered pages among the victims. The first mistake or Python exception
//! stops the run; [`Failure`] keeps it for the binding to raise.

use std::sync::{Arc, Mutex};

use flashbuf_policy::params::{ParamDoc, PolicyParams};
use flashbuf_policy::{Access, BlockPad, EvictError, Evictions, FrameId, Pins, Replacer};
use pyo3::prelude::*;
use pyo3::types::PyInt;

/// The largest block a Python policy may pad.
const MAX_PAD_PAGES: u32 = 1 << 20;

/// What an access looks like to a Python policy.
#[pyclass(frozen, name = "Access", module = "flashbuf")]
pub struct PyAccess {
    /// The page accessed.
    #[pyo3(get)]
    page: u64,
    /// `True` for a write (the buffered page becomes dirty).
    #[pyo3(get)]
    is_write: bool,
    /// The 0-based position of the request in the trace (virtual time).
    #[pyo3(get)]
    time: u64,
}

#[pymethods]
impl PyAccess {
    fn __repr__(&self) -> String {
        format!(
            "Access(page={}, is_write={}, time={})",
            self.page,
            if self.is_write { "True" } else { "False" },
            self.time
        )
    }
}

/// The first thing that stopped a Python policy's run.
#[derive(Debug)]
pub enum Failure {
    /// The policy raised this exception; the text says in which call.
    Python(PyErr, String),
    /// The policy broke the replacer contract.
    Contract(String),
}

/// Where a run's Python policy records its failure, shared with the binding.
pub type FailureSlot = Arc<Mutex<Option<Failure>>>;

/// The "parameters" of a Python policy: the factory called with the number of frames, which
/// returns the policy object, and where its failure goes.
#[derive(Clone, Default)]
pub struct PyPolicyConfig {
    factory: Option<Arc<Py<PyAny>>>,
    label: String,
    failure: FailureSlot,
}

impl PyPolicyConfig {
    /// A configuration calling `factory(capacity)`; `label` names the policy in messages.
    pub fn new(factory: Py<PyAny>, label: String, failure: FailureSlot) -> Self {
        PyPolicyConfig { factory: Some(Arc::new(factory)), label, failure }
    }
}

impl PartialEq for PyPolicyConfig {
    fn eq(&self, other: &Self) -> bool {
        let same = match (&self.factory, &other.factory) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        same && self.label == other.label
    }
}

impl std::fmt::Debug for PyPolicyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyPolicyConfig").field("label", &self.label).finish_non_exhaustive()
    }
}

impl PolicyParams for PyPolicyConfig {
    const KEYS: &'static [ParamDoc] = &[];

    fn set(&mut self, key: &str, _value: &str) -> Result<(), String> {
        Err(format!("unknown parameter '{key}' (a Python policy takes its parameters in Python)"))
    }

    fn values(&self) -> Vec<String> {
        Vec::new()
    }
}

/// What `victims()` answered: frames, the padded block `(first_page, pages)`, bypass.
type Answer = (Vec<i128>, Option<(i128, i128)>, bool);

/// A Python policy as the simulator sees it (see the module documentation).
pub struct PyReplacer {
    obj: Option<Py<PyAny>>,
    label: String,
    /// Page held by each frame, valid where `held` is set.
    pages: Vec<u64>,
    held: Vec<bool>,
    tracked: usize,
    /// Scratch marks for duplicate victims (cleared after each call).
    named: Vec<bool>,
    failure: FailureSlot,
    failed: bool,
}

impl PyReplacer {
    fn fail(&mut self, f: Failure) {
        self.failed = true;
        self.record(f);
    }

    /// Keeps `f` unless a failure is already kept (for `&self` calls, which cannot set `failed`;
    /// the run goes on, and the binding raises the failure when it ends).
    fn record(&self, f: Failure) {
        let mut slot = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(f);
        }
    }

    /// Calls `method(*args)` on the policy object, recording an exception.
    fn call<'py, A>(
        &mut self,
        py: Python<'py>,
        method: &str,
        args: A,
        what: impl FnOnce() -> String,
    ) -> Option<Bound<'py, PyAny>>
    where
        A: pyo3::call::PyCallArgs<'py>,
    {
        if self.failed {
            return None;
        }
        let obj = self.obj.as_ref()?.bind(py).clone();
        match obj.call_method1(method, args) {
            Ok(v) => Some(v),
            Err(e) => {
                self.fail(Failure::Python(e, what()));
                None
            }
        }
    }

    fn access<'py>(py: Python<'py>, a: &Access) -> PyResult<Bound<'py, PyAccess>> {
        Bound::new(py, PyAccess { page: a.page, is_write: a.kind.is_write(), time: a.time })
    }

    fn contract(&mut self, message: String) -> Result<(), EvictError> {
        let label = self.label.clone();
        self.fail(Failure::Contract(format!("policy {label}: {message}")));
        Err(EvictError::Empty)
    }

    /// Reads `victims()`'s answer: an int, a sequence of ints, or an object with `victims`,
    /// `pad` and `bypass` attributes (`flashbuf.Evictions`).
    fn parse_answer(answer: &Bound<'_, PyAny>) -> PyResult<Answer> {
        if answer.is_instance_of::<PyInt>() {
            return Ok((vec![answer.extract::<i128>()?], None, false));
        }
        if answer.hasattr("victims")? && answer.hasattr("bypass")? {
            let victims: Vec<i128> = answer.getattr("victims")?.extract()?;
            let pad: Option<(i128, i128)> = answer.getattr("pad")?.extract()?;
            let bypass: bool = answer.getattr("bypass")?.extract()?;
            return Ok((victims, pad, bypass));
        }
        Ok((answer.extract::<Vec<i128>>()?, None, false))
    }
}

impl Replacer for PyReplacer {
    type Config = PyPolicyConfig;

    fn new(capacity: usize, config: &PyPolicyConfig) -> Self {
        let mut r = PyReplacer {
            obj: None,
            label: config.label.clone(),
            pages: vec![0; capacity],
            held: vec![false; capacity],
            tracked: 0,
            named: vec![false; capacity],
            failure: config.failure.clone(),
            failed: false,
        };
        match &config.factory {
            None => r.fail(Failure::Contract(format!("policy {}: no Python policy was given", r.label))),
            Some(factory) => {
                let made = Python::attach(|py| factory.bind(py).call1((capacity,)).map(Bound::unbind));
                match made {
                    Ok(obj) => r.obj = Some(obj),
                    Err(e) => r.fail(Failure::Python(e, format!("creating the policy for {capacity} frames"))),
                }
            }
        }
        r
    }

    fn on_hit(&mut self, frame: FrameId, access: &Access) {
        if self.failed {
            return;
        }
        Python::attach(|py| match Self::access(py, access) {
            Ok(a) => {
                self.call(py, "on_hit", (frame, a), || format!("on_hit(frame={frame}) at request {}", access.time));
            }
            Err(e) => self.fail(Failure::Python(e, "building an Access".into())),
        });
    }

    fn on_insert(&mut self, frame: FrameId, access: &Access) {
        let f = frame as usize;
        self.pages[f] = access.page;
        self.held[f] = true;
        self.tracked += 1;
        if self.failed {
            return;
        }
        Python::attach(|py| match Self::access(py, access) {
            Ok(a) => {
                self.call(py, "on_insert", (frame, a), || {
                    format!("on_insert(frame={frame}) at request {}", access.time)
                });
            }
            Err(e) => self.fail(Failure::Python(e, "building an Access".into())),
        });
    }

    fn victims<P: Pins + ?Sized>(
        &mut self,
        incoming: &Access,
        pins: &P,
        out: &mut Evictions,
    ) -> Result<(), EvictError> {
        if self.failed {
            return Err(EvictError::Empty);
        }
        let at = incoming.time;
        let answer = Python::attach(|py| {
            let a = match Self::access(py, incoming) {
                Ok(a) => a,
                Err(e) => {
                    self.fail(Failure::Python(e, "building an Access".into()));
                    return None;
                }
            };
            let answer = self.call(py, "victims", (a,), || format!("victims() at request {at}"))?;
            match Self::parse_answer(&answer) {
                Ok(parsed) => Some(parsed),
                Err(e) => {
                    let got = answer.repr().map(|r| r.to_string()).unwrap_or_default();
                    self.fail(Failure::Contract(format!(
                        "policy {}: victims() at request {at} returned {got}, which is neither a frame number, a \
                         list of frame numbers nor a flashbuf.Evictions ({e})",
                        self.label
                    )));
                    None
                }
            }
        });
        let Some((victims, pad, bypass)) = answer else { return Err(EvictError::Empty) };
        let capacity = self.held.len();
        let mut frames: Vec<FrameId> = Vec::with_capacity(victims.len());
        let mut problem = None;
        for &v in &victims {
            let ok = usize::try_from(v).ok().filter(|&f| f < capacity);
            let Some(f) = ok else {
                problem = Some(format!("frame {v} does not exist (frames are 0..{capacity})"));
                break;
            };
            if !self.held[f] {
                problem = Some(format!("frame {v} holds no page ({} of {capacity} frames are buffered)", self.tracked));
                break;
            }
            if std::mem::replace(&mut self.named[f], true) {
                problem = Some(format!("frame {v} is named twice"));
                break;
            }
            frames.push(f as FrameId);
        }
        for &f in &frames {
            self.named[f as usize] = false;
        }
        if problem.is_none() && frames.is_empty() && !bypass {
            problem = Some("no victim named (name at least one frame, or set bypass)".into());
        }
        let mut block = None;
        if problem.is_none()
            && let Some((first, pages)) = pad
        {
            match (u64::try_from(first), u32::try_from(pages)) {
                (Ok(first), Ok(pages))
                    if (1..=MAX_PAD_PAGES).contains(&pages) && first.is_multiple_of(u64::from(pages)) =>
                {
                    let end = first.saturating_add(u64::from(pages));
                    if let Some(&f) = frames.iter().find(|&&f| !(first..end).contains(&self.pages[f as usize])) {
                        problem = Some(format!(
                            "victim frame {f} holds page {}, outside the padded block {first}..{end}",
                            self.pages[f as usize]
                        ));
                    } else if let Some(p) =
                        (first..end).find(|&p| pins.frame_of(p).is_some_and(|f| !frames.contains(&f)))
                    {
                        problem = Some(format!(
                            "page {p} of the padded block {first}..{end} is buffered in frame {} but not among the \
                             victims (a padded block is written whole: name every buffered page of it)",
                            pins.frame_of(p).unwrap_or_default()
                        ));
                    } else {
                        block = Some(BlockPad { first_page: first, pages });
                    }
                }
                _ => {
                    problem = Some(format!(
                        "pad=({first}, {pages}): a block is (first_page, pages) with 1 <= pages <= \
                         {MAX_PAD_PAGES} and first_page a multiple of pages"
                    ))
                }
            }
        }
        if let Some(p) = problem {
            return self.contract(format!("victims() at request {at}: {p}"));
        }
        for &f in &frames {
            self.held[f as usize] = false;
        }
        self.tracked -= frames.len();
        out.victims.extend_from_slice(&frames);
        out.pad = block;
        out.bypass = bypass;
        Ok(())
    }

    fn remove(&mut self, frame: FrameId) {
        if self.held[frame as usize] {
            self.held[frame as usize] = false;
            self.tracked -= 1;
        }
        Python::attach(|py| {
            self.call(py, "remove", (frame,), || format!("remove(frame={frame})"));
        });
    }

    fn len(&self) -> usize {
        if self.failed {
            return self.tracked;
        }
        let Some(obj) = &self.obj else { return self.tracked };
        match Python::attach(|py| obj.bind(py).len()) {
            Ok(n) => n,
            Err(e) => {
                self.record(Failure::Python(e, "__len__()".into()));
                self.tracked
            }
        }
    }

    fn is_dirty(&self, frame: FrameId) -> Option<bool> {
        let obj = self.obj.as_ref().filter(|_| !self.failed)?;
        let answer = Python::attach(|py| {
            obj.bind(py).call_method1("is_dirty", (frame,)).and_then(|v| v.extract::<Option<bool>>())
        });
        answer.unwrap_or_else(|e| {
            self.record(Failure::Python(e, format!("is_dirty(frame={frame})")));
            None
        })
    }

    fn check_invariants(&self) -> Result<(), String> {
        if self.failed {
            return Err(format!("policy {} failed", self.label));
        }
        let Some(obj) = &self.obj else { return Ok(()) };
        let label = &self.label;
        Python::attach(|py| {
            let len = obj.bind(py).len().map_err(|e| format!("policy {label}: __len__() raised {e}"))?;
            if len != self.tracked {
                return Err(format!(
                    "policy {label}: __len__() is {len} but the policy was given {} frames it has not released",
                    self.tracked
                ));
            }
            match obj.bind(py).call_method0("check_invariants") {
                Err(e) => Err(format!("policy {label}: check_invariants() raised {e}")),
                Ok(v) if v.is_none() => Ok(()),
                Ok(v) => Err(format!("policy {label}: {}", v.str().map(|s| s.to_string()).unwrap_or_default())),
            }
        })
    }
}
