/* The export: one pass per table over its SQL (columns.c), each value handed to the Parquet or
 * CSV writer by its declared type (timestamps parsed, lists built by nested.c for Parquet, kept
 * as JSON text in CSV). Kernel sources are read from the work folder; invalid UTF-8 is kept
 * readable in sources.source and exact in sources_raw (see text.h). */
#include "dataset/export.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "dataset/columns.h"
#include "dataset/csv.h"
#include "dataset/nested.h"
#include "dataset/parquet.h"
#include "dataset/place.h"
#include "dataset/text.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SOURCE_CAP_BYTES (256u << 20)

/* One writer of either format, fed column by column. */
struct sink {
    struct parquet_writer *pq;
    struct csv_writer *csv;
};

struct row_ctx {
    const struct export_options *o;
    struct buf src;      /* kernel.cu of the current row */
    int src_state;       /* 0 missing, 1 valid UTF-8, 2 not UTF-8 */
    int warn;            /* log missing sources (once per export: the sources table's pass) */
    int64_t missing, not_utf8; /* sources counted in this pass */
    struct buf text;     /* scratch for repaired text */
};

char *export_file_name(const char *table, const struct export_options *o)
{
    if (o->format == EXPORT_PARQUET)
        return xasprintf("%s.parquet", table);
    return xasprintf("%s.csv%s", table, o->compress == 1 ? ".gz" : o->compress == 2 ? ".zst" : "");
}

static int sink_null(struct sink *k, int col)
{
    if (k->pq)
        return parquet_put_null(k->pq, col);
    csv_put_null(k->csv);
    return 0;
}

static int sink_int(struct sink *k, int col, const struct columns_col *c, int64_t v)
{
    if (k->pq)
        return parquet_put_int(k->pq, col, v);
    if (c->type == PARQUET_BOOLEAN)
        csv_put_bool(k->csv, v != 0);
    else
        csv_put_int(k->csv, v);
    return 0;
}

static int sink_double(struct sink *k, int col, double v)
{
    if (k->pq)
        return parquet_put_double(k->pq, col, v);
    csv_put_double(k->csv, v);
    return 0;
}

static int sink_bytes(struct sink *k, int col, const struct columns_col *c, const void *p,
                      size_t len)
{
    if (k->pq)
        return parquet_put_bytes(k->pq, col, p, len);
    if (c->type == PARQUET_BYTES)
        csv_put_base64(k->csv, p, len);
    else
        csv_put_text(k->csv, p, len);
    return 0;
}

/* Text is always written as valid UTF-8. */
static int sink_text(struct sink *k, struct row_ctx *x, int col, const struct columns_col *c,
                     const void *p, size_t len)
{
    if (text_utf8_valid(p, len))
        return sink_bytes(k, col, c, p, len);
    buf_reset(&x->text);
    text_utf8_repair(&x->text, p, len);
    return sink_bytes(k, col, c, x->text.data, x->text.len);
}

static char *source_path(const char *work, const char *dir)
{
    if (dir[0] == '/')
        return fs_join(dir, "kernel.cu");
    char *d = strncmp(dir, "kernels/", 8) == 0 ? fs_join(work, dir) : xasprintf("%s/kernels/%s", work, dir);
    char *p = fs_join(d, "kernel.cu");
    free(d);
    return p;
}

static void load_source(struct row_ctx *x, const char *dir)
{
    buf_reset(&x->src);
    x->src_state = 0;
    if (!dir)
        return;
    char *path = source_path(x->o->work_dir, dir);
    x->src.cap_bytes = SOURCE_CAP_BYTES;
    if (buf_read_file(&x->src, path) < 0) {
        if (x->warn && x->missing < 10)
            log_warn("%s (its source is exported as null)", lscat_error_last());
        else if (x->warn && x->missing == 10)
            log_warn("more kernel sources are missing; the data card counts them");
        x->missing++;
    } else {
        x->src_state = text_utf8_valid(x->src.data, x->src.len) ? 1 : 2;
        x->not_utf8 += x->src_state == 2;
    }
    free(path);
}

/* A list column: JSON text in CSV (comma-separated words become a JSON array), a LIST in
 * Parquet. */
static int put_list(struct sink *k, struct row_ctx *x, int col, const struct columns_col *c,
                    const char *text, size_t len)
{
    if (k->pq)
        return nested_put_list(k->pq, col, c, text, len);
    if (c->special != COLUMNS_LIST_COMMA)
        return sink_text(k, x, col, c, text, len);
    buf_reset(&x->text);
    text_comma_json(&x->text, text, len);
    csv_put_text(k->csv, x->text.data, x->text.len);
    return 0;
}

/* A timestamp: the store's ISO-8601 text in CSV, microseconds since the epoch in Parquet. */
static int put_timestamp(struct sink *k, struct row_ctx *x, int col, const struct columns_col *c,
                         const char *text, size_t len)
{
    if (!k->pq)
        return sink_text(k, x, col, c, text, len);
    int64_t us;
    if (text_timestamp_us(&us, text, len) < 0)
        return lscat_error_setc(LSCAT_EINVALID, "'%.*s' is not an ISO-8601 time (repair the "
                                "store's row, or export --format csv, which keeps the text)",
                                (int)(len > 40 ? 40 : len), text);
    return parquet_put_int(k->pq, col, us);
}

static int put_special(struct sink *k, struct row_ctx *x, int col, const struct columns_col *c,
                       struct store_stmt *st)
{
    if (c->special == COLUMNS_SOURCE) {
        load_source(x, store_col_text(st, col));
        if (x->src_state == 0)
            return sink_null(k, col);
        return sink_text(k, x, col, c, x->src.data, x->src.len);
    }
    if (c->special == COLUMNS_SOURCE_RAW) /* loaded by the row filter (export_table) */
        return sink_bytes(k, col, c, x->src.data, x->src.len);
    if (store_col_is_null(st, col))
        return sink_null(k, col);
    size_t len;
    const char *p = store_col_blob(st, col, &len);
    return put_list(k, x, col, c, p ? p : "", len);
}

static int put_row(struct sink *k, struct row_ctx *x, const struct columns_table *t,
                   struct store_stmt *st)
{
    for (int i = 0; i < t->ncols; i++) {
        const struct columns_col *c = &t->cols[i];
        int rc;
        if (c->special)
            rc = put_special(k, x, i, c, st);
        else if (store_col_is_null(st, i))
            rc = sink_null(k, i);
        else if (c->type == PARQUET_DOUBLE)
            rc = sink_double(k, i, store_col_double(st, i));
        else if (c->type == PARQUET_TIMESTAMP) {
            size_t len;
            const char *p = store_col_blob(st, i, &len);
            rc = put_timestamp(k, x, i, c, p ? p : "", len);
        } else if (c->type == PARQUET_STRING || c->type == PARQUET_BYTES) {
            size_t len;
            const void *p = store_col_blob(st, i, &len);
            rc = c->type == PARQUET_STRING ? sink_text(k, x, i, c, p ? p : "", len)
                                           : sink_bytes(k, i, c, p ? p : "", len);
        } else
            rc = sink_int(k, i, c, store_col_int(st, i));
        if (rc < 0)
            return lscat_error_wrap("table %s, column %s", t->name, c->name);
    }
    if (k->pq)
        return parquet_end_row(k->pq);
    return csv_end_row(k->csv);
}

static int open_sink(struct sink *k, const char *path, const struct columns_table *t,
                     const struct export_options *o, const char *const *kv)
{
    memset(k, 0, sizeof(*k));
    if (o->format == EXPORT_CSV) {
        const char *names[64];
        for (int i = 0; i < t->ncols && i < 64; i++)
            names[i] = t->cols[i].name;
        return csv_writer_open(&k->csv, path, names, t->ncols,
                               o->compress == 1 ? CSV_GZIP : o->compress == 2 ? CSV_ZSTD : CSV_PLAIN);
    }
    struct parquet_column cols[64];
    nested_parquet_columns(cols, t);
    struct parquet_options po = PARQUET_OPTIONS_INIT;
    if (o->row_group_rows)
        po.row_group_rows = o->row_group_rows;
    if (o->row_group_bytes)
        po.row_group_bytes = o->row_group_bytes;
    po.dictionary = o->dictionary;
    po.zstd_level = o->zstd_level;
    po.byte_stream_split = o->byte_stream_split;
    po.kv = kv;
    char *by = xasprintf("lscat version %s", o->lscat_version);
    po.created_by = by;
    int rc = parquet_writer_open(&k->pq, path, cols, t->ncols, &po);
    free(by);
    return rc;
}

static int close_sink(struct sink *k, int ok, char sha256_hex[65], int64_t *max_row)
{
    sha256_hex[0] = '\0';
    if (k->csv)
        *max_row = (int64_t)csv_writer_max_row_bytes(k->csv);
    if (!ok) {
        parquet_writer_abort(k->pq);
        csv_writer_abort(k->csv);
        return LSCAT_ERR;
    }
    return k->pq ? parquet_writer_close(k->pq) : csv_writer_close(k->csv, sha256_hex);
}

static int export_table(struct store *s, const struct columns_table *t,
                        const struct export_options *o, struct export_result *r, int slot,
                        const char *const *kv)
{
    struct store_stmt *st = NULL;
    struct sink k = { 0 };
    struct row_ctx x = { o, BUF_INIT, 0, !t->raw_sources, 0, 0, BUF_INIT };
    struct progress *p = NULL;
    char *name = export_file_name(t->name, o);
    char *path = fs_join(o->out_dir, name);
    int rc = store_prepare(&st, s, t->sql);
    if (rc == 0 && strchr(t->sql, '?'))
        rc = store_bind(st, "tt", o->gpu, o->since);
    if (rc == 0)
        rc = open_sink(&k, path, t, o, kv);
    if (rc < 0)
        goto done;
    p = o->quiet ? NULL : progress_new(name, 0);
    int step;
    while ((step = store_step(st)) == STORE_ROW) {
        if (t->raw_sources) { /* only the kernels whose source is not UTF-8 */
            load_source(&x, store_col_text(st, 1));
            if (x.src_state != 2)
                continue;
        }
        if ((rc = put_row(&k, &x, t, st)) < 0)
            break;
        r->rows[slot]++;
        if (p && (r->rows[slot] & 1023) == 0)
            progress_set(p, (uint64_t)r->rows[slot]);
    }
    if (step < 0)
        rc = step;
    rc = close_sink(&k, rc == 0, r->sha256[slot], &r->max_row_bytes[slot]) < 0 && rc == 0 ? LSCAT_ERR : rc;
    if (p)
        progress_set(p, (uint64_t)r->rows[slot]);
    if (x.missing > r->sources_missing) /* both source tables count the same kernels */
        r->sources_missing = x.missing;
    if (x.not_utf8 > r->sources_not_utf8)
        r->sources_not_utf8 = x.not_utf8;
done:
    if (rc < 0)
        lscat_error_wrap("cannot export %s to '%s'", t->name, path);
    progress_free(p);
    store_finalize(st);
    buf_release(&x.src);
    buf_release(&x.text);
    free(name);
    free(path);
    return rc;
}

int export_sha256sums(struct buf *out, const char *dir, const char *const *names,
                      const char *const *known, int n)
{
    unsigned char *chunk = xmalloc(1 << 20);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (known && known[i] && known[i][0]) {
            buf_addf(out, "%s  %s\n", known[i], names[i]);
            continue;
        }
        char *path = fs_join(dir, names[i]);
        FILE *f = fopen(path, "rb");
        if (!f) {
            rc = lscat_error_set("cannot read '%s': %s", path, strerror(errno));
        } else {
            struct sha256 c;
            sha256_init(&c);
            size_t got;
            while ((got = fread(chunk, 1, 1 << 20, f)) > 0)
                sha256_update(&c, chunk, got);
            if (ferror(f))
                rc = lscat_error_set("cannot read '%s': %s", path, strerror(errno));
            fclose(f);
            unsigned char d[32];
            char hex[65];
            sha256_final(&c, d);
            sha256_to_hex(hex, d);
            buf_addf(out, "%s  %s\n", hex, names[i]);
        }
        free(path);
    }
    free(chunk);
    return rc;
}

static int write_text_file(const char *dir, const char *name, const struct buf *b)
{
    char *path = fs_join(dir, name);
    int rc = fs_write_atomic(path, b->data, b->len);
    free(path);
    return rc;
}

static int64_t file_size(const char *dir, const char *name)
{
    char *path = fs_join(dir, name);
    FILE *f = fopen(path, "rb");
    int64_t n = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fclose(f);
    }
    free(path);
    return n;
}

/* README.md, columns.md and SHA256SUMS over every file written. */
static int write_companions(struct store *s, const struct export_options *o,
                            struct export_result *r, const char *now)
{
    const char *names[EXPORT_MAX_TABLES + 2], *known[EXPORT_MAX_TABLES + 2] = { 0 };
    char *owned[EXPORT_MAX_TABLES];
    struct buf b = BUF_INIT;
    int n = 0, rc;
    for (int i = 0; i < r->ntables; i++) {
        owned[i] = export_file_name(r->tables[i], o);
        known[n] = r->sha256[i];
        names[n++] = owned[i];
        r->bytes_written += file_size(o->out_dir, owned[i]);
    }
    columns_markdown(&b);
    rc = write_text_file(o->out_dir, "columns.md", &b);
    names[n++] = "columns.md";
    buf_reset(&b);
    if (rc == 0)
        rc = export_card(&b, s, o, r, now);
    if (rc == 0)
        rc = write_text_file(o->out_dir, "README.md", &b);
    names[n++] = "README.md";
    buf_reset(&b);
    if (rc == 0)
        rc = export_sha256sums(&b, o->out_dir, names, known, n);
    if (rc == 0)
        rc = write_text_file(o->out_dir, "SHA256SUMS", &b);
    for (int i = 0; i < r->ntables; i++)
        free(owned[i]);
    buf_release(&b);
    return rc;
}

/* Is `name` in the comma-separated `list`? */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

int export_check_tables(const char *list)
{
    int ntab;
    const struct columns_table *tabs = columns_tables(&ntab);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (int i = 0; i < ntab; i++)
            found |= strlen(tabs[i].name) == len && strncmp(tabs[i].name, p, len) == 0;
        if (!found)
            return lscat_error_setc(LSCAT_EINVALID, "--tables: no table '%.*s' (tables: kernels, "
                                    "sources, sources_raw, occurrences, repositories, "
                                    "measurements, failures, gpus)",
                                    (int)len, p);
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static int write_export(struct export_result *out, struct store *s, const struct export_options *o);

/* Is s a prefix of "YYYY-MM-DDTHH:MM:SSZ" ending at a field's end, with fields in range? The
 * store's timestamps are such strings, compared as text: anything else filters wrongly. */
int export_check_since(const char *s)
{
    static const char shape[] = "0000-00-00T00:00:00Z";
    static const int ends[] = { 4, 7, 10, 13, 16, 19, 20 };
    static const int lo[] = { 0, 1, 1, 0, 0, 0 }, hi[] = { 9999, 12, 31, 23, 59, 60 };
    size_t len = strlen(s);
    int ok = 0;
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        ok |= len == (size_t)ends[i];
    for (size_t i = 0; ok && i < len; i++)
        ok = shape[i] == '0' ? isdigit((unsigned char)s[i]) != 0 : s[i] == shape[i];
    for (int f = 0, at = 0; ok && at < (int)len && f < 6; at = ends[f++] + 1) {
        int v = atoi(s + at);
        ok = v >= lo[f] && v <= hi[f];
    }
    if (!ok)
        return lscat_error_setc(LSCAT_EINVALID, "--since: '%s' is not a UTC date or time "
                                "(YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS][Z], e.g. 2026-11-01)", s);
    return 0;
}

int export_run(struct export_result *out, struct store *s, const struct export_options *o)
{
    struct export_options in_tmp = *o;
    char *tmp = NULL;
    memset(out, 0, sizeof(*out));
    int rc = place_begin(&tmp, o->out_dir);
    if (rc == 0) {
        in_tmp.out_dir = tmp;
        rc = write_export(out, s, &in_tmp);
    }
    if (rc == 0)
        rc = place_finish(tmp, o->out_dir);
    if (rc < 0)
        place_abort(tmp);
    free(tmp);
    return rc;
}

/* Everything into o->out_dir, a fresh folder. */
static int write_export(struct export_result *out, struct store *s, const struct export_options *o)
{
    int ntab, rc;
    const struct columns_table *tabs = columns_tables(&ntab);
    char now[32], schema[16], filters[512];
    fs_utc_now(now);
    snprintf(schema, sizeof(schema), "%d", store_schema_version(s));
    snprintf(filters, sizeof(filters), "gpu=%s since=%s kernels_only=%d", o->gpu ? o->gpu : "*",
             o->since ? o->since : "*", o->kernels_only);
    if (o->since && (rc = export_check_since(o->since)) < 0)
        return rc;
    if ((rc = fs_mkdirs(o->out_dir, 0755)) < 0)
        return rc;
    /* One deferred read transaction: every table comes from the same snapshot. */
    if ((rc = store_exec(s, "BEGIN")) < 0)
        return rc;
    for (int i = 0; i < ntab && rc == 0; i++) {
        if ((o->kernels_only && !tabs[i].code_corpus) || (o->tables && !listed(o->tables, tabs[i].name)))
            continue;
        const char *kv[] = { "lscat.schema_version", schema, "lscat.version", o->lscat_version,
                             "lscat.export_time", now, "lscat.table", tabs[i].name,
                             "lscat.filters", filters, NULL };
        int slot = out->ntables++;
        out->tables[slot] = tabs[i].name;
        rc = export_table(s, &tabs[i], o, out, slot, kv);
    }
    if (rc == 0)
        rc = write_companions(s, o, out, now);
    if (out->sources_missing > 10)
        log_warn("%lld kernel sources were missing in all", (long long)out->sources_missing);
    store_rollback(s); /* ends the read transaction; nothing was written */
    return rc;
}
