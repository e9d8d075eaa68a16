/* The published dataset's tables and columns: one definition used by the Parquet and CSV
 * writers, by the export's SQL, and by the generated columns.md, so the documentation can
 * never drift from the files. */
#ifndef LSCAT_DATASET_COLUMNS_H
#define LSCAT_DATASET_COLUMNS_H

#include "common/buf.h"
#include "dataset/parquet.h"

/* Columns whose value is not the SQL value itself. */
enum columns_special {
    COLUMNS_SQL = 0,
    COLUMNS_SOURCE,     /* SQL gives the kernel's folder; the value is its kernel.cu as UTF-8 */
    COLUMNS_SOURCE_RAW, /* the exact bytes of kernel.cu when they are not valid UTF-8, else null */
};

struct columns_col {
    const char *name;
    enum parquet_type type;
    int nullable;
    const char *unit;    /* "" when none */
    const char *meaning;
    enum columns_special special;
};

/* Which filters a table's SQL takes: ?1 = --gpu (substring of gpus.name), ?2 = --since. */
struct columns_table {
    const char *name;
    const char *meaning;
    const char *sql;     /* SELECT of exactly the columns below, in order; uses ?1 and ?2 */
    const struct columns_col *cols;
    int ncols;
    int code_corpus;     /* 1: written by --kernels-only too */
};

/* The tables, in export order. Borrowed, static. */
const struct columns_table *columns_tables(int *n_out);
/* The table named `name`, or NULL. */
const struct columns_table *columns_table(const char *name);
/* Append columns.md (Markdown: per table, every column's type, nullability, unit, meaning). */
void columns_markdown(struct buf *out);
/* "INT64", "STRING (UTF-8)", ...: the Parquet type as columns.md names it. */
const char *columns_type_name(enum parquet_type t);

#endif
