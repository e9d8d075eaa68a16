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
    CHECK_INT(s.configs[0].w, ==, 100);
    CHECK_INT(s.configs[0].h, ==, 50);
    CHECK_INT(s.configs[0].bz, ==, 4);
    CHECK_INT(s.configs[3].h, ==, 64);
    CHECK_INT(s.configs[3].by, ==, 1);
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

int main(void)
{
    TEST_RUN(test_space__default_is_lscats_7_sizes_by_20_blocks);
    TEST_RUN(test_space__accepts_rectangles_3d_blocks_and_drops_duplicates);
    TEST_RUN(test_space__rejects_bad_lists_with_a_message);
    return test_done();
}
