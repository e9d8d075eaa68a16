/* The export's list columns in Parquet: a JSON array of strings, comma-separated words, or
 * isolate's parameter model (a JSON array of objects) turned into one LIST value of a row. */
#ifndef LSCAT_DATASET_NESTED_H
#define LSCAT_DATASET_NESTED_H

#include "dataset/columns.h"
#include "dataset/parquet.h"

#include <stddef.h>

/* Write `text` (len bytes, as the column's SQL gives it) as list column `col` of the current
 * row, by the column's kind (COLUMNS_LIST_COMMA, COLUMNS_LIST_JSON, COLUMNS_PARAMS). Returns 0
 * or LSCAT_EINVALID with a message naming what in the text is not what the kind needs. */
int nested_put_list(struct parquet_writer *w, int col, const struct columns_col *c,
                    const char *text, size_t len);

/* The Parquet columns of a table (lists and their struct fields included) for the writer. */
void nested_parquet_columns(struct parquet_column *out, const struct columns_table *t);

#endif
