/* The distributed SpMV problem (mcts/spmv/problem.h): generation by a per-row hash, so every
 * rank builds its rows alone and the same seed gives the same matrix on any number of hosts. */
#include "mcts/spmv/problem.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

long spmv_row0(long n, int ranks, int r)
{
    return n * r / ranks;
}

int spmv_owner(long n, int ranks, long j)
{
    int r = (int)((j * ranks) / n);
    while (r + 1 < ranks && spmv_row0(n, ranks, r + 1) <= j)
        r++;
    while (r > 0 && spmv_row0(n, ranks, r) > j)
        r--;
    return r;
}

double spmv_x(long j)
{
    return 1.0 + (double)(j % 97) / 97.0;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* The sorted distinct columns of global row i. */
static int row_columns(long *cols, long i, long n, int nnz, long half, uint64_t seed)
{
    long lo = i - half < 0 ? 0 : i - half, hi = i + half >= n ? n - 1 : i + half;
    long width = hi - lo + 1;
    int k = 0;
    if (nnz > width)
        nnz = (int)width;
    for (uint64_t t = 0; k < nnz; t++) {
        long c = lo + (long)(mix(seed ^ mix((uint64_t)i * 1315423911u + t)) % (uint64_t)width);
        int dup = 0;
        for (int q = 0; q < k; q++)
            dup |= cols[q] == c;
        if (!dup)
            cols[k++] = c;
    }
    qsort(cols, (size_t)k, sizeof(long), cmp_long);
    return k;
}

static double value_of(long i, long j, uint64_t seed)
{
    return (double)(mix(seed ^ mix((uint64_t)i << 32 ^ (uint64_t)j)) % 2001) / 1000.0 - 1.0;
}

static void csr_alloc(struct spmv_csr *m, int rows, int cap)
{
    m->rows = rows;
    m->rowptr = xcalloc((size_t)rows + 1, sizeof(int));
    m->colidx = xmalloc(sizeof(int) * (size_t)(cap ? cap : 1));
    m->val = xmalloc(sizeof(double) * (size_t)(cap ? cap : 1));
}

/* Index of global column g in remote_global (binary search). */
static int remote_index(const struct spmv_part *p, long g)
{
    long *hit = bsearch(&g, p->remote_global, (size_t)p->nremote, sizeof(long), cmp_long);
    return (int)(hit - p->remote_global);
}

int spmv_part_make(struct spmv_part *out, long n, int nnz_per_row, int rank, int ranks,
                   uint64_t seed)
{
    memset(out, 0, sizeof(*out));
    if (ranks < 1 || n < 2L * ranks || nnz_per_row < 1 || nnz_per_row > 1000 || n > (1L << 30))
        return lscat_error_setc(LSCAT_EINVALID, "bad SpMV problem: %ld rows, %d non-zeros per "
                                "row, %d ranks (need rows >= 2 * ranks)", n, nnz_per_row, ranks);
    long half = n / ranks / 2, cols[1000];
    out->n = n, out->rank = rank, out->ranks = ranks;
    out->row0 = spmv_row0(n, ranks, rank);
    out->nrows = (int)(spmv_row0(n, ranks, rank + 1) - out->row0);
    int cap = out->nrows * nnz_per_row;
    csr_alloc(&out->local, out->nrows, cap);
    csr_alloc(&out->remote, out->nrows, cap);
    out->local.cols = out->nrows;
    long *rg = xmalloc(sizeof(long) * (size_t)(cap ? cap : 1));
    int nrg = 0;
    for (int r = 0; r < out->nrows; r++) { /* first pass: local entries, remote columns */
        long i = out->row0 + r;
        int k = row_columns(cols, i, n, nnz_per_row, half, seed);
        for (int q = 0; q < k; q++) {
            if (cols[q] >= out->row0 && cols[q] < out->row0 + out->nrows) {
                out->local.colidx[out->local.nnz] = (int)(cols[q] - out->row0);
                out->local.val[out->local.nnz++] = value_of(i, cols[q], seed);
            } else {
                rg[nrg++] = cols[q];
            }
        }
        out->local.rowptr[r + 1] = out->local.nnz;
    }
    qsort(rg, (size_t)nrg, sizeof(long), cmp_long);
    for (int q = 0; q < nrg; q++)
        if (out->nremote == 0 || rg[q] != rg[out->nremote - 1])
            rg[out->nremote++] = rg[q];
    out->remote_global = rg;
    out->remote.cols = out->nremote;
    for (int r = 0; r < out->nrows; r++) { /* second pass: remote entries, renumbered */
        long i = out->row0 + r;
        int k = row_columns(cols, i, n, nnz_per_row, half, seed);
        for (int q = 0; q < k; q++)
            if (cols[q] < out->row0 || cols[q] >= out->row0 + out->nrows) {
                out->remote.colidx[out->remote.nnz] = remote_index(out, cols[q]);
                out->remote.val[out->remote.nnz++] = value_of(i, cols[q], seed);
            }
        out->remote.rowptr[r + 1] = out->remote.nnz;
    }
    return 0;
}

static void csr_release(struct spmv_csr *m)
{
    free(m->rowptr);
    free(m->colidx);
    free(m->val);
}

void spmv_part_release(struct spmv_part *p)
{
    csr_release(&p->local);
    csr_release(&p->remote);
    free(p->remote_global);
    memset(p, 0, sizeof(*p));
}

void spmv_reference(double *y, const struct spmv_part *p)
{
    for (int r = 0; r < p->nrows; r++) {
        double acc = 0;
        for (int k = p->local.rowptr[r]; k < p->local.rowptr[r + 1]; k++)
            acc += p->local.val[k] * spmv_x(p->row0 + p->local.colidx[k]);
        for (int k = p->remote.rowptr[r]; k < p->remote.rowptr[r + 1]; k++)
            acc += p->remote.val[k] * spmv_x(p->remote_global[p->remote.colidx[k]]);
        y[r] = acc;
    }
}

void spmv_cpu_product(double *y, const struct spmv_part *p, const double *x_local,
                      const double *x_remote)
{
    for (int r = 0; r < p->nrows; r++) {
        double acc = 0;
        for (int k = p->local.rowptr[r]; k < p->local.rowptr[r + 1]; k++)
            acc += p->local.val[k] * x_local[p->local.colidx[k]];
        for (int k = p->remote.rowptr[r]; k < p->remote.rowptr[r + 1]; k++)
            acc += p->remote.val[k] * x_remote[p->remote.colidx[k]];
        y[r] = acc;
    }
}

double spmv_max_rel_error(const double *a, const double *b, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double e = fabs(a[i] - b[i]) / fmax(1.0, fabs(b[i]));
        if (isnan(e))
            return INFINITY; /* a value never written */
        if (e > worst)
            worst = e;
    }
    return worst;
}
