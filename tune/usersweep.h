/* `lscat sweep`: a user's own kernel and driver over a BONSAI search space (tune/bonsai.h).
 * Three parts: the builds (usersweep_build.c: one nvcc build per compile-time tuple, in
 * parallel, cached), the output file (usersweep_out.c: a CSV written one record at a time, so a
 * killed sweep resumes with no record lost or doubled) and the run (usersweep.c: host processes
 * of tune/sweep_host.cu fed one record at a time; crashes and hangs cost one record). */
#ifndef LSCAT_TUNE_USERSWEEP_H
#define LSCAT_TUNE_USERSWEEP_H

#include "tune/bonsai.h"

struct usersweep_options {
    const char *kernel_path;    /* K.cu */
    const char *driver_path;    /* D.c */
    const char *space_path;     /* S.csv */
    const char *out_path;       /* O.csv */
    const char *work_dir;       /* builds go to <work>/sweep-builds/ */
    const char *arch;           /* "sm_90" or "sm_80,sm_90" */
    const char *nvcc_flags;     /* extra flags, space-separated; NULL = none */
    int jobs;                   /* parallel compiles */
    double compile_timeout_s;   /* per build (default 300) */
    double run_timeout_s;       /* per record (default 60) */
    double startup_timeout_s;   /* added to a host process's first record (default 30) */
    int statistic_min;          /* 1: Time is the minimum (BONSAI); 0: the median */
    double abandon_k;           /* 0 = never abandon */
    int rows_from, rows_to;     /* --rows A:B, 0 = open */
    int shard, shard_count;     /* --shard I/N; count 0 = none */
    const char *records;        /* --records "3,5-9": only these (lscat-mpi's chunks); NULL = all */
    int compile_only;           /* build and record compile failures only */
    const char *gpus;           /* "0,1": one worker per CUDA index; NULL = one worker, the
                                   environment's device */
    const char *const *timing_args; /* passed to every host process (NULL-terminated) */
    const volatile int *stop;   /* set by a signal handler */
};
#define USERSWEEP_OPTIONS_INIT { .arch = "sm_90", .jobs = 1, .compile_timeout_s = 300, \
    .run_timeout_s = 60, .startup_timeout_s = 30, .statistic_min = 0, .abandon_k = 0, \
    .shard_count = 0, .compile_only = 0 }

struct usersweep_counts {
    int records, selected, already_done, groups, groups_built, groups_cached, groups_failed;
    int success, compile, launch, test, crash, timeout, abandoned;
    int pending;                /* selected records left unrun (no device, interrupted) */
    int no_device;              /* the run stage found no CUDA device */
    int interrupted;
    double build_s, run_s;
};

/* Run the sweep. Returns 0 (per-record failures are rows of the output, counted in *out) or a
 * negative code: bad space (LSCAT_EINVALID, message names file/line/column), an output that
 * belongs to another space, nvcc or the lscat sources missing, I/O errors. */
int usersweep_run(struct usersweep_counts *out, const struct usersweep_options *o);

/* ---- builds (usersweep_build.c) */
struct usersweep_build {
    char *binary;               /* the group's program, NULL when the build failed */
    char *log_path;             /* nvcc's output */
    char *error;                /* the first error line when it failed */
    int cached;
};
/* Build every group g with want[g] set, o->jobs at a time; out[g] is filled for those. Returns
 * 0, or LSCAT_ERR when nothing can be built at all (nvcc or lscat's sources missing). */
int usersweep_build_all(struct usersweep_build *out, const struct usersweep_options *o,
                        const struct bonsai_space *s, const int *want);
void usersweep_build_release(struct usersweep_build *b);
/* The output columns a built program's driver declares ("Gflops,Bytes"), via --describe. */
int usersweep_describe(char **out, const char *binary);

/* ---- output (usersweep_out.c) */
struct usersweep_out;
/* What an existing output already holds: done[r] = 1 for each record index r (1-based) with a
 * complete row; *best_s = the best Success time; *columns = the user columns its header names
 * (NULL when the file is missing or empty). LSCAT_EINVALID when its header does not start with
 * Record and this space's parameters. */
int usersweep_out_scan(char *done, double *best_s, char **columns, const char *path,
                       const struct bonsai_space *s);
/* Open for appending (creating it with its header, or cutting a torn last line). */
int usersweep_out_open(struct usersweep_out **out, const char *path,
                       const struct bonsai_space *s, const char *columns);
struct usersweep_row {
    const char *status;         /* Success, Failure, Abandoned */
    const char *error;          /* None, Compile, Launch, Test, Crash, Timeout */
    double time_s;              /* < 0: empty */
    const char *outputs;        /* "Gflops=1.5,X=2" from the host, or NULL */
};
/* Append one record's row in a single write. */
int usersweep_out_write(struct usersweep_out *f, const struct bonsai_record *r,
                        const struct usersweep_row *row);
/* Append a complete row `line` (no newline) taken from another output of the same space whose
 * header names the user columns `columns` ("Gflops,Bytes"; "" for none): lscat-mpi's rank 0
 * with a worker's chunk. Copied as it is when the columns match, else rewritten to this
 * output's columns by name (a missing one empty). */
int usersweep_out_append_row(struct usersweep_out *f, const char *line, const char *columns);
int usersweep_out_close(struct usersweep_out *f);

#endif
