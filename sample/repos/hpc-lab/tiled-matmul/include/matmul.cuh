#pragma once
// Tiled matrix multiplication C = A * B for square row-major matrices.

#include <cuda_runtime.h>

template <int BLOCK>
__global__ void matmul_tiled(const float *A, const float *B, float *C, int n);

void matmul(const float *A, const float *B, float *C, int n, cudaStream_t stream = 0);
