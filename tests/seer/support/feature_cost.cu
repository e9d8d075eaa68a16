/* What gathering Seer's row-length features costs on the GPU, and what it could cost: the
 * shipped path (seer_features_gather: accumulator copied in, the kernel, the result copied back
 * into pageable memory, a synchronisation) against one launch whose last block hands the result
 * out and resets the accumulator (no copy in), with the result copied into pinned memory or
 * written straight into mapped pinned memory, and an empty launch + synchronisation (the floor).
 * At 1 SpMV iteration the gathering must cost about 5-10 us to ever pay (docs/seer.md).
 * Usage: seer_feature_cost [ROWS...]; prints one line per rows x variant and exits 1 when a
 * variant's features differ from the shipped path's, 2 without a CUDA device. */
#include "seer/seer_features.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

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

enum variant { SHIPPED, ONCE_PINNED_COPY, ONCE_MAPPED, EMPTY, VARIANTS };
static const char *const NAME[VARIANTS] = { "shipped (copy in, kernel, pageable copy back)",
                                            "one launch, pinned copy back",
                                            "one launch, mapped pinned result",
                                            "empty launch + sync (floor)" };

struct ctx {
    const int *rp;
    int rows, blocks;
    struct seer_feature_acc *d_acc, *d_out, *h_pinned, *h_mapped, *d_mapped;
    struct acc_once *d_once;
    cudaStream_t s;
};

/* One gathering by variant v; the sums it got in *got. */
static cudaError_t gather(const struct ctx *c, int v, struct seer_feature_acc *got)
{
    double f[4] = { 0, 0, 0, 0 };
    cudaError_t e = cudaSuccess;
    switch (v) {
    case SHIPPED:
        e = (cudaError_t)seer_features_gather(f, c->rp, c->rows, c->d_acc, c->s);
        got->max_len = (int)f[0];
        got->min_len = (int)f[1];
        got->sum = (unsigned long long)(f[2] * (c->rows > 0 ? c->rows : 1) + 0.5);
        got->sumsq = 0;
        return e;
    case ONCE_PINNED_COPY:
        features_once<<<c->blocks, 256, 0, c->s>>>(c->rp, c->rows, c->d_once, c->d_out);
        if ((e = cudaMemcpyAsync(c->h_pinned, c->d_out, sizeof(*c->d_out), cudaMemcpyDeviceToHost,
                                 c->s)) == cudaSuccess)
            e = cudaStreamSynchronize(c->s);
        *got = *c->h_pinned;
        got->sumsq = 0;
        return e;
    case ONCE_MAPPED:
        features_once<<<c->blocks, 256, 0, c->s>>>(c->rp, c->rows, c->d_once, c->d_mapped);
        e = cudaStreamSynchronize(c->s);
        {
            volatile struct seer_feature_acc *m = c->h_mapped; /* written by the GPU */
            got->sum = m->sum;
            got->max_len = m->max_len;
            got->min_len = m->min_len;
            got->sumsq = 0;
        }
        return e;
    default:
        empty_kernel<<<1, 32, 0, c->s>>>();
        e = cudaStreamSynchronize(c->s);
        *got = (struct seer_feature_acc){ 0, 0, 0, 0 };
        return e;
    }
}

static int same(const struct seer_feature_acc *a, const struct seer_feature_acc *b)
{
    return a->sum == b->sum && a->max_len == b->max_len && a->min_len == b->min_len;
}

/* Times every variant on a matrix of `rows` rows of lengths i % 7 (host clock, 5 warm-ups,
 * median and least of 51); returns 1 when a variant's features differ from the shipped path's. */
static int measure(struct ctx *c, int rows)
{
    std::vector<int> rp((size_t)rows + 1);
    rp[0] = 0;
    for (int i = 0; i < rows; i++)
        rp[(size_t)i + 1] = rp[(size_t)i] + i % 7;
    int *d_rp = nullptr, bad = 0;
    if (cudaMalloc(&d_rp, rp.size() * sizeof(int)) != cudaSuccess ||
        cudaMemcpy(d_rp, rp.data(), rp.size() * sizeof(int), cudaMemcpyHostToDevice) != cudaSuccess)
        return 1;
    c->rp = d_rp;
    c->rows = rows;
    c->blocks = std::min(std::max((rows + 255) / 256, 1), 1024);
    struct seer_feature_acc ref, got;
    gather(c, SHIPPED, &ref);
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
        printf("rows %9d  %-48s median %7.2f us  least %7.2f us%s\n", rows, NAME[v],
               t[t.size() / 2], t[0], ok ? "" : "  FEATURES DIFFER");
    }
    cudaFree(d_rp);
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
    cudaStreamCreate(&c.s);
    cudaMalloc(&c.d_acc, sizeof(*c.d_acc));
    cudaMalloc(&c.d_out, sizeof(*c.d_out));
    cudaMalloc(&c.d_once, sizeof(*c.d_once));
    cudaMemcpy(c.d_once, &init, sizeof(init), cudaMemcpyHostToDevice);
    cudaHostAlloc(&c.h_pinned, sizeof(*c.h_pinned), cudaHostAllocDefault);
    cudaHostAlloc(&c.h_mapped, sizeof(*c.h_mapped), cudaHostAllocMapped);
    cudaHostGetDevicePointer((void **)&c.d_mapped, c.h_mapped, 0);
    int bad = 0, sizes[] = { 3, 100000, 1000000, 4000000 };
    if (argc > 1)
        for (int i = 1; i < argc; i++)
            bad |= measure(&c, atoi(argv[i]));
    else
        for (int r : sizes)
            bad |= measure(&c, r);
    return bad;
}
