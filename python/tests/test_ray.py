"""The Ray backend: every run of a sweep is a Ray task on a local cluster of two workers, and
the result files are exactly those of the local sweep."""

from __future__ import annotations

import pandas.testing as pdt
import pytest

import flashbuf
from conftest import without_timing
from test_sweep import CONFIG, RUNS

ray = pytest.importorskip("ray", reason="Ray is not installed here (pip install ray); the Ray backend is untested")


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ray")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _temp_dir=str(tmp),
        object_store_memory=100 * 1024 * 1024,
        runtime_env={"env_vars": {"FLASHBUF_CACHE_DIR": str(tmp / "cache")}},
    )
    yield
    ray.shutdown()


def test_a_ray_sweep_writes_exactly_the_local_sweeps_files(two_workers, tmp_path):
    assert ray.cluster_resources().get("CPU") == 2
    local = flashbuf.sweep(CONFIG, out=tmp_path / "local")
    progress = []
    remote = flashbuf.sweep(CONFIG, out=tmp_path / "ray", backend="ray", progress=lambda d, t: progress.append((d, t)))
    assert len(remote) == RUNS
    pdt.assert_frame_equal(without_timing(remote), without_timing(local), check_exact=True)
    a = without_timing(flashbuf.read_results(tmp_path / "local" / "results.csv"))
    b = without_timing(flashbuf.read_results(tmp_path / "ray" / "results.csv"))
    pdt.assert_frame_equal(b, a, check_exact=True)
    assert len((tmp_path / "ray" / "results.jsonl").read_text().splitlines()) == RUNS
    assert progress[-1] == (local.requests.sum(), local.requests.sum())


def test_a_ray_sweep_resumes_what_an_interruption_left(two_workers, tmp_path):
    out = tmp_path / "r"
    first = flashbuf.sweep(CONFIG, out=out, backend="ray")
    csv, jsonl = out / "results.csv", out / "results.jsonl"
    csv.write_text("".join(csv.read_text().splitlines(True)[:10]))
    jsonl.write_text("".join(jsonl.read_text().splitlines(True)[:9]))
    resumed = flashbuf.sweep(CONFIG, out=out, backend="ray", resume=True)
    pdt.assert_frame_equal(without_timing(resumed), without_timing(first), check_exact=True)


def test_a_run_failing_on_a_worker_is_a_flashbuf_error(two_workers, tmp_path):
    from flashbuf import _native
    from flashbuf._ray import run_on_ray

    trace = tmp_path / "gone.txt"
    trace.write_text("R 1\nW 2\nR 3\n")
    config = {"traces": [str(trace)], "policies": ["lru"], "buffers": [1, 2], "devices": ["ideal"]}
    output = _native.plan_sweep(_native.toml_of_dict(config), "sweep.toml", True, str(tmp_path / "o"), None, "new").open()
    trace.unlink()  # planned, then gone before the workers read it
    with pytest.raises(flashbuf.FlashbufError, match=r"gone\.txt"):
        run_on_ray(output, None, None)
    output.close()
