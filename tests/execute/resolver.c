/* The repair loop's repository lookups through lscat-isolate's libclang resolve service
 * (execute/isoresolve.c), against the real lscat-isolate and the real nvcc: a declaration is
 * pulled with what it depends on in one round where the textual search needs more; the
 * textual fallback when lscat-isolate is absent; a hanging and a crashing service (stand-in
 * scripts: the only place a stand-in is used) are killed, restarted, and given up on. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "execute/isoresolve.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const kernels[] = { "resolve_struct_macro", "resolve_function_chain",
                                       "resolve_enumerator", "resolve_kept_piece", NULL };

static char *repo_path(void)
{
    char *root = fixture_source_root();
    char *p = xasprintf("%s/tests/execute/fixtures/resolver-repo", root);
    free(root);
    return p;
}

/* A work folder holding `names`, all occurring in the resolver fixture repository. */
static void setup(struct fixture_env *env, const char *const *names, char ids[][65])
{
    CHECK_OK(fixture_env_init(env));
    char *repo = repo_path();
    CHECK_OK(store_run(env->s, "INSERT INTO sources(id, root) VALUES (2, ?)", "t", repo));
    free(repo);
    for (int i = 0; names[i]; i++) {
        CHECK_OK(fixture_add_kernel(env, names[i], ids[i]));
        CHECK_OK(store_run(env->s, "UPDATE kernel_occurrences SET source_id = 2 WHERE "
                           "kernel_id = ?", "t", ids[i]));
    }
}

static void build_all(struct fixture_env *env, struct execute_counts *c)
{
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    o.jobs = 2;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_NEVER;
    CHECK_OK(execute_run(c, env->s, env->work, &o, env->run_id));
}

/* status, attempts and fixes of a kernel's build. */
static void build_of(struct fixture_env *env, const char *id, char **status, int64_t *attempts,
                     char **fixes)
{
    CHECK_OK(store_query_text(status, env->s, "SELECT status FROM builds WHERE kernel_id = ?",
                              "t", id));
    CHECK_OK(store_query_int(attempts, env->s, "SELECT attempts FROM builds WHERE kernel_id = ?",
                             "t", id));
    CHECK_OK(store_query_text(fixes, env->s, "SELECT fixes FROM builds WHERE kernel_id = ?", "t",
                              id));
}

static void test_resolver__pulls_declarations_with_their_dependencies_in_one_round(void)
{
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    char *isolate = xasprintf("%s/lscat-isolate", test_bin_dir());
    if (access(isolate, X_OK) != 0) {
        free(isolate);
        test_skip("lscat-isolate was not built (no libclang)");
    }
    free(isolate);
    struct fixture_env env;
    char ids[8][65];
    struct execute_counts c;
    setup(&env, kernels, ids);
    build_all(&env, &c);
    CHECK_INT(c.built_after_repair, ==, 4);
    static const char *const want[] = {
        "pull_decl:Matrix@include/matrix.cuh:6(isolate)", "pull_decl:scaled@include/matrix.cuh:16(isolate)",
        "pull_decl:MODE_SCALED@include/matrix.cuh:21(isolate)",
        "pull_decl:scaled@include/matrix.cuh:16(isolate)" };
    for (int i = 0; kernels[i]; i++) {
        char *st = NULL, *fixes = NULL;
        int64_t attempts = 0;
        build_of(&env, ids[i], &st, &attempts, &fixes);
        CHECK_STR(st, "ok");
        CHECK_INT(attempts, ==, 2); /* one failed build, one repair round, built */
        CHECK_CONTAINS(fixes, want[i]);
        free(st);
        free(fixes);
    }
    char *cls = NULL;
    CHECK_OK(store_query_text(&cls, env.s, "SELECT a.error_class FROM build_attempts a JOIN builds "
                              "b ON b.id = a.build_id WHERE b.kernel_id = ? AND a.attempt = 1", "t",
                              ids[0]));
    CHECK(strcmp(cls, "unknown_type") == 0 || strcmp(cls, "undeclared_identifier") == 0);
    free(cls);
    /* the kept piece: clampf is defined once in the repaired kernel.cu */
    char *bin = NULL;
    CHECK_OK(store_query_text(&bin, env.s, "SELECT binary_path FROM builds WHERE kernel_id = ?",
                              "t", ids[3]));
    char *dir = fs_join(env.work, bin);
    *strrchr(dir, '/') = '\0';
    char *kpath = fs_join(dir, "kernel.cu");
    struct buf k = BUF_INIT;
    CHECK_OK(buf_read_file(&k, kpath));
    const char *first = strstr(k.data, "float clampf(");
    CHECK(first && !strstr(first + 1, "float clampf("));
    CHECK_CONTAINS(k.data, "(isolate) */");
    buf_release(&k);
    free(kpath);
    free(dir);
    free(bin);
    fixture_env_release(&env);
}

/* With LSCAT_BIN pointing at a folder without lscat-isolate: the textual search, said once. */
static void test_resolver__falls_back_to_the_text_search_without_lscat_isolate(void)
{
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    char *old = getenv("LSCAT_BIN") ? xstrdup(getenv("LSCAT_BIN")) : NULL;
    char *empty = xasprintf("%s/empty-bin", test_tmpdir());
    CHECK_OK(fs_mkdirs(empty, 0755));
    setenv("LSCAT_BIN", empty, 1);
    struct fixture_env env;
    char ids[8][65];
    struct execute_counts c;
    const char *const names[] = { "resolve_struct_macro", NULL };
    setup(&env, names, ids);
    char *log = xasprintf("%s/stderr.txt", test_tmpdir());
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    build_all(&env, &c);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    if (old)
        setenv("LSCAT_BIN", old, 1);
    else
        unsetenv("LSCAT_BIN");
    char *st = NULL, *fixes = NULL;
    int64_t attempts = 0;
    build_of(&env, ids[0], &st, &attempts, &fixes);
    /* the text search pulls the struct without the macro it uses: one more round */
    CHECK_CONTAINS(fixes, "pull_decl:Matrix@include/matrix.cuh:6(text)");
    CHECK_CONTAINS(fixes, "pull_decl:MAT_TILE@include/matrix.cuh:3(text)");
    CHECK_STR(st, "ok");
    CHECK_INT(attempts, ==, 3);
    struct buf err = BUF_INIT;
    CHECK_OK(buf_read_file(&err, log));
    const char *said = strstr(err.data, "lscat-isolate is not in $LSCAT_BIN");
    CHECK(said != NULL);
    CHECK(!strstr(said + 1, "lscat-isolate is not in $LSCAT_BIN")); /* once */
    CHECK_CONTAINS(err.data, "textual search");
    buf_release(&err);
    free(st);
    free(fixes);
    free(log);
    free(empty);
    free(old);
    fixture_env_release(&env);
}

/* A stand-in lscat-isolate: answers ping, then `action` on the first real request. */
static char *stand_in(const char *name, const char *action)
{
    char *dir = xasprintf("%s/%s", test_tmpdir(), name);
    CHECK_OK(fs_mkdirs(dir, 0755));
    char *exe = fs_join(dir, "lscat-isolate");
    char *script = xasprintf("#!/bin/sh\n"
                             "read line\n"
                             "printf 'R pong 1\\nversion 1\\n1\\n'\n"
                             "echo $$ >> %s/pids\n"
                             "read line\n"
                             "%s\n", dir, action);
    test_write_file(exe, script, strlen(script));
    chmod(exe, 0755);
    free(script);
    free(dir);
    return exe;
}

static int lookup_with(struct isoresolve *r, const char *ident, const char *have, const char **via)
{
    char *repo = repo_path();
    struct buf out = BUF_INIT, origin = BUF_INIT;
    const struct repair_resolver *rs = isoresolve_resolver(r);
    int rc = rs->find_decl(rs->ctx, repo, ident, have, &out, &origin, via);
    buf_release(&out);
    buf_release(&origin);
    free(repo);
    return rc;
}

static int lookup(struct isoresolve *r, const char *ident, const char **via)
{
    return lookup_with(r, ident, "", via);
}

/* Every pid the stand-in recorded is gone (killed and reaped). */
static void check_children_gone(const char *exe)
{
    char *pids = xasprintf("%.*s/pids", (int)(strrchr(exe, '/') - exe), exe);
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, pids));
    int n = 0;
    for (char *save = NULL, *p = strtok_r(b.data, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
        CHECK(kill(atoi(p), 0) != 0);
        n++;
    }
    CHECK_INT(n, >, 0);
    buf_release(&b);
    free(pids);
}

static void test_resolver__kills_a_hanging_service_restarts_it_then_gives_up(void)
{
    char *exe = stand_in("hang", "sleep 600");
    struct isoresolve_options o = ISORESOLVE_OPTIONS_INIT;
    o.exe = exe;
    o.timeout_s = 0.5;
    o.max_starts = 2;
    struct isoresolve *r = isoresolve_new(&o);
    const char *via = NULL;
    double t0 = fs_mono_s();
    CHECK_OK(lookup(r, "Matrix", &via)); /* timed out: the text search answered */
    CHECK_STR(via, "text");
    char *big = xmalloc(1 << 20); /* more than a pipe holds: the write must time out too */
    memset(big, 'x', (1 << 20) - 1);
    big[(1 << 20) - 1] = '\0';
    CHECK_OK(lookup_with(r, "MAT_TILE", big, &via)); /* restarted, timed out again */
    free(big);
    CHECK_OK(lookup(r, "MAT_TILE", &via)); /* given up: no third start */
    CHECK_STR(via, "text");
    CHECK(fs_mono_s() - t0 < 300); /* it never waited for the hang (600 s) */
    int served, fallback, starts;
    isoresolve_stats(r, &served, &fallback, &starts);
    CHECK_INT(starts, ==, 2);
    CHECK_INT(served, ==, 0);
    CHECK_INT(fallback, ==, 3);
    isoresolve_free(r);
    check_children_gone(exe);
    free(exe);
}

static void test_resolver__restarts_a_crashed_service(void)
{
    char *exe = stand_in("crash", "kill -SEGV $$");
    struct isoresolve_options o = ISORESOLVE_OPTIONS_INIT;
    o.exe = exe;
    o.timeout_s = 5;
    struct isoresolve *r = isoresolve_new(&o);
    const char *via = NULL;
    CHECK_OK(lookup(r, "Matrix", &via));
    CHECK_STR(via, "text");
    CHECK_OK(lookup(r, "scaled", &via));
    int served, fallback, starts;
    isoresolve_stats(r, &served, &fallback, &starts);
    CHECK_INT(starts, ==, 2);
    isoresolve_free(r);
    check_children_gone(exe);
    free(exe);
}

/* A lscat-isolate that cannot start at all (here: not a program; on a GPU node: libclang
 * missing) is given up at once, and the log says so once. */
static void test_resolver__gives_up_at_once_on_a_service_that_cannot_start(void)
{
    char *dir = xasprintf("%s/broken", test_tmpdir());
    CHECK_OK(fs_mkdirs(dir, 0755));
    char *exe = fs_join(dir, "lscat-isolate");
    test_write_file(exe, "not a program\n", 14);
    chmod(exe, 0755);
    struct isoresolve_options o = ISORESOLVE_OPTIONS_INIT;
    o.exe = exe;
    o.timeout_s = 5;
    struct isoresolve *r = isoresolve_new(&o);
    char *log = xasprintf("%s/broken.txt", test_tmpdir());
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    const char *via = NULL;
    int rc1 = lookup(r, "Matrix", &via), rc2 = lookup(r, "scaled", &via);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK_OK(rc1);
    CHECK_OK(rc2);
    CHECK_STR(via, "text");
    int served, fallback, starts;
    isoresolve_stats(r, &served, &fallback, &starts);
    CHECK_INT(starts, ==, 1);
    CHECK_INT(fallback, ==, 2);
    struct buf err = BUF_INIT;
    CHECK_OK(buf_read_file(&err, log));
    const char *said = strstr(err.data, "warning:");
    CHECK(said && !strstr(said + 1, "warning:")); /* one line */
    CHECK_CONTAINS(err.data, "did not start");
    buf_release(&err);
    isoresolve_free(r);
    free(log);
    free(exe);
    free(dir);
}

/* The real service through the client: found by libclang, and not found by either. */
static void test_resolver__asks_the_real_service_and_says_which_resolver_answered(void)
{
    char *exe = xasprintf("%s/lscat-isolate", test_bin_dir());
    if (access(exe, X_OK) != 0) {
        free(exe);
        test_skip("lscat-isolate was not built (no libclang)");
    }
    struct isoresolve_options o = ISORESOLVE_OPTIONS_INIT;
    o.exe = exe;
    struct isoresolve *r = isoresolve_new(&o);
    const char *via = NULL;
    CHECK_OK(lookup(r, "scaled", &via));
    CHECK_STR(via, "isolate");
    CHECK_INT(lookup(r, "no_such_name", &via), ==, LSCAT_ENOTFOUND);
    char *repo = repo_path(), *path = NULL;
    const struct repair_resolver *rs = isoresolve_resolver(r);
    CHECK_OK(rs->find_header(rs->ctx, repo, "matrix.cuh", &path, &via));
    CHECK_STR(via, "isolate");
    CHECK_CONTAINS(path, "/resolver-repo/include/matrix.cuh");
    int served, fallback, starts;
    isoresolve_stats(r, &served, &fallback, &starts);
    CHECK_INT(starts, ==, 1);
    CHECK_INT(served, ==, 2);
    free(path);
    free(repo);
    isoresolve_free(r);
    free(exe);
}

int main(void)
{
    TEST_RUN(test_resolver__pulls_declarations_with_their_dependencies_in_one_round);
    TEST_RUN(test_resolver__falls_back_to_the_text_search_without_lscat_isolate);
    TEST_RUN(test_resolver__kills_a_hanging_service_restarts_it_then_gives_up);
    TEST_RUN(test_resolver__restarts_a_crashed_service);
    TEST_RUN(test_resolver__gives_up_at_once_on_a_service_that_cannot_start);
    TEST_RUN(test_resolver__asks_the_real_service_and_says_which_resolver_answered);
    return test_done();
}
