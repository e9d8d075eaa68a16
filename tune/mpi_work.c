/* lscat-mpi's workers: a thin MPI layer around the stage's own program. Each chunk runs as a
 * child process on node-local scratch ($TMPDIR): execute and tune against a chunk store cut
 * from the store rank 0 broadcast at the start (its kernels only: tune/chunkstore.c; the work
 * folder is shared), sweep into a chunk CSV with its builds cached in the rank's scratch. Up to
 * --inflight chunks run at once (tune, sweep: 2, so the next chunk starts up while this one measures,
 * and measures once it is done: the chunk turn). A killed child costs only its chunk: the
 * worker reports it and rank 0 hands the chunk out again.
 * tune with one GPU per worker (the default) runs its chunks in one `lscat-tune --serve` per
 * rank instead: the chunk stores' paths go to its stdin, in order, and it answers each on a
 * pipe; its lscat-runner (process and CUDA context) stays from one chunk to the next. With a
 * process per chunk, each chunk made a runner while the previous one measured and tore its own
 * down while the next one measured: 160 ms on each chunk's first kernel on 4 H200s
 * (docs/tune.md "Multi-GPU scaling (#20)"). A killed server costs the chunk it was measuring;
 * the chunks queued behind it go to a new one. LSCAT_MPI_SERVE=0: a process per chunk. */
#include "tune/mpi.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "store/store.h"
#include "tune/chunkstore.h"

#include <dirent.h>
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* lscat-tune --serve (tune, one GPU per worker): one process runs the rank's chunks in order. */
struct server {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct proc_child c;        /* pid -1: none (started at the first chunk, again after one died) */
    int gen;                    /* which server: one more at each start */
    int64_t sent, answered;     /* chunks given to this server, and answered by it */
    struct buf line;            /* its answers, read by the chunk whose answer is next */
    int starts;
};

struct worker {
    const struct mpi_job *job;
    const char *scratch;
    char *base_db;              /* the broadcast store (execute, tune) */
    char *template_db;          /* an empty store: each chunk store starts as a copy of it */
    int rank;
    char **env;                 /* the children's environment */
    struct server *srv;         /* NULL: a process per chunk */
};

/* The GPUs this node shows: CUDA_VISIBLE_DEVICES's entries, else /dev/nvidiaN's indices. */
static int node_gpus(char ***out)
{
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    char **list = NULL;
    int n = 0;
    if (cvd) {
        char *copy = xstrdup(cvd), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            list = xrealloc(list, (size_t)(n + 1) * sizeof(char *));
            list[n++] = xstrdup(t);
        }
        free(copy);
    } else {
        for (int i = 0; i < 64; i++) {
            char dev[32];
            snprintf(dev, sizeof(dev), "/dev/nvidia%d", i);
            if (access(dev, F_OK) != 0)
                break;
            list = xrealloc(list, (size_t)(n + 1) * sizeof(char *));
            list[n++] = xasprintf("%d", i);
        }
    }
    *out = list;
    return n;
}

/* tune with one GPU per worker rank runs its chunks in one lscat-tune --serve (unless
 * LSCAT_MPI_SERVE=0). */
int mpi_serve_on(const struct mpi_job *job)
{
    const char *e = getenv("LSCAT_MPI_SERVE");
    return job->stage == MPI_STAGE_TUNE && job->gpus == MPI_GPUS_LOCAL && !(e && !strcmp(e, "0"));
}

/* Ours, without Slurm's array variables (a chunk is not a shard of an array) and the ones set
 * here: the GPU (local mode) and the compile jobs (the node's cores shared by its workers). */
static char **child_env(const struct mpi_job *job, const char *scratch, int node_index,
                        int node_workers)
{
    char **gpus = NULL, **env = NULL;
    int ngpus = node_gpus(&gpus), n = 0;
    for (char **e = environ; *e; e++) {
        if (!strncmp(*e, "SLURM_ARRAY_", 12) || !strncmp(*e, "LSCAT_DB=", 9) ||
            (job->gpus == MPI_GPUS_LOCAL && ngpus && !strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21)))
            continue;
        env = xrealloc(env, (size_t)(n + 4) * sizeof(char *));
        env[n++] = xstrdup(*e);
    }
    env = xrealloc(env, (size_t)(n + 5) * sizeof(char *));
    if (job->gpus == MPI_GPUS_LOCAL && ngpus) {
        env[n++] = xasprintf("CUDA_VISIBLE_DEVICES=%s", gpus[node_index % ngpus]);
        if (node_workers > ngpus && node_index == 0 && job->stage == MPI_STAGE_SWEEP)
            log_warn("mpi: %d worker ranks share %d GPU(s) on this node: their sweep "
                     "measurements overlap (run one worker rank per GPU)", node_workers, ngpus);
    }
    /* tune and sweep, one GPU per worker: the next chunk measures once the current one is gone
     * (lscat-tune --serve runs them one after another itself) */
    if (job->stage != MPI_STAGE_EXECUTE && job->gpus == MPI_GPUS_LOCAL && !mpi_serve_on(job))
        env[n++] = xasprintf("LSCAT_GPU_BATON=%s/gpu.baton", scratch);
    if (!getenv("LSCAT_JOBS")) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN) / (node_workers > 0 ? node_workers : 1);
        env[n++] = xasprintf("LSCAT_JOBS=%ld", cpus > 0 ? cpus : 1);
    }
    env[n] = NULL;
    for (int i = 0; i < ngpus; i++)
        free(gpus[i]);
    free(gpus);
    return env;
}

static int die_with_parent(void *arg)
{
    (void)arg;
    return prctl(PR_SET_PDEATHSIG, SIGKILL) != 0;
}

/* The child's command line: the stage's program, its arguments and the chunk's selector. */
static const char **child_argv(const struct worker *w, const char *sel, const char *out_csv,
                               const char *work)
{
    const struct mpi_job *job = w->job;
    const char **argv = xcalloc((size_t)job->nargs + 10, sizeof(char *));
    int k = 0;
    argv[k++] = xasprintf("%s/%s", job->self_dir, job->program);
    for (int i = 0; i < job->nargs; i++)
        argv[k++] = job->args[i];
    if (job->stage == MPI_STAGE_SWEEP) {
        argv[k++] = "--records", argv[k++] = sel, argv[k++] = "--out", argv[k++] = out_csv;
        if (!getenv("LSCAT_WORK")) /* no --work given: build in node-local scratch */
            argv[k++] = "--work", argv[k++] = work;
    } else if (!sel) { /* lscat-tune --serve: the chunk stores come on its stdin */
        argv[k++] = "--serve";
    } else { /* the chunk store holds the chunk's kernels only */
        argv[k++] = "--db", argv[k++] = out_csv;
    }
    return argv;
}

/* ------------------------------------------------------------------ lscat-tune --serve */

static int server_start(struct server *sv, const struct worker *w)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    const char **argv = child_argv(w, NULL, NULL, NULL);
    o.argv = argv, o.env = (const char *const *)w->env;
    o.child_setup = die_with_parent;
    o.extra_fd = 3, o.inherit_output = 1;
    o.limits.core_dumps = 1; /* as it was */
    int rc = proc_spawn_lasting(&sv->c, &o); /* a chunk's thread may start it */
    free((char *)argv[0]);
    free(argv);
    if (rc < 0)
        return rc;
    sv->gen++, sv->starts++;
    sv->sent = sv->answered = 0;
    buf_setlen(&sv->line, 0);
    log_debug("mpi: rank %d: lscat-tune --serve started (pid %d)", w->rank, (int)sv->c.pid);
    return 0;
}

/* The server is gone (its answers ended, or its stdin broke): close its pipes and reap it. Its
 * exit status as mpi_done's died / exit_code. With sv->mu held. */
static void server_reap(struct server *sv, struct mpi_done *d)
{
    int status = 0;
    if (sv->c.in_fd >= 0)
        close(sv->c.in_fd);
    if (sv->c.extra_fd >= 0)
        close(sv->c.extra_fd);
    sv->c.in_fd = sv->c.extra_fd = -1;
    if (sv->c.pid > 0 && waitpid(sv->c.pid, &status, 0) == sv->c.pid) {
        d->died = WIFSIGNALED(status);
        d->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
        if (d->died)
            log_warn("mpi: lscat-tune --serve (pid %d) was killed by signal %d", (int)sv->c.pid,
                     WTERMSIG(status));
        else if (d->exit_code == 0) /* it answered nothing and ended well: not a result */
            d->exit_code = 3;
    } else {
        d->exit_code = 3;
    }
    sv->c.pid = -1;
    sv->gen++; /* the chunks queued behind go to a new server */
    pthread_cond_broadcast(&sv->cv);
}

/* One line of the server's answers, blocking; 0 at its end. */
static int server_read_line(struct server *sv, char *out, size_t size)
{
    for (;;) {
        char *nl = sv->line.len ? memchr(sv->line.data, '\n', sv->line.len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - sv->line.data);
            snprintf(out, size, "%.*s", (int)n, sv->line.data);
            memmove(sv->line.data, nl + 1, sv->line.len - n - 1);
            buf_setlen(&sv->line, sv->line.len - n - 1);
            return 1;
        }
        char tmp[256];
        ssize_t r = read(sv->c.extra_fd, tmp, sizeof(tmp));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        buf_add(&sv->line, tmp, (size_t)r);
    }
}

/* Run the chunk store `file` in the rank's server: queue its path, wait for the chunks queued
 * before it, read its answer. Only the chunk whose answer is next reads, and only it reaps a
 * server that ended. A chunk queued behind one the server died on was never started: it goes
 * to a new server, as does a chunk whose path could not be written (the server was already
 * gone). Returns 0 (d says how it went) or a negative code (no server could start). */
static int server_run(struct server *sv, const struct worker *w, const char *file,
                      struct mpi_done *d)
{
    int unsent = 0;
    pthread_mutex_lock(&sv->mu);
    for (;;) {
        if (sv->c.pid <= 0 && server_start(sv, w) < 0) {
            pthread_mutex_unlock(&sv->mu);
            return LSCAT_ERR;
        }
        int gen = sv->gen;
        int64_t seq = sv->sent++;
        struct buf msg = BUF_INIT;
        buf_addf(&msg, "%s\n", file);
        int wrote = write(sv->c.in_fd, msg.data, msg.len) == (ssize_t)msg.len;
        buf_release(&msg);
        while (sv->gen == gen && sv->answered != seq)
            pthread_cond_wait(&sv->cv, &sv->mu);
        if (sv->gen != gen)
            continue; /* it died before this chunk's turn */
        char ans[64];
        pthread_mutex_unlock(&sv->mu);
        int got = server_read_line(sv, ans, sizeof(ans));
        pthread_mutex_lock(&sv->mu);
        if (got && !strncmp(ans, "done ", 5)) {
            d->exit_code = strtol(ans + 5, NULL, 10);
            sv->answered++;
            pthread_cond_broadcast(&sv->cv);
            pthread_mutex_unlock(&sv->mu);
            return 0;
        }
        if (got) {
            log_error("mpi: lscat-tune --serve said '%s', not 'done N': stopped", ans);
            kill(-sv->c.pid, SIGKILL);
            kill(sv->c.pid, SIGKILL);
        }
        struct mpi_done end = { .chunk = d->chunk };
        server_reap(sv, &end);
        if (!wrote && ++unsent < 3)
            continue; /* the chunk never reached it (a server that ends at once: its status) */
        d->died = end.died, d->exit_code = end.exit_code;
        pthread_mutex_unlock(&sv->mu);
        return 0;
    }
}

/* The end of the rank's work: close the server's stdin (it ends after the store in hand) and
 * wait for it. */
static void server_stop(struct server *sv)
{
    pthread_mutex_lock(&sv->mu);
    if (sv->c.pid > 0) {
        struct mpi_done d = { 0 };
        server_reap(sv, &d);
    }
    pthread_mutex_unlock(&sv->mu);
}

/* The chunk's result as bytes: what the stage wrote into the chunk store, compacted (VACUUM
 * INTO), or the chunk CSV. */
static int result_bytes(struct buf *out, const struct worker *w, const char *file,
                        const struct chunkstore_mark *mark)
{
    if (w->job->stage == MPI_STAGE_SWEEP)
        return access(file, F_OK) == 0 ? buf_read_file(out, file) : 0;
    struct store *s = NULL;
    char *ship = xasprintf("%s.ship", file);
    int rc = chunkstore_trim(file, mark);
    if (rc == 0)
        rc = store_open(&s, file, 0);
    if (rc == 0)
        rc = store_run(s, "VACUUM INTO ?", "t", ship) < 0 ? LSCAT_ERR : 0;
    store_free(s);
    if (rc == 0)
        rc = buf_read_file(out, ship);
    unlink(ship);
    free(ship);
    return rc;
}

/* One chunk in flight: its child runs in a thread (proc_run blocks); the main thread alone
 * speaks MPI (MPI_THREAD_FUNNELED) and ships the result once the thread has finished. */
struct slots;

struct slot {
    const struct worker *w;
    struct slots *group;
    int64_t id;
    char *sel;
    struct mpi_done d;
    struct buf bytes;
    double cut_s, child_s, result_s; /* the breakdown: store cut, child, result bytes */
    pthread_t thread;
    int busy, finished;
};

/* Where a worker's time went, logged at its end ("mpi: time rank N: ..."). */
struct breakdown {
    int chunks;
    double cut_s, child_s, result_s, ship_s, ask_s, idle_s;
};

struct slots {
    struct slot *s;
    int n;
    struct breakdown t;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* The child of one chunk, to its result bytes (in the slot). Runs in the slot's thread. */
static void run_chunk(struct slot *sl)
{
    const struct worker *w = sl->w;
    const struct mpi_job *job = w->job;
    char *file = xasprintf("%s/chunk-%lld.%s", w->scratch, (long long)sl->id,
                           job->stage == MPI_STAGE_SWEEP ? "csv" : "db");
    char *work = fs_join(w->scratch, "work");
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    const char **argv = child_argv(w, sl->sel, file, work);
    struct chunkstore_mark mark = { 0 };
    sl->d = (struct mpi_done){ .chunk = sl->id };
    o.argv = argv, o.env = (const char *const *)w->env;
    o.child_setup = die_with_parent, o.out_cap_bytes = 64 << 10;
    double t0 = fs_mono_s();
    int rc = job->stage == MPI_STAGE_SWEEP ? 0
             : chunkstore_cut(&mark, file, w->template_db, w->base_db,
                              job->stage == MPI_STAGE_TUNE ? CHUNKSTORE_TUNE : CHUNKSTORE_EXECUTE,
                              sl->sel);
    double t1 = fs_mono_s();
    if (rc == 0 && w->srv) {
        rc = server_run(w->srv, w, file, &sl->d);
        double t2 = fs_mono_s();
        if (rc == 0 && !sl->d.died && (rc = result_bytes(&sl->bytes, w, file, &mark)) < 0)
            sl->d.died = 1;
        if (rc < 0 && !sl->d.died)
            sl->d.exit_code = 3;
        if (rc < 0)
            log_error("mpi: chunk %lld (%s): %s", (long long)sl->id, sl->sel, lscat_error_last());
        sl->d.len = (int64_t)sl->bytes.len;
        sl->cut_s = t1 - t0, sl->child_s = t2 - t1, sl->result_s = fs_mono_s() - t2;
        goto out;
    }
    if (rc == 0)
        rc = proc_run(&r, &o);
    double t2 = fs_mono_s();
    if (rc == 0) {
        fputs(r.out.data, stdout);
        fputs(r.err.data, stderr);
        fflush(stdout);
        sl->d.died = r.signal != 0, sl->d.exit_code = r.exit_code;
        proc_result_release(&r);
        if ((!sl->d.died || job->stage == MPI_STAGE_SWEEP) &&
            (rc = result_bytes(&sl->bytes, w, file, &mark)) < 0)
            sl->d.died = 1;
    } else {
        sl->d.exit_code = 3;
    }
    if (rc < 0)
        log_error("mpi: chunk %lld (%s): %s", (long long)sl->id, sl->sel, lscat_error_last());
    sl->d.len = (int64_t)sl->bytes.len;
    sl->cut_s = t1 - t0, sl->child_s = t2 - t1, sl->result_s = fs_mono_s() - t2;
out:
    unlink(file);
    free((char *)argv[0]);
    free(argv);
    free(work);
    free(file);
}

static void *slot_main(void *arg)
{
    struct slot *sl = arg;
    run_chunk(sl);
    pthread_mutex_lock(&sl->group->mu);
    sl->finished = 1;
    pthread_cond_signal(&sl->group->cv);
    pthread_mutex_unlock(&sl->group->mu);
    return NULL;
}

static void slot_start(struct slots *g, const struct worker *w, const char *msg)
{
    struct slot *sl = NULL;
    for (int i = 0; i < g->n && !sl; i++)
        sl = g->s[i].busy ? NULL : &g->s[i];
    const char *tab = strchr(msg, '\t');
    *sl = (struct slot){ .w = w, .group = g, .id = strtoll(msg, NULL, 10), .sel = xstrdup(tab ? tab + 1 : ""),
                         .bytes = BUF_INIT, .busy = 1 };
    if (pthread_create(&sl->thread, NULL, slot_main, sl) != 0) {
        log_error("mpi: cannot start a thread for chunk %lld: out of resources", (long long)sl->id);
        sl->d = (struct mpi_done){ .chunk = sl->id, .exit_code = 3 };
        sl->finished = 1, sl->thread = pthread_self();
    }
}

/* Wait for a chunk in flight to finish and ship its outcome and bytes to rank 0. */
static void slot_ship_one(struct slots *g)
{
    struct slot *sl = NULL;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        for (int i = 0; i < g->n && !sl; i++)
            sl = g->s[i].busy && g->s[i].finished ? &g->s[i] : NULL;
        if (sl)
            break;
        pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    if (!pthread_equal(sl->thread, pthread_self()))
        pthread_join(sl->thread, NULL);
    double t0 = fs_mono_s();
    MPI_Send(&sl->d, 4, MPI_INT64_T, 0, MPI_TAG_DONE, MPI_COMM_WORLD);
    mpi_send_bytes(sl->bytes.data, sl->bytes.len, 0);
    g->t.ship_s += fs_mono_s() - t0, g->t.chunks++;
    g->t.cut_s += sl->cut_s, g->t.child_s += sl->child_s, g->t.result_s += sl->result_s;
    log_debug("mpi: chunk %lld: store cut %.3f s, child %.3f s, result %.3f s (%lld bytes), "
              "shipped in %.3f s", (long long)sl->id, sl->cut_s, sl->child_s, sl->result_s,
              (long long)sl->bytes.len, fs_mono_s() - t0);
    buf_release(&sl->bytes);
    free(sl->sel);
    sl->busy = 0, sl->finished = 0;
}

/* Rank 0's answer to an ask (the ask says how many chunks this rank has in flight; with some in
 * flight, rank 0 answers at once: WORK, or WAIT when none is queued now). Returns its tag. */
static int ask_reply(char **msg)
{
    int len = 0, src = 0, tag = 0;
    mpi_wait_message(0, &src, &tag, &len);
    *msg = xmalloc((size_t)len + 1);
    MPI_Recv(*msg, len, MPI_CHAR, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    (*msg)[len] = '\0';
    return tag;
}

/* Up to job->inflight chunks at once: while one chunk's child measures, the next one's starts
 * (process, runner, CUDA context, planning) and waits for the GPU lock (tune). */
static void work_loop(const struct worker *w)
{
    struct slots g = { .n = w->job->inflight > 0 ? w->job->inflight : 1 };
    int inflight = 0, stopped = 0;
    g.s = xcalloc((size_t)g.n, sizeof(*g.s));
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    for (;;) {
        while (!stopped && inflight < g.n) {
            int64_t busy = inflight;
            char *msg = NULL;
            double t0 = fs_mono_s();
            MPI_Send(&busy, 1, MPI_INT64_T, 0, MPI_TAG_ASK, MPI_COMM_WORLD);
            int tag = ask_reply(&msg);
            /* nothing in flight: the worker (and its GPU) waits for rank 0 */
            *(inflight ? &g.t.ask_s : &g.t.idle_s) += fs_mono_s() - t0;
            if (tag == MPI_TAG_WORK)
                slot_start(&g, w, msg), inflight++;
            stopped = tag == MPI_TAG_STOP;
            free(msg);
            if (tag != MPI_TAG_WORK)
                break;
        }
        if (inflight == 0)
            break;
        slot_ship_one(&g);
        inflight--;
    }
    log_info("mpi: time rank %d: %d chunks; store cuts %.3f s, children %.3f s, results "
             "%.3f s, shipping %.3f s; asks answered while busy %.3f s, idle waiting for a chunk "
             "%.3f s", w->rank, g.t.chunks, g.t.cut_s, g.t.child_s, g.t.result_s, g.t.ship_s,
             g.t.ask_s, g.t.idle_s);
    pthread_cond_destroy(&g.cv);
    pthread_mutex_destroy(&g.mu);
    free(g.s);
}

int mpi_work(const struct mpi_job *job, const char *scratch, int node_index, int node_workers)
{
    struct worker w = { .job = job, .scratch = scratch };
    char *snap = NULL;
    size_t len = 0;
    int rc = 0;
    mpi_bcast_blob(&snap, &len);
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
    if (job->stage != MPI_STAGE_SWEEP && len) {
        w.base_db = fs_join(scratch, "base.db");
        w.template_db = fs_join(scratch, "template.db");
        rc = fs_write_atomic(w.base_db, snap, len);
        if (rc == 0)
            rc = chunkstore_template(w.template_db);
    }
    free(snap);
    if (rc < 0)
        log_error("mpi: cannot write the store copy in '%s': %s (set TMPDIR to a node-local "
                  "folder with room)", scratch, lscat_error_last());
    w.env = child_env(job, scratch, node_index, node_workers);
    struct server sv = { .c = { .pid = -1, .in_fd = -1, .out_fd = -1, .extra_fd = -1 },
                         .line = BUF_INIT };
    if (mpi_serve_on(job)) {
        pthread_mutex_init(&sv.mu, NULL);
        pthread_cond_init(&sv.cv, NULL);
        w.srv = &sv;
        /* now: its GPU discovery and runner context overlap the first ask and store cut */
        pthread_mutex_lock(&sv.mu);
        if (server_start(&sv, &w) < 0)
            log_error("mpi: rank %d: cannot start lscat-tune --serve: %s (each chunk tries "
                      "again)", w.rank, lscat_error_last());
        pthread_mutex_unlock(&sv.mu);
    }
    work_loop(&w);
    if (w.srv) {
        server_stop(&sv);
        log_info("mpi: rank %d: lscat-tune --serve started %d time(s)", w.rank, sv.starts);
        buf_release(&sv.line);
        pthread_cond_destroy(&sv.cv);
        pthread_mutex_destroy(&sv.mu);
    }
    proc_env_free(w.env);
    free(w.base_db);
    free(w.template_db);
    return 0;
}
