/* A hash map from sequence keys (mcts_seq_key bytes) to an integer: the replay table, the
 * enumeration's de-duplication and the search's set of measured implementations. */
#ifndef LSCAT_MCTS_KEYSET_H
#define LSCAT_MCTS_KEYSET_H

#include <stddef.h>
#include <stdint.h>

struct mcts_keyset;

struct mcts_keyset *mcts_keyset_new(void);
void mcts_keyset_free(struct mcts_keyset *ks);
/* The value stored for key, or -1 when absent. */
int64_t mcts_keyset_get(const struct mcts_keyset *ks, const uint8_t *key, size_t len);
/* Store value for key unless present; returns 1 when added, 0 when it was there (the stored
 * value is kept). */
int mcts_keyset_put(struct mcts_keyset *ks, const uint8_t *key, size_t len, int64_t value);
size_t mcts_keyset_count(const struct mcts_keyset *ks);

#endif
