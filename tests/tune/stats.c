/* Tests of the timing core's statistics (tune/stats.c) and its JSON helpers: hand-checked
 * values, and random samples checked against Python's statistics module (numpy's linear
 * quantiles = statistics.quantiles(method='inclusive')). */
#include "tests/support/test.h"
#include "tune/timing.h"

#include "common/error.h"
#include "common/proc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * (fabs(b) + 1))
#define CHECK_NEAR(a, b)                                                                   \
    do {                                                                                   \
        double na_ = (a), nb_ = (b);                                                       \
        if (!NEAR(na_, nb_))                                                               \
            test_fail(__FILE__, __LINE__, "%s ~= %s (%.12g vs %.12g)", #a, #b, na_, nb_);  \
    } while (0)

static void test_stats__odd_count_matches_hand_computed_values(void)
{
    double v[] = { 5, 1, 4, 2, 3 };
    struct timing_stats s = { 0 };
    timing_compute_stats(&s, v, 5);
    CHECK_INT(s.samples, ==, 5);
    CHECK_NEAR(s.median_ns, 3);
    CHECK_NEAR(s.min_ns, 1);
    CHECK_NEAR(s.max_ns, 5);
    CHECK_NEAR(s.mean_ns, 3);
    CHECK_NEAR(s.stddev_ns, sqrt(2.5)); /* sample standard deviation (n - 1) */
    CHECK_NEAR(s.mad_ns, 1);            /* |dev| = 2 1 0 1 2 -> median 1 */
    CHECK_NEAR(s.p10_ns, 1.4);          /* numpy: 1 + 0.4 * (2 - 1) */
    CHECK_NEAR(s.p90_ns, 4.6);
}

static void test_stats__even_count_interpolates_the_median(void)
{
    double v[] = { 10, 40, 20, 30 };
    struct timing_stats s = { 0 };
    timing_compute_stats(&s, v, 4);
    CHECK_NEAR(s.median_ns, 25);
    CHECK_NEAR(s.mad_ns, 10); /* |dev| = 15 5 5 15 -> 10 */
    CHECK_NEAR(s.p10_ns, 13);
    CHECK_NEAR(s.p90_ns, 37);
}

static void test_stats__one_sample_has_zero_spread(void)
{
    double v[] = { 7 };
    struct timing_stats s = { 0 };
    timing_compute_stats(&s, v, 1);
    CHECK_NEAR(s.median_ns, 7);
    CHECK_NEAR(s.p10_ns, 7);
    CHECK_NEAR(s.stddev_ns, 0);
    CHECK_NEAR(s.mad_ns, 0);
}

static void test_stats__no_samples_gives_zeros_and_keeps_gpu_readings(void)
{
    struct timing_stats s = { 0 };
    s.median_ns = 99;
    s.launches_per_sample = 8;
    s.sm_clock_mhz_before = 1980;
    s.temp_c_after = 55;
    timing_compute_stats(&s, NULL, 0);
    CHECK_INT(s.samples, ==, 0);
    CHECK_NEAR(s.median_ns, 0);
    CHECK_INT(s.launches_per_sample, ==, 8);
    CHECK_INT(s.sm_clock_mhz_before, ==, 1980);
    CHECK_INT(s.temp_c_after, ==, 55);
}

static void test_stats__rel_mad_does_not_reorder_its_input(void)
{
    double v[] = { 100, 90, 110, 100, 300 };
    double r = timing_rel_mad(v, 5);
    CHECK_NEAR(r, 0.1); /* median 100, |dev| 0 10 10 0 200 -> 10 */
    CHECK_NEAR(v[0], 100);
    CHECK_NEAR(v[4], 300);
    CHECK_NEAR(timing_rel_mad(v, 0), 0);
}

/* 200 random sets of 1..60 samples each against Python's statistics module. */
static void test_stats__random_samples_agree_with_python(void)
{
    char path[512];
    srand(12345);
    snprintf(path, sizeof(path), "%s/samples.txt", test_tmpdir());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    double sets[200][60];
    int ns[200];
    for (int i = 0; i < 200; i++) {
        ns[i] = 1 + rand() % 60;
        for (int j = 0; j < ns[i]; j++) {
            sets[i][j] = 1000 + rand() % 5000 + (rand() % 1000) / 1000.0;
            fprintf(f, "%s%.3f", j ? " " : "", sets[i][j]);
        }
        fprintf(f, "\n");
    }
    fclose(f);
    const char *py =
        "import statistics as s, sys\n"
        "for l in open(sys.argv[1]):\n"
        "    v = [float(x) for x in l.split()]\n"
        "    m = s.median(v)\n"
        "    q = s.quantiles(v, n=10, method='inclusive') if len(v) > 1 else [v[0]] * 9\n"
        "    sd = s.stdev(v) if len(v) > 1 else 0.0\n"
        "    mad = s.median([abs(x - m) for x in v])\n"
        "    print(repr(m), repr(s.fmean(v)), repr(sd), repr(mad), repr(q[0]), repr(q[8]))\n";
    const char *argv[] = { "python3", "-c", py, path, NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.timeout_s = 60;
    CHECK_OK(proc_run(&r, &o));
    if (r.exit_code == 127) {
        proc_result_release(&r);
        test_skip("python3 not installed");
    }
    CHECK_INT(r.exit_code, ==, 0);
    char *line = r.out.data;
    for (int i = 0; i < 200; i++) {
        double ref[6];
        CHECK(sscanf(line, "%lf %lf %lf %lf %lf %lf", &ref[0], &ref[1], &ref[2], &ref[3],
                     &ref[4], &ref[5]) == 6);
        struct timing_stats st = { 0 };
        timing_compute_stats(&st, sets[i], ns[i]);
        CHECK_NEAR(st.median_ns, ref[0]);
        CHECK_NEAR(st.mean_ns, ref[1]);
        CHECK(fabs(st.stddev_ns - ref[2]) <= 1e-7 * (ref[2] + 1));
        CHECK_NEAR(st.mad_ns, ref[3]);
        CHECK_NEAR(st.p10_ns, ref[4]);
        CHECK_NEAR(st.p90_ns, ref[5]);
        line = strchr(line, '\n');
        CHECK(line != NULL);
        line++;
    }
    proc_result_release(&r);
}

static void test_format__header_escapes_the_kernel_name(void)
{
    struct timing_device_info d;
    char out[1024];
    memset(&d, 0, sizeof(d));
    snprintf(d.name, sizeof(d.name), "NVIDIA H100 80GB HBM3");
    snprintf(d.uuid, sizeof(d.uuid), "GPU-12345678-1234-1234-1234-123456789abc");
    snprintf(d.cc, sizeof(d.cc), "9.0");
    d.driver_cuda_version = 13000;
    int n = timing_format_header(out, sizeof(out), "ns::k<\"a\">", &d);
    CHECK(n > 0);
    CHECK_CONTAINS(out, "\"kernel\":\"ns::k<\\\"a\\\">\"");
    CHECK_CONTAINS(out, "\"uuid\":\"GPU-12345678-1234-1234-1234-123456789abc\"");
    CHECK_CONTAINS(out, "\"cuda_driver\":13000,\"cuda_runtime\":0}");
    CHECK_INT(timing_format_header(out, 20, "k", &d), ==, -1);
}

static void test_format__stats_fields_carry_gpu_readings(void)
{
    struct timing_stats s;
    char out[1024];
    memset(&s, 0, sizeof(s));
    s.median_ns = 1234.5;
    s.samples = 10;
    s.launches_per_sample = 7;
    s.sm_clock_mhz_before = 1980;
    s.sm_clock_mhz_after = -1;
    CHECK(timing_format_stats(out, sizeof(out), &s) > 0);
    CHECK(out[0] == ',');
    CHECK_CONTAINS(out, "\"median_ns\":1234.5");
    CHECK_CONTAINS(out, "\"launches_per_sample\":7");
    CHECK_CONTAINS(out, "\"sm_mhz_before\":1980,\"sm_mhz_after\":-1");
}

int main(void)
{
    TEST_RUN(test_stats__odd_count_matches_hand_computed_values);
    TEST_RUN(test_stats__even_count_interpolates_the_median);
    TEST_RUN(test_stats__one_sample_has_zero_spread);
    TEST_RUN(test_stats__no_samples_gives_zeros_and_keeps_gpu_readings);
    TEST_RUN(test_stats__rel_mad_does_not_reorder_its_input);
    TEST_RUN(test_stats__random_samples_agree_with_python);
    TEST_RUN(test_format__header_escapes_the_kernel_name);
    TEST_RUN(test_format__stats_fields_carry_gpu_readings);
    return test_done();
}
