#!/usr/bin/env bash
# GPU test of the output check (make test-gpu; docs/isolate.md "Output check"): the golden
# harnesses of tests/isolate/fixtures/harness-golden built as execute builds them, run on the
# device. A 2D kernel's (X,1) rows cover W x H and match; the same kernel under LS-CAT's 1D grid
# (its harness told it indexes x only) is a mismatch; a 1D kernel's 1D shapes (the fit space)
# match and a 2D shape on it does not; an atomicAdd sum is nondeterministic and compared with
# tolerance; a kernel that writes nothing for a shape is a mismatch, never a fast success; every
# checked line says what the check cost; a kernel without a bound writes past W x H by as much as
# its grid overshoots (into the harness's padding), which is not compared: its 1D shapes match; a
# reference that races with itself (a hard-coded 8x8 tile under 16x16) gives way to the next
# candidate shape, which then matches; a per-block output whose rows depend on the grid is a
# mismatch that says so. Skips without nvcc or a CUDA device.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
G=$ROOT/tests/isolate/fixtures/harness-golden
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
names="gpu_output_check__harnesses_build gpu_output_check__a_2d_kernels_1d_rows_cover_w_by_h_and_match gpu_output_check__a_2d_kernel_under_a_1d_grid_is_a_mismatch gpu_output_check__a_2d_matmul_under_a_1d_grid_is_a_mismatch gpu_output_check__a_1d_kernels_fit_shapes_all_match gpu_output_check__a_2d_shape_on_a_1d_kernel_is_a_mismatch gpu_output_check__an_atomic_sum_is_nondeterministic_within_tolerance gpu_output_check__a_kernel_that_writes_nothing_is_a_mismatch gpu_output_check__the_check_cost_is_reported gpu_output_check__an_unbounded_kernels_overshoot_into_the_padding_is_not_compared gpu_output_check__a_racing_reference_falls_back_to_a_deterministic_shape gpu_output_check__a_per_block_output_that_depends_on_the_grid_is_a_mismatch_saying_so"
skip_all() { for n in $names; do t_skip "$n" "$1"; done; t_done; }
[ -x "$NVCC" ] || skip_all "nvcc not found ($NVCC)"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    skip_all "no CUDA device"
fi
B=$T_TMP/b; mkdir -p "$B"
"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c "$ROOT/tune/timing.cu" -o "$B/timing.o" 2>"$B/timing.log"
"$NVCC" -I"$ROOT" -c "$ROOT/tune/stats.c" -o "$B/stats.o" 2>"$B/stats.log"
"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c "$ROOT/isolate/harness_core.cu" -o "$B/harness_core.o" 2>"$B/harness_core.log"
build() { # name [dir]: the golden harness (or a changed copy in dir)
    local k=$1 d=${2:-$G/$1}
    (cd "$d" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$B/harness_core.o" "$B/timing.o" "$B/stats.o" \
        -o "$B/$k" >"$B/$k.log" 2>&1) || { echo "$k: $(grep -m2 error "$B/$k.log")" >&2; return 1; }
}
# The same kernels read as 1D (lscat_grid2d = 0): LS-CAT's grid rule, (ceil(W*H/BX), 1) for 1D
# blocks, as a kernel whose y indexing the analysis missed would get.
as_1d() {
    local d=$B/$1_1d.src # not $B/$1_1d: that is the program's own path
    mkdir -p "$d" && cp "$G/$1/kernel.cu" "$G/$1/params.json" "$d/"
    sed 's/^static const int lscat_grid2d = 1;/static const int lscat_grid2d = 0;/' "$G/$1/harness.cu" > "$d/harness.cu"
    grep -q 'lscat_grid2d = 0;' "$d/harness.cu" && build "$1_1d" "$d"
}
ok=1
for k in stencil5 matmul_square saxpy sum_atomic small_blocks_only add_unbounded tile8_stamp row_sum_per_block; do build $k || ok=0; done
as_1d stencil5 || ok=0
as_1d matmul_square || ok=0
[ $ok = 1 ] && t_ok gpu_output_check__harnesses_build || { t_fail gpu_output_check__harnesses_build "see above"; t_done; }
FAST="--warmup 1 --samples 3 --min-sample-ms 0.2"
run() { # name, extra options (split on spaces), config lines; output in $B/<name>.jsonl
    local k=$1 extra=$2; shift 2
    printf '%s\n' "$@" | timeout 300 "$B/$k" $FAST $extra --results "$B/$k.jsonl" >"$B/$k.stdout" 2>"$B/$k.stderr"
    rc=$?
}
line() { sed -n "$2p" "$B/$1.jsonl"; }
check_of() { sed -n 's/.*"check":"\([a-z_]*\)".*/\1/p' <<<"$1"; }
expect() { # test name, jsonl line, wanted check
    if [ "$(check_of "$2")" = "$3" ] && [[ "$2" == *'"status":"ok"'* ]]; then t_ok "$1"
    else t_fail "$1" "want $3: $2 (rc $rc)"; fi
}
run stencil5 "" "496 240 256 1 1" "496 240 16 16 1" "496 240 1024 1 1"
case "$(line stencil5 2)" in '{"w":496,"h":240,"block":[256,1,1],"grid":[2,240,1]'*) ;; *) echo "grid: $(line stencil5 2)" >&2 ;; esac
if [ "$(check_of "$(line stencil5 2)")$(check_of "$(line stencil5 3)")$(check_of "$(line stencil5 4)")" = matchmatchmatch ] &&
   [[ "$(line stencil5 2)" == *'"grid":[2,240,1]'* ]]; then t_ok gpu_output_check__a_2d_kernels_1d_rows_cover_w_by_h_and_match
else t_fail gpu_output_check__a_2d_kernels_1d_rows_cover_w_by_h_and_match "$(cat "$B/stencil5.jsonl")"; fi
run stencil5_1d "--check-ref 16x16x1" "240 240 256 1 1" "240 240 16 16 1"
expect gpu_output_check__a_2d_kernel_under_a_1d_grid_is_a_mismatch "$(line stencil5_1d 2)" mismatch
run matmul_square_1d "--bind side --check-ref 16x16x1" "240 240 64 1 1"
expect gpu_output_check__a_2d_matmul_under_a_1d_grid_is_a_mismatch "$(line matmul_square_1d 2)" mismatch
shapes="32 64 96 128 160 192 224 256 320 384 448 512 576 640 704 768 832 896 960 1024"
cfgs=(); for b in $shapes; do cfgs+=("496 496 $b 1 1"); done
run saxpy "" "${cfgs[@]}" "496 496 16 16 1"
n=$(grep -c '"check":"match"' "$B/saxpy.jsonl")
[ "$n" = 20 ] && t_ok gpu_output_check__a_1d_kernels_fit_shapes_all_match ||
    t_fail gpu_output_check__a_1d_kernels_fit_shapes_all_match "$n of 20 match: $(grep -v '"check":"match"' "$B/saxpy.jsonl" | head -3)"
expect gpu_output_check__a_2d_shape_on_a_1d_kernel_is_a_mismatch "$(tail -1 "$B/saxpy.jsonl")" mismatch
run sum_atomic "" "2024 2024 256 1 1" "2024 2024 512 1 1"
l=$(line sum_atomic 3)
if [ "$(check_of "$l")" = nondeterministic ] && [[ "$l" == *'within tolerance'* ]]; then
    t_ok gpu_output_check__an_atomic_sum_is_nondeterministic_within_tolerance
else t_fail gpu_output_check__an_atomic_sum_is_nondeterministic_within_tolerance "$l (rc $rc)"; fi
run small_blocks_only "" "496 496 256 1 1" "496 496 1024 1 1"
if [ "$(check_of "$(line small_blocks_only 2)")" = match ]; then
    expect gpu_output_check__a_kernel_that_writes_nothing_is_a_mismatch "$(line small_blocks_only 3)" mismatch
else t_fail gpu_output_check__a_kernel_that_writes_nothing_is_a_mismatch "reference shape: $(line small_blocks_only 2)"; fi
if [[ "$(line saxpy 2)" == *'"check_ns":'*'"check_ref_ns":'* ]] && [[ "$(line saxpy 3)" == *'"check_ns":'* ]] &&
   [[ "$(line saxpy 3)" != *check_ref_ns* ]]; then t_ok gpu_output_check__the_check_cost_is_reported
else t_fail gpu_output_check__the_check_cost_is_reported "$(line saxpy 2)"; fi
# 1016*1016 = 1032256 = 64 * 16129: a 64-thread block covers it exactly, 256 and 1024 overshoot.
run add_unbounded "" "1016 1016 256 1 1" "1016 1016 64 1 1" "1016 1016 1024 1 1" "1016 1016 96 1 1"
n=$(grep -c '"check":"match"' "$B/add_unbounded.jsonl")
[ "$n" = 4 ] && t_ok gpu_output_check__an_unbounded_kernels_overshoot_into_the_padding_is_not_compared ||
    t_fail gpu_output_check__an_unbounded_kernels_overshoot_into_the_padding_is_not_compared "$n of 4 match: $(grep -v '"check":"match"' "$B/add_unbounded.jsonl" | head -2)"
run tile8_stamp "" "496 496 8 8 1" "496 496 16 16 1"
if [ "$(check_of "$(line tile8_stamp 2)")" = match ] &&
   [[ "$(line tile8_stamp 2)" == *'reference block 8x8x1'*'first candidate 16x16x1 differed between its own two runs'* ]]; then
    expect gpu_output_check__a_racing_reference_falls_back_to_a_deterministic_shape "$(line tile8_stamp 3)" mismatch
else t_fail gpu_output_check__a_racing_reference_falls_back_to_a_deterministic_shape "$(line tile8_stamp 2) (rc $rc)"; fi
run row_sum_per_block "" "496 496 256 1 1" "496 496 128 1 1"
l=$(line row_sum_per_block 3)
if [ "$(check_of "$(line row_sum_per_block 2)")" = match ] && [ "$(check_of "$l")" = mismatch ] &&
   [[ "$l" == *'writes other elements than the reference block 256x1x1 (961 written by only one of them'*'the 961 both wrote agree'* ]]; then
    t_ok gpu_output_check__a_per_block_output_that_depends_on_the_grid_is_a_mismatch_saying_so
else t_fail gpu_output_check__a_per_block_output_that_depends_on_the_grid_is_a_mismatch_saying_so "$(cat "$B/row_sum_per_block.jsonl") (rc $rc)"; fi
t_done
