/* Design rules (mcts/rules.h): labels by peaks of the step-convolved sorted times, features,
 * the smallest good tree, and its leaves written as sentences. The learning is learn/'s; this
 * file only arranges the data and the words. */
#include "mcts/rules.h"

#include "common/error.h"
#include "common/xalloc.h"
#include "learn/export.h"
#include "learn/peaks.h"
#include "learn/tree.h"
#include "mcts/features.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct mcts_rules {
    int n;                    /* training rows */
    struct mcts_features f;
    struct learn_labels labels;
    struct learn_tree *tree;
    double *lo, *hi;          /* class c: lo[c] <= t < hi[c] */
    double accuracy;          /* training accuracy */
    char **class_names, **feature_names;
};

/* Class ranges: class c starts at its first sorted time; the first is open below, the last
 * open above. */
static void ranges(struct mcts_rules *r)
{
    int k = r->labels.k;
    r->lo = xmalloc(sizeof(double) * (size_t)k);
    r->hi = xmalloc(sizeof(double) * (size_t)k);
    for (int c = 0; c < k; c++) {
        r->lo[c] = c == 0 ? 0 : r->labels.lo[c];
        r->hi[c] = c == k - 1 ? INFINITY : r->labels.lo[c + 1];
    }
}

static double *as_doubles(const uint8_t *x, size_t n)
{
    double *d = xmalloc(sizeof(double) * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return d;
}

static void names(struct mcts_rules *r)
{
    struct buf b = BUF_INIT;
    r->feature_names = xcalloc((size_t)r->f.cols + 1, sizeof(char *));
    for (int c = 0; c < r->f.cols; c++) {
        buf_reset(&b);
        mcts_features_sentence(&b, &r->f, c, 1);
        r->feature_names[c] = xstrdup(b.data);
    }
    r->class_names = xcalloc((size_t)r->labels.k + 1, sizeof(char *));
    for (int c = 0; c < r->labels.k; c++)
        r->class_names[c] = xasprintf("%d (%.4g-%.4g s)", c, r->labels.lo[c], r->labels.hi[c]);
    buf_release(&b);
}

int mcts_rules_learn(struct mcts_rules **out, const struct mcts_results_file *file,
                     const struct mcts_rules_options *o)
{
    struct mcts_rules *r = xcalloc(1, sizeof(*r));
    struct learn_label_options lo = LEARN_LABEL_OPTIONS_INIT;
    struct learn_size_search_options so = LEARN_SIZE_SEARCH_OPTIONS_INIT;
    double *X = NULL;
    int rc;
    *out = NULL;
    r->n = o->first > 0 && o->first < file->n ? o->first : file->n;
    r->labels = (struct learn_labels)LEARN_LABELS_INIT;
    if ((rc = learn_labels_by_peaks(&r->labels, file->p10, r->n, &lo)) < 0)
        goto done;
    ranges(r);
    mcts_features_build(&r->f, (const struct mcts_seq *const *)file->seqs, r->n);
    names(r);
    if (r->f.cols == 0 || r->labels.k < 2) { /* nothing to split on, or one class */
        rc = 0;
        *out = r;
        r = NULL;
        goto done;
    }
    X = as_doubles(r->f.x, (size_t)r->n * (size_t)r->f.cols);
    so.tree.criterion = o->criterion ? LEARN_ENTROPY : LEARN_GINI;
    so.tree.class_weight_balanced = 1;
    so.tree.min_impurity_decrease = 0.001; /* the authors' */
    if ((rc = learn_tree_fit_smallest(&r->tree, NULL, X, r->n, r->f.cols, r->labels.label,
                                      r->labels.k, NULL, &so)) < 0)
        goto done;
    r->accuracy = learn_tree_accuracy(r->tree, X, r->n, r->labels.label, NULL);
    *out = r;
    r = NULL;
done:
    free(X);
    mcts_rules_free(r);
    return rc;
}

void mcts_rules_free(struct mcts_rules *r)
{
    if (!r)
        return;
    for (int c = 0; r->feature_names && c < r->f.cols; c++)
        free(r->feature_names[c]);
    for (int c = 0; r->class_names && c < r->labels.k; c++)
        free(r->class_names[c]);
    free(r->feature_names);
    free(r->class_names);
    mcts_features_release(&r->f);
    learn_labels_release(&r->labels);
    learn_tree_free(r->tree);
    free(r->lo);
    free(r->hi);
    free(r);
}

int mcts_rules_classes(const struct mcts_rules *r)
{
    return r->labels.k;
}

int mcts_rules_leaves(const struct mcts_rules *r)
{
    return r->tree ? learn_tree_leaf_count(r->tree) : 1;
}

static int majority(const struct mcts_rules *r)
{
    int best = 0, *count = xcalloc((size_t)r->labels.k, sizeof(int));
    for (int i = 0; i < r->n; i++)
        count[r->labels.label[i]]++;
    for (int c = 1; c < r->labels.k; c++)
        if (count[c] > count[best])
            best = c;
    free(count);
    return best;
}

static int predict(const struct mcts_rules *r, const struct mcts_seq *seq, int *leaf_out)
{
    uint8_t *row = xmalloc((size_t)r->f.cols + 1);
    double *x = xmalloc(sizeof(double) * ((size_t)r->f.cols + 1));
    int c;
    mcts_features_row(row, &r->f, seq);
    for (int k = 0; k < r->f.cols; k++)
        x[k] = row[k];
    if (r->tree) {
        c = learn_tree_predict(r->tree, x);
        if (leaf_out)
            *leaf_out = learn_tree_apply(r->tree, x);
    } else {
        c = majority(r);
        if (leaf_out)
            *leaf_out = 0;
    }
    free(row);
    free(x);
    return c;
}

double mcts_rules_evaluate(const struct mcts_rules *r, const struct mcts_results_file *all)
{
    int right = 0;
    for (int i = 0; i < all->n; i++) {
        int c = predict(r, all->seqs[i], NULL);
        right += all->p10[i] >= r->lo[c] && all->p10[i] < r->hi[c];
    }
    return all->n ? (double)right / all->n : 0;
}

/* The sentences of the path from the root to `leaf`, root first. */
static void path_sentences(struct buf *out, const struct mcts_rules *r, int leaf)
{
    int path[256], n = 0;
    for (int i = leaf; i > 0 && n < 256; i = learn_tree_node(r->tree, i)->parent)
        path[n++] = i;
    for (int k = n - 1; k >= 0; k--) {
        const struct learn_node *child = learn_tree_node(r->tree, path[k]);
        const struct learn_node *parent = learn_tree_node(r->tree, child->parent);
        buf_adds(out, "  ");
        mcts_features_sentence(out, &r->f, parent->feature, parent->right == path[k]);
        buf_addch(out, '\n');
    }
}

struct leaf_stat {
    int node, count, right;
};

static int by_count(const void *a, const void *b)
{
    const struct leaf_stat *x = a, *y = b;
    return x->count != y->count ? y->count - x->count : x->node - y->node;
}

void mcts_rules_text(struct buf *out, const struct mcts_rules *r)
{
    int nodes = r->tree ? learn_tree_node_count(r->tree) : 1;
    struct leaf_stat *st = xcalloc((size_t)nodes, sizeof(*st));
    buf_addf(out, "# lscat mcts rules: %d implementations, %d classes by p10 time:", r->n,
             r->labels.k);
    for (int c = 0; c < r->labels.k; c++)
        buf_addf(out, " %d: %.4g-%.4g s (%d)%s", c, r->labels.lo[c], r->labels.hi[c],
                 (c + 1 < r->labels.k ? r->labels.boundary[c] : r->n) -
                 (c > 0 ? r->labels.boundary[c - 1] : 0), c + 1 < r->labels.k ? ";" : "");
    buf_addf(out, "\n# tree: %d leaves, depth %d, %d features; training accuracy %.3f\n\n",
             mcts_rules_leaves(r), r->tree ? learn_tree_depth(r->tree) : 0, r->f.cols,
             r->tree ? r->accuracy : 1.0);
    for (int i = 0; i < nodes; i++)
        st[i].node = i;
    double *x = xmalloc(sizeof(double) * ((size_t)r->f.cols + 1));
    for (int i = 0; i < r->n; i++) {
        for (int k = 0; k < r->f.cols; k++)
            x[k] = r->f.x[(size_t)i * r->f.cols + k];
        int leaf = r->tree ? learn_tree_apply(r->tree, x) : 0;
        int c = r->tree ? learn_tree_node(r->tree, leaf)->label : majority(r);
        st[leaf].count++;
        st[leaf].right += r->labels.label[i] == c;
    }
    free(x);
    qsort(st, (size_t)nodes, sizeof(*st), by_count);
    for (int i = 0; i < nodes && st[i].count > 0; i++) {
        int c = r->tree ? learn_tree_node(r->tree, st[i].node)->label : majority(r);
        buf_addf(out, "class %d (%.4g-%.4g s): %d implementations, accuracy %.3f\n", c,
                 r->labels.lo[c], r->labels.hi[c], st[i].count,
                 (double)st[i].right / st[i].count);
        if (r->tree)
            path_sentences(out, r, st[i].node);
        buf_addch(out, '\n');
    }
    free(st);
}

int mcts_rules_dot(struct buf *out, const struct mcts_rules *r)
{
    if (!r->tree)
        return buf_adds(out, "digraph Tree {\nnode [shape=box] ;\n0 [label=\"one class\"] ;\n}\n");
    return learn_tree_to_dot(out, r->tree, (const char *const *)r->feature_names,
                             (const char *const *)r->class_names);
}
