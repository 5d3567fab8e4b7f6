"""flashbuf.run against `flashbuf run --output csv`: the same rows, the same errors."""

from __future__ import annotations

import re

import pandas as pd
import pandas.testing as pdt
import pytest

import flashbuf
from conftest import without_timing

ZIPF = "gen:zipf,requests=30000,pages=3000,seed=5"


def same(df, expected):
    assert list(df.columns) == list(flashbuf.COLUMNS)
    pdt.assert_frame_equal(without_timing(df), without_timing(expected), check_exact=True)


def test_columns_are_the_command_lines(cli):
    header = cli("run", "-t", "gen:uniform,requests=10,pages=5", "-p", "lru", "-b", "2", "--output", "csv").stdout
    assert header.splitlines()[0].split(",") == list(flashbuf.COLUMNS)


@pytest.mark.parametrize(
    "kwargs, args",
    [
        (
            dict(policies="lru,cflru:w=0.25,ad-lru,min", buffers=[100, "64KB", "10%"], device=["page", "bast", "ideal"]),
            ["-p", "lru,cflru:w=0.25,ad-lru,min", "-b", "100,64KB,10%", "--device", "page,bast,ideal"],
        ),
        (
            dict(
                policies=["bplru:ppb=8", "ref:ppb=8", "cfdc"],
                buffers="200",
                device="fast",
                preset="ref",
                log_blocks=4,
                write_miss="no-fetch",
                page_size=2048,
                final_flush=False,
            ),
            ["-p", "bplru:ppb=8,ref:ppb=8,cfdc", "-b", "200", "--device", "fast", "--preset", "ref",
             "--log-blocks", "4", "--write-miss", "no-fetch", "--page-size", "2048", "--no-final-flush"],
        ),
        (
            dict(policies="arc,lru-2", buffers="300", device="page", warmup="10%", interval=7000, op_percent=15,
                 gc="cost-benefit", precondition="empty", remap="on", check=True),
            ["-p", "arc,lru-2", "-b", "300", "--device", "page", "--warmup", "10%", "--interval", "7000",
             "--op", "15", "--gc", "cost-benefit", "--precondition", "empty", "--remap", "on", "--check"],
        ),
    ],
    ids=["policies-buffers-devices", "write-buffer-on-log-blocks", "warmup-intervals-page-device"],
)
def test_run_equals_the_command_line_row_for_row(cli_rows, kwargs, args):
    df = flashbuf.run(ZIPF, **kwargs)
    expected = cli_rows("-t", ZIPF, *args)
    assert len(df) > 1
    same(df, expected)


def test_defaults_are_the_command_lines(cli_rows):
    # Every option at its default but the trace (the default trace is 500,000 requests).
    small = "gen:adlru-zipf,requests=20000"
    same(flashbuf.run(small), cli_rows("-t", small))
    assert flashbuf.DEFAULT_POLICIES == "lru,arc,cflru,lru-wsr,ccf-lru,cflru-c,ad-lru,cfdc,min"


def test_a_trace_file_and_several_traces(cli, cli_rows, tmp_path):
    path = tmp_path / "t.fbt"
    cli("gen", "self-similar", "--requests", "20000", "--pages", "4000", "--seed", "3", "-o", str(path))
    traces = [str(path), "gen:uniform,requests=5000,pages=900"]
    df = flashbuf.run(traces, "lru,cflru", ["5%", 50], device="bast")
    same(df, cli_rows("-t", traces[0], "-t", traces[1], "-p", "lru,cflru", "-b", "5%,50", "--device", "bast"))
    assert set(df.trace) == {"t.fbt", "uniform,requests=5000,pages=900,write-ratio=0.5,seed=42"}


def cli_error(cli, *args):
    """The command line's message, and whether it is flashbuf's own (else the argument parser's,
    which frames the message of the value's parser with its own words)."""
    p = cli("run", *args, "--quiet", check=False)
    assert p.returncode != 0
    own = p.stderr.startswith("flashbuf: error: ")
    return re.sub(r"^flashbuf: error: ", "", p.stderr.strip()), own


@pytest.mark.parametrize(
    "kwargs, args",
    [
        (dict(policies="lru,nope"), ["-p", "lru,nope"]),
        (dict(policies="2q:kin=7"), ["-p", "2q:kin=7"]),
        (dict(buffers="12XB"), ["-b", "12XB"]),
        (dict(buffers="0%"), ["-b", "0%"]),
        (dict(device="ssd"), ["--device", "ssd"]),
        (dict(trace="/nonexistent/t.csv"), ["-t", "/nonexistent/t.csv"]),
        (dict(trace="gen:zipf,pages=0"), ["-t", "gen:zipf,pages=0"]),
        (dict(warmup=10**9, device="ideal"), ["--warmup", str(10**9), "--device", "ideal"]),
        (dict(capacity=10), ["--capacity", "10"]),
        (dict(gc="lazy"), ["--gc", "lazy"]),
        (dict(format="csv"), ["--format", "csv"]),
        (dict(preset="nand9"), ["--preset", "nand9"]),
    ],
)
def test_errors_carry_the_command_lines_message(cli, kwargs, args):
    base = dict(trace=ZIPF, policies="lru", buffers="100")
    cli_base = {"trace": ["-t", ZIPF], "policies": ["-p", "lru"], "buffers": ["-b", "100"]}
    expected_args = [a for k, v in cli_base.items() if k not in kwargs for a in v] + args
    with pytest.raises(flashbuf.FlashbufError) as e:
        flashbuf.run(**{**base, **kwargs})
    message, own = cli_error(cli, *expected_args)
    if own:
        assert str(e.value) == message
    else:
        assert str(e.value) in message and len(str(e.value)) > 20


def test_bad_arguments_raise_clear_exceptions():
    with pytest.raises(TypeError, match="pass the class PyLru, not an instance"):
        from conftest import PyLru

        flashbuf.run(ZIPF, PyLru(10), 10)
    with pytest.raises(TypeError, match="is not a subclass of flashbuf.Policy"):
        flashbuf.run(ZIPF, dict, 10)
    with pytest.raises(TypeError, match=r"buffers: 1\.5 is neither a number nor a string"):
        flashbuf.run(ZIPF, "lru", [1.5])
    with pytest.raises(TypeError, match="neither a trace specification, a path nor a flashbuf.Trace"):
        flashbuf.run([3], "lru", 10)
    with pytest.raises(ValueError, match="interval: expected a positive number of requests"):
        flashbuf.run(ZIPF, "lru", 10, interval=0)
    with pytest.raises(flashbuf.FlashbufError, match="unknown write-miss mode 'sometimes'; valid: fetch, no-fetch"):
        flashbuf.run(ZIPF, "lru", 10, write_miss="sometimes")
    with pytest.raises(ValueError, match="policies: no policy given"):
        flashbuf.run(ZIPF, [], 10)


def test_progress_reports_every_request(monkeypatch):
    seen = []
    flashbuf.run("gen:uniform,requests=40000,pages=1000", "lru,arc", [10, 20], device="ideal",
                 progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (4 * 40000, 4 * 40000)
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


def test_a_dataframe_is_what_read_results_reads(cli, tmp_path):
    out = tmp_path / "r.csv"
    cli("run", "-t", ZIPF, "-p", "lru,cfdc", "-b", "100", "--output", "csv", "-o", str(out), "--quiet")
    df = flashbuf.read_results(out)
    assert isinstance(df, pd.DataFrame) and list(df.policy) == ["lru", "cfdc:pw=0.5,cluster=64"]
    assert str(df.dtypes["footprint_pages"]) == "Int64" and df.footprint_pages.isna().all()
