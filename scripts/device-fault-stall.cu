// Does a GPU fault in one process stall the other processes' work on the same GPU? (#14)
// faultstall beat SECONDS FILE   tiny kernel + sync in a loop; completion times to FILE
// faultstall fault               one kernel that writes to an unmapped address, then exit
// faultstall ctx                 create the primary context and exit
// faultstall faultloop K         K faulting launches in one process, each followed by a clean one
//                                (under compute-sanitizer --destroy-on-device-error kernel the
//                                context outlives each fault; bare, the first fault is sticky)
// faultstall idle SECONDS         hold a context (and 1 MiB) for SECONDS, then exit
// faultstall faultreset K        K times: a fault, then cudaDeviceReset and a new context in the
//                                same process (times of each part on one line per cycle)
// faultstall faultn BLOCKS far|near   BLOCKS x 256 threads each write out of bounds: far past
//                                any mapping, or just past a 1 MiB buffer (4 bytes a thread)
// Times are CLOCK_MONOTONIC seconds, comparable across processes (the driver script reads them).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__global__ void tick(int *p) { p[threadIdx.x] += 1; }
__global__ void bad(int *p) { p[(size_t)1 << 40] = 1; } /* far past any mapping */
__global__ void badn(int *p, size_t off)
{
    p[off + (size_t)blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    double t0 = now();
    if (cudaFree(0) != cudaSuccess)
        return 3;
    double tctx = now();
    if (!strcmp(argv[1], "ctx")) {
        printf("ctx %.6f %.6f\n", t0, tctx);
        return 0;
    }
    int *d;
    cudaMalloc(&d, 1 << 20);
    if (!strcmp(argv[1], "idle") && argc > 2) {
        printf("idle %.6f %.6f\n", t0, tctx);
        fflush(stdout);
        struct timespec ts = { (time_t)atoi(argv[2]), 0 };
        nanosleep(&ts, NULL);
        return 0;
    }
    if (!strcmp(argv[1], "faultreset") && argc > 2) {
        int k = atoi(argv[2]);
        for (int i = 0; i < k; i++) {
            double tl = now();
            bad<<<1, 1>>>(d);
            cudaError_t e = cudaDeviceSynchronize();
            double tf = now();
            cudaDeviceReset();
            double tr = now();
            cudaError_t c = cudaFree(0);
            cudaMalloc(&d, 1 << 20);
            double tc = now();
            printf("faultreset %d fault %.6f reset %.6f ctx %.6f %s %s\n", i, tf - tl, tr - tf, tc - tr,
                   cudaGetErrorName(e), cudaGetErrorName(c));
            fflush(stdout);
        }
        return 0;
    }
    if (!strcmp(argv[1], "faultloop") && argc > 2) {
        int k = atoi(argv[2]), bad_seen = 0, good_after = 0;
        double tl = now();
        for (int i = 0; i < k; i++) {
            badn<<<4, 256>>>(d, (size_t)1 << 40);
            bad_seen += cudaDeviceSynchronize() != cudaSuccess;
            cudaGetLastError();
            tick<<<1, 32>>>(d);
            good_after += cudaDeviceSynchronize() == cudaSuccess;
        }
        printf("faultloop %d faults_seen %d clean_after %d %.6f s\n", k, bad_seen, good_after,
               now() - tl);
        return 0;
    }
    if (!strcmp(argv[1], "faultn") && argc > 3) {
        int blocks = atoi(argv[2]);
        size_t off = strcmp(argv[3], "far") ? (1 << 20) / sizeof(int) : (size_t)1 << 40;
        cudaDeviceSynchronize();
        double tl = now();
        badn<<<blocks, 256>>>(d, off);
        cudaError_t e = cudaDeviceSynchronize();
        double tf = now();
        printf("faultn %d %s %.6f %s\n", blocks, argv[3], tf - tl, cudaGetErrorName(e));
        fflush(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "fault")) {
        double tl = now();
        bad<<<1, 1>>>(d);
        cudaError_t e = cudaDeviceSynchronize();
        double tf = now();
        printf("fault %.6f %.6f %.6f %.6f %s\n", t0, tctx, tl, tf, cudaGetErrorName(e));
        fflush(stdout);
        return 0; /* the context is torn down at exit: the caller times that */
    }
    double secs = atof(argv[2]);
    FILE *f = fopen(argv[3], "w");
    void *host = malloc(1 << 16);
    long n = 0;
    while (now() - tctx < secs) {
        tick<<<1, 32>>>(d);
        cudaMemcpy(host, d, 1 << 16, cudaMemcpyDeviceToHost);
        fprintf(f, "%.6f\n", now());
        n++;
    }
    fclose(f);
    printf("beat %.6f %.6f %ld\n", t0, tctx, n);
    return 0;
}
