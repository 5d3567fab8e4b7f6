"""Overheads of the Python package, measured as ratios within one run (interleaved rounds,
best of N), as the project measures speed:

* a run through `flashbuf.run` against the same run through the `flashbuf` program (one
  process per run, as a shell loop or a cluster queue runs it), on a tiny trace (the per-run
  overhead) and on a large one (the simulation's own speed);
* a policy written in Python (LRU in an ordered dict) against the built-in LRU, in requests
  per second of simulation.

    target/py-venv/bin/python scripts/bench-python.py [--cli target/release/flashbuf] [--rounds 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import OrderedDict

import flashbuf


class PythonLru(flashbuf.Policy):
    name = "python-lru"

    def __init__(self, capacity):
        super().__init__(capacity)
        self.order = OrderedDict()

    def on_hit(self, frame, access):
        self.order.move_to_end(frame)

    def on_insert(self, frame, access):
        self.order[frame] = None

    def victims(self, incoming):
        return self.order.popitem(last=False)[0]

    def remove(self, frame):
        del self.order[frame]

    def __len__(self):
        return len(self.order)


def best(f, rounds):
    return min(f() for _ in range(rounds))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--cli", default="target/release/flashbuf")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()

    def timed(fn):
        def run():
            t = time.perf_counter()
            fn()
            return time.perf_counter() - t

        return run

    flashbuf.run("gen:uniform,requests=10,pages=5", "lru", 2, device="ideal")  # imports, warm-up
    for label, trace in [("tiny (1,000 requests)", "gen:zipf,requests=1000,pages=500"),
                         ("large (2,000,000 requests)", "gen:zipf,requests=2000000,pages=200000")]:
        args = ["run", "-t", trace, "-p", "lru", "-b", "1000", "--device", "page", "--output", "csv", "--quiet",
                "-j", "1"]
        py = timed(lambda: flashbuf.run(trace, "lru", 1000, device="page", jobs=1))
        cli = timed(lambda: subprocess.run([a.cli, *args], check=True, capture_output=True))
        t_py, t_cli = [], []
        for _ in range(a.rounds):  # interleaved
            t_py.append(py())
            t_cli.append(cli())
        print(f"{label}: flashbuf.run {min(t_py) * 1e3:.1f} ms, flashbuf run (process) {min(t_cli) * 1e3:.1f} ms, "
              f"ratio {min(t_py) / min(t_cli):.2f}")

    trace = "gen:zipf,requests=300000,pages=30000,seed=1"
    rates = {"lru": [], "python-lru": []}
    for _ in range(a.rounds):
        df = flashbuf.run(trace, ["lru", PythonLru], 1000, device="ideal", jobs=1)
        for name, r in zip(df.policy, df.requests_per_s):
            rates["lru" if name == "lru" else "python-lru"].append(r)
    b, pyr = max(rates["lru"]), max(rates["python-lru"])
    print(f"policy in Python: built-in lru {b / 1e6:.2f} M requests/s, Python LRU {pyr / 1e3:.0f} k requests/s "
          f"(simulation only), ratio {b / pyr:.1f}x")


if __name__ == "__main__":
    sys.exit(main())
