/* The Parquet file writer: buffers one row group per column (PLAIN values, definition levels,
 * a dictionary while it pays), then writes each column chunk as an optional dictionary page
 * plus one data page v1, ZSTD-compressed, and finally the Thrift footer. Memory is bounded by
 * the row-group limits in parquet_options. Layout per the Apache Parquet format spec. */
#include "dataset/parquet.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "dataset/parquet_encode.h"
#include "dataset/thrift.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the Parquet writer stores values with memcpy: little-endian hosts only"
#endif

/* Parquet's enum values (parquet.thrift). */
enum { T_BOOLEAN = 0, T_INT32 = 1, T_INT64 = 2, T_DOUBLE = 5, T_BYTE_ARRAY = 6 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_RLE_DICTIONARY = 8, ENC_BYTE_STREAM_SPLIT = 9 };
enum { CODEC_UNCOMPRESSED = 0, CODEC_ZSTD = 6 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1 };
enum { CONVERTED_UTF8 = 0 };

/* Byte-array min/max longer than this are left out of the statistics. */
#define STATS_MAX_BYTES 4096

struct pcol {
    struct parquet_column def;
    struct buf plain;    /* PLAIN bytes of the non-null values (BOOLEAN: one byte each) */
    uint8_t *defs;       /* definition level per row (nullable columns) */
    size_t ndefs, defs_cap;
    int64_t count;       /* values + nulls in this row group */
    int64_t nulls;
    int has_minmax;
    int64_t imin, imax;
    double dmin, dmax;
    struct buf smin, smax;
    struct parquet_dict dict;
};

struct parquet_writer {
    FILE *f;
    char *path, *tmp;
    uint64_t off;
    struct pcol *c;
    int ncols;
    struct parquet_options o;
    char **kv;
    int nkv;
    char *created_by;
    int64_t rows, rg_rows;
    size_t buffered;
    int row_groups;
    struct buf rg_meta;  /* serialized RowGroup structs, concatenated */
    ZSTD_CCtx *z;
    struct buf page, comp, hdr;
};

static int physical(enum parquet_type t)
{
    switch (t) {
    case PARQUET_BOOLEAN: return T_BOOLEAN;
    case PARQUET_INT32: return T_INT32;
    case PARQUET_INT64: return T_INT64;
    case PARQUET_DOUBLE: return T_DOUBLE;
    default: return T_BYTE_ARRAY;
    }
}

static int fixed_bytes(enum parquet_type t)
{
    return t == PARQUET_INT32 ? 4 : t == PARQUET_BOOLEAN ? 1 : (t == PARQUET_INT64 || t == PARQUET_DOUBLE) ? 8 : 0;
}

static int write_bytes(struct parquet_writer *w, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, w->f) != n)
        return lscat_error_set("cannot write '%s': %s (disk full?)", w->tmp, strerror(errno));
    w->off += n;
    return 0;
}

int parquet_writer_open(struct parquet_writer **out, const char *path,
                        const struct parquet_column *cols, int ncols,
                        const struct parquet_options *opts)
{
    *out = NULL;
    if (ncols <= 0)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': no columns", path);
    struct parquet_writer *w = xcalloc(1, sizeof(*w));
    struct parquet_options def = PARQUET_OPTIONS_INIT;
    w->o = opts ? *opts : def;
    if (w->o.row_group_rows <= 0)
        w->o.row_group_rows = def.row_group_rows;
    if (w->o.row_group_bytes == 0)
        w->o.row_group_bytes = def.row_group_bytes;
    w->path = xstrdup(path);
    w->tmp = xasprintf("%s.tmp", path);
    w->created_by = xstrdup(w->o.created_by ? w->o.created_by : "lscat");
    for (const char *const *kv = w->o.kv; kv && kv[0] && kv[1]; kv += 2) {
        w->kv = xrealloc(w->kv, (size_t)(w->nkv + 2) * sizeof(char *));
        w->kv[w->nkv++] = xstrdup(kv[0]);
        w->kv[w->nkv++] = xstrdup(kv[1]);
    }
    w->o.kv = NULL;
    w->o.created_by = NULL;
    w->ncols = ncols;
    w->c = xcalloc((size_t)ncols, sizeof(*w->c));
    for (int i = 0; i < ncols; i++) {
        w->c[i].def = cols[i];
        w->c[i].def.name = xstrdup(cols[i].name);
        buf_init(&w->c[i].plain, 0);
        buf_init(&w->c[i].smin, 0);
        buf_init(&w->c[i].smax, 0);
        parquet_dict_init(&w->c[i].dict, cols[i].type == PARQUET_BOOLEAN ? 0 : fixed_bytes(cols[i].type));
        w->c[i].dict.on = w->o.dictionary && cols[i].type != PARQUET_BOOLEAN;
    }
    buf_init(&w->rg_meta, 0);
    buf_init(&w->page, 0);
    buf_init(&w->comp, 0);
    buf_init(&w->hdr, 0);
    if (w->o.zstd_level)
        w->z = ZSTD_createCCtx();
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        int rc = lscat_error_set("cannot create '%s': %s", w->tmp, strerror(errno));
        parquet_writer_abort(w);
        return rc;
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    if (write_bytes(w, "PAR1", 4) < 0) {
        parquet_writer_abort(w);
        return LSCAT_ERR;
    }
    *out = w;
    return 0;
}

static void free_writer(struct parquet_writer *w)
{
    for (int i = 0; i < w->ncols; i++) {
        free((char *)w->c[i].def.name);
        buf_release(&w->c[i].plain);
        buf_release(&w->c[i].smin);
        buf_release(&w->c[i].smax);
        free(w->c[i].defs);
        parquet_dict_release(&w->c[i].dict);
    }
    for (int i = 0; i < w->nkv; i++)
        free(w->kv[i]);
    free(w->kv);
    free(w->c);
    free(w->path);
    free(w->tmp);
    free(w->created_by);
    buf_release(&w->rg_meta);
    buf_release(&w->page);
    buf_release(&w->comp);
    buf_release(&w->hdr);
    ZSTD_freeCCtx(w->z);
    free(w);
}

void parquet_writer_abort(struct parquet_writer *w)
{
    if (!w)
        return;
    if (w->f) {
        fclose(w->f);
        unlink(w->tmp);
    }
    free_writer(w);
}

int64_t parquet_writer_rows(const struct parquet_writer *w)
{
    return w->rows;
}

int parquet_writer_row_groups(const struct parquet_writer *w)
{
    return w->row_groups;
}

/* ---------------------------------------------------------------- adding values */

static int begin_value(struct parquet_writer *w, int col, struct pcol **out, int is_null)
{
    if (col < 0 || col >= w->ncols)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': no column %d", w->path, col);
    struct pcol *c = &w->c[col];
    if (c->count != w->rg_rows)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' set twice in row %lld",
                                w->path, c->def.name, (long long)w->rows);
    if (is_null && !c->def.nullable)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' is required but row "
                                "%lld has no value", w->path, c->def.name, (long long)w->rows);
    if (c->def.nullable) {
        XGROW(c->defs, c->ndefs + 1, c->defs_cap);
        c->defs[c->ndefs++] = is_null ? 0 : 1;
    }
    c->count++;
    *out = c;
    return 0;
}

static int type_error(struct parquet_writer *w, struct pcol *c, const char *what)
{
    return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' does not take %s",
                            w->path, c->def.name, what);
}

int parquet_put_null(struct parquet_writer *w, int col)
{
    struct pcol *c;
    if (begin_value(w, col, &c, 1) < 0)
        return LSCAT_EINVALID;
    c->nulls++;
    return 0;
}

int parquet_put_int(struct parquet_writer *w, int col, int64_t v)
{
    struct pcol *c;
    if (begin_value(w, col, &c, 0) < 0)
        return LSCAT_EINVALID;
    enum parquet_type t = c->def.type;
    if (t == PARQUET_INT32 && (v < INT32_MIN || v > INT32_MAX))
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': %lld does not fit INT32 column "
                                "'%s'", w->path, (long long)v, c->def.name);
    if (t == PARQUET_BOOLEAN) {
        v = v != 0;
        buf_addch(&c->plain, (int)v);
    } else if (t == PARQUET_INT32) {
        int32_t x = (int32_t)v;
        buf_add(&c->plain, &x, 4);
        parquet_dict_add(&c->dict, &x, 4);
    } else if (t == PARQUET_INT64) {
        buf_add(&c->plain, &v, 8);
        parquet_dict_add(&c->dict, &v, 8);
    } else {
        return type_error(w, c, "integers");
    }
    w->buffered += (size_t)fixed_bytes(t);
    if (!c->has_minmax || v < c->imin)
        c->imin = v;
    if (!c->has_minmax || v > c->imax)
        c->imax = v;
    c->has_minmax = 1;
    return 0;
}

int parquet_put_double(struct parquet_writer *w, int col, double v)
{
    struct pcol *c;
    if (begin_value(w, col, &c, 0) < 0)
        return LSCAT_EINVALID;
    if (c->def.type != PARQUET_DOUBLE)
        return type_error(w, c, "doubles");
    buf_add(&c->plain, &v, 8);
    parquet_dict_add(&c->dict, &v, 8);
    w->buffered += 8;
    if (!isnan(v)) { /* NaN never enters min/max (the spec's rule) */
        if (!c->has_minmax || v < c->dmin)
            c->dmin = v;
        if (!c->has_minmax || v > c->dmax)
            c->dmax = v;
        c->has_minmax = 1;
    }
    return 0;
}

static int bytes_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int r = memcmp(a, b, alen < blen ? alen : blen);
    return r ? r : (alen < blen ? -1 : alen > blen);
}

int parquet_put_bytes(struct parquet_writer *w, int col, const void *data, size_t len)
{
    struct pcol *c;
    if (begin_value(w, col, &c, 0) < 0)
        return LSCAT_EINVALID;
    if (c->def.type != PARQUET_STRING && c->def.type != PARQUET_BYTES)
        return type_error(w, c, "byte strings");
    if (len > INT32_MAX)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': a value of %zu bytes in column "
                                "'%s' is over Parquet's 2 GiB limit", w->path, len, c->def.name);
    uint32_t l = (uint32_t)len;
    buf_add(&c->plain, &l, 4);
    buf_add(&c->plain, data, len);
    parquet_dict_add(&c->dict, data, len);
    w->buffered += len + 4;
    if (!c->has_minmax || bytes_cmp(data, len, c->smin.data, c->smin.len) < 0) {
        buf_reset(&c->smin);
        buf_add(&c->smin, data, len);
    }
    if (!c->has_minmax || bytes_cmp(data, len, c->smax.data, c->smax.len) > 0) {
        buf_reset(&c->smax);
        buf_add(&c->smax, data, len);
    }
    c->has_minmax = 1;
    return 0;
}

/* ---------------------------------------------------------------- writing pages */

struct chunk_info {
    uint64_t first_offset, data_offset, dict_offset;
    int64_t uncompressed, compressed;
    int used_dict;
    int encoding; /* of the values in the data page */
};

/* BYTE_STREAM_SPLIT: byte b of value i goes to stream b, position i. */
static void byte_stream_split(struct buf *out, const struct buf *plain, size_t width)
{
    size_t n = plain->len / width, start = out->len;
    buf_grow(out, plain->len);
    unsigned char *dst = (unsigned char *)out->data + start;
    const unsigned char *src = (const unsigned char *)plain->data;
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < width; b++)
            dst[b * n + i] = src[i * width + b];
    buf_setlen(out, start + plain->len);
}

/* Compress w->page (or `data` when given), write its PageHeader and bytes. */
static int write_page(struct parquet_writer *w, struct chunk_info *ci, int type,
                      const struct buf *data, int32_t num_values, int encoding)
{
    const void *body = data->data;
    size_t body_len = data->len;
    if (data->len > INT32_MAX)
        return lscat_error_set("parquet '%s': a page of %zu bytes is over 2 GiB (lower the "
                               "row-group size)", w->path, data->len);
    if (w->z) {
        size_t bound = ZSTD_compressBound(data->len);
        buf_reset(&w->comp);
        buf_grow(&w->comp, bound);
        size_t n = ZSTD_compressCCtx(w->z, w->comp.data, bound, data->data, data->len,
                                     w->o.zstd_level);
        if (ZSTD_isError(n))
            return lscat_error_set("parquet '%s': zstd: %s", w->path, ZSTD_getErrorName(n));
        body = w->comp.data;
        body_len = n;
    }
    struct thrift_w t;
    buf_reset(&w->hdr);
    thrift_w_init(&t, &w->hdr);
    thrift_i32(&t, 1, type);
    thrift_i32(&t, 2, (int32_t)data->len);
    thrift_i32(&t, 3, (int32_t)body_len);
    if (type == PAGE_DATA) {
        thrift_struct_begin(&t, 5);
        thrift_i32(&t, 1, num_values);
        thrift_i32(&t, 2, encoding);
        thrift_i32(&t, 3, ENC_RLE);
        thrift_i32(&t, 4, ENC_RLE);
        thrift_struct_end(&t);
    } else {
        thrift_struct_begin(&t, 7);
        thrift_i32(&t, 1, num_values);
        thrift_i32(&t, 2, ENC_PLAIN);
        thrift_struct_end(&t);
    }
    thrift_struct_end(&t);
    if (type == PAGE_DATA)
        ci->data_offset = w->off;
    else
        ci->dict_offset = w->off;
    ci->uncompressed += (int64_t)(w->hdr.len + data->len);
    ci->compressed += (int64_t)(w->hdr.len + body_len);
    if (write_bytes(w, w->hdr.data, w->hdr.len) < 0 || write_bytes(w, body, body_len) < 0)
        return LSCAT_ERR;
    return 0;
}

/* Is the dictionary form of this chunk smaller than PLAIN? */
static int dict_pays(const struct pcol *c)
{
    const struct parquet_dict *d = &c->dict;
    if (!d->on || d->n == 0 || (int64_t)d->nidx != c->count - c->nulls)
        return 0;
    int bw = parquet_bit_width(d->n - 1);
    if (bw == 0)
        bw = 1;
    size_t idx_bytes = (d->nidx * (size_t)bw + 7) / 8 + 16;
    return d->values.len + idx_bytes < c->plain.len;
}

static int write_chunk_pages(struct parquet_writer *w, struct pcol *c, struct chunk_info *ci)
{
    ci->first_offset = w->off;
    ci->used_dict = dict_pays(c);
    ci->encoding = ci->used_dict ? ENC_RLE_DICTIONARY
                   : (c->def.type == PARQUET_DOUBLE && w->o.byte_stream_split) ? ENC_BYTE_STREAM_SPLIT
                                                                                : ENC_PLAIN;
    if (ci->used_dict && write_page(w, ci, PAGE_DICTIONARY, &c->dict.values,
                                    (int32_t)c->dict.n, ENC_PLAIN) < 0)
        return LSCAT_ERR;
    buf_reset(&w->page);
    if (c->def.nullable) {
        buf_add(&w->page, "\0\0\0\0", 4);
        size_t start = w->page.len;
        parquet_rle_hybrid(&w->page, c->defs, 1, c->ndefs, 1);
        uint32_t n = (uint32_t)(w->page.len - start);
        memcpy(w->page.data + start - 4, &n, 4);
    }
    if (ci->used_dict) {
        int bw = parquet_bit_width(c->dict.n - 1);
        if (bw == 0)
            bw = 1;
        buf_addch(&w->page, bw);
        parquet_rle_hybrid(&w->page, c->dict.idx, 4, c->dict.nidx, bw);
    } else if (ci->encoding == ENC_BYTE_STREAM_SPLIT) {
        byte_stream_split(&w->page, &c->plain, 8);
    } else if (c->def.type == PARQUET_BOOLEAN) {
        parquet_pack_bools(&w->page, (const uint8_t *)c->plain.data, c->plain.len);
    } else {
        buf_add(&w->page, c->plain.data, c->plain.len);
    }
    return write_page(w, ci, PAGE_DATA, &w->page, (int32_t)c->count, ci->encoding);
}

static void stats_value(struct buf *out, const struct pcol *c, int max)
{
    buf_reset(out);
    switch (c->def.type) {
    case PARQUET_BOOLEAN: buf_addch(out, (int)(max ? c->imax : c->imin)); break;
    case PARQUET_INT32: {
        int32_t x = (int32_t)(max ? c->imax : c->imin);
        buf_add(out, &x, 4);
        break;
    }
    case PARQUET_INT64: buf_add(out, max ? &c->imax : &c->imin, 8); break;
    case PARQUET_DOUBLE: {
        double x = max ? c->dmax : c->dmin;
        if (x == 0) /* the spec: a zero min is written -0.0, a zero max +0.0 */
            x = max ? 0.0 : -0.0;
        buf_add(out, &x, 8);
        break;
    }
    default: buf_add(out, max ? c->smax.data : c->smin.data, max ? c->smax.len : c->smin.len);
    }
}

static void write_chunk_meta(struct parquet_writer *w, struct thrift_w *t, const struct pcol *c,
                             const struct chunk_info *ci)
{
    thrift_elem_struct_begin(t); /* ColumnChunk */
    thrift_i64(t, 2, (int64_t)ci->first_offset);
    thrift_struct_begin(t, 3); /* ColumnMetaData */
    thrift_i32(t, 1, physical(c->def.type));
    thrift_list_begin(t, 2, THRIFT_I32, ci->encoding != ENC_PLAIN ? 3 : 2);
    thrift_elem_i32(t, ENC_PLAIN);
    thrift_elem_i32(t, ENC_RLE);
    if (ci->encoding != ENC_PLAIN)
        thrift_elem_i32(t, ci->encoding);
    thrift_list_begin(t, 3, THRIFT_BINARY, 1);
    thrift_elem_string(t, c->def.name);
    thrift_i32(t, 4, w->z ? CODEC_ZSTD : CODEC_UNCOMPRESSED);
    thrift_i64(t, 5, c->count);
    thrift_i64(t, 6, ci->uncompressed);
    thrift_i64(t, 7, ci->compressed);
    thrift_i64(t, 9, (int64_t)ci->data_offset);
    if (ci->used_dict)
        thrift_i64(t, 11, (int64_t)ci->dict_offset);
    thrift_struct_begin(t, 12); /* Statistics */
    thrift_i64(t, 3, c->nulls);
    int bytes = c->def.type == PARQUET_STRING || c->def.type == PARQUET_BYTES;
    if (c->has_minmax && (!bytes || (c->smin.len <= STATS_MAX_BYTES && c->smax.len <= STATS_MAX_BYTES))) {
        struct buf v = BUF_INIT;
        stats_value(&v, c, 1);
        thrift_binary(t, 5, v.data, v.len);
        stats_value(&v, c, 0);
        thrift_binary(t, 6, v.data, v.len);
        buf_release(&v);
    }
    thrift_struct_end(t); /* Statistics */
    thrift_struct_end(t); /* ColumnMetaData */
    thrift_struct_end(t); /* ColumnChunk */
}

static void reset_column(struct pcol *c, int dictionary)
{
    buf_reset(&c->plain);
    c->ndefs = 0;
    c->count = 0;
    c->nulls = 0;
    c->has_minmax = 0;
    buf_reset(&c->smin);
    buf_reset(&c->smax);
    parquet_dict_reset(&c->dict);
    c->dict.on = dictionary && c->def.type != PARQUET_BOOLEAN;
}

static int flush_row_group(struct parquet_writer *w)
{
    if (w->rg_rows == 0)
        return 0;
    struct thrift_w t;
    thrift_w_init(&t, &w->rg_meta);
    thrift_list_begin(&t, 1, THRIFT_STRUCT, (size_t)w->ncols);
    int64_t total_unc = 0, total_comp = 0;
    uint64_t first = w->off;
    for (int i = 0; i < w->ncols; i++) {
        struct chunk_info ci = { 0 };
        if (write_chunk_pages(w, &w->c[i], &ci) < 0)
            return LSCAT_ERR;
        write_chunk_meta(w, &t, &w->c[i], &ci);
        total_unc += ci.uncompressed;
        total_comp += ci.compressed;
        reset_column(&w->c[i], w->o.dictionary);
    }
    thrift_i64(&t, 2, total_unc);
    thrift_i64(&t, 3, w->rg_rows);
    thrift_i64(&t, 5, (int64_t)first);
    thrift_i64(&t, 6, total_comp);
    thrift_struct_end(&t);
    w->row_groups++;
    w->rg_rows = 0;
    w->buffered = 0;
    return 0;
}

int parquet_end_row(struct parquet_writer *w)
{
    for (int i = 0; i < w->ncols; i++)
        if (w->c[i].count != w->rg_rows + 1)
            return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' not set in row "
                                    "%lld", w->path, w->c[i].def.name, (long long)w->rows);
    w->rows++;
    w->rg_rows++;
    if (w->rg_rows >= w->o.row_group_rows || w->buffered >= w->o.row_group_bytes)
        return flush_row_group(w);
    return 0;
}

/* ---------------------------------------------------------------- footer */

static void write_schema(struct parquet_writer *w, struct thrift_w *t)
{
    thrift_list_begin(t, 2, THRIFT_STRUCT, (size_t)w->ncols + 1);
    thrift_elem_struct_begin(t);
    thrift_string(t, 4, "schema");
    thrift_i32(t, 5, w->ncols);
    thrift_struct_end(t);
    for (int i = 0; i < w->ncols; i++) {
        const struct pcol *c = &w->c[i];
        thrift_elem_struct_begin(t);
        thrift_i32(t, 1, physical(c->def.type));
        thrift_i32(t, 3, c->def.nullable ? REP_OPTIONAL : REP_REQUIRED);
        thrift_string(t, 4, c->def.name);
        if (c->def.type == PARQUET_STRING) {
            thrift_i32(t, 6, CONVERTED_UTF8);
            thrift_struct_begin(t, 10); /* LogicalType */
            thrift_struct_begin(t, 1);  /* STRING */
            thrift_struct_end(t);
            thrift_struct_end(t);
        }
        thrift_struct_end(t);
    }
}

static int write_footer(struct parquet_writer *w)
{
    struct buf meta = BUF_INIT;
    struct thrift_w t;
    thrift_w_init(&t, &meta);
    thrift_i32(&t, 1, 2);
    write_schema(w, &t);
    thrift_i64(&t, 3, w->rows);
    thrift_list_begin(&t, 4, THRIFT_STRUCT, (size_t)w->row_groups);
    buf_add(&meta, w->rg_meta.data, w->rg_meta.len);
    if (w->nkv) {
        thrift_list_begin(&t, 5, THRIFT_STRUCT, (size_t)w->nkv / 2);
        for (int i = 0; i < w->nkv; i += 2) {
            thrift_elem_struct_begin(&t);
            thrift_string(&t, 1, w->kv[i]);
            thrift_string(&t, 2, w->kv[i + 1]);
            thrift_struct_end(&t);
        }
    }
    thrift_string(&t, 6, w->created_by);
    thrift_list_begin(&t, 7, THRIFT_STRUCT, (size_t)w->ncols);
    for (int i = 0; i < w->ncols; i++) {
        thrift_elem_struct_begin(&t); /* ColumnOrder */
        thrift_struct_begin(&t, 1);   /* TYPE_ORDER */
        thrift_struct_end(&t);
        thrift_struct_end(&t);
    }
    thrift_struct_end(&t);
    uint32_t n = (uint32_t)meta.len;
    int rc = write_bytes(w, meta.data, meta.len);
    if (rc == 0)
        rc = write_bytes(w, &n, 4);
    if (rc == 0)
        rc = write_bytes(w, "PAR1", 4);
    buf_release(&meta);
    return rc;
}

int parquet_writer_close(struct parquet_writer *w)
{
    int rc = flush_row_group(w);
    if (rc == 0)
        rc = write_footer(w);
    if (rc == 0 && (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0))
        rc = lscat_error_set("cannot write '%s': %s", w->tmp, strerror(errno));
    FILE *f = w->f;
    w->f = NULL;
    if (fclose(f) != 0 && rc == 0)
        rc = lscat_error_set("cannot write '%s': %s", w->tmp, strerror(errno));
    if (rc == 0 && rename(w->tmp, w->path) != 0)
        rc = lscat_error_set("cannot rename '%s' to '%s': %s", w->tmp, w->path, strerror(errno));
    if (rc < 0)
        unlink(w->tmp);
    free_writer(w);
    return rc;
}
