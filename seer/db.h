/* Seer's rows in the store (schema: seer_matrices, seer_results, seer_feature_costs) and their
 * CSV form: bench writes them, import reads a CSV (a bench table measured elsewhere) into the
 * store, train and eval load one GPU model x precision as a table in memory. */
#ifndef LSCAT_SEER_DB_H
#define LSCAT_SEER_DB_H

#include "seer/csr.h"
#include "seer/kernels.h"
#include "store/store.h"

#include <stdint.h>

struct seer_db_matrix {
    const char *name, *source, *path, *spec; /* path/spec may be NULL */
    struct seer_features f;
};

struct seer_db_gpu {
    const char *uuid, *name, *cc, *driver;
    long long memory_bytes;
    int sm_count, cuda_runtime;
};

struct seer_db_result {
    const char *kernel, *precision, *status, *error;
    double preprocess_ns, iter_ns, iter_min_ns, iter_mad_ns, max_rel_err;
    int samples, launches_per_sample;
};

/* Insert or update; *id_out gets the row id. */
int seer_db_put_gpu(int64_t *id_out, struct store *s, const struct seer_db_gpu *g);
int seer_db_put_matrix(int64_t *id_out, struct store *s, const struct seer_db_matrix *m);
int seer_db_put_result(struct store *s, int64_t matrix_id, int64_t gpu_id,
                       const struct seer_db_result *r, int64_t run_id);
/* The exposed costs of asynchronous gathering (docs/seer.md "Session 8"), in float and double. */
struct seer_async_costs {
    double upload[2];   /* flow "async": the CSR uploaded from the host, gathered after row_ptr */
    double resident[2]; /* flow "async-resident": the matrix on the GPU, gathered before x */
    double sync_upload[2]; /* flow "async" without early gathering: seer_select() gathers */
};
#define SEER_ASYNC_COSTS_NONE { { NAN, NAN }, { NAN, NAN }, { NAN, NAN } }
/* a: NAN = not measured: a stored value is kept (import fills them one precision per CSV
 * line), else NULL. */
int seer_db_put_feature_cost(struct store *s, int64_t matrix_id, int64_t gpu_id,
                             double feature_ns, const struct seer_async_costs *a, int agrees);
/* 1 when matrix `name` has a feature cost and a result for every kernel x precision asked on
 * this GPU (bench skips it), else 0; negative on error. */
int seer_db_matrix_complete(struct store *s, const char *name, int64_t gpu_id,
                            const int *kernels, int nkernels, const char *const *precisions,
                            int nprec);

/* 1 when matrix `name` has a feature cost on this GPU, else 0; negative on error. */
int seer_db_matrix_has_feature_cost(struct store *s, const char *name, int64_t gpu_id);

#define SEER_CSV_HEADER                                                                      \
    "matrix,source,spec,rows,cols,nnz,row_max,row_min,row_mean,row_var,gpu,gpu_uuid,"         \
    "feature_ns,kernel,precision,status,preprocess_ns,iter_ns,max_rel_err,error,"             \
    "feature_async_ns,feature_resident_ns,feature_sync_upload_ns"
#define SEER_CSV_COLS 23
/* The form before session 8 (no feature_async_ns), still read by import. */
#define SEER_CSV_HEADER_V7                                                                   \
    "matrix,source,spec,rows,cols,nnz,row_max,row_min,row_mean,row_var,gpu,gpu_uuid,"         \
    "feature_ns,kernel,precision,status,preprocess_ns,iter_ns,max_rel_err,error"
#define SEER_CSV_COLS_V7 20

/* Every result of the GPUs whose name contains gpu_filter (NULL = all) as CSV, header first:
 * matrix,source,spec,rows,cols,nnz,row_max,row_min,row_mean,row_var,gpu,gpu_uuid,feature_ns,
 * kernel,precision,status,preprocess_ns,iter_ns,max_rel_err,error,feature_async_ns,
 * feature_resident_ns,feature_sync_upload_ns (the gathering's exposed costs in the row's
 * precision, SEER_COST_ASYNC, _ASYNC_RESIDENT, _SYNC_UPLOAD; empty when not measured). Written
 * atomically. */
int seer_db_export_csv(struct store *s, const char *path, const char *gpu_filter, int64_t *rows);
/* Read such a CSV (or one of the 20-column form before session 8) into the store (matrices,
 * GPUs, results, feature costs; existing rows are replaced). Errors name the file and line. */
int seer_db_import_csv(struct store *s, const char *path, int64_t *rows);

/* One matrix of a table: features, feature cost and each kernel's times (ok[k] = 0 when the
 * kernel was not measured, faulted, was wrong or unsupported). */
struct seer_row {
    char *name;
    struct seer_features f;
    double feature_ns; /* the cost the table was loaded with (struct seer_table.feature_cost) */
    int ok[SEER_K_COUNT];
    double pre_ns[SEER_K_COUNT], iter_ns[SEER_K_COUNT];
};

struct seer_table {
    char *gpu;       /* the GPU model's name */
    char *precision; /* "float" or "double" */
    int feature_cost; /* SEER_COST_SYNC or SEER_COST_ASYNC: which cost feature_ns holds */
    int n;
    struct seer_row *rows; /* sorted by name; only matrices with a feature cost and an ok kernel */
};

/* The feature cost a table charges: SYNC = launch + stream synchronisation timed alone
 * (feature_ns, what seer_select() pays); ASYNC / ASYNC_RESIDENT = the exposed cost when
 * seer_gather_async() enqueued the kernel early, in the flow "async" (CSR uploaded from the host)
 * or "async-resident" (matrix already on the GPU); SYNC_UPLOAD = seer_select()'s own gathering
 * inside the flow "async" (async_ / resident_ / sync_upload_<precision>_ns, clamped at 0). */
enum { SEER_COST_SYNC = 0, SEER_COST_ASYNC, SEER_COST_ASYNC_RESIDENT, SEER_COST_SYNC_UPLOAD,
       SEER_COST_KINDS };
/* "sync", "async", "async-resident", "sync-upload"; seer_cost_by_name: -1 when unknown. */
const char *seer_cost_name(int cost);
int seer_cost_by_name(const char *name);

/* Load the results of one GPU model (the first whose name contains gpu_filter, NULL = the one
 * with the most results) in one precision, charging feature cost `cost` (SEER_COST_*).
 * LSCAT_ENOTFOUND when there is nothing, or (ASYNC) when a matrix has no asynchronous cost. */
int seer_table_load(struct seer_table *out, struct store *s, const char *gpu_filter,
                    const char *precision, int cost);
void seer_table_release(struct seer_table *t);

#endif
