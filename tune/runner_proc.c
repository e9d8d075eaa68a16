/* The child-process side of tune's runner, shared by both ways a kernel runs (a harness
 * process per kernel, tune/runner.c; lscat-runner, tune/runner_host.c): starting a child
 * through common/proc, reading its result lines and output tail, and judging its results and
 * its end. Both call down into this file, never into each other. */
#include "tune/runner_proc.h"

#include "common/buf.h"
#include "common/cudadev.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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
    out->samples_planned = inum(o, "samples_planned", 0);
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

/* In the child, after fork: it dies with the thread that started it (no orphaned harness
 * keeps a GPU busy when lscat is killed). */
static int die_with_parent(void *arg)
{
    (void)arg;
    return prctl(PR_SET_PDEATHSIG, SIGKILL) < 0;
}

/* Start argv[0] through common/proc in its own process group: stdin a pipe we write later
 * (input NULL: its write end in ch->gate_fd) or a memory file holding input; fd 3 and
 * stdout+stderr pipes to us. */
int runner_proc_start(struct runner_proc *ch, const char *const *argv, const char *const *env,
                      const struct buf *input)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_child c;
    memset(ch, 0, sizeof(*ch));
    ch->pid = -1;
    ch->res_fd = ch->out_fd = ch->gate_fd = -1;
    ch->done_rc = -1;
    buf_init(&ch->line, 256);
    o.argv = argv;
    o.env = env;
    o.stdin_data = input ? input->data : NULL;
    o.stdin_len = input ? input->len : 0;
    o.extra_fd = 3;
    o.stderr_to_out = 1;
    o.limits.core_dumps = 1; /* leave the core limit as it is */
    o.child_setup = die_with_parent;
    if (proc_spawn_lasting(&c, &o) < 0) /* its parent-death signal: when tune ends */
        return LSCAT_ERR;
    ch->pid = c.pid;
    ch->started_s = fs_mono_s();
    ch->res_fd = c.extra_fd;
    ch->out_fd = c.out_fd;
    ch->gate_fd = c.in_fd;
    fcntl(ch->res_fd, F_SETFL, O_NONBLOCK);
    fcntl(ch->out_fd, F_SETFL, O_NONBLOCK);
    return 0;
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

void runner_proc_kill(struct runner_proc *ch)
{
    if (ch->pid > 0) {
        if (!ch->reaped)
            log_trace("kill child=%d", (int)ch->pid);
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
    runner_proc_kill(ch);
    if (ch->res_fd >= 0)
        close(ch->res_fd);
    if (ch->out_fd >= 0)
        close(ch->out_fd);
    if (ch->gate_fd >= 0)
        close(ch->gate_fd);
    buf_release(&ch->line);
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

/* The poll timeout until deadline: at most 100 ms, so a stop flag is seen soon. */
int runner_poll_ms(double deadline)
{
    double left = deadline - fs_mono_s();
    return left <= 0 ? 0 : (left > 0.1 ? 100 : (int)(left * 1000) + 1);
}

/* 1 when the process has exited: reaped, what it left in its group killed, the rest of its
 * output read. */
int runner_proc_exited(struct runner_proc *ch)
{
    if (ch->reaped || waitpid(ch->pid, &ch->status, WNOHANG) != ch->pid)
        return 0;
    ch->reaped = 1;
    kill(-ch->pid, SIGKILL); /* anything it left behind */
    runner_proc_drain(ch->res_fd, ch, 1);
    runner_proc_drain(ch->out_fd, ch, 0);
    return 1;
}

/* Record cfg as timed out (the process was killed): first says its startup time counted. */
int runner_record_timeout(const struct runner_callbacks *cb, struct runner_summary *out,
                          const struct runner_options *o, const struct tune_config *cfg,
                          int first)
{
    char msg[200];
    double waited = out->deadline_len_s > 0 ? out->deadline_len_s
                                            : o->config_timeout_s + (first ? o->startup_s : 0);
    if (waited < o->config_timeout_s)
        snprintf(msg, sizeof(msg), "no result within %.1f s: killed (a hang of a fast kernel: "
                 "5 x what its slowest ok configuration needs, at least 5 s; --timeout %.1f s)",
                 waited, o->config_timeout_s);
    else
        snprintf(msg, sizeof(msg), "no result within %.1f s: killed", waited);
    out->timeouts++;
    return runner_record_failure(cb, out, cfg, "timeout", msg);
}

/* Handle the complete lines received so far. Returns 0, RUNNER_GIVE_UP, or <0 (callback). */
/* Learn from an ok result how slow the kernel is at its largest size so far. */
static void slow_learn(struct runner_summary *out, const struct tune_result *r)
{
    double area = (double)r->cfg.w * r->cfg.h;
    if (strcmp(r->status, "ok") != 0 || r->median_ns <= 0)
        return;
    out->budget_cut += r->samples_planned > 0;
    if (area > out->slow_area)
        out->slow_area = area, out->slow_ns = 0;
    if (area == out->slow_area && r->median_ns > out->slow_ns)
        out->slow_ns = r->median_ns;
}

#define HANG_FACTOR 5.0
#define HANG_FLOOR_S 5.0

double runner_config_timeout(struct runner_summary *out, const struct tune_config *next,
                             double timeout_s)
{
    if (!next || out->slow_ns <= 0 || out->samples < 0)
        return timeout_s;
    /* Work per thread may grow with the size too (loops to n): extrapolate quadratically in
     * the area, on the safe side; the estimate only sets the deadline, never a result. */
    double ratio = (double)next->w * next->h / out->slow_area;
    double est = out->slow_ns / 1e9 * (ratio > 1 ? ratio * ratio : 1);
    int samples = out->samples > 0 ? out->samples : 10;
    double timed = est * samples;
    if (out->budget_s > 0 && timed > out->budget_s)
        timed = out->budget_s > est ? out->budget_s : est;
    double need = 2 * (2 * est + timed) + 1; /* warm-up + calibration + samples, twice */
    if (need <= timeout_s) {
        /* A fast kernel's hang is seen sooner: HANG_FACTOR x what it should need, at least
         * HANG_FLOOR_S (docs/tune.md "Long kernels"); --timeout stays the most it gets. */
        double planned = HANG_FACTOR * need > HANG_FLOOR_S ? HANG_FACTOR * need : HANG_FLOOR_S;
        if (planned >= timeout_s)
            return timeout_s;
        out->deadline_shortened++;
        return planned;
    }
    out->deadline_extended++;
    return need < 4 * timeout_s ? need : 4 * timeout_s;
}

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
            log_trace("marker child=%d %.80s", (int)ch->pid, line);
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
            log_trace("result child=%d %dx%d %dx%dx%d %s check=%s", (int)ch->pid, r.cfg.w,
                         r.cfg.h, r.cfg.bx, r.cfg.by, r.cfg.bz, r.status, r.check);
            (*i)++;
            slow_learn(out, &r);
            out->deadline_len_s = runner_config_timeout(out, *i < n ? &cfgs[*i] : NULL,
                                                        timeout_s);
            *deadline = fs_mono_s() + out->deadline_len_s;
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
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3 && cuda_device_open_failed(tail)) {
        /* the device, not this configuration (docs/tune.md "A device that goes") */
        size_t t = strlen(tail);
        while (t && tail[t - 1] == '|') /* the tail's last newline */
            tail[--t] = '\0';
        out->device_lost = 1;
        snprintf(out->reason, sizeof(out->reason), "the device is unusable: %s", tail);
        return RUNNER_DEVICE_LOST;
    }
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
