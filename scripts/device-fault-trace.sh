#!/usr/bin/env bash
# Where a faulting configuration's seconds go inside `lscat tune` (issue #21/#14: some kernels'
# faults cost 4-5 s each in tune, others 0.4-1 s): execute a few real kernels from the real-code
# archive, then tune each alone at 1016 with LSCAT_TUNE_TRACE (tune's runner events, monotonic
# seconds) and LSCAT_RUNNER_TRACE (lscat-runner's load/main/unload per kernel), and print the
# event timeline with the gap before each event.
#   usage: scripts/device-fault-trace.sh OUT   (carry build/bin and the archive)
# FT_ARCHIVE (default .dev/realcode7.tar.xz), FT_KERNELS (id prefixes; default bisectKernelLarge,
# dynamicReverse, estimate_sum_ahs, permute_kernel), FT_VARIANTS (spare and/or nospare: without
# the spare runner; default spare), FT_ARGS (more tune options).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/device-fault-trace.sh OUT}; mkdir -p "$OUT"
ROOT=$PWD W=$ROOT/.dev/realcode/work
export PATH=$ROOT/build/bin:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1
A=${FT_ARCHIVE:-.dev/realcode7.tar.xz}
[ -f "$W/lscat.db" ] || tar xJf "$A" -C "$ROOT" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$A" "$ROOT"
KS=${FT_KERNELS:-0cd23a67b22a 2494a82b2432 65acc26f1b2a 047678690296}
for k in $KS; do
    timeout 200 lscat --work "$W" -j 16 execute --kernel "$k" > "$OUT/execute-$k.log" 2>&1
    echo "execute $k: exit $? $(tail -n 1 "$OUT/execute-$k.log" | cut -c1-200)"
done
for k in $KS; do
    for v in ${FT_VARIANTS:-spare}; do
        cp "$W/lscat.db" "$OUT/t.db"
        env_=(LSCAT_TUNE_TRACE="$OUT/trace-$k-$v.txt" LSCAT_RUNNER_TRACE="$OUT/runner-$k-$v.txt")
        [ $v = nospare ] && env_+=(LSCAT_TUNE_SPARE_RUNNER=0)
        t0=$(date +%s%N)
        env "${env_[@]}" timeout 200 lscat --work "$W" --db "$OUT/t.db" tune --kernel "$k" \
            --sizes 1016 --timeout 15 ${FT_ARGS:-} > "$OUT/tune-$k-$v.log" 2>&1
        echo "== tune $k $v: exit $? in $(( ($(date +%s%N) - t0) / 1000000 )) ms: $(tail -n 1 "$OUT/tune-$k-$v.log" | cut -c1-300)"
        python3 - "$OUT/trace-$k-$v.txt" <<'PY'
import sys
prev = None
try:
    lines = open(sys.argv[1]).read().split("\n")
except OSError:
    lines = []
for l in lines:
    if not l:
        continue
    t = float(l.split()[0])
    print(f"  +{(t - prev) if prev else 0:7.3f} {l[:170]}")
    prev = t
PY
        sed 's/^/  runner: /' "$OUT/runner-$k-$v.txt" 2>/dev/null | cut -c1-200
        rm -f "$OUT/t.db"*
    done
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
