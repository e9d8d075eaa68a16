/* Probe runs: each built harness runs once (`--probe`) on a small configuration, in the
 * sandbox, with a timeout and capped output; the outcome is classified for the probes table.
 * With --sanitize the same probe also runs under compute-sanitizer (memcheck) to flag kernels
 * with out-of-bounds accesses. Also: listing the GPUs present (nvidia-smi). */
#ifndef LSCAT_EXECUTE_PROBE_H
#define LSCAT_EXECUTE_PROBE_H

#include "common/buf.h"
#include "common/proc.h"

struct probe_runner;

enum probe_outcome {
    PROBE_OK = 0, PROBE_LAUNCH_FAILURE, PROBE_ILLEGAL_ADDRESS, PROBE_CUDA_ERROR, PROBE_CRASH,
    PROBE_TIMEOUT,
    PROBE_TOO_SLOW, /* a large configuration ran past its budget (probe_options.large_budget_s);
                       only in probes.bindings: probe_run never returns it as the outcome */
};

struct probe_result {
    enum probe_outcome outcome;
    char *detail;           /* the error text, signal, or the last stderr line */
    char *sanitizer;        /* NULL, "clean", "out_of_bounds", "errors", "unavailable" */
    char *sanitizer_detail; /* the first sanitizer report line */
    double probe_s;         /* every run of the probe together */
    char *binding;          /* the binding this outcome describes: the chosen one when ok,
                               else the default's (probe_run) */
    char *bindings;         /* JSON array of every binding tried and what it gave, with the
                               configurations it ran ("configs", probe_run) */
    char *configs;          /* the configurations its plain run was given: a JSON array of
                               "WxH BXxBYxBZ" (also in each entry of bindings) */
    int small_ok;           /* the small configurations ran clean (the large ones may not) */
    int first_only;         /* only the first small configuration reported, clean: the run
                               hung or ended at the second (64x64, block 16x16) */
    int hung_first;         /* a run in a runner cut at its first small configuration's
                               deadline (small_timeout_s): a hang where nothing ran yet */
    int small_only;         /* probe_run: ok only because no binding ran clean at the large
                               size and this one did at the small ones (detail says more) */
    char *config_s;         /* JSON array: each configuration's measured seconds, null where
                               it did not finish (runs in a runner; NULL for a process) */
    double budget_s;        /* the large configurations' budget (0: none applied) */
    char *kernel_s;         /* JSON array: each configuration's kernel time as its line said
                               ("kernel_ns"), null where the line had none (NULL: no line had) */
    char *wrote_past;       /* JSON array: each configuration's parameter whose guard the
                               kernel wrote ("wrote_past"), null where none or not run (NULL:
                               none was written) */
    char *past;             /* the first such write, in words (NULL: none): `wrote past
                               parameter 2 (c)'s buffer at 64x64, block 16x16x1, ...` */
    int past_skipped;       /* it came at the small sizes and the large ones were not run */
    int guard_stops;        /* probe_run: tries whose large configurations the guard skipped */
    int guard_reruns;       /* probe_run: those run again with them, no binding having run
                               clean (guard_rerun) */
    double predicted_s;     /* a large configuration's time predicted from the last small one,
                               linear in the elements (what the budget is made of) */
    int too_slow;           /* probe_run: bindings ended by the budget */
    int fault_budget;       /* probe_run: 1 when the fault budget ended the search
                               (probe_options.fault_budget; detail says so) */
    char *block;            /* NULL: ran with the probe's own block shapes; else the other
                               shape it ran clean with ("128x1x1", probe_run's block retry) */
    int memcheck;           /* a try run in the memcheck runner (docs/execute.md "The memcheck
                               runner"): PROBE_MC_* (0: a plain run) */
    int mc_near;            /* its reports are all overruns a plain run may not see: global
                               accesses near an allocation, shared or local ones (the plain
                               fallback reruns such tries) */
    int mc_count;           /* how many reports of its run were read (probe_memcheck_count) */
    int mc_cut;             /* and the run made more (probe_memcheck_cut) */
    int confirm;            /* a plain run confirming a try memcheck found clean */
    double run_s;           /* the try's wall time (its run; a sanitizer process's not added) */
    /* probe_run: the memcheck runner's share of the probe */
    int memcheck_runs, memcheck_reports, confirm_runs, memcheck_fallback_runs,
        memcheck_inconclusive;
    int ended_on_clock;     /* probe_run: its last run ended at a deadline (a hang, too_slow)
                               or crashed, which is also what a device that is going gives:
                               execute holds such a verdict until the device answers again
                               (docs/execute.md "A device that goes") */
    int device_lost;        /* the device itself failed, not the kernel (common/cudadev.h):
                               no verdict on the kernel; probe_run stops at once and the run
                               records nothing for it (docs/execute.md "A device that goes") */
};

/* What a try in the memcheck runner gave: a report (a fault verdict), a fault its lines said
 * (a launch refused, a fault memcheck did not catch: the verdict a plain run gives), clean (then
 * confirmed by a plain run), or none of these (a timeout, a crash, no lines: the try is run
 * plain instead). */
enum { PROBE_MC_NONE = 0, PROBE_MC_CLEAN, PROBE_MC_REPORT, PROBE_MC_FAULT, PROBE_MC_INCONCLUSIVE };
/* A try run in the memcheck runner, classified from its lines (probe_classify) and the report
 * its log gained (probe_runner_report): sets p->memcheck, and for a report the outcome
 * illegal_address, detail "memcheck: <its first line>", small_ok 0 and mc_near. `faulted`: the
 * lines alone faulted at the small sizes. */
void probe_memcheck_judge(struct probe_result *p, const char *report, int faulted);
const char *probe_memcheck_name(int mc);
/* The plain runs of tries memcheck rejected for overruns a plain run may not see (global
 * accesses near an allocation, shared or local ones: probe_memcheck_near), made when memcheck
 * found no clean try (memcheck is stricter than the hardware), at most this many: those with
 * the fewest reports first (a run whose reports were cut after any whole one, and among those
 * the smaller block first), the plan's order between equals. */
#define PROBE_MEMCHECK_FALLBACK 3
/* A run in the memcheck runner (its small configurations only) is cut after this many seconds
 * in all, or twice the first small configuration's deadline where that is less: instrumented
 * kernels and the module patched at its first launch are slower, but session 12's memcheck runs
 * took 0.085 s clean and 0.18 s with a report (median; p90 1.7 s), and its hangs under memcheck
 * held about 80 of 444 probe-seconds at the old 20 s. A cut run is inconclusive: it runs plain. */
#define PROBE_MEMCHECK_TIMEOUT_S 4.0

/* The role bindings of generated harnesses (`--bind`, isolate/harness_core.cu's
 * lscat_bindings; docs/isolate.md "Bindings"), in the order the probe tries them. The first is
 * the default, which a harness uses without --bind. NULL-terminated. */
extern const char *const probe_bindings[];
#define PROBE_BIND_TILES 3 /* probe_bindings' "tiles": the source's grid over its own sizes */
#define PROBE_BIND_FIXED 4 /* probe_bindings' "fixed": the source's hard-coded problem size */
/* The fixed size isolate recorded in params (`"fixed":{"size":[W,H]`): 1 and wh (may be NULL),
 * else 0. */
int probe_fixed_size(int wh[2], const char *params);
/* Whether the fixed binding goes before the others: a fixed size whose kernel's work does not
 * follow the grid (params "indexing" grid_stride or none: a persistent loop over its size). */
int probe_fixed_first(const char *params);

/* Whether binding `b` gives some parameter of `params` (kernels.params JSON) another value than
 * the default binding does: only then is it worth a run. 1 when params is NULL (unknown). */
int probe_binding_matters(int b, const char *params);

struct probe_options {
    const char *harness;    /* absolute path */
    const char *scratch;    /* the probe's folder (created; emptied before each run) */
    const char *work_dir;   /* read-only inside the sandbox */
    int slot, device;
    double timeout_s;       /* per run; the sanitizer gets 10x */
    const char *sanitizer;  /* compute-sanitizer to run after a clean run, or NULL */
    const char *params;     /* kernels.params, to skip bindings that change nothing; may be NULL */
    int large;              /* W = H of the large configurations (0: small ones only) */
    struct probe_runner *runner; /* plain runs go to this lscat-runner (execute/probe_runner.h)
                                    when the harness has a harness.so; NULL: a process each */
    double large_budget_s;  /* the least budget of each large configuration (docs/execute.md
                               "Probe budget"); 0: the large ones share the run's timeout_s */
    double large_budget_max_s; /* the most a large configuration's budget may be (0: no cap,
                               the run's timeout_s bounds it) */
    int retry_blocks;       /* 1: when no binding ran clean and the default's runs faulted,
                               try the bindings again with PROBE_RETRY_BLOCKS_1D/_2D (docs/
                               execute.md "Block retry"); 0: the probe's own shapes only */
    int fault_budget;       /* stop trying further runs (bindings, retry shapes) once this many
                               faulted at the small sizes (docs/execute.md "Fault budget");
                               0: no limit */
    double small_timeout_s; /* in a runner, the first small configuration's deadline (0 or
                               >= timeout_s: the run's timeout_s); past it: timeout */
    struct probe_runner *memcheck; /* NULL; else a memcheck runner (probe_runner_options.
                               sanitizer): once a plain run of the kernel faulted at the small
                               sizes, its later tries run here first (small configurations),
                               and a try clean here is confirmed by a plain run (--probe-memcheck) */
    double memcheck_timeout_s; /* a memcheck run's whole deadline, or twice small_timeout_s where
                               that is less (PROBE_MEMCHECK_TIMEOUT_S) */
    const char *const *env; /* "K=V" added to a process run's environment (NULL-terminated; the
                               runners take theirs from probe_runner_options.env) */
    int guard;              /* 1: a run whose kernel wrote past a buffer at the small sizes (the
                               harness's guard, "wrote_past") skips its large configurations
                               (PROBE_GUARD_STOP), and a try that wrote past one ranks below a
                               clean one (docs/execute.md "Guard after the buffers") */
};
#define PROBE_OPTIONS_INIT { .harness = NULL, .scratch = NULL, .work_dir = NULL, .slot = 0, \
    .device = 0, .timeout_s = 30.0, .sanitizer = NULL, .params = NULL, .large = 2024, \
    .runner = NULL, .large_budget_s = PROBE_LARGE_BUDGET_S, \
    .large_budget_max_s = PROBE_LARGE_BUDGET_MAX_S, .retry_blocks = 1, \
    .fault_budget = PROBE_FAULT_BUDGET, .small_timeout_s = PROBE_SMALL_TIMEOUT_S, \
    .memcheck = NULL, .memcheck_timeout_s = PROBE_MEMCHECK_TIMEOUT_S, .env = NULL, \
    .guard = 1 }

/* The fault budget (--probe-faults): the least that keeps every kernel runnable in session 9's
 * proof-run store (scripts/probe-fault-replay.py; docs/execute.md "Fault budget"). */
#define PROBE_FAULT_BUDGET 9
/* The first small configuration's deadline (--probe-small-timeout): a kernel that needs more
 * at 1024 elements cannot be tuned (tune's smallest size has 57,600). */
#define PROBE_SMALL_TIMEOUT_S 10.0

/* The probe budget (docs/execute.md "Probe budget"): each large configuration of a run in a
 * runner gets probe_budget_s() seconds from the last small configuration, at most what is left
 * of the run's timeout; past it the binding ends `too_slow`. */
#define PROBE_LARGE_BUDGET_S 3.0 /* the floor (--probe-budget) */
/* The cap (--probe-budget-max): a large configuration still running after this many seconds
 * ends too_slow whatever its prediction. Session 15's whole-corpus store: 7 runs met the 30 s
 * timeout at 2024x2024 with predictions of minutes, and one clean 2024x2024 configuration of
 * 1,945 took over 10 s (18 s); docs/execute.md "Probe budget". */
#define PROBE_LARGE_BUDGET_MAX_S 10.0
#define PROBE_KERNEL_SLACK 2.0   /* times the kernel time predicted at the large size */
#define PROBE_BUDGET_ALLOW_S 1.0 /* the large buffers' fill and copies */
#define PROBE_BUDGET_SLACK 4.0   /* a line without the kernel's time: times the predicted line */

/* The budget of a large configuration of `big` elements after a small one of `elems` elements
 * whose result line came `took_s` after the line before it and said its kernel ran `kernel_s`
 * (< 0: the line did not say, a harness generated before lscat reported it):
 *   kernel_s >= 0: predicted = kernel_s x big / elems,
 *                  budget = max(floor_s, PROBE_BUDGET_ALLOW_S + (took_s - kernel_s)
 *                                        + PROBE_KERNEL_SLACK x predicted)
 *   else:          predicted = took_s x big / elems, budget = max(floor_s, PROBE_BUDGET_SLACK x
 *                                                                  predicted)  (session 6's rule)
 * *predicted_s gets the prediction. */
double probe_budget_s(double *predicted_s, double floor_s, double took_s, double kernel_s,
                      double elems, double big);

/* The parameter whose guard a probe result line says the kernel wrote past its buffer
 * ("wrote_past", docs/execute.md "Guard after the buffers"); -1: none. */
int probe_line_wrote_past(const char *line);

/* The kernel's own seconds a probe result line reports ("kernel_ns", the harness's cudaEvent
 * pair around the launch), or -1 when the line has none. */
double probe_line_kernel_s(const char *line);

struct gpu_info {
    int index;
    char uuid[96], name[128], cc[16], driver[32];
    long long memory_bytes;
};

/* The small configurations every probe run starts with (and all that the sanitizer runs): a 1D
 * block on a 1024x1 matrix and a 2D block on a 64x64 one. Plain runs add the same shapes at
 * probe_options.large, where an overrun is no longer hidden inside cudaMalloc's granularity.
 * A 2D kernel (params "is2d": it reads threadIdx.y/blockIdx.y/blockDim.y) is probed with the 2D
 * shape only: its fixed shared tiles (`tile[16][16]` indexed by threadIdx.x/y) overflow with a
 * 256-thread 1D block, which says nothing about whether it runs (docs/execute.md "Probe plan"). */
/* Between the small and the large configurations of the probe's stdin (probe_options.guard): a
 * harness whose kernel wrote past a buffer's guard so far stops there (a comment line to older
 * harnesses, which skip it). */
#define PROBE_GUARD_STOP "#guard-stop\n"
#define PROBE_SMALL_1D "1024 1 256 1 1\n"
#define PROBE_SMALL_2D "64 64 16 16 1\n"

/* The block retry (docs/execute.md "Block retry"): a kernel whose every binding faulted at the
 * small sizes with the probe's own blocks (256x1 / 16x16) is probed again with each of these
 * shapes in turn (all of them in tune's default sweep, tune/space.h), every configuration of a
 * run with that one shape: 1D kernels with fixed shared arrays or warp counts for 32-192 threads
 * (`__shared__ float s[BDIM + 2 * R]`, BDIM 32), 2D kernels with 8x8 or 32-wide tiles or an
 * `assert(blockDim.x == 32)`. The first shape under which a binding runs clean is kept. The
 * source's own block (kernels.params "launch", probe_source_launch) goes before them, and
 * shapes over the kernel's __launch_bounds__ are left out (execute/probe.c retry_shapes). */
#define PROBE_RETRY_BLOCKS_1D { { 128, 1, 1 }, { 64, 1, 1 }, { 32, 1, 1 }, { 1024, 1, 1 } }
#define PROBE_RETRY_BLOCKS_2D { { 8, 8, 1 }, { 32, 8, 1 }, { 32, 32, 1 } }

/* The source's own launch from kernels.params (isolate's "launch":{"block":[X,Y,Z],...} and
 * "launch_bounds":N): block zero when none is known, *bounds 0 when none. 1 with a block. */
int probe_source_launch(int block[3], int *bounds, const char *params);

/* Whether kernels.params says the kernel is 2D ("is2d":true). 0 when params is NULL. */
int probe_is2d(const char *params);

/* Whether kernels.params has isolate's "note": an argument the harness cannot make (a class
 * with virtual functions, a graph's conditional handle; docs/isolate.md). 0 when params is NULL. */
int probe_unmade_arg(const char *params);

const char *probe_outcome_name(enum probe_outcome o);
/* The integer after "key": in a JSON line, or -1. */
long probe_json_int(const char *line, const char *key);
/* The value of "key":"..." in one JSON line of a harness (a new string, NULL when absent; no
 * unescaping beyond \": the texts are plain). Shared by the verdicts and the run deadlines. */
char *probe_json_str(const char *line, const char *key);

/* Classify a finished probe from the child's result and the --results file's text. Pure (no
 * GPU needed): the rules are in docs/execute.md. */
void probe_classify(struct probe_result *out, const struct proc_result *r, const char *results);

/* The probe plan (docs/execute.md "Probe plan"): for each binding in order (skipping those that
 * change no value of this kernel), run the harness --probe in the sandbox on the small and,
 * when some other binding could matter, the large configurations (a 2D kernel's: 16x16 blocks
 * only, probe_is2d); when that runs ok and
 * o->sanitizer is set, run compute-sanitizer (memcheck) on the small ones. The first binding
 * that runs ok with no sanitizer report is kept; else the first that ran ok (its report kept:
 * out_of_bounds); else the first that ran clean at the small sizes (ok, small_only, as the probe
 * before bindings would have had it); else the result is the default binding's. No run is made
 * once o->fault_budget runs faulted at the small sizes: the verdict is the runs' so far, its
 * detail says so (out->fault_budget). *out is filled either way. 0, or LSCAT_ERR when a run
 * could not be started at all. */
int probe_run(struct probe_result *out, const struct probe_options *o);
void probe_result_release(struct probe_result *r);

/* memcheck's log text: its first report line without the "========= " prefix (NULL: none), and
 * whether every report is an overrun a plain run may not see: a global access near an
 * allocation ("bytes after/before the nearest allocation": the MMU sees the mapping, not the
 * allocation), or a shared or local access (the hardware sees the block's or the thread's
 * window); not a misaligned access. */
char *probe_memcheck_first(const char *text);
int probe_memcheck_near(const char *text);
/* How many reports the text holds (whole lines; the tool's own notes are not reports), and
 * whether that is fewer than the run made: the text is the first PROBE_MEMCHECK_READ bytes of
 * what the run added to the log, and the tool drops reports once its buffer is full (it says
 * "Error buffer overflow"). */
int probe_memcheck_count(const char *text);
int probe_memcheck_cut(const char *text);
#define PROBE_MEMCHECK_READ 65536

/* Classify compute-sanitizer's report (its stdout+stderr). Sets sanitizer/_detail. */
void probe_classify_sanitizer(struct probe_result *out, const struct proc_result *r);

/* The GPUs nvidia-smi lists (*out owned by the caller, free()); 0 GPUs when it is missing. */
int probe_list_gpus(struct gpu_info **out, int *count);

#endif
