/* GPU tests of the timing core (run by `make test-gpu`; skip without a CUDA device):
 *  - calibration: a kernel spinning a known number of SM cycles (clock64) is measured within
 *    1% of cycles / SM clock, with the clock read through NVML (read-only) during the run;
 *  - the host-callback shape measures the same kernel within 1%;
 *  - LS-CAT's aggregation experiment: 100,000 runtimes of one kernel, draw 10 at random,
 *    aggregate with median/mean/min/max/p10/p90, repeat 10,000 times; which statistic's
 *    relative spread is smallest. Numbers go to stderr (and $LSCAT_GPU_RESULTS as JSON). */
extern "C" {
#include "tests/support/test.h"
}
#include "tune/timing.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__global__ void spin(long long cycles, long long *sink)
{
    long long start = clock64(), now = start;
    while (now - start < cycles)
        now = clock64();
    if (threadIdx.x == 0 && now == 42)
        *sink = now; /* never true; keeps the loop */
}

__global__ void stream_kernel(float *x, const float *y, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = 2.0f * y[i] + x[i];
}

struct spin_ctx {
    long long cycles;
    long long *sink;
};

static int launch_spin(void *ctx, timing_stream_t s)
{
    struct spin_ctx *c = (struct spin_ctx *)ctx;
    spin<<<1, 32, 0, (cudaStream_t)s>>>(c->cycles, c->sink);
    return (int)cudaGetLastError();
}

static int host_spin(void *ctx)
{
    return launch_spin(ctx, NULL);
}

static FILE *results(void)
{
    static FILE *f;
    const char *p = getenv("LSCAT_GPU_RESULTS");
    if (!f && p && *p)
        f = fopen(p, "a");
    return f;
}

static void need_device(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
        test_skip("no CUDA device");
}

static void check_spin(int host_shape)
{
    struct timing_device_info d;
    struct spin_ctx c = { 0, NULL };
    need_device();
    CHECK_INT(timing_device_info_get(&d, 0), ==, 0);
    CHECK(cudaMalloc(&c.sink, sizeof(long long)) == cudaSuccess);
    /* host timing carries launch + synchronisation latency (about 10 us on an H100), so the
     * host shape is calibrated on longer spins */
    long long cycles_list[2] = { 1000000, 10000000 };
    if (host_shape) {
        cycles_list[0] = 10000000;
        cycles_list[1] = 40000000;
    }
    for (int k = 0; k < 2; k++) {
        struct timing_options o = TIMING_OPTIONS_INIT;
        struct timing_stats s;
        c.cycles = cycles_list[k];
        o.samples = 20;
        o.warmup = 5;
        int rc = host_shape ? timing_measure_host(&s, &o, host_spin, &c)
                            : timing_measure_launch(&s, &o, launch_spin, &c, NULL);
        CHECK_INT(rc, ==, 0);
        /* the SM clock during the run, from NVML (read-only); else the peak clock */
        int mhz = s.sm_clock_mhz_after > 0 ? s.sm_clock_mhz_after : d.max_sm_clock_mhz;
        double want_ns = (double)c.cycles / mhz * 1e3;
        double err = (s.median_ns - want_ns) / want_ns;
        fprintf(stderr, "# calibration %s: %lld cycles at %d MHz (NVML before %d, after %d, "
                "peak %d): want %.1f ns, median %.1f ns, error %+.3f%%, MAD/median %.4f%%, "
                "launches/sample %d, graph nodes %d\n", host_shape ? "host" : "launch", c.cycles,
                mhz, s.sm_clock_mhz_before, s.sm_clock_mhz_after, d.max_sm_clock_mhz, want_ns,
                s.median_ns, err * 100, s.mad_ns / s.median_ns * 100, s.launches_per_sample,
                s.graph_nodes);
        if (results())
            fprintf(results(), "{\"test\":\"calibration\",\"shape\":\"%s\",\"cycles\":%lld,"
                    "\"mhz\":%d,\"want_ns\":%.1f,\"median_ns\":%.1f,\"error\":%.6f}\n",
                    host_shape ? "host" : "launch", c.cycles, mhz, want_ns, s.median_ns, err);
        CHECK(s.sm_clock_mhz_after > 0); /* NVML through dlopen works on a real driver */
        CHECK(fabs(err) < 0.01);
    }
    cudaFree(c.sink);
}

static void test_timing__spin_kernel_is_measured_within_1_percent(void)
{
    check_spin(0);
}

static void test_timing__host_callback_shape_is_measured_within_1_percent(void)
{
    check_spin(1);
}

struct stream_ctx {
    float *x, *y;
    long n;
};

static int launch_stream(void *ctx, timing_stream_t s)
{
    struct stream_ctx *c = (struct stream_ctx *)ctx;
    stream_kernel<<<(unsigned)((c->n + 255) / 256), 256, 0, (cudaStream_t)s>>>(c->x, c->y, c->n);
    return (int)cudaGetLastError();
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_timing__aggregation_experiment_finds_the_steadiest_statistic(void)
{
    enum { N = 100000, DRAW = 10, REPS = 10000, NSTAT = 6 };
    const char *names[NSTAT] = { "median", "mean", "min", "max", "p10", "p90" };
    struct stream_ctx c;
    struct timing_options o = TIMING_OPTIONS_INIT;
    struct timing_stats s;
    need_device();
    c.n = 4 << 20; /* 16 MiB per array: a memory-bound kernel of some tens of microseconds */
    CHECK(cudaMalloc(&c.x, c.n * sizeof(float)) == cudaSuccess);
    CHECK(cudaMalloc(&c.y, c.n * sizeof(float)) == cudaSuccess);
    cudaMemset(c.x, 0, c.n * sizeof(float));
    cudaMemset(c.y, 0, c.n * sizeof(float));
    o.warmup = 100;
    o.samples = N;
    o.max_samples = N;
    o.min_sample_ms = 0; /* one launch per sample: 100,000 single runtimes */
    o.keep_raw = 1;
    CHECK_INT(timing_measure_launch(&s, &o, launch_stream, &c, NULL), ==, 0);
    CHECK_INT(s.samples, ==, N);
    CHECK_INT(s.launches_per_sample, ==, 1);
    CHECK(s.min_ns > 0);
    srand(2026);
    static double agg[NSTAT][REPS];
    double draw[DRAW];
    for (int r = 0; r < REPS; r++) {
        double sum = 0;
        for (int i = 0; i < DRAW; i++) {
            draw[i] = s.raw_ns[(((long)rand() << 15) ^ rand()) % N];
            sum += draw[i];
        }
        qsort(draw, DRAW, sizeof(double), cmp);
        agg[0][r] = (draw[4] + draw[5]) / 2;
        agg[1][r] = sum / DRAW;
        agg[2][r] = draw[0];
        agg[3][r] = draw[DRAW - 1];
        agg[4][r] = draw[0] + 0.9 * (draw[1] - draw[0]);  /* numpy linear p10 of 10 */
        agg[5][r] = draw[8] + 0.1 * (draw[9] - draw[8]);  /* p90 */
    }
    int best = 0;
    double cv[NSTAT];
    fprintf(stderr, "# aggregation: %d runtimes, median %.1f ns, min %.1f, max %.1f, "
            "MAD/median %.3f%%, p90/p10 %.4f\n", N, s.median_ns, s.min_ns, s.max_ns,
            s.mad_ns / s.median_ns * 100, s.p90_ns / s.p10_ns);
    for (int k = 0; k < NSTAT; k++) {
        double m = 0, v = 0;
        for (int r = 0; r < REPS; r++)
            m += agg[k][r];
        m /= REPS;
        for (int r = 0; r < REPS; r++)
            v += (agg[k][r] - m) * (agg[k][r] - m);
        cv[k] = sqrt(v / (REPS - 1)) / m;
        if (cv[k] < cv[best])
            best = k;
        fprintf(stderr, "#   %-6s of %d draws over %d repetitions: mean %.1f ns, relative "
                "stddev %.4f%%\n", names[k], DRAW, REPS, m, cv[k] * 100);
        if (results())
            fprintf(results(), "{\"test\":\"aggregation\",\"stat\":\"%s\",\"mean_ns\":%.2f,"
                    "\"rel_stddev\":%.6f}\n", names[k], m, cv[k]);
    }
    fprintf(stderr, "# aggregation: steadiest statistic: %s\n", names[best]);
    CHECK(cv[0] > 0 && cv[1] > 0);
    CHECK(cv[0] < cv[3]); /* the median of 10 varies less than the max of 10 */
    timing_stats_release(&s);
    cudaFree(c.x);
    cudaFree(c.y);
}

__global__ void tiny(float *x)
{
    if (threadIdx.x == 0 && x)
        x[blockIdx.x] += 1.0f;
}

static int launch_tiny(void *ctx, timing_stream_t s)
{
    tiny<<<1, 32, 0, (cudaStream_t)s>>>((float *)ctx);
    return (int)cudaGetLastError();
}

/* Tiny kernels are launch-rate bound when launched straight into a running stream; with the
 * blocker the samples time GPU execution only, so they can only be shorter. */
static void test_timing__launch_blocker_times_gpu_execution_not_launch_rate(void)
{
    float *x = NULL;
    double med[2];
    int lps[2];
    need_device();
    CHECK(cudaMalloc(&x, 1024 * sizeof(float)) == cudaSuccess);
    for (int k = 0; k < 2; k++) {
        struct timing_options o = TIMING_OPTIONS_INIT;
        struct timing_stats s;
        o.no_launch_blocker = k;
        o.no_graph = 1; /* launches one by one in both: graphs are the next test */
        o.samples = 30;
        CHECK_INT(timing_measure_launch(&s, &o, launch_tiny, x, NULL), ==, 0);
        med[k] = s.median_ns;
        lps[k] = s.launches_per_sample;
    }
    fprintf(stderr, "# tiny kernel per launch: %.1f ns with the blocker (%d launches/sample), "
            "%.1f ns without (%d launches/sample)\n", med[0], lps[0], med[1], lps[1]);
    if (results())
        fprintf(results(), "{\"test\":\"blocker\",\"with_ns\":%.1f,\"without_ns\":%.1f}\n",
                med[0], med[1]);
    CHECK(med[0] > 0 && med[1] > 0);
    CHECK(med[0] <= med[1] * 1.05);
    CHECK(lps[0] <= 500);
    cudaFree(x);
}

/* A sample of many short launches launches one captured graph of them: reported as
 * graph_nodes, and never slower per launch than the same launches one by one behind the
 * blocker (inside a graph consecutive kernels start with less launch latency). */
static void test_timing__short_launches_are_timed_through_a_graph(void)
{
    struct stream_ctx c;
    double med[3];
    int lps[3], nodes[3];
    need_device();
    c.n = 240 * 240; /* LS-CAT's smallest matrix: a kernel of a few microseconds */
    CHECK(cudaMalloc(&c.x, c.n * sizeof(float)) == cudaSuccess);
    CHECK(cudaMalloc(&c.y, c.n * sizeof(float)) == cudaSuccess);
    cudaMemset(c.x, 0, c.n * sizeof(float));
    cudaMemset(c.y, 0, c.n * sizeof(float));
    for (int k = 0; k < 3; k++) { /* graph, one by one with the blocker, one by one without */
        struct timing_options o = TIMING_OPTIONS_INIT;
        struct timing_stats s;
        o.no_graph = k > 0;
        o.no_launch_blocker = k == 2;
        o.samples = 30;
        CHECK_INT(timing_measure_launch(&s, &o, launch_stream, &c, NULL), ==, 0);
        med[k] = s.median_ns;
        lps[k] = s.launches_per_sample;
        nodes[k] = s.graph_nodes;
    }
    fprintf(stderr, "# %ld-element kernel per launch: graph %.1f ns (%d launches/sample, %d per "
            "graph), one by one %.1f ns (%d/sample), without the blocker %.1f ns (%d/sample): "
            "graph / one by one %.4f\n", c.n, med[0], lps[0], nodes[0], med[1], lps[1], med[2],
            lps[2], med[0] / med[1]);
    if (results())
        fprintf(results(), "{\"test\":\"graph\",\"graph_ns\":%.1f,\"one_by_one_ns\":%.1f,"
                "\"no_blocker_ns\":%.1f,\"graph_nodes\":%d,\"launches\":%d}\n", med[0], med[1],
                med[2], nodes[0], lps[0]);
    CHECK(nodes[0] > 1 && nodes[0] <= 128);
    CHECK_INT(lps[0] % nodes[0], ==, 0);
    CHECK_INT(nodes[1], ==, 0);
    CHECK_INT(nodes[2], ==, 0);
    CHECK(med[0] > 0 && med[0] <= med[1] * 1.05);
    /* LSCAT_TIMING_GRAPH=0 turns graphs off as no_graph does */
    setenv("LSCAT_TIMING_GRAPH", "0", 1);
    struct timing_stats s;
    CHECK_INT(timing_measure_launch(&s, NULL, launch_stream, &c, NULL), ==, 0);
    CHECK_INT(s.graph_nodes, ==, 0);
    unsetenv("LSCAT_TIMING_GRAPH");
    cudaFree(c.x);
    cudaFree(c.y);
}

/* A spin of a few microseconds, the length of the sweep's smallest kernels: the known duration
 * against graph and one-by-one timing (one-by-one carries the launch gap between kernels). */
static void test_timing__a_short_spin_is_measured_closer_through_a_graph(void)
{
    struct timing_device_info d;
    struct spin_ctx c = { 4000, NULL };
    double err[2], over[2];
    need_device();
    CHECK_INT(timing_device_info_get(&d, 0), ==, 0);
    CHECK(cudaMalloc(&c.sink, sizeof(long long)) == cudaSuccess);
    for (int k = 0; k < 2; k++) {
        struct timing_options o = TIMING_OPTIONS_INIT;
        struct timing_stats s;
        o.no_graph = k;
        o.samples = 30;
        CHECK_INT(timing_measure_launch(&s, &o, launch_spin, &c, NULL), ==, 0);
        int mhz = s.sm_clock_mhz_after > 0 ? s.sm_clock_mhz_after : d.max_sm_clock_mhz;
        double want_ns = (double)c.cycles / mhz * 1e3;
        err[k] = (s.median_ns - want_ns) / want_ns;
        over[k] = s.median_ns - want_ns;
        fprintf(stderr, "# short spin %s: %lld cycles at %d MHz: want %.1f ns, median %.1f ns, "
                "error %+.3f%%, launches/sample %d, graph nodes %d\n", k ? "one by one" : "graph",
                c.cycles, mhz, want_ns, s.median_ns, err[k] * 100, s.launches_per_sample,
                s.graph_nodes);
        if (results())
            fprintf(results(), "{\"test\":\"short_spin\",\"graph\":%d,\"want_ns\":%.1f,"
                    "\"median_ns\":%.1f,\"error\":%.6f}\n", !k, want_ns, s.median_ns, err[k]);
    }
    /* What is left above the spin is each kernel's own start and drain: measured on an H100,
     * 0.74 us per kernel inside a graph, 1.69 us one by one (2026-11-21). */
    fprintf(stderr, "# short spin: per-kernel overhead %.0f ns through a graph, %.0f ns one by "
            "one\n", over[0], over[1]);
    CHECK(err[0] < err[1]);
    CHECK(over[0] > -100 && over[0] < 1500);
    cudaFree(c.sink);
}

struct counted_ctx {
    struct spin_ctx spin;
    int calls;
};

static int launch_counted(void *ctx, timing_stream_t s)
{
    struct counted_ctx *c = (struct counted_ctx *)ctx;
    c->calls++;
    return launch_spin(&c->spin, s);
}

/* A kernel that fills a sample by itself (5 ms here) is warmed up once, not `warmup` times, and
 * its calibration run is its first sample: samples + 1 runs in all. A short one gets the full
 * warm-up. */
static void test_timing__a_long_kernel_is_warmed_up_once_and_calibrated_by_its_first_sample(void)
{
    struct counted_ctx c = { { 10000000, NULL }, 0 };
    struct timing_options o = TIMING_OPTIONS_INIT;
    struct timing_stats s;
    need_device();
    CHECK(cudaMalloc(&c.spin.sink, sizeof(long long)) == cudaSuccess);
    o.warmup = 3;
    o.samples = 10;
    CHECK_INT(timing_measure_launch(&s, &o, launch_counted, &c, NULL), ==, 0);
    CHECK_INT(s.launches_per_sample, ==, 1);
    CHECK_INT(s.samples, ==, 10);
    CHECK_INT(c.calls, ==, 11);
    /* 100 cycles: launches/sample L through a graph of G: 3 warm-up + 1 calibration + G
     * captured + nothing else from the host */
    c.spin.cycles = 100;
    c.calls = 0;
    CHECK_INT(timing_measure_launch(&s, &o, launch_counted, &c, NULL), ==, 0);
    CHECK(s.graph_nodes > 1);
    CHECK_INT(c.calls, ==, 3 + 1 + s.graph_nodes);
    cudaFree(c.spin.sink);
}

/* A long kernel within a per-configuration budget (LSCAT_TIMING_BUDGET_S): ~50 ms a launch,
 * 10 samples asked, 0.2 s allowed: about 4 samples, the 10 asked for recorded. */
static void test_timing__a_long_kernel_takes_the_samples_its_budget_allows(void)
{
    struct counted_ctx c = { { 100000000, NULL }, 0 };
    struct timing_options o = TIMING_OPTIONS_INIT;
    struct timing_stats s;
    need_device();
    CHECK(cudaMalloc(&c.spin.sink, sizeof(long long)) == cudaSuccess);
    o.samples = 10;
    setenv("LSCAT_TIMING_BUDGET_S", "0.2", 1);
    int rc = timing_measure_launch(&s, &o, launch_counted, &c, NULL);
    unsetenv("LSCAT_TIMING_BUDGET_S");
    CHECK_INT(rc, ==, 0);
    fprintf(stderr, "# budget 0.2 s: median %.1f ms, %d samples of %d planned, %d launches\n",
            s.median_ns / 1e6, s.samples, s.samples_planned, c.calls);
    CHECK_INT(s.samples_planned, ==, 10);
    CHECK(s.samples >= 2 && s.samples <= 6);
    CHECK_INT(c.calls, ==, 1 + s.samples); /* one warm-up, the calibration is the first sample */
    char line[2048];
    CHECK(timing_format_stats(line, (int)sizeof line, &s) > 0);
    CHECK(strstr(line, "\"samples_planned\":10") != NULL);
    /* without the budget: all 10 */
    c.calls = 0;
    CHECK_INT(timing_measure_launch(&s, &o, launch_counted, &c, NULL), ==, 0);
    CHECK_INT(s.samples, ==, 10);
    CHECK_INT(s.samples_planned, ==, 0);
    cudaFree(c.spin.sink);
}

/* A launch function that synchronises cannot be captured: the core launches it one by one. */
static int launch_and_sync(void *ctx, timing_stream_t s)
{
    int rc = launch_stream(ctx, s);
    return rc ? rc : (int)cudaStreamSynchronize((cudaStream_t)s);
}

static int launch_on_legacy(void *ctx, timing_stream_t s)
{
    (void)s;
    return launch_stream(ctx, NULL);
}

static void test_timing__a_launch_that_cannot_be_captured_is_launched_one_by_one(void)
{
    struct stream_ctx c;
    struct timing_stats s;
    need_device();
    c.n = 240 * 240;
    CHECK(cudaMalloc(&c.x, c.n * sizeof(float)) == cudaSuccess);
    CHECK(cudaMalloc(&c.y, c.n * sizeof(float)) == cudaSuccess);
    CHECK_INT(timing_measure_launch(&s, NULL, launch_and_sync, &c, NULL), ==, 0);
    CHECK_INT(s.graph_nodes, ==, 0);
    CHECK(s.launches_per_sample > 1 && s.median_ns > 0);
    CHECK_INT((int)cudaGetLastError(), ==, 0); /* the failed capture left no error behind */
    /* a launch that ignores the stream it is given goes where capture cannot see it: the
     * (empty) graph is refused and the launches go one by one, still timed by the events */
    struct timing_stats one;
    struct timing_options o = TIMING_OPTIONS_INIT;
    o.no_graph = 1;
    CHECK_INT(timing_measure_launch(&one, &o, launch_on_legacy, &c, NULL), ==, 0);
    CHECK_INT(timing_measure_launch(&s, NULL, launch_on_legacy, &c, NULL), ==, 0);
    CHECK_INT(s.graph_nodes, ==, 0);
    fprintf(stderr, "# stream ignored: %.1f ns (refused graph), %.1f ns one by one\n",
            s.median_ns, one.median_ns);
    CHECK(s.median_ns > one.median_ns * 0.8 && s.median_ns < one.median_ns * 1.25);
    /* and the next measurement of a capturable launch uses a graph again */
    CHECK_INT(timing_measure_launch(&s, NULL, launch_stream, &c, NULL), ==, 0);
    CHECK(s.graph_nodes > 1);
    cudaFree(c.x);
    cudaFree(c.y);
}

int main(void)
{
    TEST_RUN(test_timing__short_launches_are_timed_through_a_graph);
    TEST_RUN(test_timing__a_launch_that_cannot_be_captured_is_launched_one_by_one);
    TEST_RUN(test_timing__a_short_spin_is_measured_closer_through_a_graph);
    TEST_RUN(test_timing__a_long_kernel_is_warmed_up_once_and_calibrated_by_its_first_sample);
    TEST_RUN(test_timing__a_long_kernel_takes_the_samples_its_budget_allows);
    TEST_RUN(test_timing__launch_blocker_times_gpu_execution_not_launch_rate);
    TEST_RUN(test_timing__spin_kernel_is_measured_within_1_percent);
    TEST_RUN(test_timing__host_callback_shape_is_measured_within_1_percent);
    TEST_RUN(test_timing__aggregation_experiment_finds_the_steadiest_statistic);
    return test_done();
}
