/* Planning for the sweep (tune/sweep.c): which runnable kernels and builds the store holds,
 * which configurations each still needs on each GPU model (queued per model), and --follow's
 * re-planning while an `lscat execute` of this host makes more kernels runnable. */
#include "tune/plan.h"

#include "common/blockeq.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/xalloc.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A kernel whose probe kept the source's own block (docs/execute.md "Block retry") is
 * measured with that block too, where its space lacks it (`params`: kernels.params, NULL when
 * the probe kept another). */
static void own_space(struct plan_kernel *k, const struct tune_options *o, const char *params)
{
    static const char key[] = "\"launch\":{\"block\":[", fkey[] = "\"fixed\":{\"size\":[";
    const char *p = params ? strstr(params, key) : NULL, *f = params ? strstr(params, fkey) : NULL;
    int b[3], wh[2];
    k->own.n = 0;
    if (!p || sscanf(p + sizeof key - 1, "%d,%d,%d", &b[0], &b[1], &b[2]) != 3 || b[0] < 1 ||
        b[1] < 1 || b[2] < 1 || (long long)b[0] * b[1] * b[2] > 1024)
        return;
    if (k->binding && strcmp(k->binding, "fixed") == 0) {
        /* its own size with its source's block only: nothing of it follows W x H (docs/tune.md
         * "Fixed-size kernels") */
        if (f && sscanf(f + sizeof fkey - 1, "%d,%d", &wh[0], &wh[1]) == 2 && wh[0] > 0 &&
            wh[1] > 0) {
            k->own.configs = xmalloc(sizeof(*k->own.configs));
            k->own.configs[0] = (struct tune_config){ wh[0], wh[1], b[0], b[1], b[2] };
            k->own.n = 1;
        }
        return;
    }
    tune_space_with_block(&k->own, k->two_d && o->space_2d.n > 0 ? &o->space_2d : &o->space,
                          b[0], b[1], b[2]);
}

/* A kernel whose probe kept a block of the block retry (its probe detail "block BXxBYxBZ; with
 * the probe's own blocks: ...") has the output check use that block as its reference
 * (`--check-ref`): the harness's own reference (256x1x1 or 16x16x1) is a shape the probe saw
 * fault, and a reference failing at a size turns the check off from there (docs/tune.md
 * "Output check"). */
static void check_ref_of(struct plan_kernel *k, const char *detail)
{
    int b[3];
    k->check_ref[0] = '\0';
    if (detail && sscanf(detail, "block %dx%dx%d", &b[0], &b[1], &b[2]) == 3 && b[0] > 0 &&
        b[1] > 0 && b[2] > 0 && (long long)b[0] * b[1] * b[2] <= 1024)
        snprintf(k->check_ref, sizeof k->check_ref, "%dx%dx%d", b[0], b[1], b[2]);
}

/* A kernel that asserts its block (isolate's params "block_eq", docs/isolate.md "Block
 * asserts") is measured only with the shapes that satisfy the assert: any other fires a
 * device-side assert, a sticky error and a new harness for each shape, for nothing. Where no
 * shape of its space fits, the probe's kept block (check_ref) at each size; where there is none,
 * the space stays as it is. Call after own_space and check_ref_of. */
static void assert_space(struct plan_kernel *k, const struct tune_options *o, const char *params)
{
    int eq[3], kb[3];
    if (!block_eq_parse(eq, params))
        return;
    const struct tune_space *base = plan_space_of(o, k);
    struct tune_space out = { xcalloc((size_t)base->n + 1, sizeof(struct tune_config)), 0 };
    for (int i = 0; i < base->n; i++) {
        const struct tune_config *c = &base->configs[i];
        if (block_eq_fits(eq, c->bx, c->by, c->bz))
            out.configs[out.n++] = *c;
    }
    if (out.n == 0 && sscanf(k->check_ref, "%dx%dx%d", &kb[0], &kb[1], &kb[2]) == 3)
        for (int i = 0; i < base->n; i++) /* sizes outer: one config at each */
            if (i == 0 || base->configs[i].w != base->configs[i - 1].w ||
                base->configs[i].h != base->configs[i - 1].h)
                out.configs[out.n++] = (struct tune_config){ base->configs[i].w,
                                                             base->configs[i].h, kb[0], kb[1],
                                                             kb[2] };
    if (out.n == 0) {
        tune_space_release(&out);
        return;
    }
    tune_space_release(&k->own);
    k->own = out;
}

static int load_kernels(struct sweep_shared *sh, struct store *s)
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
                           "'%\"is2d\":true%'), "
                           "CASE WHEN k.binding = 'fixed' OR EXISTS (SELECT 1 FROM probes p "
                           "WHERE p.kernel_id = k.id AND p.detail LIKE "
                           "'%(the source''s launch)%') THEN k.params END, "
                           "(SELECT p.detail FROM probes p WHERE p.kernel_id = k.id AND "
                           "p.outcome = 'ok' AND p.detail LIKE 'block %' "
                           "ORDER BY p.probed_at DESC LIMIT 1), "
                           "CASE WHEN k.params LIKE '%\"block_eq\":[%' THEN k.params END "
                           "FROM kernels k "
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
        if (!shard_has_key(&o->shard, id))
            continue;
        struct plan_kernel *k = sh->nkernels > from ? sh->kernels[sh->nkernels - 1] : NULL;
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
            own_space(k, o, store_col_text(st, 6));
            check_ref_of(k, store_col_text(st, 7));
            assert_space(k, o, store_col_text(st, 8));
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

const struct tune_space *plan_space_of(const struct tune_options *o, const struct plan_kernel *k)
{
    static const struct tune_space none = { NULL, 0 };
    if (k->own.n > 0)
        return &k->own;
    if (k->binding && strcmp(k->binding, "fixed") == 0)
        return &none; /* a fixed size without its record: no W x H sweep either */
    return k->two_d && o->space_2d.n > 0 ? &o->space_2d : &o->space;
}

/* Which configurations of kernel k still need a current measurement on this model. */
static int plan_one(struct plan_item *it, struct store *s, const struct sweep_shared *sh, int k,
                    const char *model)
{
    const struct tune_options *o = sh->o;
    const struct tune_space *sp = plan_space_of(o, sh->kernels[k]);
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
static int plan_kernels(struct sweep_shared *sh, struct store *s, int from)
{
    int rc = 0;
    for (int m = 0; m < sh->nmodels && rc >= 0; m++) {
        struct plan_model *md = &sh->models[m];
        int added = 0;
        for (int k = from; k < sh->nkernels && rc >= 0; k++) {
            struct plan_item it;
            memset(&it, 0, sizeof(it));
            rc = plan_one(&it, s, sh, k, md->name);
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

int plan_start(struct sweep_shared *sh, struct store *s, const struct tune_gpu *gpus, int n)
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
        struct plan_model *md = &sh->models[sh->nmodels++];
        memset(md, 0, sizeof(*md));
        snprintf(md->name, sizeof(md->name), "%s", gpus[g].name);
    }
    if (rc >= 0)
        rc = plan_kernels(sh, s, 0);
    sh->counts->models = sh->nmodels;
    return rc < 0 ? rc : 0;
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
static int replan(struct sweep_shared *sh)
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

int plan_take(struct plan_item *out, struct sweep_shared *sh, struct sweep_worker *w, int may_wait)
{
    const struct tune_options *o = sh->o;
    for (;;) {
        int rc = 0, wait = 0;
        pthread_mutex_lock(&sh->mu);
        struct plan_model *m = &sh->models[w->model];
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

void plan_release(struct sweep_shared *sh)
{
    for (int k = 0; k < sh->nkernels; k++) {
        struct plan_kernel *kn = sh->kernels[k];
        for (int b = 0; b < kn->nbuilds; b++) {
            free(kn->bins[b]);
            free(kn->archs[b]);
        }
        free(kn->bins);
        free(kn->archs);
        free(kn->id);
        free(kn->name);
        free(kn->binding);
        tune_space_release(&kn->own);
        free(kn);
    }
    free(sh->kernels);
    for (int m = 0; m < sh->nmodels; m++) {
        for (int i = 0; i < sh->models[m].n; i++)
            free(sh->models[m].items[i].missing);
        free(sh->models[m].items);
    }
    free(sh->models);
}
