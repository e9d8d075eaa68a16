/* The execute stage: load the kernels to build, run a pool of workers (one nvcc each), write
 * each result in its own transaction (a killed run loses at most the kernels in flight), then
 * probe the built harnesses on the GPU with a smaller pool. */
#include "execute/execute.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/gpulock.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/xalloc.h"
#include "execute/build.h"
#include "execute/isoresolve.h"
#include "execute/probe.h"
#include "execute/sandbox.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item {
    char *id, *dir, *repo_root, *old_key, *old_status, *old_binary, *old_class;
    char *params; /* kernels.params (probe phase: which bindings matter, is2d) */
    int reprobe;  /* probe phase: probed before with this build (the plan changed since) */
};

struct stage {
    struct store *s;
    const char *work_dir;
    const struct execute_options *o;
    const char *arch;          /* the architecture list builds are for */
    int64_t run_id;
    struct build_env env;
    struct item *items;
    size_t count, alloc, next;
    pthread_mutex_t lock;      /* guards next, the store, counts */
    struct execute_counts *c;
    struct progress *bar;
    int64_t gpu_id;
    int device;
    char gpu_uuid[96];         /* the probed GPU's lock name (common/gpulock.h), "" when none */
    char *sanitizer;
    int store_failed;
    char *store_error;         /* the first store error of a worker (errors are per thread) */
};

static char *abs_path(const char *work, const char *p, const char *under)
{
    if (!p)
        return NULL;
    if (p[0] == '/')
        return xstrdup(p);
    if (under && strncmp(p, under, strlen(under)) != 0)
        return xasprintf("%s/%s/%s", work, under, p);
    return fs_join(work, p);
}

static void item_free(struct item *it)
{
    free(it->id);
    free(it->dir);
    free(it->repo_root);
    free(it->old_key);
    free(it->old_status);
    free(it->old_binary);
    free(it->old_class);
    free(it->params);
}

static char *dup_col(struct store_stmt *st, int col)
{
    const char *t = store_col_text(st, col);
    return t ? xstrdup(t) : NULL;
}

static int load_items(struct stage *g)
{
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, g->s,
        "SELECT k.id, k.dir, (SELECT s.root FROM kernel_occurrences o JOIN sources s ON "
        "s.id = o.source_id WHERE o.kernel_id = k.id ORDER BY s.id LIMIT 1), b.cache_key, "
        "b.status, b.binary_path, b.error_class FROM kernels k LEFT JOIN builds b ON b.kernel_id = k.id AND "
        "b.arch = ? WHERE k.status IN ('isolated','built','build_failed','runnable',"
        "'probe_failed') AND (? IS NULL OR k.id LIKE ? || '%') ORDER BY k.id");
    if (rc == 0)
        rc = store_bind(st, "ttt", g->arch, g->o->kernel, g->o->kernel);
    while (rc == 0 && (rc = store_step(st)) == STORE_ROW) {
        XGROW(g->items, g->count + 1, g->alloc);
        struct item *it = &g->items[g->count++];
        memset(it, 0, sizeof(*it));
        it->id = dup_col(st, 0);
        it->dir = abs_path(g->work_dir, store_col_text(st, 1), "kernels");
        it->repo_root = abs_path(g->work_dir, store_col_text(st, 2), NULL);
        it->old_key = dup_col(st, 3);
        it->old_status = dup_col(st, 4);
        it->old_binary = abs_path(g->work_dir, store_col_text(st, 5), NULL);
        it->old_class = dup_col(st, 6);
        rc = 0;
    }
    store_finalize(st);
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- recording */

static int record_build(struct stage *g, const struct item *it, const char *key,
                        const struct build_result *r)
{
    struct store *s = g->s;
    char now[32];
    fs_utc_now(now);
    struct buf px = BUF_INIT;
    ptxas_to_json(&px, &r->ptxas);
    const struct ptxas_entry *e = &r->summary;
    const struct build_attempt *last = &r->att[r->attempts ? r->attempts - 1 : 0];
    const char *cls = r->ok ? NULL : classify_name(r->final_class);
    int h = r->has_summary;
    int rc = store_begin(s);
    if (rc == 0)
        rc = store_run(s, "DELETE FROM builds WHERE kernel_id = ? AND arch = ?", "tt", it->id,
                       g->env.arch);
    if (rc >= 0)
        rc = store_run(s, "INSERT INTO builds(kernel_id, arch, cache_key, status, attempts, fixes,"
                       " binary_path, nvcc_version, flags, registers, shared_bytes, stack_bytes,"
                       " spill_store_bytes, spill_load_bytes, const_bytes, barriers, ptxas,"
                       " error_class, build_s, built_at, run_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,"
                       "?,?,?,?,?,?,?,?,?)",
                       "ttttIttttiiiiiiittdti", it->id, g->env.arch, key, r->ok ? "ok" : "failed",
                       r->attempts, r->fixes.data, r->binary_path, g->env.nvcc_version,
                       g->env.flags_text, (int64_t)e->registers, (int64_t)e->shared_bytes,
                       (int64_t)e->stack_bytes, (int64_t)e->spill_store_bytes,
                       (int64_t)e->spill_load_bytes, (int64_t)e->const_bytes,
                       (int64_t)e->barriers, px.data, cls, r->build_s, now, g->run_id);
    int64_t bid = store_last_insert_id(s);
    if (rc >= 0) /* rows left by a tool that deleted builds without foreign keys on */
        rc = store_run(s, "DELETE FROM build_attempts WHERE build_id = ?", "i", bid);
    if (rc >= 0 && !h) /* no ptxas report (failed build): unknown, not zero */
        rc = store_run(s, "UPDATE builds SET registers = NULL, shared_bytes = NULL, "
                       "stack_bytes = NULL, spill_store_bytes = NULL, spill_load_bytes = NULL, "
                       "const_bytes = NULL, barriers = NULL WHERE id = ?", "i", bid);
    for (int i = 0; rc >= 0 && i < r->attempts; i++) {
        const struct build_attempt *a = &r->att[i];
        rc = store_run(s, "INSERT INTO build_attempts(build_id, attempt, status, error_class, "
                       "first_error, fix, log_path, wall_s) VALUES (?,?,?,?,?,?,?,?)", "iItttttd", bid, i + 1, a->ok ? "ok" : "failed",
                       a->cls == CLASS_NONE ? NULL : classify_name(a->cls), a->first_error,
                       a->fix, a->log_path, a->wall_s);
    }
    /* The same cache key rebuilt (its binary was gone, e.g. a fresh GPU node with the store
     * carried over) is the same harness: its probes and their verdict stand. */
    int same = r->ok && it->old_key && strcmp(it->old_key, key) == 0 &&
               it->old_status && strcmp(it->old_status, "ok") == 0;
    if (rc >= 0 && same)
        rc = store_run(s, "UPDATE kernels SET status = CASE WHEN EXISTS (SELECT 1 FROM probes "
                       "WHERE kernel_id = ?1 AND cache_key = ?2) THEN status ELSE 'built' END "
                       "WHERE id = ?1", "tt", it->id, key);
    if (rc >= 0 && !same)
        rc = store_run(s, "UPDATE kernels SET status = ? WHERE id = ?", "tt",
                       r->ok ? "built" : "build_failed", it->id);
    if (rc >= 0 && !same)
        rc = store_run(s, "DELETE FROM probes WHERE kernel_id = ?", "t", it->id);
    if (rc >= 0 && !same)
        rc = store_run(s, "DELETE FROM failures WHERE stage = 'execute' AND kernel_id = ?", "t",
                       it->id);
    if (rc >= 0 && !r->ok) {
        char *subject = xasprintf("kernel:%s", it->id);
        rc = store_run(s, "INSERT INTO failures(stage, subject, kernel_id, class, message, "
                       "created_at, run_id) VALUES ('execute', ?, ?, ?, ?, ?, ?)", "ttttti",
                       subject, it->id, cls, last->first_error, now, g->run_id);
        free(subject);
    }
    if (rc >= 0)
        rc = store_commit(s);
    else
        store_rollback(s);
    buf_release(&px);
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- build phase */

/* One item's work (a build, a probe), run by the pool's threads; slot = the thread's index. */
typedef void (*item_fn)(struct stage *g, const struct item *it, int slot);
struct worker { struct stage *g; int slot; item_fn one; };

static int is_cached(const struct item *it, const char *key)
{
    if (!it->old_key || strcmp(it->old_key, key) != 0 || !it->old_status)
        return 0;
    if (it->old_class && strcmp(it->old_class, "timeout") == 0)
        return 0; /* a timeout says more about the machine than the kernel: try again */
    return strcmp(it->old_status, "failed") == 0 || (it->old_binary && fs_exists(it->old_binary));
}

static void count_build(struct execute_counts *c, const struct build_result *r)
{
    if (!r->ok)
        c->build_failed++;
    else if (r->attempts == 1 || strcmp(r->fixes.data, "[]") == 0)
        c->built_first_try++;
    else
        c->built_after_repair++;
}

static void build_one(struct stage *g, const struct item *it, int slot)
{
    char key[65];
    struct build_result r;
    int rc = build_cache_key(key, &g->env, it->id, it->dir);
    if (rc == 0 && is_cached(it, key)) {
        pthread_mutex_lock(&g->lock);
        g->c->cached++;
        pthread_mutex_unlock(&g->lock);
        return;
    }
    if (rc == 0) {
        pthread_mutex_lock(&g->lock);
        rc = build_env_ensure_core(&g->env);
        if (rc < 0 && !g->store_error) { /* no harness can link without it: stop */
            g->store_error = xstrdup(lscat_error_last());
            g->store_failed = 1;
        }
        pthread_mutex_unlock(&g->lock);
    }
    if (rc == 0)
        rc = build_kernel(&r, &g->env, key, it->dir, it->repo_root, slot);
    else
        memset(&r, 0, sizeof(r)), buf_init(&r.fixes, 0);
    pthread_mutex_lock(&g->lock);
    if (rc == 0 && record_build(g, it, key, &r) < 0) {
        g->store_failed = 1;
        if (!g->store_error)
            g->store_error = xasprintf("cannot record in the store: %s", lscat_error_last());
        rc = -1;
    }
    if (rc == 0) {
        count_build(g->c, &r);
        log_event(LOG_DEBUG, "built", "kernel", it->id, "status", r.ok ? "ok" : "failed",
                  "class", r.ok ? "none" : classify_name(r.final_class), "fixes", r.fixes.data,
                  NULL);
    } else {
        g->c->errors++;
        log_event(LOG_WARN, "build_error", "kernel", it->id, "error", lscat_error_last(), NULL);
    }
    pthread_mutex_unlock(&g->lock);
    build_result_release(&r);
}

/* Take items from g->next up to g->count until none are left, the store failed or a stop. */
static void *pool_worker(void *arg)
{
    struct worker *w = arg;
    struct stage *g = w->g;
    for (;;) {
        pthread_mutex_lock(&g->lock);
        size_t i = g->next++;
        int stop = g->store_failed || (g->o->stop && *g->o->stop);
        pthread_mutex_unlock(&g->lock);
        if (i >= g->count || stop)
            break;
        w->one(g, &g->items[i], w->slot);
        progress_add(g->bar, 1);
    }
    return NULL;
}

/* Run `one` over items g->next .. g->count-1 on `jobs` threads. */
static void run_pool(struct stage *g, int jobs, item_fn one)
{
    pthread_t *t = xcalloc((size_t)jobs, sizeof(*t));
    struct worker *w = xcalloc((size_t)jobs, sizeof(*w));
    int started = 0;
    for (int i = 0; i < jobs; i++) {
        w[i] = (struct worker){ g, i, one };
        if (pthread_create(&t[i], NULL, pool_worker, &w[i]) != 0)
            break;
        started++;
    }
    if (!started) {
        w[0] = (struct worker){ g, 0, one };
        pool_worker(&w[0]);
    }
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    free(w);
}

/* ---------------------------------------------------------------- probe phase */

static int record_probe(struct stage *g, const struct item *it, const struct probe_result *p)
{
    char now[32];
    fs_utc_now(now);
    const char *outcome = probe_outcome_name(p->outcome);
    int ok = p->outcome == PROBE_OK;
    int rc = store_begin(g->s);
    if (rc == 0)
        rc = store_run(g->s, "INSERT OR REPLACE INTO probes(kernel_id, gpu_id, outcome, detail, "
                       "sanitizer, sanitizer_detail, cache_key, probe_s, probed_at, run_id, "
                       "binding, bindings) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", "titttttdtitt",
                       it->id, g->gpu_id, outcome, p->detail, p->sanitizer, p->sanitizer_detail,
                       it->old_key, p->probe_s, now, g->run_id, p->binding, p->bindings);
    if (rc >= 0) /* the binding tune launches it with: the one that ran clean */
        rc = store_run(g->s, "UPDATE kernels SET status = ?, binding = ? WHERE id = ?", "ttt",
                       ok ? "runnable" : "probe_failed", ok ? p->binding : NULL, it->id);
    if (rc >= 0)
        rc = store_run(g->s, "DELETE FROM failures WHERE stage = 'execute' AND kernel_id = ? AND "
                       "class IN ('launch_failure','illegal_address','cuda_error','crash',"
                       "'timeout_probe')", "t", it->id);
    if (rc >= 0 && !ok) {
        char *subject = xasprintf("kernel:%s", it->id);
        const char *cls = p->outcome == PROBE_TIMEOUT ? "timeout_probe" : outcome;
        rc = store_run(g->s, "INSERT INTO failures(stage, subject, kernel_id, class, message, "
                       "created_at, run_id) VALUES ('execute', ?, ?, ?, ?, ?, ?)", "ttttti",
                       subject, it->id, cls, p->detail, now, g->run_id);
        free(subject);
    }
    if (rc >= 0)
        rc = store_commit(g->s);
    else
        store_rollback(g->s);
    return rc < 0 ? rc : 0;
}

static void probe_one(struct stage *g, const struct item *it, int slot)
{
    struct probe_result p;
    char *scratch = xasprintf("%s/builds/%s/probe-%lld", g->work_dir, it->old_key,
                              (long long)g->gpu_id);
    struct probe_options po = PROBE_OPTIONS_INIT;
    po.harness = it->old_binary;
    po.scratch = scratch;
    po.work_dir = g->work_dir;
    po.slot = slot;
    po.device = g->device;
    po.timeout_s = g->o->probe_timeout_s;
    po.sanitizer = g->sanitizer;
    po.params = it->params;
    po.large = g->o->probe_size;
    /* Probes share the GPU with each other, never with a measurement (lscat tune). */
    struct gpulock gl = { -1 };
    int rc = g->gpu_uuid[0] ? gpulock_acquire(&gl, g->gpu_uuid, 0, NULL, -1, NULL) : 0;
    if (rc == 0)
        rc = probe_run(&p, &po);
    else
        memset(&p, 0, sizeof(p));
    gpulock_release(&gl);
    pthread_mutex_lock(&g->lock);
    if (rc == 0 && record_probe(g, it, &p) < 0) {
        g->store_failed = 1;
        if (!g->store_error)
            g->store_error = xasprintf("cannot record in the store: %s", lscat_error_last());
        rc = -1;
    }
    if (rc == 0) {
        g->c->probed++;
        if (p.outcome == PROBE_OK)
            g->c->runnable++;
        else
            g->c->probe_failed++;
        if (p.sanitizer && strcmp(p.sanitizer, "out_of_bounds") == 0)
            g->c->out_of_bounds++;
        if (p.outcome == PROBE_OK && p.binding && strcmp(p.binding, probe_bindings[0]) != 0)
            g->c->rebound++;
        g->c->small_only += p.small_only;
        g->c->probed_2d += probe_is2d(it->params);
        g->c->reprobed += it->reprobe;
        log_event(LOG_DEBUG, "probed", "kernel", it->id, "outcome",
                  probe_outcome_name(p.outcome), "binding", p.binding ? p.binding : "",
                  "detail", p.detail ? p.detail : "", NULL);
    } else {
        g->c->errors++;
        log_event(LOG_WARN, "probe_error", "kernel", it->id, "error", lscat_error_last(), NULL);
    }
    pthread_mutex_unlock(&g->lock);
    probe_result_release(&p);
    free(scratch);
}

static int register_gpu(struct stage *g, const struct gpu_info *gpu)
{
    char now[32];
    fs_utc_now(now);
    const char *uuid = gpu ? gpu->uuid : "none";
    int rc = store_run(g->s, "INSERT OR IGNORE INTO gpus(uuid, name, compute_cap, memory_bytes, "
                       "driver_version, first_seen) VALUES (?,?,?,?,?,?)", "tttitt", uuid,
                       gpu ? gpu->name : "none (probe forced without a CUDA device)",
                       gpu ? gpu->cc : NULL, (int64_t)(gpu ? gpu->memory_bytes : 0),
                       gpu ? gpu->driver : NULL, now);
    if (rc >= 0)
        rc = store_query_int(&g->gpu_id, g->s, "SELECT id FROM gpus WHERE uuid = ?", "t", uuid);
    return rc < 0 ? rc : 0;
}

/* A probe p (of kernel k, same build) made before 2D kernels were probed with 2D blocks only
 * (its bindings have no "configs"), of a 2D kernel, whose verdict the 2D-only plan could change:
 * anything but a plain clean `ok` with the default binding (a failure, `small sizes only`, a
 * binding chosen because the default failed, a sanitizer report). The plan only drops the 1D
 * configurations of such kernels, so a clean default `ok` stays what it is. */
#define PROBE_PLAN_CHANGED                                                                   \
    "k.params LIKE '%\"is2d\":true%' AND coalesce(p.bindings, '') NOT LIKE '%\"configs\":%' " \
    "AND NOT (p.outcome = 'ok' AND coalesce(p.binding, 'area') = 'area' AND "                 \
    "coalesce(p.sanitizer, '') NOT IN ('out_of_bounds', 'errors') AND "                        \
    "coalesce(p.detail, '') NOT LIKE 'small sizes only%')"

static int load_probe_items(struct stage *g)
{
    for (size_t i = 0; i < g->count; i++)
        item_free(&g->items[i]);
    g->count = 0;
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, g->s,
        "SELECT k.id, b.binary_path, b.cache_key, k.params, p.kernel_id IS NOT NULL "
        "FROM kernels k JOIN builds b ON b.kernel_id = k.id AND b.arch = ? AND b.status = 'ok' "
        "LEFT JOIN probes p ON p.kernel_id = k.id AND p.gpu_id = ? AND p.cache_key = b.cache_key "
        "WHERE k.status IN ('built','runnable','probe_failed') AND (? IS NULL OR k.id LIKE ? || "
        "'%') AND (p.kernel_id IS NULL OR (" PROBE_PLAN_CHANGED ")) ORDER BY k.id");
    if (rc == 0)
        rc = store_bind(st, "titt", g->arch, g->gpu_id, g->o->kernel, g->o->kernel);
    while (rc == 0 && (rc = store_step(st)) == STORE_ROW) {
        XGROW(g->items, g->count + 1, g->alloc);
        struct item *it = &g->items[g->count++];
        memset(it, 0, sizeof(*it));
        it->id = dup_col(st, 0);
        it->old_binary = abs_path(g->work_dir, store_col_text(st, 1), NULL);
        it->old_key = dup_col(st, 2);
        it->params = dup_col(st, 3);
        it->reprobe = (int)store_col_int(st, 4);
        rc = 0;
    }
    store_finalize(st);
    return rc < 0 ? rc : 0;
}

static char *find_sanitizer(const char *nvcc)
{
    char *dir = xstrdup(nvcc);
    char *slash = strrchr(dir, '/');
    char *p = NULL;
    if (slash) {
        *slash = '\0';
        p = fs_join(dir, "compute-sanitizer");
        if (!fs_exists(p)) {
            free(p);
            p = NULL;
        }
    }
    free(dir);
    return p;
}

static int probe_phase(struct stage *g)
{
    struct gpu_info *gpus = NULL;
    int n = 0, rc = 0;
    probe_list_gpus(&gpus, &n);
    const struct gpu_info *gpu = NULL;
    for (int i = 0; i < n; i++)
        if (gpus[i].index == g->o->device)
            gpu = &gpus[i];
    g->c->gpu_present = n > 0;
    if (!gpu && g->o->probe != EXECUTE_PROBE_FORCE) {
        log_warn("probing needs a CUDA device: %s; built harnesses stay 'built' until "
                 "`lscat execute` runs on a GPU machine",
                 n ? "no GPU with the --device index" : "none found (nvidia-smi lists none)");
        goto done;
    }
    rc = register_gpu(g, gpu);
    if (rc == 0)
        rc = load_probe_items(g);
    if (rc < 0 || g->count == 0)
        goto done;
    g->device = g->o->device;
    if (gpu)
        snprintf(g->gpu_uuid, sizeof(g->gpu_uuid), "%s", gpu->uuid);
    if (g->o->sanitize && !g->sanitizer &&
        !(g->sanitizer = find_sanitizer(g->env.nvcc ? g->env.nvcc : "/usr/local/cuda/bin/nvcc")))
        log_warn("--sanitize: compute-sanitizer not found beside nvcc; probing without it");
    g->bar = progress_new("probe", g->count);
    g->next = 0;
    run_pool(g, g->o->jobs < 4 ? g->o->jobs : 4, probe_one);
    progress_free(g->bar);
    g->bar = NULL;
done:
    free(gpus);
    return rc;
}

/* Probe what the builds so far made, between two build rounds: the build items are set aside
 * while probe_phase uses the stage's item list. */
static int probe_round(struct stage *g)
{
    struct item *items = g->items;
    size_t count = g->count, alloc = g->alloc, next = g->next;
    struct progress *bar = g->bar;
    g->items = NULL;
    g->count = g->alloc = g->next = 0;
    g->bar = NULL;
    int rc = probe_phase(g);
    for (size_t i = 0; i < g->count; i++)
        item_free(&g->items[i]);
    free(g->items);
    g->items = items;
    g->count = count;
    g->alloc = alloc;
    g->next = next;
    g->bar = bar;
    return rc;
}

/* Whether probes will run: a GPU with the --device index, or --probe-anyway. */
static int will_probe(const struct execute_options *o)
{
    struct gpu_info *gpus = NULL;
    int n = 0, found = 0;
    if (o->probe == EXECUTE_PROBE_NEVER)
        return 0;
    if (o->probe == EXECUTE_PROBE_FORCE)
        return 1;
    probe_list_gpus(&gpus, &n);
    for (int i = 0; i < n; i++)
        found |= gpus[i].index == o->device;
    free(gpus);
    return found;
}

/* ---------------------------------------------------------------- the stage */

static char *detect_arch(void)
{
    struct gpu_info *gpus = NULL;
    int n = 0;
    probe_list_gpus(&gpus, &n);
    struct buf a = BUF_INIT;
    for (int i = 0; i < n; i++) {
        char sm[24];
        const char *cc = gpus[i].cc;
        snprintf(sm, sizeof(sm), "sm_%c%s", cc[0], strchr(cc, '.') ? strchr(cc, '.') + 1 : "0");
        if (!strstr(a.data, sm))
            buf_addf(&a, "%s%s", a.len ? "," : "", sm);
    }
    free(gpus);
    if (!a.len) {
        log_info("no GPU found: building for sm_90 (use --arch to choose)");
        buf_adds(&a, "sm_90");
    }
    return buf_detach(&a, NULL);
}

/* Repository lookups of the repair loop: lscat-isolate's libclang service, started on first
 * use; the textual search when it is missing or fails. LSCAT_RESOLVE_TIMEOUT_S (tests) sets the
 * per-request limit. */
static struct isoresolve *new_resolver(void)
{
    struct isoresolve_options ro = ISORESOLVE_OPTIONS_INIT;
    const char *t = getenv("LSCAT_RESOLVE_TIMEOUT_S");
    ro.timeout_s = t && *t ? atof(t) : 0;
    return isoresolve_new(&ro);
}

static void log_resolver(const struct isoresolve *r)
{
    int served, fallback, starts;
    isoresolve_stats(r, &served, &fallback, &starts);
    if (served + fallback == 0)
        return;
    char a[24], b[24], c[24];
    snprintf(a, sizeof a, "%d", served);
    snprintf(b, sizeof b, "%d", fallback);
    snprintf(c, sizeof c, "%d", starts);
    log_event(LOG_INFO, "repair_lookups", "isolate", a, "text", b, "service_starts", c, NULL);
}

int execute_run(struct execute_counts *out, struct store *s, const char *work_dir,
                const struct execute_options *o, int64_t run_id)
{
    struct stage g;
    memset(&g, 0, sizeof(g));
    memset(out, 0, sizeof(*out));
    g.s = s;
    g.work_dir = work_dir;
    g.o = o;
    g.run_id = run_id;
    g.c = out;
    pthread_mutex_init(&g.lock, NULL);
    char *arch = o->arch ? xstrdup(o->arch) : detect_arch();
    struct buf why = BUF_INIT;
    struct isoresolve *resolver = new_resolver();
    struct build_config cfg = { work_dir, arch, o->nvcc, o->build_timeout_s, o->max_attempts,
                                isoresolve_resolver(resolver) };
    int rc = fs_mkdirs(work_dir, 0755);
    if (rc == 0 && sandbox_describe(&why, sandbox_detect(work_dir)))
        log_warn("sandbox: %s", why.data);
    else if (rc == 0)
        log_info("sandbox: %s", why.data);
    g.arch = arch;
    if (rc == 0)
        rc = load_items(&g);
    if (rc == 0 && g.count > 0)
        rc = build_env_init(&g.env, &cfg);
    if (rc < 0)
        goto done;
    if (g.count == 0)
        log_info("no kernels to build (run lscat isolate first?)");
    out->kernels = (int)g.count;
    char nk[24], nj[24];
    snprintf(nk, sizeof(nk), "%zu", g.count);
    snprintf(nj, sizeof(nj), "%d", o->jobs);
    if (g.count > 0)
        log_event(LOG_INFO, "build_start", "kernels", nk, "arch", g.env.arch, "nvcc",
                  g.env.nvcc_version, "jobs", nj, NULL);
    double t0 = fs_mono_s(), probe_s = 0;
    g.bar = g.count > 0 ? progress_new("build", g.count) : NULL;
    /* In rounds when probing: each round's runnable kernels are in the store (for tune
     * --follow, and for a run that is killed) while the next round builds. */
    size_t total = g.count, jobs = (size_t)(o->jobs > 0 ? o->jobs : 1);
    size_t round = o->build_round > 0 ? (size_t)o->build_round : 8 * jobs;
    if (o->build_round < 0 || total <= round || !will_probe(o))
        round = total;
    for (size_t start = 0; rc == 0 && start < total && !g.store_failed &&
                           !(o->stop && *o->stop); start += round) {
        g.next = start;
        g.count = start + round < total ? start + round : total;
        run_pool(&g, (int)jobs, build_one);
        out->build_rounds++;
        if (g.count < total && !g.store_failed) {
            double p0 = fs_mono_s();
            rc = probe_round(&g);
            probe_s += fs_mono_s() - p0;
        }
    }
    g.count = total;
    progress_free(g.bar);
    g.bar = NULL;
    out->build_wall_s = fs_mono_s() - t0 - probe_s;
    log_resolver(resolver);
    isoresolve_free(resolver); /* repairs are over: the service child goes */
    resolver = NULL;
    if (g.store_failed)
        rc = lscat_error_set("%s", g.store_error);
    out->interrupted = o->stop && *o->stop;
    if (rc == 0 && o->probe != EXECUTE_PROBE_NEVER && !out->interrupted)
        rc = probe_phase(&g);
    out->interrupted = o->stop && *o->stop;
    if (rc == 0 && g.store_failed)
        rc = lscat_error_set("%s", g.store_error);
done:
    isoresolve_free(resolver);
    for (size_t i = 0; i < g.count; i++)
        item_free(&g.items[i]);
    free(g.items);
    free(g.sanitizer);
    free(g.store_error);
    free(arch);
    buf_release(&why);
    build_env_release(&g.env);
    pthread_mutex_destroy(&g.lock);
    return rc;
}

void execute_counts_json(char **out, const struct execute_counts *c)
{
    *out = xasprintf("{\"kernels\":%d,\"cached\":%d,\"built_first_try\":%d,"
                     "\"built_after_repair\":%d,\"build_failed\":%d,\"probed\":%d,"
                     "\"runnable\":%d,\"rebound\":%d,\"small_only\":%d,\"probed_2d\":%d,"
                     "\"reprobed\":%d,\"probe_failed\":%d,"
                     "\"out_of_bounds\":%d,\"errors\":%d,\"gpu_present\":%d,"
                     "\"build_rounds\":%d,\"interrupted\":%d,\"build_wall_s\":%.3f}",
                     c->kernels, c->cached, c->built_first_try, c->built_after_repair,
                     c->build_failed, c->probed, c->runnable, c->rebound, c->small_only,
                     c->probed_2d, c->reprobed, c->probe_failed,
                     c->out_of_bounds, c->errors, c->gpu_present, c->build_rounds,
                     c->interrupted, c->build_wall_s);
}
