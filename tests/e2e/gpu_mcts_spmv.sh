#!/usr/bin/env bash
# The real CUDA+MPI back end of `lscat mcts search` (make test-gpu): the authors' distributed
# SpMV (150,000 rows, 4 ranks under mpirun on the GPUs there are), 400 implementations proposed
# by the coverage search, each checked against the CPU reference product and measured; then
# a resumed run and the rules. Prints the fastest/slowest ratio and the top rules as '#' lines.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
NAMES="gpu_mcts_spmv__measures_400_implementations gpu_mcts_spmv__checks_each_against_the_cpu_reference gpu_mcts_spmv__resumes_from_the_store gpu_mcts_spmv__rules"
if [ ! -x "$LSCAT_BIN/lscat-gpuinfo" ] || [ -z "$("$LSCAT_BIN/lscat-gpuinfo" 2>/dev/null)" ] ||
   [ ! -x "$LSCAT_BIN/lscat-mcts-spmv" ] || ! command -v mpirun >/dev/null; then
    for n in $NAMES; do t_skip "$n" "no CUDA device (or no lscat-mcts-spmv / mpirun)"; done
    t_done
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
DB=$T_TMP/mcts.db
run() { # ITERATIONS
    mpirun --oversubscribe -np 4 lscat --db "$DB" mcts search --dag "$ROOT/mcts/dags/spmv.dag" \
        --streams 2 --backend spmv --iterations "$1" --out "$T_TMP/spmv.csv"
}
t0=$(date +%s)
run 400 >"$T_OUT" 2>"$T_ERR"
rc=$?
echo "# $(grep '^spmv:' "$T_OUT") [$(( $(date +%s) - t0 )) s]" >&2
rows=$(wc -l <"$T_TMP/spmv.csv" 2>/dev/null || echo 0)
[ "$rc" = 0 ] && [ "$rows" = 400 ] && t_ok gpu_mcts_spmv__measures_400_implementations \
    || t_fail gpu_mcts_spmv__measures_400_implementations "exit $rc, $rows rows"
grep -q '400 checked against the CPU reference' "$T_OUT" \
    && t_ok gpu_mcts_spmv__checks_each_against_the_cpu_reference \
    || t_fail gpu_mcts_spmv__checks_each_against_the_cpu_reference "$(cat "$T_OUT")"
run 410 >"$T_OUT" 2>"$T_ERR"
grep -q '410 implementations measured (400 resumed)' "$T_OUT" \
    && t_ok gpu_mcts_spmv__resumes_from_the_store \
    || t_fail gpu_mcts_spmv__resumes_from_the_store "$(cat "$T_OUT")"
if ! lscat mcts --help | grep -q '^  rules      classes'; then
    t_skip gpu_mcts_spmv__rules "lscat-mcts built without learn/"
elif lscat mcts rules "$T_TMP/spmv.csv" --out "$T_TMP/rules" >"$T_OUT" 2>"$T_ERR"; then
    t_ok gpu_mcts_spmv__rules
    sed -n '1,25p' "$T_TMP/rules/rules.txt" | sed 's/^/# /' >&2
    # LSCAT_GPU_KEEP=DIR keeps the results and rules (for the closing note)
    [ -n "${LSCAT_GPU_KEEP:-}" ] && mkdir -p "$LSCAT_GPU_KEEP" && cp -r "$T_TMP/spmv.csv" "$T_TMP/rules" "$LSCAT_GPU_KEEP/"
else
    t_fail gpu_mcts_spmv__rules "$(cat "$T_ERR")"
fi
t_done
