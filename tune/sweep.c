/* The sweep engine: one worker thread per GPU pulling kernels from its model's queue (planned
 * by tune/plan.c), each result committed as it arrives so a kill loses at most the
 * configuration in flight. */
#include "tune/sweep.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/gpulock.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/progress.h"
#include "common/xalloc.h"
#include "store/store.h"
#include "tune/plan.h"
#include "tune/runner.h"
#include "tune/runner_proc.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The binding a harness uses without --bind (isolate/harness_core.cu's lscat_bindings[0]).
 * Only other bindings are passed, so harnesses generated before bindings existed still run. */
#define DEFAULT_BINDING "area"

/* LSCAT_TUNE_SPARE_RUNNER=0 (no spare runner), =1 (a spare from the start, as before session
 * 27; unset: after a runner's first fault), LSCAT_TUNE_DEADLINE_PLAN=0 (every configuration
 * gets --timeout): the behaviours before, for scripts/device-probe.sh and device-multigpu.sh. */
static int env_is_0(const char *name)
{
    const char *e = getenv(name);
    return e && !strcmp(e, "0");
}

static int spare_mode(const struct tune_options *o)
{
    const char *e = getenv("LSCAT_TUNE_SPARE_RUNNER");
    if (o->no_prestart || env_is_0("LSCAT_TUNE_SPARE_RUNNER"))
        return RUNNER_SPARE_OFF;
    return e && !strcmp(e, "1") ? RUNNER_SPARE_EAGER : RUNNER_SPARE_AFTER_FAULT;
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

static int record_result(struct sweep_worker *w, const struct tune_result *r)
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
    struct sweep_worker *w = ctx;
    struct sweep_shared *sh = w->sh;
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
    struct sweep_worker *w = ctx;
    w->occupancy_block = block;
    w->occupancy_grid = grid;
    w->have_occupancy = 1;
}

static void on_header(void *ctx, const char *json)
{
    struct sweep_worker *w = ctx;
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

static int set_tune_kernel(struct sweep_worker *w, const char *status, const char *reason)
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

static int give_up(struct sweep_worker *w, const char *klass, const char *reason)
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

/* The kernel's harness found its GPU unusable (docs/tune.md "A device that goes"): nothing is
 * recorded for the configuration in flight, the kernel stays as it was before this run (its
 * row 'running': the next run plans what is missing), and this GPU's worker takes no other. */
static int device_lost(struct sweep_worker *w, const char *reason)
{
    w->lost = 1;
    pthread_mutex_lock(&w->sh->mu);
    w->sh->counts->gpus_lost++;
    pthread_mutex_unlock(&w->sh->mu);
    log_event(LOG_ERROR, "tune_device_lost", "kernel", w->k->id, "gpu", w->gpu->uuid, "reason",
              reason, NULL);
    return 0;
}

/* The build for this GPU: one whose arch list names its sm_XY, else the first. */
static char *binary_for(const struct sweep_worker *w, const struct plan_kernel *k)
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
    const struct plan_kernel *k;
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
static int load_skips(struct prep *p, struct sweep_worker *w)
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

static int prep_init(struct prep *p, struct sweep_worker *w, const struct plan_item *it)
{
    const struct tune_options *o = w->sh->o;
    int64_t occ = 0;
    memset(p, 0, sizeof(*p));
    p->k = w->sh->kernels[it->kernel];
    const struct tune_space *sp = plan_space_of(o, p->k);
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
    p->args = xcalloc((size_t)na + 5, sizeof(*p->args));
    for (int i = 0; i < na; i++)
        p->args[i] = o->timing_args[i];
    if (p->k->binding && strcmp(p->k->binding, DEFAULT_BINDING) != 0) {
        p->args[na++] = "--bind";
        p->args[na++] = p->k->binding;
    }
    if (p->k->check_ref[0]) {
        p->args[na++] = "--check-ref";
        p->args[na++] = p->k->check_ref;
    }
    struct runner_options ro = RUNNER_OPTIONS_INIT;
    ro.harness = p->bin;
    ro.extra_args = p->args;
    ro.env = (const char *const *)w->env;
    ro.device = 0; /* CUDA_VISIBLE_DEVICES names exactly this GPU */
    ro.config_timeout_s = o->config_timeout_s;
    ro.samples = o->samples;
    ro.no_deadline_plan = env_is_0("LSCAT_TUNE_DEADLINE_PLAN");
    ro.budget_s = o->config_budget_s;
    ro.startup_s = o->startup_s;
    ro.max_failures = o->max_failures;
    ro.size_faults = o->size_faults;
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

static int run_kernel(struct sweep_worker *w, struct prep *p)
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
    w->sh->counts->sizes_skipped += sum.sizes_skipped;
    w->sh->counts->ref_failures += sum.ref_failures;
    w->sh->counts->budget_cut += sum.budget_cut;
    w->sh->counts->deadline_extended += sum.deadline_extended;
    w->sh->counts->deadline_shortened += sum.deadline_shortened;
    pthread_mutex_unlock(&w->sh->mu);
    if (sum.budget_cut || sum.deadline_extended) {
        char cut[16], ext[16];
        snprintf(cut, sizeof(cut), "%d", sum.budget_cut);
        snprintf(ext, sizeof(ext), "%d", sum.deadline_extended);
        log_event(LOG_INFO, "tune_long_kernel", "kernel", p->k->id, "budget_cut", cut,
                  "deadline_extended", ext, NULL);
    }
    if (sum.fell_back)
        log_event(LOG_WARN, "tune_runner_fallback", "kernel", p->k->id, "gpu", w->gpu->uuid,
                  "reason", sum.reason, NULL);
    if (rc < 0 || sum.interrupted)
        return rc;
    if (sum.device_lost)
        return device_lost(w, sum.reason);
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
static int run_locked(struct sweep_worker *w, struct prep *p)
{
    struct gpulock l;
    double waited = 0, t0 = fs_mono_s();
    int rc = gpulock_baton(w->sh->o->stop); /* under lscat-mpi: the previous chunk is done */
    double t1 = fs_mono_s();
    if (rc == 0)
        rc = gpulock_acquire(&l, w->gpu->uuid, 1, w->sh->o->stop, -1, &waited);
    log_trace("gpu_turn kernel=%.12s baton_wait=%.3f lock_wait=%.3f", p->k->id, t1 - t0,
                 waited);
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

void tune_hosts_start(struct runner_host **hosts, const struct tune_options *o,
                      const struct tune_gpu *gpus, int n)
{
    for (int i = 0; o->runner && i < n; i++) {
        if (hosts[i])
            continue;
        char **env = child_env(&gpus[i], o->clocks_locked);
        runner_host_new(&hosts[i], o->runner, (const char *const *)env, 0, o->runner_kernels);
        proc_env_free(env); /* the host keeps a copy */
        runner_host_set_spare(hosts[i], spare_mode(o));
        if (runner_host_start(hosts[i]) < 0) /* the sweeps fall back to harness processes */
            log_event(LOG_WARN, "tune_runner_failed", "gpu", gpus[i].uuid, "error",
                      lscat_error_last(), NULL);
    }
}

static void update_note(struct sweep_shared *sh)
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

/* Take kernels until none are left. Without a runner, while one kernel is measured the next
 * one's harness is already started and held before its first configuration (unless
 * --no-prestart), so process start and context creation cost no GPU time. With a runner (its
 * context stays from kernel to kernel) a kernel is taken only when the GPU is free for it: a kernel
 * taken early waits behind the one measured, and at the end of the queue another GPU would
 * have had nothing to do meanwhile (4 faulting kernels on 4 GPUs ran on 2, two each). The GPU
 * is locked (common/gpulock.h) for each kernel's measurement, so that no other lscat (a probe,
 * another tune) runs on it meanwhile. */
static void *worker_main(void *arg)
{
    struct sweep_worker *w = arg;
    struct sweep_shared *sh = w->sh;
    struct prep cur, next;
    struct plan_item it;
    memset(&cur, 0, sizeof(cur));
    memset(&next, 0, sizeof(next));
    int rc = store_open(&w->s, sh->o->db_path, 0);
    struct runner_host **kept = sh->o->hosts ? &sh->o->hosts[w - sh->workers] : NULL;
    if (kept && *kept) /* an earlier sweep's (lscat-tune --serve): its context is made */
        w->host = *kept, *kept = NULL;
    int spares_before = w->host ? runner_host_spares_taken(w->host) : 0;
    if (rc >= 0 && sh->o->runner && (!w->host || !runner_host_running(w->host))) {
        /* started now: its context creation overlaps planning */
        if (!w->host) {
            runner_host_new(&w->host, sh->o->runner, (const char *const *)w->env, 0,
                            sh->o->runner_kernels);
            runner_host_set_spare(w->host, spare_mode(sh->o));
        }
        if (runner_host_start(w->host) < 0) {
            log_event(LOG_WARN, "tune_runner_failed", "gpu", w->gpu->uuid, "error",
                      lscat_error_last(), NULL);
        } else {
            pthread_mutex_lock(&sh->mu);
            sh->counts->processes++;
            pthread_mutex_unlock(&sh->mu);
        }
    }
    while (rc >= 0 && !w->lost) {
        if (!cur.k && ((rc = plan_take(&it, sh, w, 1)) <= 0 || (rc = prep_init(&cur, w, &it)) < 0))
            break;
        int prestart = !sh->o->no_prestart && !(w->host && !runner_host_broken(w->host));
        if (prestart && (rc = plan_take(&it, sh, w, 0)) > 0) {
            rc = prep_init(&next, w, &it);
            if (rc >= 0 && next.runnable && !next.so &&
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
    pthread_mutex_lock(&sh->mu);
    if (--sh->measuring == 0) {
        gpulock_baton_release();
        log_trace("baton_released");
    }
    pthread_mutex_unlock(&sh->mu);
    if (w->host) {
        pthread_mutex_lock(&sh->mu);
        sh->counts->spare_takeovers += runner_host_spares_taken(w->host) - spares_before;
        pthread_mutex_unlock(&sh->mu);
    }
    if (kept) /* the next sweep uses it (its caller frees it) */
        *kept = w->host;
    else
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

static void shared_release(struct sweep_shared *sh)
{
    plan_release(sh);
    for (int i = 0; i < sh->nworkers; i++) {
        proc_env_free(sh->workers[i].env);
    }
    free(sh->workers);
    pthread_mutex_destroy(&sh->mu);
}

int tune_sweep(struct tune_counts *out, struct store *s, const struct tune_options *o,
               const struct tune_gpu *gpus, int n)
{
    struct sweep_shared sh;
    int rc;
    memset(out, 0, sizeof(*out));
    memset(&sh, 0, sizeof(sh));
    pthread_mutex_init(&sh.mu, NULL);
    sh.o = o;
    sh.plan_store = s;
    sh.t_start = fs_mono_s();
    log_trace("sweep_start gpus=%d", n);
    sh.counts = out;
    sh.nworkers = n;
    sh.workers = xcalloc((size_t)(n ? n : 1), sizeof(*sh.workers));
    out->gpus = n;
    for (int i = 0; i < n; i++) {
        sh.workers[i].sh = &sh;
        sh.workers[i].gpu = &gpus[i];
        sh.workers[i].env = child_env(&gpus[i], o->clocks_locked);
    }
    if ((rc = plan_start(&sh, s, gpus, n)) < 0)
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
    sh.measuring = n;
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
             "\"skipped\":%d,\"shapes_failed\":%d,\"sizes_skipped\":%d,\"ref_failures\":%d,"
             "\"match\":%d,\"mismatch\":%d,\"nondeterministic\":%d,\"not_checked\":%d,"
             "\"check_s\":%.3f,"
             "\"processes\":%d,\"runner_kernels\":%d,\"runner_fallbacks\":%d,"
             "\"budget_cut\":%d,\"deadline_extended\":%d,\"deadline_shortened\":%d,"
             "\"spare_takeovers\":%d,\"interrupted\":%d,\"gpus_lost\":%d}",
             c->gpus, c->models, c->kernels_planned, c->kernels_done, c->kernels_given_up,
             c->configs_planned, c->configs_reported, c->ok, c->cuda_error, c->invalid_config,
             c->crashed, c->timeout, c->skipped, c->shapes_failed, c->sizes_skipped, c->ref_failures,
             c->match,
             c->mismatch, c->nondeterministic, c->not_checked, (double)c->check_ns / 1e9,
             c->processes,
             c->runner_kernels, c->runner_fallbacks, c->budget_cut, c->deadline_extended,
             c->deadline_shortened,
             c->spare_takeovers, c->interrupted, c->gpus_lost);
}
