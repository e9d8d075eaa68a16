/* One SpMV kernel on one matrix on the GPU: prepare it (the format conversion, binning or
 * cuSPARSE buffer it needs, timed as preprocessing), run it once and check y against the
 * double CPU reference, then time its iterations through the shared timing core (launch shape).
 * Used by the benchmark worker (seer/gpu_main.cu). */
#include "seer/gpu.h"

#include "seer/spmv.cuh"

#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

template <class T> struct prep {
    int kernel = 0;
    const struct seer_dev_matrix *m = nullptr;
    const T *v = nullptr, *x = nullptr;
    T *y = nullptr;
    int width = 0, bins[3] = { 0, 0, 0 };
    int *ec = nullptr, *ri = nullptr, *lists = nullptr, *counts = nullptr;
    T *ev = nullptr;
    cusparseSpMatDescr_t A = nullptr;
    cusparseDnVecDescr_t X = nullptr, Y = nullptr;
    void *buf = nullptr;
    cusparseSpMVAlg_t alg = CUSPARSE_SPMV_ALG_DEFAULT;
    cusparseHandle_t h = nullptr;
};

template <class T> static cudaDataType cuda_type();
template <> cudaDataType cuda_type<float>() { return CUDA_R_32F; }
template <> cudaDataType cuda_type<double>() { return CUDA_R_64F; }

template <class T> static void prep_free(prep<T> *p)
{
    if (p->A)
        cusparseDestroySpMat(p->A);
    if (p->X)
        cusparseDestroyDnVec(p->X);
    if (p->Y)
        cusparseDestroyDnVec(p->Y);
    cudaFree(p->ec);
    cudaFree(p->ev);
    cudaFree(p->ri);
    cudaFree(p->lists);
    cudaFree(p->counts);
    cudaFree(p->buf);
    delete p;
}

static unsigned blocks_for(long long n, int threads)
{
    long long b = (n + threads - 1) / threads;
    return (unsigned)(b > 0 ? b : 1);
}

/* Longest row, read from the features kernel (ELL's width is part of its preprocessing). */
static int longest_row(int *out, const struct seer_dev_matrix *m)
{
    double f[4] = { 0, 0, 0, 0 };
    int e = seer_features_gather(f, m->feat, m->rp, m->rows, 0);
    *out = (int)f[0];
    return e;
}

template <class T> static int prep_ell(prep<T> *p, struct seer_gpu_error *err)
{
    const struct seer_dev_matrix *m = p->m;
    int e = longest_row(&p->width, m);
    if (e)
        return e;
    double bytes = (double)m->rows * p->width * (sizeof(int) + sizeof(T));
    if (bytes > m->max_ell_bytes) {
        snprintf(err->msg, sizeof(err->msg), "ELL needs %.3g GB (%d rows padded to %d); the "
                 "limit is %.3g GB", bytes / 1e9, m->rows, p->width, m->max_ell_bytes / 1e9);
        err->unsupported = 1;
        return -1;
    }
    size_t cells = (size_t)m->rows * (size_t)(p->width ? p->width : 1);
    if ((e = cudaMalloc(&p->ec, cells * sizeof(int))) || (e = cudaMalloc(&p->ev, cells * sizeof(T))))
        return e;
    k_csr_to_ell<T><<<blocks_for(m->rows, 256), 256>>>(m->rows, p->width, m->rp, m->ci, p->v,
                                                         p->ec, p->ev);
    return cudaGetLastError();
}

static int prep_rows(int **ri, const struct seer_dev_matrix *m)
{
    int e = cudaMalloc(ri, (size_t)(m->nnz ? m->nnz : 1) * sizeof(int));
    if (e)
        return e;
    k_expand_rows<<<blocks_for(m->rows, 256), 256>>>(m->rows, m->rp, *ri);
    return cudaGetLastError();
}

template <class T> static int prep_adaptive(prep<T> *p)
{
    const struct seer_dev_matrix *m = p->m;
    int e;
    if ((e = cudaMalloc(&p->counts, 3 * sizeof(int))) ||
        (e = cudaMalloc(&p->lists, 3 * (size_t)m->rows * sizeof(int))) ||
        (e = cudaMemset(p->counts, 0, 3 * sizeof(int))))
        return e;
    k_bin_rows<<<blocks_for(m->rows, 256), 256>>>(m->rows, m->rp, p->counts, p->lists);
    if ((e = cudaGetLastError()))
        return e;
    return cudaMemcpy(p->bins, p->counts, sizeof(p->bins), cudaMemcpyDeviceToHost);
}

static const char *sparse_msg(cusparseStatus_t st)
{
    return cusparseGetErrorString(st);
}

template <class T> static int prep_cusparse(prep<T> *p, struct seer_gpu_error *err)
{
    const struct seer_dev_matrix *m = p->m;
    cudaDataType t = cuda_type<T>();
    cusparseStatus_t st;
    size_t size = 0;
    T one = 1, zero = 0;
    int coo = p->kernel == SEER_K_CUSPARSE_COO_ALG1, e;
    p->alg = p->kernel == SEER_K_CUSPARSE_CSR_ALG1 ? CUSPARSE_SPMV_CSR_ALG1
           : p->kernel == SEER_K_CUSPARSE_CSR_ALG2 ? CUSPARSE_SPMV_CSR_ALG2
           : coo ? CUSPARSE_SPMV_COO_ALG1 : CUSPARSE_SPMV_ALG_DEFAULT;
    if (coo && (e = prep_rows(&p->ri, m)))
        return e;
    st = coo ? cusparseCreateCoo(&p->A, m->rows, m->cols, m->nnz, p->ri, m->ci, (void *)p->v,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, t)
             : cusparseCreateCsr(&p->A, m->rows, m->cols, m->nnz, m->rp, m->ci, (void *)p->v,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, t);
    if (st == CUSPARSE_STATUS_SUCCESS)
        st = cusparseCreateDnVec(&p->X, m->cols, (void *)p->x, t);
    if (st == CUSPARSE_STATUS_SUCCESS)
        st = cusparseCreateDnVec(&p->Y, m->rows, p->y, t);
    if (st == CUSPARSE_STATUS_SUCCESS)
        st = cusparseSpMV_bufferSize(p->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, p->A, p->X,
                                     &zero, p->Y, t, p->alg, &size);
    if (st == CUSPARSE_STATUS_SUCCESS && (e = cudaMalloc(&p->buf, size ? size : 1)))
        return e;
    if (st == CUSPARSE_STATUS_SUCCESS)
        st = cusparseSpMV_preprocess(p->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, p->A, p->X,
                                     &zero, p->Y, t, p->alg, p->buf);
    if (st != CUSPARSE_STATUS_SUCCESS) {
        snprintf(err->msg, sizeof(err->msg), "cuSPARSE: %s", sparse_msg(st));
        err->unsupported = 1;
        return -1;
    }
    return 0;
}

/* Everything a kernel needs before its first iteration. Returns 0, a cudaError_t, or -1 with
 * err filled (not supported on this matrix). */
template <class T> static int prep_run(prep<T> *p, struct seer_gpu_error *err)
{
    switch (p->kernel) {
    case SEER_K_ELL_THREAD: return prep_ell(p, err);
    case SEER_K_COO_WARP: return prep_rows(&p->ri, p->m);
    case SEER_K_CSR_ADAPTIVE: return prep_adaptive(p);
    case SEER_K_CUSPARSE_DEFAULT:
    case SEER_K_CUSPARSE_CSR_ALG1:
    case SEER_K_CUSPARSE_CSR_ALG2:
    case SEER_K_CUSPARSE_COO_ALG1: return prep_cusparse(p, err);
    default: return 0;
    }
}

template <class T> static int launch_adaptive(prep<T> *p, cudaStream_t s)
{
    const struct seer_dev_matrix *m = p->m;
    const int *l = p->lists;
    if (p->bins[0])
        k_adaptive_short<T><<<blocks_for(p->bins[0], 256), 256, 0, s>>>(p->bins[0], l, m->rp,
                                                                        m->ci, p->v, p->x, p->y);
    if (p->bins[1])
        k_adaptive_medium<T><<<blocks_for(32LL * p->bins[1], 256), 256, 0, s>>>(
            p->bins[1], l + m->rows, m->rp, m->ci, p->v, p->x, p->y);
    if (p->bins[2])
        k_adaptive_long<T><<<p->bins[2], SEER_BLOCK_THREADS, 0, s>>>(
            p->bins[2], l + 2LL * m->rows, m->rp, m->ci, p->v, p->x, p->y);
    return cudaGetLastError();
}

template <class T> static int launch_cusparse(prep<T> *p, cudaStream_t s)
{
    T one = 1, zero = 0;
    cusparseSetStream(p->h, s);
    cusparseStatus_t st = cusparseSpMV(p->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, p->A, p->X,
                                       &zero, p->Y, cuda_type<T>(), p->alg, p->buf);
    return st == CUSPARSE_STATUS_SUCCESS ? (int)cudaGetLastError() : (int)cudaErrorUnknown;
}

/* One iteration y = A x on stream s. */
template <class T> static int launch_one(prep<T> *p, cudaStream_t s)
{
    const struct seer_dev_matrix *m = p->m;
    const int n = m->rows;
    switch (p->kernel) {
    case SEER_K_CSR_THREAD:
        k_csr_thread<T><<<blocks_for(n, 256), 256, 0, s>>>(n, m->rp, m->ci, p->v, p->x, p->y);
        break;
    case SEER_K_CSR_WARP:
        k_csr_warp<T><<<blocks_for(32LL * n, 256), 256, 0, s>>>(n, m->rp, m->ci, p->v, p->x, p->y);
        break;
    case SEER_K_CSR_BLOCK:
        k_csr_block<T><<<n, SEER_BLOCK_THREADS, 0, s>>>(n, m->rp, m->ci, p->v, p->x, p->y);
        break;
    case SEER_K_CSR_MERGE:
        cudaMemsetAsync(p->y, 0, (size_t)n * sizeof(T), s);
        k_csr_merge<T><<<blocks_for(((long long)n + m->nnz + SEER_MERGE_ITEMS - 1) / SEER_MERGE_ITEMS,
                                    256), 256, 0, s>>>(n, m->nnz, m->rp, m->ci, p->v, p->x, p->y);
        break;
    case SEER_K_ELL_THREAD:
        k_ell_thread<T><<<blocks_for(n, 256), 256, 0, s>>>(n, p->width, p->ec, p->ev, p->x, p->y);
        break;
    case SEER_K_COO_WARP:
        cudaMemsetAsync(p->y, 0, (size_t)n * sizeof(T), s);
        if (m->nnz)
            k_coo_warp<T><<<blocks_for(m->nnz, 256), 256, 0, s>>>(m->nnz, p->ri, m->ci, p->v,
                                                                  p->x, p->y);
        break;
    case SEER_K_CSR_ADAPTIVE: return launch_adaptive(p, s);
    default: return launch_cusparse(p, s);
    }
    return cudaGetLastError();
}

template <class T> static int launch_fn(void *ctx, timing_stream_t s)
{
    return launch_one((prep<T> *)ctx, (cudaStream_t)s);
}

/* The preprocessing measurement: every call prepares a fresh copy (kept until the end, so no
 * release is timed); the last one is used for the iterations. */
template <class T> struct prep_bench {
    prep<T> proto;
    std::vector<prep<T> *> made;
    struct seer_gpu_error *err;
};

template <class T> static int prep_fn(void *ctx)
{
    prep_bench<T> *b = (prep_bench<T> *)ctx;
    prep<T> *p = new prep<T>(b->proto);
    b->made.push_back(p);
    int e = prep_run(p, b->err);
    return e == 0 ? (int)cudaDeviceSynchronize() : e;
}

int seer_gpu_is_sticky(int e)
{
    return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure ||
           e == cudaErrorHardwareStackError || e == cudaErrorIllegalInstruction ||
           e == cudaErrorMisalignedAddress || e == cudaErrorInvalidAddressSpace ||
           e == cudaErrorInvalidPc || e == cudaErrorAssert || e == cudaErrorLaunchTimeout;
}

static void cuda_fault(struct seer_gpu_result *r, int e, const char *when)
{
    snprintf(r->error, sizeof(r->error), "%s: %s", when, cudaGetErrorString((cudaError_t)e));
    r->status = "fault";
    r->sticky = seer_gpu_is_sticky(e) || seer_gpu_is_sticky(cudaDeviceSynchronize());
}

/* Copy y back as doubles and compare with the reference (tolerance grows with row length). */
template <class T> static void check(struct seer_gpu_result *r, const prep<T> *p,
                                     const struct seer_host_ref *ref)
{
    int n = p->m->rows;
    std::vector<T> y((size_t)n);
    int e = cudaMemcpy(y.data(), p->y, (size_t)n * sizeof(T), cudaMemcpyDeviceToHost);
    if (e) {
        cuda_fault(r, e, "copying y back");
        return;
    }
    double eps = sizeof(T) == 4 ? 5.96e-8 : 1.11e-16, worst = 0, worst_ratio = 0;
    int bad_row = -1;
    for (int i = 0; i < n; i++) {
        double err = fabs((double)y[i] - ref->y[i]) / (ref->abs[i] + 1e-300);
        double tol = 64 * eps * sqrt((double)(ref->len[i] > 1 ? ref->len[i] : 1)) + 2 * eps;
        if (isnan(err))
            err = INFINITY;
        worst = err > worst ? err : worst;
        if (err / tol > worst_ratio) {
            worst_ratio = err / tol;
            bad_row = i;
        }
    }
    r->max_rel_err = worst;
    if (worst_ratio > 1) {
        r->status = "wrong";
        snprintf(r->error, sizeof(r->error), "row %d: y = %.9g, reference %.17g (relative error "
                 "%.3g, tolerance %.3g)", bad_row, (double)y[bad_row], ref->y[bad_row],
                 worst, 64 * eps * sqrt((double)(ref->len[bad_row] > 1 ? ref->len[bad_row] : 1)));
    }
}

template <class T>
static void bench_kernel(struct seer_gpu_result *r, const struct seer_dev_matrix *m,
                         const struct seer_host_ref *ref, int kernel,
                         const struct timing_options *to)
{
    prep_bench<T> b;
    struct seer_gpu_error err = { 0, "" };
    struct timing_options po = TIMING_OPTIONS_INIT;
    struct timing_stats st;
    po.warmup = 1;
    po.samples = 3;
    b.proto.kernel = kernel;
    b.proto.m = m;
    b.proto.v = (const T *)(sizeof(T) == 4 ? (const void *)m->vf : (const void *)m->vd);
    b.proto.x = (const T *)(sizeof(T) == 4 ? (const void *)m->xf : (const void *)m->xd);
    b.proto.y = (T *)(sizeof(T) == 4 ? (void *)m->yf : (void *)m->yd);
    b.proto.h = (cusparseHandle_t)m->sparse;
    b.err = &err;
    int e = timing_measure_host(&st, &po, prep_fn<T>, &b);
    prep<T> *p = b.made.empty() ? nullptr : b.made.back();
    for (size_t i = 0; i + 1 < b.made.size(); i++)
        prep_free(b.made[i]);
    if (e == -1) {
        r->status = err.unsupported ? "unsupported" : "fault";
        snprintf(r->error, sizeof(r->error), "%s", err.msg);
    } else if (e) {
        cuda_fault(r, e, "preprocessing");
    } else {
        r->preprocess_ns = st.median_ns;
        if ((e = launch_one(p, 0)) || (e = cudaDeviceSynchronize()))
            cuda_fault(r, e, "first run");
        else
            check(r, p, ref);
    }
    if (!strcmp(r->status, "ok")) {
        e = timing_measure_launch(&st, to, launch_fn<T>, p, NULL);
        if (e) {
            cuda_fault(r, e, "timing");
        } else {
            r->iter_ns = st.median_ns;
            r->iter_min_ns = st.min_ns;
            r->iter_mad_ns = st.mad_ns;
            r->samples = st.samples;
            r->launches_per_sample = st.launches_per_sample;
        }
    }
    if (p && !r->sticky)
        prep_free(p);
}

void seer_gpu_bench(struct seer_gpu_result *r, const struct seer_dev_matrix *m,
                    const struct seer_host_ref *ref, int kernel, int dbl,
                    const struct timing_options *to)
{
    memset(r, 0, sizeof(*r));
    r->status = "ok";
    if (dbl)
        bench_kernel<double>(r, m, ref, kernel, to);
    else
        bench_kernel<float>(r, m, ref, kernel, to);
}
