/* Synchronisation insertion and the next steps of a sequence (paper Table III). Decided from
 * the sequence so far, never from the DAG alone: for an operation v ready to issue (all its
 * predecessors issued) on a chosen stream, each GPU predecessor a needs
 *   - v on the CPU: cudaEventRecord on a's stream after a, then cudaEventSynchronize
 *     (steps `CER-after-a`, `CES-b4-v`);
 *   - v on the GPU on another stream: cudaEventRecord, then cudaStreamWaitEvent on v's stream
 *     (`CER-b4-v`, `CSWE-after-a`);
 *   - nothing when a is on v's stream or a runs on the CPU.
 * A record on a's stream after a that is already waited for covers the edge; a record not yet
 * waited for is reused (the first one after a). When v needs synchronisation the next step is
 * one of its missing synchronisations (each its own step), not v; a synchronisation made for v
 * on a stream fixes v's stream. Two predecessors needing the identical step give one step,
 * named after the later predecessor in name order (the authors' tie-break). */
#ifndef LSCAT_MCTS_SYNC_H
#define LSCAT_MCTS_SYNC_H

#include "mcts/seq.h"

/* Most next steps one state may have. */
#define MCTS_MAX_CHILDREN 1024

/* Write the possible next steps after `seq` into out[0..] (in vertex order, then stream
 * order) and return how many (0 when the sequence is complete). `nstreams` streams exist;
 * `canonical` = 1 binds a GPU operation only to a stream already used or to the lowest unused
 * one (one representative per renaming of streams), 0 = to every stream (brute force).
 * Identical steps (same step, same binding) appear once. Fails when more than cap. */
int mcts_sync_children(struct mcts_step *out, int cap, const struct mcts_seq *seq, int nstreams,
                       int canonical);

#endif
