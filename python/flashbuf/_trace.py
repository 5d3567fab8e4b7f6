"""Traces as numpy arrays: generated or read by flashbuf's generators and readers, built in
numpy, and run or written back as traces."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from . import _native

__all__ = ["Trace", "gen", "read_trace"]


def _bool(v: Any) -> str:
    return "true" if v is True else "false" if v is False else str(v)


@dataclass(eq=False)
class Trace:
    """A trace held in memory as three columns of equal length.

    * ``page``: page numbers (``uint64``; neighbouring numbers are neighbouring pages);
    * ``is_write``: ``True`` for a write (``bool``);
    * ``time_us``: timestamps in microseconds (``float64``, NaN where a request has none), or
      ``None`` when no request has one;
    * ``label``: the trace's name in result rows.

    Build one from any array-likes (``Trace(page=..., is_write=...)``); the columns are
    converted and checked. :func:`flashbuf.run` accepts a ``Trace`` wherever it accepts a trace
    file, and runs it exactly as it would run the file :meth:`write` makes of it.
    """

    page: np.ndarray
    is_write: np.ndarray
    time_us: Optional[np.ndarray] = None
    label: str = "numpy"

    def __post_init__(self) -> None:
        page = np.asarray(self.page)
        if page.ndim != 1:
            raise ValueError(f"page must be one-dimensional, not of shape {page.shape}")
        if page.dtype.kind == "f":
            if not np.all(np.isfinite(page)) or np.any(page != np.floor(page)):
                raise ValueError("page must hold whole numbers")
        elif page.dtype.kind not in "iu" and page.size:
            raise TypeError(f"page must hold integers, not {page.dtype}")
        if page.dtype.kind in "if" and page.size and page.min() < 0:
            raise ValueError(f"page must be non-negative; page[{int(np.argmin(page))}] = {page.min()}")
        self.page = np.ascontiguousarray(page, dtype=np.uint64)
        is_write = np.asarray(self.is_write)
        if is_write.shape != self.page.shape:
            raise ValueError(f"is_write has {is_write.size} entries, page has {self.page.size}")
        if is_write.dtype != np.bool_:
            if is_write.size and not np.all((is_write == 0) | (is_write == 1)):
                raise ValueError("is_write must hold booleans (or 0 and 1)")
        self.is_write = np.ascontiguousarray(is_write, dtype=np.bool_)
        if self.time_us is not None:
            t = np.ascontiguousarray(self.time_us, dtype=np.float64)
            if t.shape != self.page.shape:
                raise ValueError(f"time_us has {t.size} entries, page has {self.page.size}")
            known = t[~np.isnan(t)]
            if known.size and (known.min() < 0 or np.any(known != np.floor(known))):
                raise ValueError("time_us must hold whole, non-negative microseconds (NaN for none)")
            self.time_us = t
        if not isinstance(self.label, str) or not self.label:
            raise ValueError("label must be a non-empty string")

    def __len__(self) -> int:
        return int(self.page.size)

    def __repr__(self) -> str:
        writes = int(self.is_write.sum())
        return (
            f"Trace({self.label!r}: {len(self)} requests, {writes} writes, "
            f"{'with' if self.time_us is not None else 'no'} timestamps)"
        )

    def to_frame(self):
        """The trace as a DataFrame with columns ``page``, ``is_write`` and ``time_us``."""
        import pandas as pd

        columns = {"page": self.page, "is_write": self.is_write}
        if self.time_us is not None:
            columns["time_us"] = self.time_us
        return pd.DataFrame(columns)

    def write(self, path: Union[str, "os.PathLike[str]"], force: bool = False) -> int:
        """Writes the trace to ``path`` (flashbuf text for ``.txt``, libCacheSim's
        oracleGeneral for ``.oracleGeneral``, flashbuf's binary format otherwise, as
        ``flashbuf gen -o`` does); never over an existing file unless ``force``. Returns the
        number of requests written."""
        time = None if self.time_us is None else self.time_us.astype("<f8").tobytes()
        return _native.write_trace(
            os.fspath(path),
            self.page.astype("<u8").tobytes(),
            self.is_write.astype(np.uint8).tobytes(),
            time,
            force,
        )

    def digest(self) -> str:
        """A fingerprint of the requests (16 hexadecimal digits)."""
        h = hashlib.blake2b(digest_size=8)
        h.update(self.page.astype("<u8").tobytes())
        h.update(self.is_write.tobytes())
        if self.time_us is not None:
            h.update(self.time_us.astype("<f8").tobytes())
        return h.hexdigest()


def _of_columns(columns, label: str) -> Trace:
    page, is_write, time_us, _label = columns
    t = np.frombuffer(time_us, dtype="<f8")
    return Trace(
        page=np.frombuffer(page, dtype="<u8"),
        is_write=np.frombuffer(is_write, dtype=np.uint8).astype(np.bool_),
        time_us=None if np.all(np.isnan(t)) else t,
        label=label,
    )


def gen(
    kind: str,
    *,
    requests: Optional[int] = None,
    pages: Optional[int] = None,
    write_ratio: Optional[float] = None,
    locality: Optional[str] = None,
    seed: Optional[int] = None,
    **params: Any,
) -> Trace:
    """Generates a trace, as ``flashbuf gen`` does: ``kind`` is a generator (``uniform``,
    ``zipf``, ``self-similar``, ``scan-mix``) or a paper preset (``adlru-zipf``, ...; see
    ``flashbuf list``). Any other generator parameter is a keyword (``scan_length=500`` is
    ``scan-length=500``). Same seed, same trace, on every machine; the label is the
    generator's, as in result rows."""
    spec = str(kind)
    named = {"requests": requests, "pages": pages, "write-ratio": write_ratio, "locality": locality, "seed": seed}
    for key, value in list(named.items()) + [(k.replace("_", "-"), v) for k, v in params.items()]:
        if value is not None:
            spec += f",{key}={_bool(value)}"
    columns = _native.generate(spec)
    return _of_columns(columns, columns[3])


def read_trace(
    path: Union[str, "os.PathLike[str]"],
    *,
    page_size: int = 4096,
    format: str = "auto",
    volume: Optional[int] = None,
    time_unit: Optional[str] = None,
    columns: Optional[str] = None,
    label: Optional[str] = None,
) -> Trace:
    """Reads a trace file of any format flashbuf reads (compressed or not; ``FORMAT:PATH``
    names the format), with the reader options of ``flashbuf run`` (``page_size``, ``format``,
    ``volume``, ``time_unit``, ``columns``). Byte-addressed requests are split into pages. The
    label is the file name unless given."""
    arg = os.fspath(path)
    data = _native.read_trace(
        arg, page_size=page_size, format=format, volume=volume, time_unit=time_unit, columns=columns
    )
    return _of_columns(data, label or data[3])
