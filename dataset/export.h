/* `lscat dataset export`: writes the published tables (columns.h) from the store as Parquet or
 * CSV files into one folder, beside a data card (README.md), columns.md and SHA256SUMS.
 * All tables are read inside one read transaction, so they form one consistent snapshot even
 * while another stage is writing. Rows are streamed: memory is bounded by the row-group size. */
#ifndef LSCAT_EXPORT_H
#define LSCAT_EXPORT_H

#include "common/buf.h"
#include "store/store.h"

#include <stdint.h>

enum export_format { EXPORT_PARQUET = 0, EXPORT_CSV = 1 };

struct export_options {
    const char *out_dir;
    const char *work_dir;      /* where kernels/<...>/kernel.cu live */
    enum export_format format;
    const char *gpu;           /* NULL: every GPU; else a case-insensitive substring of the model */
    const char *since;         /* NULL or an ISO-8601 prefix: measurements/failures from then on */
    int kernels_only;          /* only the code corpus: kernels, occurrences, repositories */
    const char *tables;        /* NULL, or a comma-separated list of the tables to write */
    int compress;              /* CSV only: 0 plain, 1 gzip (.csv.gz), 2 zstd (.csv.zst) */
    int64_t row_group_rows;    /* Parquet row-group bound (rows); 0 = the writer's default */
    size_t row_group_bytes;    /* ... and bytes; 0 = default */
    int dictionary;            /* Parquet: try RLE_DICTIONARY (default 1) */
    int zstd_level;            /* Parquet: 0 = uncompressed; default 3 */
    int byte_stream_split;     /* Parquet: BYTE_STREAM_SPLIT for DOUBLE columns (default 1) */
    const char *lscat_version; /* recorded in the files and the data card */
    int quiet;                 /* no progress bars */
};
#define EXPORT_OPTIONS_INIT { .out_dir = NULL, .work_dir = NULL, .format = EXPORT_PARQUET, \
    .gpu = NULL, .since = NULL, .kernels_only = 0, .tables = NULL, .compress = 0, \
    .row_group_rows = 0, .row_group_bytes = 0, .dictionary = 1, .zstd_level = 3, \
    .byte_stream_split = 1, .lscat_version = "", .quiet = 0 }

#define EXPORT_MAX_TABLES 12

struct export_result {
    int ntables;
    const char *tables[EXPORT_MAX_TABLES]; /* static names */
    int64_t rows[EXPORT_MAX_TABLES];
    int64_t sources_missing;   /* kernels whose kernel.cu could not be read (source is null) */
    int64_t sources_not_utf8;  /* kernels whose kernel.cu is not valid UTF-8 (source_raw set) */
    int64_t bytes_written;     /* of the table files */
    char sha256[EXPORT_MAX_TABLES][65]; /* hex, when computed while writing; else "" */
    int64_t max_row_bytes[EXPORT_MAX_TABLES]; /* CSV: the longest row (line limits of readers) */
};

/* Check a --tables list: every name must be a published table. */
int export_check_tables(const char *list);
/* Check a --since value: a UTC date or time as the store writes them (YYYY, YYYY-MM,
 * YYYY-MM-DD, YYYY-MM-DDTHH[:MM[:SS]][Z]). Returns 0 or LSCAT_EINVALID with the message set. */
int export_check_since(const char *since);

/* Export the tables, then README.md, columns.md and SHA256SUMS, into a temporary folder beside
 * o->out_dir that then replaces it in one step (dataset/place.h): until then the old export
 * stays whole; a failure or a kill leaves it as it was. Returns 0 or a negative code with the
 * message set. */
int export_run(struct export_result *out, struct store *s, const struct export_options *o);

/* The file name of a table in this format, e.g. "measurements.csv.gz". Caller frees. */
char *export_file_name(const char *table, const struct export_options *o);

/* Append "<hex>  <name>\n" lines for `names` (files in `dir`) to out; known[i] (may be NULL,
 * or "" for an entry) is a hash already computed while writing, used instead of reading. */
int export_sha256sums(struct buf *out, const char *dir, const char *const *names,
                      const char *const *known, int n);

/* The data card (README.md) for the result; defined in card.c. */
int export_card(struct buf *out, struct store *s, const struct export_options *o,
                const struct export_result *r, const char *export_time);

#endif
