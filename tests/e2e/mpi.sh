#!/usr/bin/env bash
# `lscat sweep|execute --mpi` under a real Open MPI (`mpirun --oversubscribe -np 3` on this
# machine, no GPU): rank 0 serves chunks, two workers run them. The sweep runs the host-only
# fixture (LSCAT_SWEEP_NO_CUDA=1) and must give the rows a plain run gives; execute builds real
# kernels with nvcc (no probes) and must leave the store a plain run leaves. A worker's stage
# process killed mid-chunk costs only that chunk (handed out again: every record or kernel once);
# a killed rank takes the job down and the rerun resumes (nothing lost or doubled).
. "$(dirname "$0")/lib.sh"
chmod 755 "$T_TMP" # the sandbox's uids reach the work folder (docs/execute.md "Folders the sandbox cannot enter")
ROOT=${LSCAT_ROOT:-$PWD}
FX=$ROOT/tests/tune/sweep_fixture
if ! command -v mpirun >/dev/null || [ ! -x "$LSCAT_BIN/lscat-mpi" ]; then
    t_skip mpi__all "no mpirun or lscat-mpi not built (Open MPI: mk/deps.sh)"; t_done
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Leak checks stay on under SANITIZE=1: Open MPI's own leaks are suppressed by library
# (tests/support/lsan.supp), which needs full stacks (its components are dlclose()d).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/support/lsan.supp:print_suppressions=0}
export TMPDIR=$T_TMP                 # the ranks' scratch: checked to be cleaned up
MPI=(mpirun --oversubscribe -np 3)

# The output's Record,parameters,Status,Error (no times), sorted by record.
rows() { tail -n +2 "$1" | awk -F, '{ print $1 "," $2 "," $3 "," $4 "," $(NF-3) "," $(NF-2) }' |
         sort -t, -k1,1n; }
records() { tail -n +2 "$1" | cut -d, -f1 | sort -n | tr '\n' ' '; }
# The pid of the first process named $2 below process $1 whose parent has another name (the
# stage process a worker started, not a child it forked and has not yet exec'd: a sweep's
# measuring host is `lscat-sweep` between fork and exec, and killing that one crashes a record
# instead of killing the chunk), waiting up to 60 s for one.
descendant() {
    for _ in $(seq 1 600); do
        p=$(ps -e -o pid=,ppid=,comm= | awk -v root="$1" -v name="$2" '
            { parent[$1] = $2; comm[$1] = $3 }
            END { for (p in comm) if (comm[p] == name && comm[parent[p]] != name) { q = p
                  while (q in parent && q != root && q > 1) q = parent[q]
                  if (q == root) { print p; exit } } }')
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}

# ---- usage errors a user can act on
t_expect mpi__outside_mpirun_is_a_usage_error 2 lscat tune --mpi
t_contains mpi__outside_mpirun_says_how_to_launch "$T_ERR" "mpirun -np N lscat <stage> --mpi"
t_expect mpi__one_rank_is_refused 2 mpirun -np 1 lscat tune --mpi
t_contains mpi__one_rank_says_rank_0_only_serves "$T_ERR" "at least 2 ranks"
t_expect mpi__shard_with_mpi_is_refused 2 "${MPI[@]}" lscat tune --mpi --shard 0/2
t_contains mpi__shard_refusal_says_why "$T_ERR" "cannot go with --mpi"

# ---- sweep: 30 records in 2 compile-time tuples (BROKEN=1 fails to compile), chunks of 4
export LSCAT_SWEEP_NO_CUDA=1
FXARGS=(--kernel "$FX/kernel.cu" --driver "$FX/driver.c" --samples 3 --warmup 0 --timeout 20)
{ printf 'BROKEN,Behave,Work\nInteger,String,Real\nCompile,Runtime,Runtime\n'
  for i in $(seq 1 30); do
      case $i in 7) echo "0,crash,0" ;; 11|12) echo "1,ok,10" ;; 15) echo "0,test,10" ;;
                 *) echo "0,ok,$((i * 100))" ;; esac
  done; } >"$T_TMP/space.csv"
lscat sweep --work "$T_TMP/plain-work" "${FXARGS[@]}" --space "$T_TMP/space.csv" \
    --out "$T_TMP/plain.csv" 2>/dev/null
t_expect mpi__sweep_under_mpirun_np_3_finishes_with_the_recorded_failures 1 \
    "${MPI[@]}" lscat sweep --mpi --chunk 4 "${FXARGS[@]}" --space "$T_TMP/space.csv" \
    --out "$T_TMP/mpi.csv"
if [ -n "$(rows "$T_TMP/plain.csv")" ] && [ "$(rows "$T_TMP/mpi.csv")" = "$(rows "$T_TMP/plain.csv")" ]; then
    t_ok mpi__sweep_rows_equal_a_plain_run
else t_fail mpi__sweep_rows_equal_a_plain_run "$(diff <(rows "$T_TMP/plain.csv") <(rows "$T_TMP/mpi.csv") | head -c 400)"; fi
if [ "$(head -1 "$T_TMP/mpi.csv")" = "$(head -1 "$T_TMP/plain.csv")" ]; then
    t_ok mpi__sweep_output_has_the_plain_runs_header
else t_fail mpi__sweep_output_has_the_plain_runs_header "$(head -1 "$T_TMP/mpi.csv")"; fi
t_expect mpi__a_finished_sweep_hands_out_nothing 0 \
    "${MPI[@]}" lscat sweep --mpi "${FXARGS[@]}" --space "$T_TMP/space.csv" --out "$T_TMP/mpi.csv"
t_contains mpi__finished_sweep_says_zero_chunks "$T_ERR" "0 chunks"
if ls -d "$T_TMP"/lscat-mpi.* >/dev/null 2>&1; then
    t_fail mpi__ranks_remove_their_scratch "$(ls -d "$T_TMP"/lscat-mpi.*)"
else t_ok mpi__ranks_remove_their_scratch; fi

# From here the ranks share one build cache (--work): each tuple is built once, not per rank.
FXARGS+=(--work "$T_TMP/plain-work")

# ---- sweep: a worker's lscat-sweep killed mid-chunk: the chunk's missing records are redone
{ printf 'BROKEN,Behave,Work\nInteger,String,Real\nCompile,Runtime,Runtime\n'
  for i in $(seq 1 24); do echo "0,ok,100000"; done; } >"$T_TMP/long.csv"
"${MPI[@]}" lscat sweep --mpi --chunk 6 "${FXARGS[@]}" --space "$T_TMP/long.csv" \
    --out "$T_TMP/killed.csv" >"$T_OUT" 2>"$T_ERR" &
mpid=$!
if victim=$(descendant $mpid lscat-sweep); then sleep 0.2; kill -9 "$victim"; fi
wait $mpid
rc=$?
if [ "$rc" = 0 ] && [ "$(records "$T_TMP/killed.csv")" = "$(seq 1 24 | tr '\n' ' ')" ]; then
    t_ok mpi__sweep_worker_killed_mid_chunk_loses_and_doubles_no_record
else t_fail mpi__sweep_worker_killed_mid_chunk_loses_and_doubles_no_record "rc=$rc victim=${victim:-none}: $(records "$T_TMP/killed.csv")"; fi
t_contains mpi__killed_chunk_is_handed_out_again "$T_ERR" "handed out again"

# ---- sweep: the default --chunk (64) would give one worker the whole tuple of 24 records while
# the other waits; chunks shrink to leave 4 per worker (24 / (4 x 2 workers) = 3 records).
# Each chunk is dealt the tuple's records in turn (1,9,17 / 2,10,18 / ...): in a space ordered
# by problem size the last chunk cut in a row would hold the largest records.
t_expect mpi__sweep_of_one_tuple_finishes 0 \
    "${MPI[@]}" lscat -v sweep --mpi "${FXARGS[@]}" --space "$T_TMP/long.csv" --out "$T_TMP/split.csv"
t_contains mpi__sweep_chunks_shrink_to_four_per_worker "$T_ERR" "8 chunks of at most 3 records"
t_contains mpi__sweep_chunks_deal_a_tuples_records_in_turn "$T_ERR" "(1,9,17) to rank"
if [ "$(records "$T_TMP/split.csv")" = "$(seq 1 24 | tr '\n' ' ')" ]; then
    t_ok mpi__sweep_small_chunks_write_each_record_once
else t_fail mpi__sweep_small_chunks_write_each_record_once "$(records "$T_TMP/split.csv")"; fi

# ---- sweep: one worker rank's GPU is gone (its stand-in device is gone before it starts, as a
# GPU that fell off the bus: every lscat-sweep there exits 3 at once, its records left unrun).
# That rank gets no more chunks after its first failures (at most --inflight 2), the other worker
# runs its chunks again, and every record is written once. Before, the rank that failed fastest
# took most of the queue: 6 of 8 chunks, 18 of 24 records left, exit 3.
touch "$T_TMP/rank2-gone"
GONEARGS=(sweep --mpi --chunk 3 "${FXARGS[@]}" --space "$T_TMP/long.csv" --out "$T_TMP/gone.csv")
timeout 600 mpirun --oversubscribe -np 2 lscat "${GONEARGS[@]}" : \
    -np 1 env LSCAT_SWEEP_NO_CUDA_GONE="$T_TMP/rank2-gone" lscat "${GONEARGS[@]}" >"$T_OUT" 2>"$T_ERR"
rc=$?
if [ "$rc" = 0 ] && [ "$(records "$T_TMP/gone.csv")" = "$(seq 1 24 | tr '\n' ' ')" ]; then
    t_ok mpi__sweep_a_rank_whose_gpu_is_gone_loses_no_record
else t_fail mpi__sweep_a_rank_whose_gpu_is_gone_loses_no_record "rc=$rc: $(records "$T_TMP/gone.csv")"; fi
t_contains mpi__sweep_a_rank_whose_gpu_is_gone_gets_no_more_chunks "$T_ERR" "rank 2 gets no more chunks"
failed=$(grep -c "exited 3 (its GPU is gone, or a fatal error there): the chunk is handed out again" "$T_ERR")
if [ "$failed" -ge 1 ] && [ "$failed" -le 2 ]; then t_ok mpi__sweep_a_rank_whose_gpu_is_gone_fails_only_its_chunks_in_flight
else t_fail mpi__sweep_a_rank_whose_gpu_is_gone_fails_only_its_chunks_in_flight "$failed chunks failed there"; fi
# Every worker's GPU gone: the run ends (no rank left to serve), nothing is written, exit 3, and
# the message says how to resume.
t_expect mpi__sweep_with_every_gpu_gone_ends_with_exit_3 3 env LSCAT_SWEEP_NO_CUDA_GONE="$T_TMP/rank2-gone" \
    timeout 600 "${MPI[@]}" lscat sweep --mpi --chunk 3 "${FXARGS[@]}" --space "$T_TMP/long.csv" \
    --out "$T_TMP/allgone.csv"
t_contains mpi__sweep_with_every_gpu_gone_says_to_run_again "$T_ERR" \
    "left undone: no worker rank was left to take them (run again to resume)"
if [ -z "$(records "$T_TMP/allgone.csv" 2>/dev/null)" ]; then t_ok mpi__sweep_with_every_gpu_gone_writes_no_row
else t_fail mpi__sweep_with_every_gpu_gone_writes_no_row "$(records "$T_TMP/allgone.csv")"; fi
rm -f "$T_TMP/rank2-gone"

# ---- sweep: one worker runs two chunks at once (--inflight, default 2): the next chunk's
# lscat-sweep starts up while the current one measures, and measures only once the current one
# has handed the chunk turn on: no two records of the rank are ever measured at the same time.
trace=$T_TMP/sweep-trace.txt
LSCAT_TUNE_TRACE=$trace mpirun --oversubscribe -np 2 lscat sweep --mpi --chunk 3 "${FXARGS[@]}" \
    --space "$T_TMP/long.csv" --out "$T_TMP/inflight.csv" >"$T_OUT" 2>"$T_ERR"
rc=$?
if [ "$rc" = 0 ] && [ "$(records "$T_TMP/inflight.csv")" = "$(seq 1 24 | tr '\n' ' ')" ]; then
    t_ok mpi__sweep_with_two_chunks_in_flight_writes_every_record_once
else t_fail mpi__sweep_with_two_chunks_in_flight_writes_every_record_once "rc=$rc: $(records "$T_TMP/inflight.csv")"; fi
read -r chunks waited overlaps < <(python3 - "$trace" <<'PY'
import sys
turn, rec = {}, []
for line in open(sys.argv[1]):
    t, pid, ev, *kv = line.split()
    kv = dict(x.split("=", 1) for x in kv)
    if ev == "sweep_turn":
        turn[pid] = float(kv["wait"])
    elif ev == "sweep_record":
        rec.append((float(kv["from"]), float(t), pid))
rec.sort()
overlaps = sum(1 for a, b in zip(rec, rec[1:]) if a[2] != b[2] and b[0] < a[1])
print(len(turn), sum(1 for w in turn.values() if w > 0.001), overlaps)
PY
)
if [ "${chunks:-0}" -ge 8 ] && [ "${waited:-0}" -ge 1 ]; then
    t_ok mpi__next_sweep_chunk_starts_up_while_the_current_one_measures
else t_fail mpi__next_sweep_chunk_starts_up_while_the_current_one_measures "$chunks chunks took a turn, $waited of them waited for it"; fi
if [ "${chunks:-0}" -ge 8 ] && [ "$overlaps" = 0 ]; then
    t_ok mpi__two_sweep_chunks_of_a_rank_never_measure_at_once
else t_fail mpi__two_sweep_chunks_of_a_rank_never_measure_at_once "$overlaps overlapping records of two chunks"; fi

# ---- sweep: a worker rank killed: Open MPI ends the job; the rerun resumes
"${MPI[@]}" lscat sweep --mpi --chunk 2 "${FXARGS[@]}" --space "$T_TMP/long.csv" \
    --out "$T_TMP/rank.csv" >"$T_OUT" 2>"$T_ERR" &
mpid=$!
for _ in $(seq 1 600); do [ -f "$T_TMP/rank.csv" ] && [ "$(wc -l <"$T_TMP/rank.csv")" -ge 5 ] && break; sleep 0.1; done
rank=$(ps -e -o pid=,ppid=,comm= | awk -v m=$mpid '$2 == m && $3 == "lscat-mpi" { print $1 }' | tail -1)
[ -n "$rank" ] && kill -9 "$rank"
wait $mpid
rc=$?
before=$(records "$T_TMP/rank.csv" | wc -w)
t_expect mpi__rerun_after_a_killed_rank_resumes 0 \
    "${MPI[@]}" lscat sweep --mpi --chunk 2 "${FXARGS[@]}" --space "$T_TMP/long.csv" --out "$T_TMP/rank.csv"
if [ "$rc" != 0 ] && [ "$before" -ge 4 ] && [ "$before" -lt 24 ] &&
    [ "$(records "$T_TMP/rank.csv")" = "$(seq 1 24 | tr '\n' ' ')" ]; then
    t_ok mpi__killed_rank_loses_and_doubles_no_record_after_the_rerun
else t_fail mpi__killed_rank_loses_and_doubles_no_record_after_the_rerun "rc=$rc before=$before: $(records "$T_TMP/rank.csv")"; fi
unset LSCAT_SWEEP_NO_CUDA

# ---- tune, a process per chunk (LSCAT_MPI_SERVE=0): one worker runs two chunks at once
# (--inflight, tune's default 2): the next chunk's lscat-tune starts while the current one
# measures, and their kernels take turns on the GPU lock. One of the two killed mid-run: its
# chunk is redone, the other's rows stay, none doubled.
# Stand-in GPU, host-only runner and harness.so (tests/tune/support/), 8 kernels x 9 configs.
TB=${LSCAT_TEST_BIN:-$ROOT/build/tests}
case "$TB" in /*) ;; *) TB=$ROOT/$TB ;; esac
export LSCAT_WORK=$T_TMP/tune-work LSCAT_DB=$T_TMP/tune-work/lscat.db LSCAT_LOCK_DIR=$T_TMP/locks
export LSCAT_GPUINFO=$ROOT/tests/tune/support/fake_gpuinfo.sh FAKE_GPUS=1 LSCAT_RUNNER_NO_CUDA=1
lscat init >/dev/null 2>&1
specs=()
for i in 1 2 3 4 5 6 7 8; do
    mkdir -p "$LSCAT_WORK/builds/t$i"
    cp "$TB/tune/support/fake_harness" "$LSCAT_WORK/builds/t$i/harness"
    cp "$TB/tune/support/fake_harness.so" "$LSCAT_WORK/builds/t$i/harness.so"
    echo "slow 100" >"$LSCAT_WORK/builds/t$i/harness.behavior"
    specs+=("t$i=builds/t$i/harness")
done
# The store's measurements: how many, how many ok, how many configurations measured twice.
measured() {
    python3 - "$LSCAT_DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda s: db.execute(s).fetchone()[0]
print(q("select count(*) from measurements"), q("select count(*) from measurements where status = 'ok'"),
      q("select count(*) from (select 1 from measurements group by kernel_id, width, height, block_x, block_y, block_z having count(*) > 1)"))
PY
}
python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "${specs[@]}"
LSCAT_MPI_SERVE=0 mpirun --oversubscribe -np 2 lscat tune --mpi --chunk 2 --sizes 64,128,256 \
    --blocks 16x16,64,128 >"$T_TMP/tune.out" 2>"$T_TMP/tune.err" &
mpid=$!
# Wait (up to 10 min on a busy machine) for two lscat-tune children of the one worker at once.
most=0 victim=
for _ in $(seq 1 6000); do
    kill -0 $mpid 2>/dev/null || break
    # only this job's children: another test (or CI clone) may run lscat-tune at the same time
    tunes=$(ps -e -o pid=,ppid=,comm= | awk -v root="$mpid" '
        { parent[$1] = $2; comm[$1] = $3 }
        END { for (p in comm) if (comm[p] == "lscat-tune") { q = p
              while (q in parent && q != root && q > 1) q = parent[q]
              if (q == root) print p } }' | sort -n)
    n=$(echo "$tunes" | grep -c .)
    [ "$n" -gt "$most" ] && most=$n
    if [ "$n" -ge 2 ]; then
        # Stopped first, then killed only if it is stopped (not already exiting): a chunk that
        # ends between the look and the kill would otherwise escape it on a busy machine.
        for cand in $(echo "$tunes" | tac); do
            kill -STOP "$cand" 2>/dev/null || continue
            # SIGSTOP lands asynchronously: on a busy machine ps may not show it at once
            for _ in $(seq 1 50); do
                case "$(ps -o stat= -p "$cand" 2>/dev/null)" in T* | Z* | "") break ;; esac
                sleep 0.02
            done
            case "$(ps -o stat= -p "$cand" 2>/dev/null)" in
            T*) kill -9 "$cand"; kill -CONT "$cand" 2>/dev/null; victim=$cand; break ;;
            *) kill -CONT "$cand" 2>/dev/null ;;
            esac
        done
        [ -n "$victim" ] && break
    fi
    sleep 0.1
done
wait $mpid
rc=$?
read -r total ok doubled < <(measured)
# mpirun -np 2 binds each rank to one core (children inherit it): a worker's harnesses must
# run on every CPU of the machine, not on its rank's core.
ncpu=$(nproc)
cpus=$(cat "$LSCAT_WORK"/builds/t*/harness.log 2>/dev/null | awk '$1 == "cpus" { print $2 }' | sort -u | tr '\n' ' ')
if [ "$ncpu" -lt 2 ]; then t_skip mpi__a_workers_harnesses_run_on_every_cpu "one CPU: binding cannot show"
elif [ "$cpus" = "$ncpu " ]; then t_ok mpi__a_workers_harnesses_run_on_every_cpu
else t_fail mpi__a_workers_harnesses_run_on_every_cpu "harnesses saw CPU counts '$cpus', the machine has $ncpu"; fi
if [ "$most" -ge 2 ]; then t_ok mpi__tune_process_per_chunk_runs_two_chunks_at_once
else t_fail mpi__tune_process_per_chunk_runs_two_chunks_at_once "at most $most lscat-tune at once"; fi
if [ "$rc" = 0 ] && [ "$ok" = 72 ] && [ "$total" = 72 ] && [ "$doubled" = 0 ]; then
    t_ok mpi__tune_process_per_chunk_two_in_flight_one_killed_measures_everything_once
else t_fail mpi__tune_process_per_chunk_two_in_flight_one_killed_measures_everything_once "rc=$rc victim=${victim:-none}: $total rows, $ok ok, $doubled doubled"; fi
if [ -z "$victim" ]; then t_fail mpi__tune_process_per_chunk_killed_chunk_is_handed_out_again "no lscat-tune could be stopped and killed: nothing was handed out again"
else t_contains mpi__tune_process_per_chunk_killed_chunk_is_handed_out_again "$T_TMP/tune.err" "handed out again"; fi
# The queue's last chunks shrink to an even share of what is left per chunk in flight (1 worker x
# 2 in flight): 2,2,2,1,1, not 2,2,2,2, so no worker is left with a whole chunk at the end.
t_contains mpi__tune_chunks_shrink_at_the_end_of_the_queue "$T_TMP/tune.err" \
    "8 kernels to look at (0 most likely done) in 5 chunks"
# ---- tune, the default: each worker rank runs its chunks in one `lscat-tune --serve`, whose
# lscat-runner stays from chunk to chunk (one process start, one context). With a trace of the
# runner starts, and one configuration of the first chunk's t1 crashing its runner: the runner
# (and spare) made after it, by that chunk's worker thread, must live on into the next chunks
# (a child's parent-death signal follows the thread that forked it: without
# proc_spawn_lasting the next chunk found its runner killed and recorded a false crash).
reseed() {
    rm -f "$LSCAT_DB" "$LSCAT_DB-wal" "$LSCAT_DB-shm" "$LSCAT_WORK"/builds/t*/harness.log
    lscat init >/dev/null 2>&1
    python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "${specs[@]}"
}
reseed
echo "crash 128 128 64 *" >>"$LSCAT_WORK/builds/t1/harness.behavior"
LSCAT_TUNE_TRACE=$T_TMP/serve.trace timeout 600 mpirun --oversubscribe -np 2 lscat tune --mpi \
    --chunk 2 --sizes 64,128,256 --blocks 16x16,64,128 >"$T_TMP/serve.out" 2>"$T_TMP/serve.err"
rc=$?
echo "slow 100" >"$LSCAT_WORK/builds/t1/harness.behavior"
read -r total ok doubled < <(measured)
crashed=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select group_concat(kernel_id || \":\" || width || \":\" || block_x) from measurements where status = \"crashed\"").fetchone()[0])' "$LSCAT_DB")
if [ "$rc" = 0 ] && [ "$ok" = 71 ] && [ "$total" = 72 ] && [ "$doubled" = 0 ] && [ "$crashed" = "t1:128:64" ]; then
    t_ok mpi__tune_served_chunks_measure_everything_once_with_only_the_real_crash
else t_fail mpi__tune_served_chunks_measure_everything_once_with_only_the_real_crash "rc=$rc: $total rows, $ok ok, $doubled doubled, crashed: $crashed (want t1:128:64); $(tail -5 "$T_TMP/serve.err" | tr '\n' ' ')"; fi
# one chunk at a time (served: --inflight 1), so 2,2,2,2: four chunks
t_contains mpi__tune_worker_ran_every_chunk "$T_TMP/serve.err" "rank 1: 4 chunks"
t_contains mpi__tune_worker_serves_its_chunks_in_one_lscat_tune "$T_TMP/serve.err" \
    "rank 1: lscat-tune --serve started 1 time(s)"
# every chunk's sweep in one process (one pid in the trace); a runner started at the server's
# start and one after the crash, none at a chunk's start
pids=$(awk '$3 == "sweep_start" { print $2 }' "$T_TMP/serve.trace" 2>/dev/null | sort -u | wc -l)
sweeps=$(grep -c ' sweep_start ' "$T_TMP/serve.trace" 2>/dev/null)
starts=$(grep -c ' runner_started ' "$T_TMP/serve.trace" 2>/dev/null)
if [ "$pids" = 1 ] && [ "$sweeps" = 4 ] && [ "$starts" = 2 ]; then
    t_ok mpi__tune_served_chunks_share_one_runner
else t_fail mpi__tune_served_chunks_share_one_runner "$sweeps chunk sweeps in $pids process(es), $starts fresh runner start(s) (want 4 in 1, 2: the first, and one after the crash; none at a chunk's start)"; fi
# The server killed while it measures a chunk (after the first chunk's 2 kernels ran): that
# chunk is handed out again to a new server, the chunks queued behind it too, none doubled.
reseed
mpirun --oversubscribe -np 2 lscat tune --mpi --chunk 2 --sizes 64,128,256 \
    --blocks 16x16,64,128 >"$T_TMP/serve-kill.out" 2>"$T_TMP/serve-kill.err" &
mpid=$!
victim=
for _ in $(seq 1 6000); do # up to 10 min on a busy machine
    kill -0 $mpid 2>/dev/null || break
    if [ "$(ls "$LSCAT_WORK"/builds/t*/harness.log 2>/dev/null | wc -l)" -ge 3 ]; then
        victim=$(descendant $mpid lscat-tune) && kill -9 "$victim"
        break
    fi
    sleep 0.1
done
wait $mpid
rc=$?
read -r total ok doubled < <(measured)
if [ -n "$victim" ] && [ "$rc" = 0 ] && [ "$ok" = 72 ] && [ "$total" = 72 ] && [ "$doubled" = 0 ]; then
    t_ok mpi__tune_killed_server_loses_and_doubles_no_measurement
else t_fail mpi__tune_killed_server_loses_and_doubles_no_measurement "rc=$rc victim=${victim:-none}: $total rows, $ok ok, $doubled doubled; $(grep mpi: "$T_TMP/serve-kill.err" | tail -5 | tr '\n' ' ')"; fi
t_contains mpi__tune_killed_server_chunk_is_handed_out_again "$T_TMP/serve-kill.err" \
    "handed out again"
t_contains mpi__tune_killed_server_is_replaced "$T_TMP/serve-kill.err" \
    "lscat-tune --serve started 2 time(s)"
t_expect mpi__tune_serve_without_its_answer_pipe_is_refused 2 lscat tune --serve --db "$LSCAT_DB"
t_contains mpi__tune_serve_refusal_says_why "$T_ERR" "file descriptor 3"
# No chunk is stranded behind a slow one: 2 worker ranks, each its own stand-in GPU, a chunk
# a kernel; t1's configurations last until the test releases them, which it does only once
# the other 7 kernels are in the store. Served chunks go one at a time (--inflight 1), so the
# rank holding t1 asks for nothing more and the other rank runs the other 7. (With a second
# chunk queued behind t1, that kernel would wait for the release, and the wait below would
# end only at its 10-minute cap: on 2 H200s a rank held a queued chunk 124 s behind a chunk of
# fault series while the other rank idled 121 s.) --timeout 900: t1's first configuration is not
# a hang however long the others take on a busy machine.
reseed
echo "hold * * * *" >"$LSCAT_WORK/builds/t1/harness.behavior"
rm -f "$LSCAT_WORK/builds/t1/harness.release"
CUDA_VISIBLE_DEVICES=0,1 FAKE_GPUS=2 mpirun --oversubscribe -np 3 \
    lscat -v tune --mpi --chunk 1 --timeout 900 --sizes 64,128,256 --blocks 16x16,64,128 \
    >"$T_TMP/strand.out" 2>"$T_TMP/strand.err" &
mpid=$!
others=0
for _ in $(seq 1 6000); do # up to 10 min on a busy machine
    kill -0 $mpid 2>/dev/null || break
    others=$(sqlite3 "$LSCAT_DB" "select count(distinct kernel_id) from measurements where kernel_id != 't1'" 2>/dev/null || echo 0)
    [ "${others:-0}" -ge 7 ] && break
    sleep 0.1
done
touch "$LSCAT_WORK/builds/t1/harness.release"
wait $mpid
rc=$?
echo "slow 100" >"$LSCAT_WORK/builds/t1/harness.behavior"
read -r total ok doubled < <(measured)
holder=$(sed -n 's/.*chunk [0-9]* (t1) to rank \([0-9]*\).*/\1/p' "$T_TMP/strand.err" | head -1)
if [ "${others:-0}" -ge 7 ] && [ "$rc" = 0 ] && [ "$ok" = 72 ] && [ "$total" = 72 ] && [ "$doubled" = 0 ]; then
    t_ok mpi__tune_no_chunk_waits_behind_a_slow_one
else t_fail mpi__tune_no_chunk_waits_behind_a_slow_one "rc=$rc: $others other kernels stored before t1 was released (want 7); $total rows, $ok ok, $doubled doubled; $(grep -E 'mpi: (chunk|time rank)' "$T_TMP/strand.err" | tr '\n' ' ' | cut -c1-600)"; fi
if [ -n "$holder" ] && grep -q "rank $holder: 1 chunks" "$T_TMP/strand.err"; then
    t_ok mpi__tune_the_rank_with_the_slow_chunk_ran_only_it
else t_fail mpi__tune_the_rank_with_the_slow_chunk_ran_only_it "t1 went to rank '${holder:-?}'; $(grep -E 'time rank' "$T_TMP/strand.err" | tr '\n' ' ')"; fi
# ---- tune: one worker rank's stand-in GPU is gone (every harness start there says no CUDA
# device: its lscat-tune ends with exit 3, tune_device_lost). Its chunks' stores are not merged,
# the rank gets no more chunks, and the other worker measures every configuration once.
rm -f "$LSCAT_DB" "$LSCAT_DB-wal" "$LSCAT_DB-shm"
lscat init >/dev/null 2>&1
python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "${specs[@]}"
touch "$T_TMP/tune-rank2-gone"
TUNEARGS=(tune --mpi --chunk 2 --sizes 64,128,256 --blocks 16x16,64,128)
timeout 600 mpirun --oversubscribe -np 2 lscat "${TUNEARGS[@]}" : \
    -np 1 env LSCAT_FAKE_GPU_GONE="$T_TMP/tune-rank2-gone" lscat "${TUNEARGS[@]}" \
    >"$T_TMP/tune-gone.out" 2>"$T_TMP/tune-gone.err"
rc=$?
read -r total ok doubled < <(measured)
if [ "$rc" = 0 ] && [ "$ok" = 72 ] && [ "$total" = 72 ] && [ "$doubled" = 0 ]; then
    t_ok mpi__tune_a_rank_whose_gpu_is_gone_loses_and_doubles_no_measurement
else t_fail mpi__tune_a_rank_whose_gpu_is_gone_loses_and_doubles_no_measurement "rc=$rc: $total rows, $ok ok, $doubled doubled; $(grep mpi: "$T_TMP/tune-gone.err" | tail -5 | tr '\n' ' ')"; fi
t_contains mpi__tune_a_rank_whose_gpu_is_gone_gets_no_more_chunks "$T_TMP/tune-gone.err" \
    "rank 2 gets no more chunks"
rm -f "$T_TMP/tune-rank2-gone"
t_expect mpi__sweep_inflight_with_every_gpu_per_rank_is_refused 2 "${MPI[@]}" lscat sweep --mpi \
    --inflight 2 --mpi-gpus all --space "$T_TMP/space.csv" --out "$T_TMP/x.csv"
t_contains mpi__inflight_refusal_says_why "$T_ERR" "one chunk per worker rank"
unset LSCAT_WORK LSCAT_DB LSCAT_LOCK_DIR LSCAT_GPUINFO FAKE_GPUS LSCAT_RUNNER_NO_CUDA

# ---- execute: real nvcc builds of 6 fixture kernels, chunks of 2; a plain run for reference
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    t_skip mpi__execute "nvcc not found"; t_done
fi
W=$T_TMP/work
export LSCAT_WORK=$W LSCAT_DB=$W/lscat.db
lscat init >/dev/null 2>&1
for i in 1 2 3 4 5 6; do
    id=$(printf 'mpi-%d' "$i" | sha256sum | cut -c1-64)
    kd=$W/kernels/${id:0:2}/$id
    mkdir -p "$kd/include"
    sed "s/2.0f \* x\[i\]/$i.5f * x[i]/" "$ROOT/tests/execute/fixtures/kernels/ok/kernel.cu" >"$kd/kernel.cu"
    cp "$ROOT/tests/execute/fixtures/harness.cu" "$kd/"
    cp "$ROOT/tests/execute/fixtures/harness_main.h" "$kd/include/"
    sqlite3 "$LSCAT_DB" "INSERT INTO kernels(id, name, dir, params, param_count, created_at)
        VALUES ('$id', 'k$i', 'kernels/${id:0:2}/$id', '[]', 2, '2026-11-21T00:00:00Z')"
done
cp -r "$W" "$T_TMP/single"
LSCAT_WORK=$T_TMP/single LSCAT_DB=$T_TMP/single/lscat.db \
    lscat execute --arch sm_90 -j 1 --no-probe >/dev/null 2>&1
"${MPI[@]}" lscat execute --mpi --chunk 2 --arch sm_90 -j 1 --no-probe >"$T_OUT" 2>"$T_ERR" &
mpid=$!
if victim=$(descendant $mpid lscat-execute); then sleep 0.3; kill -9 "$victim"; fi
wait $mpid
rc=$?
q() { sqlite3 "$1" "$2" 2>/dev/null; }
view="SELECT k.id, k.status, b.arch, b.status, b.cache_key FROM kernels k LEFT JOIN builds b
      ON b.kernel_id = k.id ORDER BY 1, 3"
if [ "$rc" = 0 ] && [ -n "$(q "$T_TMP/single/lscat.db" "$view")" ] &&
    [ "$(q "$LSCAT_DB" "$view")" = "$(q "$T_TMP/single/lscat.db" "$view")" ]; then
    t_ok mpi__execute_store_equals_a_plain_run_after_a_killed_worker
else t_fail mpi__execute_store_equals_a_plain_run_after_a_killed_worker "rc=$rc victim=${victim:-none}: $(q "$LSCAT_DB" "$view" | head -c 400)"; fi
t_contains mpi__killed_execute_chunk_is_handed_out_again "$T_ERR" "handed out again"
if [ "$(q "$LSCAT_DB" "SELECT count(*) FROM builds")" = 6 ] &&
    [ "$(q "$LSCAT_DB" "SELECT count(*) FROM kernels")" = 6 ]; then
    t_ok mpi__execute_doubles_no_build
else t_fail mpi__execute_doubles_no_build "$(q "$LSCAT_DB" "SELECT count(*) FROM builds")"; fi
t_expect mpi__execute_rerun_builds_nothing_new 0 \
    "${MPI[@]}" lscat execute --mpi --chunk 2 --arch sm_90 -j 1 --no-probe
if [ "$(q "$LSCAT_DB" "SELECT count(*) FROM builds")" = 6 ]; then t_ok mpi__execute_rerun_doubles_nothing
else t_fail mpi__execute_rerun_doubles_nothing "$(q "$LSCAT_DB" "SELECT count(*) FROM builds")"; fi
t_done
