#!/usr/bin/env bash
# lscat sweep's run stage on a real GPU (make test-gpu): the matmul example end to end.
# BLOCK_SIZE 8/16/32 succeed and pass their test with a Gflops column; 64 fails at launch (4096
# threads per block); 128 fails to compile (128 KiB of shared memory). Then --statistic min
# gives times no larger than the medians, and a kill -9 in the middle resumes without a record
# lost or doubled. Without a CUDA device every check reports skip.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
EX=$ROOT/examples/matmul
NAMES="gpu_sweep__matmul_small_blocks_succeed gpu_sweep__matmul_64_fails_at_launch gpu_sweep__matmul_128_fails_to_compile gpu_sweep__gflops_column_is_filled gpu_sweep__min_statistic_is_at_most_the_median gpu_sweep__kill_and_resume_keeps_every_record_once"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1 ||
    { ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; }; then
    for n in $NAMES; do t_skip "$n" "no CUDA device"; done
    t_done
fi
W=$T_TMP/work
OUT=$T_TMP/med.csv
col() { awk -F, -v r="$2" -v c="$3" 'NR > 1 && $1 == r { print $c }' "$1"; }
t0=$(date +%s.%N)
lscat sweep -j 4 --work "$W" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" \
    --space "$EX/space.csv" --out "$OUT" >"$T_OUT" 2>"$T_ERR"
echo "# matmul sweep: exit $?, $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s" >&2
cat "$OUT" >&2
ok=1; for r in 1 2 3 4 5 6 7 8 9; do [ "$(col "$OUT" $r 4),$(col "$OUT" $r 5)" = "Success,None" ] || ok=0; done
[ $ok = 1 ] && t_ok gpu_sweep__matmul_small_blocks_succeed || t_fail gpu_sweep__matmul_small_blocks_succeed "$(cat "$OUT")"
bad=0; for r in 10 11 12; do [ "$(col "$OUT" $r 5)" = "Launch" ] || bad=1; done
[ $bad = 0 ] && t_ok gpu_sweep__matmul_64_fails_at_launch || t_fail gpu_sweep__matmul_64_fails_at_launch "$(cat "$OUT")"
bad=0; for r in 13 14 15; do [ "$(col "$OUT" $r 5)" = "Compile" ] || bad=1; done
[ $bad = 0 ] && t_ok gpu_sweep__matmul_128_fails_to_compile || t_fail gpu_sweep__matmul_128_fails_to_compile "$(cat "$OUT")"
if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 1 else 1)" "$(col "$OUT" 9 7)" 2>/dev/null; then
    t_ok gpu_sweep__gflops_column_is_filled; else t_fail gpu_sweep__gflops_column_is_filled "$(cat "$OUT")"; fi
lscat sweep --work "$W" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" --space "$EX/space.csv" \
    --out "$T_TMP/min.csv" --statistic min 2>/dev/null
if python3 - "$OUT" "$T_TMP/min.csv" <<'PY'
import csv, sys
med = {r["Record"]: r for r in csv.DictReader(open(sys.argv[1]))}
mn = {r["Record"]: r for r in csv.DictReader(open(sys.argv[2]))}
ok = [k for k in med if med[k]["Status"] == "Success"]
# independent measurements: the min of one run may exceed the median of another by noise only
sys.exit(0 if ok and all(float(mn[k]["Time"]) <= 1.05 * float(med[k]["Time"]) for k in ok) else 1)
PY
then t_ok gpu_sweep__min_statistic_is_at_most_the_median; else t_fail gpu_sweep__min_statistic_is_at_most_the_median "$(cat "$T_TMP/min.csv")"; fi
{ head -3 "$EX/space.csv"; for i in $(seq 1 20); do echo "16,$((256 + 32 * i))"; done; } >"$T_TMP/long.csv"
lscat sweep --work "$W" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" --space "$T_TMP/long.csv" \
    --out "$T_TMP/long.out" 2>/dev/null &
pid=$!
for _ in $(seq 1 600); do [ -f "$T_TMP/long.out" ] && [ "$(wc -l <"$T_TMP/long.out")" -ge 5 ] && break; sleep 0.05; done
kill -9 $pid; wait $pid 2>/dev/null
lscat sweep --work "$W" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" --space "$T_TMP/long.csv" \
    --out "$T_TMP/long.out" 2>/dev/null
if [ "$(tail -n +2 "$T_TMP/long.out" | cut -d, -f1 | sort -n | tr '\n' ' ')" = "$(seq 1 20 | tr '\n' ' ')" ]; then
    t_ok gpu_sweep__kill_and_resume_keeps_every_record_once
else t_fail gpu_sweep__kill_and_resume_keeps_every_record_once "$(cat "$T_TMP/long.out")"; fi
t_done
