/* Probes in a long-lived lscat-runner (execute/probe_runner.c) against the real lscat-runner in
 * the real sandbox (the fallback a GPU node gets: no bubblewrap), host-only
 * (LSCAT_RUNNER_NO_CUDA=1), loading tune's stand-in harness built as harness.so. */
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/probe.h"
#include "execute/probe_runner.h"
#include "execute/sandbox.h"
#include "tests/support/test.h"

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

static struct probe_runner *new_runner(const char *program, double timeout_s)
{
    struct probe_runner_options ro = PROBE_RUNNER_OPTIONS_INIT;
    char *scratch = fs_join(test_tmpdir(), "slots");
    char *prog = program ? xstrdup(program) : probe_runner_find();
    CHECK(prog != NULL);
    ro.program = prog;
    ro.scratch = scratch;
    ro.work_dir = test_tmpdir();
    ro.slots[0] = 2;
    ro.slots[1] = 3;
    ro.timeout_s = timeout_s;
    ro.startup_s = 20;
    struct probe_runner *pr;
    CHECK(probe_runner_new(&pr, &ro) == 0);
    free(scratch);
    free(prog);
    return pr;
}

static void probe_in(struct probe_result *out, struct probe_runner *pr, const char *behavior,
                     int no_so, double timeout_s)
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
    o.runner = pr;
    o.slot = 4;
    CHECK(probe_run(out, &o) == 0);
    printf("# %s -> %s %s\n", behavior, probe_outcome_name(out->outcome),
           out->detail ? out->detail : "");
    free(h);
    free(dir);
    free(scratch);
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

int main(void)
{
    /* what a GPU node gets (no bubblewrap there); a host-only runner */
    setenv("LSCAT_SANDBOX", "fallback", 1);
    setenv("LSCAT_RUNNER_NO_CUDA", "1", 1);
    sandbox_detect("/tmp"); /* as root: per-slot uids, as on the GPU nodes */
    TEST_RUN(test_probe_runner__kernels_run_one_after_another_in_one_runner);
    TEST_RUN(test_probe_runner__a_sticky_error_ends_the_runner_and_the_spare_takes_over);
    TEST_RUN(test_probe_runner__a_hang_is_killed_at_the_timeout);
    TEST_RUN(test_probe_runner__a_crash_is_recorded_as_a_crash);
    TEST_RUN(test_probe_runner__a_harness_without_its_so_runs_as_a_process);
    TEST_RUN(test_probe_runner__a_runner_that_cannot_start_leaves_probes_to_processes);
    return test_done();
}
