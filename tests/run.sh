#!/usr/bin/env bash
# The test runner behind `make test`: runs every unit-test program ($LSCAT_TEST_BIN/<dir>/*)
# and every end-to-end script (tests/e2e/*.sh), prints their result lines, and ends with
# "N passed, N failed" (", N skipped" when some skip). Exit 1 when any test failed.
# LSCAT_GPU_ONLY=1 (make test-gpu) runs only the GPU tests: programs and scripts named gpu_*;
# LSCAT_TEST_ONLY=GLOB only those whose base name (gpu_tune.sh, runner) matches GLOB.
# A program that dies without reporting counts as one failure, with its stderr shown.
set -u
cd "$(dirname "$0")/.."
TEST_BIN=${LSCAT_TEST_BIN:-build/tests}
export LSCAT_BIN=$(cd "${LSCAT_BIN:-build/bin}" && pwd)
export LSCAT_ROOT=$PWD
# Sanitizer builds (make SANITIZE=1 test): every process a test starts, however deep, writes
# its ASan/LSan report to $tmp/san/report.<pid> (log_path) and exits SAN_EXIT; UBSan halts on
# the first report and exits SAN_EXIT too. A report file left after a test, or a UBSan
# "runtime error:" in what the test printed, fails that test even when a script swallowed the
# child's exit status (an expected exit 1, a `|| true`, a stage whose parent retries it).
# gcc's UBSan runs as a plugin of ASan with a report file of its own: it ignores log_path and
# always prints to stderr, so a swallowed exit with a hidden stderr is the one case not seen.
# Options given from outside come first; ours, appended, win. LSAN_OPTIONS names the
# suppression file of third-party leaks (tests/support/lsan.supp, set by the Makefile).
SAN_EXIT=88
san_dir=$(mktemp -d)
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}:log_path=$san_dir/report:exitcode=$SAN_EXIT"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}:halt_on_error=1:exitcode=$SAN_EXIT"
export LSCAT_NO_PROGRESS=1
TIMEOUT_S=${LSCAT_TEST_TIMEOUT_S:-900}
# The stand-in GPUs of the tests have the same uuids in every clone: a private lock folder keeps
# two `make test` runs on one machine from waiting on each other's GPU locks. GPU tests keep the
# machine's own folder (they share real GPUs with whatever else runs there).

pass=0 fail=0 skip=0
failures=()
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$san_dir"' EXIT
[ "${LSCAT_GPU_ONLY:-0}" = 1 ] || export LSCAT_LOCK_DIR=$tmp/locks

run_one() { # name, command...
    local name=$1; shift
    local out=$tmp/out err=$tmp/err rc
    timeout -k 10 "$TIMEOUT_S" "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    local p f s
    p=$(grep -c '^ok - ' "$out")
    f=$(grep -c '^not ok - ' "$out")
    s=$(grep -c '^skip - ' "$out")
    grep -E '^(ok|not ok|skip) - ' "$out"
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    if [ "$f" -gt 0 ]; then
        while IFS= read -r l; do failures+=("$l"); done < <(grep '^not ok - ' "$out")
        sed 's/^/    | /' "$err" | tail -n 30
    fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        fail=$((fail + 1))
        local why="exited with status $rc"
        [ "$rc" -eq 124 ] && why="timed out after ${TIMEOUT_S}s"
        [ "$rc" -eq "$SAN_EXIT" ] && why="exited $SAN_EXIT (a sanitizer report)"
        [ "$rc" -gt 128 ] && why="killed by signal $((rc - 128))"
        echo "not ok - $name: $why without reporting a failure"
        failures+=("not ok - $name: $why")
        sed 's/^/    | /' "$err" | tail -n 30
    fi
    sanitizer_reports "$name" "$out" "$err"
}

# Fails NAME once for the sanitizer reports its run left (files in $san_dir, UBSan lines in
# its output), showing the start of each; then clears them for the next test.
sanitizer_reports() { # name, out, err
    local name=$1 r n
    local reports=("$san_dir"/report.*)
    [ -e "${reports[0]}" ] || reports=()
    n=${#reports[@]}
    local ub
    ub=$(grep -h -m 3 ': runtime error: ' "$2" "$3")
    [ "$n" -eq 0 ] && [ -z "$ub" ] && return 0
    fail=$((fail + 1))
    local why="$n sanitizer report(s) from its processes"
    [ -n "$ub" ] && why="${why}, UBSan: $(echo "$ub" | head -n 1)"
    echo "not ok - $name: $why"
    failures+=("not ok - $name: $why")
    for r in "${reports[@]}"; do
        echo "    | == ${r##*/}"
        sed -e '/^Shadow bytes around/,$d' -e '/^$/d' "$r" | head -n 30 | sed 's/^/    | /'
    done
    rm -f "${reports[@]}"
}

gpu_filter() { # prints 1 when the name should run in this mode
    local base=$1
    # LSCAT_TEST_ONLY=GLOB: only the programs and scripts whose base name matches (a GPU suite
    # split over two device calls: LSCAT_TEST_ONLY='gpu_[m-z]*')
    # shellcheck disable=SC2053
    [ -z "${LSCAT_TEST_ONLY:-}" ] || [[ $base == ${LSCAT_TEST_ONLY} ]] || return 1
    if [ "${LSCAT_GPU_ONLY:-0}" = 1 ]; then
        case "$base" in gpu_*) return 0 ;; *) return 1 ;; esac
    fi
    return 0
}

for t in $(find "$TEST_BIN" -mindepth 2 -maxdepth 2 -type f -perm -u+x 2>/dev/null | sort); do
    gpu_filter "$(basename "$t")" || continue
    run_one "${t#"$TEST_BIN"/}" "$t"
done
for t in tests/e2e/*.sh; do
    [ -e "$t" ] || continue
    case "$(basename "$t")" in lib.sh) continue ;; esac
    gpu_filter "$(basename "$t")" || continue
    run_one "$t" bash "$t"
done

if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "failed:"
    printf '  %s\n' "${failures[@]}"
fi
summary="$pass passed, $fail failed"
[ "$skip" -gt 0 ] && summary="$summary, $skip skipped"
echo "$summary"
[ "$fail" -eq 0 ]
