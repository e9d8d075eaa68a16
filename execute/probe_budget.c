/* The deadlines of a probe run in a runner (docs/execute.md "Probe budget"): each result line
 * of the harness is timed as it arrives and moves the run's deadline: the small-size deadline,
 * the second small configuration's from the first's kernel time, each large one's. */
#include "execute/probe_budget.h"

#include "common/buf.h"
#include "common/fs.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void probe_budget_init(struct probe_budget *b, const struct probe_options *o, const char *configs,
                       int nsmall)
{
    memset(b, 0, sizeof(*b));
    b->o = o;
    b->nsmall = nsmall;
    b->next = -1;
    for (const char *p = configs; p && *p && b->nconfigs < PROBE_BUDGET_CONFIGS;
         p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        int k = b->nconfigs;
        if (sscanf(p, "%d %d %d %d %d", &b->w[k], &b->h[k], &b->bx[k], &b->by[k], &b->bz[k]) == 5)
            b->took[k] = b->kern[k] = -1, b->nconfigs++;
    }
    b->t_prev = fs_mono_s();
    b->limit = b->t_prev + o->timeout_s;
    if (o->small_timeout_s > 0 && o->small_timeout_s < o->timeout_s && b->nconfigs > 0)
        b->small_for = o->small_timeout_s;
}

double probe_line_kernel_s(const char *line)
{
    const char *p = strstr(line, "\"kernel_ns\":");
    if (!p)
        return -1;
    char *end;
    long long ns = strtoll(p + 12, &end, 10);
    return end == p + 12 || ns < 0 ? -1 : (double)ns * 1e-9;
}

int probe_line_wrote_past(const char *line)
{
    const char *p = strstr(line, "\"wrote_past\":{");
    long i = p ? probe_json_int(p, "param") : -1;
    return i >= 0 && i < 1000 ? (int)i : -1;
}

double probe_budget_s(double *predicted_s, double floor_s, double took_s, double kernel_s,
                      double elems, double big)
{
    double scale = elems > 0 ? big / elems : 0, budget;
    if (kernel_s >= 0) {
        double overhead = took_s > kernel_s ? took_s - kernel_s : 0;
        *predicted_s = kernel_s * scale;
        budget = PROBE_BUDGET_ALLOW_S + overhead + PROBE_KERNEL_SLACK * *predicted_s;
    } else {
        *predicted_s = took_s * scale;
        budget = PROBE_BUDGET_SLACK * *predicted_s;
    }
    return budget < floor_s ? floor_s : budget;
}

/* The budget of configuration `next`, from configuration `from` (the last small one for the
 * large ones): its kernel's time where its line said it, else its line's interval. */
static void budget_plan(struct probe_budget *b, int from, int next)
{
    double elems = (double)b->w[from] * b->h[from], big = (double)b->w[next] * b->h[next];
    b->from = from;
    b->small_s = b->took[from];
    b->kernel_s = b->kern[from];
    b->budget_s = probe_budget_s(&b->predicted_s, b->o->large_budget_s, b->small_s, b->kernel_s,
                                 elems, big);
    /* a large configuration's budget has a cap (--probe-budget-max): one predicted to take
     * minutes is cut after it, measured still running, not after the run's whole timeout */
    double cap = b->o->large_budget_max_s;
    if (cap < b->o->large_budget_s)
        cap = b->o->large_budget_s;
    b->capped = next >= b->nsmall && b->o->large_budget_max_s > 0 && b->budget_s > cap;
    if (b->capped)
        b->budget_s = cap;
}

/* The deadline after result line `line` (status `st`) of the run: see probe_budget_line. */
static double budget_next(struct probe_budget *b, const char *st, const char *line, double now)
{
    int k = b->nlines++, oom = 0;
    if (k < PROBE_BUDGET_CONFIGS)
        b->took[k] = now - b->t_prev, b->kern[k] = probe_line_kernel_s(line);
    b->t_prev = now;
    if (k >= b->nsmall && !strcmp(st, "cuda_error")) {
        char *err = probe_json_str(line, "error");
        oom = err && strstr(err, "out of memory") != NULL;
        free(err);
    }
    if (b->o->large_budget_s <= 0) /* off: the large ones share the run's timeout */
        return 0;
    if (oom) {
        b->cut = PROBE_CUT_OOM;
        return -1;
    }
    /* The second small configuration, planned from the first's kernel time (never from an
     * older harness's interval, which is mostly overhead): a hang at 64x64 ends in seconds. */
    int small = b->nsmall < b->nconfigs ? b->nsmall : b->nconfigs;
    if (k == 0 && small >= 2 && b->kern[0] >= 0) {
        budget_plan(b, 0, 1);
        b->next = 1;
        return b->deadline = now + b->budget_s;
    }
    if (k == b->nsmall - 1 && k + 1 < b->nconfigs)
        budget_plan(b, k, k + 1);
    if (k < b->nsmall - 1 || k + 1 >= b->nconfigs || b->budget_s <= 0) {
        int was = b->next;
        b->next = -1;
        return was >= 0 ? b->limit : 0; /* a small configuration's deadline ends with it */
    }
    b->next = k + 1;
    b->deadline = now + b->budget_s;
    return b->deadline;
}

double probe_budget_line(void *ctx, const char *line, double now)
{
    struct probe_budget *b = ctx;
    char *st = probe_json_str(line, "status");
    if (!st) { /* the header: the configurations start now, the first under its deadline */
        b->t_prev = now;
        if (b->small_for <= 0 || b->nlines > 0)
            return 0;
        return b->small_until = now + b->small_for;
    }
    double d = budget_next(b, st, line, now);
    free(st);
    /* 0 keeps the deadline: after the first line, never the first configuration's */
    return d == 0 && b->nlines == 1 && b->small_until > 0 ? b->limit : d;
}

void probe_budget_judge(struct probe_budget *b, struct proc_result *r)
{
    int k = b->nlines;
    if (b->cut == PROBE_CUT_NONE && r->timed_out && b->budget_s > 0 && k == b->next &&
        k < b->nconfigs && b->deadline < b->limit)
        b->cut = PROBE_CUT_SLOW;
    if (b->cut == PROBE_CUT_NONE && r->timed_out && k == 0 && b->small_until > 0 &&
        b->small_until < b->limit)
        b->cut = PROBE_CUT_SMALL; /* a hang at the first configuration: still a timeout */
    else if (b->cut != PROBE_CUT_NONE) /* the lines say what ran; the clock stopped it */
        r->timed_out = 0, r->signal = 0, r->exit_code = 0;
}

char *probe_budget_detail(const struct probe_budget *b)
{
    int k = b->nlines, s = b->from;
    if (b->cut == PROBE_CUT_SMALL) {
        return xasprintf("%dx%d block %dx%dx%d still running after %.2f s, past the "
                         "first small configuration's deadline of %.0f s (--probe-small-timeout; "
                         "the run's --probe-timeout is %.0f s)", b->w[0], b->h[0], b->bx[0],
                         b->by[0], b->bz[0], fs_mono_s() - b->t_prev, b->small_for,
                         b->o->timeout_s);
    }
    char *head = xasprintf("%dx%d block %dx%dx%d still running after %.2f s, over its budget of "
                           "%.2f s", b->w[k], b->h[k], b->bx[k], b->by[k], b->bz[k],
                           fs_mono_s() - b->t_prev, b->budget_s);
    char cap[48] = "";
    if (b->capped) /* "min(10 s, max(...))": the cap (--probe-budget-max) made it */
        snprintf(cap, sizeof cap, "min(%g s, ", b->budget_s);
    char *d;
    if (b->kernel_s >= 0)
        d = xasprintf("%s (%dx%d: kernel %.3g ms of %.3g ms: predicted %.3g s at %dx%d, linear "
                      "in the elements; budget = %smax(%.0f s, %.0f s + %.3g ms + %.0f x "
                      "predicted)%s)", head, b->w[s], b->h[s], b->kernel_s * 1e3,
                      b->small_s * 1e3, b->predicted_s, b->w[k], b->h[k], cap,
                      b->o->large_budget_s, PROBE_BUDGET_ALLOW_S,
                      (b->small_s - b->kernel_s > 0 ? b->small_s - b->kernel_s : 0) * 1e3,
                      PROBE_KERNEL_SLACK, b->capped ? ")" : "");
    else
        d = xasprintf("%s (%dx%d took %.3g ms: predicted %.3g s at %dx%d, linear in the "
                      "elements; budget = %smax(%.0f s, %.0f x predicted)%s)", head, b->w[s],
                      b->h[s], b->small_s * 1e3, b->predicted_s, b->w[k], b->h[k], cap,
                      b->o->large_budget_s, PROBE_BUDGET_SLACK, b->capped ? ")" : "");
    free(head);
    return d;
}

char *probe_budget_times(const double *t, int n, int want_any)
{
    struct buf j = BUF_INIT;
    int any = 0;
    buf_addch(&j, '[');
    for (int i = 0; i < n; i++) {
        if (t[i] >= 0)
            buf_addf(&j, "%s%.6f", i ? "," : "", t[i]);
        else
            buf_adds(&j, i ? ",null" : "null");
        any |= t[i] >= 0;
    }
    buf_addch(&j, ']');
    if (want_any && !any) {
        buf_release(&j);
        return NULL;
    }
    return buf_detach(&j, NULL);
}
