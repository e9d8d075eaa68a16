#!/usr/bin/env bash
# End-to-end tests of `lscat seer` without a GPU: usage errors, import + train + eval on the CI
# fixture (tests/data/seer/costmodel.csv: times from a documented cost model, NOT measured; see
# docs/seer.md), the exported folder building libseer_select.a with nvcc, and bench storing the
# features of good matrices while naming a malformed file's line.
source "$(dirname "$0")/lib.sh"
W=$T_TMP/work
D=$T_TMP/model
FIX=$LSCAT_ROOT/tests/data/seer/costmodel.csv

t_expect seer__help_lists_the_subcommands 0 lscat seer --help &&
    t_contains seer__help_names_the_generator_families "$T_OUT" "powerlaw (avg, alpha)"
t_expect seer__an_unknown_subcommand_is_a_usage_error 2 lscat --work "$W" seer frobnicate
t_expect seer__import_without_a_file_is_a_usage_error 2 lscat --work "$W" seer import
t_expect seer__a_bad_generator_spec_is_a_usage_error 2 \
    lscat --work "$W" seer bench --generate spiral:rows=3 &&
    t_contains seer__the_bad_spec_is_named "$T_ERR" "unknown family 'spiral'"
t_expect seer__bench_without_matrices_is_a_usage_error 2 lscat --work "$W" seer bench
t_expect seer__eval_on_an_empty_store_fails_saying_what_to_run 3 lscat --work "$W" seer eval &&
    t_contains seer__the_message_says_to_run_bench "$T_ERR" "run lscat seer bench"

t_expect seer__imports_the_fixture 0 lscat --work "$W" seer import "$FIX"
t_expect seer__trains_from_the_stored_table 0 lscat --work "$W" seer train --out "$D" &&
    t_contains seer__train_reports_three_accuracies "$T_OUT" "selector"
for f in model.json known.json gathered.json selector.json seer_known.h seer_gathered.h \
         seer_selector.h seer_classes.h seer_select.h seer_select.cu seer_features.cuh Makefile \
         predictions.csv; do
    [ -s "$D/$f" ] || { t_fail seer__train_writes_every_file "$f missing"; break; }
done
[ -s "$D/Makefile" ] && t_ok seer__train_writes_every_file
t_expect seer__evaluates_the_held_back_matrices 0 lscat --work "$W" seer eval --out "$D" &&
    t_contains seer__eval_writes_the_summary "$D/eval.md" "| iterations | Oracle (ms)" &&
    t_contains seer__eval_names_the_synchronous_feature_cost_by_default "$D/eval.md" \
        "Feature cost charged: **sync**"
# The asynchronous feature cost (seer_gather_async(), docs/seer.md Session 8): refused while the
# store has none, then charged once the store has one (here stand-in values written by SQL: a
# quarter of the synchronous cost; measured ones come from bench on a GPU).
FAST=(--max-depth 4 --min-samples-leaf 5 --split gini --risk 0)
t_expect seer__an_unknown_feature_cost_is_a_usage_error 2 \
    lscat --work "$W" seer train --feature-cost later --out "$T_TMP/later"
t_expect seer__the_async_cost_unmeasured_fails_saying_what_to_run 3 \
    lscat --work "$W" seer train --feature-cost async "${FAST[@]}" --out "$T_TMP/async" &&
    t_contains seer__the_message_names_the_bench_command "$T_ERR" "bench --features-only --force"
sqlite3 "$W/lscat.db" "UPDATE seer_feature_costs SET async_float_ns = feature_ns / 4,
                       async_double_ns = feature_ns / 4"
t_expect seer__trains_on_the_async_cost 0 lscat --work "$W" seer train --feature-cost async \
    --precision float "${FAST[@]}" --out "$T_TMP/async" &&
    t_contains seer__train_says_which_cost "$T_OUT" "float precision, async feature cost" &&
    t_contains seer__model_json_records_the_async_cost "$T_TMP/async/model.json" '"feature_cost": "async"'
t_expect seer__eval_of_the_async_model 0 lscat --work "$W" seer eval --out "$T_TMP/async" &&
    t_contains seer__eval_names_the_async_feature_cost "$T_TMP/async/eval.md" \
        "Feature cost charged: **async**"
if command -v gnuplot >/dev/null; then
    for f in speedup-1.png speedup-1.svg speedup-10000.png oracle.png oracle.svg; do
        [ -s "$D/$f" ] || { t_fail seer__eval_draws_png_and_svg_plots "$f missing"; break; }
    done
    [ -s "$D/oracle.svg" ] && t_ok seer__eval_draws_png_and_svg_plots
else
    t_skip seer__eval_draws_png_and_svg_plots "gnuplot not installed"
fi
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || command -v nvcc >/dev/null; then
    t_expect seer__the_exported_folder_builds_libseer_select 0 make -C "$D" &&
        [ -s "$D/libseer_select.a" ] && t_ok seer__libseer_select_a_exists
else
    t_skip seer__the_exported_folder_builds_libseer_select "no nvcc"
fi

# bench (a fresh store): good matrices are stored with their features, the malformed one is
# named with its line and stored nowhere. Without a GPU nothing is timed; with one, two kernels.
W=$T_TMP/work-bench
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n0 2 3\n' >"$T_TMP/bad.mtx"
if [ -x "$LSCAT_BIN/lscat-seer-gpu" ]; then
    t_expect seer__bench_records_a_refused_matrix_as_a_failure 1 lscat --work "$W" seer bench \
        --matrices "$LSCAT_ROOT/tests/data/matrices/can_24.mtx" "$T_TMP/bad.mtx" \
        --generate banded:rows=50 --kernels csr_thread,csr_warp --precision double &&
        t_contains seer__the_refusal_names_file_and_line "$T_ERR" \
            "bad.mtx:4: row index 0 is 0-based (indices run from 1 to 3)"
    n=$(sqlite3 "$W/lscat.db" "SELECT count(*) FROM seer_matrices WHERE name IN ('can_24',
        'banded:rows=50,cols=50,bw=2,seed=1') AND nnz IN (160, 244)")
    b=$(sqlite3 "$W/lscat.db" "SELECT count(*) FROM seer_matrices WHERE name = 'bad'")
    if [ "$n" = 2 ] && [ "$b" = 0 ]; then t_ok seer__bench_stores_good_matrices_and_not_the_bad_one
    else t_fail seer__bench_stores_good_matrices_and_not_the_bad_one "good $n (want 2), bad $b"; fi
else
    t_skip seer__bench_records_a_refused_matrix_as_a_failure "lscat-seer-gpu not built here (no nvcc, or a sanitizer build)"
fi
# bench --features-only through a stand-in worker (a script speaking the worker's JSON lines;
# the real worker's kernel is checked on a GPU by gpu_seer_features.sh): the flag reaches the
# worker, feature costs are stored for its GPU with no kernel result, a second run skips the
# matrices, --force measures them again, and a failed feature kernel is a recorded failure.
W=$T_TMP/work-features
FAKE=$T_TMP/fake-worker
cat >"$FAKE" <<'SH'
#!/usr/bin/env bash
echo "$*" >>"${0}.log"
echo '{"event":"device","ok":1,"name":"Stand-in GPU","uuid":"GPU-stand-in","cc":"9.0","memory_bytes":1,"sm_count":1,"driver":"0","cuda_runtime":13000}'
i=0
for a in "$@"; do
    case $a in gen:*) ;; *) continue ;; esac
    printf '{"event":"matrix","item":%d,"name":"%s","source":"generated","spec":"%s","rows":10,"cols":10,"nnz":20,"row_max":2,"row_min":2,"row_mean":2,"row_var":0,"read_s":0}\n' "$i" "${a#gen:}" "${a#gen:}"
    case $a in
    *rows=77,*) printf '{"event":"features_error","item":%d,"error":"an injected failure"}\n' "$i" ;;
    *) printf '{"event":"features","item":%d,"feature_ns":%d,"async_float_ns":%d,"async_double_ns":%d,"resident_float_ns":%d,"resident_double_ns":%d,"sync_upload_float_ns":%d,"sync_upload_double_ns":%d,"agrees":1}\n' \
           "$i" $((1000 + i)) $((200 + i)) $((300 + i)) $((400 + i)) $((500 + i)) $((600 + i)) $((700 + i)) ;;
    esac
    i=$((i + 1))
done
SH
chmod +x "$FAKE"
G=(--generate banded:rows=50 --generate uniform:rows=100,avg=3)
t_expect seer__features_only_bench_runs 0 lscat --work "$W" seer bench --features-only \
    --worker "$FAKE" "${G[@]}" &&
    t_contains seer__features_only_reaches_the_worker "$FAKE.log" "--features-only --start 0 gen:banded:rows=50"
fc=$(sqlite3 "$W/lscat.db" "SELECT group_concat(f.feature_ns, ' ') FROM seer_feature_costs f JOIN
     gpus g ON g.id = f.gpu_id WHERE g.uuid = 'GPU-stand-in' ORDER BY f.feature_ns")
nr=$(sqlite3 "$W/lscat.db" "SELECT count(*) FROM seer_results")
if { [ "$fc" = "1000.0 1001.0" ] || [ "$fc" = "1000 1001" ]; } && [ "$nr" = 0 ]; then
    t_ok seer__features_only_stores_feature_costs_and_no_kernel_result
else t_fail seer__features_only_stores_feature_costs_and_no_kernel_result "costs '$fc', results $nr"; fi
ac=$(sqlite3 "$W/lscat.db" "SELECT group_concat(CAST(async_float_ns AS INT) || '/' ||
     CAST(async_double_ns AS INT) || '/' || CAST(resident_float_ns AS INT) || '/' ||
     CAST(resident_double_ns AS INT) || '/' || CAST(sync_upload_float_ns AS INT) || '/' ||
     CAST(sync_upload_double_ns AS INT), ' ') FROM seer_feature_costs ORDER BY feature_ns")
if [ "$ac" = "200/300/400/500/600/700 201/301/401/501/601/701" ]; then t_ok seer__features_only_stores_the_async_costs_of_both_precisions
else t_fail seer__features_only_stores_the_async_costs_of_both_precisions "async float/double '$ac'"; fi
t_expect seer__features_only_again_measures_nothing 0 lscat --work "$W" seer bench \
    --features-only --worker "$FAKE" "${G[@]}" &&
    t_contains seer__the_stored_feature_costs_are_skipped "$T_ERR" " 0 matrices measured, 2 already complete"
t_expect seer__features_only_force_measures_again 0 lscat --work "$W" seer bench \
    --features-only --force --worker "$FAKE" "${G[@]}" &&
    t_contains seer__force_measures_both_again "$T_ERR" "2 feature costs"
t_expect seer__a_failed_feature_kernel_is_a_recorded_failure 1 lscat --work "$W" seer bench \
    --features-only --worker "$FAKE" --generate banded:rows=77 &&
    t_contains seer__the_failure_is_named "$T_ERR" "an injected failure"
t_done
