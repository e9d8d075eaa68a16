// Tree reduction in dynamically sized shared memory (extern __shared__), two passes.
#include "reduce.h"

#include <cuda_runtime.h>

__global__ void reduce_partial(const float *in, float *partial, int n)
{
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float v = 0.0f;
    if (i < n)
        v = in[i];
    if (i + blockDim.x < n)
        v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        v = sdata[tid] + (blockDim.x >= 64 ? sdata[tid + 32] : 0.0f);
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffff, v, offset);
        if (tid == 0)
            partial[blockIdx.x] = v;
    }
}

extern "C" float reduce_sum(const float *d_in, int n)
{
    const int threads = 256;
    int blocks = (n + threads * 2 - 1) / (threads * 2);
    float *d_partial, *d_out, result = 0.0f;
    cudaMalloc(&d_partial, blocks * sizeof(float));
    cudaMalloc(&d_out, sizeof(float));
    reduce_partial<<<blocks, threads, threads * sizeof(float)>>>(d_in, d_partial, n);
    reduce_partial<<<1, threads, threads * sizeof(float)>>>(d_partial, d_out, blocks);
    cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d_partial);
    cudaFree(d_out);
    return result;
}
