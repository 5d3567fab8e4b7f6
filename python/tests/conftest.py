"""Shared fixtures: the command-line program (to compare with), small traces, reference
policies written in Python."""

from __future__ import annotations

import io
import os
import subprocess
from collections import OrderedDict
from pathlib import Path

import pytest

import flashbuf

REPO = Path(__file__).resolve().parents[2]


def _find_cli() -> str:
    """The `flashbuf` program: $FLASHBUF_BIN, else the one `cargo test` / `cargo build` left in
    target/, else built now."""
    env = os.environ.get("FLASHBUF_BIN")
    if env:
        return env
    for profile in ("debug", "release"):
        p = REPO / "target" / profile / "flashbuf"
        if p.exists():
            return str(p)
    subprocess.run(["cargo", "build", "--quiet", "--bin", "flashbuf"], cwd=REPO, check=True)
    return str(REPO / "target" / "debug" / "flashbuf")


@pytest.fixture(scope="session")
def cli():
    """Runs the command line; returns the completed process (text)."""
    program = _find_cli()

    def run(*args: str, check: bool = True, cwd=None) -> subprocess.CompletedProcess:
        env = dict(os.environ, FLASHBUF_CACHE_DIR=os.environ.get("FLASHBUF_CACHE_DIR", ""))
        p = subprocess.run([program, *args], capture_output=True, text=True, cwd=cwd, env=env)
        if check and p.returncode != 0:
            raise AssertionError(f"flashbuf {' '.join(args)} failed: {p.stderr}")
        return p

    return run


@pytest.fixture(scope="session")
def cli_rows(cli):
    """`flashbuf run ARGS --output csv` as a DataFrame."""

    def rows(*args: str):
        out = cli("run", *args, "--output", "csv", "--quiet").stdout
        return flashbuf._frame.frame_of_csv(out)

    return rows


@pytest.fixture(autouse=True)
def _no_summary_cache(tmp_path, monkeypatch):
    """Each test gets its own summary cache (never the user's)."""
    monkeypatch.setenv("FLASHBUF_CACHE_DIR", str(tmp_path / "cache"))


def without_timing(df):
    """The rows without the columns that measure the machine."""
    return df.drop(columns=list(flashbuf.TIMING_COLUMNS)).reset_index(drop=True)


class PyLru(flashbuf.Policy):
    """LRU in Python: an ordered dict of frames, least recently used first."""

    name = "py-lru"

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.order: "OrderedDict[int, bool]" = OrderedDict()  # frame -> dirty

    def on_hit(self, frame, access):
        self.order.move_to_end(frame)
        if access.is_write:
            self.order[frame] = True

    def on_insert(self, frame, access):
        self.order[frame] = access.is_write

    def victims(self, incoming):
        frame, _dirty = self.order.popitem(last=False)
        return frame

    def remove(self, frame):
        del self.order[frame]

    def __len__(self):
        return len(self.order)

    def is_dirty(self, frame):
        return self.order.get(frame)


class _Block:
    __slots__ = ("frames", "dirty", "seq")

    def __init__(self) -> None:
        self.frames: set = set()
        self.dirty = 0
        self.seq = 0


class PyBplru(flashbuf.Policy):
    """BPLRU in Python, with the choices of crates/policy/src/bplru.rs: block-level LRU, the
    LRU block evicted whole and padded when it holds a dirty page, LRU compensation for a block
    written completely and sequentially."""

    name = "py-bplru"
    block_pages = 4

    def __init__(self, capacity: int, ppb: int = 4) -> None:
        super().__init__(capacity)
        self.ppb = ppb
        self.blocks: "OrderedDict[int, _Block]" = OrderedDict()  # LRU first
        self.page: dict = {}
        self.dirty: dict = {}

    def _touch(self, frame, block, access):
        b = self.blocks[block]
        to_lru_end = False
        if access.is_write:
            if not self.dirty[frame]:
                self.dirty[frame] = True
                b.dirty += 1
            offset = access.page % self.ppb
            b.seq = offset + 1 if b.seq == offset else -1
            to_lru_end = b.seq == self.ppb
        self.blocks.move_to_end(block, last=not to_lru_end)

    def on_hit(self, frame, access):
        self._touch(frame, self.page[frame] // self.ppb, access)

    def on_insert(self, frame, access):
        block = access.page // self.ppb
        if block not in self.blocks:
            self.blocks[block] = _Block()
        self.blocks[block].frames.add(frame)
        self.page[frame] = access.page
        self.dirty[frame] = False
        self._touch(frame, block, access)

    def victims(self, incoming):
        block, b = next(iter(self.blocks.items()))
        frames = sorted(b.frames, key=self.page.__getitem__)
        pad = (block * self.ppb, self.ppb) if b.dirty > 0 else None
        del self.blocks[block]
        for f in frames:
            del self.page[f], self.dirty[f]
        return flashbuf.Evictions(victims=frames, pad=pad)

    def remove(self, frame):
        block = self.page.pop(frame) // self.ppb
        b = self.blocks[block]
        b.frames.discard(frame)
        if self.dirty.pop(frame):
            b.dirty -= 1
        if not b.frames:
            del self.blocks[block]

    def __len__(self):
        return len(self.page)

    def is_dirty(self, frame):
        return self.dirty.get(frame)

    def check_invariants(self):
        counted = sum(len(b.frames) for b in self.blocks.values())
        if counted != len(self.page):
            return f"{counted} frames in blocks, {len(self.page)} pages"
        for block, b in self.blocks.items():
            if b.dirty != sum(self.dirty[f] for f in b.frames):
                return f"block {block}: dirty count {b.dirty} is wrong"
        return None
