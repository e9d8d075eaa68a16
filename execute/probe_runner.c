/* Probe runs inside a long-lived, sandboxed lscat-runner (one per probe worker, plus a spare):
 * the client side of tune/runnerd.c's protocol (@ready, @run, @end, @done) over pipes, with a
 * wall-clock deadline per run, a capped output, and the slot uid swept between runs. A memcheck
 * runner is the same runner under compute-sanitizer, each run's report read from its log. */
#include "execute/probe_runner.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "execute/probe.h"
#include "execute/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_CAP (64 << 10) /* per run, as a probe process's output cap */

struct rproc {
    struct proc_child ch;
    int slot, running, ready, runs, eof, exited, status, done, done_rc;
    long seq;               /* start order (over all runners): the oldest spare is the
                               likeliest to be ready */
    struct buf res; /* fd 3 bytes not yet a whole line */
    const struct probe_runner_watch *watch; /* the run's, or NULL */
    double deadline, limit;                 /* the run's deadline (a watch moves it) and bound */
    char *log;              /* a memcheck runner's log (its scratch folder's memcheck.log) */
    long log_seen;          /* how much of it the last run's report ended at */
};

struct probe_runner {
    struct probe_runner_options o;
    char *program, *scratch, *work_dir, *sanitizer;
    char **env; /* o.env, copied */
    struct rproc rp[1 + PROBE_RUNNER_SPARES_MAX];
    int n, active, broken, after_end; /* n: runners kept, the active one and its spares */
    struct probe_runner_pool *pool;       /* o.pool: its non-active entries (and `active`) are
                                             read and changed under pool->lock */
    struct probe_runner_stats st;
    struct buf report; /* a memcheck runner: what the log gained during the last run */
};

struct probe_runner_pool {
    pthread_mutex_t lock;
    struct probe_runner **members;
    int n, cap;
};

static long start_seq; /* every runner's start, in order (atomic) */

struct probe_runner_pool *probe_runner_pool_new(void)
{
    struct probe_runner_pool *pool = xcalloc(1, sizeof(*pool));
    pthread_mutex_init(&pool->lock, NULL);
    return pool;
}

void probe_runner_pool_free(struct probe_runner_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_destroy(&pool->lock);
    free(pool->members);
    free(pool);
}

static void pool_lock(struct probe_runner *pr)
{
    if (pr->pool)
        pthread_mutex_lock(&pr->pool->lock);
}

static void pool_unlock(struct probe_runner *pr)
{
    if (pr->pool)
        pthread_mutex_unlock(&pr->pool->lock);
}

/* dir/name when executable, as an absolute path (the runner starts in its scratch folder). */
static char *in_dir(const char *dir, const char *name)
{
    char *p = fs_join(dir, name), abs[4096];
    char *found = access(p, X_OK) == 0 && realpath(p, abs) ? xstrdup(abs) : NULL;
    free(p);
    return found;
}

char *probe_runner_find(void)
{
    const char *env = getenv("LSCAT_RUNNER"), *bin = getenv("LSCAT_BIN");
    char abs[4096];
    if (env && *env)
        return access(env, X_OK) == 0 && realpath(env, abs) ? xstrdup(abs) : NULL;
    if (bin && *bin)
        return in_dir(bin, "lscat-runner");
    char self[4096], *found = NULL;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash && (*slash = '\0', (found = in_dir(self, "lscat-runner"))))
            return found;
    }
    const char *path = getenv("PATH");
    char *copy = xstrdup(path ? path : "");
    for (char *save = NULL, *d = strtok_r(copy, ":", &save); d && !found;
         d = strtok_r(NULL, ":", &save))
        found = *d ? in_dir(d, "lscat-runner") : NULL;
    free(copy);
    return found;
}

/* lscat-runner as the sandbox's uids can run it: where it is, or a copy in the work folder's
 * builds/sandbox-<hash> when they cannot enter a folder on its way (a build tree inside a 0700
 * folder). Said once per process; a copy that fails leaves the program as it is (its start
 * then fails with the reason, and probes run as processes). */
static char *reachable_program(const char *program, const char *work_dir)
{
    static int said;
    const char *slash = strrchr(program, '/');
    if (!work_dir || !slash || slash == program)
        return xstrdup(program);
    char *dir = xstrndup(program, (size_t)(slash - program)), *stage = fs_join(work_dir, "builds");
    char *copy = NULL, *found = NULL;
    const char *rel[] = { slash + 1, NULL };
    int rc = sandbox_share(&copy, dir, rel, stage);
    if (rc == 1)
        found = fs_join(copy, slash + 1);
    if (rc != 0 && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
        if (rc == 1)
            log_info("probe: the sandbox's uids cannot run '%s' where it is: they run a copy, "
                     "'%s'", program, found);
        else
            log_warn("probe: cannot copy '%s' where the sandbox's uids can run it: %s",
                     program, lscat_error_last());
    }
    free(dir);
    free(stage);
    free(copy);
    return found ? found : xstrdup(program);
}

int probe_runner_new(struct probe_runner **out, const struct probe_runner_options *o)
{
    struct probe_runner *pr = xcalloc(1, sizeof(*pr));
    pr->o = *o;
    pr->program = reachable_program(o->program, o->work_dir);
    pr->scratch = xstrdup(o->scratch);
    pr->work_dir = o->work_dir ? xstrdup(o->work_dir) : NULL;
    pr->sanitizer = o->sanitizer ? xstrdup(o->sanitizer) : NULL;
    pr->o.sanitizer = pr->sanitizer;
    size_t ne = 0;
    while (o->env && o->env[ne])
        ne++;
    pr->env = xcalloc(ne + 1, sizeof(*pr->env));
    for (size_t i = 0; i < ne; i++)
        pr->env[i] = xstrdup(o->env[i]);
    pr->o.env = (const char *const *)pr->env;
    if (pr->o.spare < 0 || pr->o.spare > PROBE_RUNNER_SPARES_MAX)
        pr->o.spare = pr->o.spare < 0 ? 0 : PROBE_RUNNER_SPARES_MAX;
    pr->n = 1 + pr->o.spare;
    for (int i = 0; i < 1 + PROBE_RUNNER_SPARES_MAX; i++) {
        pr->rp[i].slot = o->slots[i];
        pr->rp[i].ch.pid = -1;
        buf_init(&pr->rp[i].res, 0);
    }
    buf_init(&pr->report, 0);
    if (pr->o.max_kernels <= 0)
        pr->o.max_kernels = 100;
    pr->pool = pr->n > 1 ? o->pool : NULL; /* nothing to share without a spare */
    if (pr->pool) {
        pthread_mutex_lock(&pr->pool->lock);
        if (pr->pool->n == pr->pool->cap) {
            pr->pool->cap = pr->pool->cap ? 2 * pr->pool->cap : 8;
            pr->pool->members = xrealloc(pr->pool->members,
                                         (size_t)pr->pool->cap * sizeof(*pr->pool->members));
        }
        pr->pool->members[pr->pool->n++] = pr;
        pthread_mutex_unlock(&pr->pool->lock);
    }
    *out = pr;
    return 0;
}

static void *reap_thread(void *arg)
{
    waitpid((pid_t)(intptr_t)arg, NULL, 0);
    return NULL;
}

/* Kill it and everything of its uid; a detached thread reaps it, so the CUDA context's
 * teardown (long after a fault) is never waited for. */
static void retire(struct rproc *rp)
{
    if (!rp->running)
        return;
    int *fds[] = { &rp->ch.in_fd, &rp->ch.out_fd, &rp->ch.extra_fd };
    for (int i = 0; i < 3; i++)
        if (*fds[i] >= 0)
            close(*fds[i]), *fds[i] = -1;
    pid_t pid = rp->ch.pid;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    sandbox_reap_slot(rp->slot);
    if (!rp->exited) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &a, reap_thread, (void *)(intptr_t)pid) != 0)
            waitpid(pid, NULL, 0);
        pthread_attr_destroy(&a);
    }
    rp->ch.pid = -1;
    rp->running = 0;
}

static int start(struct probe_runner *pr, struct rproc *rp)
{
    char dev[16], slot[16];
    snprintf(dev, sizeof(dev), "%d", pr->o.device);
    snprintf(slot, sizeof(slot), "%d", rp->slot);
    char *scratch = fs_join(pr->scratch, slot);
    const char *plain[] = { pr->program, "--device", dev, NULL };
    const char *mc[] = { pr->o.sanitizer, PROBE_RUNNER_MEMCHECK_ARGS, "--log-file", NULL,
                         pr->program, "--device", dev, NULL };
    if (pr->o.sanitizer) { /* a fresh log per runner: each run reads what it gained */
        free(rp->log);
        rp->log = fs_join(scratch, "memcheck.log");
        unlink(rp->log);
        rp->log_seen = 0;
        mc[sizeof(mc) / sizeof(mc[0]) - 5] = rp->log;
    }
    struct sandbox_options so = SANDBOX_OPTIONS_INIT;
    so.argv = pr->o.sanitizer ? mc : plain;
    so.scratch_dir = scratch;
    so.ro_dir = pr->work_dir;
    so.slot = rp->slot;
    so.gpu = 1;
    /* the wall clock is per run (below); the CPU limit covers the runner's life */
    so.cpu_s = 2 * pr->o.timeout_s * pr->o.max_kernels + 2 * pr->o.startup_s;
    so.file_bytes = (size_t)64 << 20;
    so.die_with_parent = 1;
    so.extra_env = pr->o.env;
    int rc = fs_mkdirs(scratch, 0755);
    if (rc == 0)
        rc = sandbox_spawn(&rp->ch, &so, 3);
    free(scratch);
    if (rc < 0)
        return rc;
    fcntl(rp->ch.out_fd, F_SETFL, O_NONBLOCK);
    fcntl(rp->ch.extra_fd, F_SETFL, O_NONBLOCK);
    rp->running = 1;
    rp->ready = rp->runs = rp->eof = rp->exited = rp->status = 0;
    rp->seq = __atomic_fetch_add(&start_seq, 1, __ATOMIC_RELAXED);
    buf_setlen(&rp->res, 0);
    pr->st.starts++;
    return 0;
}

/* One whole fd 3 line: a marker, or (with results) a harness line. */
static void take_line(struct rproc *rp, const char *line, struct buf *results)
{
    if (!strncmp(line, "@ready", 6))
        rp->ready = 1;
    else if (!strncmp(line, "@done ", 6))
        rp->done_rc = atoi(line + 6), rp->done = 1;
    else if (results) {
        buf_addf(results, "%s\n", line);
        double d = rp->watch ? rp->watch->line(rp->watch->ctx, line, fs_mono_s()) : 0;
        if (d < 0)
            rp->deadline = 0; /* ended by the watch */
        else if (d > 0)
            rp->deadline = d < rp->limit ? d : rp->limit;
    }
}

/* Read what is there without waiting. */
static void drain(struct rproc *rp, struct proc_result *r, struct buf *results)
{
    char tmp[65536];
    ssize_t n = -1;
    while (!rp->eof && (n = read(rp->ch.extra_fd, tmp, sizeof(tmp))) != 0) {
        if (n < 0) {
            rp->eof = errno != EINTR && errno != EAGAIN;
            break;
        }
        buf_add(&rp->res, tmp, (size_t)n);
        char *p = rp->res.data, *nl;
        while ((nl = memchr(p, '\n', rp->res.len - (size_t)(p - rp->res.data)))) {
            *nl = '\0';
            take_line(rp, p, results);
            p = nl + 1;
        }
        size_t rest = rp->res.len - (size_t)(p - rp->res.data);
        memmove(rp->res.data, p, rest);
        buf_setlen(&rp->res, rest);
    }
    if (n == 0)
        rp->eof = 1;
    while (rp->ch.out_fd >= 0 && (n = read(rp->ch.out_fd, tmp, sizeof(tmp))) > 0) {
        if (!r)
            continue;
        size_t room = r->err.len < OUT_CAP ? OUT_CAP - r->err.len : 0;
        size_t keep = (size_t)n < room ? (size_t)n : room;
        if (keep)
            buf_add(&r->err, tmp, keep);
        if (keep < (size_t)n)
            r->err_truncated = 1;
    }
    if (!rp->exited && rp->eof && waitpid(rp->ch.pid, &rp->status, WNOHANG) == rp->ch.pid)
        rp->exited = 1;
}

/* Wait until `*flag` is set, the runner exits, or the deadline (rp->deadline when `deadline`
 * is negative: a watch may move it): 0, 1 (exited), 2 (deadline). */
static int wait_for(struct rproc *rp, const int *flag, double deadline, struct proc_result *r,
                    struct buf *results)
{
    for (;;) {
        drain(rp, r, results);
        if (*flag)
            return 0;
        if (rp->exited)
            return 1;
        double left = (deadline < 0 ? rp->deadline : deadline) - fs_mono_s();
        if (left <= 0)
            return 2;
        struct pollfd p[2] = { { rp->eof ? -1 : rp->ch.extra_fd, POLLIN, 0 },
                               { rp->ch.out_fd, POLLIN, 0 } };
        int ms = left > 0.1 ? 100 : (int)(left * 1000) + 1;
        poll(p, 2, rp->eof ? (ms < 10 ? ms : 10) : ms);
    }
}

/* A memcheck runner's log size (0 when there is none). */
static long log_size(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* Another runner of the pool's spare that holds its context, swapped into the ended active
 * entry of pr (whose slot then starts a new spare there, at once): 1 when one was taken. Under
 * the pool's lock. */
static int take_shared(struct probe_runner *pr)
{
    for (int m = 0; m < pr->pool->n; m++) {
        struct probe_runner *o = pr->pool->members[m];
        for (int j = 0; o != pr && j < o->n; j++) {
            struct rproc *s = &o->rp[j];
            if (j == o->active || !s->running)
                continue;
            drain(s, NULL, NULL);
            if (!s->ready || s->exited)
                continue;
            struct rproc dead = pr->rp[pr->active];
            pr->rp[pr->active] = *s;
            *s = dead;
            start(pr, s); /* the slot that ended starts a spare for the other runner */
            pr->st.shared++;
            return 1;
        }
    }
    return 0;
}

/* The spare to take over from a runner that ended: one that holds its context (said @ready),
 * else (with a pool) another runner's that does, else the one started first (the likeliest to
 * be ready soonest); -1 when none runs. Under the pool's lock. */
static int pick_spare(struct probe_runner *pr)
{
    int best = -1;
    for (int i = 0; i < pr->n; i++) {
        struct rproc *s = &pr->rp[i];
        if (i == pr->active || !s->running)
            continue;
        drain(s, NULL, NULL);
        if (s->ready)
            return i;
        if (best < 0 || s->seq < pr->rp[best].seq)
            best = i;
    }
    if (pr->pool && pr->st.runs > 0 && take_shared(pr)) /* not for a worker's first run */
        return pr->active;
    return best;
}

/* A runner that said @ready, starting one (or taking a spare) when needed. */
static struct rproc *ready_runner(struct probe_runner *pr)
{
    struct rproc *rp = &pr->rp[pr->active];
    if (rp->running && (rp->runs >= pr->o.max_kernels || log_size(rp->log) > PROBE_RUNNER_LOG_MAX))
        retire(rp); /* recycled: whatever a harness leaked goes with it */
    if (rp->running) { /* one that died while idle is replaced, not charged to the next kernel */
        drain(rp, NULL, NULL);
        if (rp->exited) {
            log_trace("probe_runner_died_idle child=%d status=%d", (int)rp->ch.pid, rp->status);
            retire(rp);
            pr->st.ended++;
        }
    }
    pool_lock(pr);
    int s = !rp->running ? pick_spare(pr) : -1;
    if (s >= 0) {
        pr->active = s;
        rp = &pr->rp[s];
        pr->st.spare_ready += pr->after_end && rp->ready;
    }
    pool_unlock(pr);
    if (!rp->running && start(pr, rp) < 0)
        return NULL;
    struct proc_result out = { 0 };
    buf_init(&out.err, 0);
    if (!rp->ready && wait_for(rp, &rp->ready, fs_mono_s() + pr->o.startup_s, &out, NULL)) {
        while (out.err.len && strchr("\r\n", out.err.data[out.err.len - 1]))
            buf_setlen(&out.err, out.err.len - 1); /* the message goes on after it */
        char *tail = out.err.len > 200 ? out.err.data + out.err.len - 200 : out.err.data;
        if (rp->exited)
            lscat_error_set("lscat-runner (%s) exited (status %d) before holding a CUDA context "
                            "on device %d: %s", pr->program, rp->status, pr->o.device, tail);
        else
            lscat_error_set("lscat-runner (%s) held no CUDA context on device %d after %.0f s",
                            pr->program, pr->o.device, pr->o.startup_s);
        buf_release(&out.err);
        retire(rp);
        return NULL;
    }
    buf_release(&out.err);
    pool_lock(pr);
    for (int i = 0; i < pr->n; i++)
        if (!pr->rp[i].running)
            start(pr, &pr->rp[i]); /* their contexts are made while this one probes */
    pool_unlock(pr);
    return rp;
}

static void send_run(struct rproc *rp, const char *so, const char *const *args,
                     const char *configs)
{
    struct buf m = BUF_INIT;
    buf_addf(&m, "@run\t%s", so);
    for (int i = 0; args[i]; i++)
        buf_addf(&m, "\t%s", args[i]);
    buf_addf(&m, "\n%s%s@end\n", configs,
             configs[0] && configs[strlen(configs) - 1] != '\n' ? "\n" : "");
    for (size_t off = 0; off < m.len;) {
        ssize_t w = write(rp->ch.in_fd, m.data + off, m.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break; /* it died: its exit says how */
        off += (size_t)w;
    }
    buf_release(&m);
}

static double settle_s(void)
{
    const char *e = getenv("LSCAT_MEMCHECK_SETTLE_MS");
    return e && *e ? atof(e) / 1000.0 : PROBE_RUNNER_SETTLE_S;
}

/* After @done: wait until the log has not grown for the settle window (a report written after
 * the harness returned is still this run's), counting how late it grew. */
static void log_settle(struct probe_runner *pr, struct rproc *rp)
{
    double t0 = fs_mono_s(), quiet = settle_s(), last = t0, late = -1;
    long size = log_size(rp->log), at_done = size;
    for (double now = t0; now - last < quiet && now - t0 < 2.0; now = fs_mono_s()) {
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        long s = log_size(rp->log);
        if (s != size)
            size = s, last = fs_mono_s(), late = last - t0;
    }
    if (size > at_done) {
        pr->st.late++;
        if (late > pr->st.late_max_s)
            pr->st.late_max_s = late;
    }
}

/* What the log gained since `from` (at most 64 KiB) into pr->report. */
static void log_take(struct probe_runner *pr, struct rproc *rp, long from)
{
    buf_setlen(&pr->report, 0);
    long size = log_size(rp->log);
    FILE *f = size > from ? fopen(rp->log, "rb") : NULL;
    if (f && fseek(f, from, SEEK_SET) == 0) {
        char tmp[PROBE_MEMCHECK_READ];
        size_t n = fread(tmp, 1, (size_t)(size - from) < sizeof tmp ? (size_t)(size - from)
                                                                      : sizeof tmp, f);
        buf_add(&pr->report, tmp, n);
    }
    if (f)
        fclose(f);
    rp->log_seen = size;
    char *first = probe_memcheck_first(pr->report.data ? pr->report.data : "");
    pr->st.reports += first != NULL;
    free(first);
}

/* How the run ended, as a probe process's result would say it. */
static int judge(struct probe_runner *pr, struct rproc *rp, struct proc_result *r, int w)
{
    if (w == 0 && rp->done_rc == 126)
        return PROBE_RUNNER_NOT_LOADED;
    if (w == 0) {
        r->exit_code = rp->done_rc;
    } else if (w == 1 && WIFSIGNALED(rp->status)) {
        r->signal = WTERMSIG(rp->status);
    } else if (w == 1) {
        r->exit_code = WEXITSTATUS(rp->status);
    } else {
        r->timed_out = 1;
    }
    int ends = w != 0 || rp->done_rc == 3 || rp->done_rc == 4; /* device gone / sticky */
    if (ends) {
        retire(rp);
        pr->st.ended++;
    }
    pr->after_end = ends;
    return PROBE_RUNNER_OK;
}

int probe_runner_run(struct proc_result *r, struct buf *results, struct probe_runner *pr,
                     const char *harness_so, const char *const *args, const char *configs,
                     double timeout_s, const struct probe_runner_watch *watch)
{
    memset(r, 0, sizeof(*r));
    buf_init(&r->out, 0);
    buf_init(&r->err, 0);
    for (int i = 0; args[i]; i++)
        if (strpbrk(args[i], "\t\n"))
            return PROBE_RUNNER_NOT_LOADED;
    if (strpbrk(harness_so, "\t\n"))
        return PROBE_RUNNER_NOT_LOADED;
    /* A runner that holds no context may be passing trouble (session 16: one start on an
     * H200 failed with CUDA driver error 1 right after another run's runners went, and the
     * whole rest of that run probed with processes, 2.4 times slower, and lost 2 runnable
     * kernels): it is started again, PROBE_RUNNER_START_TRIES in all, before the worker gives
     * up on runners for the run. Only when the driver said no (lscat-runner's "CUDA driver
     * error N"): no driver library, or a runner that cannot run, will not change. */
    struct rproc *rp = NULL;
    double tw = fs_mono_s();
    int was_active = pr->active, was_shared = pr->st.shared;
    for (int i = 0; !pr->broken && !rp && i < PROBE_RUNNER_START_TRIES; i++) {
        if (i > 0 && !strstr(lscat_error_last(), "CUDA driver error"))
            break;
        if (i > 0) {
            log_warn("probe: %s; starting it again (%d of %d)", lscat_error_last(), i + 1,
                     PROBE_RUNNER_START_TRIES);
            struct timespec ts = { (time_t)(PROBE_RUNNER_START_PAUSE_MS * i / 1000),
                                   (long)(PROBE_RUNNER_START_PAUSE_MS * i % 1000) * 1000000L };
            nanosleep(&ts, NULL);
        }
        rp = ready_runner(pr);
    }
    if (!rp) {
        pr->broken = 1;
        return PROBE_RUNNER_UNAVAILABLE;
    }
    double wait = fs_mono_s() - tw;
    pr->st.wait_s += wait;
    if (rp->log) /* what the last run left behind; under memcheck the runner is its child */
        sandbox_sweep_slot_tree(rp->slot, rp->ch.pid);
    else
        sandbox_sweep_slot(rp->slot, rp->ch.pid);
    double sweep = fs_mono_s() - tw - wait;
    long from = rp->log ? log_size(rp->log) : 0;
    if (rp->log && rp->runs > 0 && from > rp->log_seen) /* not the banner: a late report */
        pr->st.stray++;
    double t0 = fs_mono_s();
    rp->done_rc = -1;
    rp->done = 0;
    rp->watch = watch;
    rp->deadline = rp->limit = t0 + timeout_s;
    send_run(rp, harness_so, args, configs);
    int w = wait_for(rp, &rp->done, -1, r, results);
    rp->watch = NULL;
    if (rp->log && w == 0)
        log_settle(pr, rp);
    if (rp->log)
        log_take(pr, rp, from);
    rp->runs++;
    pr->st.runs++;
    r->elapsed_s = fs_mono_s() - t0;
    int rc = judge(pr, rp, r, w);
    if (log_enabled(LOG_DEBUG)) { /* where a run's time went (docs/execute.md "Probe runner") */
        char ws[32], ss[32], rs[32], sl[16], wk[16], tk[8], en[8];
        snprintf(ws, sizeof ws, "%.4f", wait);
        snprintf(ss, sizeof ss, "%.4f", sweep);
        snprintf(rs, sizeof rs, "%.4f", r->elapsed_s);
        snprintf(sl, sizeof sl, "%d", rp->slot);
        snprintf(wk, sizeof wk, "%d", pr->o.slots[0]); /* the worker's (shared spares move) */
        snprintf(tk, sizeof tk, "%d", pr->active != was_active || pr->st.shared != was_shared);
        snprintf(en, sizeof en, "%d", pr->after_end);
        log_event(LOG_DEBUG, "probe_run", "slot", sl, "worker_slot", wk, "wait_s", ws,
                  "sweep_s", ss, "run_s", rs, "took_spare", tk, "ended", en, "memcheck",
                  rp->log ? "1" : "0", NULL);
    }
    return rc;
}

int probe_runner_broken(const struct probe_runner *pr)
{
    return pr->broken;
}

int probe_runner_spares_ready(struct probe_runner *pr)
{
    int n = 0;
    pool_lock(pr);
    for (int i = 0; i < pr->n; i++) {
        struct rproc *s = &pr->rp[i];
        if (i == pr->active || !s->running)
            continue;
        drain(s, NULL, NULL);
        n += s->ready && !s->exited;
    }
    pool_unlock(pr);
    return n;
}

const char *probe_runner_report(const struct probe_runner *pr)
{
    return pr->report.data ? pr->report.data : "";
}

void probe_runner_stats(struct probe_runner_stats *out, const struct probe_runner *pr)
{
    *out = pr->st;
}

void probe_runner_free(struct probe_runner *pr)
{
    if (!pr)
        return;
    if (pr->pool) { /* out of the pool first: nobody takes its spares from now on */
        pthread_mutex_lock(&pr->pool->lock);
        for (int m = 0; m < pr->pool->n; m++)
            if (pr->pool->members[m] == pr)
                pr->pool->members[m] = pr->pool->members[--pr->pool->n];
        pthread_mutex_unlock(&pr->pool->lock);
    }
    for (int i = 0; i < 1 + PROBE_RUNNER_SPARES_MAX; i++) {
        struct rproc *rp = &pr->rp[i];
        if (rp->running && rp->ch.in_fd >= 0)
            (void)!write(rp->ch.in_fd, "@quit\n", 6);
        retire(rp);
        buf_release(&rp->res);
        free(rp->log);
    }
    buf_release(&pr->report);
    free(pr->program);
    free(pr->scratch);
    free(pr->work_dir);
    free(pr->sanitizer);
    for (size_t i = 0; pr->env[i]; i++)
        free(pr->env[i]);
    free(pr->env);
    free(pr);
}
