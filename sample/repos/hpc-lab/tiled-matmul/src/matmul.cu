#include "matmul.cuh"

#include <cstdio>

// Each block computes a BLOCK x BLOCK tile of C, staging tiles of A and B in shared memory.
template <int BLOCK>
__global__ void matmul_tiled(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[BLOCK][BLOCK];
    __shared__ float Bs[BLOCK][BLOCK + 1]; // +1 avoids bank conflicts

    int row = blockIdx.y * BLOCK + threadIdx.y;
    int col = blockIdx.x * BLOCK + threadIdx.x;
    float acc = 0.0f;

    for (int t = 0; t < (n + BLOCK - 1) / BLOCK; ++t) {
        int a_col = t * BLOCK + threadIdx.x;
        int b_row = t * BLOCK + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < n && a_col < n) ? A[row * n + a_col] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (b_row < n && col < n) ? B[b_row * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n)
        C[row * n + col] = acc;
}

template __global__ void matmul_tiled<16>(const float *, const float *, float *, int);
template __global__ void matmul_tiled<32>(const float *, const float *, float *, int);

void matmul(const float *A, const float *B, float *C, int n, cudaStream_t stream)
{
    if (n >= 1024) {
        dim3 block(32, 32), grid((n + 31) / 32, (n + 31) / 32);
        matmul_tiled<32><<<grid, block, 0, stream>>>(A, B, C, n);
    } else {
        dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
        matmul_tiled<16><<<grid, block, 0, stream>>>(A, B, C, n);
    }
}
