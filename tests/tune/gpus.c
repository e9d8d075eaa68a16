/* Tests of GPU discovery parsing, --gpus selection and the clock-locking refusal paths
 * (tune/gpus.c). Clock locking is exercised only against a stand-in NVML library
 * (tests/tune/support/fake_nvml.c): no real card is ever touched by these tests. */
#include "tests/support/test.h"
#include "tune/gpus.h"

#include "common/buf.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>

static const char *helper(const char *name)
{
    static char path[1024];
    const char *tb = getenv("LSCAT_TEST_BIN");
    snprintf(path, sizeof(path), "%s/tune/support/%s", tb && *tb ? tb : "build/tests", name);
    return path;
}

static void two_gpus(struct tune_gpu g[2])
{
    memset(g, 0, 2 * sizeof(*g));
    for (int i = 0; i < 2; i++) {
        g[i].index = i;
        snprintf(g[i].uuid, sizeof(g[i].uuid), "GPU-fake-%d", i);
    }
}

static void test_gpus__parses_a_gpuinfo_line(void)
{
    struct tune_gpu g;
    CHECK_OK(tune_gpus_parse_line(&g, "{\"index\":1,\"gpu\":\"NVIDIA H100\",\"uuid\":\"GPU-a\","
                                      "\"cc\":\"9.0\",\"memory_bytes\":85,\"sm_count\":132,"
                                      "\"cuda_driver\":13000,\"max_sm_mhz\":1980}"));
    CHECK_INT(g.index, ==, 1);
    CHECK_STR(g.name, "NVIDIA H100");
    CHECK_STR(g.cc, "9.0");
    CHECK_INT(g.sm_count, ==, 132);
    CHECK_INT(g.max_sm_mhz, ==, 1980);
    CHECK_INT(tune_gpus_parse_line(&g, "no CUDA device"), ==, LSCAT_EINVALID);
}

static void test_gpus__selects_by_index_and_refuses_unknown_ones(void)
{
    struct tune_gpu g[2];
    two_gpus(g);
    CHECK_INT(tune_gpus_select(g, 2, "all"), ==, 2);
    CHECK_INT(tune_gpus_select(g, 2, "1"), ==, 1);
    CHECK_STR(g[0].uuid, "GPU-fake-1");
    two_gpus(g);
    CHECK_INT(tune_gpus_select(g, 2, "1,0,1"), ==, 2);
    CHECK_STR(g[0].uuid, "GPU-fake-1");
    CHECK_STR(g[1].uuid, "GPU-fake-0");
    two_gpus(g);
    CHECK_INT(tune_gpus_select(g, 2, "2"), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "'2' is not one of the 2");
    CHECK_INT(tune_gpus_select(g, 2, "0,x"), ==, LSCAT_EINVALID);
}

static void test_gpus__discovery_without_helper_says_why(void)
{
    struct tune_gpu *g = NULL;
    char why[512];
    setenv("LSCAT_GPUINFO", "/nonexistent/lscat-gpuinfo", 1);
    CHECK_INT(tune_gpus_discover(&g, why, sizeof(why)), ==, 0);
    CHECK_CONTAINS(why, "missing");
    setenv("LSCAT_GPUINFO", "tests/tune/support/fake_gpuinfo.sh", 1);
    setenv("FAKE_GPUS", "3", 1);
    int n = tune_gpus_discover(&g, why, sizeof(why));
    CHECK_INT(n, ==, 3);
    CHECK_STR(g[2].uuid, "GPU-fake-2");
    free(g);
    unsetenv("LSCAT_GPUINFO");
}

static void test_clocks__without_nvml_locking_fails_cleanly(void)
{
    struct tune_gpu g[2];
    two_gpus(g);
    setenv("LSCAT_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    CHECK_INT(tune_clocks_lock(g, 2, 1400), <, 0);
    CHECK_CONTAINS(lscat_error_last(), "no NVIDIA driver");
    unsetenv("LSCAT_NVML_LIB");
}

static void test_clocks__permission_error_is_reported_and_nothing_stays_locked(void)
{
    struct tune_gpu g[2];
    struct buf log = BUF_INIT;
    char logpath[512];
    two_gpus(g);
    snprintf(logpath, sizeof(logpath), "%s/nvml.log", test_tmpdir());
    setenv("FAKE_NVML_LOG", logpath, 1);
    setenv("LSCAT_NVML_LIB", helper("libfake_nvml.so"), 1);
    CHECK_INT(tune_clocks_lock(g, 2, 1400), <, 0);
    CHECK_CONTAINS(lscat_error_last(), "cannot lock the clocks of GPU 1 (GPU-fake-1)");
    CHECK_CONTAINS(lscat_error_last(), "no permission");
    CHECK_OK(buf_read_file(&log, logpath));
    /* GPU 0 was locked, GPU 1 refused, so GPU 0 was reset again */
    CHECK_STR(log.data, "lock 0 1400\nlock 1 1400\nreset 0 0\n");
    buf_release(&log);
    CHECK_OK(tune_clocks_lock(g, 1, 1400));
    CHECK_OK(tune_clocks_reset(g, 1));
    CHECK_STR(tune_clocks_describe(4), "no permission (locking clocks needs root or an "
                                       "administrator's grant)");
    unsetenv("LSCAT_NVML_LIB");
}

int main(void)
{
    TEST_RUN(test_gpus__parses_a_gpuinfo_line);
    TEST_RUN(test_gpus__selects_by_index_and_refuses_unknown_ones);
    TEST_RUN(test_gpus__discovery_without_helper_says_why);
    TEST_RUN(test_clocks__without_nvml_locking_fails_cleanly);
    TEST_RUN(test_clocks__permission_error_is_reported_and_nothing_stays_locked);
    return test_done();
}
