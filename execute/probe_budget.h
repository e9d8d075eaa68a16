/* The deadlines of one probe run in a runner (docs/execute.md "Probe budget"): the harness's
 * result lines are timed as they arrive; the first small configuration gets the small-size
 * deadline (--probe-small-timeout), the second one a deadline from the first's kernel time,
 * each large one its own from the last small one's, and out of memory at the large size ends
 * the run at once. Used by execute/probe.c only. */
#ifndef LSCAT_EXECUTE_PROBE_BUDGET_H
#define LSCAT_EXECUTE_PROBE_BUDGET_H

#include "common/proc.h"
#include "execute/probe.h"

/* Why the watch ended a run: not at all, a configuration past its budget (too_slow), out of
 * memory at the large size, the first small configuration past the small-size deadline (the
 * outcome stays timeout). */
enum { PROBE_CUT_NONE, PROBE_CUT_SLOW, PROBE_CUT_OOM, PROBE_CUT_SMALL };

#define PROBE_BUDGET_CONFIGS 8
struct probe_budget {
    const struct probe_options *o;
    int nsmall, nconfigs, nlines; /* small configurations, all of them, lines read */
    int w[PROBE_BUDGET_CONFIGS], h[PROBE_BUDGET_CONFIGS];
    int bx[PROBE_BUDGET_CONFIGS], by[PROBE_BUDGET_CONFIGS], bz[PROBE_BUDGET_CONFIGS];
    double t_prev;                      /* when the last line came */
    double took[PROBE_BUDGET_CONFIGS];  /* each configuration's time, -1: did not finish */
    double kern[PROBE_BUDGET_CONFIGS];  /* its kernel time as its line said, -1: not said */
    double small_s, kernel_s, predicted_s, budget_s, deadline, limit;
    double small_until;                 /* the first configuration's deadline (0: none) */
    double small_for;                   /* how long it was (--probe-small-timeout) */
    int from, next; /* the configuration the budget was planned from, and the one it bounds */
    int cut;        /* PROBE_CUT_* */
    int capped;     /* 1: budget_s is o->large_budget_max_s, less than the formula gave */
};

/* A run's deadlines from its configurations' lines (`configs`, the probe's stdin), the first
 * `nsmall` of them small; the run's outer bound is o->timeout_s from now. */
void probe_budget_init(struct probe_budget *b, const struct probe_options *o,
                       const char *configs, int nsmall);

/* The probe_runner_watch callback (execute/probe_runner.h): a result line read at `now`. */
double probe_budget_line(void *ctx, const char *line, double now);

/* After the run: which configuration the watch stopped and why (b->cut). A budget cut reads as
 * a finished run (the lines say what ran); the small-size deadline stays a timeout. */
void probe_budget_judge(struct probe_budget *b, struct proc_result *r);

/* The detail of a run the watch cut: which configuration, how long it ran, which deadline. */
char *probe_budget_detail(const struct probe_budget *b);

/* A JSON array of n seconds, null for the negative ones; NULL when every one is (want_any). */
char *probe_budget_times(const double *t, int n, int want_any);

#endif
