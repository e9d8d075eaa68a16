/* lscat-seer-gpu: the benchmark worker behind `lscat seer bench` (the only Seer program that
 * links CUDA). For each matrix item (file:PATH or gen:SPEC) it reads or generates the matrix,
 * prints its features, uploads it, times the GPU feature kernel (synchronously, and the exposed
 * cost of enqueueing it early in two caller flows: measure_async) and every kernel x precision
 * slot, one JSON line per event on stdout. A sticky CUDA fault ends it with exit 4 after the
 * fault's line; the driver (seer/bench.c) restarts it after the slot that faulted. */
extern "C" {
#include "common/error.h"
#include "seer/csr.h"
#include "seer/gen.h"
#include "seer/mtx.h"
}
#include "seer/gpu.h"

#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

struct worker {
    int dbl[2], nprec;          /* precisions in order: 0 = float, 1 = double */
    int kernels[SEER_K_COUNT], nkernels;
    long start;                 /* slots of the first item to skip (a restart) */
    double max_ell_bytes;
    unsigned long long seed;
    struct timing_options to;
    cusparseHandle_t sparse;
    struct seer_features_ctx *feat;
    int features_only;          /* time the feature kernel only, no SpMV kernel */
};

static void jstr(const char *s)
{
    if (!s) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static int usage(void)
{
    fprintf(stderr, "usage: lscat-seer-gpu [--precision float,double] [--kernels LIST] "
            "[--start N] [--samples N] [--min-sample-ms X] [--max-ell-gb X] [--seed N] "
            "[--features-only] file:PATH|gen:SPEC...\n(internal: run by lscat seer bench)\n");
    return 2;
}

static int parse_list(struct worker *w, const char *opt, char *arg)
{
    char *save = NULL;
    for (char *t = strtok_r(arg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(opt, "--precision") && (!strcmp(t, "float") || !strcmp(t, "double")))
            w->dbl[w->nprec++] = !strcmp(t, "double");
        else if (!strcmp(opt, "--kernels") && seer_kernel_by_name(t) >= 0 &&
                 w->nkernels < SEER_K_COUNT)
            w->kernels[w->nkernels++] = seer_kernel_by_name(t);
        else
            return fprintf(stderr, "lscat-seer-gpu: %s: '%s' is unknown\n", opt, t), -1;
    }
    return 0;
}

static int parse_args(struct worker *w, int argc, char **argv)
{
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i += 2) {
        const char *o = argv[i];
        if (!strcmp(o, "--features-only")) {
            w->features_only = 1;
            i--; /* a flag: one argument, not two */
            continue;
        }
        if (i + 1 >= argc)
            return -1;
        char *v = argv[i + 1];
        if (!strcmp(o, "--precision") || !strcmp(o, "--kernels")) {
            if (parse_list(w, o, v) < 0)
                return -1;
        } else if (!strcmp(o, "--start")) {
            w->start = atol(v);
        } else if (!strcmp(o, "--samples")) {
            w->to.samples = atoi(v);
        } else if (!strcmp(o, "--min-sample-ms")) {
            w->to.min_sample_ms = atof(v);
        } else if (!strcmp(o, "--max-ell-gb")) {
            w->max_ell_bytes = atof(v) * 1e9;
        } else if (!strcmp(o, "--seed")) {
            w->seed = strtoull(v, NULL, 10);
        } else {
            return -1;
        }
    }
    if (!w->nprec)
        w->dbl[w->nprec++] = 1;
    if (!w->nkernels)
        for (int k = 0; k < SEER_K_COUNT; k++)
            w->kernels[w->nkernels++] = k;
    return i;
}

/* Read or generate item; name gets the matrix's name. */
static int load(struct seer_csr *a, char *name, size_t size, const char *item, const char **source)
{
    if (!strncmp(item, "gen:", 4)) {
        struct seer_gen_spec s;
        *source = "generated";
        if (seer_gen_parse(&s, item + 4) < 0)
            return -1;
        seer_gen_format(name, size, &s);
        return seer_gen(a, &s);
    }
    const char *path = !strncmp(item, "file:", 5) ? item + 5 : item;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    *source = "file";
    snprintf(name, size, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && !strcmp(dot, ".mtx"))
        *dot = '\0';
    return seer_mtx_read(a, NULL, path);
}

static void print_matrix(int item, const char *name, const char *source, const char *item_s,
                         const struct seer_csr *a, double read_s)
{
    struct seer_features f;
    seer_csr_features(&f, a);
    printf("{\"event\":\"matrix\",\"item\":%d,\"name\":", item);
    jstr(name);
    printf(",\"source\":\"%s\",\"path\":", source);
    jstr(!strcmp(source, "file") ? item_s + (strncmp(item_s, "file:", 5) ? 0 : 5) : NULL);
    printf(",\"spec\":");
    jstr(!strcmp(source, "generated") ? name : NULL);
    printf(",\"rows\":%d,\"cols\":%d,\"nnz\":%d,\"row_max\":%.17g,\"row_min\":%.17g,"
           "\"row_mean\":%.17g,\"row_var\":%.17g,\"read_s\":%.3f}\n",
           a->rows, a->cols, a->nnz, f.row_max, f.row_min, f.row_mean, f.row_var, read_s);
    fflush(stdout);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int print_device(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    struct timing_device_info d;
    if (e != cudaSuccess || n == 0 || timing_device_info_get(&d, 0) != 0) {
        printf("{\"event\":\"device\",\"ok\":0,\"why\":");
        jstr(e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
        printf("}\n");
        fflush(stdout);
        return 0;
    }
    printf("{\"event\":\"device\",\"ok\":1,\"name\":");
    jstr(d.name);
    printf(",\"uuid\":");
    jstr(d.uuid);
    printf(",\"cc\":\"%s\",\"memory_bytes\":%lld,\"sm_count\":%d,\"driver\":", d.cc,
           d.memory_bytes, d.sm_count);
    jstr(d.driver_version);
    printf(",\"cuda_runtime\":%d}\n", d.runtime_cuda_version);
    fflush(stdout);
    return 1;
}


/* x uniform in (-1, 1) from the seed (splitmix64), so every kernel sees the same vector. */
static void random_x(std::vector<double> &x, unsigned long long seed)
{
    unsigned long long st = seed * 0x2545F4914F6CDD1DULL + 7;
    for (double &v : x) {
        unsigned long long z = (st += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        v = 2.0 * ((double)(z >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
    }
}

static void dev_free(struct seer_dev_matrix *m)
{
    cudaFree(m->rp);
    cudaFree(m->ci);
    cudaFree(m->vd);
    cudaFree(m->xd);
    cudaFree(m->yd);
    cudaFree(m->vf);
    cudaFree(m->xf);
    cudaFree(m->yf);
}

template <class T> static int put(T **d, const T *h, size_t n)
{
    int e = cudaMalloc(d, (n ? n : 1) * sizeof(T));
    return e ? e : (n ? (int)cudaMemcpy(*d, h, n * sizeof(T), cudaMemcpyHostToDevice) : 0);
}

static int upload(struct seer_dev_matrix *m, const struct seer_csr *a, const std::vector<double> &x)
{
    std::vector<float> vf(a->val, a->val + a->nnz), xf(x.begin(), x.end());
    size_t nr = (size_t)a->rows, nz = (size_t)a->nnz, nc = (size_t)a->cols;
    int e;
    m->rows = a->rows;
    m->cols = a->cols;
    m->nnz = a->nnz;
    if ((e = put(&m->rp, a->row_ptr, nr + 1)) || (e = put(&m->ci, a->col, nz)) ||
        (e = put(&m->vd, a->val, nz)) || (e = put(&m->vf, vf.data(), nz)) ||
        (e = put(&m->xd, x.data(), nc)) || (e = put(&m->xf, xf.data(), nc)) ||
        (e = cudaMalloc(&m->yd, nr * sizeof(double))) || (e = cudaMalloc(&m->yf, nr * sizeof(float))))
        return e;
    return 0;
}

/* The exposed costs of gathering in a caller's flow: [0] float, [1] double (measure_async). */
struct seer_async_out {
    double upload[2], resident[2], sync_upload[2];
};

struct feat_ctx {
    const struct seer_dev_matrix *m;
    double f[4];
};

static int feat_fn(void *ctx)
{
    struct feat_ctx *c = (struct feat_ctx *)ctx;
    return seer_features_gather(c->f, c->m->feat, c->m->rp, c->m->rows, 0);
}

/* The exposed cost of gathering in two defined caller flows (docs/seer.md, Session 8), on one
 * stream (the default one), every host array pageable (std::vector) and uploaded with
 * cudaMemcpyAsync:
 *   upload:   the CSR is in host memory: upload row_ptr, [seer_gather_async()], upload the
 *             column indices, the values and x;
 *   resident: the matrix is already on the GPU: [seer_gather_async()], upload x;
 * then [seer_select()'s wait for the result], the SpMV launch (here an empty kernel taking x:
 * the SpMV itself is the same with and without gathering) and a stream synchronisation. The
 * cost is the median over rounds of the flow with the bracketed steps minus without (each
 * upload capped at FLOW_CAP_BYTES, see measure_async). FLOW_SYNC instead gathers where
 * seer_select() does without an early gathering: launch + stream synchronisation after the
 * uploads. */
enum { FLOW_NONE, FLOW_EARLY, FLOW_SYNC };
struct flow_ctx {
    const struct seer_dev_matrix *m; /* rp, rows, nnz, the feature context */
    const struct seer_csr *a;        /* the host CSR */
    int upload;                      /* 1: flow "upload", 0: "resident" */
    int *d_ci;
    void *d_val, *d_x;
    const void *h_val, *h_x;
    size_t rp_bytes, ci_bytes, val_bytes, x_bytes; /* what each upload copies */
    double f[4];
};

static __global__ void seer_flow_spmv_stand_in(const void *x)
{
    (void)x;
}

/* An upload of the flow on the default stream; nothing for 0 bytes (NULL host arrays). */
static int flow_up(void *dst, const void *src, size_t bytes)
{
    return bytes ? (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, 0) : 0;
}

static int flow_run(struct flow_ctx *c, int mode)
{
    const struct seer_dev_matrix *m = c->m;
    unsigned int seq = 0;
    int e = 0, gather = mode == FLOW_EARLY;
    if (c->upload)
        e = flow_up(m->rp, c->a->row_ptr, c->rp_bytes);
    if (e == 0 && gather)
        e = seer_features_launch(&seq, m->feat, m->rp, m->rows, 0);
    if (e == 0 && c->upload && (e = flow_up(c->d_ci, c->a->col, c->ci_bytes)) == 0)
        e = flow_up(c->d_val, c->h_val, c->val_bytes);
    if (e == 0)
        e = flow_up(c->d_x, c->h_x, c->x_bytes);
    if (e == 0 && gather && (e = seer_features_wait(m->feat, seq, 0)) == 0)
        e = seer_features_finish(c->f, m->feat, m->rows, seq);
    if (e == 0 && mode == FLOW_SYNC)
        e = seer_features_gather(c->f, m->feat, m->rp, m->rows, 0);
    if (e == 0) {
        seer_flow_spmv_stand_in<<<1, 32>>>(c->d_x);
        e = (int)cudaGetLastError();
    }
    return e ? e : (int)cudaStreamSynchronize(0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define FLOW_MAX_ROUNDS 31
#define FLOW_MIN_ROUNDS 9
#define FLOW_BUDGET_S 0.1  /* per flow and precision, once past the minimum */
#define FLOW_CAP_BYTES (4u << 20) /* each upload of a flow, at most (see measure_async) */

/* One timed run (host clock, then cudaDeviceSynchronize as the timing core's host shape). */
static int flow_time(double *s, struct flow_ctx *c, int mode)
{
    double t0 = now_s();
    int e = flow_run(c, mode);
    *s = now_s() - t0;
    return e ? e : (int)cudaDeviceSynchronize();
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ns[k - 1] = the median over rounds of (time with modes[k]) - (time with modes[0] = FLOW_NONE),
 * k = 1..nmodes-1. A round runs every mode once, the order rotating from round to round; one
 * warm-up round, then FLOW_MAX_ROUNDS rounds, fewer (at least FLOW_MIN_ROUNDS) when they would
 * take more than FLOW_BUDGET_S. */
static int flow_costs(double *ns, struct flow_ctx *c, const int *modes, int nmodes)
{
    double d[2][FLOW_MAX_ROUNDS], t[3], round_s = 0;
    int n = FLOW_MAX_ROUNDS, e = 0;
    for (int k = 0; k < nmodes && e == 0; k++)
        if ((e = flow_time(&t[k], c, modes[k])) == 0)
            round_s += t[k];
    if (e)
        return e;
    if (round_s * n > FLOW_BUDGET_S)
        n = (int)(FLOW_BUDGET_S / round_s);
    n = n < FLOW_MIN_ROUNDS ? FLOW_MIN_ROUNDS : n;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < nmodes; j++) {
            int k = (i + j) % nmodes;
            if ((e = flow_time(&t[k], c, modes[k])))
                return e;
        }
        for (int k = 1; k < nmodes; k++)
            d[k - 1][i] = (t[k] - t[0]) * 1e9;
    }
    for (int k = 1; k < nmodes; k++)
        ns[k - 1] = median(d[k - 1], n);
    return 0;
}

static size_t capped(size_t bytes)
{
    return bytes < FLOW_CAP_BYTES ? bytes : FLOW_CAP_BYTES;
}

/* Both flows (and the upload flow with seer_select()'s own gathering) in float and double, into
 * device buffers of their own (m->rp is uploaded again with the same bytes; the bench's own x
 * and values stay untouched). Every upload of a flow is capped at FLOW_CAP_BYTES: more to upload
 * after the kernel can only hide it better, and the jitter of a 100 MB pageable upload (about
 * a millisecond) would drown the microseconds measured; so for a larger matrix the cost is that
 * of a caller with at most 4 MB of each array to upload (an upper bound). */
static int measure_async(struct seer_async_out *out, const struct seer_dev_matrix *m,
                         const struct seer_csr *a)
{
    static const int upload_modes[3] = { FLOW_NONE, FLOW_EARLY, FLOW_SYNC };
    static const int resident_modes[2] = { FLOW_NONE, FLOW_EARLY };
    std::vector<double> xd((size_t)a->cols, 0.5);
    std::vector<float> xf((size_t)a->cols, 0.5f), vf(a->val, a->val + a->nnz);
    struct flow_ctx c;
    memset(&c, 0, sizeof(c));
    c.m = m, c.a = a;
    c.rp_bytes = capped(((size_t)a->rows + 1) * sizeof(int));
    c.ci_bytes = capped((size_t)a->nnz * sizeof(int));
    int e = (int)cudaMalloc(&c.d_ci, c.ci_bytes + sizeof(int));
    if (e == 0)
        e = (int)cudaMalloc(&c.d_val, FLOW_CAP_BYTES);
    if (e == 0)
        e = (int)cudaMalloc(&c.d_x, FLOW_CAP_BYTES);
    for (int dbl = 0; dbl < 2 && e == 0; dbl++) {
        double ns[2];
        c.h_val = dbl ? (const void *)a->val : (const void *)vf.data();
        c.val_bytes = capped((size_t)a->nnz * (dbl ? sizeof(double) : sizeof(float)));
        c.h_x = dbl ? (const void *)xd.data() : (const void *)xf.data();
        c.x_bytes = capped((size_t)a->cols * (dbl ? sizeof(double) : sizeof(float)));
        c.upload = 1;
        if ((e = flow_costs(ns, &c, upload_modes, 3)) == 0) {
            out->upload[dbl] = ns[0];
            out->sync_upload[dbl] = ns[1];
            c.upload = 0;
            e = flow_costs(&out->resident[dbl], &c, resident_modes, 2);
        }
    }
    cudaFree(c.d_ci);
    cudaFree(c.d_val);
    cudaFree(c.d_x);
    return e;
}

static int close_rel(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-12;
}

/* The GPU feature kernel: its cost (host clock around the launch and the synchronisation,
 * median of the timing core's samples), the asynchronous path's exposed cost in both
 * precisions (measure_async; d_x: cols doubles on the GPU) and whether it agrees with the CPU
 * features. */
static int measure_features(const struct seer_dev_matrix *m, const struct seer_csr *a, int item)
{
    struct feat_ctx c = { m, { 0, 0, 0, 0 } };
    struct timing_options o = TIMING_OPTIONS_INIT;
    struct timing_stats st;
    struct seer_features f;
    struct seer_async_out as;
    o.warmup = 2;
    int e = timing_measure_host(&st, &o, feat_fn, &c);
    if (e == 0)
        e = measure_async(&as, m, a);
    if (e)
        return e;
    seer_csr_features(&f, a);
    int agrees = close_rel(c.f[0], f.row_max) && close_rel(c.f[1], f.row_min) &&
                 close_rel(c.f[2], f.row_mean) && close_rel(c.f[3], f.row_var);
    printf("{\"event\":\"features\",\"item\":%d,\"feature_ns\":%.17g,\"agrees\":%d,"
           "\"async_float_ns\":%.17g,\"async_double_ns\":%.17g,\"resident_float_ns\":%.17g,"
           "\"resident_double_ns\":%.17g,\"sync_upload_float_ns\":%.17g,"
           "\"sync_upload_double_ns\":%.17g,\"gpu_row_max\":%.17g,\"gpu_row_min\":%.17g,"
           "\"gpu_row_mean\":%.17g,\"gpu_row_var\":%.17g}\n", item, st.median_ns, agrees,
           as.upload[0], as.upload[1], as.resident[0], as.resident[1], as.sync_upload[0],
           as.sync_upload[1], c.f[0], c.f[1], c.f[2], c.f[3]);
    fflush(stdout);
    return 0;
}

static void print_result(int item, long slot, int kernel, int dbl, const struct seer_gpu_result *r)
{
    printf("{\"event\":\"result\",\"item\":%d,\"slot\":%ld,\"kernel\":\"%s\",\"precision\":\"%s\","
           "\"status\":\"%s\",\"error\":", item, slot, seer_kernel_name(kernel),
           dbl ? "double" : "float", r->status);
    jstr(r->error[0] ? r->error : NULL);
    printf(",\"preprocess_ns\":%.17g,\"iter_ns\":%.17g,\"iter_min_ns\":%.17g,\"iter_mad_ns\":%.17g,"
           "\"samples\":%d,\"launches_per_sample\":%d,\"max_rel_err\":%.17g}\n",
           r->preprocess_ns, r->iter_ns, r->iter_min_ns, r->iter_mad_ns, r->samples,
           r->launches_per_sample, isfinite(r->max_rel_err) ? r->max_rel_err : 1e308);
    fflush(stdout);
}

/* Every slot (precision x kernel) of one matrix from `start` on. Returns 0, or 4 after a sticky
 * fault (the worker must exit). */
static int run_slots(const struct worker *w, const struct seer_dev_matrix *m,
                     const struct seer_host_ref *ref, int item, long start, int upload_err)
{
    long slot = 0;
    for (int p = 0; p < w->nprec; p++) {
        for (int k = 0; k < w->nkernels; k++, slot++) {
            struct seer_gpu_result r;
            if (slot < start)
                continue;
            printf("{\"event\":\"begin\",\"item\":%d,\"slot\":%ld}\n", item, slot);
            fflush(stdout);
            if (upload_err) {
                memset(&r, 0, sizeof(r));
                r.status = "fault";
                snprintf(r.error, sizeof(r.error), "uploading the matrix: %s",
                         cudaGetErrorString((cudaError_t)upload_err));
            } else {
                seer_gpu_bench(&r, m, ref, w->kernels[k], w->dbl[p], &w->to);
            }
            print_result(item, slot, w->kernels[k], w->dbl[p], &r);
            if (r.sticky)
                return 4;
        }
    }
    return 0;
}

/* --features-only: upload row_ptr alone and time the feature kernel (measure_async uploads the
 * rest of the matrix into buffers of its own). */
static int run_features_only(const struct worker *w, const struct seer_csr *a, int item)
{
    struct seer_dev_matrix m;
    memset(&m, 0, sizeof(m));
    m.rows = a->rows;
    m.cols = a->cols;
    m.nnz = a->nnz;
    m.feat = w->feat;
    int e = put(&m.rp, a->row_ptr, (size_t)a->rows + 1);
    if (!e)
        e = measure_features(&m, a, item);
    if (e) {
        printf("{\"event\":\"features_error\",\"item\":%d,\"error\":", item);
        jstr(cudaGetErrorString((cudaError_t)e));
        printf("}\n");
        fflush(stdout);
    }
    cudaFree(m.rp);
    return e && seer_gpu_is_sticky(e) ? 4 : 0;
}

static int run_matrix(const struct worker *w, const struct seer_csr *a, int item, long start)
{
    std::vector<double> x((size_t)a->cols), y((size_t)a->rows), abs_((size_t)a->rows);
    std::vector<int> len((size_t)a->rows);
    struct seer_dev_matrix m;
    memset(&m, 0, sizeof(m));
    m.sparse = (void *)w->sparse;
    m.feat = w->feat;
    m.max_ell_bytes = w->max_ell_bytes;
    random_x(x, w->seed);
    seer_csr_spmv_ref(y.data(), abs_.data(), a, x.data());
    for (int r = 0; r < a->rows; r++)
        len[(size_t)r] = a->row_ptr[r + 1] - a->row_ptr[r];
    struct seer_host_ref ref = { y.data(), abs_.data(), len.data() };
    int e = upload(&m, a, x);
    if (!e && start == 0 && (e = measure_features(&m, a, item)) && seer_gpu_is_sticky(e))
        return 4;
    int rc = run_slots(w, &m, &ref, item, start, e);
    if (rc == 0)
        dev_free(&m);
    return rc;
}

int main(int argc, char **argv)
{
    struct worker w;
    memset(&w, 0, sizeof(w));
    w.to = (struct timing_options)TIMING_OPTIONS_INIT;
    w.max_ell_bytes = 4e9;
    w.seed = 1;
    int first = parse_args(&w, argc, argv);
    if (first < 0)
        return usage();
    int have_gpu = print_device();
    struct seer_features_ctx feat = {};
    int fe = have_gpu ? seer_features_ctx_init(&feat) : 0;
    if (fe) {
        fprintf(stderr, "lscat-seer-gpu: cannot set up the feature kernel: %s\n",
                cudaGetErrorString((cudaError_t)fe));
        return 3;
    }
    w.feat = &feat;
    if (have_gpu && cusparseCreate(&w.sparse) != CUSPARSE_STATUS_SUCCESS) {
        fprintf(stderr, "lscat-seer-gpu: cannot create a cuSPARSE handle\n");
        seer_features_ctx_release(&feat);
        return 3;
    }
    int rc = 0;
    for (int i = first; i < argc && rc == 0; i++) {
        struct seer_csr a = SEER_CSR_INIT;
        char name[512];
        const char *source = "file";
        double t0 = now_s();
        if (load(&a, name, sizeof(name), argv[i], &source) < 0) {
            printf("{\"event\":\"matrix_error\",\"item\":%d,\"error\":", i - first);
            jstr(lscat_error_last());
            printf("}\n");
            fflush(stdout);
            continue;
        }
        print_matrix(i - first, name, source, argv[i], &a, now_s() - t0);
        if (have_gpu && w.features_only)
            rc = run_features_only(&w, &a, i - first);
        else if (have_gpu)
            rc = run_matrix(&w, &a, i - first, i == first ? w.start : 0);
        seer_csr_release(&a);
    }
    if (have_gpu) {
        cusparseDestroy(w.sparse);
        seer_features_ctx_release(&feat);
        timing_release_process_state();
    }
    return rc;
}
