#!/usr/bin/env bash
# lscat seer on a lent GPU (the H200): bench every kernel x precision on the SuiteSparse
# matrices and the generated families (up to 4,000,000 rows), then train and evaluate in double
# and float, and write a compact summary. Finishes in under 6 minutes: the bench stops at
# BENCH_S seconds (it is resumable; what was measured is kept) and training/eval take seconds.
# Usage (from the source root, with build/ carried; programs built on the CPU machine):
#   scripts/device-seer.sh OUT_DIR [MATRIX_DIR]
# MATRIX_DIR defaults to build/seer-matrices (copy ../shared/data/matrices there and carry it),
# else tests/data/matrices. Writes OUT_DIR/summary.md, the bench CSV, eval.md files and plots.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/device-seer.sh OUT_DIR [MATRIX_DIR]}
MAT=${2:-build/seer-matrices}
[ -d "$MAT" ] || MAT=tests/data/matrices
BENCH_S=${BENCH_S:-270}
export PATH="$PWD/build/bin:$PATH" LSCAT_NO_PROGRESS=1
W=${SEER_WORK:-$(mktemp -d)/work}
mkdir -p "$OUT"
S=$OUT/summary.md
note() { echo "$*" | tee -a "$S"; }
: >"$S"
t0=$(date +%s)
note "# lscat seer on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
note "matrices: $(ls "$MAT"/*.mtx | wc -l) files from $MAT + the generated families (docs/seer.md)"
timeout -k 10 "$BENCH_S" lscat --work "$W" seer bench --matrices "$MAT" --generate families \
    --samples 7 >"$OUT/bench.log" 2>&1
note "bench exit $? after $(( $(date +%s) - t0 )) s: $(grep 'seer bench on' "$OUT/bench.log" | tail -1 | sed 's/^.*seer bench on/on/')"
lscat --work "$W" seer bench --matrices "$MAT" --csv "$OUT/bench.csv" --kernels csr_thread \
    >/dev/null 2>&1 || true   # rewrites the CSV of everything measured (nothing new is timed)
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print("results by status:", dict(c.execute("SELECT status, count(*) FROM seer_results GROUP BY status")))
print("unsupported/fault/wrong:", list(c.execute("SELECT kernel, precision, status, count(*) FROM seer_results WHERE status != \"ok\" GROUP BY 1, 2, 3")))
print("features agree:", dict(c.execute("SELECT agrees, count(*) FROM seer_feature_costs GROUP BY agrees")))' \
    "$W/lscat.db" 2>&1 | tee -a "$S"
for p in double float; do
    D=$OUT/model-$p
    lscat --work "$W" seer train --precision "$p" --out "$D" >"$OUT/train-$p.log" 2>&1
    note "## $p: train exit $?"
    grep -E 'accuracy|training matrices' "$OUT/train-$p.log" | tee -a "$S"
    lscat --work "$W" seer eval --out "$D" >"$OUT/eval-$p.log" 2>&1
    note "eval exit $?"
    sed -n '/^| iterations | Oracle/,/^$/p' "$D/eval.md" | tee -a "$S"
    rm -f "$D"/*.o "$D"/*.a
done
note "total $(( $(date +%s) - t0 )) s"
