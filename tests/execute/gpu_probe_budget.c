/* The probe budget on a real GPU (make test-gpu): the golden isolated kernel sum_all_slow
 * (tests/isolate/fixtures/harness-golden; O(n^2) work, n a size parameter) is built and probed
 * by execute through the probe runners. Under `area` its 2024x2024 configuration needs far more
 * than its budget: the binding must end `too_slow` within seconds, not at the 300 s probe
 * timeout given here, and `side` (n = 2024) must run clean and be kept. A second copy is then
 * probed the old way (--probe-budget 0, a 20 s timeout): its area run waits for the kernel or
 * the timeout, so it takes longer (the saving, side by side). The harness's probe lines carry
 * the kernel's own time (kernel_ns), from which the budget is planned. Skips with "no CUDA device"
 * elsewhere. */
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

static struct fixture_env env;
static char id[65];
static double budget_wall_s;
static int ready;

static char *text(const char *sql, const char *kid)
{
    char *v = NULL;
    CHECK_OK(store_query_text(&v, env.s, sql, "t", kid));
    return v;
}

static void test_gpu_probe_budget__a_kernel_too_slow_under_area_ends_fast_and_keeps_side(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    CHECK_OK(fixture_add_golden(&env, "sum_all_slow", "golden:sum_all_slow", 3, id));
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.probe_timeout_s = 300; /* only the budget can end the area run early */
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    ready = 1;
    char *b = text("SELECT binding FROM kernels WHERE id = ? AND status = 'runnable'", id);
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", id);
    char *secs = text("SELECT probe_s FROM probes WHERE kernel_id = ?", id);
    budget_wall_s = secs ? atof(secs) : -1;
    printf("# sum_all_slow: binding %s in %s s; tries %s\n", b ? b : "-", secs ? secs : "-",
           tries ? tries : "-");
    CHECK_STR(b, "side");
    CHECK_CONTAINS(tries, "{\"binding\":\"area\",\"outcome\":\"too_slow\"");
    CHECK_CONTAINS(tries, "{\"binding\":\"side\",\"outcome\":\"ok\"");
    CHECK(budget_wall_s > 0 && budget_wall_s < 60);
    CHECK_INT(c.too_slow, ==, 1);
    /* the harness said its kernel's own time on every ok line, and the budget came from it
     * (not from the line interval: "64x64: kernel ... ms of ... ms") */
    CHECK_CONTAINS(tries, "\"kernel_s\":[0.");
    CHECK_CONTAINS(tries, "64x64: kernel ");
    const char *bs = tries ? strstr(tries, "\"budget_s\":") : NULL;
    CHECK(bs && atof(bs + 11) < 10); /* O(n^2) from a kernel of microseconds: about the floor */
    free(b); free(tries); free(secs);
}

static void test_gpu_probe_budget__without_the_budget_the_same_probe_takes_longer(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run with the budget did not complete");
    char old[65];
    CHECK_OK(fixture_add_golden(&env, "sum_all_slow", "golden:sum_all_slow:old", 3, old)); /* a second copy, unprobed */
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.kernel = old;
    o.probe_timeout_s = 20;
    o.probe_budget_s = 0;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", old);
    char *secs = text("SELECT probe_s FROM probes WHERE kernel_id = ?", old);
    printf("# without the budget: %s s (with it: %.2f s); tries %s\n", secs ? secs : "-",
           budget_wall_s, tries ? tries : "-");
    CHECK(tries && strstr(tries, "too_slow") == NULL);
    CHECK(secs && atof(secs) > budget_wall_s);
    free(tries); free(secs);
}

static void test_gpu_probe_budget__the_real_harness_says_its_kernel_time_on_each_probe_line(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run with the budget did not complete");
    char *bin = text("SELECT binary_path FROM builds WHERE kernel_id = ? AND status = 'ok'", id);
    CHECK(bin != NULL);
    char *path = bin && bin[0] != '/' ? fs_join(env.work, bin) : xstrdup(bin ? bin : "");
    char *in = fs_join(env.work, "configs.txt"), *res = fs_join(env.work, "lines.jsonl");
    test_write_file(in, "1024 1 256 1 1\n64 64 16 16 1\n64 64 256 1 1\n", 43);
    char *cmd = xasprintf("'%s' --probe --bind side --results '%s' < '%s'", path, res, in);
    CHECK(system(cmd) == 0);
    struct buf lines = BUF_INIT;
    CHECK(buf_read_file(&lines, res) == 0);
    printf("# %s", lines.data ? lines.data : "-\n");
    int ok = 0, timed = 0, setup = 0;
    for (char *l = lines.data; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char *nl = strchr(l, '\n');
        char *line = xstrndup(l, nl ? (size_t)(nl - l) : strlen(l));
        if (strstr(line, "\"status\":\"ok\"")) {
            ok++;
            timed += probe_line_kernel_s(line) >= 0;
            setup += strstr(line, "\"setup_ns\":") != NULL;
        }
        free(line);
    }
    CHECK_INT(ok, ==, 3);
    CHECK_INT(timed, ==, 3); /* every ok line has the kernel's own time */
    CHECK_INT(setup, ==, 2); /* the first configuration of each size made its buffers */
    buf_release(&lines);
    free(cmd); free(res); free(in); free(path); free(bin);
}

int main(void)
{
    setenv("LSCAT_BIN", "build/bin", 0); /* lscat-runner: the budget applies in runners only */
    TEST_RUN(test_gpu_probe_budget__a_kernel_too_slow_under_area_ends_fast_and_keeps_side);
    TEST_RUN(test_gpu_probe_budget__without_the_budget_the_same_probe_takes_longer);
    TEST_RUN(test_gpu_probe_budget__the_real_harness_says_its_kernel_time_on_each_probe_line);
    fixture_env_release(&env);
    return test_done();
}
