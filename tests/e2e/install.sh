#!/usr/bin/env bash
# End-to-end: `make install PREFIX=<tmp>` from the tree the tests run (build/ or build-san/,
# nothing rebuilt, no package step) installs exactly the programs and data a user needs and no
# test program; the installed lscat runs the bundled sample (scripts/run-sample.sh) from there
# and compiles the timing core from <prefix>/share/lscat, not from the source tree.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
P=$T_TMP/prefix
BUILD=$(cd "$LSCAT_BIN/.." && pwd)
case "$BUILD" in
    "$ROOT/build") san=0 ;;
    "$ROOT/build-san") san=1 ;;
    *) t_skip install__installs_the_built_tree "LSCAT_BIN ($LSCAT_BIN) is not $ROOT/build/bin or build-san/bin"
       t_done ;;
esac
# A nested make of its own: not the jobserver of the `make test` that may be running this.
unset MAKEFLAGS MFLAGS MAKELEVEL LSCAT_SHARE_DIR LSCAT_RUNNER LSCAT_GPUINFO
mk() { make -s -C "$ROOT" NO_DEPS=1 SANITIZE=$san "$@"; }

t_expect install__make_install_succeeds_from_the_built_tree 0 mk install PREFIX="$P"

# The user's programs; lscat-gpuinfo, lscat-seer-gpu, lscat-mcts-spmv and lscat-mpi only where
# the build made them (nvcc, and Open MPI for the last two; no sanitizers for lscat-mcts-spmv).
want="lscat lscat-dataset lscat-execute lscat-harvest lscat-init lscat-isolate lscat-mcts lscat-nightly lscat-runner lscat-seer lscat-status lscat-sweep lscat-tune"
[ -x "$LSCAT_BIN/lscat-gpuinfo" ] && want="$want lscat-gpuinfo"
[ -x "$LSCAT_BIN/lscat-seer-gpu" ] && want="$want lscat-seer-gpu"
[ -x "$LSCAT_BIN/lscat-mcts-spmv" ] && want="$want lscat-mcts-spmv"
[ -x "$LSCAT_BIN/lscat-mpi" ] && want="$want lscat-mpi"
want=$(tr ' ' '\n' <<<"$want" | sort | tr '\n' ' ')
got=$(cd "$P" && find . -type f -o -type l | sort | tr '\n' ' ')
share="./share/lscat/isolate/compat/helper_cuda.h ./share/lscat/isolate/compat/helper_functions.h ./share/lscat/isolate/compat/helper_string.h ./share/lscat/isolate/compat/helper_timer.h ./share/lscat/isolate/compat/lscat_texref.h ./share/lscat/isolate/harness_core.cu ./share/lscat/isolate/harness_core.h ./share/lscat/tune/nvml_dl.h ./share/lscat/tune/stats.c ./share/lscat/tune/sweep_driver.h ./share/lscat/tune/sweep_host.cu ./share/lscat/tune/timing.cu ./share/lscat/tune/timing.h"
exp=$( (for b in $want; do echo "./bin/$b"; done; tr ' ' '\n' <<<"$share") | sort | tr '\n' ' ')
[ "$got" = "$exp" ] && t_ok install__installs_exactly_the_user_programs_the_timing_core_and_the_compat_headers ||
    t_fail install__installs_exactly_the_user_programs_the_timing_core_and_the_compat_headers "installed: $got; expected: $exp"
for f in "$P"/bin/*; do
    [ -x "$f" ] || t_fail install__installed_programs_are_executable "$f is not executable"
done

# A test program put among the installed ones is refused, and nothing is installed.
t_expect install__refuses_a_test_program_among_the_installed 2 \
    mk install PREFIX="$T_TMP/p2" PROGRAMS="$BUILD/tests/tune/support/fake_harness"
t_contains install__names_the_stray_test_program "$T_ERR" "TEST_PROGRAMS"
[ ! -e "$T_TMP/p2" ] && t_ok install__installs_nothing_when_refused ||
    t_fail install__installs_nothing_when_refused "$(find "$T_TMP/p2" | head -5)"

# The installed lscat runs the whole sample pipeline from the prefix.
export LSCAT_WORK=$T_TMP/work LSCAT_DB=$T_TMP/work/lscat.db
t_expect install__the_installed_lscat_runs_the_sample_pipeline 0 \
    env LSCAT_BIN="$P/bin" "$ROOT/scripts/run-sample.sh"
q() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$LSCAT_DB" "$1"; }
n=$(q "SELECT count(*) FROM kernels")
[ "$n" = 5 ] && t_ok install__the_installed_lscat_isolates_the_sample_kernels ||
    t_fail install__the_installed_lscat_isolates_the_sample_kernels "kernels: $n"
[ -s "$LSCAT_WORK/export/kernels.parquet" ] && t_ok install__the_installed_lscat_exports_the_dataset ||
    t_fail install__the_installed_lscat_exports_the_dataset "no $LSCAT_WORK/export/kernels.parquet"

# The timing core comes from <prefix>/share/lscat: a broken copy there breaks the next build
# (the core's hash changes, so every kernel is built again), and the error names that copy.
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
    chmod u+w "$P/share/lscat/tune/timing.cu"
    echo '#error "lscat install test: the installed copy was read"' >>"$P/share/lscat/tune/timing.cu"
    "$P/bin/lscat" execute --no-probe -j 1 >"$T_OUT" 2>"$T_ERR"
    t_contains install__execute_compiles_the_timing_core_from_the_prefix "$T_ERR" \
        "cannot compile the timing core ($P/bin/../share/lscat/tune/timing.cu)"
else
    t_skip install__execute_compiles_the_timing_core_from_the_prefix "no nvcc"
fi
t_done
