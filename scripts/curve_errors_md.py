#!/usr/bin/env python3
"""Markdown tables of docs/curves.md from the summaries of `flashbuf curve --error`.

Called by scripts/curve-tables.sh: curve_errors_md.py LABEL SUMMARY.txt... prints one table:
per curve (policy and method; "/64": 64-page sampling units), the mean absolute error of the hit
ratio in percentage points over the sizes, averaged over the seeds [range over seeds], and the
mean |estimated / full page writes - 1|, at sampling rates 1% and 10%."""
import re
import sys
from collections import OrderedDict

label, files = sys.argv[1], sys.argv[2:]
curves = OrderedDict()
for f in files:
    lines = open(f, encoding="utf-8").read().splitlines()
    start = lines.index("mean absolute errors against full simulation:")
    header = re.split(r"\s{2,}", lines[start + 1].strip())
    for line in lines[start + 3:]:
        if not line.strip():
            break
        cells = dict(zip(header, re.split(r"\s{2,}", line.strip())))
        m = re.match(r"(\S+) (≈?[\d.]+%) /(\d+)", cells["method"])
        method, rate, unit = m.group(1), m.group(2), m.group(3)
        if method == "shards-fixed-size":
            method, rate = f"SHARDS, fixed size 16,384 pages (rate {rate})", "fixed"
        policy = cells["policy"].split(":")[0]
        key = f"{policy} · {method.replace('shards', 'SHARDS')}" + (f" /{unit}" if unit != "1" else "")
        w = [k for k in header if k.startswith("mean |")][0]
        writes = cells[w] if float(cells["MAE writes/request (pp)"]) > 0 or float(cells[w]) > 0 else None
        curves.setdefault(key, {})[rate] = (cells["MAE hit ratio (pp)"], cells["range (pp)"], writes)
print(f"**{label}**\n")
print("| curve | hit ratio MAE (pp), 1% | 10% | relative page writes, 1% | 10% |")
print("| --- | --- | --- | --- | --- |")
def hit(by, rate):
    return f"{by[rate][0]} [{by[rate][1]}]" if rate in by else "–"
def writes(by, rate):
    if rate not in by:
        return "–"
    return f"{by[rate][2]} %" if by[rate][2] is not None else "no writes"
for key, by in curves.items():
    if "fixed" in by:
        print(f"| {key} | {hit(by, 'fixed')} | – | {writes(by, 'fixed')} | – |")
        continue
    print(f"| {key} | {hit(by, '1%')} | {hit(by, '10%')} | {writes(by, '1%')} | {writes(by, '10%')} |")
print()
