/* Scores of a classifier (accuracy, weighted and balanced accuracy) and the search for the
 * smallest tree that is good enough (Tenzing's Algorithm 1): the tools built on learn/ want a
 * tree a person can read, so they grow leaves only while the tree keeps getting better. */
#include "learn/tree.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <stdlib.h>

double learn_accuracy(const int *y_true, const int *y_pred, int n)
{
    return learn_weighted_accuracy(y_true, y_pred, NULL, n);
}

double learn_weighted_accuracy(const int *y_true, const int *y_pred, const double *w, int n)
{
    double good = 0.0, all = 0.0;
    for (int i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        all += wi;
        if (y_true[i] == y_pred[i])
            good += wi;
    }
    return all > 0.0 ? good / all : 0.0;
}

double learn_balanced_accuracy(const int *y_true, const int *y_pred, int n, int k)
{
    int *total = xcalloc((size_t)k, sizeof(int)), *hit = xcalloc((size_t)k, sizeof(int));
    double sum = 0.0;
    int present = 0;
    for (int i = 0; i < n; i++) {
        if (y_true[i] < 0 || y_true[i] >= k)
            continue;
        total[y_true[i]]++;
        hit[y_true[i]] += y_pred[i] == y_true[i];
    }
    for (int c = 0; c < k; c++) {
        if (total[c]) {
            sum += (double)hit[c] / (double)total[c];
            present++;
        }
    }
    free(total);
    free(hit);
    return present ? sum / present : 0.0;
}

double learn_tree_accuracy(const struct learn_tree *t, const double *X, int n, const int *y,
                           const double *w)
{
    int *pred = xmalloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    learn_tree_predict_many(pred, t, X, n);
    double a = learn_weighted_accuracy(y, pred, w, n);
    free(pred);
    return a;
}

/* ---- Algorithm 1 */

struct search {
    const double *X;
    const double *w;
    const int *y;
    int n, d, k;
    const struct learn_size_search_options *o;
    struct learn_size_trace *trace;
    int *pred;
};

static void trace_add(struct learn_size_trace *tr, int leaves, int depth, double score)
{
    if (!tr || tr->n >= LEARN_SIZE_TRACE_MAX)
        return;
    tr->leaves[tr->n] = leaves;
    tr->depth[tr->n] = depth;
    tr->score[tr->n] = score;
    tr->accepted[tr->n] = 0;
    tr->n++;
}

static void trace_accept_last(struct learn_size_trace *tr)
{
    if (tr && tr->n > 0)
        tr->accepted[tr->n - 1] = 1;
}

/* Fit with `leaves` leaves and depth leaves - 1; *score gets its training score. */
static int fit_size(struct learn_tree **out, double *score, struct search *s, int leaves)
{
    struct learn_tree_options to = s->o->tree;
    to.max_leaf_nodes = leaves;
    to.max_depth = leaves - 1;
    int rc = learn_tree_fit(out, s->X, s->n, s->d, s->y, s->k, s->w, &to);
    if (rc < 0)
        return rc;
    learn_tree_predict_many(s->pred, *out, s->X, s->n);
    *score = s->o->score_balanced ? learn_balanced_accuracy(s->y, s->pred, s->n, s->k)
                                  : learn_accuracy(s->y, s->pred, s->n);
    trace_add(s->trace, leaves, learn_tree_depth(*out), *score);
    return 0;
}

static int classes_present(const int *y, int n, int k)
{
    int *seen = xcalloc((size_t)k, sizeof(int)), present = 0;
    for (int i = 0; i < n; i++)
        if (y[i] >= 0 && y[i] < k && !seen[y[i]]++)
            present++;
    free(seen);
    return present;
}

int learn_tree_fit_smallest(struct learn_tree **out, struct learn_size_trace *trace,
                            const double *X, int n, int d, const int *y, int k, const double *w,
                            const struct learn_size_search_options *o)
{
    static const int steps[] = { 1, 2, 3, 5 };
    struct search s = { X, w, y, n, d, k, o, trace, NULL };
    struct learn_tree *best = NULL, *next = NULL;
    double best_score = 0.0, score = 0.0;
    int rc, present, leaves, max_leaves;
    *out = NULL;
    if (trace)
        trace->n = 0;
    if (n < 1 || k < 1)
        return lscat_error_setc(LSCAT_EINVALID, "size search: need samples and classes");
    present = classes_present(y, n, k);
    leaves = o->start_leaves > 0 ? o->start_leaves : (present > 2 ? present : 2);
    max_leaves = o->max_leaves > 0 ? o->max_leaves : 5 * (present > 1 ? present : 1);
    s.pred = xmalloc((size_t)n * sizeof(int));
    if ((rc = fit_size(&best, &best_score, &s, leaves)) < 0)
        goto done;
    trace_accept_last(trace);
    while (leaves < max_leaves && best_score < 1.0) {
        int moved = 0;
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && !moved; i++) {
            if ((rc = fit_size(&next, &score, &s, leaves + steps[i])) < 0)
                goto done;
            if (score > best_score) {
                learn_tree_free(best);
                best = next;
                best_score = score;
                leaves += steps[i];
                moved = 1;
                trace_accept_last(trace);
            } else {
                learn_tree_free(next);
            }
            next = NULL;
        }
        if (!moved)
            break;
    }
    *out = best;
    best = NULL;
    rc = 0;
done:
    learn_tree_free(best);
    free(s.pred);
    return rc;
}
