/* Unit tests of dataset/export.c and card.c through export_run() on the SYNTHETIC store:
 * row counts, source handling (missing, not UTF-8), filters, companion files, errors. Values
 * are checked by independent readers in tests/e2e/dataset_export.sh. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "dataset/export.h"
#include "store/store.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct store *synthetic(char **work_out)
{
    char *db = fs_join(test_tmpdir(), "s.db");
    struct store *s;
    struct buf sql = BUF_INIT;
    CHECK_OK(store_open(&s, db, STORE_CREATE));
    CHECK_OK(buf_read_file(&sql, "tests/dataset/fixtures/synthetic.sql"));
    CHECK_OK(store_exec(s, sql.data));
    buf_release(&sql);
    free(db);
    *work_out = fs_join(test_tmpdir(), "work");
    char *k1 = xasprintf("%s/kernels/11/%s/kernel.cu", *work_out,
                         "1111111111111111111111111111111111111111111111111111111111111111");
    char *k3 = xasprintf("%s/kernels/33/%s/kernel.cu", *work_out,
                         "3333333333333333333333333333333333333333333333333333333333333333");
    test_write_file(k1, "__global__ void saxpy() {}\n", 27);
    test_write_file(k3, "// caf\xe9\n", 9);
    free(k1);
    free(k3);
    return s;
}

static int64_t rows_of(const struct export_result *r, const char *table)
{
    for (int i = 0; i < r->ntables; i++)
        if (strcmp(r->tables[i], table) == 0)
            return r->rows[i];
    return -1;
}

static void test_export__writes_every_table_with_its_row_count(void)
{
    char *work;
    struct store *s = synthetic(&work);
    struct export_options o = EXPORT_OPTIONS_INIT;
    char *out = fs_join(test_tmpdir(), "out");
    o.out_dir = out;
    o.work_dir = work;
    o.quiet = 1;
    struct export_result r;
    CHECK_OK(export_run(&r, s, &o));
    CHECK_INT(r.ntables, ==, 8);
    CHECK_INT(rows_of(&r, "kernels"), ==, 5);
    CHECK_INT(rows_of(&r, "sources"), ==, 5);
    CHECK_INT(rows_of(&r, "sources_raw"), ==, 1); /* only the Latin-1 source */
    CHECK_INT(rows_of(&r, "measurements"), ==, 21); /* the superseded row is left out */
    CHECK_INT(rows_of(&r, "failures"), ==, 3);
    CHECK_INT(r.sources_missing, ==, 3);  /* 22.., 44.., 55.. were not written here */
    CHECK_INT(r.sources_not_utf8, ==, 1);
    const char *files[] = { "kernels.parquet", "gpus.parquet", "README.md", "columns.md",
                            "SHA256SUMS" };
    for (int i = 0; i < 5; i++) {
        char *p = fs_join(out, files[i]);
        if (!fs_exists(p))
            test_fail(__FILE__, __LINE__, "%s missing", files[i]);
        free(p);
    }
    struct buf sums = BUF_INIT, card = BUF_INIT;
    char *p = fs_join(out, "SHA256SUMS");
    CHECK_OK(buf_read_file(&sums, p));
    free(p);
    CHECK_CONTAINS(sums.data, "  measurements.parquet\n");
    CHECK_CONTAINS(sums.data, "  README.md\n");
    p = fs_join(out, "README.md");
    CHECK_OK(buf_read_file(&card, p));
    free(p);
    CHECK_CONTAINS(card.data, "3 kernels have no source in this export");
    CHECK_CONTAINS(card.data, "| MIT | 1 |");
    buf_release(&sums);
    buf_release(&card);
    free(out);
    free(work);
    store_free(s);
}

static void test_export__csv_checksums_match_the_files(void)
{
    char *work;
    struct store *s = synthetic(&work);
    struct export_options o = EXPORT_OPTIONS_INIT;
    char *out = fs_join(test_tmpdir(), "csv");
    o.out_dir = out;
    o.work_dir = work;
    o.format = EXPORT_CSV;
    o.tables = "failures";
    o.quiet = 1;
    struct export_result r;
    CHECK_OK(export_run(&r, s, &o));
    CHECK_INT(r.ntables, ==, 1);
    struct buf f = BUF_INIT, sums = BUF_INIT;
    char *p = fs_join(out, "failures.csv"), want[65], line[128];
    CHECK_OK(buf_read_file(&f, p));
    free(p);
    sha256_hex(want, f.data, f.len);
    snprintf(line, sizeof(line), "%s  failures.csv\n", want);
    p = fs_join(out, "SHA256SUMS");
    CHECK_OK(buf_read_file(&sums, p));
    free(p);
    CHECK_CONTAINS(sums.data, line);
    CHECK_CONTAINS(f.data, "\"line one\nline two, with \"\"quotes\"\"\"");
    buf_release(&f);
    buf_release(&sums);
    free(out);
    free(work);
    store_free(s);
}

static void test_export__filters_by_gpu_and_date_and_corpus(void)
{
    char *work;
    struct store *s = synthetic(&work);
    struct export_options o = EXPORT_OPTIONS_INIT;
    char *out = fs_join(test_tmpdir(), "f");
    o.out_dir = out;
    o.work_dir = work;
    o.quiet = 1;
    o.gpu = "H100";
    o.since = "2026-11-07";
    struct export_result r;
    CHECK_OK(export_run(&r, s, &o));
    CHECK_INT(rows_of(&r, "measurements"), ==, 16);
    CHECK_INT(rows_of(&r, "gpus"), ==, 1);
    CHECK_INT(rows_of(&r, "failures"), ==, 1); /* only the tune failure is that recent */
    o.kernels_only = 1;
    CHECK_OK(export_run(&r, s, &o));
    CHECK_INT(r.ntables, ==, 5); /* kernels, sources, sources_raw, occurrences, repositories */
    CHECK_INT(rows_of(&r, "measurements"), ==, -1);
    free(out);
    free(work);
    store_free(s);
}

static void test_export__refuses_unknown_tables_and_unwritable_folders(void)
{
    CHECK(export_check_tables("kernels,gpus") == 0);
    CHECK_INT(export_check_tables("kernels,nope"), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "no table 'nope'");
    char *work;
    struct store *s = synthetic(&work);
    struct export_options o = EXPORT_OPTIONS_INIT;
    char *file = fs_join(test_tmpdir(), "a-file");
    test_write_file(file, "x", 1);
    char *out = fs_join(file, "sub");
    o.out_dir = out;
    o.work_dir = work;
    o.quiet = 1;
    struct export_result r;
    CHECK(export_run(&r, s, &o) < 0);
    CHECK_CONTAINS(lscat_error_last(), "a-file");
    free(out);
    free(file);
    free(work);
    store_free(s);
}

static void test_export__a_time_that_is_not_iso8601_fails_parquet_and_stays_text_in_csv(void)
{
    char *work;
    struct store *s = synthetic(&work);
    CHECK_OK(store_exec(s, "UPDATE failures SET created_at = 'yesterday' WHERE id = 1"));
    struct export_options o = EXPORT_OPTIONS_INIT;
    char *out = fs_join(test_tmpdir(), "badtime");
    o.out_dir = out;
    o.work_dir = work;
    o.tables = "failures";
    o.quiet = 1;
    struct export_result r;
    CHECK(export_run(&r, s, &o) < 0);
    CHECK_CONTAINS(lscat_error_last(), "column created_at");
    CHECK_CONTAINS(lscat_error_last(), "'yesterday' is not an ISO-8601 time");
    o.format = EXPORT_CSV;
    CHECK_OK(export_run(&r, s, &o));
    struct buf f = BUF_INIT;
    char *p = fs_join(out, "failures.csv");
    CHECK_OK(buf_read_file(&f, p));
    CHECK_CONTAINS(f.data, ",yesterday\r\n");
    buf_release(&f);
    free(p);
    free(out);
    free(work);
    store_free(s);
}

static void test_export__since_takes_the_stores_time_prefixes_and_nothing_else(void)
{
    static const char *const good[] = { "2026", "2026-11", "2026-11-01", "2026-11-01T09",
                                        "2026-11-01T09:30", "2026-11-20T00:00:02",
                                        "2026-11-20T00:00:02Z", NULL };
    static const char *const bad[] = { "", "notadate", "26-11-01", "2026-11-1", "2026-13-01",
                                       "2026-00-10", "2026-11-32", "2026-11-01 09:30",
                                       "2026-11-01T24", "2026-11-01T09:60", "2026-11-01T",
                                       "2026-11-01Z", "2026/11/01", "2026-11-01T09:30:00+01",
                                       NULL };
    for (int i = 0; good[i]; i++)
        CHECK_OK(export_check_since(good[i]));
    for (int i = 0; bad[i]; i++) {
        CHECK_INT(export_check_since(bad[i]), ==, LSCAT_EINVALID);
        CHECK_CONTAINS(lscat_error_last(), "is not a UTC date or time");
    }
}

int main(void)
{
    TEST_RUN(test_export__writes_every_table_with_its_row_count);
    TEST_RUN(test_export__csv_checksums_match_the_files);
    TEST_RUN(test_export__filters_by_gpu_and_date_and_corpus);
    TEST_RUN(test_export__refuses_unknown_tables_and_unwritable_folders);
    TEST_RUN(test_export__a_time_that_is_not_iso8601_fails_parquet_and_stays_text_in_csv);
    TEST_RUN(test_export__since_takes_the_stores_time_prefixes_and_nothing_else);
    return test_done();
}
