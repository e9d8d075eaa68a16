/* Back ends of `lscat mcts search`: what measures one implementation. Replay (mcts/replay.c)
 * looks times up in a measurement file; the CUDA+MPI SpMV back end (mcts/spmv/) runs it.
 * Times are the authors' columns, in seconds: percentiles of repeated measurements, each the
 * program repeated until 0.01 s passed, divided, maximum over ranks. The search steers by p10,
 * as the authors' strategies do. */
#ifndef LSCAT_MCTS_BACKEND_H
#define LSCAT_MCTS_BACKEND_H

#include "mcts/seq.h"

struct mcts_times {
    double p01, p10, p50, p90, p99, stddev; /* seconds */
};

struct mcts_backend {
    const char *name;
    /* Measure `seq`; 0 or a negative code with the message set. */
    int (*measure)(struct mcts_backend *be, struct mcts_times *out, const struct mcts_seq *seq);
    void (*free)(struct mcts_backend *be);
};

/* The replay back end over a file in the authors' format (`i|p01|p10|p50|p90|p99|stddev|`
 * then one JSON object per step). Operation names are looked up in `dag` (aka names too).
 * Fails with a message naming the line when a row does not parse or is not an implementation
 * of the DAG. *out belongs to the caller: out->free(out). */
int mcts_replay_new(struct mcts_backend **out, const struct mcts_dag *dag, const char *path);
/* The number of distinct implementations the replay file holds. */
int mcts_replay_count(const struct mcts_backend *be);

/* Parse the seven leading columns of a row in the authors' format; returns the offset of the
 * first step (after the 7th '|'), or -1. */
int mcts_times_parse(struct mcts_times *out, const char *row);

#endif
