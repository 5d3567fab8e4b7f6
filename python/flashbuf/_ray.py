"""The Ray backend of :func:`flashbuf.sweep`: every pending run of a sweep is one Ray task.

The driver (this process) plans the sweep and holds its result files. Each run travels to a
task as JSON (``flashbuf_sim::wire``: the trace's specification, read options, policy,
buffer, device, every option); the task executes it with ``flashbuf_sim::execute`` — the code
path of a local run — and returns its row as JSON, which the driver appends to the files as
soon as the task finishes. So the files are those of a local sweep: resumable, and rewritten
in plan order when every run is done. Trace files are read by the workers at the paths the
configuration gives; the cluster must share them (generators need nothing).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Optional

_TASK = None


def _execute(spec_json: str) -> str:
    from flashbuf import _native

    return _native.execute_json(spec_json)


def run_on_ray(output: Any, address: Optional[str], progress: Optional[Callable[[int, int], Any]]) -> None:
    """Runs the pending runs of ``output`` (a ``_native.SweepOutput``) as Ray tasks, appending
    each row as its task finishes."""
    global _TASK
    try:
        import ray
    except ImportError as e:
        raise ImportError('backend="ray" needs Ray: pip install ray (or flashbuf[ray])') from e
    from . import FlashbufError

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING)
    if _TASK is None:
        _TASK = ray.remote(num_cpus=1, max_retries=0)(_execute)
    pending = output.pending()
    total = output.pending_requests()
    done_requests = 0
    requests = {i: output.requests(i) for i in pending}
    refs: Dict[Any, int] = {_TASK.remote(output.spec_json(i)): i for i in pending}
    try:
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=0.5)
            for ref in ready:
                index = refs.pop(ref)
                try:
                    row = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    cause = getattr(e, "cause", None)
                    if isinstance(cause, FlashbufError):
                        raise FlashbufError(str(cause)) from None
                    raise
                output.append(index, row)
                done_requests += requests[index]
            if progress is not None:
                progress(done_requests, total)
    finally:
        for ref in refs:
            ray.cancel(ref, force=True)

