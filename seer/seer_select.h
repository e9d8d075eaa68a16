/* seer_select(): pick the SpMV kernel to run on a CSR matrix that is already on the GPU, for a
 * given number of iterations, the way Seer does (Swann et al., "Seer: Predictive Runtime Kernel
 * Selection for Irregular Problems"): a selector tree decides from what is known for free
 * (rows, columns, non-zeros, iterations) whether gathering row-length features on the GPU is
 * worth its cost; then the gathered tree (with max, min, mean and variance of row length) or
 * the known tree names the kernel. The trees are the ones `lscat seer train` fitted on the
 * benchmark of one GPU model (seer_known.h, seer_gathered.h, seer_selector.h, seer_classes.h
 * beside this file); build with `make` in this folder (nvcc), link libseer_select.a and the
 * CUDA runtime. Plain C header: no CUDA headers needed to include it.
 *
 *     struct seer_choice c;
 *     if (seer_select(&c, d_row_ptr, rows, cols, nnz, 1000, stream) != 0) ... // a cudaError_t
 *     printf("use %s\n", c.name);        // c.kernel is one of SEER_KERNEL_*
 */
#ifndef SEER_SELECT_H
#define SEER_SELECT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels lscat seer measures (their code: lscat's seer/spmv.cuh and cuSPARSE). */
enum seer_kernel_id {
    SEER_KERNEL_CSR_THREAD = 0,
    SEER_KERNEL_CSR_WARP,
    SEER_KERNEL_CSR_BLOCK,
    SEER_KERNEL_CSR_MERGE,
    SEER_KERNEL_ELL_THREAD,
    SEER_KERNEL_COO_WARP,
    SEER_KERNEL_CSR_ADAPTIVE,
    SEER_KERNEL_CUSPARSE_DEFAULT,
    SEER_KERNEL_CUSPARSE_CSR_ALG1,
    SEER_KERNEL_CUSPARSE_CSR_ALG2,
    SEER_KERNEL_CUSPARSE_COO_ALG1,
    SEER_KERNEL_COUNT
};

struct seer_choice {
    int kernel;          /* SEER_KERNEL_* */
    const char *name;    /* "csr_warp", ... (static) */
    int gathered;        /* 1 when the selector chose to run the feature kernel */
    /* What the trees saw: rows, cols, nnz, iterations, nnz / rows, then (when gathered) the
     * longest and shortest row length and the population variance of row lengths. */
    double features[8];
};

/* d_row_ptr: rows + 1 ints on the GPU (0-based CSR). stream: a cudaStream_t, or NULL for the
 * default stream; the feature kernel (when it runs) is synchronous on it. Returns 0, or the
 * cudaError_t of the feature kernel (out->kernel is then the known tree's choice). */
int seer_select(struct seer_choice *out, const int *d_row_ptr, int rows, int cols,
                long long nnz, long long iterations, void *stream);

/* "csr_thread", ... for SEER_KERNEL_*; NULL out of range. */
const char *seer_kernel_id_name(int kernel);

#ifdef __cplusplus
}
#endif
#endif
