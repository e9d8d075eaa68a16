#!/usr/bin/env bash
# lscat tune end to end with the real program: option handling, the clock-locking refusals,
# the no-GPU path of `make run`, and SIGKILL in the middle of a sweep followed by a resume, with
# harness processes and again with the real lscat-runner (host-only: LSCAT_RUNNER_NO_CUDA=1)
# running the stand-in's harness.so builds.
# Without a GPU the harnesses and GPUs are stand-ins (tests/tune/support/), real processes.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
TB=${LSCAT_TEST_BIN:-$ROOT/build/tests}
case "$TB" in /*) ;; *) TB=$ROOT/$TB ;; esac
FAKE=$TB/tune/support/fake_harness
export LSCAT_WORK=$T_TMP/work LSCAT_DB=$T_TMP/work/lscat.db
export LSCAT_LOCK_DIR=$T_TMP/locks # the stand-in GPUs' locks are this test's alone

t_expect tune__help_exits_0 0 lscat tune --help && t_contains tune__help_documents_lock_clocks "$T_OUT" "--i-own-these-gpus"
t_expect tune__unknown_option_is_a_usage_error 2 lscat tune --frobnicate
t_expect tune__bad_sizes_are_a_usage_error 2 lscat tune --sizes 240,abc && t_contains tune__bad_sizes_say_which "$T_ERR" "'abc'"
t_expect tune__lock_clocks_without_consent_is_refused 2 lscat tune --lock-clocks 1400 &&
    t_contains tune__lock_clocks_refusal_says_why "$T_ERR" "refusing --lock-clocks without --i-own-these-gpus"
t_expect tune__consent_without_lock_clocks_is_refused 2 lscat tune --i-own-these-gpus

LSCAT_GPUINFO=/nonexistent/lscat-gpuinfo t_expect tune__no_gpu_exits_0 0 lscat tune &&
    t_contains tune__no_gpu_says_nothing_measured "$T_OUT" "no CUDA device: nothing measured"

lscat init >/dev/null 2>&1 || t_fail tune__init "lscat init failed"
export LSCAT_GPUINFO=$ROOT/tests/tune/support/fake_gpuinfo.sh FAKE_GPUS=2
t_expect tune__unknown_gpu_index_is_a_usage_error 2 lscat tune --gpus 0,7

# Clock locking against the stand-in NVML: GPU 1 refuses with NO_PERMISSION; nothing measured.
export LSCAT_NVML_LIB=$TB/tune/support/libfake_nvml.so FAKE_NVML_LOG=$T_TMP/nvml.log
t_expect tune__lock_clocks_permission_error_is_fatal 3 lscat tune --lock-clocks 1400 --i-own-these-gpus &&
    t_contains tune__lock_clocks_permission_error_is_clear "$T_ERR" "no permission"
t_contains tune__lock_clocks_undoes_partial_locks "$T_TMP/nvml.log" "reset 0 0"
unset LSCAT_NVML_LIB FAKE_NVML_LOG

# Six stand-in kernels, 9 configurations each, 80 ms per configuration (the whole sweep needs
# at least 2.2 s), on 2 stand-in GPUs; killed with SIGKILL as soon as the first measurement is
# in the store (however long the start takes on a busy machine), so the sweep is partial.
measured() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1], timeout=60).execute('select count(*) from measurements').fetchone()[0])" "$LSCAT_DB" 2>/dev/null || echo 0; }
kill_after_first_measurement() {
    for _ in $(seq 1200); do [ "$(measured)" -gt 0 ] && break; kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$1"
    { wait "$1"; } 2>/dev/null
}
# No process whose command line holds $1 is left (the kill reaches them through their parent
# death signal, a moment later).
gone() {
    for _ in $(seq 100); do pgrep -f "$1" >/dev/null || return 0; sleep 0.1; done
    return 1
}
specs=()
for i in 1 2 3 4 5 6; do
    mkdir -p "$LSCAT_WORK/builds/k$i"
    cp "$FAKE" "$LSCAT_WORK/builds/k$i/harness"
    echo "slow 80" >"$LSCAT_WORK/builds/k$i/harness.behavior"
    specs+=("k$i=builds/k$i/harness")
done
python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "${specs[@]}"
SPACE=(--sizes 64,128,256 --blocks 16x16,64,128)
lscat tune "${SPACE[@]}" >"$T_OUT" 2>"$T_ERR" &
pid=$!
kill_after_first_measurement "$pid"
before=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from measurements').fetchone()[0])" "$LSCAT_DB")
# Each result is committed as it arrives, so the kill lands mid-sweep (a store opened by another
# connection of the process once made the commits invisible until the end: tests/store/concurrent.c).
if [ "$before" -gt 0 ] && [ "$before" -lt 54 ]; then t_ok tune__kill_leaves_a_partial_sweep
else t_fail tune__kill_leaves_a_partial_sweep "$before measurements after the kill"; fi
if ! gone "$LSCAT_WORK/builds"; then t_fail tune__kill_leaves_no_harness_running "a harness outlived lscat-tune"; else t_ok tune__kill_leaves_no_harness_running; fi

t_expect tune__resume_exits_0 0 lscat tune "${SPACE[@]}"
read -r total current started < <(python3 - "$LSCAT_DB" "$LSCAT_WORK" <<'PY'
import sqlite3, sys, glob
db = sqlite3.connect(sys.argv[1])
t = db.execute("select count(*) from measurements").fetchone()[0]
c = db.execute("select count(*) from measurements where superseded = 0 and status = 'ok'").fetchone()[0]
s = sum(open(f).read().count("cfg ") for f in glob.glob(sys.argv[2] + "/builds/*/harness.log"))
print(t, c, s)
PY
)
if [ "$current" = 54 ] && [ "$total" = 54 ]; then t_ok tune__resume_completes_the_sweep_without_duplicates; else t_fail tune__resume_completes_the_sweep_without_duplicates "total $total, current ok $current"; fi
# per GPU at most two were begun twice: the one running and one whose line was not yet committed
if [ "$started" -le 58 ]; then t_ok tune__resume_redoes_at_most_the_items_in_flight; else t_fail tune__resume_redoes_at_most_the_items_in_flight "$started configurations begun for 54"; fi
t_expect tune__third_run_does_nothing 0 lscat tune "${SPACE[@]}" && t_contains tune__third_run_plans_nothing "$T_OUT" "0 kernel run(s) planned"
# How samples launched is recorded: through graphs by default (the stand-in reports what the
# timing core would), one by one with --no-graph.
t_expect tune__no_graph_remeasure_exits_0 0 lscat tune --remeasure --no-graph --kernel k1 --sizes 64 --blocks 64
graphs=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select group_concat(graph_nodes || ':' || superseded, ' ') from (select * from measurements where kernel_id = 'k1' and width = 64 and block_x = 64 order by id)\").fetchone()[0])" "$LSCAT_DB")
if [ "$graphs" = "3:1 0:0" ]; then t_ok tune__graph_nodes_are_recorded_and_no_graph_turns_them_off; else t_fail tune__graph_nodes_are_recorded_and_no_graph_turns_them_off "graph_nodes:superseded = '$graphs'"; fi

# The same kill and resume with harness.so files: the kernels run in one lscat-runner per GPU.
export LSCAT_DB=$T_TMP/work/runner.db LSCAT_RUNNER_NO_CUDA=1
lscat init >/dev/null 2>&1
specs=()
for i in 1 2 3 4 5 6; do
    mkdir -p "$LSCAT_WORK/builds/r$i"
    cp "$FAKE" "$LSCAT_WORK/builds/r$i/harness"
    cp "$FAKE.so" "$LSCAT_WORK/builds/r$i/harness.so"
    echo "slow 80" >"$LSCAT_WORK/builds/r$i/harness.behavior"
    specs+=("r$i=builds/r$i/harness")
done
python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "${specs[@]}"
lscat tune "${SPACE[@]}" >"$T_OUT" 2>"$T_ERR" &
pid=$!
kill_after_first_measurement "$pid"
if ! gone "$LSCAT_BIN/lscat-runner"; then t_fail tune__kill_leaves_no_runner_running "an lscat-runner outlived lscat-tune"; else t_ok tune__kill_leaves_no_runner_running; fi
t_expect tune__runner_resume_exits_0 0 lscat tune "${SPACE[@]}"
read -r total current pids counts < <(python3 - "$LSCAT_DB" "$LSCAT_WORK" <<'PY'
import sqlite3, sys, glob
db = sqlite3.connect(sys.argv[1])
t = db.execute("select count(*) from measurements").fetchone()[0]
c = db.execute("select count(*) from measurements where superseded = 0 and status = 'ok'").fetchone()[0]
p = {l.split()[1] for f in glob.glob(sys.argv[2] + "/builds/r*/harness.log") for l in open(f) if l.startswith("start")}
k = db.execute("select counts from stage_runs where stage = 'tune' order by id desc limit 1").fetchone()[0]
print(t, c, len(p), k.replace(" ", ""))
PY
)
if [ "$current" = 54 ] && [ "$total" = 54 ]; then t_ok tune__runner_resume_completes_the_sweep_without_duplicates; else t_fail tune__runner_resume_completes_the_sweep_without_duplicates "total $total, current ok $current"; fi
# two runs x two GPUs: at most four processes ran the six kernels
case "$counts" in *'"runner_fallbacks":0'*) ;; *) pids=99 ;; esac
if [ "$pids" -le 4 ]; then t_ok tune__runner_hosts_many_kernels_per_process; else t_fail tune__runner_hosts_many_kernels_per_process "$pids processes, $counts"; fi
# The context gate: the two GPUs' runners make their contexts one at a time (a host makes them
# one at a time anyway, and 4 made together were all ready only at 1.69 s on 4 H200s, one alone
# at 0.4 s): the second runner starts only once the first said @ready. LSCAT_TUNE_CONTEXT_GATE=0
# starts both at once, as before.
# The runner trace's (LSCAT_TUNE_TRACE) runner starts and @ready markers, in order: "s s r r"
starts_and_ready() { awk '$3 == "runner_started" { printf "s " } $3 == "marker" && $5 == "@ready" { printf "r " }' "$1"; }
# (each stand-in runner says @ready 3 s after its start, as a context being made would: without
# the gate the second GPU's worker starts its runner within those 3 s even on a busy machine)
t_expect tune__remeasure_with_the_context_gate_exits_0 0 env LSCAT_RUNNER_NO_CUDA_READY_MS=3000 \
    LSCAT_TUNE_TRACE="$T_TMP/gate.trace" lscat tune "${SPACE[@]}" --remeasure
t_expect tune__remeasure_without_the_context_gate_exits_0 0 env LSCAT_RUNNER_NO_CUDA_READY_MS=3000 \
    LSCAT_TUNE_CONTEXT_GATE=0 LSCAT_TUNE_TRACE="$T_TMP/nogate.trace" lscat tune "${SPACE[@]}" --remeasure
if [ "$(starts_and_ready "$T_TMP/gate.trace")" = "s r s r " ] &&
   [ "$(starts_and_ready "$T_TMP/nogate.trace")" = "s s r r " ]; then
    t_ok tune__runners_make_their_contexts_one_at_a_time
else t_fail tune__runners_make_their_contexts_one_at_a_time "gate: $(starts_and_ready "$T_TMP/gate.trace"); LSCAT_TUNE_CONTEXT_GATE=0: $(starts_and_ready "$T_TMP/nogate.trace")"; fi
unset LSCAT_RUNNER_NO_CUDA
t_done
