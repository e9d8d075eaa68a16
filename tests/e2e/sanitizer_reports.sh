#!/usr/bin/env bash
# The test runner (tests/run.sh) fails a test for a sanitizer report in any process it starts,
# even one whose exit status the test swallows: a copy of the runner in a scratch tree runs a
# unit-test program and an e2e script that start a canary built here with ASan+UBSan (a leak,
# a heap overflow, a signed overflow) and ignore its exit; a clean run passes. The runner must
# still end with its "N passed, N failed" line and exit non-zero.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
R=$T_TMP/root
mkdir -p "$R/tests/e2e" "$R/bin" "$R/tb/x"
cp "$ROOT/tests/run.sh" "$R/tests/"
cp "$ROOT/tests/e2e/lib.sh" "$R/tests/e2e/"
cat >"$T_TMP/canary.c" <<'C'
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "clean";
    volatile int big = INT_MAX;
    char *p = malloc(8);
    if (!strcmp(what, "overflow"))
        p[8 + (argc > 5)] = 1;
    if (!strcmp(what, "ub"))
        printf("%d\n", big + argc);
    if (strcmp(what, "leak"))
        free(p);
    return 0;
}
C
if ! cc -fsanitize=address,undefined -fno-sanitize-recover=undefined -g \
        -o "$R/bin/canary" "$T_TMP/canary.c" 2>"$T_ERR"; then
    t_fail sanitizer__canary_builds "cc failed"; t_done
fi
# a unit-test program and an e2e script; each starts the canary and swallows its exit
unit() {
    cat >"$R/tb/x/unit" <<SH
#!/usr/bin/env bash
"$R/bin/canary" $1 || true
echo "ok - unit_$1"
SH
    chmod 755 "$R/tb/x/unit"
}
e2e() {
    cat >"$R/tests/e2e/script.sh" <<SH
. "\$(dirname "\$0")/lib.sh"
"$R/bin/canary" $1 >/dev/null 2>"\$T_ERR"; t_ok script_$1_child_started
t_done
SH
}
runner() { # name, want exit, what the unit program does, what the script does
    unit "$3"; e2e "$4"
    (cd "$R" && env -u ASAN_OPTIONS -u UBSAN_OPTIONS LSCAT_BIN="$R/bin" LSCAT_TEST_BIN="$R/tb" \
        bash tests/run.sh) >"$T_TMP/$1.out" 2>&1
    local rc=$?
    if [ "$rc" = "$2" ]; then t_ok "$1"; else
        t_fail "$1" "the runner exited $rc, expected $2: $(tail -n 20 "$T_TMP/$1.out" | tr '\n' ' ')"
    fi
}
runner sanitizer__a_clean_run_passes 0 clean clean
t_contains sanitizer__a_clean_run_says_2_passed "$T_TMP/sanitizer__a_clean_run_passes.out" "2 passed, 0 failed"
runner sanitizer__a_leak_in_a_child_of_a_unit_test_fails_the_run 1 leak clean
t_contains sanitizer__the_leak_is_reported "$T_TMP/sanitizer__a_leak_in_a_child_of_a_unit_test_fails_the_run.out" \
    "ERROR: LeakSanitizer: detected memory leaks"
t_contains sanitizer__the_leak_run_still_counts "$T_TMP/sanitizer__a_leak_in_a_child_of_a_unit_test_fails_the_run.out" \
    "2 passed, 1 failed"
runner sanitizer__a_heap_overflow_in_a_child_of_a_script_fails_the_run 1 clean overflow
t_contains sanitizer__the_overflow_is_reported "$T_TMP/sanitizer__a_heap_overflow_in_a_child_of_a_script_fails_the_run.out" \
    "ERROR: AddressSanitizer: heap-buffer-overflow"
runner sanitizer__undefined_behaviour_in_a_child_fails_the_run 1 ub clean
t_contains sanitizer__the_undefined_behaviour_is_reported "$T_TMP/sanitizer__undefined_behaviour_in_a_child_fails_the_run.out" \
    "signed integer overflow"
t_done
