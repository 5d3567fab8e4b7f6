#!/usr/bin/env bash
# The real-scale benchmark (issue "Real traces at real scale"): a 100-million-request, sparse,
# eight-volume MSR Cambridge CSV trace, zstd-compressed, through 6 policies × 4 buffer sizes,
# on this machine's cores: wall time, peak memory and decodings of the trace, the one-decoding
# design against the design before it (a run per decoding), on the same file; then the same after
# `flashbuf convert` to flashbuf's binary format.
#
#   scripts/bench-real-scale.sh                 # everything, 100M requests
#   REQUESTS=10000000 scripts/bench-real-scale.sh
#   OLD_BIN=/path/to/old/flashbuf scripts/bench-real-scale.sh
#
# The old design is built from OLD_REF (default: the last commit before the one-decoding design)
# in a git worktree under target/, unless OLD_BIN names a binary. The old design cannot put a
# multi-volume trace on a flash device (page numbers volume << 40 | page exceed any chip), so it
# is measured on the ideal device; the new one on both. Outputs go to target/real-scale/.
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${REQUESTS:-100000000}
OLD_REF=${OLD_REF:-bfcb3c4}
DIR=target/real-scale
POLICIES=${POLICIES:-lru,arc,cflru,ad-lru,cfdc,bplru}
BUFFERS=${BUFFERS:-2048,16384,65536,262144}
mkdir -p "$DIR"
export FLASHBUF_CACHE_DIR="$PWD/$DIR/cache"

cargo build --release -q -p flashbuf -p flashbuf-trace --examples --bins
NEW=target/release/flashbuf
TRACE="$DIR/msr-$REQUESTS.csv.zst"
if [ ! -f "$TRACE" ]; then
  echo "writing $TRACE ..."
  target/release/examples/msr_trace --requests "$REQUESTS" -o "$TRACE.tmp" && mv "$TRACE.tmp" "$TRACE"
fi
OLD=${OLD_BIN:-}
if [ -z "$OLD" ]; then
  WT=target/real-scale/old-src
  if [ ! -d "$WT" ]; then git worktree add --detach "$WT" "$OLD_REF" >/dev/null; fi
  (cd "$WT" && cargo build --release -q -p flashbuf)
  OLD=$WT/target/release/flashbuf
fi
ls -la "$TRACE"

# measure LABEL COMMAND...: wall seconds and peak RSS (/usr/bin/time), and the decodings of the
# trace: the times the process opened the trace file, counted by strace (seccomp filter: only
# openat is traced), when strace is installed.
measure() {
  local label=$1; shift
  local base="$DIR/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')"
  local trace_file=""
  for a in "$@"; do [ -f "$a" ] && trace_file=$(basename "$a"); done
  if command -v strace >/dev/null; then
    /usr/bin/time -f '%e %M' -o "$base.time" strace -f --seccomp-bpf -e trace=openat -o "$base.strace" "$@" > "$base.out"
    decodes=$(grep -c "$trace_file\"" "$base.strace" || true)
  else
    /usr/bin/time -f '%e %M' -o "$base.time" "$@" > "$base.out"
    decodes="n/a"
  fi
  read -r wall kb < "$base.time"
  printf '%-52s %9.1f s %7d MB %8s\n' "$label" "$wall" "$((kb / 1024))" "$decodes"
}

printf '%-52s %11s %10s %8s\n' "design, trace, device" "wall" "peak RSS" "decodes"
rm -rf "$FLASHBUF_CACHE_DIR"
# The old design reads the trace once for its size, then once per run.
measure "old: msr csv.zst, ideal" \
  "$OLD" run -q -t "$TRACE" -p "$POLICIES" -b "$BUFFERS" --device ideal --output csv
# The new design: one decoding for all runs; on a flash device a first pass for the footprint
# the first time (cached after that).
measure "new: msr csv.zst, ideal" \
  "$NEW" run -q -t "$TRACE" -p "$POLICIES" -b "$BUFFERS" --device ideal --output csv
measure "new: msr csv.zst, page (first time: + summary pass)" \
  "$NEW" run -q -t "$TRACE" -p "$POLICIES" -b "$BUFFERS" --device page --output csv
measure "new: msr csv.zst, page (summary cached)" \
  "$NEW" run -q -t "$TRACE" -p "$POLICIES" -b "$BUFFERS" --device page --output csv

BIN="$DIR/msr-$REQUESTS.fbt"
[ -f "$BIN" ] || measure "convert to binary" "$NEW" convert -q "$TRACE" "$BIN"
ls -la "$BIN"
measure "old: binary, ideal" \
  "$OLD" run -q -t "$BIN" -p "$POLICIES" -b "$BUFFERS" --device ideal --output csv
measure "new: binary, ideal" \
  "$NEW" run -q -t "$BIN" -p "$POLICIES" -b "$BUFFERS" --device ideal --output csv
measure "new: binary, page (first time: + summary pass)" \
  "$NEW" run -q -t "$BIN" -p "$POLICIES" -b "$BUFFERS" --device page --output csv
# The two designs must agree on every decision: compare hits and page writes of the ideal runs.
# (Block-padding policies pad one block more fully in the new design: the old ideal device ended
# at the trace's largest page and clipped the padding of its block; see docs/address-space.md.)
python3 - "$DIR" <<'PY'
import csv, os, sys
d = sys.argv[1]
def rows(name):
    with open(os.path.join(d, name)) as f:
        return {(r["policy"], r["buffer_pages"]): (int(r["hits"]), int(r["page_writes"]), int(r["requests"])) for r in csv.DictReader(f)}
for old, new in [("old__msr_csv_zst__ideal.out", "new__msr_csv_zst__ideal.out"), ("old__binary__ideal.out", "new__binary__ideal.out")]:
    a, b = rows(old), rows(new)
    same = [k for k in a if a[k] == b.get(k)]
    print(f"{old} vs {new}: {len(same)} of {len(a)} runs identical (hits, page writes, requests)")
    for k in a:
        if a[k] != b.get(k):
            print(f"  {k}: old {a[k]}, new {b.get(k)}")
PY
