#!/usr/bin/env bash
# Temporaries left by killed runs (issue 13, defect 7): blobs/xx/<sha>.tmp.<pid> (harvest fetch),
# kernels/xx/<id>.tmp.<pid>/ and kernels/xx/<id>/<file>.tmp.<pid> (isolate),
# builds/core-<hash>.tmp.<pid>/ (execute) are removed by the next run of the stage that makes
# them when their process is dead; those of a live process (another lscat at work) are kept.
. "$(dirname "$0")/lib.sh"
chmod 755 "$T_TMP" # the sandbox's uids reach the work folder (docs/execute.md "Folders the sandbox cannot enter")
W=$T_TMP/work
export LSCAT_WORK=$W LSCAT_DB=$W/lscat.db
lscat init -q >/dev/null 2>&1 || t_fail stale_temps__init "lscat init failed"
sh -c 'exit 0' &
dead=$!
wait "$dead"
sleep 600 &
live=$!
trap 'kill "$live" 2>/dev/null; [ "$T_FAILED" = 0 ] && rm -rf "$T_TMP"' EXIT
mk() { mkdir -p "$(dirname "$W/$1")"; echo x >"$W/$1"; }
mk "blobs/ab/ab01.tmp.$dead"
mk "blobs/ab/ab02.tmp.$live"
mk "blobs/ab/ab03"
mk "kernels/cd/cd01.tmp.$dead/kernel.cu"
mk "kernels/cd/cd02/harness.cu.tmp.$dead"
mk "kernels/cd/cd02/kernel.cu"
mk "kernels/cd/cd03.tmp.$live/kernel.cu"
mk "builds/core-0123.tmp.$dead/timing.o"
mk "builds/core-4567.tmp.$live/timing.o"
gone() { [ ! -e "$W/$1" ] && t_ok "$2" || t_fail "$2" "$1 is still there"; }
kept() { [ -e "$W/$1" ] && t_ok "$2" || t_fail "$2" "$1 was removed"; }

t_expect stale_temps__fetch_runs 0 lscat harvest fetch --archive-url "file://$T_TMP/none/{owner}/{name}.zip"
gone "blobs/ab/ab01.tmp.$dead" stale_temps__fetch_removes_a_dead_fetchs_blob
kept "blobs/ab/ab02.tmp.$live" stale_temps__fetch_keeps_a_live_fetchs_blob
kept blobs/ab/ab03 stale_temps__fetch_keeps_finished_blobs
t_contains stale_temps__fetch_says_what_it_removed "$T_ERR" "stale_temporaries_removed"

t_expect stale_temps__isolate_runs 0 lscat isolate
gone "kernels/cd/cd01.tmp.$dead" stale_temps__isolate_removes_a_dead_runs_kernel_folder
gone "kernels/cd/cd02/harness.cu.tmp.$dead" stale_temps__isolate_removes_a_dead_runs_file
kept kernels/cd/cd02/kernel.cu stale_temps__isolate_keeps_kernel_files
kept "kernels/cd/cd03.tmp.$live/kernel.cu" stale_temps__isolate_keeps_a_live_runs_folder

t_expect stale_temps__execute_runs 0 lscat execute --no-probe
gone "builds/core-0123.tmp.$dead" stale_temps__execute_removes_a_dead_runs_timing_core
kept "builds/core-4567.tmp.$live/timing.o" stale_temps__execute_keeps_a_live_runs_timing_core
t_done
