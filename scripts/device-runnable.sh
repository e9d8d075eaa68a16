#!/usr/bin/env bash
# Issue #14, the runnable share on real code, in one device call: the kernels that session 7's
# real-code store left probe_failed are built (with this tree's harness body: the `tokens`
# binding) and probed twice on this GPU from the same corpus, first with the probe's own
# blocks only (--no-block-retry), then with the block retry (docs/execute.md "Block retry");
# tune then measures the kernels runnable after (sizes 240,1016) so that "runnable" is seen to
# give measurements. Prints, per pattern (scripts/realcode-nonrunnable.py), how many of session
# 7's failures run in each (column ok@1: the tokens binding, ok@2: + the block retry) and every
# kernel that changed with its binding and block.
#
# Usage: scripts/device-runnable.sh OUT_DIR
# Needs (carried): build/bin, the corpus .dev/realcode7.tar.xz (what realcode-gpu.sh unpacks)
# and session 7's store .dev/rc-store-s7c7.db.gz (/work/notes/rc-s7/call7/rc/real.db.gz).
# Environment: RB_BUDGET_S=480 (all phases), RB_TUNE=1 (0: no tune), RB_JOBS=(cores),
#   RB_PROBE_TIMEOUT=10 (both runs; session 7 had 30: its 8 hangs would take minutes),
#   RB_ARCHIVE, RB_STORE, RB_BIN=build/bin, RB_LIMIT=N (only N kernels: a dry run without a GPU)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: scripts/device-runnable.sh OUT_DIR}
mkdir -p "$OUT"
T_END=$(( $(date +%s) + ${RB_BUDGET_S:-480} ))
left() { echo $(( T_END - $(date +%s) )); }
log() { echo "[runnable $(date +%H:%M:%S) $(left)s left] $*" | tee -a "$OUT/runnable.log"; }
ARCHIVE=${RB_ARCHIVE:-.dev/realcode7.tar.xz}
STORE=${RB_STORE:-.dev/rc-store-s7c7.db.gz}
BIN=$ROOT/${RB_BIN:-build/bin}
W=$ROOT/.dev/realcode/work
JOBS=${RB_JOBS:-$(nproc)}
PY=$(command -v python3)
[ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; } # paths isolated there
export PATH=$BIN:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 LSCAT_BIN=$BIN
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
if [ ! -f "$W/lscat.db" ]; then
    log "unpacking $ARCHIVE"
    if command -v xz > /dev/null; then
        tar xJf "$ARCHIVE" -C "$ROOT" --skip-old-files
    else
        "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$ARCHIVE" "$ROOT"
    fi
fi
[ -d "$W/kernels" ] || { log "no corpus in $W after unpacking $ARCHIVE"; exit 3; }
# this tree's harness body (the tokens binding) in every harness.cu of the corpus
log "$(scripts/realcode-refresh-harness.sh "$W" 2>&1 | tail -1)"
gzip -dc "$STORE" > "$OUT/s7.db" || { log "cannot read $STORE"; exit 3; }

# The store of this run: session 7's, with only its probe_failed kernels, unbuilt and unprobed.
rm -f "$W/rb-before.db"
"$PY" - "$OUT/s7.db" "$W/rb-before.db" "${RB_LIMIT:-0}" <<'EOF' || { log "cannot make the store"; exit 3; }
import sqlite3, sys
s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d)
d.execute("PRAGMA foreign_keys = ON")
d.execute("DELETE FROM kernels WHERE status != 'probe_failed'")
if len(sys.argv) > 3 and int(sys.argv[3]) > 0:  # RB_LIMIT: a dry run on a few kernels
    d.execute("DELETE FROM kernels WHERE id NOT IN (SELECT id FROM kernels ORDER BY id LIMIT ?)",
              (int(sys.argv[3]),))
for t in ("probes", "builds", "measurements", "failures"):
    d.execute("DELETE FROM %s" % t)
d.execute("UPDATE kernels SET status = 'isolated', binding = NULL")
d.commit()
print("kernels to probe:", d.execute("SELECT count(*) FROM kernels").fetchone()[0])
EOF
rm -f "$W/rb-after.db"

run_execute() { # DB LOG [execute options]: build + probe the store's kernels within the budget
    local db=$1 lg=$2 t0; shift 2
    t0=$(date +%s)
    timeout -k 20 $(( $(left) - ${RESERVE:-0} )) lscat --work "$W" --db "$db" -j "$JOBS" execute \
        --probe-jobs 4 --probe-timeout "${RB_PROBE_TIMEOUT:-10}" "$@" > "$OUT/$lg" 2>&1
    log "execute $* -> exit $? in $(( $(date +%s) - t0 )) s: $(grep -o 'execute: [0-9]* kernels.*' "$OUT/$lg" | tail -1)"
}
RESERVE=$(( ${RB_BUDGET_S:-480} * 55 / 100 )) run_execute "$W/rb-before.db" execute-before.log --no-block-retry
# after: the same builds (cached); the probes that faulted are made again, now with the block
# retry (an ok or a timeout before cannot change: the retry follows faults only)
"$PY" - "$W/rb-before.db" "$W/rb-after.db" <<'EOF'
import sqlite3, sys
s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d)
redo = "SELECT kernel_id FROM probes WHERE outcome NOT IN ('ok', 'timeout')"
d.execute("UPDATE kernels SET status = 'built', binding = NULL WHERE id IN (%s)" % redo)
d.execute("DELETE FROM probes WHERE kernel_id IN (%s)" % redo)
d.commit()
print("kernels to probe again:", d.execute("SELECT count(*) FROM kernels WHERE status = 'built'").fetchone()[0])
EOF
RESERVE=$([ "${RB_TUNE:-1}" = 1 ] && echo $(( ${RB_BUDGET_S:-480} / 4 )) || echo 0) \
    run_execute "$W/rb-after.db" execute-after.log
if [ "${RB_TUNE:-1}" = 1 ] && [ "$(left)" -gt 40 ]; then
    t0=$(date +%s)
    timeout -k 20 $(( $(left) - 25 )) lscat --work "$W" --db "$W/rb-after.db" tune \
        --sizes 240,1016 > "$OUT/tune.log" 2>&1
    log "tune -> exit $? in $(( $(date +%s) - t0 )) s"
fi
cp "$W/rb-before.db" "$W/rb-after.db" "$OUT/" 2>/dev/null
gzip -f "$OUT/rb-before.db" "$OUT/rb-after.db" 2>/dev/null

{
    echo "== runnable before (--no-block-retry) and after (block retry), by session 7's pattern"
    "$PY" scripts/realcode-nonrunnable.py --work="$W" "$OUT/s7.db" "$W/rb-before.db" "$W/rb-after.db"
    echo "== kernels runnable now (session 7: probe_failed): when, binding, detail, probe s, tune rows ok/all"
    "$PY" - "$W/rb-before.db" "$W/rb-after.db" <<'EOF'
import sqlite3, sys
b = dict(sqlite3.connect(sys.argv[1]).execute("SELECT kernel_id, outcome FROM probes").fetchall())
a = sqlite3.connect(sys.argv[2])
rows = a.execute("""SELECT k.id, k.name, p.outcome, p.binding, p.detail, p.probe_s,
    (SELECT count(*) FROM measurements m WHERE m.kernel_id = k.id AND m.status = 'ok'),
    (SELECT count(*) FROM measurements m WHERE m.kernel_id = k.id)
    FROM kernels k JOIN probes p ON p.kernel_id = k.id ORDER BY k.name""").fetchall()
for kid, name, out, bind, det, s, ok, allm in rows:
    if out == "ok" or b.get(kid) == "ok":
        when = "both" if out == b.get(kid) == "ok" else "after" if out == "ok" else "LOST"
        print("%-5s %-34.34s %-6s %-58.58s %5.1fs tune %d/%d" % (when, name, bind, det or "",
                                                               s or 0, ok, allm))
pb = sum(v == "ok" for v in b.values())
pa = sum(r[2] == "ok" for r in rows)
tokens = sum(r[2] == "ok" and r[3] == "tokens" for r in rows)
print("probed %d of session 7's probe_failed kernels: runnable without the block retry %d, "
      "with it %d (%d under tokens); probe time with it %.0f s"
      % (len(rows), pb, pa, tokens, sum(r[5] or 0 for r in rows)))
EOF
    grep -h "reblocked\|execute:" "$OUT"/execute-*.log | tail -2
} 2>&1 | tee "$OUT/summary.txt" | tail -n 60
rm -f "$OUT/s7.db"
