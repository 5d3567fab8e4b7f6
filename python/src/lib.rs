//! `flashbuf._native`: the Python bindings of flashbuf. Thin by design: every function converts
//! Python values into the flashbuf crates' types, calls them, and converts the results and
//! errors back. The Python package (`python/flashbuf/`) wraps these in the documented API
//! (`flashbuf.run`, `flashbuf.sweep`, `flashbuf.gen`, `flashbuf.Policy`, ...).
//!
//! * Simulations run detached from the interpreter (other Python threads run meanwhile) on a
//!   worker thread, while the calling thread reports progress and watches for Ctrl-C
//!   ([`background`]).
//! * Errors are `flashbuf.FlashbufError` with the command line's message.
//! * A policy written in Python runs through [`policy::PyReplacer`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

mod policy;
mod run;
mod sweep;
mod traces;

create_exception!(
    _native,
    FlashbufError,
    PyException,
    "An error of flashbuf: bad input (a trace, a policy, a buffer size, a device, a sweep configuration) or a run \
     that could not complete; the message is the command line's."
);
create_exception!(
    _native,
    PolicyContractError,
    FlashbufError,
    "A policy written in Python broke the replacer contract (a victim that is not buffered, named twice, a padded \
     block that leaves a buffered page behind, ...)."
);

/// A `FlashbufError` with `message`.
pub(crate) fn error(message: impl Into<String>) -> PyErr {
    FlashbufError::new_err(message.into())
}

/// Runs `work` on a worker thread, detached from the interpreter, while this thread calls
/// `progress(done, total)` every tenth of a second with the count `work` keeps in its first
/// argument, and turns Ctrl-C into a stop request (the second argument) followed by
/// `KeyboardInterrupt` once `work` has returned.
pub(crate) fn background<T: Send>(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    total: u64,
    work: impl FnOnce(&AtomicU64, &AtomicBool) -> T + Send,
) -> PyResult<T> {
    let done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let mut interrupted: Option<PyErr> = None;
    let mut reported = u64::MAX;
    let out = std::thread::scope(|s| -> PyResult<T> {
        let worker = s.spawn(|| work(&done, &stop));
        loop {
            let finished = py.detach(|| {
                for _ in 0..20 {
                    if worker.is_finished() {
                        return true;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                worker.is_finished()
            });
            if interrupted.is_none()
                && let Err(e) = py.check_signals()
            {
                stop.store(true, Ordering::Relaxed);
                interrupted = Some(e);
            }
            let now = done.load(Ordering::Relaxed);
            if let Some(p) = progress
                && now != reported
            {
                reported = now;
                if let Err(e) = p.call1((now, total)) {
                    stop.store(true, Ordering::Relaxed);
                    interrupted.get_or_insert(e);
                }
            }
            if finished {
                break;
            }
        }
        match worker.join() {
            Ok(v) => Ok(v),
            Err(_) => Err(error("a flashbuf worker thread panicked (a bug: please report it)")),
        }
    })?;
    match interrupted {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // Named after the package that exports them, so that they pickle (Ray sends them back from
    // its workers).
    for t in [py.get_type::<FlashbufError>(), py.get_type::<PolicyContractError>()] {
        t.setattr("__module__", "flashbuf")?;
    }
    m.add("FlashbufError", py.get_type::<FlashbufError>())?;
    m.add("PolicyContractError", py.get_type::<PolicyContractError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<policy::PyAccess>()?;
    run::register(m)?;
    traces::register(m)?;
    sweep::register(m)?;
    Ok(())
}
