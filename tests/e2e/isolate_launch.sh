#!/usr/bin/env bash
# End-to-end test of the source's own launch (issue #14, P1/P4; docs/isolate.md "Parameter
# model"): `lscat isolate` on tests/isolate/fixtures/harness records each kernel's first
# constant launch and its __launch_bounds__ in params.json, the harness carries the block and
# its dynamic shared memory, and a harness launching with 64 KiB (opted in above 48 KiB)
# compiles with the real nvcc. Skips what needs the CUDA headers or nvcc where they are absent.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$T_TMP/work
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
names="isolate_launch__a_dim3_block_variable_is_recorded isolate_launch__64_kib_of_shared_memory_is_recorded isolate_launch__launch_bounds_of_a_macro_is_recorded isolate_launch__the_harness_carries_the_sources_launch isolate_launch__a_harness_with_64_kib_compiles_with_nvcc"
if [ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime.h" ]; then
    for n in $names; do t_skip "$n" "no CUDA headers (launches parse only with them)"; done; t_done
fi
t_expect isolate_launch__isolate_exits_zero 0 lscat-isolate --work "$W" --path "$ROOT/tests/isolate/fixtures/harness" -j2 -q
dir() { sqlite3 "$W/lscat.db" "SELECT dir FROM kernels WHERE name = '$1'"; }
t_contains isolate_launch__a_dim3_block_variable_is_recorded "$W/$(dir tile32x4)/params.json" '"launch":{"block":[32,4,1],"smem":0}'
t_contains isolate_launch__64_kib_of_shared_memory_is_recorded "$W/$(dir big_shared)/params.json" '"launch":{"block":[256,1,1],"smem":65536}'
t_contains isolate_launch__launch_bounds_of_a_macro_is_recorded "$W/$(dir tile_reverse)/params.json" '"launch_bounds":128'
t_contains isolate_launch__the_harness_carries_the_sources_launch "$W/$(dir big_shared)/harness.cu" 'lscat_src_smem = 65536;'
if [ ! -x "$NVCC" ]; then t_skip isolate_launch__a_harness_with_64_kib_compiles_with_nvcc "nvcc not found ($NVCC)"
elif (cd "$W/$(dir big_shared)" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" -c harness.cu -o "$T_TMP/big.o" >"$T_TMP/nvcc.log" 2>&1); then
    t_ok isolate_launch__a_harness_with_64_kib_compiles_with_nvcc
else t_fail isolate_launch__a_harness_with_64_kib_compiles_with_nvcc "$(grep -m3 error "$T_TMP/nvcc.log")"; fi
t_done
