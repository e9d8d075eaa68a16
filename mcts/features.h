/* Features of implementations for the rules' decision tree (the authors' choice): for every
 * pair of named steps (operations and synchronisations) "u before v" (1 when some u comes
 * before some v), and for every pair of GPU operations "u same stream as v". Columns constant
 * over the training rows, and columns equal to an earlier column, are dropped. */
#ifndef LSCAT_MCTS_FEATURES_H
#define LSCAT_MCTS_FEATURES_H

#include "mcts/seq.h"

#include <stdint.h>

enum mcts_feature_kind { MCTS_SAME_STREAM = 0, MCTS_BEFORE = 1 };

struct mcts_features {
    int rows, cols;
    uint8_t *x;     /* rows * cols, row-major, 0/1 */
    int nnames;
    char **names;   /* step names seen in the training rows */
    int *kind, *u, *v; /* per column: enum mcts_feature_kind and two indices into names */
};

/* Build the columns from `n` training sequences and fill their rows. Release with
 * mcts_features_release. */
void mcts_features_build(struct mcts_features *out, const struct mcts_seq *const *seqs, int n);
/* The same columns for another sequence (steps not seen in training count as absent). */
void mcts_features_row(uint8_t *out, const struct mcts_features *f, const struct mcts_seq *seq);
/* The column as a sentence, true or negated: "yl before Pack" / "yl not before Pack",
 * "yl same stream as Pack" / "yl different stream than Pack". */
void mcts_features_sentence(struct buf *out, const struct mcts_features *f, int col, int value);
void mcts_features_release(struct mcts_features *f);

#endif
