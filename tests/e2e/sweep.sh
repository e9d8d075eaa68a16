#!/usr/bin/env bash
# lscat sweep end to end, without a GPU: the real program, the real nvcc, the matmul example's
# compile stage, and the run stage over a host-only fixture (LSCAT_SWEEP_NO_CUDA=1: the driver's
# launch runs on the CPU) that crashes, hangs, fails its test and fails at launch on chosen
# records; resume after a kill, --rows, --shard, Slurm array variables, --abandon.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
FX=$ROOT/tests/tune/sweep_fixture
EX=$ROOT/examples/matmul
W=$T_TMP/work

# The output's Record column, sorted, one per line.
records() { tail -n +2 "$1" | cut -d, -f1 | sort -n | tr '\n' ' '; }
# Status,Error of record $2 in output $1.
outcome() { awk -F, -v r="$2" 'NR > 1 && $1 == r { print $(NF-3) "," $(NF-2) }' "$1"; }
# Test $1: output $2 holds exactly records $3 ("1 2 3 ") and record $4's Status,Error is $5.
rows_are() {
    if [ "$(records "$2")" = "$3" ] && [ "$(outcome "$2" "$4")" = "$5" ]; then t_ok "$1"
    else t_fail "$1" "$(cat "$2")"; fi
}
# A space of the host-only fixture in file $1, one record per further argument ("0,ok,50").
fx_space() { local f=$1; shift
    { printf 'BROKEN,Behave,Work\nInteger,String,Real\nCompile,Runtime,Runtime\n'; printf '%s\n' "$@"; } >"$f"; }

# A malformed space names file, line and column, and exits 2 (no build is started).
printf 'A,B\nInteger,Real\nCompile,Runtime\n1,2.5\n2,x\n' >"$T_TMP/bad.csv"
if t_expect sweep__rejects_a_value_of_the_wrong_type_naming_line_and_column 2 \
    lscat sweep --work "$W" --kernel "$FX/kernel.cu" --driver "$FX/driver.c" \
    --space "$T_TMP/bad.csv" --out "$T_TMP/bad.out"; then
    t_contains sweep__error_names_file_line_and_column "$T_ERR" "bad.csv:5:3: 'x' is not a Real"
fi
printf 'A,B\nInteger,Integer\nCompile,Later\n1,2\n' >"$T_TMP/bad2.csv"
lscat sweep --work "$W" --kernel "$FX/kernel.cu" --driver "$FX/driver.c" \
    --space "$T_TMP/bad2.csv" --out "$T_TMP/bad.out" 2>"$T_ERR"
t_contains sweep__rejects_an_unknown_binding "$T_ERR" "bad2.csv:3:9: unknown binding"

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    t_skip "sweep__compile_stage" "nvcc not found"
    t_done
fi

# The matmul example's compile stage: BLOCK_SIZE 128 needs 128 KiB of shared memory and fails
# to compile (its 3 records: Failure,Compile); the other 4 tuples build once each.
OUT=$T_TMP/matmul.csv
t_expect sweep__matmul_compile_only_records_compile_failures 1 \
    lscat sweep -j 2 --work "$W" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" \
    --space "$EX/space.csv" --out "$OUT" --compile-only
t_contains sweep__matmul_builds_each_compile_time_tuple_once "$T_ERR" \
    "5 groups to build (4 built, 0 cached, 1 failed)"
t_contains sweep__matmul_too_much_shared_memory_is_a_compile_error "$T_ERR" "too much shared data"
if [ "$(records "$OUT")" = "13 14 15 " ] && [ "$(outcome "$OUT" 14)" = "Failure,Compile" ]; then
    t_ok sweep__matmul_output_holds_exactly_the_failed_tuples_records
else
    t_fail sweep__matmul_output_holds_exactly_the_failed_tuples_records "$(cat "$OUT")"
fi
head -1 "$OUT" >"$T_TMP/h"
t_contains sweep__output_header_has_the_drivers_columns "$T_TMP/h" \
    "Record,BLOCK_SIZE,N,Status,Error,Time,Gflops"
t_expect sweep__second_compile_only_run_reuses_the_cache 0 \
    lscat sweep -j 2 --work "$W" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" \
    --space "$EX/space.csv" --out "$OUT" --compile-only
t_contains sweep__second_run_builds_nothing "$T_ERR" "(0 built, 4 cached, 0 failed)"
# Without a GPU the run stage stops at once and leaves the records for a GPU machine.
if ! command -v nvidia-smi >/dev/null; then
    t_expect sweep__without_a_device_exits_3_leaving_records_unrun 3 \
        lscat sweep --work "$W" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" \
        --space "$EX/space.csv" --out "$OUT"
    t_contains sweep__says_no_cuda_device "$T_ERR" "12 records left to run"
fi

# The run stage over the host-only fixture: every outcome, one row per record.
export LSCAT_SWEEP_NO_CUDA=1
OUT=$T_TMP/fx.csv
FXARGS=(--work "$W" --kernel "$FX/kernel.cu" --driver "$FX/driver.c" --samples 3 --warmup 0)
t_expect sweep__fixture_run_finishes_with_recorded_failures 1 \
    lscat sweep "${FXARGS[@]}" --space "$FX/space.csv" --out "$OUT" --timeout 10 # record 7 hangs forever
got=""
for r in 1 2 4 5 6 7 8; do got="$got $r:$(outcome "$OUT" $r)"; done
want=" 1:Success,None 2:Failure,Crash 4:Failure,Compile 5:Failure,Test 6:Failure,Launch"
want="$want 7:Failure,Timeout 8:Success,None"
if [ "$got" = "$want" ]; then t_ok sweep__each_failure_gets_its_error_class; else
    t_fail sweep__each_failure_gets_its_error_class "got$got"; fi
if [ "$(records "$OUT")" = "1 2 3 4 5 6 7 8 9 " ]; then
    t_ok sweep__a_crash_or_hang_costs_only_its_record
else t_fail sweep__a_crash_or_hang_costs_only_its_record "$(records "$OUT")"; fi
if grep -q '^3,0,ok,60,Success,None,[0-9.e-]*,6$' "$OUT"; then
    t_ok sweep__cleanup_sets_the_drivers_output_column
else t_fail sweep__cleanup_sets_the_drivers_output_column "$(cat "$OUT")"; fi
t_expect sweep__a_finished_sweep_runs_nothing_again 0 \
    lscat sweep "${FXARGS[@]}" --space "$FX/space.csv" --out "$OUT"
t_contains sweep__rerun_says_all_done "$T_ERR" "9 of 9 records selected (9 already done)"

# Resume: kill -9 in the middle of 40 records of ~0.1 s each, run again: every record once.
fx_space "$T_TMP/long.csv" $(for i in $(seq 1 40); do echo "0,ok,30000"; done)
OUT=$T_TMP/long.out
lscat sweep "${FXARGS[@]}" --space "$T_TMP/long.csv" --out "$OUT" 2>/dev/null &
pid=$!
for _ in $(seq 1 600); do
    [ -f "$OUT" ] && [ "$(wc -l <"$OUT")" -ge 8 ] && break
    sleep 0.1
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
before=$(($(wc -l <"$OUT") - 1))
t_expect sweep__resumes_after_a_kill 0 \
    lscat sweep "${FXARGS[@]}" --space "$T_TMP/long.csv" --out "$OUT"
if [ "$(records "$OUT")" = "$(seq 1 40 | tr '\n' ' ')" ] && [ "$before" -ge 7 ] &&
    [ "$before" -lt 40 ]; then
    t_ok sweep__resume_loses_and_doubles_no_record
else t_fail sweep__resume_loses_and_doubles_no_record "before=$before: $(records "$OUT")"; fi

# Two workers (--gpus 0,1) on a space of one compile-time tuple: once the only group is taken,
# the free worker joins it with a host process of its own, so both GPUs measure its records
# (before session 25 the second worker stayed idle while the first ran the whole tuple). The
# records wait at a gate until two host processes wait there at once; every record gets one
# row.
fx_space "$T_TMP/gate.csv" $(for i in $(seq 1 6); do echo "0,gate,$i"; done)
LSCAT_SWEEP_NO_CUDA_GATE=$T_TMP/gate lscat sweep "${FXARGS[@]}" --gpus 0,1 \
    --space "$T_TMP/gate.csv" --out "$T_TMP/gate.out" 2>"$T_TMP/gate.err" &
pid=$!
waiting() { [ "$(ls "$T_TMP"/gate.[0-9]* 2>/dev/null | wc -l)" -ge 2 ] || ! kill -0 $pid 2>/dev/null; }
t_wait_until waiting
n=$(ls "$T_TMP"/gate.[0-9]* 2>/dev/null | wc -l)
touch "$T_TMP/gate"
wait $pid
rc=$?
if [ "$n" -ge 2 ]; then t_ok sweep__a_free_worker_joins_a_tuple_another_gpu_runs
else t_fail sweep__a_free_worker_joins_a_tuple_another_gpu_runs "$n host(s) waited; exit $rc: $(cat "$T_TMP/gate.err")"; fi
if [ "$rc" = 0 ] && [ "$(records "$T_TMP/gate.out")" = "1 2 3 4 5 6 " ] &&
    [ "$(grep -c ',Success,None,' "$T_TMP/gate.out")" = 6 ]; then
    t_ok sweep__a_shared_tuple_writes_each_record_once
else t_fail sweep__a_shared_tuple_writes_each_record_once "exit $rc: $(cat "$T_TMP/gate.out")"; fi

# Stopped (SIGTERM) while both workers hold one of the tuple's records: the sweep ends (a
# worker whose record was stopped takes no tuple again), and a rerun writes the rest, each
# record once.
rm -f "$T_TMP"/gate "$T_TMP"/gate.[0-9]* "$T_TMP/stop.out"
LSCAT_SWEEP_NO_CUDA_GATE=$T_TMP/gate lscat sweep "${FXARGS[@]}" --gpus 0,1 \
    --space "$T_TMP/gate.csv" --out "$T_TMP/stop.out" 2>"$T_TMP/stop.err" &
pid=$!
t_wait_until waiting
kill -TERM $pid
ended() { ! kill -0 $pid 2>/dev/null; }
t_wait_until ended || kill -9 $pid # still running: it never stopped (the test fails below)
wait $pid
rc=$?
touch "$T_TMP/gate"
if [ "$rc" = 3 ] && grep -q "(interrupted)" "$T_TMP/stop.err"; then
    t_ok sweep__a_stopped_sweep_with_a_shared_tuple_ends
else t_fail sweep__a_stopped_sweep_with_a_shared_tuple_ends "exit $rc: $(cat "$T_TMP/stop.err")"; fi
t_expect sweep__after_a_stop_the_rerun_writes_the_rest 0 \
    lscat sweep "${FXARGS[@]}" --gpus 0,1 --space "$T_TMP/gate.csv" --out "$T_TMP/stop.out"
if [ "$(records "$T_TMP/stop.out")" = "1 2 3 4 5 6 " ]; then t_ok sweep__after_a_stop_each_record_is_written_once
else t_fail sweep__after_a_stop_each_record_is_written_once "$(cat "$T_TMP/stop.out")"; fi

# With several workers a tuple's records are dealt largest first (the product of their numeric
# Runtime values: Work here), so no worker is left with a tuple's largest record at the end; one
# worker keeps the file order.
fx_space "$T_TMP/lpt.csv" $(for i in 1 2 3 4 5 6; do echo "0,ok,$((i * 1000))"; done)
takes() { grep -o 'sweep_take record=[0-9]*' "$1" | cut -d= -f2 | tr '\n' ' '; }
LSCAT_TUNE_TRACE=$T_TMP/lpt2.trace lscat sweep "${FXARGS[@]}" --gpus 0,1 --space "$T_TMP/lpt.csv" \
    --out "$T_TMP/lpt2.out" 2>/dev/null
LSCAT_TUNE_TRACE=$T_TMP/lpt1.trace lscat sweep "${FXARGS[@]}" --space "$T_TMP/lpt.csv" \
    --out "$T_TMP/lpt1.out" 2>/dev/null
if [ "$(takes "$T_TMP/lpt2.trace")" = "6 5 4 3 2 1 " ] && [ "$(records "$T_TMP/lpt2.out")" = "1 2 3 4 5 6 " ]; then
    t_ok sweep__several_workers_take_a_tuples_largest_records_first
else t_fail sweep__several_workers_take_a_tuples_largest_records_first "takes: $(takes "$T_TMP/lpt2.trace")"; fi
if [ "$(takes "$T_TMP/lpt1.trace")" = "1 2 3 4 5 6 " ]; then
    t_ok sweep__one_worker_keeps_the_file_order
else t_fail sweep__one_worker_keeps_the_file_order "takes: $(takes "$T_TMP/lpt1.trace")"; fi

# A worker's last record of a tuple starts the host of the tuple it takes next (that host's
# start and CUDA context overlap the record: 0.64 s a switch on an H200, session 27); what the
# sweep writes is the same without it (LSCAT_SWEEP_PRESTART=0).
{ printf 'BROKEN,PAD,Behave,Work\nInteger,Integer,String,Real\nCompile,Compile,Runtime,Runtime\n'
  for p in 1 2 3; do for i in 1 2 3; do echo "0,$p,ok,1000"; done; done; } >"$T_TMP/pre.csv"
# the trace's events of one kind, "record=3" or "group=1", in order
events() { grep -o "$2 [a-z]*=[0-9]*" "$1" | cut -d' ' -f2 | tr '\n' ' '; }
order() { grep -oE 'sweep_(take|record|prestart|prestart_taken|prestart_unused) [a-z]*=[0-9]*' "$1" | tr ' ' ':' | tr '\n' ' '; }
LSCAT_TUNE_TRACE=$T_TMP/pre1.trace lscat sweep -j 2 "${FXARGS[@]}" --space "$T_TMP/pre.csv" \
    --out "$T_TMP/pre1.out" 2>/dev/null
LSCAT_SWEEP_PRESTART=0 LSCAT_TUNE_TRACE=$T_TMP/pre0.trace lscat sweep "${FXARGS[@]}" \
    --space "$T_TMP/pre.csv" --out "$T_TMP/pre0.out" 2>/dev/null
LSCAT_TUNE_TRACE=$T_TMP/pre2.trace lscat sweep "${FXARGS[@]}" --gpus 0,1 --space "$T_TMP/pre.csv" \
    --out "$T_TMP/pre2.out" 2>/dev/null
# one worker: the next tuple's host starts between its last take and its last record of a tuple
want="sweep_take:record=3 sweep_prestart:group=1 sweep_record:record=3 sweep_prestart_taken:group=1"
want2="sweep_take:record=6 sweep_prestart:group=2 sweep_record:record=6 sweep_prestart_taken:group=2"
if [[ "$(order "$T_TMP/pre1.trace")" == *"$want "*"$want2 "* ]] &&
   [ -z "$(events "$T_TMP/pre1.trace" sweep_prestart_unused)" ]; then
    t_ok sweep__the_next_tuples_host_starts_during_the_last_record
else t_fail sweep__the_next_tuples_host_starts_during_the_last_record "$(order "$T_TMP/pre1.trace")"; fi
if [ -z "$(events "$T_TMP/pre0.trace" sweep_prestart)" ] &&
   [ "$(records "$T_TMP/pre1.out")" = "1 2 3 4 5 6 7 8 9 " ] &&
   [ "$(grep -c ',Success,None,' "$T_TMP/pre1.out")" = 9 ] &&
   [ "$(cut -d, -f1-5 "$T_TMP/pre1.out" | sort)" = "$(cut -d, -f1-5 "$T_TMP/pre0.out" | sort)" ]; then
    t_ok sweep__prestarted_hosts_write_what_a_run_without_them_writes
else t_fail sweep__prestarted_hosts_write_what_a_run_without_them_writes "$(cat "$T_TMP/pre1.out" "$T_TMP/pre0.out")"; fi
# two workers: each prestarted host is taken or stopped, none is left behind
n_pre=$(events "$T_TMP/pre2.trace" "sweep_prestart" | wc -w)
n_end=$(( $(events "$T_TMP/pre2.trace" sweep_prestart_taken | wc -w) + $(events "$T_TMP/pre2.trace" sweep_prestart_unused | wc -w) ))
if [ "$n_pre" -ge 1 ] && [ "$n_pre" = "$n_end" ] && [ "$(records "$T_TMP/pre2.out")" = "1 2 3 4 5 6 7 8 9 " ] &&
   [ "$(grep -c ',Success,None,' "$T_TMP/pre2.out")" = 9 ]; then
    t_ok sweep__with_two_workers_every_prestarted_host_is_taken_or_stopped
else t_fail sweep__with_two_workers_every_prestarted_host_is_taken_or_stopped "$n_pre started, $n_end taken or stopped: $(order "$T_TMP/pre2.trace")"; fi
# The prestart comes once the worker will most likely run out of the tuple's records within
# the lead (its records' times against their sizes predict the rest), not only at its last
# take: with several workers the last records are a tuple's smallest, tens of ms against a
# host start of 0.8 s on an H200 (session 28). Lead 10 s: from the third take of a tuple on
# (two records measured give the pace); lead 0 (session 27's rule) leaves it at the last take.
# (Not the default lead: 1.5 stand-in host starts, a few ms, or more on a busy machine.)
{ printf 'BROKEN,PAD,Behave,Work\nInteger,Integer,String,Real\nCompile,Compile,Runtime,Runtime\n'
  for p in 1 2; do for w in 1000 2000 3000 4000; do echo "0,$p,ok,$w"; done; done; } >"$T_TMP/lead.csv"
LSCAT_SWEEP_PRESTART_LEAD_S=10 LSCAT_TUNE_TRACE=$T_TMP/lead.trace lscat sweep "${FXARGS[@]}" \
    --space "$T_TMP/lead.csv" --out "$T_TMP/lead.out" 2>/dev/null
LSCAT_SWEEP_PRESTART_LEAD_S=0 LSCAT_TUNE_TRACE=$T_TMP/lead0.trace lscat sweep "${FXARGS[@]}" \
    --space "$T_TMP/lead.csv" --out "$T_TMP/lead0.out" 2>/dev/null
if [[ "$(order "$T_TMP/lead.trace")" == *"sweep_take:record=3 sweep_prestart:group=1 "*"sweep_record:record=4 sweep_prestart_taken:group=1 "* ]] &&
   [[ "$(order "$T_TMP/lead0.trace")" == *"sweep_take:record=4 sweep_prestart:group=1 sweep_record:record=4 "* ]] &&
   [ "$(grep -c ',Success,None,' "$T_TMP/lead.out")" = 8 ] &&
   [ "$(cut -d, -f1-5 "$T_TMP/lead.out" | sort)" = "$(cut -d, -f1-5 "$T_TMP/lead0.out" | sort)" ]; then
    t_ok sweep__the_next_tuples_host_starts_a_lead_before_the_worker_runs_out
else t_fail sweep__the_next_tuples_host_starts_a_lead_before_the_worker_runs_out "lead 10 s: $(order "$T_TMP/lead.trace"); lead 0: $(order "$T_TMP/lead0.trace")"; fi

# The context gate (common/gpulock.h): two workers' fresh hosts make their contexts one at a
# time, the second starting once the first said @ready, as tune's runners do; with
# LSCAT_TUNE_CONTEXT_GATE=0 both start at once. Each stand-in host says @ready 3 s after its
# start, as a context being made would: without the gate the second worker starts within
# those 3 s even on a busy machine. Prestart off: only fresh starts, which the gate is for.
fx_space "$T_TMP/gate2.csv" $(for i in 1 2 3 4; do echo "0,ok,1000"; done)
host_order() { awk '$3 == "sweep_host_started" { printf "s " } $3 == "sweep_host_ready" { printf "r " }' "$1"; }
LSCAT_SWEEP_NO_CUDA_READY_MS=3000 LSCAT_SWEEP_PRESTART=0 LSCAT_TUNE_TRACE=$T_TMP/sgate.trace \
    lscat sweep "${FXARGS[@]}" --gpus 0,1 --space "$T_TMP/gate2.csv" --out "$T_TMP/sgate.out" 2>/dev/null
LSCAT_SWEEP_NO_CUDA_READY_MS=3000 LSCAT_SWEEP_PRESTART=0 LSCAT_TUNE_CONTEXT_GATE=0 \
    LSCAT_TUNE_TRACE=$T_TMP/snogate.trace lscat sweep "${FXARGS[@]}" --gpus 0,1 \
    --space "$T_TMP/gate2.csv" --out "$T_TMP/snogate.out" 2>/dev/null
if [ "$(host_order "$T_TMP/sgate.trace")" = "s r s r " ] &&
   [ "$(host_order "$T_TMP/snogate.trace")" = "s s r r " ] &&
   [ "$(grep -c ',Success,None,' "$T_TMP/sgate.out")" = 4 ] &&
   [ "$(cut -d, -f1-5 "$T_TMP/sgate.out" | sort)" = "$(cut -d, -f1-5 "$T_TMP/snogate.out" | sort)" ]; then
    t_ok sweep__hosts_make_their_contexts_one_at_a_time
else t_fail sweep__hosts_make_their_contexts_one_at_a_time "gate: $(host_order "$T_TMP/sgate.trace"); LSCAT_TUNE_CONTEXT_GATE=0: $(host_order "$T_TMP/snogate.trace"); $(cat "$T_TMP/sgate.out" | head -3)"; fi

# --rows and --shard select records; shards together cover the space exactly once.
fx_space "$T_TMP/ten.csv" $(for i in $(seq 1 10); do echo "0,ok,$i"; done)
lscat sweep "${FXARGS[@]}" --space "$T_TMP/ten.csv" --out "$T_TMP/rows.csv" --rows 3:5 2>/dev/null
if [ "$(records "$T_TMP/rows.csv")" = "3 4 5 " ]; then t_ok sweep__rows_selects_a_range
else t_fail sweep__rows_selects_a_range "$(records "$T_TMP/rows.csv")"; fi
lscat sweep "${FXARGS[@]}" --space "$T_TMP/ten.csv" --out "$T_TMP/s0.csv" --shard 0/3 2>/dev/null
SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=3 \
    lscat sweep "${FXARGS[@]}" --space "$T_TMP/ten.csv" --out "$T_TMP/s1.csv" 2>/dev/null
lscat sweep "${FXARGS[@]}" --space "$T_TMP/ten.csv" --out "$T_TMP/s2.csv" --shard 2/3 2>/dev/null
all=$(cat "$T_TMP/s0.csv" "$T_TMP/s1.csv" "$T_TMP/s2.csv" | grep -v '^Record' | cut -d, -f1 |
      sort -n | tr '\n' ' ')
if [ "$(records "$T_TMP/s1.csv")" = "2 5 8 " ] && [ "$all" = "$(seq 1 10 | tr '\n' ' ')" ]; then
    t_ok sweep__shards_and_slurm_array_tasks_cover_the_space_once
else t_fail sweep__shards_and_slurm_array_tasks_cover_the_space_once "s1: $(records \
    "$T_TMP/s1.csv"); all: $all"; fi
t_expect sweep__rejects_a_bad_shard 2 \
    lscat sweep "${FXARGS[@]}" --space "$T_TMP/ten.csv" --out "$T_TMP/x.csv" --shard 3/3

# --abandon 4: after a 50 ms record, a 1 s one is abandoned after its first samples and a 60 ms
# one is measured fully. The fixture spins on the wall clock, so a busy machine only adds the
# time the spin waits for a core: the margins (a 1 s record is abandoned unless the best reads
# over 250 ms; the 60 ms one is kept unless it reads 200 ms) hold under ASan on a loaded
# machine, where 2 ms against 2.5 ms did not (the 2.5 ms record read 10.5 ms).
fx_space "$T_TMP/ab.csv" 0,ok,50000 0,ok,1000000 0,ok,60000
lscat sweep "${FXARGS[@]}" --space "$T_TMP/ab.csv" --out "$T_TMP/ab.out" --abandon 4 2>/dev/null
if [ "$(outcome "$T_TMP/ab.out" 2)" = "Abandoned,None" ] &&
    [ "$(outcome "$T_TMP/ab.out" 3)" = "Success,None" ]; then
    t_ok sweep__abandon_stops_a_record_far_slower_than_the_best
else t_fail sweep__abandon_stops_a_record_far_slower_than_the_best "$(cat "$T_TMP/ab.out")"; fi

# The device goes while record 2 runs (docs/tune.md "A device that goes"): its launch fails,
# the context is lost, and the restart finds no device. Record 2's failure was the device's:
# it is not written, and neither are 3 and 4; exit 3. With the device back, the run resumes.
fx_space "$T_TMP/gone.csv" 0,ok,10 0,gone,10 0,ok,10 0,ok,10
export LSCAT_SWEEP_NO_CUDA_GONE=$T_TMP/gpu-gone
t_expect sweep__a_device_that_goes_stops_the_sweep_with_exit_3 3 \
    lscat sweep "${FXARGS[@]}" --space "$T_TMP/gone.csv" --out "$T_TMP/gone.out"
t_contains sweep__the_record_in_flight_is_left_to_run_again "$T_ERR" \
    "record 2 (line 5): not recorded, it runs again: its failure ended the CUDA context and then the device was gone"
t_contains sweep__a_device_that_goes_says_how_many_are_left "$T_ERR" "3 records left to run"
if [ "$(records "$T_TMP/gone.out")" = "1 " ]; then t_ok sweep__a_device_that_goes_writes_only_what_ran
else t_fail sweep__a_device_that_goes_writes_only_what_ran "$(cat "$T_TMP/gone.out")"; fi
rm -f "$T_TMP/gpu-gone" # the device is back
t_expect sweep__after_the_device_came_back_it_resumes 0 \
    lscat sweep "${FXARGS[@]}" --space "$T_TMP/gone.csv" --out "$T_TMP/gone.out"
rows_are sweep__after_the_device_came_back_each_record_is_written_once "$T_TMP/gone.out" "1 2 3 4 " \
    2 Success,None
# The device goes while record 2 runs and its launch never returns (as real GPUs that went away
# left their runs): --timeout kills it, and the restart finds no device. Its Timeout was the
# device's: not written; with the device back it runs, and every record is written once.
fx_space "$T_TMP/gonehang.csv" 0,ok,10 0,gonehang,10 0,ok,10
rm -f "$T_TMP/gpu-gone" "$T_TMP/gpu-gone.once"
t_expect sweep__a_device_that_goes_with_a_hang_stops_the_sweep_with_exit_3 3 \
    lscat sweep "${FXARGS[@]}" --space "$T_TMP/gonehang.csv" --out "$T_TMP/gonehang.out" --timeout 5
t_contains sweep__the_hung_record_is_left_to_run_again "$T_ERR" \
    "record 2 (line 5): not recorded, it runs again: it failed (Timeout: no result within --timeout 5 s (killed)) and then the device was gone"
rows_are sweep__a_device_that_goes_with_a_hang_writes_only_what_ran "$T_TMP/gonehang.out" "1 " \
    1 Success,None
rm -f "$T_TMP/gpu-gone"
t_expect sweep__after_a_hang_the_device_came_back_it_resumes 0 \
    lscat sweep "${FXARGS[@]}" --space "$T_TMP/gonehang.csv" --out "$T_TMP/gonehang.out" --timeout 5
rows_are sweep__after_a_hang_the_device_came_back_each_record_is_written_once "$T_TMP/gonehang.out" \
    "1 2 3 " 2 Success,None
# A hang while the device stays is written as a Timeout once the restart found the device.
fx_space "$T_TMP/hang.csv" 0,ok,10 0,hang,10 0,ok,10
t_expect sweep__a_hang_while_the_device_stays_is_written 1 \
    lscat sweep "${FXARGS[@]}" --space "$T_TMP/hang.csv" --out "$T_TMP/hang.out" --timeout 5
rows_are sweep__the_hang_is_a_timeout_row "$T_TMP/hang.out" "1 2 3 " 2 Failure,Timeout
# A record that ends the context while the device stays is written as it failed, once the
# restart found the device, and the sweep goes on.
fx_space "$T_TMP/lost.csv" 0,ok,10 0,sticky,10 0,ok,10
t_expect sweep__a_record_that_ends_the_context_is_written_when_the_device_stays 1 \
    lscat sweep "${FXARGS[@]}" --space "$T_TMP/lost.csv" --out "$T_TMP/lost.out"
rows_are sweep__the_record_that_ended_the_context_is_a_launch_failure "$T_TMP/lost.out" "1 2 3 " \
    2 Failure,Launch
unset LSCAT_SWEEP_NO_CUDA_GONE

# An output written for another space is refused, not appended to.
t_expect sweep__refuses_an_output_of_another_space 2 \
    lscat sweep "${FXARGS[@]}" --space "$EX/space.csv" --out "$T_TMP/ab.out"
t_done
