#!/usr/bin/env bash
# GPU test of struct arguments (issue #14, P5; make test-gpu): builds the harnesses isolate made
# of tests/isolate/fixtures/structs (the golden set) and runs them on the device. A matrix
# passed by value gets a buffer behind its pointer member and its width/height/stride (timed,
# output check match), an array of records gets each element's pointer set, a private pointer
# of a nested record with a base class is set, and a class with virtual functions faults with
# a detail saying why; a struct passed by reference is made in device memory, a linked list's
# links chain its array (64 steps from the head stay in it) and a spin lock's word starts at 0
# (at 64x64 the old fill gave it values up to 63: locked, a hang). Skips without nvcc or a
# CUDA device.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
names="gpu_struct_args__harnesses_build gpu_struct_args__a_matrix_by_value_runs_and_checks gpu_struct_args__an_array_of_records_runs gpu_struct_args__a_nested_private_pointer_runs gpu_struct_args__a_virtual_class_fault_says_why gpu_struct_args__a_struct_by_reference_runs gpu_struct_args__a_linked_list_walk_stays_in_its_buffer gpu_struct_args__a_zeroed_lock_word_opens"
skip_all() { for n in $names; do t_skip "$n" "$1"; done; t_done; }
[ -x "$NVCC" ] || skip_all "nvcc not found ($NVCC)"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    skip_all "no CUDA device"
fi
# The GPU machines have neither libclang nor the sqlite3 CLI: the kernels come isolated, as the
# golden set (tests/isolate/support/golden.sh; tests/e2e/isolate.sh checks it is current).
G=$ROOT/tests/isolate/fixtures/harness-golden B=$T_TMP/b; mkdir -p "$B"
"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c "$ROOT/tune/timing.cu" -o "$B/timing.o" 2>"$B/timing.log"
"$NVCC" -I"$ROOT" -c "$ROOT/tune/stats.c" -o "$B/stats.o" 2>"$B/stats.log"
"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c "$ROOT/isolate/harness_core.cu" -o "$B/harness_core.o" 2>"$B/harness_core.log"
ok=1
for k in grid_add segment_points pair_count shape_area count_by_ref walk_list locked_add; do
    (cd "$G/$k" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$B/harness_core.o" "$B/timing.o" "$B/stats.o" \
        -o "$B/$k" >"$B/$k.log" 2>&1) || { ok=0; echo "$k: $(grep -m2 error "$B/$k.log")" >&2; }
done
[ $ok = 1 ] && t_ok gpu_struct_args__harnesses_build || { t_fail gpu_struct_args__harnesses_build "see above"; t_done; }
run() { # name, extra options, one configuration line; its result line in $got
    printf '%s\n' "$3" | timeout 120 "$B/$1" $2 --results "$B/$1.jsonl" >"$B/$1.out" 2>&1
    got="rc $? $(sed -n 2p "$B/$1.jsonl")"
}
run grid_add "--warmup 1 --samples 3 --min-sample-ms 0.2" "256 256 16 16 1"
case "$got" in 'rc 0 '*'"status":"ok"'*'"check":"match"'*) t_ok gpu_struct_args__a_matrix_by_value_runs_and_checks ;;
    *) t_fail gpu_struct_args__a_matrix_by_value_runs_and_checks "$got" ;; esac
run segment_points --probe "1024 1 256 1 1"
case "$got" in 'rc 0 '*'"status":"ok"'*) t_ok gpu_struct_args__an_array_of_records_runs ;;
    *) t_fail gpu_struct_args__an_array_of_records_runs "$got" ;; esac
run pair_count --probe "1024 1 256 1 1"
case "$got" in 'rc 0 '*'"status":"ok"'*) t_ok gpu_struct_args__a_nested_private_pointer_runs ;;
    *) t_fail gpu_struct_args__a_nested_private_pointer_runs "$got" ;; esac
run shape_area --probe "1024 1 256 1 1"
case "$got" in *'"status":"cuda_error"'*"parameter 'shapes': class Shape has virtual functions"*) t_ok gpu_struct_args__a_virtual_class_fault_says_why ;;
    *) t_fail gpu_struct_args__a_virtual_class_fault_says_why "$got" ;; esac
run count_by_ref --probe "1024 1 256 1 1"
case "$got" in 'rc 0 '*'"status":"ok"'*) t_ok gpu_struct_args__a_struct_by_reference_runs ;;
    *) t_fail gpu_struct_args__a_struct_by_reference_runs "$got" ;; esac
run walk_list --probe "64 64 16 16 1"
case "$got" in 'rc 0 '*'"status":"ok"'*) t_ok gpu_struct_args__a_linked_list_walk_stays_in_its_buffer ;;
    *) t_fail gpu_struct_args__a_linked_list_walk_stays_in_its_buffer "$got" ;; esac
run locked_add --probe "64 64 16 16 1"
case "$got" in 'rc 0 '*'"status":"ok"'*) t_ok gpu_struct_args__a_zeroed_lock_word_opens ;;
    *) t_fail gpu_struct_args__a_zeroed_lock_word_opens "$got" ;; esac
t_done
