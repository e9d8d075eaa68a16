/* Tests for common/utf8.c: the strict UTF-8 sequence check every module shares. */
#include "common/utf8.h"
#include "tests/support/test.h"

static size_t len_of(const char *s, size_t n)
{
    return utf8_seq_len((const unsigned char *)s, n);
}

static void test_utf8__accepts_every_valid_length(void)
{
    CHECK_INT(len_of("a", 1), ==, 1);
    CHECK_INT(len_of("\xc3\xa9", 2), ==, 2);         /* é */
    CHECK_INT(len_of("\xe2\x82\xac", 3), ==, 3);     /* € */
    CHECK_INT(len_of("\xf0\x9f\x98\x80", 4), ==, 4); /* 😀 */
    CHECK_INT(len_of("\xf4\x8f\xbf\xbf", 4), ==, 4); /* U+10FFFF, the last code point */
}

static void test_utf8__rejects_what_rfc_3629_forbids(void)
{
    CHECK_INT(len_of("\x80", 1), ==, 0);             /* stray continuation byte */
    CHECK_INT(len_of("\xc3", 1), ==, 0);             /* truncated */
    CHECK_INT(len_of("\xe2\x82", 2), ==, 0);
    CHECK_INT(len_of("\xc3\x28", 2), ==, 0);         /* bad continuation */
    CHECK_INT(len_of("\xc0\xaf", 2), ==, 0);         /* overlong '/' */
    CHECK_INT(len_of("\xe0\x80\xaf", 3), ==, 0);     /* overlong, 3 bytes */
    CHECK_INT(len_of("\xed\xa0\x80", 3), ==, 0);     /* surrogate U+D800 */
    CHECK_INT(len_of("\xf4\x90\x80\x80", 4), ==, 0); /* above U+10FFFF */
    CHECK_INT(len_of("\xff", 1), ==, 0);
}

int main(void)
{
    TEST_RUN(test_utf8__accepts_every_valid_length);
    TEST_RUN(test_utf8__rejects_what_rfc_3629_forbids);
    return test_done();
}
