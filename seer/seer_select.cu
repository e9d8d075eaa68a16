/* seer_select(): the runtime side of Seer (see seer_select.h). The three trees are the C
 * headers `lscat seer train` wrote beside this file; the feature kernel is the one lscat's
 * benchmark timed (seer_features.cuh), so the cost the selector learned is the cost paid here. */
#include "seer_select.h"

#include "seer_features.cuh"

#include "seer_classes.h"
#include "seer_gathered.h"
#include "seer_known.h"
#include "seer_selector.h"

#define SEER_SELECT_MAX_DEVICES 64

/* One feature context per device, set up on its first gathering and kept for the process (about
 * 24 KB of device scratch and one mapped pinned result). */
static struct seer_features_ctx seer_ctx[SEER_SELECT_MAX_DEVICES];
static int seer_ctx_ready[SEER_SELECT_MAX_DEVICES];

static int features_ctx(struct seer_features_ctx **out)
{
    int dev = 0, e = (int)cudaGetDevice(&dev);
    if (e != 0)
        return e;
    if (dev < 0 || dev >= SEER_SELECT_MAX_DEVICES)
        return (int)cudaErrorInvalidDevice;
    if (!seer_ctx_ready[dev] && (e = seer_features_ctx_init(&seer_ctx[dev])) != 0)
        return e;
    seer_ctx_ready[dev] = 1;
    *out = &seer_ctx[dev];
    return 0;
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

extern "C" int seer_select(struct seer_choice *out, const int *d_row_ptr, int rows, int cols,
                           long long nnz, long long iterations, void *stream)
{
    double *x = out->features, g[4];
    for (int i = 0; i < 8; i++)
        x[i] = 0;
    x[0] = rows;
    x[1] = cols;
    x[2] = (double)nnz;
    x[3] = (double)iterations;
    x[4] = rows > 0 ? (double)nnz / rows : 0;
    out->gathered = 0;
    out->kernel = class_kernel(seer_known_predict(x));
    out->name = seer_kernel_id_name(out->kernel);
    if (seer_selector_predict(x) != 1)
        return 0;
    struct seer_features_ctx *c = 0;
    int e = features_ctx(&c);
    if (e == 0)
        e = seer_features_gather(g, c, d_row_ptr, rows, (cudaStream_t)stream);
    if (e != 0)
        return e;
    x[5] = g[0]; /* longest, shortest row; g[2], the mean, is x[4] */
    x[6] = g[1];
    x[7] = g[3];
    out->gathered = 1;
    out->kernel = class_kernel(seer_gathered_predict(x));
    out->name = seer_kernel_id_name(out->kernel);
    return 0;
}
