/* Probe classification from a harness's exit and --results lines (no GPU needed); the real
 * harnesses run in gpu_probe.c. */
#include "common/buf.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "execute/probe.h"
#include "tests/support/test.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static struct probe_result classify(int exit_code, int sig, int timed_out, const char *stderr_text,
                                    const char *results)
{
    struct proc_result r;
    memset(&r, 0, sizeof(r));
    buf_init(&r.out, 0);
    buf_init(&r.err, 0);
    buf_adds(&r.err, stderr_text);
    r.exit_code = exit_code;
    r.signal = sig;
    r.timed_out = timed_out;
    struct probe_result p;
    memset(&p, 0, sizeof(p));
    probe_classify(&p, &r, results);
    proc_result_release(&r);
    return p;
}

#define HEADER "{\"harness\":1,\"kernel\":\"k\",\"device\":0,\"gpu\":\"H100\",\"cc\":\"9.0\"}\n"

static void expect(struct probe_result p, enum probe_outcome want, const char *detail)
{
    CHECK_STR(probe_outcome_name(p.outcome), probe_outcome_name(want));
    if (detail)
        CHECK_CONTAINS(p.detail, detail);
    probe_result_release(&p);
}

static void test_probe__ok_when_configurations_ran(void)
{
    expect(classify(0, 0, 0, "", HEADER "{\"w\":1024,\"h\":1,\"status\":\"ok\"}\n"
                                        "{\"w\":64,\"h\":64,\"status\":\"ok\"}\n"), PROBE_OK, NULL);
    /* an invalid configuration next to one that ran is still runnable */
    expect(classify(0, 0, 0, "", HEADER "{\"status\":\"invalid_config\",\"error\":\"too big\"}\n"
                                        "{\"status\":\"ok\"}\n"), PROBE_OK, NULL);
}

/* Harnesses since session 8 end an ok probe line with the kernel's own time ("kernel_ns") and,
 * on the first configuration of a size, the buffers' making ("setup_ns"); older ones do not. */
#define NEW_LINE "{\"w\":64,\"h\":64,\"block\":[16,16,1],\"grid\":[4,4,1],\"status\":\"ok\"," \
                 "\"kernel_ns\":6100000,\"setup_ns\":250000}\n"
#define OLD_LINE "{\"w\":64,\"h\":64,\"block\":[16,16,1],\"grid\":[4,4,1],\"status\":\"ok\"}\n"

static void test_probe__old_and_new_probe_lines_are_both_ok(void)
{
    expect(classify(0, 0, 0, "", HEADER NEW_LINE), PROBE_OK, NULL);
    expect(classify(0, 0, 0, "", HEADER OLD_LINE), PROBE_OK, NULL);
    expect(classify(0, 0, 0, "", HEADER OLD_LINE NEW_LINE), PROBE_OK, NULL);
}

static void test_probe__the_kernel_time_is_read_from_a_new_line_and_absent_from_an_old_one(void)
{
    CHECK(fabs(probe_line_kernel_s(NEW_LINE) - 6.1e-3) < 1e-12);
    CHECK(probe_line_kernel_s(OLD_LINE) < 0);
    CHECK(probe_line_kernel_s(HEADER) < 0); /* "kernel":"k" is not the kernel's time */
    CHECK(probe_line_kernel_s("{\"status\":\"ok\",\"kernel_ns\":0}") == 0);
    CHECK(probe_line_kernel_s("{\"status\":\"ok\",\"kernel_ns\":x}") < 0);
}

static void test_probe__the_budget_is_planned_from_the_kernel_time_when_the_line_has_it(void)
{
    double big = 2024.0 * 2024, small = 64.0 * 64, pred = 0;
    /* bodyForce in session 7: its 64x64 line came 6.1 ms after the one before; the interval
     * alone predicts 6.1 s at 2024x2024 and a budget of 4 x that */
    double old = probe_budget_s(&pred, 3, 6.1e-3, -1, small, big);
    CHECK(fabs(pred - 6.1e-3 * big / small) < 1e-9);
    CHECK(fabs(old - 4 * pred) < 1e-9);
    CHECK(old > 24);
    /* the same line saying its kernel ran 0.1 ms: 6 ms of it was the configuration's overhead,
     * which does not grow with the kernel's work; the kernel predicts 0.1 s */
    double b = probe_budget_s(&pred, 3, 6.1e-3, 1e-4, small, big);
    CHECK(fabs(pred - 1e-4 * big / small) < 1e-9);
    CHECK(fabs(b - 3) < 1e-9); /* 1 s + 6 ms + 2 x 0.1 s is under the floor */
    /* a kernel of 6 ms at 64x64 itself: 1 s + 0.1 ms + 2 x 6 s */
    b = probe_budget_s(&pred, 3, 6.1e-3, 6e-3, small, big);
    CHECK(fabs(b - (1 + 1e-4 + 2 * 6e-3 * big / small)) < 1e-6);
    CHECK(b < old / 1.5);
    /* a kernel time over the interval (clock skew between host and device) adds no overhead */
    b = probe_budget_s(&pred, 0.5, 1e-3, 2e-3, 1, 1);
    CHECK(fabs(b - (1 + 2 * 2e-3)) < 1e-9);
}

static void test_probe__classifies_cuda_errors_by_kind(void)
{
    expect(classify(4, 0, 0, "", HEADER "{\"status\":\"cuda_error\",\"error\":\"an illegal memory "
                                        "access was encountered\"}\n"),
           PROBE_ILLEGAL_ADDRESS, "illegal memory access");
    /* a wild generic pointer far past every allocation (matmul's n = W*H at 2024x2024, H100) */
    expect(classify(4, 0, 0, "", HEADER "{\"w\":2024,\"h\":2024,\"block\":[16,16,1],\"status\":"
                                        "\"cuda_error\",\"error\":\"operation not supported on "
                                        "global/shared address space\"}\n"),
           PROBE_ILLEGAL_ADDRESS, "address space (at 2024x2024, block 16x16x1)");
    expect(classify(4, 0, 0, "", HEADER "{\"status\":\"cuda_error\",\"error\":\"unspecified launch "
                                        "failure\"}\n"), PROBE_LAUNCH_FAILURE, NULL);
    expect(classify(4, 0, 0, "", HEADER "{\"status\":\"ok\"}\n{\"status\":\"cuda_error\",\"error\":"
                                        "\"too many resources requested for launch\"}\n"),
           PROBE_CUDA_ERROR, "too many resources");
}

static void test_probe__crash_timeout_and_silent_failures(void)
{
    expect(classify(0, SIGSEGV, 0, "", HEADER), PROBE_CRASH, "signal 11");
    expect(classify(0, SIGKILL, 1, "", HEADER), PROBE_TIMEOUT, "timeout");
    expect(classify(3, 0, 0, "harness: no CUDA device: no CUDA-capable device is detected\n", ""),
           PROBE_CUDA_ERROR, "no CUDA-capable device");
    expect(classify(0, 0, 0, "", HEADER "{\"status\":\"invalid_config\",\"error\":\"grid\"}\n"),
           PROBE_CUDA_ERROR, "0 configurations ran: grid");
    expect(classify(127, 0, 0, "lscat: cannot execute the program\n", ""), PROBE_CRASH, NULL);
}

/* A harness that cannot open the device (harness_main.cu.in: `harness: device N: ...`, exit 3,
 * no configuration) for a reason no kernel causes: the device is unusable, not the kernel
 * (docs/execute.md "A device that goes"). Errors a kernel or its module can cause are the
 * kernel's. */
static int lost(int exit_code, const char *stderr_text, const char *results)
{
    struct probe_result p = classify(exit_code, 0, 0, stderr_text, results);
    int l = p.device_lost;
    if (l) /* never a fault: no retry shape, no fault budget counts it */
        CHECK_STR(probe_outcome_name(p.outcome), "cuda_error");
    probe_result_release(&p);
    return l;
}

static void test_probe__a_device_that_cannot_be_opened_is_lost_not_the_kernel(void)
{
    /* the texts cudaGetErrorString gives (CUDA 13): a GPU gone from the bus or hidden, no
     * driver, an exclusive GPU another process holds, an ordinal past the devices */
    CHECK(lost(3, "harness: device 0: no CUDA-capable device is detected\n", ""));
    CHECK(lost(3, "harness: device 0: CUDA driver version is insufficient for CUDA runtime "
                  "version\n", ""));
    CHECK(lost(3, "harness: device 1: CUDA-capable device(s) is/are busy or unavailable\n", ""));
    CHECK(lost(3, "harness: device 7: invalid device ordinal\n", HEADER));
    CHECK(lost(3, "harness: device 0: cannot read its description\n", ""));
    /* a configuration line saying it: the device went while the kernel ran */
    CHECK(lost(4, "", HEADER "{\"status\":\"cuda_error\",\"error\":\"no CUDA-capable device "
                            "is detected\"}\n"));
    /* the kernel's own: its module, its memory, its launch; a harness line of another form
     * (the test fixtures'); the device text without exit 3 (a program of its own) */
    CHECK(!lost(3, "harness: device 0: no kernel image is available for execution on the "
                   "device\n", ""));
    CHECK(!lost(3, "harness: device 0: out of memory\n", ""));
    CHECK(!lost(4, "", HEADER "{\"status\":\"cuda_error\",\"error\":\"an illegal memory access "
                             "was encountered\"}\n"));
    CHECK(!lost(3, "harness: no CUDA device: no CUDA-capable device is detected\n", ""));
    CHECK(!lost(1, "harness: device 0: no CUDA-capable device is detected\n", ""));
    CHECK(!lost(3, "harness: device 0: no CUDA-capable device is detected\n",
                HEADER "{\"status\":\"ok\"}\n{\"status\":\"invalid_config\",\"error\":\"x\"}\n"));
}

static void test_probe__sanitizer_verdicts(void)
{
    struct proc_result r;
    struct probe_result p;
    memset(&r, 0, sizeof(r));
    memset(&p, 0, sizeof(p));
    buf_init(&r.out, 0);
    buf_init(&r.err, 0);
    buf_adds(&r.out, "========= COMPUTE-SANITIZER\n========= Invalid __global__ write of size 4 "
                     "bytes\n=========     at k(float *, int)+0x70\n========= ERROR SUMMARY: 1 "
                     "error\n");
    probe_classify_sanitizer(&p, &r);
    CHECK_STR(p.sanitizer, "out_of_bounds");
    CHECK_CONTAINS(p.sanitizer_detail, "Invalid __global__ write of size 4");
    probe_result_release(&p);
    buf_reset(&r.out);
    buf_adds(&r.out, "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
    probe_classify_sanitizer(&p, &r);
    CHECK_STR(p.sanitizer, "clean");
    probe_result_release(&p);
    buf_reset(&r.out);
    probe_classify_sanitizer(&p, &r);
    CHECK_STR(p.sanitizer, "unavailable");
    probe_result_release(&p);
    proc_result_release(&r);
}

/* The run's counts say how many probes the fault budget stopped (stage_runs.counts). */
static void test_probe__the_counts_say_how_many_probes_the_fault_budget_stopped(void)
{
    struct execute_counts c;
    memset(&c, 0, sizeof(c));
    c.probed = 5;
    c.fault_budget = 2;
    c.memcheck_runs = 7;
    c.confirm_runs = 3;
    char *j = NULL;
    execute_counts_json(&j, &c);
    CHECK_CONTAINS(j, "\"probed\":5,");
    CHECK_CONTAINS(j, "\"fault_budget\":2,");
    CHECK_CONTAINS(j, "\"memcheck_runs\":7,");
    CHECK_CONTAINS(j, "\"confirm_runs\":3,");
    free(j);
}

/* Which memcheck reports a plain run may not see (its try runs plain again when memcheck found
 * no clean one): real compute-sanitizer 2025.3 report shapes. */
static void test_probe__memcheck_reports_a_plain_run_may_not_see(void)
{
    const char *near =
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at kernel+0x90\n"
        "=========     Address 0x7f1c20000400 is out of bounds\n"
        "=========     and is 1 bytes after the nearest allocation at 0x7f1c20000000 of size 1024 "
        "bytes\n";
    const char *far = "========= Invalid __global__ write of size 4 bytes\n"
                      "=========     Address 0x10000000000 is out of bounds\n";
    const char *shared = "========= Invalid __shared__ write of size 4 bytes\n"
                         "=========     at reverse+0x70\n"
                         "=========     Address 0x400 is out of bounds\n";
    const char *local = "========= Invalid __local__ write of size 8 bytes\n"
                        "=========     Address 0xfffcd8 is out of bounds\n";
    const char *misaligned = "========= Invalid __shared__ read of size 8 bytes\n"
                             "=========     Address 0x404 is misaligned\n";
    const char *trap = "========= Unspecified launch failure\n";
    CHECK_INT(probe_memcheck_near(near), ==, 1);
    CHECK_INT(probe_memcheck_near(far), ==, 0);   /* the MMU faults there */
    CHECK_INT(probe_memcheck_near(shared), ==, 1); /* session 21: gpu_shared_memory, 32x1 */
    CHECK_INT(probe_memcheck_near(local), ==, 1);
    CHECK_INT(probe_memcheck_near(misaligned), ==, 0);
    CHECK_INT(probe_memcheck_near(trap), ==, 0);
    CHECK_INT(probe_memcheck_near(""), ==, 0);
    char *both = xasprintf("%s%s", shared, far); /* one far global report: a plain fault */
    CHECK_INT(probe_memcheck_near(both), ==, 0);
    free(both);
    both = xasprintf("%s%s", shared, near);
    CHECK_INT(probe_memcheck_near(both), ==, 1);
    free(both);
    /* a log cut in the middle of a report (the runner reads 64 KiB of it): the whole lines */
    both = xasprintf("%s%s========= Invalid __sh", shared, shared);
    CHECK_INT(probe_memcheck_near(both), ==, 1);
    free(both);
    /* The end of a real log (session 22, H200, compute-sanitizer 2025.3: gpu_shared_memory with
     * 1024 threads, 257 of 1,015 reports kept): the tool's notes on its full buffer are not
     * reports of another kind, and not the first report either. */
    const char *full =
        "========= COMPUTE-SANITIZER\n"
        "========= Invalid __shared__ write of size 4 bytes\n"
        "=========     at gpu_shared_memory(float *)+0xc0\n"
        "=========     by thread (10,0,0) in block (0,0,0)\n"
        "=========     Access to 0x428 is out of bounds\n"
        "========= \n"
        "========= Warning: Error buffer overflow has been detected. Some records have been "
        "dropped\n"
        "========= \n"
        "========= ERROR SUMMARY: 257 errors\n"
        "========= \n"
        "========= 758 errors were skipped (error buffer overflow).\n";
    CHECK_INT(probe_memcheck_near(full), ==, 1);
    CHECK_INT(probe_memcheck_count(full), ==, 1);
    CHECK_INT(probe_memcheck_cut(full), ==, 1); /* 758 more were made */
    CHECK_INT(probe_memcheck_count(shared), ==, 1);
    CHECK_INT(probe_memcheck_cut(shared), ==, 0);
    struct buf many = { 0 };
    while (many.len < PROBE_MEMCHECK_READ)
        buf_adds(&many, shared);
    CHECK_INT(probe_memcheck_cut(many.data), ==, 1); /* as much as the runner reads */
    CHECK_INT(probe_memcheck_count(many.data), >, 500);
    buf_release(&many);
    char *first = probe_memcheck_first(full);
    CHECK_STR(first, "Invalid __shared__ write of size 4 bytes");
    free(first);
    CHECK(probe_memcheck_first("========= COMPUTE-SANITIZER\n"
                               "========= Warning: Error buffer overflow has been detected.\n"
                               "========= ERROR SUMMARY: 0 errors\n") == NULL);
}

int main(void)
{
    TEST_RUN(test_probe__ok_when_configurations_ran);
    TEST_RUN(test_probe__old_and_new_probe_lines_are_both_ok);
    TEST_RUN(test_probe__the_kernel_time_is_read_from_a_new_line_and_absent_from_an_old_one);
    TEST_RUN(test_probe__the_budget_is_planned_from_the_kernel_time_when_the_line_has_it);
    TEST_RUN(test_probe__classifies_cuda_errors_by_kind);
    TEST_RUN(test_probe__crash_timeout_and_silent_failures);
    TEST_RUN(test_probe__a_device_that_cannot_be_opened_is_lost_not_the_kernel);
    TEST_RUN(test_probe__sanitizer_verdicts);
    TEST_RUN(test_probe__memcheck_reports_a_plain_run_may_not_see);
    TEST_RUN(test_probe__the_counts_say_how_many_probes_the_fault_budget_stopped);
    return test_done();
}
