/* Statistics of timing samples: median (with interpolation for even counts), percentiles by
 * linear interpolation between order statistics, MAD around the median. Host-only C so the
 * CPU tests and the GPU harnesses share one definition. */
#include "tune/timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* p-th quantile (0..1) of sorted v[0..n-1], linear interpolation (NumPy's default). */
static double quantile(const double *v, int n, double p)
{
    if (n == 1)
        return v[0];
    double pos = p * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

void timing_compute_stats(struct timing_stats *out, double *v, int n)
{
    double *raw = out->raw_ns;
    int lps = out->launches_per_sample;
    memset(out, 0, sizeof(*out));
    out->raw_ns = raw;
    out->launches_per_sample = lps;
    out->samples = n;
    if (n <= 0)
        return;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    out->mean_ns = sum / n;
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (v[i] - out->mean_ns) * (v[i] - out->mean_ns);
    out->stddev_ns = n > 1 ? sqrt(ss / (n - 1)) : 0;
    out->min_ns = v[0];
    out->max_ns = v[n - 1];
    out->median_ns = quantile(v, n, 0.5);
    out->p10_ns = quantile(v, n, 0.1);
    out->p90_ns = quantile(v, n, 0.9);
    double *dev = malloc((size_t)n * sizeof(double));
    if (dev) {
        for (int i = 0; i < n; i++)
            dev[i] = fabs(v[i] - out->median_ns);
        qsort(dev, (size_t)n, sizeof(double), cmp_double);
        out->mad_ns = quantile(dev, n, 0.5);
        free(dev);
    }
}

double timing_rel_mad(const double *samples_ns, int n)
{
    if (n <= 0)
        return 0;
    double *c = malloc((size_t)n * sizeof(double));
    if (!c)
        return 0;
    memcpy(c, samples_ns, (size_t)n * sizeof(double));
    struct timing_stats s;
    memset(&s, 0, sizeof(s));
    timing_compute_stats(&s, c, n);
    free(c);
    return s.median_ns > 0 ? s.mad_ns / s.median_ns : 0;
}

void timing_stats_release(struct timing_stats *s)
{
    free(s->raw_ns);
    s->raw_ns = NULL;
}
