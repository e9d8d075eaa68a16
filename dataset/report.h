/* `lscat dataset report`: re-asks LS-CAT's questions of the measurements, per GPU model —
 * average runtime per block shape for each matrix size, one kernel's curves, how often the
 * best block is not the largest, the largest block's performance relative to the best, the
 * gain of always picking the best block over 1024 threads, and how often
 * cudaOccupancyMaxPotentialBlockSize's suggestion is the best — as a text table, gnuplot PNG
 * plots and an HTML page. */
#ifndef LSCAT_REPORT_H
#define LSCAT_REPORT_H

#include "common/buf.h"
#include "store/store.h"

#include <stdint.h>

struct report_options {
    const char *out_dir;
    const char *gpu;     /* NULL: every GPU model; else a case-insensitive substring */
    int plots;           /* 1: run gnuplot for the PNG plots (skipped with a note if missing) */
    int all_checks;      /* 1: count every ok row, whatever its output check (the "before" table
                            of docs/dataset.md; default 0: match rows only) */
};
#define REPORT_OPTIONS_INIT { .out_dir = NULL, .gpu = NULL, .plots = 1, .all_checks = 0 }

/* LS-CAT's summary numbers for one GPU model, over rows whose output check is `match`. Shares
 * are fractions (0..1); -1 = no data. */
struct report_summary {
    char gpu[128];
    int64_t kernels;           /* kernels with at least one (size, block) measured ok */
    int64_t cases;             /* (kernel, matrix size) pairs with >= 2 blocks measured ok */
    double best_not_largest;   /* share of cases whose best block is not the largest */
    double largest_rel_mean;   /* mean of best_time / largest_block_time */
    double largest_below_85;   /* share of cases where that ratio is < 0.85 */
    double gain_1024_mean;     /* mean of time(1024 comparison) / best_time - 1 */
    double gain_1024_median;   /* its median */
    double gain_1024_geomean;  /* geometric mean of time(1024) / best_time, - 1 */
    double gain_1024_over_20;  /* share of compared cases with that gain > 0.20 */
    int64_t gain_1024_cases;   /* cases with a 1024 comparison: a 1D kernel's (1024,1,1), a 2D
                                  kernel's fastest 1024-thread shape */
    int64_t gain_1024_missing; /* cases without one (reported, never replaced by another shape) */
    double occupancy_best;     /* share of cases whose best block has occupancy_block threads */
    int64_t occupancy_cases;   /* cases of kernels with an occupancy suggestion measured */
    /* the output check of the model's current ok rows; only `match` rows make the cases */
    int64_t rows_match, rows_mismatch, rows_nondeterministic, rows_not_checked;
    int64_t kernels_mismatch;  /* kernels with at least one mismatch row */
};

/* Compute the summary of every GPU model (matching o->gpu), write report.txt, index.html and
 * the plots into o->out_dir, and append the printed table to `table`. *summaries_out (may be
 * NULL) receives a heap array the caller frees, *n_out its length. */
int report_run(struct buf *table, struct report_summary **summaries_out, int *n_out,
               struct store *s, const struct report_options *o);

#endif
