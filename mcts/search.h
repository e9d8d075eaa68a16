/* Monte-Carlo tree search over the implementations of a DAG (the paper's Algorithm, with the
 * strategies compared). Each node of the tree is a prefix of a sequence; its children are the
 * next steps of mcts/sync.h. One iteration: selection from the root by the strategy's value
 * plus exploration c*sqrt(ln N / n) (c = sqrt 2; minus infinity for a fully explored child) down
 * to a node with a child never rolled out; expansion of that child; a random rollout to a
 * complete implementation whose nodes stay in the tree; backpropagation of min and max of the
 * p10 time and of the "fully explored" marks. Every iteration yields an implementation not
 * measured before; the search ends when the root is fully explored.
 * Strategies: coverage (the paper's: the child's time range over its parent's, 1 when either
 * has fewer than two times), fastest-first (how close the child's fastest time is to the
 * fastest seen), random (uniform among children not fully explored: random sampling without
 * repeats). The caller measures: next() proposes, report() records. */
#ifndef LSCAT_MCTS_SEARCH_H
#define LSCAT_MCTS_SEARCH_H

#include "mcts/backend.h"
#include "mcts/seq.h"

#include <stdint.h>

enum mcts_strategy { MCTS_COVERAGE = 0, MCTS_FASTEST = 1, MCTS_RANDOM = 2 };

struct mcts_search_options {
    int streams;
    int strategy;  /* enum mcts_strategy */
    uint64_t seed; /* the random generator's seed: the same seed gives the same search */
};
#define MCTS_SEARCH_OPTIONS_INIT { .streams = 2, .strategy = MCTS_COVERAGE, .seed = 1 }

struct mcts_search;

/* Name of a strategy ("coverage", "fastest", "random") and back. */
const char *mcts_strategy_name(int strategy);
int mcts_strategy_parse(int *out, const char *name);

int mcts_search_new(struct mcts_search **out, const struct mcts_dag *dag,
                    const struct mcts_search_options *opts);
void mcts_search_free(struct mcts_search *s);

/* Propose the next implementation to measure: *seq_out (borrowed, valid until the next call)
 * and its path, the child index taken at each step ("3,0,1,..."; appended to `path`).
 * Returns 1, or 0 when every implementation has been proposed. */
int mcts_search_next(struct mcts_search *s, const struct mcts_seq **seq_out, struct buf *path);
/* Record the measurement of the implementation proposed last. */
void mcts_search_report(struct mcts_search *s, const struct mcts_times *t);
/* Rebuild the tree from a recorded iteration (resume): its path as next() gave it, its times
 * and the generator state after it. Fails when the path does not fit the tree. */
int mcts_search_restore(struct mcts_search *s, const char *path, const struct mcts_times *t,
                        uint64_t rng_after);
/* The generator state now (stored with each iteration so a resumed search continues exactly
 * as an uninterrupted one would). */
uint64_t mcts_search_rng(const struct mcts_search *s);
/* Nodes in the tree (for the log). */
size_t mcts_search_tree_size(const struct mcts_search *s);

#endif
