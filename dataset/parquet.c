/* The Parquet file writer's front: the schema (top-level columns expanded into leaf columns,
 * with their maximum repetition and definition levels), and the values the caller adds row by
 * row, buffered per leaf with their levels until parquet_page.c writes the row group. Memory is
 * bounded by the row-group limits in parquet_options. Layout per the Apache Parquet spec. */
#include "dataset/parquet.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "dataset/parquet_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the Parquet writer stores values with memcpy: little-endian hosts only"
#endif

int parquet_fixed_bytes(enum parquet_type t)
{
    switch (t) {
    case PARQUET_BOOLEAN: return 1;
    case PARQUET_INT32: return 4;
    case PARQUET_INT64: case PARQUET_DOUBLE: case PARQUET_TIMESTAMP: return 8;
    default: return 0;
    }
}

static void leaf_init(struct pleaf *l, enum parquet_type type, int dictionary)
{
    memset(l, 0, sizeof(*l));
    l->type = type;
    buf_init(&l->plain, 0);
    buf_init(&l->smin, 0);
    buf_init(&l->smax, 0);
    parquet_dict_init(&l->dict, type == PARQUET_BOOLEAN ? 0 : parquet_fixed_bytes(type));
    l->dict.on = dictionary && type != PARQUET_BOOLEAN;
}

static int check_column(const char *path, const struct parquet_column *c)
{
    if (!c->list && c->nfields)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' has fields but is "
                                "not a list", path, c->name);
    if (c->nfields < 0 || c->nfields > PARQUET_MAX_FIELDS)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' has %d fields (at "
                                "most %d)", path, c->name, c->nfields, PARQUET_MAX_FIELDS);
    for (int i = 0; i < c->nfields; i++)
        if (c->fields[i].list || c->fields[i].nfields)
            return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': field '%s.%s' is nested "
                                    "(not supported)", path, c->name, c->fields[i].name);
    return 0;
}

/* Copy the column and add its leaves: plain (1 leaf, def <= 1), list of values (path
 * name.list.element), list of structs (one leaf per field, name.list.element.field). */
static void add_field(struct parquet_writer *w, struct pfield *f, const struct parquet_column *c)
{
    f->def = *c;
    f->def.name = xstrdup(c->name);
    f->def.fields = NULL;
    struct parquet_column *fs = c->nfields ? xcalloc((size_t)c->nfields, sizeof(*fs)) : NULL;
    for (int i = 0; i < c->nfields; i++) {
        fs[i] = c->fields[i];
        fs[i].name = xstrdup(c->fields[i].name);
    }
    f->def.fields = fs;
    f->leaf0 = w->nleaves;
    f->nleaves = c->nfields ? c->nfields : 1;
    for (int i = 0; i < f->nleaves; i++) {
        struct pleaf *l = &w->leaf[w->nleaves++];
        leaf_init(l, fs ? fs[i].type : c->type, w->o.dictionary);
        l->path[l->npath++] = f->def.name;
        if (!c->list) {
            l->max_def = c->nullable;
            continue;
        }
        l->path[l->npath++] = "list";
        l->path[l->npath++] = "element";
        l->max_rep = 1;
        l->max_def = c->nullable + 1;
        if (fs) {
            l->path[l->npath++] = fs[i].name;
            l->max_def += fs[i].nullable;
        }
    }
}

static int open_columns(struct parquet_writer *w, const char *path,
                        const struct parquet_column *cols, int ncols)
{
    int nleaves = 0;
    for (int i = 0; i < ncols; i++) {
        if (check_column(path, &cols[i]) < 0)
            return LSCAT_EINVALID;
        nleaves += cols[i].nfields ? cols[i].nfields : 1;
    }
    w->fld = xcalloc((size_t)ncols, sizeof(*w->fld));
    w->leaf = xcalloc((size_t)nleaves, sizeof(*w->leaf));
    for (int i = 0; i < ncols; i++) {
        add_field(w, &w->fld[i], &cols[i]);
        w->nfields++;
    }
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
    buf_init(&w->rg_meta, 0);
    buf_init(&w->page, 0);
    buf_init(&w->comp, 0);
    buf_init(&w->hdr, 0);
    int rc = open_columns(w, path, cols, ncols);
    if (rc == 0 && w->o.zstd_level)
        w->z = ZSTD_createCCtx();
    if (rc == 0 && !(w->f = fopen(w->tmp, "wb")))
        rc = lscat_error_set("cannot create '%s': %s", w->tmp, strerror(errno));
    if (rc == 0) {
        setvbuf(w->f, NULL, _IOFBF, 1 << 20);
        rc = parquet_write_raw(w, "PAR1", 4);
    }
    if (rc < 0) {
        parquet_writer_abort(w);
        return rc;
    }
    *out = w;
    return 0;
}

static void free_writer(struct parquet_writer *w)
{
    for (int i = 0; i < w->nleaves; i++) {
        struct pleaf *l = &w->leaf[i];
        buf_release(&l->plain);
        buf_release(&l->smin);
        buf_release(&l->smax);
        free(l->defs);
        free(l->reps);
        parquet_dict_release(&l->dict);
    }
    for (int i = 0; i < w->nfields; i++) {
        for (int k = 0; k < w->fld[i].def.nfields; k++)
            free((char *)w->fld[i].def.fields[k].name);
        free((void *)w->fld[i].def.fields);
        free((char *)w->fld[i].def.name);
    }
    for (int i = 0; i < w->nkv; i++)
        free(w->kv[i]);
    free(w->kv);
    free(w->fld);
    free(w->leaf);
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

/* ---------------------------------------------------------------- levels and values */

/* One level entry of a leaf: a value follows when def == max_def. */
static void add_level(struct parquet_writer *w, struct pleaf *l, int rep, int def)
{
    if (l->max_def || l->max_rep) {
        if (l->nlev + 1 > l->lev_cap) {
            l->lev_cap = l->lev_cap ? l->lev_cap * 2 : 1024;
            l->defs = xrealloc(l->defs, l->lev_cap);
            l->reps = xrealloc(l->reps, l->lev_cap);
        }
        l->defs[l->nlev] = (uint8_t)def;
        l->reps[l->nlev] = (uint8_t)rep;
        l->nlev++;
        w->buffered++;
    }
    l->count++;
    l->nulls += def < l->max_def;
}

static const char *leaf_name(const struct parquet_writer *w, const struct pleaf *l)
{
    (void)w;
    return l->npath == 4 ? l->path[3] : l->path[0];
}

static int type_error(struct parquet_writer *w, struct pleaf *l, const char *what)
{
    return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' does not take %s",
                            w->path, leaf_name(w, l), what);
}

static int leaf_int(struct parquet_writer *w, struct pleaf *l, int64_t v)
{
    enum parquet_type t = l->type;
    if (t == PARQUET_INT32 && (v < INT32_MIN || v > INT32_MAX))
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': %lld does not fit INT32 column "
                                "'%s'", w->path, (long long)v, leaf_name(w, l));
    if (t == PARQUET_BOOLEAN) {
        v = v != 0;
        buf_addch(&l->plain, (int)v);
    } else if (t == PARQUET_INT32) {
        int32_t x = (int32_t)v;
        buf_add(&l->plain, &x, 4);
        parquet_dict_add(&l->dict, &x, 4);
    } else if (t == PARQUET_INT64 || t == PARQUET_TIMESTAMP) {
        buf_add(&l->plain, &v, 8);
        parquet_dict_add(&l->dict, &v, 8);
    } else {
        return type_error(w, l, "integers");
    }
    w->buffered += (size_t)parquet_fixed_bytes(t);
    if (!l->has_minmax || v < l->imin)
        l->imin = v;
    if (!l->has_minmax || v > l->imax)
        l->imax = v;
    l->has_minmax = 1;
    return 0;
}

static int leaf_double(struct parquet_writer *w, struct pleaf *l, double v)
{
    if (l->type != PARQUET_DOUBLE)
        return type_error(w, l, "doubles");
    buf_add(&l->plain, &v, 8);
    parquet_dict_add(&l->dict, &v, 8);
    w->buffered += 8;
    if (!isnan(v)) { /* NaN never enters min/max (the spec's rule) */
        if (!l->has_minmax || v < l->dmin)
            l->dmin = v;
        if (!l->has_minmax || v > l->dmax)
            l->dmax = v;
        l->has_minmax = 1;
    }
    return 0;
}

static int bytes_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int r = memcmp(a, b, alen < blen ? alen : blen);
    return r ? r : (alen < blen ? -1 : alen > blen);
}

static int leaf_bytes(struct parquet_writer *w, struct pleaf *l, const void *data, size_t len)
{
    if (l->type != PARQUET_STRING && l->type != PARQUET_BYTES)
        return type_error(w, l, "byte strings");
    if (len > INT32_MAX)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': a value of %zu bytes in column "
                                "'%s' is over Parquet's 2 GiB limit", w->path, len, leaf_name(w, l));
    uint32_t n = (uint32_t)len;
    buf_add(&l->plain, &n, 4);
    buf_add(&l->plain, data, len);
    parquet_dict_add(&l->dict, data, len);
    w->buffered += len + 4;
    if (!l->has_minmax || bytes_cmp(data, len, l->smin.data, l->smin.len) < 0) {
        buf_reset(&l->smin);
        buf_add(&l->smin, data, len);
    }
    if (!l->has_minmax || bytes_cmp(data, len, l->smax.data, l->smax.len) > 0) {
        buf_reset(&l->smax);
        buf_add(&l->smax, data, len);
    }
    l->has_minmax = 1;
    return 0;
}

static int get_field(struct parquet_writer *w, int col, struct pfield **out)
{
    if (col < 0 || col >= w->nfields)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': no column %d", w->path, col);
    *out = &w->fld[col];
    return 0;
}

/* Where a value given to a put_* setter goes: a plain column's leaf (once per row), or the
 * next element of an open list of values. Adds the level entry. */
static int begin_value(struct parquet_writer *w, int col, struct pleaf **out)
{
    struct pfield *f = NULL;
    if (get_field(w, col, &f) < 0)
        return LSCAT_EINVALID;
    struct pleaf *l = &w->leaf[f->leaf0];
    if (f->def.list && (!f->in_list || f->def.nfields))
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' is a list%s: %s",
                                w->path, f->def.name, f->def.nfields ? " of structs" : "",
                                f->def.nfields ? "use parquet_elem_begin and parquet_field_*"
                                               : "begin it with parquet_list_begin");
    if (f->def.list) {
        add_level(w, l, f->nelems++ ? 1 : 0, l->max_def);
    } else {
        if (f->set)
            return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' set twice in "
                                    "row %lld", w->path, f->def.name, (long long)w->rows);
        f->set = 1;
        add_level(w, l, 0, l->max_def);
    }
    f->entries++;
    *out = l;
    return 0;
}

int parquet_put_int(struct parquet_writer *w, int col, int64_t v)
{
    struct pleaf *l = NULL;
    return begin_value(w, col, &l) < 0 ? LSCAT_EINVALID : leaf_int(w, l, v);
}

int parquet_put_double(struct parquet_writer *w, int col, double v)
{
    struct pleaf *l = NULL;
    return begin_value(w, col, &l) < 0 ? LSCAT_EINVALID : leaf_double(w, l, v);
}

int parquet_put_bytes(struct parquet_writer *w, int col, const void *data, size_t len)
{
    struct pleaf *l = NULL;
    return begin_value(w, col, &l) < 0 ? LSCAT_EINVALID : leaf_bytes(w, l, data, len);
}

int parquet_put_null(struct parquet_writer *w, int col)
{
    struct pfield *f = NULL;
    if (get_field(w, col, &f) < 0)
        return LSCAT_EINVALID;
    if (f->set)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' set twice in row "
                                "%lld", w->path, f->def.name, (long long)w->rows);
    f->set = 1;
    if (!f->def.nullable)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' is required but row "
                                "%lld has no value", w->path, f->def.name, (long long)w->rows);
    for (int i = 0; i < f->nleaves; i++)
        add_level(w, &w->leaf[f->leaf0 + i], 0, 0);
    f->entries++;
    return 0;
}

/* ---------------------------------------------------------------- lists */

int parquet_list_begin(struct parquet_writer *w, int col)
{
    struct pfield *f = NULL;
    if (get_field(w, col, &f) < 0)
        return LSCAT_EINVALID;
    if (!f->def.list)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' is not a list",
                                w->path, f->def.name);
    if (f->set)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' set twice in row "
                                "%lld", w->path, f->def.name, (long long)w->rows);
    f->set = 1;
    f->in_list = 1;
    f->nelems = 0;
    return 0;
}

/* Every field of the open struct element set? */
static int elem_complete(struct parquet_writer *w, struct pfield *f)
{
    for (int i = 0; i < f->nleaves; i++)
        if (w->leaf[f->leaf0 + i].count != f->entries)
            return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': field '%s.%s' not set in "
                                    "element %lld of row %lld", w->path, f->def.name,
                                    f->def.fields[i].name, (long long)f->nelems - 1,
                                    (long long)w->rows);
    return 0;
}

static int open_struct_list(struct parquet_writer *w, int col, struct pfield **out)
{
    if (get_field(w, col, out) < 0)
        return LSCAT_EINVALID;
    if (!(*out)->in_list || !(*out)->def.nfields)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' is not an open list "
                                "of structs", w->path, (*out)->def.name);
    return 0;
}

int parquet_elem_begin(struct parquet_writer *w, int col)
{
    struct pfield *f = NULL;
    if (open_struct_list(w, col, &f) < 0 || elem_complete(w, f) < 0)
        return LSCAT_EINVALID;
    f->nelems++;
    f->entries++;
    return 0;
}

/* The leaf of field `field` of the open element, with its level entry added. */
static int begin_field(struct parquet_writer *w, int col, int field, int present,
                       struct pleaf **out)
{
    struct pfield *f = NULL;
    if (open_struct_list(w, col, &f) < 0)
        return LSCAT_EINVALID;
    if (field < 0 || field >= f->def.nfields)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' has no field %d",
                                w->path, f->def.name, field);
    struct pleaf *l = &w->leaf[f->leaf0 + field];
    if (f->nelems == 0 || l->count != f->entries - 1)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': field '%s.%s' set %s", w->path,
                                f->def.name, f->def.fields[field].name,
                                f->nelems ? "twice in one element" : "before parquet_elem_begin");
    if (!present && !f->def.fields[field].nullable)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': field '%s.%s' is required but "
                                "row %lld has no value", w->path, f->def.name,
                                f->def.fields[field].name, (long long)w->rows);
    add_level(w, l, f->nelems > 1 ? 1 : 0, present ? l->max_def : l->max_def - 1);
    *out = l;
    return 0;
}

int parquet_field_null(struct parquet_writer *w, int col, int field)
{
    struct pleaf *l = NULL;
    return begin_field(w, col, field, 0, &l);
}

int parquet_field_int(struct parquet_writer *w, int col, int field, int64_t v)
{
    struct pleaf *l = NULL;
    return begin_field(w, col, field, 1, &l) < 0 ? LSCAT_EINVALID : leaf_int(w, l, v);
}

int parquet_field_bytes(struct parquet_writer *w, int col, int field, const void *data,
                        size_t len)
{
    struct pleaf *l = NULL;
    return begin_field(w, col, field, 1, &l) < 0 ? LSCAT_EINVALID : leaf_bytes(w, l, data, len);
}

int parquet_list_end(struct parquet_writer *w, int col)
{
    struct pfield *f = NULL;
    if (get_field(w, col, &f) < 0)
        return LSCAT_EINVALID;
    if (!f->in_list)
        return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' has no open list",
                                w->path, f->def.name);
    if (f->def.nfields && elem_complete(w, f) < 0)
        return LSCAT_EINVALID;
    f->in_list = 0;
    if (f->nelems == 0) { /* an empty list: defined (when optional), no element */
        for (int i = 0; i < f->nleaves; i++)
            add_level(w, &w->leaf[f->leaf0 + i], 0, f->def.nullable);
        f->entries++;
    }
    return 0;
}

int parquet_end_row(struct parquet_writer *w)
{
    for (int i = 0; i < w->nfields; i++) {
        struct pfield *f = &w->fld[i];
        if (!f->set || f->in_list)
            return lscat_error_setc(LSCAT_EINVALID, "parquet '%s': column '%s' %s in row %lld",
                                    w->path, f->def.name, f->set ? "list not ended" : "not set",
                                    (long long)w->rows);
    }
    for (int i = 0; i < w->nfields; i++)
        w->fld[i].set = 0;
    w->rows++;
    w->rg_rows++;
    if (w->rg_rows >= w->o.row_group_rows || w->buffered >= w->o.row_group_bytes)
        return parquet_flush_row_group(w);
    return 0;
}

int parquet_writer_close(struct parquet_writer *w)
{
    int rc = parquet_flush_row_group(w);
    if (rc == 0)
        rc = parquet_write_footer(w);
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
