// Issue #14: does anything a faulting process controls make a GPU fault cheaper? And can a
// process keep working in a second context after a fault in its first? (docs/execute.md
// "What a fault costs, by what the process does", session 21)
//   faultknobs VARIANT        one process: make the primary context, VARIANT's setup, a
//                             faulting kernel (or none), exit; prints its times
//   VARIANT: ctx (no kernel), clean (a good kernel), fault (1 MiB buffer, a 1-thread write far
//   past any mapping), nomalloc, bigmem (1 GiB buffer, memset), limits (stack 256 B, malloc heap
//   1 MiB, printf FIFO 64 KiB, set before any kernel), lmem (the faulting kernel has a 16 KiB
//   local array), trap (__trap() instead of an illegal address), kill (SIGKILL itself once the
//   error is seen: no teardown in user space), twoctx (driver API: contexts A and B; the fault
//   in A, then a kernel in B; cuCtxDestroy(A) timed)
// Times are CLOCK_MONOTONIC seconds.
#include <cuda.h>
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__global__ void tick(int *p) { p[threadIdx.x] += 1; }
__global__ void bad(int *p) { p[(size_t)1 << 40] = 1; }
__global__ void badtrap(int *p) { if (p) __trap(); }
__global__ void badlmem(int *p, int k)
{
    volatile int a[4096];
    for (int i = 0; i < 4096; i++)
        a[i] = i * k;
    p[(size_t)1 << 40] = a[k & 4095];
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *v = argv[1];
    double t0 = now();
    if (!strcmp(v, "twoctx")) {
        CUdevice dev;
        CUcontext a, b;
        if (cuInit(0) || cuDeviceGet(&dev, 0))
            return 3;
#if CUDA_VERSION >= 13000
        if (cuCtxCreate(&a, NULL, 0, dev) || cuCtxCreate(&b, NULL, 0, dev))
#else
        if (cuCtxCreate(&a, 0, dev) || cuCtxCreate(&b, 0, dev))
#endif
            return 3;
        double tctx = now();
        int *da = NULL, *db = NULL;
        cuCtxSetCurrent(a);
        cudaMalloc(&da, 1 << 20);
        cuCtxSetCurrent(b);
        cudaMalloc(&db, 1 << 20);
        tick<<<1, 32>>>(db);
        cudaError_t pre = cudaDeviceSynchronize();
        cuCtxSetCurrent(a);
        double tl = now();
        bad<<<1, 1>>>(da);
        cudaError_t ea = cudaDeviceSynchronize();
        double tf = now();
        cuCtxSetCurrent(b);
        cudaGetLastError();
        tick<<<1, 32>>>(db);
        cudaError_t eb = cudaDeviceSynchronize();
        double tb = now();
        CUresult d = cuCtxDestroy(a);
        double td = now();
        cuCtxSetCurrent(b);
        tick<<<1, 32>>>(db);
        cudaError_t eb2 = cudaDeviceSynchronize();
        /* a third context, made in this process after the fault */
        CUcontext c;
#if CUDA_VERSION >= 13000
        CUresult cc = cuCtxCreate(&c, NULL, 0, dev);
#else
        CUresult cc = cuCtxCreate(&c, 0, dev);
#endif
        double tc = now();
        cudaError_t ec = cudaErrorUnknown;
        if (!cc) {
            int *dc = NULL;
            cudaMalloc(&dc, 1 << 20);
            tick<<<1, 32>>>(dc);
            ec = cudaDeviceSynchronize();
        }
        printf("twoctx ctxs %.4f fault %.4f B_after %.4f destroyA %.4f newC %.4f | pre %s A %s B %s "
               "destroy %d B_again %s C_create %d C %s\n", tctx - t0, tf - tl, tb - tf, td - tb,
               tc - td, cudaGetErrorName(pre), cudaGetErrorName(ea), cudaGetErrorName(eb), (int)d,
               cudaGetErrorName(eb2), (int)cc, cudaGetErrorName(ec));
        return 0;
    }
    if (cudaFree(0) != cudaSuccess)
        return 3;
    double tctx = now();
    if (!strcmp(v, "ctx")) {
        printf("%s %.6f %.6f\n", v, tctx - t0, 0.0);
        return 0;
    }
    if (!strcmp(v, "limits")) {
        cudaDeviceSetLimit(cudaLimitStackSize, 256);
        cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1 << 20);
        cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 16);
    }
    int *d = NULL;
    if (strcmp(v, "nomalloc"))
        cudaMalloc(&d, !strcmp(v, "bigmem") ? (size_t)1 << 30 : 1 << 20);
    if (!strcmp(v, "bigmem"))
        cudaMemset(d, 0, (size_t)1 << 30);
    cudaDeviceSynchronize();
    double tl = now();
    if (!strcmp(v, "clean"))
        tick<<<1, 32>>>(d);
    else if (!strcmp(v, "trap"))
        badtrap<<<1, 1>>>(d);
    else if (!strcmp(v, "lmem"))
        badlmem<<<1, 1>>>(d, 7);
    else
        bad<<<1, 1>>>(d);
    cudaError_t e = cudaDeviceSynchronize();
    double tf = now();
    printf("%s %.6f %.6f %s\n", v, tctx - t0, tf - tl, cudaGetErrorName(e));
    fflush(stdout);
    if (!strcmp(v, "kill"))
        kill(getpid(), SIGKILL);
    return 0;
}
