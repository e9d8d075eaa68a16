#!/usr/bin/env bash
# Issue #14, P1/P4 (kernels written for one launch), in one device call: the GPU test
# (build/tests/execute/gpu_launch: a fixed 32x4 tile and a kernel needing 64 KiB of dynamic
# shared memory probe ok with the source's launch, and tune measures it), then session 10's
# 49 P1/P4 probe failures (/work/notes/s11/nonrunnable.tsv), isolated at ISOLATE_VERSION 10 (the
# source's launch in params.json) and packed by `scripts/device-launch.sh pack`, are built and
# probed with the source's launch first in the block retry, and tune measures those runnable
# (sizes 240,1016). Prints, per kernel: its pattern, the source's launch, the probe's verdict and
# detail, the tune rows ok/all; and the count of runnable kernels last.
#
# Usage: scripts/device-launch.sh OUT_DIR          (on the device)
#        scripts/device-launch.sh pack P14_DIR       (here: .dev/p14 -> .dev/launch11-p14.tar.xz)
# Needs (carried): build/bin, build/tests, .dev/launch11-p14.tar.xz.
# Environment: LB_BUDGET_S=420 (everything), LB_JOBS=(cores), LB_PROBE_TIMEOUT=10.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=$(command -v python3)
if [ "${1:-}" = pack ]; then # P14_DIR/w/<repo>/{lscat.db,kernels}, P14_DIR/launches.tsv
    P=${2:?usage: scripts/device-launch.sh pack P14_DIR}
    rm -rf "$P/pack" && mkdir -p "$P/pack"
    "$PY" - "$P" <<'PYEOF' || exit 3
import os, shutil, sqlite3, sys
p = sys.argv[1]
want = [l.rstrip("\n").split("\t") for l in open(os.path.join(p, "launches.tsv"))]
for repo in sorted(set(w[2] for w in want)):
    src = os.path.join(p, "w", repo, "lscat.db")
    dst_dir = os.path.join(p, "pack", repo)
    os.makedirs(dst_dir)
    s = sqlite3.connect(src); d = sqlite3.connect(os.path.join(dst_dir, "lscat.db")); s.backup(d)
    keep = []
    for grp, name, r, path, _ in want:
        if r != repo:
            continue
        row = d.execute("SELECT k.id, k.dir FROM kernels k JOIN kernel_occurrences o ON "
                        "o.kernel_id = k.id WHERE k.name = ? AND o.path = ? LIMIT 1",
                        (name, path)).fetchone()
        if row:
            keep.append(row[0])
            shutil.copytree(os.path.join(p, "w", repo, row[1]), os.path.join(dst_dir, row[1]))
    d.execute("PRAGMA foreign_keys = ON")
    d.execute("DELETE FROM kernels WHERE id NOT IN (%s)" % ",".join("?" * len(keep)), keep)
    d.commit(); d.execute("VACUUM"); d.close()
shutil.copy(os.path.join(p, "launches.tsv"), os.path.join(p, "pack"))
PYEOF
    tar cJf .dev/launch11-p14.tar.xz -C "$P" pack && ls -la .dev/launch11-p14.tar.xz
    exit 0
fi
OUT=${1:?usage: scripts/device-launch.sh OUT_DIR}
mkdir -p "$OUT"
T_END=$(( $(date +%s) + ${LB_BUDGET_S:-420} ))
left() { echo $(( T_END - $(date +%s) )); }
log() { echo "[launch $(date +%H:%M:%S) $(left)s left] $*" | tee -a "$OUT/launch.log"; }
BIN=$ROOT/build/bin
export PATH=$BIN:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 LSCAT_BIN=$BIN LSCAT_TEST_BIN=$ROOT/build/tests
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
timeout 240 build/tests/execute/gpu_launch > "$OUT/gpu_launch.txt" 2>&1
log "gpu_launch exit $?: $(grep -c '^ok' "$OUT/gpu_launch.txt") ok, $(grep -c '^not ok\|^FAIL\|^fail' "$OUT/gpu_launch.txt") failed"
W=$ROOT/.dev/launch11-p14
rm -rf "$W" && mkdir -p "$W" && tar xJf .dev/launch11-p14.tar.xz -C "$W" || { log "cannot unpack"; exit 3; }
for d in "$W"/pack/*/; do
    [ "$(left)" -gt 60 ] || { log "budget: stopped before $(basename "$d")"; break; }
    r=$(basename "$d")
    timeout -k 10 $(( $(left) - 50 )) lscat --work "$d" -j "${LB_JOBS:-$(nproc)}" execute \
        --probe-jobs 4 --probe-timeout "${LB_PROBE_TIMEOUT:-10}" > "$OUT/execute-${r//+/_}.log" 2>&1
    log "$r: execute exit $?: $(grep -o 'execute: [0-9]* kernels.*' "$OUT/execute-${r//+/_}.log" | tail -1 | cut -c1-150)"
    runnable=$("$PY" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
        "SELECT count(*) FROM kernels WHERE status = ?", ("runnable",)).fetchone()[0])' "$d/lscat.db")
    if [ "$(left)" -gt 60 ] && [ "${runnable:-0}" -gt 0 ]; then
        timeout -k 10 $(( $(left) - 40 )) lscat --work "$d" tune --sizes 240,1016 --samples 3 \
            --min-sample-ms 0.2 > "$OUT/tune-${r//+/_}.log" 2>&1
        log "$r: tune exit $?"
    fi
done
"$PY" - "$W/pack" <<'PYEOF' 2>&1 | tee "$OUT/summary.txt" | tail -n 60
import os, sqlite3, sys
p = sys.argv[1]
n = ok = 0
for l in open(os.path.join(p, "launches.tsv")):
    grp, name, repo, path, launch = l.rstrip("\n").split("\t")
    d = sqlite3.connect(os.path.join(p, repo, "lscat.db"))
    r = d.execute("""SELECT p.outcome, p.detail, (SELECT count(*) FROM measurements m WHERE
        m.kernel_id = k.id AND m.status = 'ok'), (SELECT count(*) FROM measurements m WHERE
        m.kernel_id = k.id), k.status FROM kernels k JOIN kernel_occurrences o ON
        o.kernel_id = k.id LEFT JOIN probes p ON p.kernel_id = k.id WHERE k.name = ? AND
        o.path = ? LIMIT 1""", (name, path)).fetchone()
    n += 1
    if not r:
        print("%-3s %-30.30s %-40.40s not isolated" % (grp, name, launch)); continue
    ok += r[0] == "ok"
    print("%-3s %-30.30s %-40.40s %-15s %-70.70s tune %d/%d" % (grp, name, launch.replace('"', ''),
          r[0] or r[4], (r[1] or "").replace("\n", " "), r[2], r[3]))
    if r[0] == "ok" and r[2] < r[3]:  # what the tune rows that did not run said
        for st, b, cnt, err in d.execute("""SELECT m.status, m.block_x || 'x' || m.block_y || 'x' ||
                m.block_z, count(*), min(m.error) FROM measurements m JOIN kernel_occurrences o ON
                o.kernel_id = m.kernel_id JOIN kernels k ON k.id = m.kernel_id WHERE k.name = ? AND
                o.path = ? AND m.status != 'ok' GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 4""",
                (name, path)):
            print("      tune %s %s x%d: %s" % (st, b, cnt, (err or "")[:100]))
print("P1/P4 kernels of session 10 (all probe_failed there): %d, runnable now %d" % (n, ok))
PYEOF
