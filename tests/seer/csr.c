/* Tests of seer/csr.c and seer/gen.c on hand-worked matrices: CSR from unsorted triplets with
 * duplicates, ELL (column-major, padded) and COO forms, the row-length features, the double
 * reference SpMV, and the seeded generators (same spec, same matrix; each family's shape). */
#include "tests/support/test.h"

#include "common/error.h"
#include "seer/csr.h"
#include "seer/gen.h"

#include <math.h>

/*      c0 c1 c2 c3 c4
 * r0 [ 1  .  .  2  . ]
 * r1 [ .  .  .  .  . ]
 * r2 [ .  3  4  .  5 ]
 * r3 [ .  .  .  .  6 ]   given out of order, with (2,2) split into 1.5 + 2.5 */
static void example(struct seer_csr *a)
{
    int ti[] = { 2, 0, 3, 2, 2, 0, 2 }, tj[] = { 4, 3, 4, 1, 2, 0, 2 };
    double tv[] = { 5, 2, 6, 3, 1.5, 1, 2.5 };
    CHECK_OK(seer_csr_from_triplets(a, 4, 5, ti, tj, tv, 7));
}

static void test_csr__sorts_rows_and_sums_duplicates(void)
{
    struct seer_csr a;
    example(&a);
    int rp[] = { 0, 2, 2, 5, 6 }, col[] = { 0, 3, 1, 2, 4, 4 };
    double val[] = { 1, 2, 3, 4, 5, 6 };
    CHECK_INT(a.nnz, ==, 6);
    for (int i = 0; i < 5; i++)
        CHECK_INT(a.row_ptr[i], ==, rp[i]);
    for (int k = 0; k < 6; k++) {
        CHECK_INT(a.col[k], ==, col[k]);
        CHECK(a.val[k] == val[k]);
    }
    seer_csr_release(&a);
}

static void test_csr__converts_to_column_major_ell_and_to_coo(void)
{
    struct seer_csr a;
    struct seer_ell e;
    struct seer_coo c;
    example(&a);
    CHECK_OK(seer_csr_to_ell(&e, &a, 0));
    CHECK_INT(e.width, ==, 3);
    /* entry k of row r at k * rows + r; padding is column -1, value 0 */
    int ec[] = { 0, -1, 1, 4, 3, -1, 2, -1, -1, -1, 4, -1 };
    double ev[] = { 1, 0, 3, 6, 2, 0, 4, 0, 0, 0, 5, 0 };
    for (int i = 0; i < 12; i++) {
        CHECK_INT(e.col[i], ==, ec[i]);
        CHECK(e.val[i] == ev[i]);
    }
    seer_ell_release(&e);
    CHECK_INT(seer_csr_to_ell(&e, &a, 11), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "needs 12 cells");
    seer_csr_to_coo(&c, &a);
    int cr[] = { 0, 0, 2, 2, 2, 3 };
    for (int k = 0; k < 6; k++)
        CHECK_INT(c.row[k], ==, cr[k]);
    CHECK_INT(c.col[5], ==, 4);
    seer_coo_release(&c);
    seer_csr_release(&a);
}

static void test_csr__computes_row_length_features(void)
{
    struct seer_csr a;
    struct seer_features f;
    example(&a);
    seer_csr_features(&f, &a);
    CHECK(f.rows == 4 && f.cols == 5 && f.nnz == 6);
    CHECK(f.row_max == 3 && f.row_min == 0 && f.row_mean == 1.5);
    CHECK(fabs(f.row_var - 1.25) < 1e-15); /* (0.25 + 2.25 + 2.25 + 0.25) / 4 */
    seer_csr_release(&a);
}

static void test_csr__reference_spmv_and_relative_error(void)
{
    struct seer_csr a;
    double x[] = { 1, 2, 3, 4, 5 }, y[4], abs_[4], want[] = { 9, 0, 43, 30 };
    example(&a);
    seer_csr_spmv_ref(y, abs_, &a, x);
    for (int r = 0; r < 4; r++)
        CHECK(y[r] == want[r]);
    CHECK(abs_[2] == 43);
    CHECK(seer_spmv_rel_error(y, want, abs_, 4) == 0);
    double off[] = { 9, 0, 43.43, 30 };
    CHECK(fabs(seer_spmv_rel_error(off, want, abs_, 4) - 0.01) < 1e-12);
    seer_csr_release(&a);
}

static void test_csr__refuses_triplets_outside_the_matrix(void)
{
    struct seer_csr a;
    int ti[] = { 0, 4 }, tj[] = { 0, 0 };
    CHECK_INT(seer_csr_from_triplets(&a, 4, 4, ti, tj, NULL, 2), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "entry 1 at (4, 0)");
}

static void gen(struct seer_csr *a, const char *spec)
{
    struct seer_gen_spec s;
    CHECK_OK(seer_gen_parse(&s, spec));
    CHECK_OK(seer_gen(a, &s));
    for (int r = 0; r < a->rows; r++)
        for (int k = a->row_ptr[r] + 1; k < a->row_ptr[r + 1]; k++)
            CHECK(a->col[k] > a->col[k - 1]); /* sorted, distinct */
}

static void test_gen__the_same_spec_gives_the_same_matrix(void)
{
    struct seer_csr a, b;
    gen(&a, "powerlaw:rows=5000,avg=6,alpha=1.8,seed=3");
    gen(&b, "powerlaw:rows=5000,avg=6,alpha=1.8,seed=3");
    CHECK_INT(a.nnz, ==, b.nnz);
    CHECK(!memcmp(a.row_ptr, b.row_ptr, 5001 * sizeof(int)));
    CHECK(!memcmp(a.col, b.col, (size_t)a.nnz * sizeof(int)));
    CHECK(!memcmp(a.val, b.val, (size_t)a.nnz * sizeof(double)));
    seer_csr_release(&b);
    gen(&b, "powerlaw:rows=5000,avg=6,alpha=1.8,seed=4");
    CHECK(a.nnz != b.nnz || memcmp(a.col, b.col, (size_t)a.nnz * sizeof(int)));
    seer_csr_release(&a);
    seer_csr_release(&b);
}

static void test_gen__records_the_canonical_spec(void)
{
    struct seer_gen_spec s;
    char buf[300];
    CHECK_OK(seer_gen_parse(&s, "longrows:rows=100,count=2"));
    seer_gen_format(buf, sizeof(buf), &s);
    CHECK_STR(buf, "longrows:rows=100,cols=100,avg=8,long=50,count=2,seed=1");
    CHECK_OK(seer_gen_parse(&s, "banded:rows=7,bw=0"));
    seer_gen_format(buf, sizeof(buf), &s);
    CHECK_STR(buf, "banded:rows=7,cols=7,bw=0,seed=1");
    for (const char *const *f = seer_gen_families(); *f; f++)
        CHECK_OK(seer_gen_parse(&s, *f));
}

/* families-large is drawn with integer arithmetic from a fixed seed: the same 240 strings on
 * every machine (pinned by their FNV-1a hash), each family in turn, all at least 100,000 rows. */
static void test_gen__families_large_is_the_same_fixed_set_everywhere(void)
{
    static const char *const fam[] = { "banded", "uniform", "powerlaw", "blockdiag", "longrows",
                                       "emptyrows" };
    char buf[300], again[300];
    unsigned long long h = 0xcbf29ce484222325ULL;
    long long most = 0;
    CHECK_INT(SEER_GEN_LARGE_COUNT, ==, 240);
    for (int i = 0; i < SEER_GEN_LARGE_COUNT; i++) {
        struct seer_gen_spec s;
        CHECK_OK(seer_gen_large_spec(buf, sizeof(buf), i));
        CHECK_OK(seer_gen_large_spec(again, sizeof(again), i));
        CHECK_STR(buf, again);
        CHECK_OK(seer_gen_parse(&s, buf));
        CHECK_STR(s.family, fam[i % 6]);
        CHECK_INT(s.rows, >=, 100000);
        most = s.rows > most ? s.rows : most;
        for (const char *c = buf; *c; c++)
            h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
        h = (h ^ (unsigned char)'\n') * 0x100000001b3ULL;
    }
    CHECK_INT(most, >, 4000000);
    CHECK_OK(seer_gen_large_spec(buf, sizeof(buf), 0));
    CHECK_STR(buf, "banded:rows=1151000,cols=1151000,bw=3,seed=1");
    CHECK(h == 0x185625a5ae4b1d8dULL);
    CHECK_INT(seer_gen_large_spec(buf, sizeof(buf), 240), ==, LSCAT_EINVALID);
}

static void test_gen__each_family_has_its_shape(void)
{
    struct seer_csr a;
    struct seer_features f;
    gen(&a, "banded:rows=10,bw=2");
    CHECK_INT(a.nnz, ==, 10 * 5 - 2 * 3); /* first and last two rows are clipped */
    seer_csr_release(&a);
    gen(&a, "blockdiag:rows=12,block=4");
    CHECK_INT(a.nnz, ==, 3 * 16);
    CHECK_INT(a.col[a.row_ptr[5]], ==, 4);
    seer_csr_release(&a);
    gen(&a, "longrows:rows=3000,avg=4,long=2000,count=3,seed=9");
    seer_csr_features(&f, &a);
    CHECK(f.row_max == 2000);
    seer_csr_release(&a);
    gen(&a, "emptyrows:rows=20000,avg=8,empty=0.75");
    int empty = 0;
    for (int r = 0; r < a.rows; r++)
        empty += a.row_ptr[r + 1] == a.row_ptr[r];
    CHECK(empty > 14500 && empty < 15500);
    seer_csr_release(&a);
    gen(&a, "powerlaw:rows=200000,avg=8,alpha=2.5");
    seer_csr_features(&f, &a);
    CHECK(f.row_mean > 7 && f.row_mean < 9);
    CHECK(f.row_max > 100); /* a heavy tail */
    seer_csr_release(&a);
    gen(&a, "uniform:rows=10,cols=3,avg=40"); /* rows longer than cols are capped */
    seer_csr_features(&f, &a);
    CHECK(f.row_max == 3 && f.nnz == 30);
    seer_csr_release(&a);
}

static void test_gen__refuses_bad_specs(void)
{
    struct seer_gen_spec s;
    CHECK_INT(seer_gen_parse(&s, "spiral:rows=3"), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "unknown family 'spiral'");
    CHECK_INT(seer_gen_parse(&s, "uniform:avg=3"), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "rows=N");
    CHECK_INT(seer_gen_parse(&s, "uniform:rows=3,colour=red"), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "colour=red is not");
    CHECK_INT(seer_gen_parse(&s, "powerlaw:rows=3,alpha=1"), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "alpha must be above 1");
    CHECK_INT(seer_gen_parse(&s, "banded:rows=3.5"), ==, LSCAT_EINVALID);
}

int main(void)
{
    TEST_RUN(test_csr__sorts_rows_and_sums_duplicates);
    TEST_RUN(test_csr__converts_to_column_major_ell_and_to_coo);
    TEST_RUN(test_csr__computes_row_length_features);
    TEST_RUN(test_csr__reference_spmv_and_relative_error);
    TEST_RUN(test_csr__refuses_triplets_outside_the_matrix);
    TEST_RUN(test_gen__the_same_spec_gives_the_same_matrix);
    TEST_RUN(test_gen__records_the_canonical_spec);
    TEST_RUN(test_gen__families_large_is_the_same_fixed_set_everywhere);
    TEST_RUN(test_gen__each_family_has_its_shape);
    TEST_RUN(test_gen__refuses_bad_specs);
    return test_done();
}
