#!/bin/bash
# The same static split launched with Open MPI's mpirun instead of a Slurm array: every rank
# runs shard RANK/SIZE of `lscat sweep` (or tune/execute with their own store), on its node's
# GPU (local rank -> GPU). This uses mpirun only as a launcher: there is no dynamic dispatch
# and a rank that dies leaves its shard to a rerun (which resumes it).
#   mpirun -np 4 examples/slurm/mpirun-shards.sh examples/matmul
set -euo pipefail
dir=${1:?usage: mpirun -np N mpirun-shards.sh SWEEP_DIR}
rank=${OMPI_COMM_WORLD_RANK:?run under Open MPI mpirun}
size=${OMPI_COMM_WORLD_SIZE:?run under Open MPI mpirun}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-${OMPI_COMM_WORLD_LOCAL_RANK:-0}}
cd "$dir"
exec lscat sweep --kernel matmul.cu --driver driver.c --space space.csv \
    --shard "$rank/$size" --out "out-$rank.csv" --work "${TMPDIR:-/tmp}/lscat-sweep-$rank"
