/* One search, start to end: find or create its row in the store, rebuild the tree from the
 * iterations recorded there (resume), propose, measure through a back end, record each
 * iteration, and write the authors' CSV. Used by lscat-mcts (replay) and by rank 0 of the
 * SpMV back end's program. */
#ifndef LSCAT_MCTS_RUN_H
#define LSCAT_MCTS_RUN_H

#include "mcts/backend.h"
#include "mcts/results.h"
#include "mcts/search.h"

struct mcts_run_options {
    const char *dag_path;
    const char *backend_input; /* what else identifies the search (see mcts/results.h) */
    struct mcts_search_options search;
    int iterations;            /* stop after this many in all (resumed ones count); < 0 = all */
    int commit_every;          /* iterations per store transaction (1 for slow back ends) */
    const char *out_path;      /* the CSV; NULL = none */
};

struct mcts_run_summary {
    int iterations;  /* recorded in all */
    int resumed;     /* of which found in the store */
    int exhausted;   /* 1 when every implementation has been measured */
    double fastest_s, slowest_s; /* p10 */
    double search_s; /* wall time of the new iterations */
};

int mcts_run_search(struct mcts_run_summary *out, struct store *s, int64_t run_id,
                    const struct mcts_dag *dag, struct mcts_backend *be,
                    const struct mcts_run_options *o);

#endif
