/* Tests for store/stage.c, the begin/end every stage command uses: the work folder and the
 * store it creates (or refuses to create), and the stage_runs row of one invocation, on real
 * SQLite files. */
#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "store/stage.h"
#include "tests/support/test.h"

#include <stdlib.h>

/* A parsed command line whose --work and --db lie in the test's folder. */
static void cli_for(struct cli *cli, const char *work, const char *db)
{
    char *argv[] = { "lscat-test", "--work", (char *)work, "--db", (char *)db, NULL };
    CHECK_OK(cli_parse(cli, "lscat-test", 5, argv, NULL, NULL, NULL));
}

static void test_stage__begin_creates_the_work_folder_the_store_and_a_run_row(void)
{
    char *work = fs_join(test_tmpdir(), "w1/deep"), *db = fs_join(test_tmpdir(), "db1/s.db");
    char *argv[] = { "lscat-test", "--limit", "3", NULL };
    struct cli cli;
    struct stage st = STAGE_INIT;
    cli_for(&cli, work, db);
    CHECK_OK(stage_begin(&st, &cli, "harvest", STAGE_CREATE, 3, argv));
    CHECK(fs_is_dir(work));
    CHECK(st.work_dir[0] == '/');
    CHECK_INT(st.run_id, >, 0);
    char *args = NULL;
    CHECK_OK(store_query_text(&args, st.store, "SELECT stage || ' ' || args FROM stage_runs "
                              "WHERE id = ? AND ended_at IS NULL", "i", st.run_id));
    CHECK_STR(args, "harvest [\"--limit\",\"3\"]");
    free(args);
    int64_t id = st.run_id;
    stage_end(&st, 1, "{\"n\":2}");
    CHECK(st.store == NULL && st.run_id == 0 && st.work_dir == NULL);
    struct store *s = NULL;
    CHECK_OK(store_open(&s, db, STORE_READONLY));
    CHECK_OK(store_query_text(&args, s, "SELECT exit_status || ' ' || counts FROM stage_runs "
                              "WHERE id = ? AND ended_at IS NOT NULL", "i", id));
    CHECK_STR(args, "1 {\"n\":2}");
    free(args);
    store_free(s);
    cli_release(&cli);
    free(work);
    free(db);
}

static void test_stage__without_create_a_missing_store_is_an_error_and_nothing_is_made(void)
{
    char *work = fs_join(test_tmpdir(), "w2"), *db = fs_join(test_tmpdir(), "w2/none.db");
    char *argv[] = { "lscat-test", NULL };
    struct cli cli;
    struct stage st = STAGE_INIT;
    cli_for(&cli, work, db);
    CHECK_INT(stage_begin(&st, &cli, "tune", 0, 1, argv), <, 0);
    CHECK_CONTAINS(lscat_error_last(), "none.db");
    CHECK(!fs_exists(db));
    CHECK_INT(st.run_id, ==, 0);
    stage_end(&st, LSCAT_EXIT_FATAL, NULL); /* after a failed begin: closes what is open */
    CHECK_INT(stage_begin(&st, &cli, NULL, STAGE_READONLY, 1, argv), <, 0);
    stage_end(&st, LSCAT_EXIT_FATAL, NULL);
    CHECK(!fs_exists(db));
    cli_release(&cli);
    free(work);
    free(db);
}

static void test_stage__a_read_only_begin_records_no_run(void)
{
    char *work = fs_join(test_tmpdir(), "w3"), *db = fs_join(test_tmpdir(), "w3/s.db");
    char *argv[] = { "lscat-test", NULL };
    struct cli cli;
    struct stage st = STAGE_INIT;
    cli_for(&cli, work, db);
    CHECK_OK(stage_begin(&st, &cli, NULL, STAGE_CREATE, 1, argv)); /* lscat init */
    stage_end(&st, 0, NULL);
    CHECK_OK(stage_begin(&st, &cli, NULL, STAGE_READONLY, 1, argv)); /* lscat status */
    CHECK_INT(st.run_id, ==, 0);
    int64_t runs = -1;
    CHECK_OK(store_query_int(&runs, st.store, "SELECT count(*) FROM stage_runs", NULL));
    CHECK_INT(runs, ==, 0);
    CHECK_INT(store_exec(st.store, "DELETE FROM stage_runs"), <, 0); /* read-only */
    stage_end(&st, 0, NULL);
    struct stage none = STAGE_INIT;
    stage_end(&none, 0, NULL); /* a no-op */
    cli_release(&cli);
    free(work);
    free(db);
}

int main(void)
{
    TEST_RUN(test_stage__begin_creates_the_work_folder_the_store_and_a_run_row);
    TEST_RUN(test_stage__without_create_a_missing_store_is_an_error_and_nothing_is_made);
    TEST_RUN(test_stage__a_read_only_begin_records_no_run);
    return test_done();
}
