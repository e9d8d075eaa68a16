#!/usr/bin/env bash
# Issue #14 (session 11, build11), the CPU half of the device proof: isolate the 14 repositories
# holding the 69 B4/B5 build failures of session 10's store (and every kernel ISOLATE_VERSION 10
# changed in them) with this tree's lscat, keep those kernels (scripts/realcode-build11.py) and
# write .dev/build11/work (lscat.db, kernels/, before.tsv) and .dev/build11/repos.tar.xz (the
# repositories, for execute's repairs) for scripts/device-build11.sh.
# About 15 minutes at -j2 here (NVIDIA+cuda-samples alone is 7).
# Usage: scripts/build11-prepare.sh [REPOS_DIR [BEFORE_STORE [NONRUNNABLE_TSV [BEFORE_ISOLATION_DB]]]]
set -uo pipefail
cd "$(dirname "$0")/.."
REPOS=${1:-.dev/realcode/repos}
STORE=${2:-/work/notes/s11/s10final.db}
TSV=${3:-/work/notes/s11/nonrunnable.tsv}
ISO=${4:-.dev/realcode/work9/lscat.db}
W=.dev/build11/work
rm -rf "$W" && mkdir -p "$W" || exit 3
for r in BBuf+how-to-optim-algorithm-in-cuda cudpp+cudpp sandialabs+tenzing vetter+shoc \
         yuhc+gpu-rodinia karpathy+llm.c NVIDIA-developer-blog+code-samples eegkno+CUDA_by_practice \
         jiekebo+CUDA-By-Example PacktPublishing+Learn-CUDA-Programming UoB-HPC+BabelStream \
         rbaygildin+learn-gpgpu tpoisonooo+how-to-optimize-gemm NVIDIA+cuda-samples; do
    t0=$(date +%s)
    nice build/bin/lscat -q -j "${JOBS:-2}" --work "$W" isolate --path "$REPOS/$r" >> "$W/isolate.log" 2>&1 || [ $? = 1 ] ||
        echo "build11-prepare: isolate failed on $r (see $W/isolate.log)" >&2
    echo "isolated $r: $(( $(date +%s) - t0 )) s"
done
/usr/bin/python3 scripts/realcode-build11.py "$W/lscat.db" "$STORE" "$TSV" "$ISO" || exit 3
# the repositories themselves, for execute's repairs on the device (scripts/device-build11.sh
# unpacks them and points sources.root there)
sqlite3 "$W/lscat.db" 'PRAGMA wal_checkpoint(TRUNCATE);' > /dev/null
tar c -C "$REPOS" $(sqlite3 "$W/lscat.db" "SELECT root FROM sources" | xargs -r -n1 basename) |
    nice xz -T2 -6 > .dev/build11/repos.tar.xz || exit 3
echo "build11-prepare: $(du -sh .dev/build11 | cut -f1) in .dev/build11 (carry it with build/bin)"
