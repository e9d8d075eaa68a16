/* Peak finding (SciPy 1.10's find_peaks: local maxima with plateaus, prominence with an
 * unbounded window, widths), numpy's linear percentile, and class labels from sorted times by
 * a step-kernel convolution (Tenzing's rules step), so learn/ labels data as the references do. */
#include "learn/peaks.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void learn_peaks_release(struct learn_peaks *p)
{
    free(p->index);
    free(p->left_edge);
    free(p->right_edge);
    free(p->prominence);
    free(p->left_base);
    free(p->right_base);
    free(p->width);
    free(p->width_height);
    free(p->left_ip);
    free(p->right_ip);
    memset(p, 0, sizeof(*p));
}

/* SciPy's _local_maxima_1d. */
static void local_maxima(struct learn_peaks *p, const double *x, int n)
{
    int cap = n / 2 + 1;
    p->index = xmalloc((size_t)cap * sizeof(int));
    p->left_edge = xmalloc((size_t)cap * sizeof(int));
    p->right_edge = xmalloc((size_t)cap * sizeof(int));
    p->n = 0;
    int i = 1, i_max = n - 1;
    while (i < i_max) {
        if (x[i - 1] < x[i]) {
            int ahead = i + 1;
            while (ahead < i_max && x[ahead] == x[i])
                ahead++;
            if (x[ahead] < x[i]) {
                p->left_edge[p->n] = i;
                p->right_edge[p->n] = ahead - 1;
                p->index[p->n] = (i + ahead - 1) / 2;
                p->n++;
                i = ahead;
            }
        }
        i++;
    }
}

/* SciPy's _peak_prominences with wlen unbounded. */
static void prominences(struct learn_peaks *p, const double *x, int n)
{
    size_t m = (size_t)(p->n ? p->n : 1);
    p->prominence = xmalloc(m * sizeof(double));
    p->left_base = xmalloc(m * sizeof(int));
    p->right_base = xmalloc(m * sizeof(int));
    for (int k = 0; k < p->n; k++) {
        int peak = p->index[k], i = peak;
        double left_min = x[peak], right_min = x[peak];
        p->left_base[k] = p->right_base[k] = peak;
        while (i >= 0 && x[i] <= x[peak]) {
            if (x[i] < left_min) {
                left_min = x[i];
                p->left_base[k] = i;
            }
            i--;
        }
        for (i = peak; i <= n - 1 && x[i] <= x[peak]; i++) {
            if (x[i] < right_min) {
                right_min = x[i];
                p->right_base[k] = i;
            }
        }
        p->prominence[k] = x[peak] - (left_min > right_min ? left_min : right_min);
    }
}

/* SciPy's _peak_widths. */
static void widths(struct learn_peaks *p, const double *x, double rel_height)
{
    size_t m = (size_t)(p->n ? p->n : 1);
    p->width = xmalloc(m * sizeof(double));
    p->width_height = xmalloc(m * sizeof(double));
    p->left_ip = xmalloc(m * sizeof(double));
    p->right_ip = xmalloc(m * sizeof(double));
    for (int k = 0; k < p->n; k++) {
        int peak = p->index[k], i_min = p->left_base[k], i_max = p->right_base[k], i = peak;
        double height = x[peak] - p->prominence[k] * rel_height;
        p->width_height[k] = height;
        while (i_min < i && height < x[i])
            i--;
        double left = (double)i;
        if (x[i] < height)
            left += (height - x[i]) / (x[i + 1] - x[i]);
        for (i = peak; i < i_max && height < x[i]; i++)
            ;
        double right = (double)i;
        if (x[i] < height)
            right -= (height - x[i]) / (x[i - 1] - x[i]);
        p->left_ip[k] = left;
        p->right_ip[k] = right;
        p->width[k] = right - left;
    }
}

/* Keep the peaks with lo <= v[k] <= hi (NAN bounds are open), compacting every filled array. */
static void keep_where(struct learn_peaks *p, const double *v, double lo, double hi)
{
    int m = 0;
    for (int k = 0; k < p->n; k++) {
        double x = v[k];
        if ((!isnan(lo) && !(lo <= x)) || (!isnan(hi) && !(x <= hi)))
            continue;
        p->index[m] = p->index[k];
        p->left_edge[m] = p->left_edge[k];
        p->right_edge[m] = p->right_edge[k];
        p->prominence[m] = p->prominence[k];
        p->left_base[m] = p->left_base[k];
        p->right_base[m] = p->right_base[k];
        if (p->width) {
            p->width[m] = p->width[k];
            p->width_height[m] = p->width_height[k];
            p->left_ip[m] = p->left_ip[k];
            p->right_ip[m] = p->right_ip[k];
        }
        m++;
    }
    p->n = m;
}

int learn_find_peaks(struct learn_peaks *out, const double *x, int n,
                     const struct learn_peaks_options *o)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < n; i++)
        if (isnan(x[i]))
            return lscat_error_setc(LSCAT_EINVALID, "find peaks: sample %d is NaN", i);
    if (!(o->rel_height >= 0.0))
        return lscat_error_setc(LSCAT_EINVALID, "find peaks: rel_height must be >= 0");
    local_maxima(out, x, n);
    prominences(out, x, n);
    if (!isnan(o->prominence_min) || !isnan(o->prominence_max))
        keep_where(out, out->prominence, o->prominence_min, o->prominence_max);
    if (!isnan(o->width_min) || !isnan(o->width_max)) {
        widths(out, x, o->rel_height);
        keep_where(out, out->width, o->width_min, o->width_max);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double learn_percentile(const double *x, int n, double q)
{
    if (n < 1)
        return NAN;
    double *v = xmalloc((size_t)n * sizeof(double));
    memcpy(v, x, (size_t)n * sizeof(double));
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    double h = (double)(n - 1) * (q / 100.0);
    int lo = (int)floor(h);
    if (lo < 0)
        lo = 0;
    int hi = lo + 1 < n ? lo + 1 : n - 1;
    double t = h - (double)lo, a = v[lo], b = v[hi], diff = b - a;
    /* numpy's _lerp: a + diff * t, computed from b for t >= 0.5 */
    double r = t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
    free(v);
    return r;
}

int learn_step_convolve(double **out, const double *x, int n, int r)
{
    *out = NULL;
    if (r < 1 || n < 2 * r)
        return 0;
    int m = n - 2 * r + 1;
    double *res = xmalloc((size_t)m * sizeof(double));
    if ((double)m * (double)r > 5e7) { /* long inputs: a running sum, still in long double */
        long double s = 0.0L;
        for (int j = 0; j < r; j++)
            s += (long double)x[r + j] - (long double)x[j];
        res[0] = (double)s;
        for (int i = 1; i < m; i++) {
            s += (long double)x[i - 1] - 2.0L * x[i + r - 1] + (long double)x[i + 2 * r - 1];
            res[i] = (double)s;
        }
        *out = res;
        return m;
    }
    for (int i = 0; i < m; i++) {
        long double s = 0.0L;
        for (int j = 0; j < r; j++)
            s += (long double)x[i + r + j] - (long double)x[i + j];
        res[i] = (double)s;
    }
    *out = res;
    return m;
}

void learn_labels_release(struct learn_labels *l)
{
    free(l->label);
    free(l->order);
    free(l->boundary);
    free(l->lo);
    free(l->hi);
    memset(l, 0, sizeof(*l));
}

struct keyed_time {
    double t;
    int i;
};

static int cmp_keyed_time(const void *a, const void *b)
{
    const struct keyed_time *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The sorted times; l->order gets the permutation. */
static double *sort_times(struct learn_labels *l, const double *times, int n)
{
    struct keyed_time *kt = xmalloc((size_t)n * sizeof(*kt));
    double *sorted = xmalloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        kt[i] = (struct keyed_time){ times[i], i };
    qsort(kt, (size_t)n, sizeof(*kt), cmp_keyed_time);
    for (int j = 0; j < n; j++) {
        l->order[j] = kt[j].i;
        sorted[j] = kt[j].t;
    }
    free(kt);
    return sorted;
}

/* Class boundaries (sorted positions) from the convolution's peaks. */
static int find_boundaries(struct learn_labels *l, const double *sorted, int n,
                           const struct learn_label_options *o)
{
    double *res = NULL;
    struct learn_peaks pk = LEARN_PEAKS_INIT;
    struct learn_peaks_options po = LEARN_PEAKS_OPTIONS_INIT;
    int m = learn_step_convolve(&res, sorted, n, l->radius), rc = 0;
    l->k = 1;
    if (m < 1)
        goto done;
    l->cutoff = learn_percentile(res, m, o->percentile);
    po.prominence_min = l->cutoff;
    po.width_min = o->width_min;
    if ((rc = learn_find_peaks(&pk, res, m, &po)) < 0)
        goto done;
    l->boundary = xmalloc((size_t)(pk.n ? pk.n : 1) * sizeof(int));
    for (int i = 0; i < pk.n; i++)
        l->boundary[i] = pk.index[i] + l->radius;
    l->k = pk.n + 1;
done:
    learn_peaks_release(&pk);
    free(res);
    return rc;
}

int learn_labels_by_peaks(struct learn_labels *out, const double *times, int n,
                          const struct learn_label_options *o)
{
    double *sorted = NULL;
    int rc;
    memset(out, 0, sizeof(*out));
    if (n < 1)
        return lscat_error_setc(LSCAT_EINVALID, "labels by peaks: no times given");
    for (int i = 0; i < n; i++)
        if (isnan(times[i]))
            return lscat_error_setc(LSCAT_EINVALID, "labels by peaks: time %d is NaN", i);
    out->n = n;
    out->order = xmalloc((size_t)n * sizeof(int));
    out->label = xmalloc((size_t)n * sizeof(int));
    sorted = sort_times(out, times, n);
    out->radius = (int)ceil((double)n * o->radius_fraction);
    if (out->radius < 1)
        out->radius = 1;
    if ((rc = find_boundaries(out, sorted, n, o)) < 0) {
        learn_labels_release(out);
        goto done;
    }
    out->lo = xmalloc((size_t)out->k * sizeof(double));
    out->hi = xmalloc((size_t)out->k * sizeof(double));
    for (int j = 0, c = 0; j < n; j++) {
        while (c < out->k - 1 && j >= out->boundary[c])
            c++;
        out->label[out->order[j]] = c;
        if (j == 0 || (c > 0 && j == out->boundary[c - 1]))
            out->lo[c] = sorted[j];
        out->hi[c] = sorted[j];
    }
done:
    free(sorted);
    return rc;
}
