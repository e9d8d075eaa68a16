#!/usr/bin/env bash
# lscat execute end to end: the real program, a real store, the real nvcc, one fixture kernel.
. "$(dirname "$0")/lib.sh"
W=$T_TMP/work
export LSCAT_WORK=$W LSCAT_DB=$W/lscat.db
chmod 755 "$T_TMP"

t_expect "execute__unknown_option_is_a_usage_error" 2 lscat execute --no-such-option
t_contains "execute__usage_error_says_usage" "$T_ERR" "usage: lscat execute"
t_expect "execute__help_lists_options_and_exit_codes" 0 lscat execute --help
t_contains "execute__help_names_the_classes" "$T_OUT" "removed_cuda_api"
t_contains "execute__help_documents_the_probe_workers" "$T_OUT" "--probe-jobs"
t_expect "execute__zero_probe_jobs_is_a_usage_error" 2 lscat execute --probe-jobs 0
t_expect "execute__the_old_build_round_option_is_still_accepted" 0 lscat execute --no-probe --build-round 4
t_expect "execute__an_empty_store_is_fine" 0 lscat execute --no-probe
t_contains "execute__says_there_is_nothing_to_build" "$T_ERR" "no kernels to build"

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    t_skip "execute__builds_a_kernel_then_caches_it" "nvcc not found"
    t_done
fi
id=$(printf 'e2e-ok' | sha256sum | cut -c1-64)
kd=$W/kernels/${id:0:2}/$id
mkdir -p "$kd/include"
cp tests/execute/fixtures/kernels/ok/kernel.cu tests/execute/fixtures/harness.cu "$kd/"
cp tests/execute/fixtures/harness_main.h "$kd/include/"
sqlite3 "$LSCAT_DB" "INSERT INTO kernels(id, name, dir, params, param_count, created_at)
    VALUES ('$id', 'k', 'kernels/${id:0:2}/$id', '[]', 2, '2026-11-21T00:00:00Z')"
t_expect "execute__builds_a_kernel" 0 lscat execute --arch sm_90 -j 1 --no-probe
st=$(sqlite3 "$LSCAT_DB" "SELECT status FROM kernels WHERE id = '$id'")
[ "$st" = built ] && t_ok "execute__marks_it_built" || t_fail "execute__marks_it_built" "status $st"
t_expect "execute__a_second_run_succeeds" 0 lscat execute --arch sm_90 --no-probe
c=$(sqlite3 "$LSCAT_DB" "SELECT counts FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC LIMIT 1")
case "$c" in *'"cached":1'*) t_ok "execute__the_second_run_is_all_cached" ;;
    *) t_fail "execute__the_second_run_is_all_cached" "counts $c" ;; esac

# SIGTERM (as from `timeout`): the build in flight finishes, nothing new starts, the run is
# recorded as interrupted with its counts, exit 3; a second run builds the rest.
for i in 1 2 3 4 5 6; do
    id=$(printf 'e2e-int-%d' "$i" | sha256sum | cut -c1-64)
    kd=$W/kernels/${id:0:2}/$id
    mkdir -p "$kd/include"
    sed "s/2.0f \* x\[i\]/$i.5f * x[i]/" tests/execute/fixtures/kernels/ok/kernel.cu >"$kd/kernel.cu"
    cp tests/execute/fixtures/harness.cu "$kd/"
    cp tests/execute/fixtures/harness_main.h "$kd/include/"
    sqlite3 "$LSCAT_DB" "INSERT INTO kernels(id, name, dir, params, param_count, created_at)
        VALUES ('$id', 'k$i', 'kernels/${id:0:2}/$id', '[]', 2, '2026-11-21T00:00:00Z')"
done
lscat execute --arch sm_90 -j 1 --no-probe >"$T_OUT" 2>"$T_ERR" &
pid=$!
# the signal comes once the first of the six is built, however slow this machine is today
for _ in $(seq 3000); do
    [ "$(sqlite3 "$LSCAT_DB" "SELECT count(*) FROM kernels WHERE status = 'built'" 2>/dev/null)" -ge 2 ] 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
rc=$?
row=$(sqlite3 "$LSCAT_DB" "SELECT exit_status || ' ' || (ended_at IS NOT NULL) || ' ' || counts FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC LIMIT 1")
built=$(sqlite3 "$LSCAT_DB" "SELECT count(*) FROM kernels WHERE status = 'built'")
case "$rc $row" in
    "3 3 1 "*'"interrupted":1'*) [ "$built" -lt 7 ] && t_ok execute__sigterm_records_an_interrupted_run \
        || t_fail execute__sigterm_records_an_interrupted_run "all $built built before the signal" ;;
    *) t_fail execute__sigterm_records_an_interrupted_run "exit $rc, row: $row" ;;
esac
t_contains execute__sigterm_says_run_again "$T_ERR" "interrupted; run again"
t_expect "execute__the_next_run_builds_the_rest" 0 lscat execute --arch sm_90 -j 1 --no-probe
built=$(sqlite3 "$LSCAT_DB" "SELECT count(*) FROM kernels WHERE status = 'built'")
[ "$built" = 7 ] && t_ok execute__nothing_is_lost || t_fail execute__nothing_is_lost "$built of 7 built"

# Builds and probes side by side: three kernels whose probe takes 2 s (the probe_waits fixture;
# no GPU: --probe-anyway, the harness runs no configuration), one builder and one probe worker.
# The first probe starts as soon as the first kernel is built: before the last build ends.
for i in 1 2 3; do
    id=0e2e$(printf 'e2e-pipe-%d' "$i" | sha256sum | cut -c1-60)
    kd=$W/kernels/${id:0:2}/$id
    mkdir -p "$kd/include"
    sed "s/2.0f \* x\[i\]/$i.25f * x[i]/" tests/execute/fixtures/kernels/probe_waits/kernel.cu >"$kd/kernel.cu"
    cp tests/execute/fixtures/kernels/probe_waits/harness.cu "$kd/"
    cp tests/execute/fixtures/harness_main.h "$kd/include/"
    sqlite3 "$LSCAT_DB" "INSERT INTO kernels(id, name, dir, params, param_count, created_at)
        VALUES ('$id', 'p$i', 'kernels/${id:0:2}/$id', '[]', 2, '2026-11-21T00:00:00Z')"
done
PIPE=(lscat execute --arch sm_90 -j 1 --probe-jobs 1 --probe-anyway --kernel 0e2e -v --log-format json)
counts() { sqlite3 "$LSCAT_DB" "SELECT counts FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC LIMIT 1"; }
probes() { sqlite3 "$LSCAT_DB" "SELECT count(*) FROM probes WHERE kernel_id LIKE '0e2e%'"; }
ts_of() { grep "\"event\":\"$1\"" "$T_ERR" | sed 's/^{"ts":"\([^"]*\)".*/\1/' | sort | sed -n "$2"; }
export LSCAT_TEST_PROBE_SLEEP_S=2
t_expect "execute__builds_and_probes_three_kernels" 1 "${PIPE[@]}" # 1: no configuration ran (no GPU)
first_probe=$(ts_of probing 1p)
last_build=$(ts_of built '$p')
if [ -n "$first_probe" ] && [ -n "$last_build" ] && [[ "$first_probe" < "$last_build" ]]; then
    t_ok execute__the_first_probe_starts_before_the_last_build_ends
else
    t_fail execute__the_first_probe_starts_before_the_last_build_ends "first probe at '$first_probe', last build at '$last_build'"
fi
case "$(counts)" in *'"kernels":3,'*'"built_first_try":3,'*'"probed":3,'*'"probe_failed":3,'*'"interrupted":0'*)
    t_ok execute__counts_every_build_and_probe ;;
    *) t_fail execute__counts_every_build_and_probe "counts $(counts)" ;; esac
# Builds beside probes are not niced by default (--build-nice 0: a niceness of 10 made no run
# faster on an H200, docs/execute.md "Builds and probes side by side"); the nvcc runs' logs
# say `nice +N` only when one is given, and the sandbox test checks the niceness itself.
niced=$(grep -l 'nice +' "$W"/builds/*/build-*.log 2>/dev/null | wc -l)
plain=$(grep -L 'nice +' "$W"/builds/*/build-*.log 2>/dev/null | wc -l)
[ "$niced" = 0 ] && [ "$plain" = 10 ] && t_ok execute__builds_beside_probes_are_not_niced_by_default ||
    t_fail execute__builds_beside_probes_are_not_niced_by_default "$niced build logs niced (want none), $plain not (want 10)"
t_contains "execute__the_run_says_its_build_niceness" "$T_ERR" '"build_nice":0}'
t_expect "execute__build_nice_over_19_is_a_usage_error" 2 lscat execute --build-nice 20
t_expect "execute__build_nice_can_be_set" 0 lscat execute --no-probe --build-nice 3 -v --log-format json
t_contains "execute__the_run_uses_the_niceness_given" "$T_ERR" '"build_nice":3}'
t_contains "execute__a_run_without_probes_adds_nothing_to_their_environment" "$T_ERR" '"probe_env":"-"'

# SIGTERM while the first of three probes runs (it holds until the test lets it go): it
# finishes and is recorded, no other starts, the run is interrupted (exit 3); the next run
# probes the other two.
sqlite3 "$LSCAT_DB" "DELETE FROM probes WHERE kernel_id LIKE '0e2e%'; UPDATE kernels SET status = 'built' WHERE id LIKE '0e2e%'"
unset LSCAT_TEST_PROBE_SLEEP_S
export LSCAT_TEST_PROBE_HOLD=1
rm -f "$W/probe-release"
: >"$T_ERR"
"${PIPE[@]}" >"$T_OUT" 2>"$T_ERR" &
pid=$!
probe_holds() { compgen -G "$W/builds/*/probe-*/holding" >/dev/null || ! kill -0 "$pid" 2>/dev/null; }
t_wait_until probe_holds
kill -TERM "$pid"
touch "$W/probe-release"
wait "$pid"
rc=$?
case "$rc $(counts)" in "3 "*'"probed":1,'*'"interrupted":1'*) t_ok execute__sigterm_while_probing_finishes_that_probe_only ;;
    *) t_fail execute__sigterm_while_probing_finishes_that_probe_only "exit $rc, counts $(counts)" ;; esac
[ "$(probes)" = 1 ] && t_ok execute__the_probe_in_flight_is_recorded || t_fail execute__the_probe_in_flight_is_recorded "$(probes) probes"
unset LSCAT_TEST_PROBE_HOLD
t_expect "execute__the_next_run_probes_the_rest" 1 "${PIPE[@]}"
case "$(counts)" in *'"cached":3,'*'"probed":2,'*) t_ok execute__the_next_run_probes_only_what_is_missing ;;
    *) t_fail execute__the_next_run_probes_only_what_is_missing "counts $(counts)" ;; esac
[ "$(probes)" = 3 ] && t_ok execute__every_kernel_is_probed_once || t_fail execute__every_kernel_is_probed_once "$(probes) probes"

# More than 4 probe workers on one GPU are cut to 4 with a warning (they wedged an H200 twice);
# LSCAT_PROBE_JOBS_MAX raises the limit.
sqlite3 "$LSCAT_DB" "DELETE FROM probes WHERE kernel_id LIKE '0e2e%'; UPDATE kernels SET status = 'built' WHERE id LIKE '0e2e%'"
MANY=(lscat execute --arch sm_90 -j 8 --probe-jobs 8 --probe-anyway --kernel 0e2e -v --log-format json)
t_expect "execute__eight_probe_jobs_still_probe" 1 "${MANY[@]}"
t_contains "execute__more_than_four_probe_jobs_are_cut_with_a_warning" "$T_ERR" "using 4 probe workers, the most per GPU"
t_contains "execute__the_run_starts_four_probe_workers" "$T_ERR" '"probe_jobs":4,'
sqlite3 "$LSCAT_DB" "DELETE FROM probes WHERE kernel_id LIKE '0e2e%'; UPDATE kernels SET status = 'built' WHERE id LIKE '0e2e%'"
t_expect "execute__the_limit_can_be_raised" 1 env LSCAT_PROBE_JOBS_MAX=8 "${MANY[@]}"
t_contains "execute__a_raised_limit_starts_eight_probe_workers" "$T_ERR" '"probe_jobs":8,'
t_done
