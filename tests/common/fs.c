/* Tests for common/fs.c and the progress bar's formatting. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/progress.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_fs__mkdirs_creates_nested_folders_and_is_idempotent(void)
{
    char *p = fs_join(test_tmpdir(), "a/b/c");
    CHECK_OK(fs_mkdirs(p, 0755));
    CHECK(fs_is_dir(p));
    CHECK_OK(fs_mkdirs(p, 0755));
    char *f = fs_join(test_tmpdir(), "a/file");
    test_write_file(f, "x", 1);
    char *under = fs_join(f, "sub");
    CHECK_INT(fs_mkdirs(under, 0755), <, 0);
    CHECK_CONTAINS(lscat_error_last(), "a/file");
    free(p);
    free(f);
    free(under);
}

static void test_fs__write_atomic_replaces_content_and_leaves_no_temp(void)
{
    char *p = fs_join(test_tmpdir(), "x.json");
    CHECK_OK(fs_write_atomic(p, "one", 3));
    CHECK_OK(fs_write_atomic(p, "second", 6));
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, p));
    CHECK_STR(b.data, "second");
    buf_release(&b);
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", p, (long)getpid());
    CHECK(!fs_exists(tmp));
    CHECK_INT(fs_write_atomic("/nonexistent-dir/x", "a", 1), <, 0);
    free(p);
}

static void test_fs__copy_atomic_copies_the_bytes_and_says_when_the_source_is_missing(void)
{
    char *from = fs_join(test_tmpdir(), "from.bin"), *to = fs_join(test_tmpdir(), "to.bin");
    CHECK_OK(fs_write_atomic(from, "a\0b", 3));
    CHECK_OK(fs_write_atomic(to, "older and longer", 16));
    CHECK_OK(fs_copy_atomic(from, to));
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, to));
    CHECK_INT((int)b.len, ==, 3);
    CHECK(memcmp(b.data, "a\0b", 3) == 0);
    buf_release(&b);
    CHECK_INT(fs_copy_atomic("/nonexistent-dir/x", to), <, 0);
    free(from);
    free(to);
}

static void test_fs__remove_tree_removes_everything_and_refuses_dangerous_paths(void)
{
    char *root = fs_join(test_tmpdir(), "tree");
    char *deep = fs_join(root, "d/e/f.txt");
    test_write_file(deep, "x", 1);
    CHECK_OK(fs_remove_tree(root));
    CHECK(!fs_exists(root));
    CHECK_INT(fs_remove_tree("/"), <, 0);
    CHECK_INT(fs_remove_tree(""), <, 0);
    CHECK_INT(fs_remove_tree("/tmp/../etc"), <, 0);
    free(root);
    free(deep);
}

static void test_fs__join_handles_slashes(void)
{
    char *a = fs_join("a/", "/b");
    CHECK_STR(a, "a/b");
    char *b = fs_join("", "b");
    CHECK_STR(b, "b");
    char *c = fs_join("/", "b");
    CHECK_STR(c, "/b");
    free(a);
    free(b);
    free(c);
}

/* A pid that was a process a moment ago and is none now. */
static long dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    CHECK(pid > 0 && waitpid(pid, NULL, 0) == pid);
    return (long)pid;
}

static void touch(const char *dir, const char *rel)
{
    char *p = fs_join(dir, rel);
    test_write_file(p, "x", 1);
    free(p);
}

static int there(const char *dir, const char *rel)
{
    char *p = fs_join(dir, rel);
    int e = fs_exists(p);
    free(p);
    return e;
}

static void test_fs__stale_temporaries_of_dead_processes_are_removed_live_ones_kept(void)
{
    const char *d = test_tmpdir();
    char dead[64], live[64], deep[96], dir[64];
    long pid = dead_pid();
    CHECK(!fs_pid_alive(pid));
    CHECK(fs_pid_alive((long)getpid()));
    snprintf(dead, sizeof(dead), "ab/0123.tmp.%ld", pid);        /* a blob mid-write */
    snprintf(dir, sizeof(dir), "cd/4567.tmp.%ld/kernel.cu", pid); /* a kernel folder */
    snprintf(live, sizeof(live), "ab/89ab.tmp.%ld", (long)getpid());
    snprintf(deep, sizeof(deep), "ef/gh/ij/file.tmp.%ld", pid);   /* below the depth asked */
    touch(d, dead);
    touch(d, dir);
    touch(d, live);
    touch(d, deep);
    touch(d, "ab/0123");            /* finished files stay */
    touch(d, "ab/notes.tmp.txt");   /* not "<name>.tmp.<pid>" */
    CHECK_INT(fs_temp_pid("x.cu.tmp.42"), ==, 42);
    CHECK_INT(fs_temp_pid("x.tmp.4a"), ==, 0);
    CHECK_INT(fs_temp_pid("x.tmp."), ==, 0);
    CHECK_INT(fs_remove_stale_temps(d, 1), ==, 2);
    CHECK(!there(d, dead));
    char *folder = fs_join(d, dir);
    *strrchr(folder, '/') = '\0';
    CHECK(!fs_exists(folder));
    free(folder);
    CHECK(there(d, live));
    CHECK(there(d, deep));
    CHECK(there(d, "ab/0123"));
    CHECK(there(d, "ab/notes.tmp.txt"));
    CHECK_INT(fs_remove_stale_temps(d, 3), ==, 1); /* deeper now: the last one goes */
    CHECK(!there(d, deep));
    char *missing = fs_join(d, "none");
    CHECK_INT(fs_remove_stale_temps(missing, 2), ==, 0);
    free(missing);
}

static void test_progress__formats_durations_for_people(void)
{
    char d[32];
    progress_format_duration(d, sizeof(d), 12.34);
    CHECK_STR(d, "12.3s");
    progress_format_duration(d, sizeof(d), 185);
    CHECK_STR(d, "3m05s");
    progress_format_duration(d, sizeof(d), 3720);
    CHECK_STR(d, "1h02m");
    progress_format_duration(d, sizeof(d), -1);
    CHECK_STR(d, "0.0s");
}

static void test_progress__without_a_terminal_prints_one_summary_line(void)
{
    /* stderr is redirected to a file: no bar, one summary line at the end. */
    char *path = fs_join(test_tmpdir(), "stderr.txt");
    fflush(stderr);
    int saved = dup(2);
    FILE *f = freopen(path, "w", stderr);
    CHECK(f != NULL);
    struct progress *p = progress_new("scan", 10);
    for (int i = 0; i < 10; i++)
        progress_add(p, 1);
    progress_note(p, "2 bad");
    progress_free(p);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    CHECK(!strchr(b.data, '\r'));
    CHECK_CONTAINS(b.data, "scan: 10/10 in ");
    CHECK_CONTAINS(b.data, "2 bad");
    CHECK_INT(strchr(b.data, '\n') - b.data + 1, ==, (long)b.len); /* exactly one line */
    buf_release(&b);
    free(path);
}

int main(void)
{
    TEST_RUN(test_fs__mkdirs_creates_nested_folders_and_is_idempotent);
    TEST_RUN(test_fs__copy_atomic_copies_the_bytes_and_says_when_the_source_is_missing);
    TEST_RUN(test_fs__write_atomic_replaces_content_and_leaves_no_temp);
    TEST_RUN(test_fs__remove_tree_removes_everything_and_refuses_dangerous_paths);
    TEST_RUN(test_fs__join_handles_slashes);
    TEST_RUN(test_fs__stale_temporaries_of_dead_processes_are_removed_live_ones_kept);
    TEST_RUN(test_progress__formats_durations_for_people);
    TEST_RUN(test_progress__without_a_terminal_prints_one_summary_line);
    return test_done();
}
