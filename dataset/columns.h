/* The published dataset's tables and columns: one definition used by the Parquet and CSV
 * writers, by the export's SQL, and by the generated columns.md, so the documentation can
 * never drift from the files. */
#ifndef LSCAT_DATASET_COLUMNS_H
#define LSCAT_DATASET_COLUMNS_H

#include "common/buf.h"
#include "dataset/parquet.h"

/* Columns whose value is not the SQL value itself. In CSV every list is its JSON array text. */
enum columns_special {
    COLUMNS_SQL = 0,
    COLUMNS_SOURCE,     /* SQL gives the kernel's folder; the value is its kernel.cu as UTF-8 */
    COLUMNS_SOURCE_RAW, /* SQL gives the kernel's folder; the exact bytes of kernel.cu (the
                         * table keeps only kernels whose source is not valid UTF-8) */
    COLUMNS_LIST_COMMA, /* SQL gives comma-separated words; Parquet: LIST of STRING */
    COLUMNS_LIST_JSON,  /* SQL gives a JSON array of strings; Parquet: LIST of STRING */
    COLUMNS_PARAMS,     /* SQL gives isolate's JSON array of parameter objects; Parquet: LIST of
                         * structs with the fields of columns_param_fields() */
};

struct columns_col {
    const char *name;
    enum parquet_type type; /* of the value, or of a list's elements; PARQUET_TIMESTAMP columns
                             * are ISO-8601 text in the store and in CSV */
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
    int raw_sources;     /* 1: only rows whose kernel.cu is not valid UTF-8 (sources_raw) */
};

/* The tables, in export order. Borrowed, static. */
const struct columns_table *columns_tables(int *n_out);
/* The table named `name`, or NULL. */
const struct columns_table *columns_table(const char *name);
/* Append columns.md (Markdown: per table, every column's type, nullability, unit, meaning). */
void columns_markdown(struct buf *out);
/* "INT64", "STRING (UTF-8)", "LIST<STRING>", ...: the column's Parquet type as columns.md
 * names it. Static. */
const char *columns_type_name(const struct columns_col *c);
/* 1 when the column is a Parquet LIST. */
int columns_is_list(const struct columns_col *c);
/* The fields of one parameter in kernels.params (Parquet: the list's struct), in order; `name`
 * is also the key in isolate's JSON, except `pointer` (kind = "pointer"). Borrowed, static. */
const struct columns_col *columns_param_fields(int *n_out);

#endif
