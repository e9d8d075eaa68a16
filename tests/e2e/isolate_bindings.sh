#!/usr/bin/env bash
# Role bindings of generated harnesses (docs/isolate.md "Bindings"), with the real nvcc and no
# GPU: the golden harnesses of tests/isolate/fixtures/harness-golden are built with the
# documented command; --help, a bad --bind, and --show-args (the values each parameter gets for
# W x H under a binding, printed without any CUDA call) are checked; the binding list the probe
# tries (execute/probe.c) is the harness's own, in the same order; --help says which reference
# shapes the output check falls back to.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
G=$ROOT/tests/isolate/fixtures/harness-golden
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
B=$T_TMP/b; mkdir -p "$B"

# The probe's list and the harness's list, name by name and in order.
# (the harness's list may wrap: its lines are joined first)
h=$(tr '\n' ' ' < "$ROOT/isolate/harness_core.cu" | grep -o 'lscat_bindings\[\] = {[^}]*}' |
    sed 's/^lscat_bindings\[\] = { *//; s/, *nullptr *}$//; s/  */ /g')
p=$(sed -n 's/^const char \*const probe_bindings\[\] = { \(.*\), NULL };$/\1/p' "$ROOT/execute/probe_params.c")
if [ -n "$h" ] && [ "$h" = "$p" ]; then t_ok isolate_bindings__the_probe_tries_the_harness_bindings_in_order
else t_fail isolate_bindings__the_probe_tries_the_harness_bindings_in_order "harness '$h', probe '$p'"; fi
# The harness's LSCAT_BIND_<NAME> and the probe's PROBE_BIND_<NAME> are those names' places in it.
wrong=""
i=0
for name in $(echo "$h" | tr -d '",'); do
    up=$(echo "$name" | tr a-z A-Z)
    v=$(sed -n "s/^#define LSCAT_BIND_$up \([0-9]*\).*/\1/p" "$ROOT/isolate/harness_core.cu")
    [ -z "$v" ] || [ "$v" = "$i" ] || wrong="$wrong LSCAT_BIND_$up=$v@$i"
    [ "$i" = 0 ] || [ -n "$v" ] || wrong="$wrong LSCAT_BIND_$up-missing"
    v=$(sed -n "s/^#define PROBE_BIND_$up \([0-9]*\).*/\1/p" "$ROOT/execute/probe.h")
    [ -z "$v" ] || [ "$v" = "$i" ] || wrong="$wrong PROBE_BIND_$up=$v@$i"
    i=$((i + 1))
done
[ -z "$wrong" ] && t_ok isolate_bindings__the_binding_numbers_are_their_places_in_the_list ||
    t_fail isolate_bindings__the_binding_numbers_are_their_places_in_the_list "$wrong"

names="isolate_bindings__harnesses_build isolate_bindings__help_exits_0_and_names_the_bindings isolate_bindings__help_names_the_output_checks_fallback_references isolate_bindings__an_unknown_binding_is_a_usage_error isolate_bindings__bad_show_args_are_a_usage_error isolate_bindings__area_binds_a_size_to_w_times_h isolate_bindings__side_binds_a_size_to_the_side isolate_bindings__side_keeps_widths_and_heights isolate_bindings__an_element_count_kernel_under_area isolate_bindings__tokens_gives_aligned_transformer_dims isolate_bindings__tokens_grows_the_buffers_at_small_sizes isolate_bindings__tokens_scales_the_dims_with_the_size isolate_bindings__tokens_gives_n_the_heads_beside_a_t isolate_bindings__tokens_gives_n_the_rows_without_a_t isolate_bindings__tokens_gives_heads_dividing_c isolate_bindings__tokens_leaves_other_kernels_as_area"
if [ ! -x "$NVCC" ]; then for n in $names; do t_skip "$n" "nvcc not found ($NVCC)"; done; t_done; fi

"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c "$ROOT/tune/timing.cu" -o "$B/timing.o" 2>"$B/timing.log" &&
    "$NVCC" -I"$ROOT" -c "$ROOT/tune/stats.c" -o "$B/stats.o" 2>"$B/stats.log" &&
    "$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c "$ROOT/isolate/harness_core.cu" -o "$B/harness_core.o" 2>"$B/harness_core.log"
ok=1
for k in matmul_square saxpy transpose add_positions softmax_rows row_scale head_sums; do
    (cd "$G/$k" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$B/harness_core.o" "$B/timing.o" "$B/stats.o" \
        -o "$B/$k" >"$B/$k.log" 2>&1) || { ok=0; echo "$k: $(grep -m2 error "$B/$k.log")" >&2; }
done
if [ $ok = 1 ]; then t_ok isolate_bindings__harnesses_build
else t_fail isolate_bindings__harnesses_build "see above"; t_done; fi

if t_expect isolate_bindings__help_exits_0_and_names_the_bindings 0 "$B/matmul_square" --help; then
    grep -qF -- '--bind area|side' "$T_OUT" || t_fail isolate_bindings__help_exits_0_and_names_the_bindings "$(head -c 300 "$T_OUT")"
fi
if grep -qF 'gives way to the next candidate shape (1D 256, 128, 512, 64, 1024, 32; 2D 16, 8, 32, 24 square)' "$T_OUT"; then
    t_ok isolate_bindings__help_names_the_output_checks_fallback_references
else t_fail isolate_bindings__help_names_the_output_checks_fallback_references "$(grep -i 'output check' "$T_OUT" | head -c 400)"; fi
if t_expect isolate_bindings__an_unknown_binding_is_a_usage_error 2 "$B/matmul_square" --bind cube; then
    grep -qF 'unknown --bind' "$T_ERR" || t_fail isolate_bindings__an_unknown_binding_is_a_usage_error "$(cat "$T_ERR")"
fi
t_expect isolate_bindings__bad_show_args_are_a_usage_error 2 "$B/matmul_square" --show-args 0 5

show() { "$B/$1" "${@:2}" 2>&1; }
out=$(show matmul_square --show-args 240 240)
case "$out" in '{"kernel":"matmul_square","binding":"area","w":240,"h":240,"args":[{"role":"buffer","elems":58624},{"role":"buffer","elems":58624},{"role":"buffer","elems":58624},{"role":"size","value":57600}]}')
    t_ok isolate_bindings__area_binds_a_size_to_w_times_h ;;
    *) t_fail isolate_bindings__area_binds_a_size_to_w_times_h "$out" ;; esac
out=$(show matmul_square --bind side --show-args 496 240)
case "$out" in *'"binding":"side","w":496,"h":240,'*'{"role":"size","value":240}]}')
    t_ok isolate_bindings__side_binds_a_size_to_the_side ;;
    *) t_fail isolate_bindings__side_binds_a_size_to_the_side "$out" ;; esac
out=$(show transpose --bind side --show-args 496 240)
case "$out" in *'{"role":"width","value":496},{"role":"height","value":240}]}')
    t_ok isolate_bindings__side_keeps_widths_and_heights ;;
    *) t_fail isolate_bindings__side_keeps_widths_and_heights "$out" ;; esac
out=$(show saxpy --show-args 256 256)
case "$out" in *'"binding":"area"'*'"args":[{"role":"size","value":65536},{"role":"scale","value":1},{"role":"buffer","elems":66560},{"role":"buffer","elems":66560}]}')
    t_ok isolate_bindings__an_element_count_kernel_under_area ;;
    *) t_fail isolate_bindings__an_element_count_kernel_under_area "$out" ;; esac
# tokens: a transformer's dims by name, aligned (C 256/512/768, T a multiple of 32, B 1,
# NH = C/64), the most work B*T*C whose tensors fit W*H; area: scales 1
out=$(show add_positions --bind tokens --show-args 496 240)
out_area=$(show add_positions --show-args 496 240)
case "$out|$out_area" in *'"binding":"tokens"'*'{"role":"buffer","elems":120064}'*'{"role":"scale","value":1},{"role":"scale","value":96},{"role":"scale","value":256}]}|'*'{"role":"scale","value":1},{"role":"scale","value":1},{"role":"scale","value":1}]}')
    t_ok isolate_bindings__tokens_gives_aligned_transformer_dims ;;
    *) t_fail isolate_bindings__tokens_gives_aligned_transformer_dims "$out | $out_area" ;; esac
# 1024x1 has room for no aligned model: C 256, T 32, and the buffers hold C*C = 65536 (+ pad)
out=$(show add_positions --bind tokens --show-args 1024 1)
case "$out" in *'{"role":"buffer","elems":66560},{"role":"buffer","elems":66560},{"role":"buffer","elems":66560},{"role":"scale","value":1},{"role":"scale","value":32},{"role":"scale","value":256}]}')
    t_ok isolate_bindings__tokens_grows_the_buffers_at_small_sizes ;;
    *) t_fail isolate_bindings__tokens_grows_the_buffers_at_small_sizes "$out" ;; esac
out=$(show add_positions --bind tokens --show-args 2024 2024)
case "$out" in *'{"role":"buffer","elems":4097600},'*'{"role":"scale","value":1},{"role":"scale","value":576},{"role":"scale","value":768}]}')
    t_ok isolate_bindings__tokens_scales_the_dims_with_the_size ;;
    *) t_fail isolate_bindings__tokens_scales_the_dims_with_the_size "$out" ;; esac
# softmax over (N, T, T) scores: N = B*NH = 12 at 2024x2024, so 12*576*576 fits W*H
out=$(show softmax_rows --bind tokens --show-args 2024 2024)
case "$out" in *'{"role":"size","value":12},{"role":"scale","value":576}]}')
    t_ok isolate_bindings__tokens_gives_n_the_heads_beside_a_t ;;
    *) t_fail isolate_bindings__tokens_gives_n_the_heads_beside_a_t "$out" ;; esac
out=$(show row_scale --bind tokens --show-args 2024 2024)
case "$out" in *'{"role":"size","value":576},{"role":"scale","value":768}]}')
    t_ok isolate_bindings__tokens_gives_n_the_rows_without_a_t ;;
    *) t_fail isolate_bindings__tokens_gives_n_the_rows_without_a_t "$out" ;; esac
out=$(show head_sums --bind tokens --show-args 1016 1016)
case "$out" in *'{"role":"scale","value":1},{"role":"scale","value":288},{"role":"scale","value":768},{"role":"size","value":12}]}')
    t_ok isolate_bindings__tokens_gives_heads_dividing_c ;;
    *) t_fail isolate_bindings__tokens_gives_heads_dividing_c "$out" ;; esac
out=$(show saxpy --bind tokens --show-args 256 256)
case "$out" in *'"binding":"tokens"'*'"args":[{"role":"size","value":65536},{"role":"scale","value":1},'*)
    t_ok isolate_bindings__tokens_leaves_other_kernels_as_area ;;
    *) t_fail isolate_bindings__tokens_leaves_other_kernels_as_area "$out" ;; esac
t_done
