/* Probes in a long-lived lscat-runner (execute/probe_runner.c) against the real lscat-runner in
 * the real sandbox (the fallback a GPU node gets: no bubblewrap), host-only
 * (LSCAT_RUNNER_NO_CUDA=1), loading tune's stand-in harness built as harness.so. */
#include "common/buf.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/probe.h"
#include "execute/probe_runner.h"
#include "execute/sandbox.h"
#include "tests/support/test.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int counter;

/* A folder holding the stand-in as `harness` and (unless no_so) `harness.so`, behaving as
 * `behavior` says. */
static char *harness_with(char **out_harness, const char *behavior, int no_so)
{
    const char *tb = getenv("LSCAT_TEST_BIN");
    char *dir = xasprintf("%s/h%d", test_tmpdir(), counter++);
    chmod(test_tmpdir(), 0755);
    CHECK(fs_mkdirs(dir, 0755) == 0);
    *out_harness = fs_join(dir, "harness");
    char *cmd = xasprintf("cp %1$s/tune/support/fake_harness %2$s && %3$s "
                          "cp %1$s/tune/support/fake_harness.so %2$s.so",
                          tb && *tb ? tb : "build/tests", *out_harness, no_so ? "true ||" : "");
    CHECK(system(cmd) == 0);
    free(cmd);
    char *b = xasprintf("%s.behavior", *out_harness);
    test_write_file(b, behavior, strlen(behavior));
    chmod(b, 0644);
    char *log = xasprintf("%s.log", *out_harness);
    test_write_file(log, "", 0);
    chmod(log, 0666); /* the slot uid appends to it */
    free(log);
    free(b);
    return dir;
}

static const char *const *run_env; /* the runners' and process runs' added environment */

/* A runner on `slot` with `spares` spares (on spare_slot, then 5, 6), in `pool` (or none). */
static struct probe_runner *new_runner_at(const char *program, double timeout_s, int spares,
                                          int slot, int spare_slot, struct probe_runner_pool *pool)
{
    struct probe_runner_options ro = PROBE_RUNNER_OPTIONS_INIT;
    ro.env = run_env;
    char *scratch = fs_join(test_tmpdir(), "slots");
    char *prog = program ? xstrdup(program) : probe_runner_find();
    CHECK(prog != NULL);
    ro.program = prog;
    ro.scratch = scratch;
    ro.work_dir = test_tmpdir();
    ro.slots[0] = slot;
    for (int i = 1; i <= spares; i++)
        ro.slots[i] = i == 1 ? spare_slot : 3 + i; /* 3, 5, 6 */
    ro.spare = spares;
    ro.timeout_s = timeout_s;
    ro.startup_s = 20;
    ro.pool = pool;
    struct probe_runner *pr;
    CHECK(probe_runner_new(&pr, &ro) == 0);
    free(scratch);
    free(prog);
    return pr;
}

static struct probe_runner *new_runner_spares(const char *program, double timeout_s, int spares)
{
    return new_runner_at(program, timeout_s, spares, 2, 3, NULL); /* process runs: slot 4 */
}

/* A probe of the stand-in behaving as `behavior`; with `budget_s` >= 0 a kernel with a size
 * parameter (both bindings, the large configurations at 2024x2024) under that probe budget,
 * else a kernel with buffers only (area, small configurations only). */
static struct probe_runner *new_runner(const char *program, double timeout_s)
{
    return new_runner_spares(program, timeout_s, 1);
}

static int retry_blocks; /* the block retry (tests/execute/bindings.c) adds runs to a fault */
static struct probe_runner *mc_runner; /* the probe's memcheck runner (NULL: none) */
static double small_timeout_s = PROBE_SMALL_TIMEOUT_S; /* --probe-small-timeout */
static double budget_max_s = PROBE_LARGE_BUDGET_MAX_S; /* --probe-budget-max */

static void probe_sized(struct probe_result *out, struct probe_runner *pr, const char *behavior,
                        int no_so, double timeout_s, double budget_s)
{
    char *h = NULL, *dir = harness_with(&h, behavior, no_so);
    char *scratch = fs_join(dir, "scratch");
    struct probe_options o = PROBE_OPTIONS_INIT;
    o.harness = h;
    o.scratch = scratch;
    o.work_dir = test_tmpdir();
    o.timeout_s = timeout_s;
    o.params = "{\"params\":[{\"name\":\"A\",\"role\":\"buffer\"}]}"; /* area only */
    o.large = 0;
    if (budget_s >= 0) {
        o.params = "{\"params\":[{\"name\":\"A\",\"role\":\"buffer\"},"
                   "{\"name\":\"n\",\"role\":\"size\"}]}";
        o.large = 2024;
        o.large_budget_s = budget_s;
        o.large_budget_max_s = budget_max_s;
    }
    o.runner = pr;
    o.memcheck = mc_runner;
    /* the stand-in's memcheck runs take milliseconds; a busy machine must not cut them at the
     * product's 4 s (a hang is cut at twice the small deadline: the hang test sets 1 s) */
    o.memcheck_timeout_s = 30;
    o.slot = 4;
    o.retry_blocks = retry_blocks;
    o.small_timeout_s = small_timeout_s;
    o.env = run_env;
    CHECK(probe_run(out, &o) == 0);
    printf("# %s -> %s %s\n# bindings %s\n", behavior, probe_outcome_name(out->outcome),
           out->detail ? out->detail : "", out->bindings ? out->bindings : "");
    free(h);
    free(dir);
    free(scratch);
}

static void probe_in(struct probe_result *out, struct probe_runner *pr, const char *behavior,
                     int no_so, double timeout_s)
{
    probe_sized(out, pr, behavior, no_so, timeout_s, -1);
}

static struct probe_runner_stats stats(const struct probe_runner *pr)
{
    struct probe_runner_stats st;
    probe_runner_stats(&st, pr);
    return st;
}

static void test_probe_runner__kernels_run_one_after_another_in_one_runner(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    struct probe_result p;
    for (int i = 0; i < 3; i++) {
        probe_in(&p, pr, "", 0, 20);
        CHECK_STR(probe_outcome_name(p.outcome), "ok");
        probe_result_release(&p);
    }
    struct probe_runner_stats st = stats(pr);
    CHECK_INT(st.runs, ==, 3);
    CHECK_INT(st.ended, ==, 0);
    CHECK_INT(st.starts, ==, 2); /* the runner and its spare, once */
    probe_runner_free(pr);
}

/* Whether a process of `uid` is alive (a zombie's pipes are closed already). */
static int uid_alive(int uid)
{
    int alive = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300], line[256], state = 0;
        int u = -1;
        snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f)) {
            if (!strncmp(line, "State:", 6))
                sscanf(line + 6, " %c", &state);
            if (!strncmp(line, "Uid:", 4))
                sscanf(line + 4, "%d", &u);
        }
        if (f)
            fclose(f);
        alive |= u == uid && state != 'Z';
    }
    if (d)
        closedir(d);
    return alive;
}

/* Until no process of `uid` is alive: up to 20 s. */
static void wait_uid_gone(int uid)
{
    for (int i = 0; i < 2000 && uid_alive(uid); i++)
        usleep(10000);
}

/* A process run's sweep of a uid kills every process of it; a runner killed so while idle is
 * replaced before the next kernel's run, which must not die of it (session 8: on the H200 a
 * crash fixture probed after a sanitizer run in the runner's uid was recorded "signal 9"). */
static void test_probe_runner__a_runner_killed_while_idle_is_replaced_not_charged_to_the_next_kernel(void)
{
    if (!sandbox_detect(test_tmpdir())->drop_uid)
        test_skip("the sandbox cannot drop to a slot uid here");
    struct probe_runner *pr = new_runner(NULL, 20);
    struct probe_result p;
    probe_in(&p, pr, "", 0, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    probe_result_release(&p);
    sandbox_reap_slot(2); /* the runner's slot, as a process run there would sweep it */
    wait_uid_gone(sandbox_slot_uid(2));
    probe_in(&p, pr, "", 0, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK(p.detail == NULL || strstr(p.detail, "signal") == NULL);
    probe_result_release(&p);
    struct probe_runner_stats st = stats(pr);
    CHECK_INT(st.runs, ==, 2);
    CHECK_INT(st.ended, ==, 1); /* the killed one, replaced by its spare */
    probe_runner_free(pr);
}

static void test_probe_runner__a_sticky_error_ends_the_runner_and_the_spare_takes_over(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    struct probe_result p;
    probe_in(&p, pr, "sticky * * * *\n", 0, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    probe_result_release(&p);
    sleep(2); /* the spare's start is under way since the first run: let it say @ready */
    probe_in(&p, pr, "", 0, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    probe_result_release(&p);
    struct probe_runner_stats st = stats(pr);
    CHECK_INT(st.ended, ==, 1);
    CHECK_INT(st.spare_ready, ==, 1);
    CHECK_INT(st.starts, ==, 3); /* the first, its spare, the spare's own spare */
    probe_runner_free(pr);
}

static void test_probe_runner__a_hang_is_killed_at_the_timeout(void)
{
    struct probe_runner *pr = new_runner(NULL, 2);
    struct probe_result p;
    double t0 = fs_mono_s();
    probe_in(&p, pr, "hang * * * *\n", 0, 2);
    CHECK_STR(probe_outcome_name(p.outcome), "timeout");
    CHECK(fs_mono_s() - t0 < 30);
    probe_result_release(&p);
    probe_in(&p, pr, "", 0, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    probe_result_release(&p);
    CHECK_INT(stats(pr).ended, ==, 1);
    probe_runner_free(pr);
}

static void test_probe_runner__a_crash_is_recorded_as_a_crash(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    struct probe_result p;
    probe_in(&p, pr, "crash * * * *\n", 0, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "crash");
    CHECK_CONTAINS(p.detail, "signal 11");
    probe_result_release(&p);
    probe_runner_free(pr);
}

static void test_probe_runner__a_harness_without_its_so_runs_as_a_process(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    struct probe_result p;
    probe_in(&p, pr, "", 1, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    probe_result_release(&p);
    CHECK_INT(stats(pr).runs, ==, 0);
    probe_runner_free(pr);
}

/* execute gives every probe run CUDA_DEVICE_MAX_CONNECTIONS (--probe-connections): a run in a
 * runner gets it from the runner's environment, a process run from its own. The stand-in
 * writes its environment into $HOME/env.log (LSCAT_TEST_DUMP_ENV, allow-listed). */
static void test_probe_runner__probe_runs_in_a_runner_and_as_processes_get_the_added_environment(void)
{
    const char *env[] = { "CUDA_DEVICE_MAX_CONNECTIONS=1", NULL };
    setenv("LSCAT_TEST_DUMP_ENV", "1", 1);
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 1); /* the added value wins over the inherited */
    run_env = env;
    struct probe_runner *pr = new_runner(NULL, 20);
    for (int no_so = 0; no_so <= 1; no_so++) {
        char *h = NULL, *dir = harness_with(&h, "", no_so);
        char *scratch = fs_join(dir, "scratch");
        struct probe_options o = PROBE_OPTIONS_INIT;
        o.harness = h;
        o.scratch = scratch;
        o.work_dir = test_tmpdir();
        o.timeout_s = 20;
        o.params = "{\"params\":[{\"name\":\"A\",\"role\":\"buffer\"}]}";
        o.large = 0;
        o.runner = pr;
        o.slot = 4;
        o.env = env;
        struct probe_result p;
        CHECK(probe_run(&p, &o) == 0);
        CHECK_STR(probe_outcome_name(p.outcome), "ok");
        probe_result_release(&p);
        /* the runner's HOME is its slot's scratch folder, a process run's the probe's */
        char *logp = no_so ? fs_join(scratch, "env.log") : xasprintf("%s/slots/2/env.log", test_tmpdir());
        struct buf log = BUF_INIT;
        CHECK(buf_read_file(&log, logp) == 0);
        printf("# %s: %.300s\n", no_so ? "process" : "runner", log.data ? log.data : "(none)");
        CHECK(log.data && strstr(log.data, " CUDA_DEVICE_MAX_CONNECTIONS=1") != NULL);
        CHECK(log.data && strstr(log.data, "CUDA_DEVICE_MAX_CONNECTIONS=8") == NULL);
        buf_release(&log);
        free(logp);
        free(scratch);
        free(h);
        free(dir);
    }
    CHECK_INT(stats(pr).runs, ==, 1); /* the first in the runner, the second as a process */
    probe_runner_free(pr);
    run_env = NULL;
    unsetenv("LSCAT_TEST_DUMP_ENV");
    unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
}

static void test_probe_runner__a_runner_that_cannot_start_leaves_probes_to_processes(void)
{
    struct probe_runner *pr = new_runner("/bin/false", 20);
    struct probe_result p;
    probe_in(&p, pr, "", 0, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    probe_result_release(&p);
    CHECK(probe_runner_broken(pr));
    CHECK_INT(stats(pr).runs, ==, 0);
    probe_runner_free(pr);
}

/* A runner whose first start holds no context (a wrapper that exits 1 once, then runs the real
 * lscat-runner) is started again: the probe runs in a runner, the worker keeps its runners. */
static void test_probe_runner__a_runner_that_fails_one_start_is_started_again(void)
{
    char *real = probe_runner_find();
    CHECK(real != NULL);
    char *dir = fs_join(test_tmpdir(), "flaky-runner");
    CHECK(fs_mkdirs(dir, 0755) == 0);
    chmod(dir, 0755);
    /* the marker goes to the runner's own scratch folder (slot 2), the one place it may write */
    char *mark = xasprintf("%s/slots/2/failed-once", test_tmpdir());
    unlink(mark);
    char *wrap = fs_join(dir, "lscat-runner"), *copy = fs_join(dir, "real-runner");
    /* a copy the slot uid can run (the build folder may be private: a fresh clone in mktemp's) */
    char *cp = xasprintf("cp %s %s && chmod 0755 %s", real ? real : "/bin/false", copy, copy);
    CHECK(system(cp) == 0);
    free(cp);
    char *script = xasprintf("#!/bin/sh\nif [ ! -e %s ]; then : > %s; "
                             "echo 'lscat-runner: device 0: CUDA driver error 1' >&2; exit 3; fi\n"
                             "exec %s \"$@\"\n", mark, mark, copy);
    test_write_file(wrap, script, strlen(script));
    chmod(wrap, 0755);
    struct probe_runner *pr = new_runner(wrap, 20);
    struct probe_result p;
    probe_in(&p, pr, "", 0, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    probe_result_release(&p);
    CHECK(!probe_runner_broken(pr));
    CHECK_INT(stats(pr).runs, ==, 1); /* in a runner, not as a process */
    CHECK(access(mark, F_OK) == 0); /* the first start did fail */
    probe_runner_free(pr);
    free(script);
    free(copy);
    free(wrap);
    free(mark);
    free(dir);
    free(real);
}

/* The block retry in a runner: the fault with the probe's own blocks ends the runner, the
 * spare runs the retried block clean. */
static void test_probe_runner__a_block_retry_after_a_fault_runs_in_the_spare(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    struct probe_result p;
    retry_blocks = 1;
    probe_in(&p, pr, "sticky * * 256 1\nsticky * * 16 16\n", 0, 20);
    retry_blocks = 0;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "128x1x1");
    probe_result_release(&p);
    struct probe_runner_stats st = stats(pr);
    CHECK_INT(st.runs, ==, 2);
    CHECK_INT(st.ended, ==, 1);
    probe_runner_free(pr);
}

static void test_probe_runner__two_spares_take_two_faults_in_a_row_ready(void)
{
    struct probe_runner *pr = new_runner_spares(NULL, 20, 2);
    struct probe_result p;
    probe_in(&p, pr, "", 0, 20); /* the runner, then both spares start */
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    probe_result_release(&p);
    sleep(2); /* both spares hold their (host-only) context */
    for (int i = 0; i < 2; i++) { /* a kernel faulting under both bindings: two ends in a row */
        probe_in(&p, pr, "sticky * * * *\n", 0, 20);
        CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
        probe_result_release(&p);
    }
    probe_in(&p, pr, "", 0, 20);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    probe_result_release(&p);
    struct probe_runner_stats st = stats(pr);
    printf("# %d starts, %d runs, %d ended, %d spare ready\n", st.starts, st.runs, st.ended,
           st.spare_ready);
    CHECK_INT(st.ended, ==, 2);
    CHECK_INT(st.spare_ready, ==, 2); /* the second fault's spare was started long before */
    CHECK_INT(st.starts, ==, 5);      /* three, then one new spare after each end */
    probe_runner_free(pr);
}

/* The probe budget (docs/execute.md "Probe budget"). The probe timeout is 600 s in these: a
 * stand-in that hangs at 2024x2024 can only end early through the budget. */
static void test_probe_runner__a_large_configuration_past_its_budget_ends_the_binding_too_slow(void)
{
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    double t0 = fs_mono_s();
    probe_sized(&p, pr, "hang 2024 2024 * * area\n", 0, 600, 1.0);
    CHECK(fs_mono_s() - t0 < 300); /* a budget of seconds, not the run's 600 s */
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side"); /* the next binding was tried and ran clean */
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"too_slow\"");
    CHECK_CONTAINS(p.bindings, "2024x2024 block 16x16x1 still running after");
    CHECK_CONTAINS(p.bindings, "over its budget of 1.00 s");
    CHECK_CONTAINS(p.bindings, "\"budget_s\":1.000");
    CHECK_CONTAINS(p.bindings, "\"config_s\":[");
    CHECK_INT(p.too_slow, ==, 1);
    CHECK_INT(p.small_only, ==, 0);
    probe_result_release(&p);
    probe_runner_free(pr);
}

/* The harness's guard (docs/execute.md "Guard after the buffers"): a kernel that wrote past a
 * buffer at 64x64 under area stops at "#guard-stop" in the runner, so its 2024x2024
 * configurations (where a real kernel would fault) never run; the runner lives on, side runs
 * clean in it and is kept. The try says which configuration wrote past which buffer. */
static void test_probe_runner__a_write_past_a_buffer_at_the_small_sizes_skips_the_large_ones(void)
{
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    probe_sized(&p, pr, "past 64 64 * * area\n", 0, 600, 3.0);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK(p.detail == NULL);
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"ok\",\"detail\":\"wrote "
                               "past parameter 1 (A)'s buffer at 64x64, block 16x16x1: 4096 "
                               "bytes after its W x H + pad elements (the harness's guard there "
                               "changed); the large configurations not run\"");
    /* area ran its two small configurations only, the second of which wrote past A */
    CHECK_CONTAINS(p.bindings, "\"config_s\":[");
    CHECK_CONTAINS(p.bindings, ",null,null],\"wrote_past\":[null,0,null,null]");
    CHECK_INT(p.guard_stops, ==, 1);
    CHECK_INT(p.small_only, ==, 0);
    struct probe_runner_stats st = stats(pr);
    CHECK_INT(st.ended, ==, 0); /* no fault, no runner replaced */
    CHECK_INT(st.runs, ==, 2);
    probe_result_release(&p);
    probe_runner_free(pr);
}

static void test_probe_runner__too_slow_under_every_binding_is_runnable_at_the_small_sizes(void)
{
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    probe_sized(&p, pr, "hang 2024 2024 * *\n", 0, 600, 1.0);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_INT(p.small_only, ==, 1);
    CHECK_INT(p.too_slow, ==, 2);
    CHECK_CONTAINS(p.detail, "small sizes only; at 2024x2024: too_slow: 2024x2024 block 16x16x1");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"side\",\"outcome\":\"too_slow\"");
    probe_result_release(&p);
    probe_runner_free(pr);
}

static void test_probe_runner__without_the_kernel_time_the_budget_is_four_times_the_line_interval_scaled(void)
{
    /* an older harness's lines (no kernel_ns), 150 ms a configuration: the 64x64 one predicts
     * 150 ms x 2024^2 / 64^2 = 74 s at
     * 2024x2024, a budget of 4 x that (past the run's 600 s: the run's bound holds); the
     * large configurations take 150 ms too and pass */
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    budget_max_s = 0; /* the formula's own budget, not the cap */
    probe_sized(&p, pr, "slow 150\n", 0, 600, 1.0);
    budget_max_s = PROBE_LARGE_BUDGET_MAX_S;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    const char *b = strstr(p.bindings, "\"budget_s\":"), *q = strstr(p.bindings, "\"predicted_s\":");
    CHECK(b != NULL && q != NULL);
    double budget = b ? atof(b + 11) : 0, predicted = q ? atof(q + 14) : 0;
    printf("# budget %.3f s, predicted %.3f s\n", budget, predicted);
    CHECK(predicted > 0.14 * 2024.0 * 2024 / 4096 && predicted < 10 * 2024.0 * 2024 / 4096);
    CHECK(fabs(budget - 4 * predicted) < 0.01 * budget);
    CHECK(strstr(p.bindings, "\"kernel_s\"") == NULL); /* no line said it */
    probe_result_release(&p);
    probe_runner_free(pr);
}

/* The seconds of configuration i in the first "config_s" array of a bindings JSON, -1 when null
 * or missing. */
static double config_s_at(const char *bindings, int i)
{
    const char *c = bindings ? strstr(bindings, "\"config_s\":[") : NULL;
    if (!c)
        return -1;
    c += 12;
    for (; i > 0 && c; i--)
        c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
    return c && *c != 'n' ? atof(c) : -1;
}

/* The stand-in takes 150 ms a configuration (buffers, copies, syncs) and says its kernel took
 * 1 us; under `area` its first 2024x2024 configuration then takes 5 s. */
#define STALLING "slow 150\nstall 2024 2024 * * area\n"

static void test_probe_runner__a_slow_large_configuration_is_cut_at_the_budget_from_the_kernel_time(void)
{
    /* 1 us x 2024^2 / 64^2 = 0.5 ms predicted; budget = max(1 s, 1 s + ~150 ms + 2 x 0.5 ms) */
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    probe_sized(&p, pr, STALLING "kernel_ns 1000\n", 0, 600, 1.0);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side"); /* the next binding was tried and ran clean */
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"too_slow\"");
    CHECK_CONTAINS(p.bindings, "kernel 0.001 ms of ");
    CHECK_CONTAINS(p.bindings, "budget = max(1 s, 1 s + ");
    CHECK_CONTAINS(p.bindings, "\"kernel_s\":[0.000001,0.000001,null,null]");
    const char *b = strstr(p.bindings, "\"budget_s\":");
    double budget = b ? atof(b + 11) : 0;
    printf("# budget %.3f s\n", budget);
    CHECK(budget > 1.1 && budget < 3); /* 1 s + the 64x64 line's ~150 ms + 1 ms */
    CHECK(config_s_at(p.bindings, 2) < 0); /* the stalled configuration has no time: cut */
    CHECK_INT(p.too_slow, ==, 1);
    probe_result_release(&p);
    probe_runner_free(pr);
}

/* A hang at the second small configuration (64x64): its budget comes from the first's kernel
 * time (1 us x 4096 / 1024: max(1 s, 1 s + the first line's overhead + 8 us)), so the binding
 * ends too_slow in seconds instead of at the run's 600 s, and the next binding runs clean. */
static void test_probe_runner__a_hang_at_the_small_sizes_is_cut_at_a_budget_from_the_first_kernel_time(void)
{
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    double t0 = fs_mono_s();
    probe_sized(&p, pr, "hang 64 64 * * area\nkernel_ns 1000\n", 0, 600, 1.0);
    CHECK(fs_mono_s() - t0 < 300); /* a budget of seconds, not the run's 600 s */
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"too_slow\"");
    CHECK_CONTAINS(p.bindings, "64x64 block 16x16x1 still running after");
    CHECK_CONTAINS(p.bindings, "(1024x1: kernel 0.001 ms of ");
    CHECK_CONTAINS(p.bindings, "predicted 4e-06 s at 64x64");
    CHECK_INT(p.too_slow, ==, 1);
    CHECK_INT(p.small_only, ==, 0);
    probe_result_release(&p);
    probe_runner_free(pr);
}

/* Without the kernel's time (an older harness) the small configurations keep the run's
 * timeout: nothing is cut from a line interval that is mostly overhead. */
static void test_probe_runner__without_the_kernel_time_a_small_hang_keeps_the_run_timeout(void)
{
    /* 10 s: the hang cannot finish, and the clean `side` run after it has ample time even on a
     * busy machine */
    struct probe_runner *pr = new_runner(NULL, 10);
    struct probe_result p;
    double t0 = fs_mono_s();
    probe_sized(&p, pr, "hang 64 64 * * area\n", 0, 10, 1.0);
    CHECK(fs_mono_s() - t0 >= 9.9); /* the area run met its 10 s timeout, not the 1 s budget */
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"timeout\"");
    CHECK_INT(p.too_slow, ==, 0);
    probe_result_release(&p);
    probe_runner_free(pr);
}

/* A kernel predicted to take minutes at 2024x2024 (its 64x64 launch said 50 ms: 50 s
 * predicted, a budget of over 100 s) is cut at the cap (--probe-budget-max), measured still
 * running, and the next binding is tried; without the cap it runs its 5 s to the end. */
static void test_probe_runner__a_large_configuration_predicted_past_the_cap_is_cut_at_the_cap(void)
{
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    budget_max_s = 1.5;
    double t0 = fs_mono_s();
    probe_sized(&p, pr, STALLING "kernel_ns 50000000\n", 0, 600, 1.0);
    double capped_s = fs_mono_s() - t0;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"too_slow\"");
    CHECK_CONTAINS(p.bindings, "over its budget of 1.50 s");
    CHECK_CONTAINS(p.bindings, "predicted 50 s at 2024x2024");
    CHECK_CONTAINS(p.bindings, "budget = min(1.5 s, max(1 s, 1 s + ");
    CHECK(config_s_at(p.bindings, 2) < 0); /* the stalled configuration was cut */
    CHECK_INT(p.too_slow, ==, 1);
    probe_result_release(&p);
    budget_max_s = 0; /* no cap: the run's 600 s bound it, and the 5 s configuration ends */
    probe_sized(&p, pr, STALLING "kernel_ns 50000000\n", 0, 600, 1.0);
    budget_max_s = PROBE_LARGE_BUDGET_MAX_S;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK(config_s_at(p.bindings, 2) >= 5.0);
    CHECK_INT(p.too_slow, ==, 0);
    printf("# cut at the cap: whole probe %.2f s\n", capped_s);
    probe_result_release(&p);
    probe_runner_free(pr);
}

static void test_probe_runner__the_same_large_configuration_passes_under_an_older_harness_budget(void)
{
    /* no kernel_ns: the 150 ms interval predicts 74 s, the 5 s configuration runs to its end */
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    probe_sized(&p, pr, STALLING, 0, 600, 1.0);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK(strstr(p.bindings, "too_slow") == NULL);
    CHECK(config_s_at(p.bindings, 2) >= 5.0);
    CHECK_INT(p.too_slow, ==, 0);
    probe_result_release(&p);
    probe_runner_free(pr);
}

static void test_probe_runner__out_of_memory_at_the_large_size_ends_the_binding_at_once(void)
{
    /* the second large configuration would hang: only the cut after the first ends it early */
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    double t0 = fs_mono_s();
    probe_sized(&p, pr, "oom 2024 2024 16 16 area\nhang 2024 2024 256 1 area\n", 0, 600, 1.0);
    CHECK(fs_mono_s() - t0 < 300);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"cuda_error\",\"detail\":"
                               "\"out of memory (at 2024x2024, block 16x16x1)\"");
    CHECK_INT(p.too_slow, ==, 0);
    probe_result_release(&p);
    probe_runner_free(pr);
}

static void test_probe_runner__without_a_budget_the_large_configurations_share_the_timeout(void)
{
    struct probe_runner *pr = new_runner(NULL, 3);
    struct probe_result p;
    probe_sized(&p, pr, "hang 2024 2024 * * area\n", 0, 3, 0);
    CHECK_STR(p.binding, "side");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"timeout\"");
    CHECK(strstr(p.bindings, "too_slow") == NULL);
    CHECK_INT(p.too_slow, ==, 0);
    probe_result_release(&p);
    probe_runner_free(pr);
}

/* The small-size deadline: a hang at the first small configuration (1024x1) ends after the
 * 1 s of --probe-small-timeout although the run's timeout is 600 s; the outcome stays timeout
 * and the detail says which deadline. The next kernel runs in the spare. */
static void test_probe_runner__a_hang_at_the_first_small_configuration_ends_at_the_small_deadline(void)
{
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    small_timeout_s = 1;
    double t0 = fs_mono_s();
    probe_in(&p, pr, "hang 1024 1 * *\n", 0, 600);
    double took = fs_mono_s() - t0;
    small_timeout_s = PROBE_SMALL_TIMEOUT_S;
    printf("# ended after %.2f s\n", took);
    CHECK(took >= 1.0);
    CHECK(took < 300); /* the small deadline, not the run's 600 s */
    CHECK_STR(probe_outcome_name(p.outcome), "timeout");
    CHECK_CONTAINS(p.detail, "1024x1 block 256x1x1 still running after ");
    CHECK_CONTAINS(p.detail, "past the first small configuration's deadline of 1 s "
                             "(--probe-small-timeout; the run's --probe-timeout is 600 s)");
    CHECK_INT(p.too_slow, ==, 0);
    probe_result_release(&p);
    probe_in(&p, pr, "", 0, 600);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    probe_result_release(&p);
    probe_runner_free(pr);
}

/* A kernel whose plain run hung at its first configuration is not tried further: no other
 * binding, no other block (session 15's store: 14 such kernels, 12 later tries, none ran; session
 * 19 gave those tries 3 s). The outcome stays timeout; the detail says why the search ended, and
 * the fault budget's count does not. What this gives up: a kernel that hangs at 1,024 elements
 * under area and would run under side ends timeout too (no real kernel of the stores did). A
 * hang at 64x64 does not end it (the two tests above: side runs after it). */
static void test_probe_runner__a_hang_at_the_first_configuration_ends_the_search(void)
{
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    small_timeout_s = 2;
    double t0 = fs_mono_s();
    probe_sized(&p, pr, "hang 1024 1 * *\n", 0, 600, PROBE_LARGE_BUDGET_S); /* area, side */
    double took = fs_mono_s() - t0;
    printf("# ended after %.2f s\n", took);
    CHECK(took >= 2.0);
    CHECK(took < 300);
    CHECK_STR(probe_outcome_name(p.outcome), "timeout");
    CHECK_STR(p.binding, "area");
    CHECK_CONTAINS(p.detail, "past the first small configuration's deadline of 2 s "
                             "(--probe-small-timeout; the run's --probe-timeout is 600 s); no "
                             "other binding or block tried: a run hung at the first configuration");
    CHECK(strstr(p.bindings, "\"side\"") == NULL);
    CHECK_INT(p.fault_budget, ==, 0);
    CHECK_INT(p.ended_on_clock, ==, 1); /* execute holds it until the device answers again */
    probe_result_release(&p);
    /* the case given up: side would run */
    probe_sized(&p, pr, "hang 1024 1 * * area\n", 0, 600, PROBE_LARGE_BUDGET_S);
    CHECK_STR(probe_outcome_name(p.outcome), "timeout");
    CHECK(strstr(p.bindings, "\"side\"") == NULL);
    probe_result_release(&p);
    /* the next kernel starts afresh */
    probe_in(&p, pr, "", 0, 600);
    small_timeout_s = PROBE_SMALL_TIMEOUT_S;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK(p.detail == NULL || strstr(p.detail, "no other binding") == NULL);
    CHECK_INT(p.ended_on_clock, ==, 0);
    probe_result_release(&p);
    probe_runner_free(pr);
}

/* lscat-runner behind a wrapper that, started for `slot` (its HOME is <scratch>/<slot>), waits
 * for <tmp>/release-<slot> before it runs: a spare whose context is not made yet. The wrapper
 * runs a copy in the test's folder: the slot uids may not enter the build tree (a clone in a
 * 0700 folder, as CI's is). */
static char *held_runner(int slot)
{
    char *real = probe_runner_find(), *p = fs_join(test_tmpdir(), "held-runner");
    char *copy = fs_join(test_tmpdir(), "lscat-runner-copy");
    CHECK(real != NULL);
    chmod(test_tmpdir(), 0755);
    char *cmd = xasprintf("cp '%s' '%s' && chmod 755 '%s'", real, copy, copy);
    CHECK(system(cmd) == 0);
    char *text = xasprintf("#!/bin/sh\ncase \"$HOME\" in */slots/%d) while [ ! -e %s/release-%d ]; "
                           "do sleep 0.05; done ;; esac\nexec %s \"$@\"\n", slot, test_tmpdir(),
                           slot, copy);
    test_write_file(p, text, strlen(text));
    chmod(p, 0755);
    free(cmd);
    free(text);
    free(copy);
    free(real);
    return p;
}

/* Shared spares (docs/execute.md "Probe runner"): worker A's runner ends on a sticky error while
 * its own spare holds no context yet (held back by the wrapper); with a pool, A's next kernel
 * runs in worker B's spare, which does, and B gets a new spare on A's slot; B then runs on.
 * Without a pool A waits for its own. */
static void test_probe_runner__a_runner_ended_takes_another_workers_ready_spare(void)
{
    char *held = held_runner(3), *release = fs_join(test_tmpdir(), "release-3");
    for (int shared = 1; shared >= 0; shared--) {
        unlink(release);
        struct probe_runner_pool *pool = shared ? probe_runner_pool_new() : NULL;
        struct probe_runner *a = new_runner_at(held, 20, 1, 2, 3, pool),
                            *b = new_runner_at(held, 20, 1, 10, 11, pool);
        struct probe_result p;
        probe_in(&p, b, "", 0, 20); /* B's runner (10) and spare (11) */
        CHECK_STR(probe_outcome_name(p.outcome), "ok");
        probe_result_release(&p);
        for (int i = 0; i < 2000 && probe_runner_spares_ready(b) < 1; i++)
            usleep(10000); /* until B's spare holds its context */
        CHECK_INT(probe_runner_spares_ready(b), ==, 1);
        probe_in(&p, a, "sticky * * * *\n", 0, 20); /* A's runner (2) ends; its spare (3) held */
        CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
        probe_result_release(&p);
        CHECK_INT(probe_runner_spares_ready(a), ==, 0);
        if (!shared)
            test_write_file(release, "", 0); /* else A would wait for it forever */
        probe_in(&p, a, "", 0, 20);
        CHECK_STR(probe_outcome_name(p.outcome), "ok");
        probe_result_release(&p);
        CHECK_INT(stats(a).shared, ==, shared);
        CHECK_INT(stats(a).ended, ==, 1);
        probe_in(&p, b, "sticky * * * *\n", 0, 20); /* B ends its runner: its spare runs next */
        probe_result_release(&p);
        probe_in(&p, b, "", 0, 20);
        CHECK_STR(probe_outcome_name(p.outcome), "ok");
        probe_result_release(&p);
        CHECK_INT(stats(b).shared, ==, 0);
        test_write_file(release, "", 0);
        probe_runner_free(a);
        probe_runner_free(b);
        probe_runner_pool_free(pool);
    }
    free(held);
    free(release);
}

/* A first configuration that finishes gives the deadline up: the rest of the run has the run's
 * timeout (here a 64x64 configuration that stalls 5 s, past the 3 s small deadline, runs to its
 * end, as a harness without the kernel's time gets no budget there). 3 s, not 1: the clean
 * 1024x1 line must come within the deadline on a busy machine. */
static void test_probe_runner__after_the_first_line_the_small_deadline_no_longer_applies(void)
{
    struct probe_runner *pr = new_runner(NULL, 600);
    struct probe_result p;
    small_timeout_s = 3;
    probe_in(&p, pr, "stall 64 64 * *\n", 0, 600);
    small_timeout_s = PROBE_SMALL_TIMEOUT_S;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    /* timed from the 1024x1 line's arrival, so a late read of that line shortens it a little:
     * 4 s is past the 3 s deadline, which would have cut it */
    CHECK(config_s_at(p.bindings, 1) >= 4.0);
    probe_result_release(&p);
    probe_runner_free(pr);
}

/* The memcheck runner (docs/execute.md "The memcheck runner") under a stand-in compute-sanitizer:
 * a real executable that runs the real lscat-runner as its child (as compute-sanitizer does)
 * with LSCAT_FAKE_MEMCHECK_LOG naming its --log-file, where the stand-in harness writes a
 * memcheck report instead of faulting (tests/tune/support/fake_harness.c). Each start is
 * counted in `starts` beside it. */
#define MC_SLOT 8
static char *fake_sanitizer(void)
{
    char *p = fs_join(test_tmpdir(), "fake-compute-sanitizer");
    char *starts = fs_join(test_tmpdir(), "fake-compute-sanitizer.starts");
    char *text = xasprintf(
        "#!/bin/sh\n"
        "log=\n"
        "while [ $# -gt 0 ]; do\n"
        "  case \"$1\" in\n"
        "    --log-file) log=$2; shift 2 ;;\n"
        "    --*) shift 2 ;;\n"
        "    *) break ;;\n"
        "  esac\n"
        "done\n"
        "[ -n \"$log\" ] || { echo 'fake compute-sanitizer: no --log-file' >&2; exit 9; }\n"
        "echo '========= COMPUTE-SANITIZER' > \"$log\"\n"
        "echo start >> %s\n"
        "exec 5<&0\n"
        "LSCAT_FAKE_MEMCHECK_LOG=$log \"$@\" <&5 5<&- &\n"
        "wait $!\n", starts);
    test_write_file(p, text, strlen(text));
    chmod(p, 0755);
    test_write_file(starts, "", 0);
    chmod(starts, 0666);
    free(text);
    free(starts);
    return p;
}

static struct probe_runner *new_memcheck_runner(void)
{
    struct probe_runner_options ro = PROBE_RUNNER_OPTIONS_INIT;
    char *scratch = fs_join(test_tmpdir(), "slots");
    char *prog = probe_runner_find(), *san = fake_sanitizer();
    CHECK(prog != NULL);
    ro.program = prog;
    ro.scratch = scratch;
    ro.work_dir = test_tmpdir();
    ro.slots[0] = MC_SLOT;
    ro.spare = 0;
    ro.timeout_s = 20;
    ro.startup_s = 20;
    ro.sanitizer = san;
    struct probe_runner *pr;
    CHECK(probe_runner_new(&pr, &ro) == 0);
    free(scratch);
    free(prog);
    free(san);
    return pr;
}

/* The end of a memcheck test: its memcheck runner and its probe runner. */
static void free_runners(struct probe_runner *pr)
{
    probe_runner_free(mc_runner);
    mc_runner = NULL;
    probe_runner_free(pr);
}

/* A 1D kernel whose probe blocks and 128x1 fault and 64x1 runs: under memcheck, retry by retry. */
static void probe_with_memcheck(struct probe_result *p, struct probe_runner *pr,
                                const char *behavior)
{
    retry_blocks = 1;
    probe_in(p, pr, behavior, 0, 20);
    retry_blocks = 0;
}

static void test_probe_runner__a_kernel_s_tries_after_its_fault_run_in_one_memcheck_runner_and_the_clean_one_is_confirmed_plain(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    mc_runner = new_memcheck_runner();
    struct probe_result p;
    probe_with_memcheck(&p, pr, "sticky * * 256 1\nsticky * * 16 16\nsticky * * 128 1\n");
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "64x1x1");
    CHECK_INT(p.memcheck_runs, ==, 2);    /* 128x1: a report; 64x1: clean */
    CHECK_INT(p.memcheck_reports, ==, 1);
    CHECK_INT(p.confirm_runs, ==, 1);
    CHECK(strstr(p.bindings, "\"detail\":\"memcheck: Invalid __global__ write of size 4 bytes\","));
    CHECK(strstr(p.bindings, "\"block\":\"128x1x1\",\"memcheck\":\"report\""));
    CHECK(strstr(p.bindings, "\"block\":\"64x1x1\",\"memcheck\":\"clean\""));
    CHECK(strstr(p.bindings, "\"block\":\"64x1x1\",\"confirm\":true"));
    probe_result_release(&p);
    struct probe_runner_stats st = stats(pr), mc = stats(mc_runner);
    CHECK_INT(st.runs, ==, 2);   /* the probe's own blocks (faulted), the confirming run */
    CHECK_INT(st.ended, ==, 1);
    CHECK_INT(mc.runs, ==, 2);
    CHECK_INT(mc.ended, ==, 0);  /* the report did not end it */
    CHECK_INT(mc.reports, ==, 1);
    CHECK_INT(mc.starts, ==, 1);
    /* a second kernel faulting alike reuses the same memcheck runner */
    probe_with_memcheck(&p, pr, "sticky * * 256 1\nsticky * * 16 16\n");
    CHECK_STR(p.block, "128x1x1");
    CHECK_INT(p.memcheck_runs, ==, 1);
    probe_result_release(&p);
    CHECK_INT(stats(mc_runner).starts, ==, 1);
    CHECK_INT(stats(mc_runner).runs, ==, 3);
    free_runners(pr);
}

/* A report written after the harness returned is its run's (the settle window), not the next's.
 * The window (3 s) is far above the report's 100 ms lag, so a loaded machine cannot push it out. */
static void test_probe_runner__a_memcheck_report_written_after_the_run_returned_is_still_that_run_s(void)
{
    setenv("LSCAT_MEMCHECK_SETTLE_MS", "3000", 1); /* far above the 100 ms lag: a busy machine */
    struct probe_runner *pr = new_runner(NULL, 20);
    mc_runner = new_memcheck_runner();
    struct probe_result p;
    probe_with_memcheck(&p, pr, "mclate 100\nsticky * * 256 1\nsticky * * 16 16\n"
                                "sticky * * 128 1\n");
    CHECK_STR(p.block, "64x1x1");
    CHECK_INT(p.memcheck_reports, ==, 1);
    probe_result_release(&p);
    struct probe_runner_stats mc = stats(mc_runner);
    printf("# late %d (latest %.3f s), stray %d\n", mc.late, mc.late_max_s, mc.stray);
    CHECK_INT(mc.late, ==, 1);
    CHECK(mc.late_max_s > 0.05);
    CHECK_INT(mc.stray, ==, 0);
    free_runners(pr);
    unsetenv("LSCAT_MEMCHECK_SETTLE_MS");
}

/* How many times needle occurs in s. */
static int occurrences(const char *s, const char *needle)
{
    int n = 0;
    for (const char *q = s ? strstr(s, needle) : NULL; q; q = strstr(q + 1, needle))
        n++;
    return n;
}

/* memcheck is stricter than the MMU: when it finds no clean try, the tries it rejected for a
 * read just past an allocation run plain, and the first that runs is kept. */
static void test_probe_runner__when_memcheck_finds_no_clean_try_its_near_allocation_rejects_run_plain(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    mc_runner = new_memcheck_runner();
    struct probe_result p;
    probe_with_memcheck(&p, pr, "sticky * * 256 1\nsticky * * 16 16\noverrun * * 128 1\n"
                                "sticky * * 64 1\nsticky * * 32 1\nsticky * * 1024 1\n");
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "128x1x1");
    CHECK_INT(p.memcheck_runs, ==, 4);
    CHECK_INT(p.memcheck_reports, ==, 4);
    CHECK_INT(p.confirm_runs, ==, 0);
    CHECK_INT(p.memcheck_fallback_runs, ==, 1); /* only 128x1's report was near an allocation */
    probe_result_release(&p);
    /* a shared-memory overrun is one the hardware may not see either (session 21:
     * gpu_shared_memory runs plain with 32x1 blocks, where memcheck reports a shared write) */
    probe_with_memcheck(&p, pr, "sticky * * 256 1\nsticky * * 16 16\nsticky * * 128 1\n"
                                "sticky * * 64 1\nmcshared * * 32 1\nsticky * * 1024 1\n");
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "32x1x1");
    CHECK_INT(p.memcheck_reports, ==, 4);
    CHECK_INT(p.memcheck_fallback_runs, ==, 1); /* only 32x1's report */
    CHECK(strstr(p.bindings, "\"detail\":\"memcheck: Invalid __shared__ write of size 4 bytes\""));
    probe_result_release(&p);
    /* every shape overruns a shared array and only the smallest stays inside the block's window
     * plain (session 22: gpu_shared_memory, needle_cuda_shared_2): the rejects with the fewest
     * reports run plain first, so 32x1, the third reject in the plan's order, is kept by the
     * first rerun and the other two never fault plain */
    probe_with_memcheck(&p, pr, "mcshared * * 32 1\nshfault * * * *\n");
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "32x1x1");
    CHECK_INT(p.memcheck_fallback_runs, ==, 1);
    CHECK(strstr(p.bindings, "\"mc_reports\":2,"));  /* 32x1: one warp at each small size */
    CHECK(strstr(p.bindings, "\"mc_reports\":4,\"mc_cut\":true")); /* 1024x1: 32 warps */
    probe_result_release(&p);
    /* 128x1 and 1024x1 made more reports than the buffer kept, so they rank after 64x1's 4
     * whole ones (32x1's report is far out of bounds here: no candidate); 128x1, ahead of 64x1
     * in the plan and with as many reports, would fault first */
    probe_with_memcheck(&p, pr, "mcshared * * 64 1\nsticky * * 32 1\nshfault * * * *\n");
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "64x1x1");
    CHECK_INT(p.memcheck_fallback_runs, ==, 1);
    CHECK(strstr(p.bindings, "\"block\":\"128x1x1\",\"memcheck\":\"report\",\"mc_reports\":4,"
                             "\"mc_cut\":true"));
    probe_result_release(&p);
    /* the first rerun faults at the small sizes: the fallback ends there (session 23: the
     * likeliest reject faulted plain, so would the others; in 9 real passes each kept try was
     * the first rerun's). 64x1, which would run plain, is not reached: the price of the rule */
    probe_with_memcheck(&p, pr, "mcshared * * 64 1\nshfault * * * *\n");
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_INT(p.memcheck_fallback_runs, ==, 1);
    CHECK_INT(occurrences(p.bindings, "an illegal memory access"), ==, 2); /* the first try, 32x1 */
    CHECK(strstr(p.bindings, "\"detail\":\"an illegal memory access was encountered (at 1024x1, "
                             "block 32x1x1)\""));
    probe_result_release(&p);
    /* with nothing near an allocation there is no fallback: memcheck's verdict stands */
    probe_with_memcheck(&p, pr, "sticky * * * *\n");
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_INT(p.memcheck_fallback_runs, ==, 0);
    probe_result_release(&p);
    free_runners(pr);
}

/* A try that hangs under memcheck (7 did in session 11) is cut at PROBE_MEMCHECK_TIMEOUT_S, or
 * twice the small deadline where that is less (here 2 s), the whole sanitizer session with it
 * (the runner under it too), and the try runs plain, as do the kernel's later tries. */
static void test_probe_runner__a_try_that_hangs_under_memcheck_is_killed_whole_and_runs_plain(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    mc_runner = new_memcheck_runner();
    struct probe_result p;
    small_timeout_s = 1;
    probe_with_memcheck(&p, pr, "sticky * * 256 1\nsticky * * 16 16\nmchang * * 128 1\n");
    small_timeout_s = PROBE_SMALL_TIMEOUT_S;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "128x1x1");
    CHECK_INT(p.memcheck_inconclusive, ==, 1);
    CHECK(strstr(p.bindings, "\"memcheck\":\"inconclusive\""));
    probe_result_release(&p);
    struct probe_runner_stats mc = stats(mc_runner);
    CHECK_INT(mc.ended, ==, 1);
    /* memcheck could not judge this kernel: its next tries run plain (128x1 hangs under memcheck
     * at 1024x1 and faults plain at 64x64; 64x1 then runs plain, without memcheck) */
    small_timeout_s = 1;
    probe_with_memcheck(&p, pr, "sticky * * 256 1\nsticky * * 16 16\nmchang 1024 1 128 1\n"
                                "sticky 64 64 128 1\n");
    small_timeout_s = PROBE_SMALL_TIMEOUT_S;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "64x1x1");
    CHECK_INT(p.memcheck_runs, ==, 1);
    CHECK_INT(p.memcheck_inconclusive, ==, 1);
    CHECK_INT(p.confirm_runs, ==, 0);
    CHECK(strstr(p.bindings, "\"block\":\"64x1x1\",\"memcheck\"") == NULL);
    probe_result_release(&p);
    if (sandbox_detect(test_tmpdir())->drop_uid) { /* nothing of its uid is left */
        wait_uid_gone(sandbox_slot_uid(MC_SLOT));
        CHECK(!uid_alive(sandbox_slot_uid(MC_SLOT)));
    }
    free_runners(pr);
}

/* A kernel whose plain fault is a device-side assert never meets memcheck: an assert (or a trap)
 * ends a runner under memcheck too, so each try there would cost a memcheck runner start
 * (session 12: 24 of 49). Its retry runs plain, as without memcheck. */
static void test_probe_runner__a_kernel_whose_fault_is_a_device_side_assert_never_meets_memcheck(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    mc_runner = new_memcheck_runner();
    int starts = stats(mc_runner).starts;
    struct probe_result p;
    probe_with_memcheck(&p, pr, "assert * * 256 1\nassert * * 16 16\nassert * * 128 1\n");
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "64x1x1");
    CHECK_INT(p.memcheck_runs, ==, 0);
    CHECK_INT(p.confirm_runs, ==, 0);
    CHECK(strstr(p.bindings, "device-side assert triggered") != NULL);
    CHECK(strstr(p.bindings, "\"memcheck\"") == NULL);
    probe_result_release(&p);
    CHECK_INT(stats(mc_runner).starts, ==, starts);
    CHECK_INT(stats(mc_runner).runs, ==, 0);
    CHECK_INT(stats(pr).runs, ==, 3); /* 256x1 (the probe's own), 128x1, 64x1: all plain */
    free_runners(pr);
}

/* Once a memcheck run ended its runner (a fault memcheck did not catch: an assert under it), the
 * kernel's later tries run plain: each would otherwise start another memcheck runner. */
static void test_probe_runner__a_memcheck_run_that_ends_its_runner_sends_the_later_tries_plain(void)
{
    struct probe_runner *pr = new_runner(NULL, 20);
    mc_runner = new_memcheck_runner();
    struct probe_result p;
    probe_with_memcheck(&p, pr, "sticky * * 256 1\nsticky * * 16 16\nassert * * 128 1\n"
                                "sticky * * 64 1\n");
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "32x1x1");
    CHECK_INT(p.memcheck_runs, ==, 1); /* 128x1, which asserted there too */
    CHECK_INT(p.memcheck_reports, ==, 0);
    CHECK_INT(p.confirm_runs, ==, 0);
    CHECK(strstr(p.bindings, "\"block\":\"128x1x1\",\"memcheck\":\"fault\""));
    CHECK(strstr(p.bindings, "\"block\":\"64x1x1\",\"memcheck\"") == NULL);
    CHECK(strstr(p.bindings, "\"block\":\"32x1x1\",\"memcheck\"") == NULL);
    probe_result_release(&p);
    struct probe_runner_stats mc = stats(mc_runner);
    CHECK_INT(mc.runs, ==, 1);
    CHECK_INT(mc.ended, ==, 1);
    CHECK_INT(stats(pr).runs, ==, 3); /* 256x1, then 64x1 (faults) and 32x1 plain */
    free_runners(pr);
}

int main(void)
{
    /* what a GPU node gets (no bubblewrap there); a host-only runner */
    setenv("LSCAT_SANDBOX", "fallback", 1);
    setenv("LSCAT_RUNNER_NO_CUDA", "1", 1);
    sandbox_detect("/tmp"); /* as root: per-slot uids, as on the GPU nodes */
    TEST_RUN(test_probe_runner__kernels_run_one_after_another_in_one_runner);
    TEST_RUN(test_probe_runner__a_runner_killed_while_idle_is_replaced_not_charged_to_the_next_kernel);
    TEST_RUN(test_probe_runner__a_sticky_error_ends_the_runner_and_the_spare_takes_over);
    TEST_RUN(test_probe_runner__a_hang_is_killed_at_the_timeout);
    TEST_RUN(test_probe_runner__a_hang_at_the_small_sizes_is_cut_at_a_budget_from_the_first_kernel_time);
    TEST_RUN(test_probe_runner__without_the_kernel_time_a_small_hang_keeps_the_run_timeout);
    TEST_RUN(test_probe_runner__a_hang_at_the_first_small_configuration_ends_at_the_small_deadline);
    TEST_RUN(test_probe_runner__after_the_first_line_the_small_deadline_no_longer_applies);
    TEST_RUN(test_probe_runner__a_runner_ended_takes_another_workers_ready_spare);
    TEST_RUN(test_probe_runner__a_hang_at_the_first_configuration_ends_the_search);
    TEST_RUN(test_probe_runner__a_crash_is_recorded_as_a_crash);
    TEST_RUN(test_probe_runner__a_harness_without_its_so_runs_as_a_process);
    TEST_RUN(test_probe_runner__probe_runs_in_a_runner_and_as_processes_get_the_added_environment);
    TEST_RUN(test_probe_runner__a_runner_that_cannot_start_leaves_probes_to_processes);
    TEST_RUN(test_probe_runner__a_runner_that_fails_one_start_is_started_again);
    TEST_RUN(test_probe_runner__a_block_retry_after_a_fault_runs_in_the_spare);
    TEST_RUN(test_probe_runner__two_spares_take_two_faults_in_a_row_ready);
    TEST_RUN(test_probe_runner__a_large_configuration_past_its_budget_ends_the_binding_too_slow);
    TEST_RUN(test_probe_runner__too_slow_under_every_binding_is_runnable_at_the_small_sizes);
    TEST_RUN(test_probe_runner__a_large_configuration_predicted_past_the_cap_is_cut_at_the_cap);
    TEST_RUN(test_probe_runner__without_the_kernel_time_the_budget_is_four_times_the_line_interval_scaled);
    TEST_RUN(test_probe_runner__a_slow_large_configuration_is_cut_at_the_budget_from_the_kernel_time);
    TEST_RUN(test_probe_runner__the_same_large_configuration_passes_under_an_older_harness_budget);
    TEST_RUN(test_probe_runner__out_of_memory_at_the_large_size_ends_the_binding_at_once);
    TEST_RUN(test_probe_runner__a_write_past_a_buffer_at_the_small_sizes_skips_the_large_ones);
    TEST_RUN(test_probe_runner__without_a_budget_the_large_configurations_share_the_timeout);
    TEST_RUN(test_probe_runner__a_kernel_s_tries_after_its_fault_run_in_one_memcheck_runner_and_the_clean_one_is_confirmed_plain);
    TEST_RUN(test_probe_runner__a_kernel_whose_fault_is_a_device_side_assert_never_meets_memcheck);
    TEST_RUN(test_probe_runner__a_memcheck_run_that_ends_its_runner_sends_the_later_tries_plain);
    TEST_RUN(test_probe_runner__a_memcheck_report_written_after_the_run_returned_is_still_that_run_s);
    TEST_RUN(test_probe_runner__when_memcheck_finds_no_clean_try_its_near_allocation_rejects_run_plain);
    TEST_RUN(test_probe_runner__a_try_that_hangs_under_memcheck_is_killed_whole_and_runs_plain);
    return test_done();
}
