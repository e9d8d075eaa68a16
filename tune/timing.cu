/* The timing core on the GPU: warm-up, launches batched so each sample lasts at least
 * min_sample_ms, CUDA-event timing with synchronisation before the clock is read, optional L2
 * flush, fixed or adaptive sample counts. Statistics come from tune/stats.c. */
#include "tune/timing.h"
#include "tune/nvml_dl.h"

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

/* NVML, loaded once per process; one handle for the current device (harnesses use one). */
static struct nvml_dl g_nvml;
static int g_nvml_state; /* 0 not tried, 1 loaded, -1 unavailable */
static int g_nvml_dev = -1;
static nvml_dl_device g_nvml_handle;

static void device_uuid(char out[48], int dev)
{
    cudaDeviceProp p;
    out[0] = 0;
    if (cudaGetDeviceProperties(&p, dev) == cudaSuccess)
        nvml_dl_format_uuid(out, (const unsigned char *)p.uuid.bytes);
}

static nvml_dl_device nvml_handle(void)
{
    int dev = 0;
    if (g_nvml_state == 0)
        g_nvml_state = nvml_dl_load(&g_nvml, NULL) == NVML_DL_SUCCESS ? 1 : -1;
    if (g_nvml_state < 0 || cudaGetDevice(&dev) != cudaSuccess)
        return NULL;
    if (dev != g_nvml_dev) {
        char uuid[48];
        device_uuid(uuid, dev);
        g_nvml_handle = NULL;
        if (g_nvml.handle_by_uuid(uuid, &g_nvml_handle) != NVML_DL_SUCCESS)
            g_nvml_handle = NULL;
        g_nvml_dev = dev;
    }
    return g_nvml_handle;
}

static int nvml_read(int kind, int type)
{
    nvml_dl_device h = nvml_handle();
    unsigned v = 0;
    if (!h)
        return -1;
    int rc = kind ? g_nvml.temperature(h, NVML_DL_TEMPERATURE_GPU, &v)
                  : g_nvml.clock_info(h, type, &v);
    return rc == NVML_DL_SUCCESS ? (int)v : -1;
}

static void gpu_state_before(struct timing_stats *out)
{
    const char *locked = getenv("LSCAT_CLOCKS_LOCKED");
    out->clocks_locked = locked && strcmp(locked, "1") == 0;
    out->sm_clock_mhz_before = nvml_read(0, NVML_DL_CLOCK_SM);
    out->temp_c_before = nvml_read(1, 0);
}

static void gpu_state_after(struct timing_stats *out)
{
    out->sm_clock_mhz_after = nvml_read(0, NVML_DL_CLOCK_SM);
    out->mem_clock_mhz = nvml_read(0, NVML_DL_CLOCK_MEM);
    out->temp_c_after = nvml_read(1, 0);
}

int timing_device_info_get(struct timing_device_info *out, int device)
{
    cudaDeviceProp p;
    int rc = 0, v = 0;
    memset(out, 0, sizeof(*out));
    out->device = device;
    CK(cudaGetDeviceProperties(&p, device));
    snprintf(out->name, sizeof(out->name), "%s", p.name);
    nvml_dl_format_uuid(out->uuid, (const unsigned char *)p.uuid.bytes);
    snprintf(out->cc, sizeof(out->cc), "%d.%d", p.major, p.minor);
    out->sm_count = p.multiProcessorCount;
    out->memory_bytes = (long long)p.totalGlobalMem;
    out->l2_bytes = p.l2CacheSize;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device) == cudaSuccess)
        out->max_sm_clock_mhz = v / 1000;
    cudaDriverGetVersion(&out->driver_cuda_version);
    cudaRuntimeGetVersion(&out->runtime_cuda_version);
    if (g_nvml_state == 0)
        g_nvml_state = nvml_dl_load(&g_nvml, NULL) == NVML_DL_SUCCESS ? 1 : -1;
    if (g_nvml_state > 0 && g_nvml.driver_version)
        g_nvml.driver_version(out->driver_version, sizeof(out->driver_version));
done:
    return rc;
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

/* The launch blocker (as nvbench does): a one-thread kernel that holds the stream until the
 * host has enqueued every launch of a sample, so the events time back-to-back GPU execution
 * and never the host's launch rate (tiny kernels would otherwise measure launch overhead).
 * It gives up after BLOCK_TIMEOUT_CYCLES so a full launch queue can never deadlock. */
#define BLOCK_TIMEOUT_CYCLES (200LL * 1000 * 1000) /* about 0.1 s */
#define MAX_LAUNCHES_PER_SAMPLE 500                /* well inside the pending-launch queue */
#define WARMUP_LONG_NS 1e6 /* a first warm-up run this long ends the warm-up */

__global__ void timing_blocker(volatile int *flag, long long timeout_cycles)
{
    long long start = clock64();
    while (*flag == 0 && clock64() - start < timeout_cycles) {
    }
}

/* One of two sample slots: its blocker flag and events. While the GPU runs one slot's launches
 * the host enqueues the other's behind its blocker, so the GPU never waits for the host. */
struct slot {
    volatile int *flag; /* pinned, mapped host memory; NULL = no blocker */
    cudaEvent_t a, b;
};

static void slot_release(struct slot *sl)
{
    if (sl->flag) {
        __sync_synchronize();
        *sl->flag = 1;
    }
}

/* Enqueue one sample: [blocker] event a, the runs, event b; then release the blocker. The runs
 * are `launches` calls of fn, or `reps` launches of a graph that holds launches / reps. */
static int sample_enqueue(struct slot *sl, timing_launch_fn fn, void *ctx, cudaStream_t s,
                          int launches, cudaGraphExec_t exec, int reps)
{
    int rc = 0;
    if (sl->flag) {
        *sl->flag = 0;
        __sync_synchronize();
        timing_blocker<<<1, 1, 0, s>>>(sl->flag, BLOCK_TIMEOUT_CYCLES);
        CK(cudaGetLastError());
    }
    CK(cudaEventRecord(sl->a, s));
    if (exec) {
        for (int i = 0; i < reps; i++)
            CK(cudaGraphLaunch(exec, s));
    } else {
        for (int i = 0; i < launches; i++) {
            rc = fn(ctx, (timing_stream_t)s);
            if (rc)
                goto done;
        }
    }
    CK(cudaEventRecord(sl->b, s));
done:
    slot_release(sl);
    return rc;
}

/* CUDA graphs: a sample of many short launches is a few launches of one graph that holds up to
 * GRAPH_MAX_NODES of them, captured from fn once per measurement. The host then enqueues a
 * sample in microseconds, so the GPU never waits for the host between samples (a ~2 us kernel
 * launched one by one costs the host 3-4 us per launch). Inside a graph, consecutive kernels
 * also start with less launch latency between them: a sample times the kernels back to back,
 * closer to their own execution time. The executable graph is kept and updated in place
 * (cudaGraphExecUpdate) for the next measurement when the topology allows. */
#define GRAPH_MAX_NODES 128

static cudaStream_t g_cap_stream; /* private capture stream (the legacy stream cannot capture) */
static int g_cap_device = -1;
static cudaGraphExec_t g_exec;
static int g_exec_nodes;

static void graph_release(void)
{
    if (g_exec)
        cudaGraphExecDestroy(g_exec);
    g_exec = NULL;
    g_exec_nodes = 0;
    if (g_cap_stream)
        cudaStreamDestroy(g_cap_stream);
    g_cap_stream = NULL;
    g_cap_device = -1;
}

/* Whether graphs are wanted: the option, then LSCAT_TIMING_GRAPH=0 (the user's override). */
static int graph_wanted(const struct timing_options *o)
{
    const char *e = getenv("LSCAT_TIMING_GRAPH");
    return !o->no_graph && !(e && strcmp(e, "0") == 0);
}

/* Capture `nodes` runs of fn into the kept executable graph, uploaded to stream s. Returns 0,
 * or -1 when fn cannot be captured (it synchronises, allocates, ...) or the graph cannot be
 * built: the caller then launches one by one. Errors of a failed capture are cleared. */
static int graph_build(timing_launch_fn fn, void *ctx, int nodes, cudaStream_t s)
{
    int dev = 0, rc = 0;
    cudaGraph_t g = NULL;
    if (cudaGetDevice(&dev) != cudaSuccess)
        return -1;
    if (g_cap_device != dev) {
        graph_release();
        if (cudaStreamCreateWithFlags(&g_cap_stream, cudaStreamNonBlocking) != cudaSuccess) {
            g_cap_stream = NULL;
            cudaGetLastError();
            return -1;
        }
        g_cap_device = dev;
    }
    if (cudaStreamBeginCapture(g_cap_stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    for (int i = 0; i < nodes && !rc; i++)
        rc = fn(ctx, (timing_stream_t)g_cap_stream);
    size_t count = 0;
    if (cudaStreamEndCapture(g_cap_stream, &g) != cudaSuccess || rc || !g ||
        cudaGraphGetNodes(g, NULL, &count) != cudaSuccess || count < (size_t)nodes ||
        count % (size_t)nodes != 0) {
        /* fewer nodes than runs: fn put its work on another stream than the one it was
         * given (e.g. the legacy stream), where capture does not see it; such a graph would
         * time nothing */
        if (g)
            cudaGraphDestroy(g);
        cudaGetLastError();
        return -1;
    }
    rc = -1;
    if (g_exec && g_exec_nodes == nodes) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(g_exec, g, &info) == cudaSuccess)
            rc = 0;
        cudaGetLastError();
    }
    if (rc) {
        if (g_exec)
            cudaGraphExecDestroy(g_exec);
        g_exec = NULL;
        g_exec_nodes = 0;
        if (cudaGraphInstantiate(&g_exec, g, 0) == cudaSuccess)
            g_exec_nodes = nodes, rc = 0;
        else
            g_exec = NULL, cudaGetLastError();
    }
    if (rc == 0 && cudaGraphUpload(g_exec, s) != cudaSuccess) {
        cudaGetLastError();
        rc = -1;
    }
    cudaGraphDestroy(g);
    return rc;
}

/* The two slots, created once per process and device: pinned allocations and events cost
 * about as much as a short sample, so they are not made per measurement. */
static struct slot g_slots[2];
static int g_slots_device = -1;
static void *g_flags;

static int slots_get(struct slot **out, int blocker)
{
    int rc = 0, dev = 0;
    CK(cudaGetDevice(&dev));
    if (g_slots_device != dev) { /* events belong to a device; pinned memory is portable */
        for (int k = 0; k < 2; k++) {
            CK(cudaEventCreate(&g_slots[k].a));
            CK(cudaEventCreate(&g_slots[k].b));
        }
        g_slots_device = dev;
    }
    if (!g_flags) {
        CK(cudaHostAlloc(&g_flags, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
        ((volatile int *)g_flags)[0] = ((volatile int *)g_flags)[1] = 1;
    }
    for (int k = 0; k < 2; k++)
        g_slots[k].flag = blocker ? (volatile int *)g_flags + k : NULL;
    *out = g_slots;
done:
    return rc;
}

void timing_release_process_state(void)
{
    graph_release(); /* before the harness's module goes: the graph refers to its kernels */
    if (g_slots_device >= 0) {
        int dev = -1;
        cudaGetDevice(&dev);
        for (int k = 0; k < 2 && dev == g_slots_device; k++) {
            cudaEventDestroy(g_slots[k].a);
            cudaEventDestroy(g_slots[k].b);
        }
        memset(g_slots, 0, sizeof(g_slots));
        g_slots_device = -1;
    }
    if (g_flags)
        cudaFreeHost(g_flags);
    g_flags = NULL;
    if (g_nvml_state > 0) {
        nvml_dl_unload(&g_nvml);
        g_nvml_handle = NULL;
        g_nvml_dev = -1;
    }
    g_nvml_state = 0;
}

/* Wait for a sample and return its per-launch time. */
static int sample_finish(double *ns_out, struct slot *sl, int launches)
{
    int rc = 0;
    float ms = 0;
    CK(cudaEventSynchronize(sl->b));
    CK(cudaGetLastError());
    CK(cudaEventElapsedTime(&ms, sl->a, sl->b));
    *ns_out = (double)ms * 1e6 / launches;
done:
    return rc;
}

/* Whether to enqueue another sample, given `done` finished ones and `inflight` unread. */
static int want_enqueue(const struct timing_options *o, const double *v, int done, int inflight,
                        int cap, double start_ns)
{
    int total = done + inflight;
    if (total >= cap)
        return 0;
    if (total < o->samples)
        return 1;
    if (o->target_rel_mad <= 0 || total >= o->max_samples)
        return 0;
    if (mono_ns() - start_ns > o->budget_s * 1e9)
        return 0;
    return timing_rel_mad(v, done) >= o->target_rel_mad;
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

/* A long kernel's samples within the per-configuration budget (LSCAT_TIMING_BUDGET_S, seconds;
 * unset or 0: none): `one_ns` is one launch's time (the calibration run, else the warm-up).
 * Planned from that measured time only; fixed sample counts only (adaptive mode has budget_s). */
static void budget_samples(struct timing_options *o, struct timing_stats *out, double one_ns)
{
    const char *e = getenv("LSCAT_TIMING_BUDGET_S");
    double b = e && *e ? atof(e) * 1e9 : 0;
    if (b <= 0 || one_ns <= 0 || o->target_rel_mad > 0 || one_ns * o->samples <= b)
        return;
    int k = (int)(b / one_ns);
    if (k < 1)
        k = 1;
    if (k < o->samples) {
        out->samples_planned = o->samples;
        o->samples = k;
    }
}

int timing_measure_launch(struct timing_stats *out, const struct timing_options *opts,
                          timing_launch_fn fn, void *ctx, timing_stream_t stream)
{
    struct timing_options o = TIMING_OPTIONS_INIT;
    if (opts)
        o = *opts;
    cudaStream_t s = (cudaStream_t)stream;
    struct slot *sl = NULL;
    void *flush = NULL;
    size_t flush_bytes = 0;
    int cap = o.max_samples > o.samples ? o.max_samples : o.samples;
    double *v = (double *)calloc((size_t)(cap > 0 ? cap : 1), sizeof(double));
    int rc = 0, n = 0, launches = 1, pending = -1, nodes = 0, reps = 0;
    cudaGraphExec_t exec = NULL;
    double one = 0, start, first = 0;
    memset(out, 0, sizeof(*out));
    gpu_state_before(out);
    if ((rc = slots_get(&sl, !o.no_launch_blocker)) != 0)
        goto done;
    /* Warm-up: the first run alone; the others only when it was short. A run that lasts a
     * sample by itself (>= WARMUP_LONG_NS or min_sample_ms) has paid the first-launch costs
     * (lazy module load, caches, clocks) in that run: repeating it would cost the sweep more
     * GPU time than the samples (real kernels of 0.1-1.4 s per launch exist). */
    for (int i = 0; i < o.warmup; i++) {
        double t0 = i == 0 ? mono_ns() : 0;
        if ((rc = fn(ctx, stream)) != 0)
            goto done;
        if (i == 0) {
            CK(cudaStreamSynchronize(s));
            double lng = o.min_sample_ms * 1e6;
            first = mono_ns() - t0;
            if (first >= (lng > WARMUP_LONG_NS ? lng : WARMUP_LONG_NS))
                break;
        }
    }
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    /* Calibrate: how many launches make a sample of at least min_sample_ms. */
    if (!o.l2_flush) {
        if ((rc = sample_enqueue(&sl[0], fn, ctx, s, 1, NULL, 0)) != 0 ||
            (rc = sample_finish(&one, &sl[0], 1)) != 0)
            goto done;
        double want_ns = o.min_sample_ms * 1e6;
        if (one > 0 && one < want_ns)
            launches = (int)(want_ns / one) + 1;
        /* a sample of several launches goes through a graph when fn can be captured */
        if (launches > 1 && graph_wanted(&o)) {
            int most = sl[0].flag ? MAX_LAUNCHES_PER_SAMPLE * GRAPH_MAX_NODES : 100000;
            if (launches > most)
                launches = most;
            nodes = launches < GRAPH_MAX_NODES ? launches : GRAPH_MAX_NODES;
            reps = (launches + nodes - 1) / nodes;
            nodes = (launches + reps - 1) / reps; /* spread evenly: launches = reps x nodes */
            if (graph_build(fn, ctx, nodes, s) == 0) {
                exec = g_exec;
                launches = reps * nodes;
            } else {
                nodes = 0;
            }
        }
        int most = exec ? launches : sl[0].flag ? MAX_LAUNCHES_PER_SAMPLE : 100000;
        if (launches > most)
            launches = most;
        /* One launch fills a sample: the calibration run was timed exactly as a sample is
         * (blocker, events, one launch), so it is the first sample. */
        if (launches == 1 && cap > 0)
            v[n++] = one;
    }
    if (launches == 1)
        budget_samples(&o, out, one > 0 ? one : first);
    /* Two samples in flight: enqueue the next, then read the previous. */
    start = mono_ns();
    while (1) {
        int go = want_enqueue(&o, v, n, pending >= 0, cap, start);
        int k = pending == 0 ? 1 : 0;
        if (go) {
            if (o.l2_flush && (rc = l2_flush(s, &flush, &flush_bytes)) != 0)
                goto done;
            if ((rc = sample_enqueue(&sl[k], fn, ctx, s, launches, exec, reps)) != 0)
                goto done;
        }
        if (pending >= 0) {
            if ((rc = sample_finish(&v[n], &sl[pending], launches)) != 0)
                goto done;
            n++;
        }
        pending = go ? k : -1;
        if (!go)
            break;
    }
    if (o.keep_raw) {
        out->raw_ns = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
        memcpy(out->raw_ns, v, (size_t)n * sizeof(double));
    }
    out->launches_per_sample = launches;
    out->graph_nodes = exec ? nodes : 0;
    gpu_state_after(out);
    timing_compute_stats(out, v, n);
done:
    if (rc)
        cudaStreamSynchronize(s); /* let released blockers drain before their flags go */
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
    gpu_state_before(out);
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
    gpu_state_after(out);
    timing_compute_stats(out, v, n);
done:
    free(v);
    return rc;
}
