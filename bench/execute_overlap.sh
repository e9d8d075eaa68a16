#!/usr/bin/env bash
# execute's builds beside its probes, measured side by side in one run on the same K kernels:
#   builds only (--no-probe), then probes only (the same builds, cached), then both at once from
#   scratch; prints the three wall times and sequential / side by side (the ideal is
#   (builds + probes) / max(builds, probes)).
# With a CUDA device the probes are real (execute's fixture `ok`, a different constant each).
# Without one they are stand-ins (the probe_waits fixture sleeping BENCH_PROBE_S, default 1 s,
# --probe-anyway): the numbers then measure the scheduling, not a GPU, and the line says so.
# Env: BENCH_JOBS (default nproc), BENCH_PROBE_JOBS (default min(jobs, 4)), BENCH_OVERLAP_KERNELS
# (default 64 with a GPU, 4 x jobs without).
set -eu
cd "$(dirname "$0")/.."
BIN=$(cd "${LSCAT_BIN:-build/bin}" && pwd)
export PATH="$BIN:$PATH" LSCAT_NO_PROGRESS=1
N=${BENCH_JOBS:-$(nproc)}
P=${BENCH_PROBE_JOBS:-$(( N < 4 ? N : 4 ))}
if [ -n "$("$BIN/lscat-gpuinfo" 2>/dev/null)" ]; then
    GPU=1 FIXTURE=ok K=${BENCH_OVERLAP_KERNELS:-64} MODE="real probes"
    PROBE=()
else
    GPU=0 FIXTURE=probe_waits K=${BENCH_OVERLAP_KERNELS:-$(( 4 * N ))}
    export LSCAT_TEST_PROBE_SLEEP_S=${BENCH_PROBE_S:-1}
    MODE="no GPU: stand-in probes of ${LSCAT_TEST_PROBE_SLEEP_S} s"
    PROBE=(--probe-anyway)
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lscat-bench-XXXXXX")
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
export LSCAT_WORK=$T/work LSCAT_DB=$T/work/lscat.db LSCAT_LOCK_DIR=$T/locks
lscat init -q
. bench/lib/kernels.sh
forget() { # builds and probes, not the timing core
    sql <<<"DELETE FROM probes; DELETE FROM builds; DELETE FROM failures; UPDATE kernels SET status = 'isolated';"
    find "$LSCAT_WORK/builds" -mindepth 1 -maxdepth 1 -not -name 'core-*' -exec rm -rf {} +
}
ex() { lscat execute -q --arch sm_90 -j "$N" --probe-jobs "$P" "$@" >/dev/null 2>&1 || true; }

# Warm-up outside the timings: the timing core is compiled once per architecture list.
add_kernels warm 1
ex --no-probe
add_kernels bench "$((K - 1))"
forget
t0=$(now); ex --no-probe; t1=$(now)
t2=$(now); ex "${PROBE[@]}"; t3=$(now)
forget
t4=$(now); ex "${PROBE[@]}"; t5=$(now)
probed=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM probes").fetchone()[0])' "$LSCAT_DB")
awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" -v t4="$t4" -v t5="$t5" -v k="$K" -v n="$N" -v p="$P" -v probed="$probed" -v mode="$MODE" 'BEGIN {
    b = t1 - t0; q = t3 - t2; both = t5 - t4; ideal = (b + q) / (b > q ? b : q)
    printf "execute builds beside probes (%s): %d kernels, -j %d, --probe-jobs %d: builds only %.2f s, probes only %.2f s, side by side %.2f s (%d probed): %.2fx faster than one after the other (ideal %.2fx)\n", mode, k, n, p, b, q, both, probed, (b + q) / both, ideal }'
