/* The sweep engine: planning from the store (what is missing per kernel and GPU model), one
 * worker thread per GPU pulling kernels from its model's queue, each result committed as it
 * arrives so a kill loses at most the configuration in flight. */
#include "tune/sweep.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/gpulock.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/progress.h"
#include "common/xalloc.h"
#include "store/store.h"
#include "tune/runner.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The binding a harness uses without --bind (isolate/harness_body.cu.in's lscat_bindings[0]).
 * Only other bindings are passed, so harnesses generated before bindings existed still run. */
#define DEFAULT_BINDING "area"

struct kernel {
    char *id, *name;
    int two_d;            /* indexes y (kernels.indexing 2d/3d; before it, params' is2d) */
    char *binding;        /* kernels.binding: execute's choice; NULL = the default */
    char **bins, **archs; /* one per ok build */
    int nbuilds;
    size_t cap;
};

struct item {
    int kernel;
    unsigned char *missing; /* one flag per configuration of the space */
    int nmissing;
};

struct model {
    char name[256];
    struct item *items;
    int n, next;
    size_t cap;
};

struct worker;

struct shared {
    pthread_mutex_t mu;
    const struct tune_options *o;
    struct store *plan_store; /* the caller's connection: planning, re-planning (under mu) */
    struct kernel **kernels;  /* pointers: re-planning grows the array under running workers */
    int nkernels;
    size_t kernels_cap;
    int follow_seen;          /* --follow: an execute run was seen in progress */
    double t_start;           /* when the sweep began (fs_mono_s) */
    struct model *models;
    int nmodels;
    struct tune_counts *counts;
    struct progress *prog;
    struct worker *workers;
    int nworkers;
    int failed; /* a worker hit a store error: everyone stops */
    char error[512];
};

struct worker {
    struct shared *sh;
    const struct tune_gpu *gpu;
    int model;
    pthread_t thread;
    struct store *s;
    char **env;
    struct runner_host *host; /* this GPU's lscat-runner, or NULL */
    int kernels_done, kernels_total;
    /* the kernel in flight */
    const struct kernel *k;
    char binding[16];     /* what its harness says it runs with (header), else what was asked */
    int occupancy_block, occupancy_grid, have_occupancy;
};

/* ------------------------------------------------------------------ planning */

static int load_kernels(struct shared *sh, struct store *s)
{
    const struct tune_options *o = sh->o;
    struct store_stmt *st = NULL;
    int from = sh->nkernels;
    /* temp.tune_seen: the kernels already planned by this run, so that re-planning (--follow)
     * adds only kernels that became runnable since. */
    int rc = store_run(s, "CREATE TEMP TABLE IF NOT EXISTS tune_seen(id TEXT PRIMARY KEY)", "");
    if (rc >= 0)
        rc = store_prepare(&st, s,
                           "SELECT k.id, k.name, b.binary_path, b.arch, k.binding, "
                           "coalesce(k.indexing IN ('2d', '3d'), k.params LIKE "
                           "'%\"is2d\":true%') FROM kernels k "
                           "JOIN builds b ON b.kernel_id = k.id "
                           "WHERE k.status = 'runnable' AND b.status = 'ok' "
                           "AND b.binary_path IS NOT NULL AND k.id LIKE ? || '%' "
                           "AND k.id NOT IN (SELECT id FROM temp.tune_seen) "
                           "ORDER BY k.id, b.arch");
    if (rc < 0)
        return rc;
    store_bind(st, "t", o->kernel_prefix ? o->kernel_prefix : "");
    while ((rc = store_step(st)) == STORE_ROW) {
        const char *id = store_col_text(st, 0);
        struct kernel *k = sh->nkernels > from ? sh->kernels[sh->nkernels - 1] : NULL;
        if (!k || strcmp(k->id, id) != 0) {
            if (o->limit_kernels && sh->nkernels >= o->limit_kernels)
                continue;
            XGROW(sh->kernels, (size_t)sh->nkernels + 1, sh->kernels_cap);
            k = xcalloc(1, sizeof(*k));
            sh->kernels[sh->nkernels++] = k;
            k->id = xstrdup(id);
            k->name = xstrdup(store_col_text(st, 1));
            k->binding = store_col_text(st, 4) ? xstrdup(store_col_text(st, 4)) : NULL;
            k->two_d = store_col_int(st, 5) != 0;
        }
        size_t bcap = k->cap;
        XGROW(k->bins, (size_t)k->nbuilds + 1, bcap);
        k->archs = xrealloc(k->archs, bcap * sizeof(*k->archs));
        k->cap = bcap;
        k->bins[k->nbuilds] = xstrdup(store_col_text(st, 2));
        k->archs[k->nbuilds++] = xstrdup(store_col_text(st, 3) ? store_col_text(st, 3) : "");
    }
    store_finalize(st);
    for (int k = from; k < sh->nkernels && rc >= 0; k++)
        rc = store_run(s, "INSERT OR IGNORE INTO temp.tune_seen(id) VALUES (?)", "t",
                       sh->kernels[k]->id);
    return rc < 0 ? rc : 0;
}

/* The space a kernel is swept over: with --space fit, its indexing's (docs/tune.md "Spaces"). */
static const struct tune_space *space_of(const struct tune_options *o, const struct kernel *k)
{
    return k->two_d && o->space_2d.n > 0 ? &o->space_2d : &o->space;
}

/* Which configurations of kernel k still need a current measurement on this model. */
static int plan_item(struct item *it, struct store *s, const struct shared *sh, int k,
                     const char *model)
{
    const struct tune_options *o = sh->o;
    const struct tune_space *sp = space_of(o, sh->kernels[k]);
    struct store_stmt *st = NULL;
    int64_t given_up = 0;
    int rc = store_query_int(&given_up, s,
                             "SELECT count(*) FROM tune_kernels t JOIN gpus g ON g.id = t.gpu_id "
                             "WHERE t.kernel_id = ? AND g.name = ? AND t.status = 'given_up'",
                             "tt", sh->kernels[k]->id, model);
    if (rc < 0 || given_up)
        return rc < 0 ? rc : 0;
    it->kernel = k;
    it->missing = xmalloc((size_t)sp->n);
    memset(it->missing, 1, (size_t)sp->n);
    it->nmissing = sp->n;
    rc = store_prepare(&st, s,
                       "SELECT m.width, m.height, m.block_x, m.block_y, m.block_z "
                       "FROM measurements m JOIN gpus g ON g.id = m.gpu_id "
                       "WHERE m.kernel_id = ? AND g.name = ? AND m.superseded = 0 "
                       "AND (? = 0 OR m.run_id = ?)");
    if (rc < 0)
        return rc;
    store_bind(st, "ttIi", sh->kernels[k]->id, model, o->remeasure, o->run_id);
    while ((rc = store_step(st)) == STORE_ROW) {
        struct tune_config c = { (int)store_col_int(st, 0), (int)store_col_int(st, 1),
                                 (int)store_col_int(st, 2), (int)store_col_int(st, 3),
                                 (int)store_col_int(st, 4) };
        int idx = tune_space_find(sp, &c);
        if (idx >= 0 && it->missing[idx]) {
            it->missing[idx] = 0;
            it->nmissing--;
        }
    }
    store_finalize(st);
    return rc < 0 ? rc : 1;
}

/* Plan kernels [from, nkernels) on every GPU model: queue what is missing. */
static int plan_kernels(struct shared *sh, struct store *s, int from)
{
    int rc = 0;
    for (int m = 0; m < sh->nmodels && rc >= 0; m++) {
        struct model *md = &sh->models[m];
        int added = 0;
        for (int k = from; k < sh->nkernels && rc >= 0; k++) {
            struct item it;
            memset(&it, 0, sizeof(it));
            rc = plan_item(&it, s, sh, k, md->name);
            if (rc > 0 && it.nmissing > 0) {
                XGROW(md->items, (size_t)md->n + 1, md->cap);
                md->items[md->n++] = it;
                sh->counts->kernels_planned++;
                sh->counts->configs_planned += it.nmissing;
                added++;
            } else {
                free(it.missing);
            }
        }
        for (int w = 0; w < sh->nworkers; w++)
            if (sh->workers[w].model == m)
                sh->workers[w].kernels_total += added;
    }
    return rc < 0 ? rc : 0;
}

static int plan(struct shared *sh, struct store *s, const struct tune_gpu *gpus, int n)
{
    int rc = store_run(s, "DROP TABLE IF EXISTS temp.tune_seen", ""); /* a new run */
    if (rc >= 0)
        rc = load_kernels(sh, s);
    for (int g = 0; g < n && rc >= 0; g++) {
        int m = 0;
        while (m < sh->nmodels && strcmp(sh->models[m].name, gpus[g].name) != 0)
            m++;
        sh->workers[g].model = m;
        if (m < sh->nmodels)
            continue;
        sh->models = xrealloc(sh->models, (size_t)(m + 1) * sizeof(*sh->models));
        struct model *md = &sh->models[sh->nmodels++];
        memset(md, 0, sizeof(*md));
        snprintf(md->name, sizeof(md->name), "%s", gpus[g].name);
    }
    if (rc >= 0)
        rc = plan_kernels(sh, s, 0);
    sh->counts->models = sh->nmodels;
    return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------ recording */

/* The output check of a result as stored: the harness's verdict, else not_checked and why. */
static const char *check_of(const struct tune_result *r, char *why, size_t size)
{
    static const char *const known[] = { "match", "mismatch", "nondeterministic", "not_checked" };
    for (int i = 0; i < 4; i++)
        if (strcmp(r->check, known[i]) == 0) {
            snprintf(why, size, "%s", r->check_why);
            return known[i];
        }
    if (strcmp(r->status, "ok") != 0)
        snprintf(why, size, "the configuration did not run ok (%s): nothing to check", r->status);
    else if (r->check[0])
        snprintf(why, size, "the harness reported an unknown check '%s'", r->check);
    else
        snprintf(why, size, "the harness has no output check (built before it: lscat isolate "
                 "and lscat execute rebuild it)");
    return "not_checked";
}

static int record_result(struct worker *w, const struct tune_result *r)
{
    const struct tune_options *o = w->sh->o;
    char now[32], why[sizeof(r->check_why) + 64];
    int ok = strcmp(r->status, "ok") == 0;
    const char *check = check_of(r, why, sizeof(why));
    int rc;
    fs_utc_now(now);
    if ((rc = store_begin(w->s)) < 0)
        return rc;
    rc = store_run(w->s,
                   "UPDATE measurements SET superseded = 1 WHERE kernel_id = ? AND width = ? "
                   "AND height = ? AND block_x = ? AND block_y = ? AND block_z = ? "
                   "AND superseded = 0 AND gpu_id IN (SELECT id FROM gpus WHERE name = ?)",
                   "tIIIIIt", w->k->id, r->cfg.w, r->cfg.h, r->cfg.bx, r->cfg.by, r->cfg.bz,
                   w->gpu->name);
    if (rc >= 0)
        rc = store_run(
            w->s,
            "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, block_y, "
            "block_z, grid_x, grid_y, grid_z, status, error, median_ns, min_ns, max_ns, mean_ns, "
            "stddev_ns, mad_ns, p10_ns, p90_ns, samples, launches_per_sample, "
            "sm_clock_mhz_before, sm_clock_mhz_after, mem_clock_mhz, temp_c_before, "
            "temp_c_after, clocks_locked, l2_flush, measured_at, run_id, binding, graph_nodes, "
            "output_check, output_check_why, check_ns) "
            "VALUES (?, ?, "
            "?, ?, ?, ?, ?, NULLIF(?, 0), NULLIF(?, 0), NULLIF(?, 0), ?, NULLIF(?, ''), "
            "CASE WHEN ? THEN ? END, CASE WHEN ? THEN ? END, CASE WHEN ? THEN ? END, "
            "CASE WHEN ? THEN ? END, CASE WHEN ? THEN ? END, CASE WHEN ? THEN ? END, "
            "CASE WHEN ? THEN ? END, CASE WHEN ? THEN ? END, NULLIF(?, 0), NULLIF(?, 0), "
            "NULLIF(?, -1), NULLIF(?, -1), NULLIF(?, -1), NULLIF(?, -1), NULLIF(?, -1), ?, ?, "
            "?, ?, ?, CASE WHEN ? THEN ? END, ?, NULLIF(?, ''), CASE WHEN ? THEN ? END)",
            "tiIIIIIIIIttIdIdIdIdIdIdIdIdIIIIIIIIItitIIttIi", w->k->id, w->gpu->id, r->cfg.w, r->cfg.h,
            r->cfg.bx, r->cfg.by, r->cfg.bz, r->grid[0], r->grid[1], r->grid[2], r->status,
            r->error, ok, r->median_ns, ok, r->min_ns, ok, r->max_ns, ok, r->mean_ns, ok,
            r->stddev_ns, ok, r->mad_ns, ok, r->p10_ns, ok, r->p90_ns, r->samples,
            r->launches_per_sample, r->sm_mhz_before, r->sm_mhz_after, r->mem_mhz,
            r->temp_c_before, r->temp_c_after, o->clocks_locked || r->clocks_locked,
            o->l2_flush, now, o->run_id, w->binding, ok && r->graph_nodes >= 0, r->graph_nodes,
            check, why, r->check[0] && r->check_ns >= 0, (int64_t)r->check_ns);
    if (rc >= 0)
        rc = store_commit(w->s);
    if (rc < 0)
        store_rollback(w->s);
    return rc;
}

static int on_result(void *ctx, const struct tune_result *r)
{
    struct worker *w = ctx;
    struct shared *sh = w->sh;
    int rc = record_result(w, r);
    pthread_mutex_lock(&sh->mu);
    struct tune_counts *c = sh->counts;
    c->configs_reported++;
    if (!strcmp(r->status, "ok"))
        c->ok++;
    else if (!strcmp(r->status, "cuda_error"))
        c->cuda_error++;
    else if (!strcmp(r->status, "invalid_config"))
        c->invalid_config++;
    else if (!strcmp(r->status, "crashed"))
        c->crashed++;
    else if (!strcmp(r->status, "timeout"))
        c->timeout++;
    else if (!strcmp(r->status, "skipped"))
        c->skipped++;
    if (!strcmp(r->check, "match"))
        c->match++;
    else if (!strcmp(r->check, "mismatch"))
        c->mismatch++;
    else if (!strcmp(r->check, "nondeterministic"))
        c->nondeterministic++;
    else if (!strcmp(r->status, "ok"))
        c->not_checked++;
    if (r->check[0] && r->check_ns > 0)
        c->check_ns += r->check_ns;
    pthread_mutex_unlock(&sh->mu);
    progress_add(sh->prog, 1);
    return rc < 0 ? lscat_error_wrap("cannot record a measurement of %s", w->k->id) : 0;
}

static void on_occupancy(void *ctx, int block, int grid)
{
    struct worker *w = ctx;
    w->occupancy_block = block;
    w->occupancy_grid = grid;
    w->have_occupancy = 1;
}

static void on_header(void *ctx, const char *json)
{
    struct worker *w = ctx;
    const char *b = strstr(json, "\"binding\":\"");
    if (b) { /* what the harness says it runs with is what gets recorded */
        b += strlen("\"binding\":\"");
        size_t n = strcspn(b, "\"");
        snprintf(w->binding, sizeof(w->binding), "%.*s", (int)(n < 15 ? n : 15), b);
    }
    if (!strstr(json, w->gpu->uuid))
        log_event(LOG_WARN, "tune_gpu_mismatch", "kernel", w->k->id, "want", w->gpu->uuid,
                  "header", json, NULL);
}

/* ------------------------------------------------------------------ one kernel on one GPU */

static int set_tune_kernel(struct worker *w, const char *status, const char *reason)
{
    char now[32];
    fs_utc_now(now);
    return store_run(w->s,
                     "INSERT INTO tune_kernels(kernel_id, gpu_id, status, reason, "
                     "occupancy_block, occupancy_grid, updated_at) VALUES (?, ?, ?, ?, "
                     "CASE WHEN ? THEN ? END, CASE WHEN ? THEN ? END, ?) "
                     "ON CONFLICT(kernel_id, gpu_id) DO UPDATE SET status = excluded.status, "
                     "reason = excluded.reason, occupancy_block = coalesce("
                     "excluded.occupancy_block, occupancy_block), occupancy_grid = coalesce("
                     "excluded.occupancy_grid, occupancy_grid), updated_at = excluded.updated_at",
                     "tittIIIIt", w->k->id, w->gpu->id, status, reason, w->have_occupancy,
                     w->occupancy_block, w->have_occupancy, w->occupancy_grid, now);
}

static int give_up(struct worker *w, const char *klass, const char *reason)
{
    char now[32], subject[160];
    int rc;
    fs_utc_now(now);
    snprintf(subject, sizeof(subject), "kernel:%s", w->k->id);
    if ((rc = store_begin(w->s)) < 0)
        return rc;
    rc = set_tune_kernel(w, "given_up", reason);
    if (rc >= 0)
        rc = store_run(w->s, "UPDATE kernels SET status = 'given_up' WHERE id = ?", "t",
                       w->k->id);
    if (rc >= 0)
        rc = store_run(w->s, "INSERT INTO failures(stage, subject, kernel_id, class, message, "
                       "created_at, run_id) VALUES ('tune', ?, ?, ?, ?, ?, ?)",
                       "ttttti", subject, w->k->id, klass, reason, now, w->sh->o->run_id);
    if (rc >= 0)
        rc = store_commit(w->s);
    if (rc < 0)
        store_rollback(w->s);
    pthread_mutex_lock(&w->sh->mu);
    w->sh->counts->kernels_given_up++;
    pthread_mutex_unlock(&w->sh->mu);
    log_event(LOG_WARN, "tune_given_up", "kernel", w->k->id, "gpu", w->gpu->uuid, "class",
              klass, "reason", reason, NULL);
    return rc;
}

/* The build for this GPU: one whose arch list names its sm_XY, else the first. */
static char *binary_for(const struct worker *w, const struct kernel *k)
{
    char want[24], digits[16];
    int n = 0, pick = 0;
    for (const char *p = w->gpu->cc; *p && n < 14; p++)
        if (*p >= '0' && *p <= '9')
            digits[n++] = *p;
    digits[n] = 0;
    snprintf(want, sizeof(want), "sm_%s", digits);
    for (int i = 0; i < k->nbuilds; i++)
        if (n && strstr(k->archs[i], want)) {
            pick = i;
            break;
        }
    const char *b = k->bins[pick];
    return b[0] == '/' ? xstrdup(b) : fs_join(w->sh->o->work_dir, b);
}

/* One kernel's run on this GPU, prepared ahead so its harness can be prestarted. */
struct prep {
    const struct kernel *k;
    struct tune_config *cfgs;
    int n;
    char *bin, *so;              /* so: harness.so beside the binary, or NULL */
    int runnable;                /* the binary exists and is executable */
    const char **args;           /* timing options + --bind (NULL-terminated), for ro */
    struct tune_skip *skips;     /* shapes whose larger sizes earlier runs skipped */
    int nskips;
    struct runner_options ro;
    struct runner_child *child;  /* prestarted harness, or NULL */
};

/* The skip rules that the kernel's current `skipped` rows on this GPU model record (with
 * --remeasure: this run's only, as planning counts them): a sweep killed between a shape's
 * skipped rows goes on skipping it where it stopped, without failing it again. */
static int load_skips(struct prep *p, struct worker *w)
{
    const struct tune_options *o = w->sh->o;
    struct store_stmt *st = NULL;
    size_t cap = 0;
    int rc = store_prepare(&st, w->s,
                           "SELECT m.width, m.height, m.block_x, m.block_y, m.block_z, m.error "
                           "FROM measurements m JOIN gpus g ON g.id = m.gpu_id "
                           "WHERE m.kernel_id = ? AND g.name = ? AND m.superseded = 0 "
                           "AND m.status = 'skipped' AND (? = 0 OR m.run_id = ?)");
    if (rc < 0)
        return rc;
    store_bind(st, "ttIi", p->k->id, w->gpu->name, o->remeasure, o->run_id);
    while ((rc = store_step(st)) == STORE_ROW) {
        struct tune_config c = { (int)store_col_int(st, 0), (int)store_col_int(st, 1),
                                 (int)store_col_int(st, 2), (int)store_col_int(st, 3),
                                 (int)store_col_int(st, 4) };
        struct tune_skip sk;
        tune_skip_parse(&sk, &c, store_col_text(st, 5));
        int j = 0; /* one rule per shape: the smallest size it failed at */
        while (j < p->nskips && !(p->skips[j].at.bx == c.bx && p->skips[j].at.by == c.by &&
                                  p->skips[j].at.bz == c.bz))
            j++;
        if (j == p->nskips) {
            XGROW(p->skips, (size_t)p->nskips + 1, cap);
            p->skips[p->nskips++] = sk;
        } else if (sk.at.w <= p->skips[j].at.w && sk.at.h <= p->skips[j].at.h) {
            p->skips[j] = sk;
        }
    }
    store_finalize(st);
    return rc < 0 ? rc : 0;
}

static int prep_init(struct prep *p, struct worker *w, const struct item *it)
{
    const struct tune_options *o = w->sh->o;
    int64_t occ = 0;
    memset(p, 0, sizeof(*p));
    p->k = w->sh->kernels[it->kernel];
    const struct tune_space *sp = space_of(o, p->k);
    p->cfgs = xcalloc((size_t)it->nmissing, sizeof(*p->cfgs));
    for (int i = 0; i < sp->n; i++)
        if (it->missing[i])
            p->cfgs[p->n++] = sp->configs[i];
    p->bin = binary_for(w, p->k);
    p->runnable = access(p->bin, X_OK) == 0;
    if (w->host && !runner_host_broken(w->host)) {
        p->so = xasprintf("%s.so", p->bin);
        if (access(p->so, R_OK) != 0) {
            free(p->so);
            p->so = NULL;
        }
    }
    int rc = store_query_int(&occ, w->s, "SELECT count(*) FROM tune_kernels WHERE kernel_id = ? "
                             "AND gpu_id = ? AND occupancy_block IS NOT NULL", "ti", p->k->id,
                             w->gpu->id);
    if (rc >= 0)
        rc = load_skips(p, w);
    int na = 0;
    while (o->timing_args && o->timing_args[na])
        na++;
    p->args = xcalloc((size_t)na + 3, sizeof(*p->args));
    for (int i = 0; i < na; i++)
        p->args[i] = o->timing_args[i];
    if (p->k->binding && strcmp(p->k->binding, DEFAULT_BINDING) != 0) {
        p->args[na++] = "--bind";
        p->args[na++] = p->k->binding;
    }
    struct runner_options ro = RUNNER_OPTIONS_INIT;
    ro.harness = p->bin;
    ro.extra_args = p->args;
    ro.env = (const char *const *)w->env;
    ro.device = 0; /* CUDA_VISIBLE_DEVICES names exactly this GPU */
    ro.config_timeout_s = o->config_timeout_s;
    ro.startup_s = o->startup_s;
    ro.max_failures = o->max_failures;
    ro.want_occupancy = occ == 0;
    ro.stop = o->stop;
    ro.host = p->so ? w->host : NULL;
    ro.harness_so = p->so;
    ro.skips = p->skips;
    ro.nskips = p->nskips;
    p->ro = ro;
    return rc;
}

static void prep_release(struct prep *p)
{
    runner_child_free(p->child);
    free(p->cfgs);
    free(p->bin);
    free(p->args);
    free(p->so);
    free(p->skips);
    memset(p, 0, sizeof(*p));
}

static int run_kernel(struct worker *w, struct prep *p)
{
    struct runner_callbacks cb = { on_header, on_occupancy, on_result, w };
    struct runner_summary sum;
    int rc;
    w->k = p->k;
    w->have_occupancy = 0;
    snprintf(w->binding, sizeof(w->binding), "%s",
             p->k->binding ? p->k->binding : DEFAULT_BINDING);
    if ((rc = set_tune_kernel(w, "running", NULL)) < 0)
        return rc;
    if (!p->runnable) {
        char why[600];
        snprintf(why, sizeof(why), "harness '%s' is missing or not executable", p->bin);
        return give_up(w, "harness_missing", why);
    }
    p->ro.prestarted = p->child;
    p->child = NULL; /* runner_run owns it now */
    rc = runner_run(&sum, &p->ro, p->cfgs, p->n, &cb);
    pthread_mutex_lock(&w->sh->mu);
    w->sh->counts->processes += sum.processes;
    w->sh->counts->runner_kernels += sum.in_runner;
    w->sh->counts->runner_fallbacks += sum.fell_back;
    w->sh->counts->shapes_failed += sum.shapes_failed;
    pthread_mutex_unlock(&w->sh->mu);
    if (sum.fell_back)
        log_event(LOG_WARN, "tune_runner_fallback", "kernel", p->k->id, "gpu", w->gpu->uuid,
                  "reason", sum.reason, NULL);
    if (rc < 0 || sum.interrupted)
        return rc;
    if (sum.given_up)
        return give_up(w, strstr(sum.reason, "harness failures") ? "repeated_failures"
                                                                 : "harness_refused",
                       sum.reason);
    rc = set_tune_kernel(w, "done", NULL);
    pthread_mutex_lock(&w->sh->mu);
    w->sh->counts->kernels_done++;
    pthread_mutex_unlock(&w->sh->mu);
    return rc;
}

/* run_kernel with the GPU held exclusively. A stop while waiting is not an error. */
static int run_locked(struct worker *w, struct prep *p)
{
    struct gpulock l;
    double waited = 0;
    int rc = gpulock_acquire(&l, w->gpu->uuid, 1, w->sh->o->stop, -1, &waited);
    if (rc == LSCAT_EBUSY)
        return 0;
    if (rc < 0)
        return rc;
    if (waited > 1) {
        char s[32];
        snprintf(s, sizeof(s), "%.1f", waited);
        log_event(LOG_INFO, "tune_gpu_waited", "gpu", w->gpu->uuid, "seconds", s, "lock_dir",
                  gpulock_dir(), NULL);
    }
    rc = run_kernel(w, p);
    gpulock_release(&l);
    return rc;
}

/* ------------------------------------------------------------------ workers */

/* The harness's and lscat-runner's environment: the allow-list of untrusted children
 * (common/proc.h; no GITHUB_TOKEN), this GPU alone, and whether its clocks are locked. */
static char **child_env(const struct tune_gpu *g, int locked)
{
    char *extra[3];
    extra[0] = xasprintf("CUDA_VISIBLE_DEVICES=%s", g->uuid);
    extra[1] = xasprintf("LSCAT_CLOCKS_LOCKED=%d", locked ? 1 : 0);
    extra[2] = NULL;
    char **env = proc_env_untrusted(NULL, (const char *const *)extra);
    free(extra[0]);
    free(extra[1]);
    return env;
}

static void update_note(struct shared *sh)
{
    char note[512];
    int len = 0;
    note[0] = 0;
    for (int i = 0; i < sh->nworkers && len < (int)sizeof(note) - 64; i++)
        len += snprintf(note + len, sizeof(note) - (size_t)len, "%sgpu%d %d/%d",
                        i ? " " : "", sh->workers[i].gpu->index, sh->workers[i].kernels_done,
                        sh->workers[i].kernels_total);
    progress_note(sh->prog, note);
}

/* Whether an `lscat execute` run on this host is still in progress on this store (its
 * stage_runs row has no end and its process is alive): --follow keeps waiting for the kernels it
 * will make runnable. Runs of other hosts are not waited for (their pid means nothing here). */
static int execute_in_progress(struct store *s)
{
    char host[256] = "";
    struct store_stmt *st = NULL;
    int active = 0, rc;
    gethostname(host, sizeof(host) - 1);
    rc = store_prepare(&st, s, "SELECT pid FROM stage_runs WHERE stage = 'execute' AND "
                       "ended_at IS NULL AND host = ? AND pid IS NOT NULL");
    if (rc < 0)
        return rc;
    store_bind(st, "t", host);
    while (!active && (rc = store_step(st)) == STORE_ROW) {
        char path[64], stat[512];
        snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)store_col_int(st, 0));
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(stat, 1, sizeof(stat) - 1, f) : 0;
        if (f)
            fclose(f);
        stat[n] = 0;
        const char *paren = strrchr(stat, ')'); /* "pid (comm) S ...": alive, not a zombie */
        active = paren && strstr(stat, "(lscat-execute)") && paren[1] == ' ' &&
                 paren[2] != 'Z' && paren[2] != 'X';
    }
    store_finalize(st);
    return rc < 0 ? rc : active;
}

/* --follow: add the kernels that became runnable since the last planning. Called with mu held
 * (the plan store is only used under it); returns 0 or a negative code. */
static int replan(struct shared *sh)
{
    int from = sh->nkernels;
    int rc = load_kernels(sh, sh->plan_store);
    if (rc >= 0)
        rc = plan_kernels(sh, sh->plan_store, from);
    if (rc >= 0 && sh->nkernels > from) {
        char k[16];
        snprintf(k, sizeof(k), "%d", sh->nkernels - from);
        log_event(LOG_INFO, "tune_follow_planned", "kernels", k, NULL);
        progress_set_total(sh->prog, (uint64_t)sh->counts->configs_planned);
    }
    return rc;
}

static void nap_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&ts, NULL);
}

/* The next kernel for this worker's GPU model into *out: 1 when taken; 0 when there is none
 * (with --follow and may_wait: none now and no execute run in progress that could make more
 * runnable; without may_wait: none now); or a negative code (store failure while re-planning). */
static int take(struct item *out, struct shared *sh, struct worker *w, int may_wait)
{
    const struct tune_options *o = sh->o;
    for (;;) {
        int rc = 0, wait = 0;
        pthread_mutex_lock(&sh->mu);
        struct model *m = &sh->models[w->model];
        if (sh->failed || (o->stop && *o->stop)) {
            rc = 0;
        } else if (m->next < m->n) {
            *out = m->items[m->next++]; /* by value: re-planning may move the array */
            rc = 1;
        } else if (o->follow) {
            /* Look at execute first, then re-plan: when execute had ended, the re-plan saw
             * everything it made runnable, and an empty result means the end. */
            int active = execute_in_progress(sh->plan_store);
            if (active > 0)
                sh->follow_seen = 1;
            rc = active < 0 ? active : replan(sh);
            if (rc >= 0 && m->next < m->n)
                *out = m->items[m->next++], rc = 1;
            else if (rc >= 0) /* started first: give execute follow_grace_s to appear */
                wait = active > 0 || (!sh->follow_seen &&
                                      fs_mono_s() - sh->t_start < o->follow_grace_s);
        }
        pthread_mutex_unlock(&sh->mu);
        if (!wait || !may_wait)
            return rc;
        nap_s(o->follow_interval_s > 0 ? o->follow_interval_s : 1.0);
    }
}

/* Take kernels until none are left. While one kernel is measured, the next one's harness is
 * already started and held before its first configuration (unless --no-prestart), so process
 * start and context creation cost no GPU time. The GPU is locked (common/gpulock.h) for each
 * kernel's measurement, so that no other lscat (a probe, another tune) runs on it meanwhile. */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    struct prep cur, next;
    struct item it;
    memset(&cur, 0, sizeof(cur));
    memset(&next, 0, sizeof(next));
    int rc = store_open(&w->s, sh->o->db_path, 0);
    if (rc >= 0 && sh->o->runner) { /* started now: its context creation overlaps planning */
        runner_host_new(&w->host, sh->o->runner, (const char *const *)w->env, 0,
                        sh->o->runner_kernels);
        if (runner_host_start(w->host) < 0) {
            log_event(LOG_WARN, "tune_runner_failed", "gpu", w->gpu->uuid, "error",
                      lscat_error_last(), NULL);
        } else {
            pthread_mutex_lock(&sh->mu);
            sh->counts->processes++;
            pthread_mutex_unlock(&sh->mu);
        }
    }
    while (rc >= 0) {
        if (!cur.k && ((rc = take(&it, sh, w, 1)) <= 0 || (rc = prep_init(&cur, w, &it)) < 0))
            break;
        if ((rc = take(&it, sh, w, 0)) > 0) {
            rc = prep_init(&next, w, &it);
            if (rc >= 0 && next.runnable && !next.so && !sh->o->no_prestart &&
                runner_prestart(&next.child, &next.ro, next.cfgs, next.n) < 0)
                log_event(LOG_WARN, "tune_prestart_failed", "kernel", next.k->id, "error",
                          lscat_error_last(), NULL);
        }
        if (rc >= 0)
            rc = run_locked(w, &cur);
        prep_release(&cur);
        cur = next;
        memset(&next, 0, sizeof(next));
        pthread_mutex_lock(&sh->mu);
        w->kernels_done++;
        update_note(sh);
        pthread_mutex_unlock(&sh->mu);
    }
    prep_release(&cur);
    prep_release(&next);
    runner_host_free(w->host);
    w->host = NULL;
    if (rc < 0) {
        pthread_mutex_lock(&sh->mu);
        if (!sh->failed)
            snprintf(sh->error, sizeof(sh->error), "gpu %d: %s", w->gpu->index,
                     lscat_error_last());
        sh->failed = 1;
        pthread_mutex_unlock(&sh->mu);
    }
    store_free(w->s);
    w->s = NULL;
    return NULL;
}

static void shared_release(struct shared *sh)
{
    for (int k = 0; k < sh->nkernels; k++) {
        struct kernel *kn = sh->kernels[k];
        for (int b = 0; b < kn->nbuilds; b++) {
            free(kn->bins[b]);
            free(kn->archs[b]);
        }
        free(kn->bins);
        free(kn->archs);
        free(kn->id);
        free(kn->name);
        free(kn->binding);
        free(kn);
    }
    free(sh->kernels);
    for (int m = 0; m < sh->nmodels; m++) {
        for (int i = 0; i < sh->models[m].n; i++)
            free(sh->models[m].items[i].missing);
        free(sh->models[m].items);
    }
    free(sh->models);
    for (int i = 0; i < sh->nworkers; i++) {
        proc_env_free(sh->workers[i].env);
    }
    free(sh->workers);
    pthread_mutex_destroy(&sh->mu);
}

int tune_sweep(struct tune_counts *out, struct store *s, const struct tune_options *o,
               const struct tune_gpu *gpus, int n)
{
    struct shared sh;
    int rc;
    memset(out, 0, sizeof(*out));
    memset(&sh, 0, sizeof(sh));
    pthread_mutex_init(&sh.mu, NULL);
    sh.o = o;
    sh.plan_store = s;
    sh.t_start = fs_mono_s();
    sh.counts = out;
    sh.nworkers = n;
    sh.workers = xcalloc((size_t)(n ? n : 1), sizeof(*sh.workers));
    out->gpus = n;
    for (int i = 0; i < n; i++) {
        sh.workers[i].sh = &sh;
        sh.workers[i].gpu = &gpus[i];
        sh.workers[i].env = child_env(&gpus[i], o->clocks_locked);
    }
    if ((rc = plan(&sh, s, gpus, n)) < 0)
        goto done;
    for (int i = 0; i < n; i++)
        sh.workers[i].kernels_total = sh.models[sh.workers[i].model].n;
    {
        char g[16], k[16], c[16];
        snprintf(g, sizeof(g), "%d", n);
        snprintf(k, sizeof(k), "%d", out->kernels_planned);
        snprintf(c, sizeof(c), "%d", out->configs_planned);
        log_event(LOG_INFO, "tune_plan", "gpus", g, "kernel_runs", k, "configs", c, NULL);
    }
    sh.prog = progress_new("tune configurations", (uint64_t)out->configs_planned);
    update_note(&sh);
    for (int i = 0; i < n; i++)
        if (pthread_create(&sh.workers[i].thread, NULL, worker_main, &sh.workers[i]) != 0) {
            sh.failed = 1; /* the others stop after their kernel */
            snprintf(sh.error, sizeof(sh.error), "cannot start a worker thread");
            for (int j = 0; j < i; j++)
                pthread_join(sh.workers[j].thread, NULL);
            n = 0;
        }
    for (int i = 0; i < n; i++)
        pthread_join(sh.workers[i].thread, NULL);
    progress_free(sh.prog);
    out->interrupted = o->stop && *o->stop;
    if (sh.failed)
        rc = lscat_error_set("%s", sh.error);
done:
    shared_release(&sh);
    return rc;
}

void tune_counts_json(char *out, int size, const struct tune_counts *c)
{
    snprintf(out, (size_t)size,
             "{\"gpus\":%d,\"models\":%d,\"kernels_planned\":%d,\"kernels_done\":%d,"
             "\"kernels_given_up\":%d,\"configs_planned\":%d,\"configs_reported\":%d,\"ok\":%d,"
             "\"cuda_error\":%d,\"invalid_config\":%d,\"crashed\":%d,\"timeout\":%d,"
             "\"skipped\":%d,\"shapes_failed\":%d,"
             "\"match\":%d,\"mismatch\":%d,\"nondeterministic\":%d,\"not_checked\":%d,"
             "\"check_s\":%.3f,"
             "\"processes\":%d,\"runner_kernels\":%d,\"runner_fallbacks\":%d,"
             "\"interrupted\":%d}",
             c->gpus, c->models, c->kernels_planned, c->kernels_done, c->kernels_given_up,
             c->configs_planned, c->configs_reported, c->ok, c->cuda_error, c->invalid_config,
             c->crashed, c->timeout, c->skipped, c->shapes_failed, c->match, c->mismatch,
             c->nondeterministic, c->not_checked, (double)c->check_ns / 1e9, c->processes,
             c->runner_kernels, c->runner_fallbacks, c->interrupted);
}
