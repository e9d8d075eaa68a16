/* Probes are keyed by the probe key (execute/build.h build_cache_key): a new timing core
 * rebuilds every harness but probes nothing again, an edited kernel is probed again, probes
 * stored by older lscat under the build key are taken over when the build key is unchanged.
 * Real nvcc, probes forced without a GPU (they fail with a CUDA error, a verdict like any). */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/build.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct fixture_env env;
static int ready, have_nvcc;
static char id_a[65], id_b[65]; /* "ok" and "missing_header_shim" (built after a repair) */
static char *share;             /* <work>/share: a copy of the timing core's sources */

/* ---------------------------------------------------------------- the key itself (no nvcc) */

static void write_file(const char *path, const char *text)
{
    CHECK_OK(fs_mkdirs_parent(path));
    CHECK_OK(fs_write_atomic(path, text, strlen(text)));
}

static void keys_of(char build[65], char probe[65], const char *dir, const char *core)
{
    struct build_env e;
    memset(&e, 0, sizeof(e));
    e.nvcc_version = "13.0.88";
    e.flags_text = "-O3 -lineinfo";
    e.max_attempts = 5;
    snprintf(e.core_hash, sizeof(e.core_hash), "%064d", core[0]);
    CHECK_OK(build_cache_key(build, probe, &e, "kid", dir));
}

static void test_build__the_probe_key_ignores_the_timing_core_and_nothing_else(void)
{
    char *dir = xasprintf("%s/lscat-probekey-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                          (int)getpid());
    char *k = fs_join(dir, "kernel.cu"), *h = fs_join(dir, "harness.cu");
    write_file(k, "__global__ void k(float *x) { x[0] = 1; }\n");
    write_file(h, "#include \"kernel.cu\"\n");
    char b1[65], p1[65], b2[65], p2[65], b3[65], p3[65], b4[65];
    keys_of(b1, p1, dir, "1");
    keys_of(b2, p2, dir, "2"); /* another timing core */
    CHECK(strcmp(b1, b2) != 0);
    CHECK_STR(p1, p2);
    CHECK(strcmp(p1, b1) != 0 && strcmp(p1, b2) != 0); /* never a build key */
    write_file(k, "__global__ void k(float *x) { x[0] = 2; }\n");
    keys_of(b3, p3, dir, "1"); /* another kernel */
    CHECK(strcmp(p3, p1) != 0);
    CHECK(strcmp(b3, b1) != 0);
    write_file(k, "__global__ void k(float *x) { x[0] = 1; }\n");
    char *inc = fs_join(dir, "include/util.h");
    write_file(inc, "#define N 4\n"); /* a header pulled into include/ */
    keys_of(b4, p3, dir, "1");
    CHECK(strcmp(p3, p1) != 0);
    keys_of(b4, NULL, dir, "1"); /* the probe key is optional */
    fs_remove_tree(dir);
    free(inc);
    free(k);
    free(h);
    free(dir);
}

/* ---------------------------------------------------------------- execute runs (nvcc) */

static void need_run(void)
{
    if (!have_nvcc)
        test_skip("nvcc not found");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the first execute run did not complete");
}

static void copy_core(const char *root, const char *to)
{
    const char *parts[] = { "tune/timing.h", "tune/timing.cu", "tune/stats.c", "tune/nvml_dl.h",
                            "isolate/harness_core.h", "isolate/harness_core.cu", NULL };
    for (int i = 0; parts[i]; i++) {
        char *from = fs_join(root, parts[i]), *dst = fs_join(to, parts[i]);
        struct buf b = BUF_INIT;
        CHECK_OK(buf_read_file(&b, from));
        CHECK_OK(fs_mkdirs_parent(dst));
        CHECK_OK(fs_write_atomic(dst, b.data, b.len));
        chmod(dst, 0644);
        buf_release(&b);
        free(from);
        free(dst);
    }
    char *tune = fs_join(to, "tune");
    chmod(to, 0755);
    chmod(tune, 0755);
    free(tune);
}

/* Append `text` to `path` (absolute, or a kernel's kernel.cu when `kernel` is given). */
static void append(const char *kernel, const char *path, const char *text)
{
    char *rel = NULL, *p = NULL;
    if (kernel) {
        CHECK_OK(store_query_text(&rel, env.s, "SELECT dir FROM kernels WHERE id = ?", "t",
                                  kernel));
        p = xasprintf("%s/%s/kernel.cu", env.work, rel);
    } else {
        p = xstrdup(path);
    }
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, p));
    buf_adds(&b, text);
    CHECK_OK(fs_write_atomic(p, b.data, b.len));
    chmod(p, 0644);
    buf_release(&b);
    free(p);
    free(rel);
}

static void new_timing_core(const char *note)
{
    char *p = fs_join(share, "tune/timing.cu");
    append(NULL, p, note);
    free(p);
}

static struct execute_options options(void)
{
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    o.jobs = 2;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_FORCE;
    o.probe_timeout_s = 120; /* ordinary probes: room on any machine */
    return o;
}

/* What a kernel's build and probe look like in the store. */
struct snap {
    char *build_key, *binary, *probe_key, *probed_at, *status;
    int64_t probe_rowid;
};

static char *text_of(const char *sql, const char *id)
{
    char *t = NULL;
    CHECK_OK(store_query_text(&t, env.s, sql, "t", id));
    return t;
}

static void snap(struct snap *s, const char *id)
{
    s->build_key = text_of("SELECT cache_key FROM builds WHERE kernel_id = ?", id);
    s->binary = text_of("SELECT binary_path FROM builds WHERE kernel_id = ?", id);
    s->probe_key = text_of("SELECT cache_key FROM probes WHERE kernel_id = ?", id);
    s->probed_at = text_of("SELECT probed_at FROM probes WHERE kernel_id = ?", id);
    s->status = text_of("SELECT status FROM kernels WHERE id = ?", id);
    s->probe_rowid = -1;
    CHECK_OK(store_query_int(&s->probe_rowid, env.s, "SELECT coalesce((SELECT rowid FROM probes "
                             "WHERE kernel_id = ?), -1)", "t", id));
}

static void snap_release(struct snap *s)
{
    free(s->build_key);
    free(s->binary);
    free(s->probe_key);
    free(s->probed_at);
    free(s->status);
}

static int64_t probe_failures(const char *id)
{
    int64_t n = -1;
    CHECK_OK(store_query_int(&n, env.s, "SELECT count(*) FROM failures WHERE stage = 'execute' "
                             "AND kernel_id = ? AND class IN ('launch_failure', "
                             "'illegal_address', 'cuda_error', 'crash', 'timeout_probe')", "t",
                             id));
    return n;
}

/* Two kernels built and probed; A's verdict made `runnable` (as a GPU would have it), B's
 * stays what the probe without a GPU gave: probe_failed with its failure row. */
static void test_execute__builds_and_probes_two_kernels(void)
{
    if (!have_nvcc)
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    share = fs_join(env.work, "share");
    copy_core(env.root, share);
    setenv("LSCAT_SHARE_DIR", share, 1);
    CHECK_OK(fixture_add_kernel(&env, "ok", id_a));
    CHECK_OK(fixture_add_kernel(&env, "missing_header_shim", id_b));
    struct execute_options o = options();
    struct execute_counts c;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.built_first_try + c.built_after_repair, ==, 2);
    CHECK_INT(c.probed, ==, 2);
    CHECK_INT(c.probe_failed, ==, 2); /* no GPU: the CUDA calls fail */
    CHECK_OK(store_run(env.s, "UPDATE probes SET outcome = 'ok', binding = 'area', detail = NULL "
                       "WHERE kernel_id = ?", "t", id_a));
    CHECK_OK(store_run(env.s, "UPDATE kernels SET status = 'runnable', binding = 'area' WHERE "
                       "id = ?", "t", id_a));
    CHECK_OK(store_run(env.s, "DELETE FROM failures WHERE kernel_id = ?", "t", id_a));
    CHECK_INT(probe_failures(id_b), ==, 1);
    ready = 1;
}

static void check_kept(const struct snap *before, const char *id)
{
    struct snap after;
    snap(&after, id);
    CHECK(strcmp(after.build_key, before->build_key) != 0); /* rebuilt, */
    CHECK(strcmp(after.binary, before->binary) != 0);       /* a new binary */
    char *abs = fs_join(env.work, after.binary);
    CHECK(fs_exists(abs));
    free(abs);
    CHECK_STR(after.probe_key, before->probe_key); /* the very probe, */
    CHECK_STR(after.probed_at, before->probed_at);
    CHECK_INT(after.probe_rowid, ==, before->probe_rowid);
    CHECK_STR(after.status, before->status); /* and its verdict */
    snap_release(&after);
}

static void test_execute__a_new_timing_core_rebuilds_every_harness_but_probes_nothing_again(void)
{
    need_run();
    struct snap a, b;
    snap(&a, id_a);
    snap(&b, id_b);
    CHECK_STR(a.status, "runnable");
    CHECK_STR(b.status, "probe_failed");
    new_timing_core("/* a new timing core */\n");
    struct execute_options o = options();
    struct execute_counts c;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.cached, ==, 0);
    CHECK_INT(c.built_first_try + c.built_after_repair, ==, 2);
    CHECK_INT(c.probes_kept, ==, 2);
    CHECK_INT(c.probed, ==, 0);
    check_kept(&a, id_a);
    check_kept(&b, id_b);
    char *binding = text_of("SELECT binding FROM kernels WHERE id = ?", id_a);
    CHECK_STR(binding, "area");
    free(binding);
    CHECK_INT(probe_failures(id_b), ==, 1); /* B's probe failure stands with its verdict */
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id)); /* and then nothing to do */
    CHECK_INT(c.cached, ==, 2);
    CHECK_INT(c.probed, ==, 0);
    snap_release(&a);
    snap_release(&b);
}

static void test_execute__an_edited_kernel_is_probed_again(void)
{
    need_run();
    struct snap a, b, a2, b2;
    snap(&a, id_a);
    snap(&b, id_b);
    append(id_a, NULL, "/* edited */\n");
    struct execute_options o = options();
    struct execute_counts c;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.cached, ==, 1);
    CHECK_INT(c.built_first_try, ==, 1);
    CHECK_INT(c.probes_kept, ==, 0);
    CHECK_INT(c.probed, ==, 1);
    snap(&a2, id_a);
    snap(&b2, id_b);
    CHECK(strcmp(a2.probe_key, a.probe_key) != 0);
    CHECK_STR(a2.status, "probe_failed"); /* the new probe's verdict (no GPU) */
    CHECK_STR(b2.probe_key, b.probe_key);
    CHECK_INT(b2.probe_rowid, ==, b.probe_rowid);
    snap_release(&a);
    snap_release(&b);
    snap_release(&a2);
    snap_release(&b2);
}

/* Both at once: a new timing core rebuilds both, the edited kernel alone is probed again. */
static void test_execute__a_new_timing_core_and_an_edited_kernel_probe_only_that_kernel(void)
{
    need_run();
    struct snap a, b, b2;
    snap(&a, id_a);
    snap(&b, id_b);
    new_timing_core("/* another timing core */\n");
    append(id_b, NULL, "/* edited */\n");
    struct execute_options o = options();
    struct execute_counts c;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.cached, ==, 0);
    CHECK_INT(c.probes_kept, ==, 1);
    CHECK_INT(c.probed, ==, 1);
    check_kept(&a, id_a);
    snap(&b2, id_b);
    CHECK(strcmp(b2.probe_key, b.probe_key) != 0);
    snap_release(&a);
    snap_release(&b);
    snap_release(&b2);
}

/* Probes as older lscat stored them (cache_key = the build key): taken over when the build key
 * is unchanged, probed again when it changed (nothing proves the probe's inputs unchanged). */
static void test_execute__probes_under_the_build_key_are_taken_over_while_it_stands(void)
{
    need_run();
    struct snap a, b, a2, b2;
    snap(&a, id_a);
    snap(&b, id_b);
    CHECK_OK(store_run(env.s, "UPDATE probes SET cache_key = (SELECT cache_key FROM builds b "
                       "WHERE b.kernel_id = probes.kernel_id)", NULL));
    struct execute_options o = options();
    struct execute_counts c;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.cached, ==, 2);
    CHECK_INT(c.rekeyed, ==, 2);
    CHECK_INT(c.probed, ==, 0);
    snap(&a2, id_a);
    snap(&b2, id_b);
    CHECK_STR(a2.probe_key, a.probe_key);
    CHECK_STR(b2.probe_key, b.probe_key);
    CHECK_INT(a2.probe_rowid, ==, a.probe_rowid);
    CHECK_STR(a2.status, a.status);
    snap_release(&a2);
    snap_release(&b2);
    /* A's probe under its build key again, then a new core: A probed again, B kept */
    CHECK_OK(store_run(env.s, "UPDATE probes SET cache_key = (SELECT cache_key FROM builds b "
                       "WHERE b.kernel_id = probes.kernel_id), detail = 'old' WHERE kernel_id = ?",
                       "t", id_a));
    new_timing_core("/* a third timing core */\n");
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.rekeyed, ==, 0);
    CHECK_INT(c.probes_kept, ==, 1);
    CHECK_INT(c.probed, ==, 1);
    snap(&a2, id_a);
    CHECK_STR(a2.probe_key, a.probe_key); /* probed again under the same probe key */
    char *detail = text_of("SELECT coalesce(detail, '') FROM probes WHERE kernel_id = ?", id_a);
    CHECK(strcmp(detail, "old") != 0);
    free(detail);
    check_kept(&b, id_b);
    snap_release(&a);
    snap_release(&b);
    snap_release(&a2);
}

/* A probe's verdict is its GPU model's: another GPU of the model (a new node, a store merged
 * from another) probes nothing again; another model probes everything. */
static void test_execute__another_gpu_of_the_model_keeps_the_probes_another_model_probes(void)
{
    need_run();
    struct execute_options o = options();
    struct execute_counts c;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.probed, ==, 0);
    CHECK_OK(store_run(env.s, "UPDATE gpus SET uuid = 'GPU-twin' WHERE uuid = 'none'", NULL));
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id)); /* registers a new 'none' */
    CHECK_INT(c.cached, ==, 2);
    CHECK_INT(c.probed, ==, 0);
    int64_t n = 0;
    CHECK_OK(store_query_int(&n, env.s, "SELECT count(*) FROM gpus", NULL));
    CHECK(n >= 2);
    CHECK_OK(store_run(env.s, "UPDATE gpus SET name = 'Another model'", NULL));
    CHECK_OK(store_run(env.s, "UPDATE gpus SET uuid = 'GPU-other' WHERE uuid = 'none'", NULL));
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.probed, ==, 2);
}

int main(void)
{
    have_nvcc = fixture_have_nvcc();
    TEST_RUN(test_build__the_probe_key_ignores_the_timing_core_and_nothing_else);
    TEST_RUN(test_execute__builds_and_probes_two_kernels);
    TEST_RUN(test_execute__a_new_timing_core_rebuilds_every_harness_but_probes_nothing_again);
    TEST_RUN(test_execute__an_edited_kernel_is_probed_again);
    TEST_RUN(test_execute__a_new_timing_core_and_an_edited_kernel_probe_only_that_kernel);
    TEST_RUN(test_execute__probes_under_the_build_key_are_taken_over_while_it_stands);
    TEST_RUN(test_execute__another_gpu_of_the_model_keeps_the_probes_another_model_probes);
    unsetenv("LSCAT_SHARE_DIR");
    fixture_env_release(&env);
    free(share);
    return test_done();
}
