/* Tests for nightly/lock.c: one nightly per store, a second one refused with the holder named,
 * the holder line of a night that died taken over, on real files with real flock(2). */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "nightly/lock.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_lock__a_second_holder_is_refused_with_the_first_ones_pid(void)
{
    char *db = fs_join(test_tmpdir(), "s.db");
    struct nightly_lock a = NIGHTLY_LOCK_INIT, b = NIGHTLY_LOCK_INIT;
    CHECK_OK(nightly_lock_acquire(&a, db));
    CHECK_INT(nightly_lock_acquire(&b, db), ==, LSCAT_EBUSY);
    char pid[32];
    snprintf(pid, sizeof(pid), "pid %ld ", (long)getpid());
    CHECK_CONTAINS(lscat_error_last(), pid);
    CHECK_CONTAINS(lscat_error_last(), "another lscat nightly is running on this store");
    CHECK_INT(b.fd, ==, -1);
    nightly_lock_release(&b);
    nightly_lock_release(&a);
    CHECK_OK(nightly_lock_acquire(&b, db)); /* released: free again */
    nightly_lock_release(&b);
    free(db);
}

static void test_lock__a_release_clears_the_holder_line(void)
{
    char *db = fs_join(test_tmpdir(), "s.db"), *path = fs_join(test_tmpdir(), "s.db.nightly.lock");
    struct nightly_lock a = NIGHTLY_LOCK_INIT;
    struct buf b = BUF_INIT;
    CHECK_OK(nightly_lock_acquire(&a, db));
    CHECK_OK(buf_read_file(&b, path));
    CHECK_CONTAINS(b.data, "since ");
    nightly_lock_release(&a);
    buf_reset(&b);
    CHECK_OK(buf_read_file(&b, path));
    CHECK_INT(b.len, ==, 0);
    buf_release(&b);
    free(db);
    free(path);
}

/* A child takes the lock and dies without releasing it: the kernel drops the flock, the holder
 * line stays, and the next nightly takes over. */
static void test_lock__the_lock_of_a_killed_holder_is_taken_over(void)
{
    char *db = fs_join(test_tmpdir(), "s.db"), *path = fs_join(test_tmpdir(), "s.db.nightly.lock");
    pid_t pid = fork();
    if (pid == 0) {
        struct nightly_lock c = NIGHTLY_LOCK_INIT;
        _exit(nightly_lock_acquire(&c, db) == 0 ? 0 : 1); /* dies holding it */
    }
    int status = 0;
    CHECK_INT(waitpid(pid, &status, 0), ==, pid);
    CHECK_INT(WEXITSTATUS(status), ==, 0);
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    CHECK(b.len > 0);
    struct nightly_lock a = NIGHTLY_LOCK_INIT;
    CHECK_OK(nightly_lock_acquire(&a, db));
    nightly_lock_release(&a);
    buf_release(&b);
    free(db);
    free(path);
}

int main(void)
{
    TEST_RUN(test_lock__a_second_holder_is_refused_with_the_first_ones_pid);
    TEST_RUN(test_lock__a_release_clears_the_holder_line);
    TEST_RUN(test_lock__the_lock_of_a_killed_holder_is_taken_over);
    return test_done();
}
