/* The SpMV kernels Seer chooses between, by stable number and name. Shared by the GPU worker
 * (which implements them, seer/gpu.cu), the store rows (which name them), training (whose class
 * labels map to them) and seer_select.h (whose SEER_KERNEL_* values equal these numbers; a test
 * checks). Plain C. */
#ifndef LSCAT_SEER_KERNELS_H
#define LSCAT_SEER_KERNELS_H

enum seer_kernel {
    SEER_K_CSR_THREAD = 0,   /* one thread per row */
    SEER_K_CSR_WARP,         /* one warp per row, shuffle reduction */
    SEER_K_CSR_BLOCK,        /* one block of 256 threads per row */
    SEER_K_CSR_MERGE,        /* merge-path: equal shares of rows + non-zeros per thread */
    SEER_K_ELL_THREAD,       /* ELL, one thread per row (conversion = preprocessing) */
    SEER_K_COO_WARP,         /* COO, warp segmented reduction + atomics (row expansion =
                              * preprocessing) */
    SEER_K_CSR_ADAPTIVE,     /* rows binned by length into thread/warp/block kernels (binning =
                              * preprocessing) */
    SEER_K_CUSPARSE_DEFAULT, /* cusparseSpMV CUSPARSE_SPMV_ALG_DEFAULT (buffer + preprocess =
                              * preprocessing) */
    SEER_K_CUSPARSE_CSR_ALG1,
    SEER_K_CUSPARSE_CSR_ALG2,
    SEER_K_CUSPARSE_COO_ALG1,
    SEER_K_COUNT
};

/* "csr_thread", ...; NULL out of range. */
static inline const char *seer_kernel_name(int k)
{
    static const char *const names[SEER_K_COUNT] = {
        "csr_thread", "csr_warp", "csr_block", "csr_merge", "ell_thread", "coo_warp",
        "csr_adaptive", "cusparse_default", "cusparse_csr_alg1", "cusparse_csr_alg2",
        "cusparse_coo_alg1",
    };
    return k >= 0 && k < SEER_K_COUNT ? names[k] : 0;
}

/* The number of a kernel name, or -1. */
static inline int seer_kernel_by_name(const char *name)
{
    for (int k = 0; k < SEER_K_COUNT; k++) {
        const char *a = seer_kernel_name(k), *b = name;
        while (*a && *a == *b)
            a++, b++;
        if (!*a && !*b)
            return k;
    }
    return -1;
}

#endif
