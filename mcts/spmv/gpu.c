/* The SpMV back end on the GPU (mcts/spmv/gpu.h): device copies of the rank's blocks, one
 * stream per search stream, events created as sequences need them, cuSPARSE SpMV descriptors
 * made once; spmv_gpu_run walks a sequence and issues each step. */
#include "mcts/spmv/gpu.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <stdlib.h>
#include <string.h>

int spmv_launch_pack(double *out, const double *x, const int *idx, int n, cudaStream_t stream);
int spmv_launch_add(double *y, const double *a, const double *b, int n, cudaStream_t stream);

enum op { OP_NONE, OP_PACK, OP_SPMV_LOCAL, OP_SPMV_REMOTE, OP_ADD, OP_ISEND, OP_IRECV,
          OP_WAIT_SEND, OP_WAIT_RECV };
static const char *const op_names[] = { "", "pack", "spmv_local", "spmv_remote", "add",
                                        "isend", "irecv", "wait_send", "wait_recv" };

struct dev_csr {
    int *rowptr, *colidx;
    double *val;
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t x, y;
    void *buffer;
};

struct spmv_gpu {
    const struct spmv_part *p;
    struct spmv_exchange *ex;
    int op_of[MCTS_MAX_VERTICES];
    int nstreams;
    cudaStream_t streams[MCTS_MAX_STREAMS];
    cudaEvent_t events[MCTS_MAX_STEPS];
    int nevents;
    cusparseHandle_t sparse;
    struct dev_csr local, remote;
    double *d_xl, *d_xr, *d_yl, *d_yr, *d_y, *d_send;
    int *d_send_idx;
    double *h_send, *h_recv; /* pinned */
    double *y_host, *y_ref;
};

static int cuda_check(cudaError_t rc, const char *what)
{
    if (rc == cudaSuccess)
        return 0;
    return lscat_error_set("%s: %s", what, cudaGetErrorString(rc));
}

static int sparse_check(cusparseStatus_t rc, const char *what)
{
    if (rc == CUSPARSE_STATUS_SUCCESS)
        return 0;
    return lscat_error_set("%s: %s", what, cusparseGetErrorString(rc));
}

static int bind_ops(struct spmv_gpu *g, const struct mcts_dag *dag)
{
    for (int v = 0; v < dag->n; v++) {
        g->op_of[v] = -1;
        if (v == 0 || v == dag->n - 1)
            g->op_of[v] = OP_NONE;
        for (int k = 1; k <= OP_WAIT_RECV && g->op_of[v] < 0; k++)
            if (!strcmp(dag->v[v].op, op_names[k]))
                g->op_of[v] = k;
        if (g->op_of[v] < 0)
            return lscat_error_setc(LSCAT_EINVALID, "operation '%s' of vertex '%s' is not one "
                                    "the spmv back end provides (pack, spmv_local, spmv_remote, "
                                    "add, isend, irecv, wait_send, wait_recv)", dag->v[v].op,
                                    dag->v[v].name);
    }
    return 0;
}

static int upload(void **dst, const void *src, size_t bytes)
{
    if (cuda_check(cudaMalloc(dst, bytes ? bytes : 8), "cudaMalloc") < 0)
        return LSCAT_ERR;
    return src && bytes ? cuda_check(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice),
                                     "cudaMemcpy") : 0;
}

static int make_csr(struct spmv_gpu *g, struct dev_csr *d, const struct spmv_csr *m,
                    double *x, double *y)
{
    size_t bytes = 0;
    double one = 1.0, zero = 0.0;
    if (upload((void **)&d->rowptr, m->rowptr, sizeof(int) * ((size_t)m->rows + 1)) < 0 ||
        upload((void **)&d->colidx, m->colidx, sizeof(int) * (size_t)m->nnz) < 0 ||
        upload((void **)&d->val, m->val, sizeof(double) * (size_t)m->nnz) < 0)
        return LSCAT_ERR;
    if (sparse_check(cusparseCreateCsr(&d->mat, m->rows, m->cols ? m->cols : 1, m->nnz,
                                       d->rowptr, d->colidx, d->val, CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                       CUDA_R_64F), "cusparseCreateCsr") < 0 ||
        sparse_check(cusparseCreateDnVec(&d->x, m->cols ? m->cols : 1, x, CUDA_R_64F),
                     "cusparseCreateDnVec") < 0 ||
        sparse_check(cusparseCreateDnVec(&d->y, m->rows, y, CUDA_R_64F),
                     "cusparseCreateDnVec") < 0 ||
        sparse_check(cusparseSpMV_bufferSize(g->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                             d->mat, d->x, &zero, d->y, CUDA_R_64F,
                                             CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
                     "cusparseSpMV_bufferSize") < 0)
        return LSCAT_ERR;
    return upload(&d->buffer, NULL, bytes);
}

static int allocate(struct spmv_gpu *g)
{
    const struct spmv_part *p = g->p;
    size_t nr = (size_t)p->nrows, nx = (size_t)p->nremote, ns = (size_t)g->ex->nsend_total;
    double *xl = xmalloc(sizeof(double) * (nr ? nr : 1));
    for (size_t i = 0; i < nr; i++)
        xl[i] = spmv_x(p->row0 + (long)i);
    int rc = upload((void **)&g->d_xl, xl, sizeof(double) * nr);
    free(xl);
    if (rc < 0 || upload((void **)&g->d_xr, NULL, sizeof(double) * nx) < 0 ||
        upload((void **)&g->d_yl, NULL, sizeof(double) * nr) < 0 ||
        upload((void **)&g->d_yr, NULL, sizeof(double) * nr) < 0 ||
        upload((void **)&g->d_y, NULL, sizeof(double) * nr) < 0 ||
        upload((void **)&g->d_send, NULL, sizeof(double) * ns) < 0 ||
        upload((void **)&g->d_send_idx, g->ex->send_idx, sizeof(int) * ns) < 0 ||
        cuda_check(cudaMallocHost((void **)&g->h_send, sizeof(double) * (ns + 1)),
                   "cudaMallocHost") < 0 ||
        cuda_check(cudaMallocHost((void **)&g->h_recv, sizeof(double) * (nx + 1)),
                   "cudaMallocHost") < 0)
        return LSCAT_ERR;
    g->y_host = xmalloc(sizeof(double) * (nr + 1));
    g->y_ref = xmalloc(sizeof(double) * (nr + 1));
    spmv_reference(g->y_ref, p);
    return 0;
}

int spmv_gpu_new(struct spmv_gpu **out, const struct mcts_dag *dag, const struct spmv_part *p,
                 struct spmv_exchange *ex, int device, int streams)
{
    struct spmv_gpu *g = xcalloc(1, sizeof(*g));
    int rc;
    *out = NULL;
    g->p = p;
    g->ex = ex;
    g->nstreams = streams;
    if ((rc = bind_ops(g, dag)) < 0 || (rc = cuda_check(cudaSetDevice(device),
                                                        "cudaSetDevice")) < 0)
        goto done;
    for (int s = 0; s < streams && rc == 0; s++)
        rc = cuda_check(cudaStreamCreateWithFlags(&g->streams[s], cudaStreamNonBlocking),
                        "cudaStreamCreate");
    if (rc < 0 || (rc = sparse_check(cusparseCreate(&g->sparse), "cusparseCreate")) < 0 ||
        (rc = allocate(g)) < 0 ||
        (rc = make_csr(g, &g->local, &p->local, g->d_xl, g->d_yl)) < 0 ||
        (rc = make_csr(g, &g->remote, &p->remote, g->d_xr, g->d_yr)) < 0)
        goto done;
    *out = g;
    g = NULL;
done:
    spmv_gpu_free(g);
    return rc;
}

static void free_csr(struct dev_csr *d)
{
    if (d->mat)
        cusparseDestroySpMat(d->mat);
    if (d->x)
        cusparseDestroyDnVec(d->x);
    if (d->y)
        cusparseDestroyDnVec(d->y);
    cudaFree(d->rowptr);
    cudaFree(d->colidx);
    cudaFree(d->val);
    cudaFree(d->buffer);
}

void spmv_gpu_free(struct spmv_gpu *g)
{
    if (!g)
        return;
    free_csr(&g->local);
    free_csr(&g->remote);
    if (g->sparse)
        cusparseDestroy(g->sparse);
    for (int s = 0; s < g->nstreams; s++)
        if (g->streams[s])
            cudaStreamDestroy(g->streams[s]);
    for (int e = 0; e < g->nevents; e++)
        cudaEventDestroy(g->events[e]);
    cudaFree(g->d_xl), cudaFree(g->d_xr), cudaFree(g->d_yl), cudaFree(g->d_yr);
    cudaFree(g->d_y), cudaFree(g->d_send), cudaFree(g->d_send_idx);
    cudaFreeHost(g->h_send), cudaFreeHost(g->h_recv);
    free(g->y_host);
    free(g->y_ref);
    free(g);
}

static int spmv(struct spmv_gpu *g, struct dev_csr *d, cudaStream_t st)
{
    double one = 1.0, zero = 0.0;
    if (sparse_check(cusparseSetStream(g->sparse, st), "cusparseSetStream") < 0)
        return LSCAT_ERR;
    return sparse_check(cusparseSpMV(g->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d->mat,
                                     d->x, &zero, d->y, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT,
                                     d->buffer), "cusparseSpMV");
}

static int run_op(struct spmv_gpu *g, int op, cudaStream_t st)
{
    const struct spmv_part *p = g->p;
    size_t ns = (size_t)g->ex->nsend_total, nx = (size_t)p->nremote;
    switch (op) {
    case OP_PACK:
        if (cuda_check((cudaError_t)spmv_launch_pack(g->d_send, g->d_xl, g->d_send_idx,
                                                     (int)ns, st), "pack kernel") < 0)
            return LSCAT_ERR;
        return cuda_check(cudaMemcpyAsync(g->h_send, g->d_send, ns * sizeof(double),
                                          cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync");
    case OP_SPMV_LOCAL:
        return spmv(g, &g->local, st);
    case OP_SPMV_REMOTE:
        if (cuda_check(cudaMemcpyAsync(g->d_xr, g->h_recv, nx * sizeof(double),
                                       cudaMemcpyHostToDevice, st), "cudaMemcpyAsync") < 0)
            return LSCAT_ERR;
        return spmv(g, &g->remote, st);
    case OP_ADD:
        return cuda_check((cudaError_t)spmv_launch_add(g->d_y, g->d_yl, g->d_yr, p->nrows, st),
                          "add kernel");
    case OP_ISEND: return spmv_exchange_post_send(g->ex, g->h_send);
    case OP_IRECV: return spmv_exchange_post_recv(g->ex, g->h_recv);
    case OP_WAIT_SEND: return spmv_exchange_wait_send(g->ex);
    case OP_WAIT_RECV: return spmv_exchange_wait_recv(g->ex);
    }
    return 0;
}

static int event(struct spmv_gpu *g, int e, cudaEvent_t *out)
{
    while (g->nevents <= e)
        if (cuda_check(cudaEventCreateWithFlags(&g->events[g->nevents++],
                                                cudaEventDisableTiming), "cudaEventCreate") < 0)
            return LSCAT_ERR;
    *out = g->events[e];
    return 0;
}

int spmv_gpu_run(struct spmv_gpu *g, const struct mcts_seq *seq)
{
    for (int i = 0; i < seq->n; i++) {
        const struct mcts_step *s = &seq->s[i];
        cudaStream_t st = s->stream >= 0 ? g->streams[s->stream % g->nstreams] : 0;
        cudaEvent_t ev;
        int rc = 0;
        if (s->kind != MCTS_OP && event(g, s->event, &ev) < 0)
            return LSCAT_ERR;
        switch (s->kind) {
        case MCTS_OP: rc = run_op(g, g->op_of[s->vertex], st); break;
        case MCTS_CER: rc = cuda_check(cudaEventRecord(ev, st), "cudaEventRecord"); break;
        case MCTS_CES: rc = cuda_check(cudaEventSynchronize(ev), "cudaEventSynchronize"); break;
        case MCTS_CSWE:
            rc = cuda_check(cudaStreamWaitEvent(st, ev, 0), "cudaStreamWaitEvent");
            break;
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

int spmv_gpu_check(double *max_rel_error, struct spmv_gpu *g)
{
    if (cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize") < 0 ||
        cuda_check(cudaMemcpy(g->y_host, g->d_y, sizeof(double) * (size_t)g->p->nrows,
                              cudaMemcpyDeviceToHost), "cudaMemcpy") < 0)
        return LSCAT_ERR;
    *max_rel_error = spmv_max_rel_error(g->y_host, g->y_ref, g->p->nrows);
    return 0;
}

int spmv_gpu_clear(struct spmv_gpu *g)
{
    size_t nr = (size_t)g->p->nrows, nx = (size_t)g->p->nremote;
    size_t ns = (size_t)g->ex->nsend_total;
    if (cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize") < 0)
        return LSCAT_ERR;
    memset(g->h_send, 0xff, ns * sizeof(double));
    memset(g->h_recv, 0xff, nx * sizeof(double));
    double *bufs[] = { g->d_xr, g->d_yl, g->d_yr, g->d_y, g->d_send };
    size_t sizes[] = { nx, nr, nr, nr, ns };
    for (int i = 0; i < 5; i++)
        if (cuda_check(cudaMemset(bufs[i], 0xff, sizes[i] * sizeof(double)), "cudaMemset") < 0)
            return LSCAT_ERR;
    return 0;
}
