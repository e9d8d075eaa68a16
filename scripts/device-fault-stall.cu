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
// faultstall knob VARIANT        what a faulting process controls (session 21): make the context,
//                                VARIANT's setup, a faulting kernel (or none), exit. VARIANT: clean
//                                (a good kernel), fault (1 MiB buffer, one thread writing far
//                                away), nomalloc, bigmem (1 GiB buffer, memset), limits (stack
//                                256 B, malloc heap 1 MiB, printf FIFO 64 KiB, before any kernel),
//                                lmem (the faulting kernel has a 16 KiB local array), trap
//                                (__trap() instead), kill (SIGKILL itself once it saw the error)
// faultstall twoctx              driver API: contexts A and B in one process; a fault in A, then
//                                a kernel in B, cuCtxDestroy(A), a third context C made after it
// faultstall ops SECONDS FILE     what a tune configuration asks the driver besides its launches,
//                                in a loop: NVML clock and temperature reads (as the timing core's
//                                before/after), a one-kernel graph captured, instantiated and
//                                launched, a 1 MiB cudaMalloc + cudaFree, a launch + sync; one
//                                line per round to FILE: "t nvml_s graph_s malloc_s launch_s"
// Times are CLOCK_MONOTONIC seconds, comparable across processes (the driver script reads them).
#include <cuda.h>
#include <cuda_runtime.h>
#include "tune/nvml_dl.h" /* NVML as the timing core reads it (dlopen, handle by uuid) */
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
__global__ void bad(int *p) { p[(size_t)1 << 40] = 1; } /* far past any mapping */
__global__ void badn(int *p, size_t off)
{
    p[off + (size_t)blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
__global__ void badtrap(int *p) { if (p) __trap(); }
__global__ void badlmem(int *p, int k)
{
    volatile int a[4096];
    for (int i = 0; i < 4096; i++)
        a[i] = i * k;
    p[(size_t)1 << 40] = a[k & 4095];
}

static CUresult ctx_create(CUcontext *c, CUdevice dev)
{
#if CUDA_VERSION >= 13000
    return cuCtxCreate(c, NULL, 0, dev);
#else
    return cuCtxCreate(c, 0, dev);
#endif
}

/* twoctx: does a second context of the process survive a fault in the first? */
static int two_contexts(double t0)
{
    CUdevice dev;
    CUcontext a, b, c;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || ctx_create(&a, dev) || ctx_create(&b, dev))
        return 3;
    double tctx = now();
    int *da = NULL, *db = NULL, *dc = NULL;
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
    CUresult cc = ctx_create(&c, dev);
    double tc = now();
    cudaError_t ec = cudaErrorUnknown;
    if (!cc) {
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

/* knob VARIANT, after the context was made at tctx */
static int knob(const char *v, double t0, double tctx)
{
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
    printf("knob %s %.6f %.6f %s\n", v, tctx - t0, tf - tl, cudaGetErrorName(e));
    fflush(stdout);
    if (!strcmp(v, "kill"))
        kill(getpid(), SIGKILL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    double t0 = now();
    if (!strcmp(argv[1], "twoctx"))
        return two_contexts(t0);
    if (cudaFree(0) != cudaSuccess)
        return 3;
    double tctx = now();
    if (!strcmp(argv[1], "knob") && argc > 2)
        return knob(argv[2], t0, tctx);
    if (!strcmp(argv[1], "ctx")) {
        printf("ctx %.6f %.6f\n", t0, tctx);
        return 0;
    }
    int *d;
    cudaMalloc(&d, 1 << 20);
    if (!strcmp(argv[1], "ops") && argc > 3) {
        FILE *f = fopen(argv[3], "w");
        struct nvml_dl nv;
        nvml_dl_device h = NULL;
        unsigned v;
        cudaDeviceProp p;
        char uuid[48];
        if (!f || nvml_dl_load(&nv, NULL) != NVML_DL_SUCCESS ||
            cudaGetDeviceProperties(&p, 0) != cudaSuccess)
            return 4;
        nvml_dl_format_uuid(uuid, (const unsigned char *)p.uuid.bytes);
        if (nv.handle_by_uuid(uuid, &h) != NVML_DL_SUCCESS)
            return 4;
        cudaStream_t st;
        cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
        double end = now() + atof(argv[2]);
        while (now() < end) {
            double a = now();
            nv.clock_info(h, NVML_DL_CLOCK_SM, &v);
            nv.temperature(h, NVML_DL_TEMPERATURE_GPU, &v);
            nv.clock_info(h, NVML_DL_CLOCK_SM, &v);
            nv.clock_info(h, NVML_DL_CLOCK_MEM, &v);
            nv.temperature(h, NVML_DL_TEMPERATURE_GPU, &v);
            double b = now();
            cudaGraph_t g;
            cudaGraphExec_t ge;
            cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
            tick<<<1, 32, 0, st>>>(d);
            cudaStreamEndCapture(st, &g);
            cudaGraphInstantiate(&ge, g, 0);
            cudaGraphLaunch(ge, st);
            cudaStreamSynchronize(st);
            cudaGraphExecDestroy(ge);
            cudaGraphDestroy(g);
            double c = now();
            int *m = NULL;
            cudaMalloc(&m, 1 << 20);
            cudaFree(m);
            double e = now();
            tick<<<1, 32, 0, st>>>(d);
            cudaStreamSynchronize(st);
            double x = now();
            fprintf(f, "%.6f %.6f %.6f %.6f %.6f\n", a, b - a, c - b, e - c, x - e);
        }
        fclose(f);
        return 0;
    }
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
