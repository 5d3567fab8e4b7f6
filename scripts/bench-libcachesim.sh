#!/usr/bin/env bash
# flashbuf against libCacheSim on the same oracleGeneral file, as whole processes.
#
# The foundation benchmark (10M requests, Zipf 0.99 over 1M pages, a 100,000-page buffer) is
# generated once by `flashbuf bench --trace-only`. Each round runs, for every policy, `flashbuf
# bench --repeat 1 --trace FILE` (one run over the ideal device: open the file, simulate, report)
# and then libCacheSim's Python package (its C core through `process_trace`, interpreter start and
# import included) on the file, each as a whole process timed from outside; the best of the
# rounds is reported for each, with the ratio of the rates. (`flashbuf run` first scans a trace
# file for its statistics, a pass that costs more than the simulation itself.) libCacheSim is installed with pip into a
# local virtual environment (default target/bench-venv); if that fails the script says so and
# reports flashbuf alone.
#
# Usage: scripts/bench-libcachesim.sh [ROUNDS]   (environment: FLASHBUF = the flashbuf binary,
# default target/release/flashbuf, built if missing; VENV = the virtual environment directory;
# POLICIES = the flashbuf policy names, default "lru arc 2q clock lru-2"; BUFFER, REQUESTS, PAGES)

set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
FLASHBUF=${FLASHBUF:-target/release/flashbuf}
VENV=${VENV:-target/bench-venv}
POLICIES=${POLICIES:-"lru arc 2q clock lru-2"}
BUFFER=${BUFFER:-100000}
REQUESTS=${REQUESTS:-10000000}
PAGES=${PAGES:-1000000}

if [ ! -x "$FLASHBUF" ]; then
    cargo build --release --quiet
fi

TRACE=$("$FLASHBUF" bench -q --trace-only --requests "$REQUESTS" --pages "$PAGES")

# libCacheSim, if it can be installed.
LCS=""
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import libcachesim" 2>/dev/null; then
    LCS="$VENV/bin/python"
elif python3 -m venv "$VENV" >/dev/null 2>&1 && "$VENV/bin/pip" install --quiet libcachesim >/dev/null 2>&1 \
    && "$VENV/bin/python" -c "import libcachesim" 2>/dev/null; then
    LCS="$VENV/bin/python"
else
    echo "libCacheSim: the Python package could not be installed into $VENV (pip install libcachesim failed);"
    echo "             reporting flashbuf alone."
fi

now() { date +%s.%N; }

declare -A best_fb best_lcs hit_fb hit_lcs
for ((r = 1; r <= ROUNDS; r++)); do
    for p in $POLICIES; do
        t0=$(now)
        out=$("$FLASHBUF" bench -q --repeat 1 --trace "$TRACE" -p "$p" -b "$BUFFER")
        t1=$(now)
        s=$(echo "$t1 - $t0" | bc -l)
        hit_fb[$p]=$(echo "$out" | tail -1 | awk '{gsub("%", "", $4); print $4 / 100}')
        if [ -z "${best_fb[$p]:-}" ] || (($(echo "$s < ${best_fb[$p]}" | bc -l))); then best_fb[$p]=$s; fi
        if [ -n "$LCS" ]; then
            t0=$(now)
            line=$("$LCS" scripts/bench_libcachesim.py "$p" "$TRACE" "$BUFFER")
            t1=$(now)
            s=$(echo "$t1 - $t0" | bc -l)
            hit_lcs[$p]=$(echo "$line" | awk '{print $3}')
            if [ -z "${best_lcs[$p]:-}" ] || (($(echo "$s < ${best_lcs[$p]}" | bc -l))); then best_lcs[$p]=$s; fi
        fi
    done
done

echo "trace: $TRACE ($REQUESTS requests), buffer $BUFFER pages, whole processes, best of $ROUNDS interleaved rounds"
printf "%-7s %14s %10s %16s %10s %8s\n" policy "flashbuf req/s" "hit ratio" "libCacheSim req/s" "hit ratio" ratio
for p in $POLICIES; do
    fb=$(echo "$REQUESTS / ${best_fb[$p]} / 1000000" | bc -l)
    if [ -n "$LCS" ]; then
        lcs=$(echo "$REQUESTS / ${best_lcs[$p]} / 1000000" | bc -l)
        ratio=$(echo "${best_lcs[$p]} / ${best_fb[$p]}" | bc -l)
        printf "%-7s %10.2f M/s %10.4f %12.2f M/s %10.4f %7.2fx\n" "$p" "$fb" "${hit_fb[$p]}" "$lcs" "${hit_lcs[$p]}" "$ratio"
    else
        printf "%-7s %10.2f M/s %10.4f %16s %10s %8s\n" "$p" "$fb" "${hit_fb[$p]}" "-" "-" "-"
    fi
done
