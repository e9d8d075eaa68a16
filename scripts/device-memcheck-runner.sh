#!/usr/bin/env bash
# Issue #14 (session 12): the memcheck runner (--probe-memcheck auto) side by side with the plain
# probe (--probe-memcheck off) on the same builds, one device call (docs/execute.md "The memcheck
# runner"). Run from the repository root:  scripts/device-memcheck-runner.sh OUT
# with a bundle folder MC_BUNDLE (default .dev/s12-mcr12) holding bin/ (lscat's binaries,
# lscat-runner included), gpu_memcheck (build/tests/execute/gpu_memcheck),
# realcode9full.tar.xz and faulty-ids-70.txt; carry that folder. Session 12 ran it as
# `bash .dev/s12-mcr12/device.sh OUT` (this script with the bundle beside it).
#  1. compute-sanitizer's version; whether fd 3 reaches its target (the runner's result pipe)
#  2. the 71 fault-heavy kernels of session 10 (faulty-ids-70.txt, v9 corpus): built once, probed
#     off then auto (4 probe workers, each pass capped)
#  3. tests/execute/gpu_memcheck (a shared-tile overrun through the memcheck runner)
#  4. if time is left: the v9 kernels whose id starts with 0 (~90), auto then off
# Summary last (OUT/summary.txt); logs and per-pass probe tables in OUT/logs.tgz.
set -uo pipefail
ROOT=$PWD
B=$ROOT/${MC_BUNDLE:-.dev/s12-mcr12}
SUM=$(dirname "$0")/device-memcheck-runner.py
[ -f "$SUM" ] || SUM=$B/summarize.py
OUT=${1:?usage: device.sh OUT_DIR}
mkdir -p "$OUT"
T_END=$(( $(date +%s) + ${MC_BUDGET_S:-440} ))
BIN=$B/bin
SAN=/usr/local/cuda/bin/compute-sanitizer
export LSCAT_NO_PROGRESS=1 LSCAT_SHARE_DIR=$ROOT LSCAT_BIN=$BIN
unset LSCAT_RUNNER
JOBS=$(nproc)
S=$OUT/summary.txt
: > "$S"
L=$OUT/logs
mkdir -p "$L"
note() { echo "$*" | tee -a "$S"; }
left() { echo $(( T_END - $(date +%s) )); }
BASE=$(mktemp -d /tmp/lscat-mc12.XXXXXX)
chmod 755 "$BASE"
trap 'rm -rf "$BASE"' EXIT
note "== gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $JOBS cores; $($SAN --version 2>&1 | grep -i version | head -1)"
note "== fd 3 under compute-sanitizer: $($SAN --tool memcheck bash -c 'test -e /proc/self/fd/3 && echo passed || echo CLOSED' 3>/dev/null 2>&1 | grep -E 'passed|CLOSED' | head -1)"

[ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
WORK=$ROOT/.dev/realcode/work9
if [ ! -f "$WORK/lscat.db" ]; then
    python3 -c 'import os, sys, tarfile
t = tarfile.open(sys.argv[1])
t.extractall(sys.argv[2], [m for m in t if not os.path.lexists(os.path.join(sys.argv[2], m.name))])' \
        "$B/realcode9full.tar.xz" "$ROOT" || { note "cannot unpack the corpus"; exit 3; }
fi
select_kernels() { # DIR COND
    cp -a "$WORK" "$1"
    python3 - "$1/lscat.db" "$2" <<'PY' | tee -a "$S"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA foreign_keys = ON")
db.execute("DELETE FROM kernels WHERE NOT (%s)" % sys.argv[2])
db.commit()
print("== %d kernels (%s)" % (db.execute("SELECT count(*) FROM kernels").fetchone()[0], sys.argv[2][:60]))
PY
    # the harness bodies stay as isolated (ISOLATE_VERSION 9): both passes probe the same builds
}
build() { # DIR NAME
    local t0=$SECONDS
    timeout $(( $(left) > 200 ? 180 : $(left) - 20 )) "$BIN/lscat" --work "$1" execute --no-probe \
        -j "$JOBS" --arch sm_90 > "$L/build-$2.log" 2>&1
    note "== build $2: exit $? in $(( SECONDS - t0 )) s: $(tail -1 "$L/build-$2.log" | cut -c1-200)"
}
settle() {
    local left_procs i
    left_procs=$(ps -eo uid=,pid=,comm= | awk '$1 >= 61000 && $1 < 62000')
    [ -n "$left_procs" ] && note "   $1: $(printf '%s\n' "$left_procs" | grep -c .) sandbox-uid processes left: $(printf '%s\n' "$left_procs" | awk '{print $3}' | sort | uniq -c | tr '\n' ' ')"
    printf '%s\n' "$left_procs" | awk 'NF { print $2 }' | xargs -r kill -9 2>/dev/null
    for ((i = 0; i < 40; i++)); do
        [ -z "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)" ] && break
        sleep 1
    done
    [ "$i" -gt 0 ] && note "   $1: waited ${i} s for the GPU to have no compute apps"
    return 0
}
pass() { # SRC NAME CAP memcheck(off|auto)
    local w=$BASE/p-$2 cap=$3 t1 rc wall
    [ "$(left)" -gt 40 ] || { note "== $2: skipped, $(left) s left"; return 1; }
    (( cap > $(left) - 25 )) && cap=$(( $(left) - 25 ))
    cp -a "$1" "$w"
    settle "before $2"
    t1=$(date +%s.%N)
    timeout -s TERM -k 30 "$cap" "$BIN/lscat" --work "$w" execute -j "$JOBS" --arch sm_90 \
        --probe-jobs 4 --probe-memcheck "$4" ${MC_EXTRA:-} > "$L/execute-$2.log" 2>&1
    rc=$?
    wall=$(python3 -c "import sys; print('%.2f' % ($(date +%s.%N) - $t1))")
    settle "after $2"
    python3 "$SUM" pass "$w/lscat.db" "$2" "$wall" "$rc" "$cap" | tee -a "$S"
    python3 - "$w/lscat.db" "$L/probes-$2.jsonl" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
with open(sys.argv[2], "w") as f:
    for r in db.execute("SELECT k.name, k.id, p.outcome, p.binding, p.probe_s, p.detail, p.bindings FROM probes p JOIN kernels k ON k.id = p.kernel_id"):
        f.write(json.dumps(dict(zip(("name", "id", "outcome", "binding", "probe_s", "detail", "bindings"), r))) + "\n")
PY
}

# 2. the 71 fault-heavy kernels
IDS=${MC_IDS:-$B/faulty-ids-70.txt} # MC_IDS, MC_EXTRA (--probe-anyway): a dry run without a GPU
select_kernels "$BASE/w71" "id IN ($(sed "s/.*/'&'/" "$IDS" | paste -sd,))"
build "$BASE/w71" 71
pass "$BASE/w71" 71-off 150 off
pass "$BASE/w71" 71-auto 150 auto
[ -f "$BASE/p-71-off/lscat.db" ] && [ -f "$BASE/p-71-auto/lscat.db" ] &&
    python3 "$SUM" compare "$BASE/p-71-off/lscat.db" "$BASE/p-71-auto/lscat.db" | tee -a "$S"

# 3. the GPU test
G=$B/gpu_memcheck
if [ "$(left)" -gt 70 ]; then
    settle "before gpu_memcheck"
    LSCAT_ROOT=$ROOT timeout $(( $(left) > 130 ? 120 : $(left) - 10 )) "$G" > "$L/gpu_memcheck.log" 2>&1
    note "== gpu_memcheck: exit $?: $(grep -c '^ok' "$L/gpu_memcheck.log") ok, $(grep -c '^not ok' "$L/gpu_memcheck.log") not ok, $(grep -c '^skip' "$L/gpu_memcheck.log") skipped"
    grep -E '^not ok|^# runnable' "$L/gpu_memcheck.log" | cut -c1-400 | head -4 | tee -a "$S"
else
    note "== gpu_memcheck: not run, $(left) s left"
fi

# 4. a shard: ids starting with 0 (auto first this time)
if [ "$(left)" -gt 150 ]; then
    select_kernels "$BASE/w0" "id LIKE '0%'"
    build "$BASE/w0" 0
    pass "$BASE/w0" 0-auto 70 auto
    pass "$BASE/w0" 0-off 70 off
    [ -f "$BASE/p-0-off/lscat.db" ] && [ -f "$BASE/p-0-auto/lscat.db" ] &&
        python3 "$SUM" compare "$BASE/p-0-off/lscat.db" "$BASE/p-0-auto/lscat.db" | tee -a "$S"
else
    note "== shard 0: not run, $(left) s left"
fi
for f in "$L"/*.log; do
    [ "$(wc -c < "$f")" -gt 300000 ] && { tail -c 300000 "$f" > "$f.tail" && mv "$f.tail" "$f"; }
done
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$L"
echo
echo "==== summary ($OUT/summary.txt)"
cat "$S"
