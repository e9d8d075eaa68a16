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
sleep 1.5
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
t_done
