/* lscat seer bench: every matrix x kernel x precision timed by the GPU worker (lscat-seer-gpu,
 * run as a child process so that a kernel that kills its CUDA context costs one restart, not
 * the run), recorded in the store as the worker reports it, then written out as CSV.
 * Resumable: a matrix whose every slot is stored for this GPU is skipped. With features_only
 * it times the feature kernel alone (a matrix with a feature cost for this GPU is skipped). */
#ifndef LSCAT_SEER_BENCH_H
#define LSCAT_SEER_BENCH_H

#include "store/store.h"

#include <stdint.h>

struct seer_bench_options {
    const char *const *items; /* "file:PATH" or "gen:SPEC" (canonical), in order */
    int nitems;
    const char *worker;       /* path of lscat-seer-gpu */
    const char *precisions;   /* "float,double" */
    const char *kernels;      /* NULL = all */
    int samples;              /* timing core samples (0 = its default) */
    double min_sample_ms;     /* 0 = its default */
    double max_ell_gb;        /* 0 = the worker's default (4) */
    int chunk;                /* matrices per worker process */
    int force;                /* measure again what is stored */
    int features_only;        /* time only the feature kernel (no SpMV kernel) */
    int64_t run_id;
    const char *csv_path;     /* NULL: no CSV */
    double timeout_s;         /* per worker process */
    double budget_s;          /* 0 = none; else no new worker chunk starts after this long */
};
#define SEER_BENCH_OPTIONS_INIT                                                              \
    {                                                                                        \
        .items = NULL, .nitems = 0, .worker = NULL, .precisions = "float,double",            \
        .kernels = NULL, .samples = 0, .min_sample_ms = 0, .max_ell_gb = 0, .chunk = 8,      \
        .force = 0, .features_only = 0, .run_id = 0, .csv_path = NULL, .timeout_s = 3600, .budget_s = 0,         \
    }

struct seer_bench_result {
    int no_device;        /* 1: the worker found no CUDA device (matrices stored, not timed) */
    char device[300];     /* the GPU's name, or why there is none */
    int matrices;         /* matrices read and stored */
    int skipped;          /* already complete in the store */
    int refused;          /* files the reader refused (messages logged) */
    int ok, faults, wrong, unsupported;
    int features;         /* feature costs measured */
    int restarts;         /* worker restarts after a fault */
    int left;             /* matrices not started because the time budget ran out */
    int64_t csv_rows;
};

int seer_bench_run(struct seer_bench_result *out, struct store *s,
                   const struct seer_bench_options *o);

/* Expand --matrices arguments (files, or folders: their *.mtx, sorted) and --generate specs
 * ("families" = the built-in set) into items. *out is a NULL-terminated array the caller frees
 * with seer_bench_items_free. */
int seer_bench_items(char ***out, int *n, const char *const *matrices, int nmatrices,
                     const char *const *specs, int nspecs);
void seer_bench_items_free(char **items);

#endif
