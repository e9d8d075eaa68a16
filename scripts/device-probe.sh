#!/usr/bin/env bash
# Probe throughput and fault cost, before and after, side by side in one call (issue #14 items
# 4-6). A generated set of small distinct kernels (scripts/gen-probe-kernels.py: element-wise,
# 2D, faulting, slow, printing) is isolated HERE (isolate needs libclang, which the GPU machines
# lack); on the device it is built once (cached), then probed from copies of that store:
#   old4  a process per probe run, 4 probe workers  (--no-probe-runner: the path before)
#   new4  probe runners with spares, 4 workers      (the default now)
#   new8  probe runners with spares, 8 workers
#   old8  (only with PROBE_OLD8=1) a process per probe run, 8 workers
# each printing kernels/s, the mean probe time per outcome and the runners' counts; then the
# cost of a faulting tune configuration (the block-limited kernel: 12 of its 20 1D shapes fault
# at 240x240) with and without the spare runner against a clean kernel of the same shape; then a
# slow kernel (~1 s or more a launch at 2024x2024) tuned with --timeout 10 the old way (no
# sample budget, no deadline plan) and the new way.
#   here:        scripts/device-probe.sh prepare [N]     (writes .dev/probe-work; build/ needed)
#   on the GPU:  scripts/device-probe.sh run OUT_DIR     (carry build/bin and .dev/probe-work)
# PROBE_EXTRA adds execute options (a dry run without a GPU: --probe-anyway).
# Under 8 minutes on an H200 node with 16 cores (caps below); the summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export LSCAT_BIN=$ROOT/build/bin PATH="$ROOT/build/bin:$PATH" LSCAT_NO_PROGRESS=1 LSCAT_SHARE_DIR=$ROOT
SRC=${PROBE_WORK:-$ROOT/.dev/probe-work}   # PROBE_WORK: elsewhere (a dry run)
# The GPU machines have no sqlite3 program: its one-statement form through Python's sqlite3
# (session 5's run printed "not runnable" for the tune fixtures because `kid` found no sqlite3).
command -v sqlite3 > /dev/null || sqlite3() { python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall():
    print("|".join("" if v is None else str(v) for v in r))' "$@"; }
case "${1:-}" in
prepare)
    N=${2:-200}
    rm -rf "$SRC" && mkdir -p "$SRC"
    python3 scripts/gen-probe-kernels.py "$N" "$SRC/src" || exit 3
    lscat --work "$SRC/w" init -q && lscat --work "$SRC/w" isolate --path "$SRC/src" -j2 -q || exit 3
    echo "isolated: $(sqlite3 "$SRC/w/lscat.db" "SELECT count(*) FROM kernels") kernels"
    echo "prepared $SRC ($(du -sh "$SRC" | cut -f1)): carry build/bin and .dev/probe-work, run: $0 run OUT"
    exit 0 ;;
run) OUT=${2:?usage: $0 run OUT_DIR} ;;
*) echo "usage: $0 prepare [N] | run OUT_DIR" >&2; exit 2 ;;
esac
[ -f "$SRC/w/lscat.db" ] || { echo "no $SRC/w/lscat.db: run '$0 prepare' here first" >&2; exit 2; }
mkdir -p "$OUT"
S=$OUT/summary.txt
: > "$S"
note() { echo "$*" | tee -a "$S"; }
now() { python3 -c 'import time; print("%.3f" % time.time())'; }
JOBS=$(nproc)
BASE=$(mktemp -d /tmp/lscat-probe-bench.XXXXXX)
chmod 755 "$BASE"
trap 'rm -rf "$BASE"' EXIT
note "== gpu: $(nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader 2>&1 | head -1); $JOBS cores"
cp -a "$SRC/w" "$BASE/w0"
t0=$(now)
timeout 240 lscat --work "$BASE/w0" execute --no-probe -j "$JOBS" --arch sm_90 > "$OUT/build.log" 2>&1
note "== build (once, cached for every probe run): exit $? in $(python3 -c "print('%.1f' % ($(now) - $t0))") s; $(sqlite3 "$BASE/w0/lscat.db" "SELECT group_concat(status || ' ' || n, ', ') FROM (SELECT status, count(*) n FROM kernels GROUP BY 1)")"

# One probe run: copy of the built store, probed with the given options (SIGTERM at the cap:
# the probes in flight finish and are recorded; the rate is over what was probed).
probe_run() {
    local name=$1 cap=$2; shift 2
    local w=$BASE/$name
    cp -a "$BASE/w0" "$w"
    local t1; t1=$(now)
    # shellcheck disable=SC2086
    timeout -s TERM "$cap" lscat --work "$w" execute -j "$JOBS" --arch sm_90 ${PROBE_EXTRA:-} "$@" \
        > "$OUT/execute-$name.log" 2>&1
    local rc=$? wall; wall=$(python3 -c "print('%.2f' % ($(now) - $t1))")
    python3 - "$w/lscat.db" "$name" "$wall" "$rc" "$*" <<'PY' | tee -a "$S"
import json, sqlite3, sys
db, name, wall, rc, opts = sqlite3.connect(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
q = lambda s, *a: db.execute(s, a).fetchall()
probed = q("SELECT count(*) FROM probes")[0][0]
counts = q("SELECT counts FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC LIMIT 1")
c = json.loads(counts[0][0]) if counts and counts[0][0] else {}
print("== %-5s %-36s exit %s: %d probed in %.1f s = %.2f kernels/s; runnable %s; runner: %s starts, "
      "%s runs, %s ended, %s spare ready" % (name, opts, rc, probed, wall, probed / wall if wall else 0,
      c.get("runnable", "?"), c.get("runner_starts", "-"), c.get("runner_probe_runs", "-"),
      c.get("runner_ended", "-"), c.get("runner_spare_ready", "-")))
for outcome, n, mean, mx, runs in q("SELECT outcome, count(*), avg(probe_s), max(probe_s), "
        "avg(json_array_length(bindings)) FROM probes GROUP BY 1 ORDER BY 2 DESC"):
    print("   %-16s %4d kernels, probe mean %.3f s (max %.2f), %.2f runs each: %.3f s a run"
          % (outcome, n, mean, mx, runs, mean / runs if runs else 0))
PY
}
probe_run old4 120 --probe-jobs 4 --no-probe-runner
probe_run new4 90 --probe-jobs 4
probe_run new8 90 --probe-jobs 8
[ "${PROBE_OLD8:-0}" = 1 ] && probe_run old8 150 --probe-jobs 8 --no-probe-runner

# Tune's fault cost: the block-limited kernel (12 faulting shapes at 240x240, skipped above)
# against a clean element-wise kernel, with and without the spare runner, from new8's store.
kid() { sqlite3 "$BASE/new8/lscat.db" "SELECT id FROM kernels WHERE name = '$1' AND status = 'runnable'"; }
FAULTY=$(kid block_limited_1) CLEAN=$(kid elementwise_2)
tune_run() {
    local name=$1 kernel=$2; shift 2
    local w=$BASE/tune-$name
    rm -rf "$w" && cp -a "$BASE/new8" "$w"
    local t1; t1=$(now)
    env "$@" timeout 120 lscat --work "$w" tune --kernel "$kernel" --max-failures 20 \
        > "$OUT/tune-$name.log" 2>&1
    local rc=$?
    python3 -c "print('%.2f' % ($(now) - $t1))" > "$OUT/tune-$name.wall"
    python3 - "$w/lscat.db" "$name" "$(cat "$OUT/tune-$name.wall")" "$rc" <<'PY' | tee -a "$S"
import json, sqlite3, sys
db, name, wall, rc = sqlite3.connect(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
st = dict(db.execute("SELECT status, count(*) FROM measurements GROUP BY 1").fetchall())
c = db.execute("SELECT counts FROM stage_runs WHERE stage = 'tune' ORDER BY id DESC LIMIT 1").fetchone()
c = json.loads(c[0]) if c and c[0] else {}
print("== tune %-14s exit %s, wall %.2f s: %s; spare takeovers %s, processes %s"
      % (name, rc, wall, st, c.get("spare_takeovers", "-"), c.get("processes", "-")))
PY
}
if [ -n "$FAULTY" ] && [ -n "$CLEAN" ]; then
    tune_run clean "$CLEAN"
    tune_run faults-nospare "$FAULTY" LSCAT_TUNE_SPARE_RUNNER=0
    tune_run faults-spare "$FAULTY"
    python3 - "$OUT" <<'PY' | tee -a "$S"
import sys
w = {n: float(open("%s/tune-%s.wall" % (sys.argv[1], n)).read()) for n in ("clean", "faults-nospare", "faults-spare")}
# 140 configurations clean; the faulting kernel: 8 shapes x 7 sizes ok, 12 faults, 72 skipped
for n in ("faults-nospare", "faults-spare"):
    print("== fault cost %-15s (wall - clean wall x 56/140) / 12 faults = %.3f s a fault"
          % (n + ":", (w[n] - w["clean"] * 56 / 140) / 12))
PY
else
    note "== tune fault cost: block_limited_1 or elementwise_2 not runnable (see execute-new8.log)"
fi

# A long kernel: slow_loop_7 at 1680x1680 and 2024x2024, block 256, --timeout 10.
SLOW=$(kid slow_loop_7)
if [ -n "$SLOW" ]; then
    for mode in before after; do
        w=$BASE/slow-$mode && cp -a "$BASE/new8" "$w"
        extra=(); envs=()
        [ $mode = before ] && extra=(--config-budget 0) envs=(LSCAT_TUNE_DEADLINE_PLAN=0)
        t1=$(now)
        env "${envs[@]}" timeout 150 lscat --work "$w" tune --kernel "$SLOW" --sizes 1680,2024 \
            --blocks 256 --timeout 10 --max-failures 3 "${extra[@]}" > "$OUT/tune-slow-$mode.log" 2>&1
        rc=$?
        wall=$(python3 -c "print('%.1f' % ($(now) - $t1))")
        note "== slow kernel, $mode: exit $rc, wall $wall s: $(sqlite3 "$w/lscat.db" "SELECT group_concat(width || ':' || status || ':' || coalesce(round(median_ns / 1e6, 1), '-') || 'ms:' || coalesce(samples, '-') || 'samples', ' ') FROM measurements"); $(sqlite3 "$w/lscat.db" "SELECT json_extract(counts, '$.budget_cut') || ' budget cuts, ' || json_extract(counts, '$.deadline_extended') || ' deadlines extended' FROM stage_runs WHERE stage = 'tune' ORDER BY id DESC LIMIT 1")"
    done
else
    note "== slow kernel: slow_loop_7 not runnable (see execute-new8.log)"
fi
echo
echo "==== summary ($OUT/summary.txt)"
cat "$S"
