"""Traces as numpy arrays: generated, read, built in numpy, written, run."""

from __future__ import annotations

import numpy as np
import pandas.testing as pdt
import pytest

import flashbuf
from conftest import without_timing


def test_gen_is_flashbuf_gen(cli, tmp_path):
    path = tmp_path / "z.txt"
    cli("gen", "zipf", "--requests", "5000", "--pages", "700", "--write-ratio", "0.3", "--seed", "11", "-o", str(path))
    t = flashbuf.gen("zipf", requests=5000, pages=700, write_ratio=0.3, seed=11)
    # The text format: a header line, then one "R page" / "W page" per request.
    records = [line.split() for line in path.read_text().splitlines()[1:]]
    kinds, pages = [r[0] for r in records], [r[1] for r in records]
    assert len(t) == 5000 == len(pages)
    assert t.page.dtype == np.uint64 and t.is_write.dtype == np.bool_ and t.time_us is None
    assert [int(p) for p in pages] == t.page.tolist()
    assert [k == "W" for k in kinds] == t.is_write.tolist()
    assert t.label == "zipf,requests=5000,pages=700,write-ratio=0.3,locality=80-20,scatter=false,seed=11"
    assert flashbuf.gen("zipf", requests=5000, pages=700, write_ratio=0.3, seed=11).page.tolist() == t.page.tolist()


def test_generator_parameters_are_keywords():
    t = flashbuf.gen("scan-mix", requests=3000, pages=500, scan_length=50, seed=2)
    assert "scan-length=50" in t.label
    with pytest.raises(flashbuf.FlashbufError, match="nope"):
        flashbuf.gen("zipf", nope=3)
    with pytest.raises(flashbuf.FlashbufError, match="unknown generator"):
        flashbuf.gen("fractal")


@pytest.mark.parametrize("suffix", [".fbt", ".txt", ".oracleGeneral"])
def test_numpy_traces_round_trip_through_every_writer(tmp_path, suffix):
    rng = np.random.default_rng(7)
    n = 20_000
    page = rng.integers(0, 2**40, n, dtype=np.uint64)
    page[::3] = rng.integers(0, 100, n // 3 + 1)  # small numbers too
    is_write = rng.random(n) < 0.4
    time_us = np.cumsum(rng.integers(0, 5_000_000, n)).astype(np.float64)
    t = flashbuf.Trace(page=page, is_write=is_write, time_us=time_us, label="mine")
    path = tmp_path / f"t{suffix}"
    assert t.write(path) == n
    back = flashbuf.read_trace(path)
    assert back.page.tolist() == page.tolist()
    if suffix == ".oracleGeneral":
        return  # libCacheSim's format has no read/write flag, and time in whole seconds
    assert back.is_write.tolist() == is_write.tolist()
    assert back.time_us is not None and back.time_us.tolist() == time_us.tolist()
    assert back.label == f"t{suffix}"


def test_timestamps_may_be_missing_for_some_requests(tmp_path):
    t = flashbuf.Trace(page=[1, 2, 3], is_write=[0, 1, 0], time_us=[5.0, np.nan, 9.0])
    t.write(tmp_path / "t.fbt")
    back = flashbuf.read_trace(tmp_path / "t.fbt")
    assert np.isnan(back.time_us[1]) and back.time_us[[0, 2]].tolist() == [5.0, 9.0]
    with pytest.raises(flashbuf.FlashbufError, match="already exists"):
        t.write(tmp_path / "t.fbt")
    t.write(tmp_path / "t.fbt", force=True)


def test_bad_columns_are_refused():
    with pytest.raises(ValueError, match="is_write has 2 entries, page has 3"):
        flashbuf.Trace(page=[1, 2, 3], is_write=[True, False])
    with pytest.raises(ValueError, match=r"page must be non-negative; page\[1\] = -4"):
        flashbuf.Trace(page=[1, -4], is_write=[True, False])
    with pytest.raises(ValueError, match="whole numbers"):
        flashbuf.Trace(page=[1.5], is_write=[True])
    with pytest.raises(ValueError, match="booleans"):
        flashbuf.Trace(page=[1], is_write=[7])
    with pytest.raises(ValueError, match="whole, non-negative microseconds"):
        flashbuf.Trace(page=[1], is_write=[True], time_us=[-1.0])
    with pytest.raises(TypeError, match="integers"):
        flashbuf.Trace(page=np.array(["a"]), is_write=[True])
    with pytest.raises(flashbuf.FlashbufError, match="/nonexistent/x.csv"):
        flashbuf.read_trace("/nonexistent/x.csv")


def test_a_numpy_trace_runs_exactly_as_its_file(cli_rows, tmp_path):
    t = flashbuf.gen("self-similar", requests=20_000, pages=3000, seed=4)
    # Built in numpy: every fourth page moved far away (a sparse trace, renumbered).
    page = t.page.copy()
    page[::4] += np.uint64(10_000_000)
    mine = flashbuf.Trace(page=page, is_write=t.is_write, label="numpy-made")
    path = tmp_path / "same.fbt"
    mine.write(path)
    for device in ("page", "ideal"):
        df = flashbuf.run(mine, "lru,cflru,bplru", [100, "2%"], device=device)
        expected = cli_rows("-t", str(path), "-p", "lru,cflru,bplru", "-b", "100,2%", "--device", device)
        columns = [c for c in flashbuf.COLUMNS if c not in ("trace", "run_id") + flashbuf.TIMING_COLUMNS]
        pdt.assert_frame_equal(df[columns], expected[columns], check_exact=True)
        assert set(df.trace) == {"numpy-made"}
    assert (df.remap_extent_pages > 0).all()  # sparse, so renumbered, as the file is
    # A tuple of arrays is a trace too; the run identity follows the requests.
    again = flashbuf.run((page, t.is_write), "lru", 100, device="ideal")
    assert again.run_id[0] == flashbuf.run((page, t.is_write), "lru", 100, device="ideal").run_id[0]
    assert without_timing(again).drop(columns=["trace"]).equals(
        without_timing(flashbuf.run(mine, "lru", 100, device="ideal")).drop(columns=["trace"])
    )


def test_to_frame():
    t = flashbuf.Trace(page=[3, 4], is_write=[True, False])
    df = t.to_frame()
    assert list(df.columns) == ["page", "is_write"] and df.page.tolist() == [3, 4]
    assert "2 requests, 1 writes" in repr(t)
