#!/usr/bin/env bash
# lscat sweep on a GPU machine, for the closing note's numbers (< 4 min on one H100/H200):
#   1. the gpu_sweep test (matmul: successes, Launch at BLOCK_SIZE 64, Compile at 128, resume);
#   2. the compile-once saving: the matmul space built grouped (5 builds for 15 records) against
#      the same space with a unique compile-time column per record (15 builds), fresh caches;
#   3. the early-abandon saving: a space of one fast tuple and slow ones, with and without
#      --abandon 2, wall time of the run stage side by side.
# Usage: scripts/device-sweep.sh OUT_DIR  (from the source root, build/bin carried along).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/device-sweep.sh OUT_DIR}
mkdir -p "$OUT"
export LSCAT_BIN=$PWD/build/bin LSCAT_SHARE_DIR=$PWD PATH="$PWD/build/bin:$PATH"
EX=$PWD/examples/matmul
S=$OUT/summary.txt
: >"$S"
note() { echo "$*" | tee -a "$S"; }
secs() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$@"; }
note "== gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
note "== nvcc: $(nvcc --version 2>/dev/null | tail -1 || /usr/local/cuda/bin/nvcc --version | tail -1)"

LSCAT_ROOT=$PWD timeout 200 bash tests/e2e/gpu_sweep.sh >"$OUT/gpu_sweep.log" 2>&1
note "== gpu_sweep: $(grep -c '^ok' "$OUT/gpu_sweep.log") ok, $(grep -c '^not ok' "$OUT/gpu_sweep.log") not ok"
grep '^not ok' "$OUT/gpu_sweep.log" | tee -a "$S"

# 2. compile once per tuple vs once per record (the same 15 records, fresh build caches).
awk -F, 'NR <= 3 { print $0 "," (NR == 1 ? "REC" : NR == 2 ? "Integer" : "Compile"); next }
         { print $0 "," NR }' "$EX/space.csv" >"$OUT/per-record-space.csv"
for mode in grouped per-record; do
    sp=$EX/space.csv; [ $mode = per-record ] && sp=$OUT/per-record-space.csv
    t0=$(date +%s.%N)
    lscat sweep -j "$(nproc)" --work "$OUT/w-$mode" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" \
        --space "$sp" --out "$OUT/$mode.csv" 2>"$OUT/$mode.log"
    note "== $mode: exit $?, wall $(secs "$t0" "$(date +%s.%N)") s; $(tail -1 "$OUT/$mode.log")"
done

# 3. early abandon: 16x16 tiles are fast, 8x8 ones on large matrices much slower than the best.
{ printf 'BLOCK_SIZE,N\nInteger,Integer\nCompile,Runtime\n'
  for n in 2048 2048 2048 2048; do echo "32,$n"; done
  for n in 2048 2048 2048 2048 2048 2048 2048 2048; do echo "8,$n"; done; } >"$OUT/abandon.csv"
for mode in full abandon; do
    extra=(); [ $mode = abandon ] && extra=(--abandon 1.5)
    t0=$(date +%s.%N)
    lscat sweep --work "$OUT/w-grouped" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" \
        --space "$OUT/abandon.csv" --out "$OUT/ab-$mode.csv" --samples 50 "${extra[@]}" 2>"$OUT/ab-$mode.log"
    note "== $mode: exit $?, wall $(secs "$t0" "$(date +%s.%N)") s; $(tail -1 "$OUT/ab-$mode.log")"
done
cat "$OUT/grouped.csv" "$OUT/ab-abandon.csv" >>"$S"
