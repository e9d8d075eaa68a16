/* execute's two worker pools, running at the same time: builders (one nvcc each, in kernel id
 * order) and probe workers (a few per GPU). A kernel built ok (first try, after repair, or
 * cached) that this GPU has not probed goes on a FIFO the probe workers take from, so the GPU
 * probes while the CPU cores build. Results go to the store one transaction per item, under
 * the stage lock, as each item finishes (tune --follow sees runnable kernels at once). */
#include "execute/probe_runner.h"
#include "execute/sandbox.h"
#include "execute/stage.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/gpulock.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int stopped(const struct stage *g)
{
    return g->store_failed || (g->o->stop && *g->o->stop);
}

/* With g->lock held: remember the first store error; everyone stops. */
static void store_failure(struct stage *g)
{
    g->store_failed = 1;
    if (!g->store_error)
        g->store_error = xasprintf("cannot record in the store: %s", lscat_error_last());
}

/* ---------------------------------------------------------------- builds */

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

/* With g->lock held: queue item `it`, built ok as `key` (probe key `pkey`) into `binary`
 * (absolute, taken), for a probe unless probes are off or this GPU probed that probe key under
 * the current probe plan. */
static void queue_probe(struct stage *g, struct item *it, const char *key, const char *pkey,
                        char *binary)
{
    int probed = it->probed_key && strcmp(it->probed_key, pkey) == 0;
    if (!g->probing || (probed && !it->plan_changed)) {
        free(binary);
        return;
    }
    it->reprobe = probed; /* probed, the plan changed since */
    it->probe_key = xstrdup(pkey);
    it->probe_build = xstrdup(key);
    it->probe_binary = binary;
    g->queue[g->q_tail++] = (size_t)(it - g->items);
    pthread_cond_broadcast(&g->moved);
}

/* With g->lock held: probes that older lscat stored under the build key (probes.cache_key was
 * the build's) are probes of the probe key when that build key is the kernel's key still: it
 * covers every input of the probe key. Anything else under an old build key is probed again. */
static int rekey_legacy(struct stage *g, struct item *it, const char *key, const char *pkey)
{
    if (!it->legacy || !it->old_key || strcmp(it->old_key, key) != 0)
        return 0;
    if (record_rekey_probes(&g->rec, it->id, key, pkey) < 0)
        return -1;
    if (it->probed_key && strcmp(it->probed_key, key) == 0) {
        free(it->probed_key);
        it->probed_key = xstrdup(pkey);
    }
    it->legacy = 0;
    g->c->rekeyed++;
    return 0;
}

static void build_note(struct stage *g)
{
    if (!g->probing || !g->bar || g->bar_is_probe)
        return;
    char note[64];
    snprintf(note, sizeof(note), "probed %zu of %zu", g->probes_done, g->q_tail);
    progress_note(g->bar, note);
}

/* The part of a build before nvcc: the keys, a legacy store's probes, the cache, the core.
 * Returns 1 when the item is done without a build (cached, or a store failure), else 0 with
 * *rc the outcome so far (0: build it). */
static int build_prepare(struct stage *g, struct item *it, char key[65], char pkey[65], int *rc)
{
    *rc = build_cache_key(key, pkey, &g->env, it->id, it->dir);
    if (*rc == 0 && it->legacy) {
        pthread_mutex_lock(&g->lock);
        if (rekey_legacy(g, it, key, pkey) < 0) {
            store_failure(g);
            *rc = -1;
        }
        pthread_mutex_unlock(&g->lock);
        if (*rc < 0)
            return 1;
    }
    if (*rc == 0 && is_cached(it, key)) {
        pthread_mutex_lock(&g->lock);
        g->c->cached++;
        if (strcmp(it->old_status, "ok") == 0)
            queue_probe(g, it, key, pkey, xstrdup(it->old_binary));
        progress_add(g->bar, 1);
        pthread_mutex_unlock(&g->lock);
        return 1;
    }
    if (*rc == 0) {
        pthread_mutex_lock(&g->core_lock);
        *rc = build_env_ensure_core(&g->env);
        pthread_mutex_unlock(&g->core_lock);
        pthread_mutex_lock(&g->lock);
        if (*rc < 0 && !g->store_error) { /* no harness can link without it: stop */
            g->store_error = xstrdup(lscat_error_last());
            g->store_failed = 1;
        }
        pthread_mutex_unlock(&g->lock);
    }
    return 0;
}

/* Record item `it`'s build (rc < 0: it could not run) and queue it for a probe. Releases r. */
static void build_record(struct stage *g, struct item *it, const char *key, const char *pkey,
                         int rc, struct build_result *r)
{
    struct record_prev prev = { it->old_key, it->old_status };
    pthread_mutex_lock(&g->lock);
    int kept = rc == 0 ? record_build(&g->rec, it->id, &prev, key, pkey, r) : 0;
    if (kept < 0) {
        store_failure(g);
        rc = -1;
    }
    if (rc == 0) {
        count_build(g->c, r);
        g->c->built_while_probing += g->probes_running > 0;
        log_event(LOG_DEBUG, "built", "kernel", it->id, "status", r->ok ? "ok" : "failed",
                  "class", r->ok ? "none" : classify_name(r->final_class), "fixes", r->fixes.data,
                  NULL);
        /* a new build key, the same probe key: its probes stand */
        g->c->probes_kept += kept == RECORD_PROBES_KEPT;
        if (kept == RECORD_PROBES_GONE) { /* the probe loaded before the build went with them:
                                           * probe again (a kernel whose build row a tool
                                           * deleted stayed 'built', never probed, before) */
            free(it->probed_key);
            it->probed_key = NULL;
        }
        if (r->ok)
            queue_probe(g, it, key, pkey,
                        r->binary_path[0] == '/' ? xstrdup(r->binary_path)
                                                 : fs_join(g->work_dir, r->binary_path));
    } else {
        g->c->errors++;
        log_event(LOG_WARN, "build_error", "kernel", it->id, "error", lscat_error_last(), NULL);
    }
    progress_add(g->bar, 1);
    pthread_mutex_unlock(&g->lock);
    build_result_release(r);
}

static void build_alone(struct stage *g, struct item *it, const char *key, const char *pkey,
                        int rc, int slot)
{
    struct build_result r;
    if (rc == 0)
        rc = build_kernel(&r, &g->env, key, it->dir, it->repo_root, slot);
    else
        memset(&r, 0, sizeof(r)), buf_init(&r.fixes, 0);
    build_record(g, it, key, pkey, rc, &r);
}

static void build_one(struct stage *g, struct item *it, int slot)
{
    char key[65], pkey[65];
    int rc;
    if (!build_prepare(g, it, key, pkey, &rc))
        build_alone(g, it, key, pkey, rc, slot);
}

/* Builds of several items at once (--build-batch N): the ones that need nvcc and qualify
 * (build_batch_eligible) compile their first attempt in one translation unit; whatever the
 * batch did not build (an error, a name it cannot split, ...) is built alone, as before. */
static void build_several(struct stage *g, struct item **its, int n, int slot)
{
    char (*key)[65] = xcalloc((size_t)n, sizeof(*key)), (*pkey)[65] = xcalloc((size_t)n,
                                                                               sizeof(*pkey));
    int *rc = xcalloc((size_t)n, sizeof(int)), *need = xcalloc((size_t)n, sizeof(int)),
        *done = xcalloc((size_t)n, sizeof(int));
    const char **keys = xcalloc((size_t)n, sizeof(char *)),
               **dirs = xcalloc((size_t)n, sizeof(char *));
    int *idx = xcalloc((size_t)n, sizeof(int)), m = 0;
    for (int i = 0; i < n; i++) {
        need[i] = !build_prepare(g, its[i], key[i], pkey[i], &rc[i]);
        if (need[i] && rc[i] == 0) { /* taken for their signature: all eligible */
            keys[m] = key[i];
            dirs[m] = its[i]->dir;
            idx[m++] = i;
        }
    }
    if (m >= 2) {
        struct build_result *r = xcalloc((size_t)m, sizeof(*r));
        int brc = build_batch(r, done, &g->env, keys, dirs, m, slot);
        pthread_mutex_lock(&g->lock);
        g->c->batches++;
        pthread_mutex_unlock(&g->lock);
        for (int j = 0; j < m; j++) {
            if (brc == 0 && done[j]) {
                pthread_mutex_lock(&g->lock);
                g->c->batched++;
                pthread_mutex_unlock(&g->lock);
                build_record(g, its[idx[j]], key[idx[j]], pkey[idx[j]], 0, &r[j]);
                need[idx[j]] = 0;
            } else {
                build_result_release(&r[j]);
            }
        }
        free(r);
    }
    for (int i = 0; i < n; i++)
        if (need[i])
            build_alone(g, its[i], key[i], pkey[i], rc[i], slot);
    free(key);
    free(pkey);
    free(rc);
    free(need);
    free(done);
    free(keys);
    free(dirs);
    free(idx);
}

/* ---------------------------------------------------------------- probes */

/* With g->lock held: count probe `p` of `it` and log it. */
static void count_probe(struct stage *g, const struct item *it, const struct probe_result *p)
{
    struct execute_counts *c = g->c;
    c->probed++;
    if (p->outcome == PROBE_OK)
        c->runnable++;
    else
        c->probe_failed++;
    if (p->sanitizer && strcmp(p->sanitizer, "out_of_bounds") == 0)
        c->out_of_bounds++;
    if (p->outcome == PROBE_OK && p->binding && strcmp(p->binding, probe_bindings[0]) != 0)
        c->rebound++;
    c->small_only += p->small_only;
    c->reblocked += p->outcome == PROBE_OK && p->block != NULL;
    c->too_slow += p->too_slow;
    c->guard_stops += p->guard_stops;
    c->guard_reruns += p->guard_reruns;
    c->wrote_past += p->outcome == PROBE_OK && p->past != NULL;
    c->fault_budget += p->fault_budget;
    c->memcheck_runs += p->memcheck_runs;
    c->memcheck_reports += p->memcheck_reports;
    c->memcheck_inconclusive += p->memcheck_inconclusive;
    c->confirm_runs += p->confirm_runs;
    c->memcheck_fallback_runs += p->memcheck_fallback_runs;
    c->probed_2d += probe_is2d(it->params);
    c->reprobed += it->reprobe;
    log_event(LOG_DEBUG, "probed", "kernel", it->id, "outcome", probe_outcome_name(p->outcome),
              "binding", p->binding ? p->binding : "", "detail", p->detail ? p->detail : "",
              NULL);
}

/* How long the end of a run waits for its killed sandboxed processes to go (sandbox_wait_slots). */
#define EXECUTE_SLOTS_WAIT_S 30

/* A probe worker holds at most this many verdicts whose last run ended on the clock (held). */
#define EXECUTE_HELD_MAX 16

/* A verdict held until the device answers again (docs/execute.md "A device that goes"). */
struct held {
    struct item *it;
    struct probe_result p;
};

struct worker {
    struct stage *g;
    int slot, probe;
    struct probe_runner *runner; /* a probe worker's lscat-runner (slots slot .. slot + spares) */
    struct probe_runner *memcheck; /* its memcheck runner (slot + spares + 2), NULL: none */
    struct held held[EXECUTE_HELD_MAX]; /* verdicts whose last run hung or crashed, not yet
                                           stored: a device that goes makes runs hang first */
    int nheld;
};

/* The worker's probe runner, made on its first probe (NULL: a process per probe run). */
static struct probe_runner *worker_runner(struct stage *g, struct worker *w)
{
    if (!w->runner && g->runner_program) {
        struct probe_runner_options ro = PROBE_RUNNER_OPTIONS_INIT;
        char *scratch = xasprintf("%s/probe-slots", g->work_dir);
        ro.program = g->runner_program;
        ro.scratch = scratch;
        ro.work_dir = g->work_dir;
        ro.spare = g->o->probe_spares;
        for (int i = 0; i <= ro.spare && i <= PROBE_RUNNER_SPARES_MAX; i++)
            ro.slots[i] = w->slot + i;
        ro.device = g->device;
        ro.timeout_s = g->o->probe_timeout_s;
        ro.env = (const char *const *)g->probe_env;
        ro.pool = g->runner_pool;
        probe_runner_new(&w->runner, &ro);
        if (g->memcheck) { /* no spare: it lives on after the faults it catches */
            ro.sanitizer = g->memcheck;
            ro.spare = 0;
            ro.pool = NULL;
            ro.slots[0] = w->slot + 2 + g->o->probe_spares; /* after the process runs' slot */
            probe_runner_new(&w->memcheck, &ro);
        }
        free(scratch);
    }
    return w->runner;
}

/* The worker is done: its runners stop, their counts join the run's. */
static void worker_runner_free(struct stage *g, struct worker *w)
{
    struct probe_runner_stats st;
    if (!w->runner)
        return;
    probe_runner_stats(&st, w->runner);
    probe_runner_free(w->runner);
    w->runner = NULL;
    struct probe_runner_stats mc = { 0 };
    if (w->memcheck)
        probe_runner_stats(&mc, w->memcheck);
    probe_runner_free(w->memcheck);
    w->memcheck = NULL;
    pthread_mutex_lock(&g->lock);
    g->c->runner_starts += st.starts;
    g->c->runner_probe_runs += st.runs;
    g->c->runner_ended += st.ended;
    g->c->runner_spare_ready += st.spare_ready;
    g->c->runner_wait_s += st.wait_s;
    g->c->runner_shared += st.shared;
    g->c->memcheck_starts += mc.starts;
    g->c->memcheck_late += mc.late;
    g->c->memcheck_stray += mc.stray;
    pthread_mutex_unlock(&g->lock);
}

/* With g->lock held: store probe `p` of `it` and count it; -1 when the store failed. */
static int keep_probe(struct stage *g, struct item *it, const struct probe_result *p)
{
    if (record_probe(&g->rec, it->id, it->probe_key, p) < 0) {
        store_failure(g);
        return -1;
    }
    count_probe(g, it, p);
    return 0;
}

/* With g->lock held: the worker's held verdicts, stored once the device answered a later probe,
 * or dropped once it was found gone (those kernels stay 'built', counted unprobed, and the next
 * run probes them). Session 24: a GPU that went away made runs hang for minutes before any
 * start failed, and the verdicts of the kernels in flight were stored. */
static int settle_held(struct stage *g, struct worker *w, int drop)
{
    int rc = 0;
    for (int i = 0; i < w->nheld; i++) {
        struct held *h = &w->held[i];
        if (drop) {
            g->c->unprobed++;
            log_event(LOG_INFO, "probe_dropped", "kernel", h->it->id, "outcome",
                      probe_outcome_name(h->p.outcome), "why", "its last run hung or crashed, "
                      "and the device was gone afterwards: not recorded", NULL);
        } else if (rc == 0 && keep_probe(g, h->it, &h->p) < 0) {
            rc = -1;
        }
        probe_result_release(&h->p);
    }
    w->nheld = 0;
    return rc;
}

static void probe_one(struct stage *g, struct item *it, struct worker *w)
{
    int slot = w->slot;
    struct probe_result p;
    char *scratch = xasprintf("%s/builds/%s/probe-%lld", g->work_dir, it->probe_build,
                              (long long)g->rec.gpu_id);
    struct probe_options po = PROBE_OPTIONS_INIT;
    po.harness = it->probe_binary;
    po.scratch = scratch;
    po.work_dir = g->work_dir;
    po.slot = g->runner_program ? slot + 1 + g->o->probe_spares : slot; /* see start() */
    po.device = g->device;
    po.timeout_s = g->o->probe_timeout_s;
    po.sanitizer = g->sanitizer;
    po.params = it->params;
    po.large = g->o->probe_size;
    po.large_budget_s = g->o->probe_budget_s;
    po.large_budget_max_s = g->o->probe_budget_max_s;
    po.retry_blocks = !g->o->no_block_retry;
    po.guard = !g->o->no_probe_guard;
    po.fault_budget = g->o->probe_faults;
    po.small_timeout_s = g->o->probe_small_timeout_s;
    po.runner = worker_runner(g, w);
    po.memcheck = w->memcheck;
    po.env = (const char *const *)g->probe_env;
    /* Probes share the GPU with each other, never with a measurement (lscat tune); a stop
     * while waiting for tune's measurement starts nothing. */
    struct gpulock gl = { -1 };
    int rc = g->gpu_uuid[0] ? gpulock_acquire(&gl, g->gpu_uuid, 0, g->o->stop, -1, NULL) : 0;
    int waited_out = rc == LSCAT_EBUSY;
    if (rc == 0) {
        char ws[16];
        snprintf(ws, sizeof ws, "%d", slot); /* its runners' probe_run events: slot .. +spares */
        log_event(LOG_DEBUG, "probing", "kernel", it->id, "worker_slot", ws, NULL);
        rc = probe_run(&p, &po);
    } else {
        memset(&p, 0, sizeof(p));
    }
    gpulock_release(&gl);
    pthread_mutex_lock(&g->lock);
    int lost = rc == 0 && p.device_lost; /* no verdict on this kernel: it stays 'built' */
    if (lost) {
        g->c->unprobed++;
        if (!g->device_lost) {
            g->device_lost = xstrdup(p.detail ? p.detail : "the device is unusable");
            log_event(LOG_ERROR, "device_lost", "kernel", it->id, "detail", g->device_lost,
                      NULL);
            pthread_cond_broadcast(&g->moved); /* probe workers waiting for a kernel stop */
        }
        settle_held(g, w, 1); /* what hung before it may have been the device going */
    }
    if (rc == 0 && !lost) {
        if (p.ended_on_clock && w->nheld < EXECUTE_HELD_MAX) { /* until the device answers */
            w->held[w->nheld].it = it;
            w->held[w->nheld++].p = p;
            memset(&p, 0, sizeof(p));
        } else {
            if (!p.ended_on_clock) /* the device answered: what it held is the kernels' */
                rc = settle_held(g, w, 0);
            if (rc == 0)
                rc = keep_probe(g, it, &p);
        }
    }
    if (rc != 0 && !waited_out) {
        g->c->errors++;
        log_event(LOG_WARN, "probe_error", "kernel", it->id, "error", lscat_error_last(), NULL);
    }
    g->probes_done++;
    g->probes_running--;
    if (g->bar && g->bar_is_probe)
        progress_add(g->bar, 1);
    else
        build_note(g);
    pthread_mutex_unlock(&g->lock);
    probe_result_release(&p);
    free(scratch);
}

/* ---------------------------------------------------------------- the pools */

static double wait_moved(struct stage *g)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 200 * 1000 * 1000; /* a signal handler cannot signal the condition: poll */
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    double t0 = fs_mono_s();
    pthread_cond_timedwait(&g->moved, &g->lock, &ts);
    return fs_mono_s() - t0;
}

/* With g->lock held: the next item for a builder, waiting while g->ahead built kernels wait
 * for a probe (unless no probe worker is left); NULL when all are taken or on a stop. */
static struct item *take_build(struct stage *g)
{
    for (;;) {
        if (stopped(g) || g->next >= g->count)
            return NULL;
        if (!g->ahead || !g->probers || g->q_tail - g->q_head < g->ahead)
            return &g->items[g->next++];
        g->build_wait_s += wait_moved(g);
    }
}

/* How far past the next item a builder looks for its batch's members. */
#define BATCH_WINDOW_PER_MEMBER 16

static int batch_sig(struct item *it)
{
    if (it->bsig_state == 0) {
        it->bsig = build_batch_signature(it->dir);
        it->bsig_state = it->bsig ? 1 : -1;
    }
    return it->bsig_state;
}

/* With g->lock held: one more item for `first`'s batch without waiting, NULL when none is free
 * now: among the next few untaken items, the first with the same system headers, moved up to
 * the next place (the item there takes its place). */
static struct item *take_build_like(struct stage *g, struct item *first)
{
    if (stopped(g) || g->next >= g->count)
        return NULL;
    if (g->ahead && g->probers && g->q_tail - g->q_head >= g->ahead)
        return NULL;
    size_t end = g->next + (size_t)g->o->build_batch * BATCH_WINDOW_PER_MEMBER;
    for (size_t j = g->next; j < g->count && j < end; j++) {
        struct item *c = &g->items[j];
        if (batch_sig(c) == 1 && strcmp(c->bsig, first->bsig) == 0) {
            if (j != g->next) {
                struct item t = g->items[g->next];
                g->items[g->next] = *c;
                *c = t;
            }
            return &g->items[g->next++];
        }
    }
    return NULL;
}

/* With g->lock held: the next item to probe, waiting while builders may still queue one;
 * NULL when the queue is empty and every builder is done, or on a stop. */
static struct item *take_probe(struct stage *g)
{
    for (;;) {
        if (stopped(g) || g->device_lost)
            return NULL;
        if (g->q_head < g->q_tail) {
            g->probes_running++;
            return &g->items[g->queue[g->q_head++]];
        }
        if (!g->builders)
            return NULL;
        g->probe_wait_s += wait_moved(g);
    }
}

static void *pool_worker(void *arg)
{
    struct worker *w = arg;
    struct stage *g = w->g;
    struct item *it;
    pthread_mutex_lock(&g->lock);
    while ((it = w->probe ? take_probe(g) : take_build(g))) {
        pthread_cond_broadcast(&g->moved); /* a builder waiting on the bound may go on */
        pthread_mutex_unlock(&g->lock);
        if (w->probe) {
            probe_one(g, it, w);
        } else if (g->o->build_batch > 1) {
            struct item **its = xcalloc((size_t)g->o->build_batch, sizeof(*its));
            int n = 1;
            its[0] = it;
            pthread_mutex_lock(&g->lock);
            if (batch_sig(it) == 1)
                while (n < g->o->build_batch && (its[n] = take_build_like(g, it)))
                    n++;
            pthread_mutex_unlock(&g->lock);
            if (n > 1)
                build_several(g, its, n, w->slot);
            else
                build_one(g, it, w->slot);
            free(its);
        } else {
            build_one(g, it, w->slot);
        }
        pthread_mutex_lock(&g->lock);
    }
    if (w->probe) /* no later probe: stored, unless a worker found the device gone */
        settle_held(g, w, g->device_lost != NULL);
    if (w->probe && w->runner) {
        pthread_mutex_unlock(&g->lock);
        worker_runner_free(g, w);
        pthread_mutex_lock(&g->lock);
    }
    if (w->probe)
        g->probers--;
    else
        g->builders--;
    pthread_cond_broadcast(&g->moved);
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

/* Start n workers of a kind on slots first..; returns how many started (counted in g). */
static int start(pthread_t *t, struct worker *w, struct stage *g, int n, int first, int probe)
{
    int started = 0;
    pthread_mutex_lock(&g->lock);
    *(probe ? &g->probers : &g->builders) = n;
    pthread_mutex_unlock(&g->lock);
    for (int i = 0; i < n; i++) {
        /* with probe runners a probe worker takes a slot for its runner, one per spare and
         * one for its probe runs as processes (the sanitizer's, a harness without its .so):
         * a process run's slot sweep kills every process of its uid, so sharing the runner's
         * uid killed the idle runner, and the next kernel's run in it died of signal 9 */
        int step = probe && g->runner_program ? 2 + g->o->probe_spares + (g->memcheck != NULL) : 1;
        w[i] = (struct worker){ .g = g, .slot = first + step * i, .probe = probe };
        if (pthread_create(&t[i], NULL, pool_worker, &w[i]) != 0)
            break;
        started++;
    }
    pthread_mutex_lock(&g->lock);
    *(probe ? &g->probers : &g->builders) -= n - started;
    pthread_mutex_unlock(&g->lock);
    return started;
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

/* The builds are over: the repairs' lookup service goes, the build bar too (its summary line is
 * logged), a "probe" bar counts the probes still queued or running. */
static void builds_done(struct stage *g)
{
    if (g->resolver) {
        log_resolver(g->resolver);
        isoresolve_free(g->resolver);
        g->resolver = NULL;
    }
    pthread_mutex_lock(&g->lock);
    struct progress *done = g->bar;
    g->bar = NULL;
    g->builds_end_s = fs_mono_s();
    size_t left = g->q_tail - g->probes_done;
    if (g->probing && left && !stopped(g)) {
        g->bar = progress_new("probe", left);
        g->bar_is_probe = 1;
    }
    pthread_mutex_unlock(&g->lock);
    progress_free(done);
}

void pool_run(struct stage *g, int builders, int probers)
{
    if (!g->probing)
        probers = 0;
    pthread_t *t = xcalloc((size_t)(builders + probers), sizeof(*t));
    struct worker *w = xcalloc((size_t)(builders + probers + 1), sizeof(*w));
    int nb = start(t, w, g, builders, 0, 0);
    if (!nb) { /* no thread: this one builds, after the probe workers started */
        g->builders = 1;
        w[builders + probers] = (struct worker){ .g = g };
    }
    int np = probers ? start(t + builders, w + builders, g, probers, builders, 1) : 0;
    if (!nb)
        pool_worker(&w[builders + probers]);
    for (int i = 0; i < nb; i++)
        pthread_join(t[i], NULL);
    builds_done(g);
    if (probers && !np) { /* no probe thread: this one probes what was queued */
        g->probers = 1;
        w[builders] = (struct worker){ .g = g, .slot = builders, .probe = 1 };
        pool_worker(&w[builders]);
    }
    for (int i = 0; i < np; i++)
        pthread_join(t[builders + i], NULL);
    /* Runners and spares were killed as the workers ended; a process killed with a CUDA context
     * goes only once the driver has torn that down (seconds after faults). Wait for them here,
     * so that the GPU is free when lscat returns (session 23: up to 9 sandboxed processes,
     * memcheck runners among them, were still there after lscat-execute had exited). */
    int left = sandbox_wait_slots(EXECUTE_SLOTS_WAIT_S);
    if (left)
        log_warn("execute: %d sandboxed process(es) of this run still had not gone %d s after "
                 "they were killed (the GPU driver tearing their contexts down?); check "
                 "nvidia-smi before measuring on this GPU", left, EXECUTE_SLOTS_WAIT_S);
    progress_free(g->bar);
    g->bar = NULL;
    free(t);
    free(w);
}
