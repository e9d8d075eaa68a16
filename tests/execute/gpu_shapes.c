/* 2D kernels and block shapes on a real GPU (make test-gpu): the fixture gpu_tile2d (a fixed
 * 16x16 shared tile indexed by threadIdx.x/y) is built and probed by execute, first as a 1D
 * kernel would be (both probe shapes; the 256-thread 1D block overruns the tile), then with its
 * params saying is2d (2D blocks only: runnable); then the real `lscat tune` sweeps it with 2D
 * and 1D shapes and --max-failures 1: every shape that fails stickily at the smallest size is
 * skipped at the larger ones, the 2D shapes that fit the tile are measured at every size, and
 * the kernel is not given up. Skips with "no CUDA device" elsewhere. */
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "execute/probe.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARAMS_1D "{\"kernel\":\"k\",\"is2d\":false,\"params\":[]}"
#define PARAMS_2D "{\"kernel\":\"k\",\"is2d\":true,\"params\":[]}"

static struct fixture_env env;
static char id[65];
static int ready;

static char *text(const char *sql)
{
    char *v = NULL;
    CHECK_OK(store_query_text(&v, env.s, sql, "t", id));
    return v;
}

static int64_t count(const char *sql)
{
    int64_t v = -1;
    CHECK_OK(store_query_int(&v, env.s, sql, "t", id));
    return v;
}

static void probe_with(const char *params, struct execute_counts *c)
{
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    o.jobs = 2;
    o.probe_timeout_s = 30;
    CHECK_OK(store_run(env.s, "UPDATE kernels SET params = ? WHERE id = ?", "tt", params, id));
    CHECK_OK(store_run(env.s, "DELETE FROM probes WHERE kernel_id = ?", "t", id));
    CHECK_OK(execute_run(c, env.s, env.work, &o, env.run_id));
}

static void test_gpu_shapes__a_2d_tiled_kernel_is_runnable_with_the_2d_probe(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    CHECK_OK(fixture_add_kernel(&env, "gpu_tile2d", id));
    struct execute_counts c;
    probe_with(PARAMS_1D, &c);
    char *status = text("SELECT status FROM kernels WHERE id = ?");
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?");
    printf("# as a 1D kernel: %s, %s\n", status ? status : "-", tries ? tries : "-");
    free(status);
    free(tries);
    probe_with(PARAMS_2D, &c);
    CHECK_INT(c.probed, ==, 1);
    CHECK_INT(c.probed_2d, ==, 1);
    status = text("SELECT status FROM kernels WHERE id = ?");
    tries = text("SELECT bindings FROM probes WHERE kernel_id = ?");
    printf("# as a 2D kernel: %s, %s\n", status ? status : "-", tries ? tries : "-");
    CHECK_STR(status, "runnable");
    CHECK_CONTAINS(tries, "\"configs\":[\"64x64 16x16x1\"]");
    ready = 1;
    free(status);
    free(tries);
}

static void test_gpu_shapes__tune_skips_the_shapes_that_overrun_the_tile_and_keeps_the_kernel(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not make the kernel runnable");
    double t0 = fs_mono_s();
    int rc = fixture_run_tune(&env, "--sizes 240,496,1016 --blocks 8x8,16x16,32x32,64,256,1024 "
                                    "--max-failures 1 --samples 3 --min-sample-ms 0.2");
    double took = fs_mono_s() - t0;
    char *counts = NULL;
    CHECK_OK(store_query_text(&counts, env.s, "SELECT counts FROM stage_runs WHERE stage = "
                              "'tune' ORDER BY id DESC LIMIT 1", NULL));
    printf("# tune: exit %d in %.2f s: %s\n", rc, took, counts ? counts : "-");
    free(counts);
    CHECK_INT(rc, ==, 0);
    CHECK_INT(count("SELECT count(*) FROM tune_kernels WHERE kernel_id = ? AND status = 'done'"),
              ==, 1);
    /* the shapes that fit the tile, at every size */
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = 'ok' AND "
                    "block_x <= 16 AND block_y = block_x AND median_ns > 0"), ==, 6);
    /* every shape that failed did so once, at the smallest size, and was skipped above it */
    int64_t failed = count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = "
                           "'cuda_error'");
    int64_t failed_small = count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND "
                                 "status = 'cuda_error' AND width = 240");
    int64_t skipped = count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = "
                            "'skipped' AND error LIKE '%at 240x240:%'");
    int64_t one_d = count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND block_y = 1 "
                          "AND status = 'cuda_error'");
    printf("# %lld shapes failed stickily (%lld 1D), %lld configurations skipped\n",
           (long long)failed, (long long)one_d, (long long)skipped);
    CHECK(one_d >= 1); /* the fixture's overrun faults with 1D blocks */
    CHECK_INT(failed, ==, failed_small);
    CHECK_INT(skipped, ==, 2 * failed);
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ?"), ==, 18);
}

int main(void)
{
    TEST_RUN(test_gpu_shapes__a_2d_tiled_kernel_is_runnable_with_the_2d_probe);
    TEST_RUN(test_gpu_shapes__tune_skips_the_shapes_that_overrun_the_tile_and_keeps_the_kernel);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
