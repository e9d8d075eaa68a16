#!/usr/bin/env bash
# What gathering Seer's row-length features costs on a lent GPU, in one call of under a minute:
# the shipped path (seer_features_gather since session 7: one launch, block partials, the last
# block writes mapped pinned memory; and the same waiting by a spin instead of a stream sync)
# against session 6's path (copy in, atomics, pageable copy back), session 6's one-launch
# variant and an empty launch (the floor), on 3 to 4,000,000 rows; then the shipped path against
# the CPU on edge cases and repeated calls (--check).
# At 1 SpMV iteration gathering must cost about 5-10 us to ever pay (docs/seer.md, Session 6/7).
# Usage (from the source root, build/ carried; built on the CPU machine by `make`, else here):
#   scripts/device-seer-features.sh OUT_DIR
# Writes OUT_DIR/features.txt (also printed). Exit 1 when a variant's features differ.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/device-seer-features.sh OUT_DIR}
mkdir -p "$OUT"
P=build/tests/seer/support/seer_feature_cost
if [ ! -x "$P" ]; then
    NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
    P=$OUT/seer_feature_cost
    "$NVCC" -O2 -std=c++17 -I. -o "$P" tests/seer/support/feature_cost.cu || exit 3
fi
{
    echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
    timeout -k 5 120 "$P"
    echo "exit $?"
    timeout -k 5 300 "$P" --check | tail -5
    echo "check exit ${PIPESTATUS[0]}"
} >"$OUT/features.txt" 2>&1
cat "$OUT/features.txt"
grep -q '^exit 0$' "$OUT/features.txt" && grep -q '^check exit 0$' "$OUT/features.txt"
