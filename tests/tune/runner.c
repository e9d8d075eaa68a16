/* Tests of the harness driver (tune/runner.c) against real child processes: a stand-in
 * harness (tests/tune/support/fake_harness.c) that speaks the protocol and crashes, hangs,
 * hits sticky errors or refuses where its .behavior file says. Without a GPU these stand in
 * for the generated harnesses; the real ones are exercised by gpu_* tests on the device. */
#include "tests/support/test.h"
#include "tune/runner.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct seen {
    struct tune_result r[256];
    int n, headers, occ_block;
};

static void on_header(void *ctx, const char *json)
{
    struct seen *s = ctx;
    s->headers += strstr(json, "\"harness\":1") != NULL;
}

static void on_occupancy(void *ctx, int block, int grid)
{
    (void)grid;
    ((struct seen *)ctx)->occ_block = block;
}

static int on_result(void *ctx, const struct tune_result *r)
{
    struct seen *s = ctx;
    if (s->n < 256)
        s->r[s->n++] = *r;
    return 0;
}

/* A private copy of the stand-in harness with the given behaviour; returns its path. */
static const char *fake(const char *behavior)
{
    static char path[1024];
    char cmd[2048];
    const char *tb = getenv("LSCAT_TEST_BIN");
    snprintf(path, sizeof(path), "%s/harness", test_tmpdir());
    snprintf(cmd, sizeof(cmd), "cp %s/tune/support/fake_harness %s",
             tb && *tb ? tb : "build/tests", path);
    CHECK(system(cmd) == 0);
    if (behavior) {
        char bpath[1100];
        snprintf(bpath, sizeof(bpath), "%s.behavior", path);
        test_write_file(bpath, behavior, strlen(behavior));
    }
    return path;
}

static int count_in_log(const char *harness, const char *word)
{
    struct buf b = BUF_INIT;
    char path[1100];
    int n = 0;
    snprintf(path, sizeof(path), "%s.log", harness);
    if (buf_read_file(&b, path) == 0)
        for (const char *p = b.data; (p = strstr(p, word)) != NULL; p++)
            n++;
    buf_release(&b);
    return n;
}

static const struct tune_config cfgs[4] = {
    { 240, 240, 16, 16, 1 }, { 240, 240, 64, 1, 1 }, { 496, 496, 16, 16, 1 }, { 496, 496, 64, 1, 1 },
};

static void run(struct runner_summary *sum, struct seen *s, const char *harness, double timeout_s,
                int max_failures)
{
    struct runner_options o = RUNNER_OPTIONS_INIT;
    struct runner_callbacks cb = { on_header, on_occupancy, on_result, s };
    o.harness = harness;
    o.config_timeout_s = timeout_s;
    o.startup_s = 0;
    o.max_failures = max_failures;
    o.want_occupancy = 1;
    memset(s, 0, sizeof(*s));
    CHECK_OK(runner_run(sum, &o, cfgs, 4, &cb));
}

static void test_runner__one_process_measures_every_configuration(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake(NULL);
    run(&sum, &s, h, 10, 5);
    CHECK_INT(s.n, ==, 4);
    CHECK_INT(sum.ok, ==, 4);
    CHECK_INT(sum.processes, ==, 1);
    CHECK_INT(count_in_log(h, "start"), ==, 1);
    CHECK_INT(s.headers, ==, 1);
    CHECK_INT(s.occ_block, ==, 768);
    CHECK_STR(s.r[3].status, "ok");
    CHECK_INT(s.r[3].cfg.w, ==, 496);
    CHECK_INT(s.r[3].grid[0], ==, (496 * 496 + 63) / 64);
    CHECK(s.r[3].median_ns > 1000);
    CHECK_INT(s.r[3].sm_mhz_before, ==, 1980);
    CHECK(!sum.given_up);
}

static void test_runner__crash_is_recorded_and_the_harness_restarts_at_the_next(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake("crash 240 240 64 1\n");
    run(&sum, &s, h, 10, 5);
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[0].status, "ok");
    CHECK_STR(s.r[1].status, "crashed");
    CHECK_CONTAINS(s.r[1].error, "signal 11");
    CHECK_CONTAINS(s.r[1].error, "about to crash"); /* the output tail */
    CHECK_STR(s.r[2].status, "ok");
    CHECK_INT(sum.processes, ==, 2);
    CHECK_INT(sum.crashes, ==, 1);
    /* the crashing configuration ran once; the restart began at the next one */
    CHECK_INT(count_in_log(h, "cfg 240 240 64 1 1"), ==, 1);
    CHECK_INT(count_in_log(h, "cfg 240 240 16 16 1"), ==, 1);
}

static void test_runner__hang_is_killed_after_the_timeout_and_recorded(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake("hang 496 496 16 16\n");
    double t0 = fs_mono_s();
    run(&sum, &s, h, 0.5, 5);
    double took = fs_mono_s() - t0;
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[2].status, "timeout");
    CHECK_CONTAINS(s.r[2].error, "no result within 0.5 s");
    CHECK_STR(s.r[3].status, "ok");
    CHECK_INT(sum.timeouts, ==, 1);
    CHECK(took > 0.45 && took < 5);
}

static void test_runner__sticky_cuda_error_keeps_the_line_and_restarts(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake("sticky 240 240 16 16\ninvalid 496 496 64 1\n");
    run(&sum, &s, h, 10, 5);
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[0].status, "cuda_error");
    CHECK_CONTAINS(s.r[0].error, "illegal memory access");
    CHECK_STR(s.r[1].status, "ok");
    CHECK_STR(s.r[3].status, "invalid_config");
    CHECK_INT(sum.sticky_errors, ==, 1);
    CHECK_INT(sum.processes, ==, 2);
}

static void test_runner__repeated_failures_give_the_kernel_up(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake("crash * * * *\n");
    run(&sum, &s, h, 10, 2);
    CHECK(sum.given_up);
    CHECK_INT(s.n, ==, 2);
    CHECK_CONTAINS(sum.reason, "2 harness failures (2 crashed");
    CHECK_CONTAINS(sum.reason, "2 of 4 configurations left unmeasured");
}

static void test_runner__a_harness_that_refuses_its_input_is_given_up_at_once(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake("refuse\n");
    run(&sum, &s, h, 10, 5);
    CHECK(sum.given_up);
    CHECK_INT(s.n, ==, 0);
    CHECK_INT(sum.processes, ==, 1);
    CHECK_CONTAINS(sum.reason, "refused");
    CHECK_CONTAINS(sum.reason, "refusing as told");
}

static void test_runner__stop_flag_kills_the_child_and_returns(void)
{
    struct runner_summary sum;
    struct seen s;
    volatile int stop = 1;
    struct runner_options o = RUNNER_OPTIONS_INIT;
    struct runner_callbacks cb = { NULL, NULL, on_result, &s };
    memset(&s, 0, sizeof(s));
    o.harness = fake("hang * * * *\n");
    o.stop = &stop;
    CHECK_OK(runner_run(&sum, &o, cfgs, 4, &cb));
    CHECK(sum.interrupted);
    CHECK_INT(s.n, ==, 0);
}

static void test_runner__a_prestarted_harness_waits_and_is_used(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_options o = RUNNER_OPTIONS_INIT;
    struct runner_callbacks cb = { on_header, on_occupancy, on_result, &s };
    struct runner_child *pre = NULL;
    memset(&s, 0, sizeof(s));
    o.harness = fake(NULL);
    o.want_occupancy = 1;
    CHECK_OK(runner_prestart(&pre, &o, cfgs, 4));
    CHECK(pre != NULL);
    usleep(200 * 1000);
    CHECK_INT(count_in_log(o.harness, "start"), ==, 1); /* started ... */
    CHECK_INT(count_in_log(o.harness, "cfg "), ==, 0);  /* ... and held */
    o.prestarted = pre;
    CHECK_OK(runner_run(&sum, &o, cfgs, 4, &cb));
    CHECK_INT(sum.ok, ==, 4);
    CHECK_INT(s.headers, ==, 1);
    CHECK_INT(s.occ_block, ==, 768);
    CHECK_INT(count_in_log(o.harness, "start"), ==, 1);
    /* one that is never used is killed */
    CHECK_OK(runner_prestart(&pre, &o, cfgs, 4));
    runner_child_free(pre);
}

static void test_runner__a_harness_done_reporting_is_not_waited_for(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake("linger 3000\n");
    double t0 = fs_mono_s();
    run(&sum, &s, h, 10, 5);
    CHECK_INT(sum.ok, ==, 4);
    CHECK(fs_mono_s() - t0 < 2.0);
}

static void test_runner__parses_result_lines_and_ignores_noise(void)
{
    struct tune_result r;
    int ob = 0, og = 0;
    CHECK_INT(runner_parse_line(&r, &ob, &og, "{\"w\":1,\"h\":2,\"block\":[3,4,5],\"grid\":[6,7,8],"
                                              "\"status\":\"ok\",\"median_ns\":9.5}"), ==, 1);
    CHECK_INT(r.cfg.bz, ==, 5);
    CHECK_INT(r.grid[2], ==, 8);
    CHECK(r.median_ns == 9.5);
    CHECK_INT(r.sm_mhz_before, ==, -1); /* absent = unknown */
    CHECK_INT(runner_parse_line(&r, &ob, &og, "{\"occupancy_block\":256,\"occupancy_grid\":528}"),
              ==, 3);
    CHECK_INT(og, ==, 528);
    CHECK_INT(runner_parse_line(&r, &ob, &og, "{\"harness\":1}"), ==, 2);
    CHECK_INT(runner_parse_line(&r, &ob, &og, "hello from printf"), ==, 0);
    CHECK_INT(runner_parse_line(&r, &ob, &og, "{\"w\":1,\"status\":\"ok\"}"), ==, 0);
}

int main(void)
{
    TEST_RUN(test_runner__one_process_measures_every_configuration);
    TEST_RUN(test_runner__crash_is_recorded_and_the_harness_restarts_at_the_next);
    TEST_RUN(test_runner__hang_is_killed_after_the_timeout_and_recorded);
    TEST_RUN(test_runner__sticky_cuda_error_keeps_the_line_and_restarts);
    TEST_RUN(test_runner__repeated_failures_give_the_kernel_up);
    TEST_RUN(test_runner__a_harness_that_refuses_its_input_is_given_up_at_once);
    TEST_RUN(test_runner__stop_flag_kills_the_child_and_returns);
    TEST_RUN(test_runner__a_prestarted_harness_waits_and_is_used);
    TEST_RUN(test_runner__a_harness_done_reporting_is_not_waited_for);
    TEST_RUN(test_runner__parses_result_lines_and_ignores_noise);
    return test_done();
}
