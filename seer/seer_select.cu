/* seer_select(): the runtime side of Seer (see seer_select.h). The three trees are the C
 * headers `lscat seer train` wrote beside this file; the feature kernel is the one lscat's
 * benchmark timed (seer_features.cuh), so the cost the selector learned is the cost paid here,
 * synchronously in seer_select() or enqueued early by seer_gather_async(). */
#include "seer_select.h"

#include "seer_derived.h"
#include "seer_features.cuh"

#include "seer_classes.h"
#include "seer_gathered.h"
#include "seer_known.h"
#include "seer_selector.h"

#define SEER_SELECT_MAX_DEVICES 64

/* One feature context per device, set up on its first gathering and kept for the process (about
 * 24 KB of device scratch and one mapped pinned result), and the last gathering enqueued on it:
 * which matrix, on which stream, and its call number (pending = 0: none to read). */
struct seer_device_state {
    struct seer_features_ctx ctx;
    int ready, pending, rows;
    const int *row_ptr;
    cudaStream_t stream;
    unsigned int seq;
};
static struct seer_device_state seer_dev[SEER_SELECT_MAX_DEVICES];

static int device_state(struct seer_device_state **out)
{
    int dev = 0, e = (int)cudaGetDevice(&dev);
    if (e != 0)
        return e;
    if (dev < 0 || dev >= SEER_SELECT_MAX_DEVICES)
        return (int)cudaErrorInvalidDevice;
    struct seer_device_state *d = &seer_dev[dev];
    if (!d->ready && (e = seer_features_ctx_init(&d->ctx)) != 0)
        return e;
    d->ready = 1;
    *out = d;
    return 0;
}

/* Before a launch on `stream`: a gathering still running on another stream shares the scratch,
 * so wait for it (on one stream the launches run in order). */
static int settle(const struct seer_device_state *d, cudaStream_t stream)
{
    volatile unsigned int *done = &d->ctx.h_result->seq; /* written by the GPU */
    if (!d->pending || d->stream == stream || *done == d->seq)
        return 0;
    return seer_features_wait(&d->ctx, d->seq, d->stream);
}

const char *seer_kernel_id_name(int kernel)
{
    static const char *const names[SEER_KERNEL_COUNT] = {
        "csr_thread", "csr_warp", "csr_block", "csr_merge", "ell_thread", "coo_warp",
        "csr_adaptive", "cusparse_default", "cusparse_csr_alg1", "cusparse_csr_alg2",
        "cusparse_coo_alg1",
    };
    return kernel >= 0 && kernel < SEER_KERNEL_COUNT ? names[kernel] : 0;
}

static int class_kernel(int c)
{
    int n = (int)(sizeof(seer_class_kernel) / sizeof(seer_class_kernel[0]));
    return c >= 0 && c < n ? seer_class_kernel[c] : seer_class_kernel[0];
}

static_assert(sizeof(((struct seer_choice *)0)->features) == SEER_FEATURE_COUNT * sizeof(double),
              "seer_choice.features holds the gathered tree's features");

static void known_x(double x[SEER_FEATURE_COUNT], int rows, int cols, long long nnz,
                    long long iterations)
{
    for (int i = 0; i < SEER_FEATURE_COUNT; i++)
        x[i] = 0;
    x[0] = rows;
    x[1] = cols;
    x[2] = (double)nnz;
    x[3] = (double)iterations;
    x[4] = rows > 0 ? (double)nnz / rows : 0;
}

extern "C" int seer_gather_async(int *started, const int *d_row_ptr, int rows, int cols,
                                 long long nnz, long long iterations, void *stream)
{
    double x[SEER_FEATURE_COUNT];
    struct seer_device_state *d = 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (started)
        *started = 0;
    known_x(x, rows, cols, nnz, iterations);
    if (seer_selector_predict(x) != 1)
        return 0;
    int e = device_state(&d);
    if (e == 0)
        e = settle(d, s);
    if (e == 0)
        d->pending = 0;
    if (e == 0 && (e = seer_features_launch(&d->seq, &d->ctx, d_row_ptr, rows, s)) == 0) {
        d->pending = 1;
        d->row_ptr = d_row_ptr;
        d->rows = rows;
        d->stream = s;
        if (started)
            *started = 1;
    }
    return e;
}

/* The four features into g: from the matching seer_gather_async() (*how = 2) or gathered here
 * (*how = 1). */
static int gather(double g[4], int *how, const int *d_row_ptr, int rows, cudaStream_t s)
{
    struct seer_device_state *d = 0;
    int e = device_state(&d);
    if (e != 0)
        return e;
    if (d->pending && d->row_ptr == d_row_ptr && d->rows == rows) {
        d->pending = 0;
        *how = 2;
        e = seer_features_wait(&d->ctx, d->seq, d->stream);
        return e ? e : seer_features_finish(g, &d->ctx, rows, d->seq);
    }
    if ((e = settle(d, s)) != 0)
        return e;
    d->pending = 0;
    *how = 1;
    return seer_features_gather(g, &d->ctx, d_row_ptr, rows, s);
}

extern "C" int seer_select(struct seer_choice *out, const int *d_row_ptr, int rows, int cols,
                           long long nnz, long long iterations, void *stream)
{
    double *x = out->features, g[4];
    int how = 0;
    known_x(x, rows, cols, nnz, iterations);
    out->gathered = 0;
    out->kernel = class_kernel(seer_known_predict(x));
    out->name = seer_kernel_id_name(out->kernel);
    if (seer_selector_predict(x) != 1)
        return 0;
    int e = gather(g, &how, d_row_ptr, rows, (cudaStream_t)stream);
    if (e != 0)
        return e;
    x[5] = g[0]; /* longest, shortest row; g[2], the mean, is x[4] */
    x[6] = g[1];
    x[7] = g[3];
    seer_derive_features(x); /* the scale-free ones, as train computed them */
    out->gathered = how;
    out->kernel = class_kernel(seer_gathered_predict(x));
    out->name = seer_kernel_id_name(out->kernel);
    return 0;
}
