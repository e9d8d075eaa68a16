#!/usr/bin/env bash
# The SpMV back end's MPI exchange (sends, receives, waits, the CPU reference product) under a
# real Open MPI: `mpirun --oversubscribe -np 4` on this machine, no GPU needed.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
PROG=${LSCAT_TEST_BIN:-$ROOT/build/tests}/mcts/mpi/exchange
if ! command -v mpirun >/dev/null; then
    t_skip "mcts_mpi__exchange" "no mpirun (Debian's openmpi-bin, mk/deps.sh)"; t_done
fi
if [ ! -x "$PROG" ]; then
    t_skip "mcts_mpi__exchange" "$PROG not built (no mpicc)"; t_done
fi
# as root, Open MPI wants these; Open MPI's own leaks are suppressed by library
# (tests/support/lsan.supp), which needs full stacks (its components are dlclose()d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/support/lsan.supp:print_suppressions=0}
mpirun --oversubscribe -np 4 "$PROG" 2>"$T_ERR"
rc=$?
[ "$rc" = 0 ] || t_fail "mcts_mpi__exchange_under_mpirun_np_4" "mpirun exited $rc"
t_done
