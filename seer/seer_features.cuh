/* The feature kernel of Seer: longest, shortest and mean row length and their population
 * variance, from a CSR row_ptr array on the GPU, in one launch and no copy: each block reduces
 * its rows (16-byte loads of row_ptr where aligned, warp shuffles, shared memory) into one
 * partial, the last block to finish (thread fence + ticket) reduces the partials, writes the
 * result into mapped pinned host memory and resets the ticket for the next call. Sums are exact
 * 64-bit integers; the variance is formed on the host in 128-bit arithmetic (rows * sumsq -
 * sum^2, no cancellation). Header-only CUDA, shared by lscat's benchmark (seer/gpu_main.cu) and
 * the runtime library (seer_select.cu), so the cost the benchmark measures is the cost paid. */
#ifndef SEER_FEATURES_CUH
#define SEER_FEATURES_CUH

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

#define SEER_FEATURES_THREADS 256
#define SEER_FEATURES_MAX_BLOCKS 1024
#define SEER_FEATURES_BLOCKS_PER_SM 4

struct seer_feature_acc {
    unsigned long long sum, sumsq;
    int max_len, min_len;
};

/* Device scratch: one partial per block and the ticket (0 between calls). */
struct seer_features_scratch {
    struct seer_feature_acc part[SEER_FEATURES_MAX_BLOCKS];
    unsigned int ticket;
};

/* The result, in mapped pinned host memory; seq is written last (the call's number). */
struct seer_features_result {
    struct seer_feature_acc acc;
    unsigned int seq;
};

/* What one device needs to gather: scratch, the mapped result, the grid size. Not shared by
 * concurrent calls (the scratch and the result are one per context). */
struct seer_features_ctx {
    struct seer_features_scratch *d_scratch;
    struct seer_features_result *h_result, *d_result; /* host and device views of one buffer */
    int max_blocks;                                   /* blocks per SM x SMs, capped */
    unsigned int seq;
};

static __device__ __forceinline__ void seer_features_add(struct seer_feature_acc *a, int len)
{
    a->sum += (unsigned long long)len;
    a->sumsq += (unsigned long long)len * (unsigned long long)len;
    a->max_len = len > a->max_len ? len : a->max_len;
    a->min_len = len < a->min_len ? len : a->min_len;
}

/* The 4 rows whose row_ptr entries are v.x .. v.w, next. */
static __device__ __forceinline__ void seer_features_add4(struct seer_feature_acc *a, int4 v,
                                                          int next)
{
    seer_features_add(a, v.y - v.x);
    seer_features_add(a, v.z - v.y);
    seer_features_add(a, v.w - v.z);
    seer_features_add(a, next - v.w);
}

static __device__ __forceinline__ void seer_features_merge(struct seer_feature_acc *a,
                                                           const struct seer_feature_acc *b)
{
    a->sum += b->sum;
    a->sumsq += b->sumsq;
    a->max_len = b->max_len > a->max_len ? b->max_len : a->max_len;
    a->min_len = b->min_len < a->min_len ? b->min_len : a->min_len;
}

/* Reduce every thread's a over the block; the block's total lands in thread 0's a. */
static __device__ void seer_features_block_reduce(struct seer_feature_acc *a)
{
    __shared__ struct seer_feature_acc warp_acc[SEER_FEATURES_THREADS / 32];
    for (int off = 16; off > 0; off >>= 1) {
        struct seer_feature_acc o;
        o.sum = __shfl_down_sync(0xffffffffu, a->sum, off);
        o.sumsq = __shfl_down_sync(0xffffffffu, a->sumsq, off);
        o.max_len = __shfl_down_sync(0xffffffffu, a->max_len, off);
        o.min_len = __shfl_down_sync(0xffffffffu, a->min_len, off);
        seer_features_merge(a, &o);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_acc[warp] = *a;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int w = 1; w < SEER_FEATURES_THREADS / 32; w++)
            seer_features_merge(a, &warp_acc[w]);
    __syncthreads(); /* warp_acc may be reused by a second reduction */
}

/* Rows [0, rows): groups of 4 rows read row_ptr as one int4 (when row_ptr is 16-byte aligned)
 * plus the next group's first entry; the rows after the last group are read one by one. */
static __global__ void __launch_bounds__(SEER_FEATURES_THREADS)
seer_features_fast_kernel(const int *__restrict__ row_ptr, int rows,
                          struct seer_features_scratch *sc, struct seer_features_result *out,
                          unsigned int seq)
{
    struct seer_feature_acc a = { 0, 0, 0, INT_MAX };
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    long long groups = ((uintptr_t)row_ptr & 15) == 0 ? rows / 4 : 0;
    const int4 *rp4 = (const int4 *)row_ptr;
    long long g = tid;
    for (; g + stride < groups; g += 2 * stride) { /* two loads in flight per thread */
        int4 v = __ldg(rp4 + g), u = __ldg(rp4 + g + stride);
        int vn = __ldg(row_ptr + 4 * g + 4), un = __ldg(row_ptr + 4 * (g + stride) + 4);
        seer_features_add4(&a, v, vn);
        seer_features_add4(&a, u, un);
    }
    if (g < groups)
        seer_features_add4(&a, __ldg(rp4 + g), __ldg(row_ptr + 4 * g + 4));
    for (long long r = 4 * groups + tid; r < rows; r += stride)
        seer_features_add(&a, __ldg(row_ptr + r + 1) - __ldg(row_ptr + r));
    seer_features_block_reduce(&a);
    __shared__ int last;
    if (threadIdx.x == 0) {
        volatile struct seer_feature_acc *p = &sc->part[blockIdx.x];
        p->sum = a.sum;
        p->sumsq = a.sumsq;
        p->max_len = a.max_len;
        p->min_len = a.min_len;
        __threadfence();
        last = atomicAdd(&sc->ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    struct seer_feature_acc t = { 0, 0, 0, INT_MAX };
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
        volatile struct seer_feature_acc *p = &sc->part[b];
        struct seer_feature_acc o = { p->sum, p->sumsq, p->max_len, p->min_len };
        seer_features_merge(&t, &o);
    }
    seer_features_block_reduce(&t);
    if (threadIdx.x == 0) {
        volatile struct seer_features_result *o = out;
        o->acc.sum = t.sum;
        o->acc.sumsq = t.sumsq;
        o->acc.max_len = t.max_len;
        o->acc.min_len = t.min_len;
        __threadfence_system();
        o->seq = seq;
        sc->ticket = 0;
    }
}

/* Set up *c for the current device: scratch (ticket 0), the mapped result, the grid size.
 * Returns a cudaError_t (0 = success); on failure *c holds nothing to release. */
static inline int seer_features_ctx_init(struct seer_features_ctx *c)
{
    int dev = 0, sms = 0;
    cudaError_t e;
    c->d_scratch = 0;
    c->h_result = c->d_result = 0;
    c->seq = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
        return (int)e;
    c->max_blocks = sms * SEER_FEATURES_BLOCKS_PER_SM;
    c->max_blocks = c->max_blocks < 1 ? 1 : c->max_blocks;
    c->max_blocks = c->max_blocks > SEER_FEATURES_MAX_BLOCKS ? SEER_FEATURES_MAX_BLOCKS : c->max_blocks;
    if ((e = cudaMalloc((void **)&c->d_scratch, sizeof(*c->d_scratch))) != cudaSuccess)
        return (int)e;
    if ((e = cudaMemset(c->d_scratch, 0, sizeof(*c->d_scratch))) == cudaSuccess &&
        (e = cudaHostAlloc((void **)&c->h_result, sizeof(*c->h_result), cudaHostAllocMapped)) ==
            cudaSuccess) {
        c->h_result->seq = 0;
        if ((e = cudaHostGetDevicePointer((void **)&c->d_result, c->h_result, 0)) == cudaSuccess)
            return 0;
        cudaFreeHost(c->h_result);
    }
    cudaFree(c->d_scratch);
    c->d_scratch = 0;
    c->h_result = 0;
    return (int)e;
}

static inline void seer_features_ctx_release(struct seer_features_ctx *c)
{
    if (c->h_result)
        cudaFreeHost(c->h_result);
    if (c->d_scratch)
        cudaFree(c->d_scratch);
    c->d_scratch = 0;
    c->h_result = c->d_result = 0;
}

/* Blocks for `rows`: enough for one group of 4 rows per thread, at most c->max_blocks. */
static inline int seer_features_blocks(const struct seer_features_ctx *c, int rows)
{
    long long want = ((long long)rows / 4 + SEER_FEATURES_THREADS - 1) / SEER_FEATURES_THREADS;
    return want < 1 ? 1 : want > c->max_blocks ? c->max_blocks : (int)want;
}

/* Launch the kernel on `stream`; the result is complete when c->h_result->seq == *seq_out. */
static inline int seer_features_launch(unsigned int *seq_out, struct seer_features_ctx *c,
                                       const int *d_row_ptr, int rows, cudaStream_t stream)
{
    *seq_out = ++c->seq ? c->seq : ++c->seq; /* never 0, the value before the first call */
    seer_features_fast_kernel<<<seer_features_blocks(c, rows), SEER_FEATURES_THREADS, 0, stream>>>(
        d_row_ptr, rows < 0 ? 0 : rows, c->d_scratch, c->d_result, *seq_out);
    return (int)cudaGetLastError();
}

/* out[0] = longest row, out[1] = shortest, out[2] = mean, out[3] = population variance, from
 * the finished result of call `seq`; cudaErrorUnknown when the result is not that call's. */
static inline int seer_features_finish(double out[4], const struct seer_features_ctx *c, int rows,
                                       unsigned int seq)
{
    volatile struct seer_features_result *r = c->h_result;
    if (r->seq != seq)
        return (int)cudaErrorUnknown;
    struct seer_feature_acc h = { r->acc.sum, r->acc.sumsq, r->acc.max_len, r->acc.min_len };
    unsigned __int128 n = (unsigned __int128)(rows > 0 ? rows : 1);
    unsigned __int128 num = n * h.sumsq - (unsigned __int128)h.sum * h.sum;
    out[0] = rows > 0 ? h.max_len : 0;
    out[1] = rows > 0 ? h.min_len : 0;
    out[2] = (double)h.sum / (double)n;
    out[3] = (double)((long double)num / ((long double)n * (long double)n));
    return 0;
}

/* Gather the four features (see seer_features_finish) of a CSR matrix whose row_ptr (rows + 1
 * ints) is on the GPU: one launch on `stream`, then a stream synchronisation. Returns a
 * cudaError_t (0 = success). */
static inline int seer_features_gather(double out[4], struct seer_features_ctx *c,
                                       const int *d_row_ptr, int rows, cudaStream_t stream)
{
    unsigned int seq;
    int e = seer_features_launch(&seq, c, d_row_ptr, rows, stream);
    if (e == 0)
        e = (int)cudaStreamSynchronize(stream);
    return e ? e : seer_features_finish(out, c, rows, seq);
}

/* Wait until call `seq` (launched on `stream`) has written its result, spinning on the mapped
 * result's seq: no CUDA call at all when it is already there (the asynchronous path's usual
 * case). The stream is queried every 4096 spins so that a failed kernel ends the wait (its
 * error), and so does a stream that went idle without the result (cudaErrorUnknown). */
static inline int seer_features_wait(const struct seer_features_ctx *c, unsigned int seq,
                                     cudaStream_t stream)
{
    volatile unsigned int *done = &c->h_result->seq;
    for (unsigned long spins = 1; *done != seq; spins++) {
        if (spins % 4096 == 0) {
            cudaError_t q = cudaStreamQuery(stream);
            if (q == cudaSuccess && *done != seq)
                return (int)cudaErrorUnknown;
            if (q != cudaSuccess && q != cudaErrorNotReady)
                return (int)q;
        }
    }
    return 0;
}

/* The same as seer_features_gather, waiting by spinning (seer_features_wait) instead of
 * synchronising the stream. */
static inline int seer_features_gather_spin(double out[4], struct seer_features_ctx *c,
                                            const int *d_row_ptr, int rows, cudaStream_t stream)
{
    unsigned int seq;
    int e = seer_features_launch(&seq, c, d_row_ptr, rows, stream);
    if (e == 0)
        e = seer_features_wait(c, seq, stream);
    return e ? e : seer_features_finish(out, c, rows, seq);
}

#endif
