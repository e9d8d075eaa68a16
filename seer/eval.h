/* lscat seer eval: Seer's strategies on the held-back matrices. For each iteration count of the
 * model: the total time over the test matrices of the Oracle (the fastest working kernel of
 * each), of every single kernel, of cuSPARSE's default, and of the known, gathered and
 * selector strategies with the feature cost and the trees' inference cost included; the
 * geomean speed-up of each strategy over each single kernel; each strategy's fraction of the
 * Oracle; where the selector chose to gather and whether it paid. Written as eval.md (summary),
 * eval.csv, and gnuplot plots (PNG + SVG). */
#ifndef LSCAT_SEER_EVAL_H
#define LSCAT_SEER_EVAL_H

#include "common/buf.h"
#include "seer/train.h"

enum { SEER_S_ORACLE, SEER_S_KNOWN, SEER_S_GATHERED, SEER_S_SELECTOR, SEER_S_COUNT };

struct seer_eval_iter {
    double iterations;
    double strategy_ns[SEER_S_COUNT];      /* totals over the test matrices */
    double single_ns[SEER_K_COUNT];        /* each class kernel alone (failures charged) */
    int single_failed[SEER_K_COUNT];       /* matrices it did not work on */
    double geomean[SEER_S_COUNT][SEER_K_COUNT]; /* speed-up of a strategy over a kernel */
    int best_single;                       /* enum seer_kernel with the least total */
    int gathered, gather_paid;             /* selector decisions to gather; those that paid */
};

struct seer_eval {
    int n_test;                            /* test matrices used */
    int niter;
    struct seer_eval_iter it[SEER_MAX_ITER];
    double inference_ns[3];                /* per prediction: known, gathered, selector */
};

/* Evaluate m on the test matrices of t. */
int seer_eval_run(struct seer_eval *out, const struct seer_model *m, const struct seer_table *t);
/* eval.md, eval.csv and the plots into dir (plots are skipped with a warning when gnuplot is
 * missing or fails). */
int seer_eval_write(const struct seer_eval *e, const struct seer_model *m, const char *dir);
/* Append the Markdown summary (also what eval.md holds). */
void seer_eval_markdown(struct buf *out, const struct seer_eval *e, const struct seer_model *m);

/* Plots (seer/plot.c): speed-up bars at the first and the last iteration count, fraction of
 * the Oracle against iterations. Returns 0 (a missing gnuplot is a warning), <0 on I/O errors. */
int seer_plot_write(const struct seer_eval *e, const struct seer_model *m, const char *dir);

#endif
