"""Runs one libCacheSim policy over an oracleGeneral trace and prints one line:
`<policy> <requests> <hit ratio> <seconds>` (the seconds of the simulation call alone).

Used by scripts/bench-libcachesim.sh, which times whole processes; this script only has to run
the same workload as `flashbuf run` does: a cache of N objects (every object of the trace has
the same size, so the cache size is N times that size, per-object metadata not counted).
"""

import sys
import time

import libcachesim as lcs

POLICIES = {
    "lru": lambda n: lcs.LRU(n),
    "clock": lambda n: lcs.Clock(n),
    "arc": lambda n: lcs.ARC(n),
    "2q": lambda n: lcs.TwoQ(n),
    "lru-2": lambda n: lcs.LRUK(n, k=2),
}


def main():
    policy, trace, objects = sys.argv[1], sys.argv[2], int(sys.argv[3])
    reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE)
    first = reader.read_one_req()
    size = max(first.obj_size, 1)
    reader.reset()
    cache = POLICIES[policy](objects * size)
    start = time.perf_counter()
    miss_ratio, _ = cache.process_trace(reader)
    elapsed = time.perf_counter() - start
    print(f"{policy} {reader.get_num_of_req()} {1.0 - miss_ratio:.6f} {elapsed:.3f}")


if __name__ == "__main__":
    main()
