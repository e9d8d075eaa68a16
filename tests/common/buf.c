/* Tests for common/buf.c: growth, formatting, detaching, size caps, JSON escaping, files. */
#include "common/buf.h"
#include "common/error.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>

static void test_buf__starts_empty_and_nul_terminated(void)
{
    struct buf b = BUF_INIT;
    CHECK_INT(b.len, ==, 0);
    CHECK_STR(b.data, "");
    buf_release(&b);
    CHECK_STR(b.data, "");
}

static void test_buf__grows_across_many_appends(void)
{
    struct buf b = BUF_INIT;
    for (int i = 0; i < 10000; i++)
        CHECK_OK(buf_addf(&b, "%d,", i % 10));
    CHECK_INT(b.len, ==, 20000);
    CHECK(b.data[b.len] == '\0');
    CHECK(b.data[19998] == '9' && b.data[19999] == ',');
    buf_release(&b);
}

static void test_buf__detach_hands_ownership_and_resets(void)
{
    struct buf b = BUF_INIT;
    buf_adds(&b, "hello");
    size_t len = 0;
    char *s = buf_detach(&b, &len);
    CHECK_STR(s, "hello");
    CHECK_INT(len, ==, 5);
    CHECK_INT(b.len, ==, 0);
    CHECK_STR(b.data, "");
    free(s);
    char *e = buf_detach(&b, NULL); /* an empty buf detaches a fresh "" */
    CHECK_STR(e, "");
    free(e);
}

static void test_buf__cap_refuses_growth_past_the_limit(void)
{
    struct buf b = BUF_INIT;
    b.cap_bytes = 10;
    CHECK_OK(buf_add(&b, "0123456789", 10));
    CHECK_INT(buf_addch(&b, 'x'), ==, LSCAT_ERR);
    CHECK_CONTAINS(lscat_error_last(), "limit of 10 bytes");
    CHECK_INT(b.len, ==, 10);
    CHECK_STR(b.data, "0123456789");
    buf_release(&b);
}

static void test_buf__json_escapes_quotes_controls_and_bad_utf8(void)
{
    struct buf b = BUF_INIT;
    const char in[] = "a\"b\\c\n\t\x01 \xc3\xa9 \xff end";
    CHECK_OK(buf_add_json_str(&b, in, sizeof(in) - 1));
    CHECK_STR(b.data, "\"a\\\"b\\\\c\\n\\t\\u0001 \xc3\xa9 \\u00ff end\"");
    buf_reset(&b);
    /* A truncated multi-byte sequence and an overlong encoding are escaped byte by byte. */
    CHECK_OK(buf_add_json_str(&b, "\xe2\x82", 2));
    CHECK_STR(b.data, "\"\\u00e2\\u0082\"");
    buf_reset(&b);
    CHECK_OK(buf_add_json_str(&b, "\xc0\xaf", 2));
    CHECK_STR(b.data, "\"\\u00c0\\u00af\"");
    buf_release(&b);
}

static void test_buf__rtrim_removes_trailing_whitespace_only(void)
{
    struct buf b = BUF_INIT;
    buf_adds(&b, "  x y \n\t\r ");
    buf_rtrim(&b);
    CHECK_STR(b.data, "  x y");
    buf_release(&b);
}

static void test_buf__read_file_reads_whole_file_and_respects_cap(void)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/f.txt", test_tmpdir());
    struct buf content = BUF_INIT;
    for (int i = 0; i < 50000; i++)
        buf_adds(&content, "abcd");
    test_write_file(path, content.data, content.len);
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    CHECK_INT(b.len, ==, 200000);
    CHECK(memcmp(b.data, content.data, b.len) == 0);
    buf_release(&b);
    b.cap_bytes = 1000;
    CHECK_INT(buf_read_file(&b, path), <, 0);
    CHECK_CONTAINS(lscat_error_last(), "larger than the 1000-byte limit");
    buf_release(&b);
    b.cap_bytes = 200000; /* exactly the size: allowed */
    CHECK_OK(buf_read_file(&b, path));
    CHECK_INT(b.len, ==, 200000);
    buf_release(&b);
    CHECK_INT(buf_read_file(&b, "/nonexistent/x"), ==, LSCAT_ENOTFOUND);
    CHECK_CONTAINS(lscat_error_last(), "/nonexistent/x");
    buf_release(&content);
}

/* A real file shipped in tests/data (test_data finds it from any test program). */
static void test_buf__read_file_reads_a_shipped_real_matrix_whole(void)
{
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, test_data("matrices/can_24.mtx")));
    CHECK_INT(b.len, ==, 1031);
    CHECK(strncmp(b.data, "%%MatrixMarket matrix coordinate pattern symmetric\n", 51) == 0);
    CHECK_CONTAINS(b.data, "\n24 24 92\n");
    buf_release(&b);
}

int main(void)
{
    TEST_RUN(test_buf__starts_empty_and_nul_terminated);
    TEST_RUN(test_buf__grows_across_many_appends);
    TEST_RUN(test_buf__detach_hands_ownership_and_resets);
    TEST_RUN(test_buf__cap_refuses_growth_past_the_limit);
    TEST_RUN(test_buf__json_escapes_quotes_controls_and_bad_utf8);
    TEST_RUN(test_buf__rtrim_removes_trailing_whitespace_only);
    TEST_RUN(test_buf__read_file_reads_whole_file_and_respects_cap);
    TEST_RUN(test_buf__read_file_reads_a_shipped_real_matrix_whole);
    return test_done();
}
