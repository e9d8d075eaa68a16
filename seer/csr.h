/* Sparse matrices on the host for Seer: CSR (the form every kernel starts from), its ELL and COO
 * forms, the row-length features the selector learns from, and the double-precision reference
 * y = A x every GPU kernel is checked against. Plain C; indices are 32-bit (as cuSPARSE's
 * CUSPARSE_INDEX_32I), so a matrix holds at most INT_MAX rows, columns and non-zeros.
 *
 *     struct seer_csr a;                      // from seer_mtx_read() or seer_gen()
 *     struct seer_features f;
 *     seer_csr_features(&f, &a);
 *     seer_csr_release(&a);
 */
#ifndef LSCAT_SEER_CSR_H
#define LSCAT_SEER_CSR_H

#include <stdint.h>

/* Compressed sparse rows: row r's entries are col[row_ptr[r] .. row_ptr[r+1]-1], columns
 * strictly increasing within a row (duplicates were summed), values in val. Owned arrays. */
struct seer_csr {
    int rows, cols, nnz;
    int *row_ptr; /* rows + 1 */
    int *col;     /* nnz */
    double *val;  /* nnz */
};
#define SEER_CSR_INIT { 0, 0, 0, NULL, NULL, NULL }

/* ELL, column-major (entry k of row r at k * rows + r), rows padded to the longest row with
 * column -1 and value 0. */
struct seer_ell {
    int rows, cols, width;
    int *col;    /* rows * width */
    double *val; /* rows * width */
};
#define SEER_ELL_INIT { 0, 0, 0, NULL, NULL }

/* Coordinates sorted by row, then column. */
struct seer_coo {
    int rows, cols, nnz;
    int *row, *col;
    double *val;
};
#define SEER_COO_INIT { 0, 0, 0, NULL, NULL, NULL }

/* What the selector sees. Known for free: rows, cols, nnz. Gathered at a cost (on the GPU):
 * the longest, shortest and mean row length and the population variance of row lengths
 * (divided by rows, as numpy.var). */
struct seer_features {
    double rows, cols, nnz;
    double row_max, row_min, row_mean, row_var;
};

/* Build a CSR matrix from n coordinate triplets (0-based, in range; any order). Entries at the
 * same position are summed. *out belongs to the caller. Refuses (LSCAT_EINVALID) an index out
 * of range or more than INT_MAX entries. */
int seer_csr_from_triplets(struct seer_csr *out, int rows, int cols, const int *ti,
                           const int *tj, const double *tv, int64_t n);
void seer_csr_release(struct seer_csr *a);

/* ELL of a; refuses (LSCAT_EINVALID) when rows * width exceeds max_cells (0 = no limit): one
 * very long row makes ELL as large as a dense matrix. */
int seer_csr_to_ell(struct seer_ell *out, const struct seer_csr *a, int64_t max_cells);
void seer_ell_release(struct seer_ell *e);
void seer_csr_to_coo(struct seer_coo *out, const struct seer_csr *a);
void seer_coo_release(struct seer_coo *c);

void seer_csr_features(struct seer_features *out, const struct seer_csr *a);
/* Row-length statistics of a row_ptr array alone (what the GPU feature kernel computes). */
void seer_row_features(struct seer_features *out, const int *row_ptr, int rows, int cols);

/* y = A x in double; abs_out (may be NULL) gets sum_j |a_ij x_j| per row, the scale an
 * accumulation error is measured against. */
void seer_csr_spmv_ref(double *y, double *abs_out, const struct seer_csr *a, const double *x);
/* The largest |y_i - ref_i| / (abs_i + tiny) over the rows: 0 for exact agreement. */
double seer_spmv_rel_error(const double *y, const double *ref, const double *abs, int rows);

#endif
