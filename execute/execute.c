/* The execute stage: load the kernels to build, find the GPU to probe on, then run the builders
 * and the probe workers side by side (pool.c): each result is written in its own transaction
 * as it finishes, so a killed run loses at most the kernels in flight. */
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
#include "execute/probe_runner.h"
#include "execute/sandbox.h"
#include "execute/stage.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    free(it->probed_key);
    free(it->bsig);
    free(it->probe_key);
    free(it->probe_build);
    free(it->probe_binary);
}

static char *dup_col(struct store_stmt *st, int col)
{
    const char *t = store_col_text(st, col);
    return t ? xstrdup(t) : NULL;
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

/* The kernels to build with their previous build (same arch) and, on the probed GPU's model
 * (gpus.name: a probe's verdict is the model's, as tune's measurements are; this GPU's own probe
 * first, else the newest of another GPU of the model), their probe's key and whether the probe
 * plan changed since; whether a probe (any GPU) holds the
 * build's key (stored before probe keys: pool.c rekeys it when the build key is unchanged). */
static int load_items(struct stage *g)
{
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, g->s,
        "SELECT k.id, k.dir, (SELECT s.root FROM kernel_occurrences o JOIN sources s ON "
        "s.id = o.source_id WHERE o.kernel_id = k.id ORDER BY s.id LIMIT 1), b.cache_key, "
        "b.status, b.binary_path, b.error_class, k.params, p.cache_key, coalesce(("
        PROBE_PLAN_CHANGED "), 0), EXISTS (SELECT 1 FROM probes q WHERE q.kernel_id = k.id AND "
        "q.cache_key = b.cache_key) FROM kernels k LEFT JOIN builds b ON b.kernel_id = k.id AND "
        "b.arch = ?2 LEFT JOIN probes p ON p.rowid = (SELECT q.rowid FROM probes q JOIN gpus gq ON "
        "gq.id = q.gpu_id WHERE q.kernel_id = k.id AND gq.name = (SELECT name FROM gpus WHERE "
        "id = ?1) ORDER BY q.gpu_id = ?1 DESC, q.probed_at DESC LIMIT 1) WHERE k.status "
        "IN ('isolated','built','build_failed','runnable','probe_failed') AND (?3 IS NULL OR "
        "k.id LIKE ?3 || '%') ORDER BY k.id");
    if (rc == 0)
        rc = store_bind(st, "itt", g->rec.gpu_id, g->arch, g->o->kernel);
    while (rc == 0 && (rc = store_step(st)) == STORE_ROW) {
        if (!shard_has_key(&g->o->shard, store_col_text(st, 0))) {
            rc = 0;
            continue;
        }
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
        it->params = dup_col(st, 7);
        it->probed_key = dup_col(st, 8);
        it->plan_changed = it->probed_key && store_col_int(st, 9);
        it->legacy = store_col_int(st, 10) != 0;
        rc = 0;
    }
    store_finalize(st);
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- probes */

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

/* Whether probes run beside the builds (a GPU with the --device index, or --probe-anyway;
 * never with --no-probe), and on which GPU: its gpus row, index and lock name. */
static int probe_setup(struct stage *g)
{
    struct gpu_info *gpus = NULL;
    const struct gpu_info *gpu = NULL;
    int n = 0, rc = 0;
    if (g->o->probe == EXECUTE_PROBE_NEVER)
        return 0;
    probe_list_gpus(&gpus, &n);
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
    rc = record_gpu(&g->rec.gpu_id, g->s, gpu);
    if (rc < 0)
        goto done;
    g->probing = 1;
    g->device = g->o->device;
    if (gpu)
        snprintf(g->gpu_uuid, sizeof(g->gpu_uuid), "%s", gpu->uuid);
done:
    free(gpus);
    return rc;
}

static void sanitizer_setup(struct stage *g)
{
    const char *nvcc = g->env.nvcc ? g->env.nvcc : "/usr/local/cuda/bin/nvcc";
    if (g->probing && g->o->sanitize && !(g->sanitizer = find_sanitizer(nvcc)))
        log_warn("--sanitize: compute-sanitizer not found beside nvcc; probing without it");
    /* the memcheck runner (docs/execute.md "The memcheck runner") needs probe runners */
    if (g->probing && g->o->probe_memcheck && g->runner_program &&
        !(g->memcheck = find_sanitizer(nvcc))) {
        if (g->o->probe_memcheck == 1) /* asked for; the default says it at -v */
            log_info("--probe-memcheck auto: compute-sanitizer not found beside nvcc ('%s'); a "
                     "kernel's tries after a fault run plain", nvcc);
        else
            log_debug("no memcheck runner: compute-sanitizer not found beside nvcc ('%s')", nvcc);
    }
}

/* Probes run in a long-lived lscat-runner per probe worker unless --no-probe-runner (or
 * LSCAT_PROBE_RUNNER=0) asks for a process per run, or no lscat-runner is found. */
static void runner_setup(struct stage *g)
{
    const char *env = getenv("LSCAT_PROBE_RUNNER");
    if (!g->probing || !g->o->probe_runner || (env && !strcmp(env, "0")))
        return;
    g->runner_program = probe_runner_find();
    if (!g->runner_program)
        log_info("probe: lscat-runner not found (beside lscat-execute, $LSCAT_BIN or "
                 "$LSCAT_RUNNER): a process per probe run");
}

/* As root the per-slot uids are what keeps untrusted code from the store. When a folder on the
 * work folder's way shuts them out, bubblewrap (a read-only view) or, for builds, Landlock's
 * write rules still do; with neither (probes on a GPU node without bubblewrap), refuse before
 * anything runs instead of running repository code as root (docs/execute.md "Folders the
 * sandbox cannot enter"). */
static int check_store_protected(const struct stage *g)
{
    const struct sandbox_caps *c = sandbox_detect(NULL);
    if (!c->root || c->drop_uid || !c->work_blocker || c->bwrap || (!g->probing && c->landlock))
        return 0;
    return lscat_error_set("the sandbox's unprivileged uids cannot enter '%s' (no search "
                           "permission for others) on the way to the work folder '%s', and "
                           "without bubblewrap %s would run as root, free to write the store; "
                           "run 'chmod o+x %s', or choose a --work folder others can reach, "
                           "or install bubblewrap", c->work_blocker, g->work_dir,
                           g->probing ? "probes" : "builds", c->work_blocker);
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

/* LSCAT_PROBE_JOBS_MAX (1-32; default 4): the most probe workers on one GPU. */
static int env_probe_jobs_max(void)
{
    const char *e = getenv("LSCAT_PROBE_JOBS_MAX");
    char *end = NULL;
    long v = e && *e ? strtol(e, &end, 10) : 0;
    return v >= 1 && v <= 32 && end && *end == '\0' ? (int)v : 4;
}

/* How many builders and probe workers run: -j builders (probes wait on the GPU most of their
 * time; see docs/execute.md "Builds and probes side by side"), --probe-jobs probe workers
 * (default min(-j, 4)), at most 64 together when each gets its own sandbox uid. */
static void pool_sizes(int *builders, int *probers, const struct stage *g)
{
    int jobs = g->o->jobs > 0 ? g->o->jobs : 1;
    int p = g->o->probe_jobs > 0 ? g->o->probe_jobs : (jobs < 4 ? jobs : 4);
    /* More than 4 probe workers on one GPU: on real code 8 or 12 gain 1.2-1.3x and more
     * kernels keep another binding from one run to the next; 16 once left an H200 needing a
     * reset (docs/execute.md "Probe workers per GPU"). */
    int most = env_probe_jobs_max();
    if (g->probing && p > most) {
        log_warn("--probe-jobs %d: using %d probe workers, the most per GPU (on real code 8 or 12 "
                 "were 1.2-1.3x faster, more kernels kept another binding from run to run, "
                 "and 16 once left an H200 needing a reset; docs/execute.md \"Probe workers per "
                 "GPU\"); LSCAT_PROBE_JOBS_MAX raises the limit", p, most);
        p = most;
    }
    /* a probe runner, its spares and its process runs: a uid each */
    int per = g->runner_program ? 2 + g->o->probe_spares + (g->memcheck != NULL) : 1;
    *probers = g->probing ? p : 0;
    *builders = jobs;
    if (sandbox_detect(NULL)->drop_uid && *builders + per * *probers > SANDBOX_UID_SLOTS) {
        if (*probers * per > SANDBOX_UID_SLOTS / 2) /* half the uids at most */
            *probers = SANDBOX_UID_SLOTS / 2 / per;
        *builders = SANDBOX_UID_SLOTS - per * *probers;
        log_info("-j %d: %d builders and %d probe workers (the sandbox has %d uids per run)",
                 jobs, *builders, *probers, SANDBOX_UID_SLOTS);
    }
}

static void log_start(const struct stage *g, int builders, int probers)
{
    char nk[24], nb[24], np[24], na[24], nn[24];
    snprintf(nk, sizeof(nk), "%zu", g->count);
    snprintf(nb, sizeof(nb), "%d", builders);
    snprintf(np, sizeof(np), "%d", probers);
    snprintf(na, sizeof(na), "%zu", g->ahead);
    snprintf(nn, sizeof(nn), "%d", g->env.nice);
    log_event(LOG_INFO, "build_start", "kernels", nk, "arch", g->env.arch, "nvcc",
              g->env.nvcc_version, "jobs", nb, "probe_jobs", np, "build_ahead", na,
              "probe_env", g->probe_env[0] ? g->probe_env[0] : "-", "build_nice", nn, NULL);
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
    g.rec = (struct record_ctx){ s, &g.env, run_id, 0 };
    g.c = out;
    pthread_mutex_init(&g.lock, NULL);
    pthread_mutex_init(&g.core_lock, NULL);
    pthread_cond_init(&g.moved, NULL);
    char *arch = o->arch ? xstrdup(o->arch) : detect_arch();
    struct buf why = BUF_INIT;
    g.resolver = new_resolver();
    struct build_config cfg = { work_dir, arch, o->nvcc, o->build_timeout_s, o->max_attempts,
                                isoresolve_resolver(g.resolver) };
    int rc = fs_mkdirs(work_dir, 0755), builders = 0, probers = 0;
    if (rc == 0 && sandbox_describe(&why, sandbox_detect(work_dir)))
        log_warn("sandbox: %s", why.data);
    else if (rc == 0)
        log_info("sandbox: %s", why.data);
    g.arch = arch;
    if (rc == 0)
        rc = probe_setup(&g);
    if (rc == 0)
        rc = check_store_protected(&g);
    if (rc == 0)
        rc = load_items(&g);
    if (rc == 0 && g.count > 0)
        rc = build_env_init(&g.env, &cfg);
    if (rc < 0)
        goto done;
    out->kernels = (int)g.count;
    if (g.count == 0) {
        log_info("no kernels to build (run lscat isolate first?)");
        goto done;
    }
    runner_setup(&g);
    /* every probe run's environment (runners, spares, memcheck runners, process runs) */
    if (g.probing && o->probe_connections > 0)
        g.probe_env[0] = xasprintf("CUDA_DEVICE_MAX_CONNECTIONS=%d", o->probe_connections);
    sanitizer_setup(&g); /* after runner_setup: the memcheck runner needs probe runners */
    if (g.runner_program && o->probe_shared_spares && o->probe_spares > 0)
        g.runner_pool = probe_runner_pool_new();
    pool_sizes(&builders, &probers, &g);
    g.env.nice = o->build_nice;
    size_t jobs = (size_t)(o->jobs > 0 ? o->jobs : 1);
    g.ahead = o->build_ahead > 0 ? (size_t)o->build_ahead : o->build_ahead == 0 ? 8 * jobs : 0;
    g.queue = xcalloc(g.count, sizeof(*g.queue));
    log_start(&g, builders, probers);
    double t0 = fs_mono_s();
    g.bar = progress_new("build", g.count);
    pool_run(&g, builders, probers);
    out->build_wall_s = g.builds_end_s - t0;
    out->build_wait_s = g.build_wait_s;
    out->probe_wait_s = g.probe_wait_s;
    out->interrupted = o->stop && *o->stop;
    if (g.device_lost) { /* what was built for a probe that no worker took stays 'built' */
        out->device_lost = 1;
        out->unprobed += (int)(g.q_tail - g.q_head);
        log_error("probe: device %d is unusable (%s); probing stopped there: %d built "
                  "kernel%s left unprobed (still 'built', nothing recorded for them); check the "
                  "GPU (nvidia-smi) and run `lscat execute` again to probe them",
                  g.device, g.device_lost, out->unprobed, out->unprobed == 1 ? "" : "s");
    }
    if (g.store_failed)
        rc = lscat_error_set("%s", g.store_error);
done:
    isoresolve_free(g.resolver); /* when no build ran */
    for (size_t i = 0; i < g.count; i++)
        item_free(&g.items[i]);
    free(g.items);
    free(g.queue);
    free(g.sanitizer);
    free(g.memcheck);
    free(g.runner_program);
    free(g.probe_env[0]);
    probe_runner_pool_free(g.runner_pool); /* every worker's runner is freed by now */
    free(g.store_error);
    free(g.device_lost);
    free(arch);
    buf_release(&why);
    build_env_release(&g.env);
    pthread_cond_destroy(&g.moved);
    pthread_mutex_destroy(&g.core_lock);
    pthread_mutex_destroy(&g.lock);
    return rc;
}

void execute_counts_json(char **out, const struct execute_counts *c)
{
    *out = xasprintf("{\"kernels\":%d,\"cached\":%d,\"built_first_try\":%d,"
                     "\"built_after_repair\":%d,\"build_failed\":%d,\"batches\":%d,\"batched\":%d,"
                     "\"probed\":%d,"
                     "\"runnable\":%d,\"rebound\":%d,\"small_only\":%d,\"reblocked\":%d,"
                     "\"probed_2d\":%d,"
                     "\"reprobed\":%d,\"probes_kept\":%d,\"rekeyed\":%d,\"probe_failed\":%d,"
                     "\"out_of_bounds\":%d,\"errors\":%d,\"gpu_present\":%d,"
                     "\"built_while_probing\":%d,\"interrupted\":%d,\"build_wall_s\":%.3f,"
                     "\"build_wait_s\":%.3f,\"probe_wait_s\":%.3f,\"runner_starts\":%d,"
                     "\"runner_probe_runs\":%d,\"runner_ended\":%d,"
                     "\"runner_spare_ready\":%d,\"runner_wait_s\":%.3f,\"runner_shared\":%d,"
                     "\"too_slow\":%d,\"fault_budget\":%d,\"guard_stops\":%d,\"guard_reruns\":%d,\"wrote_past\":%d,"
                     "\"memcheck_starts\":%d,\"memcheck_runs\":%d,\"memcheck_reports\":%d,"
                     "\"memcheck_inconclusive\":%d,\"confirm_runs\":%d,"
                     "\"memcheck_fallback_runs\":%d,\"memcheck_late\":%d,\"memcheck_stray\":%d,"
                     "\"device_lost\":%d,\"unprobed\":%d}",
                     c->kernels, c->cached, c->built_first_try, c->built_after_repair,
                     c->build_failed, c->batches, c->batched, c->probed, c->runnable, c->rebound, c->small_only,
                     c->reblocked, c->probed_2d, c->reprobed, c->probes_kept, c->rekeyed,
                     c->probe_failed,
                     c->out_of_bounds, c->errors, c->gpu_present, c->built_while_probing,
                     c->interrupted, c->build_wall_s, c->build_wait_s, c->probe_wait_s,
                     c->runner_starts, c->runner_probe_runs, c->runner_ended,
                     c->runner_spare_ready, c->runner_wait_s, c->runner_shared, c->too_slow,
                     c->fault_budget, c->guard_stops, c->guard_reruns, c->wrote_past, c->memcheck_starts, c->memcheck_runs, c->memcheck_reports,
                     c->memcheck_inconclusive,
                     c->confirm_runs, c->memcheck_fallback_runs, c->memcheck_late,
                     c->memcheck_stray, c->device_lost, c->unprobed);
}
