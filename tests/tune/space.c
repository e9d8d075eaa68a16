/* Tests of the sweep space parser (tune/space.c). */
#include "tests/support/test.h"
#include "tune/space.h"

#include "common/error.h"

static void test_space__default_is_lscats_7_sizes_by_20_blocks(void)
{
    struct tune_space s;
    CHECK_OK(tune_space_parse(&s, NULL, NULL));
    CHECK_INT(s.n, ==, 140);
    struct tune_config first = { 240, 240, 8, 8, 1 }, last = { 2024, 2024, 1024, 1, 1 };
    CHECK_INT(tune_space_find(&s, &first), ==, 0);
    CHECK_INT(tune_space_find(&s, &last), ==, 139);
    struct tune_config b = { 784, 784, 24, 24, 1 }, c = { 1016, 1016, 640, 1, 1 };
    CHECK(tune_space_find(&s, &b) >= 0);
    CHECK(tune_space_find(&s, &c) >= 0);
    tune_space_release(&s);
}

static void test_space__accepts_rectangles_3d_blocks_and_drops_duplicates(void)
{
    struct tune_space s;
    CHECK_OK(tune_space_parse(&s, "100x50, 64,64", "4x4x4,32,32"));
    CHECK_INT(s.n, ==, 4);
    CHECK_INT(s.configs[2].w, ==, 100);
    CHECK_INT(s.configs[2].h, ==, 50);
    CHECK_INT(s.configs[2].bz, ==, 4);
    CHECK_INT(s.configs[1].h, ==, 64);
    CHECK_INT(s.configs[1].by, ==, 1);
    tune_space_release(&s);
}

/* A shape that fails stickily is skipped at the larger sizes that follow it, so sizes run
 * smallest first whatever their order on the command line; block shapes keep theirs. */
static void test_space__sizes_run_smallest_first(void)
{
    struct tune_space s;
    CHECK_OK(tune_space_parse(&s, "2024,240,496x100,100x496,1016", "256,16x16"));
    CHECK_INT(s.n, ==, 10);
    const int want[5][2] = { { 100, 496 }, { 496, 100 }, { 240, 240 }, { 1016, 1016 },
                             { 2024, 2024 } };
    for (int i = 0; i < 5; i++) {
        CHECK_INT(s.configs[2 * i].w, ==, want[i][0]);
        CHECK_INT(s.configs[2 * i].h, ==, want[i][1]);
        CHECK_INT(s.configs[2 * i].bx, ==, 256);
        CHECK_INT(s.configs[2 * i + 1].by, ==, 16);
    }
    tune_space_release(&s);
}

static void test_space__rejects_bad_lists_with_a_message(void)
{
    struct tune_space s;
    CHECK_INT(tune_space_parse(&s, "240,abc", NULL), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "'abc'");
    CHECK_INT(tune_space_parse(&s, NULL, "64x32"), ==, LSCAT_EINVALID); /* 2048 threads */
    CHECK_CONTAINS(lscat_error_last(), "1024");
    CHECK_INT(tune_space_parse(&s, "0", NULL), ==, LSCAT_EINVALID);
    CHECK_INT(tune_space_parse(&s, "", NULL), ==, LSCAT_EINVALID);
    CHECK_INT(tune_space_parse(&s, "10x10x10", NULL), ==, LSCAT_EINVALID);
    CHECK_INT(tune_space_parse(&s, NULL, "8;8"), ==, LSCAT_EINVALID);
    CHECK(s.configs == NULL);
}

static void test_space__fit_gives_1d_kernels_1d_shapes_and_2d_kernels_2d_shapes(void)
{
    const char *b1, *b2;
    struct tune_space one, two;
    CHECK_OK(tune_space_named(&b1, &b2, NULL, NULL));
    CHECK_OK(tune_space_parse(&one, NULL, b1));
    CHECK_OK(tune_space_parse(&two, NULL, b2));
    CHECK_INT(one.n, ==, 7 * 20);
    CHECK_INT(two.n, ==, 7 * 20);
    int rows = 0;
    for (int i = 0; i < one.n; i++)
        CHECK_INT(one.configs[i].by, ==, 1); /* every 1D kernel shape is 1D */
    for (int i = 0; i < 20; i++) {
        CHECK_INT(two.configs[i].bx * two.configs[i].by, <=, 1024);
        rows += two.configs[i].by == 1;
    }
    CHECK_INT(rows, ==, 5); /* (X,1) rows, gridded over W x H by the harness */
    tune_space_release(&one);
    tune_space_release(&two);
    CHECK_OK(tune_space_named(&b1, &b2, "lscat", NULL));
    CHECK_STR(b1, TUNE_DEFAULT_BLOCKS);
    CHECK(b2 == NULL);
    CHECK_OK(tune_space_named(&b1, &b2, NULL, "64,16x16"));
    CHECK_STR(b1, "64,16x16");
    CHECK(b2 == NULL);
    CHECK_INT(tune_space_named(&b1, &b2, "lscat", "64"), ==, LSCAT_EINVALID);
    CHECK_INT(tune_space_named(&b1, &b2, "paper", NULL), ==, LSCAT_EINVALID);
}

/* The source's block the probe kept, added at each size after that size's shapes; a block the
 * space has already leaves it alone. */
static void test_space__a_kernels_own_block_joins_each_size(void)
{
    struct tune_space base, own;
    CHECK_OK(tune_space_parse(&base, "64,128", "16x16,64"));
    CHECK_INT(tune_space_with_block(&own, &base, 32, 4, 1), ==, 1);
    CHECK_INT(own.n, ==, 6);
    CHECK(own.configs[2].w == 64 && own.configs[2].bx == 32 && own.configs[2].by == 4);
    CHECK(own.configs[5].w == 128 && own.configs[5].bx == 32 && own.configs[5].bz == 1);
    CHECK(own.configs[3].w == 128 && own.configs[3].bx == 16);
    CHECK_INT(tune_space_with_block(&own, &base, 64, 1, 1), ==, 0); /* out untouched */
    CHECK_INT(own.n, ==, 6);
    tune_space_release(&own);
    tune_space_release(&base);
}

int main(void)
{
    TEST_RUN(test_space__default_is_lscats_7_sizes_by_20_blocks);
    TEST_RUN(test_space__sizes_run_smallest_first);
    TEST_RUN(test_space__accepts_rectangles_3d_blocks_and_drops_duplicates);
    TEST_RUN(test_space__rejects_bad_lists_with_a_message);
    TEST_RUN(test_space__fit_gives_1d_kernels_1d_shapes_and_2d_kernels_2d_shapes);
    TEST_RUN(test_space__a_kernels_own_block_joins_each_size);
    return test_done();
}
