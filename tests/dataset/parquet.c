/* Unit tests of dataset/thrift.c, parquet_encode.c and parquet.c: byte-exact Thrift compact
 * encoding, the RLE/bit-packed hybrid (decoded back here), file framing, row-group bounds,
 * dictionary use, and the writer's refusals. Independent readers check whole files in
 * tests/e2e/dataset_export.sh. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "dataset/parquet.h"
#include "dataset/thrift.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void test_thrift__encodes_short_and_long_field_deltas(void)
{
    struct buf b = BUF_INIT;
    struct thrift_w t;
    thrift_w_init(&t, &b);
    thrift_i32(&t, 1, 3);      /* 0x15 0x06 */
    thrift_i64(&t, 20, -1);    /* delta 19 > 15: 0x06, zigzag(20)=40=0x28, zigzag(-1)=1 */
    thrift_struct_begin(&t, 21); /* 0x1C */
    thrift_bool(&t, 1, 1);     /* 0x11 */
    thrift_struct_end(&t);     /* 0x00 */
    thrift_string(&t, 22, "ab"); /* 0x18 0x02 'a' 'b' */
    thrift_list_begin(&t, 23, THRIFT_I32, 2); /* 0x19 0x25 */
    thrift_elem_i32(&t, 1);    /* 0x02 */
    thrift_elem_i32(&t, -2);   /* 0x03 */
    thrift_struct_end(&t);     /* 0x00 */
    const unsigned char want[] = { 0x15, 0x06, 0x06, 0x28, 0x01, 0x1C, 0x11, 0x00, 0x18, 0x02,
                                   'a', 'b', 0x19, 0x25, 0x02, 0x03, 0x00 };
    CHECK_INT(b.len, ==, sizeof(want));
    CHECK(memcmp(b.data, want, sizeof(want)) == 0);
    buf_release(&b);
}

static void test_thrift__long_lists_carry_a_varint_size(void)
{
    struct buf b = BUF_INIT;
    struct thrift_w t;
    thrift_w_init(&t, &b);
    thrift_list_begin(&t, 1, THRIFT_STRUCT, 300);
    const unsigned char want[] = { 0x19, 0xFC, 0xAC, 0x02 };
    CHECK_INT(b.len, ==, 4);
    CHECK(memcmp(b.data, want, 4) == 0);
    buf_release(&b);
}

static uint64_t get_uvarint(const unsigned char **p)
{
    uint64_t v = 0;
    int shift = 0;
    while (**p & 0x80) {
        v |= (uint64_t)(**p & 0x7F) << shift;
        shift += 7;
        (*p)++;
    }
    v |= (uint64_t)**p << shift;
    (*p)++;
    return v;
}

/* The decoder of the Parquet spec, written here independently of the encoder. */
static size_t rle_decode(uint32_t *out, size_t n, const unsigned char *p, const unsigned char *end,
                         int bw)
{
    size_t got = 0;
    while (p < end && got < n) {
        uint64_t h = get_uvarint(&p);
        if (h & 1) {
            size_t count = (size_t)(h >> 1) * 8;
            uint64_t acc = 0;
            int bits = 0;
            for (size_t i = 0; i < count; i++) {
                while (bits < bw) {
                    acc |= (uint64_t)*p++ << bits;
                    bits += 8;
                }
                if (got < n)
                    out[got++] = (uint32_t)(acc & ((1ULL << bw) - 1));
                acc >>= bw;
                bits -= bw;
            }
        } else {
            uint32_t v = 0;
            for (int i = 0; i < (bw + 7) / 8; i++)
                v |= (uint32_t)*p++ << (8 * i);
            for (size_t i = 0; i < (h >> 1) && got < n; i++)
                out[got++] = v;
        }
    }
    return got;
}

static void roundtrip(const uint32_t *v, size_t n, int bw)
{
    struct buf b = BUF_INIT;
    parquet_rle_hybrid(&b, v, 4, n, bw);
    uint32_t *back = xcalloc(n + 1, sizeof(*back));
    size_t got = rle_decode(back, n, (const unsigned char *)b.data,
                            (const unsigned char *)b.data + b.len, bw);
    CHECK_INT(got, ==, n);
    for (size_t i = 0; i < n; i++)
        if (back[i] != v[i])
            test_fail(__FILE__, __LINE__, "value %zu: %u != %u (bw %d)", i, back[i], v[i], bw);
    free(back);
    buf_release(&b);
}

static void test_parquet__rle_hybrid_round_trips_runs_and_noise(void)
{
    enum { N = 5000 };
    uint32_t *v = xmalloc(N * sizeof(*v));
    unsigned seed = 7;
    for (int bw = 1; bw <= 20; bw += 3) {
        for (size_t i = 0; i < N; i++) {
            seed = seed * 1103515245u + 12345u;
            /* stretches of runs and stretches of noise */
            v[i] = ((i / 300) % 2) ? (uint32_t)(i / 37) : (seed >> 8);
            v[i] &= (uint32_t)((1ULL << bw) - 1);
        }
        roundtrip(v, N, bw);
        roundtrip(v, 1, bw);
        roundtrip(v, 13, bw);
    }
    free(v);
}

static void test_parquet__rle_hybrid_uses_one_run_for_constant_levels(void)
{
    uint8_t ones[1000];
    memset(ones, 1, sizeof(ones));
    struct buf b = BUF_INIT;
    parquet_rle_hybrid(&b, ones, 1, sizeof(ones), 1);
    /* header varint(1000 << 1) = 2 bytes, value 1 byte */
    CHECK_INT(b.len, ==, 3);
    buf_release(&b);
}

static const struct parquet_column cols2[] = {
    { "id", PARQUET_INT64, 0, 0, NULL, 0 },
    { "name", PARQUET_STRING, 1, 0, NULL, 0 },
};

static char *path_in_tmp(const char *name)
{
    return fs_join(test_tmpdir(), name);
}

static void test_parquet__file_is_framed_by_par1_and_footer_length(void)
{
    char *path = path_in_tmp("a.parquet");
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, cols2, 2, NULL));
    CHECK_OK(parquet_put_int(w, 0, 1));
    CHECK_OK(parquet_put_bytes(w, 1, "x", 1));
    CHECK_OK(parquet_end_row(w));
    CHECK_OK(parquet_writer_close(w));
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    CHECK(b.len > 12);
    CHECK(memcmp(b.data, "PAR1", 4) == 0);
    CHECK(memcmp(b.data + b.len - 4, "PAR1", 4) == 0);
    uint32_t footer;
    memcpy(&footer, b.data + b.len - 8, 4);
    CHECK(footer > 0 && footer < b.len - 12);
    char *tmp = xasprintf("%s.tmp", path);
    CHECK(!fs_exists(tmp));
    free(tmp);
    buf_release(&b);
    free(path);
}

static void test_parquet__cuts_row_groups_at_the_row_bound(void)
{
    char *path = path_in_tmp("rg.parquet");
    struct parquet_options o = PARQUET_OPTIONS_INIT;
    o.row_group_rows = 10;
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, cols2, 2, &o));
    for (int i = 0; i < 95; i++) {
        CHECK_OK(parquet_put_int(w, 0, i));
        CHECK_OK(parquet_put_null(w, 1));
        CHECK_OK(parquet_end_row(w));
    }
    CHECK_INT(parquet_writer_row_groups(w), ==, 9);
    CHECK_INT(parquet_writer_rows(w), ==, 95);
    CHECK_OK(parquet_writer_close(w));
    free(path);
}

static void test_parquet__cuts_row_groups_at_the_byte_bound(void)
{
    char *path = path_in_tmp("rgb.parquet");
    struct parquet_options o = PARQUET_OPTIONS_INIT;
    o.row_group_bytes = 100000;
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, cols2, 2, &o));
    char big[10000];
    memset(big, 'q', sizeof(big));
    for (int i = 0; i < 100; i++) {
        CHECK_OK(parquet_put_int(w, 0, i));
        CHECK_OK(parquet_put_bytes(w, 1, big, sizeof(big)));
        CHECK_OK(parquet_end_row(w));
    }
    /* ~10 KB per row: a row group every ~10 rows keeps memory near 100 KB */
    CHECK_INT(parquet_writer_row_groups(w), >=, 9);
    CHECK_OK(parquet_writer_close(w));
    free(path);
}

static long write_categories(const char *name, int dictionary)
{
    char *path = path_in_tmp(name);
    struct parquet_options o = PARQUET_OPTIONS_INIT;
    o.dictionary = dictionary;
    o.zstd_level = 0;
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, cols2, 2, &o));
    const char *cat[] = { "NVIDIA H100 80GB HBM3", "Tesla T4", "NVIDIA A100-SXM4-40GB" };
    for (int i = 0; i < 20000; i++) {
        CHECK_OK(parquet_put_int(w, 0, i % 5));
        CHECK_OK(parquet_put_bytes(w, 1, cat[i % 3], strlen(cat[i % 3])));
        CHECK_OK(parquet_end_row(w));
    }
    CHECK_OK(parquet_writer_close(w));
    struct stat st;
    CHECK(stat(path, &st) == 0);
    free(path);
    return (long)st.st_size;
}

static void test_parquet__dictionary_shrinks_low_cardinality_columns(void)
{
    long dict = write_categories("d.parquet", 1), plain = write_categories("p.parquet", 0);
    CHECK_INT(dict * 10, <, plain);
}

static void test_parquet__refuses_null_in_a_required_column(void)
{
    char *path = path_in_tmp("n.parquet");
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, cols2, 2, NULL));
    CHECK_INT(parquet_put_null(w, 0), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "'id' is required");
    parquet_writer_abort(w);
    free(path);
}

static void test_parquet__refuses_type_mismatch_double_set_and_missing_values(void)
{
    char *path = path_in_tmp("t.parquet");
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, cols2, 2, NULL));
    CHECK_INT(parquet_put_double(w, 0, 1.5), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "does not take doubles");
    CHECK_INT(parquet_put_int(w, 0, 1), ==, LSCAT_EINVALID); /* set (then refused) above */
    CHECK_CONTAINS(lscat_error_last(), "set twice");
    CHECK(parquet_end_row(w) < 0);
    CHECK_CONTAINS(lscat_error_last(), "'name' not set");
    parquet_writer_abort(w);
    free(path);
}

static void test_parquet__refuses_int32_overflow(void)
{
    static const struct parquet_column c[] = { { "w", PARQUET_INT32, 0, 0, NULL, 0 } };
    char *path = path_in_tmp("o.parquet");
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, c, 1, NULL));
    CHECK_INT(parquet_put_int(w, 0, 1LL << 40), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "does not fit INT32");
    parquet_writer_abort(w);
    free(path);
}

static void test_parquet__abort_leaves_no_file(void)
{
    char *path = path_in_tmp("gone.parquet");
    char *tmp = xasprintf("%s.tmp", path);
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, cols2, 2, NULL));
    CHECK(fs_exists(tmp));
    parquet_writer_abort(w);
    CHECK(!fs_exists(tmp));
    CHECK(!fs_exists(path));
    free(tmp);
    free(path);
}

static void test_parquet__open_fails_with_a_message_for_a_missing_folder(void)
{
    struct parquet_writer *w = NULL;
    CHECK(parquet_writer_open(&w, "/nonexistent-dir/x.parquet", cols2, 2, NULL) < 0);
    CHECK(w == NULL);
    CHECK_CONTAINS(lscat_error_last(), "cannot create '/nonexistent-dir/x.parquet.tmp'");
}

static const struct parquet_column param_fields[] = {
    { "name", PARQUET_STRING, 0, 0, NULL, 0 },
    { "bits", PARQUET_INT32, 1, 0, NULL, 0 },
};
static const struct parquet_column list_cols[] = {
    { "tags", PARQUET_STRING, 1, 1, NULL, 0 },
    { "params", PARQUET_STRING, 0, 1, param_fields, 2 },
    { "at", PARQUET_TIMESTAMP, 0, 0, NULL, 0 },
};

static void test_parquet__writes_lists_of_values_and_of_structs(void)
{
    char *path = path_in_tmp("l.parquet");
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, list_cols, 3, NULL));
    for (int r = 0; r < 3; r++) {
        if (r == 1) {
            CHECK_OK(parquet_put_null(w, 0)); /* a null list */
        } else {
            CHECK_OK(parquet_list_begin(w, 0));
            for (int i = 0; i < r; i++)
                CHECK_OK(parquet_put_bytes(w, 0, "t", 1));
            CHECK_OK(parquet_list_end(w, 0));
        }
        CHECK_OK(parquet_list_begin(w, 1));
        CHECK_OK(parquet_elem_begin(w, 1));
        CHECK_OK(parquet_field_bytes(w, 1, 0, "n", 1));
        CHECK_OK(parquet_field_null(w, 1, 1));
        CHECK_OK(parquet_list_end(w, 1));
        CHECK_OK(parquet_put_int(w, 2, 1795248000000000LL));
        CHECK_OK(parquet_end_row(w));
    }
    CHECK_INT(parquet_writer_rows(w), ==, 3);
    CHECK_OK(parquet_writer_close(w));
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    /* the schema names the leaves by their three-level paths */
    CHECK(memmem(b.data, b.len, "element", 7) != NULL);
    CHECK(memmem(b.data, b.len, "list", 4) != NULL);
    buf_release(&b);
    free(path);
}

static void test_parquet__refuses_list_misuse(void)
{
    char *path = path_in_tmp("lm.parquet");
    struct parquet_writer *w;
    CHECK_OK(parquet_writer_open(&w, path, list_cols, 3, NULL));
    CHECK_INT(parquet_put_bytes(w, 0, "t", 1), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "begin it with parquet_list_begin");
    CHECK_INT(parquet_put_null(w, 1), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "'params' is required");
    parquet_writer_abort(w);
    CHECK_OK(parquet_writer_open(&w, path, list_cols, 3, NULL));
    CHECK_OK(parquet_list_begin(w, 1));
    CHECK_INT(parquet_field_bytes(w, 1, 0, "n", 1), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "before parquet_elem_begin");
    CHECK_OK(parquet_elem_begin(w, 1));
    CHECK_OK(parquet_field_bytes(w, 1, 0, "n", 1));
    CHECK_INT(parquet_field_bytes(w, 1, 0, "n", 1), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "twice in one element");
    CHECK_INT(parquet_list_end(w, 1), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "field 'params.bits' not set");
    CHECK_INT(parquet_field_null(w, 1, 0), ==, LSCAT_EINVALID); /* name is required */
    CHECK_OK(parquet_put_null(w, 0));
    CHECK_OK(parquet_put_int(w, 2, 0));
    CHECK(parquet_end_row(w) < 0);
    CHECK_CONTAINS(lscat_error_last(), "'params' list not ended");
    parquet_writer_abort(w);
    static const struct parquet_column bad[] = { { "x", PARQUET_INT32, 0, 0, param_fields, 2 } };
    CHECK_INT(parquet_writer_open(&w, path, bad, 1, NULL), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "has fields but is not a list");
    free(path);
}

int main(void)
{
    TEST_RUN(test_thrift__encodes_short_and_long_field_deltas);
    TEST_RUN(test_thrift__long_lists_carry_a_varint_size);
    TEST_RUN(test_parquet__rle_hybrid_round_trips_runs_and_noise);
    TEST_RUN(test_parquet__rle_hybrid_uses_one_run_for_constant_levels);
    TEST_RUN(test_parquet__file_is_framed_by_par1_and_footer_length);
    TEST_RUN(test_parquet__cuts_row_groups_at_the_row_bound);
    TEST_RUN(test_parquet__cuts_row_groups_at_the_byte_bound);
    TEST_RUN(test_parquet__dictionary_shrinks_low_cardinality_columns);
    TEST_RUN(test_parquet__refuses_null_in_a_required_column);
    TEST_RUN(test_parquet__refuses_type_mismatch_double_set_and_missing_values);
    TEST_RUN(test_parquet__refuses_int32_overflow);
    TEST_RUN(test_parquet__abort_leaves_no_file);
    TEST_RUN(test_parquet__writes_lists_of_values_and_of_structs);
    TEST_RUN(test_parquet__refuses_list_misuse);
    TEST_RUN(test_parquet__open_fails_with_a_message_for_a_missing_folder);
    return test_done();
}
