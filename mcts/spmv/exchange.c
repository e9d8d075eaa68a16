/* The SpMV back end's MPI exchange (mcts/spmv/exchange.h). Counts go out with MPI_Alltoall,
 * the global indices each rank needs with MPI_Alltoallv; the owner turns them into local rows
 * to pack. Every MPI error becomes a message naming the call. */
#include "mcts/spmv/exchange.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define TAG 1515

static int mpi_check(int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return lscat_error_set("%s failed: %s", call, msg);
}

/* Which x_remote entries come from which owner: recv peers and offsets (remote_global is
 * sorted, so each owner's entries are contiguous). */
static void plan_recv(struct spmv_exchange *ex, const struct spmv_part *p, int *need_count)
{
    ex->recv_peer = xmalloc(sizeof(int) * (size_t)p->ranks);
    ex->recv_off = xcalloc((size_t)p->ranks + 1, sizeof(int));
    for (int k = 0; k < p->nremote; k++)
        need_count[spmv_owner(p->n, p->ranks, p->remote_global[k])]++;
    for (int r = 0, off = 0; r < p->ranks; r++)
        if (need_count[r] > 0) {
            ex->recv_peer[ex->nrecv] = r;
            ex->recv_off[ex->nrecv++] = off;
            off += need_count[r];
            ex->recv_off[ex->nrecv] = off;
        }
}

int spmv_exchange_setup(struct spmv_exchange *ex, const struct spmv_part *p, MPI_Comm comm)
{
    int R = p->ranks, rc;
    int *need = xcalloc((size_t)R, sizeof(int)), *give = xcalloc((size_t)R, sizeof(int));
    int *sdispl = xcalloc((size_t)R, sizeof(int)), *rdispl = xcalloc((size_t)R, sizeof(int));
    long *want = NULL;
    memset(ex, 0, sizeof(*ex));
    ex->comm = comm;
    plan_recv(ex, p, need);
    if ((rc = mpi_check(MPI_Alltoall(need, 1, MPI_INT, give, 1, MPI_INT, comm),
                        "MPI_Alltoall")) < 0)
        goto done;
    for (int r = 1; r < R; r++) {
        sdispl[r] = sdispl[r - 1] + need[r - 1];
        rdispl[r] = rdispl[r - 1] + give[r - 1];
    }
    ex->nsend_total = rdispl[R - 1] + give[R - 1];
    want = xmalloc(sizeof(long) * (size_t)(ex->nsend_total + 1));
    if ((rc = mpi_check(MPI_Alltoallv(p->remote_global, need, sdispl, MPI_LONG, want, give,
                                      rdispl, MPI_LONG, comm), "MPI_Alltoallv")) < 0)
        goto done;
    ex->send_idx = xmalloc(sizeof(int) * (size_t)(ex->nsend_total + 1));
    ex->send_peer = xmalloc(sizeof(int) * (size_t)R);
    ex->send_off = xcalloc((size_t)R + 1, sizeof(int));
    for (int k = 0; k < ex->nsend_total; k++)
        ex->send_idx[k] = (int)(want[k] - p->row0);
    for (int r = 0; r < R; r++)
        if (give[r] > 0) {
            ex->send_peer[ex->nsend] = r;
            ex->send_off[ex->nsend++] = rdispl[r];
            ex->send_off[ex->nsend] = rdispl[r] + give[r];
        }
    ex->send_req = xmalloc(sizeof(MPI_Request) * (size_t)(ex->nsend + 1));
    ex->recv_req = xmalloc(sizeof(MPI_Request) * (size_t)(ex->nrecv + 1));
done:
    free(want);
    free(need);
    free(give);
    free(sdispl);
    free(rdispl);
    return rc;
}

void spmv_exchange_release(struct spmv_exchange *ex)
{
    free(ex->send_peer);
    free(ex->send_off);
    free(ex->recv_peer);
    free(ex->recv_off);
    free(ex->send_idx);
    free(ex->send_req);
    free(ex->recv_req);
    memset(ex, 0, sizeof(*ex));
}

void spmv_exchange_pack_cpu(double *sendbuf, const struct spmv_exchange *ex,
                            const double *x_local)
{
    for (int k = 0; k < ex->nsend_total; k++)
        sendbuf[k] = x_local[ex->send_idx[k]];
}

int spmv_exchange_post_recv(struct spmv_exchange *ex, double *x_remote)
{
    for (int i = 0; i < ex->nrecv; i++)
        if (mpi_check(MPI_Irecv(x_remote + ex->recv_off[i], ex->recv_off[i + 1] -
                                ex->recv_off[i], MPI_DOUBLE, ex->recv_peer[i], TAG, ex->comm,
                                &ex->recv_req[i]), "MPI_Irecv") < 0)
            return LSCAT_ERR;
    return 0;
}

int spmv_exchange_post_send(struct spmv_exchange *ex, const double *sendbuf)
{
    for (int i = 0; i < ex->nsend; i++)
        if (mpi_check(MPI_Isend(sendbuf + ex->send_off[i], ex->send_off[i + 1] -
                                ex->send_off[i], MPI_DOUBLE, ex->send_peer[i], TAG, ex->comm,
                                &ex->send_req[i]), "MPI_Isend") < 0)
            return LSCAT_ERR;
    return 0;
}

int spmv_exchange_wait_recv(struct spmv_exchange *ex)
{
    return mpi_check(MPI_Waitall(ex->nrecv, ex->recv_req, MPI_STATUSES_IGNORE), "MPI_Waitall");
}

int spmv_exchange_wait_send(struct spmv_exchange *ex)
{
    return mpi_check(MPI_Waitall(ex->nsend, ex->send_req, MPI_STATUSES_IGNORE), "MPI_Waitall");
}
