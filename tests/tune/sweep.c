/* Tests of the sweep engine (tune/sweep.c) with a real store and real child processes: the
 * stand-in harness plays each kernel (no GPU here), stand-in GPU records play the devices.
 * Planning, dispatch over two workers, resume, --remeasure and giving up are checked in the
 * store and in the harnesses' own logs of what they were asked to run. */
#include "tests/support/test.h"
#include "tune/sweep.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/gpulock.h"
#include "store/store.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char work[1024], db[1100];
static int g_follow;         /* the next sweep() runs with --follow */
static double g_grace = 5.0; /* its follow_grace_s */
/* Its per-configuration limit: far above what a stand-in configuration takes on any machine;
 * a test with a hanging configuration lowers it (the hang never ends, whatever the limit). */
static double g_timeout = 120;
static int with_so;       /* setup() also copies the stand-in's harness.so build */
static const char *runner; /* tune_options.runner for sweep() */
static char runner_path[1100];

/* Run the sweeps through the real lscat-runner (host-only) with harness.so files, or not. */
static void use_runner(int on)
{
    snprintf(runner_path, sizeof(runner_path), "%s/lscat-runner", test_bin_dir());
    with_so = on;
    runner = on ? runner_path : NULL;
}
static const char *g_sizes = "64,128", *g_blocks = "16x16,64"; /* sweep()'s space */
static const char *g_blocks_2d;  /* non-NULL: the space of kernels indexing y (--space fit) */

/* A store with `n` runnable kernels k0.., each with its own copy of the stand-in harness. */
static struct store *setup(int n, const char *const *behaviors)
{
    struct store *s = NULL;
    const char *tb = getenv("LSCAT_TEST_BIN");
    snprintf(work, sizeof(work), "%s/work", test_tmpdir());
    snprintf(db, sizeof(db), "%s/lscat.db", work);
    CHECK_OK(store_open(&s, db, STORE_CREATE));
    for (int i = 0; i < n; i++) {
        char id[16], rel[64], cmd[2400];
        snprintf(id, sizeof(id), "k%d", i);
        snprintf(rel, sizeof(rel), "builds/%s/harness", id);
        snprintf(cmd, sizeof(cmd), "mkdir -p %s/builds/%s && cp %s/tune/support/fake_harness "
                 "%s/%s", work, id, tb && *tb ? tb : "build/tests", work, rel);
        CHECK(system(cmd) == 0);
        if (with_so) {
            snprintf(cmd, sizeof(cmd), "cp %s/tune/support/fake_harness.so %s/%s.so",
                     tb && *tb ? tb : "build/tests", work, rel);
            CHECK(system(cmd) == 0);
        }
        if (behaviors && behaviors[i]) {
            char p[1200];
            snprintf(p, sizeof(p), "%s/%s.behavior", work, rel);
            test_write_file(p, behaviors[i], strlen(behaviors[i]));
        }
        CHECK_OK(store_run(s, "INSERT INTO kernels(id, name, dir, params, param_count, status, "
                           "created_at) VALUES (?, ?, ?, '[]', 0, 'runnable', 'now')", "ttt", id,
                           id, id));
        CHECK_OK(store_run(s, "INSERT INTO builds(kernel_id, arch, cache_key, status, attempts, "
                           "binary_path, built_at) VALUES (?, 'sm_90', ?, 'ok', 1, ?, 'now')",
                           "ttt", id, id, rel));
    }
    return s;
}

static int gpus_of(struct tune_gpu *g, int n, int models, struct store *s)
{
    memset(g, 0, (size_t)n * sizeof(*g));
    for (int i = 0; i < n; i++) {
        g[i].index = i;
        snprintf(g[i].uuid, sizeof(g[i].uuid), "GPU-fake-%d", i);
        snprintf(g[i].name, sizeof(g[i].name), "%s", models == 2 && i % 2 ? "Other" : "Fake");
        snprintf(g[i].cc, sizeof(g[i].cc), "9.0");
    }
    CHECK_OK(tune_gpus_register(s, g, n));
    return n;
}

static void sweep(struct tune_counts *c, struct store *s, const struct tune_gpu *g, int n,
                  int remeasure, int max_failures)
{
    struct tune_options o;
    int64_t run_id = 0;
    memset(&o, 0, sizeof(o));
    CHECK_OK(tune_space_parse(&o.space, g_sizes, g_blocks));
    if (g_blocks_2d)
        CHECK_OK(tune_space_parse(&o.space_2d, g_sizes, g_blocks_2d));
    CHECK_OK(store_run_begin(&run_id, s, "tune", 0, NULL));
    o.db_path = db;
    o.work_dir = work;
    o.config_timeout_s = g_timeout;
    o.startup_s = g_timeout / 2;
    o.max_failures = max_failures;
    o.remeasure = remeasure;
    o.run_id = run_id;
    o.runner = runner;
    o.runner_kernels = 2;
    o.follow = g_follow;
    o.follow_interval_s = 0.1;
    o.follow_grace_s = g_grace;
    CHECK_OK(tune_sweep(c, s, &o, g, n));
    tune_space_release(&o.space);
    tune_space_release(&o.space_2d);
}

static int64_t q(struct store *s, const char *sql)
{
    int64_t v = -1;
    CHECK_OK(store_query_int(&v, s, sql, NULL));
    return v;
}

static int log_count(int k, const char *word)
{
    struct buf b = BUF_INIT;
    char path[1200];
    int n = 0;
    snprintf(path, sizeof(path), "%s/builds/k%d/harness.log", work, k);
    if (buf_read_file(&b, path) == 0)
        for (const char *p = b.data; (p = strstr(p, word)) != NULL; p++)
            n++;
    buf_release(&b);
    return n;
}

static void test_sweep__two_gpus_share_the_kernels_and_each_is_measured_once(void)
{
    const char *slow[] = { "slow 100\n", "slow 100\n", "slow 100\n", "slow 100\n" };
    struct store *s = setup(4, slow);
    struct tune_gpu g[2];
    struct tune_counts c;
    gpus_of(g, 2, 1, s);
    sweep(&c, s, g, 2, 0, 5);
    CHECK_INT(c.kernels_planned, ==, 4);
    CHECK_INT(c.configs_planned, ==, 16);
    CHECK_INT(c.ok, ==, 16);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE status = 'ok' AND median_ns > 0"),
              ==, 16);
    CHECK_INT(q(s, "SELECT count(DISTINCT gpu_id) FROM measurements"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM tune_kernels WHERE status = 'done' "
                   "AND occupancy_block = 768"), ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE sm_clock_mhz_before = 1980 "
                   "AND grid_x > 0 AND run_id IS NOT NULL"), ==, 16);
    for (int k = 0; k < 4; k++)
        CHECK_INT(log_count(k, "start"), ==, 1);
    store_free(s);
}

static void test_sweep__a_second_run_measures_only_what_is_missing(void)
{
    struct store *s = setup(2, NULL);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(c.ok, ==, 8);
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(c.kernels_planned, ==, 0);
    CHECK_INT(c.processes, ==, 0);
    /* lose two results of k1, as a kill in the middle of its sweep would */
    CHECK_OK(store_run(s, "DELETE FROM measurements WHERE kernel_id = 'k1' AND width = 128",
                       NULL));
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(c.configs_planned, ==, 2);
    CHECK_INT(log_count(1, "cfg 128 128"), ==, 4); /* 2 blocks: in the first run and now */
    CHECK_INT(log_count(1, "cfg 64 64"), ==, 2);   /* only in the first run */
    CHECK_INT(log_count(1, "start"), ==, 2);
    CHECK_INT(log_count(0, "start"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE superseded = 0"), ==, 8);
    store_free(s);
}

static void test_sweep__remeasure_supersedes_and_keeps_old_rows(void)
{
    struct store *s = setup(1, NULL);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    sweep(&c, s, g, 1, 0, 5);
    sweep(&c, s, g, 1, 1, 5);
    CHECK_INT(c.ok, ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements"), ==, 8);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE superseded = 1"), ==, 4);
    CHECK_INT(q(s, "SELECT count(DISTINCT run_id) FROM measurements WHERE superseded = 0"), ==, 1);
    store_free(s);
}

static void test_sweep__each_gpu_model_measures_each_kernel(void)
{
    struct store *s = setup(2, NULL);
    struct tune_gpu g[2];
    struct tune_counts c;
    gpus_of(g, 2, 2, s);
    sweep(&c, s, g, 2, 0, 5);
    CHECK_INT(c.models, ==, 2);
    CHECK_INT(c.kernels_planned, ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements m JOIN gpus g ON g.id = m.gpu_id "
                   "WHERE g.name = 'Other'"), ==, 8);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements m JOIN gpus g ON g.id = m.gpu_id "
                   "WHERE g.name = 'Fake'"), ==, 8);
    store_free(s);
}

/* --space fit: a kernel indexing y gets the 2D space, a 1D kernel the 1D one; before
 * kernels.indexing existed (NULL), params' is2d decides. */
static void test_sweep__each_kernel_is_planned_over_its_indexing_space(void)
{
    struct store *s = setup(3, NULL);
    struct tune_gpu g[1];
    struct tune_counts c;
    CHECK_OK(store_exec(s, "UPDATE kernels SET indexing = '1d' WHERE id = 'k0';"
                           "UPDATE kernels SET indexing = '2d' WHERE id = 'k1';"
                           "UPDATE kernels SET params = '{\"is2d\":true}' WHERE id = 'k2'"));
    gpus_of(g, 1, 1, s);
    g_blocks = "64,128,256";
    g_blocks_2d = "16x16,64";
    sweep(&c, s, g, 1, 0, 5);
    g_blocks = "16x16,64";
    g_blocks_2d = NULL;
    CHECK_INT(c.configs_planned, ==, 2 * 3 + 2 * 2 + 2 * 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND block_y = 1 "
                   "AND block_x IN (64, 128, 256)"), ==, 6);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1' AND ((block_x = 16 "
                   "AND block_y = 16) OR (block_x = 64 AND block_y = 1))"), ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k2' AND block_y = 16"),
              ==, 2);
    CHECK_INT(log_count(0, "cfg 64 64 16 16"), ==, 0); /* no 2D shape for the 1D kernel */
    store_free(s);
}

/* A kernel whose probe kept the source's own block (docs/execute.md "Block retry") is measured
 * with it at every size although the space lacks it; one whose probe kept another is not. */
static void test_sweep__the_probes_kept_source_block_is_measured_outside_the_space(void)
{
    struct store *s = setup(2, NULL);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    CHECK_OK(store_exec(s, "UPDATE kernels SET params = '{\"launch\":{\"block\":[32,4,1],"
                           "\"smem\":0}}';"
                           "INSERT INTO probes(kernel_id, gpu_id, outcome, detail, probed_at) "
                           "SELECT 'k0', id, 'ok', 'block 32x4x1 (the source''s launch); with the "
                           "probe''s own blocks: cuda_error', 'now' FROM gpus;"
                           "INSERT INTO probes(kernel_id, gpu_id, outcome, detail, probed_at) "
                           "SELECT 'k1', id, 'ok', NULL, 'now' FROM gpus"));
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(c.configs_planned, ==, 2 * 3 + 2 * 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND block_x = 32 "
                   "AND block_y = 4 AND status = 'ok'"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1' AND block_x = 32"),
              ==, 0);
    CHECK_INT(log_count(0, "cfg 128 128 32 4"), ==, 1);
    store_free(s);
}

/* A kernel asserting its block (params "block_eq", docs/isolate.md "Block asserts") is measured
 * only with the shapes that fit: k0 asserts x = 64 (of 16x16 and 64); k1 asserts 32x8, which
 * the space lacks, so the probe's kept block is measured at each size; k2 asserts 48 with no
 * kept block, so its space stays whole. */
static void test_sweep__a_kernel_asserting_its_block_is_measured_with_fitting_shapes_only(void)
{
    struct store *s = setup(3, NULL);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    CHECK_OK(store_exec(s, "UPDATE kernels SET params = '{\"block_eq\":[64,0,0]}' WHERE id = 'k0';"
                           "UPDATE kernels SET params = '{\"is2d\":true,\"block_eq\":[32,8,0]}' "
                           "WHERE id = 'k1';"
                           "UPDATE kernels SET params = '{\"block_eq\":[48,0,0]}' WHERE id = 'k2';"
                           "INSERT INTO probes(kernel_id, gpu_id, outcome, detail, probed_at) "
                           "SELECT 'k1', id, 'ok', 'block 32x8x1; with the probe''s own blocks: "
                           "not run, against its block assert', 'now' FROM gpus"));
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(c.configs_planned, ==, 2 + 2 + 2 * 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND block_x = 64 "
                   "AND block_y = 1 AND status = 'ok'"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND block_x = 16"),
              ==, 0);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1' AND block_x = 32 "
                   "AND block_y = 8 AND status = 'ok'"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1'"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k2'"), ==, 4);
    store_free(s);
}

/* A kernel the probe ran at its fixed size (binding fixed, docs/tune.md "Fixed-size kernels")
 * is measured once: its own size with its source's block, whatever the space; the row says
 * binding fixed. The other kernel is swept as before. */
static void test_sweep__a_fixed_size_kernel_is_measured_at_its_own_size_only(void)
{
    struct store *s = setup(2, NULL);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    CHECK_OK(store_exec(s, "UPDATE kernels SET binding = 'fixed', params = '{\"launch\":"
                           "{\"block\":[256,1,1],\"smem\":65536,\"grid_sm\":2},\"fixed\":"
                           "{\"size\":[4096,4096],\"bytes\":201326592}}' WHERE id = 'k0'"));
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(c.configs_planned, ==, 1 + 2 * 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND width = 4096 "
                   "AND height = 4096 AND block_x = 256 AND block_y = 1 AND binding = 'fixed' "
                   "AND status = 'ok'"), ==, 1);
    CHECK_INT(log_count(0, "bind fixed"), ==, 1); /* the harness ran with --bind fixed */
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1' AND binding = "
                   "'area'"), ==, 4);
    /* a second run has nothing left to measure for it */
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(c.configs_planned, ==, 0);
    store_free(s);
}

/* binding fixed without the record (an older params): no W x H sweep either */
static void test_sweep__a_fixed_binding_without_its_size_is_not_swept(void)
{
    struct store *s = setup(1, NULL);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    CHECK_OK(store_exec(s, "UPDATE kernels SET binding = 'fixed'"));
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(c.configs_planned, ==, 0);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements"), ==, 0);
    store_free(s);
}

/* A kernel whose probe kept a block of the block retry has the output check use that block as
 * its reference (--check-ref): its harness's own reference faults at every size (badref), so
 * without it every row would be not_checked after a restart; a kernel whose probe kept the
 * probe's own shapes is not given one. */
static void test_sweep__the_probes_kept_block_is_the_output_checks_reference(void)
{
    const char *b[] = { "badref * * * *\n", "badref * * * *\n" };
    struct store *s = setup(2, b);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    CHECK_OK(store_exec(s, "INSERT INTO probes(kernel_id, gpu_id, outcome, detail, probed_at) "
                           "SELECT 'k0', id, 'ok', 'block 64x1x1: small sizes only; with the "
                           "probe''s own blocks: illegal_address', 'now' FROM gpus;"
                           "INSERT INTO probes(kernel_id, gpu_id, outcome, detail, probed_at) "
                           "SELECT 'k1', id, 'ok', NULL, 'now' FROM gpus"));
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(log_count(0, "checkref 64x1x1"), >=, 1);
    CHECK_INT(log_count(1, "checkref"), ==, 0);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND status = 'ok' "
                   "AND output_check = 'match'"), ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1' AND status = 'ok' "
                   "AND output_check = 'not_checked' AND output_check_why LIKE "
                   "'%the check is off%'"), ==, 4);
    store_free(s);
}

static void test_sweep__output_checks_are_recorded_with_their_cost(void)
{
    const char *b[] = { "mismatch * * 64 *\n", "nocheck\n" };
    struct store *s = setup(2, b);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    sweep(&c, s, g, 1, 0, 5);
    CHECK_INT(c.ok, ==, 8);
    CHECK_INT(c.match, ==, 2);
    CHECK_INT(c.mismatch, ==, 2);
    CHECK_INT(c.not_checked, ==, 4);
    CHECK_INT(c.check_ns, ==, 4 * 1000 + 2 * 4000); /* k0's rows, its references at 2 sizes */
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND block_x = 64 "
                   "AND output_check = 'mismatch' AND output_check_why LIKE 'buffer ''y''%'"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND block_x = 16 "
                   "AND output_check = 'match'"), ==, 2);
    CHECK_INT(q(s, "SELECT sum(check_ns) FROM measurements WHERE kernel_id = 'k0'"), ==, 12000);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1' AND output_check = "
                   "'not_checked' AND output_check_why LIKE '%no output check%' AND check_ns IS "
                   "NULL"), ==, 4);
    store_free(s);
}

static void test_sweep__crashes_hangs_and_give_ups_are_recorded(void)
{
    const char *b[] = { "crash 64 64 64 1\nhang 128 128 16 16\n", "crash * * * *\n", NULL };
    struct store *s = setup(3, b);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    CHECK_OK(store_run(s, "UPDATE builds SET binary_path = 'builds/none/harness' "
                          "WHERE kernel_id = 'k2'", NULL));
    g_timeout = 6; /* the hang's wait (its process's first: 9 s) */
    sweep(&c, s, g, 1, 0, 3);
    g_timeout = 120;
    CHECK_INT(c.kernels_done, ==, 1);
    CHECK_INT(c.kernels_given_up, ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND status = "
                   "'crashed' AND width = 64 AND block_x = 64 AND error LIKE '%signal 11%'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND status = "
                   "'timeout' AND median_ns IS NULL"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k0' AND status = 'ok'"),
              ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM kernels WHERE status = 'given_up'"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM failures WHERE stage = 'tune' AND class = "
                   "'repeated_failures' AND kernel_id = 'k1'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM failures WHERE class = 'harness_missing'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM tune_kernels WHERE status = 'given_up' AND reason "
                   "LIKE '%3 harness failures%'"), ==, 1);
    /* nothing is retried on the next run */
    sweep(&c, s, g, 1, 0, 3);
    CHECK_INT(c.kernels_planned, ==, 0);
    store_free(s);
}

static void test_sweep__launches_each_kernel_with_its_binding_and_records_it(void)
{
    /* k1 runs clean only with --bind side; k2 is a harness from before bindings (exits 2 on
     * --bind) whose probe chose the default, so it must get no flag at all */
    const char *b[] = { NULL, "sticky * * * * area\n", "nobind\n" };
    struct store *s = setup(3, b);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    CHECK_OK(store_run(s, "UPDATE kernels SET binding = 'side' WHERE id = 'k1'", NULL));
    CHECK_OK(store_run(s, "UPDATE kernels SET binding = 'area' WHERE id = 'k2'", NULL));
    sweep(&c, s, g, 1, 0, 3);
    CHECK_INT(c.ok, ==, 12);
    CHECK_INT(c.kernels_given_up, ==, 0);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1' AND status = 'ok' "
                   "AND binding = 'side'"), ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id != 'k1' AND status = "
                   "'ok' AND binding = 'area'"), ==, 8);
    CHECK_INT(log_count(1, "bind side"), ==, 1);
    CHECK_INT(log_count(0, "bind area"), ==, 1);
    CHECK_INT(log_count(2, "bind area"), ==, 1);
    store_free(s);
}

/* With lscat-runner (the real program, host-only) and harness.so files: one runner per GPU
 * serves the kernels (recycled after 2), crashes and hangs restart it, a kernel without a
 * harness.so runs as a process, and the store holds what a process sweep would write. */
static void test_sweep__kernels_with_a_harness_so_run_in_the_runner(void)
{
    const char *b[] = { NULL, "crash 64 64 64 1\nhang 128 128 16 16\n", NULL, NULL, NULL };
    use_runner(1);
    struct store *s = setup(5, b);
    struct tune_gpu g[2];
    struct tune_counts c;
    char path[1200];
    snprintf(path, sizeof(path), "%s/builds/k4/harness.so", work);
    CHECK(unlink(path) == 0);
    gpus_of(g, 2, 1, s);
    g_timeout = 6; /* the hang's wait (its process's first: 9 s) */
    sweep(&c, s, g, 2, 0, 3);
    g_timeout = 120;
    use_runner(0);
    CHECK_INT(c.kernels_done, ==, 5);
    CHECK_INT(c.runner_kernels, ==, 4);
    CHECK_INT(c.runner_fallbacks, ==, 0);
    CHECK_INT(c.crashed, ==, 1);
    CHECK_INT(c.timeout, ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE status = 'ok'"), ==, 18);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1' AND status = "
                   "'crashed' AND error LIKE '%signal 11%'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM tune_kernels WHERE occupancy_block = 768"), ==, 5);
    for (int k = 0; k < 5; k++)
        CHECK_INT(log_count(k, "cfg "), ==, 4);
    /* nothing left: a second run starts nothing */
    runner = runner_path;
    sweep(&c, s, g, 2, 0, 3);
    runner = NULL;
    CHECK_INT(c.kernels_planned, ==, 0);
    store_free(s);
}

/* With a runner a GPU takes a kernel only when it is free for it: 4 kernels on 4 GPUs run one
 * on each (a kernel taken early, for a prestart the runner does not need, left two GPUs idle at
 * the end of the queue). Each kernel takes about 4 s, far longer than the workers' starts. */
static void test_sweep__with_a_runner_no_gpu_holds_a_kernel_another_could_run(void)
{
    const char *b[] = { "slow 1000\n", "slow 1000\n", "slow 1000\n", "slow 1000\n" };
    use_runner(1);
    struct store *s = setup(4, b);
    struct tune_gpu g[4];
    struct tune_counts c;
    gpus_of(g, 4, 1, s);
    sweep(&c, s, g, 4, 0, 3);
    use_runner(0);
    CHECK_INT(c.kernels_done, ==, 4);
    CHECK_INT(c.runner_kernels, ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE status = 'ok'"), ==, 16);
    CHECK_INT(q(s, "SELECT count(DISTINCT gpu_id) FROM measurements"), ==, 4);
    CHECK_INT(q(s, "SELECT max(n) FROM (SELECT count(DISTINCT kernel_id) n FROM measurements "
                   "GROUP BY gpu_id)"), ==, 1);
    store_free(s);
}

/* A 2D kernel with a fixed shared tile: every 1D block fails stickily (the stand-in's rule
 * for by == 1). Each 1D shape fails once at the smallest size, is recorded `skipped` at the
 * larger ones, and the kernel is done, not given up, though max_failures is 1; the 2D shape is
 * measured at every size. A second run has nothing to do: skipped rows count as measured. */
static void test_sweep__a_2d_kernels_1d_shapes_are_skipped_and_it_is_not_given_up(void)
{
    const char *b[] = { "sticky * * * 1\n" };
    struct store *s = setup(1, b);
    struct tune_gpu g[1];
    struct tune_counts c;
    g_sizes = "64,128,256";
    g_blocks = "16x16,64,128";
    gpus_of(g, 1, 1, s);
    sweep(&c, s, g, 1, 0, 1);
    CHECK_INT(c.kernels_done, ==, 1);
    CHECK_INT(c.kernels_given_up, ==, 0);
    CHECK_INT(c.ok, ==, 3);
    CHECK_INT(c.cuda_error, ==, 2);
    CHECK_INT(c.skipped, ==, 4);
    CHECK_INT(c.shapes_failed, ==, 2);
    CHECK_INT(c.configs_reported, ==, 9);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE status = 'ok' AND block_y = 16"), ==,
              3);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE status = 'skipped' AND block_y = 1 "
                   "AND width > 64 AND median_ns IS NULL AND error LIKE 'block %x1x1 failed with "
                   "a sticky CUDA error at 64x64: an illegal memory access%'"), ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM tune_kernels WHERE status = 'done'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM failures WHERE stage = 'tune'"), ==, 0);
    CHECK_INT(log_count(0, "cfg 128 128 64 1 1"), ==, 0);
    CHECK_INT(log_count(0, "cfg 256 256 128 1 1"), ==, 0);
    CHECK_INT(log_count(0, "start"), ==, 3);
    char json[1024];
    tune_counts_json(json, sizeof(json), &c);
    CHECK_CONTAINS(json, "\"skipped\":4,\"shapes_failed\":2,");
    sweep(&c, s, g, 1, 0, 1);
    CHECK_INT(c.kernels_planned, ==, 0);
    /* a run killed after the first skipped rows of each shape: the rest are skipped from the
     * store's record, without running (or failing) the shape again */
    CHECK_OK(store_run(s, "DELETE FROM measurements WHERE status = 'skipped' AND width = 256",
                       NULL));
    sweep(&c, s, g, 1, 0, 1);
    CHECK_INT(c.configs_planned, ==, 2);
    CHECK_INT(c.skipped, ==, 2);
    CHECK_INT(c.processes, ==, 0);
    CHECK_INT(log_count(0, "start"), ==, 3);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE status = 'skipped' AND superseded = 0 "
                   "AND error LIKE '%at 64x64:%'"), ==, 4);
    /* --remeasure runs everything again: this run's failures decide what it skips */
    sweep(&c, s, g, 1, 1, 1);
    CHECK_INT(c.ok, ==, 3);
    CHECK_INT(c.cuda_error, ==, 2);
    CHECK_INT(c.skipped, ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE superseded = 0"), ==, 9);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE superseded = 1"), ==, 9);
    g_sizes = "64,128";
    g_blocks = "16x16,64";
    store_free(s);
}

/* The same in lscat-runner: each sticky error ends the runner, a fresh one goes on. */
static void test_sweep__skips_hold_in_the_runner_too(void)
{
    const char *b[] = { "sticky * * * 1\n" };
    use_runner(1);
    g_sizes = "64,128,256";
    g_blocks = "16x16,64,128";
    struct store *s = setup(1, b);
    struct tune_gpu g[1];
    struct tune_counts c;
    gpus_of(g, 1, 1, s);
    sweep(&c, s, g, 1, 0, 1);
    use_runner(0);
    g_sizes = "64,128";
    g_blocks = "16x16,64";
    CHECK_INT(c.runner_kernels, ==, 1);
    CHECK_INT(c.kernels_done, ==, 1);
    CHECK_INT(c.ok, ==, 3);
    CHECK_INT(c.skipped, ==, 4);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE status = 'skipped'"), ==, 4);
    store_free(s);
}

/* Whether the process has exec'd the stand-in (its comm is what tune looks for). */
static int is_execute(void *arg)
{
    char path[64], comm[64] = "";
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)*(pid_t *)arg);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(comm, sizeof(comm), f))
            comm[0] = 0;
        fclose(f);
    }
    return !strncmp(comm, "lscat-execute", 13);
}

/* A process that stands in for a running `lscat execute`: its comm must be lscat-execute. */
static pid_t fake_execute(struct store *s)
{
    char exe[1100], host[256] = "";
    snprintf(exe, sizeof(exe), "%s/lscat-execute", work);
    char cmd[2400];
    snprintf(cmd, sizeof(cmd), "cp /bin/sleep %s", exe);
    CHECK(system(cmd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        execl(exe, exe, "infinity", (char *)NULL);
        _exit(127);
    }
    gethostname(host, sizeof(host) - 1);
    CHECK_OK(store_run(s, "INSERT INTO stage_runs(stage, args, host, pid, lscat_version, "
                       "started_at) VALUES ('execute', '[]', ?, ?, 'test', 'now')", "ti", host,
                       (int)pid));
    CHECK(test_wait_until(is_execute, &pid));
    return pid;
}

struct later {
    struct store *s;
    pid_t execute;
    int k1_made_runnable;
    double ended_at;
};

static int measured_of(void *arg) /* arg: "k0" or "k1"; its 4 configurations are in */
{
    static struct store *s;
    int64_t n = 0;
    if (!s && store_open(&s, db, 0) != 0)
        return 0;
    if (store_query_int(&n, s, "SELECT count(*) FROM measurements WHERE kernel_id = ? AND "
                        "status = 'ok'", "t", (const char *)arg) != 0)
        n = 0;
    if (n >= 4 && !strcmp(arg, "k1")) { /* the last question: let the handle go */
        store_free(s);
        s = NULL;
    }
    return n >= 4;
}

/* While the sweep follows a running execute: once the sweep has measured k0 (it waits for
 * more now), execute makes k1 runnable; once k1 is measured too, execute ends. */
static void *execute_goes_on(void *arg)
{
    struct later *l = arg;
    if (!test_wait_until(measured_of, "k0"))
        goto done;
    l->k1_made_runnable = store_run(l->s, "UPDATE kernels SET status = 'runnable' WHERE id = "
                                    "'k1'", NULL) == 1;
    test_wait_until(measured_of, "k1");
done:
    kill(l->execute, SIGKILL);
    waitpid(l->execute, NULL, 0);
    l->ended_at = fs_mono_s();
    return NULL;
}

static void test_sweep__follow_measures_what_a_running_execute_makes_runnable(void)
{
    struct store *s = setup(2, NULL), *s2 = NULL;
    struct tune_gpu g[1];
    struct tune_counts c;
    struct later l = { NULL, 0, 0, 0 };
    pthread_t t;
    gpus_of(g, 1, 1, s);
    CHECK_OK(store_run(s, "UPDATE kernels SET status = 'built' WHERE id = 'k1'", NULL));
    CHECK_OK(store_open(&s2, db, 0));
    l.s = s2;
    l.execute = fake_execute(s);
    CHECK(pthread_create(&t, NULL, execute_goes_on, &l) == 0);
    g_follow = 1;
    sweep(&c, s, g, 1, 0, 5);
    g_follow = 0;
    double done = fs_mono_s();
    pthread_join(t, NULL);
    store_free(s2);
    CHECK(l.k1_made_runnable);
    CHECK(done >= l.ended_at); /* it waited for the execute run to end */
    CHECK_INT(c.kernels_planned, ==, 2);
    CHECK_INT(c.ok, ==, 8);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE kernel_id = 'k1' AND status = 'ok'"),
              ==, 4);
    /* no execute run in progress (the row is left open, as by a killed run): with no grace,
     * the sweep ends at once (taking the dead run's row for a live one would wait forever) */
    g_follow = 1;
    g_grace = 0;
    sweep(&c, s, g, 1, 0, 5);
    g_follow = 0;
    g_grace = 5.0;
    CHECK_INT(c.kernels_planned, ==, 0);
    store_free(s);
}

static void test_sweep__a_gpu_held_by_another_process_is_waited_for(void)
{
    struct store *s = setup(1, NULL);
    struct tune_gpu g[1];
    struct tune_counts c;
    int p[2], q2[2];
    char ch, log[1200], seen = '?';
    gpus_of(g, 1, 1, s);
    snprintf(log, sizeof(log), "%s/builds/k0/harness.log", work);
    CHECK(pipe(p) == 0 && pipe(q2) == 0);
    pid_t h = fork();
    if (h == 0) { /* e.g. a probe of `lscat execute`: while it holds the GPU, nothing runs */
        struct gpulock l;
        if (gpulock_acquire(&l, "GPU-fake-0", 0, NULL, 5, NULL) != 0 || write(p[1], "x", 1) != 1)
            _exit(3);
        usleep(1000 * 1000);
        struct buf b = BUF_INIT; /* a configuration begun? */
        char c2 = buf_read_file(&b, log) == 0 && strstr(b.data, "cfg ") ? 'y' : 'n';
        _exit(write(q2[1], &c2, 1) == 1 ? 0 : 3);
    }
    CHECK(read(p[0], &ch, 1) == 1);
    sweep(&c, s, g, 1, 0, 5);
    CHECK(read(q2[0], &seen, 1) == 1);
    CHECK_INT(seen, ==, 'n'); /* nothing ran on the GPU while the holder held it */
    CHECK_INT(c.ok, ==, 4);
    waitpid(h, NULL, 0);
    close(p[0]);
    close(p[1]);
    close(q2[0]);
    close(q2[1]);
    store_free(s);
}

int main(void)
{
    char *locks = fs_join(test_tmpdir(), "locks");
    setenv("LSCAT_LOCK_DIR", locks, 1);
    free(locks);
    setenv("LSCAT_RUNNER_NO_CUDA", "1", 1);
    TEST_RUN(test_sweep__two_gpus_share_the_kernels_and_each_is_measured_once);
    TEST_RUN(test_sweep__a_second_run_measures_only_what_is_missing);
    TEST_RUN(test_sweep__remeasure_supersedes_and_keeps_old_rows);
    TEST_RUN(test_sweep__each_gpu_model_measures_each_kernel);
    TEST_RUN(test_sweep__each_kernel_is_planned_over_its_indexing_space);
    TEST_RUN(test_sweep__the_probes_kept_source_block_is_measured_outside_the_space);
    TEST_RUN(test_sweep__a_kernel_asserting_its_block_is_measured_with_fitting_shapes_only);
    TEST_RUN(test_sweep__a_fixed_size_kernel_is_measured_at_its_own_size_only);
    TEST_RUN(test_sweep__a_fixed_binding_without_its_size_is_not_swept);
    TEST_RUN(test_sweep__the_probes_kept_block_is_the_output_checks_reference);
    TEST_RUN(test_sweep__output_checks_are_recorded_with_their_cost);
    TEST_RUN(test_sweep__crashes_hangs_and_give_ups_are_recorded);
    TEST_RUN(test_sweep__launches_each_kernel_with_its_binding_and_records_it);
    TEST_RUN(test_sweep__kernels_with_a_harness_so_run_in_the_runner);
    TEST_RUN(test_sweep__with_a_runner_no_gpu_holds_a_kernel_another_could_run);
    TEST_RUN(test_sweep__a_2d_kernels_1d_shapes_are_skipped_and_it_is_not_given_up);
    TEST_RUN(test_sweep__skips_hold_in_the_runner_too);
    TEST_RUN(test_sweep__follow_measures_what_a_running_execute_makes_runnable);
    TEST_RUN(test_sweep__a_gpu_held_by_another_process_is_waited_for);
    return test_done();
}
