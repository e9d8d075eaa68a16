/* Seer's store rows and their CSV form. Writes go through store_run (the caller holds the
 * transaction); the CSV reader takes RFC 4180 quoting and names file and line in its errors. */
#include "seer/db.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int seer_db_put_gpu(int64_t *id_out, struct store *s, const struct seer_db_gpu *g)
{
    char now[32], cuda[32];
    fs_utc_now(now);
    snprintf(cuda, sizeof(cuda), "%d", g->cuda_runtime);
    if (store_run(s, "INSERT INTO gpus(uuid, name, compute_cap, memory_bytes, sm_count, "
                  "driver_version, cuda_version, first_seen) VALUES (?,?,?,?,?,?,?,?) "
                  "ON CONFLICT(uuid) DO NOTHING", "tttiItt" "t", g->uuid, g->name, g->cc,
                  (int64_t)g->memory_bytes, g->sm_count, g->driver,
                  g->cuda_runtime ? cuda : NULL, now) < 0)
        return LSCAT_ERR;
    return store_query_int(id_out, s, "SELECT id FROM gpus WHERE uuid = ?", "t", g->uuid);
}

int seer_db_put_matrix(int64_t *id_out, struct store *s, const struct seer_db_matrix *m)
{
    char now[32];
    fs_utc_now(now);
    if (store_run(s, "INSERT INTO seer_matrices(name, source, path, spec, rows, cols, nnz, "
                  "row_max, row_min, row_mean, row_var, added_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
                  "ON CONFLICT(name) DO UPDATE SET source = excluded.source, path = excluded.path, "
                  "spec = excluded.spec, rows = excluded.rows, cols = excluded.cols, "
                  "nnz = excluded.nnz, row_max = excluded.row_max, row_min = excluded.row_min, "
                  "row_mean = excluded.row_mean, row_var = excluded.row_var",
                  "ttttiiiddddt", m->name, m->source, m->path, m->spec, (int64_t)m->f.rows,
                  (int64_t)m->f.cols, (int64_t)m->f.nnz, m->f.row_max, m->f.row_min,
                  m->f.row_mean, m->f.row_var, now) < 0)
        return LSCAT_ERR;
    return store_query_int(id_out, s, "SELECT id FROM seer_matrices WHERE name = ?", "t", m->name);
}

int seer_db_put_result(struct store *s, int64_t matrix_id, int64_t gpu_id,
                       const struct seer_db_result *r, int64_t run_id)
{
    char now[32];
    int ok = !strcmp(r->status, "ok");
    fs_utc_now(now);
    return store_run(s, "INSERT OR REPLACE INTO seer_results(matrix_id, gpu_id, kernel, precision, "
                     "status, error, preprocess_ns, iter_ns, iter_min_ns, iter_mad_ns, samples, "
                     "launches_per_sample, max_rel_err, measured_at, run_id) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,NULLIF(?, 0))", "iitttt" "dddd" "II" "dt" "i",
                     matrix_id, gpu_id, r->kernel, r->precision, r->status, r->error,
                     r->preprocess_ns, ok ? r->iter_ns : NAN, ok ? r->iter_min_ns : NAN,
                     ok ? r->iter_mad_ns : NAN, r->samples, r->launches_per_sample,
                     r->max_rel_err, now, run_id) < 0 ? LSCAT_ERR : 0;
}

int seer_db_put_feature_cost(struct store *s, int64_t matrix_id, int64_t gpu_id,
                             double feature_ns, const struct seer_async_costs *a, int agrees)
{
    char now[32];
    fs_utc_now(now);
    return store_run(s, "INSERT INTO seer_feature_costs(matrix_id, gpu_id, feature_ns, "
                     "async_float_ns, async_double_ns, resident_float_ns, resident_double_ns, "
                     "sync_upload_float_ns, sync_upload_double_ns, agrees, measured_at) VALUES "
                     "(?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(matrix_id, gpu_id) DO "
                     "UPDATE SET feature_ns = excluded.feature_ns, "
                     "async_float_ns = coalesce(excluded.async_float_ns, async_float_ns), "
                     "async_double_ns = coalesce(excluded.async_double_ns, async_double_ns), "
                     "resident_float_ns = coalesce(excluded.resident_float_ns, resident_float_ns), "
                     "resident_double_ns = coalesce(excluded.resident_double_ns, resident_double_ns), "
                     "sync_upload_float_ns = coalesce(excluded.sync_upload_float_ns, "
                     "sync_upload_float_ns), sync_upload_double_ns = "
                     "coalesce(excluded.sync_upload_double_ns, sync_upload_double_ns), "
                     "agrees = excluded.agrees, measured_at = excluded.measured_at",
                     "iidddddddIt", matrix_id, gpu_id, feature_ns, a->upload[0], a->upload[1],
                     a->resident[0], a->resident[1], a->sync_upload[0], a->sync_upload[1], agrees,
                     now) < 0 ? LSCAT_ERR : 0;
}

int seer_db_matrix_complete(struct store *s, const char *name, int64_t gpu_id,
                            const int *kernels, int nkernels, const char *const *precisions,
                            int nprec)
{
    int64_t n = 0;
    if (store_query_int(&n, s, "SELECT count(*) FROM seer_feature_costs f JOIN seer_matrices m "
                        "ON m.id = f.matrix_id WHERE m.name = ? AND f.gpu_id = ?", "ti", name,
                        gpu_id) < 0)
        return LSCAT_ERR;
    for (int p = 0; n && p < nprec; p++)
        for (int k = 0; n && k < nkernels; k++)
            if (store_query_int(&n, s, "SELECT count(*) FROM seer_results r JOIN seer_matrices m "
                                "ON m.id = r.matrix_id WHERE m.name = ? AND r.gpu_id = ? AND "
                                "r.kernel = ? AND r.precision = ?", "titt", name, gpu_id,
                                seer_kernel_name(kernels[k]), precisions[p]) < 0)
                return LSCAT_ERR;
    return n > 0;
}

int seer_db_matrix_has_feature_cost(struct store *s, const char *name, int64_t gpu_id)
{
    int64_t n = 0;
    if (store_query_int(&n, s, "SELECT count(*) FROM seer_feature_costs f JOIN seer_matrices m "
                        "ON m.id = f.matrix_id WHERE m.name = ? AND f.gpu_id = ?", "ti", name,
                        gpu_id) < 0)
        return LSCAT_ERR;
    return n > 0;
}

/* ---- CSV */


static void csv_field(struct buf *b, const char *s, int last)
{
    if (s && strpbrk(s, ",\"\n\r")) {
        buf_addch(b, '"');
        for (; *s; s++) {
            if (*s == '"')
                buf_addch(b, '"');
            buf_addch(b, *s == '\n' || *s == '\r' ? ' ' : *s);
        }
        buf_addch(b, '"');
    } else if (s) {
        buf_adds(b, s);
    }
    buf_addch(b, last ? '\n' : ',');
}

static void csv_num(struct buf *b, struct store_stmt *st, int col, int last)
{
    if (!store_col_is_null(st, col))
        buf_addf(b, "%.17g", store_col_double(st, col));
    buf_addch(b, last ? '\n' : ',');
}

int seer_db_export_csv(struct store *s, const char *path, const char *gpu_filter, int64_t *rows)
{
    struct store_stmt *st = NULL;
    struct buf b = BUF_INIT;
    int rc;
    *rows = 0;
    buf_addf(&b, "%s\n", SEER_CSV_HEADER);
    rc = store_prepare(&st, s, "SELECT m.name, m.source, m.spec, m.rows, m.cols, m.nnz, m.row_max, "
                       "m.row_min, m.row_mean, m.row_var, g.name, g.uuid, f.feature_ns, r.kernel, "
                       "r.precision, r.status, r.preprocess_ns, r.iter_ns, r.max_rel_err, r.error, "
                       "CASE r.precision WHEN 'float' THEN f.async_float_ns ELSE f.async_double_ns "
                       "END, CASE r.precision WHEN 'float' THEN f.resident_float_ns ELSE "
                       "f.resident_double_ns END, CASE r.precision WHEN 'float' THEN "
                       "f.sync_upload_float_ns ELSE f.sync_upload_double_ns END FROM seer_results r JOIN seer_matrices m ON m.id = r.matrix_id "
                       "JOIN gpus g ON g.id = r.gpu_id LEFT JOIN seer_feature_costs f "
                       "ON f.matrix_id = r.matrix_id AND f.gpu_id = r.gpu_id "
                       "WHERE ? IS NULL OR instr(lower(g.name), lower(?)) > 0 "
                       "ORDER BY g.name, m.name, r.precision, r.kernel");
    if (rc < 0 || (rc = store_bind(st, "tt", gpu_filter, gpu_filter)) < 0)
        goto done;
    while ((rc = store_step(st)) == STORE_ROW) {
        for (int c = 0; c < SEER_CSV_COLS; c++) {
            int text = c <= 2 || (c >= 10 && c <= 11) || (c >= 13 && c <= 15) || c == 19;
            if (text)
                csv_field(&b, store_col_text(st, c), c == SEER_CSV_COLS - 1);
            else
                csv_num(&b, st, c, c == SEER_CSV_COLS - 1);
        }
        (*rows)++;
    }
    if (rc == STORE_DONE && (rc = fs_mkdirs_parent(path)) == 0)
        rc = fs_write_atomic(path, b.data, b.len);
done:
    store_finalize(st);
    buf_release(&b);
    return rc < 0 ? rc : 0;
}
