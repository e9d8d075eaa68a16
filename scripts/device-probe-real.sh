#!/usr/bin/env bash
# Probe throughput on real code, before and after the probe budget, side by side in one device
# call (issue #14 items 4-5; docs/execute.md "Probe budget"). A random subset of the isolated
# real-code corpus (.dev/realcode.tar.xz: the kernels whose id starts with one of PR_PREFIXES,
# about 1/16 of the 1,102 each) and the generated fixtures that are slow or fault
# (.dev/probe-work: slow_loop_*, block_limited_*, wild_store_*, say_* and a few plain ones) are
# built once (cached), then probed from copies of those stores:
#   old4   --probe-budget 0, 4 probe workers: what main did before (one wall per binding run)
#   new4   the probe budget (default), 4 workers
#   new8   the probe budget, 8 workers
#   new8s2 the same with 2 spare runners per worker (--probe-spares 2): session 5's real run
#          found the spare ready after only 69 of 260 runner ends
# (PR_MODES picks them: (old|new)<workers>[s<spares>]).
# Each prints kernels/s, probe seconds by bucket, the runners' counts, and the kernels whose
# verdict (outcome, binding) differs from old4's, with both bindings lists for the first ones.
#   on the GPU:  scripts/device-probe-real.sh OUT_DIR
#   carry:       build/bin .dev/realcode.tar.xz .dev/probe-work
# Environment: PR_BUDGET_S (450: the whole call, under the 8 minutes), PR_PREFIXES ("0 1 2"), PR_MODES
# ("old4 new4 new8 new8s2"), PR_CAP_S (100: SIGTERM cap of one probe pass; the probes in flight finish
# and the rate is over what was probed), PR_EXTRA (more execute options: a dry run without a GPU
# takes --probe-anyway), PR_ARCHIVE (.dev/realcode.tar.xz; an .dev/realcode already unpacked is
# used as it is). Needs python3 (the GPU machines have no sqlite3 CLI).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: scripts/device-probe-real.sh OUT_DIR}
mkdir -p "$OUT"
T_END=$(( $(date +%s) + ${PR_BUDGET_S:-450} ))
PREFIXES=${PR_PREFIXES:-0 1 2}
MODES=${PR_MODES:-old4 new4 new8 new8s2}
CAP=${PR_CAP_S:-100}
export PATH=$ROOT/build/bin:$PATH LSCAT_BIN=$ROOT/build/bin LSCAT_NO_PROGRESS=1 LSCAT_SHARE_DIR=$ROOT
JOBS=$(nproc)
S=$OUT/summary.txt
: > "$S"
note() { echo "$*" | tee -a "$S"; }
left() { echo $(( T_END - $(date +%s) )); }
q() { python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall(): print("|".join(map(str, r)))' "$@"; }
BASE=$(mktemp -d /tmp/lscat-probe-real.XXXXXX)
chmod 755 "$BASE"
trap 'rm -rf "$BASE"' EXIT
note "== gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $JOBS cores; modes $MODES; prefixes $PREFIXES"

# The real corpus: unpacked where it was isolated (/work/main/.dev/realcode: its sources' roots
# are absolute), its work folder copied, the store cut to the chosen prefixes.
[ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
if [ ! -f "$ROOT/.dev/realcode/work/lscat.db" ]; then
    python3 -c 'import os, sys, tarfile
t = tarfile.open(sys.argv[1])
t.extractall(sys.argv[2], [m for m in t if not os.path.lexists(os.path.join(sys.argv[2], m.name))])' \
        "$ROOT/${PR_ARCHIVE:-.dev/realcode.tar.xz}" "$ROOT" || { note "cannot unpack ${PR_ARCHIVE:-.dev/realcode.tar.xz}"; exit 3; }
fi
subset() { # store, SQL condition on kernels (k) to keep
    python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA foreign_keys = ON")
db.execute("DELETE FROM kernels WHERE NOT (%s)" % sys.argv[2].replace("k.", ""))
db.commit()
print(db.execute("SELECT count(*) FROM kernels").fetchone()[0])
PY
}
mkdir -p "$BASE/real" "$BASE/gen"
cp -a "$ROOT/.dev/realcode/work" "$BASE/real/w0"
cond=$(for p in $PREFIXES; do printf "k.id LIKE '%s%%' OR " "$p"; done)
note "== real: $(subset "$BASE/real/w0/lscat.db" "${cond% OR }") kernels (id prefixes $PREFIXES)"
if [ -d "$ROOT/.dev/probe-work/w" ]; then
    cp -a "$ROOT/.dev/probe-work/w" "$BASE/gen/w0"
    note "== generated: $(subset "$BASE/gen/w0/lscat.db" "k.name LIKE 'slow_loop%' OR k.name LIKE 'block_limited%' OR k.name LIKE 'wild_store%' OR k.name LIKE 'say%' OR k.name IN ('elementwise_2', 'elementwise_4', 'elementwise_6', 'grid2d_5', 'grid2d_10')") kernels (slow, faulting, printing, plain)"
fi

build() { # set
    local t0=$SECONDS
    timeout $(( $(left) > 260 ? 240 : $(left) - 20 )) lscat --work "$BASE/$1/w0" execute --no-probe \
        -j "$JOBS" --arch sm_90 > "$OUT/build-$1.log" 2>&1
    note "== build $1: exit $? in $(( SECONDS - t0 )) s: $(q "$BASE/$1/w0/lscat.db" "SELECT group_concat(status || ' ' || n, ', ') FROM (SELECT status, count(*) n FROM kernels GROUP BY 1)")"
}

probe() { # set mode
    local set=$1 mode=$2 w=$BASE/$1/$2 args=()
    [[ $mode =~ ^(old|new)([0-9]+)(s([0-3]))?$ ]] || { note "== bad mode $mode"; return; }
    [ "${BASH_REMATCH[1]}" = old ] && args=(--probe-budget 0)
    args+=(--probe-jobs "${BASH_REMATCH[2]}")
    [ -n "${BASH_REMATCH[4]}" ] && args+=(--probe-spares "${BASH_REMATCH[4]}")
    [ "$(left)" -gt 30 ] || { note "== $set $mode: skipped, $(left) s left"; return; }
    local cap=$(( $(left) - 20 < CAP ? $(left) - 20 : CAP ))
    cp -a "$BASE/$set/w0" "$w"
    local t1; t1=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout -s TERM -k 60 "$cap" lscat --work "$w" execute -j "$JOBS" --arch sm_90 "${args[@]}" ${PR_EXTRA:-} \
        > "$OUT/execute-$set-$mode.log" 2>&1
    local rc=$? wall; wall=$(python3 -c "import sys; print('%.2f' % ($(date +%s.%N) - $t1))")
    python3 - "$w/lscat.db" "$set" "$mode" "$wall" "$rc" "$cap" "${args[*]}" <<'PY' | tee -a "$S"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
st, mode, wall, rc, cap, opts = sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
q = lambda s: db.execute(s).fetchall()
n, tot = q("SELECT count(*), coalesce(sum(probe_s), 0) FROM probes")[0]
c = q("SELECT counts FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC LIMIT 1")
c = json.loads(c[0][0]) if c and c[0][0] else {}
print("== %s %-5s (%s) exit %s (cap %s s): %d probed in %.1f s = %.2f kernels/s; probe-seconds %.0f; "
      "runnable %s (small only %s), too_slow bindings %s; runner %s starts, %s runs, %s ended, %s spare ready"
      % (st, mode, opts, rc, cap, n, wall, n / wall if wall else 0, tot, c.get("runnable", "?"),
         c.get("small_only", "?"), c.get("too_slow", "-"), c.get("runner_starts", "-"),
         c.get("runner_probe_runs", "-"), c.get("runner_ended", "-"), c.get("runner_spare_ready", "-")))
b = q("SELECT sum(probe_s < 0.5), sum(probe_s >= 0.5 AND probe_s < 2), sum(probe_s >= 2 AND probe_s < 10), "
      "sum(probe_s >= 10 AND probe_s < 30), sum(probe_s >= 30), "
      "round(coalesce(sum(CASE WHEN probe_s >= 10 THEN probe_s END), 0)) FROM probes")[0]
print("   probes <0.5 s %s, <2 s %s, <10 s %s, <30 s %s, >=30 s %s; seconds in probes >=10 s: %s" % b)
for o, k, mean in q("SELECT outcome, count(*), avg(probe_s) FROM probes GROUP BY 1 ORDER BY 2 DESC"):
    print("   %-16s %4d, mean %.2f s" % (o, k, mean))
PY
}

compare() { # set: verdicts of each mode against old4's, on the kernels both probed
    python3 - "$BASE/$1" "$1" $MODES <<'PY' | tee -a "$S"
import os, sqlite3, sys
base, st, modes = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(m):
    p = os.path.join(base, m, "lscat.db")
    if not os.path.exists(p):
        return {}
    return {r[0]: r[1:] for r in sqlite3.connect(p).execute(
        "SELECT k.name || ' ' || substr(k.id, 1, 8), p.outcome, p.binding, round(p.probe_s, 2), p.bindings "
        "FROM probes p JOIN kernels k ON k.id = p.kernel_id")}
old = load("old4")
for m in modes:
    if m == "old4":
        continue
    new = load(m)
    both = sorted(set(old) & set(new))
    diff = [k for k in both if old[k][:2] != new[k][:2]]
    so = sum(old[k][2] for k in both); sn = sum(new[k][2] for k in both)
    print("== %s %s vs old4 on %d kernels both probed: probe-seconds %.0f vs %.0f; %d verdicts differ"
          % (st, m, len(both), sn, so, len(diff)))
    for k in diff[:12]:
        print("   %s: old %s/%s %.1f s -> %s/%s %.1f s" % (k, old[k][0], old[k][1], old[k][2], new[k][0], new[k][1], new[k][2]))
    for k in diff[:3]:
        print("     old %s\n     new %s" % (old[k][3][:600], new[k][3][:600]))
PY
}

build real
[ -d "$BASE/gen/w0" ] && build gen
for m in $MODES; do probe real "$m"; done
compare real
if [ -d "$BASE/gen/w0" ]; then
    for m in $MODES; do probe gen "$m"; done
    compare gen
    python3 - "$BASE/gen" $MODES <<'PY' | tee -a "$S"
import os, sqlite3, sys
for m in sys.argv[2:]:
    p = os.path.join(sys.argv[1], m, "lscat.db")
    if os.path.exists(p):
        rows = sqlite3.connect(p).execute("SELECT k.name, p.outcome, p.binding, round(p.probe_s, 2) FROM probes p "
            "JOIN kernels k ON k.id = p.kernel_id WHERE k.name LIKE 'slow%' OR k.name LIKE 'block%' ORDER BY 1").fetchall()
        print("== gen %s fixtures: %s" % (m, ", ".join("%s %s/%s %.1fs" % r for r in rows)))
PY
fi
echo
echo "==== summary ($OUT/summary.txt)"
cat "$S"
