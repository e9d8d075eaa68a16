/* Enumeration of every implementation of a DAG on S streams, depth-first over the next steps
 * of mcts/sync.h, one per renaming class of streams: `lscat mcts enumerate` and the tests'
 * brute force (every stream for every GPU operation, then de-duplication by key). */
#ifndef LSCAT_MCTS_ENUMERATE_H
#define LSCAT_MCTS_ENUMERATE_H

#include "mcts/seq.h"

#include <stdint.h>

/* Called for each distinct implementation; return < 0 to stop (that code is returned). */
typedef int (*mcts_enum_fn)(void *ctx, const struct mcts_seq *seq);

/* Walk every implementation of `dag` on `nstreams` streams, calling fn (may be NULL) once per
 * implementation distinct up to a renaming of streams. canonical = 0 walks every binding
 * (brute force; same result, more work). *raw_out (may be NULL) gets the number of complete
 * sequences walked before de-duplication. Returns the count, or a negative code. */
int64_t mcts_enumerate(const struct mcts_dag *dag, int nstreams, int canonical, mcts_enum_fn fn,
                       void *ctx, int64_t *raw_out);

#endif
