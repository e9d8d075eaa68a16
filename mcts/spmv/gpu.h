/* The SpMV back end on the GPU: one implementation (a sequence of mcts/seq.h) executed step by
 * step: GPU operations on their streams, CPU operations as MPI calls, CER / CES / CSWE as
 * cudaEventRecord / cudaEventSynchronize / cudaStreamWaitEvent. Operations bind to code by the
 * DAG's op= names (docs/mcts.md, "How operations bind to code"):
 *   pack         gather the x entries other ranks need (kernel), copy them to the send buffer
 *   spmv_local   y_local = A_local x_local (cuSPARSE SpMV)
 *   spmv_remote  copy x_remote to the GPU, y_remote = A_remote x_remote (cuSPARSE SpMV)
 *   add          y = y_local + y_remote (kernel)
 *   isend irecv wait_send wait_recv   MPI_Isend / MPI_Irecv / MPI_Waitall (mcts/spmv/exchange.h)
 * and `start` / `end` do nothing. */
#ifndef LSCAT_MCTS_SPMV_GPU_H
#define LSCAT_MCTS_SPMV_GPU_H

#include "mcts/seq.h"
#include "mcts/spmv/exchange.h"

struct spmv_gpu;

/* Upload the rank's blocks, create streams, events and cuSPARSE handles on `device`, and bind
 * the DAG's operations (fails naming an operation this back end does not provide). */
int spmv_gpu_new(struct spmv_gpu **out, const struct mcts_dag *dag, const struct spmv_part *p,
                 struct spmv_exchange *ex, int device, int streams);
void spmv_gpu_free(struct spmv_gpu *g);
/* Run the implementation once (returns when its last step has been issued; CES-b4-end makes
 * the host wait for the GPU). */
int spmv_gpu_run(struct spmv_gpu *g, const struct mcts_seq *seq);
/* Fill every buffer a run writes with NaN, so a run that reads a value before it is ready
 * (a missing synchronisation) fails the check that follows it. */
int spmv_gpu_clear(struct spmv_gpu *g);
/* After a run: the largest relative difference of y from the CPU reference product. */
int spmv_gpu_check(double *max_rel_error, struct spmv_gpu *g);

#endif
