#!/usr/bin/env bash
# The shipped feature kernel (seer/seer_features.cuh: block partials, the last block writes the
# result into mapped pinned memory and resets its ticket) on a GPU (make test-gpu; skipped
# without a device): its exact sums, longest and shortest row equal the CPU's on 0 to 4,000,000
# rows of five kinds (i % 7, all empty, one huge row among empty ones, 90% empty, all equal),
# on an aligned and an unaligned row_ptr, over 850 successive calls with both ways of waiting
# (so the ticket is reset every time); then `lscat seer bench --features-only` stores feature
# costs that agree with the CPU features and the asynchronous path's exposed costs, and a second
# run skips them.
source "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
TB=${LSCAT_TEST_BIN:-$ROOT/build/tests}
case "$TB" in /*) ;; *) TB=$ROOT/$TB ;; esac
P=$TB/seer/support/seer_feature_cost
if [ ! -x "$P" ] || [ ! -x "$LSCAT_BIN/lscat-seer-gpu" ]; then
    t_skip gpu_seer_features "seer_feature_cost or lscat-seer-gpu not built (no nvcc)"; t_done
fi
if ! "$LSCAT_BIN/lscat-seer-gpu" | grep -q '"ok":1'; then
    t_skip gpu_seer_features "no CUDA device"; t_done
fi
t_expect gpu_seer_features__the_kernel_equals_the_cpu_on_edge_cases_and_repeated_calls 0 "$P" --check &&
    t_contains gpu_seer_features__every_call_was_checked "$T_OUT" "features: all equal the CPU: 850 calls"
t_expect gpu_seer_features__the_timing_variants_agree 0 "$P" 3 100000 &&
    t_contains gpu_seer_features__the_shipped_variant_was_timed "$T_OUT" "now: block partials, mapped, stream sync"
W=$T_TMP/work
G=(--generate emptyrows:rows=3000,avg=6,empty=0.9 --generate longrows:rows=20000,avg=3,long=20000,count=1
   --generate banded:rows=1,bw=0 --generate powerlaw:rows=300001,avg=8,alpha=1.5)
t_expect gpu_seer_features__bench_features_only_runs 0 lscat --work "$W" seer bench --features-only "${G[@]}"
q() {
    python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(map(str, r)))' \
        "$W/lscat.db" "$1"
}
got=$(q "SELECT count(*), sum(agrees), min(feature_ns) > 0 FROM seer_feature_costs")
if [ "$got" = "4|4|1" ]; then t_ok gpu_seer_features__bench_features_only_stores_agreeing_costs
else t_fail gpu_seer_features__bench_features_only_stores_agreeing_costs "count|agree|positive: $got"; fi
# the asynchronous path's exposed costs (docs/seer.md Session 8): both flows, both precisions,
# each a difference of two timed flows, so finite and far below a second (it may be negative)
got=$(q "SELECT count(*) FROM seer_feature_costs WHERE abs(async_float_ns) < 1e9 AND
         abs(async_double_ns) < 1e9 AND abs(resident_float_ns) < 1e9 AND abs(resident_double_ns) < 1e9
         AND abs(sync_upload_float_ns) < 1e9 AND abs(sync_upload_double_ns) < 1e9")
if [ "$got" = 4 ]; then t_ok gpu_seer_features__bench_stores_the_costs_of_every_flow
else t_fail gpu_seer_features__bench_stores_the_costs_of_every_flow "$got of 4 matrices"; fi
echo "# sync / async / resident / sync-upload costs (us), float/double: $(q "SELECT group_concat(
     printf('%.1f %.1f/%.1f %.1f/%.1f %.1f/%.1f', feature_ns / 1e3, async_float_ns / 1e3,
     async_double_ns / 1e3, resident_float_ns / 1e3, resident_double_ns / 1e3,
     sync_upload_float_ns / 1e3, sync_upload_double_ns / 1e3), '; ') FROM seer_feature_costs")" >&2
t_expect gpu_seer_features__a_second_features_only_run_skips 0 \
    lscat --work "$W" seer bench --features-only "${G[@]}" &&
    t_contains gpu_seer_features__all_four_are_skipped "$T_ERR" " 0 matrices measured, 4 already complete"
t_done
