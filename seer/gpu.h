/* The GPU side of lscat seer bench (CUDA C++, only the worker lscat-seer-gpu includes it): a
 * matrix uploaded once in both precisions, its double CPU reference, and one kernel's
 * measurement (preprocessing, check, iterations through the timing core). */
#ifndef LSCAT_SEER_GPU_H
#define LSCAT_SEER_GPU_H

#include "seer/kernels.h"
#include "seer/seer_features.cuh"
#include "tune/timing.h"

/* The matrix on the GPU: CSR indices shared by both precisions, values and vectors in both. */
struct seer_dev_matrix {
    int rows, cols, nnz;
    int *rp, *ci;
    double *vd, *xd, *yd;
    float *vf, *xf, *yf;
    struct seer_features_ctx *feat; /* the feature kernel's context (one per worker) */
    void *sparse;                 /* cusparseHandle_t, created once per worker */
    double max_ell_bytes;         /* ELL larger than this is 'unsupported' */
};

/* y = A x in double for the x on the GPU, with sum |a_ij x_j| and the length of every row. */
struct seer_host_ref {
    const double *y, *abs;
    const int *len;
};

struct seer_gpu_error {
    int unsupported; /* 1: the kernel cannot run this matrix (not a fault) */
    char msg[400];
};

struct seer_gpu_result {
    const char *status; /* "ok", "fault", "wrong", "unsupported" (static strings) */
    char error[512];
    double preprocess_ns, iter_ns, iter_min_ns, iter_mad_ns, max_rel_err;
    int samples, launches_per_sample;
    int sticky; /* the CUDA context is unusable: the worker must exit */
};

/* Measure `kernel` (enum seer_kernel) in double (dbl = 1) or float. */
void seer_gpu_bench(struct seer_gpu_result *r, const struct seer_dev_matrix *m,
                    const struct seer_host_ref *ref, int kernel, int dbl,
                    const struct timing_options *to);
/* 1 for CUDA errors after which the context cannot be used again. */
int seer_gpu_is_sticky(int e);

#endif
