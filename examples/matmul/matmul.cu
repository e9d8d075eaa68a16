// A shared-memory tiled matrix multiply, C = A * B for n x n matrices: the kernel of the
// `lscat sweep` example. BLOCK_SIZE is a compile-time parameter of the space (a -D flag): the
// tile is BLOCK_SIZE x BLOCK_SIZE threads and two BLOCK_SIZE^2 float tiles of shared memory.
// BLOCK_SIZE 64 compiles but cannot launch (4096 threads per block, the limit is 1024);
// BLOCK_SIZE 128 does not compile (128 KiB of static shared memory, the limit is 48 KiB).
#include <cuda_runtime.h>

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (lscat sweep passes -DBLOCK_SIZE=... from the space)"
#endif

__global__ void matmul(const float *a, const float *b, float *c, int n)
{
    __shared__ float as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float bs[BLOCK_SIZE][BLOCK_SIZE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    float sum = 0.0f;
    for (int t = 0; t < (n + BLOCK_SIZE - 1) / BLOCK_SIZE; t++) {
        int ka = t * BLOCK_SIZE + tx, kb = t * BLOCK_SIZE + ty;
        as[ty][tx] = row < n && ka < n ? a[row * n + ka] : 0.0f;
        bs[ty][tx] = col < n && kb < n ? b[kb * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < BLOCK_SIZE; k++)
            sum += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (row < n && col < n)
        c[row * n + col] = sum;
}

// Called by the driver (C cannot write <<<...>>>). Returns the launch's status: a block of
// too many threads fails here, with cudaErrorInvalidConfiguration.
extern "C" int matmul_launch(const float *a, const float *b, float *c, int n,
                             cudaStream_t stream)
{
    dim3 block(BLOCK_SIZE, BLOCK_SIZE);
    dim3 grid((n + BLOCK_SIZE - 1) / BLOCK_SIZE, (n + BLOCK_SIZE - 1) / BLOCK_SIZE);
    matmul<<<grid, block, 0, stream>>>(a, b, c, n);
    return (int)cudaGetLastError();
}
