#!/usr/bin/env bash
# Usage: scripts/device-nice-ab.sh OUT PREFIX... (on the device, from the repository root; carry
# build/bin and the archive). Builds beside probes niced (execute --build-nice NAB_NICE) against
# not (--build-nice 0), side by side in one call on the same kernels: the archive's work folder
# is unpacked once and copied twice (A: --build-nice 0, B: --build-nice NAB_NICE, default 10),
# and each prefix is executed from scratch in both copies, one after the other, the order
# alternating per prefix (A B, then B A, ...) so the machine's drift falls on both. Prints per
# prefix and mode: kernels, wall, kernels/s, runnable; the B copy's store goes to real.db.gz,
# A's to real-nice0.db.gz. Session 15 (10 against 0, H200): docs/execute.md "Builds and probes
# side by side".
# Environment: NAB_WORK (.dev/realcode/wsub12r), NAB_ARCHIVE (.dev/realcode12.tar.xz),
# NAB_BUDGET_S (520: the whole script; a run is not started with under 60 s left).
# Any two execute settings, not only niceness: NAB_A and NAB_B are A's and B's extra execute
# options (defaults: "--build-nice 0" and "--build-nice $NAB_NICE"), and NAB_PREBUILD=1 builds
# the prefixes first (--no-probe) before the copies are made, so A and B only probe. Session 16
# measured the probe budget's cap so: NAB_PREBUILD=1 NAB_A="--probe-budget-max 0" NAB_B=" ".
# A PREFIX of the form shard:I/N runs `--shard I/N` instead of `--kernel PREFIX` (the count is
# then the kernels that left 'isolated' in that run). Session 30 measured --build-batch so:
# NAB_WORK=.dev/rc20/work NAB_ARCHIVE=.dev-carry/rc20.tar.xz NAB_A="--build-batch 1"
# NAB_B="--build-batch 8" scripts/device-nice-ab.sh OUT shard:1/2 shard:2/2.
set -uo pipefail
OUT=$1; shift
ROOT=$PWD; [ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
export PATH=$ROOT/build/bin:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 LSCAT_BIN=$ROOT/build/bin
W=$ROOT/${NAB_WORK:-.dev/realcode/wsub12r}
T_END=$(( $(date +%s) + ${NAB_BUDGET_S:-520} ))
[ -f "$W/lscat.db" ] || tar xJf "${NAB_ARCHIVE:-.dev/realcode12.tar.xz}" -C "$ROOT" --skip-old-files
if [ "${NAB_PREBUILD:-0}" = 1 ]; then
    for p in "$@"; do
        t0=$(date +%s)
        lscat --work "$W" -j "$(nproc)" execute --kernel "$p" --no-probe >> "$OUT/build.log" 2>&1
        echo "prebuild $p: exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$OUT/ab.txt"
    done
fi
# the copies keep the work folder's absolute path: isolate recorded it (kernel folders, repos)
for m in A B; do rm -rf "$W.$m"; cp -a "$W" "$W.$m"; done
save() {  # save WORKDIR NAME: the store, whole, gzipped, to OUT/NAME
    python3 "$ROOT/scripts/store-snapshot.py" "$1/lscat.db" "$OUT/$2"
}
one() {  # one MODE PREFIX
    local m=$1 p=$2 t t0 rc nice=() sel=(--kernel "$p") before
    case $p in shard:*) sel=(--shard "${p#shard:}") ;; esac
    before=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM kernels WHERE status != \x27isolated\x27").fetchone()[0])' "$W.$m/lscat.db")
    if [ "$m" = A ]; then read -ra nice <<< "${NAB_A:---build-nice 0}"
    else read -ra nice <<< "${NAB_B:---build-nice ${NAB_NICE:-10}}"; fi
    t=$(( T_END - $(date +%s) )); [ "$t" -ge 60 ] || return 1
    # execute keeps the absolute paths of the kernel folders it was given: swap the copy in
    rm -rf "$W" && mv "$W.$m" "$W"
    t0=$(date +%s%N)
    timeout -k 15 "$t" lscat --work "$W" -j "$(nproc)" execute "${sel[@]}" "${nice[@]}" \
        >> "$OUT/execute-$m.log" 2>&1
    rc=$?
    # no sqlite3 CLI nor bc on the device: python3 counts and divides
    python3 - "$W/lscat.db" "$p" "$m" "$rc" "$t0" "$(date +%s%N)" "$before" <<'PY' | tee -a "$OUT/ab.txt"
import sqlite3, sys
db, p, m, rc, t0, t1, before = sys.argv[1:]
c = sqlite3.connect(db)
if p.startswith("shard:"):
    n, r = c.execute("SELECT sum(status != 'isolated'), sum(status = 'runnable') FROM kernels").fetchone()
    n -= int(before)  # runnable: the copy's, all shards so far
else:
    n, r = c.execute("SELECT sum(status != 'isolated'), sum(status = 'runnable') FROM kernels "
                     "WHERE id LIKE ?", (p + "%",)).fetchone()
wall = (int(t1) - int(t0)) / 1e9
print(f"{m} prefix {p}: exit {rc}, {n} kernels in {wall:.1f} s = {(n or 0) / wall:.2f}/s, {r} runnable")
PY
    grep -E 'lscat-execute: (build_start |build: |probe: |execute: )' "$OUT/execute-$m.log" | tail -n 4 | cut -c1-300
    mv "$W" "$W.$m"
    return 0
}
order=(A B)
for p in "$@"; do
    one "${order[0]}" "$p" || break
    one "${order[1]}" "$p" || break
    order=("${order[1]}" "${order[0]}")
done
save "$W.B" real.db.gz
save "$W.A" real-nice0.db.gz
gzip -9f "$OUT"/execute-*.log
