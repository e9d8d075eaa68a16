/* The isolate driver: find the trees and their CUDA files, run one worker child per file (-j at a
 * time, time and memory limited), then store each file's kernels in one transaction. Kernel
 * folders are content-addressed, written before the transaction that records them, so a crash
 * at any point loses at most the file in flight. */
#include "isolate/isolate_impl.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/progress.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "store/store.h"
#include "isolate/extract.h"
#include "isolate/harness.h"
#include "isolate/indexing.h"
#include "isolate/sysinc.h"
#include "common/record.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char harness_body_text[];

/* ISOLATE_VERSION + a hash of the harness body: what parses.isolate_version records, so that a
 * new harness generator makes the next run parse again and rewrite generated files. */
static const char *isolate_version(void)
{
    static char v[32];
    if (!v[0]) {
        char hex[65];
        sha256_hex(hex, harness_body_text, strlen(harness_body_text));
        snprintf(v, sizeof(v), "%s+%.12s", ISOLATE_VERSION, hex);
    }
    return v;
}

/* ------------------------------------------------------------------ finding files */

static int has_ext(const char *name, const char *const *exts)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return 0;
    for (; *exts; exts++)
        if (strcasecmp(dot + 1, *exts) == 0)
            return 1;
    return 0;
}

static const char *const source_exts[] = { "cu", NULL };
/* Parsed alone only when their text mentions __global__: headers, and C++ files that hold
 * kernels (a HIP port, a .cpp built with `nvcc -x cu`). */
static const char *const alone_exts[] = { "cuh", "h", "hpp", "hh", "hxx", "inl", "cuhpp", "inc",
                                          "cpp", "cc", "cxx", NULL };

/* Does the file's text contain "__global__"? (other files than .cu are parsed only then) */
static int mentions_global(const char *path)
{
    struct buf b = BUF_INIT;
    b.cap_bytes = 8u << 20;
    int found = buf_read_file(&b, path) == 0 && memmem(b.data, b.len, "__global__", 10) != NULL;
    buf_release(&b);
    return found;
}

static void add_task(struct run *r, struct tree *t, const char *rel)
{
    XGROW(r->tasks, r->ntasks + 1, r->tasks_cap);
    struct task *k = &r->tasks[r->ntasks++];
    memset(k, 0, sizeof *k);
    k->source_id = t->source_id;
    k->root = t->root;
    k->rel = xstrdup(rel);
    k->tree = t;
}

static void walk(struct run *r, struct tree *t, const char *rel, int depth)
{
    char *dir = *rel ? fs_join(t->root, rel) : xstrdup(t->root);
    DIR *d = depth < 32 ? opendir(dir) : NULL;
    if (d && t->nincdirs < 512) { /* every folder, parents first: includes name any of them */
        XGROW(t->incdirs, t->nincdirs + 1, t->incdirs_cap);
        t->incdirs[t->nincdirs++] = xstrdup(dir);
    }
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *sub = *rel ? xasprintf("%s/%s", rel, e->d_name) : xstrdup(e->d_name);
        char *full = fs_join(t->root, sub);
        struct stat st;
        if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
            walk(r, t, sub, depth + 1);
        } else if (lstat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            if (has_ext(e->d_name, source_exts))
                add_task(r, t, sub);
            else if (has_ext(e->d_name, alone_exts) && mentions_global(full))
                add_task(r, t, sub);
        }
        free(sub);
        free(full);
    }
    if (d)
        closedir(d);
    free(dir);
}

static int cmp_task(const void *a, const void *b)
{
    const struct task *x = a, *y = b;
    if (x->source_id != y->source_id)
        return x->source_id < y->source_id ? -1 : 1;
    /* .cu files first: a kernel defined in a header is then isolated from a translation unit
     * that includes it (with its real context), and the header's own parse adds nothing. */
    int hx = !has_ext(x->rel, source_exts), hy = !has_ext(y->rel, source_exts);
    if (hx != hy)
        return hx - hy;
    return strcmp(x->rel, y->rel);
}

/* ------------------------------------------------------------------ one file */

struct outcome {
    const char *status; /* parses.status */
    char *reason;
    double parse_s;
    long max_rss_kb;
    struct buf records;
};

/* Cheap checks before spending a parse: empty, enormous, binary. Sets o->status to 'skipped'. */
static void precheck(struct outcome *o, const struct run *r, struct task *t)
{
    char *full = fs_join(t->root, t->rel);
    struct buf b = BUF_INIT;
    struct stat st;
    if (stat(full, &st) != 0) {
        o->status = "failed";
        o->reason = xasprintf("cannot stat '%s'", t->rel);
    } else if (st.st_size == 0) {
        o->status = "skipped";
        o->reason = xstrdup("empty file");
    } else if ((size_t)st.st_size > r->o->max_file_bytes) {
        o->status = "skipped";
        o->reason = xasprintf("file is %lld bytes, over the %zu-byte limit (--max-file-bytes)",
                              (long long)st.st_size, r->o->max_file_bytes);
    }
    if (!o->status) {
        b.cap_bytes = r->o->max_file_bytes + 1;
        if (buf_read_file(&b, full) < 0) {
            o->status = "failed";
            o->reason = xasprintf("cannot read '%s'", t->rel);
        } else if (memchr(b.data, '\0', b.len < 65536 ? b.len : 65536)) {
            o->status = "skipped";
            o->reason = xstrdup("binary file (NUL bytes), not C/CUDA source");
        }
    }
    sha256_hex(t->sha, b.data, b.len);
    buf_release(&b);
    free(full);
}

static int unchanged(struct run *r, const struct task *t)
{
    int64_t n = 0;
    pthread_mutex_lock(&r->lock);
    store_query_int(&n, r->s, "SELECT count(*) FROM parses WHERE source_id = ? AND path = ? "
                              "AND sha256 = ? AND isolate_version = ?", "ittt", t->source_id,
                    t->rel, t->sha, isolate_version());
    pthread_mutex_unlock(&r->lock);
    return n > 0;
}

static void run_worker(struct outcome *o, const struct run *r, const struct task *t)
{
    struct tree *tr = t->tree;
    const char **argv = xcalloc(tr->nincdirs + 2 * r->after.n + 8, sizeof *argv);
    char *full = fs_join(t->root, t->rel);
    int n = 0;
    argv[n++] = r->o->worker_exe;
    argv[n++] = "--worker";
    argv[n++] = t->root;
    argv[n++] = full;
    argv[n++] = r->o->cuda_home;
    for (size_t i = 0; i < r->after.n; i++) {
        argv[n++] = "--after";
        argv[n++] = r->after.dirs[i];
    }
    for (size_t i = 0; i < tr->nincdirs; i++)
        argv[n++] = tr->incdirs[i];
    struct proc_options po = PROC_OPTIONS_INIT;
    struct proc_result pr;
    char **env = proc_env_untrusted(NULL, NULL); /* it reads untrusted sources: no secrets */
    po.argv = argv;
    po.env = (const char *const *)env;
    po.timeout_s = r->o->timeout_s;
    po.out_cap_bytes = 256u << 20;
    po.limits.as_bytes = r->o->mem_bytes;
    po.limits.cpu_s = r->o->timeout_s + 5;
    if (proc_run(&pr, &po) < 0) {
        o->status = "failed";
        o->reason = xasprintf("cannot start the parse worker: %s", lscat_error_last());
    } else if (pr.timed_out || pr.signal || pr.exit_code || pr.out_truncated) {
        struct buf why = BUF_INIT;
        proc_describe(&why, &pr, &po);
        o->status = pr.timed_out ? "timeout" : "failed";
        buf_rtrim(&pr.err);
        const char *last = strrchr(pr.err.data, '\n');
        o->reason = xasprintf("parse worker: %s%s%s%s", why.data,
                              pr.signal ? " (time, memory or a libclang crash)" : "",
                              pr.err.len ? ": " : "", last ? last + 1 : pr.err.data);
        buf_release(&why);
    } else {
        o->records = pr.out;
        pr.out = (struct buf)BUF_INIT;
    }
    o->parse_s = pr.elapsed_s;
    o->max_rss_kb = pr.max_rss_kb;
    proc_result_release(&pr);
    proc_env_free(env);
    free(full);
    free(argv);
}

static int store_outcome(struct run *r, struct task *t, struct outcome *o)
{
    char *subject = xasprintf("file:%s/%s", t->root, t->rel);
    int kernels = 0, rc = store_begin(r->s);
    if (rc < 0)
        goto done;
    store_run(r->s, "DELETE FROM failures WHERE stage = 'isolate' AND subject = ?", "t", subject);
    size_t pos = 0;
    struct record rec;
    int got;
    while (!o->status && rc >= 0 && (got = record_next(&rec, o->records.data, o->records.len, &pos)) != 0) {
        if (got < 0) {
            o->status = "failed";
            o->reason = xstrdup(lscat_error_last());
        } else if (strcmp(rec.type, "tu") == 0) {
            free(o->reason);
            o->reason = *record_str(&rec, "first_error") ? xstrdup(record_str(&rec, "first_error")) : NULL;
        } else if (strcmp(rec.type, "kernel") == 0) {
            rc = kstore_kernel(r, t, &rec);
            kernels++;
        } else if (strcmp(rec.type, "kdecl") == 0) {
            XGROW(r->kdecls, r->nkdecls + 1, r->kdecls_cap);
            r->kdecls[r->nkdecls++] = (struct kdecl){ t->source_id,
                xstrdup(record_str(&rec, "name")), xstrdup(record_str(&rec, "message")) };
        } else if (strcmp(rec.type, "note") == 0) {
            kstore_failure(r, subject, record_str(&rec, "class"), record_str(&rec, "message"));
        }
    }
    if (!o->status)
        o->status = o->reason ? "errors" : "ok";
    if (strcmp(o->status, "failed") == 0 || strcmp(o->status, "timeout") == 0) {
        kstore_failure(r, subject, strcmp(o->status, "timeout") == 0 ? "parse_timeout" : "parse_failed",
                       o->reason);
        r->c->failed++;
    } else if (strcmp(o->status, "skipped") == 0) {
        kstore_failure(r, subject, "file_skipped", o->reason);
        r->c->skipped++;
    } else {
        r->c->parsed++;
    }
    if (rc >= 0)
        rc = store_run(r->s, "INSERT OR REPLACE INTO parses(source_id, path, sha256, status, "
                             "reason, kernels, parse_s, max_rss_kb, isolate_version) VALUES "
                             "(?,?,?,?,?,?,?,?,?)",
                       "itttt" "idit", t->source_id, t->rel, t->sha, o->status, o->reason,
                       (int64_t)kernels, o->parse_s, (int64_t)o->max_rss_kb, isolate_version());
    if (rc >= 0)
        rc = store_commit(r->s);
    else
        store_rollback(r->s);
done:
    free(subject);
    return rc;
}

static void do_task(struct run *r, struct task *t)
{
    struct outcome o = { NULL, NULL, 0, 0, BUF_INIT };
    precheck(&o, r, t);
    if (!o.status && unchanged(r, t)) {
        pthread_mutex_lock(&r->lock);
        r->c->unchanged++;
        pthread_mutex_unlock(&r->lock);
        goto done;
    }
    if (!o.status)
        run_worker(&o, r, t);
    pthread_mutex_lock(&r->lock);
    if (store_outcome(r, t, &o) < 0 && !r->fatal) {
        r->fatal = 1;
        snprintf(r->fatal_msg, sizeof r->fatal_msg, "%s", lscat_error_last());
    }
    pthread_mutex_unlock(&r->lock);
done:
    progress_add(r->bar, 1);
    free(o.reason);
    buf_release(&o.records);
}

/* 1 when a .cu task of the same tree before task i is still being parsed (called locked). */
static int cu_pending(const struct run *r, size_t i)
{
    for (size_t j = i; j-- > 0 && r->tasks[j].source_id == r->tasks[i].source_id;)
        if (has_ext(r->tasks[j].rel, source_exts) && !r->finished[j])
            return 1;
    return 0;
}

/* Tasks are taken in order (cmp_task: a tree's .cu files before its headers); a header's parse
 * starts when its tree's .cu files are stored, so a kernel defined in a header is isolated from
 * a unit that includes it (its call sites there instantiate its template) even with -j: a
 * short header parse used to finish first and win (sgemmWarptiling<1, ...>). */
static void *worker_thread(void *arg)
{
    struct run *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        size_t i = r->next;
        struct task *t = i < r->ntasks && !r->fatal ? &r->tasks[r->next++] : NULL;
        while (t && !has_ext(t->rel, source_exts) && cu_pending(r, i) && !r->fatal)
            pthread_cond_wait(&r->stored, &r->lock);
        pthread_mutex_unlock(&r->lock);
        if (!t)
            return NULL;
        do_task(r, t);
        pthread_mutex_lock(&r->lock);
        r->finished[i] = 1;
        pthread_cond_broadcast(&r->stored);
        pthread_mutex_unlock(&r->lock);
    }
}

/* Kernels declared without a body: a failure only when no file of the same tree defines one of
 * that name (a declaration in a header, the definition in a .cu file is the usual case). */
static int check_bodiless(struct run *r)
{
    int rc = 0;
    for (size_t i = 0; i < r->nkdecls && rc >= 0; i++) {
        struct kdecl *d = &r->kdecls[i];
        int64_t defined = 0, seen = 0;
        rc = store_query_int(&defined, r->s, "SELECT count(*) FROM kernels k JOIN "
                             "kernel_occurrences o ON o.kernel_id = k.id WHERE o.source_id = ? "
                             "AND k.name = ?", "it", d->source_id, d->name);
        char *subject = xasprintf("kernel-decl:%s", d->message);
        if (rc >= 0)
            rc = store_query_int(&seen, r->s, "SELECT count(*) FROM failures WHERE stage = "
                                 "'isolate' AND subject = ?", "t", subject);
        if (rc >= 0 && !defined && !seen)
            kstore_failure(r, subject, "kernel_without_body", d->message);
        free(subject);
    }
    for (size_t i = 0; i < r->nkdecls; i++) {
        free(r->kdecls[i].name);
        free(r->kdecls[i].message);
    }
    free(r->kdecls);
    return rc;
}

/* A kernel left out of one parse for a missing header (a header parsed on its own), a
 * preprocessor branch that parse skipped or a declaration it dropped, but isolated from another file that includes it
 * with what it needs: not a failure. */
static int settle_missing(struct run *r)
{
    static const char where[] =
        "FROM failures AS f WHERE f.stage = 'isolate' AND f.class IN ('kernel_missing_header', "
        "'kernel_inactive_branch', 'kernel_unparsed') AND "
        "EXISTS (SELECT 1 FROM kernel_occurrences o JOIN sources s ON s.id = o.source_id WHERE "
        "f.subject LIKE 'file:' || s.root || '/%' AND "
        "f.message LIKE o.path || ':' || o.line || ': kernel %')";
    int64_t n = 0;
    char *count = xasprintf("SELECT count(*) %s", where), *del = xasprintf("DELETE %s", where);
    int rc = store_query_int(&n, r->s, count, "");
    if (rc >= 0 && n > 0)
        rc = store_run(r->s, del, "");
    if (rc >= 0)
        r->c->notes -= (int)n;
    free(count);
    free(del);
    return rc;
}

/* ------------------------------------------------------------------ trees */

static int add_tree(struct tree **trees, size_t *n, size_t *cap, struct store *s, int64_t repo_id,
                    const char *dir)
{
    char *root = realpath(dir, NULL);
    if (!root || !fs_is_dir(root)) {
        free(root);
        return lscat_error_setc(LSCAT_ENOTFOUND, "cannot open tree '%s': not a folder", dir);
    }
    int64_t id = 0;
    int rc = repo_id ? store_run(s, "INSERT OR IGNORE INTO sources(repo_id, root) VALUES (?, ?)",
                                 "it", repo_id, root)
                     : store_run(s, "INSERT OR IGNORE INTO sources(root) VALUES (?)", "t", root);
    if (rc >= 0)
        rc = store_query_int(&id, s, "SELECT id FROM sources WHERE root = ?", "t", root);
    if (rc < 0) {
        free(root);
        return rc;
    }
    XGROW(*trees, *n + 1, *cap);
    struct tree *t = &(*trees)[(*n)++];
    memset(t, 0, sizeof *t);
    t->source_id = id;
    t->root = root;
    return 0;
}

static int find_trees(struct tree **trees, size_t *n, struct store *s, const struct isolate_options *o)
{
    size_t cap = 0;
    if (o->path)
        return add_tree(trees, n, &cap, s, 0, o->path);
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, s, "SELECT id, full_name FROM repos WHERE fetch_status = "
                                   "'fetched' ORDER BY id");
    while (rc >= 0 && (rc = store_step(st)) == STORE_ROW) {
        char *dir = xasprintf("%s/trees/%s", o->work_dir, store_col_text(st, 1));
        if (add_tree(trees, n, &cap, s, store_col_int(st, 0), dir) < 0)
            log_warn("repository %s: %s", store_col_text(st, 1), lscat_error_last());
        free(dir);
    }
    store_finalize(st);
    return rc < 0 ? rc : 0;
}

int isolate_run(struct isolate_counts *out, struct store *s, const struct isolate_options *o)
{
    struct run r = { .o = o, .s = s, .c = out };
    struct tree *trees = NULL;
    size_t ntrees = 0;
    memset(out, 0, sizeof *out);
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.stored, NULL);
    sysinc_init(&r.after);
    int rc = find_trees(&trees, &ntrees, s, o);
    for (size_t i = 0; rc >= 0 && i < ntrees; i++)
        walk(&r, &trees[i], "", 0);
    if (r.ntasks)
        qsort(r.tasks, r.ntasks, sizeof *r.tasks, cmp_task);
    out->sources = (long)ntrees;
    out->files = (long)r.ntasks;
    r.finished = xcalloc(r.ntasks + 1, 1);
    if (rc >= 0) {
        int jobs = o->jobs < 1 ? 1 : o->jobs;
        pthread_t *th = xcalloc((size_t)jobs, sizeof *th);
        r.bar = progress_new("isolate: files", r.ntasks);
        for (int i = 0; i < jobs; i++)
            pthread_create(&th[i], NULL, worker_thread, &r);
        for (int i = 0; i < jobs; i++)
            pthread_join(th[i], NULL);
        progress_free(r.bar);
        free(th);
        char now[32];
        fs_utc_now(now);
        if (!r.fatal && (check_bodiless(&r) < 0 || settle_missing(&r) < 0))
            rc = LSCAT_ERR;
        for (size_t i = 0; i < ntrees; i++)
            store_run(s, "UPDATE sources SET isolated_at = ?, run_id = ? WHERE id = ?", "tIi", now,
                      (int)o->run_id, trees[i].source_id);
        if (r.fatal)
            rc = lscat_error_set("%s", r.fatal_msg);
    }
    for (size_t i = 0; i < r.ntasks; i++)
        free(r.tasks[i].rel);
    for (size_t i = 0; i < ntrees; i++) {
        for (size_t j = 0; j < trees[i].nincdirs; j++)
            free(trees[i].incdirs[j]);
        free(trees[i].incdirs);
        free(trees[i].root);
    }
    free(trees);
    free(r.tasks);
    free(r.finished);
    sysinc_release(&r.after);
    pthread_cond_destroy(&r.stored);
    pthread_mutex_destroy(&r.lock);
    return rc;
}

int isolate_worker_main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "lscat-isolate --worker: usage: --worker ROOT FILE CUDA_HOME "
                        "[--after DIR]... [INCDIR...]\n");
        return 2;
    }
    int a = 3, nafter = 0;
    const char **after = xcalloc((size_t)argc, sizeof *after);
    while (a + 1 < argc && strcmp(argv[a], "--after") == 0) {
        after[nafter++] = argv[a + 1];
        a += 2;
    }
    struct extract_options eo = { .root = argv[0], .file = argv[1], .cuda_home = argv[2],
                                  .include_dirs = (const char *const *)argv + a,
                                  .n_include_dirs = argc - a, .after_dirs = after,
                                  .n_after_dirs = nafter };
    struct buf out = BUF_INIT;
    int rc = extract_file(&out, &eo);
    fwrite(out.data, 1, out.len, stdout);
    fflush(stdout);
    buf_release(&out);
    free(after);
    if (rc < 0) {
        fprintf(stderr, "%s\n", lscat_error_last());
        return 3;
    }
    return 0;
}
