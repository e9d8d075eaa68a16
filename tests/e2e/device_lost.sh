#!/usr/bin/env bash
# A device that is unusable while execute probes (docs/execute.md "A device that goes"): a
# generated harness that cannot open the device (here CUDA_VISIBLE_DEVICES= hides every GPU;
# on a machine without a GPU the CUDA runtime finds no driver either) says so, and that is not
# the kernel's failure. Probing stops at the first such run, nothing is recorded for the
# kernels (they stay 'built', for the next run), the builds go on, and the run ends with exit 3
# and what to do. Real isolate, real nvcc, the real CUDA runtime; --probe-anyway makes the
# probes run where nvidia-smi lists no GPU. Skips without nvcc or the CUDA headers.
. "$(dirname "$0")/lib.sh"
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
names="device_lost__mpi device_lost__the_run_stops_with_exit_3 device_lost__it_says_which_device_and_what_to_do device_lost__it_says_to_run_again device_lost__nothing_is_recorded_for_the_kernels device_lost__every_kernel_is_still_built device_lost__the_counts_say_so device_lost__the_log_names_the_device_error"
if [ ! -x "$NVCC" ] || [ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime.h" ]; then
    for n in $names; do t_skip "$n" "nvcc or the CUDA headers not found ($NVCC)"; done; t_done
fi
W=$T_TMP/work
export LSCAT_WORK=$W LSCAT_DB=$W/lscat.db
mkdir -p "$T_TMP/src"
cat >"$T_TMP/src/k.cu" <<'CU'
__global__ void scale(float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 2.0f * x[i];
}
__global__ void shift(float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + 1.0f;
}
__global__ void square(float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] * x[i];
}
CU
lscat-isolate --work "$W" --path "$T_TMP/src" -j 2 -q >"$T_OUT" 2>"$T_ERR" ||
    t_fail device_lost__isolate "lscat-isolate failed"
n=$(sqlite3 "$LSCAT_DB" "SELECT count(*) FROM kernels")
[ "$n" = 3 ] || t_fail device_lost__isolate "$n kernels isolated, want 3"
# The first run builds one kernel without probing, so a run with work left for the probes
# exists after the device is gone: it must build the other two all the same.
first=$(sqlite3 "$LSCAT_DB" "SELECT id FROM kernels WHERE name = 'scale'")
lscat execute --arch sm_90 -j 1 --no-probe --kernel "${first:0:12}" >"$T_OUT" 2>"$T_ERR" ||
    t_fail device_lost__the_first_build "exit $?"
t_expect device_lost__the_run_stops_with_exit_3 3 env CUDA_VISIBLE_DEVICES= \
    lscat execute --arch sm_90 -j 1 --probe-jobs 1 --probe-anyway -v --log-format json
t_contains device_lost__it_says_which_device_and_what_to_do "$T_ERR" \
    "device 0 is unusable"
t_contains device_lost__it_says_to_run_again "$T_ERR" \
    "run \`lscat execute\` again to probe them"
# No probe row, and every kernel still 'built': checks $1 and $2.
nothing_recorded() {
    local probes st
    probes=$(sqlite3 "$LSCAT_DB" "SELECT count(*) FROM probes")
    [ "$probes" = 0 ] && t_ok "$1" ||
        t_fail "$1" "$probes probe rows: $(sqlite3 "$LSCAT_DB" "SELECT outcome, detail FROM probes")"
    st=$(sqlite3 "$LSCAT_DB" "SELECT group_concat(status) FROM (SELECT status FROM kernels ORDER BY name)")
    [ "$st" = "built,built,built" ] && t_ok "$2" || t_fail "$2" "statuses (scale, shift, square): $st"
}
nothing_recorded device_lost__nothing_is_recorded_for_the_kernels device_lost__every_kernel_is_still_built
counts=$(sqlite3 "$LSCAT_DB" "SELECT counts FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC LIMIT 1")
case "$counts" in *'"probed":0,'*'"probe_failed":0,'*'"device_lost":1,"unprobed":3}'*)
    t_ok device_lost__the_counts_say_so device_lost__the_log_names_the_device_error ;;
    *) t_fail device_lost__the_counts_say_so device_lost__the_log_names_the_device_error "counts $counts" ;; esac
t_contains device_lost__the_log_names_the_device_error "$T_ERR" '"event":"device_lost"'

# The same under `lscat execute --mpi` (docs/mpi.md "What a failure costs"): each worker rank's
# chunk exits 3, so rank 0 gives that rank no more chunks; with every rank's device gone it ends
# with exit 3 and the chunks left undone, and nothing is recorded: the kernels stay 'built'.
if ! command -v mpirun >/dev/null || [ ! -x "$LSCAT_BIN/lscat-mpi" ]; then
    t_skip device_lost__mpi "no mpirun or lscat-mpi not built (Open MPI: mk/deps.sh)"; t_done
fi
ROOT=${LSCAT_ROOT:-$PWD}
chmod 755 "$T_TMP" # the sandbox's uids reach the work folder
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/support/lsan.supp:print_suppressions=0}
t_expect device_lost__mpi_every_device_gone_exit_3 3 mpirun --oversubscribe -np 3 \
    env CUDA_VISIBLE_DEVICES= TMPDIR="$T_TMP" lscat execute --mpi --chunk 1 --arch sm_90 -j 1 \
    --probe-jobs 1 --probe-anyway
t_contains device_lost__mpi_says_what_was_left_undone "$T_ERR" \
    "no worker rank was left to take them (run again to resume)"
t_contains device_lost__mpi_names_a_retired_rank "$T_ERR" "exited 3"
nothing_recorded device_lost__mpi_records_nothing device_lost__mpi_every_kernel_is_still_built
t_done
