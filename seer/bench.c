/* The bench driver: expands the inputs into items, skips what the store already holds for this
 * GPU, runs the CUDA worker (lscat-seer-gpu) over chunks of items and records every line it
 * prints. A worker that dies or reports a sticky fault is restarted after the slot in flight,
 * which is recorded as a fault; nothing else is lost. */
#include "seer/bench.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "seer/db.h"
#include "seer/gen.h"
#include "seer/kernels.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

struct plan {
    int kernels[SEER_K_COUNT], nk;
    const char *prec[2];
    int np;
};

struct chunk_state {
    int64_t gpu_id;
    int64_t matrix_id[64];
    int begun_item, begun_slot, done_item, done_slot, last_item;
};

static int parse_plan(struct plan *p, const struct seer_bench_options *o)
{
    memset(p, 0, sizeof(*p));
    char *list = xstrdup(o->kernels ? o->kernels : ""), *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (seer_kernel_by_name(t) < 0 || p->nk == SEER_K_COUNT) {
            free(list);
            return lscat_error_setc(LSCAT_EINVALID, "--kernels: '%s' is not a seer kernel", t);
        }
        p->kernels[p->nk++] = seer_kernel_by_name(t);
    }
    free(list);
    for (int k = 0; !p->nk && k < SEER_K_COUNT; k++)
        p->kernels[k] = k;
    p->nk = p->nk ? p->nk : SEER_K_COUNT;
    if (strstr(o->precisions, "float"))
        p->prec[p->np++] = "float";
    if (strstr(o->precisions, "double"))
        p->prec[p->np++] = "double";
    if (!p->np)
        return lscat_error_setc(LSCAT_EINVALID, "--precision must name float, double or both");
    return 0;
}

static char *item_name(const char *item)
{
    if (!strncmp(item, "gen:", 4))
        return xstrdup(item + 4);
    const char *path = !strncmp(item, "file:", 5) ? item + 5 : item;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char *name = xstrdup(base), *dot = strrchr(name, '.');
    if (dot && !strcmp(dot, ".mtx"))
        *dot = '\0';
    return name;
}

static const char *jtext(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static double jnum(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static double jnum_or_nan(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int on_device(struct seer_bench_result *r, struct chunk_state *c, struct store *s, json_t *o)
{
    if (!json_is_true(json_object_get(o, "ok")) && jnum(o, "ok") != 1) {
        r->no_device = 1;
        snprintf(r->device, sizeof(r->device), "%s", jtext(o, "why") ? jtext(o, "why") : "?");
        return 0;
    }
    struct seer_db_gpu g = { jtext(o, "uuid"), jtext(o, "name"), jtext(o, "cc"), jtext(o, "driver"),
                             (long long)jnum(o, "memory_bytes"), (int)jnum(o, "sm_count"),
                             (int)jnum(o, "cuda_runtime") };
    snprintf(r->device, sizeof(r->device), "%s", g.name ? g.name : "?");
    return g.uuid && g.name ? seer_db_put_gpu(&c->gpu_id, s, &g) : 0;
}

static int on_matrix(struct seer_bench_result *r, struct chunk_state *c, struct store *s, json_t *o,
                     int item)
{
    struct seer_db_matrix m = { jtext(o, "name"), jtext(o, "source"), jtext(o, "path"),
                                jtext(o, "spec"),
                                { jnum(o, "rows"), jnum(o, "cols"), jnum(o, "nnz"),
                                  jnum(o, "row_max"), jnum(o, "row_min"), jnum(o, "row_mean"),
                                  jnum(o, "row_var") } };
    r->matrices++;
    c->last_item = item;
    log_info("%s: %d x %d, %d non-zeros (read in %.2f s)", m.name ? m.name : "?", (int)m.f.rows,
             (int)m.f.cols, (int)m.f.nnz, jnum(o, "read_s"));
    return m.name && m.source ? seer_db_put_matrix(&c->matrix_id[item], s, &m) : 0;
}

static void count_status(struct seer_bench_result *r, const char *st)
{
    if (!strcmp(st, "ok"))
        r->ok++;
    else if (!strcmp(st, "fault"))
        r->faults++;
    else if (!strcmp(st, "wrong"))
        r->wrong++;
    else
        r->unsupported++;
}

static int on_result(struct seer_bench_result *r, struct chunk_state *c, struct store *s,
                     json_t *o, int item, const struct seer_bench_options *opt)
{
    struct seer_db_result d = { jtext(o, "kernel"), jtext(o, "precision"), jtext(o, "status"),
                                jtext(o, "error"), jnum(o, "preprocess_ns"), jnum(o, "iter_ns"),
                                jnum(o, "iter_min_ns"), jnum(o, "iter_mad_ns"),
                                jnum(o, "max_rel_err"), (int)jnum(o, "samples"),
                                (int)jnum(o, "launches_per_sample") };
    if (!d.kernel || !d.precision || !d.status)
        return lscat_error_set("the worker printed a result without kernel/precision/status");
    c->done_item = item;
    c->done_slot = (int)jnum(o, "slot");
    count_status(r, d.status);
    if (strcmp(d.status, "ok") && strcmp(d.status, "unsupported"))
        log_warn("%s / %s / %s: %s: %s", c->matrix_id[item] ? "matrix" : "?", d.kernel,
                 d.precision, d.status, d.error ? d.error : "");
    return seer_db_put_result(s, c->matrix_id[item], c->gpu_id, &d, opt->run_id);
}

static int on_line(struct seer_bench_result *r, struct chunk_state *c, struct store *s,
                   const char *line, const struct seer_bench_options *opt)
{
    json_error_t je;
    json_t *o = json_loads(line, 0, &je);
    if (!o)
        return 0; /* not ours (a library's stray print): ignore */
    const char *ev = jtext(o, "event");
    int item = (int)jnum(o, "item"), rc = 0;
    if (item < 0 || item >= 64)
        item = 0;
    if (!ev) {
    } else if (!strcmp(ev, "device")) {
        rc = on_device(r, c, s, o);
    } else if (!strcmp(ev, "matrix")) {
        rc = on_matrix(r, c, s, o, item);
    } else if (!strcmp(ev, "matrix_error")) {
        r->refused++;
        c->last_item = item;
        log_error("%s", jtext(o, "error") ? jtext(o, "error") : "a matrix was refused");
    } else if (!strcmp(ev, "features_error")) {
        r->faults++;
        log_error("the feature kernel failed on item %d: %s", item,
                  jtext(o, "error") ? jtext(o, "error") : "?");
    } else if (!strcmp(ev, "features")) {
        /* the exposed costs of seer_gather_async() (absent from older workers) */
        struct seer_async_costs a = { { jnum_or_nan(o, "async_float_ns"),
                                        jnum_or_nan(o, "async_double_ns") },
                                      { jnum_or_nan(o, "resident_float_ns"),
                                        jnum_or_nan(o, "resident_double_ns") },
                                      { jnum_or_nan(o, "sync_upload_float_ns"),
                                        jnum_or_nan(o, "sync_upload_double_ns") } };
        r->features++;
        if (!json_integer_value(json_object_get(o, "agrees")))
            log_warn("the GPU features of item %d differ from the CPU features", item);
        rc = seer_db_put_feature_cost(s, c->matrix_id[item], c->gpu_id, jnum(o, "feature_ns"),
                                      &a, (int)json_integer_value(json_object_get(o, "agrees")));
    } else if (!strcmp(ev, "begin")) {
        c->begun_item = item;
        c->begun_slot = (int)jnum(o, "slot");
    } else if (!strcmp(ev, "result")) {
        rc = on_result(r, c, s, o, item, opt);
    }
    json_decref(o);
    return rc;
}


static void worker_argv(struct buf *store_args, const char **argv, int *argc,
                        const struct seer_bench_options *o, long start)
{
    /* store_args keeps the numbers' text alive; offsets are fixed after it is filled */
    int n = 0;
    argv[n++] = o->worker;
    argv[n++] = "--precision";
    argv[n++] = o->precisions;
    if (o->kernels) {
        argv[n++] = "--kernels";
        argv[n++] = o->kernels;
    }
    if (o->features_only)
        argv[n++] = "--features-only";
    buf_addf(store_args, "%ld%c%d%c%g%c%g", start, 0, o->samples, 0, o->min_sample_ms, 0,
             o->max_ell_gb);
    const char *p = store_args->data;
    argv[n++] = "--start";
    argv[n++] = p;
    p += strlen(p) + 1;
    if (o->samples > 0) {
        argv[n++] = "--samples";
        argv[n++] = p;
    }
    p += strlen(p) + 1;
    if (o->min_sample_ms > 0) {
        argv[n++] = "--min-sample-ms";
        argv[n++] = p;
    }
    p += strlen(p) + 1;
    if (o->max_ell_gb > 0) {
        argv[n++] = "--max-ell-gb";
        argv[n++] = p;
    }
    *argc = n;
}

/* Record the slot a dead worker left without a result as a fault. */
static int record_death(struct seer_bench_result *r, struct chunk_state *c, struct store *s,
                        const struct plan *pl, const struct proc_result *pr,
                        const struct seer_bench_options *o)
{
    char why[200];
    if (pr->signal)
        snprintf(why, sizeof(why), "the worker was killed by signal %d during this kernel",
                 pr->signal);
    else if (pr->timed_out)
        snprintf(why, sizeof(why), "the worker timed out after %.0f s during this kernel",
                 o->timeout_s);
    else
        snprintf(why, sizeof(why), "the worker exited with status %d during this kernel",
                 pr->exit_code);
    int slot = c->begun_slot, p = slot / pl->nk, k = slot % pl->nk;
    struct seer_db_result d = { seer_kernel_name(pl->kernels[k]), pl->prec[p], "fault", why,
                                0, 0, 0, 0, 0, 0, 0 };
    r->faults++;
    log_warn("%s / %s: %s", d.kernel, d.precision, why);
    return c->matrix_id[c->begun_item] ? seer_db_put_result(s, c->matrix_id[c->begun_item],
                                                             c->gpu_id, &d, o->run_id) : 0;
}

static int parse_output(struct seer_bench_result *r, struct chunk_state *c, struct store *s,
                        const char *out, const struct seer_bench_options *o)
{
    int rc = store_begin(s);
    for (const char *p = out; rc == 0 && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *line = xstrndup(p, n);
        rc = on_line(r, c, s, line, o);
        free(line);
        p += n + (nl ? 1 : 0);
    }
    if (rc == 0)
        return store_commit(s);
    store_rollback(s);
    return rc;
}

/* Where a worker that stopped early goes on: after the slot in flight, or past the item it
 * died on before its first kernel (reading, generating or uploading it). */
static void where_next(int *next_item, long *next_start, const struct chunk_state *c, int slots)
{
    int last_done = c->done_item == c->last_item && c->done_slot == slots - 1;
    *next_start = 0;
    if (c->last_item >= 0 && !last_done && c->begun_item == c->last_item && c->begun_slot >= 0) {
        *next_item = c->last_item;
        *next_start = c->begun_slot + 1;
        if (*next_start >= slots) {
            (*next_item)++;
            *next_start = 0;
        }
        return;
    }
    *next_item = c->last_item < 0 ? 1 : last_done ? c->last_item + 2 : c->last_item + 1;
    log_error("the GPU worker stopped on item %d of its chunk before it measured a kernel: the "
              "item is given up", *next_item - 1);
}

/* Run the worker on items[0..n) starting at `start` of the first. *next_item / *next_start say
 * where to go on (n, 0 when the chunk finished). */
static int run_chunk(struct seer_bench_result *r, struct store *s, const struct plan *pl,
                     char *const *items, int n, long start, int *next_item, long *next_start,
                     const struct seer_bench_options *o)
{
    const char *argv[80];
    struct buf nums = BUF_INIT;
    struct proc_options po = PROC_OPTIONS_INIT;
    struct proc_result pr;
    struct chunk_state c = { .gpu_id = 0, .begun_item = -1, .begun_slot = -1, .done_item = -1,
                             .done_slot = -1, .last_item = -1 };
    int argc, rc;
    worker_argv(&nums, argv, &argc, o, start);
    for (int i = 0; i < n; i++)
        argv[argc++] = items[i];
    argv[argc] = NULL;
    po.argv = argv;
    po.timeout_s = o->timeout_s;
    po.out_cap_bytes = 64u << 20;
    rc = proc_run(&pr, &po);
    buf_release(&nums);
    if (rc < 0)
        return lscat_error_wrap("cannot run the GPU worker %s", o->worker);
    rc = parse_output(r, &c, s, pr.out.data, o);
    *next_item = n;
    *next_start = 0;
    if (rc == 0 && (pr.signal || pr.timed_out || pr.exit_code)) {
        if (pr.err.len)
            log_warn("GPU worker: %.2000s", pr.err.data);
        int dead = c.begun_slot >= 0 && !(c.done_item == c.begun_item && c.done_slot == c.begun_slot);
        if (dead)
            rc = store_begin(s) == 0 && record_death(r, &c, s, pl, &pr, o) == 0 ? store_commit(s)
                                                                                 : LSCAT_ERR;
        where_next(next_item, next_start, &c, pl->nk * pl->np);
        r->restarts++;
    }
    proc_result_release(&pr);
    return rc;
}

/* The GPU's store id, from a worker run without items (0 when there is no device). */
static int probe(int64_t *gpu_id, struct seer_bench_result *r, struct store *s,
                 const struct seer_bench_options *o)
{
    const char *argv[] = { o->worker, NULL };
    struct proc_options po = PROC_OPTIONS_INIT;
    struct proc_result pr;
    struct chunk_state c = { .gpu_id = 0 };
    po.argv = argv;
    po.timeout_s = 300;
    if (proc_run(&pr, &po) < 0)
        return lscat_error_wrap("cannot run the GPU worker %s", o->worker);
    int rc = parse_output(r, &c, s, pr.out.data, o);
    if (rc == 0 && !c.gpu_id && !r->no_device)
        rc = lscat_error_set("the GPU worker %s printed no device line (exit %d): %.500s",
                             o->worker, pr.exit_code, pr.err.data);
    proc_result_release(&pr);
    *gpu_id = c.gpu_id;
    return rc;
}

static int pending_items(char ***out, int *n, struct store *s, int64_t gpu,
                         const struct plan *pl, struct seer_bench_result *r,
                         const struct seer_bench_options *o)
{
    char **p = xcalloc((size_t)o->nitems + 1, sizeof(char *));
    *n = 0;
    for (int i = 0; i < o->nitems; i++) {
        char *name = item_name(o->items[i]);
        int done = !gpu || o->force ? 0
                   : o->features_only ? seer_db_matrix_has_feature_cost(s, name, gpu)
                                      : seer_db_matrix_complete(s, name, gpu, pl->kernels, pl->nk,
                                                                pl->prec, pl->np);
        free(name);
        if (done < 0) {
            free(p);
            return LSCAT_ERR;
        }
        if (done)
            r->skipped++;
        else
            p[(*n)++] = (char *)o->items[i];
    }
    *out = p;
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int seer_bench_run(struct seer_bench_result *out, struct store *s,
                   const struct seer_bench_options *o)
{
    struct plan pl;
    int64_t gpu = 0;
    char **todo = NULL;
    int n = 0, rc;
    memset(out, 0, sizeof(*out));
    if ((rc = parse_plan(&pl, o)) < 0 || (rc = probe(&gpu, out, s, o)) < 0 ||
        (rc = pending_items(&todo, &n, s, gpu, &pl, out, o)) < 0)
        return rc;
    int chunk = o->chunk > 0 && o->chunk <= 64 ? o->chunk : 8;
    long start = 0;
    double t0 = now_s();
    for (int pos = 0; pos < n && rc == 0;) {
        if (o->budget_s > 0 && now_s() - t0 >= o->budget_s) {
            out->left = n - pos;
            break;
        }
        int m = n - pos < chunk ? n - pos : chunk, next = 0;
        long next_start = 0;
        rc = run_chunk(out, s, &pl, todo + pos, m, start, &next, &next_start, o);
        pos += next;
        start = next_start;
    }
    free(todo);
    if (rc == 0 && o->csv_path && gpu)
        rc = seer_db_export_csv(s, o->csv_path, NULL, &out->csv_rows);
    return rc;
}

/* ---- inputs */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void push(char ***v, int *n, int *cap, char *s)
{
    if (*n + 1 >= *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *v = xrealloc(*v, (size_t)*cap * sizeof(char *));
    }
    (*v)[(*n)++] = s;
    (*v)[*n] = NULL;
}

static int add_dir(char ***v, int *n, int *cap, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return lscat_error_setc(LSCAT_ENOTFOUND, "cannot read folder '%s'", dir);
    int first = *n;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".mtx"))
            push(v, n, cap, xasprintf("file:%s/%s", dir, e->d_name));
    }
    closedir(d);
    qsort(*v + first, (size_t)(*n - first), sizeof(char *), cmp_str);
    if (*n == first)
        log_warn("no .mtx files in %s", dir);
    return 0;
}

static int add_spec(char ***v, int *n, int *cap, const char *spec)
{
    struct seer_gen_spec g;
    char canon[400];
    if (seer_gen_parse(&g, spec) < 0)
        return LSCAT_EINVALID;
    seer_gen_format(canon, sizeof(canon), &g);
    push(v, n, cap, xasprintf("gen:%s", canon));
    return 0;
}

int seer_bench_items(char ***out, int *n, const char *const *matrices, int nmatrices,
                     const char *const *specs, int nspecs)
{
    char **v = NULL;
    int cap = 0, rc = 0;
    *n = 0;
    push(&v, n, &cap, NULL);
    *n = 0;
    for (int i = 0; i < nmatrices && rc == 0; i++) {
        if (fs_is_dir(matrices[i]))
            rc = add_dir(&v, n, &cap, matrices[i]);
        else if (fs_exists(matrices[i]))
            push(&v, n, &cap, xasprintf("file:%s", matrices[i]));
        else
            rc = lscat_error_setc(LSCAT_ENOTFOUND, "matrix '%s' does not exist", matrices[i]);
    }
    for (int i = 0; i < nspecs && rc == 0; i++) {
        if (!strcmp(specs[i], "families-large")) {
            char spec[300];
            for (int j = 0; j < SEER_GEN_LARGE_COUNT && rc == 0; j++)
                if ((rc = seer_gen_large_spec(spec, sizeof(spec), j)) == 0)
                    rc = add_spec(&v, n, &cap, spec);
            continue;
        }
        if (strcmp(specs[i], "families")) {
            rc = add_spec(&v, n, &cap, specs[i]);
            continue;
        }
        for (const char *const *f = seer_gen_families(); *f && rc == 0; f++)
            rc = add_spec(&v, n, &cap, *f);
    }
    if (rc < 0) {
        seer_bench_items_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

void seer_bench_items_free(char **items)
{
    for (char **p = items; p && *p; p++)
        free(*p);
    free(items);
}
