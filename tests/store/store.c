/* Tests for store/store.c on real SQLite files: migrations, reopening, refusal of newer,
 * corrupt and foreign files (left byte-for-byte untouched), crash safety under SIGKILL, the
 * statement API and stage_runs. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "store/status.h"
#include "store/store.h"
#include "schema/schema.h"
#include "tests/support/test.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char *db_path(const char *name)
{
    return fs_join(test_tmpdir(), name);
}

static void file_hash(char out[65], const char *path)
{
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    sha256_hex(out, b.data, b.len);
    buf_release(&b);
}

/* Run raw SQL on a file with SQLite itself, to craft fixtures the store must refuse. */
static void raw_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK) {
        sqlite3_free(err);
        sqlite3_close(db);
        test_fail(__FILE__, __LINE__, "raw sql failed: %s", sql);
    }
    sqlite3_close(db);
}

static void test_store__creates_and_migrates_an_empty_store_to_the_latest_schema(void)
{
    char *p = db_path("sub/dir/lscat.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, STORE_CREATE));
    CHECK_INT(store_schema_version(s), ==, schema_version_latest);
    int64_t v = 0;
    CHECK_OK(store_query_int(&v, s, "PRAGMA application_id", NULL));
    CHECK_INT(v, ==, STORE_APPLICATION_ID);
    CHECK_OK(store_query_int(&v, s, "PRAGMA foreign_keys", NULL));
    CHECK_INT(v, ==, 1);
    char *mode = NULL;
    CHECK_OK(store_query_text(&mode, s, "PRAGMA journal_mode", NULL));
    CHECK_STR(mode, "wal");
    free(mode);
    const char *tables[] = { "stage_runs", "gha_hours", "repos", "blobs", "files",
                             "refused_entries", "sources", "parses", "kernels",
                             "kernel_occurrences", "builds", "build_attempts", "gpus",
                             "probes", "tune_kernels", "measurements", "failures" };
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        CHECK_OK(store_query_int(&v, s, "SELECT count(*) FROM sqlite_master WHERE name = ?",
                                 "t", tables[i]));
        if (v != 1)
            test_fail(__FILE__, __LINE__, "table %s missing", tables[i]);
    }
    store_free(s);
    free(p);
}

static void test_store__reopening_keeps_rows_and_does_not_migrate_again(void)
{
    char *p = db_path("lscat.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, STORE_CREATE));
    CHECK_INT(store_run(s, "INSERT INTO repos(full_name) VALUES (?)", "t", "a/b"), ==, 1);
    store_free(s);
    CHECK_OK(store_open(&s, p, 0));
    int64_t n = 0;
    CHECK_OK(store_query_int(&n, s, "SELECT count(*) FROM repos WHERE full_name = 'A/B'", NULL));
    CHECK_INT(n, ==, 1); /* full_name is case-insensitive */
    CHECK_INT(store_run(s, "INSERT INTO repos(full_name) VALUES (?)", "t", "A/b"), <, 0);
    CHECK_CONTAINS(lscat_error_last(), "UNIQUE");
    CHECK_CONTAINS(lscat_error_last(), p);
    store_free(s);
    free(p);
}

static void test_store__refuses_a_store_from_a_newer_lscat_and_leaves_it_untouched(void)
{
    char *p = db_path("newer.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, STORE_CREATE));
    store_free(s);
    char sql[64];
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", schema_version_latest + 5);
    raw_sql(p, sql);
    char before[65], after[65];
    file_hash(before, p);
    CHECK_INT(store_open(&s, p, STORE_CREATE), ==, LSCAT_EVERSION);
    CHECK(s == NULL);
    CHECK_CONTAINS(lscat_error_last(), "newer lscat");
    CHECK_CONTAINS(lscat_error_last(), "upgrade lscat");
    file_hash(after, p);
    CHECK_STR(after, before);
    free(p);
}

/* A store as lscat with schema v1 left it (stores of v1 exist): every row survives the move to
 * the latest schema, and the v2 columns say what v1 measured with (binding 'area'). */
static void test_store__migrates_a_v1_store_keeping_every_row(void)
{
    char *p = db_path("v1.db");
    char *v1 = xasprintf("%s PRAGMA user_version = 1; PRAGMA application_id = %d;"
        "INSERT INTO kernels(id, name, dir, params, param_count, status, created_at) VALUES "
        "('k1', 'matmul', 'kernels/k1', '{}', 4, 'runnable', 't0'), "
        "('k2', 'saxpy', 'kernels/k2', '{}', 4, 'probe_failed', 't0');"
        "INSERT INTO gpus(id, uuid, name, first_seen) VALUES (1, 'GPU-1', 'H100', 't0');"
        "INSERT INTO probes(kernel_id, gpu_id, outcome, detail, probed_at) VALUES "
        "('k1', 1, 'ok', NULL, 't0'), ('k2', 1, 'illegal_address', 'illegal', 't0');"
        "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, block_y, status, "
        "median_ns, measured_at) VALUES ('k1', 1, 240, 240, 16, 16, 'ok', 1234.5, 't1'), "
        "('k1', 1, 240, 240, 64, 1, 'ok', 999.0, 't1');",
        schema_migrations[0].sql, STORE_APPLICATION_ID);
    raw_sql(p, v1);
    free(v1);
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, 0));
    CHECK_INT(store_schema_version(s), ==, schema_version_latest);
    CHECK(schema_version_latest >= 2);
    int64_t v = 0;
    CHECK_OK(store_query_int(&v, s, "SELECT count(*) FROM kernels WHERE binding IS NULL AND "
                             "status IN ('runnable', 'probe_failed')", NULL));
    CHECK_INT(v, ==, 2);
    CHECK_OK(store_query_int(&v, s, "SELECT count(*) FROM probes WHERE binding IS NULL AND "
                             "bindings IS NULL AND (outcome = 'ok' OR detail = 'illegal')", NULL));
    CHECK_INT(v, ==, 2);
    CHECK_OK(store_query_int(&v, s, "SELECT count(*) FROM measurements WHERE binding = 'area' "
                             "AND median_ns IN (1234.5, 999.0) AND measured_at = 't1'", NULL));
    CHECK_INT(v, ==, 2);
    /* v2 rows carry their binding */
    CHECK_INT(store_run(s, "UPDATE kernels SET binding = 'side' WHERE id = 'k1'", NULL), ==, 1);
    CHECK_INT(store_run(s, "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                        "block_y, status, measured_at, binding) VALUES ('k1', 1, 496, 496, 16, "
                        "16, 'ok', 't2', 'side')", NULL), ==, 1);
    store_free(s);
    CHECK_OK(store_open(&s, p, STORE_READONLY)); /* migrated once: read-only opens now */
    CHECK_OK(store_query_int(&v, s, "SELECT count(*) FROM measurements", NULL));
    CHECK_INT(v, ==, 3);
    store_free(s);
    free(p);
}

static void test_store__refuses_a_file_that_is_not_sqlite_without_modifying_it(void)
{
    char *p = db_path("notes.txt");
    const char text[] = "these are my notes, not a database\n";
    test_write_file(p, text, sizeof(text) - 1);
    struct store *s = NULL;
    CHECK_INT(store_open(&s, p, STORE_CREATE), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "not an SQLite database");
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, p));
    CHECK_STR(b.data, text);
    buf_release(&b);
    char *wal = fs_join(test_tmpdir(), "notes.txt-wal");
    CHECK(!fs_exists(wal));
    free(wal);
    free(p);
}

static void test_store__refuses_a_corrupt_store_without_modifying_it(void)
{
    char *p = db_path("corrupt.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, STORE_CREATE));
    store_free(s);
    /* Keep the 100-byte header, smash the rest of page 1 (the schema's b-tree). */
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, p));
    CHECK_INT(b.len, >, 4096);
    memset(b.data + 100, 0xA5, 4096 - 100);
    test_write_file(p, b.data, b.len);
    buf_release(&b);
    char before[65], after[65];
    file_hash(before, p);
    CHECK_INT(store_open(&s, p, STORE_CREATE), <, 0);
    CHECK(s == NULL);
    CHECK_CONTAINS(lscat_error_last(), "cannot be read as an lscat store");
    file_hash(after, p);
    CHECK_STR(after, before);
    free(p);
}

static void test_store__refuses_another_programs_sqlite_database(void)
{
    char *p = db_path("other.db");
    raw_sql(p, "CREATE TABLE photos(id INTEGER PRIMARY KEY, path TEXT)");
    char before[65], after[65];
    file_hash(before, p);
    struct store *s = NULL;
    CHECK_INT(store_open(&s, p, STORE_CREATE), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "not an lscat store");
    file_hash(after, p);
    CHECK_STR(after, before);
    free(p);
}

static void test_store__read_only_open_of_a_missing_store_says_how_to_create_it(void)
{
    char *p = db_path("missing.db");
    struct store *s = NULL;
    CHECK_INT(store_open(&s, p, STORE_READONLY), ==, LSCAT_ENOTFOUND);
    CHECK_CONTAINS(lscat_error_last(), "no store at");
    CHECK(!fs_exists(p));
    free(p);
}

/* The child: commit 50 rows, open a transaction with 1000 more, tell the parent, wait to die. */
static void crash_child(const char *path, int fd)
{
    struct store *s = NULL;
    if (store_open(&s, path, STORE_CREATE) < 0)
        _exit(2);
    for (int i = 0; i < 50; i++) {
        char name[32];
        snprintf(name, sizeof(name), "committed/%d", i);
        if (store_begin(s) < 0 ||
            store_run(s, "INSERT INTO repos(full_name) VALUES (?)", "t", name) < 0 ||
            store_commit(s) < 0)
            _exit(3);
    }
    store_begin(s);
    for (int i = 0; i < 1000; i++) {
        char name[32];
        snprintf(name, sizeof(name), "inflight/%d", i);
        store_run(s, "INSERT INTO repos(full_name) VALUES (?)", "t", name);
    }
    (void)!write(fd, "x", 1);
    for (;;)
        pause();
}

static void test_store__sigkill_in_a_write_transaction_keeps_committed_rows_intact(void)
{
    char *p = db_path("crash.db");
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        crash_child(p, fds[1]);
    }
    close(fds[1]);
    char c;
    CHECK_INT(read(fds[0], &c, 1), ==, 1);
    close(fds[0]);
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, 0));
    int64_t n = 0;
    CHECK_OK(store_query_int(&n, s, "SELECT count(*) FROM repos WHERE full_name LIKE 'committed/%'",
                             NULL));
    CHECK_INT(n, ==, 50);
    CHECK_OK(store_query_int(&n, s, "SELECT count(*) FROM repos WHERE full_name LIKE 'inflight/%'",
                             NULL));
    CHECK_INT(n, ==, 0);
    char *ok = NULL;
    CHECK_OK(store_query_text(&ok, s, "PRAGMA integrity_check", NULL));
    CHECK_STR(ok, "ok");
    free(ok);
    /* And the store takes writes again. */
    CHECK_OK(store_begin(s));
    CHECK_INT(store_run(s, "INSERT INTO repos(full_name) VALUES ('after/crash')", NULL), ==, 1);
    CHECK_OK(store_commit(s));
    store_free(s);
    free(p);
}

static void test_store__binds_every_parameter_type_and_reads_columns_back(void)
{
    char *p = db_path("types.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, STORE_CREATE));
    CHECK_OK(store_exec(s, "CREATE TEMP TABLE t(a TEXT, b INTEGER, c INTEGER, d REAL, e, f BLOB)"));
    const unsigned char blob[] = { 0, 1, 2, 255 };
    CHECK_INT(store_run(s, "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", "tiIdnb", "text",
                        (int64_t)1 << 40, 7, 2.5, blob, sizeof(blob)),
              ==, 1);
    CHECK_INT(store_run(s, "INSERT INTO t VALUES (?, 0, 0, 0, 0, NULL)", "t", (const char *)NULL),
              ==, 1);
    struct store_stmt *st = NULL;
    CHECK_OK(store_prepare(&st, s, "SELECT a, b, c, d, e, f FROM t ORDER BY rowid"));
    CHECK_INT(store_step(st), ==, STORE_ROW);
    CHECK_STR(store_col_text(st, 0), "text");
    CHECK_INT(store_col_int(st, 1), ==, (int64_t)1 << 40);
    CHECK_INT(store_col_int(st, 2), ==, 7);
    CHECK(store_col_double(st, 3) == 2.5);
    CHECK(store_col_is_null(st, 4));
    size_t len = 0;
    const unsigned char *got = store_col_blob(st, 5, &len);
    CHECK_INT(len, ==, 4);
    CHECK(memcmp(got, blob, 4) == 0);
    CHECK_STR(store_col_name(st, 2), "c");
    CHECK_INT(store_step(st), ==, STORE_ROW);
    CHECK(store_col_text(st, 0) == NULL);
    CHECK_INT(store_step(st), ==, STORE_DONE);
    store_finalize(st);
    store_finalize(NULL);
    CHECK_INT(store_prepare(&st, s, "SELEC nonsense"), <, 0);
    CHECK_CONTAINS(lscat_error_last(), "syntax error");
    store_free(s);
    free(p);
}

static void test_store__rollback_discards_the_transaction(void)
{
    char *p = db_path("rb.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, STORE_CREATE));
    CHECK_OK(store_begin(s));
    CHECK_INT(store_run(s, "INSERT INTO repos(full_name) VALUES ('x/y')", NULL), ==, 1);
    store_rollback(s);
    store_rollback(s); /* no transaction: harmless */
    int64_t n = -1;
    CHECK_OK(store_query_int(&n, s, "SELECT count(*) FROM repos", NULL));
    CHECK_INT(n, ==, 0);
    store_free(s);
    free(p);
}

static void test_store__stage_runs_record_arguments_exit_status_and_counts(void)
{
    char *p = db_path("runs.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, STORE_CREATE));
    char *argv[] = { "lscat-harvest", "scan", "--from", "2015-01-01T00", "quote\"d", NULL };
    int64_t id = 0;
    CHECK_OK(store_run_begin(&id, s, "harvest", 5, argv));
    CHECK_INT(id, >, 0);
    char *args = NULL;
    CHECK_OK(store_query_text(&args, s, "SELECT args FROM stage_runs WHERE id = ?", "i", id));
    CHECK_STR(args, "[\"scan\",\"--from\",\"2015-01-01T00\",\"quote\\\"d\"]");
    free(args);
    int64_t open_runs = 0;
    CHECK_OK(store_query_int(&open_runs, s, "SELECT count(*) FROM stage_runs WHERE ended_at IS NULL",
                             NULL));
    CHECK_INT(open_runs, ==, 1);
    CHECK_OK(store_run_end(s, id, 1, "{\"hours\":3,\"bad\":1}"));
    int64_t status = -1;
    CHECK_OK(store_query_int(&status, s, "SELECT exit_status FROM stage_runs WHERE id = ?", "i", id));
    CHECK_INT(status, ==, 1);
    struct buf out = BUF_INIT;
    CHECK_OK(status_report(&out, s, 0));
    CHECK_CONTAINS(out.data, "harvest");
    CHECK_CONTAINS(out.data, "exit 1");
    buf_reset(&out);
    CHECK_OK(status_report(&out, s, 1));
    CHECK_CONTAINS(out.data, "\"counts\":{\"hours\":3,\"bad\":1}");
    buf_release(&out);
    store_free(s);
    free(p);
}

static void test_store__status_counts_rows_per_status(void)
{
    char *p = db_path("status.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, STORE_CREATE));
    CHECK_OK(store_exec(s, "INSERT INTO repos(full_name, fetch_status) VALUES"
                           " ('a/1','pending'),('a/2','pending'),('a/3','gone')"));
    CHECK_OK(store_exec(s, "INSERT INTO kernels(id, name, dir, params, param_count, created_at, "
                           "indexing) VALUES ('k1', 'a', 'd', '[]', 0, 't', '2d'), ('k2', 'b', "
                           "'d', '[]', 0, 't', NULL);"
                           "INSERT INTO gpus(id, uuid, name, first_seen) VALUES (1, 'G', 'H', 't');"
                           "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                           "block_y, status, measured_at, output_check) VALUES "
                           "('k1', 1, 8, 8, 8, 8, 'ok', 't', 'match'),"
                           "('k1', 1, 8, 8, 64, 1, 'ok', 't', 'mismatch'),"
                           "('k1', 1, 8, 8, 32, 1, 'ok', 't', 'mismatch'),"
                           "('k1', 1, 8, 8, 16, 1, 'cuda_error', 't', 'not_checked')"));
    struct buf out = BUF_INIT;
    CHECK_OK(status_report(&out, s, 1));
    CHECK_CONTAINS(out.data, "\"repos\":{\"gone\":1,\"pending\":2}");
    CHECK_CONTAINS(out.data, "\"indexing\":{\"2d\":1,\"unknown\":1}");
    CHECK_CONTAINS(out.data, "\"output_check\":{\"match\":1,\"mismatch\":2}");
    buf_reset(&out);
    CHECK_OK(status_report(&out, s, 0));
    CHECK_CONTAINS(out.data, "gone 1, pending 2");
    CHECK_CONTAINS(out.data, "match 1, mismatch 2");
    buf_release(&out);
    store_free(s);
    free(p);
}

static void test_store__an_empty_file_is_migrated_like_a_new_store(void)
{
    char *p = db_path("empty.db");
    test_write_file(p, "", 0);
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, 0));
    CHECK_INT(store_schema_version(s), ==, schema_version_latest);
    store_free(s);
    free(p);
}

/* A second writer waits for the first one's transaction instead of failing. */
static void test_store__a_second_writer_waits_for_the_first(void)
{
    char *p = db_path("busy.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, STORE_CREATE));
    store_free(s);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct store *c = NULL;
        if (store_open(&c, p, 0) < 0 || store_begin(c) < 0)
            _exit(2);
        store_run(c, "INSERT INTO repos(full_name) VALUES ('first/writer')", NULL);
        (void)!write(fds[1], "x", 1);
        usleep(500000);
        _exit(store_commit(c) < 0 ? 3 : 0);
    }
    close(fds[1]);
    char ch;
    CHECK_INT(read(fds[0], &ch, 1), ==, 1);
    close(fds[0]);
    CHECK_OK(store_open(&s, p, 0));
    CHECK_OK(store_begin(s)); /* while the child holds its write (0.5 s): waits, no BUSY */
    CHECK_INT(store_run(s, "INSERT INTO repos(full_name) VALUES ('second/writer')", NULL), ==, 1);
    CHECK_OK(store_commit(s));
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    int64_t n = 0;
    CHECK_OK(store_query_int(&n, s, "SELECT count(*) FROM repos", NULL));
    CHECK_INT(n, ==, 2);
    CHECK_OK(store_query_int(&n, s, "SELECT (SELECT rowid FROM repos WHERE full_name = "
                             "'first/writer') < (SELECT rowid FROM repos WHERE full_name = "
                             "'second/writer')", NULL));
    CHECK_INT(n, ==, 1); /* the second wrote after the first's commit */
    store_free(s);
    free(p);
}

int main(void)
{
    TEST_RUN(test_store__an_empty_file_is_migrated_like_a_new_store);
    TEST_RUN(test_store__a_second_writer_waits_for_the_first);
    TEST_RUN(test_store__creates_and_migrates_an_empty_store_to_the_latest_schema);
    TEST_RUN(test_store__reopening_keeps_rows_and_does_not_migrate_again);
    TEST_RUN(test_store__migrates_a_v1_store_keeping_every_row);
    TEST_RUN(test_store__refuses_a_store_from_a_newer_lscat_and_leaves_it_untouched);
    TEST_RUN(test_store__refuses_a_file_that_is_not_sqlite_without_modifying_it);
    TEST_RUN(test_store__refuses_a_corrupt_store_without_modifying_it);
    TEST_RUN(test_store__refuses_another_programs_sqlite_database);
    TEST_RUN(test_store__read_only_open_of_a_missing_store_says_how_to_create_it);
    TEST_RUN(test_store__sigkill_in_a_write_transaction_keeps_committed_rows_intact);
    TEST_RUN(test_store__binds_every_parameter_type_and_reads_columns_back);
    TEST_RUN(test_store__rollback_discards_the_transaction);
    TEST_RUN(test_store__stage_runs_record_arguments_exit_status_and_counts);
    TEST_RUN(test_store__status_counts_rows_per_status);
    return test_done();
}
