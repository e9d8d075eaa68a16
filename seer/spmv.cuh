/* The SpMV kernels Seer measures (y = A x), templated on the value type (float, double). Each
 * is the textbook form of its mapping, written for clarity over the last few percent: the
 * selector learns which mapping suits which matrix, not how far one can be tuned. The host
 * side (formats, preprocessing, launching, checking, timing) is seer/gpu.cu. */
#ifndef LSCAT_SEER_SPMV_CUH
#define LSCAT_SEER_SPMV_CUH

#include <cuda_runtime.h>

/* CSR, one thread per row. */
template <class T>
__global__ void k_csr_thread(int rows, const int *rp, const int *ci, const T *v, const T *x, T *y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    T s = 0;
    for (int k = rp[r]; k < rp[r + 1]; k++)
        s += v[k] * x[ci[k]];
    y[r] = s;
}

template <class T> __device__ T warp_sum(T s)
{
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    return s;
}

/* CSR, one warp per row (CSR-vector). */
template <class T>
__global__ void k_csr_warp(int rows, const int *rp, const int *ci, const T *v, const T *x, T *y)
{
    long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (w >= rows)
        return;
    T s = 0;
    for (int k = rp[w] + lane; k < rp[w + 1]; k += 32)
        s += v[k] * x[ci[k]];
    s = warp_sum(s);
    if (lane == 0)
        y[w] = s;
}

/* A row summed by a whole block (blockDim.x = SEER_BLOCK_THREADS). */
#define SEER_BLOCK_THREADS 256
template <class T>
__device__ void block_row(int r, const int *rp, const int *ci, const T *v, const T *x, T *y)
{
    __shared__ T part[SEER_BLOCK_THREADS / 32];
    T s = 0;
    for (int k = rp[r] + threadIdx.x; k < rp[r + 1]; k += blockDim.x)
        s += v[k] * x[ci[k]];
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : (T)0;
        s = warp_sum(s);
        if (threadIdx.x == 0)
            y[r] = s;
    }
}

/* CSR, one block per row. */
template <class T>
__global__ void k_csr_block(int rows, const int *rp, const int *ci, const T *v, const T *x, T *y)
{
    if ((int)blockIdx.x < rows)
        block_row(blockIdx.x, rp, ci, v, x, y);
}

/* Merge-path (Merrill & Garland): the rows + nnz items split into equal shares, one per thread;
 * a binary search on the diagonal finds each share's start. A row finished inside one share is
 * written; the pieces of rows cut by a share boundary are added atomically (y zeroed first). */
#define SEER_MERGE_ITEMS 8
template <class T>
__global__ void k_csr_merge(int rows, int nnz, const int *rp, const int *ci, const T *v,
                            const T *x, T *y)
{
    long long total = (long long)rows + nnz;
    long long diag = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * SEER_MERGE_ITEMS;
    if (diag >= total)
        return;
    long long end = diag + SEER_MERGE_ITEMS < total ? diag + SEER_MERGE_ITEMS : total;
    long long lo = diag - nnz > 0 ? diag - nnz : 0, hi = diag < rows ? diag : rows;
    while (lo < hi) { /* the row x where the path crosses this diagonal */
        long long mid = (lo + hi) >> 1;
        if (rp[mid + 1] <= diag - mid - 1)
            lo = mid + 1;
        else
            hi = mid;
    }
    long long row = lo, k = diag - lo, first_k = k;
    T s = 0;
    for (long long i = diag; i < end; i++) {
        if (row < rows && k < rp[row + 1]) {
            s += v[k] * x[ci[k]];
            k++;
        } else {
            if (rp[row] >= first_k)
                y[row] = s;
            else
                atomicAdd(&y[row], s);
            s = 0;
            row++;
        }
    }
    if (row < rows && k > rp[row] && k > first_k)
        atomicAdd(&y[row], s);
}

/* ELL (column-major, padded with column -1), one thread per row. */
template <class T>
__global__ void k_ell_thread(int rows, int width, const int *ec, const T *ev, const T *x, T *y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    T s = 0;
    for (int k = 0; k < width; k++) {
        long long at = (long long)k * rows + r;
        int c = ec[at];
        if (c >= 0)
            s += ev[at] * x[c];
    }
    y[r] = s;
}

/* CSR -> ELL, one thread per row (preprocessing). */
template <class T>
__global__ void k_csr_to_ell(int rows, int width, const int *rp, const int *ci, const T *v,
                             int *ec, T *ev)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    int b = rp[r], len = rp[r + 1] - b;
    for (int k = 0; k < width; k++) {
        long long at = (long long)k * rows + r;
        ec[at] = k < len ? ci[b + k] : -1;
        ev[at] = k < len ? v[b + k] : (T)0;
    }
}

/* Row index of every non-zero (COO from CSR, preprocessing). */
static __global__ void k_expand_rows(int rows, const int *rp, int *ri)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    for (int k = rp[r]; k < rp[r + 1]; k++)
        ri[k] = r;
}

/* COO, one non-zero per thread: a segmented sum across the warp over equal (sorted) row
 * indices, then one atomic per row piece (y zeroed first). */
template <class T>
__global__ void k_coo_warp(int nnz, const int *ri, const int *ci, const T *v, const T *x, T *y)
{
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int r = k < nnz ? ri[k] : -1;
    T p = k < nnz ? v[k] * x[ci[k]] : (T)0;
    for (int off = 1; off < 32; off <<= 1) {
        T q = __shfl_up_sync(0xffffffffu, p, off);
        int rq = __shfl_up_sync(0xffffffffu, r, off);
        if (lane >= off && rq == r)
            p += q;
    }
    int rn = __shfl_down_sync(0xffffffffu, r, 1);
    if (r >= 0 && (lane == 31 || rn != r))
        atomicAdd(&y[r], p);
}

/* Adaptive CSR: rows binned by length (preprocessing) into short (one thread), medium (one
 * warp) and long (one block) lists. */
#define SEER_SHORT_MAX 16
#define SEER_MEDIUM_MAX 2048
static __global__ void k_bin_rows(int rows, const int *rp, int *counts, int *lists)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    int len = rp[r + 1] - rp[r];
    int bin = len <= SEER_SHORT_MAX ? 0 : len <= SEER_MEDIUM_MAX ? 1 : 2;
    int at = atomicAdd(&counts[bin], 1);
    lists[(long long)bin * rows + at] = r;
}

template <class T>
__global__ void k_adaptive_short(int n, const int *list, const int *rp, const int *ci,
                                 const T *v, const T *x, T *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int r = list[i];
    T s = 0;
    for (int k = rp[r]; k < rp[r + 1]; k++)
        s += v[k] * x[ci[k]];
    y[r] = s;
}

template <class T>
__global__ void k_adaptive_medium(int n, const int *list, const int *rp, const int *ci,
                                  const T *v, const T *x, T *y)
{
    long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (w >= n)
        return;
    int r = list[w];
    T s = 0;
    for (int k = rp[r] + lane; k < rp[r + 1]; k += 32)
        s += v[k] * x[ci[k]];
    s = warp_sum(s);
    if (lane == 0)
        y[r] = s;
}

template <class T>
__global__ void k_adaptive_long(int n, const int *list, const int *rp, const int *ci,
                                const T *v, const T *x, T *y)
{
    if ((int)blockIdx.x < n)
        block_row(list[blockIdx.x], rp, ci, v, x, y);
}

#endif
