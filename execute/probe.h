/* Probe runs: each built harness runs once (`--probe`) on a small configuration, in the
 * sandbox, with a timeout and capped output; the outcome is classified for the probes table.
 * With --sanitize the same probe also runs under compute-sanitizer (memcheck) to flag kernels
 * with out-of-bounds accesses. Also: listing the GPUs present (nvidia-smi). */
#ifndef LSCAT_EXECUTE_PROBE_H
#define LSCAT_EXECUTE_PROBE_H

#include "common/buf.h"
#include "common/proc.h"

enum probe_outcome {
    PROBE_OK = 0, PROBE_LAUNCH_FAILURE, PROBE_ILLEGAL_ADDRESS, PROBE_CUDA_ERROR, PROBE_CRASH,
    PROBE_TIMEOUT,
};

struct probe_result {
    enum probe_outcome outcome;
    char *detail;           /* the error text, signal, or the last stderr line */
    char *sanitizer;        /* NULL, "clean", "out_of_bounds", "errors", "unavailable" */
    char *sanitizer_detail; /* the first sanitizer report line */
    double probe_s;
};

struct gpu_info {
    int index;
    char uuid[96], name[128], cc[16], driver[32];
    long long memory_bytes;
};

/* The configurations a probe runs: a 1D and a 2D block shape on a small matrix. */
#define PROBE_STDIN "1024 1 256 1 1\n64 64 16 16 1\n"

const char *probe_outcome_name(enum probe_outcome o);

/* Classify a finished probe from the child's result and the --results file's text. Pure (no
 * GPU needed): the rules are in docs/execute.md. */
void probe_classify(struct probe_result *out, const struct proc_result *r, const char *results);

/* Run `harness` (absolute) --probe on `device` in the sandbox (scratch folder `scratch`, which
 * is created), then under compute-sanitizer when `sanitizer` names it. 0, or LSCAT_ERR when it
 * could not be started at all. */
int probe_run(struct probe_result *out, const char *harness, const char *scratch,
              const char *work_dir, int slot, int device, double timeout_s, const char *sanitizer);
void probe_result_release(struct probe_result *r);

/* Classify compute-sanitizer's report (its stdout+stderr). Sets sanitizer/_detail. */
void probe_classify_sanitizer(struct probe_result *out, const struct proc_result *r);

/* The GPUs nvidia-smi lists (*out owned by the caller, free()); 0 GPUs when it is missing. */
int probe_list_gpus(struct gpu_info **out, int *count);

#endif
