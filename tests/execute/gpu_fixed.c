/* Kernels with hard-coded problem sizes on a real GPU (make test-gpu; issue #14, docs/isolate.md
 * "Fixed sizes"): the golden kernels fixed_scale (a persistent grid-stride loop over a fixed
 * 1024 x 1024 matrix on a grid of 2 x the SM count) and fixed_add (one element per thread of a
 * fixed 4096 vector on a constant 16 x 256 launch) from tests/isolate/fixtures/fixed are built
 * and probed by execute: fixed_scale runs under the fixed binding first (its source's buffers,
 * grid and block); fixed_add, whose work follows the grid and which runs clean at W x H, keeps
 * area and its sweep, as sized_scale (which takes its size) does. Then the real `lscat tune`
 * measures fixed_scale at its own size with one block only, its row saying binding fixed.
 * Skips with "no CUDA device" elsewhere. */
#include "common/error.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = { "fixed_scale", "fixed_add", "sized_scale" };
static const int param_counts[] = { 3, 2, 3 };
static struct fixture_env env;
static char ids[3][65];
static int ready;

static char *text(const char *sql, const char *id) { return fixture_query_text(&env, sql, id); }
static int64_t count(const char *sql, const char *id) { return fixture_query_int(&env, sql, id); }

static void need_probes(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not complete");
}

static void test_gpu_fixed__execute_probes_the_three_kernels_runnable(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    for (int i = 0; i < 3; i++) {
        char *seed = xasprintf("golden:%s", names[i]);
        CHECK_OK(fixture_add_golden(&env, names[i], seed, param_counts[i], ids[i]));
        free(seed);
    }
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.probe_timeout_s = 30;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    ready = 1;
    printf("# runnable %d\n", c.runnable);
    CHECK_INT(c.runnable, ==, 3);
}

static void test_gpu_fixed__a_persistent_kernel_runs_at_its_own_size(void)
{
    need_probes();
    char *b = text("SELECT binding FROM kernels WHERE id = ?", ids[0]);
    char *d = text("SELECT detail FROM probes WHERE kernel_id = ?", ids[0]);
    printf("# fixed_scale: %s | %s\n", b ? b : "-", d ? d : "-");
    CHECK_STR(b, "fixed");
    CHECK_CONTAINS(d, "fixed size 1024x1024 (the source's buffers, 8 MiB), block 256x1x1");
    free(b);
    free(d);
}

static void test_gpu_fixed__a_1d_kernel_running_at_w_times_h_keeps_its_sweep(void)
{
    need_probes();
    char *b = text("SELECT coalesce(binding, 'area') FROM kernels WHERE id = ?", ids[1]);
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[1]);
    printf("# fixed_add: %s | %s\n", b ? b : "-", tries ? tries : "-");
    CHECK_STR(b, "area");
    CHECK(strstr(tries, "\"fixed\"") == NULL); /* area ran clean first */
    free(b);
    free(tries);
}

static void test_gpu_fixed__a_kernel_taking_its_size_keeps_area(void)
{
    need_probes();
    char *b = text("SELECT coalesce(binding, 'area') FROM kernels WHERE id = ?", ids[2]);
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[2]);
    CHECK_STR(b, "area");
    CHECK(strstr(tries, "\"fixed\"") == NULL); /* never tried */
    free(b);
    free(tries);
}

static void test_gpu_fixed__tune_measures_one_size_with_the_sources_block(void)
{
    need_probes();
    CHECK_INT(fixture_run_tune(&env, "--sizes 240,1016 --samples 3 --min-sample-ms 0.2"), ==, 0);
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ?", ids[0]), ==, 1);
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = 'ok' AND "
                    "binding = 'fixed' AND width = 1024 AND height = 1024 AND block_x = 256 AND "
                    "block_y = 1 AND output_check = 'match'", ids[0]), ==, 1);
    /* the kernels measured at W x H are swept as before: both sizes */
    for (int i = 1; i < 3; i++)
        CHECK_INT(count("SELECT count(DISTINCT width) FROM measurements WHERE kernel_id = ? AND "
                        "status = 'ok' AND binding = 'area'", ids[i]), ==, 2);
}

int main(void)
{
    TEST_RUN(test_gpu_fixed__execute_probes_the_three_kernels_runnable);
    TEST_RUN(test_gpu_fixed__a_persistent_kernel_runs_at_its_own_size);
    TEST_RUN(test_gpu_fixed__a_1d_kernel_running_at_w_times_h_keeps_its_sweep);
    TEST_RUN(test_gpu_fixed__a_kernel_taking_its_size_keeps_area);
    TEST_RUN(test_gpu_fixed__tune_measures_one_size_with_the_sources_block);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
