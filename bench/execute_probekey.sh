#!/usr/bin/env bash
# What a new timing core costs `lscat execute` now that probes are keyed by the probe key (the
# build key's inputs but the core; docs/execute.md "Probe key"), measured side by side in one
# run on the same K kernels, built and probed first:
#   1. a new timing core (a copy of the core's sources, one comment added): every harness is
#      rebuilt, nothing is probed again;
#   2. another new timing core and every kernel.cu edited (one comment added): every harness is
#      rebuilt and probed again, which is what a new timing core cost before probe keys.
# Prints both wall times, the probes each ran and 2 / 1.
# With a CUDA device the probes are real (execute's fixture `ok`, a different constant each);
# without one they are stand-ins (the probe_waits fixture sleeping BENCH_PROBE_S, default 1 s,
# --probe-anyway) and the line says so.
# Env: BENCH_JOBS (default nproc), BENCH_PROBE_JOBS (default min(jobs, 4)),
# BENCH_PROBEKEY_KERNELS (default 64 with a GPU, 4 x jobs without).
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$(cd "${LSCAT_BIN:-build/bin}" && pwd)
export PATH="$BIN:$PATH" LSCAT_NO_PROGRESS=1
N=${BENCH_JOBS:-$(nproc)}
P=${BENCH_PROBE_JOBS:-$(( N < 4 ? N : 4 ))}
if [ -n "$("$BIN/lscat-gpuinfo" 2>/dev/null)" ]; then
    FIXTURE=ok K=${BENCH_PROBEKEY_KERNELS:-64} MODE="real probes"
    PROBE=()
else
    FIXTURE=probe_waits K=${BENCH_PROBEKEY_KERNELS:-$(( 4 * N ))}
    export LSCAT_TEST_PROBE_SLEEP_S=${BENCH_PROBE_S:-1}
    MODE="no GPU: stand-in probes of ${LSCAT_TEST_PROBE_SLEEP_S} s"
    PROBE=(--probe-anyway)
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lscat-bench-XXXXXX")
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
export LSCAT_WORK=$T/work LSCAT_DB=$T/work/lscat.db LSCAT_LOCK_DIR=$T/locks
export LSCAT_SHARE_DIR=$T/share
mkdir -p "$LSCAT_SHARE_DIR/tune"
for f in timing.h timing.cu stats.c nvml_dl.h; do cp "$ROOT/tune/$f" "$LSCAT_SHARE_DIR/tune/"; done
chmod -R a+rX "$LSCAT_SHARE_DIR"
lscat init -q
. bench/lib/kernels.sh
ex() { lscat execute -q --arch sm_90 -j "$N" --probe-jobs "$P" "${PROBE[@]}" "$@" >/dev/null 2>&1 || true; }
probed_last() { sql "SELECT json_extract(counts, '\$.probed') FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC LIMIT 1"; }

add_kernels bench "$K"
ex # built and probed once, the core compiled: outside the timings
echo "/* a new timing core */" >>"$LSCAT_SHARE_DIR/tune/timing.cu"
t0=$(now); ex; t1=$(now)
p1=$(probed_last)
echo "/* another timing core */" >>"$LSCAT_SHARE_DIR/tune/timing.cu" # compiled in both runs
for f in "$LSCAT_WORK"/kernels/*/*/kernel.cu; do echo "/* edited */" >>"$f"; done
t2=$(now); ex; t3=$(now)
p2=$(probed_last)
awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" -v k="$K" -v n="$N" -v p="$P" -v p1="$p1" -v p2="$p2" -v mode="$MODE" 'BEGIN {
    a = t1 - t0; b = t3 - t2
    printf "execute after a new timing core (%s): %d kernels, -j %d, --probe-jobs %d: rebuilt, probes kept %.2f s (%d probed); rebuilt and probed again (a new core and every kernel edited: what a new core cost before probe keys) %.2f s (%d probed): %.2fx\n", mode, k, n, p, a, p1, b, p2, b / a }'
