#!/bin/bash
# One job over many nodes with Open MPI: rank 0 owns the store and hands out chunks of kernels
# on request, every other rank builds (execute) or measures (tune) one chunk at a time on its
# node's scratch ($TMPDIR) and GPU, and rank 0 merges each chunk's rows in one transaction
# (docs/mpi.md). A killed worker process costs only its chunk; a killed rank ends the job, and
# running this script again resumes it. LSCAT_WORK must be on a file system every node sees.
#   sbatch --nodes=4 --ntasks-per-node=5 --gres=gpu:4 examples/slurm/mpirun.sh  (4 GPUs + rank 0)
#SBATCH --job-name=lscat-mpi
#SBATCH --time=04:00:00
set -euo pipefail
: "${LSCAT_WORK:?set LSCAT_WORK to the prepared work folder (harvest + isolate done)}"
export LSCAT_WORK
# shellcheck disable=SC2086 # the option strings are word lists on purpose
mpirun lscat execute --mpi ${LSCAT_EXECUTE_ARGS:-}
# shellcheck disable=SC2086
mpirun lscat tune --mpi ${LSCAT_TUNE_ARGS:-}
# A sweep the same way (rank 0 writes the output):
#   mpirun lscat sweep --mpi --kernel matmul.cu --driver driver.c --space space.csv --out out.csv
