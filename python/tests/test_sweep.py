"""flashbuf.sweep: a dict or a TOML file, the result files of `flashbuf sweep`, resumable;
shards merged into exactly the unsharded files."""

from __future__ import annotations

import pandas.testing as pdt
import pytest

import flashbuf
from conftest import without_timing

CONFIG = {
    "traces": [
        "gen:adlru-zipf,requests=20000",
        {"gen": "uniform", "requests": 10000, "pages": 3000, "seed": [1, 2]},
    ],
    "policies": ["lru", {"name": "cflru", "w": [0.25, 0.5]}, "bplru:ppb=16"],
    "buffers": [128, "5%"],
    "devices": ["ideal", {"kind": "bast", "preset": "ref", "log_blocks": [4, 8]}],
}

TOML = """
traces = [
    "gen:adlru-zipf,requests=20000",
    { gen = "uniform", requests = 10000, pages = 3000, seed = [1, 2] },
]
policies = ["lru", { name = "cflru", w = [0.25, 0.5] }, "bplru:ppb=16"]
buffers = [128, "5%"]
devices = ["ideal", { kind = "bast", preset = "ref", log_blocks = [4, 8] }]
"""

RUNS = 3 * 4 * 2 * 3  # traces × policies × buffers × devices


def files(dir):
    """The two result files without their timing columns."""
    csv = without_timing(flashbuf.read_results(dir / "results.csv"))
    jsonl = (dir / "results.jsonl").read_text().splitlines()
    return csv, len(jsonl)


def test_a_dict_sweeps_exactly_as_the_command_line_sweeps_its_toml(cli, tmp_path):
    (tmp_path / "s.toml").write_text(TOML)
    cli("sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "cli"), "--quiet")
    df = flashbuf.sweep(CONFIG, out=tmp_path / "py")
    assert len(df) == RUNS and list(df.columns) == list(flashbuf.COLUMNS)
    (expected, n_cli), (mine, n_py) = files(tmp_path / "cli"), files(tmp_path / "py")
    pdt.assert_frame_equal(mine, expected, check_exact=True)
    assert n_cli == n_py == RUNS
    pdt.assert_frame_equal(without_timing(df), expected, check_exact=True)
    # A TOML file's path works the same, and its relative paths are its own.
    again = flashbuf.sweep(tmp_path / "s.toml", out=tmp_path / "toml", jobs=1)
    pdt.assert_frame_equal(without_timing(again), expected, check_exact=True)


def test_existing_results_need_resume_or_force(tmp_path):
    out = tmp_path / "r"
    first = flashbuf.sweep(CONFIG, out=out)
    with pytest.raises(flashbuf.FlashbufError, match="already exists; use --resume to complete it or --force"):
        flashbuf.sweep(CONFIG, out=out)
    # Resuming a complete sweep runs nothing and returns the same rows.
    seen = []
    resumed = flashbuf.sweep(CONFIG, out=out, resume=True, progress=lambda d, t: seen.append(t))
    pdt.assert_frame_equal(resumed, first, check_exact=True)
    assert all(t == 0 for t in seen)
    # An interrupted sweep: drop half the rows of both files, resume, get the same files.
    csv, jsonl = out / "results.csv", out / "results.jsonl"
    lines, jlines = csv.read_text().splitlines(True), jsonl.read_text().splitlines(True)
    csv.write_text("".join(lines[: 1 + RUNS // 2]))
    jsonl.write_text("".join(jlines[: RUNS // 2]))
    seen.clear()
    resumed = flashbuf.sweep(CONFIG, out=out, resume=True, progress=lambda d, t: seen.append((d, t)))
    pdt.assert_frame_equal(without_timing(resumed), without_timing(first), check_exact=True)
    assert seen[-1][0] == seen[-1][1] > 0
    assert len(jsonl.read_text().splitlines()) == RUNS
    flashbuf.sweep(CONFIG, out=out, force=True)


def test_config_errors_say_what_and_where(tmp_path):
    with pytest.raises(flashbuf.FlashbufError, match=r"unknown policy 'nope'.*\(at `policies = \[\"lru\", \"nope\"\]`\)"):
        flashbuf.sweep({**CONFIG, "policies": ["lru", "nope"]}, out=tmp_path / "x")
    with pytest.raises(flashbuf.FlashbufError, match=r"^sweep configuration: .*unknown key 'buffer'"):
        flashbuf.sweep({"traces": ["gen:uniform"], "policies": ["lru"], "buffer": [1]}, out=tmp_path / "x")
    (tmp_path / "bad.toml").write_text('traces = ["gen:uniform"]\npolicies = ["lru"]\nbuffers = ["12XB"]\n')
    with pytest.raises(flashbuf.FlashbufError, match=r"bad\.toml:3:12: "):
        flashbuf.sweep(tmp_path / "bad.toml")
    with pytest.raises(flashbuf.FlashbufError, match="cannot read"):
        flashbuf.sweep(tmp_path / "missing.toml")
    with pytest.raises(flashbuf.FlashbufError, match="a set cannot be written in a sweep configuration"):
        flashbuf.sweep({**CONFIG, "buffers": {1, 2}}, out=tmp_path / "x")
    with pytest.raises(ValueError, match="backend: expected 'local' or 'ray'"):
        flashbuf.sweep(CONFIG, out=tmp_path / "x", backend="spark")
    with pytest.raises(ValueError, match="resume and force exclude each other"):
        flashbuf.sweep(CONFIG, resume=True, force=True)


def test_three_shards_merge_into_exactly_the_unsharded_files(tmp_path):
    whole = tmp_path / "whole"
    flashbuf.sweep(CONFIG, out=whole)
    sizes = []
    for i in (1, 2, 3):
        shard = flashbuf.sweep(CONFIG, out=tmp_path / "sharded", shard=f"{i}/3")
        sizes.append(len(shard))
    assert sizes == [RUNS // 3] * 3
    merged = flashbuf.merge(CONFIG, out=tmp_path / "sharded")
    assert len(merged) == RUNS
    # Exactly the unsharded files, timing columns aside (merge keeps each shard's timings).
    (a, na), (b, nb) = files(whole), files(tmp_path / "sharded")
    pdt.assert_frame_equal(b, a, check_exact=True)
    assert na == nb == RUNS
    with pytest.raises(ValueError, match="expected I/N"):
        flashbuf.sweep(CONFIG, out=tmp_path / "y", shard="4")
    with pytest.raises(flashbuf.FlashbufError, match="expected I/N with 1 <= I <= N"):
        flashbuf.sweep(CONFIG, out=tmp_path / "y", shard="4/3")
