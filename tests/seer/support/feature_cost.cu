/* What gathering Seer's row-length features costs on the GPU: the path shipped now
 * (seer_features_gather: one launch, block partials, the last block writes mapped pinned memory;
 * waiting by a stream synchronisation or by spinning on the result) against session 6's path
 * (accumulator copied in, one atomic per warp, pageable copy back), session 6's one-launch
 * variant (atomics, last block writes mapped memory), and an empty launch + synchronisation (the
 * floor). At 1 SpMV iteration the gathering must cost about 5-10 us to ever pay (docs/seer.md).
 * Usage: seer_feature_cost [ROWS...]: one line per rows x variant, exit 1 when a variant's
 * features differ from the CPU's; seer_feature_cost --check: the shipped path against the CPU on
 * edge cases, called repeatedly and on an unaligned row_ptr, exit 1 on a difference. Exit 2
 * without a CUDA device. */
#include "seer/seer_features.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

/* ---- session 6's paths, kept for comparison */

static __global__ void before_kernel(const int *row_ptr, int rows, struct seer_feature_acc *acc)
{
    unsigned long long sum = 0, sumsq = 0;
    int mx = 0, mn = INT_MAX;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows;
         r += (long long)gridDim.x * blockDim.x) {
        int len = row_ptr[r + 1] - row_ptr[r];
        sum += (unsigned long long)len;
        sumsq += (unsigned long long)len * (unsigned long long)len;
        mx = len > mx ? len : mx;
        mn = len < mn ? len : mn;
    }
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, off);
        sumsq += __shfl_down_sync(0xffffffffu, sumsq, off);
        int omx = __shfl_down_sync(0xffffffffu, mx, off), omn = __shfl_down_sync(0xffffffffu, mn, off);
        mx = omx > mx ? omx : mx;
        mn = omn < mn ? omn : mn;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&acc->sum, sum);
        atomicAdd(&acc->sumsq, sumsq);
        atomicMax(&acc->max_len, mx);
        atomicMin(&acc->min_len, mn);
    }
}

/* Session 6's shipped gathering: copy in, kernel, pageable copy back, synchronisation. */
static cudaError_t before_gather(struct seer_feature_acc *h, const int *rp, int rows,
                                 struct seer_feature_acc *d_acc, cudaStream_t s)
{
    *h = (struct seer_feature_acc){ 0, 0, 0, INT_MAX };
    cudaError_t e = cudaMemcpyAsync(d_acc, h, sizeof(*h), cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess)
        return e;
    int blocks = std::min(std::max((rows + 255) / 256, 1), 1024);
    before_kernel<<<blocks, 256, 0, s>>>(rp, rows, d_acc);
    if ((e = cudaGetLastError()) != cudaSuccess ||
        (e = cudaMemcpyAsync(h, d_acc, sizeof(*h), cudaMemcpyDeviceToHost, s)) != cudaSuccess)
        return e;
    return cudaStreamSynchronize(s);
}

struct acc_once {
    struct seer_feature_acc a;
    unsigned int ticket;
};

/* The shipped kernel's pass, then the last block to finish copies the sums to out and resets
 * acc for the next call (so no host-to-device copy is needed). */
static __global__ void features_once(const int *row_ptr, int rows, struct acc_once *acc,
                                     struct seer_feature_acc *out)
{
    unsigned long long sum = 0, sumsq = 0;
    int mx = 0, mn = INT_MAX;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows;
         r += (long long)gridDim.x * blockDim.x) {
        int len = row_ptr[r + 1] - row_ptr[r];
        sum += (unsigned long long)len;
        sumsq += (unsigned long long)len * (unsigned long long)len;
        mx = len > mx ? len : mx;
        mn = len < mn ? len : mn;
    }
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, off);
        sumsq += __shfl_down_sync(0xffffffffu, sumsq, off);
        int omx = __shfl_down_sync(0xffffffffu, mx, off), omn = __shfl_down_sync(0xffffffffu, mn, off);
        mx = omx > mx ? omx : mx;
        mn = omn < mn ? omn : mn;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&acc->a.sum, sum);
        atomicAdd(&acc->a.sumsq, sumsq);
        atomicMax(&acc->a.max_len, mx);
        atomicMin(&acc->a.min_len, mn);
        __threadfence();
    }
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(&acc->ticket, 1u) == gridDim.x - 1) {
        __threadfence();
        out->sum = atomicAdd(&acc->a.sum, 0ull);
        out->sumsq = atomicAdd(&acc->a.sumsq, 0ull);
        out->max_len = atomicAdd(&acc->a.max_len, 0);
        out->min_len = atomicAdd(&acc->a.min_len, 0);
        acc->a.sum = acc->a.sumsq = 0;
        acc->a.max_len = 0;
        acc->a.min_len = INT_MAX;
        acc->ticket = 0;
        __threadfence_system();
    }
}

static __global__ void empty_kernel() {}

static double now_us()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

enum variant { NOW_SYNC, NOW_SPIN, BEFORE, ONCE_MAPPED, EMPTY, VARIANTS };
static const char *const NAME[VARIANTS] = { "now: block partials, mapped, stream sync",
                                            "now: block partials, mapped, spin on flag",
                                            "before (copy in, kernel, pageable copy back)",
                                            "before's kernel, one launch, mapped result",
                                            "empty launch + sync (floor)" };

struct ctx {
    const int *rp;
    int rows, blocks;
    struct seer_features_ctx feat;
    struct seer_feature_acc *d_acc, *h_mapped, *d_mapped;
    struct acc_once *d_once;
    cudaStream_t s;
};

/* One gathering by variant v; the sums it got in *got. */
static cudaError_t gather(struct ctx *c, int v, struct seer_feature_acc *got)
{
    double f[4] = { 0, 0, 0, 0 };
    cudaError_t e = cudaSuccess;
    switch (v) {
    case NOW_SYNC:
    case NOW_SPIN:
        e = (cudaError_t)(v == NOW_SYNC ? seer_features_gather(f, &c->feat, c->rp, c->rows, c->s)
                                        : seer_features_gather_spin(f, &c->feat, c->rp, c->rows, c->s));
        { /* the exact sums the kernel wrote (f holds the features formed from them) */
            volatile struct seer_features_result *r = c->feat.h_result;
            got->sum = r->acc.sum;
            got->sumsq = r->acc.sumsq;
            got->max_len = r->acc.max_len;
            got->min_len = c->rows ? r->acc.min_len : 0;
        }
        if (e == cudaSuccess && (f[0] != got->max_len || f[1] != got->min_len))
            e = cudaErrorUnknown;
        return e;
    case BEFORE:
        e = before_gather(got, c->rp, c->rows, c->d_acc, c->s);
        if (c->rows == 0)
            got->min_len = 0;
        return e;
    case ONCE_MAPPED:
        features_once<<<c->blocks, 256, 0, c->s>>>(c->rp, c->rows, c->d_once, c->d_mapped);
        e = cudaStreamSynchronize(c->s);
        {
            volatile struct seer_feature_acc *m = c->h_mapped; /* written by the GPU */
            got->sum = m->sum;
            got->sumsq = m->sumsq;
            got->max_len = m->max_len;
            got->min_len = c->rows ? m->min_len : 0;
        }
        return e;
    default:
        empty_kernel<<<1, 32, 0, c->s>>>();
        e = cudaStreamSynchronize(c->s);
        *got = (struct seer_feature_acc){ 0, 0, 0, 0 };
        return e;
    }
}

static struct seer_feature_acc cpu_features(const std::vector<int> &rp)
{
    struct seer_feature_acc a = { 0, 0, 0, INT_MAX };
    for (size_t r = 0; r + 1 < rp.size(); r++) {
        long long len = rp[r + 1] - rp[r];
        a.sum += (unsigned long long)len;
        a.sumsq += (unsigned long long)(len * len);
        a.max_len = std::max(a.max_len, (int)len);
        a.min_len = std::min(a.min_len, (int)len);
    }
    if (rp.size() < 2)
        a.min_len = 0;
    return a;
}

static int same(const struct seer_feature_acc *a, const struct seer_feature_acc *b)
{
    return a->sum == b->sum && a->sumsq == b->sumsq && a->max_len == b->max_len &&
           a->min_len == b->min_len;
}

static int *upload(const std::vector<int> &rp, size_t offset)
{
    int *d = nullptr;
    if (cudaMalloc(&d, (rp.size() + offset) * sizeof(int)) != cudaSuccess ||
        cudaMemcpy(d + offset, rp.data(), rp.size() * sizeof(int), cudaMemcpyHostToDevice) !=
            cudaSuccess)
        return nullptr;
    return d;
}

/* Times every variant on a matrix of `rows` rows of lengths i % 7 (host clock, 5 warm-ups,
 * median and least of 51); returns 1 when a variant's features differ from the CPU's. */
static int measure(struct ctx *c, int rows)
{
    std::vector<int> rp((size_t)rows + 1);
    rp[0] = 0;
    for (int i = 0; i < rows; i++)
        rp[(size_t)i + 1] = rp[(size_t)i] + i % 7;
    int *d_rp = upload(rp, 0), bad = 0;
    if (!d_rp)
        return 1;
    c->rp = d_rp;
    c->rows = rows;
    c->blocks = std::min(std::max((rows + 255) / 256, 1), 1024);
    struct seer_feature_acc ref = cpu_features(rp), got;
    for (int v = 0; v < VARIANTS; v++) {
        std::vector<double> t;
        for (int i = 0; i < 56; i++) {
            double t0 = now_us();
            cudaError_t e = gather(c, v, &got);
            double t1 = now_us();
            if (e != cudaSuccess) {
                printf("rows %d: %s: %s\n", rows, NAME[v], cudaGetErrorString(e));
                return 1;
            }
            if (i >= 5)
                t.push_back(t1 - t0);
        }
        std::sort(t.begin(), t.end());
        int ok = v == EMPTY || same(&got, &ref);
        bad |= !ok;
        printf("rows %9d  %-46s median %7.2f us  least %7.2f us%s\n", rows, NAME[v],
               t[t.size() / 2], t[0], ok ? "" : "  FEATURES DIFFER");
    }
    cudaFree(d_rp);
    return bad;
}

/* Row lengths of the edge cases: kind 0 = i % 7, 1 = all empty, 2 = one huge row among empty
 * ones, 3 = 90% empty, 4 = all of one length. */
static std::vector<int> edge_rows(int rows, int kind)
{
    std::vector<int> rp((size_t)rows + 1, 0);
    for (int i = 0; i < rows; i++) {
        int len = kind == 0 ? i % 7 : kind == 1 ? 0 : kind == 2 ? (i == rows / 2 ? 50000000 : 0)
                : kind == 3 ? (i % 10 == 3 ? 1 + i % 13 : 0) : 3;
        rp[(size_t)i + 1] = rp[(size_t)i] + len;
    }
    return rp;
}

/* The shipped path against the CPU: rows 0 to 4,000,000 of every kind, each called 3 times
 * with the sync and 2 with the spin wait, on an aligned and an unaligned row_ptr. */
static int check(struct ctx *c)
{
    int sizes[] = { 0, 1, 2, 3, 4, 5, 7, 31, 33, 255, 1023, 1024, 1025, 4097, 65537,
                    1000003, 4000000 }, bad = 0, calls = 0;
    for (int rows : sizes)
        for (int kind = 0; kind < 5; kind++)
            for (size_t off = 0; off < 2; off++) {
                std::vector<int> rp = edge_rows(rows, kind);
                struct seer_feature_acc ref = cpu_features(rp), got;
                int *d = upload(rp, off);
                if (!d)
                    return 1;
                c->rp = d + off;
                c->rows = rows;
                for (int i = 0; i < 5; i++, calls++) {
                    cudaError_t e = gather(c, i < 3 ? NOW_SYNC : NOW_SPIN, &got);
                    if (e != cudaSuccess || !same(&got, &ref)) {
                        printf("FAIL rows %d kind %d offset %zu call %d: %s: sum %llu/%llu sumsq "
                               "%llu/%llu max %d/%d min %d/%d\n", rows, kind, off, i,
                               cudaGetErrorString(e), got.sum, ref.sum, got.sumsq, ref.sumsq,
                               got.max_len, ref.max_len, got.min_len, ref.min_len);
                        bad = 1;
                    }
                }
                cudaFree(d);
            }
    printf("%s: %d calls on %zu sizes x 5 kinds x 2 alignments\n",
           bad ? "features: FAILED" : "features: all equal the CPU", calls,
           sizeof(sizes) / sizeof(sizes[0]));
    return bad;
}

int main(int argc, char **argv)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("no CUDA device\n");
        return 2;
    }
    struct ctx c = {};
    struct acc_once init = { { 0, 0, 0, INT_MAX }, 0 };
    if (seer_features_ctx_init(&c.feat) != 0) {
        printf("cannot set up the feature context\n");
        return 1;
    }
    cudaStreamCreate(&c.s);
    cudaMalloc(&c.d_acc, sizeof(*c.d_acc));
    cudaMalloc(&c.d_once, sizeof(*c.d_once));
    cudaMemcpy(c.d_once, &init, sizeof(init), cudaMemcpyHostToDevice);
    cudaHostAlloc(&c.h_mapped, sizeof(*c.h_mapped), cudaHostAllocMapped);
    cudaHostGetDevicePointer((void **)&c.d_mapped, c.h_mapped, 0);
    printf("# feature grid: at most %d blocks of %d threads\n", c.feat.max_blocks,
           SEER_FEATURES_THREADS);
    int bad = 0, sizes[] = { 3, 100000, 1000000, 4000000 };
    if (argc > 1 && !strcmp(argv[1], "--check"))
        bad = check(&c);
    else if (argc > 1)
        for (int i = 1; i < argc; i++)
            bad |= measure(&c, atoi(argv[i]));
    else
        for (int r : sizes)
            bad |= measure(&c, r);
    seer_features_ctx_release(&c.feat);
    return bad;
}
