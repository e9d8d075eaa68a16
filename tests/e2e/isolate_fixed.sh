#!/usr/bin/env bash
# Kernels with hard-coded problem sizes (issue #14; docs/isolate.md "Fixed sizes"): `lscat
# isolate` on tests/isolate/fixtures/fixed (real libclang) records in params.json "fixed" the
# source's constant cudaMalloc sizes of each pointer argument, the size tune will measure and the
# grid (2 x the SM count, or a constant one), also where a helper launches on its caller's
# buffers; a kernel taking its size as a parameter records
# none; a launch on dim3 variables set after their declaration is no constant launch. The
# harness (real nvcc) sizes its buffers from the record under --bind fixed, and refuses the
# binding for a kernel without one. Skips what needs the CUDA headers or nvcc where absent.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$T_TMP/work
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
names="isolate_fixed__a_persistent_kernel_records_its_buffers_and_sm_grid isolate_fixed__a_launch_in_a_helper_records_its_callers_buffers isolate_fixed__a_caller_allocating_a_given_size_records_none isolate_fixed__a_constant_grid_kernel_records_its_size isolate_fixed__a_kernel_taking_its_size_records_none isolate_fixed__a_dim3_set_later_is_no_constant_launch isolate_fixed__the_harness_carries_the_sizes isolate_fixed__the_fixed_binding_sizes_the_buffers_from_the_source isolate_fixed__the_fixed_binding_is_refused_without_a_record"
if [ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime.h" ]; then
    for n in $names; do t_skip "$n" "no CUDA headers (launches parse only with them)"; done; t_done
fi
t_expect isolate_fixed__isolate_exits_zero 0 lscat-isolate --work "$W" --path "$ROOT/tests/isolate/fixtures/fixed" -j2 -q
dir() { sqlite3 "$W/lscat.db" "SELECT dir FROM kernels WHERE name = '$1'"; }
t_contains isolate_fixed__a_persistent_kernel_records_its_buffers_and_sm_grid "$W/$(dir fixed_scale)/params.json" \
    '"fixed":{"size":[1024,1024],"bytes":8388608,"buffers":{"a":4194304,"b":4194304},"grid":["sm*2",1,1],'
t_contains isolate_fixed__a_constant_grid_kernel_records_its_size "$W/$(dir fixed_add)/params.json" \
    '"fixed":{"size":[64,64],"bytes":32768,"buffers":{"x":16384,"y":16384},"grid":[16,1,1],'
t_contains isolate_fixed__a_launch_in_a_helper_records_its_callers_buffers "$W/$(dir caller_fill)/params.json" \
    '"fixed":{"size":[128,128],"bytes":131072,"buffers":{"out":65536,"in":65536},"grid":[128,1,1],'
if grep -q '"fixed"' "$W/$(dir twice_fill)/params.json"; then
    t_fail isolate_fixed__a_caller_allocating_a_given_size_records_none "$(cat "$W/$(dir twice_fill)/params.json")"
else t_ok isolate_fixed__a_caller_allocating_a_given_size_records_none; fi
if grep -q '"fixed"' "$W/$(dir sized_scale)/params.json"; then
    t_fail isolate_fixed__a_kernel_taking_its_size_records_none "$(cat "$W/$(dir sized_scale)/params.json")"
else t_ok isolate_fixed__a_kernel_taking_its_size_records_none; fi
if grep -q '"launch"' "$W/$(dir set_later)/params.json"; then
    t_fail isolate_fixed__a_dim3_set_later_is_no_constant_launch "$(head -c 400 "$W/$(dir set_later)/params.json")"
else t_ok isolate_fixed__a_dim3_set_later_is_no_constant_launch; fi
t_contains isolate_fixed__the_harness_carries_the_sizes "$W/$(dir fixed_add)/harness.cu" \
    'static const long long lscat_fixed_bytes[] = { 16384, 16384, -1 };'
if [ ! -x "$NVCC" ]; then
    t_skip isolate_fixed__the_fixed_binding_sizes_the_buffers_from_the_source "nvcc not found ($NVCC)"
    t_skip isolate_fixed__the_fixed_binding_is_refused_without_a_record "nvcc not found ($NVCC)"; t_done
fi
build() { (cd "$W/$(dir "$1")" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$ROOT/isolate/harness_core.cu" "$ROOT/tune/timing.cu" \
    "$ROOT/tune/stats.c" -o "$T_TMP/$1" >"$T_TMP/$1.log" 2>&1) || t_fail "isolate_fixed__$1_builds" "$(grep -m3 error "$T_TMP/$1.log")"; }
build fixed_add
build sized_scale
# --show-args needs no GPU: 4096 ints from the source (+ the pad) whatever W x H; area gives 10x10
t_expect isolate_fixed__show_args_runs 0 "$T_TMP/fixed_add" --show-args 10 10 --bind fixed &&
    t_contains isolate_fixed__the_fixed_binding_sizes_the_buffers_from_the_source "$T_OUT" \
        '"binding":"fixed","w":10,"h":10,"args":[{"role":"buffer","elems":5120},{"role":"buffer","elems":5120}]'
t_expect isolate_fixed__area_keeps_w_times_h 0 "$T_TMP/fixed_add" --show-args 10 10 &&
    t_contains isolate_fixed__area_gives_w_times_h "$T_OUT" '{"role":"buffer","elems":1124}'
t_expect isolate_fixed__the_fixed_binding_is_refused_without_a_record 2 "$T_TMP/sized_scale" --bind fixed --show-args 10 10 &&
    t_contains isolate_fixed__the_refusal_says_why "$T_ERR" 'isolate found no fixed problem size'
t_done
