/* Search results: the store's mcts_searches / mcts_iterations rows (schema/005_mcts.sql) and
 * the CSV in the authors' format (`i|p01|p10|p50|p90|p99|stddev|` then the steps as JSON
 * objects joined by '|'), so their scripts read ours and ours read theirs. */
#ifndef LSCAT_MCTS_RESULTS_H
#define LSCAT_MCTS_RESULTS_H

#include "mcts/backend.h"
#include "store/store.h"

#include <stdint.h>

/* What identifies a search (and so what a resumed search must match). */
struct mcts_search_id {
    const char *dag_path, *dag_sha256;
    int streams;
    const char *backend, *backend_input, *strategy;
    uint64_t seed;
};

/* The search's row: found (resume) or created. */
int mcts_results_open(int64_t *search_out, struct store *s, const struct mcts_search_id *id,
                      int64_t run_id);

/* Called per recorded iteration, in order; return < 0 to stop. */
typedef int (*mcts_iteration_fn)(void *ctx, int iteration, const char *sequence,
                                 const char *path, const struct mcts_times *t, uint64_t rng);
/* The recorded iterations in order; returns how many, or a negative code. */
int mcts_results_each(struct store *s, int64_t search, mcts_iteration_fn fn, void *ctx);

/* Record one iteration. */
int mcts_results_add(struct store *s, int64_t search, int iteration, const char *sequence,
                     const char *path, const struct mcts_times *t, uint64_t rng, int64_t run_id);

/* Write the first `limit` iterations (all when limit < 0) as the authors' CSV, atomically. */
int mcts_results_write_csv(struct store *s, int64_t search, int limit, const char *out_path);

/* One row of the authors' CSV, without newline. */
void mcts_results_format_row(struct buf *out, int iteration, const struct mcts_times *t,
                             const char *sequence);

#endif
