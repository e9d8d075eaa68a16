/* seer_costmodel: writes a seer bench table (the CSV lscat seer bench writes) whose times come
 * from a documented COST MODEL, not from a GPU. It exists only so that CI, which has no GPU,
 * can test the train / export / eval plumbing on a table of realistic shape; no number it
 * writes is a measurement. The matrices' features are real (read or generated with lscat's own
 * reader and generators); the times are the formulas below with 5% seeded log-normal noise.
 * The committed fixture tests/data/seer/costmodel.csv was made with:
 *   build/tests/seer/support/seer_costmodel ../shared/data/matrices/NAME.mtx... \
 *       $(sed 's/^/gen:/' tests/data/seer/costmodel.specs) > tests/data/seer/costmodel.csv
 * (the 128 shared matrices in name order, then the 80 specs of costmodel.specs).
 *
 * The model (an H100/H200-like device: launch 2.5 us, memset 1.5 us, 2 TB/s effective,
 * latency-bound serial work 0.8 ns per element), per iteration, T = value bytes (4 or 8):
 *   bytes     = nnz (4 + 2T) + rows (4 + T)
 *   csr_thread   launch + bytes/B x min(row_max, mean + 2.5 sd)/mean ^ 0.7, at least row_max x 0.8 ns
 *   csr_warp     launch + bytes/B / (mean / (32 ceil(mean / 32))) ^ 0.6 + row_max / 32 x 0.8 ns
 *   csr_block    launch + rows x 0.35 ns + bytes/B / (mean / (256 ceil(mean / 256))) ^ 0.4
 *   csr_merge    launch + memset + bytes/B x 1.15 + rows x 0.05 ns
 *   ell_thread   launch + rows x row_max x (4 + 2T)/B; preprocessing 20 us + 2x that
 *   coo_warp     launch + memset + nnz (8 + 2T)/B x 1.3 + rows x 0.01 ns; preprocessing 15 us + nnz 4/B
 *   csr_adaptive 3 launches + bytes/B x 1.05; preprocessing 3 launches + 25 us + rows 12/B
 *   cusparse_*   1.2 launches + bytes/B x 1.05 x imbalance^0.15 (alg2: x 1.0, pre + 10 us);
 *                preprocessing 20 us + rows 4/B (coo: + the row expansion)
 *   features     12 us + rows 4/B
 */
#include "common/error.h"
#include "seer/csr.h"
#include "seer/gen.h"
#include "seer/kernels.h"
#include "seer/mtx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double LAUNCH = 2500, MEMSET = 1500, BW = 2.0, SERIAL = 0.8; /* ns, bytes/ns */

static unsigned long long state;

static double gauss(void)
{
    double u = 0, v = 0;
    for (int i = 0; i < 2; i++) {
        unsigned long long z = (state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        double r = ((double)(z >> 11) + 0.5) / 9007199254740992.0;
        if (i == 0)
            u = r;
        else
            v = r;
    }
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static double noisy(double ns)
{
    return ns * exp(0.05 * gauss());
}

/* Per-iteration and preprocessing time of kernel k in the model. */
static void model(double *iter, double *pre, int k, const struct seer_features *f, int t)
{
    double mean = f->row_mean > 0 ? f->row_mean : 1e-3, sd = sqrt(f->row_var);
    double bytes = f->nnz * (4 + 2 * t) + f->rows * (4 + t), stream = bytes / BW;
    double imb = fmax(1, fmin(f->row_max, mean + 2.5 * sd) / mean);
    *pre = 0;
    switch (k) {
    case SEER_K_CSR_THREAD: *iter = fmax(LAUNCH + stream * pow(imb, 0.7), LAUNCH + f->row_max * SERIAL); break;
    case SEER_K_CSR_WARP: *iter = LAUNCH + stream / pow(mean / (32 * ceil(mean / 32)), 0.6) + f->row_max / 32 * SERIAL; break;
    case SEER_K_CSR_BLOCK: *iter = LAUNCH + f->rows * 0.35 + stream / pow(mean / (256 * ceil(mean / 256)), 0.4); break;
    case SEER_K_CSR_MERGE: *iter = LAUNCH + MEMSET + stream * 1.15 + f->rows * 0.05; break;
    case SEER_K_ELL_THREAD:
        *iter = LAUNCH + f->rows * f->row_max * (4 + 2 * t) / BW;
        *pre = 20000 + 2 * (*iter - LAUNCH);
        break;
    case SEER_K_COO_WARP:
        *iter = LAUNCH + MEMSET + f->nnz * (8 + 2 * t) / BW * 1.3 + f->rows * 0.01;
        *pre = 15000 + f->nnz * 4 / BW;
        break;
    case SEER_K_CSR_ADAPTIVE:
        *iter = 3 * LAUNCH + stream * 1.05;
        *pre = 3 * LAUNCH + 25000 + f->rows * 12 / BW;
        break;
    default:
        *iter = 1.2 * LAUNCH + stream * (k == SEER_K_CUSPARSE_CSR_ALG2 ? 1.0 : 1.05) * pow(imb, 0.15);
        *pre = 20000 + f->rows * 4 / BW + (k == SEER_K_CUSPARSE_CSR_ALG2 ? 10000 : 0) +
               (k == SEER_K_CUSPARSE_COO_ALG1 ? 15000 + f->nnz * 4 / BW : 0);
    }
}

static void row(const char *name, const char *source, const char *spec, const struct seer_features *f)
{
    double feature_ns = noisy(12000 + f->rows * 4 / BW);
    for (int p = 0; p < 2; p++)
        for (int k = 0; k < SEER_K_COUNT; k++) {
            double iter, pre;
            model(&iter, &pre, k, f, p ? 8 : 4);
            int unsupported = k == SEER_K_ELL_THREAD && f->rows * f->row_max * (4.0 + 8) > 4e9;
            printf("\"%s\",%s,\"%s\",%.0f,%.0f,%.0f,%.17g,%.17g,%.17g,%.17g,cost model (not a GPU),"
                   "costmodel-0,%.17g,%s,%s,%s,", name, source, spec ? spec : "", f->rows, f->cols,
                   f->nnz, f->row_max, f->row_min, f->row_mean, f->row_var, feature_ns,
                   seer_kernel_name(k), p ? "double" : "float", unsupported ? "unsupported" : "ok");
            if (unsupported)
                printf(",,,ELL larger than the 4 GB limit (cost model)\n");
            else
                printf("%.17g,%.17g,0,\n", noisy(pre), noisy(iter));
        }
}

int main(int argc, char **argv)
{
    state = 20261123;
    printf("matrix,source,spec,rows,cols,nnz,row_max,row_min,row_mean,row_var,gpu,gpu_uuid,"
           "feature_ns,kernel,precision,status,preprocess_ns,iter_ns,max_rel_err,error\n");
    for (int i = 1; i < argc; i++) {
        struct seer_csr a;
        struct seer_features f;
        char name[400];
        int gen = !strncmp(argv[i], "gen:", 4);
        if (gen) {
            struct seer_gen_spec s;
            if (seer_gen_parse(&s, argv[i] + 4) < 0 || seer_gen(&a, &s) < 0)
                return fprintf(stderr, "%s\n", lscat_error_last()), 3;
            seer_gen_format(name, sizeof(name), &s);
        } else {
            const char *b = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
            snprintf(name, sizeof(name), "%.*s", (int)(strlen(b) > 4 ? strlen(b) - 4 : strlen(b)), b);
            if (seer_mtx_read(&a, NULL, argv[i]) < 0)
                return fprintf(stderr, "%s\n", lscat_error_last()), 3;
        }
        seer_csr_features(&f, &a);
        row(name, gen ? "generated" : "file", gen ? name : NULL, &f);
        seer_csr_release(&a);
    }
    return 0;
}
