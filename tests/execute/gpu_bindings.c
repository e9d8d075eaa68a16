/* Role bindings on a real GPU (make test-gpu): the golden isolated kernels matmul_square (n is a
 * square matrix's side) and saxpy (n is an element count) from tests/isolate/fixtures/
 * harness-golden are built and probed by execute with compute-sanitizer; matmul_square must get
 * `side`, saxpy keep `area`; then the real `lscat tune` sweeps both over the default 7 sizes x
 * 20 blocks with those bindings and no configuration may hit a CUDA error. Skips with "no CUDA
 * device" elsewhere. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "execute/probe.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const names[] = { "matmul_square", "saxpy" };
static struct fixture_env env;
static char ids[2][65];
static int ready, tuned;

static char *text(const char *sql, const char *id) { return fixture_query_text(&env, sql, id); }
static int64_t count(const char *sql, const char *id) { return fixture_query_int(&env, sql, id); }

static void test_gpu_bindings__execute_probes_the_golden_kernels(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    for (int i = 0; i < 2; i++) {
        char *seed = xasprintf("golden:%s", names[i]);
        CHECK_OK(fixture_add_golden(&env, names[i], seed, 4, ids[i]));
        free(seed);
    }
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.sanitize = 1;
    o.probe_timeout_s = 30;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    ready = 1;
    CHECK_INT(c.runnable, ==, 2);
    CHECK_INT(c.rebound, ==, 1);
}

static void check_probe(int i, const char *binding, int want_tries)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not complete");
    char *b = text("SELECT binding FROM kernels WHERE id = ? AND status = 'runnable'", ids[i]);
    char *pb = text("SELECT binding FROM probes WHERE kernel_id = ?", ids[i]);
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[i]);
    char *san = text("SELECT sanitizer FROM probes WHERE kernel_id = ?", ids[i]);
    printf("# %s: binding %s, sanitizer %s, tries %s\n", names[i], b ? b : "-", san ? san : "-",
           tries ? tries : "-");
    CHECK_STR(b, binding);
    CHECK_STR(pb, binding);
    CHECK_STR(san, "clean");
    int n = 0;
    for (const char *s = tries; s && (s = strstr(s, "{\"binding\":")); s++)
        n++;
    CHECK_INT(n, ==, want_tries);
    free(b); free(pb); free(tries); free(san);
}

static void test_gpu_bindings__a_square_matrix_kernel_gets_side(void)
{
    check_probe(0, "side", 2);
    /* under area (n = 4096 at 64x64) it writes C[row * n + col] past C's 64 x 64 + pad elements:
     * the harness's guard sees it, and area's 2024x2024 configurations (where it faulted before
     * session 20) are not run (docs/execute.md "Guard after the buffers") */
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", ids[0]);
    CHECK_CONTAINS(tries, "{\"binding\":\"area\",\"outcome\":\"ok\",\"detail\":\"wrote past "
                          "parameter 3 (C)'s buffer at 64x64");
    CHECK_CONTAINS(tries, "the large configurations not run");
    free(tries);
}

static void test_gpu_bindings__an_element_count_kernel_keeps_area(void)
{
    check_probe(1, "area", 1);
}

static void test_gpu_bindings__tune_sweeps_every_size_without_a_cuda_error(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not complete");
    int rc = fixture_run_tune(&env, "--samples 3 --min-sample-ms 0.2");
    tuned = 1;
    CHECK_INT(rc, ==, 0);
    for (int i = 0; i < 2; i++) {
        const char *want = i == 0 ? "side" : "area";
        int64_t sizes = count("SELECT count(DISTINCT width) FROM measurements WHERE kernel_id = ? "
                              "AND status = 'ok'", ids[i]);
        int64_t errors = count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND "
                               "status NOT IN ('ok', 'invalid_config')", ids[i]);
        char *sql = xasprintf("SELECT count(*) FROM measurements WHERE kernel_id = ? AND "
                              "binding != '%s'", want);
        int64_t other = count(sql, ids[i]);
        printf("# %s: %lld sizes ok, %lld failed configurations, %lld rows of another binding\n",
               names[i], (long long)sizes, (long long)errors, (long long)other);
        CHECK_INT(sizes, ==, 7);
        CHECK_INT(errors, ==, 0);
        CHECK_INT(other, ==, 0);
        free(sql);
    }
}

int main(void)
{
    TEST_RUN(test_gpu_bindings__execute_probes_the_golden_kernels);
    TEST_RUN(test_gpu_bindings__a_square_matrix_kernel_gets_side);
    TEST_RUN(test_gpu_bindings__an_element_count_kernel_keeps_area);
    TEST_RUN(test_gpu_bindings__tune_sweeps_every_size_without_a_cuda_error);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
