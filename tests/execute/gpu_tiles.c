/* A kernel written for its source's grid on a real GPU (make test-gpu; issue #14, the tiles
 * binding): the golden tile_gemm64 (tests/isolate/fixtures/harness/src/tiles.cu: one 64x64 tile
 * of C = A * B per 256-thread block over the grid its host computes from M and N, no bounds
 * checks inside a tile, sizes asserted to be multiples of the tiles) is built and probed by
 * execute: every try with the harness's grid or unrounded sizes faults, and only the source's
 * grid with sizes rounded to the tiles (binding tiles, the source's block) runs; then the real
 * `lscat tune` measures it at 240 and 1016 (run as 256 and 1024). Skips with "no CUDA device"
 * elsewhere. */
#include "common/error.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fixture_env env;
static char id[65];
static int ready;

static char *text(const char *sql) { return fixture_query_text(&env, sql, id); }
static int64_t count(const char *sql) { return fixture_query_int(&env, sql, id); }

static void need_probe(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the probe run did not complete");
}

static void test_gpu_tiles__execute_probes_the_tiled_gemm_runnable(void)
{
    if (!fixture_have_gpu())
        test_skip("no CUDA device");
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    CHECK_OK(fixture_add_golden(&env, "tile_gemm64", "golden:tile_gemm64", 6, id));
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 1;
    o.probe_timeout_s = 30;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    ready = 1;
    printf("# runnable %d, reblocked %d\n", c.runnable, c.reblocked);
    CHECK_INT(c.runnable, ==, 1);
}

static void test_gpu_tiles__only_the_sources_grid_with_aligned_sizes_runs(void)
{
    need_probe();
    char *d = text("SELECT detail FROM probes WHERE kernel_id = ? AND outcome = 'ok'");
    char *b = text("SELECT binding FROM kernels WHERE id = ?");
    char *tries = text("SELECT bindings FROM probes WHERE kernel_id = ?");
    printf("# tile_gemm64: %s | %s | %s\n", b ? b : "-", d ? d : "-", tries ? tries : "-");
    CHECK_STR(b, "tiles");
    CHECK_CONTAINS(d, "block 256x1x1 (the source's launch)");
    /* the harness's grid and W x H sizes under area and side fault: no other try ran ok */
    CHECK_CONTAINS(tries, "{\"binding\":\"side\",\"outcome\":\"");
    const char *ok = strstr(tries, "\"outcome\":\"ok\"");
    CHECK(ok != NULL && strstr(ok + 1, "\"outcome\":\"ok\"") == NULL);
    free(d);
    free(b);
    free(tries);
}

static void test_gpu_tiles__tune_measures_the_source_block_at_both_sizes(void)
{
    need_probe();
    CHECK_INT(fixture_run_tune(&env, "--sizes 240,1016 --samples 3 --min-sample-ms 0.2"), ==, 0);
    CHECK_INT(count("SELECT count(DISTINCT width) FROM measurements WHERE kernel_id = ? AND "
                    "status = 'ok' AND block_x = 256 AND block_y = 1 AND binding = 'tiles'"), ==, 2);
    /* its output check matched the reference (the source's block) */
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = 'ok' "
                    "AND output_check != 'match'"), ==, 0);
    /* other shapes are not run under tiles: invalid_config, no fault */
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND status = 'ok' "
                    "AND NOT (block_x = 256 AND block_y = 1)"), ==, 0);
    CHECK_INT(count("SELECT count(*) FROM measurements WHERE kernel_id = ? AND "
                    "status = 'cuda_error'"), ==, 0);
}

int main(void)
{
    TEST_RUN(test_gpu_tiles__execute_probes_the_tiled_gemm_runnable);
    TEST_RUN(test_gpu_tiles__only_the_sources_grid_with_aligned_sizes_runs);
    TEST_RUN(test_gpu_tiles__tune_measures_the_source_block_at_both_sizes);
    if (ready)
        fixture_env_release(&env);
    return test_done();
}
