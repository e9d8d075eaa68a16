/* The feature kernel of Seer: longest, shortest and mean row length and their population
 * variance, from a CSR row_ptr array on the GPU. One pass, grid-stride over the rows, warp
 * reductions, then one atomic per warp; sums are exact 64-bit integers and the variance is
 * formed from them in 128-bit arithmetic on the host (rows * sumsq - sum^2, no cancellation).
 * Header-only CUDA, shared by lscat's benchmark (seer/gpu.cu) and the runtime library
 * (seer_select.cu), so the cost the benchmark measures is the cost seer_select() pays. */
#ifndef SEER_FEATURES_CUH
#define SEER_FEATURES_CUH

#include <cuda_runtime.h>
#include <limits.h>

struct seer_feature_acc {
    unsigned long long sum, sumsq;
    int max_len, min_len;
};

static __global__ void seer_features_kernel(const int *row_ptr, int rows, struct seer_feature_acc *acc)
{
    unsigned long long sum = 0, sumsq = 0;
    int mx = 0, mn = INT_MAX;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows;
         r += (long long)gridDim.x * blockDim.x) {
        int len = row_ptr[r + 1] - row_ptr[r];
        sum += (unsigned long long)len;
        sumsq += (unsigned long long)len * (unsigned long long)len;
        mx = len > mx ? len : mx;
        mn = len < mn ? len : mn;
    }
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, off);
        sumsq += __shfl_down_sync(0xffffffffu, sumsq, off);
        int omx = __shfl_down_sync(0xffffffffu, mx, off), omn = __shfl_down_sync(0xffffffffu, mn, off);
        mx = omx > mx ? omx : mx;
        mn = omn < mn ? omn : mn;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&acc->sum, sum);
        atomicAdd(&acc->sumsq, sumsq);
        atomicMax(&acc->max_len, mx);
        atomicMin(&acc->min_len, mn);
    }
}

/* Gather the four features of a CSR matrix whose row_ptr (rows + 1 ints) is on the GPU:
 * out[0] = longest row, out[1] = shortest, out[2] = mean, out[3] = population variance.
 * d_acc is device scratch for one seer_feature_acc. Synchronous on `stream` (the result is
 * copied back). Returns a cudaError_t (0 = success). */
static inline int seer_features_gather(double out[4], const int *d_row_ptr, int rows,
                                       struct seer_feature_acc *d_acc, cudaStream_t stream)
{
    struct seer_feature_acc h = { 0, 0, 0, INT_MAX };
    cudaError_t e = cudaMemcpyAsync(d_acc, &h, sizeof(h), cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess)
        return (int)e;
    int blocks = (rows + 255) / 256;
    blocks = blocks > 1024 ? 1024 : blocks < 1 ? 1 : blocks;
    seer_features_kernel<<<blocks, 256, 0, stream>>>(d_row_ptr, rows, d_acc);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return (int)e;
    if ((e = cudaMemcpyAsync(&h, d_acc, sizeof(h), cudaMemcpyDeviceToHost, stream)) != cudaSuccess ||
        (e = cudaStreamSynchronize(stream)) != cudaSuccess)
        return (int)e;
    unsigned __int128 n = (unsigned __int128)(rows > 0 ? rows : 1);
    unsigned __int128 num = n * h.sumsq - (unsigned __int128)h.sum * h.sum;
    out[0] = h.max_len;
    out[1] = rows > 0 ? h.min_len : 0;
    out[2] = (double)h.sum / (double)n;
    out[3] = (double)((long double)num / ((long double)n * (long double)n));
    return 0;
}

#endif
