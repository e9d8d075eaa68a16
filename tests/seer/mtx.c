/* Tests of seer/mtx.c: the Matrix Market reader accepts the coordinate kinds (real, integer,
 * pattern; general, symmetric, skew-symmetric) and real SuiteSparse files, and refuses malformed
 * files with the file, the line and the problem, returning nothing. */
#include "tests/support/test.h"

#include "common/error.h"
#include "seer/mtx.h"

#include <stdio.h>

static const char *write_mtx(const char *text)
{
    static char path[600];
    snprintf(path, sizeof(path), "%s/m.mtx", test_tmpdir());
    test_write_file(path, text, strlen(text));
    return path;
}

static double at(const struct seer_csr *a, int r, int c)
{
    for (int k = a->row_ptr[r]; k < a->row_ptr[r + 1]; k++)
        if (a->col[k] == c)
            return a->val[k];
    return 0;
}

static void test_mtx__reads_a_general_real_matrix_summing_duplicates(void)
{
    struct seer_csr a;
    struct seer_mtx_info info;
    CHECK_OK(seer_mtx_read(&a, &info, write_mtx("%%MatrixMarket matrix coordinate real general\n"
                                                 "% a comment\n\n3 4 4\n3 4 -2.5\n1 1 1e0\r\n"
                                                 "1 1 2\n2 3 7\n")));
    CHECK_INT(a.rows, ==, 3);
    CHECK_INT(a.cols, ==, 4);
    CHECK_INT(a.nnz, ==, 3);
    CHECK(at(&a, 0, 0) == 3.0);
    CHECK(at(&a, 1, 2) == 7.0);
    CHECK(at(&a, 2, 3) == -2.5);
    CHECK_STR(info.field, "real");
    CHECK_INT(info.entries, ==, 4);
    seer_csr_release(&a);
}

static void test_mtx__mirrors_symmetric_pattern_and_negates_skew_symmetric(void)
{
    struct seer_csr a;
    CHECK_OK(seer_mtx_read(&a, NULL, write_mtx("%%MatrixMarket matrix coordinate pattern symmetric\n"
                                                "3 3 3\n1 1\n2 1\n3 2\n")));
    CHECK_INT(a.nnz, ==, 5);
    CHECK(at(&a, 0, 1) == 1.0 && at(&a, 1, 0) == 1.0 && at(&a, 1, 2) == 1.0);
    seer_csr_release(&a);
    CHECK_OK(seer_mtx_read(&a, NULL, write_mtx("%%MatrixMarket matrix coordinate integer "
                                                "skew-symmetric\n2 2 1\n2 1 5\n")));
    CHECK_INT(a.nnz, ==, 2);
    CHECK(at(&a, 1, 0) == 5.0 && at(&a, 0, 1) == -5.0);
    seer_csr_release(&a);
}

static void test_mtx__reads_real_suitesparse_files(void)
{
    struct seer_csr a;
    struct seer_mtx_info info;
    CHECK_OK(seer_mtx_read(&a, &info, test_data("matrices/can_24.mtx")));
    CHECK_INT(a.rows, ==, 24);
    CHECK_INT(info.entries, ==, 92);
    CHECK_INT(a.nnz, ==, 2 * 92 - 24); /* 24 diagonal entries stay single */
    seer_csr_release(&a);
    CHECK_OK(seer_mtx_read(&a, &info, test_data("matrices/bcsstk01.mtx")));
    CHECK_INT(a.rows, ==, 48);
    CHECK_INT(info.entries, ==, 224);
    CHECK_INT(a.nnz, ==, 400);
    CHECK_STR(info.symmetry, "symmetric");
    for (int r = 0; r < a.rows; r++) /* symmetric after mirroring */
        for (int k = a.row_ptr[r]; k < a.row_ptr[r + 1]; k++)
            CHECK(at(&a, a.col[k], r) == a.val[k]);
    seer_csr_release(&a);
}

/* The reader refuses `text` with a message holding ":line:" and `what`, returning no matrix. */
static void refuses(const char *text, int line, const char *what)
{
    struct seer_csr a = { 1, 1, 1, NULL, NULL, NULL };
    const char *path = write_mtx(text);
    char where[700];
    CHECK_INT(seer_mtx_read(&a, NULL, path), ==, LSCAT_EINVALID);
    snprintf(where, sizeof(where), "%s:%d: ", path, line);
    CHECK_CONTAINS(lscat_error_last(), where);
    CHECK_CONTAINS(lscat_error_last(), what);
    CHECK(a.row_ptr == NULL && a.rows == 0);
}

static void test_mtx__refuses_a_missing_banner_array_complex_and_hermitian(void)
{
    refuses("3 3 1\n1 1 1\n", 1, "missing banner");
    refuses("", 0, "empty file");
    refuses("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1,
            "array (dense) format is not supported");
    refuses("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1,
            "field 'complex'");
    refuses("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", 1,
            "symmetry 'hermitian'");
}

static void test_mtx__refuses_zero_based_and_out_of_range_indices(void)
{
    refuses("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n0 2 3\n", 4,
            "row index 0 is 0-based");
    refuses("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 4 3\n", 4,
            "column index 4 is out of range (indices run from 1 to 3)");
}

static void test_mtx__refuses_counts_that_do_not_match_and_truncated_files(void)
{
    refuses("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n2 2 2\n", 4,
            "more entries than the 1");
    refuses("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n", 4,
            "truncated file: the size line declares 3 entries, the file ends after 2");
    refuses("%%MatrixMarket matrix coordinate real general\n% only a comment\n", 2,
            "no size line");
    refuses("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", 3, "missing value");
}

static void test_mtx__refuses_non_numbers_and_extra_text(void)
{
    refuses("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", 3,
            "value 'abc' is not a number");
    refuses("%%MatrixMarket matrix coordinate real general\n3 x 1\n", 2,
            "column count 'x' is not an integer");
    refuses("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1.5 2\n", 3,
            "column index '1.5' is not an integer");
    refuses("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 nan\n", 3, "not finite");
    refuses("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 2\n", 3,
            "unexpected extra text '2'");
    refuses("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n", 3,
            "is not an integer");
}

static void test_mtx__refuses_what_a_symmetry_forbids(void)
{
    refuses("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 3\n", 3,
            "no diagonal entries");
    refuses("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 3\n", 2, "square");
    refuses("%%MatrixMarket matrix coordinate real general\n0 3 0\n", 2, "between 1 and");
}

int main(void)
{
    TEST_RUN(test_mtx__reads_a_general_real_matrix_summing_duplicates);
    TEST_RUN(test_mtx__mirrors_symmetric_pattern_and_negates_skew_symmetric);
    TEST_RUN(test_mtx__reads_real_suitesparse_files);
    TEST_RUN(test_mtx__refuses_a_missing_banner_array_complex_and_hermitian);
    TEST_RUN(test_mtx__refuses_zero_based_and_out_of_range_indices);
    TEST_RUN(test_mtx__refuses_counts_that_do_not_match_and_truncated_files);
    TEST_RUN(test_mtx__refuses_non_numbers_and_extra_text);
    TEST_RUN(test_mtx__refuses_what_a_symmetry_forbids);
    return test_done();
}
