/* Fixture work folders for execute's tests (see fixture.h). */
#include "tests/execute/support/fixture.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "execute/probe.h"
#include "tests/support/test.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *fixture_source_root(void)
{
    const char *r = getenv("LSCAT_ROOT");
    char buf[PATH_MAX];
    return xstrdup(realpath(r && *r ? r : ".", buf) ? buf : ".");
}

int fixture_have_nvcc(void)
{
    const char *home = getenv("CUDA_HOME");
    char *p = xasprintf("%s/bin/nvcc", home ? home : "/usr/local/cuda");
    int ok = access(p, X_OK) == 0;
    free(p);
    return ok || system("command -v nvcc >/dev/null 2>&1") == 0;
}

int fixture_have_gpu(void)
{
    struct gpu_info *g = NULL;
    int n = 0;
    probe_list_gpus(&g, &n);
    free(g);
    return n > 0;
}

int fixture_run_tune(const struct fixture_env *env, const char *args)
{
    const char *bin = getenv("LSCAT_BIN");
    char *db = fs_join(env->work, "lscat.db");
    char *cmd = xasprintf("%s/lscat --db %s --work %s -q tune %s >%s/tune.log 2>&1",
                          bin && *bin ? bin : "build/bin", db, env->work, args, env->work);
    int rc = system(cmd);
    free(cmd);
    free(db);
    return rc;
}

int fixture_env_init(struct fixture_env *env)
{
    memset(env, 0, sizeof(*env));
    const char *base = getenv("TMPDIR");
    char *tmpl = xasprintf("%s/lscat-exec-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpl)) {
        free(tmpl);
        return lscat_error_set("cannot create a temporary folder");
    }
    chmod(tmpl, 0755);
    env->work = tmpl;
    env->root = fixture_source_root();
    char *db = fs_join(env->work, "lscat.db");
    char *repo = xasprintf("%s/tests/execute/fixtures/repo", env->root);
    char now[32];
    fs_utc_now(now);
    int rc = store_open(&env->s, db, STORE_CREATE);
    char *argv[] = { "lscat-execute-test", NULL };
    if (rc == 0)
        rc = store_run_begin(&env->run_id, env->s, "execute", 1, argv);
    if (rc == 0)
        rc = store_run(env->s, "INSERT INTO sources(id, root) VALUES (1, ?)", "t", repo);
    free(db);
    free(repo);
    return rc < 0 ? rc : 0;
}

static int copy(const char *from, const char *to)
{
    struct buf b = BUF_INIT;
    int rc = buf_read_file(&b, from);
    if (rc == 0)
        rc = fs_mkdirs_parent(to);
    if (rc == 0)
        rc = fs_write_atomic(to, b.data, b.len);
    if (rc == 0)
        chmod(to, 0644);
    buf_release(&b);
    return rc;
}

int fixture_add_kernel(struct fixture_env *env, const char *name, char id_out[65])
{
    char *seed = xasprintf("fixture:%s", name);
    sha256_hex(id_out, seed, strlen(seed));
    free(seed);
    return fixture_add_kernel_as(env, name, id_out);
}

int fixture_add_kernel_as(struct fixture_env *env, const char *name, const char *id_out)
{
    char *fx = xasprintf("%s/tests/execute/fixtures", env->root);
    char *src = xasprintf("%s/kernels/%s/kernel.cu", fx, name);
    char *harness = xasprintf("%s/kernels/%s/harness.cu", fx, name);
    char *rel = xasprintf("kernels/%.2s/%s", id_out, id_out);
    char *dir = fs_join(env->work, rel);
    char *p1 = fs_join(dir, "kernel.cu"), *p2 = fs_join(dir, "harness.cu");
    char *p3 = fs_join(dir, "include/harness_main.h");
    char *main_h = fs_join(fx, "harness_main.h"), *def = fs_join(fx, "harness.cu");
    char now[32];
    fs_utc_now(now);
    int rc = fs_mkdirs(dir, 0755);
    if (rc == 0)
        rc = copy(src, p1);
    if (rc == 0)
        rc = copy(fs_exists(harness) ? harness : def, p2);
    if (rc == 0)
        rc = copy(main_h, p3);
    if (rc == 0)
        rc = store_run(env->s, "INSERT INTO kernels(id, name, dir, params, param_count, "
                       "created_at) VALUES (?, ?, ?, '[]', 2, ?)", "tttt", id_out, name, rel, now);
    if (rc >= 0)
        rc = store_run(env->s, "INSERT INTO kernel_occurrences(kernel_id, source_id, path, line) "
                       "VALUES (?, 1, ?, 1)", "tt", id_out, name);
    free(fx); free(src); free(harness); free(rel); free(dir);
    free(p1); free(p2); free(p3); free(main_h); free(def);
    return rc < 0 ? rc : 0;
}

void fixture_env_release(struct fixture_env *env)
{
    store_free(env->s);
    if (env->work && !getenv("LSCAT_KEEP_TMP"))
        fs_remove_tree(env->work);
    free(env->work);
    free(env->root);
    memset(env, 0, sizeof(*env));
}

int fixture_add_golden(struct fixture_env *env, const char *name, const char *seed,
                       int param_count, char id_out[65])
{
    char *g = xasprintf("%s/tests/isolate/fixtures/harness-golden/%s", env->root, name);
    sha256_hex(id_out, seed, strlen(seed));
    char *rel = xasprintf("kernels/%.2s/%s", id_out, id_out);
    char *dir = fs_join(env->work, rel), *pj = fs_join(dir, "params.json");
    struct buf params = BUF_INIT;
    const char *files[] = { "kernel.cu", "harness.cu", "params.json" };
    int rc = fs_mkdirs(dir, 0755);
    for (int i = 0; rc >= 0 && i < 3; i++) {
        char *a = fs_join(g, files[i]), *b = fs_join(dir, files[i]);
        if ((rc = fs_copy_atomic(a, b)) >= 0)
            chmod(b, 0644);
        free(a);
        free(b);
    }
    if (rc >= 0)
        rc = buf_read_file(&params, pj);
    if (rc >= 0)
        rc = store_run(env->s, "INSERT INTO kernels(id, name, dir, params, param_count, "
                       "created_at) VALUES (?, ?, ?, ?, ?, 'now')", "tttti", id_out, name, rel,
                       params.data, (int64_t)param_count);
    if (rc >= 0)
        rc = store_run(env->s, "INSERT INTO kernel_occurrences(kernel_id, source_id, path, "
                       "line) VALUES (?, 1, ?, 1)", "tt", id_out, name);
    buf_release(&params);
    free(pj);
    free(g);
    free(rel);
    free(dir);
    return rc < 0 ? rc : 0;
}

char *fixture_query_text(const struct fixture_env *env, const char *sql, const char *id)
{
    char *v = NULL;
    CHECK_OK(store_query_text(&v, env->s, sql, "t", id));
    return v;
}

int64_t fixture_query_int(const struct fixture_env *env, const char *sql, const char *id)
{
    int64_t v = -1;
    CHECK_OK(store_query_int(&v, env->s, sql, "t", id));
    return v;
}
