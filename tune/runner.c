/* One harness process at a time per kernel and GPU: spawn it in its own process group with the
 * remaining configurations on stdin (a memfd, so nothing blocks), read result lines from a
 * pipe it opens as /dev/fd/3, and watch a per-configuration deadline. Crashes, sticky CUDA
 * errors (exit 4) and hangs restart it at the next configuration. The child-process plumbing
 * and the judgement here also serve lscat-runner (tune/runner_host.c, tune/runner_proc.h). */
#include "tune/runner.h"
#include "tune/runner_proc.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double runner_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : 0;
}

static int inum(json_t *o, const char *k, int dflt)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? (int)json_number_value(v) : dflt;
}

int runner_parse_line(struct tune_result *out, int *occ_block, int *occ_grid, const char *line)
{
    json_t *o = json_loads(line, 0, NULL), *v;
    int kind = 0;
    if (!json_is_object(o))
        goto done;
    if (json_object_get(o, "harness")) {
        kind = 2;
        goto done;
    }
    if ((v = json_object_get(o, "occupancy_block")) && json_is_number(v)) {
        *occ_block = (int)json_number_value(v);
        *occ_grid = inum(o, "occupancy_grid", 0);
        kind = 3;
        goto done;
    }
    json_t *st = json_object_get(o, "status"), *bl = json_object_get(o, "block");
    if (!json_is_string(st) || !json_is_array(bl) || json_array_size(bl) != 3)
        goto done;
    memset(out, 0, sizeof(*out));
    out->cfg.w = inum(o, "w", 0);
    out->cfg.h = inum(o, "h", 0);
    out->cfg.bx = (int)json_number_value(json_array_get(bl, 0));
    out->cfg.by = (int)json_number_value(json_array_get(bl, 1));
    out->cfg.bz = (int)json_number_value(json_array_get(bl, 2));
    snprintf(out->status, sizeof(out->status), "%s", json_string_value(st));
    json_t *gr = json_object_get(o, "grid"), *err = json_object_get(o, "error");
    for (int i = 0; i < 3 && json_is_array(gr); i++)
        out->grid[i] = (int)json_number_value(json_array_get(gr, (size_t)i));
    if (json_is_string(err))
        snprintf(out->error, sizeof(out->error), "%s", json_string_value(err));
    out->median_ns = num(o, "median_ns");
    out->min_ns = num(o, "min_ns");
    out->max_ns = num(o, "max_ns");
    out->mean_ns = num(o, "mean_ns");
    out->stddev_ns = num(o, "stddev_ns");
    out->mad_ns = num(o, "mad_ns");
    out->p10_ns = num(o, "p10_ns");
    out->p90_ns = num(o, "p90_ns");
    out->samples = inum(o, "samples", 0);
    out->launches_per_sample = inum(o, "launches_per_sample", 0);
    out->graph_nodes = inum(o, "graph_nodes", -1);
    out->sm_mhz_before = inum(o, "sm_mhz_before", -1);
    out->sm_mhz_after = inum(o, "sm_mhz_after", -1);
    out->mem_mhz = inum(o, "mem_mhz", -1);
    out->temp_c_before = inum(o, "temp_c_before", -1);
    out->temp_c_after = inum(o, "temp_c_after", -1);
    out->clocks_locked = inum(o, "clocks_locked", 0);
    json_t *ck = json_object_get(o, "check"), *why = json_object_get(o, "check_why");
    if (json_is_string(ck))
        snprintf(out->check, sizeof(out->check), "%s", json_string_value(ck));
    if (json_is_string(why))
        snprintf(out->check_why, sizeof(out->check_why), "%s", json_string_value(why));
    out->check_ns = json_is_number(json_object_get(o, "check_ns")) ||
                    json_is_number(json_object_get(o, "check_ref_ns"))
                        ? (long long)(num(o, "check_ns") + num(o, "check_ref_ns")) : -1;
    kind = 1;
done:
    json_decref(o);
    return kind;
}


void runner_format_configs(struct buf *b, const struct tune_config *c, int n)
{
    for (int i = 0; i < n; i++)
        buf_addf(b, "%d %d %d %d %d\n", c[i].w, c[i].h, c[i].bx, c[i].by, c[i].bz);
}

static int write_configs(const struct tune_config *c, int n)
{
    int fd = memfd_create("lscat-configs", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    struct buf b = BUF_INIT;
    runner_format_configs(&b, c, n);
    size_t off = 0;
    while (off < b.len) {
        ssize_t w = write(fd, b.data + off, b.len - off);
        if (w <= 0) {
            close(fd);
            fd = -1;
            break;
        }
        off += (size_t)w;
    }
    buf_release(&b);
    if (fd >= 0)
        lseek(fd, 0, SEEK_SET);
    return fd;
}

/* In the child: stdin = configs, fd 3 = results, stdout/stderr = the output pipe. */
static void exec_child(const char *const *argv, const char *const *env, int in_fd, int res_fd,
                       int out_fd)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_DFL);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0 || dup2(res_fd, 3) < 0)
        _exit(127);
    execve(argv[0], (char *const *)argv, (char *const *)(env ? env : (const char *const *)environ));
    _exit(127);
}

/* Start argv[0] in its own process group: stdin a pipe we write later (gated: its write end
 * in ch->gate_fd) or in_fd; fd 3 and stdout/stderr pipes to us. Consumes in_fd. */
int runner_proc_start(struct runner_proc *ch, const char *const *argv, const char *const *env,
                       int in_fd, int gated)
{
    int res[2] = { -1, -1 }, out[2] = { -1, -1 }, gate[2] = { -1, -1 };
    int rc = 0;
    memset(ch, 0, sizeof(*ch));
    ch->res_fd = ch->out_fd = ch->gate_fd = -1;
    ch->done_rc = -1;
    buf_init(&ch->line, 256);
    if (gated && pipe2(gate, O_CLOEXEC) == 0) {
        in_fd = gate[0];
        gate[0] = -1;
    }
    if (in_fd < 0 || pipe2(res, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
        rc = lscat_error_set("cannot set up pipes for '%s': %s", argv[0], strerror(errno));
        goto done;
    }
    ch->pid = fork();
    if (ch->pid < 0) {
        rc = lscat_error_set("cannot start '%s': %s", argv[0], strerror(errno));
        goto done;
    }
    if (ch->pid == 0)
        exec_child(argv, env, in_fd, res[1], out[1]);
    setpgid(ch->pid, ch->pid);
    ch->res_fd = res[0];
    ch->out_fd = out[0];
    ch->gate_fd = gate[1];
    res[0] = out[0] = gate[1] = -1;
    fcntl(ch->res_fd, F_SETFL, O_NONBLOCK);
    fcntl(ch->out_fd, F_SETFL, O_NONBLOCK);
done:
    for (int i = 0; i < 2; i++) {
        if (res[i] >= 0)
            close(res[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (gate[i] >= 0)
            close(gate[i]);
    }
    if (in_fd >= 0)
        close(in_fd);
    return rc;
}

/* The harness's arguments after argv[0]: results on fd 3, device, occupancy, extra options. */
int runner_harness_args(const char **argv, int max, char dev[16], const struct runner_options *o,
                        int occupancy)
{
    int na = 0;
    argv[na++] = "--results";
    argv[na++] = "/dev/fd/3";
    if (o->device >= 0) {
        snprintf(dev, 16, "%d", o->device);
        argv[na++] = "--device";
        argv[na++] = dev;
    }
    if (occupancy)
        argv[na++] = "--occupancy";
    for (int i = 0; o->extra_args && o->extra_args[i] && na < max - 1; i++)
        argv[na++] = o->extra_args[i];
    argv[na] = NULL;
    return na;
}

/* Start the harness. gated: stdin is a pipe we fill later (ch->gate_fd), else a memfd
 * holding cfgs. */
static int spawn(struct runner_proc *ch, const struct runner_options *o,
                 const struct tune_config *c, int n, int occupancy, int gated)
{
    const char *argv[64];
    char dev[16];
    argv[0] = o->harness;
    runner_harness_args(argv + 1, 63, dev, o, occupancy);
    return runner_proc_start(ch, argv, o->env, gated ? -1 : write_configs(c, n), gated);
}

static void keep_tail(struct runner_proc *ch, const char *d, size_t n)
{
    if (n >= TAIL_BYTES) {
        memcpy(ch->tail, d + n - TAIL_BYTES, TAIL_BYTES);
        ch->tail_len = TAIL_BYTES;
        return;
    }
    if (ch->tail_len + n > TAIL_BYTES) {
        size_t drop = ch->tail_len + n - TAIL_BYTES;
        memmove(ch->tail, ch->tail + drop, ch->tail_len - drop);
        ch->tail_len -= drop;
    }
    memcpy(ch->tail + ch->tail_len, d, n);
    ch->tail_len += n;
}

/* Read what is there; returns 0 at EOF, 1 otherwise. */
int runner_proc_drain(int fd, struct runner_proc *ch, int is_results)
{
    char b[8192];
    while (1) {
        ssize_t r = read(fd, b, sizeof(b));
        if (r == 0)
            return 0;
        if (r < 0)
            return errno == EINTR ? runner_proc_drain(fd, ch, is_results)
                                  : (errno == EAGAIN ? 1 : 0);
        if (is_results)
            buf_add(&ch->line, b, (size_t)r);
        else
            keep_tail(ch, b, (size_t)r);
    }
}

static void kill_child(struct runner_proc *ch)
{
    if (ch->pid > 0) {
        kill(-ch->pid, SIGKILL);
        if (!ch->reaped) {
            while (waitpid(ch->pid, &ch->status, 0) < 0 && errno == EINTR)
                ;
            ch->reaped = 1;
        }
    }
}

static void *reaper(void *arg)
{
    pid_t pid = (pid_t)(intptr_t)arg;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* A harness that has reported everything is left to exit on its own (CUDA context teardown
 * takes a good part of a second) while the sweep goes on; a detached thread reaps it, and
 * anything it left in its process group is killed now. */
void runner_proc_reap_later(struct runner_proc *ch)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, reaper, (void *)(intptr_t)ch->pid) == 0)
        ch->reaped = 1; /* runner_proc_release must not wait */
    pthread_attr_destroy(&a);
}

void runner_proc_release(struct runner_proc *ch)
{
    kill_child(ch);
    if (ch->res_fd >= 0)
        close(ch->res_fd);
    if (ch->out_fd >= 0)
        close(ch->out_fd);
    if (ch->gate_fd >= 0)
        close(ch->gate_fd);
    buf_release(&ch->line);
}

/* Hand a prestarted harness its configurations (they fit the pipe: checked at prestart). */
static void open_gate(struct runner_proc *ch, const struct tune_config *c, int n)
{
    struct buf b = BUF_INIT;
    size_t off = 0;
    runner_format_configs(&b, c, n);
    while (off < b.len) {
        ssize_t w = write(ch->gate_fd, b.data + off, b.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break; /* it died waiting: its exit status tells */
        off += (size_t)w;
    }
    buf_release(&b);
    close(ch->gate_fd);
    ch->gate_fd = -1;
}

#define GATE_MAX_BYTES 60000 /* below the 64 KiB pipe capacity: one write never blocks */

int runner_prestart(struct runner_child **out, const struct runner_options *o,
                    const struct tune_config *cfgs, int n)
{
    struct buf b = BUF_INIT;
    struct runner_proc *ch;
    int rc;
    *out = NULL;
    runner_format_configs(&b, cfgs, n);
    size_t len = b.len;
    buf_release(&b);
    if (len > GATE_MAX_BYTES)
        return 0;
    ch = xcalloc(1, sizeof(*ch));
    rc = spawn(ch, o, cfgs, n, o->want_occupancy, 1);
    if (rc < 0) {
        runner_proc_release(ch);
        free(ch);
        return rc;
    }
    *out = (struct runner_child *)ch;
    return 0;
}

void runner_child_free(struct runner_child *c)
{
    if (!c)
        return;
    runner_proc_release((struct runner_proc *)c);
    free(c);
}

/* The last bytes of the harness's own output, on one line, for error messages. */
void runner_proc_tail(char *out, size_t size, const struct runner_proc *ch)
{
    size_t start = ch->tail_len > 300 ? ch->tail_len - 300 : 0, k = 0;
    for (size_t j = start; j < ch->tail_len && k + 1 < size; j++) {
        unsigned char c = (unsigned char)ch->tail[j];
        out[k++] = (c == '\n' || c == '\r') ? '|' : (c < 0x20 || c > 0x7e ? '?' : (char)c);
    }
    out[k] = 0;
}

/* Record cfg as crashed/timeout with a message, without a line from the harness. */
int runner_record_failure(const struct runner_callbacks *cb, struct runner_summary *out,
                          const struct tune_config *cfg, const char *status, const char *msg)
{
    struct tune_result r;
    memset(&r, 0, sizeof(r));
    r.cfg = *cfg;
    snprintf(r.status, sizeof(r.status), "%s", status);
    snprintf(r.error, sizeof(r.error), "%s", msg);
    r.sm_mhz_before = r.sm_mhz_after = r.mem_mhz = r.temp_c_before = r.temp_c_after = -1;
    out->results++;
    return cb->on_result(cb->ctx, &r);
}


/* Handle the complete lines received so far. Returns 0, RUNNER_GIVE_UP, or <0 (callback). */
int runner_take_lines(struct runner_proc *ch, struct runner_summary *out,
                      const struct tune_config *cfgs,
                      int n, int *i, const struct runner_callbacks *cb, double *deadline,
                      double timeout_s)
{
    char *nl;
    while ((nl = memchr(ch->line.data, '\n', ch->line.len)) != NULL) {
        size_t len = (size_t)(nl - ch->line.data);
        char *line = xstrndup(ch->line.data, len);
        memmove(ch->line.data, nl + 1, ch->line.len - len - 1);
        buf_setlen(&ch->line, ch->line.len - len - 1);
        struct tune_result r;
        int ob = 0, og = 0, rc = 0, kind = 0;
        if (line[0] == '@') { /* lscat-runner's markers */
            int code = -1, off = 0;
            if (!strncmp(line, "@ready", 6))
                ch->ready = 1;
            else if (sscanf(line, "@done %d%n", &code, &off) == 1) {
                ch->done_rc = code;
                snprintf(ch->done_msg, sizeof(ch->done_msg), "%s", line + off + (line[off] == ' '));
                free(line);
                return 0; /* the kernel is over: what follows belongs to the next */
            }
        } else {
            kind = runner_parse_line(&r, &ob, &og, line);
        }
        if (kind == 2 && cb->on_header)
            cb->on_header(cb->ctx, line);
        else if (kind == 3 && cb->on_occupancy)
            cb->on_occupancy(cb->ctx, ob, og);
        else if (kind == 1) {
            if (*i >= n || memcmp(&r.cfg, &cfgs[*i], sizeof(r.cfg)) != 0) {
                snprintf(out->reason, sizeof(out->reason),
                         "harness broke the protocol: result for %d %d %d %d %d, expected %s",
                         r.cfg.w, r.cfg.h, r.cfg.bx, r.cfg.by, r.cfg.bz,
                         *i >= n ? "none" : "the next configuration in input order");
                free(line);
                return RUNNER_GIVE_UP;
            }
            out->results++;
            out->ok += strcmp(r.status, "ok") == 0;
            (*i)++;
            *deadline = runner_now_s() + timeout_s;
            rc = cb->on_result(cb->ctx, &r);
        }
        free(line);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* How the process ended decides what the configuration in flight was. */
int runner_judge_exit(struct runner_proc *ch, struct runner_summary *out,
                      const struct tune_config *cfgs,
                      int n, int *i, const struct runner_callbacks *cb)
{
    char msg[512], tail[320];
    int st = ch->status, rc;
    runner_proc_tail(tail, sizeof(tail), ch);
    if (WIFEXITED(st) && (WEXITSTATUS(st) == 2 || WEXITSTATUS(st) == 127)) {
        snprintf(out->reason, sizeof(out->reason), "harness %s (exit %d): %s",
                 WEXITSTATUS(st) == 2 ? "refused its command line or input" : "could not run",
                 WEXITSTATUS(st), tail);
        return RUNNER_GIVE_UP;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 4) {
        out->sticky_errors++;
        return *i >= n ? RUNNER_DONE : RUNNER_FAILED;
    }
    if (*i >= n)
        return RUNNER_DONE;
    if (WIFSIGNALED(st))
        snprintf(msg, sizeof(msg), "harness killed by signal %d (%s): %s", WTERMSIG(st),
                 strsignal(WTERMSIG(st)), tail);
    else
        snprintf(msg, sizeof(msg), "harness exited with status %d before reporting this "
                 "configuration: %s", WEXITSTATUS(st), tail);
    out->crashes++;
    rc = runner_record_failure(cb, out, &cfgs[*i], "crashed", msg);
    (*i)++;
    return rc < 0 ? rc : RUNNER_FAILED;
}

static int run_process(struct runner_summary *out, const struct runner_options *o,
                       const struct tune_config *cfgs, int n, int *i,
                       const struct runner_callbacks *cb, int occupancy,
                       struct runner_child *pre)
{
    struct runner_proc ch;
    int rc = 0;
    if (pre) {
        ch = *(struct runner_proc *)pre;
        free(pre);
        open_gate(&ch, cfgs + *i, n - *i);
    } else {
        rc = spawn(&ch, o, cfgs + *i, n - *i, occupancy, 0);
    }
    double deadline = runner_now_s() + o->config_timeout_s + o->startup_s;
    int res_open = 1, out_open = 1;
    if (rc < 0)
        goto done;
    out->processes++;
    while (1) {
        struct pollfd p[2] = { { res_open ? ch.res_fd : -1, POLLIN, 0 },
                               { out_open ? ch.out_fd : -1, POLLIN, 0 } };
        double left = deadline - runner_now_s();
        int wait_ms = left <= 0 ? 0 : (left > 0.1 ? 100 : (int)(left * 1000) + 1);
        poll(p, 2, wait_ms);
        if (res_open)
            res_open = runner_proc_drain(ch.res_fd, &ch, 1);
        if (out_open)
            out_open = runner_proc_drain(ch.out_fd, &ch, 0);
        rc = runner_take_lines(&ch, out, cfgs, n, i, cb, &deadline, o->config_timeout_s);
        if (rc != 0)
            goto done;
        if (o->stop && *o->stop) {
            out->interrupted = 1;
            rc = RUNNER_STOPPED;
            goto done;
        }
        if (*i >= n && !ch.reaped) { /* all reported: its exit (context teardown) is not ours */
            runner_proc_reap_later(&ch);
            rc = RUNNER_DONE;
            goto done;
        }
        if (!ch.reaped && waitpid(ch.pid, &ch.status, WNOHANG) == ch.pid) {
            ch.reaped = 1;
            kill(-ch.pid, SIGKILL); /* anything it left behind */
            if (res_open)
                runner_proc_drain(ch.res_fd, &ch, 1);
            runner_proc_drain(ch.out_fd, &ch, 0);
            rc = runner_take_lines(&ch, out, cfgs, n, i, cb, &deadline, o->config_timeout_s);
            if (rc != 0)
                goto done;
            rc = runner_judge_exit(&ch, out, cfgs, n, i, cb);
            goto done;
        }
        if (runner_now_s() > deadline && *i < n) {
            char msg[128];
            kill_child(&ch);
            snprintf(msg, sizeof(msg), "no result within %.1f s: killed",
                     o->config_timeout_s + (out->results == 0 ? o->startup_s : 0));
            out->timeouts++;
            rc = runner_record_failure(cb, out, &cfgs[*i], "timeout", msg);
            (*i)++;
            rc = rc < 0 ? rc : RUNNER_FAILED;
            goto done;
        }
    }
done:
    runner_proc_release(&ch);
    return rc;
}

void tune_skip_describe(char *out, size_t size, const struct tune_skip *s)
{
    snprintf(out, size, "block %dx%dx%d failed with a sticky CUDA error at %dx%d: %s", s->at.bx,
             s->at.by, s->at.bz, s->at.w, s->at.h, s->error);
}

int tune_skip_parse(struct tune_skip *out, const struct tune_config *cfg, const char *error)
{
    static const char mark[] = " failed with a sticky CUDA error at ";
    const char *p = error ? strstr(error, mark) : NULL;
    int w = 0, h = 0, off = 0;
    memset(out, 0, sizeof(*out));
    out->at = *cfg;
    if (!p || sscanf(p + strlen(mark), "%dx%d: %n", &w, &h, &off) != 2 || off == 0 || w <= 0 ||
        h <= 0)
        return 0;
    out->at.w = w;
    out->at.h = h;
    snprintf(out->error, sizeof(out->error), "%s", p + strlen(mark) + off);
    return 1;
}

/* The skip rules of one kernel's run, and the last result passed on (to tell which
 * configuration a sticky exit belongs to). Its callbacks wrap the caller's. */
struct skipper {
    const struct runner_callbacks *cb;
    struct tune_skip *v;
    int n;
    size_t cap;
    struct tune_result last;
    int have_last;
};

static void sk_header(void *ctx, const char *json)
{
    struct skipper *k = ctx;
    if (k->cb->on_header)
        k->cb->on_header(k->cb->ctx, json);
}

static void sk_occupancy(void *ctx, int block, int grid)
{
    struct skipper *k = ctx;
    if (k->cb->on_occupancy)
        k->cb->on_occupancy(k->cb->ctx, block, grid);
}

static int sk_result(void *ctx, const struct tune_result *r)
{
    struct skipper *k = ctx;
    k->last = *r;
    k->have_last = 1;
    return k->cb->on_result(k->cb->ctx, r);
}

static int same_shape(const struct tune_config *a, const struct tune_config *b)
{
    return a->bx == b->bx && a->by == b->by && a->bz == b->bz;
}

static const struct tune_skip *skip_for(const struct skipper *k, const struct tune_config *c)
{
    for (int j = 0; j < k->n; j++)
        if (same_shape(&k->v[j].at, c) && c->w >= k->v[j].at.w && c->h >= k->v[j].at.h)
            return &k->v[j];
    return NULL;
}

/* Report every configuration of todo[from..*n) that a rule covers as skipped and drop it from
 * todo (the rest keep their order). Returns 0 or <0 (callback). */
static int apply_skips(struct runner_summary *out, struct skipper *k, struct tune_config *todo,
                       int *n, int from)
{
    int kept = from, rc = 0;
    for (int j = from; j < *n; j++) {
        const struct tune_skip *s = rc == 0 ? skip_for(k, &todo[j]) : NULL;
        if (!s) {
            todo[kept++] = todo[j];
            continue;
        }
        char msg[512];
        tune_skip_describe(msg, sizeof(msg), s);
        out->skipped++;
        rc = runner_record_failure(k->cb, out, &todo[j], "skipped", msg);
    }
    *n = kept;
    return rc;
}

/* After a process ended with a sticky error: when it belongs to todo[i-1] (the last result,
 * cuda_error, reported by this process: `fresh`) and is that shape's first, add a rule and skip
 * what it covers. *counted says whether the failure counts toward max_failures (not for a
 * shape's first). */
static int note_sticky(struct runner_summary *out, struct skipper *k, struct tune_config *todo,
                       int *n, int i, int fresh, int *counted)
{
    *counted = 1;
    if (i <= 0 || !fresh || !k->have_last || strcmp(k->last.status, "cuda_error") != 0 ||
        memcmp(&k->last.cfg, &todo[i - 1], sizeof(k->last.cfg)) != 0)
        return 0;
    for (int j = 0; j < k->n; j++)
        if (same_shape(&k->v[j].at, &todo[i - 1]))
            return 0; /* failed before (at a larger size, as listed): counts */
    XGROW(k->v, (size_t)k->n + 1, k->cap);
    struct tune_skip *s = &k->v[k->n++];
    s->at = todo[i - 1];
    snprintf(s->error, sizeof(s->error), "%.255s", k->last.error);
    *counted = 0;
    out->shapes_failed++;
    return apply_skips(out, k, todo, n, i);
}

static int run_todo(struct runner_summary *out, const struct runner_options *o,
                    struct tune_config *todo, int n0, const struct runner_callbacks *cb,
                    struct skipper *k)
{
    int i = 0, n = n0, rc, failures = 0, occupancy = o->want_occupancy;
    struct runner_child *pre = o->prestarted;
    if ((rc = apply_skips(out, k, todo, &n, 0)) < 0 || n == 0) {
        runner_child_free(pre);
        return rc;
    }
    int use_host = o->host && o->harness_so && !runner_host_broken(o->host);
    if (use_host) {
        runner_child_free(pre); /* prestarted for nothing: the runner takes it */
        pre = NULL;
    }
    while (i < n) {
        int sticky = out->sticky_errors, results = out->results, counted = 1;
        if (use_host) {
            rc = runner_run_in_host(out, o, todo, n, &i, cb, occupancy);
            if (rc == RUNNER_FALLBACK) {
                out->fell_back = 1;
                use_host = 0;
                continue; /* the same configurations, as harness processes */
            }
        } else {
            rc = run_process(out, o, todo, n, &i, cb, occupancy, pre);
        }
        pre = NULL;
        occupancy = 0;
        if (rc < 0)
            return rc;
        if (rc == RUNNER_STOPPED)
            return 0;
        if (rc == RUNNER_GIVE_UP) {
            out->given_up = 1;
            return 0;
        }
        if (out->sticky_errors > sticky) {
            int src = note_sticky(out, k, todo, &n, i, out->results > results, &counted);
            if (src < 0)
                return src;
        }
        if (rc == RUNNER_FAILED && counted && ++failures >= o->max_failures && i < n) {
            out->given_up = 1;
            snprintf(out->reason, sizeof(out->reason),
                     "%d harness failures (%d crashed, %d timed out, %d sticky CUDA errors); "
                     "%d of %d configurations left unmeasured%s",
                     failures, out->crashes, out->timeouts,
                     out->sticky_errors - out->shapes_failed, n - i, n0,
                     out->shapes_failed ? " (block shapes whose first sticky error skipped "
                                          "their larger sizes are not counted)" : "");
            return 0;
        }
        if (rc == RUNNER_DONE && i < n) {
            /* exited 0 (or 4) with configurations left and nothing recorded: never loop */
            if (++failures >= o->max_failures) {
                out->given_up = 1;
                snprintf(out->reason, sizeof(out->reason), "harness keeps exiting early");
                return 0;
            }
        }
    }
    return 0;
}

int runner_run(struct runner_summary *out, const struct runner_options *o,
               const struct tune_config *cfgs, int n, const struct runner_callbacks *cb)
{
    struct skipper k;
    memset(out, 0, sizeof(*out));
    memset(&k, 0, sizeof(k));
    k.cb = cb;
    for (int j = 0; j < o->nskips; j++) {
        XGROW(k.v, (size_t)k.n + 1, k.cap);
        k.v[k.n++] = o->skips[j];
    }
    struct runner_callbacks tap = { sk_header, sk_occupancy, sk_result, &k };
    struct tune_config *todo = xmalloc(((size_t)n + 1) * sizeof(*todo));
    if (n > 0)
        memcpy(todo, cfgs, (size_t)n * sizeof(*todo));
    int rc = run_todo(out, o, todo, n, &tap, &k);
    free(todo);
    free(k.v);
    return rc;
}
