#!/usr/bin/env bash
# The GPU half of a real-code measurement: on a GPU node, with a work folder where isolate
# already ran (`lscat --work W isolate --path <repo>` per repository, on a CPU machine), run
# execute (build + repair + probe), a limited tune sweep and the report, then the per-repository
# summary (scripts/realcode-summary.py). Time limits keep it inside one lent-machine call; every
# stage is resumable, so a second call continues where this one stopped.
# Usage: scripts/realcode-gpu.sh WORK_DIR OUT_DIR [EXECUTE_S] [TUNE_S] [TUNE_KERNELS]
set -uo pipefail
cd "$(dirname "$0")/.."
W=$(cd "${1:?usage: scripts/realcode-gpu.sh WORK_DIR OUT_DIR}" && pwd)
OUT=${2:?usage: scripts/realcode-gpu.sh WORK_DIR OUT_DIR}
mkdir -p "$OUT"
# Sources were isolated under /work/main on the CPU machine: keep those absolute paths valid.
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export PATH=$PWD/build/bin:$PATH LSCAT_SHARE_DIR=$PWD LSCAT_NO_PROGRESS=1
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/gpu.txt" 2>&1
t0=$(date +%s)
timeout "${3:-330}" lscat --work "$W" execute > "$OUT/real-execute.log" 2>&1
echo "execute exit $? in $(( $(date +%s) - t0 )) s" >> "$OUT/real-execute.log"
t1=$(date +%s)
timeout "${4:-170}" lscat --work "$W" tune --limit "${5:-80}" > "$OUT/real-tune.log" 2>&1
echo "tune exit $? in $(( $(date +%s) - t1 )) s" >> "$OUT/real-tune.log"
timeout 40 lscat --work "$W" dataset report --out "$W/report" > "$OUT/real-report.txt" 2>&1
python3 scripts/realcode-summary.py "$W/lscat.db" > "$OUT/real-summary.txt" 2>&1
cp "$W/lscat.db" "$OUT/real.db"
tail -n 5 "$OUT/real-execute.log" "$OUT/real-tune.log"
cat "$OUT/real-summary.txt" "$OUT/real-report.txt" | head -c 5000
