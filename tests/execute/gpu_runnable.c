/* The runnable share's two probe fixes on a real GPU (make test-gpu; issue #14): the golden
 * kernels add_positions (a transformer's B, T, C, asserting C % 4 == 0: fails under `area`,
 * where C is 1) and tile_reverse (a 128-value shared tile and __launch_bounds__(128): the
 * probe's 256x1 and 16x16 blocks fail at launch) from tests/isolate/fixtures/harness-golden are
 * built and probed by execute: add_positions must run under `tokens`, tile_reverse with the
 * retried block 128x1x1; then the real `lscat tune` measures both at two sizes with ok rows.
 * warp_rows asserts its 32x8 block (params.json "block_eq"): none of the probe's own blocks is
 * run, only 32x8 (docs/execute.md "Block retry").
 * Skips with "no CUDA device" elsewhere. */
#include "common/error.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = { "add_positions", "tile_reverse", "warp_rows" };
static const int param_counts[] = { 6, 3, 3 };
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

static void test_gpu_runnable__execute_probes_the_golden_kernels(void)
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
    printf("# runnable %d, rebound %d, reblocked %d\n", c.runnable, c.rebound, c.reblocked);
    CHECK_INT(c.runnable, ==, 3);
    CHECK_INT(c.reblocked, ==, 2);
}

static void test_gpu_runnable__a_transformer_kernel_runs_under_tokens(void)
{
    need_probes();
    char *b = text("SELECT binding FROM kernels WHERE id = ? AND status = 'runnable'", ids[0]);
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[0]);
    printf("# add_positions: %s | %s\n", b ? b : "-", tries ? tries : "-");
    CHECK_STR(b, "tokens");
    CHECK_CONTAINS(tries, "{\"binding\":\"area\",\"outcome\":\"cuda_error\",\"detail\":"
                          "\"device-side assert triggered");
    free(b);
    free(tries);
}

static void test_gpu_runnable__a_kernel_for_128_threads_runs_with_the_retried_block(void)
{
    need_probes();
    char *d = text("SELECT detail FROM probes WHERE kernel_id = ? AND outcome = 'ok'", ids[1]);
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[1]);
    printf("# tile_reverse: %s | %s\n", d ? d : "-", tries ? tries : "-");
    /* __launch_bounds__(128): the probe's own 256-thread blocks are not run */
    CHECK_CONTAINS(d, "block 128x1x1; with the probe's own blocks: not run, over its "
                      "__launch_bounds__");
    CHECK_CONTAINS(tries, "\"block\":\"128x1x1\",\"configs\":[\"1024x1 128x1x1\"");
    free(d);
    free(tries);
}

static void test_gpu_runnable__a_kernel_asserting_its_block_runs_with_it_alone(void)
{
    need_probes();
    char *d = text("SELECT detail FROM probes WHERE kernel_id = ? AND outcome = 'ok'", ids[2]);
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[2]);
    printf("# warp_rows: %s | %s\n", d ? d : "-", tries ? tries : "-");
    CHECK_CONTAINS(d, "block 32x8x1; with the probe's own blocks: not run, against its block "
                      "assert");
    CHECK(tries && strstr(tries, "16x16x1") == NULL && strstr(tries, "8x8x1\"") == NULL);
    CHECK(tries && strstr(tries, "device-side assert") == NULL);
    free(d);
    free(tries);
}

static void test_gpu_runnable__tune_measures_both(void)
{
    need_probes();
    CHECK_INT(fixture_run_tune(&env, "--sizes 240,1016 --samples 3 --min-sample-ms 0.2"), ==, 0);
    for (int i = 0; i < 2; i++) {
        int64_t ok = count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND "
                           "status = 'ok'", ids[i]);
        int64_t sizes = count("SELECT count(DISTINCT width) FROM measurements WHERE "
                              "kernel_id = ? AND status = 'ok'", ids[i]);
        printf("# %s: %lld ok rows over %lld sizes\n", names[i], (long long)ok, (long long)sizes);
        CHECK_INT(sizes, ==, 2);
    }
    /* tile_reverse: no block over 128 threads measured ok */
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = 'ok' "
                    "AND block_x * block_y > 128", ids[1]), ==, 0);
}

int main(void)
{
    TEST_RUN(test_gpu_runnable__execute_probes_the_golden_kernels);
    TEST_RUN(test_gpu_runnable__a_transformer_kernel_runs_under_tokens);
    TEST_RUN(test_gpu_runnable__a_kernel_for_128_threads_runs_with_the_retried_block);
    TEST_RUN(test_gpu_runnable__a_kernel_asserting_its_block_runs_with_it_alone);
    TEST_RUN(test_gpu_runnable__tune_measures_both);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
