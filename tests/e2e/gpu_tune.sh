#!/usr/bin/env bash
# lscat tune on a real GPU (make test-gpu): a sweep of the fixture kernels of
# tests/tune/fixtures (one succeeds, one makes illegal addresses on some configurations, one
# hangs on one), then SIGKILL in the middle of a real sweep and a resume. Without a CUDA device
# every check reports skip.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
TB=${LSCAT_TEST_BIN:-$ROOT/build/tests}
case "$TB" in /*) ;; *) TB=$ROOT/$TB ;; esac
FIX=$TB/tune/fixtures
NAMES="gpu_tune__fixture_sweep_measures_the_good_kernel gpu_tune__illegal_address_is_recorded_and_the_sweep_goes_on gpu_tune__hang_is_killed_and_recorded_as_timeout gpu_tune__occupancy_suggestion_is_recorded gpu_tune__kill_leaves_a_partial_sweep gpu_tune__kill_leaves_no_harness_running gpu_tune__resume_completes_the_sweep_without_duplicates"
if [ ! -x "$LSCAT_BIN/lscat-gpuinfo" ] || [ -z "$("$LSCAT_BIN/lscat-gpuinfo" 2>/dev/null)" ] || [ ! -x "$FIX/ok/harness" ]; then
    for n in $NAMES; do t_skip "$n" "no CUDA device"; done
    t_done
fi
sql() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$LSCAT_DB" "$1"; }

export LSCAT_WORK=$T_TMP/work LSCAT_DB=$T_TMP/work/lscat.db
lscat init >/dev/null 2>&1
python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "ok=$FIX/ok/harness" "crash=$FIX/crash/harness" "hang=$FIX/hang/harness"
t0=$(date +%s.%N)
lscat tune --gpus 0 --sizes 240,496 --blocks 16x16,64,128 --timeout 3 >"$T_OUT" 2>"$T_ERR"
echo "# fixture sweep: exit $?, $(python3 -c "import sys; print(round($(date +%s.%N) - $t0, 2))") s: $(cat "$T_OUT")" >&2
n=$(sql "select count(*) from measurements where kernel_id = 'ok' and status = 'ok' and median_ns > 0 and sm_clock_mhz_after > 0")
[ "$n" = 6 ] && t_ok gpu_tune__fixture_sweep_measures_the_good_kernel || t_fail gpu_tune__fixture_sweep_measures_the_good_kernel "$n of 6 ok"
n=$(sql "select count(*) from measurements where kernel_id = 'crash' and status = 'cuda_error' and block_x = 64 and error like '%illegal%'")
m=$(sql "select count(*) from measurements where kernel_id = 'crash' and status = 'ok'")
[ "$n" = 2 ] && [ "$m" = 4 ] && t_ok gpu_tune__illegal_address_is_recorded_and_the_sweep_goes_on || t_fail gpu_tune__illegal_address_is_recorded_and_the_sweep_goes_on "$n illegal-address rows, $m ok"
n=$(sql "select count(*) from measurements where kernel_id = 'hang' and status = 'timeout' and width = 496 and block_x = 128")
m=$(sql "select count(*) from measurements where kernel_id = 'hang' and status = 'ok'")
[ "$n" = 1 ] && [ "$m" = 5 ] && t_ok gpu_tune__hang_is_killed_and_recorded_as_timeout || t_fail gpu_tune__hang_is_killed_and_recorded_as_timeout "$n timeouts, $m ok"
n=$(sql "select count(*) from tune_kernels where occupancy_block > 0 and status = 'done'")
[ "$n" = 3 ] && t_ok gpu_tune__occupancy_suggestion_is_recorded || t_fail gpu_tune__occupancy_suggestion_is_recorded "$n kernels with a suggestion"
sqlite_dump=$(python3 -c "
import sqlite3,sys
for r in sqlite3.connect(sys.argv[1]).execute('select kernel_id,width,block_x,block_y,status,round(median_ns),samples,launches_per_sample,sm_clock_mhz_before,sm_clock_mhz_after,temp_c_after,substr(error,1,60) from measurements order by id'): print(r)" "$LSCAT_DB")
echo "$sqlite_dump" | sed 's/^/# /' >&2

# Kill and resume: 8 kernels (the good fixture) x the default 140 configurations.
export LSCAT_DB=$T_TMP/work/resume.db
lscat init >/dev/null 2>&1
specs=(); for i in 1 2 3 4 5 6 7 8; do specs+=("k$i=$FIX/ok/harness"); done
python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "${specs[@]}"
lscat tune --gpus 0 >"$T_OUT" 2>"$T_ERR" &
pid=$!
sleep 4
kill -9 "$pid"
{ wait "$pid"; } 2>/dev/null
sleep 0.5
before=$(sql "select count(*) from measurements")
if [ "$before" -gt 0 ] && [ "$before" -lt 1120 ]; then t_ok gpu_tune__kill_leaves_a_partial_sweep; else t_fail gpu_tune__kill_leaves_a_partial_sweep "$before rows after the kill"; fi
if pgrep -f "$FIX/ok/harness" >/dev/null; then t_fail gpu_tune__kill_leaves_no_harness_running "a harness outlived lscat-tune"; else t_ok gpu_tune__kill_leaves_no_harness_running; fi
t0=$(date +%s.%N)
lscat tune --gpus 0 >"$T_OUT" 2>"$T_ERR"
rc=$?
echo "# resume: exit $rc after $before rows, $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s: $(cat "$T_OUT")" >&2
total=$(sql "select count(*) from measurements"); cur=$(sql "select count(*) from measurements where superseded = 0 and status = 'ok'")
[ "$rc" = 0 ] && [ "$total" = 1120 ] && [ "$cur" = 1120 ] && t_ok gpu_tune__resume_completes_the_sweep_without_duplicates || t_fail gpu_tune__resume_completes_the_sweep_without_duplicates "exit $rc, $total rows, $cur current ok"
t_done
