#!/usr/bin/env bash
# The output check on a GPU (issue #21): the three kernels of the issue (1D saxpy, 2D
# five-point stencil, naive matmul: tests/isolate/fixtures/indexing) isolated HERE (isolate needs
# libclang, which the GPU machines lack), then on the device: execute (build, probe), tune over
# LS-CAT's 20 shapes (--space lscat) and over the shapes fitted to each kernel's indexing (the
# default, in a copy of the store). Prints per kernel and space the share of configurations
# that match / mismatch / are nondeterministic, the best block per size with and without the
# mismatching rows, and what the check cost against the sweep's wall time.
#   here:        scripts/device-samework.sh prepare          (writes ./lscat-work, build/ needed)
#   on the GPU:  scripts/device-samework.sh run OUT_DIR      (carry build and lscat-work)
# Finishes in well under 4 minutes on an H200 (3 kernels x 140 configurations, twice).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export LSCAT_BIN=$ROOT/build/bin PATH="$ROOT/build/bin:$PATH" LSCAT_NO_PROGRESS=1 LSCAT_SHARE_DIR=$ROOT
W=$ROOT/lscat-work
case "${1:-}" in
prepare)
    rm -rf "$W" && mkdir -p "$W/src"
    cp tests/isolate/fixtures/indexing/{saxpy,stencil,matmul}.cu "$W/src/"
    lscat --work "$W" init -q && lscat --work "$W" isolate --path "$W/src" -j2 -q || exit 3
    sqlite3 "$W/lscat.db" "SELECT name, indexing FROM kernels ORDER BY name"
    echo "prepared $W: carry build and lscat-work to the device, run: $0 run OUT"
    exit 0 ;;
run) OUT=${2:?usage: $0 run OUT_DIR} ;;
*) echo "usage: $0 prepare | run OUT_DIR" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
note() { echo "$*" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"
note "== gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
t0=$(date +%s)
timeout 100 lscat --work "$W" execute -j 8 > "$OUT/execute.log" 2>&1
note "== execute: exit $? in $(( $(date +%s) - t0 )) s; $(sqlite3 "$W/lscat.db" "SELECT group_concat(name || ':' || status || ':' || coalesce(binding, '-'), ' ') FROM kernels")"
cp "$W/lscat.db" "$W/fit.db"
for space in lscat fit; do
    db=$W/lscat.db; [ $space = fit ] && db=$W/fit.db
    extra=""; [ $space = lscat ] && extra="--space lscat"
    t1=$(python3 -c 'import time; print(time.time())')
    # shellcheck disable=SC2086
    timeout 100 lscat --work "$W" --db "$db" tune $extra > "$OUT/tune-$space.log" 2>&1
    rc=$?
    wall=$(python3 -c "import time; print('%.1f' % (time.time() - $t1))")
    note "== tune --space $space: exit $rc, wall ${wall} s: $(tail -1 "$OUT/tune-$space.log")"
    python3 - "$db" "$space" "$wall" <<'PY' | tee -a "$OUT/summary.txt"
import sqlite3, sys
db, space, wall = sqlite3.connect(sys.argv[1]), sys.argv[2], float(sys.argv[3])
q = db.execute
for name, ix, kid in q("SELECT name, indexing, id FROM kernels ORDER BY name"):
    rows = q("SELECT output_check, count(*) FROM measurements WHERE kernel_id = ? AND "
             "superseded = 0 AND status = 'ok' GROUP BY 1", (kid,)).fetchall()
    n = sum(c for _, c in rows) or 1
    shares = ", ".join("%s %.0f%% (%d)" % (k, 100.0 * c / n, c) for k, c in rows)
    print("  %-9s %-11s %s" % (name, ix, shares or "no ok rows"))
    changed = 0
    for (w,) in q("SELECT DISTINCT width FROM measurements WHERE kernel_id = ? ORDER BY 1", (kid,)):
        def best(cond):
            r = q("SELECT block_x || 'x' || block_y, median_ns, output_check FROM measurements "
                  "WHERE kernel_id = ? AND width = ? AND superseded = 0 AND status = 'ok' " + cond +
                  " ORDER BY median_ns LIMIT 1", (kid, w)).fetchone()
            return r
        a, b = best(""), best("AND output_check = 'match'")
        if a and b and a[0] != b[0]:
            changed += 1
        print("    %4d: best of all ok %-8s %9.1f ns (%s) | best of match %-8s %s" % (
            w, a[0] if a else "-", a[1] if a else 0, a[2] if a else "-", b[0] if b else "-",
            "%.1f ns" % b[1] if b else "-"))
    print("    best blocks that change once mismatches are excluded: %d" % changed)
check_s = (q("SELECT coalesce(sum(check_ns), 0) FROM measurements WHERE superseded = 0").fetchone()[0]) / 1e9
print("  check cost %.3f s of the sweep's %.1f s wall (%.1f%%)" % (check_s, wall, 100 * check_s / wall))
PY
done
note "== total $(( $(date +%s) - t0 )) s"
