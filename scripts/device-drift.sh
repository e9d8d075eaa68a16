#!/usr/bin/env bash
# Usage: scripts/device-drift.sh OUT PREFIX... (on the device, from the repository root; carry
# build/bin and the archive). Does a long execute run get slower as it goes? (issue #14; session
# 15 saw prefix f take 35 s on a fresh machine and over 65 s as a call's ninth prefix.) Each
# prefix given is executed from scratch, in the order given (repeat one to compare it with
# itself: `2 4 2 4`), each time in a fresh copy of the archive's pristine work folder, so every
# run does the same work. Between runs, and every 5 s during them, it records what is left on
# the machine: processes by command name and state (D: waiting on the driver), the GPU's compute
# processes and their memory (nvidia-smi), GPU utilisation. Prints per run: wall, probe-seconds,
# faulting runs; what outlived the run. OUT gets drift.txt (the summary), monitor.tsv, the logs.
# Environment: DRIFT_WORK (.dev/realcode/w13), DRIFT_ARCHIVE (.dev/realcode13.tar.xz),
# DRIFT_BUDGET_S (520: the whole script; a run is not started with under 60 s left).
set -uo pipefail
OUT=$1; shift
ROOT=$PWD; [ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
export PATH=$ROOT/build/bin:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 LSCAT_BIN=$ROOT/build/bin
W=$ROOT/${DRIFT_WORK:-.dev/realcode/w13}
T_END=$(( $(date +%s) + ${DRIFT_BUDGET_S:-520} ))
[ -f "$W/lscat.db" ] || tar xJf "${DRIFT_ARCHIVE:-.dev/realcode13.tar.xz}" -C "$ROOT" --skip-old-files
rm -rf "$W.pristine" && cp -a "$W" "$W.pristine"
left() {  # what is on the machine now: one line
    local procs apps
    procs=$(ps -eo stat=,comm= | awk '$2 ~ /lscat|harness|nvcc|cicc|ptxas|cudafe|compute-san/ {
        n[$2 "/" substr($1,1,1)]++ } END { for (k in n) printf "%s=%d ", k, n[k] }')
    apps=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>&1 |
        awk -F', ' 'NF >= 3 { c++; m += $3 } END { printf "%d contexts, %d MiB", c, m }')
    echo "$(date +%s) ${apps}; $(nvidia-smi --query-gpu=utilization.gpu,memory.used \
        --format=csv,noheader 2>&1 | tr -d '\n'); ${procs:-none}"
}
( while :; do left >> "$OUT/monitor.tsv"; sleep 5; done ) & mon=$!
i=0
for p in "$@"; do
    t=$(( T_END - $(date +%s) )); [ "$t" -ge 60 ] || break
    i=$((i + 1))
    rm -rf "$W" && cp -a "$W.pristine" "$W"
    t0=$(date +%s%N)
    timeout -k 15 "$t" lscat --work "$W" -j "$(nproc)" execute --kernel "$p" \
        > "$OUT/execute-$i-$p.log" 2>&1
    rc=$?
    t1=$(date +%s%N)
    sleep 2
    python3 - "$W/lscat.db" "$p" "$i" "$rc" "$t0" "$t1" <<'PY' | tee -a "$OUT/drift.txt"
import json, sqlite3, sys
db, p, i, rc, t0, t1 = sys.argv[1:]
c = sqlite3.connect(db)
F = {"illegal_address", "cuda_error", "launch_failure", "crash"}
n = c.execute("SELECT count(*) FROM kernels WHERE id LIKE ? AND status = 'runnable'",
              (p + "%",)).fetchone()[0]
ps = faults = probes = 0
for s, b in c.execute("SELECT probe_s, bindings FROM probes WHERE kernel_id LIKE ?", (p + "%",)):
    probes += 1
    ps += s or 0
    faults += sum(1 for t in json.loads(b or "[]") if t.get("outcome") in F)
wall = (int(t1) - int(t0)) / 1e9
print(f"run {i} prefix {p}: exit {rc}, wall {wall:.1f} s, {probes} probes, {ps:.1f} probe-s, "
      f"{faults} faulting runs, {n} runnable")
PY
    echo "  after run $i: $(left)" | tee -a "$OUT/drift.txt"
    grep -E 'lscat-execute: (build: |probe: )' "$OUT/execute-$i-$p.log" | tail -n 2 |
        sed 's/^/  /' | tee -a "$OUT/drift.txt"
done
kill "$mon"; wait "$mon" 2>/dev/null
ps -eo pid,ppid,stat,etimes,comm | awk 'NR == 1 || $5 ~ /lscat|harness/' > "$OUT/ps-end.txt"
gzip -9f "$OUT"/execute-*.log
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls execute-*.log.gz) && rm -f "$OUT"/execute-*.log.gz
