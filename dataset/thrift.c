/* Thrift compact protocol, write side only: Parquet's file and page metadata are Thrift
 * structs, and no C Parquet library exists in Debian, so lscat encodes them itself. Only the
 * types Parquet uses are supported (i32, i64, bool, binary, struct, list). */
#include "dataset/thrift.h"

#include <stdlib.h>
#include <string.h>

void thrift_put_uvarint(struct buf *b, uint64_t v)
{
    unsigned char tmp[10];
    int n = 0;
    while (v >= 0x80) {
        tmp[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (unsigned char)v;
    buf_add(b, tmp, (size_t)n);
}

void thrift_put_zigzag(struct buf *b, int64_t v)
{
    thrift_put_uvarint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void thrift_w_init(struct thrift_w *t, struct buf *out)
{
    t->out = out;
    t->depth = 0;
    t->last[0] = 0;
}

static void field_header(struct thrift_w *t, int16_t id, int type)
{
    int delta = id - t->last[t->depth];
    if (delta > 0 && delta <= 15) {
        buf_addch(t->out, (delta << 4) | type);
    } else {
        buf_addch(t->out, type);
        thrift_put_zigzag(t->out, id);
    }
    t->last[t->depth] = id;
}

static void push(struct thrift_w *t)
{
    if (t->depth + 1 >= THRIFT_MAX_DEPTH)
        abort(); /* a programming error: Parquet's metadata nests 4 deep */
    t->last[++t->depth] = 0;
}

void thrift_i32(struct thrift_w *t, int16_t id, int32_t v)
{
    field_header(t, id, THRIFT_I32);
    thrift_put_zigzag(t->out, v);
}

void thrift_i64(struct thrift_w *t, int16_t id, int64_t v)
{
    field_header(t, id, THRIFT_I64);
    thrift_put_zigzag(t->out, v);
}

void thrift_bool(struct thrift_w *t, int16_t id, int v)
{
    field_header(t, id, v ? THRIFT_BOOL_TRUE : THRIFT_BOOL_FALSE);
}

void thrift_binary(struct thrift_w *t, int16_t id, const void *data, size_t len)
{
    field_header(t, id, THRIFT_BINARY);
    thrift_put_uvarint(t->out, len);
    buf_add(t->out, data, len);
}

void thrift_string(struct thrift_w *t, int16_t id, const char *s)
{
    thrift_binary(t, id, s, strlen(s));
}

void thrift_struct_begin(struct thrift_w *t, int16_t id)
{
    field_header(t, id, THRIFT_STRUCT);
    push(t);
}

void thrift_struct_end(struct thrift_w *t)
{
    buf_addch(t->out, 0);
    if (t->depth > 0)
        t->depth--;
}

void thrift_list_begin(struct thrift_w *t, int16_t id, int elem_type, size_t n)
{
    field_header(t, id, THRIFT_LIST);
    if (n < 15) {
        buf_addch(t->out, (int)(n << 4) | elem_type);
    } else {
        buf_addch(t->out, 0xF0 | elem_type);
        thrift_put_uvarint(t->out, n);
    }
}

void thrift_elem_i32(struct thrift_w *t, int32_t v)
{
    thrift_put_zigzag(t->out, v);
}

void thrift_elem_string(struct thrift_w *t, const char *s)
{
    size_t len = strlen(s);
    thrift_put_uvarint(t->out, len);
    buf_add(t->out, s, len);
}

void thrift_elem_struct_begin(struct thrift_w *t)
{
    push(t);
}
