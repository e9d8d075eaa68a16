/* The row-length guard of Seer's gathered tree: a kernel is not extrapolated past the row
 * imbalance (row_max / mean) where it last won on a training matrix. A tree fitted on a few
 * hundred matrices may send an unseen long-row matrix into a leaf learned from short rows and
 * pick csr_thread or csr_warp there, 4-100 times too slow; the guard is read off the training
 * samples alone and grafted onto the tree as splits, so the exported header carries it. */
#include "seer/train.h"

#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXREL 8 /* row_max / mean in the gathered features (seer_derived.h) */

/* For each class: its limit, the smallest row_max / mean above the largest where it was the
 * fastest at which it was more than `ratio` times the fastest (INFINITY: none), the threshold
 * just below it (midpoint with the largest smaller value seen) and the class of least summed
 * cost over the samples at or above it (the fallback). */
struct guard {
    double at[SEER_K_COUNT], thr[SEER_K_COUNT];
    int fallback[SEER_K_COUNT];
};

/* The cheapest class's cost of sample i. */
static double cheapest(const double *cost, int i, int k)
{
    const double *ci = cost + (size_t)i * (size_t)k;
    double lo = INFINITY;
    for (int q = 0; q < k; q++)
        lo = fmin(lo, ci[q]);
    return lo;
}

/* won[q]: the largest row_max / mean at which class q was the fastest (-1: never); at[q]: the
 * smallest above it at which q was more than ratio times the fastest. */
static void guard_at(double *at, const double *xg, const double *cost, int n, int k, double ratio)
{
    double won[SEER_K_COUNT];
    for (int q = 0; q < k; q++)
        at[q] = INFINITY, won[q] = -1;
    for (int i = 0; i < n; i++)
        for (int q = 0; q < k; q++)
            if (cost[(size_t)i * (size_t)k + (size_t)q] <= cheapest(cost, i, k))
                won[q] = fmax(won[q], xg[(size_t)i * SEER_NG + MAXREL]);
    for (int i = 0; i < n; i++) {
        double lo = cheapest(cost, i, k), mr = xg[(size_t)i * SEER_NG + MAXREL];
        for (int q = 0; q < k && lo > 0; q++)
            if (cost[(size_t)i * (size_t)k + (size_t)q] > ratio * lo && mr > won[q] && mr < at[q])
                at[q] = mr;
    }
}

static void guard_limits(struct guard *g, const double *xg, const double *cost, int n, int k,
                         double ratio)
{
    guard_at(g->at, xg, cost, n, k, ratio);
    for (int q = 0; q < k; q++) {
        double below = 0, *sum = xcalloc((size_t)k, sizeof(double));
        for (int i = 0; i < n && isfinite(g->at[q]); i++) {
            double mr = xg[(size_t)i * SEER_NG + MAXREL];
            if (mr < g->at[q] && mr > below)
                below = mr;
            for (int c = 0; c < k && mr >= g->at[q]; c++)
                sum[c] += cost[(size_t)i * (size_t)k + (size_t)c];
        }
        g->thr[q] = below / 2 + g->at[q] / 2;
        g->fallback[q] = 0;
        for (int c = 1; c < k; c++)
            g->fallback[q] = sum[c] < sum[g->fallback[q]] ? c : g->fallback[q];
        free(sum);
    }
}

/* A copy of t's nodes in which every leaf of a guarded class becomes a split on row_max / mean:
 * below the threshold the class, at or above it the fallback. */
static int guard_graft(struct learn_tree **out, const struct learn_tree *t, const struct guard *g,
                       int k)
{
    int n = learn_tree_node_count(t), m = n;
    struct learn_node *nd = xmalloc((size_t)(3 * n) * sizeof(*nd));
    double *val = xcalloc((size_t)(2 * n) * (size_t)k, sizeof(double));
    for (int i = 0; i < n; i++)
        nd[i] = *learn_tree_node(t, i);
    for (int i = 0; i < n; i++) {
        int c = nd[i].label;
        if (nd[i].feature >= 0 || !isfinite(g->at[c]) || g->fallback[c] == c)
            continue;
        for (int side = 0; side < 2; side++) {
            double *v = val + (size_t)(m - n) * (size_t)k;
            v[side ? g->fallback[c] : c] = 1;
            nd[m] = (struct learn_node){ .feature = -1, .left = -1, .right = -1,
                                         .n_samples = 0, .label = side ? g->fallback[c] : c,
                                         .value = v };
            m++;
        }
        nd[i].feature = MAXREL;
        nd[i].threshold = g->thr[c];
        nd[i].left = m - 2;
        nd[i].right = m - 1;
    }
    int rc = learn_tree_from_nodes(out, learn_tree_n_features(t), k, learn_tree_criterion(t), nd, m);
    free(nd);
    free(val);
    return rc;
}

int seer_guard_tree(struct learn_tree **out, const struct learn_tree *t, const double *xg,
                    const double *cost, int n, int k, double ratio)
{
    struct guard g;
    guard_limits(&g, xg, cost, n, k, ratio);
    return guard_graft(out, t, &g, k);
}
