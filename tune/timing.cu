/* The timing core on the GPU: warm-up, launches batched so each sample lasts at least
 * min_sample_ms, CUDA-event timing with synchronisation before the clock is read, optional L2
 * flush, fixed or adaptive sample counts. Statistics come from tune/stats.c. */
#include "tune/timing.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t ck_ = (call);                                                             \
        if (ck_ != cudaSuccess) {                                                             \
            rc = (int)ck_;                                                                    \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

const char *timing_error_string(int code)
{
    return cudaGetErrorString((cudaError_t)code);
}

/* A buffer twice the L2 size, written to evict the kernel's data between samples. */
static int l2_flush(cudaStream_t s, void **buf, size_t *bytes)
{
    if (!*buf) {
        int dev = 0, l2 = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
        *bytes = (size_t)(l2 > 0 ? l2 : 64 << 20) * 2;
        cudaError_t e = cudaMalloc(buf, *bytes);
        if (e != cudaSuccess)
            return (int)e;
    }
    return (int)cudaMemsetAsync(*buf, 0, *bytes, s);
}

/* One sample: `launches` runs between two events; returns the per-launch time. */
static int one_sample(double *ns_out, timing_launch_fn fn, void *ctx, cudaStream_t s,
                      cudaEvent_t a, cudaEvent_t b, int launches)
{
    int rc = 0;
    float ms = 0;
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < launches; i++) {
        rc = fn(ctx, (timing_stream_t)s);
        if (rc)
            goto done;
    }
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    CK(cudaEventElapsedTime(&ms, a, b));
    *ns_out = (double)ms * 1e6 / launches;
done:
    return rc;
}

static int want_more(const struct timing_options *o, const double *v, int n, double start_ns)
{
    if (n < o->samples)
        return 1;
    if (o->target_rel_mad <= 0 || n >= o->max_samples)
        return 0;
    if (mono_ns() - start_ns > o->budget_s * 1e9)
        return 0;
    return timing_rel_mad(v, n) >= o->target_rel_mad;
}

int timing_measure_launch(struct timing_stats *out, const struct timing_options *opts,
                          timing_launch_fn fn, void *ctx, timing_stream_t stream)
{
    struct timing_options o = TIMING_OPTIONS_INIT;
    if (opts)
        o = *opts;
    cudaStream_t s = (cudaStream_t)stream;
    cudaEvent_t a = NULL, b = NULL;
    void *flush = NULL;
    size_t flush_bytes = 0;
    int cap = o.max_samples > o.samples ? o.max_samples : o.samples;
    double *v = (double *)calloc((size_t)(cap > 0 ? cap : 1), sizeof(double));
    int rc = 0, n = 0, launches = 1;
    double one = 0, start;
    memset(out, 0, sizeof(*out));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < o.warmup; i++)
        if ((rc = fn(ctx, stream)) != 0)
            goto done;
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    /* Calibrate: how many launches make a sample of at least min_sample_ms. */
    if (!o.l2_flush) {
        if ((rc = one_sample(&one, fn, ctx, s, a, b, 1)) != 0)
            goto done;
        double want_ns = o.min_sample_ms * 1e6;
        if (one > 0 && one < want_ns)
            launches = (int)(want_ns / one) + 1;
        if (launches > 100000)
            launches = 100000;
    }
    start = mono_ns();
    while (n < cap && want_more(&o, v, n, start)) {
        if (o.l2_flush) {
            if ((rc = l2_flush(s, &flush, &flush_bytes)) != 0)
                goto done;
        }
        if ((rc = one_sample(&v[n], fn, ctx, s, a, b, launches)) != 0)
            goto done;
        n++;
    }
    if (o.keep_raw) {
        out->raw_ns = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
        memcpy(out->raw_ns, v, (size_t)n * sizeof(double));
    }
    out->launches_per_sample = launches;
    timing_compute_stats(out, v, n);
done:
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    if (flush)
        cudaFree(flush);
    free(v);
    return rc;
}

int timing_measure_host(struct timing_stats *out, const struct timing_options *opts,
                        timing_host_fn fn, void *ctx)
{
    struct timing_options o = TIMING_OPTIONS_INIT;
    if (opts)
        o = *opts;
    int cap = o.max_samples > o.samples ? o.max_samples : o.samples;
    double *v = (double *)calloc((size_t)(cap > 0 ? cap : 1), sizeof(double));
    int rc = 0, n = 0;
    double start;
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < o.warmup; i++) {
        if ((rc = fn(ctx)) != 0)
            goto done;
        CK(cudaDeviceSynchronize());
    }
    start = mono_ns();
    while (n < cap && want_more(&o, v, n, start)) {
        double t0 = mono_ns();
        if ((rc = fn(ctx)) != 0)
            goto done;
        CK(cudaDeviceSynchronize());
        v[n++] = mono_ns() - t0;
    }
    if (o.keep_raw) {
        out->raw_ns = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
        memcpy(out->raw_ns, v, (size_t)n * sizeof(double));
    }
    out->launches_per_sample = 1;
    timing_compute_stats(out, v, n);
done:
    free(v);
    return rc;
}
