/* The data card (README.md) written beside every export: what the files are, where the data
 * came from, how it was measured, what it lacks, and under which licenses the code stands.
 * Numbers come from the store snapshot the export read, so the card matches the files. */
#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "dataset/columns.h"
#include "dataset/export.h"

#include <stdlib.h>
#include <string.h>

/* A Markdown table from a query whose columns are all shown as text. */
static int md_table(struct buf *out, struct store *s, const char *sql, const char *header)
{
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, s, sql), step, rows = 0;
    if (rc < 0)
        return rc;
    int n = store_col_count(st);
    buf_addf(out, "\n| %s |\n|", header);
    for (int i = 0; i < n; i++)
        buf_adds(out, "---|");
    buf_addch(out, '\n');
    while ((step = store_step(st)) == STORE_ROW) {
        buf_adds(out, "|");
        for (int i = 0; i < n; i++) {
            const char *v = store_col_text(st, i);
            buf_addf(out, " %s |", v ? v : "");
        }
        buf_addch(out, '\n');
        rows++;
    }
    if (rows == 0)
        buf_adds(out, "| (none) |\n");
    store_finalize(st);
    return step < 0 ? step : 0;
}

static int64_t count(struct store *s, const char *sql)
{
    int64_t n = 0;
    if (store_query_int(&n, s, sql, "") < 0)
        return -1;
    return n;
}

static const char parquet_loading[] =
    "\n## Loading\n\nEvery table loads in one line (shown for `measurements`; the same for "
    "the others). Timestamps load as UTC timestamps, lists as lists, `kernels.params` as a "
    "list of structs (one per parameter):\n\n```\n"
    "pandas:  pd.read_parquet('measurements.parquet')\n"
    "pyarrow: pyarrow.parquet.read_table('measurements.parquet')\n"
    "polars:  pl.read_parquet('measurements.parquet')\n"
    "nodejs-polars: pl.readParquet('measurements.parquet')\n"
    "DuckDB:  SELECT * FROM 'measurements.parquet';\n"
    "DuckDB parameters: SELECT id, unnest(params, recursive := true) FROM 'kernels.parquet';\n"
    "```\n\n"
    "pandas: `df.explode('params')` gives one row per parameter. `sources_raw.source_raw` is "
    "BINARY (the exact bytes of the few sources that are not UTF-8); nodejs-polars turns BINARY "
    "into JavaScript only as a list of bytes: `df.withColumns(pl.col('source_raw')"
    ".cast(pl.List(pl.UInt8)))`.\n";

/* The DuckDB type of a column as read from CSV. */
static const char *duckdb_type(const struct columns_col *c)
{
    if (columns_is_list(c) || c->type == PARQUET_STRING || c->type == PARQUET_BYTES)
        return "VARCHAR";
    switch (c->type) {
    case PARQUET_BOOLEAN: return "BOOLEAN";
    case PARQUET_INT32: return "INTEGER";
    case PARQUET_INT64: return "BIGINT";
    case PARQUET_DOUBLE: return "DOUBLE";
    default: return "TIMESTAMPTZ";
    }
}

/* Per table: DuckDB's read_csv with every column's type (so "535.10" stays text and no line
 * is sniffed), and pandas' read_csv keeping text columns text. */
static void csv_loading(struct buf *out, const struct export_options *o,
                        const struct export_result *r)
{
    buf_adds(out, "\n## Loading\n\nRFC 4180 CSV: null is an empty field, an empty string "
                  "is `\"\"`, lists are JSON arrays, timestamps ISO-8601 UTC. Let no reader "
                  "guess types (DuckDB and pandas read `535.10`, a driver version, as the "
                  "number 535.1): one line per table with every column's type, and "
                  "`max_line_size` where a row is longer than DuckDB's 2 MB default:\n\n```\n");
    for (int i = 0; i < r->ntables; i++) {
        const struct columns_table *t = columns_table(r->tables[i]);
        char *file = export_file_name(t->name, o);
        buf_addf(out, "DuckDB: SELECT * FROM read_csv('%s', header = true, "
                      "allow_quoted_nulls = false", file);
        if (r->max_row_bytes[i] > 2000000)
            buf_addf(out, ", max_line_size = %lld",
                     (long long)((r->max_row_bytes[i] >> 20) + 2) << 20);
        buf_adds(out, ", types = {");
        for (int c = 0; c < t->ncols; c++)
            buf_addf(out, "%s'%s': '%s'", c ? ", " : "", t->cols[c].name, duckdb_type(&t->cols[c]));
        buf_addf(out, "});\npandas: pd.read_csv('%s', keep_default_na=False, na_values=[''], "
                      "dtype={", file);
        for (int c = 0, n = 0; c < t->ncols; c++)
            if (!strcmp(duckdb_type(&t->cols[c]), "VARCHAR"))
                buf_addf(out, "%s'%s': str", n++ ? ", " : "", t->cols[c].name);
        buf_adds(out, "})\n");
        free(file);
    }
    buf_adds(out, "```\n");
}

static void files_section(struct buf *out, const struct export_options *o,
                          const struct export_result *r)
{
    buf_adds(out, "\n## Files\n\n| file | rows | table |\n|---|---|---|\n");
    for (int i = 0; i < r->ntables; i++) {
        char *name = export_file_name(r->tables[i], o);
        buf_addf(out, "| `%s` | %lld | %s |\n", name, (long long)r->rows[i], r->tables[i]);
        free(name);
    }
    buf_adds(out, "\n`columns.md` describes every column (type, unit, meaning). `SHA256SUMS` "
                  "holds the files' checksums: `sha256sum -c SHA256SUMS`.\n");
    if (o->format == EXPORT_PARQUET)
        buf_adds(out, parquet_loading);
    else
        csv_loading(out, o, r);
}

static int provenance_section(struct buf *out, struct store *s)
{
    buf_addf(out, "\n## Provenance\n\nRepositories with CUDA evidence were found in GH Archive "
                  "hours (%lld hours scanned), imported lists or GitHub search; each "
                  "was fetched at one commit, every `__global__` kernel was isolated with "
                  "libclang into a self-contained file (its repository-local closure, no "
                  "outside code), built with nvcc (with a repair loop), probe-run in a "
                  "sandbox, then timed over matrix sizes x block shapes.\n",
             (long long)count(s, "SELECT count(*) FROM gha_hours WHERE status = 'done'"));
    char *first = NULL, *last = NULL;
    store_query_text(&first, s, "SELECT min(hour) FROM gha_hours WHERE status = 'done'", "");
    store_query_text(&last, s, "SELECT max(hour) FROM gha_hours WHERE status = 'done'", "");
    if (first)
        buf_addf(out, "\nGH Archive hours: first %s, last %s.\n", first, last ? last : first);
    free(first);
    free(last);
    int rc = md_table(out, s, "SELECT source, fetch_status, count(*) FROM repos "
                              "GROUP BY source, fetch_status ORDER BY source, fetch_status",
                      "repository source | fetch status | repositories");
    if (rc == 0)
        rc = md_table(out, s, "SELECT status, count(*) FROM kernels GROUP BY status "
                              "ORDER BY status", "kernel status | kernels");
    if (rc == 0)
        rc = md_table(out, s, "SELECT stage, count(*), min(started_at), max(ended_at), "
                              "max(lscat_version) FROM stage_runs GROUP BY stage ORDER BY "
                              "min(started_at)", "stage | runs | first started | last ended | "
                              "lscat version");
    return rc;
}

static const char methodology[] =
    "\n## Timing methodology\n\n"
    "Every configuration runs in the kernel's harness (loaded into one long-lived runner "
    "process per GPU, or as its own process), with one GPU held by one kernel at a time. Grid "
    "rule, from the kernel's `indexing`: a kernel that indexes y (2d, 3d) gets grid "
    "(ceil(W/BX), ceil(H/BY), 1) for every block shape, so its (BX, 1) rows still cover "
    "W x H; a 1D kernel's 1D blocks get (ceil(W*H/BX), 1, 1) (a 2D block on a 1D kernel, as "
    "LS-CAT's shape list gives it, gets the 2D grid). After warm-up launches, launches are batched so that "
    "each timed sample (CUDA events around the batch) is long enough to resolve; a sample is "
    "the batch time divided by `launches_per_sample`. A batch is captured once into a CUDA "
    "graph of `graph_nodes` launches and a sample launches that graph, so the kernels run "
    "back to back without waiting for the host (`graph_nodes` 0: launched one by one). "
    "Samples repeat until their spread "
    "(MAD relative to the median) is small or a cap is reached. `median_ns` is the median "
    "over samples, with min, max, mean, standard deviation, MAD and the 10th/90th percentiles "
    "beside it; SM/memory clocks and temperature are recorded before and after. Clocks are "
    "not locked unless `clocks_locked` says so; `l2_flush` says whether L2 was flushed "
    "before each sample. Every launch is checked for errors; configurations that failed "
    "carry their status and error instead of times. Re-measurements supersede older rows; "
    "only current rows are exported.\n\n"
    "## Output check\n\n"
    "A block shape is only worth learning from if it does the kernel's whole work. Per "
    "matrix size the harness runs a reference block (256x1x1 for 1D kernels, 16x16x1 for 2D: "
    "the shapes the probe ran clean; the next of 128, 512, 64, 1024, 32 wide or 8, 32, 24 "
    "square when that one differs between its own runs, writes nothing or writes outside its "
    "buffers) twice on the size's inputs, then runs every timed "
    "configuration once more on the same inputs, outside the timed region, and compares each "
    "buffer the kernel may write (its non-const pointers; the first W*H elements) with the "
    "reference's: integers "
    "exactly, floats within 1e-3 relative + 1e-5 absolute (doubles 1e-9 + 1e-12), which "
    "accepts a reassociated sum but not a missing row or block. `output_check` says `match`, "
    "`mismatch`, `nondeterministic` (the reference's two runs differ: atomics, races) or "
    "`not_checked`, with `output_check_why`; `check_ns` is its cost. Use `match` rows for "
    "\"which block is best\" questions; a `mismatch` row's time is the time of other work.\n";

static void limitations_section(struct buf *out, struct store *s, const struct export_result *r)
{
    buf_adds(out, "\n## Known limitations\n\n"
                  "- Kernels are timed with synthetic inputs generated from their parameter "
                  "model (sizes derived from the matrix size), not with their applications' "
                  "data; data-dependent kernels may behave differently in their real "
                  "programs.\n"
                  "- One measurement per configuration and GPU; clocks were not locked on "
                  "shared machines, so boost behaviour and temperature affect the times "
                  "(the recorded clocks let you filter).\n"
                  "- Only kernels that compile with the CUDA toolkit used and run without error "
                  "in a probe are measured: the corpus is biased toward code that still builds.\n"
                  "- Repository licenses are inferred from license files; where `license` is "
                  "null no license was identified.\n");
    if (r->sources_missing)
        buf_addf(out, "- %lld kernels have no source in this export (kernel.cu was missing "
                      "from the work folder).\n", (long long)r->sources_missing);
    if (r->sources_not_utf8)
        buf_addf(out, "- %lld kernel sources are not valid UTF-8: `sources.source` shows their "
                      "bytes readably, the table `sources_raw` holds them exactly.\n",
                 (long long)r->sources_not_utf8);
    int64_t bad = count(s, "SELECT count(*) FROM measurements WHERE superseded = 0 AND "
                           "status != 'ok'");
    int64_t skipped = count(s, "SELECT count(*) FROM measurements WHERE superseded = 0 AND "
                               "status = 'skipped'");
    int64_t mismatch = count(s, "SELECT count(*) FROM measurements WHERE superseded = 0 AND "
                                "status = 'ok' AND output_check = 'mismatch'");
    int64_t unchecked = count(s, "SELECT count(*) FROM measurements WHERE superseded = 0 AND "
                                 "status = 'ok' AND output_check IN ('not_checked', "
                                 "'nondeterministic')");
    if (mismatch > 0)
        buf_addf(out, "- %lld current `ok` measurements are output-check `mismatch`es: the "
                      "configuration ran but did not compute what the reference block did "
                      "(e.g. a 1D block shape on a 2D kernel under LS-CAT's grid rule); their "
                      "times are not the kernel's.\n", (long long)mismatch);
    if (unchecked > 0)
        buf_addf(out, "- %lld current `ok` measurements are `not_checked` or `nondeterministic` "
                      "(see `output_check_why`: measured before the check existed, no written "
                      "buffer, a reference that differs between runs).\n", (long long)unchecked);
    if (bad > 0)
        buf_addf(out, "- %lld current measurements are not `ok` (errors, crashes, timeouts, "
                      "invalid configurations, skipped shapes); filter on `status`.\n",
                 (long long)bad);
    if (skipped > 0)
        buf_addf(out, "- %lld of them are `skipped`: not run, because their block shape failed "
                      "with a sticky CUDA error (e.g. a 1D block overflowing a 2D kernel's "
                      "fixed shared-memory tile) at a smaller size of the same kernel; `error` "
                      "names that size. They say nothing about the time the shape would take.\n",
                 (long long)skipped);
}

int export_card(struct buf *out, struct store *s, const struct export_options *o,
                const struct export_result *r, const char *export_time)
{
    buf_addf(out, "# lscat CUDA launch-configuration dataset\n\n"
                  "Exported %s by lscat %s from a store of schema version %d, as %s%s. "
                  "Filters: GPU %s, since %s%s.\n",
             export_time, o->lscat_version, store_schema_version(s),
             o->format == EXPORT_PARQUET ? "Parquet (ZSTD)" : "CSV",
             o->format != EXPORT_CSV ? "" : o->compress == 1 ? " (gzip)" : o->compress == 2 ? " (zstd)" : "", o->gpu ? o->gpu : "all",
             o->since ? o->since : "the beginning", o->kernels_only ? ", code corpus only" : "");
    buf_adds(out, "\nIt re-creates and extends LS-CAT (Bjertnes, Torring, Elster: 19,683 kernels, "
                  "5,028,536 runtimes): CUDA kernels harvested from public GitHub repositories, "
                  "isolated, built, and timed over matrix sizes and thread-block shapes.\n");
    files_section(out, o, r);
    int rc = provenance_section(out, s);
    if (rc == 0) {
        buf_adds(out, "\nThe output check of the current `ok` measurements (section \"Output "
                      "check\" below):\n");
        rc = md_table(out, s, "SELECT output_check, count(*), count(DISTINCT kernel_id) FROM "
                              "measurements WHERE superseded = 0 AND status = 'ok' GROUP BY 1 "
                              "ORDER BY 1", "output check | rows | kernels");
    }
    if (rc == 0) {
        buf_adds(out, "\n## GPUs\n");
        rc = md_table(out, s, "SELECT g.name, g.compute_cap, g.driver_version, g.cuda_version,"
                              " coalesce(a.n, 0) FROM gpus g LEFT JOIN (SELECT gpu_id, count(*)"
                              " AS n FROM measurements WHERE superseded = 0 GROUP BY gpu_id) a"
                              " ON a.gpu_id = g.id ORDER BY g.name",
                      "model | compute capability | driver | CUDA | current measurements");
    }
    if (rc < 0)
        return rc;
    buf_adds(out, methodology);
    limitations_section(out, s, r);
    buf_adds(out, "\n## Licenses\n\nEach kernel's source is an excerpt of its repositories' "
                  "code and stays under their licenses (see `occurrences` and "
                  "`repositories.license`); the measurements and metadata are lscat's output. "
                  "Repositories with kernels, by license:\n");
    return md_table(out, s, "SELECT coalesce(r.license_spdx, '(unknown)'), count(*) FROM repos r "
                            "WHERE r.id IN (SELECT s.repo_id FROM kernel_occurrences o JOIN "
                            "sources s ON s.id = o.source_id) GROUP BY 1 ORDER BY 2 DESC, 1",
                    "license (SPDX) | repositories");
}
