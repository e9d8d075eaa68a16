/* A streaming Apache Parquet writer: required/optional columns of plain values, timestamps,
 * and lists (of values, or of flat structs), rows added one value at a time, row groups flushed when they reach a bounded size (so
 * memory stays bounded however many rows), each column chunk written as one data page (v1)
 * — RLE_DICTIONARY with a PLAIN dictionary page when that is smaller, else PLAIN (DOUBLE:
 * BYTE_STREAM_SPLIT) —
 * compressed with ZSTD, with statistics (min, max, null count) and key-value metadata.
 *
 *     static const struct parquet_column cols[] = {
 *         { "id", PARQUET_INT64, 0 }, { "name", PARQUET_STRING, 1 },
 *     };
 *     struct parquet_options o = PARQUET_OPTIONS_INIT;
 *     struct parquet_writer *w;
 *     if (parquet_writer_open(&w, "t.parquet", cols, 2, &o) < 0) ...
 *     parquet_put_int(w, 0, 42); parquet_put_null(w, 1); parquet_end_row(w);
 *     if (parquet_writer_close(w) < 0) ...   // always frees w
 *
 * A list column ({ "tags", PARQUET_STRING, 1, .list = 1 }) takes, per row, parquet_put_null()
 * or parquet_list_begin(), its elements (parquet_put_bytes() etc., one call per element), and
 * parquet_list_end(). A list of structs (.fields, .nfields) takes, per element,
 * parquet_elem_begin() and one parquet_field_*() per field. Lists are written with the LIST
 * logical type (three-level form: <name>.list.element, elements required).
 *
 * The file is written as "<path>.tmp" and renamed into place by parquet_writer_close(), so a
 * crash never leaves a truncated file under the final name. */
#ifndef LSCAT_PARQUET_H
#define LSCAT_PARQUET_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

enum parquet_type {
    PARQUET_BOOLEAN, /* BOOLEAN */
    PARQUET_INT32,   /* INT32 */
    PARQUET_INT64,   /* INT64 */
    PARQUET_DOUBLE,  /* DOUBLE */
    PARQUET_STRING,  /* BYTE_ARRAY, logical type STRING (UTF-8; the caller guarantees it) */
    PARQUET_BYTES,   /* BYTE_ARRAY without annotation (raw bytes) */
    PARQUET_TIMESTAMP, /* INT64 microseconds since 1970-01-01T00:00:00Z, logical type
                        * TIMESTAMP(isAdjustedToUTC=true, MICROS); set with parquet_put_int */
};

struct parquet_column {
    const char *name;
    enum parquet_type type;  /* of the value, or of a list's elements */
    int nullable; /* 1: OPTIONAL (definition levels), 0: REQUIRED */
    int list;     /* 1: a LIST of `type` values, or of structs when nfields > 0 */
    const struct parquet_column *fields; /* a list of structs: its fields (plain values) */
    int nfields;  /* at most PARQUET_MAX_FIELDS */
};
#define PARQUET_MAX_FIELDS 32

struct parquet_options {
    size_t row_group_bytes;  /* flush a row group when its buffered values reach this */
    int64_t row_group_rows;  /* ... or this many rows */
    int zstd_level;          /* 0 = no compression (UNCOMPRESSED codec) */
    int dictionary;          /* 1: use RLE_DICTIONARY where it is smaller than PLAIN */
    int byte_stream_split;   /* 1: DOUBLE chunks without dictionary use BYTE_STREAM_SPLIT (their
                              * bytes transposed, so ZSTD finds the repeated exponents) */
    const char *const *kv;   /* key-value metadata: "key", "value", ..., NULL; may be NULL */
    const char *created_by;  /* NULL: "lscat <version>" */
};
#define PARQUET_OPTIONS_INIT { .row_group_bytes = 64u << 20, .row_group_rows = 1 << 20, \
    .zstd_level = 3, .dictionary = 1, .byte_stream_split = 1, .kv = NULL, .created_by = NULL }

struct parquet_writer;

/* Create "<path>.tmp" and write the header. `cols` is copied. *out belongs to the caller:
 * finish with parquet_writer_close() or give up with parquet_writer_abort(). */
int parquet_writer_open(struct parquet_writer **out, const char *path,
                        const struct parquet_column *cols, int ncols,
                        const struct parquet_options *opts);

/* Set column `col` of the current row. Every column must be set exactly once per row, with
 * a setter matching its type (put_int serves INT32/INT64/BOOLEAN; put_bytes serves STRING and
 * BYTES). put_null on a REQUIRED column is an error (LSCAT_EINVALID). */
int parquet_put_null(struct parquet_writer *w, int col);
int parquet_put_int(struct parquet_writer *w, int col, int64_t v);
int parquet_put_double(struct parquet_writer *w, int col, double v);
int parquet_put_bytes(struct parquet_writer *w, int col, const void *data, size_t len);
/* Lists: begin a (possibly empty) list in column `col` of the current row; add its elements
 * with the setters above (lists of values) or with parquet_elem_begin() and the field setters
 * (lists of structs: every field of every element set exactly once, null only where the field
 * is nullable); then end it. */
int parquet_list_begin(struct parquet_writer *w, int col);
int parquet_elem_begin(struct parquet_writer *w, int col);
int parquet_field_null(struct parquet_writer *w, int col, int field);
int parquet_field_int(struct parquet_writer *w, int col, int field, int64_t v);
int parquet_field_bytes(struct parquet_writer *w, int col, int field, const void *data,
                        size_t len);
int parquet_list_end(struct parquet_writer *w, int col);
/* Finish the row (flushing a row group when it is full). */
int parquet_end_row(struct parquet_writer *w);

/* Flush the last row group, write the footer, fsync, rename to the final name, free w.
 * On failure the temporary file is removed. */
int parquet_writer_close(struct parquet_writer *w);
/* Remove the temporary file and free w. NULL is a no-op. */
void parquet_writer_abort(struct parquet_writer *w);

/* Rows written so far, and row groups flushed so far. */
int64_t parquet_writer_rows(const struct parquet_writer *w);
int parquet_writer_row_groups(const struct parquet_writer *w);

/* Parquet's RLE/bit-packed hybrid encoding of `n` values of `bit_width` bits (1..32), as used
 * for definition levels and dictionary indices; values are read from `v` with stride
 * `elem_bytes` (1 or 4). Appends to `out`. Exposed for tests. */

void parquet_rle_hybrid(struct buf *out, const void *v, size_t elem_bytes, size_t n,
                        int bit_width);

#endif
