#!/usr/bin/env bash
# `lscat sweep` over several workers, side by side in one run on the same space: one worker,
# then N workers (--gpus 0,..,N-1), then `mpirun -np N+1 lscat sweep --mpi` (N worker ranks);
# prints each wall time, the speed-ups and the parallel efficiency (aim: at least 0.9, BONSAI's
# 85-92% on 16 GPUs; issue #20).
# With N CUDA devices (N >= 2) the work is real: the matmul example over BLOCK_SIZE 8,16,32 x
# N = 256..BENCH_SWEEP_NMAX (default 6144) in steps of 256. Without them it is the CPU stand-in
# (tests/tune/sweep_fixture, LSCAT_SWEEP_NO_CUDA=1: each record spins on the host) with three
# compile-time tuples of 12 records whose work grows along the space, as a size sweep's does,
# and N = min(nproc, 4): the numbers then measure the scheduling (whole tuples per worker before
# session 25), not a GPU, and the line says so.
set -eu
cd "$(dirname "$0")/.."
BIN=$(cd "${LSCAT_BIN:-build/bin}" && pwd)
export PATH="$BIN:$PATH" LSCAT_NO_PROGRESS=1 LSCAT_SHARE_DIR=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
T=$(mktemp -d "${TMPDIR:-/tmp}/lscat-bench-XXXXXX")
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
ngpu=$("$BIN/lscat-gpuinfo" 2>/dev/null | grep -c uuid || true)
if [ "$ngpu" -ge 2 ]; then
    N=$ngpu MODE="$N GPUs, matmul"
    EX=examples/matmul
    { printf 'BLOCK_SIZE,N\nInteger,Integer\nCompile,Runtime\n'
      for b in 8 16 32; do for n in $(seq 256 256 "${BENCH_SWEEP_NMAX:-6144}"); do echo "$b,$n"; done; done; } >"$T/space.csv"
    A=(--work "$T/w" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" --space "$T/space.csv")
else
    N=$(nproc); [ "$N" -gt 4 ] && N=4
    [ "$N" -ge 2 ] || { echo "sweep scaling: skipped (one core, no GPUs)"; exit 0; }
    MODE="no GPU: CPU stand-in records, $N workers on $(nproc) cores"
    export LSCAT_SWEEP_NO_CUDA=1
    FX=tests/tune/sweep_fixture
    { printf 'VARIANT,BROKEN,Behave,Work\nInteger,Integer,String,Real\nCompile,Compile,Runtime,Runtime\n'
      for v in 1 2 3; do for k in $(seq 1 12); do echo "$v,0,ok,$((k * 15000))"; done; done; } >"$T/space.csv"
    A=(--work "$T/w" --kernel "$FX/kernel.cu" --driver "$FX/driver.c" --samples 3 --warmup 0
       --space "$T/space.csv")
fi
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { echo "sweep scaling: skipped (no nvcc)"; exit 0; }
lscat sweep "${A[@]}" --compile-only --out "$T/c.csv" >/dev/null 2>&1 || true # builds outside the timings
run() { rm -f "$T/o.csv"; local t0; t0=$(now); "$@" --out "$T/o.csv" >/dev/null 2>&1 || true
        python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$t0" "$(now)"; }
one=$(run lscat sweep "${A[@]}" --gpus 0)
many=$(run lscat sweep "${A[@]}" --gpus "$(seq -s, 0 $((N - 1)))")
rows=$(($(wc -l <"$T/o.csv") - 1))
mpi=$(run mpirun -np $((N + 1)) "$BIN/lscat" sweep --mpi "${A[@]}")
awk -v one="$one" -v many="$many" -v mpi="$mpi" -v n="$N" -v rows="$rows" -v mode="$MODE" 'BEGIN {
    e = one / many / n; m = one / mpi / n
    printf "sweep scaling (%s): %d records: 1 worker %.2f s, %d workers %.2f s = %.2fx (efficiency %.3f%s), --mpi with %d worker ranks %.2f s = %.2fx (efficiency %.3f%s)\n",
        mode, rows, one, n, many, one / many, e, e < 0.9 ? ", TARGET MISSED: 0.9" : "", n, mpi, one / mpi, m,
        m < 0.9 ? ", TARGET MISSED: 0.9" : "" }'
