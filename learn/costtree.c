/* Trees grown on example-dependent costs: each split is the one that most lowers the summed cost
 * of the children's cheapest classes, so depth goes where a wrong choice costs time, not where
 * classes that cost the same are merely separable (what gini spends its splits on). */
#include "learn/tree.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FEATURE_THRESHOLD 1e-7 /* as learn_tree_fit: values closer than this are one value */

struct cfit {
    const double *X, *cost;
    int n, d, k, max_depth, min_split, min_leaf;
    int *idx, *tmp;          /* samples of the node being grown: a run of idx */
    double *sum, *left;      /* k each */
    struct learn_node *nodes;
    double *values;          /* k per node */
    int n_nodes, cap;
    struct keyed *keys;      /* n: a feature's values with their samples, for sorting */
};

struct keyed {
    double x;
    int i;
};

/* By value, then by sample number (so the order, and the tree, never depend on qsort). */
static int by_value(const void *a, const void *b)
{
    const struct keyed *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x ? 1 : (p->i > q->i) - (p->i < q->i);
}

static int cheapest(const double *s, int k)
{
    int best = 0;
    for (int c = 1; c < k; c++)
        best = s[c] < s[best] ? c : best;
    return best;
}

static void sum_costs(struct cfit *f, double *s, int start, int end)
{
    memset(s, 0, (size_t)f->k * sizeof(double));
    for (int p = start; p < end; p++)
        for (int c = 0; c < f->k; c++)
            s[c] += f->cost[(size_t)f->idx[p] * (size_t)f->k + (size_t)c];
}

/* The best split of the run [start, end) on feature ft: *best lowered (strictly) when a split
 * beats it; thr and pos describe it. */
static void scan(struct cfit *f, int ft, int start, int end, double *best, int *bf, double *thr)
{
    size_t d = (size_t)f->d;
    for (int p = start; p < end; p++)
        f->keys[p - start] = (struct keyed){ f->X[(size_t)f->idx[p] * d + (size_t)ft], f->idx[p] };
    qsort(f->keys, (size_t)(end - start), sizeof(*f->keys), by_value);
    for (int p = start; p < end; p++)
        f->idx[p] = f->keys[p - start].i;
    const double *x = f->X + ft;
    memset(f->left, 0, (size_t)f->k * sizeof(double));
    for (int p = start; p < end - 1; p++) {
        const double *cp = f->cost + (size_t)f->idx[p] * (size_t)f->k;
        for (int c = 0; c < f->k; c++)
            f->left[c] += cp[c];
        double a = x[(size_t)f->idx[p] * d], b = x[(size_t)f->idx[p + 1] * d];
        if (b <= a + FEATURE_THRESHOLD || p + 1 - start < f->min_leaf || end - p - 1 < f->min_leaf)
            continue;
        double lmin = INFINITY, rmin = INFINITY;
        for (int c = 0; c < f->k; c++) {
            lmin = f->left[c] < lmin ? f->left[c] : lmin;
            rmin = f->sum[c] - f->left[c] < rmin ? f->sum[c] - f->left[c] : rmin;
        }
        if (lmin + rmin < *best) {
            *best = lmin + rmin;
            *bf = ft;
            *thr = a / 2.0 + b / 2.0;
            if (*thr == b || isinf(*thr))
                *thr = a;
        }
    }
}

static int add_node(struct cfit *f, int depth, int count, const double *s)
{
    if (f->n_nodes == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->nodes = xrealloc(f->nodes, (size_t)f->cap * sizeof(*f->nodes));
        f->values = xrealloc(f->values, (size_t)f->cap * (size_t)f->k * sizeof(double));
    }
    int id = f->n_nodes++, best = cheapest(s, f->k);
    double *v = f->values + (size_t)id * (size_t)f->k;
    for (int c = 0; c < f->k; c++) /* as learn_tree_relabel_by_cost: the cheapest 1 */
        v[c] = c == best ? 1.0 : s[c] > 0.0 ? s[best] / s[c] : 1.0;
    f->nodes[id] = (struct learn_node){ .feature = -1, .left = -1, .right = -1, .depth = depth,
                                        .n_samples = count, .weighted_n_samples = count,
                                        .impurity = s[best], .label = best };
    return id;
}

/* Grow the node of the run [start, end) depth first (preorder, left child first). */
static int grow(struct cfit *f, int start, int end, int depth)
{
    sum_costs(f, f->sum, start, end);
    int id = add_node(f, depth, end - start, f->sum), ft = -1;
    double node_min = f->nodes[id].impurity, best = node_min - 1e-12 * fabs(node_min), thr = 0;
    if ((f->max_depth > 0 && depth >= f->max_depth) || end - start < f->min_split)
        return id;
    for (int j = 0; j < f->d; j++)
        scan(f, j, start, end, &best, &ft, &thr);
    if (ft < 0)
        return id;
    int nl = 0, nr = 0;
    for (int p = start; p < end; p++) { /* stable partition by the chosen split */
        int s = f->idx[p];
        if (f->X[(size_t)s * (size_t)f->d + (size_t)ft] <= thr)
            f->idx[start + nl++] = s;
        else
            f->tmp[nr++] = s;
    }
    memcpy(f->idx + start + nl, f->tmp, (size_t)nr * sizeof(int));
    f->nodes[id].feature = ft;
    f->nodes[id].threshold = thr;
    f->nodes[id].improvement = node_min - best;
    int l = grow(f, start, start + nl, depth + 1);
    int r = grow(f, start + nl, end, depth + 1);
    f->nodes[id].left = l;
    f->nodes[id].right = r;
    return id;
}

static int check(const double *X, int n, int d, const double *cost, int k,
                 const struct learn_tree_options *o)
{
    if (n < 1 || d < 1 || k < 1)
        return lscat_error_setc(LSCAT_EINVALID, "a cost tree needs n, d, k >= 1 (n %d, d %d, "
                                "k %d)", n, d, k);
    if (o->min_samples_leaf < 1 || o->min_samples_split < 2 || o->max_depth < 0)
        return lscat_error_setc(LSCAT_EINVALID, "min_samples_leaf %d must be >= 1, "
                                "min_samples_split %d >= 2, max_depth %d >= 0",
                                o->min_samples_leaf, o->min_samples_split, o->max_depth);
    for (size_t i = 0; i < (size_t)n * (size_t)d; i++)
        if (!isfinite(X[i]))
            return lscat_error_setc(LSCAT_EINVALID, "sample %zu: feature %zu is not finite",
                                    i / (size_t)d, i % (size_t)d);
    for (size_t i = 0; i < (size_t)n * (size_t)k; i++)
        if (!isfinite(cost[i]) || cost[i] < 0.0)
            return lscat_error_setc(LSCAT_EINVALID, "sample %zu: cost %g of class %zu must be "
                                    "finite and >= 0", i / (size_t)k, cost[i], i % (size_t)k);
    return 0;
}

int learn_tree_fit_cost(struct learn_tree **out, const double *X, int n, int d,
                        const double *cost, int k, const struct learn_tree_options *o)
{
    *out = NULL;
    int rc = check(X, n, d, cost, k, o);
    if (rc < 0)
        return rc;
    struct cfit f = { .X = X, .cost = cost, .n = n, .d = d, .k = k, .max_depth = o->max_depth,
                      .min_leaf = o->min_samples_leaf };
    f.min_split = o->min_samples_split > 2 * o->min_samples_leaf ? o->min_samples_split
                                                                 : 2 * o->min_samples_leaf;
    f.idx = xmalloc((size_t)n * sizeof(int));
    f.tmp = xmalloc((size_t)n * sizeof(int));
    f.sum = xmalloc((size_t)k * sizeof(double));
    f.left = xmalloc((size_t)k * sizeof(double));
    f.keys = xmalloc((size_t)n * sizeof(*f.keys));
    for (int i = 0; i < n; i++)
        f.idx[i] = i;
    grow(&f, 0, n, 0);
    for (int i = 0; i < f.n_nodes; i++)
        f.nodes[i].value = f.values + (size_t)i * (size_t)k;
    rc = learn_tree_from_nodes(out, d, k, LEARN_COST, f.nodes, f.n_nodes);
    free(f.idx);
    free(f.tmp);
    free(f.sum);
    free(f.left);
    free(f.keys);
    free(f.nodes);
    free(f.values);
    return rc;
}
