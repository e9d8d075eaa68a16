/* CART classifier fitting, node for node as scikit-learn 1.2's DecisionTreeClassifier (see
 * tree.h for the rules and the two deliberate differences). Each feature's samples are sorted
 * once; a split partitions every feature's sorted run stably, so a node never sorts again. */
#include "learn/tree.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FEATURE_THRESHOLD 1e-7 /* sklearn: values closer than this are one value */

struct learn_tree {
    int d, k;
    enum learn_criterion criterion;
    int n_nodes, cap;
    struct learn_node *nodes;
    double *values; /* k per node */
};

struct split {
    int feature, pos;
    double threshold, improvement;
};

/* A node waiting to be evaluated (depth first) or expanded (best first). */
struct rec {
    int start, end, pos, depth, node; /* pos: first sample of the right child */
    int is_leaf;
    double improvement;
};

struct fit {
    const struct learn_tree_options *o;
    int d, k, m;           /* m: samples of positive weight */
    int max_depth, min_split;
    double *xc;            /* column-major copy: xc[f * m + s] */
    int *y;
    double *w;
    int *sorted;           /* per feature, sample numbers sorted by value; node = run */
    int *tmp;
    unsigned char *left;   /* per sample: goes left in the split being applied */
    double *sum_total, *sum_left, *sum_right;
    double w_root;
    struct learn_tree *t;
};

/* ---- impurity (sklearn's formulas and operation order) */

static double impurity_of(const struct fit *f, const double *sum, double wsum)
{
    double r = 0.0;
    if (f->o->criterion == LEARN_GINI) {
        double sq = 0.0;
        for (int c = 0; c < f->k; c++)
            sq += sum[c] * sum[c];
        return 1.0 - sq / (wsum * wsum);
    }
    for (int c = 0; c < f->k; c++) {
        if (sum[c] > 0.0) {
            double p = sum[c] / wsum;
            r -= p * (log(p) / log(2.0));
        }
    }
    return r;
}

/* ---- tree storage */

static int tree_add_node(struct learn_tree *t, int parent, int is_left, int depth)
{
    if (t->n_nodes == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->nodes = xrealloc(t->nodes, (size_t)t->cap * sizeof(*t->nodes));
        t->values = xrealloc(t->values, (size_t)t->cap * (size_t)t->k * sizeof(double));
    }
    int id = t->n_nodes++;
    struct learn_node *nd = &t->nodes[id];
    memset(nd, 0, sizeof(*nd));
    nd->feature = nd->left = nd->right = -1;
    nd->parent = parent;
    nd->depth = depth;
    if (parent >= 0) {
        if (is_left)
            t->nodes[parent].left = id;
        else
            t->nodes[parent].right = id;
    }
    return id;
}

static void tree_make_leaf(struct learn_tree *t, int id)
{
    struct learn_node *nd = &t->nodes[id];
    nd->feature = nd->left = nd->right = -1;
    nd->threshold = 0.0;
    nd->improvement = 0.0;
}

/* Fix value pointers and labels once the arrays stop moving. */
static void tree_finish(struct learn_tree *t)
{
    for (int i = 0; i < t->n_nodes; i++) {
        struct learn_node *nd = &t->nodes[i];
        const double *v = t->values + (size_t)i * (size_t)t->k;
        nd->value = v;
        nd->label = 0;
        for (int c = 1; c < t->k; c++)
            if (v[c] > v[nd->label])
                nd->label = c;
    }
}

/* ---- split search */

/* The best split of feature `ft` over the node run [start, end), if better than *best. */
static void scan_feature(struct fit *f, int ft, int start, int end, double wsum,
                         double *best_proxy, struct split *best)
{
    const int *run = f->sorted + (size_t)ft * (size_t)f->m;
    const double *xf = f->xc + (size_t)ft * (size_t)f->m;
    int msl = f->o->min_samples_leaf;
    if (xf[run[end - 1]] <= xf[run[start]] + FEATURE_THRESHOLD)
        return; /* constant here */
    memset(f->sum_left, 0, (size_t)f->k * sizeof(double));
    double wl = 0.0;
    int next = start, p = start;
    while (p < end) {
        while (p + 1 < end && xf[run[p + 1]] <= xf[run[p]] + FEATURE_THRESHOLD)
            p++;
        p++;
        if (p >= end || p - start < msl || end - p < msl)
            continue;
        for (; next < p; next++) {
            int s = run[next];
            f->sum_left[f->y[s]] += f->w[s];
            wl += f->w[s];
        }
        double wr = wsum - wl;
        for (int c = 0; c < f->k; c++)
            f->sum_right[c] = f->sum_total[c] - f->sum_left[c];
        double proxy = -wr * impurity_of(f, f->sum_right, wr) - wl * impurity_of(f, f->sum_left, wl);
        if (proxy > *best_proxy) {
            double a = xf[run[p - 1]], b = xf[run[p]];
            double thr = a / 2.0 + b / 2.0;
            if (thr == b || isinf(thr))
                thr = a;
            *best_proxy = proxy;
            *best = (struct split){ .feature = ft, .pos = p, .threshold = thr };
        }
    }
}

/* Move the node's samples that go left to the front of every feature's run, keeping order. */
static void apply_split(struct fit *f, int start, int end, const struct split *sp)
{
    const double *xf = f->xc + (size_t)sp->feature * (size_t)f->m;
    const int *run0 = f->sorted + (size_t)sp->feature * (size_t)f->m;
    for (int i = start; i < end; i++)
        f->left[run0[i]] = xf[run0[i]] <= sp->threshold;
    for (int ft = 0; ft < f->d; ft++) {
        int *run = f->sorted + (size_t)ft * (size_t)f->m;
        int nl = start, nr = 0;
        for (int i = start; i < end; i++) {
            if (f->left[run[i]])
                run[nl++] = run[i];
            else
                f->tmp[nr++] = run[i];
        }
        memcpy(run + nl, f->tmp, (size_t)nr * sizeof(int));
    }
}

/* Weighted impurity decrease of the applied split, as sklearn's impurity_improvement. */
static double split_improvement(struct fit *f, int start, int pos, int end, double wsum,
                                double impurity)
{
    const int *run = f->sorted;
    double wl = 0.0, wr = 0.0;
    memset(f->sum_left, 0, (size_t)f->k * sizeof(double));
    memset(f->sum_right, 0, (size_t)f->k * sizeof(double));
    for (int i = start; i < pos; i++) {
        f->sum_left[f->y[run[i]]] += f->w[run[i]];
        wl += f->w[run[i]];
    }
    for (int i = pos; i < end; i++) {
        f->sum_right[f->y[run[i]]] += f->w[run[i]];
        wr += f->w[run[i]];
    }
    double il = impurity_of(f, f->sum_left, wl), ir = impurity_of(f, f->sum_right, wr);
    return (wsum / f->w_root) * (impurity - wr / wsum * ir - wl / wsum * il);
}

/* Evaluate the run [r->start, r->end) as node r->node: statistics, leaf test, best split
 * (applied to the runs when found). Sets r->is_leaf, r->improvement; the node's split fields. */
static void evaluate(struct fit *f, struct rec *r)
{
    struct learn_tree *t = f->t;
    struct learn_node *nd = &t->nodes[r->node];
    double *value = t->values + (size_t)r->node * (size_t)t->k;
    double wsum = 0.0;
    memset(f->sum_total, 0, (size_t)f->k * sizeof(double));
    for (int i = r->start; i < r->end; i++) {
        int s = f->sorted[i];
        f->sum_total[f->y[s]] += f->w[s];
        wsum += f->w[s];
    }
    memcpy(value, f->sum_total, (size_t)f->k * sizeof(double));
    int n_node = r->end - r->start;
    double impurity = impurity_of(f, f->sum_total, wsum);
    nd->n_samples = n_node;
    nd->weighted_n_samples = wsum;
    nd->impurity = impurity;
    r->is_leaf = r->depth >= f->max_depth || n_node < f->min_split ||
                 n_node < 2 * f->o->min_samples_leaf || impurity <= DBL_EPSILON;
    r->improvement = 0.0;
    if (r->is_leaf)
        return;
    double best_proxy = -INFINITY;
    struct split sp = { .feature = -1, .pos = r->end };
    for (int ft = 0; ft < f->d; ft++)
        scan_feature(f, ft, r->start, r->end, wsum, &best_proxy, &sp);
    if (sp.pos >= r->end) {
        r->is_leaf = 1;
        return;
    }
    apply_split(f, r->start, r->end, &sp);
    sp.improvement = split_improvement(f, r->start, sp.pos, r->end, wsum, impurity);
    if (sp.improvement + DBL_EPSILON < f->o->min_impurity_decrease) {
        r->is_leaf = 1;
        return;
    }
    nd = &t->nodes[r->node];
    nd->feature = sp.feature;
    nd->threshold = sp.threshold;
    nd->improvement = sp.improvement;
    r->improvement = sp.improvement;
    r->pos = sp.pos;
}

/* ---- growth */

static struct rec new_rec(struct fit *f, int start, int end, int depth, int parent, int is_left)
{
    struct rec r = { .start = start, .end = end, .pos = end, .depth = depth };
    r.node = tree_add_node(f->t, parent, is_left, depth);
    evaluate(f, &r);
    return r;
}

static void grow_depth_first(struct fit *f)
{
    struct pending { int start, end, depth, parent, is_left; } *stack = NULL;
    size_t n = 0, cap = 0;
    XGROW(stack, 1, cap);
    stack[n++] = (struct pending){ 0, f->m, 0, -1, 0 };
    while (n > 0) {
        struct pending p = stack[--n];
        struct rec r = new_rec(f, p.start, p.end, p.depth, p.parent, p.is_left);
        if (r.is_leaf) {
            tree_make_leaf(f->t, r.node);
            continue;
        }
        XGROW(stack, n + 2, cap);
        stack[n++] = (struct pending){ r.pos, r.end, r.depth + 1, r.node, 0 };
        stack[n++] = (struct pending){ r.start, r.pos, r.depth + 1, r.node, 1 };
    }
    free(stack);
}

/* The frontier entry to expand next: largest improvement, then lowest node number. */
static size_t frontier_pick(const struct rec *fr, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        if (fr[i].improvement > fr[best].improvement ||
            (fr[i].improvement == fr[best].improvement && fr[i].node < fr[best].node))
            best = i;
    }
    return best;
}

static void grow_best_first(struct fit *f)
{
    struct rec *fr = NULL;
    size_t n = 0, cap = 0;
    int budget = f->o->max_leaf_nodes - 1;
    XGROW(fr, 1, cap);
    fr[n++] = new_rec(f, 0, f->m, 0, -1, 0);
    while (n > 0) {
        size_t i = frontier_pick(fr, n);
        struct rec r = fr[i];
        fr[i] = fr[--n];
        if (r.is_leaf || budget <= 0) {
            tree_make_leaf(f->t, r.node);
            continue;
        }
        budget--;
        XGROW(fr, n + 2, cap);
        fr[n++] = new_rec(f, r.start, r.pos, r.depth + 1, r.node, 1);
        fr[n++] = new_rec(f, r.pos, r.end, r.depth + 1, r.node, 0);
    }
    free(fr);
}

/* ---- set-up */

static int check_options(const struct learn_tree_options *o)
{
    if (o->max_depth < 0)
        return lscat_error_setc(LSCAT_EINVALID, "max_depth %d is negative (0 means unlimited)",
                                o->max_depth);
    if (o->max_leaf_nodes < 0 || o->max_leaf_nodes == 1)
        return lscat_error_setc(LSCAT_EINVALID,
                                "max_leaf_nodes %d: use 0 (unlimited) or at least 2",
                                o->max_leaf_nodes);
    if (o->min_samples_leaf < 1 || o->min_samples_split < 2)
        return lscat_error_setc(LSCAT_EINVALID,
                                "min_samples_leaf %d / min_samples_split %d: need >= 1 / >= 2",
                                o->min_samples_leaf, o->min_samples_split);
    if (!(o->min_impurity_decrease >= 0.0))
        return lscat_error_setc(LSCAT_EINVALID, "min_impurity_decrease must be >= 0");
    if (o->criterion != LEARN_GINI && o->criterion != LEARN_ENTROPY)
        return lscat_error_setc(LSCAT_EINVALID, "unknown criterion %d", (int)o->criterion);
    return 0;
}

static int check_data(const double *X, int n, int d, const int *y, int k, const double *w)
{
    if (n < 1 || d < 1 || k < 1)
        return lscat_error_setc(LSCAT_EINVALID, "need at least one sample, feature and class "
                                "(n %d, d %d, k %d)", n, d, k);
    for (int i = 0; i < n; i++) {
        if (y[i] < 0 || y[i] >= k)
            return lscat_error_setc(LSCAT_EINVALID, "sample %d: label %d is outside 0..%d", i,
                                    y[i], k - 1);
        if (w && (!isfinite(w[i]) || w[i] < 0.0))
            return lscat_error_setc(LSCAT_EINVALID, "sample %d: weight %g must be finite and "
                                    ">= 0", i, w[i]);
        for (int j = 0; j < d; j++)
            if (!isfinite(X[(size_t)i * (size_t)d + (size_t)j]))
                return lscat_error_setc(LSCAT_EINVALID, "sample %d, feature %d: value is not "
                                        "finite (replace NaN/inf before fitting)", i, j);
    }
    return 0;
}

/* Per-sample weights: w (or 1) times the balanced class weight when asked. */
static double *sample_weights(int n, const int *y, int k, const double *w, int balanced)
{
    double *out = xmalloc((size_t)n * sizeof(double));
    double *cw = xcalloc((size_t)k, sizeof(double));
    int *count = xcalloc((size_t)k, sizeof(int));
    int present = 0;
    for (int i = 0; i < n; i++)
        count[y[i]]++;
    for (int c = 0; c < k; c++)
        present += count[c] > 0;
    for (int c = 0; c < k; c++)
        cw[c] = count[c] ? (double)n / ((double)present * (double)count[c]) : 0.0;
    for (int i = 0; i < n; i++) {
        double base = w ? w[i] : 1.0;
        out[i] = balanced ? base * cw[y[i]] : base;
    }
    free(cw);
    free(count);
    return out;
}

/* An unsigned key that orders as the double does (-0.0 taken as 0.0). */
static uint64_t order_key(double v)
{
    uint64_t u;
    if (v == 0.0)
        v = 0.0;
    memcpy(&u, &v, sizeof(u));
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

/* Stable LSD radix sort of m sample numbers by key, a byte per pass; passes where every key
 * has the same byte are skipped (a binary feature needs one). `idx` starts as 0..m-1. */
static void radix_sort(int *idx, uint64_t *key, int *idx_tmp, uint64_t *key_tmp, size_t m)
{
    size_t count[256];
    for (int shift = 0; shift < 64; shift += 8) {
        memset(count, 0, sizeof(count));
        for (size_t i = 0; i < m; i++)
            count[(key[i] >> shift) & 0xff]++;
        if (count[(key[0] >> shift) & 0xff] == m)
            continue;
        size_t pos = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = pos;
            pos += c;
        }
        for (size_t i = 0; i < m; i++) {
            size_t at = count[(key[i] >> shift) & 0xff]++;
            key_tmp[at] = key[i];
            idx_tmp[at] = idx[i];
        }
        memcpy(key, key_tmp, m * sizeof(*key));
        memcpy(idx, idx_tmp, m * sizeof(*idx));
    }
}

/* Copy the samples of positive weight column-major and sort each feature once. */
static int fit_prepare(struct fit *f, const double *X, int n, const int *y, const double *wall)
{
    int d = f->d;
    int *keep = xmalloc((size_t)n * sizeof(int));
    f->m = 0;
    for (int i = 0; i < n; i++)
        if (wall[i] > 0.0)
            keep[f->m++] = i;
    if (f->m == 0) {
        free(keep);
        return lscat_error_setc(LSCAT_EINVALID, "every sample has weight 0: nothing to fit");
    }
    size_t m = (size_t)f->m;
    f->xc = xmalloc(m * (size_t)d * sizeof(double));
    f->sorted = xmalloc(m * (size_t)d * sizeof(int));
    f->y = xmalloc(m * sizeof(int));
    f->w = xmalloc(m * sizeof(double));
    f->tmp = xmalloc(m * sizeof(int));
    f->left = xmalloc(m);
    uint64_t *key = xmalloc(m * sizeof(*key)), *key_tmp = xmalloc(m * sizeof(*key));
    f->w_root = 0.0;
    for (size_t s = 0; s < m; s++) {
        f->y[s] = y[keep[s]];
        f->w[s] = wall[keep[s]];
        f->w_root += f->w[s];
        for (int j = 0; j < d; j++)
            f->xc[(size_t)j * m + s] = X[(size_t)keep[s] * (size_t)d + (size_t)j];
    }
    for (int j = 0; j < d; j++) {
        int *run = f->sorted + (size_t)j * m;
        for (size_t s = 0; s < m; s++) {
            key[s] = order_key(f->xc[(size_t)j * m + s]);
            run[s] = (int)s;
        }
        radix_sort(run, key, f->tmp, key_tmp, m);
    }
    free(key);
    free(key_tmp);
    free(keep);
    return 0;
}

static void fit_release(struct fit *f)
{
    free(f->xc);
    free(f->sorted);
    free(f->y);
    free(f->w);
    free(f->tmp);
    free(f->left);
    free(f->sum_total);
    free(f->sum_left);
    free(f->sum_right);
}

static struct learn_tree *tree_new(int d, int k, enum learn_criterion criterion)
{
    struct learn_tree *t = xcalloc(1, sizeof(*t));
    t->d = d;
    t->k = k;
    t->criterion = criterion;
    return t;
}

int learn_tree_fit(struct learn_tree **out, const double *X, int n, int d, const int *y, int k,
                   const double *w, const struct learn_tree_options *o)
{
    struct fit f = { .o = o, .d = d, .k = k };
    double *wall = NULL;
    int rc;
    *out = NULL;
    if ((rc = check_options(o)) < 0 || (rc = check_data(X, n, d, y, k, w)) < 0)
        return rc;
    wall = sample_weights(n, y, k, w, o->class_weight_balanced);
    if ((rc = fit_prepare(&f, X, n, y, wall)) < 0)
        goto done;
    f.max_depth = o->max_depth > 0 ? o->max_depth : 0x7fffffff;
    f.min_split = o->min_samples_split > 2 * o->min_samples_leaf ? o->min_samples_split
                                                                  : 2 * o->min_samples_leaf;
    f.sum_total = xmalloc((size_t)k * sizeof(double));
    f.sum_left = xmalloc((size_t)k * sizeof(double));
    f.sum_right = xmalloc((size_t)k * sizeof(double));
    f.t = tree_new(d, k, o->criterion);
    if (o->max_leaf_nodes > 0)
        grow_best_first(&f);
    else
        grow_depth_first(&f);
    tree_finish(f.t);
    *out = f.t;
    rc = 0;
done:
    fit_release(&f);
    free(wall);
    return rc;
}

void learn_tree_free(struct learn_tree *t)
{
    if (!t)
        return;
    free(t->nodes);
    free(t->values);
    free(t);
}

/* ---- use */

int learn_tree_apply(const struct learn_tree *t, const double *x)
{
    int i = 0;
    while (t->nodes[i].feature >= 0) {
        const struct learn_node *nd = &t->nodes[i];
        i = x[nd->feature] <= nd->threshold ? nd->left : nd->right;
    }
    return i;
}

int learn_tree_predict(const struct learn_tree *t, const double *x)
{
    return t->nodes[learn_tree_apply(t, x)].label;
}

void learn_tree_predict_many(int *out, const struct learn_tree *t, const double *X, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = learn_tree_predict(t, X + (size_t)i * (size_t)t->d);
}

int learn_tree_node_count(const struct learn_tree *t) { return t->n_nodes; }
int learn_tree_n_features(const struct learn_tree *t) { return t->d; }
int learn_tree_n_classes(const struct learn_tree *t) { return t->k; }
enum learn_criterion learn_tree_criterion(const struct learn_tree *t) { return t->criterion; }

int learn_tree_leaf_count(const struct learn_tree *t)
{
    int n = 0;
    for (int i = 0; i < t->n_nodes; i++)
        n += t->nodes[i].feature < 0;
    return n;
}

int learn_tree_depth(const struct learn_tree *t)
{
    int depth = 0;
    for (int i = 0; i < t->n_nodes; i++)
        if (t->nodes[i].depth > depth)
            depth = t->nodes[i].depth;
    return depth;
}

const struct learn_node *learn_tree_node(const struct learn_tree *t, int i)
{
    return i >= 0 && i < t->n_nodes ? &t->nodes[i] : NULL;
}

/* ---- cost-sensitive leaf labels */

int learn_tree_relabel_by_cost(struct learn_tree *t, const double *X, int n, const double *cost)
{
    if (n < 1)
        return lscat_error_setc(LSCAT_EINVALID, "relabelling needs at least one sample (n %d)", n);
    for (size_t i = 0; i < (size_t)n * (size_t)t->k; i++)
        if (!isfinite(cost[i]) || cost[i] < 0.0)
            return lscat_error_setc(LSCAT_EINVALID, "sample %zu: cost %g of class %zu must be "
                                    "finite and >= 0", i / (size_t)t->k, cost[i], i % (size_t)t->k);
    double *sum = xcalloc((size_t)t->n_nodes * (size_t)t->k, sizeof(double));
    char *seen = xcalloc((size_t)t->n_nodes, 1);
    for (int i = 0; i < n; i++) {
        int leaf = learn_tree_apply(t, X + (size_t)i * (size_t)t->d);
        seen[leaf] = 1;
        for (int c = 0; c < t->k; c++)
            sum[(size_t)leaf * (size_t)t->k + (size_t)c] += cost[(size_t)i * (size_t)t->k + (size_t)c];
    }
    for (int l = 0; l < t->n_nodes; l++) {
        if (!seen[l])
            continue;
        const double *s = sum + (size_t)l * (size_t)t->k;
        double *v = t->values + (size_t)l * (size_t)t->k;
        int best = 0;
        for (int c = 1; c < t->k; c++)
            best = s[c] < s[best] ? c : best;
        for (int c = 0; c < t->k; c++) /* the cheapest class 1, the others below 1 */
            v[c] = c == best ? 1.0 : s[c] > 0.0 ? s[best] / s[c] : 1.0;
    }
    free(sum);
    free(seen);
    tree_finish(t);
    return 0;
}

/* ---- rebuild (the serialiser's loader) */

static int check_links(const struct learn_node *nodes, int n_nodes, int d, int *parent)
{
    for (int i = 0; i < n_nodes; i++)
        parent[i] = -2;
    parent[0] = -1;
    for (int i = 0; i < n_nodes; i++) {
        const struct learn_node *nd = &nodes[i];
        if (parent[i] == -2)
            return lscat_error_setc(LSCAT_EINVALID, "node %d: no parent links to it", i);
        if (!nd->value)
            return lscat_error_setc(LSCAT_EINVALID, "node %d: no class values", i);
        if (nd->feature < 0) {
            if (nd->left != -1 || nd->right != -1)
                return lscat_error_setc(LSCAT_EINVALID, "node %d: a leaf with children", i);
            continue;
        }
        if (nd->feature >= d || !isfinite(nd->threshold))
            return lscat_error_setc(LSCAT_EINVALID, "node %d: feature %d outside 0..%d or a "
                                    "threshold that is not finite", i, nd->feature, d - 1);
        int ch[2] = { nd->left, nd->right };
        for (int c = 0; c < 2; c++) {
            if (ch[c] <= i || ch[c] >= n_nodes || parent[ch[c]] != -2)
                return lscat_error_setc(LSCAT_EINVALID, "node %d: child %d must be a new node "
                                        "numbered after it (nodes %d)", i, ch[c], n_nodes);
            parent[ch[c]] = i;
        }
    }
    return 0;
}

int learn_tree_from_nodes(struct learn_tree **out, int d, int k, enum learn_criterion criterion,
                          const struct learn_node *nodes, int n_nodes)
{
    *out = NULL;
    if (d < 1 || k < 1 || n_nodes < 1)
        return lscat_error_setc(LSCAT_EINVALID, "a tree needs d >= 1, k >= 1 and a node "
                                "(d %d, k %d, nodes %d)", d, k, n_nodes);
    int *parent = xmalloc((size_t)n_nodes * sizeof(int));
    int rc = check_links(nodes, n_nodes, d, parent);
    if (rc < 0) {
        free(parent);
        return rc;
    }
    struct learn_tree *t = tree_new(d, k, criterion);
    t->cap = t->n_nodes = n_nodes;
    t->nodes = xmalloc((size_t)n_nodes * sizeof(*t->nodes));
    t->values = xmalloc((size_t)n_nodes * (size_t)k * sizeof(double));
    for (int i = 0; i < n_nodes; i++) {
        t->nodes[i] = nodes[i];
        t->nodes[i].parent = parent[i];
        t->nodes[i].depth = parent[i] < 0 ? 0 : t->nodes[parent[i]].depth + 1;
        memcpy(t->values + (size_t)i * (size_t)k, nodes[i].value, (size_t)k * sizeof(double));
    }
    free(parent);
    tree_finish(t);
    *out = t;
    return 0;
}
