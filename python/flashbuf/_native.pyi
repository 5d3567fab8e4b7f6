"""Type stubs of flashbuf's native module (python/src). Use the package's API (flashbuf.run,
flashbuf.sweep, ...); these are its building blocks."""

import os
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

__version__: str

class FlashbufError(Exception):
    """An error of flashbuf, with the command line's message."""

class PolicyContractError(FlashbufError):
    """A Python policy broke the replacer contract."""

class Access:
    """One access as a Python policy sees it."""

    @property
    def page(self) -> int: ...
    @property
    def is_write(self) -> bool: ...
    @property
    def time(self) -> int: ...

_PolicyArg = Union[str, Tuple[Callable[[int], Any], str, str, Optional[int]]]
_Progress = Optional[Callable[[int, int], Any]]
_Columns = Tuple[bytearray, bytearray, bytearray, str]

def cores() -> int: ...
def run(
    traces: Sequence[Tuple[str, Optional[str], bool]],
    policies: Sequence[_PolicyArg],
    buffers: Sequence[str],
    devices: Sequence[str],
    *,
    preset: str,
    log_blocks: int,
    seq_log: bool,
    eager_merge: bool,
    gc: str,
    op_percent: float,
    gc_threshold: int,
    precondition: str,
    verify: bool,
    capacity: Optional[int],
    page_size: int,
    format: str,
    volume: Optional[int],
    time_unit: Optional[str],
    columns: Optional[str],
    write_miss: str,
    remap: str,
    warmup: str,
    interval: Optional[int],
    check: bool,
    final_flush: bool,
    cache: bool,
    jobs: Optional[int],
    progress: _Progress,
) -> str: ...
def generate(spec: str) -> _Columns: ...
def read_trace(
    arg: str,
    *,
    page_size: int,
    format: str,
    volume: Optional[int],
    time_unit: Optional[str],
    columns: Optional[str],
) -> _Columns: ...
def write_trace(
    path: Union[str, "os.PathLike[str]"], page: bytes, is_write: bytes, time_us: Optional[bytes], force: bool
) -> int: ...
def toml_of_dict(config: dict) -> str: ...
def sweep_dir(text: str, path: str, from_dict: bool) -> Path: ...
def plan_sweep(
    text: str, path: str, from_dict: bool, out: Optional[str], shard: Optional[Tuple[int, int]], mode: str
) -> SweepPlan: ...
def execute_json(spec_json: str) -> str: ...
def merge_sweep(text: str, path: str, from_dict: bool, shards: List[str], out: str, force: bool) -> int: ...

class SweepPlan:
    @property
    def dir(self) -> Path: ...
    def __len__(self) -> int: ...
    def open(self) -> SweepOutput: ...

class SweepOutput:
    def pending(self) -> List[int]: ...
    def pending_requests(self) -> int: ...
    def requests(self, index: int) -> int: ...
    def spec_json(self, index: int) -> str: ...
    def append(self, index: int, row_json: str) -> None: ...
    def run_local(self, jobs: int, progress: _Progress) -> None: ...
    def finish(self) -> Tuple[int, int, int, int, Path, Path]: ...
    def close(self) -> None: ...
