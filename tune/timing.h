/* The timing core: the one way lscat measures GPU work. Used by every generated harness, by
 * the tune sweep, by MCTS rollouts and by Seer. Two shapes of work:
 *   - a kernel launch enqueued on a stream: timed with CUDA events; each sample batches as
 *     many launches as needed to last at least min_sample_ms (short kernels are below the
 *     events' resolution otherwise), and the per-launch time is the sample / launches. A batch
 *     of several launches is captured once into a CUDA graph of up to 128 launches and the
 *     sample launches that graph (graph_nodes says so; no_graph or LSCAT_TIMING_GRAPH=0 turn it
 *     off, and a launch function that cannot be captured falls back to launches one by one);
 *   - a host callback that runs a whole program (several streams, copies, MPI): timed with a
 *     monotonic host clock after device synchronisation.
 * Warm-up first; then a fixed number of samples, or adaptive: stop once MAD/median falls under
 * target_rel_mad, or max_samples or the time budget is reached. Statistics over the samples:
 * median (the one to report), min, max, mean, stddev, MAD, p10, p90.
 *
 * This header is plain C (no CUDA headers) so host-only tools can include it; the
 * implementation is tune/timing.cu (GPU) and tune/stats.c (statistics, host). */
#ifndef LSCAT_TIMING_H
#define LSCAT_TIMING_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *timing_stream_t; /* = cudaStream_t */

struct timing_options {
    int warmup;            /* untimed runs first (default 3) */
    int samples;           /* samples to take; with adaptive mode the minimum (default 10) */
    int max_samples;       /* adaptive mode's cap (default 200) */
    double min_sample_ms;  /* a launch sample lasts at least this long (default 1.0) */
    double target_rel_mad; /* adaptive: stop when MAD/median < this; 0 = fixed `samples` */
    double budget_s;       /* adaptive: stop after this much measuring (default 10) */
    int l2_flush;          /* flush L2 before every sample; then one launch per sample */
    int keep_raw;          /* keep every sample in timing_stats.raw_ns */
    /* 1 = enqueue launches straight into the running stream. Default 0: a blocker kernel holds
     * the stream while a sample's launches are enqueued (at most 500 per sample), so samples
     * time GPU execution back to back, not the host's launch rate. */
    int no_launch_blocker;
    /* 1 = launch one by one from the host. Default 0: a sample of several launches launches a
     * CUDA graph captured from them (once per measurement), so short kernels run back to back
     * without waiting for the host. LSCAT_TIMING_GRAPH=0 in the environment has the same
     * effect as 1 here. */
    int no_graph;
};
#define TIMING_OPTIONS_INIT { .warmup = 3, .samples = 10, .max_samples = 200, \
    .min_sample_ms = 1.0, .target_rel_mad = 0.0, .budget_s = 10.0, .l2_flush = 0, \
    .keep_raw = 0, .no_launch_blocker = 0, .no_graph = 0 }

struct timing_stats {
    double median_ns, min_ns, max_ns, mean_ns, stddev_ns, mad_ns, p10_ns, p90_ns;
    int samples;             /* how many samples the statistics summarise */
    int launches_per_sample; /* launches batched in one sample (1 for host work) */
    int graph_nodes;         /* launches per CUDA graph when a sample launches a graph (the
                              * sample is launches_per_sample / graph_nodes graph launches);
                              * 0 = launched one by one (or host work) */
    double *raw_ns;          /* per-launch time of every sample when keep_raw; owned */
    /* The GPU's state around the measurement, read through NVML (dlopen'ed: -1 when NVML or
     * the reading is unavailable). mem clock is read after. */
    int sm_clock_mhz_before, sm_clock_mhz_after, mem_clock_mhz;
    int temp_c_before, temp_c_after;
    int clocks_locked;       /* 1 when the caller locked clocks (LSCAT_CLOCKS_LOCKED=1) */
    /* The samples asked for, when the per-configuration time budget cut them (long kernels:
     * LSCAT_TIMING_BUDGET_S in the environment, set by `lscat tune --config-budget`): one
     * launch times t, so samples x t > budget; then samples = max(1, budget / t). 0: not cut. */
    int samples_planned;
};

/* The device a harness runs on, for its header line and for the store's gpus table. */
struct timing_device_info {
    int device;                 /* CUDA ordinal */
    char name[256];
    char uuid[48];              /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    char cc[16];                /* compute capability, "9.0" */
    int driver_cuda_version;    /* cudaDriverGetVersion, e.g. 13000 */
    int runtime_cuda_version;   /* cudaRuntimeGetVersion */
    char driver_version[80];    /* NVML's driver version, e.g. "580.65.06"; "" unknown */
    int sm_count;
    long long memory_bytes;
    int max_sm_clock_mhz;       /* cudaDevAttrClockRate */
    int l2_bytes;
};

/* Enqueue one run of the work on `stream`, and only there (it may be captured into a graph:
 * work put on another stream is not captured; a graph with fewer nodes than runs is refused
 * and the runs go one by one). Return 0, or a cudaError_t value. */
typedef int (*timing_launch_fn)(void *ctx, timing_stream_t stream);
/* Run the whole program once and return when the host is done (the core synchronises the
 * device after it). Return 0, or a nonzero error code of the caller's choosing. */
typedef int (*timing_host_fn)(void *ctx);

/* Measure `fn` on `stream` (NULL = the default stream). Returns 0, or the first cudaError_t
 * that a launch or the synchronisation reported (then *out holds no valid statistics);
 * timing_error_string() names it. */
int timing_measure_launch(struct timing_stats *out, const struct timing_options *opts,
                          timing_launch_fn fn, void *ctx, timing_stream_t stream);
/* Measure a host callback with a monotonic clock around fn() + cudaDeviceSynchronize(). */
int timing_measure_host(struct timing_stats *out, const struct timing_options *opts,
                        timing_host_fn fn, void *ctx);
const char *timing_error_string(int code);

/* Free what the timing core keeps between measurements (sample events, the pinned blocker
 * flags) and drop its NVML reference. For harnesses that run inside a long-lived process
 * (lscat-runner loads harness.so files one after another): call it before returning. Safe to
 * call when nothing was measured; a later measurement sets everything up again. */
void timing_release_process_state(void);

/* Fill `out` for CUDA device `device` (CUDA runtime + NVML). Returns 0 or a cudaError_t. */
int timing_device_info_get(struct timing_device_info *out, int device);

/* JSON helpers for harnesses (host C, tune/stats.c), so every harness writes the same lines.
 * Each writes a NUL-terminated line without newline into out[size] and returns its length,
 * or -1 when it does not fit. */
/* {"harness":1,"kernel":…,"device":…,"gpu":…,"uuid":…,"cc":…,"driver":…,"cuda_driver":…,
 *  "cuda_runtime":…} */
int timing_format_header(char *out, int size, const char *kernel,
                         const struct timing_device_info *dev);
/* The statistics fields of a result line, without braces, starting with a comma:
 * ,"median_ns":…,…,"samples":N,"launches_per_sample":L,"graph_nodes":G,"sm_mhz_before":…,… */
int timing_format_stats(char *out, int size, const struct timing_stats *s);

/* Statistics of n samples (sorted in place). Host-only; tune/stats.c. */
void timing_compute_stats(struct timing_stats *out, double *samples_ns, int n);
/* MAD / median of n samples (0 when n == 0 or median == 0); copies, does not reorder. */
double timing_rel_mad(const double *samples_ns, int n);
void timing_stats_release(struct timing_stats *s);

#ifdef __cplusplus
}
#endif
#endif
