#!/usr/bin/env bash
# lscat seer on a lent GPU (the H200), in one call of under 8 minutes: bench every kernel x
# precision on the SuiteSparse matrices, the generated families (32 specs up to 4,000,000 rows)
# and families-large (240 specs of 100,000 to 6,300,000 rows), stopping at BENCH_S seconds (the
# bench is resumable; what was measured is kept and written as CSV), then train and evaluate in
# double and float and write a compact summary (printed last).
# Usage (from the source root, with build/ carried; programs built on the CPU machine):
#   scripts/device-seer.sh OUT_DIR [MATRIX_DIR]
# MATRIX_DIR defaults to build/seer-matrices (copy ../shared/data/matrices there and carry it),
# else tests/data/matrices. Writes OUT_DIR/summary.md, OUT_DIR/bench.csv (the table to import
# elsewhere with `lscat seer import`), the logs, and per precision the model and eval files.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/device-seer.sh OUT_DIR [MATRIX_DIR]}
MAT=${2:-build/seer-matrices}
[ -d "$MAT" ] || MAT=tests/data/matrices
BENCH_S=${BENCH_S:-330}
export PATH="$PWD/build/bin:$PATH" LSCAT_NO_PROGRESS=1
W=${SEER_WORK:-$(mktemp -d)/work}
mkdir -p "$OUT"
S=$OUT/summary.md
note() { echo "$*" >>"$S"; }
: >"$S"
t0=$(date +%s)
note "# lscat seer on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
note "matrices: $(ls "$MAT"/*.mtx | wc -l) files from $MAT + families (32) + families-large (240)"
# --time-budget stops starting worker chunks; the outer timeout is only a guard
timeout -k 10 $((BENCH_S + 90)) lscat --work "$W" seer bench --matrices "$MAT" \
    --generate families --generate families-large --samples 7 --time-budget "$BENCH_S" \
    --csv "$OUT/bench.csv" >"$OUT/bench.log" 2>&1
rc=$?
note "bench exit $rc after $(( $(date +%s) - t0 )) s: $(grep 'seer bench on' "$OUT/bench.log" | tail -1 | sed 's/^.*seer bench on/on/')"
grep -h 'time budget' "$OUT/bench.log" | sed 's/^lscat-seer: //' >>"$S"
if [ "$rc" -gt 1 ] || [ ! -s "$OUT/bench.csv" ]; then   # killed: write the CSV of what is stored
    lscat --work "$W" seer bench --matrices "$MAT" --csv "$OUT/bench.csv" --kernels csr_thread \
        >/dev/null 2>&1 || true
fi
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print("matrices by source:", dict(c.execute("SELECT source, count(*) FROM seer_matrices GROUP BY source")))
print("results by status:", dict(c.execute("SELECT status, count(*) FROM seer_results GROUP BY status")))
print("not ok:", list(c.execute("SELECT kernel, precision, status, count(*) FROM seer_results WHERE status != \"ok\" GROUP BY 1, 2, 3")))
print("features agree:", dict(c.execute("SELECT agrees, count(*) FROM seer_feature_costs GROUP BY agrees")))' \
    "$W/lscat.db" >>"$S" 2>&1
for p in double float; do
    D=$OUT/model-$p
    lscat --work "$W" seer train --precision "$p" --out "$D" >"$OUT/train-$p.log" 2>&1
    note "## $p: train exit $?"
    grep -E 'accuracy|training matrices' "$OUT/train-$p.log" | sed 's/^lscat-seer: //' >>"$S"
    lscat --work "$W" seer eval --out "$D" >"$OUT/eval-$p.log" 2>&1
    note "eval exit $?"
    sed -n '/^| iterations | Oracle/,/^$/p' "$D/eval.md" >>"$S"
    rm -f "$D"/*.o "$D"/*.a
done
note "total $(( $(date +%s) - t0 )) s"
tail -c 6000 "$S"
