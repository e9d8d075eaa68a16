/* --build-batch on a real GPU (make test-gpu; docs/execute.md "Batched builds"): golden kernels
 * from tests/isolate/fixtures/harness-golden built alone in one store and in batches in
 * another, then probed: every kernel gets the same verdict, binding and block in both (the
 * batched harness runs its own kernel, whatever else its module holds), and `lscat tune`
 * (lscat-runner, harness.so) measures the same configurations ok in both.
 * Skips with "no CUDA device" elsewhere. */
#include "common/error.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = { "saxpy", "matmul_square", "transpose", "add_positions",
                                     "tile32x4", "tile_gemm64", "head_sums", "softmax_rows",
                                     "warp_rows", "strided_copy" };
#define NK 10
static struct fixture_env alone, batched;
static char ids[NK][65];
static struct execute_counts ca, cb;
static int ready;

static void need_probes(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe runs did not complete");
}

static void test_gpu_batch__batched_and_alone_probe_the_same(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&alone));
    CHECK_OK(fixture_env_init(&batched));
    for (int i = 0; i < NK; i++) {
        char *seed = xasprintf("gpu_batch:%s", names[i]);
        CHECK_OK(fixture_add_golden(&alone, names[i], seed, 2, ids[i]));
        CHECK_OK(fixture_add_golden(&batched, names[i], seed, 2, ids[i]));
        free(seed);
    }
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    o.jobs = 4;
    o.probe_timeout_s = 30;
    o.build_batch = 1;
    CHECK_OK(execute_run(&ca, alone.s, alone.work, &o, alone.run_id));
    o.build_batch = 8;
    CHECK_OK(execute_run(&cb, batched.s, batched.work, &o, batched.run_id));
    ready = 1;
    printf("# alone: %d runnable of %d probed; batched: %d runnable of %d probed, %d kernels "
           "in %d batches\n", ca.runnable, ca.probed, cb.runnable, cb.probed, cb.batched,
           cb.batches);
    CHECK_INT(cb.batched, >=, 2);
    CHECK_INT(cb.probed, ==, ca.probed);
    CHECK_INT(cb.runnable, ==, ca.runnable);
}

static void test_gpu_batch__every_verdict_binding_and_block_is_the_same(void)
{
    need_probes();
    const char *sql = "SELECT k.status || '|' || p.outcome || '|' || coalesce(p.binding, '') "
                      "|| '|' || coalesce(json_extract(p.bindings, '$[' || (json_array_length(p.bindings) - 1) || "
                      "'].block'), '') FROM "
                      "kernels k JOIN probes p ON p.kernel_id = k.id WHERE k.id = ?";
    for (int i = 0; i < NK; i++) {
        char *a = fixture_query_text(&alone, sql, ids[i]);
        char *b = fixture_query_text(&batched, sql, ids[i]);
        printf("# %s: alone %s, batched %s\n", names[i], a ? a : "-", b ? b : "-");
        CHECK(a != NULL && b != NULL);
        if (a && b)
            CHECK_STR(b, a);
        free(a);
        free(b);
    }
}

static void test_gpu_batch__tune_measures_batched_kernels_as_alone(void)
{
    need_probes();
    const char *args = "--sizes 240,1016 --samples 3 --min-sample-ms 0.2";
    CHECK_INT(fixture_run_tune(&alone, args), ==, 0);
    CHECK_INT(fixture_run_tune(&batched, args), ==, 0);
    /* per kernel: the configurations measured ok (block shapes x sizes), in both stores */
    const char *sql = "SELECT count(*) || ' ok: ' || coalesce(group_concat(c, ' '), '') FROM "
                      "(SELECT width || 'x' || height || '/' || block_x || 'x' || block_y AS c "
                      "FROM measurements WHERE kernel_id = ? AND status = 'ok' ORDER BY c)";
    int measured = 0;
    for (int i = 0; i < NK; i++) {
        char *a = fixture_query_text(&alone, sql, ids[i]);
        char *b = fixture_query_text(&batched, sql, ids[i]);
        printf("# %s: alone %.40s | batched %.40s\n", names[i], a ? a : "-", b ? b : "-");
        CHECK(a != NULL && b != NULL);
        if (a && b) {
            CHECK_STR(b, a);
            measured += strncmp(b, "0 ok", 4) != 0;
        }
        free(a);
        free(b);
    }
    CHECK_INT(measured, >=, 5);
}

int main(void)
{
    TEST_RUN(test_gpu_batch__batched_and_alone_probe_the_same);
    TEST_RUN(test_gpu_batch__every_verdict_binding_and_block_is_the_same);
    TEST_RUN(test_gpu_batch__tune_measures_batched_kernels_as_alone);
    fixture_env_release(&alone);
    fixture_env_release(&batched);
    return test_done();
}
