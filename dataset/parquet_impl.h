/* Internal to the Parquet writer: the writer's state, shared by parquet.c (schema, values,
 * levels) and parquet_page.c (column chunks, pages, the footer). A top-level column (a field)
 * is stored as one leaf column chunk, or one per struct field for a list of structs; each leaf
 * carries its repetition and definition levels (the Dremel encoding of the Parquet spec). */
#ifndef LSCAT_PARQUET_IMPL_H
#define LSCAT_PARQUET_IMPL_H

#include "common/buf.h"
#include "dataset/parquet.h"
#include "dataset/parquet_encode.h"

#include <stdint.h>
#include <stdio.h>
#include <zstd.h>

/* One column chunk per row group: the values and levels buffered for it. */
struct pleaf {
    const char *path[4]; /* path in the schema (borrowed from its field); npath entries */
    int npath;
    enum parquet_type type;
    int max_def, max_rep;
    struct buf plain;    /* PLAIN bytes of the values (BOOLEAN: one byte each) */
    uint8_t *defs, *reps; /* levels per entry, when max_def / max_rep > 0 */
    size_t nlev, lev_cap;
    int64_t count;       /* level entries (values + nulls + empty lists) in this row group */
    int64_t nulls;       /* entries without a value */
    int has_minmax;
    int64_t imin, imax;
    double dmin, dmax;
    struct buf smin, smax;
    struct parquet_dict dict;
};

/* A top-level column as the caller sees it. */
struct pfield {
    struct parquet_column def; /* name and fields' names owned */
    int leaf0, nleaves;
    int set;             /* given a value (or a list) in the current row */
    int in_list;         /* between parquet_list_begin and parquet_list_end */
    int64_t nelems;      /* elements of the open list */
    int64_t entries;     /* level entries every complete leaf of it has in this row group */
};

struct parquet_writer {
    FILE *f;
    char *path, *tmp;
    uint64_t off;
    struct pfield *fld;
    int nfields;
    struct pleaf *leaf;
    int nleaves;
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

/* parquet_page.c: write the buffered row group (then empty the leaves), and the footer. */
int parquet_flush_row_group(struct parquet_writer *w);
int parquet_write_footer(struct parquet_writer *w);
/* Append bytes to the file (w->off follows). */
int parquet_write_raw(struct parquet_writer *w, const void *p, size_t n);
/* Bytes of a fixed-width value of this type, 0 for byte arrays. */
int parquet_fixed_bytes(enum parquet_type t);
/* Empty a leaf for the next row group. */
void parquet_leaf_reset(struct pleaf *l, int dictionary);

#endif
