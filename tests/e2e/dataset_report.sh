#!/usr/bin/env bash
# lscat dataset report end to end on the SYNTHETIC store: the printed table carries the known
# answers over output-check `match` rows only (see tests/dataset/report.c), output_check.txt
# lists the rows each kernel lost, gnuplot draws the PNGs, index.html shows them; a store
# without measurements (a machine without a GPU) still gets a report.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
S=$T_TMP/syn
"$ROOT/tests/dataset/support/synth-store.sh" "$S/lscat.db" "$S/work" >"$T_OUT" 2>"$T_ERR" ||
    t_fail dataset_report__synthetic_store_builds "$(cat "$T_ERR")"
t_expect dataset_report__runs 0 lscat-dataset report --db "$S/lscat.db" --out "$S/rep"
t_contains dataset_report__prints_the_h100_row "$T_OUT" 'NVIDIA H100 80GB HBM3              2       4     50.0%     92.8%   25.0%      8.6%    5.6%     8.2%   25.0%       4/4    100.0%'
t_contains dataset_report__prints_the_t4_row "$T_OUT" 'Tesla T4                           1       1      0.0%    100.0%    0.0%      0.0%    0.0%     0.0%    0.0%       1/1    100.0%'
t_contains dataset_report__prints_the_paper_for_comparison "$T_OUT" 'LS-CAT paper, GTX 980 (mean)'
t_contains dataset_report__says_what_the_output_check_left_out "$T_OUT" 'NVIDIA H100 80GB HBM3: output check of the current ok rows: 15 match, 1 mismatch (1 kernels)'
t_expect dataset_report__all_checks_runs 0 lscat-dataset report --db "$S/lscat.db" --out "$S/rep-all" --all-checks
t_contains dataset_report__all_checks_lets_the_mismatch_be_the_best "$T_OUT" 'NVIDIA H100 80GB HBM3              2       4     25.0%'
t_contains dataset_report__all_checks_says_so "$T_OUT" 'ALL of them are counted above (--all-checks'
t_contains dataset_report__lists_rows_lost_per_kernel "$S/rep/output_check.txt" "$(printf 'saxpy\t1d\t7\t1\t0\t0\t3')"
if command -v gnuplot >/dev/null; then
    for f in nvidia-h100-80gb-hbm3-avg.png nvidia-h100-80gb-hbm3-kernel.png tesla-t4-avg.png; do
        if [ "$(head -c 4 "$S/rep/$f" 2>/dev/null | tail -c 3)" = PNG ]; then t_ok "dataset_report__draws_$f"
        else t_fail "dataset_report__draws_$f" "missing or not a PNG"; fi
    done
    t_contains dataset_report__html_shows_the_plots "$S/rep/index.html" '<img src="tesla-t4-avg.png"'
else
    t_skip dataset_report__draws_plots "gnuplot not installed"
fi
lscat-init --db "$S/empty.db" -q
t_expect dataset_report__works_without_measurements 0 lscat-dataset report --db "$S/empty.db" --out "$S/erep"
t_contains dataset_report__says_there_is_nothing "$T_OUT" 'no current ok measurements'
t_expect dataset_report__needs_out 2 lscat-dataset report --db "$S/lscat.db"
t_done
