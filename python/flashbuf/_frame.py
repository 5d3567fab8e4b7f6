"""Result rows as pandas DataFrames: exactly the columns of the command line's CSV output
(``flashbuf run --output csv``, a sweep's ``results.csv``), each with a fixed type."""

from __future__ import annotations

import io
import os
from typing import Dict, Union

#: Every column of a result row, in the CSV's order, with its pandas type. Counts are
#: ``int64``; ``logical_pages`` is ``uint64`` (an ideal device sized as it goes has 2^64 - 1);
#: columns that may be empty are nullable (``Int64``) or ``float64`` with NaN.
COLUMNS: Dict[str, str] = {
    "trace": "string",
    "policy": "string",
    "policy_name": "string",
    "buffer_pages": "int64",
    "buffer_share": "float64",
    "footprint_pages": "Int64",
    "device": "string",
    "logical_pages": "uint64",
    "remap_extent_pages": "int64",
    "write_miss": "string",
    "warmup_requests": "int64",
    "interval": "Int64",
    "position": "int64",
    "requests": "int64",
    "read_requests": "int64",
    "write_requests": "int64",
    "hits": "int64",
    "misses": "int64",
    "hit_ratio": "float64",
    "page_reads": "int64",
    "fetches": "int64",
    "padding_reads": "int64",
    "page_writes": "int64",
    "evict_writes": "int64",
    "padding_writes": "int64",
    "bypass_writes": "int64",
    "flush_writes": "int64",
    "flash_reads": "int64",
    "flash_programs": "int64",
    "erases": "int64",
    "page_copies": "int64",
    "merges_switch": "int64",
    "merges_partial": "int64",
    "merges_full": "int64",
    "write_amplification": "float64",
    "erase_count_min": "int64",
    "erase_count_max": "int64",
    "erase_count_mean": "float64",
    "erase_count_std": "float64",
    "device_time_us": "float64",
    "elapsed_s": "float64",
    "cpu_s": "float64",
    "runtime_s": "float64",
    "requests_per_s": "float64",
    "run_id": "string",
    "write_bound": "Int64",
    "writes_over_bound": "float64",
    "time_bound_us": "float64",
    "time_over_bound": "float64",
}

#: The columns that measure the machine rather than the simulation (they differ between two
#: runs of the same simulation).
TIMING_COLUMNS = ("elapsed_s", "cpu_s", "runtime_s", "requests_per_s")


def frame_of_csv(text_or_path: Union[str, "os.PathLike[str]"], *, is_path: bool = False):
    """A DataFrame of result rows from CSV text (or a file, with ``is_path``)."""
    import pandas as pd

    source = text_or_path if is_path else io.StringIO(str(text_or_path))
    frame = pd.read_csv(source, dtype=COLUMNS, keep_default_na=False, na_values={c: [""] for c in COLUMNS})
    if list(frame.columns) != list(COLUMNS):
        raise ValueError(
            f"{text_or_path if is_path else 'result rows'}: the columns differ from flashbuf's result rows: "
            f"{list(frame.columns)}"
        )
    return frame


def read_results(path: Union[str, "os.PathLike[str]"]):
    """Reads a result file written by flashbuf (``flashbuf run --output csv -o FILE``, a
    sweep's ``results.csv``) into a DataFrame with the types of :data:`COLUMNS`."""
    return frame_of_csv(os.fspath(path), is_path=True)
