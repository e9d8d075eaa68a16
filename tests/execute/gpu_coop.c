/* A grid-wide barrier on a real GPU (make test-gpu; issue #14, P7): the golden grid_sum of
 * tests/isolate/fixtures/harness-golden (cooperative_groups' grid.sync() between block partial
 * sums and their total, which the kernel asserts against a sequential sum) is marked
 * "cooperative" by isolate; execute builds and probes it (a plain launch fails at the barrier:
 * `unspecified launch failure`), and `lscat tune` measures it with cudaLaunchCooperativeKernel
 * on grids cut to the co-resident blocks. bucket_sums (a loop bound read from an int4 input, as
 * llm.c's wte_backward_kernel does) probes ok: the harness fills integer vectors as integers.
 * Skips with "no CUDA device" elsewhere. */
#include "common/error.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fixture_env env;
static char id[65], bucket_id[65];
static int ready;

static int64_t count(const char *sql) { return fixture_query_int(&env, sql, id); }

static void need_probe(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not complete");
}

static void test_gpu_coop__a_grid_sync_reduction_probes_runnable(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    CHECK_OK(fixture_add_golden(&env, "grid_sum", "golden:grid_sum", 4, id));
    CHECK_OK(fixture_add_golden(&env, "bucket_sums", "golden:bucket_sums", 4, bucket_id));
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 1;
    o.probe_timeout_s = 30;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    ready = 1;
    char *d = fixture_query_text(&env, "SELECT outcome || ': ' || COALESCE(detail, '') || ' | ' "
                                 "|| COALESCE(bindings, '') FROM probes WHERE kernel_id = ?", id);
    printf("# grid_sum: %s\n", d ? d : "-");
    free(d);
    CHECK_INT(c.runnable, ==, 2);
}

static void test_gpu_coop__a_loop_bound_from_an_int4_input_ends(void)
{
    need_probe();
    char *out = fixture_query_text(&env, "SELECT outcome || ': ' || COALESCE(detail, '') FROM "
                                   "probes WHERE kernel_id = ?", bucket_id);
    printf("# bucket_sums: %s\n", out ? out : "-");
    CHECK_CONTAINS(out, "ok: ");
    free(out);
}

/* Every configuration ran the barrier and the kernel's own assert (partials against a
 * sequential sum) held: no CUDA error; the reference block's rows match at both sizes. */
static void test_gpu_coop__tune_measures_it_and_the_sum_is_right(void)
{
    need_probe();
    CHECK_INT(fixture_run_tune(&env, "--sizes 240,1016 --samples 3 --min-sample-ms 0.2"), ==, 0);
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = 'ok'"), >, 0);
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = 'cuda_error'"),
              ==, 0);
    CHECK_INT(count("SELECT count(DISTINCT width) FROM measurements WHERE kernel_id = ? AND "
                    "status = 'ok' AND output_check = 'match' AND block_x = 256 AND block_y = 1"),
              ==, 2);
}

/* At 1016x1016 a 256-thread block would need 4,032 blocks: more than any GPU holds at once,
 * so the grid run (recorded with the row) is the co-resident one. */
static void test_gpu_coop__a_grid_larger_than_the_coresident_blocks_is_cut(void)
{
    need_probe();
    int64_t gx = count("SELECT max(grid_x * grid_y) FROM measurements WHERE kernel_id = ? AND "
                       "width = 1016 AND block_x = 256 AND block_y = 1 AND status = 'ok'");
    printf("# grid at 1016x1016, block 256: %lld blocks\n", (long long)gx);
    CHECK_INT(gx, >, 0);
    CHECK_INT(gx, <, 4032);
}

int main(void)
{
    TEST_RUN(test_gpu_coop__a_grid_sync_reduction_probes_runnable);
    TEST_RUN(test_gpu_coop__a_loop_bound_from_an_int4_input_ends);
    TEST_RUN(test_gpu_coop__tune_measures_it_and_the_sum_is_right);
    TEST_RUN(test_gpu_coop__a_grid_larger_than_the_coresident_blocks_is_cut);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
