/* The tune side of lscat-runner (tune/runnerd.c): one long-lived process per GPU that runs
 * kernels' harness.so files one after another (docs/tune.md "Runner"). Started lazily,
 * restarted after a crash, hang or sticky error, recycled after max_kernels kernels; a kernel
 * whose harness.so cannot be loaded runs as a harness process instead. */
#include "tune/runner.h"
#include "tune/runner_host.h"
#include "tune/runner_proc.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/gpulock.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct runner_host {
    char *program;
    char **env;         /* a copy (NULL: ours): a host kept across sweeps outlives theirs */
    int device, max_kernels;
    struct runner_proc ch;
    int running, kernels, broken;
    struct runner_proc spare; /* started beside it: takes over at once after a fault */
    int spare_mode, spare_running, spare_taken;
    int faulted;        /* a runner of this host broke (RUNNER_SPARE_AFTER_FAULT starts spares) */
    int fresh;          /* the runner in use was spawned, not a spare that took over */
    struct buf pending; /* control bytes not yet written to its stdin */
};

int runner_host_new(struct runner_host **out, const char *program, const char *const *env,
                    int device, int max_kernels)
{
    struct runner_host *h = xcalloc(1, sizeof(*h));
    h->program = xstrdup(program);
    if (env) {
        size_t n = 0;
        while (env[n])
            n++;
        h->env = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
            h->env[i] = xstrdup(env[i]);
    }
    h->device = device;
    h->max_kernels = max_kernels;
    buf_init(&h->pending, 0);
    signal(SIGPIPE, SIG_IGN); /* a runner that died must not take us with it */
    *out = h;
    return 0;
}

void runner_host_set_spare(struct runner_host *h, int mode)
{
    h->spare_mode = mode;
}

int runner_host_spares_taken(const struct runner_host *h)
{
    return h->spare_taken;
}

int runner_host_has_spare(const struct runner_host *h)
{
    return h->spare_running;
}

static int spawn(struct runner_host *h, struct runner_proc *ch)
{
    const char *argv[4];
    char dev[16];
    snprintf(dev, sizeof(dev), "%d", h->device);
    argv[0] = h->program;
    argv[1] = "--device";
    argv[2] = dev;
    argv[3] = NULL;
    int rc = runner_proc_start(ch, argv, (const char *const *)h->env, NULL);
    if (rc < 0) {
        runner_proc_release(ch);
        return rc;
    }
    fcntl(ch->gate_fd, F_SETFL, O_NONBLOCK);
    return 0;
}

/* A spare runner beside the one in use (its process start and CUDA context creation run while
 * the other measures), unless turned off or already there. With RUNNER_SPARE_AFTER_FAULT only
 * once a runner of this host broke: a context made on the GPU while a kernel measures slows
 * that kernel (a chunk's first kernel under lscat-mpi took 1.20 s with a spare made beside it,
 * 0.98 s without, 0.80 s once started: docs/tune.md "Multi-GPU scaling (#20), session 27"), and
 * a fault-free run never needs one. Beside a freshly spawned runner only
 * once it holds its context (@ready): the driver makes a host's contexts one at a time, whatever
 * the GPU (docs/tune.md "Multi-GPU scaling (#20), session 26"), so a spare started beside it
 * delays it (on 4 GPUs the first results came at 2.2 s with 8 contexts made at once, 1.7 s with
 * 4). After a spare took over, the next spare starts at once: in a run of faults it then
 * queues for its context as early as it can. */
static void start_spare(struct runner_host *h)
{
    if ((h->spare_mode == RUNNER_SPARE_EAGER || (h->spare_mode && h->faulted)) &&
        !h->spare_running && !h->broken && h->running &&
        (h->ch.ready || !h->fresh) && spawn(h, &h->spare) == 0) {
        h->spare_running = 1;
        log_trace("spare_started child=%d", (int)h->spare.pid);
    }
}

/* Read the runner's first lines until it says @ready (at most max_s, or until it ends or says
 * something else first: runner_take_lines reads that). */
static void host_wait_ready(struct runner_host *h, double max_s)
{
    struct runner_proc *ch = &h->ch;
    double end = fs_mono_s() + max_s;
    while (!ch->ready) {
        char *nl = ch->line.len ? memchr(ch->line.data, '\n', ch->line.len) : NULL;
        if (nl) {
            if (strncmp(ch->line.data, "@ready", 6) != 0)
                return;
            size_t len = (size_t)(nl - ch->line.data);
            log_trace("marker child=%d %.*s", (int)ch->pid, (int)len, ch->line.data);
            memmove(ch->line.data, nl + 1, ch->line.len - len - 1);
            buf_setlen(&ch->line, ch->line.len - len - 1);
            ch->ready = 1;
            return;
        }
        double left = end - fs_mono_s();
        if (left <= 0 || ch->reaped)
            return;
        /* its results only: its output, read by the run, is the first kernel's tail */
        struct pollfd p = { ch->res_fd, POLLIN, 0 };
        poll(&p, 1, left < 0.05 ? (int)(left * 1000) + 1 : 50);
        int open = runner_proc_drain(ch->res_fd, ch, 1);
        if (!open && !memchr(ch->line.data, '\n', ch->line.len))
            return; /* it ended (its exit is the run's to judge) */
    }
}

int runner_host_start(struct runner_host *h)
{
    if (h->running || h->broken)
        return 0;
    if (h->spare_running && !runner_proc_exited(&h->spare)) {
        h->ch = h->spare; /* the spare takes over: a fault costs no context creation */
        h->spare_running = 0;
        log_trace("spare_taken child=%d ready=%d age=%.3f", (int)h->ch.pid, h->ch.ready,
                     fs_mono_s() - h->ch.started_s);
        h->spare_taken++;
        h->fresh = 0;
    } else {
        if (h->spare_running) /* it died waiting (no driver?): a fresh start says why */
            runner_proc_release(&h->spare), h->spare_running = 0;
        /* The context gate: a host makes CUDA contexts one at a time whatever the GPU, and 4
         * runners started together all said @ready at 1.69 s on 4 H200s, where one alone takes
         * 0.4 s (docs/tune.md "Multi-GPU scaling (#20), session 28"). One at a time, across
         * lscat processes (a flock in the GPU lock folder, held from the start to @ready, at
         * most 10 s; waited for at most 5 s), the first GPU measures at 0.4 s, the next at 0.8
         * s... A spare is not gated: it starts while its GPU measures. */
        struct gpulock gate;
        double waited = 0, t_gate = fs_mono_s();
        gpulock_context_gate(&gate, &waited);
        int rc = spawn(h, &h->ch);
        if (rc < 0) {
            gpulock_release(&gate);
            h->broken = 1;
            return rc;
        }
        log_trace("runner_started child=%d", (int)h->ch.pid);
        h->fresh = 1;
        if (gate.fd >= 0) {
            host_wait_ready(h, 10.0);
            gpulock_release(&gate);
            log_trace("gate_released held=%.3f ready=%d", fs_mono_s() - t_gate - waited,
                      h->ch.ready);
        }
    }
    h->running = 1;
    h->kernels = 0;
    buf_setlen(&h->pending, 0);
    start_spare(h);
    return 0;
}

int runner_host_running(const struct runner_host *h)
{
    return h->running;
}

int runner_host_broken(const struct runner_host *h)
{
    return h->broken;
}

/* Stop it: `graceful` asks it to quit first (recycling, the end); either way its process group
 * is killed and a detached thread reaps it, so its CUDA context teardown is never waited for. */
static void host_stop(struct runner_host *h, int graceful)
{
    if (!h->running)
        return;
    log_trace("runner_stop child=%d graceful=%d", (int)h->ch.pid, graceful);
    if (!graceful) /* a crash, hang, sticky error or stop: spares from now on */
        h->faulted = 1;
    if (graceful && h->ch.gate_fd >= 0) {
        ssize_t w = write(h->ch.gate_fd, "@quit\n", 6); /* courtesy: it is killed anyway */
        (void)w;
    }
    if (!h->ch.reaped)
        runner_proc_reap_later(&h->ch);
    runner_proc_release(&h->ch);
    h->running = 0;
}

void runner_host_free(struct runner_host *h)
{
    if (!h)
        return;
    host_stop(h, 1);
    if (h->spare_running) {
        runner_proc_reap_later(&h->spare);
        runner_proc_release(&h->spare);
    }
    buf_release(&h->pending);
    proc_env_free(h->env);
    free(h->program);
    free(h);
}

/* "@run\t<so>\t<args...>" + configurations + "@end". Returns -1 when an argument cannot
 * travel on one tab-separated line. */
static int host_queue(struct runner_host *h, const struct runner_options *o,
                      const struct tune_config *c, int n, int occupancy)
{
    const char *argv[64];
    char dev[16];
    int na = runner_harness_args(argv, 64, dev, o, occupancy);
    if (strpbrk(o->harness_so, "\t\n"))
        return -1;
    buf_addf(&h->pending, "@run\t%s", o->harness_so);
    for (int i = 0; i < na; i++) {
        if (strpbrk(argv[i], "\t\n"))
            return -1;
        buf_addf(&h->pending, "\t%s", argv[i]);
    }
    buf_addch(&h->pending, '\n');
    runner_format_configs(&h->pending, c, n);
    buf_adds(&h->pending, "@end\n");
    return 0;
}

static void host_flush(struct runner_host *h)
{
    while (h->pending.len > 0) {
        ssize_t w = write(h->ch.gate_fd, h->pending.data, h->pending.len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w < 0 && errno != EAGAIN)
                buf_setlen(&h->pending, 0); /* it died: its exit status tells */
            return;
        }
        memmove(h->pending.data, h->pending.data + w, h->pending.len - (size_t)w);
        buf_setlen(&h->pending, h->pending.len - (size_t)w);
    }
}

/* The kernel ended with "@done rc" from the runner. */
static int host_done(struct runner_host *h, struct runner_summary *out,
                     const struct tune_config *cfgs, int n, int *i,
                     const struct runner_callbacks *cb)
{
    int code = h->ch.done_rc;
    log_trace("done child=%d rc=%d", (int)h->ch.pid, code);
    if (code == 126) { /* could not load harness.so: the executable runs it */
        snprintf(out->reason, sizeof(out->reason), "lscat-runner: %s", h->ch.done_msg);
        return RUNNER_FALLBACK;
    }
    h->kernels++;
    if (code == 0)
        return RUNNER_DONE; /* with configurations unreported, runner_run counts a failure */
    if (code == 3 || code == 4) /* device unusable / context gone: a fresh runner */
        host_stop(h, 0);
    h->ch.status = (code & 0xff) << 8; /* judged as that exit status */
    return runner_judge_exit(&h->ch, out, cfgs, n, i, cb);
}

/* The runner process ended while a kernel ran in it. */
static int host_exited(struct runner_host *h, struct runner_summary *out,
                       const struct tune_config *cfgs, int n, int *i,
                       const struct runner_callbacks *cb)
{
    int rc;
    if (!h->ch.ready) { /* it never got a context: do without it */
        char tail[320];
        runner_proc_tail(tail, sizeof(tail), &h->ch);
        snprintf(out->reason, sizeof(out->reason), "lscat-runner could not start: %s", tail);
        h->broken = 1;
        host_stop(h, 0);
        return RUNNER_FALLBACK;
    }
    rc = runner_judge_exit(&h->ch, out, cfgs, n, i, cb);
    host_stop(h, 0);
    return rc;
}

static int host_timeout(struct runner_host *h, struct runner_summary *out,
                        const struct runner_options *o, const struct tune_config *cfgs, int *i,
                        const struct runner_callbacks *cb, int first)
{
    int rc;
    host_stop(h, 0);
    rc = runner_record_timeout(cb, out, o, &cfgs[*i], first);
    (*i)++;
    return rc < 0 ? rc : RUNNER_FAILED;
}

int runner_run_in_host(struct runner_summary *out, const struct runner_options *o,
                       const struct tune_config *cfgs, int n, int *i,
                       const struct runner_callbacks *cb, int occupancy)
{
    struct runner_host *h = o->host;
    struct runner_proc *ch = &h->ch;
    int rc, first_i = *i;
    if (h->running && h->max_kernels > 0 && h->kernels >= h->max_kernels)
        host_stop(h, 1); /* recycled: whatever a harness leaked goes with it */
    if (!h->running) {
        if (runner_host_start(h) < 0) {
            snprintf(out->reason, sizeof(out->reason), "%s", lscat_error_last());
            return RUNNER_FALLBACK;
        }
        out->processes++;
    }
    if (host_queue(h, o, cfgs + *i, n - *i, occupancy) < 0) {
        buf_setlen(&h->pending, 0);
        snprintf(out->reason, sizeof(out->reason), "an argument holds a tab or newline");
        return RUNNER_FALLBACK;
    }
    out->in_runner = 1;
    log_trace("kernel child=%d configs=%d first=%dx%d %dx%dx%d so=%s", (int)ch->pid, n - *i,
                 cfgs[*i].w, cfgs[*i].h, cfgs[*i].bx, cfgs[*i].by, cfgs[*i].bz, o->harness_so);
    ch->done_rc = -1;
    ch->tail_len = 0; /* the output tail is this kernel's */
    /* The start-up allowance is for a runner still creating its context: one that said
     * @ready (or a spare started long enough ago) has paid it. */
    double age = fs_mono_s() - ch->started_s;
    double startup = ch->ready || age >= o->startup_s ? 0 : o->startup_s - age;
    out->deadline_len_s = o->config_timeout_s + startup;
    double deadline = fs_mono_s() + out->deadline_len_s;
    while (1) {
        struct pollfd p[3] = { { ch->res_fd, POLLIN, 0 }, { ch->out_fd, POLLIN, 0 },
                               { h->pending.len ? ch->gate_fd : -1, POLLOUT, 0 } };
        poll(p, 3, runner_poll_ms(deadline));
        host_flush(h);
        runner_proc_drain(ch->res_fd, ch, 1);
        runner_proc_drain(ch->out_fd, ch, 0);
        rc = runner_take_lines(ch, out, cfgs, n, i, cb, &deadline, o->config_timeout_s);
        if (rc != 0) {
            host_stop(h, 0); /* a callback error or a protocol breach */
            return rc;
        }
        start_spare(h); /* a fresh runner's, once it said @ready */
        if (ch->done_rc >= 0)
            return host_done(h, out, cfgs, n, i, cb);
        if (o->stop && *o->stop) {
            host_stop(h, 0);
            out->interrupted = 1;
            return RUNNER_STOPPED;
        }
        if (runner_proc_exited(ch)) {
            log_trace("runner_exited child=%d status=%d", (int)ch->pid, ch->status);
            rc = runner_take_lines(ch, out, cfgs, n, i, cb, &deadline, o->config_timeout_s);
            if (rc != 0) {
                host_stop(h, 0);
                return rc;
            }
            if (ch->done_rc >= 0 && ch->done_rc != 126) {
                rc = host_done(h, out, cfgs, n, i, cb);
                host_stop(h, 0);
                return rc;
            }
            return host_exited(h, out, cfgs, n, i, cb);
        }
        if (fs_mono_s() > deadline && *i < n) {
            log_trace("deadline child=%d after=%.3f", (int)ch->pid, out->deadline_len_s);
            return host_timeout(h, out, o, cfgs, i, cb, *i == first_i);
        }
    }
}
