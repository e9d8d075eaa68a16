/* Tests for common/gpulock.c with real processes holding real flock(2) locks: exclusive excludes
 * everyone, shared holders coexist, a waiting exclusive request is served before newer shared
 * ones (the turnstile), a killed holder frees the GPU, and stop/timeout end a wait. */
#include "common/error.h"
#include "common/fs.h"
#include "common/gpulock.h"
#include "tests/support/test.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

static void use_tmp_lock_dir(void)
{
    char *d = fs_join(test_tmpdir(), "locks");
    setenv("LSCAT_LOCK_DIR", d, 1);
    free(d);
}

/* A child that takes the lock, writes one byte to `ready`, then holds it until killed. */
static pid_t holder(const char *uuid, int exclusive)
{
    int p[2];
    char c;
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        struct gpulock l;
        close(p[0]);
        if (gpulock_acquire(&l, uuid, exclusive, NULL, TEST_PATIENCE_S, NULL) != 0)
            _exit(3);
        if (write(p[1], "x", 1) != 1)
            _exit(4);
        for (;;)
            pause();
    }
    close(p[1]);
    ssize_t n = read(p[0], &c, 1);
    close(p[0]);
    return n == 1 ? pid : -1;
}

static void kill_holder(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void test_gpulock__exclusive_excludes_another_exclusive_until_released(void)
{
    use_tmp_lock_dir();
    pid_t h = holder("GPU-aaaa", 1);
    CHECK(h > 0);
    struct gpulock l;
    CHECK_INT(gpulock_acquire(&l, "GPU-aaaa", 1, NULL, 0.2, NULL), ==, LSCAT_ETIMEOUT);
    CHECK_CONTAINS(lscat_error_last(), "GPU-aaaa");
    CHECK_INT(gpulock_acquire(&l, "GPU-aaaa", 0, NULL, 0.2, NULL), ==, LSCAT_ETIMEOUT);
    /* another GPU is free */
    CHECK_OK(gpulock_acquire(&l, "GPU-bbbb", 1, NULL, 0.2, NULL));
    gpulock_release(&l);
    kill_holder(h); /* a killed holder frees the GPU at once */
    CHECK_OK(gpulock_acquire(&l, "GPU-aaaa", 1, NULL, 0, NULL)); /* 0 s: the first try */
    gpulock_release(&l);
    gpulock_release(&l); /* twice is a no-op */
}

static void test_gpulock__shared_holders_coexist_and_block_exclusive(void)
{
    use_tmp_lock_dir();
    pid_t a = holder("GPU-cccc", 0);
    CHECK(a > 0);
    struct gpulock l;
    CHECK_OK(gpulock_acquire(&l, "GPU-cccc", 0, NULL, 0, NULL)); /* shared: at once */
    gpulock_release(&l);
    CHECK_INT(gpulock_acquire(&l, "GPU-cccc", 1, NULL, 0.2, NULL), ==, LSCAT_ETIMEOUT);
    kill_holder(a);
    CHECK_OK(gpulock_acquire(&l, "GPU-cccc", 1, NULL, 0, NULL));
    gpulock_release(&l);
}

/* Whether someone holds the GPU's turnstile (as a request waiting for the lock does). */
static int turnstile_held(void *uuid)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s.turn", getenv("LSCAT_LOCK_DIR"), (const char *)uuid);
    int fd = open(path, O_RDWR | O_CLOEXEC), held = 0;
    if (fd >= 0) {
        held = flock(fd, LOCK_EX | LOCK_NB) != 0;
        close(fd); /* releases it at once when we got it */
    }
    return held;
}

/* A shared holder is in flight; an exclusive request waits (holding the turnstile); a newer
 * shared request must then wait too instead of overtaking it. */
static void test_gpulock__waiting_exclusive_is_not_overtaken_by_new_shared(void)
{
    use_tmp_lock_dir();
    pid_t a = holder("GPU-dddd", 0);
    CHECK(a > 0);
    pid_t w = fork();
    if (w == 0) { /* the waiting measurement */
        struct gpulock l;
        _exit(gpulock_acquire(&l, "GPU-dddd", 1, NULL, TEST_PATIENCE_S, NULL) == 0 ? 0 : 1);
    }
    CHECK(test_wait_until(turnstile_held, "GPU-dddd")); /* it reached the wait */
    struct gpulock l;
    CHECK_INT(gpulock_acquire(&l, "GPU-dddd", 0, NULL, 0.3, NULL), ==, LSCAT_ETIMEOUT);
    kill_holder(a); /* the probe ends: the measurement gets the GPU */
    int st = 0;
    CHECK_INT(waitpid(w, &st, 0), ==, w);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_OK(gpulock_acquire(&l, "GPU-dddd", 0, NULL, 0, NULL));
    gpulock_release(&l);
}

static void test_gpulock__stop_flag_ends_the_wait(void)
{
    use_tmp_lock_dir();
    pid_t h = holder("GPU-eeee", 1);
    CHECK(h > 0);
    volatile int stop = 1;
    struct gpulock l;
    CHECK_INT(gpulock_acquire(&l, "GPU-eeee", 1, &stop, -1, NULL), ==, LSCAT_EBUSY);
    CHECK_INT(l.fd, ==, -1);
    kill_holder(h);
}

static void test_gpulock__unwritable_lock_folder_is_a_clear_error(void)
{
    setenv("LSCAT_LOCK_DIR", "/proc/lscat-no-such-folder", 1);
    struct gpulock l;
    CHECK(gpulock_acquire(&l, "GPU-ffff", 1, NULL, 0.1, NULL) < 0);
    CHECK_CONTAINS(lscat_error_last(), "LSCAT_LOCK_DIR");
    use_tmp_lock_dir();
    CHECK_INT(gpulock_acquire(&l, "", 1, NULL, 0.1, NULL), ==, LSCAT_EINVALID);
}

/* lscat-mpi's chunk turn: held by one process until it hands it on or dies (kill -9 here). */
static void test_gpulock__chunk_turn_waits_for_the_holder_and_is_freed_by_its_death(void)
{
    char *path = fs_join(test_tmpdir(), "gpu.baton");
    int up[2], go[2];
    CHECK(pipe(up) == 0 && pipe(go) == 0);
    setenv("LSCAT_GPU_BATON", path, 1);
    pid_t holder = fork();
    CHECK(holder >= 0);
    if (holder == 0) {
        char c = gpulock_baton(NULL) == 0 ? 'y' : 'n';
        if (write(up[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
            _exit(1);
        _exit(0);
    }
    char c = 0;
    CHECK(read(up[0], &c, 1) == 1 && c == 'y');
    volatile int stop = 1; /* busy: the wait ends at once with LSCAT_EBUSY */
    CHECK_INT(gpulock_baton(&stop), ==, LSCAT_EBUSY);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    CHECK_OK(gpulock_baton(NULL));
    gpulock_baton_release();
    CHECK_OK(gpulock_baton(&stop)); /* handed on: later calls return at once */
    unsetenv("LSCAT_GPU_BATON");
    close(up[0]), close(up[1]), close(go[0]), close(go[1]);
    free(path);
}

/* The context gate: one CUDA context made at a time across the host's processes. A holder that
 * never lets go costs a start at most 5 s (then it goes on without the gate, no error left
 * set); LSCAT_TUNE_CONTEXT_GATE=0 never waits. */
static void test_gpulock__context_gate_waits_at_most_5_s_and_can_be_turned_off(void)
{
    use_tmp_lock_dir();
    pid_t h = holder("contexts", 1);
    CHECK(h > 0);
    struct gpulock g;
    double waited = -1;
    setenv("LSCAT_TUNE_CONTEXT_GATE", "0", 1);
    gpulock_context_gate(&g, &waited);
    CHECK_INT(g.fd, ==, -1);
    CHECK(waited == 0);
    unsetenv("LSCAT_TUNE_CONTEXT_GATE");
    lscat_error_clear();
    gpulock_context_gate(&g, &waited); /* held by a process that never lets go */
    CHECK_INT(g.fd, ==, -1);
    CHECK(waited >= 4.9);
    CHECK_STR(lscat_error_last(), "");
    kill_holder(h);
    gpulock_context_gate(&g, &waited);
    CHECK(g.fd >= 0);
    gpulock_release(&g);
}

int main(void)
{
    TEST_RUN(test_gpulock__exclusive_excludes_another_exclusive_until_released);
    TEST_RUN(test_gpulock__shared_holders_coexist_and_block_exclusive);
    TEST_RUN(test_gpulock__waiting_exclusive_is_not_overtaken_by_new_shared);
    TEST_RUN(test_gpulock__stop_flag_ends_the_wait);
    TEST_RUN(test_gpulock__unwritable_lock_folder_is_a_clear_error);
    TEST_RUN(test_gpulock__chunk_turn_waits_for_the_holder_and_is_freed_by_its_death);
    TEST_RUN(test_gpulock__context_gate_waits_at_most_5_s_and_can_be_turned_off);
    return test_done();
}
