#!/usr/bin/env bash
# The AD-LRU paper's Table 9 scale, before and after: wall time and peak memory of whole processes.
#
# One `flashbuf run` per device and binary: the self-similar 80-20 trace of 100 million requests
# over 10 million pages (the `adlru-selfsim-100m` preset; issue 12 sets its write ratio to 30%,
# the paper's trace has 80%: WRITES), a 524,288-page buffer (5% of the pages, the paper's 1 GB),
# the six policies of the AD-LRU paper (lru, cflru, lru-wsr, ccf-lru, cflru-c, ad-lru), one
# thread (JOBS), over the ideal device and over the default page-mapped device (MICRON, 7%
# over-provisioning, greedy, preconditioned sequentially). Each run is timed by /usr/bin/time -v
# (wall clock and maximum resident set size of the whole process, trace generation included).
# The binaries alternate inside every round (old, new, then the next device) so that the
# machine's load falls on both alike; the best wall time and the largest peak RSS over the rounds
# are reported. Every counted column (hits, page writes, flash programs, erases, copies, merges,
# device time) of the two binaries' results must agree, or the script says which differ: a
# speed change must not change a decision.
#
# Usage: scripts/bench-table9.sh OLD_BINARY [NEW_BINARY]   (NEW_BINARY default
# target/release/flashbuf). Build the old one in its own worktree, e.g.
#   git worktree add ../flashbuf-old 7ed697e && (cd ../flashbuf-old && cargo build --release -p flashbuf)
#   scripts/bench-table9.sh ../flashbuf-old/target/release/flashbuf
# Environment: ROUNDS (default 1), DEVICES (default "ideal page"), REQUESTS (default 100m),
# WRITES (default 0.3), BUFFER (default 524288), POLICIES, JOBS (default 1), OUT (the directory for
# the result files, default target/bench-table9).

set -euo pipefail
cd "$(dirname "$0")/.."

OLD=${1:?usage: scripts/bench-table9.sh OLD_BINARY [NEW_BINARY]}
NEW=${2:-target/release/flashbuf}
ROUNDS=${ROUNDS:-1}
DEVICES=${DEVICES:-"ideal page"}
REQUESTS=${REQUESTS:-100m}
WRITES=${WRITES:-0.3}
BUFFER=${BUFFER:-524288}
POLICIES=${POLICIES:-lru,cflru,lru-wsr,ccf-lru,cflru-c,ad-lru}
JOBS=${JOBS:-1}
OUT=${OUT:-target/bench-table9}
TRACE="gen:adlru-selfsim-100m,requests=$REQUESTS,write-ratio=$WRITES"

if [ ! -x "$NEW" ]; then
    cargo build --release --quiet -p flashbuf
fi
for b in "$OLD" "$NEW"; do
    [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }
done
mkdir -p "$OUT"

# seconds from /usr/bin/time's "h:mm:ss" or "m:ss.ss"
wall_s() { awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s}' "$1"; }
rss_kb() { awk -F': ' '/Maximum resident set size/ {print $2}' "$1"; }

declare -A best peak
for ((r = 1; r <= ROUNDS; r++)); do
    for d in $DEVICES; do
        for v in old new; do
            bin=$OLD
            [ "$v" = new ] && bin=$NEW
            load=$(cut -d' ' -f1 /proc/loadavg)
            /usr/bin/time -v "$bin" run -q --no-cache -t "$TRACE" -p "$POLICIES" -b "$BUFFER" --device "$d" \
                -j "$JOBS" --output csv -o "$OUT/$v-$d.csv" --force 2>"$OUT/$v-$d.time"
            s=$(wall_s "$OUT/$v-$d.time")
            k=$(rss_kb "$OUT/$v-$d.time")
            echo "round $r, $d, $v: ${s} s, peak RSS $((k / 1024)) MiB (load average at start $load)"
            key="$v-$d"
            if [ -z "${best[$key]:-}" ] || (($(echo "$s < ${best[$key]}" | bc -l))); then best[$key]=$s; fi
            if [ -z "${peak[$key]:-}" ] || ((k > ${peak[$key]})); then peak[$key]=$k; fi
        done
    done
done

echo
echo "Table 9 scale: $TRACE, buffer $BUFFER pages, policies $POLICIES, $JOBS thread(s), best of $ROUNDS round(s)"
printf "%-7s %12s %12s %8s %14s %14s\n" device "before (s)" "after (s)" speedup "before RSS" "after RSS"
for d in $DEVICES; do
    printf "%-7s %12.1f %12.1f %7.2fx %10d MiB %10d MiB\n" "$d" "${best[old-$d]}" "${best[new-$d]}" \
        "$(echo "${best[old-$d]} / ${best[new-$d]}" | bc -l)" $((peak[old-$d] / 1024)) $((peak[new-$d] / 1024))
done

# The decisions must not have changed: compare every counted column the two binaries share.
python3 - "$OUT" $DEVICES <<'EOF'
import csv, sys
out, devices = sys.argv[1], sys.argv[2:]
counted = ["requests", "hits", "misses", "page_reads", "fetches", "padding_reads", "page_writes",
           "evict_writes", "padding_writes", "bypass_writes", "flush_writes", "flash_reads",
           "flash_programs", "erases", "page_copies", "merges_switch", "merges_partial",
           "merges_full", "erase_count_min", "erase_count_max", "device_time_us"]
bad = 0
for d in devices:
    rows = {}
    for v in ("old", "new"):
        with open(f"{out}/{v}-{d}.csv") as f:
            rows[v] = {r["policy_name"]: r for r in csv.DictReader(f)}
    for p, new in rows["new"].items():
        old = rows["old"].get(p)
        if old is None:
            print(f"{d}/{p}: no result from the old binary"); bad += 1; continue
        for c in counted:
            if c in old and c in new and old[c] != new[c]:
                print(f"{d}/{p}: {c} differs: before {old[c]}, after {new[c]}"); bad += 1
print("results: every counted column identical before and after" if bad == 0 else f"results: {bad} differences")
sys.exit(1 if bad else 0)
EOF
