/* The SpMV back end's problem (the authors' distributed SpMV): a random band matrix of n rows,
 * bandwidth n / ranks, nnz_per_row non-zeros per row, rows split over ranks in blocks. Each rank
 * keeps its rows as a local block (columns it owns) and a remote block (columns other ranks
 * own, renumbered into the receive buffer x_remote). x is a fixed function of the global index,
 * so any rank can compute the reference product of its rows on the CPU. Plain C, no MPI. */
#ifndef LSCAT_MCTS_SPMV_PROBLEM_H
#define LSCAT_MCTS_SPMV_PROBLEM_H

#include <stdint.h>

struct spmv_csr {
    int rows, cols, nnz;
    int *rowptr, *colidx;
    double *val;
};

struct spmv_part {
    long n;                 /* global rows (= columns) */
    int rank, ranks;
    long row0;              /* first global row of this rank */
    int nrows;
    struct spmv_csr local;  /* columns: 0..nrows-1 (global row0 + c) */
    struct spmv_csr remote; /* columns: index into x_remote */
    int nremote;
    long *remote_global;    /* global column of each x_remote entry, ascending */
};

/* Owner rank of global row/column j. */
int spmv_owner(long n, int ranks, long j);
/* First global row of rank r. */
long spmv_row0(long n, int ranks, int r);
/* The global vector x. */
double spmv_x(long j);
/* Build this rank's part (deterministic in n, nnz_per_row, ranks and seed). Returns 0 or a
 * negative code with the message set (bad sizes). Release with spmv_part_release. */
int spmv_part_make(struct spmv_part *out, long n, int nnz_per_row, int rank, int ranks,
                   uint64_t seed);
void spmv_part_release(struct spmv_part *p);
/* y[0..nrows) = A x for this rank's rows, from the global x (the reference). */
void spmv_reference(double *y, const struct spmv_part *p);
/* y = local * x_local + remote * x_remote on the CPU. */
void spmv_cpu_product(double *y, const struct spmv_part *p, const double *x_local,
                      const double *x_remote);
/* Largest |a - b| / max(1, |b|). */
double spmv_max_rel_error(const double *a, const double *b, int n);

#endif
