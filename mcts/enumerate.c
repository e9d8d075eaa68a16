/* Depth-first enumeration (mcts/enumerate.h). Complete sequences are keyed up to renaming and
 * counted once: in DAGs where one synchronisation serves two GPU operations, two paths of the
 * walk can reach the same implementation (and brute force reaches each renaming of it). */
#include "mcts/enumerate.h"

#include "common/xalloc.h"
#include "mcts/keyset.h"
#include "mcts/sync.h"

#include <stdlib.h>
#include <string.h>

struct walk {
    struct mcts_seq seq;
    int nstreams, canonical;
    mcts_enum_fn fn;
    void *ctx;
    struct mcts_keyset *seen;
    int64_t raw;
    struct mcts_step scratch[MCTS_MAX_CHILDREN];
    uint8_t key[MCTS_MAX_STEPS * MCTS_KEY_STEP_BYTES];
};

static int visit(struct walk *w)
{
    int n = mcts_sync_children(w->scratch, MCTS_MAX_CHILDREN, &w->seq, w->nstreams,
                               w->canonical);
    if (n < 0)
        return n;
    if (n == 0) {
        size_t len = mcts_seq_key(w->key, &w->seq);
        w->raw++;
        if (!mcts_keyset_put(w->seen, w->key, len, w->raw))
            return 0;
        return w->fn ? w->fn(w->ctx, &w->seq) : 0;
    }
    struct mcts_step *kids = xmalloc((size_t)n * sizeof(*kids));
    memcpy(kids, w->scratch, (size_t)n * sizeof(*kids));
    int rc = 0;
    for (int i = 0; i < n && rc >= 0; i++) {
        if ((rc = mcts_seq_push(&w->seq, &kids[i])) < 0)
            break;
        rc = visit(w);
        mcts_seq_pop(&w->seq);
    }
    free(kids);
    return rc;
}

int64_t mcts_enumerate(const struct mcts_dag *dag, int nstreams, int canonical, mcts_enum_fn fn,
                       void *ctx, int64_t *raw_out)
{
    struct walk *w = xcalloc(1, sizeof(*w));
    mcts_seq_init(&w->seq, dag);
    w->nstreams = nstreams;
    w->canonical = canonical;
    w->fn = fn;
    w->ctx = ctx;
    w->seen = mcts_keyset_new();
    int rc = visit(w);
    int64_t count = rc < 0 ? rc : (int64_t)mcts_keyset_count(w->seen);
    if (raw_out)
        *raw_out = w->raw;
    mcts_keyset_free(w->seen);
    free(w);
    return count;
}
