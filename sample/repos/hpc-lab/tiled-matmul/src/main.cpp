#include "matmul.cuh"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 512;
    std::vector<float> a(n * n, 1.0f), b(n * n, 2.0f), c(n * n);
    float *da, *db, *dc;
    size_t bytes = sizeof(float) * n * n;
    cudaMalloc(&da, bytes);
    cudaMalloc(&db, bytes);
    cudaMalloc(&dc, bytes);
    cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
    matmul(da, db, dc, n);
    cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
    std::printf("c[0] = %f (expected %f)\n", c[0], 2.0f * n);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return 0;
}
