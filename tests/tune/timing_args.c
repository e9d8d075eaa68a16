/* Tests of the timing options both tune commands pass to harnesses (tune/timing_args.c):
 * ranges are checked, flags take no value, and a repeated option replaces its first value, so
 * any number of repeats fits (`lscat sweep` once overflowed its array on the seventh). */
#include "tests/support/test.h"
#include "tune/timing_args.h"

#include "common/error.h"

#include <stdio.h>
#include <string.h>

static void joined(char *out, size_t size, const struct tune_timing_args *t)
{
    out[0] = 0;
    for (int i = 0; t->argv[i]; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "", t->argv[i]);
}

static void test_timing_args__keeps_each_option_with_its_value_in_order(void)
{
    struct tune_timing_args t = { .n = 0 };
    char s[256];
    CHECK_OK(tune_timing_args_add(&t, "--warmup", "3"));
    CHECK_OK(tune_timing_args_add(&t, "--l2-flush", NULL));
    CHECK_OK(tune_timing_args_add(&t, "--samples", "20"));
    CHECK_OK(tune_timing_args_add(&t, "--min-sample-ms", "0.5"));
    joined(s, sizeof(s), &t);
    CHECK_STR(s, "--warmup 3 --l2-flush --samples 20 --min-sample-ms 0.5");
    CHECK_INT(t.n, ==, 7);
}

static void test_timing_args__a_repeated_option_replaces_its_value_and_never_overflows(void)
{
    struct tune_timing_args t = { .n = 0 };
    char s[256], v[16][8];
    for (int i = 0; i < 16; i++) {
        snprintf(v[i], sizeof(v[i]), "%d", i + 1);
        CHECK_OK(tune_timing_args_add(&t, "--samples", v[i]));
        CHECK_OK(tune_timing_args_add(&t, "--no-graph", NULL));
    }
    CHECK_OK(tune_timing_args_add(&t, "--warmup", "0"));
    joined(s, sizeof(s), &t);
    CHECK_STR(s, "--samples 16 --no-graph --warmup 0");
}

static void test_timing_args__refuses_values_out_of_range_and_unknown_flags(void)
{
    struct tune_timing_args t = { .n = 0 };
    CHECK_INT(tune_timing_args_add(&t, "--samples", "0"), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "--samples");
    CHECK_INT(tune_timing_args_add(&t, "--target-rel-mad", "1.5"), ==, LSCAT_EINVALID);
    CHECK_INT(tune_timing_args_add(&t, "--warmup", "abc"), ==, LSCAT_EINVALID);
    CHECK_INT(tune_timing_args_add(&t, "--l2-flush", "1"), ==, LSCAT_EINVALID);
    CHECK_INT(tune_timing_args_add(&t, "--samples", NULL), ==, LSCAT_EINVALID);
    CHECK_INT(tune_timing_args_add(&t, "--bogus", NULL), ==, LSCAT_EINVALID);
    CHECK_INT(t.n, ==, 0);
    CHECK(t.argv[0] == NULL);
}

int main(void)
{
    TEST_RUN(test_timing_args__keeps_each_option_with_its_value_in_order);
    TEST_RUN(test_timing_args__a_repeated_option_replaces_its_value_and_never_overflows);
    TEST_RUN(test_timing_args__refuses_values_out_of_range_and_unknown_flags);
    return test_done();
}
