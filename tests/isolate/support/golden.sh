#!/usr/bin/env bash
# Regenerate the golden isolated kernels of tests/isolate/fixtures/harness, textures, fixed and
# tests/isolate/fixtures/structs into OUT (default:
# tests/isolate/fixtures/harness-golden): one folder per kernel name with kernel.cu, harness.cu
# and params.json exactly as `lscat isolate` writes them. The GPU test builds and runs these
# (the GPU machines have no libclang); tests/e2e/isolate.sh checks they are current.
#   usage: LSCAT_BIN=build/bin tests/isolate/support/golden.sh [OUT]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${1:-$ROOT/tests/isolate/fixtures/harness-golden}
BIN=${LSCAT_BIN:-$ROOT/build/bin}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for f in harness structs textures fixed; do # struct arguments (gpu_struct_args.sh), textures (gpu_texture.c), fixed sizes (gpu_fixed.c)
    "$BIN/lscat-isolate" --work "$W" --path "$ROOT/tests/isolate/fixtures/$f" -j2 -q >/dev/null 2>&1 || true
done
rm -rf "$OUT"
mkdir -p "$OUT"
sqlite3 "$W/lscat.db" "SELECT name, dir FROM kernels ORDER BY name" | while IFS='|' read -r name dir; do
    mkdir -p "$OUT/$name"
    cp "$W/$dir/kernel.cu" "$W/$dir/harness.cu" "$W/$dir/params.json" "$OUT/$name/"
done
