"""flashbuf from Python: flash-aware buffer replacement policies, simulated flash devices and
trace-driven simulation, with the command line's semantics.

* :func:`run` runs traces × policies × buffer sizes × devices, as ``flashbuf run`` does, and
  returns a pandas DataFrame with exactly the columns of its CSV output (:data:`COLUMNS`).
* :func:`gen` and :func:`read_trace` give traces as numpy arrays (:class:`Trace`), which
  :func:`run` accepts back.
* :func:`sweep` runs a sweep configuration (a TOML file or a dict, ``docs/sweeps.md``) into
  resumable result files, here on every core or on a Ray cluster (``backend="ray"``), and
  :func:`merge` puts the results of a sharded sweep together.
* :class:`Policy`: a replacement policy written in Python, run through the same simulator
  and devices as the built-in ones.

Errors of flashbuf are :class:`FlashbufError` with the command line's messages.
"""

from __future__ import annotations

import functools
import os
import tempfile
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple, Union

from . import _native
from ._frame import COLUMNS, TIMING_COLUMNS, frame_of_csv, read_results
from ._native import Access, FlashbufError, PolicyContractError
from ._trace import Trace, gen, read_trace
from .policy import Evictions, Policy

__all__ = [
    "Access",
    "COLUMNS",
    "DEFAULT_POLICIES",
    "Evictions",
    "FlashbufError",
    "Policy",
    "PolicyContractError",
    "TIMING_COLUMNS",
    "Trace",
    "gen",
    "merge",
    "read_results",
    "read_trace",
    "run",
    "sweep",
]

__version__ = _native.__version__

#: The policies ``flashbuf run`` compares when none is given.
DEFAULT_POLICIES = "lru,arc,cflru,lru-wsr,ccf-lru,cflru-c,ad-lru,cfdc,min"

TraceLike = Union[str, "os.PathLike[str]", Trace, Tuple[Any, ...]]
PolicyLike = Union[str, type, Callable[[int], Policy]]


def _progress(progress: Union[bool, Callable[[int, int], Any]], unit: str = "req"):
    """A callback ``(done, total)`` for the native code: a tqdm bar (``True``, in notebooks the
    widget), the user's own callable, or nothing."""
    if progress is False or progress is None:
        return None, None
    if callable(progress):
        return progress, None
    try:
        from tqdm.auto import tqdm
    except ImportError as e:  # pragma: no cover - tqdm is a dependency of the notebook extra
        raise ImportError("progress=True needs tqdm: pip install tqdm (or flashbuf[notebook])") from e
    bar = tqdm(total=0, unit=unit, unit_scale=True, leave=False)

    def update(done: int, total: int) -> None:
        if bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    return update, bar


def _policy_label(make: Any) -> Tuple[str, str, Optional[int]]:
    """(label, name, block pages) of a Python policy given as a class or a factory."""
    if isinstance(make, functools.partial):
        base_label, name, block = _policy_label(make.func)
        params = ",".join(f"{k}={v}" for k, v in make.keywords.items())
        return (f"{base_label}:{params}" if params else base_label), name, block
    name = getattr(make, "name", None) or getattr(make, "__name__", None) or type(make).__name__
    block = getattr(make, "block_pages", None)
    if block is not None and (not isinstance(block, int) or block < 1):
        raise ValueError(f"policy {name}: block_pages must be a positive whole number of pages, not {block!r}")
    return str(name), str(name), block


def _policy_factory(make: Callable[[int], Any], label: str) -> Callable[[int], Policy]:
    def build(capacity: int) -> Policy:
        policy = make(capacity)
        if not isinstance(policy, Policy):
            raise TypeError(
                f"policy {label}: {make!r}({capacity}) returned a {type(policy).__name__}, not a flashbuf.Policy"
            )
        return policy

    return build


def _policies(policies: Union[PolicyLike, Sequence[PolicyLike]]) -> list:
    single = isinstance(policies, (str, type, Policy)) or callable(policies)
    if not single and not isinstance(policies, Iterable):
        raise TypeError(f"policies: {policies!r} is neither a policy, a policy list nor a list of policies")
    items = [policies] if single else list(policies)
    out: list = []
    for p in items:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, Policy):
            raise TypeError(
                f"policies: pass the class {type(p).__name__}, not an instance: flashbuf builds one per run, with "
                "the run's number of frames"
            )
        elif isinstance(p, type) and not issubclass(p, Policy):
            raise TypeError(f"policies: {p.__name__} is not a subclass of flashbuf.Policy")
        elif callable(p):
            label, name, block = _policy_label(p)
            out.append((_policy_factory(p, label), label, name, block))
        else:
            raise TypeError(
                f"policies: {p!r} is neither a policy list such as 'lru,cflru:w=0.5' nor a flashbuf.Policy subclass"
            )
    if not out:
        raise ValueError("policies: no policy given")
    return out


def _strings(value: Any, what: str) -> List[str]:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, Iterable):
        items = list(value)
        for v in items:
            if isinstance(v, bool) or not isinstance(v, (str, int)):
                raise TypeError(f"{what}: {v!r} is neither a number nor a string")
        return [str(v) for v in items]
    raise TypeError(f"{what}: {value!r} is neither a number, a string nor a list of them")


def _traces(trace: Any, tmp: str) -> List[Tuple[str, Optional[str], bool]]:
    single = isinstance(trace, (str, os.PathLike, Trace, tuple))
    out = []
    for t in [trace] if single else list(trace):
        if isinstance(t, tuple):
            t = Trace(*t)
        if isinstance(t, Trace):
            # Run exactly as the file it makes (its name, hence the run's identity, follows the
            # requests); the summary cache is left alone for such temporary files.
            path = os.path.join(tmp, f"trace-{t.digest()}.fbt")
            if not os.path.exists(path):
                t.write(path)
            out.append((f"binary:{path}", t.label, False))
        elif isinstance(t, (str, os.PathLike)):
            out.append((os.fspath(t), None, True))
        else:
            raise TypeError(f"trace: {t!r} is neither a trace specification, a path nor a flashbuf.Trace")
    if not out:
        raise ValueError("trace: no trace given")
    return out


def _optional_str(value: Any, what: str) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a string, not {value!r}")
    return value


def run(
    trace: Union[TraceLike, Sequence[TraceLike]] = "gen:adlru-zipf",
    policies: Union[PolicyLike, Sequence[PolicyLike]] = DEFAULT_POLICIES,
    buffers: Union[int, str, Sequence[Union[int, str]]] = "512,1024,2048,4096,8192",
    device: Union[str, Sequence[str]] = "page",
    *,
    preset: str = "micron",
    log_blocks: int = 8,
    seq_log: bool = True,
    eager_merge: bool = False,
    gc: str = "greedy",
    op_percent: float = 7.0,
    gc_threshold: int = 2,
    precondition: str = "sequential",
    verify: bool = False,
    capacity: Optional[int] = None,
    page_size: int = 4096,
    format: str = "auto",
    volume: Optional[int] = None,
    time_unit: Optional[str] = None,
    columns: Optional[str] = None,
    write_miss: str = "fetch",
    remap: str = "auto",
    warmup: Union[int, str] = 0,
    interval: Optional[int] = None,
    check: bool = False,
    final_flush: bool = True,
    cache: bool = True,
    jobs: Optional[int] = None,
    progress: Union[bool, Callable[[int, int], Any]] = False,
):
    """Runs every trace × device × policy × buffer size, as ``flashbuf run`` does, and returns
    one row per run (one per interval with ``interval``) as a DataFrame with exactly the
    columns of ``flashbuf run --output csv`` (:data:`COLUMNS`), in the same order.

    Arguments take what the command line's options take, with the same defaults:

    * ``trace``: a trace file (format detected; ``FORMAT:PATH`` names it), a generator
      (``"gen:adlru-zipf"``, ``"gen:zipf,requests=100000,pages=10000"``), a :class:`Trace`
      (or a tuple ``(page, is_write[, time_us])`` of arrays), or a list of these;
    * ``policies``: a policy list (``"lru,cflru:w=0.25"``), a :class:`Policy` subclass, a
      factory ``capacity -> Policy`` (``functools.partial(MyPolicy, w=0.5)``), or a list of
      these;
    * ``buffers``: pages (``4096``), bytes (``"16MB"``, divided by ``page_size``) or a share of
      the trace's distinct pages (``"5%"``), as a list or a comma-separated string;
    * ``device``: ``page``, ``block``, ``bast``, ``fast``, ``ideal``, or a list; the device
      options (``preset``, ``log_blocks``, ``seq_log``, ``eager_merge``, ``gc``,
      ``op_percent``, ``gc_threshold``, ``precondition``, ``verify``, ``capacity``) are those
      of ``flashbuf run`` (``seq_log=False`` is ``--no-seq-log``);
    * trace reading: ``page_size``, ``format``, ``volume``, ``time_unit``, ``columns``;
    * ``write_miss`` (``"fetch"``, ``"no-fetch"``), ``remap`` (``"auto"``, ``"on"``, ``"off"``),
      ``warmup`` (requests, or ``"10%"``), ``interval``, ``check``, ``final_flush``, ``cache``
      (the trace summary cache), ``jobs`` (threads; default one per core);
    * ``progress``: ``True`` shows a progress bar (a widget in notebooks; needs tqdm), or a
      callable receiving ``(requests simulated, total)``.

    The simulation runs without holding the GIL; Ctrl-C stops it after the runs in flight.
    """
    if isinstance(warmup, bool) or not isinstance(warmup, (int, str)):
        raise TypeError(f"warmup: expected a number of requests or a percentage such as '10%', not {warmup!r}")
    if interval is not None and (isinstance(interval, bool) or not isinstance(interval, int) or interval < 1):
        raise ValueError(f"interval: expected a positive number of requests, not {interval!r}")
    callback, bar = _progress(progress)
    try:
        with tempfile.TemporaryDirectory(prefix="flashbuf-") as tmp:
            text = _native.run(
                _traces(trace, tmp),
                _policies(policies),
                _strings(buffers, "buffers"),
                _strings(device, "device"),
                preset=preset,
                log_blocks=log_blocks,
                seq_log=seq_log,
                eager_merge=eager_merge,
                gc=gc,
                op_percent=float(op_percent),
                gc_threshold=gc_threshold,
                precondition=precondition,
                verify=verify,
                capacity=capacity,
                page_size=page_size,
                format=format,
                volume=volume,
                time_unit=_optional_str(time_unit, "time_unit"),
                columns=_optional_str(columns, "columns"),
                write_miss=write_miss,
                remap=remap,
                warmup=str(warmup),
                interval=interval,
                check=check,
                final_flush=final_flush,
                cache=cache,
                jobs=jobs,
                progress=callback,
            )
    finally:
        if bar is not None:
            bar.close()
    return frame_of_csv(text)


def _config(config: Union[str, "os.PathLike[str]", dict]) -> Tuple[str, str, bool]:
    """(TOML text, path naming it, whether it came from a dict)."""
    if isinstance(config, dict):
        return _native.toml_of_dict(config), "sweep.toml", True
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(), path, False
        except OSError as e:
            raise FlashbufError(f"cannot read {path}: {e.strerror or e}") from None
    raise TypeError(f"config: expected a TOML file's path or a dict, not {config!r}")


def _shard(shard: Union[None, str, Tuple[int, int]]) -> Optional[Tuple[int, int]]:
    if shard is None:
        return None
    if isinstance(shard, str):
        try:
            i, n = (int(x) for x in shard.split("/"))
        except ValueError:
            raise ValueError(f"shard {shard}: expected I/N with 1 <= I <= N, e.g. 3/8") from None
        return i, n
    i, n = shard
    return int(i), int(n)


def sweep(
    config: Union[str, "os.PathLike[str]", dict],
    *,
    out: Union[None, str, "os.PathLike[str]"] = None,
    backend: str = "local",
    jobs: Optional[int] = None,
    resume: bool = False,
    force: bool = False,
    shard: Union[None, str, Tuple[int, int]] = None,
    address: Optional[str] = None,
    progress: Union[bool, Callable[[int, int], Any]] = False,
):
    """Runs a sweep (``docs/sweeps.md``): ``config`` is a TOML file or a dict of the same keys
    (``{"traces": [...], "policies": [...], "buffers": [...], ...}``; list-valued keys of a table
    multiply in the dict's order). Results stream to ``results.csv`` and ``results.jsonl`` in
    ``out`` (default: the configuration's ``output``, else ``<name>-results`` — ``sweep-results``
    for a dict — in the current directory), as ``flashbuf sweep`` writes them; returns the
    sweep's rows, in plan order, as a DataFrame (:data:`COLUMNS`).

    * ``resume=True`` keeps the runs the files hold and runs the others; ``force=True``
      replaces the files; by default existing files are an error.
    * ``backend="local"`` runs on ``jobs`` threads (default: one per core); ``backend="ray"``
      runs every run as a Ray task on the cluster ``ray.init(address=address)`` connects to
      (a local one without ``address``; an initialised Ray is used as it is). Trace files
      are read by each worker at the path the configuration gives: the cluster must share it.
      Rows are appended as tasks finish, so an interrupted Ray sweep resumes like a local one.
    * ``shard="I/N"`` runs every N-th run from the I-th into ``out/shard-I-of-N`` (job
      arrays); :func:`merge` puts the shards together.
    """
    text, path, from_dict = _config(config)
    if resume and force:
        raise ValueError("resume and force exclude each other")
    mode = "resume" if resume else "overwrite" if force else "new"
    if backend not in ("local", "ray"):
        raise ValueError(f"backend: expected 'local' or 'ray', not {backend!r}")
    plan = _native.plan_sweep(
        text, path, from_dict, None if out is None else os.fspath(out), _shard(shard), mode
    )
    output = plan.open()
    callback, bar = _progress(progress)
    try:
        if backend == "ray":
            from ._ray import run_on_ray

            run_on_ray(output, address, callback)
        else:
            threads = jobs if jobs and jobs > 0 else _native.cores()
            output.run_local(min(threads, _native.cores()), callback)
        planned, _skipped, _executed, _dropped, csv, _jsonl = output.finish()
    except FlashbufError as e:
        output.close()
        raise FlashbufError(
            f"{e}; the finished runs are in {plan.dir}; flashbuf.sweep(..., resume=True) completes the sweep"
        ) from None
    except BaseException:
        output.close()
        raise
    finally:
        if bar is not None:
            bar.close()
    return read_results(csv).iloc[:planned].reset_index(drop=True)


def merge(
    config: Union[str, "os.PathLike[str]", dict],
    shards: Optional[Sequence[Union[str, "os.PathLike[str]"]]] = None,
    *,
    out: Union[None, str, "os.PathLike[str]"] = None,
    force: bool = False,
):
    """Merges the results of a sharded sweep (``shards``: their directories; default: every
    ``shard-*`` directory of the output directory) into the files the unsharded sweep writes,
    as ``flashbuf sweep merge`` does; returns the merged rows as a DataFrame."""
    text, path, from_dict = _config(config)
    if out is None:
        out = _native.sweep_dir(text, path, from_dict)
    out = os.fspath(out)
    if shards is None:
        found = sorted(
            os.path.join(out, d) for d in (os.listdir(out) if os.path.isdir(out) else []) if d.startswith("shard-")
        )
        if not found:
            raise FlashbufError(f"{out}: no shard-* directories to merge")
        shards = found
    _native.merge_sweep(text, path, from_dict, [os.fspath(s) for s in shards], out, force)
    return read_results(os.path.join(out, "results.csv"))
