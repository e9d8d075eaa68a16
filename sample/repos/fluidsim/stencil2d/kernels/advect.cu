// Semi-Lagrangian advection: each thread traces back along a constant velocity and
// interpolates with a device helper.
#include "../common/grid.h"
#include "../common/math_helpers.cuh"

__device__ float sample_bilinear(Grid g, float x, float y)
{
    x = clampf(x, 0.0f, (float)g.nx);
    y = clampf(y, 0.0f, (float)g.ny);
    int i = (int)x, j = (int)y;
    float tx = x - i, ty = y - j;
    float a = lerp(g.u[IDX(g, i, j)], g.u[IDX(g, i + 1, j)], tx);
    float b = lerp(g.u[IDX(g, i, j + 1)], g.u[IDX(g, i + 1, j + 1)], tx);
    return lerp(a, b, ty);
}

__global__ void advect(Grid g, float *out, float vx, float vy, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i > g.nx || j > g.ny)
        return;
    float x = i - vx * dt / g.dx;
    float y = j - vy * dt / g.dy;
    out[IDX(g, i, j)] = sample_bilinear(g, x, y);
}
