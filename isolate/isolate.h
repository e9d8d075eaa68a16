/* The isolate stage's driver: which trees to parse (every fetched repository, or one --path
 * folder), which files of each, parsing each in a worker child process with time and memory
 * limits, -j at a time, and storing what the workers found: kernel folders under
 * <work>/kernels/ (CONTRACTS.md) and rows in sources, parses, kernels, kernel_occurrences and
 * failures. Idempotent: a file whose content was already parsed is not parsed again. */
#ifndef LSCAT_ISOLATE_H
#define LSCAT_ISOLATE_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

struct store;

struct isolate_options {
    const char *work_dir;     /* the work folder (kernels/ and trees/ live there) */
    const char *path;         /* --path: one local tree; NULL = every fetched repository */
    const char *worker_exe;   /* the program to re-exec in worker mode (lscat-isolate) */
    const char *cuda_home;    /* CUDA headers for parsing */
    int jobs;                 /* parallel workers */
    double timeout_s;         /* per file */
    size_t mem_bytes;         /* per worker address-space limit; 0 = none */
    size_t max_file_bytes;    /* larger files are skipped with a reason */
    int64_t run_id;
};
#define ISOLATE_OPTIONS_INIT { .work_dir = NULL, .path = NULL, .worker_exe = NULL, \
    .cuda_home = NULL, .jobs = 1, .timeout_s = 120, .mem_bytes = (size_t)8192 << 20, \
    .max_file_bytes = 4000000, .run_id = 0 }

struct isolate_counts {
    long sources, files, parsed, unchanged, skipped, failed, kernels, kernels_new, occurrences,
        notes;
};

/* Run the stage. Returns 0 (failures of single files are recorded, not returned) or a negative
 * code when the store or the work folder is unusable. */
int isolate_run(struct isolate_counts *out, struct store *s, const struct isolate_options *o);

/* Worker mode: parse one file and write records to stdout. argv: root file cuda_home [incdir...].
 * Returns the process exit status. */
int isolate_worker_main(int argc, char **argv);

/* The normalised text a kernel's id is the hash of: comments removed, whitespace runs collapsed
 * to one space, so reformatting a fork does not change the id. */
void isolate_normalise(struct buf *out, const char *src, size_t len);

#endif
