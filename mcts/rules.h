/* Design rules from measured implementations (the paper's step after the search): class
 * labels by peak finding on the sorted p10 times (learn/peaks.h: step kernel of radius 0.5% of
 * the count, peaks of prominence at or above the 98th percentile, as scipy.signal.find_peaks),
 * features from mcts/features.h, the smallest good CART tree (learn/tree.h: entropy or gini,
 * balanced class weights, the paper's Algorithm 1 over max leaf nodes, depth = leaves - 1),
 * and its leaves as rules: class, accuracy, sample count and the path as sentences. */
#ifndef LSCAT_MCTS_RULES_H
#define LSCAT_MCTS_RULES_H

#include "common/buf.h"
#include "mcts/seq.h"

struct mcts_rules_options {
    int first;     /* learn from the first N rows only; <= 0 = all */
    int criterion; /* 1 entropy (the authors'), 0 gini */
};
#define MCTS_RULES_OPTIONS_INIT { .first = 0, .criterion = 1 }

/* A results file read for the rules: sequences over a DAG made of the names in the file
 * (start, the operations, end), and their p10 times. */
struct mcts_results_file {
    struct mcts_dag *dag;
    int n;
    struct mcts_seq **seqs;
    double *p10;
};

int mcts_results_file_read(struct mcts_results_file *out, const char *path);
/* Read `path` with the operations of `like` (so both files share features). */
int mcts_results_file_read_like(struct mcts_results_file *out, const char *path,
                                const struct mcts_results_file *like);
void mcts_results_file_release(struct mcts_results_file *f);

struct mcts_rules;

int mcts_rules_learn(struct mcts_rules **out, const struct mcts_results_file *f,
                     const struct mcts_rules_options *o);
void mcts_rules_free(struct mcts_rules *r);
/* rules.txt text: a header (rows, classes with their time ranges, tree size, training
 * accuracy), then per leaf, by sample count: class, accuracy, count and the rule sentences. */
void mcts_rules_text(struct buf *out, const struct mcts_rules *r);
/* The tree as Graphviz DOT (features named by their sentences, classes by their ranges). */
int mcts_rules_dot(struct buf *out, const struct mcts_rules *r);
/* Classify every row of `all` and return the share whose time falls in the predicted class's
 * range [lo, hi) (the first class from 0, the last to infinity): the paper's Table V. */
double mcts_rules_evaluate(const struct mcts_rules *r, const struct mcts_results_file *all);
int mcts_rules_classes(const struct mcts_rules *r);
int mcts_rules_leaves(const struct mcts_rules *r);

#endif
