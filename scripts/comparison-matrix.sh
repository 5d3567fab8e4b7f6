#!/usr/bin/env bash
# Regenerates docs/comparison.md: every workload × device × buffer size, the device time of the
# best seed policy (the four papers' policies), of flashbuf's own policy and of the other
# contenders, and the offline bound on the ideal device.
#
#   scripts/comparison-matrix.sh [--contenders LIST] [--baselines LIST] [--out FILE] [--work DIR] [--jobs N]
#
# --contenders  policies compared against the best seed policy, comma-separated (default:
#               fbp, casa, and ref-adaptive when `flashbuf list` knows it). The first is the one
#               the summary scores.
# --baselines   the cache community's policies run on the ideal device only, for the column "best
#               online" (the best of every online policy run there) and its share of the gap to
#               the bound (default: arc,2q,lru-2,clock,lirs,s3fifo,sieve; `none` leaves them out).
# --out         the Markdown file written (default docs/comparison.md).
# --work        where the result CSVs and the recorded engine trace go (default
#               target/comparison; nothing there is committed).
# --jobs        threads of each `flashbuf run` (default 2).
#
# docs/comparison-notes.md, when present, is the hand-written analysis placed after the summary.
#
# Workloads: the AD-LRU paper's five synthetic traces, the CFDC engine's page trace (recorded
# once with `flashbuf engine bench --record-trace` at the quick scale of `flashbuf reproduce
# cfdc`), the REF paper's stand-ins (the scan-mix specs of crates/reproduce/src/ref_paper.rs)
# and the real traces with read/write flags in ../shared/traces (skipped, with a message, when
# that directory is absent). Devices: page-mapped, BAST, FAST (8 log blocks) and the ideal
# device, all on the MICRON chip (AD-LRU Table 2); buffers 1%, 5%, 20% of each trace's distinct
# pages; database buffer (a write miss fetches its page); final flush counted. One
# `flashbuf run` per trace decodes it once for every policy, device and size.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/docs/comparison.md"
work="$root/target/comparison"
jobs=2
contenders=""
baselines="arc,2q,lru-2,clock,lirs,s3fifo,sieve"
while [ $# -gt 0 ]; do
    case "$1" in
        --contenders) contenders="$2"; shift 2 ;;
        --baselines) baselines="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        *) echo "comparison-matrix: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

cargo build --release -q -p flashbuf --manifest-path "$root/Cargo.toml"
fb="$root/target/release/flashbuf"
known=$("$fb" list 2>/dev/null | awk '{print $1}')
has() { printf '%s\n' "$known" | grep -qx "$1"; }
if [ -z "$contenders" ]; then
    contenders="fbp,casa"
    if has ref-adaptive; then contenders="fbp,ref-adaptive,casa"; else
        echo "comparison-matrix: ref-adaptive is not registered; the matrix leaves it out" >&2
    fi
fi
if [ "$baselines" = none ]; then baselines=""; fi
for p in ${contenders//,/ } ${baselines//,/ }; do
    has "${p%%:*}" || { echo "comparison-matrix: unknown policy '$p'" >&2; exit 2; }
done
seeds="lru,cflru,lru-wsr,ccf-lru,cflru-c,ad-lru,cfdc,fab,bplru,ref,bp-ref"
mkdir -p "$work"

# name|trace (a file or gen:SPEC)
workloads=(
    "adlru-random|gen:adlru-random"
    "adlru-read-most|gen:adlru-read-most"
    "adlru-write-most|gen:adlru-write-most"
    "adlru-zipf|gen:adlru-zipf"
    "adlru-zipf-1000k|gen:adlru-zipf-1000k"
)
engine_trace="$work/cfdc-engine.fbt"
if [ ! -s "$engine_trace" ]; then
    echo "comparison-matrix: recording the CFDC engine's page trace (quick scale)" >&2
    rm -f "$engine_trace"
    "$fb" engine bench -p lru -b 410 --device memory --wal off --records 100000 \
        --point-queries 10000 --point-updates 10000 --range-queries 20 --range-updates 20 \
        --record-trace "$engine_trace" -o "$work/cfdc-engine-record.txt" --force >/dev/null
fi
workloads+=("cfdc-engine|$engine_trace")
workloads+=(
    "ref-office|gen:scan-mix,requests=200000,pages=16384,write-ratio=0.6,scans=400,scan-length=128,scan-pages=262144,scan-writes=true,seed=2"
    "ref-jpeg|gen:scan-mix,requests=60000,pages=4096,write-ratio=0.8,scans=1000,scan-length=280,scan-pages=1048576,scan-writes=true,seed=3"
)
shared="$root/../shared/traces"
if [ -d "$shared" ]; then
    for f in cloudPhysicsIO.csv.zst msr-cambridge1-sample.csv tencent-cloud_storage-sample.bz2 tpcc-small.trace.zst; do
        if [ -f "$shared/$f" ]; then workloads+=("${f%%.*}|$shared/$f"); else
            echo "comparison-matrix: $shared/$f is absent; skipped" >&2; fi
    done
else
    echo "comparison-matrix: $shared is absent; the real traces are skipped" >&2
fi

csvs=()
for w in "${workloads[@]}"; do
    name=${w%%|*}
    trace=${w#*|}
    csv="$work/$name.csv"
    echo "comparison-matrix: $name" >&2
    "$fb" run -q -t "$trace" -p "$seeds,$contenders" -b 1%,5%,20% --device page,bast,fast,ideal \
        --bound -j "$jobs" --output csv -o "$csv" --force
    csvs+=("$name=$csv")
    if [ -n "$baselines" ]; then
        base_csv="$work/$name-baselines.csv"
        "$fb" run -q -t "$trace" -p "$baselines" -b 1%,5%,20% --device ideal \
            --bound -j "$jobs" --output csv -o "$base_csv" --force
        csvs+=("$name=$base_csv")
    fi
done

notes=()
if [ -f "$root/docs/comparison-notes.md" ]; then notes=(--notes "$root/docs/comparison-notes.md"); fi
python3 "$root/scripts/comparison-table.py" --seeds "$seeds" --contenders "$contenders" "${notes[@]}" \
    --baselines "$baselines" \
    --command "scripts/comparison-matrix.sh${contenders:+ --contenders $contenders}" \
    "${csvs[@]}" >"$out.tmp"
mv "$out.tmp" "$out"
echo "comparison-matrix: wrote $out" >&2
