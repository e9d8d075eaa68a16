# End-to-end: `make run`'s pipeline (scripts/run-sample.sh) on the bundled sample, in a temporary
# work folder: every stage runs, the store ends up with the sample's kernels built and the
# dataset exported. On a machine without a GPU, tune says so and the export still happens.
. "$(dirname "$0")/lib.sh"
chmod 755 "$T_TMP" # the sandbox's uids reach the work folder (docs/execute.md "Folders the sandbox cannot enter")
ROOT=${LSCAT_ROOT:-$PWD}
export LSCAT_WORK=$T_TMP/work LSCAT_DB=$T_TMP/work/lscat.db
t_expect run_sample__the_whole_pipeline_succeeds 0 "$ROOT/scripts/run-sample.sh"
for stage in "lscat harvest scan" "lscat harvest fetch" "lscat isolate" "lscat execute" "lscat tune" \
             "lscat dataset export" "lscat dataset report" "lscat sweep" "lscat seer train" "lscat seer eval" \
             "lscat nightly" "lscat status"; do
    grep -qF "== $stage" "$T_OUT" || t_fail "run_sample__runs_${stage// /_}" "no '== $stage' step in the output"
done
q() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$LSCAT_DB" "$1"; }
[ "$(q "SELECT count(*) FROM gha_hours WHERE status = 'done'")" = 3 ] && t_ok run_sample__scans_the_three_sample_hours ||
    t_fail run_sample__scans_the_three_sample_hours "hours done: $(q "SELECT count(*) FROM gha_hours WHERE status = 'done'")"
[ "$(q "SELECT count(*) FROM repos WHERE fetch_status = 'fetched'")" = 4 ] && t_ok run_sample__fetches_the_four_sample_repositories ||
    t_fail run_sample__fetches_the_four_sample_repositories "fetched: $(q "SELECT count(*) FROM repos WHERE fetch_status = 'fetched'")"
kernels=$(q "SELECT group_concat(name, ',') FROM (SELECT name FROM kernels ORDER BY name)")
[ "$kernels" = "advect,matmul_tiled,reduce_partial,saxpy,stencil2d" ] && t_ok run_sample__isolates_the_five_sample_kernels ||
    t_fail run_sample__isolates_the_five_sample_kernels "kernels: $kernels"
[ "$(q "SELECT count(*) FROM builds WHERE status = 'ok'")" = 5 ] && t_ok run_sample__builds_every_sample_kernel ||
    t_fail run_sample__builds_every_sample_kernel "ok builds: $(q "SELECT count(*) FROM builds WHERE status = 'ok'")"
for f in kernels.parquet measurements.parquet README.md columns.md SHA256SUMS; do
    [ -s "$LSCAT_WORK/export/$f" ] || t_fail run_sample__exports_$f "missing $LSCAT_WORK/export/$f"
done
(cd "$LSCAT_WORK/export" && sha256sum -c --quiet SHA256SUMS) && t_ok run_sample__export_checksums_verify ||
    t_fail run_sample__export_checksums_verify "sha256sum -c failed"
(cd "$LSCAT_WORK/releases/latest" && sha256sum -c --quiet SHA256SUMS) && t_ok run_sample__the_nightly_publishes_a_whole_release ||
    t_fail run_sample__the_nightly_publishes_a_whole_release "no whole release under $LSCAT_WORK/releases/latest"
# the sweep's example: BLOCK_SIZE 128's 3 records fail to compile; the other 12 are measured
# with a GPU, left unrun without one
sw=$LSCAT_WORK/sweep/matmul.csv
rows=$(( $(wc -l <"$sw" 2>/dev/null || echo 1) - 1 ))
compile=$(grep -c ',Failure,Compile,' "$sw" 2>/dev/null)
if [ "$compile" = 3 ] && { [ "$rows" = 3 ] || [ "$rows" = 15 ]; }; then t_ok run_sample__sweeps_the_matmul_example
else t_fail run_sample__sweeps_the_matmul_example "$rows rows, $compile Compile failures in $sw (want 3 of 3, or 3 of 15 with a GPU)"; fi
t_expect run_sample__a_second_run_succeeds_on_the_same_store 0 "$ROOT/scripts/run-sample.sh"
[ "$(q "SELECT count(*) FROM kernels")" = 5 ] && [ "$(q "SELECT count(*) FROM repos")" = 4 ] &&
    t_ok run_sample__a_second_run_adds_nothing || t_fail run_sample__a_second_run_adds_nothing "rows grew"
t_done
