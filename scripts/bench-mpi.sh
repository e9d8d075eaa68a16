#!/usr/bin/env bash
# lscat-mpi's dispatch overhead on this machine, no GPU: `lscat tune` of PENDING new kernels on
# the stand-in GPU (host-only runner and fake harness, tests/tune/support/) in a store grown to
# the size of a real one (OLD kernels already measured: tens of thousands of measurement rows,
# big_store.py), plain and through `mpirun -np 2 ... --mpi` (rank 0 serves, one worker), in the
# order plain, mpi, plain, mpi, ... (ROUNDS each). Prints each run, the MPI/plain rate and
# lscat-mpi's breakdown (its "mpi: time" lines: store copy, child, shipping, merge, idle).
# STARTUP_S > 0 makes the stand-in lscat-gpuinfo take that long, as a GPU process's start-up
# (NVML, CUDA context) does: a plain run pays it once, every chunk's lscat-tune once more.
# Usage: scripts/bench-mpi.sh OUT_DIR [OLD=3000] [PENDING=40] [ROUNDS=2] [SLOW_MS=20] [STARTUP_S=0]
# (from the source root after make; build/tests holds the fake harness).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/bench-mpi.sh OUT_DIR [OLD] [PENDING] [ROUNDS] [SLOW_MS]}
OLD=${2:-3000} PENDING=${3:-40} ROUNDS=${4:-2} SLOW=${5:-20} STARTUP=${6:-0}
PY=${LSCAT_PYTHON:-/usr/bin/python3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export PATH="$PWD/build/bin:$PATH" TMPDIR=$OUT LSCAT_LOCK_DIR=$OUT/locks
export LSCAT_GPUINFO=$PWD/tests/tune/support/fake_gpuinfo.sh FAKE_GPUS=1 LSCAT_RUNNER_NO_CUDA=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
SIZES=64,128,256 BLOCKS=16x16,64,128
if [ "$STARTUP" != 0 ]; then
    printf '#!/bin/sh\nsleep %s\nexec %s "$@"\n' "$STARTUP" "$LSCAT_GPUINFO" >"$OUT/slow_gpuinfo.sh"
    chmod +x "$OUT/slow_gpuinfo.sh"
    export LSCAT_GPUINFO=$OUT/slow_gpuinfo.sh
fi
W=$OUT/work
mkdir -p "$W/builds/h"
cp build/tests/tune/support/fake_harness build/tests/tune/support/fake_harness.so "$W/builds/h/"
echo "slow $SLOW" >"$W/builds/h/harness.behavior"
mv "$W/builds/h/fake_harness" "$W/builds/h/harness"; mv "$W/builds/h/fake_harness.so" "$W/builds/h/harness.so"
base=$OUT/base.db
rm -f "$base"
LSCAT_WORK=$W lscat init --db "$base" >/dev/null 2>&1
"$PY" tests/tune/support/big_store.py "$base" "$OLD" "$SIZES" "$BLOCKS"
specs=(); for i in $(seq 1 "$PENDING"); do specs+=("new$i=builds/h/harness"); done
"$PY" tests/tune/support/seed_store.py "$base" "${specs[@]}"
rows=$("$PY" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from measurements').fetchone()[0])" "$base")
echo "store: $OLD measured kernels, $rows measurement rows, $(du -k "$base" | cut -f1) KiB; $PENDING pending kernels x 9 configurations (slow $SLOW ms, start-up $STARTUP s)"
now() { date +%s.%N; }
declare -A tot_s tot_n
for round in $(seq 1 "$ROUNDS"); do
    for mode in plain mpi; do
        db=$OUT/$mode-$round.db; cp "$base" "$db"
        t0=$(now)
        if [ $mode = plain ]; then
            LSCAT_WORK=$W LSCAT_DB=$db lscat tune --sizes $SIZES --blocks $BLOCKS >"$OUT/$mode-$round.log" 2>&1
        else
            LSCAT_WORK=$W LSCAT_DB=$db mpirun -np 2 lscat tune --mpi --sizes $SIZES --blocks $BLOCKS \
                >"$OUT/$mode-$round.log" 2>&1
        fi
        rc=$?
        w=$("$PY" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$t0" "$(now)")
        n=$("$PY" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from measurements where kernel_id like 'new%' and status = 'ok'\").fetchone()[0])" "$db")
        echo "$mode round $round: exit $rc, $n configurations in $w s"
        grep -h "mpi: time" "$OUT/$mode-$round.log" | sed 's/^/    /'
        tot_s[$mode]=$("$PY" -c "print(${tot_s[$mode]:-0} + $w)"); tot_n[$mode]=$(( ${tot_n[$mode]:-0} + n ))
        [ $mode = mpi ] && echo "    store rows after: $("$PY" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from measurements').fetchone()[0])" "$db"), kernels looked at: $(grep -h "kernels to look at" "$OUT/$mode-$round.log" | sed "s/.*mpi: //")"
        rm -f "$db"
    done
done
echo "== tune rate mpi/plain: $("$PY" -c "print(round((${tot_n[mpi]} / ${tot_s[mpi]}) / (${tot_n[plain]} / ${tot_s[plain]}), 4))") (plain ${tot_n[plain]} configurations in ${tot_s[plain]} s, mpi ${tot_n[mpi]} in ${tot_s[mpi]} s)"
