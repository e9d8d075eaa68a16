/* lscat-mpi (internal): `lscat execute|tune|sweep --mpi` under Open MPI's mpirun. Rank 0 owns
 * the store (or the sweep's output) and serves chunks of work on request (BONSAI's
 * client-server scheme); every other rank is a thin MPI layer that runs the stage's own
 * program on its chunk as a child process against node-local scratch (a store of the chunk's
 * kernels, or a chunk CSV) and ships the result back, which rank 0 writes in one transaction
 * (`lscat dataset merge`) or appends to the output. Only this program links libmpi. */
#ifndef LSCAT_TUNE_MPI_H
#define LSCAT_TUNE_MPI_H

#include <stddef.h>
#include <stdint.h>

enum mpi_stage { MPI_STAGE_EXECUTE = 0, MPI_STAGE_TUNE = 1, MPI_STAGE_SWEEP = 2 };
enum mpi_gpus { MPI_GPUS_LOCAL = 0, MPI_GPUS_ALL = 1 };

struct mpi_job {
    enum mpi_stage stage;
    const char *program;        /* "lscat-tune" */
    char **args;                /* the stage's own arguments, --mpi options taken out */
    int nargs;
    int chunk;                  /* kernels (execute, tune) or records (sweep) per chunk */
    int inflight;               /* chunks a worker rank runs at once (--inflight) */
    int max_tries;              /* a chunk whose child is killed is handed out again */
    enum mpi_gpus gpus;
    const char *db_path;        /* rank 0's store (execute, tune) */
    const char *out_path;       /* the sweep's output (sweep) */
    const char *space_path;     /* the sweep's space (sweep) */
    int rows_from, rows_to;     /* the sweep's --rows */
    const char *self_dir;       /* where lscat-mpi lives: the stage programs are beside it */
};

/* Message tags. A worker asks (ASK, one int64: its chunks in flight), rank 0 answers WORK
 * ("<chunk id>\t<selector>": kernel ids one a line, or a sweep's record list), STOP (only to a worker with none in flight, once no chunk is
 * queued or out), or WAIT (to a worker with some in flight, when none is queued now: it asks
 * again after its next DONE); the worker reports DONE {chunk id, died, exit code, length} and
 * the result's bytes in DATA pieces. */
enum { MPI_TAG_ASK = 1, MPI_TAG_WORK, MPI_TAG_STOP, MPI_TAG_DONE, MPI_TAG_DATA, MPI_TAG_WAIT };

/* A chunk's outcome as a worker reports it. */
struct mpi_done {
    int64_t chunk;
    int64_t died;               /* the child was killed (a signal): the chunk is redone */
    int64_t exit_code;
    int64_t len;
};

/* Rank 0: plan the chunks, serve them until every worker is stopped, write what comes back.
 * Returns the exit code. */
int mpi_serve(const struct mpi_job *job, int nworkers, const char *scratch);
/* A worker rank: `node_index` among the worker ranks of its node, `node_workers` of them. */
int mpi_work(const struct mpi_job *job, const char *scratch, int node_index, int node_workers);
/* Whether a worker rank runs its tune chunks in one `lscat-tune --serve` (tune, --mpi-gpus
 * local, unless LSCAT_MPI_SERVE=0). */
int mpi_serve_on(const struct mpi_job *job);

/* Rank 0's merges of chunk stores into the store, in a thread of their own (tune/mpi_merge.c):
 * add takes a file (owned: merged, then removed); free waits for every queued merge and says
 * how many were merged and in how long. Returns 0, or LSCAT_ERR when a merge failed (logged). */
struct mpi_merger;
int mpi_merger_new(struct mpi_merger **out, const char *self_dir, const char *db_path);
void mpi_merger_add(struct mpi_merger *m, char *file);
int mpi_merger_free(struct mpi_merger *m, double *merge_s, int *merged);

/* Wait for a message from `src` (or MPI_ANY_SOURCE) of any tag without spinning: MPI_Iprobe
 * with a sleep between looks that grows from 20 us to 1 ms (Open MPI's blocking receives spin,
 * so rank 0, which waits the whole run, held a core at 100%: half of a 2-core machine). Says
 * its source, tag and size in bytes; the caller then receives it. */
void mpi_wait_message(int src, int *source, int *tag, int *bytes);

/* Bytes in pieces of at most 1 GiB (MPI counts are ints). */
void mpi_send_bytes(const void *data, size_t len, int dest);
void mpi_recv_bytes(void *data, size_t len, int src);
/* The broadcast of rank 0's store copy: *data and *len set on rank 0, filled elsewhere. */
void mpi_bcast_blob(char **data, size_t *len);

#endif
