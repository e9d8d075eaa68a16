/* One harness process at a time per kernel and GPU: started with the remaining
 * configurations on stdin (a memory file, so nothing blocks), its result lines read from a pipe
 * it opens as /dev/fd/3, a per-configuration deadline watched. Crashes, sticky CUDA errors
 * (exit 4) and hangs restart it at the next configuration; shapes that fail stickily are
 * skipped at larger sizes. Kernels with a harness.so run in lscat-runner instead
 * (tune/runner_host.c); both drive their child through tune/runner_proc.c. */
#include "tune/runner.h"
#include "tune/runner_host.h"
#include "tune/runner_proc.h"

#include "common/buf.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Start the harness. gated: stdin is a pipe we fill later (ch->gate_fd), else a memory
 * file holding cfgs. */
static int spawn(struct runner_proc *ch, const struct runner_options *o,
                 const struct tune_config *c, int n, int occupancy, int gated)
{
    const char *argv[64];
    char dev[16];
    struct buf in = BUF_INIT;
    int rc;
    argv[0] = o->harness;
    runner_harness_args(argv + 1, 63, dev, o, occupancy);
    if (!gated)
        runner_format_configs(&in, c, n);
    rc = runner_proc_start(ch, argv, o->env, gated ? NULL : &in);
    buf_release(&in);
    return rc;
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
    log_trace("process child=%d prestarted=%d configs=%d", rc < 0 ? -1 : (int)ch.pid, !!pre,
                 n - *i);
    out->deadline_len_s = o->config_timeout_s + o->startup_s;
    double deadline = fs_mono_s() + out->deadline_len_s;
    int res_open = 1, out_open = 1;
    if (rc < 0)
        goto done;
    out->processes++;
    while (1) {
        struct pollfd p[2] = { { res_open ? ch.res_fd : -1, POLLIN, 0 },
                               { out_open ? ch.out_fd : -1, POLLIN, 0 } };
        poll(p, 2, runner_poll_ms(deadline));
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
        if (runner_proc_exited(&ch)) {
            log_trace("process_exited child=%d status=%d", (int)ch.pid, ch.status);
            rc = runner_take_lines(&ch, out, cfgs, n, i, cb, &deadline, o->config_timeout_s);
            if (rc != 0)
                goto done;
            rc = runner_judge_exit(&ch, out, cfgs, n, i, cb);
            goto done;
        }
        if (fs_mono_s() > deadline && *i < n) {
            runner_proc_kill(&ch);
            rc = runner_record_timeout(cb, out, o, &cfgs[*i], out->results == 0);
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
    /* The output check's reference block failed with a sticky error (docs/tune.md "Output
     * check"): the configuration in flight was not at fault, so its line is held back
     * (held = 1) and it runs again with --no-check, as does the rest of the kernel's run. */
    int check_off, held;
    char ref_error[344];
    /* The size of the last result and what happened there (runner_options.size_faults). */
    int size_faults, size_w, size_h, size_ok, size_err;
    /* After a cuda_error line, a timeout or a crash, what is recorded waits (holding, queue)
     * until a harness line shows the device still there, or the run ends: when the next start
     * finds the device gone, the failure and the skips it caused were the device's, not the
     * kernel's, and are dropped (docs/tune.md "A device that goes"; a GPU that went away made
     * the runs in flight hang until their deadlines, session 23). */
    int holding;
    struct tune_result *queue;
    int nq;
    size_t qcap;
};

#define REF_FAILED "output check: "

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

/* Pass r on, or queue it while holding. */
static int deliver(struct skipper *k, const struct tune_result *r)
{
    if (!k->holding)
        return k->cb->on_result(k->cb->ctx, r);
    XGROW(k->queue, (size_t)k->nq + 1, k->qcap);
    k->queue[k->nq++] = *r;
    return 0;
}

static int sk_deliver(void *ctx, const struct tune_result *r)
{
    return deliver(ctx, r);
}

/* The device is there (a harness line came, or the run ended without it going): what waited is
 * recorded, in order. */
static int release_queue(struct skipper *k)
{
    int rc = 0;
    k->holding = 0;
    for (int j = 0; j < k->nq && rc >= 0; j++)
        rc = k->cb->on_result(k->cb->ctx, &k->queue[j]);
    k->nq = 0;
    return rc < 0 ? rc : 0;
}

/* A line the harness itself wrote (not a crash, timeout or skip lscat records for it). */
static int harness_line(const struct tune_result *r)
{
    return strcmp(r->status, "crashed") && strcmp(r->status, "timeout") &&
           strcmp(r->status, "skipped");
}

static int sk_result(void *ctx, const struct tune_result *r)
{
    struct skipper *k = ctx;
    int rc;
    if (k->holding && harness_line(r) && (rc = release_queue(k)) < 0)
        return rc;
    if (!k->check_off && strcmp(r->status, "cuda_error") == 0 &&
        strncmp(r->error, REF_FAILED, strlen(REF_FAILED)) == 0) {
        k->check_off = k->held = 1;
        snprintf(k->ref_error, sizeof(k->ref_error), "%.343s", r->error + strlen(REF_FAILED));
        return 0;
    }
    k->last = *r;
    k->have_last = 1;
    if (r->cfg.w != k->size_w || r->cfg.h != k->size_h) {
        k->size_w = r->cfg.w;
        k->size_h = r->cfg.h;
        k->size_ok = k->size_err = 0;
    }
    k->size_ok += strcmp(r->status, "ok") == 0;
    k->size_err += strcmp(r->status, "cuda_error") == 0;
    if (!strcmp(r->status, "cuda_error") || !strcmp(r->status, "timeout") ||
        !strcmp(r->status, "crashed"))
        k->holding = 1; /* what a device that goes could cause: the exit and next start say */
    if (k->check_off && strcmp(r->check, "not_checked") == 0) {
        snprintf(k->last.check_why, sizeof(k->last.check_why), "%.340s: the check is off "
                 "from that size on", k->ref_error);
        return deliver(k, &k->last);
    }
    return deliver(k, r);
}

/* o with --no-check appended to its harness arguments once the reference block failed. */
static const struct runner_options *options_now(struct runner_options *tmp, const char **args,
                                                int max, const struct runner_options *o,
                                                const struct skipper *k)
{
    int na = 0;
    if (!k->check_off)
        return o;
    for (int j = 0; o->extra_args && o->extra_args[j] && na < max - 2; j++)
        args[na++] = o->extra_args[j];
    args[na++] = "--no-check";
    args[na] = NULL;
    *tmp = *o;
    tmp->extra_args = args;
    return tmp;
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

/* A skip rule: 1 (with the row's error in msg) when it covers c. */
typedef int (*skip_rule)(const struct skipper *k, const struct tune_config *c, char *msg,
                         size_t size);

/* Report every configuration of todo[from..*n) that `covers` as skipped and drop it from todo
 * (the rest keep their order); *dropped counts them. Returns 0 or <0 (callback). */
static int drop_covered(struct runner_summary *out, struct skipper *k, struct tune_config *todo,
                        int *n, int from, skip_rule covers, int *dropped)
{
    int kept = from, rc = 0;
    char msg[600];
    struct runner_callbacks queued = { NULL, NULL, sk_deliver, k };
    for (int j = from; j < *n; j++) {
        if (rc == 0 && covers(k, &todo[j], msg, sizeof(msg))) {
            out->skipped++;
            (*dropped)++;
            rc = runner_record_failure(&queued, out, &todo[j], "skipped", msg);
            continue;
        }
        todo[kept++] = todo[j];
    }
    *n = kept;
    return rc;
}

/* A block shape that failed stickily at a size at most c's ("Skipped shapes"). */
static int shape_rule(const struct skipper *k, const struct tune_config *c, char *msg,
                      size_t size)
{
    const struct tune_skip *s = skip_for(k, c);
    if (s)
        tune_skip_describe(msg, size, s);
    return s != NULL;
}

static int apply_skips(struct runner_summary *out, struct skipper *k, struct tune_config *todo,
                       int *n, int from)
{
    int dropped = 0;
    return drop_covered(out, k, todo, n, from, shape_rule, &dropped);
}

/* The size whose reference and size_faults shapes failed (skip_size). */
static int size_rule(const struct skipper *k, const struct tune_config *c, char *msg,
                     size_t size)
{
    if (c->w != k->size_w || c->h != k->size_h)
        return 0;
    snprintf(msg, size, "not run: %.300s (the output check's), and at %dx%d the %d shapes run "
             "since failed with sticky CUDA errors and none ran ok, so the size's other shapes "
             "are skipped (--size-faults %d)", k->ref_error, k->size_w, k->size_h, k->size_err,
             k->size_faults);
    return 1;
}

/* size_faults (docs/tune.md "Skipped sizes"): once the output check's reference block failed, a
 * size where o->size_faults shapes failed with sticky errors and none ran ok is not worth its
 * other shapes' faults (about a second each): they are reported `skipped`, saying why. Only
 * the current size; never predicts a result. Returns 0 or <0 (callback). */
static int skip_size(struct runner_summary *out, struct skipper *k, struct tune_config *todo,
                     int *n, int i)
{
    if (k->size_faults <= 0 || !k->check_off || k->size_ok > 0 || k->size_err < k->size_faults ||
        i >= *n || todo[i].w != k->size_w || todo[i].h != k->size_h)
        return 0;
    int dropped = 0, rc = drop_covered(out, k, todo, n, i, size_rule, &dropped);
    out->sizes_skipped += dropped > 0;
    log_trace("size_skipped %dx%d configs=%d", k->size_w, k->size_h, dropped);
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
        struct runner_options tmp;
        const char *args[64];
        const struct runner_options *o_now = options_now(&tmp, args, 64, o, k);
        if (use_host) {
            rc = runner_run_in_host(out, o_now, todo, n, &i, cb, occupancy);
            if (rc == RUNNER_FALLBACK) {
                out->fell_back = 1;
                use_host = 0;
                continue; /* the same configurations, as harness processes */
            }
        } else {
            rc = run_process(out, o_now, todo, n, &i, cb, occupancy, pre);
        }
        pre = NULL;
        occupancy = 0;
        if (rc < 0)
            return rc;
        log_trace("run_todo rc=%d i=%d n=%d held=%d check_off=%d", rc, i, n, k->held,
                     k->check_off);
        if (k->held) { /* the reference failed, not this configuration: run it again */
            k->held = 0;
            i--;
            out->results--;
            out->ref_failures++;
            if (out->sticky_errors > sticky)
                out->sticky_errors--;
            if (rc == RUNNER_FAILED || rc == RUNNER_DONE)
                continue;
        }
        if (rc == RUNNER_STOPPED || rc == RUNNER_DEVICE_LOST)
            return 0;
        if (rc == RUNNER_GIVE_UP) {
            out->given_up = 1;
            return 0;
        }
        if (out->sticky_errors > sticky) {
            int src = note_sticky(out, k, todo, &n, i, out->results > results, &counted);
            if (src < 0 || (src = skip_size(out, k, todo, &n, i)) < 0)
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
    out->samples = o->no_deadline_plan ? -1 : o->samples;
    out->budget_s = o->budget_s;
    memset(&k, 0, sizeof(k));
    k.cb = cb;
    k.size_faults = o->size_faults;
    for (int j = 0; j < o->nskips; j++) {
        XGROW(k.v, (size_t)k.n + 1, k.cap);
        k.v[k.n++] = o->skips[j];
    }
    struct runner_callbacks tap = { sk_header, sk_occupancy, sk_result, &k };
    struct tune_config *todo = xmalloc(((size_t)n + 1) * sizeof(*todo));
    if (n > 0)
        memcpy(todo, cfgs, (size_t)n * sizeof(*todo));
    int rc = run_todo(out, o, todo, n, &tap, &k);
    if (out->device_lost && k.nq) { /* docs/tune.md "A device that goes" */
        log_info("tune: %d result(s) not recorded: the next start found the device gone, so "
                 "the first (%dx%d, block %dx%dx%d, %s: %.200s) and what it caused may be the "
                 "device's; they run again with the kernel's next run", k.nq, k.queue[0].cfg.w,
                 k.queue[0].cfg.h, k.queue[0].cfg.bx, k.queue[0].cfg.by, k.queue[0].cfg.bz,
                 k.queue[0].status, k.queue[0].error);
        out->results -= k.nq;
        k.nq = 0;
    } else if (rc >= 0) {
        rc = release_queue(&k);
    }
    free(todo);
    free(k.v);
    free(k.queue);
    return rc;
}
