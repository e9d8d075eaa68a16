/* Unit tests of dataset/csv.c and dataset/text.c: RFC 4180 quoting, null versus empty,
 * numbers that read back exactly, gzip output, UTF-8 repair and base64. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "dataset/csv.h"
#include "dataset/text.h"
#include "tests/support/test.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static char *write_sample(const char *name, enum csv_compress compress)
{
    char *path = fs_join(test_tmpdir(), name);
    const char *names[] = { "a", "b,c", "d" };
    struct csv_writer *w;
    CHECK_OK(csv_writer_open(&w, path, names, 3, compress));
    csv_put_text(w, "plain", 5);
    csv_put_text(w, "say \"hi\", twice\r\nok", 19);
    csv_put_null(w);
    CHECK_OK(csv_end_row(w));
    csv_put_text(w, "", 0);
    csv_put_int(w, INT64_MIN);
    csv_put_bool(w, 1);
    CHECK_OK(csv_end_row(w));
    csv_put_double(w, 0.1);
    csv_put_base64(w, "\xff\x00\x01", 3);
    csv_put_double(w, 1e300);
    CHECK_OK(csv_end_row(w));
    char hex[65];
    CHECK_OK(csv_writer_close(w, hex));
    struct buf b = BUF_INIT; /* hashed while writing (compressed too): the file's hash */
    char sum[65];
    CHECK_OK(buf_read_file(&b, path));
    sha256_hex(sum, b.data, b.len);
    CHECK_STR(hex, sum);
    buf_release(&b);
    return path;
}

static const char want[] = "a,\"b,c\",d\r\n"
                           "plain,\"say \"\"hi\"\", twice\r\nok\",\r\n"
                           "\"\",-9223372036854775808,true\r\n"
                           "0.1,/wAB,1e+300\r\n";

static void test_csv__quotes_per_rfc4180_and_tells_null_from_empty(void)
{
    char *path = write_sample("a.csv", 0);
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    CHECK_STR(b.data, want);
    buf_release(&b);
    free(path);
}

static void test_csv__gzip_output_inflates_to_the_same_text(void)
{
    char *path = write_sample("a.csv.gz", CSV_GZIP);
    gzFile g = gzopen(path, "rb"); /* zlib reads ISA-L's gzip */
    CHECK(g != NULL);
    char got[512] = { 0 };
    int n = gzread(g, got, sizeof(got) - 1);
    gzclose(g);
    CHECK_INT(n, ==, (int)strlen(want));
    CHECK_STR(got, want);
    free(path);
}

static void test_csv__gzip_without_isal_goes_through_zlib(void)
{
    setenv("LSCAT_NO_ISAL", "1", 1);
    char *path = write_sample("z.csv.gz", CSV_GZIP);
    unsetenv("LSCAT_NO_ISAL");
    gzFile g = gzopen(path, "rb");
    CHECK(g != NULL);
    char got[512] = { 0 };
    int n = gzread(g, got, sizeof(got) - 1);
    gzclose(g);
    CHECK_INT(n, ==, (int)strlen(want));
    CHECK_STR(got, want);
    free(path);
}

static void test_csv__zstd_output_decompresses_to_the_same_text(void)
{
    char *path = write_sample("a.csv.zst", CSV_ZSTD);
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    char got[512] = { 0 };
    size_t n = ZSTD_decompress(got, sizeof(got) - 1, b.data, b.len);
    CHECK(!ZSTD_isError(n));
    CHECK_INT(n, ==, strlen(want));
    CHECK_STR(got, want);
    buf_release(&b);
    free(path);
}

static void test_csv__large_output_goes_through_the_writer_thread_intact(void)
{
    char *path = fs_join(test_tmpdir(), "big.csv");
    const char *names[] = { "i", "x" };
    struct csv_writer *w;
    CHECK_OK(csv_writer_open(&w, path, names, 2, 0));
    for (int i = 0; i < 300000; i++) {
        csv_put_int(w, i);
        csv_put_double(w, i / 7.0);
        CHECK_OK(csv_end_row(w));
    }
    char hex[65], want[65];
    CHECK_OK(csv_writer_close(w, hex));
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    CHECK(b.len > 3 * (1u << 20)); /* several blocks went through the thread */
    sha256_hex(want, b.data, b.len);
    CHECK_STR(hex, want);
    char *last = strstr(b.data, "\r\n299999,");
    CHECK(last != NULL);
    CHECK(strtod(last + 9, NULL) == 299999 / 7.0);
    buf_release(&b);
    free(path);
}

static void test_text__doubles_read_back_exactly(void)
{
    double special[] = { 0.1, 1.0 / 3, -2.5e-300, DBL_MAX, DBL_MIN, 5e-324, 123456789012.5,
                         9007199254740993.0, -0.0, 1e22, 100 };
    char s[32];
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
        text_double(s, special[i]);
        CHECK(strtod(s, NULL) == special[i]);
        CHECK(signbit(strtod(s, NULL)) == signbit(special[i]));
    }
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        memcpy(&d, &x, 8);
        if (isnan(d) || isinf(d))
            continue;
        text_double(s, d);
        if (strtod(s, NULL) != d)
            test_fail(__FILE__, __LINE__, "%s does not read back as %a", s, d);
    }
    text_double(s, 1000.0);
    CHECK_STR(s, "1000");
    text_double(s, 0.30000000000000004);
    CHECK_STR(s, "0.30000000000000004");
}

static void test_text__utf8_validation_rejects_overlongs_surrogates_and_truncation(void)
{
    CHECK(text_utf8_valid("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80", 14));
    CHECK(!text_utf8_valid("\xc0\xaf", 2));         /* overlong '/' */
    CHECK(!text_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
    CHECK(!text_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
    CHECK(!text_utf8_valid("\xe2\x9c", 2));         /* truncated */
    CHECK(!text_utf8_valid("\xff", 1));
}

static void test_text__utf8_repair_shows_invalid_bytes_as_latin1(void)
{
    struct buf b = BUF_INIT;
    text_utf8_repair(&b, "caf\xe9 \xc3\xa9\xff", 8);
    CHECK_STR(b.data, "caf\xc3\xa9 \xc3\xa9\xc3\xbf");
    CHECK(text_utf8_valid(b.data, b.len));
    buf_release(&b);
}

static void test_text__timestamps_parse_to_utc_microseconds(void)
{
    int64_t us = 0;
    /* date -u -d 2026-11-21T08:00:00Z +%s = 1795248000 */
    CHECK_OK(text_timestamp_us(&us, "2026-11-21T08:00:00Z", 20));
    CHECK_INT(us, ==, 1795248000000000LL);
    CHECK_OK(text_timestamp_us(&us, "2026-11-21 08:00:00.25", 22));
    CHECK_INT(us, ==, 1795248000250000LL);
    CHECK_OK(text_timestamp_us(&us, "2026-11-21T09:30:00+01:30", 25));
    CHECK_INT(us, ==, 1795248000000000LL);
    CHECK_OK(text_timestamp_us(&us, "1969-12-31", 10));
    CHECK_INT(us, ==, -86400000000LL);
    CHECK_OK(text_timestamp_us(&us, "2000-02-29T23:59:59.9999999Z", 28)); /* past 6 digits: cut */
    CHECK_INT(us, ==, 951868799999999LL);
    CHECK(text_timestamp_us(&us, "x", 1) < 0);
    CHECK(text_timestamp_us(&us, "2026-13-01", 10) < 0);
    CHECK(text_timestamp_us(&us, "2026-11-21T25:00:00Z", 20) < 0);
    CHECK(text_timestamp_us(&us, "2026-11-21T08:00:00Zjunk", 24) < 0);
}

static void test_text__comma_words_become_a_json_array(void)
{
    struct buf b = BUF_INIT;
    text_comma_json(&b, "language,cu_file", 16);
    CHECK_STR(b.data, "[\"language\",\"cu_file\"]");
    buf_reset(&b);
    text_comma_json(&b, "", 0);
    CHECK_STR(b.data, "[]");
    buf_release(&b);
}

static void test_text__base64_matches_rfc4648_vectors(void)
{
    const char *in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
    const char *out[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
    for (int i = 0; i < 7; i++) {
        struct buf b = BUF_INIT;
        text_base64(&b, in[i], strlen(in[i]));
        CHECK_STR(b.data, out[i]);
        buf_release(&b);
    }
}

int main(void)
{
    TEST_RUN(test_csv__quotes_per_rfc4180_and_tells_null_from_empty);
    TEST_RUN(test_csv__gzip_output_inflates_to_the_same_text);
    TEST_RUN(test_csv__gzip_without_isal_goes_through_zlib);
    TEST_RUN(test_csv__zstd_output_decompresses_to_the_same_text);
    TEST_RUN(test_csv__large_output_goes_through_the_writer_thread_intact);
    TEST_RUN(test_text__doubles_read_back_exactly);
    TEST_RUN(test_text__utf8_validation_rejects_overlongs_surrogates_and_truncation);
    TEST_RUN(test_text__utf8_repair_shows_invalid_bytes_as_latin1);
    TEST_RUN(test_text__timestamps_parse_to_utc_microseconds);
    TEST_RUN(test_text__comma_words_become_a_json_array);
    TEST_RUN(test_text__base64_matches_rfc4648_vectors);
    return test_done();
}
