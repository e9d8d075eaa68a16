/* Kernels written for one launch on a real GPU (make test-gpu; issue #14, P1/P4): the golden
 * kernels tile32x4 (a 32x4 shared tile, asserted: every shape of the probe and of the fixed
 * retry list fails) and big_shared (16384 floats staged in dynamic shared memory: it needs the
 * 64 KiB its source launches it with, above the 48 KiB default) from
 * tests/isolate/fixtures/harness-golden are built and probed by execute: both must run, with
 * the source's own launch (params.json "launch"); then the real `lscat tune` measures them
 * with that launch. Skips with "no CUDA device" elsewhere. */
#include "common/error.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = { "tile32x4", "big_shared" };
static const int param_counts[] = { 4, 3 };
static struct fixture_env env;
static char ids[2][65];
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

static void test_gpu_launch__execute_probes_both_kernels_runnable(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    for (int i = 0; i < 2; i++) {
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
    printf("# runnable %d, reblocked %d\n", c.runnable, c.reblocked);
    CHECK_INT(c.runnable, ==, 2);
}

static void test_gpu_launch__a_fixed_block_tile_runs_with_the_sources_block(void)
{
    need_probes();
    char *d = text("SELECT detail FROM probes WHERE kernel_id = ? AND outcome = 'ok'", ids[0]);
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[0]);
    printf("# tile32x4: %s | %s\n", d ? d : "-", tries ? tries : "-");
    CHECK_CONTAINS(d, "block 32x4x1 (the source's launch); with the probe's own blocks: ");
    CHECK(strstr(tries, "8x8x1") == NULL); /* the source's block came first */
    free(d);
    free(tries);
}

static void test_gpu_launch__a_kernel_needing_64_kib_of_shared_memory_runs(void)
{
    need_probes();
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[1]);
    char *out = text("SELECT outcome FROM probes WHERE kernel_id = ?", ids[1]);
    printf("# big_shared: %s | %s\n", out ? out : "-", tries ? tries : "-");
    CHECK_STR(out, "ok"); /* 256x1 with 64 KiB: opted in, else `invalid argument` */
    free(tries);
    free(out);
}

static void test_gpu_launch__tune_measures_the_sources_launch(void)
{
    need_probes();
    CHECK_INT(fixture_run_tune(&env, "--sizes 240,1016 --samples 3 --min-sample-ms 0.2"), ==, 0);
    CHECK_INT(count("SELECT count(DISTINCT width) FROM measurements WHERE kernel_id = ? AND "
                    "status = 'ok' AND block_x = 32 AND block_y = 4", ids[0]), ==, 2);
    CHECK_INT(count("SELECT count(DISTINCT width) FROM measurements WHERE kernel_id = ? AND "
                    "status = 'ok' AND block_x = 256 AND block_y = 1", ids[1]), ==, 2);
    /* tile32x4's assert holds every other shape off */
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = 'ok' "
                    "AND NOT (block_x = 32 AND block_y = 4)", ids[0]), ==, 0);
}

int main(void)
{
    TEST_RUN(test_gpu_launch__execute_probes_both_kernels_runnable);
    TEST_RUN(test_gpu_launch__a_fixed_block_tile_runs_with_the_sources_block);
    TEST_RUN(test_gpu_launch__a_kernel_needing_64_kib_of_shared_memory_runs);
    TEST_RUN(test_gpu_launch__tune_measures_the_sources_launch);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
