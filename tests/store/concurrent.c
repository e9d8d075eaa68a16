/* Several processes on one store at once, as `lscat tune --follow` beside `lscat execute` (the
 * night's run of the README) or tune's one connection per GPU: write transactions that read
 * before they write, single autocommit writes, a long read snapshot (dataset export) and
 * stores opened and closed while others write. None may fail with "database is locked": the
 * store's writers take the write lock at BEGIN (IMMEDIATE) and wait for it, and every
 * connection waits on a busy database from its first statement on. */
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "store/store.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 150

static char *fresh_store(void)
{
    char *path = fs_join(test_tmpdir(), "lscat.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, path, STORE_CREATE));
    CHECK_OK(store_exec(s, "CREATE TABLE conc(who INTEGER, n INTEGER)"));
    store_free(s);
    return path;
}

/* In a child: exit 0 when every round went through, else print why and exit 1. */
static void child_exit(int rc, int who, int round)
{
    if (rc < 0)
        fprintf(stderr, "# writer %d, round %d: %s\n", who, round, lscat_error_last());
    _exit(rc < 0 ? 1 : 0);
}

/* Each round: a transaction that reads the table, then writes a row derived from it; then one
 * autocommit write. Another process commits between any two of these. */
static void writer(const char *path, int who)
{
    struct store *s = NULL;
    int rc = store_open(&s, path, 0), i = 0;
    for (; rc >= 0 && i < ROUNDS; i++) {
        int64_t n = 0;
        rc = store_begin(s);
        if (rc >= 0)
            rc = store_query_int(&n, s, "SELECT count(*) FROM conc WHERE who = ?", "I", who);
        if (rc >= 0)
            rc = store_run(s, "INSERT INTO conc(who, n) VALUES (?, ?)", "Ii", who, n);
        if (rc >= 0)
            rc = store_commit(s);
        else
            store_rollback(s);
        if (rc >= 0)
            rc = store_run(s, "INSERT INTO conc(who, n) VALUES (?, -1)", "I", who);
    }
    store_free(s);
    child_exit(rc, who, i);
}

/* Open, read, write one row, close: ROUNDS times, while the others write. */
static void opener(const char *path, int who)
{
    int rc = 0, i = 0;
    for (; rc >= 0 && i < ROUNDS; i++) {
        struct store *s = NULL;
        int64_t n = 0;
        rc = store_open(&s, path, 0);
        if (rc >= 0)
            rc = store_query_int(&n, s, "SELECT count(*) FROM conc", "");
        if (rc >= 0)
            rc = store_run(s, "INSERT INTO conc(who, n) VALUES (?, ?)", "Ii", who, n);
        store_free(s);
    }
    child_exit(rc, who, i);
}

/* A read snapshot as the export takes it (deferred BEGIN, reads only), held while others
 * write: its counts never change inside it. */
static void snapshot_reader(const char *path, int who)
{
    int rc = 0, i = 0;
    for (; rc >= 0 && i < ROUNDS / 5; i++) {
        struct store *s = NULL;
        int64_t a = 0, b = 0;
        rc = store_open(&s, path, STORE_READONLY);
        if (rc >= 0)
            rc = store_exec(s, "BEGIN");
        if (rc >= 0)
            rc = store_query_int(&a, s, "SELECT count(*) FROM conc", "");
        usleep(2000);
        if (rc >= 0)
            rc = store_query_int(&b, s, "SELECT count(*) FROM conc", "");
        if (rc >= 0 && a != b)
            rc = lscat_error_set("the snapshot changed under the reader: %lld then %lld",
                                 (long long)a, (long long)b);
        if (s)
            store_rollback(s);
        store_free(s);
    }
    child_exit(rc, who, i);
}

static void wait_all(pid_t *pids, int n)
{
    int failed = -1, status = 0;
    for (int i = 0; i < n; i++) { /* all of them, before a failure ends the test */
        int st = 0;
        if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            failed = i, status = st;
    }
    if (failed >= 0)
        test_fail(__FILE__, __LINE__, "process %d failed (status 0x%x; its message is above)",
                  failed, status);
}

static int64_t rows(const char *path, const char *where)
{
    struct store *s = NULL;
    int64_t n = -1;
    char *sql = xasprintf("SELECT count(*) FROM conc WHERE %s", where);
    CHECK_OK(store_open(&s, path, STORE_READONLY));
    CHECK_OK(store_query_int(&n, s, sql, ""));
    store_free(s);
    free(sql);
    return n;
}

static void test_store__two_processes_write_one_store_at_once(void)
{
    char *path = fresh_store();
    pid_t pids[3];
    for (int i = 0; i < 3; i++)
        if ((pids[i] = fork()) == 0)
            writer(path, i);
    wait_all(pids, 3);
    /* every round of every writer is there once, each numbered after its own earlier rows */
    for (int i = 0; i < 3; i++) {
        char where[64];
        snprintf(where, sizeof(where), "who = %d AND n >= 0", i);
        CHECK_INT(rows(path, where), ==, ROUNDS);
    }
    CHECK_INT(rows(path, "n = -1"), ==, 3 * ROUNDS);
    free(path);
}

static void test_store__stores_opened_while_others_write_never_see_a_lock(void)
{
    char *path = fresh_store();
    pid_t pids[4];
    for (int i = 0; i < 4; i++)
        if ((pids[i] = fork()) == 0)
            i < 2 ? writer(path, i) : i == 2 ? opener(path, i) : snapshot_reader(path, i);
    wait_all(pids, 4);
    CHECK_INT(rows(path, "who = 2"), ==, ROUNDS);
    CHECK_INT(rows(path, "who < 2"), ==, 4 * ROUNDS);
    free(path);
}

/* In another program (this one run again: a forked child would inherit SQLite's view of the
 * parent's locks): the rows committed so far. It opens the store read-write, as any lscat
 * stage does, so that on close it checkpoints and removes the WAL if it is the last user. */
static int count_rows_and_exit(const char *path)
{
    struct store *s = NULL;
    int64_t n = -1;
    if (store_open(&s, path, 0) < 0 || store_query_int(&n, s, "SELECT count(*) FROM conc", "") < 0)
        n = 255;
    store_free(s);
    return (int)(n > 254 ? 255 : n);
}

static int64_t rows_in_another_process(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "concurrent", "--count-rows", path, (char *)NULL);
        _exit(254);
    }
    int st = 0;
    CHECK_INT((int)waitpid(pid, &st, 0), ==, (int)pid);
    CHECK(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* tune keeps one connection per GPU in one process. Opening another connection must not drop
 * the process's locks on the store (closing any descriptor of a file drops them all): else a
 * reader elsewhere takes the store for unused when it closes, checkpoints it and deletes the
 * WAL, and every later commit of this process goes to a deleted file that a kill loses. */
static void test_store__a_second_connection_keeps_commits_visible_to_other_processes(void)
{
    char *path = fresh_store();
    struct store *a = NULL, *b = NULL;
    CHECK_OK(store_open(&a, path, 0));
    CHECK_OK(store_exec(a, "INSERT INTO conc VALUES (1, 1)"));
    CHECK_OK(store_open(&b, path, 0));
    CHECK_INT(rows_in_another_process(path), ==, 1);
    CHECK_OK(store_exec(a, "INSERT INTO conc VALUES (1, 2)"));
    CHECK_OK(store_exec(b, "INSERT INTO conc VALUES (2, 1)"));
    CHECK_INT(rows_in_another_process(path), ==, 3);
    char *wal = xasprintf("%s-wal", path);
    CHECK(fs_exists(wal)); /* still ours: this process has the store open */
    free(wal);
    store_free(b);
    store_free(a);
    free(path);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--count-rows") == 0)
        return count_rows_and_exit(argv[2]);
    TEST_RUN(test_store__a_second_connection_keeps_commits_visible_to_other_processes);
    TEST_RUN(test_store__two_processes_write_one_store_at_once);
    TEST_RUN(test_store__stores_opened_while_others_write_never_see_a_lock);
    return test_done();
}
