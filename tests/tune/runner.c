/* Tests of the harness driver (tune/runner.c) against real child processes: a stand-in
 * harness (tests/tune/support/fake_harness.c) that speaks the protocol and crashes, hangs,
 * hits sticky errors or refuses where its .behavior file says. Without a GPU these stand in
 * for the generated harnesses; the real ones are exercised by gpu_* tests on the device. */
#include "tests/support/test.h"
#include "tune/runner.h"
#include "tune/runner_proc.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/proc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* A private copy of the stand-in harness (executable and harness.so) with the given behaviour;
 * returns the executable's path. */
static const char *fake(const char *behavior)
{
    static char path[1024];
    static int copies;
    char cmd[4096];
    const char *tb = getenv("LSCAT_TEST_BIN");
    /* a new name each time: a harness that reported everything is left to exit on its own,
     * and copying over a program that still runs fails (ETXTBSY) */
    snprintf(path, sizeof(path), "%s/harness-%d", test_tmpdir(), ++copies);
    snprintf(cmd, sizeof(cmd), "cp %s/tune/support/fake_harness %s && cp "
             "%s/tune/support/fake_harness.so %s.so", tb && *tb ? tb : "build/tests", path,
             tb && *tb ? tb : "build/tests", path);
    CHECK(system(cmd) == 0);
    char bpath[1100];
    snprintf(bpath, sizeof(bpath), "%s.behavior", path);
    test_write_file(bpath, behavior ? behavior : "", behavior ? strlen(behavior) : 0);
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
    struct runner_options o = RUNNER_OPTIONS_INIT;
    struct runner_callbacks cb = { on_header, on_occupancy, on_result, &s };
    o.harness = fake("hang 496 496 16 16\n");
    o.config_timeout_s = 10; /* the hang never ends: the limit only sets how long we wait */
    o.startup_s = 0;
    o.no_deadline_plan = 1;  /* --timeout itself (a plan would shorten it for this fast kernel) */
    memset(&s, 0, sizeof(s));
    double t0 = fs_mono_s();
    CHECK_OK(runner_run(&sum, &o, cfgs, 4, &cb));
    double took = fs_mono_s() - t0;
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[2].status, "timeout");
    CHECK_CONTAINS(s.r[2].error, "no result within 10.0 s: killed");
    CHECK_STR(s.r[3].status, "ok");
    CHECK_INT(sum.timeouts, ==, 1);
    CHECK(took >= 9.9); /* it waited the limit */
}

/* A kernel whose ok configurations take microseconds: a hang is killed after 5 s (5 x what
 * they need, at least 5 s), not after --timeout, and the row says so. */
static void test_runner__a_fast_kernels_hang_is_killed_sooner_than_the_timeout(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake("hang 496 496 16 16\n");
    double t0 = fs_mono_s();
    run(&sum, &s, h, 60, 5); /* the hang never ends */
    double took = fs_mono_s() - t0;
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[2].status, "timeout");
    CHECK_CONTAINS(s.r[2].error, "no result within 5.0 s: killed (a hang of a fast kernel");
    CHECK_CONTAINS(s.r[2].error, "--timeout 60.0 s");
    CHECK_STR(s.r[3].status, "ok");
    CHECK(took >= 4.9);
    CHECK(sum.deadline_shortened >= 1);
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
    /* the shape's larger size is skipped, reported right after the failure */
    CHECK_STR(s.r[1].status, "skipped");
    CHECK_INT(s.r[1].cfg.w, ==, 496);
    CHECK_INT(s.r[1].cfg.bx, ==, 16);
    CHECK_STR(s.r[2].status, "ok");
    CHECK_STR(s.r[3].status, "invalid_config");
    CHECK_INT(sum.sticky_errors, ==, 1);
    CHECK_INT(sum.skipped, ==, 1);
    CHECK_INT(sum.processes, ==, 2);
    CHECK_INT(count_in_log(h, "cfg 496 496 16 16 1"), ==, 0);
}

/* The GPU goes while 496x496 16x16 runs (the stand-in rule `gone_rule`): what that
 * configuration got, and the skips of the shape's larger sizes it would cause, are the device's:
 * the next start says the device is gone, so none of them is recorded; what ran before is. The
 * same failure with the device still there (`stay_rule`) is recorded as `status`, and the run
 * goes on. */
static void check_device_goes(const char *gone_rule, const char *stay_rule, double timeout_s,
                              const char *status)
{
    struct runner_summary sum;
    struct seen s;
    run(&sum, &s, fake(gone_rule), timeout_s, 5);
    CHECK_INT(sum.device_lost, ==, 1);
    CHECK_CONTAINS(sum.reason, "no CUDA-capable device is detected");
    CHECK_INT(s.n, ==, 2); /* the two configurations at 240 */
    CHECK_STR(s.r[0].status, "ok");
    CHECK_STR(s.r[1].status, "ok");
    CHECK_INT(sum.processes, ==, 2);
    run(&sum, &s, fake(stay_rule), timeout_s, 5);
    CHECK_INT(sum.device_lost, ==, 0);
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[2].status, status);
    CHECK_STR(s.r[3].status, "ok");
}

/* A sticky error line as the GPU goes (docs/tune.md "A device that goes"). */
static void test_runner__a_failure_the_device_caused_is_not_recorded(void)
{
    check_device_goes("gone 496 496 16 16\n", "sticky 496 496 16 16\n", 10, "cuda_error");
}

/* A GPU that goes away can leave the configuration in flight hanging until its deadline (two
 * real H200s did: sessions 19 and 23). That timeout is the device's too when the next start
 * finds it gone. (5 s: a hang never ends; the ok configurations take microseconds.) */
static void test_runner__a_timeout_the_device_caused_is_not_recorded(void)
{
    check_device_goes("gonehang 496 496 16 16\n", "hang 496 496 16 16\n", 5, "timeout");
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

static int has_started(void *harness)
{
    return count_in_log(harness, "start") == 1;
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
    CHECK(test_wait_until(has_started, (void *)o.harness)); /* started ... */
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
    const char *h = fake("linger 3600000\n"); /* an hour: waiting for it would be seen */
    double t0 = fs_mono_s();
    run(&sum, &s, h, 10, 5);
    struct buf b = BUF_INIT;
    char path[1100];
    const char *st;
    snprintf(path, sizeof(path), "%s.log", h);
    CHECK_OK(buf_read_file(&b, path));
    st = strstr(b.data, "start ");
    if (st)
        kill(atoi(st + 6), SIGKILL); /* the lingerer, left to exit on its own, is ours to end */
    buf_release(&b);
    CHECK_INT(sum.ok, ==, 4);
    CHECK(st != NULL);
    CHECK(fs_mono_s() - t0 < TEST_PATIENCE_S);
}

/* 3 sizes x (one 2D, two 1D shapes), sizes outer, as tune_space makes them. */
static const struct tune_config cfgs9[9] = {
    { 240, 240, 16, 16, 1 }, { 240, 240, 64, 1, 1 }, { 240, 240, 128, 1, 1 },
    { 496, 496, 16, 16, 1 }, { 496, 496, 64, 1, 1 }, { 496, 496, 128, 1, 1 },
    { 784, 784, 16, 16, 1 }, { 784, 784, 64, 1, 1 }, { 784, 784, 128, 1, 1 },
};

static int count_status(const struct seen *s, const char *status)
{
    int n = 0;
    for (int i = 0; i < s->n; i++)
        n += strcmp(s->r[i].status, status) == 0;
    return n;
}

static void run9(struct runner_summary *sum, struct seen *s, const char *harness,
                 int max_failures, const struct tune_skip *skips, int nskips,
                 struct runner_host *host)
{
    char so[1100];
    struct runner_options o = RUNNER_OPTIONS_INIT;
    struct runner_callbacks cb = { on_header, on_occupancy, on_result, s };
    snprintf(so, sizeof(so), "%s.so", harness);
    o.harness = harness;
    o.config_timeout_s = 10;
    o.startup_s = 0.5;
    o.max_failures = max_failures;
    o.skips = skips;
    o.nskips = nskips;
    o.host = host;
    o.harness_so = host ? so : NULL;
    memset(s, 0, sizeof(*s));
    CHECK_OK(runner_run(sum, &o, cfgs9, 9, &cb));
}

/* A 2D kernel with a fixed shared tile faults with every 1D block (the stand-in fails stickily
 * for by == 1): each 1D shape fails once, at the smallest size, without counting toward
 * max_failures (2 here, less than the two shapes), and is skipped at the larger sizes; the 2D
 * shape is measured at every size. */
static void test_runner__a_shape_that_fails_stickily_is_skipped_at_larger_sizes(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake("sticky * * * 1\n");
    run9(&sum, &s, h, 2, NULL, 0, NULL);
    CHECK(!sum.given_up);
    CHECK_INT(s.n, ==, 9);
    CHECK_INT(count_status(&s, "ok"), ==, 3);
    CHECK_INT(count_status(&s, "cuda_error"), ==, 2);
    CHECK_INT(count_status(&s, "skipped"), ==, 4);
    CHECK_INT(sum.skipped, ==, 4);
    CHECK_INT(sum.shapes_failed, ==, 2);
    CHECK_INT(sum.processes, ==, 3);
    CHECK_INT(count_in_log(h, "cfg 496 496 64 1 1"), ==, 0);
    CHECK_INT(count_in_log(h, "cfg 784 784 128 1 1"), ==, 0);
    CHECK_INT(count_in_log(h, "cfg 784 784 16 16 1"), ==, 1);
    for (int i = 0; i < s.n; i++)
        if (!strcmp(s.r[i].status, "skipped")) {
            CHECK_INT(s.r[i].cfg.by, ==, 1);
            CHECK(s.r[i].cfg.w > 240);
            CHECK_CONTAINS(s.r[i].error, "failed with a sticky CUDA error at 240x240: an "
                                         "illegal memory access was encountered");
            struct tune_skip back;
            CHECK_INT(tune_skip_parse(&back, &s.r[i].cfg, s.r[i].error), ==, 1);
            CHECK_INT(back.at.w, ==, 240);
            CHECK_INT(back.at.bx, ==, s.r[i].cfg.bx);
            CHECK_STR(back.error, "an illegal memory access was encountered");
        }
}

/* Only a shape's first sticky failure is free: crashes count, and so does a shape failing
 * again at a size its rule does not cover (sizes listed largest first). */
static void test_runner__crashes_and_repeated_sticky_failures_still_count(void)
{
    struct runner_summary sum;
    struct seen s;
    run9(&sum, &s, fake("crash * * * 1\n"), 2, NULL, 0, NULL);
    CHECK(sum.given_up);
    CHECK_INT(count_status(&s, "crashed"), ==, 2);
    CHECK_INT(count_status(&s, "skipped"), ==, 0);
    CHECK_CONTAINS(sum.reason, "2 harness failures (2 crashed");
    static const struct tune_config desc[3] = {
        { 496, 496, 64, 1, 1 }, { 240, 240, 64, 1, 1 }, { 240, 240, 16, 16, 1 },
    };
    struct runner_options o = RUNNER_OPTIONS_INIT;
    struct runner_callbacks cb = { NULL, NULL, on_result, &s };
    memset(&s, 0, sizeof(s));
    o.harness = fake("sticky * * 64 1\n");
    o.max_failures = 1;
    CHECK_OK(runner_run(&sum, &o, desc, 3, &cb));
    CHECK(sum.given_up); /* the second failure of 64x1x1 (at 240, below 496) counted */
    CHECK_INT(s.n, ==, 2);
    CHECK_CONTAINS(sum.reason, "1 harness failures (0 crashed, 0 timed out, 1 sticky");
    CHECK_CONTAINS(sum.reason, "not counted");
}

/* Rules known from an earlier run (the store's skipped rows) apply from the start: the shape
 * never runs at the sizes they cover. */
static void test_runner__skips_known_before_the_run_apply_at_once(void)
{
    struct runner_summary sum;
    struct seen s;
    struct tune_skip known;
    const struct tune_config at = { 496, 496, 64, 1, 1 };
    CHECK_INT(tune_skip_parse(&known, &at, "block 64x1x1 failed with a sticky CUDA error at "
                                           "240x240: an illegal memory access was encountered"),
              ==, 1);
    const char *h = fake(NULL);
    run9(&sum, &s, h, 5, &known, 1, NULL);
    CHECK_INT(s.n, ==, 9);
    CHECK_INT(count_status(&s, "skipped"), ==, 3); /* 64x1x1 at 240 too: at or above */
    CHECK_INT(count_status(&s, "ok"), ==, 6);
    CHECK_INT(count_in_log(h, "cfg 240 240 64 1 1"), ==, 0);
    CHECK_INT(sum.processes, ==, 1);
    CHECK_INT(tune_skip_parse(&known, &at, "an illegal memory access"), ==, 0);
    CHECK_INT(known.at.w, ==, 496); /* not one of ours: the row's own size */
}

/* ---- lscat-runner: the real program, host-only (LSCAT_RUNNER_NO_CUDA=1), loading the
 * stand-in's harness.so build; a crash of a configuration is a real signal in the runner. */

/* The output check's reference block faults at 496x496: the configuration in flight is not
 * the one at fault, so it runs again, with the rest of that size, without the check. */
static void test_runner__a_failing_reference_block_turns_the_check_off_not_the_configuration(void)
{
    struct runner_summary sum;
    struct seen s;
    const char *h = fake("badref 496 496 * *\n");
    run(&sum, &s, h, 10, 5);
    CHECK_INT(s.n, ==, 4);
    for (int i = 0; i < s.n && i < 4; i++)
        CHECK_STR(s.r[i].status, "ok");
    CHECK_STR(s.r[0].check, "match");
    CHECK_STR(s.r[1].check, "match");
    CHECK_STR(s.r[2].check, "not_checked");
    CHECK_CONTAINS(s.r[2].check_why, "the reference block 256x1x1 failed at 496x496");
    CHECK_CONTAINS(s.r[3].check_why, "the check is off from that size on");
    CHECK_INT(s.r[2].cfg.w, ==, 496);
    CHECK_INT(s.r[2].cfg.bx, ==, 16);
    CHECK_INT(sum.ref_failures, ==, 1);
    CHECK_INT(sum.sticky_errors, ==, 0);
    CHECK_INT(sum.skipped, ==, 0);
    CHECK_INT(sum.given_up, ==, 0);
    CHECK_INT(sum.processes, ==, 2);
    CHECK_INT(count_in_log(h, "cfg 496 496 16 16 1"), ==, 2); /* once failed, once measured */
}

/* A kernel that faults at 496 whatever its block: the reference block fails there, then the
 * two shapes run after it (--size-faults 2), so the size's third shape is not run but recorded
 * `skipped` saying why; the shapes that failed are skipped at 784 as usual, and 784's third
 * shape runs (unchecked). With --size-faults 0 the third shape at 496 faults as well. */
static void size_faults_case(int off)
{
    {
        struct runner_summary sum;
        struct seen s;
        struct runner_options o = RUNNER_OPTIONS_INIT;
        struct runner_callbacks cb = { on_header, on_occupancy, on_result, &s };
        const char *h = fake("badfault 496 496 * *\n");
        o.harness = h;
        o.config_timeout_s = 10;
        o.startup_s = 0.5;
        o.max_failures = 5;
        o.size_faults = off ? 0 : 2;
        memset(&s, 0, sizeof(s));
        CHECK_OK(runner_run(&sum, &o, cfgs9, 9, &cb));
        CHECK(!sum.given_up);
        CHECK_INT(s.n, ==, 9);
        CHECK_INT(count_status(&s, "ok"), ==, off ? 3 : 4);
        /* reported in this order: a shape's skips at 784 as soon as it failed at 496 */
        static const char *want[2][9] = {
            { "ok", "ok", "ok", "cuda_error", "skipped", "cuda_error", "skipped", "skipped", "ok" },
            { "ok", "ok", "ok", "cuda_error", "skipped", "cuda_error", "skipped", "cuda_error",
              "skipped" },
        };
        for (int j = 0; j < s.n && j < 9; j++)
            CHECK_STR(s.r[j].status, want[off][j]);
        CHECK_INT(s.r[7].cfg.w, ==, 496);
        CHECK_INT(s.r[7].cfg.bx, ==, 128);
        CHECK_INT(count_in_log(h, "cfg 496 496 128 1 1"), ==, off ? 1 : 0);
        if (!off) {
            CHECK_CONTAINS(s.r[7].error, "the reference block 256x1x1 failed at 496x496");
            CHECK_CONTAINS(s.r[7].error, "at 496x496 the 2 shapes run since failed");
            CHECK_CONTAINS(s.r[7].error, "--size-faults 2");
        }
        CHECK_INT(sum.sizes_skipped, ==, off ? 0 : 1);
        CHECK_CONTAINS(s.r[4].error, "block 16x16x1 failed with a sticky CUDA error at 496x496");
        CHECK_INT(s.r[8].cfg.w, ==, 784);
        if (!off)
            CHECK_STR(s.r[8].check, "not_checked");
        CHECK_INT(sum.ref_failures, ==, 1);
    }
}

static void test_runner__a_size_where_the_reference_and_every_shape_fault_is_cut_short(void)
{
    size_faults_case(0);
}

static void test_runner__size_faults_0_runs_every_shape_of_such_a_size(void)
{
    size_faults_case(1);
}

static char runner_prog[1024];

static struct runner_host *host(int max_kernels)
{
    struct runner_host *h = NULL;
    CHECK_OK(runner_host_new(&h, runner_prog, NULL, 0, max_kernels));
    return h;
}

static void run_host(struct runner_summary *sum, struct seen *s, struct runner_host *h,
                     const char *harness, double timeout_s, int max_failures)
{
    char so[1100];
    struct runner_options o = RUNNER_OPTIONS_INIT;
    struct runner_callbacks cb = { on_header, on_occupancy, on_result, s };
    snprintf(so, sizeof(so), "%s.so", harness);
    o.harness = harness;
    o.harness_so = so;
    o.host = h;
    o.config_timeout_s = timeout_s;
    o.startup_s = 0.5;
    o.max_failures = max_failures;
    o.want_occupancy = 1;
    memset(s, 0, sizeof(*s));
    CHECK_OK(runner_run(sum, &o, cfgs, 4, &cb));
}

/* How many distinct pids the stand-in logged as "start <pid>". */
static int distinct_starts(const char *harness)
{
    struct buf b = BUF_INIT;
    char path[1100];
    int pids[64], n = 0;
    snprintf(path, sizeof(path), "%s.log", harness);
    if (buf_read_file(&b, path) == 0)
        for (const char *p = b.data; (p = strstr(p, "start ")) != NULL; p++) {
            int pid = atoi(p + 6), k = 0;
            while (k < n && pids[k] != pid)
                k++;
            if (k == n && n < 64)
                pids[n++] = pid;
        }
    buf_release(&b);
    return n;
}

static void test_runner_host__kernels_run_one_after_another_in_one_process(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    const char *hp = fake(NULL);
    for (int k = 0; k < 3; k++) {
        run_host(&sum, &s, h, hp, 10, 5);
        CHECK_INT(sum.ok, ==, 4);
        CHECK_INT(s.headers, ==, 1);
        CHECK_INT(s.occ_block, ==, 768);
        CHECK(sum.in_runner && !sum.fell_back);
        CHECK_INT(sum.processes, ==, k == 0 ? 1 : 0); /* started once */
    }
    CHECK_INT(count_in_log(hp, "start"), ==, 3);
    CHECK_INT(distinct_starts(hp), ==, 1); /* three kernels, one process */
    CHECK_INT(count_in_log(hp, "cfg 496 496 64 1 1"), ==, 3);
    runner_host_free(h);
}

static void test_runner_host__crash_kills_the_runner_and_a_new_one_takes_the_next(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    const char *hp = fake("crash 240 240 64 1\n");
    run_host(&sum, &s, h, hp, 10, 5);
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[0].status, "ok");
    CHECK_STR(s.r[1].status, "crashed");
    CHECK_CONTAINS(s.r[1].error, "signal 11");
    CHECK_CONTAINS(s.r[1].error, "about to crash"); /* the output tail */
    CHECK_STR(s.r[2].status, "ok");
    CHECK_STR(s.r[3].status, "ok");
    CHECK_INT(sum.crashes, ==, 1);
    CHECK_INT(sum.processes, ==, 2);
    CHECK_INT(distinct_starts(hp), ==, 2);
    CHECK_INT(count_in_log(hp, "cfg 240 240 64 1 1"), ==, 1);
    /* the replacement goes on serving kernels */
    run_host(&sum, &s, h, fake(NULL), 10, 5);
    CHECK_INT(sum.ok, ==, 4);
    CHECK_INT(sum.processes, ==, 0);
    runner_host_free(h);
}

static void test_runner__a_long_kernel_gets_a_deadline_planned_from_its_smaller_sizes(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_options o = RUNNER_OPTIONS_INIT;
    struct runner_callbacks cb = { on_header, on_occupancy, on_result, &s };
    /* 60 ms a launch at 240x240, 256 ms at 496x496: three launches (0.77 s) overrun the
     * 0.5 s timeout, which the smaller size's time predicts */
    o.harness = fake("long 60\n");
    o.config_timeout_s = 0.5;
    o.startup_s = 5;
    o.budget_s = 1;
    memset(&s, 0, sizeof(s));
    CHECK_OK(runner_run(&sum, &o, cfgs, 4, &cb));
    CHECK_INT(s.n, ==, 4);
    for (int k = 0; k < 4; k++)
        CHECK_STR(s.r[k].status, "ok");
    CHECK_INT(sum.timeouts, ==, 0);
    /* every configuration after the first: even at 240x240 warm-up, calibration and 10
     * samples of 60 ms, with the margin, need more than 0.5 s */
    CHECK_INT(sum.deadline_extended, ==, 3);
    CHECK_INT(sum.budget_cut, ==, 4);        /* samples 1 of 10 planned, each recorded */
    CHECK_INT(s.r[3].samples, ==, 1);
}

static void test_runner__the_deadline_plan_extrapolates_and_is_bounded(void)
{
    struct runner_summary sum;
    memset(&sum, 0, sizeof(sum));
    struct tune_config next = { 2024, 2024, 256, 1, 1 };
    CHECK(runner_config_timeout(&sum, &next, 30) == 30); /* nothing measured: the timeout */
    sum.slow_area = 1680.0 * 1680.0;
    sum.slow_ns = 1e6; /* 1 ms: far within the timeout */
    /* 1 ms: 2.1 ms at 2024 (quadratic), 10 samples: 2 x (4.2 + 21) ms + 1 s = 1.05 s; a hang
     * is seen after 5 x that (5.25 s) instead of the 30 s timeout */
    double sh = runner_config_timeout(&sum, &next, 30);
    CHECK(sh > 5.2 && sh < 5.3);
    CHECK_INT(sum.deadline_shortened, ==, 1);
    CHECK(runner_config_timeout(&sum, &next, 5) == 5); /* never above --timeout */
    CHECK_INT(sum.deadline_extended, ==, 0);
    sum.slow_ns = 1.3e9; /* 1.3 s at 1680: 2.74 s at 2024 (quadratic in the area) */
    sum.samples = 10;
    sum.budget_s = 10;   /* the core takes 3 samples: 2 x (2 x 2.74 + 10) + 1 = 32 s */
    double t = runner_config_timeout(&sum, &next, 30);
    CHECK(t > 31.5 && t < 32.5);
    CHECK_INT(sum.deadline_extended, ==, 1);
    sum.budget_s = 0;    /* 10 samples: 66.8 s */
    t = runner_config_timeout(&sum, &next, 30);
    CHECK(t > 66 && t < 67.5);
    sum.slow_ns = 60e9;  /* a minute per launch: at most 4 x the timeout */
    CHECK(runner_config_timeout(&sum, &next, 30) == 120);
}

static void test_runner_host__after_a_crash_the_spare_takes_the_next_configuration(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    runner_host_set_spare(h, RUNNER_SPARE_EAGER);
    const char *hp = fake("crash 240 240 64 1\n");
    CHECK_OK(runner_host_start(h));
    usleep(500 * 1000); /* the spare says @ready meanwhile */
    run_host(&sum, &s, h, hp, 10, 5);
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[1].status, "crashed");
    CHECK_STR(s.r[2].status, "ok");
    CHECK_STR(s.r[3].status, "ok");
    CHECK_INT(runner_host_spares_taken(h), ==, 1);
    CHECK_INT(distinct_starts(hp), ==, 2); /* the crashed runner, then the spare */
    /* a spare of the spare was started: a second crash is taken over too */
    usleep(500 * 1000);
    run_host(&sum, &s, h, fake("crash 240 240 64 1\n"), 10, 5);
    CHECK_STR(s.r[2].status, "ok");
    CHECK_INT(runner_host_spares_taken(h), ==, 2);
    runner_host_free(h);
}

/* The spare is started only once the runner in use holds its context (@ready): a host's
 * contexts are made one at a time by the driver, so a spare started at once delays the first
 * kernel (docs/tune.md "Multi-GPU scaling (#20), session 26"). A wrapper stands for the
 * context's time: it logs its start and waits 0.5 s before the runner can say @ready. */
static void test_runner_host__the_spare_starts_once_the_runner_in_use_is_ready(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = NULL;
    char slow[1100], log[1100], script[3000];
    snprintf(slow, sizeof(slow), "%s/slow-runner", test_tmpdir());
    snprintf(log, sizeof(log), "%s/slow-runner.log", test_tmpdir());
    int n = snprintf(script, sizeof(script),
                     "#!/bin/sh\necho \"$(date +%%s.%%N) $$\" >> '%s'\nsleep 0.5\nexec '%s' \"$@\"\n",
                     log, runner_prog);
    test_write_file(slow, script, (size_t)n);
    CHECK(chmod(slow, 0755) == 0);
    CHECK_OK(runner_host_new(&h, slow, NULL, 0, 0));
    runner_host_set_spare(h, RUNNER_SPARE_EAGER);
    CHECK_OK(runner_host_start(h));
    run_host(&sum, &s, h, fake("crash 240 240 64 1\n"), 10, 5);
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[1].status, "crashed");
    CHECK_STR(s.r[3].status, "ok");
    CHECK_INT(runner_host_spares_taken(h), ==, 1);
    runner_host_free(h);
    struct buf b = BUF_INIT;
    double t[3] = { 0, 0, 0 };
    int k = 0;
    CHECK_OK(buf_read_file(&b, log));
    for (const char *p = b.data; p && *p && k < 3; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        t[k++] = atof(p);
    buf_release(&b);
    CHECK(k >= 2); /* the first runner, its spare (which took over and may have its own) */
    /* the spare began after the first runner's 0.5 s, never beside it */
    CHECK(t[1] - t[0] >= 0.5);
}

/* tune's default (RUNNER_SPARE_AFTER_FAULT): no spare while nothing broke, for a context made
 * beside a measuring kernel slows it (docs/tune.md "Multi-GPU scaling (#20), session 27");
 * after the first crash the fresh runner gets one, which takes the next crash over. */
static void test_runner_host__a_spare_starts_only_after_a_fault(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    runner_host_set_spare(h, RUNNER_SPARE_AFTER_FAULT);
    CHECK_OK(runner_host_start(h));
    const char *ok = fake(NULL);
    run_host(&sum, &s, h, ok, 10, 5);
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[3].status, "ok");
    CHECK_INT(runner_host_has_spare(h), ==, 0); /* a fault-free kernel: no spare */
    CHECK_INT(distinct_starts(ok), ==, 1);
    run_host(&sum, &s, h, fake("crash 240 240 64 1\n"), 10, 5);
    CHECK_STR(s.r[1].status, "crashed");
    CHECK_STR(s.r[2].status, "ok");
    CHECK_INT(runner_host_spares_taken(h), ==, 0); /* there was none to take over */
    CHECK_INT(runner_host_has_spare(h), ==, 1);    /* the fresh runner's, once it was ready */
    run_host(&sum, &s, h, fake("crash 240 240 64 1\n"), 10, 5);
    CHECK_STR(s.r[2].status, "ok");
    CHECK_INT(runner_host_spares_taken(h), ==, 1);
    runner_host_free(h);
    /* RUNNER_SPARE_EAGER: one beside the first runner, with no fault */
    h = host(0);
    runner_host_set_spare(h, RUNNER_SPARE_EAGER);
    CHECK_OK(runner_host_start(h));
    run_host(&sum, &s, h, fake(NULL), 10, 5);
    CHECK_INT(runner_host_has_spare(h), ==, 1);
    runner_host_free(h);
}

static void test_runner_host__hang_is_killed_and_recorded_as_timeout(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    run_host(&sum, &s, h, fake("hang 496 496 16 16\n"), 10, 5); /* a hang never ends */
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[2].status, "timeout");
    /* its ok configurations take microseconds: killed after 5 s, not the 10 s timeout */
    CHECK_CONTAINS(s.r[2].error, "no result within 5.0 s: killed (a hang of a fast kernel");
    CHECK_STR(s.r[3].status, "ok");
    CHECK_INT(sum.timeouts, ==, 1);
    CHECK_INT(sum.processes, ==, 2);
    runner_host_free(h);
}

static void test_runner_host__a_failing_reference_block_turns_the_check_off_in_the_next_runner(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    const char *hp = fake("badref 240 240 * *\n");
    run_host(&sum, &s, h, hp, 10, 5);
    CHECK_INT(s.n, ==, 4);
    for (int i = 0; i < s.n && i < 4; i++) {
        CHECK_STR(s.r[i].status, "ok");
        CHECK_STR(s.r[i].check, "not_checked");
        CHECK_CONTAINS(s.r[i].check_why, "failed at 240x240");
    }
    CHECK_INT(sum.ref_failures, ==, 1);
    CHECK_INT(sum.given_up, ==, 0);
    CHECK_INT(distinct_starts(hp), ==, 2);
    runner_host_free(h);
}

static void test_runner_host__sticky_error_ends_the_runner_and_the_kernel_goes_on(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    const char *hp = fake("sticky 240 240 16 16\ninvalid 496 496 64 1\n");
    run_host(&sum, &s, h, hp, 10, 5);
    CHECK_INT(s.n, ==, 4);
    CHECK_STR(s.r[0].status, "cuda_error");
    CHECK_CONTAINS(s.r[0].error, "illegal memory access");
    CHECK_STR(s.r[1].status, "skipped");
    CHECK_STR(s.r[2].status, "ok");
    CHECK_STR(s.r[3].status, "invalid_config");
    CHECK_INT(sum.sticky_errors, ==, 1);
    CHECK_INT(sum.processes, ==, 2);
    CHECK_INT(distinct_starts(hp), ==, 2);
    runner_host_free(h);
}

/* The same in lscat-runner: the runner after the sticky error finds the device gone. */
static void test_runner_host__a_failure_the_device_caused_is_not_recorded(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    const char *hp = fake("gone 240 240 16 16\n");
    run_host(&sum, &s, h, hp, 10, 5);
    CHECK_INT(sum.device_lost, ==, 1);
    CHECK_INT(s.n, ==, 0); /* neither the error nor the skip of 496x496 16x16 */
    runner_host_free(h);
}

/* The same in lscat-runner: the configuration hangs as the device goes; the runner started
 * after the timeout finds no device. */
static void test_runner_host__a_timeout_the_device_caused_is_not_recorded(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    run_host(&sum, &s, h, fake("gonehang 240 240 64 1\n"), 5, 5);
    CHECK_INT(sum.device_lost, ==, 1);
    CHECK_INT(s.n, ==, 1); /* 240x240 16x16 ran first; the timeout after it is not recorded */
    CHECK_STR(s.r[0].status, "ok");
    runner_host_free(h);
}

static void test_runner_host__a_shape_that_fails_stickily_is_skipped_at_larger_sizes(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    const char *hp = fake("sticky * * * 1\n");
    run9(&sum, &s, hp, 2, NULL, 0, h);
    CHECK(sum.in_runner && !sum.fell_back);
    CHECK(!sum.given_up);
    CHECK_INT(count_status(&s, "ok"), ==, 3);
    CHECK_INT(count_status(&s, "cuda_error"), ==, 2);
    CHECK_INT(count_status(&s, "skipped"), ==, 4);
    CHECK_INT(distinct_starts(hp), ==, 3); /* a fresh runner after each sticky error */
    runner_host_free(h);
}

static void test_runner_host__repeated_failures_and_refusals_give_the_kernel_up(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    run_host(&sum, &s, h, fake("crash * * * *\n"), 10, 2);
    CHECK(sum.given_up);
    CHECK_INT(s.n, ==, 2);
    CHECK_CONTAINS(sum.reason, "2 harness failures (2 crashed");
    run_host(&sum, &s, h, fake("refuse\n"), 10, 5);
    CHECK(sum.given_up);
    CHECK_INT(s.n, ==, 0);
    CHECK_CONTAINS(sum.reason, "refused");
    CHECK_CONTAINS(sum.reason, "refusing as told");
    runner_host_free(h);
}

static void test_runner_host__a_harness_so_that_cannot_load_runs_as_a_process(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(0);
    const char *hp = fake(NULL);
    char so[1100];
    snprintf(so, sizeof(so), "%s.so", hp);
    test_write_file(so, "not an ELF file", 15);
    run_host(&sum, &s, h, hp, 10, 5);
    CHECK(sum.fell_back);
    CHECK_CONTAINS(sum.reason, "lscat-runner:");
    CHECK_INT(sum.ok, ==, 4);
    CHECK_INT(s.headers, ==, 1);
    CHECK_INT(s.occ_block, ==, 768);
    CHECK_INT(count_in_log(hp, "start"), ==, 1); /* the executable, once */
    CHECK(!runner_host_broken(h));
    runner_host_free(h);
}

static void test_runner_host__a_runner_that_cannot_start_is_not_used_again(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = NULL;
    const char *hp = fake(NULL);
    char bad[1100];
    snprintf(bad, sizeof(bad), "%s/bad-runner", test_tmpdir());
    test_write_file(bad, "#!/bin/sh\necho no CUDA device here >&2\nexit 3\n", 45);
    CHECK(chmod(bad, 0755) == 0);
    CHECK_OK(runner_host_new(&h, bad, NULL, 0, 0));
    run_host(&sum, &s, h, hp, 10, 5);
    CHECK(sum.fell_back);
    CHECK_CONTAINS(sum.reason, "no CUDA device here");
    CHECK_INT(sum.ok, ==, 4);
    CHECK(runner_host_broken(h));
    runner_host_free(h);
}

static void test_runner_host__is_recycled_after_max_kernels(void)
{
    struct runner_summary sum;
    struct seen s;
    struct runner_host *h = host(2);
    const char *hp = fake(NULL);
    int started = 0;
    for (int k = 0; k < 5; k++) {
        run_host(&sum, &s, h, hp, 10, 5);
        CHECK_INT(sum.ok, ==, 4);
        started += sum.processes;
    }
    CHECK_INT(started, ==, 3);
    CHECK_INT(distinct_starts(hp), ==, 3);
    runner_host_free(h);
}

static void test_runner_host__stop_flag_kills_the_runner_and_returns(void)
{
    struct runner_summary sum;
    struct seen s;
    volatile int stop = 0;
    struct runner_host *h = host(0);
    struct runner_options o = RUNNER_OPTIONS_INIT;
    struct runner_callbacks cb = { NULL, NULL, on_result, &s };
    char so[1100];
    memset(&s, 0, sizeof(s));
    o.harness = fake("hang * * * *\n");
    snprintf(so, sizeof(so), "%s.so", o.harness);
    o.harness_so = so;
    o.host = h;
    o.stop = &stop;
    stop = 1;
    CHECK_OK(runner_run(&sum, &o, cfgs, 4, &cb));
    CHECK(sum.interrupted);
    CHECK_INT(s.n, ==, 0);
    runner_host_free(h);
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
    snprintf(runner_prog, sizeof(runner_prog), "%s/lscat-runner", test_bin_dir());
    setenv("LSCAT_RUNNER_NO_CUDA", "1", 1);
    TEST_RUN(test_runner__one_process_measures_every_configuration);
    TEST_RUN(test_runner__crash_is_recorded_and_the_harness_restarts_at_the_next);
    TEST_RUN(test_runner__hang_is_killed_after_the_timeout_and_recorded);
    TEST_RUN(test_runner__sticky_cuda_error_keeps_the_line_and_restarts);
    TEST_RUN(test_runner__a_failure_the_device_caused_is_not_recorded);
    TEST_RUN(test_runner__a_timeout_the_device_caused_is_not_recorded);
    TEST_RUN(test_runner__repeated_failures_give_the_kernel_up);
    TEST_RUN(test_runner__a_shape_that_fails_stickily_is_skipped_at_larger_sizes);
    TEST_RUN(test_runner__crashes_and_repeated_sticky_failures_still_count);
    TEST_RUN(test_runner__a_fast_kernels_hang_is_killed_sooner_than_the_timeout);
    TEST_RUN(test_runner__a_failing_reference_block_turns_the_check_off_not_the_configuration);
    TEST_RUN(test_runner__a_size_where_the_reference_and_every_shape_fault_is_cut_short);
    TEST_RUN(test_runner__size_faults_0_runs_every_shape_of_such_a_size);
    TEST_RUN(test_runner__skips_known_before_the_run_apply_at_once);
    TEST_RUN(test_runner__a_harness_that_refuses_its_input_is_given_up_at_once);
    TEST_RUN(test_runner__stop_flag_kills_the_child_and_returns);
    TEST_RUN(test_runner__a_prestarted_harness_waits_and_is_used);
    TEST_RUN(test_runner__a_harness_done_reporting_is_not_waited_for);
    TEST_RUN(test_runner__parses_result_lines_and_ignores_noise);
    TEST_RUN(test_runner_host__kernels_run_one_after_another_in_one_process);
    TEST_RUN(test_runner_host__crash_kills_the_runner_and_a_new_one_takes_the_next);
    TEST_RUN(test_runner__a_long_kernel_gets_a_deadline_planned_from_its_smaller_sizes);
    TEST_RUN(test_runner__the_deadline_plan_extrapolates_and_is_bounded);
    TEST_RUN(test_runner_host__after_a_crash_the_spare_takes_the_next_configuration);
    TEST_RUN(test_runner_host__the_spare_starts_once_the_runner_in_use_is_ready);
    TEST_RUN(test_runner_host__a_spare_starts_only_after_a_fault);
    TEST_RUN(test_runner_host__hang_is_killed_and_recorded_as_timeout);
    TEST_RUN(test_runner_host__sticky_error_ends_the_runner_and_the_kernel_goes_on);
    TEST_RUN(test_runner_host__a_failure_the_device_caused_is_not_recorded);
    TEST_RUN(test_runner_host__a_timeout_the_device_caused_is_not_recorded);
    TEST_RUN(test_runner_host__a_failing_reference_block_turns_the_check_off_in_the_next_runner);
    TEST_RUN(test_runner_host__a_shape_that_fails_stickily_is_skipped_at_larger_sizes);
    TEST_RUN(test_runner_host__repeated_failures_and_refusals_give_the_kernel_up);
    TEST_RUN(test_runner_host__a_harness_so_that_cannot_load_runs_as_a_process);
    TEST_RUN(test_runner_host__a_runner_that_cannot_start_is_not_used_again);
    TEST_RUN(test_runner_host__is_recycled_after_max_kernels);
    TEST_RUN(test_runner_host__stop_flag_kills_the_runner_and_returns);
    return test_done();
}
