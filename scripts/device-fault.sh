#!/usr/bin/env bash
# Fault cost on a lent GPU (issue #14 item 5): unpack the real-code archive, execute three
# kernels that fault at some block shapes (setColReadCol, gpu_square_matrix_mult: ~5 s per
# faulting configuration in tune on the H200; permute_kernel: ~1 s), then time their harnesses
# directly (scripts/device-fault.py) and one tune run with and without the spare runner.
#   usage: scripts/device-fault.sh OUT   (carry build/bin and .dev/realcode6.tar.xz)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/device-fault.sh OUT}; mkdir -p "$OUT"
ROOT=$PWD W=$ROOT/.dev/realcode/work
[ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
export PATH=$ROOT/build/bin:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1
[ -f "$W/lscat.db" ] || tar xJf "${FAULT_ARCHIVE:-.dev/realcode6.tar.xz}" -C "$ROOT" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
        "${FAULT_ARCHIVE:-.dev/realcode6.tar.xz}" "$ROOT"
S=079d88349985 G=0a23c3b62ccc P=047678690296
for k in $S $G $P; do timeout 200 lscat --work "$W" -j 16 execute --kernel $k > "$OUT/execute-$k.log" 2>&1; done
bin() { sqlite3 "$W/lscat.db" "SELECT b.binary_path FROM builds b WHERE b.kernel_id LIKE '$1%' AND b.status='ok'" 2>/dev/null ||
        python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT binary_path FROM builds WHERE kernel_id LIKE ? AND status=\"ok\"", (sys.argv[2]+"%",)).fetchone()[0])' "$W/lscat.db" "$1"; }
for spec in "$S setColReadCol 1016_1016_32_32_1 1016_1016_64_4_1 2" "$G gpu_square_matrix_mult 1016_1016_16_16_1 1016_1016_32_32_1 2" "$P permute_kernel 1016_1016_32_1_1 1016_1016_64_1_1 1"; do
    set -- $spec
    b=$(bin "$1"); echo "== $2 ($b)"
    [ -n "$b" ] && timeout 150 python3 scripts/device-fault.py "$W/$b" "${3//_/ }" "${4//_/ }" "$5"
done
for v in spare nospare; do
    cp "$W/lscat.db" "$OUT/tune-$v.db"
    env_=(); [ $v = nospare ] && env_=(LSCAT_TUNE_SPARE_RUNNER=0)
    t0=$(date +%s.%N)
    env "${env_[@]}" timeout 200 lscat --work "$W" --db "$OUT/tune-$v.db" tune --kernel $S --sizes 1016 --timeout 15 > "$OUT/tune-$v.log" 2>&1
    echo "== tune setColReadCol, $v: $(echo "$(date +%s.%N) - $t0" | bc) s"; tail -n 1 "$OUT/tune-$v.log"
    rm -f "$OUT/tune-$v.db"*
done
nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader
