/* The SpMV back end's MPI exchange: who needs which entries of x (set up once with
 * MPI_Alltoall/Alltoallv), then the four operations of the DAG: PostRecv (MPI_Irecv of
 * x_remote from each owner), PostSend (MPI_Isend of the packed entries to each rank that needs
 * them), WaitRecv, WaitSend (MPI_Waitall). Buffers are host memory (pinned and mapped in the
 * GPU back end, so the Pack kernel writes straight into the send buffer). Built with mpicc. */
#ifndef LSCAT_MCTS_SPMV_EXCHANGE_H
#define LSCAT_MCTS_SPMV_EXCHANGE_H

#include "mcts/spmv/problem.h"

#include <mpi.h>

struct spmv_exchange {
    MPI_Comm comm;
    int nsend, nrecv;         /* peers */
    int *send_peer, *send_off; /* send_off[nsend + 1] into the send buffer */
    int *recv_peer, *recv_off; /* recv_off[nrecv + 1] into x_remote */
    int *send_idx;            /* local row of each send-buffer entry (what Pack gathers) */
    int nsend_total;
    MPI_Request *send_req, *recv_req;
};

/* Collective over comm: learn which local entries each peer needs. */
int spmv_exchange_setup(struct spmv_exchange *ex, const struct spmv_part *p, MPI_Comm comm);
void spmv_exchange_release(struct spmv_exchange *ex);
/* sendbuf[k] = x_local[send_idx[k]] on the CPU (the GPU back end runs a kernel instead). */
void spmv_exchange_pack_cpu(double *sendbuf, const struct spmv_exchange *ex,
                            const double *x_local);
int spmv_exchange_post_recv(struct spmv_exchange *ex, double *x_remote);
int spmv_exchange_post_send(struct spmv_exchange *ex, const double *sendbuf);
int spmv_exchange_wait_recv(struct spmv_exchange *ex);
int spmv_exchange_wait_send(struct spmv_exchange *ex);

#endif
