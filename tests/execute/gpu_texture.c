/* Textures on a real GPU (make test-gpu; issue #14, B3 and P6): the golden kernels of
 * tests/isolate/fixtures/textures are built and probed by execute. texref_scale (tex1Dfetch)
 * and texref_sum2d (tex2D of float4) read texture references, which build only after the
 * texture_object repair; tex_gather (tex1Dfetch<float>) and tex_blur (tex2D<unsigned char>)
 * take a cudaTextureObject_t the harness must bind (a 0 handle faults). All four must be
 * runnable. Skips with "no CUDA device" elsewhere. */
#include "common/error.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = { "texref_scale", "texref_sum2d", "tex_gather", "tex_blur" };
static const int param_counts[] = { 2, 3, 3, 4 };
enum { N = 4 };
static struct fixture_env env;
static char ids[N][65];
static int ready;

static void need_probes(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not complete");
}

static void test_gpu_texture__execute_probes_the_texture_kernels(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    for (int i = 0; i < N; i++) {
        char *seed = xasprintf("golden-gpu-tex:%s", names[i]);
        CHECK_OK(fixture_add_golden(&env, names[i], seed, param_counts[i], ids[i]));
        free(seed);
    }
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.probe_timeout_s = 60;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    ready = 1;
    printf("# built %d first try, %d after repair; runnable %d of %d\n", c.built_first_try,
           c.built_after_repair, c.runnable, N);
    CHECK_INT(c.build_failed, ==, 0);
}

static void check_runnable(int i)
{
    need_probes();
    char *status = fixture_query_text(&env, "SELECT status FROM kernels WHERE id = ?", ids[i]);
    char *probe = fixture_query_text(&env, "SELECT outcome || ' ' || COALESCE(detail, '') "
                                           "FROM probes WHERE kernel_id = ? LIMIT 1", ids[i]);
    printf("# %s: %s (last probe: %s)\n", names[i], status ? status : "?", probe ? probe : "none");
    CHECK_STR(status, "runnable");
    free(status);
    free(probe);
}

static void test_gpu_texture__a_tex1dfetch_reference_runs_after_the_repair(void)
{
    check_runnable(0);
}

static void test_gpu_texture__a_tex2d_float4_reference_runs_after_the_repair(void)
{
    check_runnable(1);
}

static void test_gpu_texture__a_linear_texture_object_parameter_runs(void)
{
    check_runnable(2);
}

static void test_gpu_texture__a_pitched_2d_texture_object_parameter_runs(void)
{
    check_runnable(3);
}

int main(void)
{
    TEST_RUN(test_gpu_texture__execute_probes_the_texture_kernels);
    TEST_RUN(test_gpu_texture__a_tex1dfetch_reference_runs_after_the_repair);
    TEST_RUN(test_gpu_texture__a_tex2d_float4_reference_runs_after_the_repair);
    TEST_RUN(test_gpu_texture__a_linear_texture_object_parameter_runs);
    TEST_RUN(test_gpu_texture__a_pitched_2d_texture_object_parameter_runs);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
