/* Statistics of timing samples: median (with interpolation for even counts), percentiles by
 * linear interpolation between order statistics, MAD around the median. Host-only C so the
 * CPU tests and the GPU harnesses share one definition. */
#include "tune/timing.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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
    /* Only the statistics change; raw samples, launches and GPU readings stay. */
    out->median_ns = out->min_ns = out->max_ns = out->mean_ns = 0;
    out->stddev_ns = out->mad_ns = out->p10_ns = out->p90_ns = 0;
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

/* Append printf output at out[*len], keeping track of overflow in *len (-1). */
static void addf(char *out, int size, int *len, const char *fmt, ...)
{
    if (*len < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + *len, (size_t)(size - *len), fmt, ap);
    va_end(ap);
    *len = (n < 0 || n >= size - *len) ? -1 : *len + n;
}

/* A JSON string literal; control characters and quotes escaped, other bytes as they are. */
static void add_json_str(char *out, int size, int *len, const char *s)
{
    addf(out, size, len, "\"");
    for (; s && *s && *len >= 0; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            addf(out, size, len, "\\%c", c);
        else if (c < 0x20)
            addf(out, size, len, "\\u%04x", c);
        else
            addf(out, size, len, "%c", c);
    }
    addf(out, size, len, "\"");
}

int timing_format_header(char *out, int size, const char *kernel,
                         const struct timing_device_info *dev)
{
    int len = 0;
    addf(out, size, &len, "{\"harness\":1,\"kernel\":");
    add_json_str(out, size, &len, kernel);
    addf(out, size, &len, ",\"device\":%d,\"gpu\":", dev->device);
    add_json_str(out, size, &len, dev->name);
    addf(out, size, &len, ",\"uuid\":");
    add_json_str(out, size, &len, dev->uuid);
    addf(out, size, &len, ",\"cc\":");
    add_json_str(out, size, &len, dev->cc);
    addf(out, size, &len, ",\"driver\":");
    add_json_str(out, size, &len, dev->driver_version);
    addf(out, size, &len, ",\"cuda_driver\":%d,\"cuda_runtime\":%d}", dev->driver_cuda_version,
         dev->runtime_cuda_version);
    return len;
}

int timing_format_stats(char *out, int size, const struct timing_stats *s)
{
    int len = 0;
    addf(out, size, &len,
         ",\"median_ns\":%.1f,\"min_ns\":%.1f,\"max_ns\":%.1f,\"mean_ns\":%.1f,"
         "\"stddev_ns\":%.1f,\"mad_ns\":%.1f,\"p10_ns\":%.1f,\"p90_ns\":%.1f,\"samples\":%d,"
         "\"launches_per_sample\":%d,\"graph_nodes\":%d",
         s->median_ns, s->min_ns, s->max_ns, s->mean_ns, s->stddev_ns, s->mad_ns, s->p10_ns,
         s->p90_ns, s->samples, s->launches_per_sample, s->graph_nodes);
    addf(out, size, &len,
         ",\"sm_mhz_before\":%d,\"sm_mhz_after\":%d,\"mem_mhz\":%d,\"temp_c_before\":%d,"
         "\"temp_c_after\":%d,\"clocks_locked\":%d",
         s->sm_clock_mhz_before, s->sm_clock_mhz_after, s->mem_clock_mhz, s->temp_c_before,
         s->temp_c_after, s->clocks_locked);
    if (s->samples_planned > 0)
        addf(out, size, &len, ",\"samples_planned\":%d", s->samples_planned);
    return len;
}
