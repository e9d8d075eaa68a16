/* Probe runs on a real GPU (make test-gpu): fixture harnesses that succeed, fault, hang, crash
 * and write out of bounds are built, probed in the sandbox and classified; compute-sanitizer
 * flags the out-of-bounds one. Skips with "no CUDA device" elsewhere. */
#include "common/error.h"
#include "execute/execute.h"
#include "execute/probe.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = { "gpu_ok", "gpu_fault", "gpu_hang", "gpu_crash", "gpu_oob",
                                     NULL };
static struct fixture_env env;
static char ids[8][65];
static struct execute_counts counts;
static int ready;

static void test_gpu_probe__builds_and_probes_the_fixtures(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    for (int i = 0; names[i]; i++)
        CHECK_OK(fixture_add_kernel(&env, names[i], ids[i]));
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    o.jobs = 4;
    o.sanitize = 1;
    o.probe_timeout_s = 10;
    CHECK_OK(execute_run(&counts, env.s, env.work, &o, env.run_id));
    ready = 1;
    CHECK_INT(counts.probed, ==, 5);
    CHECK_INT(counts.runnable, ==, 2); /* gpu_ok and gpu_oob */
    /* the plain runs went through the probe runners (docs/execute.md "Probe runner"); the
     * fault, the hang and the crash each ended one */
    printf("# runner: %d starts, %d runs, %d ended, %d found the spare ready\n",
           counts.runner_starts, counts.runner_probe_runs, counts.runner_ended,
           counts.runner_spare_ready);
    CHECK(counts.runner_probe_runs >= 5);
    CHECK(counts.runner_ended >= 3);
}

static void check(int idx, const char *outcome, const char *detail, const char *sanitizer)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not complete");
    char *o = NULL, *d = NULL, *s = NULL;
    CHECK_OK(store_query_text(&o, env.s, "SELECT outcome FROM probes WHERE kernel_id = ?", "t",
                              ids[idx]));
    CHECK_OK(store_query_text(&d, env.s, "SELECT detail FROM probes WHERE kernel_id = ?", "t",
                              ids[idx]));
    CHECK_OK(store_query_text(&s, env.s, "SELECT sanitizer FROM probes WHERE kernel_id = ?", "t",
                              ids[idx]));
    printf("# %s: %s | %s | sanitizer %s\n", names[idx], o ? o : "-", d ? d : "-", s ? s : "-");
    CHECK_STR(o, outcome);
    if (detail)
        CHECK_CONTAINS(d, detail);
    if (sanitizer)
        CHECK_STR(s, sanitizer);
    free(o);
    free(d);
    free(s);
}

static void test_gpu_probe__a_good_kernel_is_runnable(void) { check(0, "ok", NULL, "clean"); }
static void test_gpu_probe__a_wild_pointer_is_an_illegal_address(void)
{
    check(1, "illegal_address", "illegal", NULL);
}
static void test_gpu_probe__a_hanging_kernel_times_out(void) { check(2, "timeout", NULL, NULL); }
static void test_gpu_probe__a_crashing_harness_is_a_crash(void) { check(3, "crash", "signal 11", NULL); }
static void test_gpu_probe__sanitizer_flags_an_out_of_bounds_write(void)
{
    check(4, "ok", NULL, "out_of_bounds");
}

int main(void)
{
    TEST_RUN(test_gpu_probe__builds_and_probes_the_fixtures);
    TEST_RUN(test_gpu_probe__a_good_kernel_is_runnable);
    TEST_RUN(test_gpu_probe__a_wild_pointer_is_an_illegal_address);
    TEST_RUN(test_gpu_probe__a_hanging_kernel_times_out);
    TEST_RUN(test_gpu_probe__a_crashing_harness_is_a_crash);
    TEST_RUN(test_gpu_probe__sanitizer_flags_an_out_of_bounds_write);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
