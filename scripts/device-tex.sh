#!/usr/bin/env bash
# Textures on a GPU (issue #14, patterns B3 texture references and P6 texture object parameters;
# docs/execute.md "Repair strategies", docs/isolate.md "Textures"), in one device call:
#   1. build/tests/execute/gpu_texture (the four fixture kernels: built, probed, runnable);
#   2. the real-code folders that hold session 10's 24 B3 and 5 P6 kernels (with every other
#      kernel of those folders, as a regression check), isolated here by `prepare` with this
#      tree's lscat: built (the texture_object repair pulls the references' declarations from the
#      carried sources) and probed by `lscat execute` on the device.
# Prints per kernel of the B3/P6 list: build status, fixes, probe outcome; then the counts.
#   here (CPU, libclang): scripts/device-tex.sh prepare [REPOS]   (REPOS default
#       .dev/realcode/repos; writes .dev/tex11: textree/ + work/, ~10 MB; about 1 minute)
#   on the GPU:           scripts/device-tex.sh run OUT_DIR       (carry build/bin build/tests
#       .dev/tex11)
# TEX_BUDGET_S (default 420) bounds the execute run; TEX_JOBS (default: cores).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
D=$ROOT/.dev/tex11
PY=$(command -v python3)
# repository, sub-folder: where the B3/P6 kernels and what they include live
SUBS="yuhc+gpu-rodinia cuda/leukocyte
yuhc+gpu-rodinia cuda/kmeans
yuhc+gpu-rodinia cuda/hybridsort
yuhc+gpu-rodinia cuda/mummergpu
vetter+shoc src/cuda/level0
vetter+shoc src/cuda/level1/md
vetter+shoc src/cuda/level1/spmv
vetter+shoc src/cuda/level2/qtclustering
vetter+shoc src/common
CodedK+CUDA-by-Example-source-code-for-the-book-s-examples- chapter07
CodedK+CUDA-by-Example-source-code-for-the-book-s-examples- chapter08
CodedK+CUDA-by-Example-source-code-for-the-book-s-examples- common
PacktPublishing+Hands-On-GPU-Accelerated-Computer-Vision-with-OpenCV-and-CUDA Chapter3
rbaygildin+learn-gpgpu kmeans2
NVIDIA+cuda-samples Samples/2_Concepts_and_Techniques/FunctionPointers
NVIDIA+cuda-samples Samples/5_Domain_Specific/convolutionFFT2D
NVIDIA+cuda-samples Common"
# session 10's not-runnable B3 and P6 kernels (/work/notes/s11/nonrunnable.tsv): name, pattern
WANT="GICOV_kernel B3
QTC_device B3
blend_kernel B3
bucketcount B3
compute_lj_force B3
copy_const_kernel B3
dilate_kernel B3
findCenters_k B3
gpu_texture_memory B3
kmeansPoint B3
mergeSortFirst B3
mergeSortPass B3
mummergpuKernel B3
printKernel B3
readTexels B3
readTexelsInCache B3
readTexelsRandom B3
relabel_k B3
spmv_csr_scalar_kernel B3
spmv_csr_vector_kernel B3
spmv_ellpackr_kernel B3
trim_ungrouped_pnts_indr_array B3
SobelShared P6
spPostprocess2D_kernel P6
spPreprocess2D_kernel P6
spProcess2D_kernel P6"

case "${1:-}" in
prepare)
    REPOS=$(cd "${2:-.dev/realcode/repos}" && pwd) || exit 2
    rm -rf "$D" && mkdir -p "$D/textree" "$D/work" || exit 3
    while read -r repo sub; do
        mkdir -p "$D/textree/$repo/$(dirname "$sub")" &&
            cp -r "$REPOS/$repo/$sub" "$D/textree/$repo/$sub" || exit 3
    done <<< "$SUBS"
    for r in "$D"/textree/*; do
        build/bin/lscat-isolate --work "$D/work" --path "$r" -j2 -q > /dev/null 2>&1
    done
    printf '%s\n' "$WANT" > "$D/want.txt"
    echo "prepared $D: $("$PY" -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM kernels").fetchone()[0])' \
        "$D/work/lscat.db") kernels isolated"
    exit 0 ;;
run) OUT=${2:?usage: $0 run OUT_DIR} ;;
*) echo "usage: $0 prepare [REPOS] | run OUT_DIR" >&2; exit 2 ;;
esac
[ -f "$D/work/lscat.db" ] || { echo "$0: run '$0 prepare' first (no $D/work/lscat.db)" >&2; exit 2; }
mkdir -p "$OUT" && W=$(mktemp -d) || exit 3
trap 'rm -rf "$W"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1

LSCAT_ROOT=$ROOT LSCAT_BIN=$ROOT/build/bin timeout -k 10 240 build/tests/execute/gpu_texture \
    > "$OUT/gpu_texture.txt" 2>&1
echo "gpu_texture: exit $? ($(grep -c '^ok' "$OUT/gpu_texture.txt") ok," \
    "$(grep -c '^not ok' "$OUT/gpu_texture.txt") not ok)" > "$OUT/summary.txt"

cp -r "$D/work" "$W/work" || exit 3
# the sources' roots as recorded by prepare -> the carried tree here
"$PY" - "$W/work/lscat.db" "$D/textree" <<'EOF' || exit 3
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for i, root in db.execute("SELECT id, root FROM sources").fetchall():
    db.execute("UPDATE sources SET root = ? WHERE id = ?",
               (os.path.join(sys.argv[2], os.path.basename(root)), i))
db.commit()
EOF
PATH=$ROOT/build/bin:$PATH LSCAT_BIN=$ROOT/build/bin LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 \
    timeout -k 20 "${TEX_BUDGET_S:-420}" build/bin/lscat --work "$W/work" -j "${TEX_JOBS:-$(nproc)}" \
    execute --probe-jobs 4 > "$OUT/execute.log" 2>&1
echo "execute: exit $?: $(grep -o 'execute: [0-9]* kernels.*' "$OUT/execute.log" | tail -1 | cut -c1-300)" \
    >> "$OUT/summary.txt"
cp "$W/work/lscat.db" "$OUT/tex.db" && gzip -f "$OUT/tex.db"

"$PY" - "$W/work/lscat.db" "$D/want.txt" <<'EOF' >> "$OUT/summary.txt" 2>&1
import collections, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
want = dict(l.split() for l in open(sys.argv[2]) if l.strip())
rows = db.execute("""SELECT k.name, substr(k.id, 1, 12), k.status, b.fixes, p.outcome,
    COALESCE(p.detail, (SELECT a.error_class || ': ' || substr(a.first_error, 1, 120) FROM
    build_attempts a WHERE a.build_id = b.id ORDER BY a.attempt DESC LIMIT 1))
    FROM kernels k LEFT JOIN builds b ON b.kernel_id = k.id LEFT JOIN probes p
    ON p.kernel_id = k.id ORDER BY k.name""").fetchall()
count = collections.Counter()
for name, kid, status, fixes, outcome, detail in rows:
    pat = want.get(name, "other")
    count[(pat, status)] += 1
    if pat != "other" or status not in ("runnable",):
        print("%-4s %-32s %s %-13s %-16s %s %s" % (pat, name, kid, status, outcome or "-",
              (fixes or "")[:90], (detail or "")[:120] if status != "runnable" else ""))
for pat in ("B3", "P6", "other"):
    got = {s: n for (p, s), n in count.items() if p == pat}
    print("%s: %d kernels: %s" % (pat, sum(got.values()),
          ", ".join("%s %d" % kv for kv in sorted(got.items()))))
EOF
tail -n 60 "$OUT/summary.txt"
