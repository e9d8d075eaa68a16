/* The program model of `lscat mcts`: a DAG of CPU operations (synchronous) and GPU operations
 * (asynchronous, bound to a stream when an implementation is built), with an implicit `start`
 * and `end`. The text format is documented in docs/mcts.md; mcts/dags/spmv.dag is the example.
 *
 *     # comment
 *     gpu Pack op=pack aka=Scatter     # kind, name, optional operation and alias
 *     cpu PostSend op=isend
 *     Pack -> PostSend                 # edges: every left name before every right name
 *     y WaitSend -> end
 *
 * A vertex without predecessors follows `start`; every vertex must reach `end` through edges. */
#ifndef LSCAT_MCTS_DAG_H
#define LSCAT_MCTS_DAG_H

enum mcts_kind { MCTS_CPU = 0, MCTS_GPU = 1 };

/* Most vertices a DAG may have (start and end included): a sequence state keeps bit sets. */
#define MCTS_MAX_VERTICES 64

struct mcts_vertex {
    char *name;  /* unique; "start" and "end" are the implicit ones */
    char *op;    /* the operation it runs (a name the back end provides); defaults to name */
    char *aka;   /* another name for it in measurement files (the authors' "Scatter"), or NULL */
    int kind;    /* MCTS_CPU or MCTS_GPU */
    int line;    /* line of the declaration (0 for start and end) */
    int npreds;
    int preds[MCTS_MAX_VERTICES]; /* sorted by name: ties between synchronisations break by it */
};

struct mcts_dag {
    int n;                   /* vertices; 0 is start, n-1 is end */
    struct mcts_vertex *v;
    char sha256[65];         /* of the text, so a search can be resumed only on the same DAG */
};

/* Parse DAG text; `path` names it in messages. On a malformed input (a cycle, an unknown
 * vertex, a duplicate name, a vertex with no path to end, a bad kind) fails with
 * LSCAT_EINVALID and a message "PATH:LINE: problem (what to do)". *out belongs to the caller. */
int mcts_dag_parse(struct mcts_dag **out, const char *text, const char *path);
/* Read and parse a file. */
int mcts_dag_load(struct mcts_dag **out, const char *path);
void mcts_dag_free(struct mcts_dag *dag);

/* Index of the vertex named `name` (or whose aka is `name`), or -1. */
int mcts_dag_find(const struct mcts_dag *dag, const char *name);
/* 1 when u must come before v (a path of edges from u to v). */
int mcts_dag_reaches(const struct mcts_dag *dag, int u, int v);
/* Number of GPU vertices. */
int mcts_dag_gpu_count(const struct mcts_dag *dag);

#endif
