/* The Parquet file writer's back: each buffered leaf becomes a column chunk — an optional
 * PLAIN dictionary page and one data page v1 (repetition levels, definition levels, values),
 * ZSTD-compressed — with its ColumnMetaData and statistics; and finally the Thrift footer with
 * the schema tree (LIST groups, STRING and TIMESTAMP annotations). */
#include "common/buf.h"
#include "common/error.h"
#include "dataset/parquet_impl.h"
#include "dataset/thrift.h"

#include <errno.h>
#include <string.h>

/* Parquet's enum values (parquet.thrift). */
enum { T_BOOLEAN = 0, T_INT32 = 1, T_INT64 = 2, T_DOUBLE = 5, T_BYTE_ARRAY = 6 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_RLE_DICTIONARY = 8, ENC_BYTE_STREAM_SPLIT = 9 };
enum { CODEC_UNCOMPRESSED = 0, CODEC_ZSTD = 6 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1, REP_REPEATED = 2 };
enum { CONVERTED_UTF8 = 0, CONVERTED_LIST = 3, CONVERTED_TIMESTAMP_MICROS = 10 };
enum { LOGICAL_STRING = 1, LOGICAL_LIST = 3, LOGICAL_TIMESTAMP = 8 };

/* Byte-array min/max longer than this are left out of the statistics. */
#define STATS_MAX_BYTES 4096

int parquet_write_raw(struct parquet_writer *w, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, w->f) != n)
        return lscat_error_set("cannot write '%s': %s (disk full?)", w->tmp, strerror(errno));
    w->off += n;
    return 0;
}

static int physical(enum parquet_type t)
{
    switch (t) {
    case PARQUET_BOOLEAN: return T_BOOLEAN;
    case PARQUET_INT32: return T_INT32;
    case PARQUET_INT64: case PARQUET_TIMESTAMP: return T_INT64;
    case PARQUET_DOUBLE: return T_DOUBLE;
    default: return T_BYTE_ARRAY;
    }
}

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

static void page_header(struct parquet_writer *w, int type, size_t len, size_t body_len,
                        int32_t num_values, int encoding)
{
    struct thrift_w t;
    buf_reset(&w->hdr);
    thrift_w_init(&t, &w->hdr);
    thrift_i32(&t, 1, type);
    thrift_i32(&t, 2, (int32_t)len);
    thrift_i32(&t, 3, (int32_t)body_len);
    thrift_struct_begin(&t, type == PAGE_DATA ? 5 : 7);
    thrift_i32(&t, 1, num_values);
    thrift_i32(&t, 2, type == PAGE_DATA ? encoding : ENC_PLAIN);
    if (type == PAGE_DATA) {
        thrift_i32(&t, 3, ENC_RLE);
        thrift_i32(&t, 4, ENC_RLE);
    }
    thrift_struct_end(&t);
    thrift_struct_end(&t);
}

/* Compress `data`, write its PageHeader and bytes. */
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
    page_header(w, type, data->len, body_len, num_values, encoding);
    if (type == PAGE_DATA)
        ci->data_offset = w->off;
    else
        ci->dict_offset = w->off;
    ci->uncompressed += (int64_t)(w->hdr.len + data->len);
    ci->compressed += (int64_t)(w->hdr.len + body_len);
    if (parquet_write_raw(w, w->hdr.data, w->hdr.len) < 0 ||
        parquet_write_raw(w, body, body_len) < 0)
        return LSCAT_ERR;
    return 0;
}

/* Is the dictionary form of this chunk smaller than PLAIN? */
static int dict_pays(const struct pleaf *l)
{
    const struct parquet_dict *d = &l->dict;
    if (!d->on || d->n == 0 || (int64_t)d->nidx != l->count - l->nulls)
        return 0;
    int bw = parquet_bit_width(d->n - 1);
    if (bw == 0)
        bw = 1;
    size_t idx_bytes = (d->nidx * (size_t)bw + 7) / 8 + 16;
    return d->values.len + idx_bytes < l->plain.len;
}

/* Levels as the data page v1 carries them: 4-byte length, then the RLE/bit-packed hybrid. */
static void put_levels(struct buf *page, const uint8_t *v, size_t n, int max_level)
{
    buf_add(page, "\0\0\0\0", 4);
    size_t start = page->len;
    parquet_rle_hybrid(page, v, 1, n, parquet_bit_width((uint32_t)max_level));
    uint32_t len = (uint32_t)(page->len - start);
    memcpy(page->data + start - 4, &len, 4);
}

static int write_chunk_pages(struct parquet_writer *w, struct pleaf *l, struct chunk_info *ci)
{
    ci->first_offset = w->off;
    ci->used_dict = dict_pays(l);
    ci->encoding = ci->used_dict ? ENC_RLE_DICTIONARY
                   : (l->type == PARQUET_DOUBLE && w->o.byte_stream_split) ? ENC_BYTE_STREAM_SPLIT
                                                                            : ENC_PLAIN;
    if (ci->used_dict && write_page(w, ci, PAGE_DICTIONARY, &l->dict.values,
                                    (int32_t)l->dict.n, ENC_PLAIN) < 0)
        return LSCAT_ERR;
    buf_reset(&w->page);
    if (l->max_rep)
        put_levels(&w->page, l->reps, l->nlev, l->max_rep);
    if (l->max_def)
        put_levels(&w->page, l->defs, l->nlev, l->max_def);
    if (ci->used_dict) {
        int bw = parquet_bit_width(l->dict.n - 1);
        if (bw == 0)
            bw = 1;
        buf_addch(&w->page, bw);
        parquet_rle_hybrid(&w->page, l->dict.idx, 4, l->dict.nidx, bw);
    } else if (ci->encoding == ENC_BYTE_STREAM_SPLIT) {
        byte_stream_split(&w->page, &l->plain, 8);
    } else if (l->type == PARQUET_BOOLEAN) {
        parquet_pack_bools(&w->page, (const uint8_t *)l->plain.data, l->plain.len);
    } else {
        buf_add(&w->page, l->plain.data, l->plain.len);
    }
    return write_page(w, ci, PAGE_DATA, &w->page, (int32_t)l->count, ci->encoding);
}

static void stats_value(struct buf *out, const struct pleaf *l, int max)
{
    buf_reset(out);
    switch (l->type) {
    case PARQUET_BOOLEAN: buf_addch(out, (int)(max ? l->imax : l->imin)); break;
    case PARQUET_INT32: {
        int32_t x = (int32_t)(max ? l->imax : l->imin);
        buf_add(out, &x, 4);
        break;
    }
    case PARQUET_INT64: case PARQUET_TIMESTAMP: buf_add(out, max ? &l->imax : &l->imin, 8); break;
    case PARQUET_DOUBLE: {
        double x = max ? l->dmax : l->dmin;
        if (x == 0) /* the spec: a zero min is written -0.0, a zero max +0.0 */
            x = max ? 0.0 : -0.0;
        buf_add(out, &x, 8);
        break;
    }
    default: buf_add(out, max ? l->smax.data : l->smin.data, max ? l->smax.len : l->smin.len);
    }
}

static void write_statistics(struct thrift_w *t, const struct pleaf *l)
{
    thrift_struct_begin(t, 12);
    thrift_i64(t, 3, l->nulls);
    int bytes = l->type == PARQUET_STRING || l->type == PARQUET_BYTES;
    if (l->has_minmax && (!bytes || (l->smin.len <= STATS_MAX_BYTES && l->smax.len <= STATS_MAX_BYTES))) {
        struct buf v = BUF_INIT;
        stats_value(&v, l, 1);
        thrift_binary(t, 5, v.data, v.len);
        stats_value(&v, l, 0);
        thrift_binary(t, 6, v.data, v.len);
        buf_release(&v);
    }
    thrift_struct_end(t);
}

static void write_chunk_meta(struct parquet_writer *w, struct thrift_w *t, const struct pleaf *l,
                             const struct chunk_info *ci)
{
    thrift_elem_struct_begin(t); /* ColumnChunk */
    thrift_i64(t, 2, (int64_t)ci->first_offset);
    thrift_struct_begin(t, 3); /* ColumnMetaData */
    thrift_i32(t, 1, physical(l->type));
    thrift_list_begin(t, 2, THRIFT_I32, ci->encoding != ENC_PLAIN ? 3 : 2);
    thrift_elem_i32(t, ENC_PLAIN);
    thrift_elem_i32(t, ENC_RLE);
    if (ci->encoding != ENC_PLAIN)
        thrift_elem_i32(t, ci->encoding);
    thrift_list_begin(t, 3, THRIFT_BINARY, (size_t)l->npath);
    for (int i = 0; i < l->npath; i++)
        thrift_elem_string(t, l->path[i]);
    thrift_i32(t, 4, w->z ? CODEC_ZSTD : CODEC_UNCOMPRESSED);
    thrift_i64(t, 5, l->count);
    thrift_i64(t, 6, ci->uncompressed);
    thrift_i64(t, 7, ci->compressed);
    thrift_i64(t, 9, (int64_t)ci->data_offset);
    if (ci->used_dict)
        thrift_i64(t, 11, (int64_t)ci->dict_offset);
    write_statistics(t, l);
    thrift_struct_end(t); /* ColumnMetaData */
    thrift_struct_end(t); /* ColumnChunk */
}

void parquet_leaf_reset(struct pleaf *l, int dictionary)
{
    buf_reset(&l->plain);
    l->nlev = 0;
    l->count = 0;
    l->nulls = 0;
    l->has_minmax = 0;
    buf_reset(&l->smin);
    buf_reset(&l->smax);
    parquet_dict_reset(&l->dict);
    l->dict.on = dictionary && l->type != PARQUET_BOOLEAN;
}

int parquet_flush_row_group(struct parquet_writer *w)
{
    if (w->rg_rows == 0)
        return 0;
    struct thrift_w t;
    thrift_w_init(&t, &w->rg_meta);
    thrift_list_begin(&t, 1, THRIFT_STRUCT, (size_t)w->nleaves);
    int64_t total_unc = 0, total_comp = 0;
    uint64_t first = w->off;
    for (int i = 0; i < w->nleaves; i++) {
        struct chunk_info ci = { 0 };
        if (write_chunk_pages(w, &w->leaf[i], &ci) < 0)
            return LSCAT_ERR;
        write_chunk_meta(w, &t, &w->leaf[i], &ci);
        total_unc += ci.uncompressed;
        total_comp += ci.compressed;
        parquet_leaf_reset(&w->leaf[i], w->o.dictionary);
    }
    for (int i = 0; i < w->nfields; i++)
        w->fld[i].entries = 0;
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

/* ---------------------------------------------------------------- footer */

/* A SchemaElement of a value: physical type, repetition, name, annotations. */
static void schema_leaf(struct thrift_w *t, enum parquet_type type, int repetition,
                        const char *name)
{
    thrift_elem_struct_begin(t);
    thrift_i32(t, 1, physical(type));
    thrift_i32(t, 3, repetition);
    thrift_string(t, 4, name);
    if (type == PARQUET_STRING || type == PARQUET_TIMESTAMP)
        thrift_i32(t, 6, type == PARQUET_STRING ? CONVERTED_UTF8 : CONVERTED_TIMESTAMP_MICROS);
    if (type == PARQUET_STRING) {
        thrift_struct_begin(t, 10); /* LogicalType */
        thrift_struct_begin(t, LOGICAL_STRING);
        thrift_struct_end(t);
        thrift_struct_end(t);
    } else if (type == PARQUET_TIMESTAMP) {
        thrift_struct_begin(t, 10); /* LogicalType */
        thrift_struct_begin(t, LOGICAL_TIMESTAMP);
        thrift_bool(t, 1, 1);       /* isAdjustedToUTC */
        thrift_struct_begin(t, 2);  /* TimeUnit */
        thrift_struct_begin(t, 2);  /* MICROS */
        thrift_struct_end(t);
        thrift_struct_end(t);
        thrift_struct_end(t);
        thrift_struct_end(t);
    }
    thrift_struct_end(t);
}

/* A SchemaElement of a group. */
static void schema_group(struct thrift_w *t, int repetition, const char *name, int children,
                         int is_list)
{
    thrift_elem_struct_begin(t);
    thrift_i32(t, 3, repetition);
    thrift_string(t, 4, name);
    thrift_i32(t, 5, children);
    if (is_list) {
        thrift_i32(t, 6, CONVERTED_LIST);
        thrift_struct_begin(t, 10); /* LogicalType */
        thrift_struct_begin(t, LOGICAL_LIST);
        thrift_struct_end(t);
        thrift_struct_end(t);
    }
    thrift_struct_end(t);
}

/* The schema tree, depth first: root, then per column its group(s) and leaves. */
static void write_schema(struct parquet_writer *w, struct thrift_w *t)
{
    size_t n = 1;
    for (int i = 0; i < w->nfields; i++)
        n += w->fld[i].def.list ? 3 + (size_t)w->fld[i].def.nfields : 1;
    thrift_list_begin(t, 2, THRIFT_STRUCT, n);
    thrift_elem_struct_begin(t);
    thrift_string(t, 4, "schema");
    thrift_i32(t, 5, w->nfields);
    thrift_struct_end(t);
    for (int i = 0; i < w->nfields; i++) {
        const struct parquet_column *c = &w->fld[i].def;
        int rep = c->nullable ? REP_OPTIONAL : REP_REQUIRED;
        if (!c->list) {
            schema_leaf(t, c->type, rep, c->name);
            continue;
        }
        schema_group(t, rep, c->name, 1, 1);
        schema_group(t, REP_REPEATED, "list", 1, 0);
        if (!c->nfields) {
            schema_leaf(t, c->type, REP_REQUIRED, "element");
            continue;
        }
        schema_group(t, REP_REQUIRED, "element", c->nfields, 0);
        for (int k = 0; k < c->nfields; k++)
            schema_leaf(t, c->fields[k].type, c->fields[k].nullable ? REP_OPTIONAL : REP_REQUIRED,
                        c->fields[k].name);
    }
}

int parquet_write_footer(struct parquet_writer *w)
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
    thrift_list_begin(&t, 7, THRIFT_STRUCT, (size_t)w->nleaves);
    for (int i = 0; i < w->nleaves; i++) {
        thrift_elem_struct_begin(&t); /* ColumnOrder */
        thrift_struct_begin(&t, 1);   /* TYPE_ORDER */
        thrift_struct_end(&t);
        thrift_struct_end(&t);
    }
    thrift_struct_end(&t);
    uint32_t n = (uint32_t)meta.len;
    int rc = parquet_write_raw(w, meta.data, meta.len);
    if (rc == 0)
        rc = parquet_write_raw(w, &n, 4);
    if (rc == 0)
        rc = parquet_write_raw(w, "PAR1", 4);
    buf_release(&meta);
    return rc;
}
