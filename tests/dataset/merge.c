/* Unit tests of dataset/merge.c on real SQLite stores: two shards that share a repository, a
 * GPU, a kernel and a re-measured configuration, numbered differently, merge into one store
 * without duplicates, with ids remapped; merging again adds nothing. */
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "dataset/merge.h"
#include "store/store.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static const char shard_a[] =
    "INSERT INTO stage_runs(id, stage, args, host, pid, lscat_version, started_at) VALUES"
    " (1, 'tune', '[]', 'n1', 10, '0.1', '2026-11-01T00:00:00Z');"
    "INSERT INTO repos(id, full_name, fetch_status) VALUES (1, 'alice/k', 'fetched');"
    "INSERT INTO sources(id, repo_id, root) VALUES (1, 1, 'trees/alice/k');"
    "INSERT INTO kernels(id, name, dir, params, param_count, created_at, run_id) VALUES"
    " ('" KA "', 'a', 'aa/x', '[]', 0, '2026-11-01T00:00:00Z', 1);"
    "INSERT INTO kernel_occurrences VALUES ('" KA "', 1, 'a.cu', 3);"
    "INSERT INTO gpus(id, uuid, name, first_seen) VALUES (1, 'GPU-1', 'H100', 'x');"
    "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, block_y, status,"
    " median_ns, measured_at, run_id) VALUES"
    " ('" KA "', 1, 240, 240, 16, 16, 'ok', 100, '2026-11-01T00:00:01Z', 1),"
    " ('" KA "', 1, 240, 240, 32, 32, 'ok', 200, '2026-11-01T00:00:02Z', 1);"
    "INSERT INTO failures(stage, subject, class, message, created_at) VALUES"
    " ('tune', 'kernel:" KA "', 'timeout', 'slow', '2026-11-01T00:00:03Z');";

/* Numbered differently: an extra repo and GPU first, so ids must be remapped. */
static const char shard_b[] =
    "INSERT INTO stage_runs(id, stage, args, host, pid, lscat_version, started_at) VALUES"
    " (7, 'tune', '[]', 'n2', 20, '0.1', '2026-11-02T00:00:00Z');"
    "INSERT INTO repos(id, full_name, fetch_status) VALUES (1, 'bob/other', 'pending'),"
    " (2, 'alice/k', 'fetched');"
    "INSERT INTO sources(id, repo_id, root) VALUES (5, 2, 'trees/alice/k');"
    "INSERT INTO kernels(id, name, dir, params, param_count, status, created_at) VALUES"
    " ('" KA "', 'a', 'aa/x', '[]', 0, 'runnable', '2026-11-01T00:00:00Z'),"
    " ('" KB "', 'b', 'bb/x', '[]', 0, 'isolated', '2026-11-02T00:00:00Z');"
    "INSERT INTO kernel_occurrences VALUES ('" KA "', 5, 'a.cu', 3), ('" KB "', 5, 'b.cu', 9);"
    "INSERT INTO gpus(id, uuid, name, first_seen) VALUES (1, 'GPU-2', 'T4', 'x'),"
    " (2, 'GPU-1', 'H100', 'x');"
    "INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, block_y, status,"
    " median_ns, measured_at, run_id) VALUES"
    " ('" KA "', 1, 240, 240, 16, 16, 'ok', 90, '2026-11-02T00:00:01Z', 7),"
    " ('" KA "', 2, 240, 240, 16, 16, 'ok', 300, '2026-11-02T00:00:02Z', 7);";

static char *make_store(const char *name, const char *sql)
{
    char *path = fs_join(test_tmpdir(), name);
    struct store *s;
    CHECK_OK(store_open(&s, path, STORE_CREATE));
    CHECK_OK(store_exec(s, sql));
    store_free(s);
    return path;
}

static int64_t q(struct store *s, const char *sql)
{
    int64_t v = -1;
    CHECK_OK(store_query_int(&v, s, sql, ""));
    return v;
}

static int64_t added(const struct merge_result *r, const char *table)
{
    for (int i = 0; i < r->ntables; i++)
        if (strcmp(r->tables[i], table) == 0)
            return r->added[i];
    return -1;
}

static struct store *merged(char **a, char **b, char **dst)
{
    *a = make_store("a.db", shard_a);
    *b = make_store("b.db", shard_b);
    *dst = fs_join(test_tmpdir(), "all.db");
    struct store *s;
    CHECK_OK(store_open(&s, *dst, STORE_CREATE));
    struct merge_result r = { 0 };
    CHECK_OK(merge_shard(&r, s, *a));
    CHECK_OK(merge_shard(&r, s, *b));
    CHECK_INT(added(&r, "kernels"), ==, 2);
    CHECK_INT(added(&r, "repos"), ==, 2);
    CHECK_INT(added(&r, "gpus"), ==, 2);
    CHECK_INT(added(&r, "measurements"), ==, 4);
    return s;
}

static void test_merge__joins_shards_on_natural_keys_and_remaps_ids(void)
{
    char *a, *b, *dst;
    struct store *s = merged(&a, &b, &dst);
    CHECK_INT(q(s, "SELECT count(*) FROM repos"), ==, 2);
    CHECK_INT(q(s, "SELECT count(*) FROM sources"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM kernel_occurrences o JOIN sources so ON so.id ="
                   " o.source_id JOIN repos r ON r.id = so.repo_id WHERE r.full_name ="
                   " 'alice/k'"), ==, 2);
    /* shard b's T4 measurement must point at the T4, its H100 one at the H100 */
    CHECK_INT(q(s, "SELECT count(*) FROM measurements m JOIN gpus g ON g.id = m.gpu_id WHERE"
                   " g.uuid = 'GPU-2' AND m.median_ns = 90"), ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements m JOIN stage_runs r ON r.id = m.run_id"
                   " WHERE r.host = 'n2'"), ==, 2);
    /* the kernel got further in shard b */
    CHECK_INT(q(s, "SELECT count(*) FROM kernels WHERE id = '" KA "' AND status = 'runnable'"),
              ==, 1);
    CHECK_INT(q(s, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'merge%'"),
              ==, 0);
    store_free(s);
    free(a), free(b), free(dst);
}

static void test_merge__keeps_the_newer_remeasurement_current_and_the_older_superseded(void)
{
    char *a, *b, *dst;
    struct store *s = merged(&a, &b, &dst);
    CHECK_INT(q(s, "SELECT median_ns FROM measurements m JOIN gpus g ON g.id = m.gpu_id WHERE"
                   " g.uuid = 'GPU-1' AND block_x = 16 AND superseded = 0"), ==, 300);
    CHECK_INT(q(s, "SELECT count(*) FROM measurements WHERE superseded = 1 AND median_ns = 100"),
              ==, 1);
    store_free(s);
    free(a), free(b), free(dst);
}

static void test_merge__is_idempotent(void)
{
    char *a, *b, *dst;
    struct store *s = merged(&a, &b, &dst);
    int64_t before = q(s, "SELECT (SELECT count(*) FROM measurements) * 1000 + (SELECT count(*)"
                          " FROM failures) * 100 + (SELECT count(*) FROM stage_runs)");
    struct merge_result r = { 0 };
    CHECK_OK(merge_shard(&r, s, b));
    CHECK_OK(merge_shard(&r, s, a));
    for (int i = 0; i < r.ntables; i++)
        if (r.added[i] != 0)
            test_fail(__FILE__, __LINE__, "second merge added %lld rows to %s",
                      (long long)r.added[i], r.tables[i]);
    CHECK_INT(q(s, "SELECT (SELECT count(*) FROM measurements) * 1000 + (SELECT count(*)"
                   " FROM failures) * 100 + (SELECT count(*) FROM stage_runs)"), ==, before);
    store_free(s);
    free(a), free(b), free(dst);
}

/* One row in each of parses, builds and probes with every column set (the fixture is checked
 * against the schema, so a column added later fails here until merge copies it too). */
static const char shard_full[] =
    "INSERT INTO stage_runs(id, stage, args, host, pid, lscat_version, started_at) VALUES"
    " (3, 'execute', '[]', 'n3', 30, '0.1', '2026-11-03T00:00:00Z');"
    "INSERT INTO repos(id, full_name, fetch_status) VALUES (4, 'carol/p', 'fetched');"
    "INSERT INTO sources(id, repo_id, root, isolated_at, run_id) VALUES (6, 4, 'trees/carol/p',"
    " 'x', 3);"
    "INSERT INTO parses(id, source_id, path, sha256, status, reason, kernels, parse_s,"
    " max_rss_kb, isolate_version) VALUES (9, 6, 'p.cu', 'ff', 'ok', 'none', 1, 0.5, 2048, '8');"
    "INSERT INTO kernels(id, name, dir, params, param_count, created_at, run_id) VALUES"
    " ('" KB "', 'b', 'bb/x', '[]', 0, '2026-11-03T00:00:00Z', 3);"
    "INSERT INTO builds(id, kernel_id, arch, cache_key, status, attempts, fixes, binary_path,"
    " nvcc_version, flags, registers, shared_bytes, stack_bytes, spill_store_bytes,"
    " spill_load_bytes, const_bytes, barriers, ptxas, error_class, build_s, built_at, run_id)"
    " VALUES (11, '" KB "', 'sm_90', 'k1', 'failed', 2, '[]', 'b.so', '13.0', '-O3', 32, 1024,"
    " 0, 0, 0, 0, 1, '[]', 'other', 1.5, 'x', 3);"
    "INSERT INTO gpus(id, uuid, name, first_seen) VALUES (5, 'GPU-3', 'H200', 'x');"
    "INSERT INTO probes(kernel_id, gpu_id, outcome, detail, sanitizer, sanitizer_detail,"
    " cache_key, probe_s, probed_at, run_id, binding, bindings) VALUES ('" KB "', 5,"
    " 'illegal_address', 'd', 'out_of_bounds', 'Invalid __global__ read', 'pk', 2.25, 'x', 3,"
    " 'area', '[]');";

/* Every column of `table`: set in the shard's row, and in the merged row too. */
static void check_every_column(struct store *shard, struct store *dst, const char *table)
{
    char *cols = NULL;
    char *sql = xasprintf("SELECT group_concat(name, ' ') FROM pragma_table_info('%s')", table);
    CHECK_OK(store_query_text(&cols, shard, sql, ""));
    free(sql);
    for (char *save = NULL, *c = strtok_r(cols, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
        sql = xasprintf("SELECT count(%s) FROM %s", c, table);
        int64_t in_shard = q(shard, sql), in_dst = q(dst, sql);
        if (in_shard != 1)
            test_fail(__FILE__, __LINE__, "fixture: %s.%s is not set in the shard", table, c);
        if (in_dst != in_shard)
            test_fail(__FILE__, __LINE__, "merge dropped %s.%s", table, c);
        free(sql);
    }
    free(cols);
}

static void test_merge__copies_every_column_of_parses_builds_and_probes(void)
{
    char *a = make_store("full.db", shard_full);
    char *dst = fs_join(test_tmpdir(), "full-merged.db");
    struct store *s, *sh;
    CHECK_OK(store_open(&s, dst, STORE_CREATE));
    struct merge_result r = { 0 };
    CHECK_OK(merge_shard(&r, s, a));
    CHECK_OK(store_open(&sh, a, STORE_READONLY));
    check_every_column(sh, s, "parses");
    check_every_column(sh, s, "builds");
    check_every_column(sh, s, "probes");
    /* the values themselves, not only their presence */
    CHECK_INT(q(s, "SELECT probe_s * 100 FROM probes"), ==, 225);
    CHECK_INT(q(s, "SELECT count(*) FROM probes WHERE cache_key = 'pk' AND sanitizer_detail"
                   " LIKE 'Invalid%'"), ==, 1);
    CHECK_INT(q(s, "SELECT max_rss_kb FROM parses"), ==, 2048);
    store_free(sh);
    store_free(s);
    free(a), free(dst);
}

static void test_merge__refuses_itself_and_foreign_files(void)
{
    char *a = make_store("a.db", shard_a);
    struct store *s;
    CHECK_OK(store_open(&s, a, 0));
    struct merge_result r = { 0 };
    CHECK(merge_shard(&r, s, a) < 0);
    CHECK_CONTAINS(lscat_error_last(), "into itself");
    char *junk = fs_join(test_tmpdir(), "junk.db");
    test_write_file(junk, "not a database at all, just text that is long enough", 52);
    CHECK(merge_shard(&r, s, junk) < 0);
    CHECK_CONTAINS(lscat_error_last(), "junk.db");
    CHECK_INT(r.ntables, ==, 0);
    store_free(s);
    free(a);
    free(junk);
}

int main(void)
{
    TEST_RUN(test_merge__joins_shards_on_natural_keys_and_remaps_ids);
    TEST_RUN(test_merge__keeps_the_newer_remeasurement_current_and_the_older_superseded);
    TEST_RUN(test_merge__is_idempotent);
    TEST_RUN(test_merge__refuses_itself_and_foreign_files);
    TEST_RUN(test_merge__copies_every_column_of_parses_builds_and_probes);
    return test_done();
}
