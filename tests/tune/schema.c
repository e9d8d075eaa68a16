/* Schema migrations of tune's tables against real SQLite files: v4 (schema/004_skipped.sql, a
 * rebuild of measurements: a v3 store keeps every row, id and column, `skipped` becomes a valid
 * status, the constraints still hold) and v6 (schema/006_output_check.sql: older rows become
 * not_checked, kernels get an indexing). */
#include "tests/support/test.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "store/store.h"
#include "schema/schema.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static void raw_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "%s\n", err ? err : "?");
        sqlite3_free(err);
        sqlite3_close(db);
        test_fail(__FILE__, __LINE__, "raw sql failed");
    }
    sqlite3_close(db);
}

static int64_t q(struct store *s, const char *sql)
{
    int64_t v = -1;
    CHECK_OK(store_query_int(&v, s, sql, NULL));
    return v;
}

static void test_schema__a_v3_store_moves_to_v4_keeping_every_measurement(void)
{
    CHECK(schema_version_latest >= 4);
    CHECK_STR(schema_migrations[2].name, "003_graph_nodes");
    CHECK_STR(schema_migrations[3].name, "004_skipped");
    char *p = fs_join(test_tmpdir(), "v3.db");
    char *v2 = xasprintf(
        "%s %s %s PRAGMA user_version = 3; PRAGMA application_id = %d;"
        "INSERT INTO kernels(id, name, dir, params, param_count, status, created_at) VALUES "
        "('k1', 'tile', 'kernels/k1', '{\"is2d\":true}', 1, 'runnable', 't0');"
        "INSERT INTO gpus(id, uuid, name, first_seen) VALUES (1, 'GPU-1', 'H100', 't0');"
        "INSERT INTO measurements(id, kernel_id, gpu_id, width, height, block_x, block_y, status, "
        "error, median_ns, measured_at, binding, superseded, graph_nodes) VALUES "
        "(7, 'k1', 1, 240, 240, 16, 16, 'ok', NULL, 1234.5, 't1', 'side', 0, 64), "
        "(8, 'k1', 1, 240, 240, 256, 1, 'cuda_error', 'illegal', NULL, 't1', 'area', 0, NULL), "
        "(9, 'k1', 1, 240, 240, 16, 16, 'ok', NULL, 1300.0, 't0', 'side', 1, NULL);",
        schema_migrations[0].sql, schema_migrations[1].sql, schema_migrations[2].sql,
        STORE_APPLICATION_ID);
    raw_sql(p, v2);
    free(v2);
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, 0));
    CHECK_INT(store_schema_version(s), ==, schema_version_latest);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements"), ==, 3);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE id = 7 AND median_ns = 1234.5 AND "
                   "binding = 'side' AND block_z = 1 AND measured_at = 't1' AND graph_nodes = 64"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE graph_nodes IS NULL"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE id = 8 AND error = 'illegal'"), ==, 1);
    CHECK_INT(store_run(s, "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                        "block_y, status, error, measured_at) VALUES ('k1', 1, 496, 496, 256, "
                        "1, 'skipped', 'block 256x1x1 failed with a sticky CUDA error at "
                        "240x240: illegal', 't2')", NULL), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE status = 'skipped' AND binding = "
                   "'area'"), ==, 1);
    /* still refused: an unknown status, a second current row for one configuration, a row of
     * a kernel that does not exist */
    CHECK(store_run(s, "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                    "block_y, status, measured_at) VALUES ('k1', 1, 64, 64, 8, 8, 'bogus', 't')",
                    NULL) < 0);
    CHECK(store_run(s, "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                    "block_y, status, measured_at) VALUES ('k1', 1, 240, 240, 16, 16, 'ok', 't')",
                    NULL) < 0);
    CHECK(store_run(s, "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                    "block_y, status, measured_at) VALUES ('k9', 1, 64, 64, 8, 8, 'ok', 't')",
                    NULL) < 0);
    /* deleting the kernel still takes its measurements with it */
    CHECK_INT(store_run(s, "DELETE FROM kernels WHERE id = 'k1'", NULL), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements"), ==, 0);
    store_free(s);
    free(p);
}

/* v6 (schema/006_output_check.sql): rows measured before the output check become
 * not_checked with a why that says so; kernels get an indexing (NULL until isolate runs
 * again); both columns refuse values outside their lists. */
static void test_schema__a_v4_store_moves_to_the_output_check_marking_old_rows_not_checked(void)
{
    CHECK(schema_version_latest >= 6);
    CHECK_STR(schema_migrations[5].name, "006_output_check");
    char *p = fs_join(test_tmpdir(), "v4.db");
    char *v4 = xasprintf(
        "%s %s %s %s PRAGMA user_version = 4; PRAGMA application_id = %d;"
        "INSERT INTO kernels(id, name, dir, params, param_count, status, created_at) VALUES "
        "('k1', 'saxpy', 'kernels/k1', '{\"is2d\":false}', 4, 'runnable', 't0');"
        "INSERT INTO gpus(id, uuid, name, first_seen) VALUES (1, 'GPU-1', 'H200', 't0');"
        "INSERT INTO measurements(id, kernel_id, gpu_id, width, height, block_x, block_y, status, "
        "median_ns, measured_at) VALUES (3, 'k1', 1, 240, 240, 32, 32, 'ok', 99.5, 't1'), "
        "(4, 'k1', 1, 240, 240, 256, 1, 'skipped', NULL, 't1');",
        schema_migrations[0].sql, schema_migrations[1].sql, schema_migrations[2].sql,
        schema_migrations[3].sql, STORE_APPLICATION_ID);
    raw_sql(p, v4);
    free(v4);
    struct store *s = NULL;
    CHECK_OK(store_open(&s, p, 0));
    CHECK_INT(store_schema_version(s), ==, schema_version_latest);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE output_check = 'not_checked' AND "
                   "output_check_why LIKE 'measured before the output check%' AND check_ns IS "
                   "NULL"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE id = 3 AND median_ns = 99.5"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM kernels WHERE indexing IS NULL"), ==, 1);
    CHECK_INT(store_run(s, "UPDATE kernels SET indexing = 'grid_stride' WHERE id = 'k1'", NULL),
              ==, 1);
    CHECK(store_run(s, "UPDATE kernels SET indexing = '4d' WHERE id = 'k1'", NULL) < 0);
    CHECK_INT(store_run(s, "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                        "block_y, status, measured_at, output_check, output_check_why, check_ns) "
                        "VALUES ('k1', 1, 496, 496, 256, 1, 'ok', 't2', 'mismatch', 'buffer', "
                        "1000)", NULL), ==, 1);
    CHECK(store_run(s, "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                    "block_y, status, measured_at, output_check) VALUES ('k1', 1, 784, 784, 256, "
                    "1, 'ok', 't2', 'probably')", NULL) < 0);
    /* a row written without a check (an older lscat on this store) is not_checked */
    CHECK_INT(store_run(s, "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                        "block_y, status, measured_at) VALUES ('k1', 1, 1016, 1016, 64, 1, "
                        "'ok', 't3')", NULL), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE width = 1016 AND output_check = "
                   "'not_checked'"), ==, 1);
    store_free(s);
    free(p);
}

int main(void)
{
    TEST_RUN(test_schema__a_v3_store_moves_to_v4_keeping_every_measurement);
    TEST_RUN(test_schema__a_v4_store_moves_to_the_output_check_marking_old_rows_not_checked);
    return test_done();
}
