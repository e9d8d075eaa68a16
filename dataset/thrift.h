/* A Thrift compact-protocol *writer*, just enough for Parquet's metadata (FileMetaData,
 * PageHeader and what they hold). Encodes into a struct buf; nesting (structs inside structs
 * or lists) is tracked on a small stack so field-id deltas come out right.
 *
 *     struct thrift_w t;
 *     thrift_w_init(&t, &b);
 *     thrift_i32(&t, 1, 2);              // field 1: i32
 *     thrift_list_begin(&t, 2, THRIFT_STRUCT, n);
 *     for (...) { thrift_elem_struct_begin(&t); ...; thrift_struct_end(&t); }
 *     thrift_struct_end(&t);             // the outermost struct's stop byte
 */
#ifndef LSCAT_THRIFT_H
#define LSCAT_THRIFT_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

/* Compact-protocol type codes (as used in field headers and list headers). */
enum {
    THRIFT_BOOL_TRUE = 1,
    THRIFT_BOOL_FALSE = 2,
    THRIFT_BYTE = 3,
    THRIFT_I16 = 4,
    THRIFT_I32 = 5,
    THRIFT_I64 = 6,
    THRIFT_DOUBLE = 7,
    THRIFT_BINARY = 8,
    THRIFT_LIST = 9,
    THRIFT_STRUCT = 12,
};

#define THRIFT_MAX_DEPTH 16

struct thrift_w {
    struct buf *out;                 /* borrowed */
    int16_t last[THRIFT_MAX_DEPTH];  /* last field id written at each nesting level */
    int depth;
};

/* Start writing a top-level struct into `out` (appending). */
void thrift_w_init(struct thrift_w *t, struct buf *out);

/* Fields of the current struct; ids must increase (Parquet's do). */
void thrift_i32(struct thrift_w *t, int16_t id, int32_t v);
void thrift_i64(struct thrift_w *t, int16_t id, int64_t v);
void thrift_bool(struct thrift_w *t, int16_t id, int v);
void thrift_binary(struct thrift_w *t, int16_t id, const void *data, size_t len);
void thrift_string(struct thrift_w *t, int16_t id, const char *s);
/* A struct-valued field: write its fields, then thrift_struct_end(). */
void thrift_struct_begin(struct thrift_w *t, int16_t id);
/* Write the stop byte of the current struct and return to its parent. */
void thrift_struct_end(struct thrift_w *t);
/* A list-valued field of `n` elements of `elem_type`; then write n elements. */
void thrift_list_begin(struct thrift_w *t, int16_t id, int elem_type, size_t n);
/* List elements. */
void thrift_elem_i32(struct thrift_w *t, int32_t v);
void thrift_elem_string(struct thrift_w *t, const char *s);
void thrift_elem_struct_begin(struct thrift_w *t);

/* Low-level: unsigned LEB128 varint and zigzag varint (also used by Parquet's RLE runs). */
void thrift_put_uvarint(struct buf *b, uint64_t v);
void thrift_put_zigzag(struct buf *b, int64_t v);

#endif
