/* `lscat sweep`'s run: read the space and what the output already holds, build the groups
 * that still have records to run, record compile failures, then one worker per GPU takes
 * groups dynamically and feeds their records one at a time to the group's host process
 * (tune/sweep_host.cu), writing each result as it comes. Records are handed out one at a time
 * from a cursor per group, so once every group is taken a free worker joins the group with the
 * most work left (its own host process of that group) instead of idling while another GPU
 * finishes a whole group. A crash or a hang of the user's code
 * costs its record (Crash, Timeout) and a restart of the process, never the sweep. */
#include "tune/usersweep.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/gpulock.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct state {
    const struct usersweep_options *o;
    struct bonsai_space *s;
    struct usersweep_build *builds;
    struct usersweep_out *out;
    char *pending;              /* pending[index]: selected, not yet in the output */
    char *listed;               /* listed[index]: named by --records; NULL = every record */
    pthread_mutex_t lock;       /* guards everything below and the output */
    int next_group;
    int *cursor;                /* cursor[g]: the group's records handed out so far */
    int *running;               /* running[g]: workers whose host runs group g */
    struct group_pace *pace;    /* pace[g]: how its records' times fall with their size */
    int measuring;              /* workers still running records */
    double best_s;
    int no_device, io_error;
    char *no_device_why;
    struct usersweep_counts *c;
};

/* A group's records' wall times against their size (record_size), for when to prestart the
 * next group's host: its last record measured and, from two of different sizes, the exponent
 * of time ~ size^alpha (0: not known yet). */
struct group_pace {
    double size, secs, alpha;
};

struct host {
    pid_t pid;
    int in_fd, res_fd;
    struct buf rbuf;            /* unread bytes from res_fd */
    int names_sent;
    int ready;                  /* it said @ready (and the turn was taken) */
};

/* ---- the host process */

static char **child_env(const char *gpu)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = xcalloc(n + 2, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!gpu || strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21) != 0)
            env[k++] = xstrdup(environ[i]);
    if (gpu)
        env[k++] = xasprintf("CUDA_VISIBLE_DEVICES=%s", gpu);
    return env;
}

static void free_env(char **env)
{
    for (size_t i = 0; env[i]; i++)
        free(env[i]);
    free(env);
}

/* In the child: only async-signal-safe calls. */
static void child(int in_rd, int res_wr, int log_fd, const char *const *argv, char **env)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (res_wr == 0 || res_wr == 1 || res_wr == 2)
        res_wr = fcntl(res_wr, F_DUPFD, 10);
    if (dup2(in_rd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0 ||
        (res_wr == 3 ? fcntl(3, F_SETFD, 0) : dup2(res_wr, 3)) < 0)
        _exit(127);
    execve(argv[0], (char *const *)argv, env);
    _exit(127);
}

static int host_start(struct host *h, const char *binary, const struct state *st, const char *gpu,
                      const char *log_path)
{
    int in[2] = { -1, -1 }, res[2] = { -1, -1 };
    int log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const char *argv[32];
    int k = 0;
    char abandon[32];
    argv[k++] = binary;
    if (st->o->abandon_k > 0) {
        snprintf(abandon, sizeof(abandon), "%g", st->o->abandon_k);
        argv[k++] = "--abandon", argv[k++] = abandon;
    }
    for (int i = 0; st->o->timing_args && st->o->timing_args[i] && k < 30; i++)
        argv[k++] = st->o->timing_args[i];
    argv[k] = NULL;
    if (log_fd < 0 || pipe2(in, O_CLOEXEC) != 0 || pipe2(res, O_CLOEXEC) != 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (in[i] >= 0) close(in[i]);
            if (res[i] >= 0) close(res[i]);
        }
        if (log_fd >= 0) close(log_fd);
        return lscat_error_set("cannot start '%s': %s", binary, strerror(e));
    }
    char **env = child_env(gpu);
    pid_t pid = fork();
    if (pid == 0)
        child(in[0], res[1], log_fd, argv, env);
    free_env(env);
    close(in[0]);
    close(res[1]);
    close(log_fd);
    if (pid < 0) {
        close(in[1]);
        close(res[0]);
        return lscat_error_set("cannot fork: %s", strerror(errno));
    }
    h->pid = pid, h->in_fd = in[1], h->res_fd = res[0], h->names_sent = 0, h->ready = 0;
    buf_reset(&h->rbuf);
    return 0;
}

/* Kill (when `force`) and reap; the exit status, or -1. */
static int host_stop(struct host *h, int force)
{
    int status = -1;
    if (h->pid <= 0)
        return -1;
    if (h->in_fd >= 0)
        close(h->in_fd);
    if (force)
        kill(-h->pid, SIGKILL);
    while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR)
        ;
    kill(-h->pid, SIGKILL); /* whatever it left in its group */
    close(h->res_fd);
    h->pid = -1, h->in_fd = -1, h->res_fd = -1, h->ready = 0;
    return status;
}

enum { LINE_OK = 0, LINE_EOF = 1, LINE_TIMEOUT = 2, LINE_STOP = 3 };

/* The next line from the host into `line` (NUL-terminated, no newline), within timeout_s. */
static int host_line(struct buf *line, struct host *h, double timeout_s,
                     const volatile int *stop)
{
    double deadline = fs_mono_s() + timeout_s;
    for (;;) {
        char *nl = h->rbuf.len ? memchr(h->rbuf.data, '\n', h->rbuf.len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - h->rbuf.data);
            buf_reset(line);
            buf_add(line, h->rbuf.data, n);
            memmove(h->rbuf.data, nl + 1, h->rbuf.len - n - 1);
            buf_setlen(&h->rbuf, h->rbuf.len - n - 1);
            return LINE_OK;
        }
        if (stop && *stop)
            return LINE_STOP;
        double left = deadline - fs_mono_s();
        if (left <= 0)
            return LINE_TIMEOUT;
        struct pollfd p = { .fd = h->res_fd, .events = POLLIN };
        int ms = left > 0.2 ? 200 : (int)(left * 1000) + 1;
        if (poll(&p, 1, ms) <= 0)
            continue;
        char tmp[4096];
        ssize_t r = read(h->res_fd, tmp, sizeof(tmp));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return LINE_EOF;
        buf_add(&h->rbuf, tmp, (size_t)r);
    }
}

static int send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n, len -= (size_t)n;
    }
    return 0;
}

/* ---- results */

static void count(struct usersweep_counts *c, const char *status, const char *error)
{
    if (!strcmp(status, "Success")) c->success++;
    else if (!strcmp(status, "Abandoned")) c->abandoned++;
    else if (!strcmp(error, "Compile")) c->compile++;
    else if (!strcmp(error, "Launch")) c->launch++;
    else if (!strcmp(error, "Test")) c->test++;
    else if (!strcmp(error, "Crash")) c->crash++;
    else if (!strcmp(error, "Timeout")) c->timeout++;
}

static void record_row(struct state *st, const struct bonsai_record *r,
                       const struct usersweep_row *row, const char *detail)
{
    pthread_mutex_lock(&st->lock);
    if (usersweep_out_write(st->out, r, row) < 0) {
        if (!st->io_error)
            log_error("%s", lscat_error_last());
        st->io_error = 1;
    } else {
        st->pending[r->index] = 0;
        count(st->c, row->status, row->error);
        if (!strcmp(row->status, "Success") && row->time_s > 0 &&
            (st->best_s <= 0 || row->time_s < st->best_s))
            st->best_s = row->time_s;
    }
    pthread_mutex_unlock(&st->lock);
    if (strcmp(row->error, "None") != 0 && detail)
        log_info("record %d (line %d): %s%s%s", r->index, r->line, row->error,
                 detail && *detail ? ": " : "", detail ? detail : "");
}

/* "@result index Error median min abandoned lost outputs message" -> row; lost -> *lost. */
static int parse_result(struct usersweep_row *row, int *lost, char **detail, char *line,
                        int statistic_min)
{
    char *f[9];
    int n = 0;
    for (char *p = line, *t; n < 9; p = t + 1) {
        f[n++] = p;
        if (!(t = strchr(p, '\t')))
            break;
        *t = '\0';
    }
    if (n < 9 || strcmp(f[0], "@result") != 0)
        return -1;
    double t_ns = strtod(statistic_min ? f[4] : f[3], NULL);
    int abandoned = atoi(f[5]);
    *lost = atoi(f[6]);
    row->outputs = f[7];
    *detail = f[8];
    if (!strcmp(f[2], "None")) {
        row->status = abandoned ? "Abandoned" : "Success";
        row->error = "None";
        row->time_s = t_ns * 1e-9;
    } else {
        row->status = "Failure";
        row->error = !strcmp(f[2], "Test") ? "Test" : "Launch";
        row->time_s = -1;
    }
    return 0;
}

/* ---- one worker: groups from the shared queue, one host process at a time */

struct worker {
    struct state *st;
    const char *gpu;
    struct host h;
    /* the host of the group this worker will most likely take next, started while it runs its
     * last record of the current one (its process start and CUDA context creation, 0.64 s a
     * switch on an H200, overlap that record); next_group -1: none */
    struct host next;
    int next_group;
    double start_s;             /* its last host start, process to @ready (0: none yet) */
    struct buf line;
    char *log_path;
    /* a record whose failure ended the context (the host's `lost`), or that hung or crashed
     * its host: written once the next start says the device is there (docs/tune.md "A device
     * that goes"; a GPU that went away made the runs in flight hang, session 23) */
    const struct bonsai_record *held;
    struct usersweep_row held_row;
    char *held_outputs, *held_detail;
};

static void hold_row(struct worker *w, const struct bonsai_record *r,
                     const struct usersweep_row *row, char *detail)
{
    w->held = r;
    w->held_row = *row;
    w->held_outputs = row->outputs ? xstrdup(row->outputs) : NULL; /* row's is w->line's */
    w->held_row.outputs = w->held_outputs;
    w->held_detail = detail;
}

/* The held record: written (keep), or left to run again when the device went (its failure
 * was most likely the device's, not the record's). */
static void settle_held(struct worker *w, int keep)
{
    if (!w->held)
        return;
    if (keep)
        record_row(w->st, w->held, &w->held_row, w->held_detail);
    else if (!strcmp(w->held_row.error, "Launch"))
        log_warn("record %d (line %d): not recorded, it runs again: its failure ended the CUDA "
                 "context and then the device was gone (%s)", w->held->index, w->held->line,
                 w->held_detail ? w->held_detail : "");
    else
        log_warn("record %d (line %d): not recorded, it runs again: it failed (%s: %s) and then "
                 "the device was gone", w->held->index, w->held->line, w->held_row.error,
                 w->held_detail ? w->held_detail : "");
    free(w->held_outputs);
    free(w->held_detail);
    w->held = NULL, w->held_outputs = w->held_detail = NULL;
}

/* The group's records not yet handed out (with st->lock held). */
static int left_in(const struct state *st, int g)
{
    const struct bonsai_group *grp = &st->s->groups[g];
    int n = 0;
    for (int i = st->cursor[g]; i < grp->nrecords; i++)
        n += st->pending[st->s->records[grp->records[i]].index];
    return n;
}

/* A group for a free worker: the next one nobody has taken; once all are taken, the one with
 * the most records left per worker that has more records left than workers on it (the join
 * costs a host start; a group's record times are no guide to its records left, which in a
 * space ordered by size are its largest). -1: none. With st->lock held. `take`: the group is
 * taken (the next untaken one advances); 0: only which one a worker leaving group `leaving`
 * would take now (for its host's prestart). */
static int pick_group(struct state *st, int take, int leaving)
{
    int g = -1;
    if (st->o->stop && *st->o->stop) /* a stopped worker takes nothing more */
        return -1;
    for (int cand = st->next_group; cand < st->s->ngroups && !st->no_device && !st->io_error;
         cand++) {
        if (take)
            st->next_group = cand + 1;
        if (left_in(st, cand) > 0 && st->builds[cand].binary) {
            g = cand;
            break;
        }
    }
    double best = 0;
    int join = -1;
    for (int cand = 0; g < 0 && cand < st->s->ngroups && !st->no_device && !st->io_error;
         cand++) { /* every group is taken: the best one to join */
        int left = st->builds[cand].binary ? left_in(st, cand) : 0;
        int running = st->running[cand] - (cand == leaving);
        double share = (double)left / (running + 1);
        if (left > running && share > best)
            best = share, join = cand;
    }
    return g < 0 ? join : g;
}

static int take_group(struct state *st)
{
    pthread_mutex_lock(&st->lock);
    int g = pick_group(st, 1, -1);
    if (g >= 0)
        st->running[g]++;
    pthread_mutex_unlock(&st->lock);
    return g;
}

/* The group's next record still without a row, or NULL. */
static const struct bonsai_record *take_record(struct state *st, int g)
{
    const struct bonsai_group *grp = &st->s->groups[g];
    const struct bonsai_record *r = NULL;
    pthread_mutex_lock(&st->lock);
    while (!r && st->cursor[g] < grp->nrecords && !(st->o->stop && *st->o->stop) &&
           !st->io_error) {
        const struct bonsai_record *c = &st->s->records[grp->records[st->cursor[g]++]];
        if (st->pending[c->index])
            r = c;
    }
    if (r)
        log_trace("sweep_take record=%d", r->index);
    pthread_mutex_unlock(&st->lock);
    return r;
}

/* Under lscat-mpi (one GPU per worker rank): the host has started while the rank's previous
 * chunk measured; it measures once that chunk is done (gpulock_baton, the chunk turn). */
static int take_turn(struct worker *w, struct usersweep_row *row, char **detail)
{
    double t0 = fs_mono_s();
    int rc = gpulock_baton(w->st->o->stop);
    log_trace("sweep_turn wait=%.3f", fs_mono_s() - t0);
    if (rc == 0)
        return 0;
    host_stop(&w->h, 1);
    if (rc == LSCAT_EBUSY)
        return 2;
    *detail = xstrdup(lscat_error_last());
    row->error = "Crash";
    return -1;
}

/* Start the group's host process (unless it was prestarted) and wait for @ready; 1 = no device
 * (the sweep stops). */
static int worker_start(struct worker *w, int g, struct usersweep_row *row, char **detail)
{
    struct state *st = w->st;
    /* A fresh start (not a prestarted host, which starts while its GPU measures) makes its
     * context through the context gate (common/gpulock.h), as tune's runners do: at a sweep's
     * start the GPUs' hosts then measure one context after another instead of all after the
     * last (on 4 H200s their first records came at 1.16-1.55 s, 0.41 s on one). */
    struct gpulock gate = { -1 };
    double t0 = 0;
    if (w->h.pid <= 0) {
        gpulock_context_gate(&gate, NULL);
        t0 = fs_mono_s();
        if (host_start(&w->h, st->builds[g].binary, st, w->gpu, w->log_path) < 0) {
            gpulock_release(&gate);
            *detail = xstrdup(lscat_error_last());
            row->error = "Crash";
            return -1;
        }
        log_trace("sweep_host_started group=%d", g);
    }
    int rc = host_line(&w->line, &w->h, st->o->startup_timeout_s, st->o->stop);
    gpulock_release(&gate);
    int nodevice = rc == LINE_OK && !strncmp(w->line.data, "@nodevice", 9);
    settle_held(w, !nodevice);
    if (rc == LINE_OK && !strncmp(w->line.data, "@ready", 6)) {
        log_trace("sweep_host_ready group=%d", g);
        if (t0 > 0)
            w->start_s = fs_mono_s() - t0;
        rc = take_turn(w, row, detail);
        w->h.ready = rc == 0;
        return rc;
    }
    if (nodevice) {
        pthread_mutex_lock(&st->lock);
        if (!st->no_device_why)
            st->no_device_why = xstrdup(w->line.data + 10);
        st->no_device = 1;
        pthread_mutex_unlock(&st->lock);
        host_stop(&w->h, 1);
        return 1;
    }
    int status = host_stop(&w->h, 1);
    row->error = rc == LINE_TIMEOUT ? "Timeout" : "Crash";
    *detail = rc == LINE_TIMEOUT ? xasprintf("the program did not start within %.0f s",
                                             st->o->startup_timeout_s)
                                 : xasprintf("the program died at start (status %d; see %s)",
                                             status, w->log_path);
    return rc == LINE_STOP ? 2 : -1;
}

static void send_record(struct worker *w, const struct bonsai_record *r)
{
    struct state *st = w->st;
    struct buf b = BUF_INIT;
    if (!w->h.names_sent) {
        buf_adds(&b, "@names");
        for (int i = 0; i < st->s->nparams; i++)
            buf_addf(&b, "\t%s", st->s->params[i].name);
        buf_addch(&b, '\n');
        w->h.names_sent = 1;
    }
    pthread_mutex_lock(&st->lock);
    double best_ns = st->best_s * 1e9;
    pthread_mutex_unlock(&st->lock);
    buf_addf(&b, "%d\t%.17g", r->index, best_ns > 0 ? best_ns : 0);
    for (int i = 0; i < st->s->nparams; i++)
        buf_addf(&b, "\t%s", r->values[i]);
    buf_addch(&b, '\n');
    (void)send_all(w->h.in_fd, b.data, b.len); /* a dead host shows as EOF below */
    buf_release(&b);
}

/* Run one record in the running host. Returns 1 when the host must be restarted after and the
 * row waits for that start (a failure that ended the context, a timeout, a crash: each may be
 * a device that went), -2 when stopped. */
static int run_one(struct worker *w, const struct bonsai_record *r, struct usersweep_row *row,
                   char **detail)
{
    struct state *st = w->st;
    send_record(w, r);
    int rc = host_line(&w->line, &w->h, st->o->run_timeout_s, st->o->stop);
    int lost = 0;
    char *d = NULL;
    if (rc == LINE_OK && parse_result(row, &lost, &d, w->line.data, st->o->statistic_min) == 0) {
        *detail = xstrdup(d);
        return lost;
    }
    if (rc == LINE_STOP)
        return -2;
    int status = host_stop(&w->h, 1);
    row->status = "Failure", row->time_s = -1, row->outputs = NULL;
    row->error = rc == LINE_TIMEOUT ? "Timeout" : "Crash";
    if (rc == LINE_TIMEOUT)
        *detail = xasprintf("no result within --timeout %.0f s (killed)", st->o->run_timeout_s);
    else if (status >= 0 && WIFSIGNALED(status))
        *detail = xasprintf("signal %d (%s); output in %s", WTERMSIG(status),
                            strsignal(WTERMSIG(status)), w->log_path);
    else
        *detail = xasprintf("the program exited (%d) without a result; output in %s",
                            status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                            w->log_path);
    return 1;
}

/* The group's host output file: run.log beside its program. */
static char *run_log(const struct state *st, int g)
{
    const char *bin = st->builds[g].binary, *slash = strrchr(bin, '/');
    return slash ? xasprintf("%.*s/run.log", (int)(slash - bin), bin) : xstrdup("run.log");
}

/* LSCAT_SWEEP_PRESTART=0: no host started ahead (the behaviour before session 27). */
static int prestart_on(void)
{
    const char *e = getenv("LSCAT_SWEEP_PRESTART");
    return !(e && !strcmp(e, "0"));
}

static double record_size(const struct bonsai_space *s, const struct bonsai_record *r);

/* How long before a worker runs out of a group's records its next host starts: one host start
 * and a half (the worker's last, process to @ready), or LSCAT_SWEEP_PRESTART_LEAD_S. */
static double prestart_lead(const struct worker *w)
{
    const char *e = getenv("LSCAT_SWEEP_PRESTART_LEAD_S");
    if (e && *e)
        return strtod(e, NULL);
    return 1.5 * w->start_s;
}

/* A record measured: the group's pace (with st->lock held). */
static void pace_add(struct state *st, int g, const struct bonsai_record *r, double secs)
{
    struct group_pace *p = &st->pace[g];
    double size = record_size(st->s, r);
    if (size <= 0 || secs <= 0)
        return;
    if (p->size > 0 && p->secs > 0 && (size > p->size * 1.05 || size < p->size / 1.05)) {
        double a = log(p->secs / secs) / log(p->size / size);
        p->alpha = a < 0.5 ? 0.5 : a > 4 ? 4 : a;
    }
    p->size = size, p->secs = secs;
}

/* A record's time as its group's pace predicts; -1 when it cannot (no pace yet, no size). */
static double pace_secs(const struct state *st, int g, const struct bonsai_record *r)
{
    const struct group_pace *p = &st->pace[g];
    double size = record_size(st->s, r);
    return p->alpha > 0 && size > 0 ? p->secs * pow(size / p->size, p->alpha) : -1;
}

/* The group's records not yet handed out, their time as its pace predicts; -1 when it cannot.
 * With st->lock held. */
static double left_secs(const struct state *st, int g)
{
    const struct bonsai_group *grp = &st->s->groups[g];
    double sum = 0;
    for (int i = st->cursor[g]; i < grp->nrecords; i++) {
        const struct bonsai_record *r = &st->s->records[grp->records[i]];
        if (!st->pending[r->index])
            continue;
        double t = pace_secs(st, g, r);
        if (t < 0)
            return -1;
        sum += t;
    }
    return sum;
}

/* This worker has taken record r of group `g`: once it will most likely run out of the group's
 * records within the lead (r, and its share of what is left, as the group's pace predicts),
 * or once r is its last (none is left to hand out), start the host of the group it would take
 * now, so that its process start and CUDA context creation overlap its last records. With
 * several workers a group's records are dealt largest first, so its last take is one of its
 * smallest records, tens of ms against a host start of 0.8 s on an H200: prestarting only there
 * hid nothing on 4 GPUs (docs/tune.md "Multi-GPU scaling (#20), session 28"). A guess: when the
 * worker is free, take_group decides, and a host of another group is stopped unused. */
static void prestart_next(struct worker *w, int g, const struct bonsai_record *r)
{
    struct state *st = w->st;
    if (w->next.pid > 0 || !prestart_on())
        return;
    pthread_mutex_lock(&st->lock);
    int next = -1;
    if (left_in(st, g) > 0) {
        double rest = left_secs(st, g), mine = pace_secs(st, g, r);
        int sharing = st->running[g] > 0 ? st->running[g] : 1;
        if (rest >= 0 && mine >= 0 && mine + rest / sharing <= prestart_lead(w))
            next = pick_group(st, 0, g);
    } else {
        next = pick_group(st, 0, g);
    }
    if (next == g)
        next = -1; /* the group it is in: nothing to start */
    pthread_mutex_unlock(&st->lock);
    if (next < 0)
        return;
    char *log = run_log(st, next);
    if (host_start(&w->next, st->builds[next].binary, st, w->gpu, log) == 0) {
        w->next_group = next;
        log_trace("sweep_prestart group=%d", next);
    }
    free(log);
}

/* Stop a prestarted host that is not used. */
static void drop_next(struct worker *w)
{
    if (w->next.pid <= 0)
        return;
    host_stop(&w->next, 1);
    log_trace("sweep_prestart_unused group=%d", w->next_group);
    w->next_group = -1;
}

/* Make the prestarted host the one in use when it is group g's; else stop it. */
static void adopt_next(struct worker *w, int g)
{
    if (w->next.pid <= 0 || w->next_group != g) {
        drop_next(w);
        return;
    }
    struct host t = w->h; /* swapped: each keeps its own read buffer */
    w->h = w->next;
    w->next = t;
    log_trace("sweep_prestart_taken group=%d", g);
    w->next_group = -1;
}

static void run_group(struct worker *w, int g)
{
    struct state *st = w->st;
    if (w->h.pid > 0) /* the previous group's */
        host_stop(&w->h, 0);
    adopt_next(w, g);
    free(w->log_path);
    w->log_path = run_log(st, g);
    for (const struct bonsai_record *r; (r = take_record(st, g)) != NULL;) {
        struct usersweep_row row = { .status = "Failure", .error = "Crash", .time_s = -1 };
        char *detail = NULL;
        int rc = w->h.ready ? 0 : worker_start(w, g, &row, &detail);
        if (rc == 1 || rc == 2)
            return; /* r stays without a row: a rerun runs it */
        double t0 = fs_mono_s();
        if (rc == 0) {
            prestart_next(w, g, r);
            rc = run_one(w, r, &row, &detail);
            if (rc == -2) {
                free(detail);
                host_stop(&w->h, 1);
                return;
            }
            if (rc == 1) {
                host_stop(&w->h, 0);
                log_trace("sweep_record record=%d from=%.4f held", r->index, t0);
                hold_row(w, r, &row, detail);
                continue;
            }
        }
        log_trace("sweep_record record=%d from=%.4f", r->index, t0);
        if (rc == 0 && !strcmp(row.status, "Success")) {
            pthread_mutex_lock(&st->lock);
            pace_add(st, g, r, fs_mono_s() - t0);
            pthread_mutex_unlock(&st->lock);
        }
        record_row(st, r, &row, detail);
        free(detail);
    }
}

/* The last worker done measuring hands the chunk turn on before its host's teardown. */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct state *st = w->st;
    for (int g; (g = take_group(st)) >= 0;) {
        run_group(w, g);
        pthread_mutex_lock(&st->lock);
        st->running[g]--;
        pthread_mutex_unlock(&st->lock);
    }
    settle_held(w, 1); /* no start after it said whether the device went */
    pthread_mutex_lock(&st->lock);
    if (--st->measuring == 0) {
        gpulock_baton_release();
        log_trace("baton_released");
    }
    pthread_mutex_unlock(&st->lock);
    if (w->h.pid > 0)
        host_stop(&w->h, st->o->stop && *st->o->stop);
    drop_next(w); /* started for a group that was done before this worker was free */
    return NULL;
}

/* A record's size for the deal order: the product of its numeric Runtime values (1 with none;
 * 0 when that is not a number). */
static double record_size(const struct bonsai_space *s, const struct bonsai_record *r)
{
    double size = 1;
    for (int i = 0; i < s->nparams; i++)
        if (s->params[i].when == BONSAI_RUNTIME && s->params[i].type != BONSAI_STRING)
            size *= fabs(strtod(r->values[i], NULL));
    return size >= 0 ? size : 0;
}

struct sized {
    double size;
    int record; /* index into the space's records: file order breaks ties */
};

static int by_size(const void *a, const void *b)
{
    const struct sized *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->record > y->record) - (x->record < y->record);
}

/* With several workers each tuple's records are dealt largest first (longest processing time
 * first): a space lists its sizes ascending, so in file order every worker's last record was a
 * tuple's largest, and on 4 H200s one worker had nothing left for the last 5 s of a 21 s sweep
 * while the others measured the N = 7,936 and 8,192 records (docs/tune.md "Multi-GPU scaling
 * (#20), session 26"). One worker keeps the file order (its output's row order). */
static void order_largest_first(struct state *st)
{
    for (int g = 0; g < st->s->ngroups; g++) {
        struct bonsai_group *grp = &st->s->groups[g];
        struct sized *v = xcalloc((size_t)grp->nrecords + 1, sizeof(*v));
        for (int i = 0; i < grp->nrecords; i++)
            v[i] = (struct sized){ record_size(st->s, &st->s->records[grp->records[i]]),
                                   grp->records[i] };
        qsort(v, (size_t)grp->nrecords, sizeof(*v), by_size);
        for (int i = 0; i < grp->nrecords; i++)
            grp->records[i] = v[i].record;
        free(v);
    }
}

static void run_workers(struct state *st)
{
    int n = 1;
    char **gpus = NULL;
    if (st->o->gpus) {
        char *copy = xstrdup(st->o->gpus), *save = NULL;
        gpus = xcalloc(strlen(copy) + 1, sizeof(char *));
        n = 0;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
            gpus[n++] = xstrdup(t);
        free(copy);
    }
    if (n > 1)
        order_largest_first(st);
    struct worker *w = xcalloc((size_t)n, sizeof(*w));
    pthread_t *th = xcalloc((size_t)n, sizeof(*th));
    st->measuring = n;
    for (int i = 0; i < n; i++) {
        w[i] = (struct worker){ .st = st, .gpu = gpus ? gpus[i] : NULL, .line = BUF_INIT };
        w[i].h = (struct host){ .pid = -1, .in_fd = -1, .res_fd = -1, .rbuf = BUF_INIT };
        w[i].next = (struct host){ .pid = -1, .in_fd = -1, .res_fd = -1, .rbuf = BUF_INIT };
        w[i].next_group = -1;
        if (i > 0 && pthread_create(&th[i], NULL, worker_main, &w[i]) != 0) {
            w[i].st = NULL;
            pthread_mutex_lock(&st->lock);
            st->measuring--;
            pthread_mutex_unlock(&st->lock);
        }
    }
    worker_main(&w[0]);
    for (int i = 1; i < n; i++)
        if (w[i].st)
            pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) {
        buf_release(&w[i].line);
        buf_release(&w[i].h.rbuf);
        buf_release(&w[i].next.rbuf);
        free(w[i].log_path);
        free(gpus ? gpus[i] : NULL);
    }
    free(gpus);
    free(w);
    free(th);
}

/* ---- the sweep */

/* pending[index] = 1 for selected records without a row; want[g] for groups holding one. */
static void plan(struct state *st, const char *done, int *want)
{
    const struct usersweep_options *o = st->o;
    for (int i = 0; i < st->s->nrecords; i++) {
        const struct bonsai_record *r = &st->s->records[i];
        if (!bonsai_selected(r->index, o->rows_from, o->rows_to, o->shard, o->shard_count) ||
            (st->listed && !st->listed[r->index]))
            continue;
        st->c->selected++;
        if (done[r->index]) {
            st->c->already_done++;
            continue;
        }
        st->pending[r->index] = 1;
        want[r->group] = 1;
    }
    for (int g = 0; g < st->s->ngroups; g++)
        st->c->groups += want[g];
}

/* The driver's output columns: the existing output's, else the first built program's. */
static int user_columns(char **out, struct state *st, char *from_file)
{
    if (from_file) {
        *out = from_file;
        return 0;
    }
    for (int g = 0; g < st->s->ngroups; g++)
        if (st->builds[g].binary)
            return usersweep_describe(out, st->builds[g].binary);
    *out = xstrdup("");
    return 0;
}

static void record_compile_failures(struct state *st)
{
    for (int g = 0; g < st->s->ngroups; g++) {
        struct usersweep_build *b = &st->builds[g];
        if (b->binary || !b->error)
            continue;
        log_warn("build of group %d (%d records) failed: %s (log: %s)", g,
                 st->s->groups[g].nrecords, b->error, b->log_path);
        st->c->groups_failed++;
        for (int i = 0; i < st->s->groups[g].nrecords; i++) {
            const struct bonsai_record *r = &st->s->records[st->s->groups[g].records[i]];
            struct usersweep_row row = { .status = "Failure", .error = "Compile", .time_s = -1 };
            if (st->pending[r->index])
                record_row(st, r, &row, NULL);
        }
    }
}

static int build_and_open(struct state *st, const int *want, char *file_columns)
{
    double t0 = fs_mono_s();
    int rc = st->c->groups ? usersweep_build_all(st->builds, st->o, st->s, want) : 0;
    st->c->build_s = fs_mono_s() - t0;
    for (int g = 0; g < st->s->ngroups; g++) {
        st->c->groups_built += st->builds[g].binary && !st->builds[g].cached;
        st->c->groups_cached += st->builds[g].cached;
    }
    char *columns = NULL;
    if (rc == 0)
        rc = user_columns(&columns, st, file_columns);
    else
        free(file_columns);
    if (rc == 0)
        rc = usersweep_out_open(&st->out, st->o->out_path, st->s, columns);
    free(columns);
    return rc;
}

/* The kernel and driver as absolute paths (nvcc runs in a build folder). */
static int resolve_sources(struct usersweep_options *o, char **kernel, char **driver)
{
    *kernel = realpath(o->kernel_path, NULL);
    *driver = realpath(o->driver_path, NULL);
    if (!*kernel || !*driver)
        return lscat_error_set("cannot read the %s '%s': %s", *kernel ? "driver" : "kernel",
                               *kernel ? o->driver_path : o->kernel_path, strerror(errno));
    o->kernel_path = *kernel, o->driver_path = *driver;
    return 0;
}

int usersweep_run(struct usersweep_counts *out, const struct usersweep_options *opts)
{
    struct usersweep_options resolved = *opts, *o = &resolved;
    struct state st = { .o = o, .c = out };
    char *done = NULL, *file_columns = NULL, *kernel = NULL, *driver = NULL;
    int *want = NULL;
    memset(out, 0, sizeof(*out));
    pthread_mutex_init(&st.lock, NULL);
    int rc = resolve_sources(o, &kernel, &driver);
    if (rc == 0)
        rc = bonsai_space_load(&st.s, o->space_path);
    if (rc < 0)
        goto done;
    out->records = st.s->nrecords;
    done = xcalloc((size_t)st.s->nrecords + 1, 1);
    st.pending = xcalloc((size_t)st.s->nrecords + 1, 1);
    st.cursor = xcalloc((size_t)st.s->ngroups + 1, sizeof(int));
    st.running = xcalloc((size_t)st.s->ngroups + 1, sizeof(int));
    st.pace = xcalloc((size_t)st.s->ngroups + 1, sizeof(*st.pace));
    want = xcalloc((size_t)st.s->ngroups, sizeof(int));
    if (o->records) {
        st.listed = xcalloc((size_t)st.s->nrecords + 1, 1);
        if ((rc = bonsai_records_parse(st.listed, st.s->nrecords, o->records)) < 0)
            goto done;
    }
    st.builds = xcalloc((size_t)st.s->ngroups, sizeof(*st.builds));
    rc = usersweep_out_scan(done, &st.best_s, &file_columns, o->out_path, st.s);
    if (rc < 0)
        goto done;
    plan(&st, done, want);
    rc = build_and_open(&st, want, file_columns);
    if (rc < 0)
        goto done;
    record_compile_failures(&st);
    double t0 = fs_mono_s();
    if (!o->compile_only && !st.io_error)
        run_workers(&st);
    out->run_s = fs_mono_s() - t0;
    for (int i = 1; i <= st.s->nrecords; i++)
        out->pending += st.pending[i];
    out->no_device = st.no_device;
    out->interrupted = o->stop && *o->stop;
    if (st.no_device)
        log_warn("no CUDA device (%s): %d records left to run (run again on a GPU machine: "
                 "it resumes)", st.no_device_why ? st.no_device_why : "?", out->pending);
    rc = usersweep_out_close(st.out);
    if (rc == 0 && st.io_error)
        rc = lscat_error_set("cannot write the output '%s'", o->out_path);
done:
    for (int g = 0; st.s && g < st.s->ngroups; g++)
        usersweep_build_release(&st.builds[g]);
    free(st.builds);
    free(st.no_device_why);
    free(kernel);
    free(driver);
    free(want);
    free(done);
    free(st.pending);
    free(st.cursor);
    free(st.running);
    free(st.pace);
    free(st.listed);
    bonsai_space_free(st.s);
    pthread_mutex_destroy(&st.lock);
    return rc;
}
