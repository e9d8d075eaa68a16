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
 *
 * Gathering costs a launch and a synchronisation (12-19 us on an H200) when seer_select() does
 * it. To hide most of it, enqueue it right after uploading row_ptr, do your own work (upload x,
 * allocate y), then select: seer_select() then only reads the result (docs/seer.md, Session 8).
 *
 *     cudaMemcpyAsync(d_row_ptr, ...); cudaMemcpyAsync(d_col, ...); cudaMemcpyAsync(d_val, ...);
 *     seer_gather_async(NULL, d_row_ptr, rows, cols, nnz, 1000, stream);
 *     cudaMemcpyAsync(d_x, x, ...);                          // your work, hiding the gathering
 *     seer_select(&c, d_row_ptr, rows, cols, nnz, 1000, stream);   // reads the result
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
    int gathered;        /* 0: not gathered (the known tree chose); 1: seer_select() ran the
                            feature kernel and waited; 2: it read what seer_gather_async() had
                            enqueued for this row_ptr and rows */
    /* What the trees saw: rows, cols, nnz, iterations, nnz / rows, then (when gathered) the
     * longest and shortest row length, the population variance of row lengths, and those three
     * divided by the mean row length (the variance by its square; seer_derived.h). */
    double features[11];
};

/* d_row_ptr: rows + 1 ints on the GPU (0-based CSR). stream: a cudaStream_t, or NULL for the
 * default stream. When the selector says gather: if the last seer_gather_async() on this
 * device was for the same d_row_ptr and rows, its result is read (waiting, by spinning on mapped
 * memory, only while the kernel has not finished; gathered = 2); otherwise the feature kernel
 * runs here, synchronous on `stream` (gathered = 1). Returns 0, or the cudaError_t of the
 * feature kernel (out->kernel is then the known tree's choice). */
int seer_select(struct seer_choice *out, const int *d_row_ptr, int rows, int cols,
                long long nnz, long long iterations, void *stream);

/* Enqueue the feature kernel on `stream` without waiting, when the selector says that gathering
 * pays for these known features (the same arguments seer_select() will get; nothing is
 * enqueued otherwise). Call it right after row_ptr's upload was enqueued on `stream`; the result
 * lands in mapped host memory and seer_select() picks it up. *started (may be NULL): 1 when the
 * kernel was enqueued. One gathering is kept per device: a second seer_gather_async() on the
 * device replaces the first (its seer_select() then gathers again, synchronously), and waits
 * first for the first when that one is still running on another stream. row_ptr must not
 * change before seer_select(). Returns 0 or the launch's cudaError_t. */
int seer_gather_async(int *started, const int *d_row_ptr, int rows, int cols, long long nnz,
                      long long iterations, void *stream);

/* "csr_thread", ... for SEER_KERNEL_*; NULL out of range. */
const char *seer_kernel_id_name(int kernel);

#ifdef __cplusplus
}
#endif
#endif
