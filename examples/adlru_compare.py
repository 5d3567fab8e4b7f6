"""The AD-LRU paper's comparison from Python: LRU, CFLRU, LRU-WSR, CCF-LRU and AD-LRU on the
paper's Zipf trace (Table 6: 500,000 requests over 50,000 pages, 50% writes, 80-20 locality),
buffers of 512 to 8,192 pages over the page-mapped MICRON flash device, and the page-writes
curve drawn with matplotlib.

    pip install "./python[notebook]"
    python examples/adlru_compare.py                 # writes adlru-page-writes.png
    python examples/adlru_compare.py --quick -o x.png  # 100,000 requests, a few seconds

A Python LRU (flashbuf.Policy) runs beside the built-in policies on the same trace and device:
its curve lies exactly on the built-in LRU's.
"""

from __future__ import annotations

import argparse
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import flashbuf  # noqa: E402


class PythonLru(flashbuf.Policy):
    """LRU written in Python: frames in an ordered dict, least recently used first."""

    name = "lru (Python)"

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.order: "OrderedDict[int, None]" = OrderedDict()

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 requests instead of 500,000")
    parser.add_argument("-o", "--out", default="adlru-page-writes.png", help="the figure (PNG)")
    args = parser.parse_args()

    trace = "gen:adlru-zipf,requests=100000" if args.quick else "gen:adlru-zipf"
    policies = ["lru", "cflru", "lru-wsr", "ccf-lru", "ad-lru", PythonLru]
    df = flashbuf.run(trace, policies, [512, 1024, 2048, 4096, 8192], device="page", progress=True)
    table = df.pivot(index="buffer_pages", columns="policy", values="page_writes")
    print(table.to_string())
    python, builtin = df[df.policy_name == PythonLru.name], df[df.policy == "lru"]
    assert python.page_writes.tolist() == builtin.page_writes.tolist(), "the Python LRU must count as LRU does"

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for policy, rows in df.groupby("policy", sort=False):
        style = dict(linestyle=":", linewidth=3, alpha=0.6) if policy == PythonLru.name else dict(marker="o")
        ax.plot(rows.buffer_pages, rows.page_writes, label=policy, **style)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("buffer size (pages)")
    ax.set_ylabel("page writes (final flush included)")
    ax.set_title(f"{df.trace.iloc[0]} over {df.device.iloc[0]}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"figure: {args.out}")


if __name__ == "__main__":
    main()
