#!/usr/bin/env python3
"""Why is flashbuf's REF never the fastest? Experiments for issue 16, printed as markdown.

Runs the release `flashbuf run` (built beforehand: `cargo build --release`) on the REF paper's
setup (Table I: 2 KiB pages, 64-page blocks, 8 log blocks, 8,192-page buffer, 10/200/2000 µs,
`--preset ref`, write buffer `--write-miss no-fetch`, no final flush) and varies one thing at a
time: the stand-in traces, the write-miss mode, the log-block count, VW and |VB|, the
insert-before-evict reading, the device preset, BP-REF's threshold. With `--adaptive` it also
compares `ref-adaptive` with REF at its default and at the best fixed (vw, vb, pad).

Usage: scripts/ref-diagnosis.sh [--adaptive] [--only SECTION,...] [OUTDIR]
Every run's CSV row is kept in OUTDIR (default target/ref-diagnosis); the tables go to stdout.
"""

import argparse
import csv
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FB = os.environ.get("FLASHBUF", os.path.join(ROOT, "target", "release", "flashbuf"))
SHARED = os.environ.get("FLASHBUF_TRACES", os.path.join(ROOT, "..", "shared", "traces"))

# The reproduction's stand-ins (crates/reproduce/src/ref_paper.rs, full mode).
GEN = [
    ("ie", "gen:zipf,requests=300000,pages=131072,write-ratio=0.8,scatter=true,seed=1"),
    ("uniform", "gen:uniform,requests=300000,pages=131072,write-ratio=0.8,seed=1"),
    ("office", "gen:scan-mix,requests=200000,pages=16384,write-ratio=0.6,scans=400,scan-length=128,"
     "scan-pages=262144,scan-writes=true,seed=2"),
    ("jpeg", "gen:scan-mix,requests=60000,pages=4096,write-ratio=0.8,scans=1000,scan-length=280,"
     "scan-pages=1048576,scan-writes=true,seed=3"),
]

BASE = ["--page-size", "2048", "-b", "8192", "--no-final-flush", "--remap", "off",
        "-q", "--output", "csv", "--force"]
MAIN = ["lru", "fab:ppb=64", "bplru:ppb=64", "ref:vw=0.75,vb=3,ppb=64"]


def run(out, name, traces, policies, devices=("bast", "fast"), extra=()):
    path = os.path.join(out, name + ".csv")
    if not os.path.exists(path):
        cmd = [FB, "run"]
        for t in traces:
            cmd += ["-t", t]
        preset = [] if "--preset" in extra else ["--preset", "ref"]
        cmd += ["-p", ",".join(policies), "--device", ",".join(devices)] + preset + BASE + list(extra) + ["-o", path]
        print("<!-- " + " ".join(cmd) + " -->", flush=True)
        subprocess.run(cmd, check=True)
    return list(csv.DictReader(open(path)))


def key(trace):
    """Identity of a trace as the CSV names it: a file's base name, or a generator's kind, size
    and seed (the CSV spells out default keys the command line left out)."""
    t = trace[4:] if trace.startswith("gen:") else trace
    if "," not in t:
        return os.path.basename(t)
    kv = dict(x.split("=", 1) for x in t.split(",")[1:] if "=" in x)
    return (t.split(",")[0], kv.get("requests"), kv.get("seed"))


def short(trace, names):
    for n, t in names:
        if key(trace) == key(t):
            return n
    return trace


def secs(r):
    return float(r["device_time_us"]) / 1e6


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def label_of(p):
    return {"lru": "LRU", "fab:ppb=64": "FAB", "bplru:ppb=64": "BPLRU", "ref:vw=0.75,vb=3,ppb=64": "REF 75%/3"}.get(p, p)


def find(rows, names, trace, device, policy):
    for r in rows:
        if short(r["trace"], names) == trace and r["device"].startswith(device) and r["policy"] == policy:
            return r
    raise KeyError((trace, device, policy))


def grid(rows, names, policies, devices=("bast", "fast"), note=""):
    """Device time (s) per trace × device × policy, with the fastest in bold."""
    out = []
    for n, _ in names:
        for d in devices:
            cells = []
            vals = []
            for p in policies:
                try:
                    vals.append(secs(find(rows, names, n, d, p)))
                except KeyError:
                    vals.append(None)
            best = min(v for v in vals if v is not None)
            for v in vals:
                cells.append("" if v is None else (f"**{v:.1f}**" if v == best else f"{v:.1f}"))
            out.append([n, d.upper()] + cells)
    return table(["trace", "FTL"] + [label_of(p) for p in policies], out)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("outdir", nargs="?", default=os.path.join(ROOT, "target", "ref-diagnosis"))
    a.add_argument("--adaptive", action="store_true")
    a.add_argument("--only", default="")
    args = a.parse_args()
    out = args.outdir
    os.makedirs(out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    want = lambda s: not only or s in only  # noqa: E731
    sd = os.path.join(out, "standins")
    if not os.path.exists(os.path.join(sd, "ie-files.txt")):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "ref_standins.py"), sd], check=True)
    names = list(GEN)
    names += [(n, os.path.join(sd, n + ".txt")) for n in ("ie-files", "office-files", "jpeg-files")]
    cp = os.path.join(SHARED, "cloudPhysicsIO.csv.zst")
    if os.path.exists(cp):
        names.append(("cloudphysics", cp))
    else:
        print(f"WARNING: {cp} not found: CloudPhysics rows are missing", file=sys.stderr)
    traces = [t for _, t in names]
    nofetch = ["--write-miss", "no-fetch"]

    if want("headline"):
        pol = MAIN + ["ref:vw=1,vb=8,ppb=64", "bp-ref:vw=0.75,vb=3,ppb=64,pad=0.1", "bp-ref:vw=0.75,vb=3,ppb=64,pad=0.4"]
        rows = run(out, "headline", traces, pol, extra=nofetch)
        print("\n### Device time (s), the paper's setup (write buffer, 8 log blocks)\n")
        print(grid(rows, names, pol))
        print("\n### Hit ratio and merges (switch/partial/full), BAST\n")
        hr = []
        for n, _ in names:
            line = [n]
            for p in MAIN:
                r = find(rows, names, n, "bast", p)
                line.append(f"{100 * float(r['hit_ratio']):.1f}% · {r['merges_switch']}/{r['merges_partial']}/{r['merges_full']}")
            hr.append(line)
        print(table(["trace"] + [label_of(p) for p in MAIN], hr))

    if want("writemiss"):
        rows = run(out, "fetch", traces, MAIN, extra=["--write-miss", "fetch"])
        print("\n### Device time (s) with `--write-miss fetch` (a write miss reads the page first)\n")
        print(grid(rows, names, MAIN))

    if want("logblocks"):
        for lb in (4, 16, 32):
            rows = run(out, f"log{lb}", traces, MAIN, extra=nofetch + ["--log-blocks", str(lb)])
            print(f"\n### Device time (s) with {lb} log blocks\n")
            print(grid(rows, names, MAIN))

    if want("window"):
        pol = ["fab:ppb=64"] + [f"ref:vw={vw},vb={vb},ppb=64" for vw in (0.25, 0.5, 0.75, 0.9, 1) for vb in (1, 3, 8)]
        rows = run(out, "window", traces, pol, extra=nofetch)
        print("\n### REF's victim window and |VB|: device time (s); FAB for reference\n")
        print(grid(rows, names, pol))

    if want("insert"):
        # w = round(vw · 8192): vw = 1 gives w = B (the incoming page counts inside the window,
        # Fig. 6's reading); vw = 8191/8192 gives w = B − 1 (evict first, then insert).
        pol = ["ref:vw=1,vb=3,ppb=64", "ref:vw=0.99987793,vb=3,ppb=64", "ref:vw=1,vb=8,ppb=64",
               "ref:vw=0.99987793,vb=8,ppb=64"]
        rows = run(out, "insert", traces, pol, extra=nofetch)
        print("\n### Insert-before-evict (VW = 100%) against evict-then-insert (window B − 1 pages)\n")
        print(grid(rows, names, pol))

    if want("preset"):
        rows = run(out, "micron", traces, MAIN, extra=nofetch + ["--preset", "micron"])
        print("\n### Device time (s) on the MICRON preset (25/220/1500 µs) instead of Table I\n")
        print(grid(rows, names, MAIN))

    if want("padding"):
        pol = ["ref:vw=0.75,vb=3,ppb=64"] + [f"bp-ref:vw=0.75,vb=3,ppb=64,pad={p}" for p in (0, 0.1, 0.2, 0.4, 0.6, 0.8)] + ["bplru:ppb=64"]
        rows = run(out, "padding", traces, pol, extra=nofetch)
        print("\n### BP-REF's padding threshold: device time (s)\n")
        print(grid(rows, names, pol))

    if args.adaptive and want("adaptive"):
        vws, vbs, pads = (0.5, 0.75, 1), (1, 3, 8), (0.1, 0.4, 1)
        fixed = [f"bp-ref:vw={vw},vb={vb},ppb=64,pad={pd}" for vw in vws for vb in vbs for pd in pads]
        pol = ["ref:vw=0.75,vb=3,ppb=64", "ref-adaptive:ppb=64,vb-max=8,read-us=10,write-us=200,erase-us=2000"] + fixed
        rows = run(out, "adaptive", traces, pol, extra=nofetch)
        print("\n### ref-adaptive against REF (75%, 3) and the best fixed (vw, vb, pad) of a 27-point grid\n")
        # The CSV spells ref-adaptive's parameters its own way (aliases resolved, `ftl=auto` and
        # defaults written out), so its rows are found by the policy's name.
        adaptive = next(r["policy"] for r in rows if r["policy"].startswith("ref-adaptive:"))
        res = []
        for n, _ in names:
            for d in ("bast", "fast"):
                r0 = secs(find(rows, names, n, d, pol[0]))
                ra = secs(find(rows, names, n, d, adaptive))
                best = min(fixed, key=lambda p: secs(find(rows, names, n, d, p)))
                rb = secs(find(rows, names, n, d, best))
                res.append([n, d.upper(), f"{r0:.1f}", f"{ra:.1f}", f"{rb:.1f}", best.replace("bp-ref:", "").replace(",ppb=64", ""),
                            f"{100 * (ra / r0 - 1):+.1f}%", f"{100 * (ra / rb - 1):+.1f}%"])
        print(table(["trace", "FTL", "REF 75%/3", "ref-adaptive", "best fixed", "best (vw, vb, pad)",
                     "adaptive vs REF", "adaptive vs best"], res))


if __name__ == "__main__":
    main()
