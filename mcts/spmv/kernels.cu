/* The SpMV back end's own kernels (the products are cuSPARSE's): Pack gathers the x entries
 * other ranks need, Add sums the local and remote products. C entry points for gpu.c. */
#include <cuda_runtime.h>

__global__ void pack_kernel(double *out, const double *x, const int *idx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = x[idx[i]];
}

__global__ void add_kernel(double *y, const double *a, const double *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a[i] + b[i];
}

extern "C" int spmv_launch_pack(double *out, const double *x, const int *idx, int n,
                                cudaStream_t stream)
{
    if (n > 0)
        pack_kernel<<<(n + 255) / 256, 256, 0, stream>>>(out, x, idx, n);
    return (int)cudaGetLastError();
}

extern "C" int spmv_launch_add(double *y, const double *a, const double *b, int n,
                               cudaStream_t stream)
{
    if (n > 0)
        add_kernel<<<(n + 255) / 256, 256, 0, stream>>>(y, a, b, n);
    return (int)cudaGetLastError();
}
