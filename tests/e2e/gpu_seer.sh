#!/usr/bin/env bash
# GPU tests of lscat seer (make test-gpu; skipped without a CUDA device): every kernel in float
# and double against the double CPU reference on every matrix of tests/data/matrices (and
# ../shared/data/matrices, or build/seer-matrices on a GPU host, when present) and on generated
# edge cases (empty rows, one dense row, 1x1, rectangular both ways, no non-zeros), the GPU feature kernel against the CPU features,
# then train on what was measured, build the exported seer_select() library and run it end to
# end (tests/seer/support/select_main.cu: plain seer_select(), seer_gather_async() first,
# seer_gather_async() on another matrix, and on two streams), once with the trained selector and
# once with a selector that always gathers.
source "$(dirname "$0")/lib.sh"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ ! -x "$LSCAT_BIN/lscat-seer-gpu" ]; then
    t_skip gpu_seer "lscat-seer-gpu not built (no nvcc)"; t_done
fi
if ! "$LSCAT_BIN/lscat-seer-gpu" | grep -q '"ok":1'; then
    t_skip gpu_seer "no CUDA device"; t_done
fi
W=$T_TMP/work
D=$T_TMP/model
M=("$LSCAT_ROOT/tests/data/matrices")
if [ -d "$LSCAT_ROOT/../shared/data/matrices" ]; then M+=("$LSCAT_ROOT/../shared/data/matrices")
elif [ -d "$LSCAT_ROOT/build/seer-matrices" ]; then M+=("$LSCAT_ROOT/build/seer-matrices"); fi
EDGE=(emptyrows:rows=3000,avg=6,empty=0.9 longrows:rows=2000,avg=3,long=2000,count=1
      banded:rows=1,bw=0 uniform:rows=100,cols=20000,avg=300 uniform:rows=50000,cols=7,avg=4
      emptyrows:rows=500,avg=4,empty=1 powerlaw:rows=300000,avg=8,alpha=1.5)
args=()
for m in "${M[@]}"; do args+=(--matrices "$m"); done
for g in "${EDGE[@]}"; do args+=(--generate "$g"); done
t_expect gpu_seer__bench_times_every_kernel_on_every_matrix 0 \
    lscat --work "$W" seer bench "${args[@]}" --samples 5
# sqlite3's CLI, or Python's sqlite3 module where the CLI is missing (the GPU hosts).
q() {
    if command -v sqlite3 >/dev/null; then sqlite3 "$W/lscat.db" "$1"; return; fi
    python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(map(str, r)))' \
        "$W/lscat.db" "$1"
}
bad=$(q "SELECT count(*) FROM seer_results WHERE status IN ('fault', 'wrong')")
if [ "$bad" = 0 ]; then t_ok gpu_seer__every_kernel_agrees_with_the_cpu_reference
else t_fail gpu_seer__every_kernel_agrees_with_the_cpu_reference \
    "$(q "SELECT m.name, r.kernel, r.precision, r.status, r.error FROM seer_results r JOIN seer_matrices m ON m.id = r.matrix_id WHERE status IN ('fault','wrong') LIMIT 8")"; fi
want=$(q "SELECT count(*) * 22 FROM seer_matrices")
have=$(q "SELECT count(*) FROM seer_results")
if [ "$want" = "$have" ]; then t_ok gpu_seer__every_matrix_has_every_kernel_in_both_precisions
else t_fail gpu_seer__every_matrix_has_every_kernel_in_both_precisions "$have of $want rows"; fi
unsup=$(q "SELECT group_concat(DISTINCT kernel) FROM seer_results WHERE status = 'unsupported'")
echo "# unsupported somewhere: ${unsup:-none}" >&2
dis=$(q "SELECT count(*) FROM seer_feature_costs WHERE agrees = 0")
nf=$(q "SELECT count(*) FROM seer_feature_costs")
if [ "$dis" = 0 ] && [ "$nf" -gt 0 ]; then t_ok gpu_seer__feature_kernel_equals_the_cpu_features
else t_fail gpu_seer__feature_kernel_equals_the_cpu_features "$dis of $nf disagree"; fi
t_expect gpu_seer__bench_again_measures_nothing_new 0 lscat --work "$W" seer bench "${args[@]}" &&
    t_contains gpu_seer__the_second_run_skips_every_matrix "$T_ERR" " 0 matrices measured"

t_expect gpu_seer__trains_on_the_measurements 0 lscat --work "$W" seer train --out "$D"
t_expect gpu_seer__the_exported_library_builds 0 make -C "$D"
sel=$LSCAT_ROOT/tests/seer/support/select_main.cu
t_expect gpu_seer__seer_select_chooses_as_the_trees_do 0 \
    "$NVCC" -O2 -std=c++17 -I"$D" -o "$T_TMP/select" "$sel" "$D/libseer_select.a" &&
    t_expect gpu_seer__seer_select_runs_end_to_end 0 "$T_TMP/select"
cp -r "$D" "$T_TMP/forced"
printf '#ifndef SEER_SELECTOR_TREE_H\n#define SEER_SELECTOR_TREE_H\nstatic inline int seer_selector_predict(const double *x) { (void)x; return 1; }\n#endif\n' \
    >"$T_TMP/forced/seer_selector.h"
make -C "$T_TMP/forced" clean >/dev/null
t_expect gpu_seer__a_gathering_selector_builds 0 make -C "$T_TMP/forced" &&
    t_expect gpu_seer__gathered_features_on_the_gpu_equal_the_cpus 0 \
        "$NVCC" -O2 -std=c++17 -I"$T_TMP/forced" -o "$T_TMP/select2" "$sel" \
        "$T_TMP/forced/libseer_select.a" &&
    t_expect gpu_seer__seer_select_gathers_end_to_end 0 "$T_TMP/select2"
t_done
