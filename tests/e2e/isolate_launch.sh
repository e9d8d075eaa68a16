#!/usr/bin/env bash
# End-to-end test of the source's own launch (issue #14, P1/P4; docs/isolate.md "Parameter
# model"): `lscat isolate` on tests/isolate/fixtures/harness records each kernel's first
# constant launch and its __launch_bounds__ in params.json, the harness carries the block and
# its dynamic shared memory, and a harness launching with 64 KiB (opted in above 48 KiB)
# compiles with the real nvcc; a kernel with a grid-wide barrier (grid.sync()) is marked
# "cooperative" and its harness, launching it cooperatively, builds and links without -rdc; a
# tiled GEMM's grid over its own sizes is recorded as an expression, and its harness under
# --bind tiles rounds the sizes to the tiles and evaluates that grid (--show-args: no GPU).
# Skips what needs the CUDA headers or nvcc where they are absent.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$T_TMP/work
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
names="isolate_launch__a_dim3_block_variable_is_recorded isolate_launch__a_block_assert_is_recorded isolate_launch__an_assert_against_a_parameter_is_not_recorded isolate_launch__64_kib_of_shared_memory_is_recorded isolate_launch__launch_bounds_of_a_macro_is_recorded isolate_launch__the_harness_carries_the_sources_launch isolate_launch__a_harness_with_64_kib_compiles_with_nvcc isolate_launch__a_grid_wide_barrier_is_marked_cooperative isolate_launch__a_cooperative_harness_builds_without_rdc isolate_launch__a_pointer_to_a_2_mib_struct_gets_64_mib_not_gigabytes isolate_launch__the_sources_grid_is_recorded_as_an_expression isolate_launch__tiles_rounds_the_sizes_and_evaluates_the_sources_grid isolate_launch__side_keeps_the_sizes_unrounded isolate_launch__tiles_gives_the_smallest_size_one_tile"
if [ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime.h" ]; then
    for n in $names; do t_skip "$n" "no CUDA headers (launches parse only with them)"; done; t_done
fi
t_expect isolate_launch__isolate_exits_zero 0 lscat-isolate --work "$W" --path "$ROOT/tests/isolate/fixtures/harness" -j2 -q
dir() { sqlite3 "$W/lscat.db" "SELECT dir FROM kernels WHERE name = '$1'"; }
t_contains isolate_launch__a_dim3_block_variable_is_recorded "$W/$(dir tile32x4)/params.json" '"launch":{"block":[32,4,1],"smem":0,"grid_expr":["cdiv(width,32)","cdiv(height,4)","1"]}'
t_contains isolate_launch__64_kib_of_shared_memory_is_recorded "$W/$(dir big_shared)/params.json" '"launch":{"block":[256,1,1],"smem":65536}'
t_contains isolate_launch__launch_bounds_of_a_macro_is_recorded "$W/$(dir tile_reverse)/params.json" '"launch_bounds":128'
# assert(blockDim.x == WARP_SIZE) (a macro) and assert(ROWS == blockDim.y) (a constexpr): the
# block the kernel asserts; an assert against a parameter is not a constant
t_contains isolate_launch__a_block_assert_is_recorded "$W/$(dir warp_rows)/params.json" '"block_eq":[32,8,0]'
if grep -q block_eq "$W/$(dir strided_copy)/params.json"; then
    t_fail isolate_launch__an_assert_against_a_parameter_is_not_recorded "$(grep -o '"block_eq[^]]*]' "$W/$(dir strided_copy)/params.json")"
else t_ok isolate_launch__an_assert_against_a_parameter_is_not_recorded; fi
t_contains isolate_launch__the_harness_carries_the_sources_launch "$W/$(dir big_shared)/harness.cu" 'lscat_src_smem = 65536;'
if [ ! -x "$NVCC" ]; then t_skip isolate_launch__a_harness_with_64_kib_compiles_with_nvcc "nvcc not found ($NVCC)"
elif (cd "$W/$(dir big_shared)" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" -c harness.cu -o "$T_TMP/big.o" >"$T_TMP/nvcc.log" 2>&1); then
    t_ok isolate_launch__a_harness_with_64_kib_compiles_with_nvcc
else t_fail isolate_launch__a_harness_with_64_kib_compiles_with_nvcc "$(grep -m3 error "$T_TMP/nvcc.log")"; fi
t_contains isolate_launch__the_sources_grid_is_recorded_as_an_expression "$W/$(dir tile_gemm64)/params.json" '"launch":{"block":[256,1,1],"smem":0,"grid_expr":["cdiv(N,64)","cdiv(M,64)","1"]}'
tiles_names="isolate_launch__tiles_rounds_the_sizes_and_evaluates_the_sources_grid isolate_launch__side_keeps_the_sizes_unrounded isolate_launch__tiles_gives_the_smallest_size_one_tile"
if [ ! -x "$NVCC" ]; then for n in $tiles_names; do t_skip "$n" "nvcc not found ($NVCC)"; done
elif (cd "$W/$(dir tile_gemm64)" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$ROOT/isolate/harness_core.cu" "$ROOT/tune/timing.cu" "$ROOT/tune/stats.c" -o "$T_TMP/tg" >"$T_TMP/nvcc-tg.log" 2>&1); then
    args() { "$T_TMP/tg" --bind "$1" --show-args "$2" "$3" | grep -o '"args".*'; }
    t_eq() { if [ "$2" = "$3" ]; then t_ok "$1"; else t_fail "$1" "got '$2', want '$3'"; fi; }
    size='{"role":"size","value"'
    t_eq isolate_launch__tiles_rounds_the_sizes_and_evaluates_the_sources_grid "$(args tiles 240 240)" \
        "\"args\":[$size:256},$size:256},$size:256},{\"role\":\"buffer\",\"elems\":66560},{\"role\":\"buffer\",\"elems\":66560},{\"role\":\"buffer\",\"elems\":66560}],\"grid\":[4,4,1]}"
    t_eq isolate_launch__side_keeps_the_sizes_unrounded "$(args side 240 240)" \
        "\"args\":[$size:240},$size:240},$size:240},{\"role\":\"buffer\",\"elems\":58624},{\"role\":\"buffer\",\"elems\":58624},{\"role\":\"buffer\",\"elems\":58624}]}"
    t_eq isolate_launch__tiles_gives_the_smallest_size_one_tile "$(args tiles 1024 1 | grep -o '"value":[0-9]*,*\|"grid".*' | tr -d '\n')" '"value":64"value":64"value":64"grid":[1,1,1]}'
else for n in $tiles_names; do t_fail "$n" "$(grep -m3 error "$T_TMP/nvcc-tg.log")"; done; fi
# A grid-wide barrier: marked, launched cooperatively; a block-level sync is not marked.
if grep -q '"cooperative":true' "$W/$(dir grid_sum)/params.json" && grep -q 'lscat_cooperative = 1;' "$W/$(dir grid_sum)/harness.cu" &&
   ! grep -q '"cooperative"' "$W/$(dir block_only)/params.json" && grep -q 'lscat_cooperative = 0;' "$W/$(dir block_only)/harness.cu"; then
    t_ok isolate_launch__a_grid_wide_barrier_is_marked_cooperative
else t_fail isolate_launch__a_grid_wide_barrier_is_marked_cooperative "$(head -c 300 "$W/$(dir grid_sum)/params.json")"; fi
# built as execute builds it (docs/isolate.md "Harness rules"): nvcc 13 needs no -rdc for grid.sync()
if [ ! -x "$NVCC" ]; then t_skip isolate_launch__a_cooperative_harness_builds_without_rdc "nvcc not found ($NVCC)"
elif (cd "$W/$(dir grid_sum)" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$ROOT/isolate/harness_core.cu" "$ROOT/tune/timing.cu" \
        "$ROOT/tune/stats.c" -o "$T_TMP/coop" >"$T_TMP/nvcc-coop.log" 2>&1) && [ -x "$T_TMP/coop" ]; then
    t_ok isolate_launch__a_cooperative_harness_builds_without_rdc
else t_fail isolate_launch__a_cooperative_harness_builds_without_rdc "$(grep -m3 error "$T_TMP/nvcc-coop.log")"; fi
# A pointer to one 2 MiB object: 32 of them (64 MiB), not W x H + pad (--show-args needs no GPU).
if [ ! -x "$NVCC" ]; then t_skip isolate_launch__a_pointer_to_a_2_mib_struct_gets_64_mib_not_gigabytes "nvcc not found ($NVCC)"
elif (cd "$W/$(dir add_into_struct)" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$ROOT/isolate/harness_core.cu" "$ROOT/tune/timing.cu" \
        "$ROOT/tune/stats.c" -o "$T_TMP/big" >"$T_TMP/nvcc-big.log" 2>&1); then
    got=$("$T_TMP/big" --show-args 1024 1 2>&1)
    case "$got" in
    *'{"role":"buffer","elems":2048},{"role":"buffer","elems":2048},{"role":"buffer","elems":32},'*)
        t_ok isolate_launch__a_pointer_to_a_2_mib_struct_gets_64_mib_not_gigabytes ;;
    *) t_fail isolate_launch__a_pointer_to_a_2_mib_struct_gets_64_mib_not_gigabytes "got $got" ;;
    esac
else t_fail isolate_launch__a_pointer_to_a_2_mib_struct_gets_64_mib_not_gigabytes "$(grep -m3 error "$T_TMP/nvcc-big.log")"; fi
t_done
