/* Sequences: an implementation of a DAG is the order in which its operations are issued, each
 * GPU operation bound to a stream, with the synchronisation steps (cudaEventRecord,
 * cudaEventSynchronize, cudaStreamWaitEvent) that the order needs as steps of their own. This
 * header holds the step, the sequence being built (with undo, for depth-first enumeration),
 * step names (`CER-after-Pack`, `CES-b4-PostSend`, `CSWE-after-yl`, `CER-b4-y`), the authors'
 * JSON form of a step and the key that is equal for implementations equal up to a renaming of
 * streams and events. The synchronisation rules themselves are in mcts/sync.h. */
#ifndef LSCAT_MCTS_SEQ_H
#define LSCAT_MCTS_SEQ_H

#include "common/buf.h"
#include "mcts/dag.h"

#include <stddef.h>
#include <stdint.h>

enum mcts_step_kind { MCTS_OP = 0, MCTS_CER = 1, MCTS_CES = 2, MCTS_CSWE = 3 };

/* Most steps a sequence may have (operations and synchronisations). */
#define MCTS_MAX_STEPS 512
/* Most streams a search may use. */
#define MCTS_MAX_STREAMS 16

struct mcts_step {
    int8_t kind;        /* enum mcts_step_kind */
    int8_t stream;      /* GPU operation, CER, CSWE: the stream; else -1 */
    int8_t vertex;      /* MCTS_OP: the vertex issued; a sync: the vertex it is named after */
    int8_t after;       /* a sync: named "-after-<vertex>" (1) or "-b4-<vertex>" (0) */
    int16_t event;      /* CER, CES, CSWE: the event; else -1 */
    int8_t bind_vertex; /* a sync made for a GPU vertex on a chosen stream fixes that choice: */
    int8_t bind_stream; /*   the vertex and its stream; -1 when it fixes nothing */
};

struct mcts_undo {
    int8_t vertex, binding;
    int8_t streams_used;
    int16_t events;
};

struct mcts_seq {
    const struct mcts_dag *dag; /* borrowed */
    int n;
    struct mcts_step s[MCTS_MAX_STEPS];
    struct mcts_undo undo[MCTS_MAX_STEPS];
    int8_t binding[MCTS_MAX_VERTICES]; /* stream fixed for a GPU vertex not yet issued, or -1 */
    int16_t pos[MCTS_MAX_VERTICES];    /* index of the vertex's MCTS_OP step, or -1 */
    int events;                        /* events used so far (0..events-1) */
    int streams_used;                  /* highest stream used or bound so far + 1 */
};

/* A sequence holding only `start`. */
void mcts_seq_init(struct mcts_seq *seq, const struct mcts_dag *dag);
/* Append a step (fixing a binding if it carries one); fails when the sequence is full. */
int mcts_seq_push(struct mcts_seq *seq, const struct mcts_step *step);
/* Undo the last push. */
void mcts_seq_pop(struct mcts_seq *seq);
/* 1 when `end` has been issued. */
int mcts_seq_complete(const struct mcts_seq *seq);

/* The step's name: the vertex for an operation, else e.g. "CER-after-Pack". */
void mcts_step_name(struct buf *out, const struct mcts_dag *dag, const struct mcts_step *step);
/* The authors' JSON object of a step ({"name":"yl","stream":0}, {"event":0,"kind":
 * "CudaEventRecord","name":"CER-after-Pack","stream":1}); keys sorted as theirs are. */
void mcts_step_json(struct buf *out, const struct mcts_dag *dag, const struct mcts_step *step);
/* The sequence as the authors write it: the step objects joined by '|'. */
void mcts_seq_json(struct buf *out, const struct mcts_seq *seq);
/* Parse one authors' JSON step object; names are looked up in the DAG (aka names too, also
 * inside sync names: "CER-after-Scatter" is "CER-after-Pack" when Pack has aka=Scatter). */
int mcts_step_parse_json(struct mcts_step *out, const struct mcts_dag *dag, const char *json);
/* Parse a whole '|'-joined sequence into `seq` (which it initialises). */
int mcts_seq_parse(struct mcts_seq *seq, const struct mcts_dag *dag, const char *text);

/* A byte key equal for two sequences exactly when they are equal up to a renaming of streams
 * and of events. Writes MCTS_KEY_STEP_BYTES * seq->n bytes into out. */
#define MCTS_KEY_STEP_BYTES 5
size_t mcts_seq_key(uint8_t *out, const struct mcts_seq *seq);

#endif
