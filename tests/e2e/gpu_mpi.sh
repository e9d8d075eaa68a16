#!/usr/bin/env bash
# lscat sweep --mpi and lscat tune --mpi on a real GPU (make test-gpu), `mpirun -np 2` sharing
# the node's GPU (rank 0 serves, rank 1 works on GPU 0): the matmul example's sweep gives the
# statuses of a plain sweep with its Gflops column; tune of the fixture kernels (chunks of one
# kernel) gives the statuses of a plain tune. Without a CUDA device every check reports skip.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
TB=${LSCAT_TEST_BIN:-$ROOT/build/tests}
case "$TB" in /*) ;; *) TB=$ROOT/$TB ;; esac
FIX=$TB/tune/fixtures
EX=$ROOT/examples/matmul
NAMES="gpu_mpi__sweep_gives_the_plain_sweeps_statuses gpu_mpi__sweep_fills_the_gflops_column gpu_mpi__tune_gives_the_plain_tunes_statuses"
if ! command -v mpirun >/dev/null || [ ! -x "$LSCAT_BIN/lscat-mpi" ] ||
    [ ! -x "$LSCAT_BIN/lscat-gpuinfo" ] || [ -z "$("$LSCAT_BIN/lscat-gpuinfo" 2>/dev/null)" ] ||
    [ ! -x "$FIX/ok/harness" ]; then
    for n in $NAMES; do t_skip "$n" "no CUDA device (or no mpirun)"; done
    t_done
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=$T_TMP
st() { awk -F, 'NR > 1 { print $1 "," $(NF-3) "," $(NF-2) }' "$1" | sort -t, -k1,1n | tr '\n' ' '; }
lscat sweep --work "$T_TMP/w" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" \
    --space "$EX/space.csv" --out "$T_TMP/plain.csv" 2>/dev/null
t0=$(date +%s.%N)
mpirun --oversubscribe -np 2 lscat sweep --mpi --kernel "$EX/matmul.cu" --driver "$EX/driver.c" \
    --space "$EX/space.csv" --out "$T_TMP/mpi.csv" >"$T_OUT" 2>"$T_ERR"
echo "# sweep --mpi: exit $?, $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s" >&2
cat "$T_TMP/mpi.csv" >&2
a=$(st "$T_TMP/plain.csv"); b=$(st "$T_TMP/mpi.csv")
[ -n "$a" ] && [ "$a" = "$b" ] && t_ok gpu_mpi__sweep_gives_the_plain_sweeps_statuses ||
    t_fail gpu_mpi__sweep_gives_the_plain_sweeps_statuses "plain: $a / mpi: $b"
g=$(awk -F, 'NR > 1 && $1 == 9 { print $7 }' "$T_TMP/mpi.csv")
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 1 else 1)" "$g" 2>/dev/null &&
    t_ok gpu_mpi__sweep_fills_the_gflops_column || t_fail gpu_mpi__sweep_fills_the_gflops_column "record 9: '$g'"

statuses() { python3 -c "
import sqlite3,sys
print(';'.join('%s/%s/%s/%s' % r for r in sqlite3.connect(sys.argv[1]).execute('select kernel_id,width,block_x,status from measurements where superseded = 0 order by kernel_id,width,block_x,block_y')))" "$1"; }
export LSCAT_WORK=$T_TMP/work
for db in plain mpi; do
    LSCAT_DB=$T_TMP/work/$db.db lscat init >/dev/null 2>&1
    python3 "$ROOT/tests/tune/support/seed_store.py" "$T_TMP/work/$db.db" "ok=$FIX/ok/harness" \
        "crash=$FIX/crash/harness" "hang=$FIX/hang/harness"
done
TUNE=(--sizes 240,496 --blocks 16x16,64,128 --timeout 3)
LSCAT_DB=$T_TMP/work/plain.db lscat tune --gpus 0 "${TUNE[@]}" >/dev/null 2>&1
LSCAT_DB=$T_TMP/work/mpi.db mpirun --oversubscribe -np 2 lscat tune --mpi --chunk 1 "${TUNE[@]}" \
    >"$T_OUT" 2>"$T_ERR"
echo "# tune --mpi: exit $?" >&2
a=$(statuses "$T_TMP/work/plain.db"); b=$(statuses "$T_TMP/work/mpi.db")
[ -n "$a" ] && [ "$a" = "$b" ] && t_ok gpu_mpi__tune_gives_the_plain_tunes_statuses ||
    t_fail gpu_mpi__tune_gives_the_plain_tunes_statuses "plain: $a / mpi: $b"
t_done
