#!/usr/bin/env bash
# lscat tune on a real GPU (make test-gpu): a sweep of the fixture kernels of
# tests/tune/fixtures (one succeeds, one makes illegal addresses on some configurations, one
# hangs on one) through lscat-runner (their harness.so), the same with --no-runner (harness
# processes) for comparison, isolate's generated harnesses (golden fixtures) built as harness.so
# and run in the runner, then SIGKILL in the middle of a real sweep and a resume. Without a CUDA
# device every check reports skip.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
TB=${LSCAT_TEST_BIN:-$ROOT/build/tests}
case "$TB" in /*) ;; *) TB=$ROOT/$TB ;; esac
FIX=$TB/tune/fixtures
NAMES="gpu_tune__fixture_sweep_ran_in_the_runner gpu_tune__no_runner_sweep_gives_the_same_statuses gpu_tune__generated_harnesses_run_in_the_runner gpu_tune__fixture_sweep_measures_the_good_kernel gpu_tune__illegal_address_is_recorded_and_the_sweep_goes_on gpu_tune__hang_is_killed_and_recorded_as_timeout gpu_tune__occupancy_suggestion_is_recorded gpu_tune__kill_leaves_a_partial_sweep gpu_tune__kill_leaves_no_harness_running gpu_tune__resume_completes_the_sweep_without_duplicates"
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
# the 64-thread shape faults at 240 (sticky) and is skipped at 496 (docs/tune.md "Skipped shapes")
n=$(sql "select count(*) from measurements where kernel_id = 'crash' and status = 'cuda_error' and block_x = 64 and width = 240 and error like '%illegal%'")
k=$(sql "select count(*) from measurements where kernel_id = 'crash' and status = 'skipped' and block_x = 64 and width = 496 and error like 'block 64x1x1 failed with a sticky CUDA error at 240x240: %illegal%'")
m=$(sql "select count(*) from measurements where kernel_id = 'crash' and status = 'ok'")
[ "$n" = 1 ] && [ "$k" = 1 ] && [ "$m" = 4 ] && t_ok gpu_tune__illegal_address_is_recorded_and_the_sweep_goes_on || t_fail gpu_tune__illegal_address_is_recorded_and_the_sweep_goes_on "$n illegal-address rows, $k skipped, $m ok"
n=$(sql "select count(*) from measurements where kernel_id = 'hang' and status = 'timeout' and width = 496 and block_x = 128")
m=$(sql "select count(*) from measurements where kernel_id = 'hang' and status = 'ok'")
[ "$n" = 1 ] && [ "$m" = 5 ] && t_ok gpu_tune__hang_is_killed_and_recorded_as_timeout || t_fail gpu_tune__hang_is_killed_and_recorded_as_timeout "$n timeouts, $m ok"
n=$(sql "select count(*) from tune_kernels where occupancy_block > 0 and status = 'done'")
[ "$n" = 3 ] && t_ok gpu_tune__occupancy_suggestion_is_recorded || t_fail gpu_tune__occupancy_suggestion_is_recorded "$n kernels with a suggestion"
counts=$(sql "select counts from stage_runs where stage = 'tune' order by id desc limit 1")
echo "# runner sweep counts: $counts" >&2
case "$counts" in *'"runner_kernels":3,"runner_fallbacks":0'*) t_ok gpu_tune__fixture_sweep_ran_in_the_runner ;;
    *) t_fail gpu_tune__fixture_sweep_ran_in_the_runner "$counts" ;; esac
statuses() { python3 -c "
import sqlite3,sys
print(';'.join('%s/%s/%s/%s' % r for r in sqlite3.connect(sys.argv[1]).execute('select kernel_id,width,block_x,status from measurements order by kernel_id,width,block_x,block_y')))" "$1"; }
runner_db=$LSCAT_DB
export LSCAT_DB=$T_TMP/work/norunner.db
lscat init >/dev/null 2>&1
python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "ok=$FIX/ok/harness" "crash=$FIX/crash/harness" "hang=$FIX/hang/harness"
t0=$(date +%s.%N)
lscat tune --gpus 0 --sizes 240,496 --blocks 16x16,64,128 --timeout 3 --no-runner >"$T_OUT" 2>"$T_ERR"
echo "# --no-runner fixture sweep: exit $?, $(python3 -c "import sys; print(round($(date +%s.%N) - $t0, 2))") s" >&2
a=$(statuses "$runner_db"); b=$(statuses "$LSCAT_DB")
[ -n "$a" ] && [ "$a" = "$b" ] && t_ok gpu_tune__no_runner_sweep_gives_the_same_statuses || t_fail gpu_tune__no_runner_sweep_gives_the_same_statuses "runner: $a / processes: $b"
export LSCAT_DB=$runner_db
# isolate's generated harness body in .so mode: the golden harnesses (one faults: a sticky error
# returns 4 in the runner), built as execute does; the same statuses as their executables.
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
G=$ROOT/tests/isolate/fixtures/harness-golden
if [ -x "$NVCC" ]; then
    d=$T_TMP/work/builds; mkdir -p "$d"
    ( cd "$d" && "$NVCC" -arch=sm_90 -Xcompiler -fPIC -c "$ROOT/tune/timing.cu" -I"$ROOT" -o timing.o \
      && "$NVCC" -Xcompiler -fPIC -I"$ROOT" -x c -c "$ROOT/tune/stats.c" -o stats.o \
      && "$NVCC" -arch=sm_90 -Xcompiler -fPIC -c "$ROOT/isolate/harness_core.cu" -I"$ROOT" -o harness_core.o ) >"$T_ERR" 2>&1
    specs=()
    for k in block_sum faulty gather_shared saxpy transpose; do
        mkdir -p "$d/$k"
        ( cd "$d/$k" && "$NVCC" -O3 -std=c++17 -arch=sm_90 -I"$G/$k" -I"$ROOT" -Xcompiler -fPIC -c "$G/$k/harness.cu" -o harness.o \
          && "$NVCC" -arch=sm_90 -o harness harness.o ../harness_core.o ../timing.o ../stats.o \
          && "$NVCC" -arch=sm_90 -shared -Xlinker -Bsymbolic -o harness.so harness.o ../harness_core.o ../timing.o ../stats.o ) >>"$T_ERR" 2>&1
        specs+=("$k=$d/$k/harness")
    done
    for mode in runner processes; do
        export LSCAT_DB=$T_TMP/work/golden-$mode.db
        lscat init >/dev/null 2>&1
        python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "${specs[@]}"
        lscat tune --gpus 0 --sizes 240,1016 --blocks 16x16,256,512 --timeout 5 --warmup 1 --samples 3 \
            $([ $mode = processes ] && echo --no-runner) >"$T_OUT" 2>>"$T_ERR"
        echo "# golden harnesses ($mode): exit $?, $(sql "select count(*) from measurements where status = 'ok'") ok, $(sql "select counts from stage_runs where stage = 'tune' order by id desc limit 1")" >&2
    done
    a=$(statuses "$T_TMP/work/golden-runner.db"); b=$(statuses "$T_TMP/work/golden-processes.db")
    LSCAT_DB=$T_TMP/work/golden-runner.db
    counts=$(sql "select counts from stage_runs where stage = 'tune' order by id desc limit 1")
    n=$(sql "select count(*) from measurements where status = 'ok' and median_ns > 0")
    f=$(sql "select count(*) from measurements where kernel_id = 'faulty' and status = 'cuda_error'")
    case "$counts" in *'"runner_kernels":5,"runner_fallbacks":0'*) c_ok=1 ;; *) c_ok=0 ;; esac
    [ "$a" = "$b" ] && [ "$n" -ge 10 ] && [ "$f" -ge 1 ] && [ $c_ok = 1 ] && t_ok gpu_tune__generated_harnesses_run_in_the_runner \
        || t_fail gpu_tune__generated_harnesses_run_in_the_runner "$n ok, $f faulty cuda_error, $counts; runner: $a / processes: $b; $(tail -c 300 "$T_ERR")"
    echo "# golden statuses (runner): $a" >&2
    export LSCAT_DB=$runner_db
else
    t_skip gpu_tune__generated_harnesses_run_in_the_runner "nvcc not found ($NVCC)"
fi
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
if pgrep -f "$FIX/ok/harness" >/dev/null || pgrep -f "$LSCAT_BIN/lscat-runner" >/dev/null; then t_fail gpu_tune__kill_leaves_no_harness_running "a harness outlived lscat-tune"; else t_ok gpu_tune__kill_leaves_no_harness_running; fi
t0=$(date +%s.%N)
lscat tune --gpus 0 >"$T_OUT" 2>"$T_ERR"
rc=$?
echo "# resume: exit $rc after $before rows, $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s: $(cat "$T_OUT")" >&2
total=$(sql "select count(*) from measurements"); cur=$(sql "select count(*) from measurements where superseded = 0 and status = 'ok'")
[ "$rc" = 0 ] && [ "$total" = 1120 ] && [ "$cur" = 1120 ] && t_ok gpu_tune__resume_completes_the_sweep_without_duplicates || t_fail gpu_tune__resume_completes_the_sweep_without_duplicates "exit $rc, $total rows, $cur current ok"
t_done
