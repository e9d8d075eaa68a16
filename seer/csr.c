/* Host sparse formats for Seer: triplets -> CSR (counting sort by row, columns sorted and
 * duplicates summed), CSR -> ELL / COO, row-length features and the double-precision reference
 * SpMV. The GPU kernels are checked against seer_csr_spmv_ref, and the GPU feature kernel
 * against seer_row_features. */
#include "seer/csr.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    int col;
    double val;
};

static int entry_cmp(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return (x->col > y->col) - (x->col < y->col);
}

/* Sort each row's entries by column and sum duplicates; compacts in place, fixes row_ptr. */
static void sort_and_merge_rows(struct seer_csr *a, struct entry *e)
{
    int w = 0;
    for (int r = 0; r < a->rows; r++) {
        int b = a->row_ptr[r], end = a->row_ptr[r + 1];
        qsort(e + b, (size_t)(end - b), sizeof(*e), entry_cmp);
        a->row_ptr[r] = w;
        for (int k = b; k < end; k++) {
            if (w > a->row_ptr[r] && e[w - 1].col == e[k].col)
                e[w - 1].val += e[k].val;
            else
                e[w++] = e[k];
        }
    }
    a->row_ptr[a->rows] = w;
    a->nnz = w;
    a->col = xmalloc((size_t)(w ? w : 1) * sizeof(int));
    a->val = xmalloc((size_t)(w ? w : 1) * sizeof(double));
    for (int k = 0; k < w; k++) {
        a->col[k] = e[k].col;
        a->val[k] = e[k].val;
    }
}

int seer_csr_from_triplets(struct seer_csr *out, int rows, int cols, const int *ti,
                           const int *tj, const double *tv, int64_t n)
{
    struct seer_csr a = { rows, cols, 0, NULL, NULL, NULL };
    memset(out, 0, sizeof(*out));
    if (rows < 0 || cols < 0 || n < 0 || n > INT_MAX)
        return lscat_error_setc(LSCAT_EINVALID, "matrix too large for 32-bit indices: %d x %d "
                                "with %lld entries", rows, cols, (long long)n);
    for (int64_t k = 0; k < n; k++)
        if (ti[k] < 0 || ti[k] >= rows || tj[k] < 0 || tj[k] >= cols)
            return lscat_error_setc(LSCAT_EINVALID, "entry %lld at (%d, %d) lies outside the "
                                    "%d x %d matrix", (long long)k, ti[k], tj[k], rows, cols);
    a.row_ptr = xcalloc((size_t)rows + 1, sizeof(int));
    for (int64_t k = 0; k < n; k++)
        a.row_ptr[ti[k] + 1]++;
    for (int r = 0; r < rows; r++)
        a.row_ptr[r + 1] += a.row_ptr[r];
    struct entry *e = xmalloc((size_t)(n ? n : 1) * sizeof(*e));
    int *fill = xmalloc(((size_t)rows + 1) * sizeof(int));
    memcpy(fill, a.row_ptr, ((size_t)rows + 1) * sizeof(int));
    for (int64_t k = 0; k < n; k++) {
        struct entry *d = &e[fill[ti[k]]++];
        d->col = tj[k];
        d->val = tv ? tv[k] : 1.0;
    }
    free(fill);
    sort_and_merge_rows(&a, e);
    free(e);
    *out = a;
    return 0;
}

void seer_csr_release(struct seer_csr *a)
{
    if (!a)
        return;
    free(a->row_ptr);
    free(a->col);
    free(a->val);
    memset(a, 0, sizeof(*a));
}

static int longest_row(const struct seer_csr *a)
{
    int w = 0;
    for (int r = 0; r < a->rows; r++)
        if (a->row_ptr[r + 1] - a->row_ptr[r] > w)
            w = a->row_ptr[r + 1] - a->row_ptr[r];
    return w;
}

int seer_csr_to_ell(struct seer_ell *out, const struct seer_csr *a, int64_t max_cells)
{
    memset(out, 0, sizeof(*out));
    int w = longest_row(a);
    int64_t cells = (int64_t)a->rows * w;
    if (max_cells > 0 && cells > max_cells)
        return lscat_error_setc(LSCAT_EINVALID, "ELL of a %d-row matrix whose longest row has %d "
                                "entries needs %lld cells, more than the limit of %lld",
                                a->rows, w, (long long)cells, (long long)max_cells);
    out->rows = a->rows;
    out->cols = a->cols;
    out->width = w;
    out->col = xmalloc((size_t)(cells ? cells : 1) * sizeof(int));
    out->val = xmalloc((size_t)(cells ? cells : 1) * sizeof(double));
    for (int r = 0; r < a->rows; r++) {
        int len = a->row_ptr[r + 1] - a->row_ptr[r];
        for (int k = 0; k < w; k++) {
            int64_t at = (int64_t)k * a->rows + r;
            out->col[at] = k < len ? a->col[a->row_ptr[r] + k] : -1;
            out->val[at] = k < len ? a->val[a->row_ptr[r] + k] : 0.0;
        }
    }
    return 0;
}

void seer_ell_release(struct seer_ell *e)
{
    if (!e)
        return;
    free(e->col);
    free(e->val);
    memset(e, 0, sizeof(*e));
}

void seer_csr_to_coo(struct seer_coo *out, const struct seer_csr *a)
{
    size_t n = (size_t)(a->nnz ? a->nnz : 1);
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    out->row = xmalloc(n * sizeof(int));
    out->col = xmalloc(n * sizeof(int));
    out->val = xmalloc(n * sizeof(double));
    for (int r = 0; r < a->rows; r++)
        for (int k = a->row_ptr[r]; k < a->row_ptr[r + 1]; k++)
            out->row[k] = r;
    if (a->nnz) {
        memcpy(out->col, a->col, (size_t)a->nnz * sizeof(int));
        memcpy(out->val, a->val, (size_t)a->nnz * sizeof(double));
    }
}

void seer_coo_release(struct seer_coo *c)
{
    if (!c)
        return;
    free(c->row);
    free(c->col);
    free(c->val);
    memset(c, 0, sizeof(*c));
}

void seer_row_features(struct seer_features *out, const int *row_ptr, int rows, int cols)
{
    memset(out, 0, sizeof(*out));
    out->rows = rows;
    out->cols = cols;
    out->nnz = rows > 0 ? row_ptr[rows] - row_ptr[0] : 0;
    if (rows <= 0)
        return;
    long long mx = 0, mn = LLONG_MAX;
    for (int r = 0; r < rows; r++) {
        long long len = row_ptr[r + 1] - row_ptr[r];
        mx = len > mx ? len : mx;
        mn = len < mn ? len : mn;
    }
    double mean = out->nnz / rows, ss = 0;
    for (int r = 0; r < rows; r++) {
        double d = (row_ptr[r + 1] - row_ptr[r]) - mean;
        ss += d * d;
    }
    out->row_max = (double)mx;
    out->row_min = (double)mn;
    out->row_mean = mean;
    out->row_var = ss / rows;
}

void seer_csr_features(struct seer_features *out, const struct seer_csr *a)
{
    seer_row_features(out, a->row_ptr, a->rows, a->cols);
}

void seer_csr_spmv_ref(double *y, double *abs_out, const struct seer_csr *a, const double *x)
{
    for (int r = 0; r < a->rows; r++) {
        double s = 0, m = 0;
        for (int k = a->row_ptr[r]; k < a->row_ptr[r + 1]; k++) {
            double p = a->val[k] * x[a->col[k]];
            s += p;
            m += fabs(p);
        }
        y[r] = s;
        if (abs_out)
            abs_out[r] = m;
    }
}

double seer_spmv_rel_error(const double *y, const double *ref, const double *abs, int rows)
{
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        double e = fabs(y[r] - ref[r]) / (abs[r] + 1e-300);
        if (!(e <= worst)) /* NaN counts as the worst */
            worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}
