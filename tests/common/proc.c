/* Tests for common/proc.c against real child processes: exit codes, signals, captured output
 * and its cap, stdin, timeouts that kill the whole process group, rlimits; proc_spawn's pipes,
 * its extra descriptor and its stdin from memory. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/proc.h"
#include "tests/support/test.h"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void run_sh(struct proc_result *r, const char *script, double timeout_s, size_t cap)
{
    const char *argv[] = { "/bin/sh", "-c", script, NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    o.timeout_s = timeout_s;
    o.out_cap_bytes = cap;
    CHECK_OK(proc_run(r, &o));
}

/* Alive = exists and is not a zombie (a killed orphan stays a zombie where PID 1 does not
 * reap, as in some containers). */
static int pid_alive(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    struct buf b = BUF_INIT;
    if (buf_read_file(&b, path) < 0) {
        buf_release(&b);
        return 0;
    }
    const char *paren = strrchr(b.data, ')');
    int alive = !(paren && (paren[2] == 'Z' || paren[2] == 'X'));
    buf_release(&b);
    return alive;
}

static pid_t read_pid(const char *path)
{
    struct buf b = BUF_INIT;
    pid_t pid = 0;
    if (buf_read_file(&b, path) == 0)
        pid = (pid_t)atol(b.data);
    buf_release(&b);
    return pid;
}

static void test_proc__reports_exit_code_and_captures_both_streams(void)
{
    struct proc_result r;
    run_sh(&r, "echo out; echo err >&2; exit 3", 10, 0);
    CHECK_INT(r.exit_code, ==, 3);
    CHECK_INT(r.signal, ==, 0);
    CHECK_INT(r.timed_out, ==, 0);
    CHECK_STR(r.out.data, "out\n");
    CHECK_STR(r.err.data, "err\n");
    proc_result_release(&r);
}

static void test_proc__reports_the_signal_that_killed_the_child(void)
{
    struct proc_result r;
    run_sh(&r, "kill -SEGV $$", 10, 0);
    CHECK_INT(r.signal, ==, SIGSEGV);
    struct buf d = BUF_INIT;
    proc_describe(&d, &r, NULL);
    CHECK_CONTAINS(d.data, "signal 11");
    buf_release(&d);
    proc_result_release(&r);
}

static int pid_gone(void *pid)
{
    return !pid_alive(*(pid_t *)pid);
}

static void test_proc__timeout_kills_the_child_and_its_grandchildren(void)
{
    char script[8192], pidfile[4096];
    snprintf(pidfile, sizeof(pidfile), "%s/grandchild.pid", test_tmpdir());
    /* The grandchild ignores SIGTERM-style politeness; only a group SIGKILL stops it. */
    snprintf(script, sizeof(script), "sleep 3600 & echo $! > %s; sleep 3600", pidfile);
    struct proc_result r;
    double t0 = fs_mono_s();
    run_sh(&r, script, 10, 0); /* room for the shell to write the pid on a busy machine */
    double el = fs_mono_s() - t0;
    CHECK_INT(r.timed_out, ==, 1);
    CHECK(el < 1800); /* not the sleeps' hour */
    pid_t gc = read_pid(pidfile);
    CHECK_INT(gc, >, 0);
    test_wait_until(pid_gone, &gc); /* init reaps it */
    CHECK(!pid_alive(gc));
    proc_result_release(&r);
}

static void test_proc__background_leftovers_are_killed_when_the_child_exits(void)
{
    char script[8192], pidfile[4096];
    snprintf(pidfile, sizeof(pidfile), "%s/bg.pid", test_tmpdir());
    snprintf(script, sizeof(script), "sleep 3600 & echo $! > %s; exit 0", pidfile);
    struct proc_result r;
    double t0 = fs_mono_s();
    run_sh(&r, script, 3600, 0);
    CHECK(fs_mono_s() - t0 < 1800); /* did not wait for the sleeper holding the pipes */
    CHECK_INT(r.exit_code, ==, 0);
    CHECK_INT(r.timed_out, ==, 0);
    pid_t bg = read_pid(pidfile);
    CHECK(bg > 0);
    test_wait_until(pid_gone, &bg);
    CHECK(!pid_alive(bg));
    proc_result_release(&r);
}

static void test_proc__output_cap_holds_and_the_child_is_not_blocked(void)
{
    struct proc_result r;
    /* 20 MB on stdout, 20 MB on stderr, then a normal exit. */
    run_sh(&r, "head -c 20000000 /dev/zero; head -c 20000000 /dev/zero >&2; exit 7", 30, 4096);
    CHECK_INT(r.exit_code, ==, 7);
    CHECK_INT(r.out.len, ==, 4096);
    CHECK_INT(r.err.len, ==, 4096);
    CHECK_INT(r.out_truncated, ==, 1);
    CHECK_INT(r.err_truncated, ==, 1);
    proc_result_release(&r);
}

static void test_proc__feeds_stdin_and_uses_cwd_and_env(void)
{
    const char *argv[] = { "/bin/sh", "-c", "cat; pwd; echo \"$LSCAT_T\"", NULL };
    const char *env[] = { "LSCAT_T=value", "PATH=/usr/bin:/bin", NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    o.env = env;
    o.cwd = "/";
    o.stdin_data = "from stdin\n";
    o.stdin_len = 11;
    struct proc_result r;
    CHECK_OK(proc_run(&r, &o));
    CHECK_STR(r.out.data, "from stdin\n/\nvalue\n");
    proc_result_release(&r);
}

static void test_proc__large_stdin_is_written_fully(void)
{
    size_t n = 5u << 20;
    char *data = malloc(n);
    memset(data, 'a', n);
    const char *argv[] = { "wc", "-c", NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    o.stdin_data = data;
    o.stdin_len = n;
    struct proc_result r;
    CHECK_OK(proc_run(&r, &o));
    free(data);
    CHECK_INT(atol(r.out.data), ==, (long)n);
    proc_result_release(&r);
}

static void test_proc__missing_program_exits_127(void)
{
    const char *argv[] = { "lscat-no-such-program-xyz", NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    struct proc_result r;
    CHECK_OK(proc_run(&r, &o));
    CHECK_INT(r.exit_code, ==, 127);
    CHECK_CONTAINS(r.err.data, "cannot execute");
    CHECK_CONTAINS(r.err.data, argv[0]); /* which program: the user can act on it */
    proc_result_release(&r);
}

static void test_proc__file_size_limit_stops_a_runaway_writer(void)
{
    char script[4096];
    snprintf(script, sizeof(script), "head -c 10000000 /dev/zero > %s/big", test_tmpdir());
    const char *argv[] = { "/bin/sh", "-c", script, NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    o.limits.file_bytes = 1 << 20;
    struct proc_result r;
    CHECK_OK(proc_run(&r, &o));
    CHECK(r.exit_code != 0 || r.signal == SIGXFSZ);
    proc_result_release(&r);
}

static void test_proc__missing_cwd_fails_in_the_child_with_a_message(void)
{
    const char *argv[] = { "true", NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    o.cwd = "/nonexistent-lscat-dir";
    struct proc_result r;
    CHECK_OK(proc_run(&r, &o));
    CHECK_INT(r.exit_code, ==, 127);
    CHECK_CONTAINS(r.err.data, "working directory");
    proc_result_release(&r);
}

static const char *env_get(char **env, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; env[i]; i++)
        if (!strncmp(env[i], name, n) && env[i][n] == '=')
            return env[i] + n + 1;
    return NULL;
}

static void test_proc__untrusted_children_get_the_allow_listed_environment_only(void)
{
    setenv("GITHUB_TOKEN", "canary-1", 1);
    setenv("MY_PASSWORD", "canary-2", 1);
    setenv("CUDA_VISIBLE_DEVICES", "3", 1);
    setenv("LSCAT_TIMING_GRAPH", "0", 1);
    setenv("LC_ALL", "C", 1);
    setenv("NVCC_APPEND_FLAGS", "-g", 1);
    const char *extra[] = { "CUDA_VISIBLE_DEVICES=GPU-x", "LSCAT_CLOCKS_LOCKED=1", NULL };
    char **env = proc_env_untrusted("/scratch/k", extra);
    CHECK(!env_get(env, "GITHUB_TOKEN"));
    CHECK(!env_get(env, "MY_PASSWORD"));
    CHECK_STR(env_get(env, "PATH"), getenv("PATH"));
    CHECK_STR(env_get(env, "HOME"), "/scratch/k");
    CHECK_STR(env_get(env, "TMPDIR"), "/scratch/k/tmp");
    CHECK_STR(env_get(env, "CUDA_VISIBLE_DEVICES"), "GPU-x"); /* extra wins, once */
    int n = 0;
    for (size_t i = 0; env[i]; i++)
        n += !strncmp(env[i], "CUDA_VISIBLE_DEVICES=", 21);
    CHECK_INT(n, ==, 1);
    CHECK_STR(env_get(env, "LSCAT_TIMING_GRAPH"), "0");
    CHECK_STR(env_get(env, "LSCAT_CLOCKS_LOCKED"), "1");
    CHECK_STR(env_get(env, "LC_ALL"), "C");
    CHECK_STR(env_get(env, "NVCC_APPEND_FLAGS"), "-g");
    proc_env_free(env);
    setenv("HOME", "/home/someone", 1);
    env = proc_env_untrusted(NULL, NULL); /* tune's harnesses keep HOME (the CUDA JIT cache) */
    CHECK_STR(env_get(env, "HOME"), "/home/someone");
    CHECK(!env_get(env, "GITHUB_TOKEN"));
    proc_env_free(env);
    /* and a child started with it sees no token */
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    const char *argv[] = { "/bin/sh", "-c", "env", NULL };
    env = proc_env_untrusted("/tmp", NULL);
    o.argv = argv;
    o.env = (const char *const *)env;
    CHECK_OK(proc_run(&r, &o));
    CHECK_CONTAINS(r.out.data, "PATH=");
    CHECK(!strstr(r.out.data, "canary-"));
    proc_result_release(&r);
    proc_env_free(env);
    CHECK(!proc_env_allowed("GITHUB_TOKEN=x") && !proc_env_allowed("LSCAT_=x"));
    CHECK(proc_env_allowed("LD_LIBRARY_PATH=/x") && proc_env_allowed("CUDA_HOME"));
    unsetenv("GITHUB_TOKEN");
    unsetenv("MY_PASSWORD");
}

/* Everything fd gives until EOF (the child exits: no timeout needed). */
static void read_all(struct buf *out, int fd)
{
    char tmp[4096];
    ssize_t n;
    while ((n = read(fd, tmp, sizeof(tmp))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        CHECK(n > 0);
        if (n < 0)
            return;
        buf_add(out, tmp, (size_t)n);
    }
}

/* Start /bin/sh -c script with o's pipes, read its stdout (and extra pipe) to EOF, reap it.
 * Returns its wait status; *in_fd and *extra_fd say what proc_spawn handed back. */
static int spawn_sh(struct buf *out, struct buf *extra, int *in_fd, int *extra_fd,
                    struct proc_options *o, const char *script)
{
    const char *argv[] = { "/bin/sh", "-c", script, NULL };
    struct proc_child c;
    int st = -1;
    o->argv = argv;
    CHECK_OK(proc_spawn(&c, o));
    *in_fd = c.in_fd;
    *extra_fd = c.extra_fd;
    if (c.in_fd >= 0)
        close(c.in_fd);
    c.in_fd = -1;
    if (extra && c.extra_fd >= 0)
        read_all(extra, c.extra_fd);
    read_all(out, c.out_fd);
    CHECK_INT(waitpid(c.pid, &st, 0), ==, c.pid);
    c.pid = -1;
    proc_child_kill(&c); /* closes what is left */
    return st;
}

static void test_proc__spawn_keeps_stdout_and_drops_stderr_by_default(void)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    struct buf out = BUF_INIT;
    int in_fd, extra_fd;
    int st = spawn_sh(&out, NULL, &in_fd, &extra_fd, &o,
                      "if read line; then echo got; else echo eof; fi; echo err >&2");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_STR(out.data, "eof\n"); /* stdin: our pipe, closed at once; stderr: nowhere */
    CHECK(in_fd >= 0);
    CHECK_INT(extra_fd, ==, -1);
    buf_release(&out);
}

static void test_proc__spawn_gives_the_child_an_extra_pipe_at_the_asked_descriptor(void)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    struct buf out = BUF_INIT, extra = BUF_INIT;
    int in_fd, extra_fd;
    o.extra_fd = 3;
    o.stderr_to_out = 1;
    int st = spawn_sh(&out, &extra, &in_fd, &extra_fd, &o,
                      "echo result >/dev/fd/3; echo out; echo err >&2");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(extra_fd >= 0);
    CHECK_STR(extra.data, "result\n");
    CHECK_STR(out.data, "out\nerr\n");
    buf_release(&out);
    buf_release(&extra);
}

static void test_proc__spawn_feeds_stdin_larger_than_a_pipe_from_memory(void)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    struct buf out = BUF_INIT;
    size_t len = 300000; /* beyond a pipe's 64 KiB: a pipe would block the parent */
    char *data = malloc(len);
    CHECK(data != NULL);
    if (!data)
        return;
    memset(data, 'a', len);
    o.stdin_data = data;
    o.stdin_len = len;
    int in_fd, extra_fd;
    int st = spawn_sh(&out, NULL, &in_fd, &extra_fd, &o, "wc -c");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_INT(in_fd, ==, -1); /* nothing to write: it is all in the memory file */
    CHECK_INT(atol(out.data), ==, 300000);
    free(data);
    buf_release(&out);
}

static void test_proc__spawn_refuses_an_extra_descriptor_below_3(void)
{
    const char *argv[] = { "/bin/true", NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_child c;
    o.argv = argv;
    o.extra_fd = 2;
    CHECK_INT(proc_spawn(&c, &o), <, 0);
    CHECK_CONTAINS(lscat_error_last(), "extra_fd 2");
    CHECK_INT(c.pid, ==, -1);
}

/* A child started from a thread that ends at once, with a parent-death signal (as tune's
 * runners have): proc_spawn's is killed when that thread ends (Linux's parent is the thread),
 * proc_spawn_lasting's lives on until we kill it. */
static int deathsig(void *arg)
{
    (void)arg;
    return prctl(PR_SET_PDEATHSIG, SIGKILL) != 0;
}

struct spawn_arg {
    int lasting, rc;
    struct proc_child c;
};

static void *spawn_thread(void *arg)
{
    struct spawn_arg *a = arg;
    const char *argv[] = { "/bin/sleep", "30", NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    o.child_setup = deathsig;
    a->rc = a->lasting ? proc_spawn_lasting(&a->c, &o) : proc_spawn(&a->c, &o);
    return NULL;
}

/* Is the child still running `wait_s` after its thread ended? (Killed and reaped either way.) */
static int alive_after_thread(int lasting, double wait_s)
{
    struct spawn_arg a = { .lasting = lasting };
    pthread_t t;
    CHECK_INT(pthread_create(&t, NULL, spawn_thread, &a), ==, 0);
    pthread_join(t, NULL);
    CHECK_INT(a.rc, ==, 0);
    int alive = 1;
    for (double waited = 0; alive && waited < wait_s; waited += 0.05) {
        alive = waitpid(a.c.pid, NULL, WNOHANG) == 0;
        if (alive)
            usleep(50000);
    }
    if (!alive)
        a.c.pid = -1; /* reaped */
    proc_child_kill(&a.c);
    return alive;
}

static void test_proc__spawn_lasting_children_outlive_the_thread_that_started_them(void)
{
    CHECK_INT(alive_after_thread(1, 0.5), ==, 1);
}

static void test_proc__spawn_children_die_with_the_thread_that_started_them(void)
{
    /* the kernel's rule that the above works around (a busy machine: up to 60 s to see it) */
    CHECK_INT(alive_after_thread(0, 60), ==, 0);
}

int main(void)
{
    TEST_RUN(test_proc__reports_exit_code_and_captures_both_streams);
    TEST_RUN(test_proc__reports_the_signal_that_killed_the_child);
    TEST_RUN(test_proc__timeout_kills_the_child_and_its_grandchildren);
    TEST_RUN(test_proc__background_leftovers_are_killed_when_the_child_exits);
    TEST_RUN(test_proc__output_cap_holds_and_the_child_is_not_blocked);
    TEST_RUN(test_proc__feeds_stdin_and_uses_cwd_and_env);
    TEST_RUN(test_proc__large_stdin_is_written_fully);
    TEST_RUN(test_proc__missing_program_exits_127);
    TEST_RUN(test_proc__file_size_limit_stops_a_runaway_writer);
    TEST_RUN(test_proc__missing_cwd_fails_in_the_child_with_a_message);
    TEST_RUN(test_proc__untrusted_children_get_the_allow_listed_environment_only);

    TEST_RUN(test_proc__spawn_keeps_stdout_and_drops_stderr_by_default);
    TEST_RUN(test_proc__spawn_gives_the_child_an_extra_pipe_at_the_asked_descriptor);
    TEST_RUN(test_proc__spawn_feeds_stdin_larger_than_a_pipe_from_memory);
    TEST_RUN(test_proc__spawn_refuses_an_extra_descriptor_below_3);
    TEST_RUN(test_proc__spawn_lasting_children_outlive_the_thread_that_started_them);
    TEST_RUN(test_proc__spawn_children_die_with_the_thread_that_started_them);
    return test_done();
}
