// 5-point Laplacian with coefficients in constant memory.
#include "../common/grid.h"

#include <cuda_runtime.h>

#define RADIUS 1
#define AT(p, i, j, pitch) ((p)[(j) * (pitch) + (i)])

__constant__ float c_coef[2 * RADIUS + 1];

__global__ void stencil2d(const float *in, float *out, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + RADIUS;
    int j = blockIdx.y * blockDim.y + threadIdx.y + RADIUS;
    int pitch = nx + 2 * RADIUS;
    if (i >= nx + RADIUS || j >= ny + RADIUS)
        return;
    float v = c_coef[RADIUS] * AT(in, i, j, pitch);
    for (int r = 1; r <= RADIUS; r++) {
        v += c_coef[RADIUS + r] * (AT(in, i + r, j, pitch) + AT(in, i, j + r, pitch));
        v += c_coef[RADIUS - r] * (AT(in, i - r, j, pitch) + AT(in, i, j - r, pitch));
    }
    AT(out, i, j, pitch) = v;
}

void set_coefficients(const float *h_coef)
{
    cudaMemcpyToSymbol(c_coef, h_coef, sizeof(float) * (2 * RADIUS + 1));
}
