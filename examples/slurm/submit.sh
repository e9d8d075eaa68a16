#!/bin/bash
# Submit the shard array and the merge job that runs when every task has succeeded.
#   LSCAT_WORK=/shared/lscat-work examples/slurm/submit.sh [sbatch options for the array]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable --export=ALL "$@" "$here/tune-array.sbatch")
merge=$(sbatch --parsable --export=ALL --dependency="afterok:${array%%;*}" "$here/merge.sbatch")
echo "array job ${array%%;*}, merge job ${merge%%;*} (runs after the array succeeds)"
