/* lscat seer train: Seer's three decision trees from a bench table (one GPU model, one
 * precision). Samples are matrix x iteration count; the label is the kernel with the least
 * total time, preprocessing + iterations x per-iteration time, so amortised preprocessing is
 * learned. The split is by matrix (a seeded shuffle; never the same matrix in train and test).
 *   known:    rows, cols, nnz, iterations, nnz/rows -> kernel
 *   gathered: the same + longest and shortest row length, variance of row lengths, and those
 *             divided by the mean (seer/seer_derived.h) -> kernel
 *   selector: the known features -> 1 when gathering pays: feature cost + the gathered tree's
 *             pick beats the known tree's pick. Its training labels come from out-of-fold
 *             predictions (folds by matrix), so it learns how the trees behave on matrices
 *             they have not seen.
 * The goal is total time, which a few large matrices dominate, so the trees are cost-sensitive:
 * splits are CART's (gini), but each leaf predicts the class of the least summed cost of its
 * training samples, a sample's cost of a class being that choice's total time divided by the
 * Oracle's total over the training matrices at that iteration count (each count weighs the
 * same). Depth and leaf size are chosen per tree by out-of-fold total time on the training
 * matrices (never the test set) unless given.
 * A kernel that failed on a matrix (fault, wrong, unsupported, not measured) is never a label;
 * a strategy that picks it anyway is charged the slowest working kernel's time. */
#ifndef LSCAT_SEER_TRAIN_H
#define LSCAT_SEER_TRAIN_H

#include "learn/tree.h"
#include "seer/db.h"
#include "seer/seer_derived.h"

#define SEER_MAX_ITER 16
#define SEER_NK 5 /* known features: rows, cols, nnz, iterations, nnz/rows */
#define SEER_NG SEER_FEATURE_COUNT /* gathered: the known ones + row_max, row_min, row_var and
                                       the scale-free ones (seer/seer_derived.h) */

struct seer_train_options {
    double iterations[SEER_MAX_ITER];
    int niter;
    unsigned long long seed;
    double test_fraction;
    int max_depth;        /* 0 = unlimited; -1 = chosen by out-of-fold total time */
    int min_samples_leaf; /* 0 = chosen by out-of-fold total time */
    int folds;            /* for the selector's out-of-fold labels */
    int split;            /* SEER_SPLIT_*; -1 = chosen by out-of-fold total time */
    double risk;          /* known and gathered trees choose only kernels whose worst ratio to
                             the Oracle on the training samples is <= risk (0: any kernel);
                             -1 = chosen by out-of-fold total time */
    double guard;         /* the gathered tree's row-length guard ratio (seer_guard_tree); 0 =
                             none; -1 = chosen by out-of-fold total time */
};
enum { SEER_SPLIT_GINI = 0, SEER_SPLIT_COST = 1 };
#define SEER_TRAIN_OPTIONS_INIT                                                              \
    {                                                                                        \
        .iterations = { 1, 10, 100, 1000, 10000 }, .niter = 5, .seed = 42,                   \
        .test_fraction = 0.25, .max_depth = -1, .min_samples_leaf = 0, .folds = 5,           \
        .split = -1, .risk = -1, .guard = -1,                                                \
    }

struct seer_model {
    char *gpu, *precision;
    int feature_cost;                   /* SEER_COST_*: the feature cost trained and charged */
    int k;                              /* classes */
    int class_kernel[SEER_K_COUNT];     /* class -> enum seer_kernel */
    struct seer_train_options opt;
    int ntest;
    char **test;                        /* test matrices' names */
    struct learn_tree *known, *gathered, *selector;
    double acc_known, acc_gathered, acc_selector;       /* on the test samples */
    double train_known, train_gathered, train_selector; /* on the training samples */
    int train_matrices, train_samples, test_samples;
    int selector_gather_labels;         /* training samples labelled "gather" */
    int split[3], depth[3], leaf[3];    /* known, gathered, selector */
    double risk[3], guard[3];
    double cv_score[2];                 /* their out-of-fold Oracle / total, mean over counts */
};

int seer_train(struct seer_model *out, const struct seer_table *t,
               const struct seer_train_options *o);
void seer_model_release(struct seer_model *m);

/* Write the model into dir: model.json, the trees as JSON (known.json, ...), C headers
 * (seer_known.h, seer_gathered.h, seer_selector.h, seer_classes.h), DOT files, predictions.csv
 * (every sample with its label and each tree's prediction) and the seer_select() runtime
 * (seer_select.h, seer_select.cu, seer_features.cuh, Makefile). */
int seer_model_save(const struct seer_model *m, const struct seer_table *t, const char *dir);
/* Read model.json and the three trees back. */
int seer_model_load(struct seer_model *out, const char *dir);

/* ---- shared by train and eval */

/* Preprocessing + it x per-iteration time of kernel k on r; a kernel that did not work on r
 * costs what the slowest working one does. */
double seer_total_ns(const struct seer_row *r, int kernel, double it);
/* The class of the fastest working kernel for it iterations (-1 if none of the classes). */
int seer_best_class(const struct seer_model *m, const struct seer_row *r, double it);
void seer_known_x(double x[SEER_NK], const struct seer_row *r, double it);
void seer_gathered_x(double x[SEER_NG], const struct seer_row *r, double it);
/* The row-length guard of the gathered tree (seer/guard.c): a class is not extrapolated past the
 * row imbalance where it last won. Its limit is the smallest row_max / mean, above the largest at
 * which it was the fastest on a training sample, at which it was more than `ratio` times the
 * fastest; every leaf of that class becomes a split there (below: the class; at or above: the
 * class of least summed cost over the training samples at or above it). *out: the guarded
 * copy of t (the caller frees both); xg: n x SEER_NG features, cost: n x k, as t's fit. */
int seer_guard_tree(struct learn_tree **out, const struct learn_tree *t, const double *xg,
                    const double *cost, int n, int k, double ratio);
/* 1 when the test set holds r. */
int seer_model_is_test(const struct seer_model *m, const char *name);

#endif
