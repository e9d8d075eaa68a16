/* CART decision-tree classifiers that reproduce scikit-learn 1.2's DecisionTreeClassifier
 * (splitter "best", all features at every node), for tools that turn measurements into rules a
 * person can read or into selectors a program can run.
 *
 *     struct learn_tree_options o = LEARN_TREE_OPTIONS_INIT;
 *     o.criterion = LEARN_ENTROPY;
 *     o.class_weight_balanced = 1;
 *     o.max_leaf_nodes = 6;                  // best-first growth, as sklearn
 *     struct learn_tree *t = NULL;
 *     if (learn_tree_fit(&t, X, n, d, y, k, NULL, &o) < 0) ... lscat_error_last() says why
 *     int c = learn_tree_predict(t, x);      // x: d doubles
 *     for (int i = 0; i < learn_tree_node_count(t); i++) {
 *         const struct learn_node *nd = learn_tree_node(t, i);   // walk: feature, threshold,
 *         ...                                                    // left/right, value, ...
 *     }
 *     learn_tree_free(t);
 *
 * Data: X is row-major, n samples x d features (X[i * d + j]); y holds labels 0..k-1; w (NULL =
 * all 1) holds non-negative sample weights. Samples of weight 0 take no part in the fit (as in
 * sklearn). A sample goes left at a node when x[feature] <= threshold.
 *
 * Exactly as sklearn 1.2 (so trees and predictions agree node for node):
 * - thresholds are the midpoints a/2 + b/2 of neighbouring sorted distinct values (b when the
 *   midpoint rounds to b); values closer than 1e-7 count as equal (sklearn's FEATURE_THRESHOLD);
 * - a split is chosen by the largest "proxy" improvement -(W_l * I_l + W_r * I_r); the stored
 *   improvement is sklearn's weighted impurity decrease (W_node / W_root) * (I - W_l/W_node *
 *   I_l - W_r/W_node * I_r), and a node whose best improvement + DBL_EPSILON falls below
 *   min_impurity_decrease stays a leaf, as does a node of impurity <= DBL_EPSILON;
 * - min_samples_split is raised to 2 * min_samples_leaf;
 * - without max_leaf_nodes the tree grows depth first and nodes are numbered in preorder (left
 *   child first); with it the tree grows best first (the open leaf with the largest improvement
 *   is split next, at most max_leaf_nodes - 1 splits) and nodes are numbered as sklearn does
 *   (both children get their numbers when their parent is split, left first);
 * - class_weight_balanced multiplies each sample's weight by n / (k' * n_c), n_c the number of
 *   samples of its class and k' the number of classes present in y (sklearn's "balanced");
 * - value[c] at a node is the weighted count of class c (sklearn 1.2's tree_.value), and a
 *   node's class is the first c with the largest value (numpy's argmax).
 *
 * Differences, by design:
 * - Ties. sklearn visits the features in a random order (random_state) and keeps the first best
 *   split it meets, so on tied improvements its tree depends on the seed. learn visits features
 *   0..d-1 and, within a feature, thresholds from small to large, and keeps the first strictly
 *   better split: on ties the lowest feature index wins, then the lowest threshold. Best-first
 *   growth breaks equal improvements by the lower node number. Trees from data without ties
 *   equal sklearn's; on tied data they are equally good (same impurity decrease) but may differ.
 * - Precision. sklearn rounds X to float32 before fitting and predicting; learn keeps doubles.
 *   The two agree exactly on values that float32 represents (binary features, small integers,
 *   counts below 2^24, and data rounded to float32 on purpose).
 *
 * Cost: O(n log n * d) once to sort, then O(n * d) per tree level; memory n * d ints. */
#ifndef LSCAT_LEARN_TREE_H
#define LSCAT_LEARN_TREE_H

enum learn_criterion {
    LEARN_GINI = 0,    /* 1 - sum p_c^2 */
    LEARN_ENTROPY = 1, /* -sum p_c log2 p_c (sklearn's "entropy" and "log_loss") */
    LEARN_COST = 2,    /* grown by learn_tree_fit_cost (not a learn_tree_fit criterion) */
};

struct learn_tree_options {
    enum learn_criterion criterion;
    int max_depth;                /* 0 = unlimited; the root has depth 0 */
    int max_leaf_nodes;           /* 0 = unlimited (depth first); >= 2: best-first growth */
    int min_samples_split;        /* a node with fewer samples is a leaf (sklearn default 2) */
    int min_samples_leaf;         /* each child keeps at least this many samples (default 1) */
    double min_impurity_decrease; /* split only when the weighted decrease reaches this */
    int class_weight_balanced;    /* 1: sklearn's class_weight='balanced' */
};

#define LEARN_TREE_OPTIONS_INIT                                                              \
    {                                                                                        \
        .criterion = LEARN_GINI, .max_depth = 0, .max_leaf_nodes = 0,                        \
        .min_samples_split = 2, .min_samples_leaf = 1, .min_impurity_decrease = 0.0,         \
        .class_weight_balanced = 0,                                                          \
    }

/* One node, read-only. Node 0 is the root. At a leaf feature, left and right are -1 and
 * threshold is 0. Pointers are borrowed from the tree and live as long as it does. */
struct learn_node {
    int feature;               /* split feature, -1 at a leaf */
    double threshold;          /* go left when x[feature] <= threshold */
    int left, right;           /* child node numbers, -1 at a leaf */
    int parent;                /* -1 at the root */
    int depth;                 /* root 0 */
    int n_samples;             /* training samples (of non-zero weight) reaching the node */
    double weighted_n_samples; /* their total weight (class weights included) */
    double impurity;           /* gini or entropy of the node's weighted class counts */
    double improvement;        /* weighted impurity decrease of the split, 0 at a leaf */
    int label;                 /* predicted class: first argmax of value */
    const double *value;       /* k weighted class counts */
};

struct learn_tree;

/* Fit a tree. *out belongs to the caller (learn_tree_free). Refuses (LSCAT_EINVALID, with a
 * message naming the sample or option) n < 1, d < 1, k < 1, a label outside 0..k-1, a negative
 * or non-finite weight, no sample of positive weight, a non-finite feature value, and options
 * out of range (max_leaf_nodes 1 or negative, min_samples_leaf < 1, min_samples_split < 2). */
int learn_tree_fit(struct learn_tree **out, const double *X, int n, int d, const int *y, int k,
                   const double *w, const struct learn_tree_options *o);
void learn_tree_free(struct learn_tree *t);

/* The class of one sample (d doubles). */
int learn_tree_predict(const struct learn_tree *t, const double *x);
/* The leaf a sample lands in (sklearn's apply). */
int learn_tree_apply(const struct learn_tree *t, const double *x);
/* Classes of n row-major samples into out[0..n-1]. */
void learn_tree_predict_many(int *out, const struct learn_tree *t, const double *X, int n);

int learn_tree_node_count(const struct learn_tree *t);
int learn_tree_leaf_count(const struct learn_tree *t);
int learn_tree_depth(const struct learn_tree *t); /* longest root-to-leaf path; 0 for a stump */
int learn_tree_n_features(const struct learn_tree *t);
int learn_tree_n_classes(const struct learn_tree *t);
enum learn_criterion learn_tree_criterion(const struct learn_tree *t);
/* Node i (0 <= i < node count), borrowed; NULL when out of range. */
const struct learn_node *learn_tree_node(const struct learn_tree *t, int i);

/* Used by the serialiser (learn/export.c) to rebuild a saved tree: takes n_nodes nodes whose
 * value pointers point at k doubles each (copied). Checks that the nodes form one tree rooted
 * at 0 with children numbered after their parent and features in 0..d-1. */
int learn_tree_from_nodes(struct learn_tree **out, int d, int k, enum learn_criterion criterion,
                          const struct learn_node *nodes, int n_nodes);

/* Cost-sensitive leaf labels: cost holds n x k non-negative costs (cost[i * k + c]: what
 * predicting class c costs sample i; row-major X as for the fit). Each leaf that one of the n
 * samples reaches predicts the class of the least summed cost over those samples (ties: the
 * lowest class); its value becomes each class's cost share s_best / s_c (1 for the chosen class,
 * below 1 for the others), so that the value's first argmax is the label and a tree saved and
 * loaded again (learn/export.h) predicts the same. Leaves no sample reaches and inner nodes keep
 * their class counts. Splits are unchanged. Refuses n < 1 and a negative or non-finite cost. */
int learn_tree_relabel_by_cost(struct learn_tree *t, const double *X, int n, const double *cost);

/* A tree grown on costs instead of labels: cost holds n x k non-negative costs (cost[i * k + c]:
 * what predicting class c costs sample i). Each node predicts its cheapest class (the least
 * summed cost of its samples; ties: the lowest class), and a node is split where the children's
 * cheapest classes cost the least in sum, strictly less than the node's (by a relative 1e-12);
 * scikit-learn has no such criterion. Otherwise as learn_tree_fit, depth first: thresholds are
 * midpoints a/2 + b/2 (a when that rounds to b) of neighbouring values more than 1e-7 apart;
 * o's max_depth, min_samples_leaf and min_samples_split (raised to 2 * min_samples_leaf) apply,
 * its other fields are ignored; on equal costs the lowest feature, then the lowest threshold,
 * wins. value[c] is the class's cost share s_best / s_c (as learn_tree_relabel_by_cost), a
 * node's impurity its cheapest class's summed cost, n_samples and weighted_n_samples its sample
 * count; learn_tree_criterion() says LEARN_COST. Refuses n, d or k < 1, a non-finite feature, a
 * negative or non-finite cost and options out of range (LSCAT_EINVALID). */
int learn_tree_fit_cost(struct learn_tree **out, const double *X, int n, int d,
                        const double *cost, int k, const struct learn_tree_options *o);

/* ---- Scores. y_true/y_pred hold n labels. */

/* Share of samples with y_pred == y_true (sklearn accuracy_score); 0 when n == 0. */
double learn_accuracy(const int *y_true, const int *y_pred, int n);
/* Weighted share: sum of w over correct samples / sum of w (w NULL = plain accuracy). */
double learn_weighted_accuracy(const int *y_true, const int *y_pred, const double *w, int n);
/* Mean recall over the classes present in y_true (sklearn balanced_accuracy_score); labels in
 * 0..k-1. */
double learn_balanced_accuracy(const int *y_true, const int *y_pred, int n, int k);
/* Accuracy of t on row-major X (plain when w is NULL, else weighted). */
double learn_tree_accuracy(const struct learn_tree *t, const double *X, int n, const int *y,
                           const double *w);

/* ---- The smallest tree that is good enough (Tenzing's Algorithm 1, as in the authors'
 * postprocess script): start with L = the number of classes present leaves, fit with
 * max_leaf_nodes = L and max_depth = L - 1, then try L + 1, L + 2, L + 3, L + 5 in turn and move
 * to the first that scores strictly better; stop when none does, when the score reaches 1, or
 * when L reaches max_leaves. The score is training accuracy (balanced accuracy when
 * score_balanced is set; the authors' "average error" over one-vs-rest problems is
 * 2 * errors / (n * k), so it ranks trees exactly as plain accuracy does). The other fields of
 * `tree` apply to every fit (the authors: entropy, balanced weights, min_impurity_decrease
 * 0.001); its max_depth and max_leaf_nodes are set by the search. */
struct learn_size_search_options {
    struct learn_tree_options tree;
    int start_leaves;   /* 0 = the number of classes present (at least 2) */
    int max_leaves;     /* 0 = 5 x the number of classes present */
    int score_balanced; /* 1: balanced accuracy instead of accuracy */
};
#define LEARN_SIZE_SEARCH_OPTIONS_INIT                                                       \
    {                                                                                        \
        .tree = LEARN_TREE_OPTIONS_INIT, .start_leaves = 0, .max_leaves = 0,                 \
        .score_balanced = 0,                                                                 \
    }

#define LEARN_SIZE_TRACE_MAX 64
/* What the search tried, in order (for plots like the authors' "error vs leaf nodes"). */
struct learn_size_trace {
    int n;
    int leaves[LEARN_SIZE_TRACE_MAX];    /* max_leaf_nodes of each fit */
    int depth[LEARN_SIZE_TRACE_MAX];     /* the fitted tree's depth */
    double score[LEARN_SIZE_TRACE_MAX];  /* its training score */
    int accepted[LEARN_SIZE_TRACE_MAX];  /* 1 when the search moved to it */
};

/* Run the search; *out is the chosen tree (caller frees). trace may be NULL. */
int learn_tree_fit_smallest(struct learn_tree **out, struct learn_size_trace *trace,
                            const double *X, int n, int d, const int *y, int k, const double *w,
                            const struct learn_size_search_options *o);

#endif
