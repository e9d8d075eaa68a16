/* The memcheck runner on a real GPU (make test-gpu; docs/execute.md "The memcheck runner"):
 * tile_reverse's 128-value shared tile without its __launch_bounds__ (made from the golden
 * kernel here) overruns the tile with the probe's 256-thread blocks, a GPU fault; its later
 * tries must run in one long-lived memcheck runner under the real compute-sanitizer (found
 * beside nvcc), the first clean one (128x1) be confirmed by a plain run and kept, while saxpy,
 * clean at once, never starts a memcheck runner. Skips with "no CUDA device" elsewhere. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct fixture_env env;
static char tile[65], saxpy[65];
static struct execute_counts c;
static int ready;

static char *text(const char *sql, const char *id) { return fixture_query_text(&env, sql, id); }

/* tile_reverse without `__launch_bounds__(TILE)`, in its folder and its params. */
static void drop_launch_bounds(const char *id)
{
    char *dir = xasprintf("%s/kernels/%.2s/%s", env.work, id, id);
    char *cmd = xasprintf("sed -i 's/__launch_bounds__(TILE) //' %1$s/kernel.cu && "
                          "sed -i 's/\"launch_bounds\":128,//' %1$s/params.json", dir);
    CHECK(system(cmd) == 0);
    char *pj = fs_join(dir, "params.json");
    struct buf p = BUF_INIT;
    CHECK_OK(buf_read_file(&p, pj));
    CHECK(strstr(p.data, "launch_bounds") == NULL);
    CHECK_OK(store_run(env.s, "UPDATE kernels SET params = ? WHERE id = ?", "tt", p.data, id));
    buf_release(&p);
    free(pj);
    free(cmd);
    free(dir);
}

static void need_probes(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not complete");
}

static void test_gpu_memcheck__execute_probes_with_the_memcheck_runner(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    if (access("/usr/local/cuda/bin/compute-sanitizer", X_OK) != 0)
        test_skip("no /usr/local/cuda/bin/compute-sanitizer (execute looks beside nvcc)");
    CHECK_OK(fixture_env_init(&env));
    CHECK_OK(fixture_add_golden(&env, "tile_reverse", "golden:tile_reverse:nobounds", 3, tile));
    CHECK_OK(fixture_add_golden(&env, "saxpy", "golden:saxpy", 4, saxpy));
    drop_launch_bounds(tile);
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    o.jobs = 2;
    o.probe_jobs = 1; /* one worker: one memcheck runner */
    o.probe_timeout_s = 60;
    o.probe_memcheck = 1;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    ready = 1;
    printf("# runnable %d, memcheck: %d starts, %d runs, %d reports, %d run plain again, %d "
           "confirmed, %d fallback, %d late, %d stray\n", c.runnable, c.memcheck_starts,
           c.memcheck_runs, c.memcheck_reports, c.memcheck_inconclusive, c.confirm_runs,
           c.memcheck_fallback_runs, c.memcheck_late, c.memcheck_stray);
    CHECK_INT(c.runnable, ==, 2);
}

static void test_gpu_memcheck__the_tries_after_a_fault_run_in_one_memcheck_runner(void)
{
    need_probes();
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", tile);
    char *d = text("SELECT detail FROM probes WHERE kernel_id = ?", tile);
    printf("# tile_reverse without bounds: %s | %s\n", d ? d : "-", tries ? tries : "-");
    CHECK_CONTAINS(tries, "{\"binding\":\"area\",\"outcome\":\"illegal_address\""); /* plain */
    CHECK_CONTAINS(tries, "\"memcheck\":\"report\"");
    CHECK_CONTAINS(tries, "\"detail\":\"memcheck: Invalid __shared__");
    CHECK_CONTAINS(tries, "\"block\":\"128x1x1\",\"memcheck\":\"clean\"");
    CHECK_CONTAINS(d, "block 128x1x1; with the probe's own blocks: illegal_address");
    CHECK_INT(c.memcheck_starts, ==, 1); /* the reports did not end it */
    CHECK(c.memcheck_runs >= 2);
    CHECK_INT(c.memcheck_reports, ==, c.memcheck_runs - 1);
    CHECK_INT(c.memcheck_stray, ==, 0);
    free(tries);
    free(d);
}

static void test_gpu_memcheck__the_clean_try_is_confirmed_by_a_plain_run_with_the_large_sizes(void)
{
    need_probes();
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", tile);
    CHECK_CONTAINS(tries, "\"block\":\"128x1x1\",\"confirm\":true,\"configs\":[\"1024x1 "
                          "128x1x1\",\"64x64 128x1x1\",\"2024x2024 128x1x1\"]");
    CHECK_INT(c.confirm_runs, ==, 1);
    char *b = text("SELECT status FROM kernels WHERE id = ?", tile);
    CHECK_STR(b, "runnable");
    free(b);
    free(tries);
}

static void test_gpu_memcheck__a_kernel_clean_at_once_never_runs_under_memcheck(void)
{
    need_probes();
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?", saxpy);
    CHECK(tries && strstr(tries, "memcheck") == NULL);
    free(tries);
}

int main(void)
{
    TEST_RUN(test_gpu_memcheck__execute_probes_with_the_memcheck_runner);
    TEST_RUN(test_gpu_memcheck__the_tries_after_a_fault_run_in_one_memcheck_runner);
    TEST_RUN(test_gpu_memcheck__the_clean_try_is_confirmed_by_a_plain_run_with_the_large_sizes);
    TEST_RUN(test_gpu_memcheck__a_kernel_clean_at_once_never_runs_under_memcheck);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
