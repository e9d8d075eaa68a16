/* Tests of tune/chunkstore.c: a chunk's store holds only its own kernels' rows (and the GPUs and
 * stage runs), and after trimming only what the stage wrote goes back to rank 0. */
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "store/store.h"
#include "tests/support/test.h"
#include "tune/chunkstore.h"

#include <stdlib.h>

static int64_t q(struct store *s, const char *sql)
{
    int64_t n = -1;
    CHECK_OK(store_query_int(&n, s, sql, ""));
    return n;
}

/* A store with kernels a, b, c (built, tuned on one GPU: a superseded and a current row each),
 * a's source found through an occurrence. */
static char *base_store(void)
{
    char *path = fs_join(test_tmpdir(), "base.db");
    struct store *s = NULL;
    CHECK_OK(store_open(&s, path, STORE_CREATE));
    CHECK_OK(store_exec(s,
        "INSERT INTO stage_runs(stage, args, lscat_version, started_at) VALUES ('tune', '[]', 't',"
        " '2026-11-24T00:00:00Z');"
        "INSERT INTO gpus(uuid, name, first_seen) VALUES ('GPU-1', 'G', '2026-11-24');"
        "INSERT INTO repos(full_name, source) VALUES ('o/r', 'import');"
        "INSERT INTO sources(repo_id, root) VALUES (1, '/src/r');"
        "INSERT INTO kernels(id, name, dir, params, param_count, status, created_at) VALUES"
        " ('a', 'a', 'a', '[]', 0, 'runnable', 'x'), ('b', 'b', 'b', '[]', 0, 'runnable', 'x'),"
        " ('c', 'c', 'c', '[]', 0, 'isolated', 'x');"
        "INSERT INTO kernel_occurrences(kernel_id, source_id, path, line) VALUES ('a', 1, 'k.cu', 3);"
        "INSERT INTO builds(kernel_id, arch, cache_key, status, attempts, built_at) VALUES"
        " ('a', 'sm_90', 'ka', 'ok', 1, 'x'), ('b', 'sm_90', 'kb', 'ok', 1, 'x');"
        "INSERT INTO tune_kernels(kernel_id, gpu_id, status, updated_at) VALUES ('a', 1, 'done', 'x'),"
        " ('b', 1, 'done', 'x');"));
    for (int sup = 0; sup < 2; sup++)
        CHECK_OK(store_run(s, "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x,"
                           " block_y, block_z, grid_x, grid_y, grid_z, status, samples,"
                           " superseded, measured_at, run_id) SELECT id, 1, 64, 64, 16, 16, 1, 4,"
                           " 4, 1, 'ok', 10, ?, ?, 1 FROM kernels WHERE id != 'c'", "it",
                           (int64_t)sup, sup ? "2026-11-20" : "2026-11-21"));
    store_free(s);
    return path;
}

static void cut(struct chunkstore_mark *mark, struct store **s, const char *base,
                enum chunkstore_stage stage, const char *ids)
{
    char *tmpl = fs_join(test_tmpdir(), "template.db"), *path = fs_join(test_tmpdir(), "chunk.db");
    CHECK_OK(chunkstore_template(tmpl));
    CHECK_OK(chunkstore_cut(mark, path, tmpl, base, stage, ids));
    CHECK_OK(store_open(s, path, 0));
    free(tmpl);
    free(path);
}

static void test_chunkstore__tune_chunk_holds_only_its_kernels_and_their_current_rows(void)
{
    char *base = base_store();
    struct chunkstore_mark mark;
    struct store *s = NULL;
    cut(&mark, &s, base, CHUNKSTORE_TUNE, "b\n");
    CHECK_INT(q(s, "SELECT count(*) FROM kernels"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM kernels WHERE id = 'b'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM builds WHERE kernel_id = 'b'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM builds"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM tune_kernels"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements"), ==, 1); /* the current row only */
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE superseded = 0 AND kernel_id = 'b'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM gpus WHERE uuid = 'GPU-1'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM stage_runs"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM kernel_occurrences"), ==, 0); /* execute's only */
    CHECK_INT(mark.measurements, ==, q(s, "SELECT max(id) FROM measurements"));
    store_free(s);
    free(base);
}

static void test_chunkstore__execute_chunk_carries_the_source_its_kernel_was_found_in(void)
{
    char *base = base_store();
    struct chunkstore_mark mark;
    struct store *s = NULL;
    cut(&mark, &s, base, CHUNKSTORE_EXECUTE, "a\nc");
    CHECK_INT(q(s, "SELECT count(*) FROM kernels"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM kernel_occurrences o JOIN sources so ON so.id ="
                   " o.source_id WHERE o.kernel_id = 'a' AND so.root = '/src/r'"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM repos"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements"), ==, 0); /* tune's only */
    store_free(s);
    free(base);
}

static void test_chunkstore__trim_leaves_only_what_the_stage_wrote(void)
{
    char *base = base_store(), *path = fs_join(test_tmpdir(), "chunk.db");
    struct chunkstore_mark mark;
    struct store *s = NULL;
    cut(&mark, &s, base, CHUNKSTORE_TUNE, "a\nb");
    CHECK_INT(q(s, "SELECT count(*) FROM measurements"), ==, 2);
    /* the stage re-measures a (its old row superseded) and measures a new shape of b */
    CHECK_OK(store_exec(s, "UPDATE measurements SET superseded = 1 WHERE kernel_id = 'a';"
                           "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x,"
                           " block_y, block_z, grid_x, grid_y, grid_z, status, samples,"
                           " measured_at) VALUES ('a', 1, 64, 64, 16, 16, 1, 4, 4, 1, 'ok', 10,"
                           " '2026-11-24'), ('b', 1, 128, 128, 64, 1, 1, 2, 128, 1, 'ok', 10,"
                           " '2026-11-24')"));
    store_free(s);
    CHECK_OK(chunkstore_trim(path, &mark));
    CHECK_OK(store_open(&s, path, 0));
    CHECK_INT(q(s, "SELECT count(*) FROM measurements"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE measured_at = '2026-11-24'"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM kernels"), ==, 2); /* the merge needs the kernels */
    store_free(s);
    free(path);
    free(base);
}

static void test_chunkstore__cut_from_a_missing_store_says_which(void)
{
    char *tmpl = fs_join(test_tmpdir(), "t.db"), *path = fs_join(test_tmpdir(), "c.db");
    char *missing = fs_join(test_tmpdir(), "nowhere/base.db");
    struct chunkstore_mark mark;
    CHECK_OK(chunkstore_template(tmpl));
    CHECK(chunkstore_cut(&mark, path, tmpl, missing, CHUNKSTORE_TUNE, "a") < 0);
    CHECK_CONTAINS(lscat_error_last(), "c.db");
    free(tmpl);
    free(path);
    free(missing);
}

int main(void)
{
    TEST_RUN(test_chunkstore__tune_chunk_holds_only_its_kernels_and_their_current_rows);
    TEST_RUN(test_chunkstore__execute_chunk_carries_the_source_its_kernel_was_found_in);
    TEST_RUN(test_chunkstore__trim_leaves_only_what_the_stage_wrote);
    TEST_RUN(test_chunkstore__cut_from_a_missing_store_says_which);
    return test_done();
}
