#!/usr/bin/env bash
# lscat tune when the GPU becomes unusable (docs/tune.md "A device that goes"): a real generated
# harness (isolate's golden saxpy, built with the real nvcc) cannot open its device: on a
# machine without a GPU the CUDA runtime finds no driver, and where there is one the stand-in
# GPU's UUID in CUDA_VISIBLE_DEVICES matches no device. That is the device's failure, not the
# kernels': nothing is recorded, no kernel is given up, the GPU takes no further kernel, and
# tune exits 3 saying to run again. (Before, each configuration was recorded as crashed and
# the kernel given up after --max-failures, so a later run skipped it.) The GPUs are the tune
# tests' stand-ins (tests/tune/support/fake_gpuinfo.sh). Skips without nvcc.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
names="tune_device_lost__the_sweep_stops_with_exit_3 tune_device_lost__it_says_what_to_do tune_device_lost__the_log_names_the_gpu_and_why tune_device_lost__nothing_is_recorded tune_device_lost__no_kernel_is_given_up tune_device_lost__the_counts_say_so"
if [ ! -x "$NVCC" ]; then for n in $names; do t_skip "$n" "nvcc not found ($NVCC)"; done; t_done; fi
export LSCAT_WORK=$T_TMP/work LSCAT_DB=$T_TMP/work/lscat.db LSCAT_LOCK_DIR=$T_TMP/locks
export LSCAT_GPUINFO=$ROOT/tests/tune/support/fake_gpuinfo.sh FAKE_GPUS=1
lscat init -q >/dev/null 2>&1 || t_fail tune_device_lost__init "lscat init failed"
B=$LSCAT_WORK/builds/saxpy G=$ROOT/tests/isolate/fixtures/harness-golden/saxpy
mkdir -p "$B"
if ! (cd "$G" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$ROOT/isolate/harness_core.cu" "$ROOT/tune/timing.cu" \
        "$ROOT/tune/stats.c" -o "$B/harness" >"$T_TMP/nvcc.log" 2>&1); then
    for n in $names; do t_fail "$n" "the harness did not build: $(grep -m2 error "$T_TMP/nvcc.log")"; done; t_done
fi
# two kernels with that harness: the second is never started once the GPU is gone
python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" "k1=builds/saxpy/harness" "k2=builds/saxpy/harness"
q() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$LSCAT_DB" "$1"; }
t_expect tune_device_lost__the_sweep_stops_with_exit_3 3 lscat tune --sizes 64,128 --blocks 64,128 --max-failures 2 -v --log-format json
t_contains tune_device_lost__it_says_what_to_do "$T_ERR" "1 GPU became unusable during the sweep"
if grep '"event":"tune_device_lost"' "$T_ERR" | grep -q '"gpu":"GPU-fake-0".*the device is unusable: .*harness: device 0: '; then
    t_ok tune_device_lost__the_log_names_the_gpu_and_why
else t_fail tune_device_lost__the_log_names_the_gpu_and_why "$(grep -m1 tune_device_lost "$T_ERR")"; fi
got="$(q "SELECT count(*) FROM measurements") $(q "SELECT count(*) FROM failures WHERE stage = 'tune'")"
[ "$got" = "0 0" ] && t_ok tune_device_lost__nothing_is_recorded ||
    t_fail tune_device_lost__nothing_is_recorded "measurements, tune failures: $got"
got="$(q "SELECT count(*) FROM tune_kernels WHERE status = 'given_up'") $(q "SELECT group_concat(status) FROM kernels")"
[ "$got" = "0 runnable,runnable" ] && t_ok tune_device_lost__no_kernel_is_given_up ||
    t_fail tune_device_lost__no_kernel_is_given_up "given up, kernel statuses: $got"
counts=$(q "SELECT counts FROM stage_runs WHERE stage = 'tune' ORDER BY id DESC LIMIT 1")
case "$counts" in *'"kernels_given_up":0,'*'"gpus_lost":1}'*) t_ok tune_device_lost__the_counts_say_so ;;
    *) t_fail tune_device_lost__the_counts_say_so "counts $counts" ;; esac
t_done
