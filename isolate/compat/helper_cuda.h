/* lscat's own stand-in for the CUDA samples' helper_cuda.h, written from its documented
 * interface (error-check macros, device selection), not copied. isolate and execute use it only
 * when a repository includes helper_cuda.h without shipping it, and record that as a repair. */
#ifndef LSCAT_COMPAT_HELPER_CUDA_H
#define LSCAT_COMPAT_HELPER_CUDA_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "helper_string.h"

#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

static inline const char *lscat_compat_error_name(cudaError_t e) { return cudaGetErrorName(e); }

template <typename T>
static inline void lscat_compat_check(T result, const char *what, const char *file, int line)
{
    if (result) {
        fprintf(stderr, "CUDA error at %s:%d code=%d \"%s\"\n", file, line, (int)result, what);
        exit(EXIT_FAILURE);
    }
}

#define checkCudaErrors(val) lscat_compat_check((val), #val, __FILE__, __LINE__)

static inline void lscat_compat_last_error(const char *msg, const char *file, int line)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        fprintf(stderr, "%s:%d: %s: %s\n", file, line, msg, cudaGetErrorString(e));
        exit(EXIT_FAILURE);
    }
}

#define getLastCudaError(msg) lscat_compat_last_error((msg), __FILE__, __LINE__)
#define printLastCudaError(msg) ((void)cudaGetLastError())

static inline int _ConvertSMVer2Cores(int major, int minor)
{
    (void)minor;
    return major >= 8 ? 128 : major >= 6 ? 64 : major >= 3 ? 192 : 32;
}

static inline int findCudaDevice(int argc, const char **argv)
{
    int dev = getCmdLineArgumentInt(argc, argv, "device");
    checkCudaErrors(cudaSetDevice(dev));
    return dev;
}

static inline int gpuGetMaxGflopsDeviceId(void) { return 0; }

#endif
