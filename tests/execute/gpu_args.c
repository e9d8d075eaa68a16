/* Kernel arguments on a real GPU (make test-gpu; issue #14, P2 and P5): golden kernels of
 * tests/isolate/fixtures/harness-golden built and probed by execute. softmax_rows (attention
 * scores (N, T, T) asserting T % 4 == 0, read as float4) and head_sums (B, T, C, NH asserting
 * C % 128 == 0 and C % NH == 0) must run under `tokens` after failing under `area`;
 * count_by_ref (a struct by reference), walk_list (a linked list walked through its links) and
 * locked_add (a spin lock in a struct passed by value) must run under `area`. Skips with
 * "no CUDA device" elsewhere. */
#include "common/error.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NKERNELS 5
static const char *const names[NKERNELS] = { "softmax_rows", "head_sums", "count_by_ref",
                                              "walk_list", "locked_add" };
static const int param_counts[NKERNELS] = { 4, 6, 1, 3, 3 };
static struct fixture_env env;
static char ids[NKERNELS][65];
static int ready;

static char *text(const char *sql, const char *id) { return fixture_query_text(&env, sql, id); }

static void need_probes(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not complete");
}

static void test_gpu_args__execute_probes_the_golden_kernels(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    for (int i = 0; i < NKERNELS; i++) {
        char *seed = xasprintf("golden:%s", names[i]);
        CHECK_OK(fixture_add_golden(&env, names[i], seed, param_counts[i], ids[i]));
        free(seed);
    }
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.probe_timeout_s = 60;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    ready = 1;
    printf("# runnable %d of %d\n", c.runnable, NKERNELS);
    CHECK_INT(c.runnable, ==, NKERNELS);
}

/* Kernel i is runnable under `binding`; under tokens its area try failed first. */
static void check_binding(int i, const char *binding)
{
    need_probes();
    char *b = text("SELECT binding FROM kernels WHERE id = ? AND status = 'runnable'", ids[i]);
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[i]);
    printf("# %s: %s | %s\n", names[i], b ? b : "-", tries ? tries : "-");
    CHECK_STR(b, binding);
    if (!strcmp(binding, "tokens"))
        CHECK_CONTAINS(tries, "{\"binding\":\"area\",\"outcome\":\"cuda_error\",\"detail\":"
                              "\"device-side assert triggered");
    free(b);
    free(tries);
}

static void test_gpu_args__attention_scores_run_under_tokens(void) { check_binding(0, "tokens"); }
static void test_gpu_args__heads_of_aligned_channels_run_under_tokens(void)
{
    check_binding(1, "tokens");
}
static void test_gpu_args__a_struct_by_reference_runs(void) { check_binding(2, "area"); }
static void test_gpu_args__a_linked_list_walk_runs(void) { check_binding(3, "area"); }
static void test_gpu_args__a_spin_lock_in_a_struct_opens(void) { check_binding(4, "area"); }

int main(void)
{
    TEST_RUN(test_gpu_args__execute_probes_the_golden_kernels);
    TEST_RUN(test_gpu_args__attention_scores_run_under_tokens);
    TEST_RUN(test_gpu_args__heads_of_aligned_channels_run_under_tokens);
    TEST_RUN(test_gpu_args__a_struct_by_reference_runs);
    TEST_RUN(test_gpu_args__a_linked_list_walk_runs);
    TEST_RUN(test_gpu_args__a_spin_lock_in_a_struct_opens);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
