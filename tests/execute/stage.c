/* execute against the real nvcc: one fixture kernel per error class and repair strategy is
 * built once (two at a time), then each test checks what the store recorded for its kernel;
 * later tests check the cache, a rebuild after an edit, a build timeout, and the sandboxed
 * probe of harnesses whose host code misbehaves. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "execute/sandbox.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <arpa/inet.h>
#include <glob.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* The probe limit of the tests that probe every fixture: evil_forkbomb never ends, whatever
 * the limit; every other probe exits at once (no GPU) and has this much room on any machine. */
#define PROBE_LIMIT_S 10

static const char *const fixtures[] = {
    "ok", "missing_header_shim", "missing_header_pull", "missing_header_drop",
    "undeclared_add_header", "undeclared_pull_decl", "unknown_type_pull", "no_matching_overload",
    "template_defaults", "incomplete_type", "redefinition", "removed_cuda_api",
    "host_from_device", "drop_host_code", "link_error", "other", "evil_socket", "evil_write",
    "evil_forkbomb", "dynamic_parallelism", "missing_header_compat", "shadowed_toolkit",
    "shared_overflow", NULL,
};

static struct fixture_env env;
static int ready, have_nvcc;
static struct execute_counts first;
static char ids[32][65];

static const char *id_of(const char *name)
{
    for (int i = 0; fixtures[i]; i++)
        if (strcmp(fixtures[i], name) == 0)
            return ids[i];
    return "";
}

static void need_run(void)
{
    if (!have_nvcc)
        test_skip("nvcc not found");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the first execute run did not complete");
}

static void test_execute__builds_all_fixtures_and_records_failures(void)
{
    if (!have_nvcc)
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&env));
    for (int i = 0; fixtures[i]; i++)
        CHECK_OK(fixture_add_kernel(&env, fixtures[i], ids[i]));
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    o.jobs = 2;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_NEVER;
    CHECK_OK(execute_run(&first, env.s, env.work, &o, env.run_id));
    ready = 1;
    CHECK_INT(first.kernels, ==, 23);
    CHECK_INT(first.build_failed, ==, 4); /* no_matching_overload, incomplete, link, other */
    CHECK_INT(first.built_first_try + first.built_after_repair, ==, 19);
    int64_t n = 0;
    CHECK_OK(store_query_int(&n, env.s, "SELECT count(*) FROM failures WHERE stage = 'execute'",
                             ""));
    CHECK_INT(n, ==, 4);
}

/* The build of `name`: its status, attempt count, fixes; attempt 1's class. */
static void check_build(const char *name, const char *status, const char *first_class,
                        const char *fix, const char *final_class)
{
    need_run();
    char *st = NULL, *fixes = NULL, *cls = NULL, *fcls = NULL;
    CHECK_OK(store_query_text(&st, env.s, "SELECT status FROM builds WHERE kernel_id = ?", "t",
                              id_of(name)));
    CHECK_OK(store_query_text(&fixes, env.s, "SELECT fixes FROM builds WHERE kernel_id = ?", "t",
                              id_of(name)));
    CHECK_OK(store_query_text(&cls, env.s, "SELECT a.error_class FROM build_attempts a JOIN "
                              "builds b ON b.id = a.build_id WHERE b.kernel_id = ? AND "
                              "a.attempt = 1", "t", id_of(name)));
    CHECK_OK(store_query_text(&fcls, env.s, "SELECT error_class FROM builds WHERE kernel_id = ?",
                              "t", id_of(name)));
    CHECK_STR(st, status);
    if (first_class && strcmp(first_class, "none") == 0)
        CHECK(cls == NULL);
    else if (first_class)
        CHECK_STR(cls, first_class);
    if (fix)
        CHECK_CONTAINS(fixes, fix);
    if (final_class)
        CHECK_STR(fcls, final_class);
    free(st);
    free(fixes);
    free(cls);
    free(fcls);
}

static void test_execute__builds_a_clean_kernel_first_try_with_ptxas_resources(void)
{
    check_build("ok", "ok", "none", "[]", NULL);
    int64_t regs = 0, attempts = 0;
    char *px = NULL, *bin = NULL, *kst = NULL;
    CHECK_OK(store_query_int(&regs, env.s, "SELECT registers FROM builds WHERE kernel_id = ?",
                             "t", id_of("ok")));
    CHECK_OK(store_query_int(&attempts, env.s, "SELECT attempts FROM builds WHERE kernel_id = ?",
                             "t", id_of("ok")));
    CHECK_OK(store_query_text(&px, env.s, "SELECT ptxas FROM builds WHERE kernel_id = ?", "t",
                              id_of("ok")));
    CHECK_OK(store_query_text(&bin, env.s, "SELECT binary_path FROM builds WHERE kernel_id = ?",
                              "t", id_of("ok")));
    CHECK_OK(store_query_text(&kst, env.s, "SELECT status FROM kernels WHERE id = ?", "t",
                              id_of("ok")));
    CHECK_INT(regs, >, 0);
    CHECK_INT(attempts, ==, 1);
    CHECK_CONTAINS(px, "\"arch\":\"sm_90\"");
    CHECK_STR(kst, "built");
    char *abs = fs_join(env.work, bin);
    CHECK(fs_exists(abs));
    char *so = xasprintf("%s.so", abs), *obj = xasprintf("%s.o", abs);
    CHECK(fs_exists(so));   /* the same object linked for lscat-runner (docs/tune.md) */
    CHECK(!fs_exists(obj)); /* linked twice, not kept */
    free(so);
    free(obj);
    free(abs);
    free(px);
    free(bin);
    free(kst);
}

static void test_execute__shims_an_old_cuda_samples_helper_header(void)
{
    check_build("missing_header_shim", "ok", "missing_header", "shim_header:cutil_inline.h", NULL);
}
static void test_execute__gives_the_samples_helper_headers_from_lscats_compat_set(void)
{
    /* helper_timer.h, included too, comes with the set: one repair round */
    check_build("missing_header_compat", "ok", "missing_header",
                "[\"compat_header:../../common/inc/helper_cuda.h\"]", NULL);
}
static void test_execute__a_repositorys_own_cuda_h_never_hides_the_toolkits(void)
{
    check_build("shadowed_toolkit", "ok", "missing_header", "pull_header:shadow_defs.h", NULL);
    char *bin = NULL;
    CHECK_OK(store_query_text(&bin, env.s, "SELECT binary_path FROM builds WHERE kernel_id = ?",
                              "t", id_of("shadowed_toolkit")));
    char *log = xasprintf("%s/%.*s/build-2.log", env.work, (int)(strrchr(bin, '/') - bin), bin);
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, log));
    CHECK_CONTAINS(b.data, "-isystem"); /* the pulled headers' folder: after the toolkit's */
    buf_release(&b);
    free(log);
    free(bin);
}
static void test_execute__pulls_a_missing_header_from_the_repository(void)
{
    check_build("missing_header_pull", "ok", "missing_header", "pull_header:common_defs.h", NULL);
}
static void test_execute__drops_an_include_found_nowhere(void)
{
    check_build("missing_header_drop", "ok", "missing_header",
                "drop_include:definitely_not_anywhere.h", NULL);
}
static void test_execute__adds_standard_headers_for_undeclared_names(void)
{
    check_build("undeclared_add_header", "ok", "undeclared_identifier", "add_header:<cstdio>", NULL);
    check_build("undeclared_add_header", "ok", "undeclared_identifier", "add_header:<cfloat>", NULL);
}
static void test_execute__pulls_a_macro_and_a_device_function_from_the_repository(void)
{
    check_build("undeclared_pull_decl", "ok", "undeclared_identifier", "pull_decl:BLOCK_DIM@src/util.cuh", NULL);
    check_build("undeclared_pull_decl", "ok", "undeclared_identifier", "pull_decl:sq@src/util.cuh", NULL);
}
static void test_execute__pulls_an_unknown_type_from_the_repository(void)
{
    check_build("unknown_type_pull", "ok", "unknown_type", "pull_decl:real_t@src/util.cuh", NULL);
}
static void test_execute__leaves_a_mismatched_call_failed_as_no_matching_overload(void)
{
    check_build("no_matching_overload", "failed", "no_matching_overload", "[]",
                "no_matching_overload");
}
static void test_execute__gives_an_undeducible_template_kernel_default_arguments(void)
{
    check_build("template_defaults", "ok", "template", "template_defaults:k<float,32>", NULL);
}
static void test_execute__leaves_an_incomplete_type_failed(void)
{
    check_build("incomplete_type", "failed", "incomplete_type", NULL, "incomplete_type");
}
static void test_execute__drops_a_redefinition_of_a_cuda_builtin_and_a_second_main(void)
{
    check_build("redefinition", "ok", "redefinition", "drop_redefinition:atomicAdd", NULL);
    check_build("redefinition", "ok", "redefinition", "drop_host_code:main", NULL);
}
static void test_execute__rewrites_removed_warp_intrinsics_and_runtime_calls(void)
{
    check_build("removed_cuda_api", "ok", "removed_cuda_api",
                "rewrite_removed_api:__shfl_down->__shfl_down_sync", NULL);
    check_build("removed_cuda_api", "ok", "removed_cuda_api",
                "rewrite_removed_api:__any->__any_sync", NULL);
    check_build("removed_cuda_api", "ok", "removed_cuda_api",
                "cudaThreadSynchronize->cudaDeviceSynchronize", NULL);
}
static void test_execute__marks_a_host_function_called_from_a_kernel_host_device(void)
{
    check_build("host_from_device", "ok", "host_from_device", "host_device:scale", NULL);
}
static void test_execute__drops_host_only_code_that_leaked_into_the_closure(void)
{
    check_build("drop_host_code", "ok", NULL, "drop_host_code:run_on_host", NULL);
}
static void test_execute__classifies_an_unresolved_device_function_as_link_error(void)
{
    check_build("link_error", "failed", "link_error", "[]", "link_error");
}
static void test_execute__classifies_an_error_directive_as_other(void)
{
    check_build("other", "failed", "other", "[]", "other");
    char *fe = NULL;
    CHECK_OK(store_query_text(&fe, env.s, "SELECT a.first_error FROM build_attempts a JOIN "
                              "builds b ON b.id = a.build_id WHERE b.kernel_id = ?", "t",
                              id_of("other")));
    CHECK_CONTAINS(fe, "#error this kernel needs");
    free(fe);
}

static void test_execute__drops_the_block_sizes_whose_shared_tile_overflows(void)
{
    /* 64 KiB at 32: the sizes up to 24 (36 KiB) stay */
    check_build("shared_overflow", "ok", "resource_limit", "add_flag:-DLSCAT_BLOCK_MAX=24", NULL);
    char *log = NULL;
    CHECK_OK(store_query_text(&log, env.s, "SELECT a.log_path FROM build_attempts a JOIN builds b "
                              "ON b.id = a.build_id WHERE b.kernel_id = ? AND a.attempt = 2", "t",
                              id_of("shared_overflow")));
    char *path = fs_join(env.work, log ? log : "");
    struct buf text = BUF_INIT;
    CHECK_OK(buf_read_file(&text, path));
    CHECK_CONTAINS(text.data, " -DLSCAT_BLOCK_MAX=24 "); /* on nvcc's command line */
    buf_release(&text);
    free(path);
    free(log);
}

static void test_execute__builds_dynamic_parallelism_with_relocatable_device_code(void)
{
    check_build("dynamic_parallelism", "ok", "other", "add_flag:-rdc=true", NULL);
}

static void test_execute__a_second_run_rebuilds_nothing(void)
{
    need_run();
    int64_t before = 0, after = 0;
    CHECK_OK(store_query_int(&before, env.s, "SELECT count(*) FROM build_attempts", ""));
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_NEVER;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_OK(store_query_int(&after, env.s, "SELECT count(*) FROM build_attempts", ""));
    CHECK_INT(c.cached, ==, 23);
    CHECK_INT(c.built_first_try + c.built_after_repair + c.build_failed, ==, 0);
    CHECK_INT(after, ==, before); /* no nvcc run; the bench measures how long this takes */
}

static void append_to_kernel(const char *name, const char *text)
{
    char *rel = NULL;
    CHECK_OK(store_query_text(&rel, env.s, "SELECT dir FROM kernels WHERE id = ?", "t",
                              id_of(name)));
    char *path = xasprintf("%s/%s/kernel.cu", env.work, rel);
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    buf_adds(&b, text);
    CHECK_OK(fs_write_atomic(path, b.data, b.len));
    buf_release(&b);
    free(path);
    free(rel);
}

static void test_execute__an_edited_kernel_times_out_then_is_rebuilt(void)
{
    need_run();
    /* the edit includes a FIFO nobody writes: nvcc's preprocessor waits on it forever, on any
     * machine, so the build's limit only says how long the test waits */
    char *fifo = fs_join(env.work, "never-written.fifo");
    char *line = xasprintf("/* edited */\n#include \"%s\"\n", fifo);
    CHECK(mkfifo(fifo, 0644) == 0);
    append_to_kernel("ok", line);
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 1;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_NEVER;
    o.build_timeout_s = 5;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.cached, ==, 22);
    CHECK_INT(c.build_failed, ==, 1);
    check_build("ok", "failed", "timeout", "[]", "timeout");
    /* the same kernel.cu (the same cache key), the FIFO now an empty file: a timeout is
     * retried, not cached */
    CHECK(unlink(fifo) == 0);
    test_write_file(fifo, "", 0);
    free(fifo);
    free(line);
    o.build_timeout_s = 300;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.cached, ==, 22);
    CHECK_INT(c.built_first_try, ==, 1);
    check_build("ok", "ok", "none", "[]", NULL);
}

/* A listener on 127.0.0.1 that the socket fixture tries to reach. */
static int listen_local(int *port_out)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 4) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0)
        return -1;
    *port_out = ntohs(a.sin_port);
    return s;
}

static void check_probe(const char *name, const char *outcome, const char *detail)
{
    char *o = NULL, *d = NULL, *k = NULL;
    CHECK_OK(store_query_text(&o, env.s, "SELECT outcome FROM probes WHERE kernel_id = ?", "t",
                              id_of(name)));
    CHECK_OK(store_query_text(&d, env.s, "SELECT detail FROM probes WHERE kernel_id = ?", "t",
                              id_of(name)));
    CHECK_OK(store_query_text(&k, env.s, "SELECT status FROM kernels WHERE id = ?", "t",
                              id_of(name)));
    CHECK_STR(o, outcome);
    if (detail)
        CHECK_CONTAINS(d, detail);
    CHECK_STR(k, strcmp(outcome, "ok") == 0 ? "runnable" : "probe_failed");
    free(o);
    free(d);
    free(k);
}

static void test_execute__sandboxed_probes_stop_misbehaving_host_code_and_go_on(void)
{
    need_run();
    const struct sandbox_caps *caps = sandbox_detect(env.work);
    if (caps->root && !caps->drop_uid)
        test_skip("root without a usable unprivileged uid: a fork bomb would not be contained");
    int port = 0, ls = listen_local(&port);
    CHECK(ls >= 0);
    char portbuf[16];
    snprintf(portbuf, sizeof(portbuf), "%d", port);
    char *outside = fs_join(env.work, "escaped.txt");
    setenv("LSCAT_TEST_PORT", portbuf, 1);
    setenv("LSCAT_TEST_OUTSIDE", outside, 1);
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_FORCE;
    o.probe_timeout_s = PROBE_LIMIT_S;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.probed, ==, 19);
    int conn = accept(ls, NULL, NULL);
    close(ls);
    int net_isolated = caps->bwrap || caps->netns; /* GPU probes run without Landlock */
    if (net_isolated)
        CHECK_INT(conn, <, 0);
    if (conn >= 0)
        close(conn);
    int write_confined = caps->bwrap || caps->drop_uid;
    if (write_confined)
        CHECK(!fs_exists(outside));
    check_probe("evil_forkbomb", "timeout", "timeout");
    if (write_confined)
        check_probe("evil_write", "cuda_error", "exit 5");
    if (net_isolated)
        check_probe("evil_socket", "cuda_error", "exit 5");
    free(outside);
}

static void kernel_status(char *out, size_t size, const char *id)
{
    struct store_stmt *st = NULL;
    out[0] = 0;
    if (store_prepare(&st, env.s, "SELECT status FROM kernels WHERE id = ?") < 0)
        return;
    store_bind(st, "t", id);
    if (store_step(st) == STORE_ROW)
        snprintf(out, size, "%s", store_col_text(st, 0));
    store_finalize(st);
}

/* With probing, every build that ran ok (or was cached) is probed, through a short queue
 * (--build-ahead 3: the builders of cached kernels wait for the probes); without, nothing is. */
static void test_execute__probes_every_build_through_a_bounded_queue(void)
{
    need_run();
    int64_t kernels = 0;
    CHECK_OK(store_query_int(&kernels, env.s, "SELECT count(*) FROM kernels", NULL));
    CHECK_OK(store_run(env.s, "DELETE FROM probes", NULL));
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_FORCE;
    o.probe_timeout_s = PROBE_LIMIT_S;
    o.build_ahead = 3;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.kernels, ==, (int)kernels);
    int64_t built = 0, probed = 0;
    CHECK_OK(store_query_int(&built, env.s, "SELECT count(*) FROM builds WHERE status = 'ok'",
                             NULL));
    CHECK_OK(store_query_int(&probed, env.s, "SELECT count(DISTINCT kernel_id) FROM probes",
                             NULL));
    CHECK(built > 5);
    CHECK_INT(probed, ==, built); /* every build was probed, once */
    CHECK_INT(c.probed, ==, built);
    CHECK_INT(c.runnable + c.probe_failed, ==, built);
    o.probe = EXECUTE_PROBE_NEVER; /* without probes: nothing to probe, nothing probed */
    CHECK_OK(store_run(env.s, "DELETE FROM probes", NULL));
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.probed, ==, 0);
    CHECK_INT(c.cached, ==, (int)kernels);
    o.probe = EXECUTE_PROBE_FORCE; /* probed again for the rebuild below */
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.probed, ==, built);
    /* A binary gone (a fresh GPU node with the store carried over) is rebuilt with the same
     * cache key: its probe and verdict stand, nothing is probed again. */
    struct store_stmt *st = NULL;
    char *bin = NULL, *kid = NULL;
    int64_t probe_row = 0, probe_row_after = 0;
    CHECK_OK(store_prepare(&st, env.s, "SELECT b.binary_path, b.kernel_id, p.rowid FROM builds b "
                           "JOIN probes p ON p.kernel_id = b.kernel_id WHERE b.status = 'ok' "
                           "ORDER BY b.kernel_id LIMIT 1"));
    CHECK_INT(store_step(st), ==, STORE_ROW);
    bin = xstrdup(store_col_text(st, 0));
    kid = xstrdup(store_col_text(st, 1));
    probe_row = store_col_int(st, 2);
    store_finalize(st);
    char *abs = bin[0] == '/' ? xstrdup(bin) : fs_join(env.work, bin);
    CHECK(unlink(abs) == 0);
    char status_before[32] = "", status_after[32] = "";
    kernel_status(status_before, sizeof(status_before), kid);
    o.probe = EXECUTE_PROBE_FORCE;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK(fs_exists(abs));
    CHECK_INT(c.probed, ==, 0);
    CHECK_OK(store_query_int(&probe_row_after, env.s, "SELECT rowid FROM probes WHERE "
                             "kernel_id = ?", "t", kid));
    CHECK_INT(probe_row_after, ==, probe_row);
    kernel_status(status_after, sizeof(status_after), kid);
    CHECK_STR(status_after, status_before);
    /* Its build row gone too (a tool deleted it; the probe stays): the rebuild cannot show it is
     * the probed harness, so the probe goes and the kernel is probed again. Before session 25 the
     * probe was deleted and none was made: the kernel stayed 'built', never probed. */
    CHECK(unlink(abs) == 0);
    CHECK_OK(store_run(env.s, "DELETE FROM build_attempts WHERE build_id IN (SELECT id FROM "
                       "builds WHERE kernel_id = ?)", "t", kid));
    CHECK_OK(store_run(env.s, "DELETE FROM builds WHERE kernel_id = ?", "t", kid));
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.probed, ==, 1);
    int64_t probes_now = 0;
    CHECK_OK(store_query_int(&probes_now, env.s, "SELECT count(*) FROM probes WHERE kernel_id = ?",
                             "t", kid));
    CHECK_INT(probes_now, ==, 1);
    kernel_status(status_after, sizeof(status_after), kid);
    CHECK_STR(status_after, status_before);
    free(abs);
    free(bin);
    free(kid);
}

/* Set kernel `name`'s params and its probe as an older lscat left them (bindings without
 * "configs": before 2D kernels were probed with 2D blocks only). */
static void stale_probe(const char *name, const char *params, const char *outcome,
                        const char *status)
{
    CHECK_OK(store_run(env.s, "UPDATE kernels SET params = ?, status = ? WHERE id = ?", "ttt",
                       params, status, id_of(name)));
    CHECK_OK(store_run(env.s, "UPDATE probes SET outcome = ?, binding = 'area', sanitizer = NULL, "
                       "detail = NULL, bindings = '[{\"binding\":\"area\",\"outcome\":\"' || ? "
                       "|| '\"}]' WHERE kernel_id = ?", "ttt", outcome, outcome, id_of(name)));
}

/* A changed probe plan re-probes only the kernels whose verdict it could change: 2D kernels
 * whose probe (same build) predates the 2D-only plan and was not a clean default ok. */
static void test_execute__probes_made_before_the_2d_plan_are_redone_where_they_could_change(void)
{
    need_run();
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_FORCE;
    o.probe_timeout_s = PROBE_LIMIT_S;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.probed, ==, 0); /* everything probed with this build already */
    const char *p2d = "{\"is2d\":true,\"params\":[]}", *p1d = "{\"is2d\":false,\"params\":[]}";
    stale_probe("ok", p2d, "illegal_address", "probe_failed");       /* could change: again */
    stale_probe("missing_header_shim", p2d, "ok", "runnable");       /* clean ok: stays */
    stale_probe("missing_header_pull", p1d, "illegal_address", "probe_failed"); /* 1D: stays */
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.probed, ==, 1);
    CHECK_INT(c.reprobed, ==, 1);
    CHECK_INT(c.probed_2d, ==, 1);
    char *bindings = NULL;
    CHECK_OK(store_query_text(&bindings, env.s, "SELECT bindings FROM probes WHERE kernel_id = ?",
                              "t", id_of("ok")));
    CHECK_CONTAINS(bindings, "\"configs\":[\"64x64 16x16x1\"]");
    free(bindings);
    /* probed with the 2D plan now: not again, whatever it gave */
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.probed, ==, 0);
}

/* ---------------------------------------------------------------- builds beside probes */

/* Three copies of the probe_waits fixture (its probe takes time; see its harness.cu) under the
 * id prefix "00000000", so that --kernel selects them alone. */
#define WAITS_PREFIX "00000000"
static char waits_ids[3][65];
static int waits_added;

static void add_waits_kernels(void)
{
    for (int i = 0; i < 3 && !waits_added; i++) {
        char seed[32], hex[65];
        snprintf(seed, sizeof(seed), "probe_waits-%d", i);
        sha256_hex(hex, seed, strlen(seed));
        snprintf(waits_ids[i], sizeof(waits_ids[i]), "%s%s", WAITS_PREFIX, hex + 8);
        CHECK_OK(fixture_add_kernel_as(&env, "probe_waits", waits_ids[i]));
    }
    waits_added = 1;
}

/* Harness binaries under <work>/builds/ (what the probe_waits harness counts). */
static int built_harnesses(void)
{
    char *dir = fs_join(env.work, "builds");
    char *cmd = xasprintf("ls %s/*/harness 2>/dev/null | wc -l", dir);
    FILE *f = popen(cmd, "r");
    int n = -1;
    if (f && fscanf(f, "%d", &n) != 1)
        n = -1;
    if (f)
        pclose(f);
    free(cmd);
    free(dir);
    return n;
}

static struct execute_options waits_options(void)
{
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    o.jobs = 1;
    o.probe_jobs = 1;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_FORCE;
    o.probe_timeout_s = 900; /* a probe that waits for builds: room for nvcc on a busy machine */
    o.kernel = WAITS_PREFIX;
    return o;
}

/* One builder, one probe worker: the first kernel's probe starts as soon as it is built and
 * waits until all three are built, so it sees the other two finish while it runs (the probe
 * of a design that builds everything first would see all three at its start). */
static void test_execute__probes_a_kernel_while_the_next_ones_build(void)
{
    need_run();
    add_waits_kernels();
    int before = built_harnesses();
    CHECK(before > 0);
    char want[16];
    snprintf(want, sizeof(want), "%d", before + 3);
    setenv("LSCAT_TEST_PROBE_WAIT_FOR", want, 1);
    struct execute_options o = waits_options();
    struct execute_counts c;
    int rc = execute_run(&c, env.s, env.work, &o, env.run_id);
    unsetenv("LSCAT_TEST_PROBE_WAIT_FOR");
    CHECK_OK(rc);
    CHECK_INT(c.kernels, ==, 3);
    CHECK_INT(c.built_first_try, ==, 3);
    CHECK_INT(c.probed, ==, 3);
    CHECK_INT(c.errors, ==, 0);
    CHECK_INT(c.built_while_probing, >=, 1);
    char *detail = NULL;
    CHECK_OK(store_query_text(&detail, env.s, "SELECT detail FROM probes WHERE kernel_id = ?",
                              "t", waits_ids[0]));
    int first = -1, last = -1;
    const char *saw = detail ? strstr(detail, "saw ") : NULL;
    CHECK(saw && sscanf(saw, "saw %d built, then %d", &first, &last) == 2);
    printf("# first probe saw %d harnesses at its start, %d at its end (%d before the run)\n",
           first, last, before);
    CHECK_INT(first, <, before + 3); /* it started before the last build ended */
    CHECK_INT(last, ==, before + 3);
    int64_t n = 0;
    CHECK_OK(store_query_int(&n, env.s, "SELECT count(*) FROM kernels WHERE id LIKE '"
                             WAITS_PREFIX "%' AND status = 'probe_failed'", NULL));
    CHECK_INT(n, ==, 3); /* no configuration ran: cuda_error, recorded */
    free(detail);
}

/* --build-ahead 1 with probes of 2 s: the builders (of cached kernels, instant) wait: the
 * third of them for as long as the first probe runs, unless its thread got no CPU for 4 s. */
static void test_execute__builders_wait_while_build_ahead_kernels_wait_for_a_probe(void)
{
    need_run();
    add_waits_kernels();
    CHECK_OK(store_run(env.s, "DELETE FROM probes WHERE kernel_id LIKE '" WAITS_PREFIX "%'",
                       NULL));
    setenv("LSCAT_TEST_PROBE_SLEEP_S", "2", 1);
    struct execute_options o = waits_options();
    struct execute_counts c;
    o.build_ahead = 1;
    int rc = execute_run(&c, env.s, env.work, &o, env.run_id);
    unsetenv("LSCAT_TEST_PROBE_SLEEP_S");
    CHECK_OK(rc);
    CHECK_INT(c.cached, ==, 3);
    CHECK_INT(c.probed, ==, 3);
    printf("# builders waited %.2f s, the probe worker %.2f s\n", c.build_wait_s,
           c.probe_wait_s);
    CHECK(c.build_wait_s > 0); /* the third waited for a probe to end */
}

static volatile int stop_flag;

static int a_probe_holds(void *arg)
{
    (void)arg;
    glob_t g;
    char *pat = xasprintf("%s/builds/*/probe-*/holding", env.work);
    int n = glob(pat, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    if (n)
        globfree(&g);
    free(pat);
    return n > 0;
}

/* Stops the run once the first probe is surely running, then lets that probe end. */
static void *stop_while_a_probe_runs(void *arg)
{
    (void)arg;
    test_wait_until(a_probe_holds, NULL);
    stop_flag = 1;
    char *release = fs_join(env.work, "probe-release");
    test_write_file(release, "", 0);
    free(release);
    return NULL;
}

/* A stop (SIGINT/SIGTERM in lscat-execute) while the first of three probes runs (it holds
 * until told): that probe is finished and recorded, the other two are not started; the next
 * run does them. */
static void test_execute__a_stop_finishes_the_probe_in_flight_and_starts_no_other(void)
{
    need_run();
    add_waits_kernels();
    CHECK_OK(store_run(env.s, "DELETE FROM probes WHERE kernel_id LIKE '" WAITS_PREFIX "%'",
                       NULL));
    setenv("LSCAT_TEST_PROBE_HOLD", "1", 1);
    struct execute_options o = waits_options();
    struct execute_counts c;
    pthread_t t;
    stop_flag = 0;
    o.stop = &stop_flag;
    CHECK(pthread_create(&t, NULL, stop_while_a_probe_runs, NULL) == 0);
    int rc = execute_run(&c, env.s, env.work, &o, env.run_id);
    pthread_join(t, NULL);
    unsetenv("LSCAT_TEST_PROBE_HOLD");
    CHECK_OK(rc);
    CHECK_INT(c.interrupted, ==, 1);
    CHECK_INT(c.probed, ==, 1);
    CHECK_INT(c.errors, ==, 0);
    int64_t n = 0;
    CHECK_OK(store_query_int(&n, env.s, "SELECT count(*) FROM probes WHERE kernel_id LIKE '"
                             WAITS_PREFIX "%'", NULL));
    CHECK_INT(n, ==, 1);
    o.stop = NULL;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.interrupted, ==, 0);
    CHECK_INT(c.cached, ==, 3);
    CHECK_INT(c.probed, ==, 2);
    CHECK_OK(store_query_int(&n, env.s, "SELECT count(*) FROM probes WHERE kernel_id LIKE '"
                             WAITS_PREFIX "%'", NULL));
    CHECK_INT(n, ==, 3);
}

/* A device that goes makes runs hang until their deadlines before any start fails (sessions
 * 19, 23, 24 on an H200). So a verdict whose last run ended on the clock is held by its worker:
 * dropped when a later probe finds the device gone (the kernel stays 'built' for the next run),
 * stored once a later probe ended otherwise, or at the end of the run. Stand-ins: probe_hangs
 * (host code that never returns), device_gone (the harness core's words for a GPU that fell off
 * the bus), ok (a verdict off the clock: no GPU here, or runnable on one). */
static void test_execute__a_hang_before_the_device_is_found_gone_is_not_recorded(void)
{
    if (!have_nvcc)
        test_skip("nvcc not found");
    struct fixture_env e;
    static const char *const names[] = { "probe_hangs", "device_gone", "ok", "probe_hangs" };
    static const char *const kid[] = {
        "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
        "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
        "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3",
        "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4" };
    CHECK_OK(fixture_env_init(&e));
    for (int i = 0; i < 4; i++)
        CHECK_OK(fixture_add_kernel_as(&e, names[i], kid[i]));
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 1; /* built, and queued for the one probe worker, in id order */
    o.probe_jobs = 1;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_FORCE;
    o.probe_timeout_s = PROBE_LIMIT_S; /* probe_hangs never returns; the others exit at once */
    CHECK_OK(execute_run(&c, e.s, e.work, &o, e.run_id));
    CHECK_INT(c.device_lost, ==, 1);
    CHECK_INT(c.probed, ==, 0);
    CHECK_INT(c.unprobed, ==, 4); /* the hang dropped, device_gone, the two never taken */
    int64_t n = -1;
    CHECK_OK(store_query_int(&n, e.s, "SELECT count(*) FROM probes", NULL));
    CHECK_INT(n, ==, 0);
    CHECK_OK(store_query_int(&n, e.s, "SELECT count(*) FROM kernels WHERE status = 'built'",
                             NULL));
    CHECK_INT(n, ==, 4);
    /* the device back (device_gone out of the store): the hang is stored once ok's probe ended
     * off the clock, and the last kernel's hang at the end of the run */
    CHECK_OK(store_run(e.s, "DELETE FROM builds WHERE kernel_id = ?", "t", kid[1]));
    CHECK_OK(store_run(e.s, "DELETE FROM kernel_occurrences WHERE kernel_id = ?", "t", kid[1]));
    CHECK_OK(store_run(e.s, "DELETE FROM kernels WHERE id = ?", "t", kid[1]));
    CHECK_OK(execute_run(&c, e.s, e.work, &o, e.run_id));
    CHECK_INT(c.device_lost, ==, 0);
    CHECK_INT(c.probed, ==, 3);
    CHECK_INT(c.unprobed, ==, 0);
    for (int i = 0; i < 4; i += 3) {
        char *out = fixture_query_text(&e, "SELECT outcome FROM probes WHERE kernel_id = ?",
                                       kid[i]);
        CHECK_STR(out, "timeout");
        free(out);
    }
    char *ok = fixture_query_text(&e, "SELECT outcome FROM probes WHERE kernel_id = ?", kid[2]);
    CHECK(ok != NULL && strcmp(ok, "timeout") != 0);
    free(ok);
    fixture_env_release(&e);
}

int main(void)
{
    have_nvcc = fixture_have_nvcc();
    TEST_RUN(test_execute__builds_all_fixtures_and_records_failures);
    TEST_RUN(test_execute__a_hang_before_the_device_is_found_gone_is_not_recorded);
    TEST_RUN(test_execute__builds_a_clean_kernel_first_try_with_ptxas_resources);
    TEST_RUN(test_execute__shims_an_old_cuda_samples_helper_header);
    TEST_RUN(test_execute__gives_the_samples_helper_headers_from_lscats_compat_set);
    TEST_RUN(test_execute__a_repositorys_own_cuda_h_never_hides_the_toolkits);
    TEST_RUN(test_execute__pulls_a_missing_header_from_the_repository);
    TEST_RUN(test_execute__drops_an_include_found_nowhere);
    TEST_RUN(test_execute__adds_standard_headers_for_undeclared_names);
    TEST_RUN(test_execute__pulls_a_macro_and_a_device_function_from_the_repository);
    TEST_RUN(test_execute__pulls_an_unknown_type_from_the_repository);
    TEST_RUN(test_execute__leaves_a_mismatched_call_failed_as_no_matching_overload);
    TEST_RUN(test_execute__gives_an_undeducible_template_kernel_default_arguments);
    TEST_RUN(test_execute__leaves_an_incomplete_type_failed);
    TEST_RUN(test_execute__drops_a_redefinition_of_a_cuda_builtin_and_a_second_main);
    TEST_RUN(test_execute__rewrites_removed_warp_intrinsics_and_runtime_calls);
    TEST_RUN(test_execute__marks_a_host_function_called_from_a_kernel_host_device);
    TEST_RUN(test_execute__drops_host_only_code_that_leaked_into_the_closure);
    TEST_RUN(test_execute__classifies_an_unresolved_device_function_as_link_error);
    TEST_RUN(test_execute__classifies_an_error_directive_as_other);
    TEST_RUN(test_execute__builds_dynamic_parallelism_with_relocatable_device_code);
    TEST_RUN(test_execute__drops_the_block_sizes_whose_shared_tile_overflows);
    TEST_RUN(test_execute__a_second_run_rebuilds_nothing);
    TEST_RUN(test_execute__an_edited_kernel_times_out_then_is_rebuilt);
    TEST_RUN(test_execute__sandboxed_probes_stop_misbehaving_host_code_and_go_on);
    TEST_RUN(test_execute__probes_made_before_the_2d_plan_are_redone_where_they_could_change);
    TEST_RUN(test_execute__probes_every_build_through_a_bounded_queue);
    TEST_RUN(test_execute__probes_a_kernel_while_the_next_ones_build);
    TEST_RUN(test_execute__builders_wait_while_build_ahead_kernels_wait_for_a_probe);
    TEST_RUN(test_execute__a_stop_finishes_the_probe_in_flight_and_starts_no_other);
    fixture_env_release(&env);
    return test_done();
}
