#!/usr/bin/env bash
# Issue #14 (session 11, build11): the 69 kernels session 10's store left build-failed (B4: template
# arguments, B5: other classes) and every kernel whose isolated source ISOLATE_VERSION 10 changed,
# built and probed on this GPU. Prints per kernel: before (session 10's store) and after (built,
# probe outcome), then the counts: built and runnable, before -> after, and every kernel that
# was runnable before and is not now (a regression).
#
# Usage: scripts/device-build11.sh OUT_DIR
# Needs (carried): build/bin, .dev/build11 (scripts/build11-prepare.sh here: repos.tar.xz and work/: lscat.db,
#   kernels/, before.tsv: the kernel's id, name, status and class in session 10's store (same
#   repository, file and name), group: B4|B5 (the 69) or changed (a source ISOLATE_VERSION 10
#   changed)).
# Environment: B11_BUDGET_S=420 (execute's limit), B11_JOBS=(cores), B11_PROBE_JOBS=4
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: scripts/device-build11.sh OUT_DIR}
D=$ROOT/.dev/build11
mkdir -p "$OUT"
[ -f "$D/work/before.tsv" ] && [ -f "$D/work/lscat.db" ] ||
    { echo "device-build11: run scripts/build11-prepare.sh first ($D/work)" >&2; exit 2; }
BIN=$ROOT/build/bin
if [ -f "$D/repos.tar.xz" ]; then # repairs pull declarations from the repositories: here
    mkdir -p "$D/repos" && tar xJf "$D/repos.tar.xz" -C "$D/repos" || exit 3
    /usr/bin/env python3 - "$D" <<'EOF' || exit 3
import os, sqlite3, sys
d = sys.argv[1]
db = sqlite3.connect(d + "/work/lscat.db")
for (root,) in db.execute("SELECT root FROM sources").fetchall():
    here = os.path.join(d, "repos", os.path.basename(root))
    if os.path.isdir(here):
        db.execute("UPDATE sources SET root = ? WHERE root = ?", (here, root))
db.commit()
EOF
fi
t0=$(date +%s)
PATH=$BIN:$PATH LSCAT_BIN=$BIN LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 \
    timeout -k 20 "${B11_BUDGET_S:-420}" "$BIN/lscat" --work "$D/work" -j "${B11_JOBS:-$(nproc)}" \
    execute --arch sm_90 --probe-jobs "${B11_PROBE_JOBS:-4}" > "$OUT/execute.log" 2>&1
echo "execute: exit $? in $(( $(date +%s) - t0 )) s"
cp "$D/work/lscat.db" "$OUT/after.db"
/usr/bin/env python3 - "$D/work" <<'EOF' 2>&1 | tee "$OUT/summary.txt" | tail -n 110
import sqlite3, sys
d = sys.argv[1]
rows = {}
db = sqlite3.connect(d + "/lscat.db")
for kid, name, st, cls, outcome in db.execute(
        """SELECT k.id, k.name, k.status, b.error_class, p.outcome FROM kernels k LEFT JOIN
           builds b ON b.kernel_id = k.id LEFT JOIN probes p ON p.kernel_id = k.id"""):
    rows[kid] = (name, st, cls, outcome)
before = [l.rstrip("\n").split("\t") for l in open(d + "/before.tsv")]
count = {}
for kid, name, st0, cls0, group in before:
    name1, st1, cls1, out1 = rows.get(kid, (name, "missing", None, None))
    built0, built1 = st0 not in ("build_failed", "isolated", "missing"), st1 not in ("build_failed", "isolated", "missing")
    run0, run1 = st0 in ("runnable", "given_up"), st1 in ("runnable", "given_up")
    c = count.setdefault(group, [0] * 5)
    c[0] += 1; c[1] += built0; c[2] += built1; c[3] += run0; c[4] += run1
    flag = "REGRESSION " if run0 and not run1 else ""
    print("%s%-8s %-40s before %-12s %-20s after %-12s %s %s" % (flag, group, name[:40], st0,
          cls0 or "", st1, cls1 or "", out1 or ""))
for g, c in sorted(count.items()):
    print("%s: %d kernels; built %d -> %d; runnable %d -> %d" % (g, c[0], c[1], c[2], c[3], c[4]))
EOF
