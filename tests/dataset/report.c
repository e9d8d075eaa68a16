/* Unit tests of dataset/report.c on the SYNTHETIC store (tests/dataset/fixtures/synthetic.sql),
 * whose answers were worked out by hand: H100: 4 cases (2 kernels x 2 sizes); the best block
 * is not the largest in 2; the largest block reaches 0.9, 3000/3700, 1, 1 of the best; the
 * 1024-thread block loses 1/9, 7/30, 0, 0; the occupancy suggestion is always the best.
 * T4: one case where the 1024-thread block is the best. Only output-check `match` rows count:
 * saxpy's 32x32 at 496 is a faster mismatch that must change nothing. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "dataset/report.h"
#include "store/store.h"
#include "tests/support/test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) CHECK(fabs((a) - (b)) < 1e-9)

static struct store *synthetic(void)
{
    char *db = fs_join(test_tmpdir(), "s.db");
    struct store *s;
    struct buf sql = BUF_INIT;
    CHECK_OK(store_open(&s, db, STORE_CREATE));
    CHECK_OK(buf_read_file(&sql, "tests/dataset/fixtures/synthetic.sql"));
    CHECK_OK(store_exec(s, sql.data));
    buf_release(&sql);
    free(db);
    return s;
}

static void test_report__answers_lscat_questions_on_the_synthetic_store(void)
{
    struct store *s = synthetic();
    struct report_options o = REPORT_OPTIONS_INIT;
    o.out_dir = test_tmpdir();
    o.plots = 0;
    struct buf table = BUF_INIT;
    struct report_summary *r = NULL;
    int n = 0;
    CHECK_OK(report_run(&table, &r, &n, s, &o));
    CHECK_INT(n, ==, 2);
    CHECK_STR(r[0].gpu, "NVIDIA H100 80GB HBM3");
    CHECK_INT(r[0].kernels, ==, 2);
    CHECK_INT(r[0].cases, ==, 4);
    NEAR(r[0].best_not_largest, 0.5);
    NEAR(r[0].largest_rel_mean, (0.9 + 3000.0 / 3700 + 1 + 1) / 4);
    NEAR(r[0].largest_below_85, 0.25);
    NEAR(r[0].gain_1024_mean, (1000.0 / 900 - 1 + 3700.0 / 3000 - 1) / 4);
    NEAR(r[0].gain_1024_over_20, 0.25);
    CHECK_INT(r[0].gain_1024_cases, ==, 4);
    CHECK_INT(r[0].gain_1024_missing, ==, 0);
    NEAR(r[0].gain_1024_median, (0 + 1000.0 / 900 - 1) / 2);
    NEAR(r[0].gain_1024_geomean, pow(1000.0 / 900 * 3700.0 / 3000, 0.25) - 1);
    NEAR(r[0].occupancy_best, 1.0);
    /* saxpy's 32x32 at 496 (2000 ns, the fastest) is a mismatch: not a best block */
    CHECK_INT(r[0].rows_match, ==, 15);
    CHECK_INT(r[0].rows_mismatch, ==, 1);
    CHECK_INT(r[0].kernels_mismatch, ==, 1);
    CHECK_STR(r[1].gpu, "Tesla T4");
    CHECK_INT(r[1].cases, ==, 1); /* the cuda_error row is not a timing */
    NEAR(r[1].best_not_largest, 0.0);
    CHECK_CONTAINS(table.data, "NVIDIA H100 80GB HBM3              2       4     50.0%");
    CHECK_CONTAINS(table.data, "15 match, 1 mismatch (1 kernels), 0 nondeterministic");
    char *txt = fs_join(test_tmpdir(), "report.txt"), *html = fs_join(test_tmpdir(), "index.html");
    CHECK(fs_exists(txt) && fs_exists(html));
    char *checks = fs_join(test_tmpdir(), "output_check.txt");
    struct buf cb = BUF_INIT;
    CHECK_OK(buf_read_file(&cb, checks));
    /* saxpy first on the H100 (it lost a row); its 16x16 and 32x32 matches are 2D shapes on
     * a 1D kernel */
    CHECK_CONTAINS(cb.data, "NVIDIA H100 80GB HBM3\t1111111111111111111111111111111111111111111111"
                            "111111111111111111\tsaxpy\t1d\t7\t1\t0\t0\t3\n");
    buf_release(&cb);
    free(checks);
    free(txt);
    free(html);
    free(r);
    buf_release(&table);
    store_free(s);
}

/* #14 item 7: a 1D kernel is compared with its (1024,1,1) block only; when that is missing
 * the case has no comparison (reported) instead of borrowing the 32x32 2D shape. */
static void test_report__a_1d_kernel_without_its_1024x1_block_has_no_comparison(void)
{
    struct store *s = synthetic();
    CHECK_OK(store_exec(s, "DELETE FROM measurements WHERE kernel_id LIKE '1111%' AND gpu_id = 1 "
                           "AND width = 240 AND block_x = 1024"));
    struct report_options o = REPORT_OPTIONS_INIT;
    o.out_dir = test_tmpdir();
    o.plots = 0;
    struct buf table = BUF_INIT;
    struct report_summary *r = NULL;
    int n = 0;
    CHECK_OK(report_run(&table, &r, &n, s, &o));
    CHECK_INT(r[0].cases, ==, 4);
    CHECK_INT(r[0].gain_1024_cases, ==, 3); /* not the 32x32 at 1100 ns */
    CHECK_INT(r[0].gain_1024_missing, ==, 1);
    NEAR(r[0].gain_1024_mean, (3700.0 / 3000 - 1) / 3);
    CHECK_CONTAINS(table.data, "1 case(s) without a 1024-thread comparison");
    CHECK_CONTAINS(table.data, "3/4");
    free(r);
    buf_release(&table);
    store_free(s);
}

/* Rows measured at a kernel's fixed size (binding fixed) are no point of the W x H sweep: a
 * kernel's rows turned fixed leave its cases, the others' stay as they were. */
static void test_report__fixed_size_rows_stay_out_of_the_per_size_tables(void)
{
    struct store *s = synthetic();
    CHECK_OK(store_exec(s, "UPDATE measurements SET binding = 'fixed' WHERE kernel_id LIKE "
                           "'2222%' AND gpu_id = 1"));
    struct report_options o = REPORT_OPTIONS_INIT;
    o.out_dir = test_tmpdir();
    o.plots = 0;
    struct buf table = BUF_INIT;
    struct report_summary *r = NULL;
    int n = 0;
    CHECK_OK(report_run(&table, &r, &n, s, &o));
    CHECK_INT(r[0].cases, ==, 2); /* saxpy's 2 sizes; gemm's left */
    free(r);
    buf_release(&table);
    store_free(s);
}

/* A 2D kernel's 1024-thread comparison is its fastest 1024-thread shape that matched. */
static void test_report__mismatching_rows_never_make_a_best_block(void)
{
    struct store *s = synthetic();
    /* gemm's 32x32 at 240 becomes a mismatch: the (1,1024) at the same time still compares */
    CHECK_OK(store_exec(s, "UPDATE measurements SET output_check = 'mismatch', median_ns = 10 "
                           "WHERE kernel_id LIKE '2222%' AND gpu_id = 1 AND width = 240 AND "
                           "block_x = 32"));
    struct report_options o = REPORT_OPTIONS_INIT;
    o.out_dir = test_tmpdir();
    o.plots = 0;
    struct buf table = BUF_INIT;
    struct report_summary *r = NULL;
    int n = 0;
    CHECK_OK(report_run(&table, &r, &n, s, &o));
    NEAR(r[0].best_not_largest, 0.5); /* unchanged: the 10 ns mismatch is no best block */
    NEAR(r[0].gain_1024_mean, (1000.0 / 900 - 1 + 3700.0 / 3000 - 1) / 4);
    CHECK_INT(r[0].rows_mismatch, ==, 2);
    CHECK_INT(r[0].kernels_mismatch, ==, 2);
    free(r);
    buf_release(&table);
    store_free(s);
}

/* --all-checks: the table as it read before the output check. saxpy's mismatching 32x32 at 496
 * (2000 ns) becomes that case's best: the best block is then the largest (0.5 -> 0.25) and the
 * (1024,1,1) block loses 3700/2000 instead of 3700/3000; the row counts are the same. */
static void test_report__all_checks_counts_mismatching_rows_as_before_the_check(void)
{
    struct store *s = synthetic();
    struct report_options o = REPORT_OPTIONS_INIT;
    o.out_dir = test_tmpdir();
    o.plots = 0;
    o.all_checks = 1;
    struct buf table = BUF_INIT;
    struct report_summary *r = NULL;
    int n = 0;
    CHECK_OK(report_run(&table, &r, &n, s, &o));
    CHECK_INT(r[0].cases, ==, 4);
    NEAR(r[0].best_not_largest, 0.25);
    NEAR(r[0].largest_rel_mean, (0.9 + 1 + 1 + 1) / 4);
    NEAR(r[0].gain_1024_mean, (1000.0 / 900 - 1 + 3700.0 / 2000 - 1) / 4);
    CHECK_INT(r[0].rows_match, ==, 15);
    CHECK_INT(r[0].rows_mismatch, ==, 1);
    CHECK_CONTAINS(table.data, "ALL of them are counted above (--all-checks");
    free(r);
    buf_release(&table);
    store_free(s);
}

static void test_report__gpu_filter_keeps_only_matching_models(void)
{
    struct store *s = synthetic();
    struct report_options o = REPORT_OPTIONS_INIT;
    o.out_dir = test_tmpdir();
    o.plots = 0;
    o.gpu = "t4";
    struct buf table = BUF_INIT;
    struct report_summary *r = NULL;
    int n = 0;
    CHECK_OK(report_run(&table, &r, &n, s, &o));
    CHECK_INT(n, ==, 1);
    CHECK_STR(r[0].gpu, "Tesla T4");
    free(r);
    buf_release(&table);
    store_free(s);
}

static void test_report__empty_store_says_there_is_nothing_to_compare(void)
{
    char *db = fs_join(test_tmpdir(), "e.db");
    struct store *s;
    CHECK_OK(store_open(&s, db, STORE_CREATE));
    struct report_options o = REPORT_OPTIONS_INIT;
    o.out_dir = test_tmpdir();
    struct buf table = BUF_INIT;
    CHECK_OK(report_run(&table, NULL, NULL, s, &o));
    CHECK_CONTAINS(table.data, "no current ok measurements");
    buf_release(&table);
    store_free(s);
    free(db);
}

int main(void)
{
    TEST_RUN(test_report__answers_lscat_questions_on_the_synthetic_store);
    TEST_RUN(test_report__a_1d_kernel_without_its_1024x1_block_has_no_comparison);
    TEST_RUN(test_report__fixed_size_rows_stay_out_of_the_per_size_tables);
    TEST_RUN(test_report__mismatching_rows_never_make_a_best_block);
    TEST_RUN(test_report__all_checks_counts_mismatching_rows_as_before_the_check);
    TEST_RUN(test_report__gpu_filter_keeps_only_matching_models);
    TEST_RUN(test_report__empty_store_says_there_is_nothing_to_compare);
    return test_done();
}
