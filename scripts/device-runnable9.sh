#!/usr/bin/env bash
# Issue #14 (session 9), struct arguments and template values from call sites, in one device
# call: session 7's P5 (struct arguments with pointer members), B4 (template arguments isolate
# could not infer) and P8 (tile values left at 1) kernels, isolated by main's lscat and by this
# tree's (scripts/realcode9-prepare.sh packs both), are built and probed on this GPU side by
# side: main's binaries on main's isolation, this tree's on its own. Prints per pattern: built,
# probed, runnable, before -> after, and every kernel whose outcome changed.
#
# Usage: scripts/device-runnable9.sh OUT_DIR
# Needs (carried): build/bin (this tree's), .dev/bin-main (main's build/bin, before the merge),
#   .dev/realcode9.tar.xz (scripts/realcode9-prepare.sh).
# Environment: R9_BUDGET_S=420 (both runs), R9_JOBS=(cores), R9_PROBE_TIMEOUT=10,
#   R9_BEFORE_BIN=.dev/bin-main, R9_AFTER_BIN=build/bin, R9_ARCHIVE=.dev/realcode9.tar.xz
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: scripts/device-runnable9.sh OUT_DIR}
mkdir -p "$OUT"
T_END=$(( $(date +%s) + ${R9_BUDGET_S:-420} ))
left() { echo $(( T_END - $(date +%s) )); }
log() { echo "[runnable9 $(date +%H:%M:%S) $(left)s left] $*" | tee -a "$OUT/runnable9.log"; }
ARCHIVE=${R9_ARCHIVE:-.dev/realcode9.tar.xz}
JOBS=${R9_JOBS:-$(nproc)}
PY=$(command -v python3)
T=$ROOT/.dev/rc9
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
rm -rf "$T"
if command -v xz > /dev/null; then
    tar xJf "$ARCHIVE" -C "$ROOT"
else
    "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$ARCHIVE" "$ROOT"
fi
[ -f "$T/before/lscat.db" ] && [ -f "$T/after/lscat.db" ] || { log "no stores in $ARCHIVE"; exit 3; }

run_side() { # SIDE BIN RESERVE_S: build + probe the side's kernels with its own binaries
    local side=$1 bin=$ROOT/$2 t0
    t0=$(date +%s)
    PATH=$bin:$PATH LSCAT_BIN=$bin LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 \
        timeout -k 20 $(( $(left) - $3 )) "$bin/lscat" --work "$T/$side" --db "$T/$side/lscat.db" \
        -j "$JOBS" execute --probe-jobs 4 --probe-timeout "${R9_PROBE_TIMEOUT:-10}" \
        > "$OUT/execute-$side.log" 2>&1
    log "$side ($2): exit $? in $(( $(date +%s) - t0 )) s: $(grep -o 'execute: [0-9]* kernels.*' "$OUT/execute-$side.log" | tail -1)"
}
run_side before "${R9_BEFORE_BIN:-.dev/bin-main}" $(( ${R9_BUDGET_S:-420} * 45 / 100 ))
run_side after "${R9_AFTER_BIN:-build/bin}" 10
cp "$T/before/lscat.db" "$OUT/before.db"; cp "$T/after/lscat.db" "$OUT/after.db"
gzip -f "$OUT/before.db" "$OUT/after.db"

"$PY" - "$T" <<'EOF' 2>&1 | tee "$OUT/summary.txt" | tail -n 70
import collections, sqlite3, sys
t = sys.argv[1]
want = [l.rstrip("\n").split("\t") for l in open(t + "/patterns.tsv")]
def load(side):
    db = sqlite3.connect("%s/%s/lscat.db" % (t, side))
    return db.execute("""SELECT k.name, o.path, k.template_args, k.status, p.outcome, p.binding,
        COALESCE(p.detail, (SELECT b.error_class || ': ' || a.first_error FROM builds b JOIN
        build_attempts a ON a.build_id = b.id WHERE b.kernel_id = k.id AND b.status = 'failed'
        ORDER BY a.attempt DESC LIMIT 1)) FROM kernels k JOIN kernel_occurrences o
        ON o.kernel_id = k.id LEFT JOIN probes p ON p.kernel_id = k.id""").fetchall()
side = {s: load(s) for s in ("before", "after")}
def find(s, name, path, tmpl):
    # an explicit specialisation (mul<__half>, no template_args) is its own kernel
    rows = [r for r in side[s] if r[0] == name and path.endswith(r[1])]
    same = [r for r in rows if (r[2] is not None) == (tmpl == "1")]
    return (same or rows or [None])[0]
def state(r):
    if r is None:
        return "not isolated"
    st = r[3]
    if st == "runnable":
        return "runnable"
    if st == "probe_failed":
        return "probe " + (r[4] or "failed")
    return st
tot = collections.defaultdict(lambda: [0] * 7)
changed = []
for pat, name, repo, path, tmpl in want:
    b, a = find("before", name, path, tmpl), find("after", name, path, tmpl)
    c = tot[pat]
    c[0] += 1
    for i, r in ((0, b), (1, a)):
        st = r[3] if r else ""
        c[1 + i] += st in ("built", "runnable", "probe_failed")
        c[3 + i] += st in ("runnable", "probe_failed")
        c[5 + i] += st == "runnable"
    if state(b) != state(a) or (b and a and b[2] != a[2]):
        changed.append((pat, name, repo, b, a))
print("== session 7's P5/B4/P8 kernels: main's lscat (before) -> this tree's (after)")
print("%-4s %5s %14s %14s %14s" % ("pat", "n", "built", "probed", "runnable"))
for pat in sorted(tot):
    c = tot[pat]
    print("%-4s %5d %6d -> %-5d %6d -> %-5d %6d -> %-5d" % (pat, c[0], c[1], c[2], c[3], c[4], c[5], c[6]))
s = [sum(tot[p][i] for p in tot) for i in range(7)]
print("%-4s %5d %6d -> %-5d %6d -> %-5d %6d -> %-5d" % ("all", s[0], s[1], s[2], s[3], s[4], s[5], s[6]))
print("== every kernel whose outcome or instantiation changed (before -> after; after's binding, detail)")
for pat, name, repo, b, a in changed:
    print("%s %-28.28s %-22.22s %s%s -> %s%s | %s %s" % (pat, name, repo.split("+")[-1][:22],
          state(b), (b[2] or "") if b else "", state(a), (a[2] or "") if a else "",
          (a[5] or "") if a else "", ((a[6] or "")[:110]) if a else ""))
EOF
for s in before after; do echo "$s: $(grep -h 'execute: [0-9]' "$OUT/execute-$s.log" | tail -1)"; done
