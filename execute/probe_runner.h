/* Probes in a long-lived lscat-runner (tune/runnerd.c, docs/tune.md "Runner") instead of a
 * process per probe run: each probe worker keeps one runner in the sandbox (its own slot uid,
 * namespaces, rlimits, the allow-listed environment) that holds the GPU's context and runs
 * each kernel's harness.so in turn, so process start, sandbox set-up and CUDA context creation
 * and teardown are paid once per runner, not once per probe (docs/execute.md "Probe runner").
 * Spare runners (one by default), each on its own slot uid, are started beside it: after a
 * fault, crash or timeout the next probe runs in a spare at once (one that holds its context,
 * else the one started first) while the broken one dies and a new spare starts. */
#ifndef LSCAT_EXECUTE_PROBE_RUNNER_H
#define LSCAT_EXECUTE_PROBE_RUNNER_H

#include "common/buf.h"
#include "common/proc.h"

struct probe_runner;
/* Runners whose spares are shared: a runner that ended takes a spare of its own that holds its
 * context, else one of another runner of the pool that does (that runner's slot starts a new
 * spare at once), else its own oldest (docs/execute.md "Probe runner"). */
struct probe_runner_pool;
struct probe_runner_pool *probe_runner_pool_new(void);
/* After every runner of the pool was freed. NULL is fine. */
void probe_runner_pool_free(struct probe_runner_pool *pool);

#define PROBE_RUNNER_SPARES_MAX 3
/* A runner that cannot hold a context is started this many times in all, pausing
 * PROBE_RUNNER_START_PAUSE_MS x the try before each again, before the worker probes with
 * processes for the rest of the run (docs/execute.md "Probe runner"). */
#define PROBE_RUNNER_START_TRIES 3
#define PROBE_RUNNER_START_PAUSE_MS 500

struct probe_runner_options {
    const char *program;    /* lscat-runner (probe_runner_find()) */
    const char *scratch;    /* a folder for the runners' HOME/TMPDIR (<scratch>/<slot>) */
    const char *work_dir;   /* readable inside the sandbox */
    int slots[1 + PROBE_RUNNER_SPARES_MAX]; /* sandbox slots: the runner, then its spares'
                                               (1 + spare of them, distinct uids) */
    int device;
    int spare;              /* spare runners kept started, 0..PROBE_RUNNER_SPARES_MAX
                               (default 1) */
    int max_kernels;        /* replace a runner after this many runs (default 100) */
    double timeout_s;       /* per run (probe-timeout): also sizes the runner's CPU limit */
    double startup_s;       /* a runner's start, context included (default 60) */
    const char *sanitizer;  /* NULL; else a memcheck runner: each runner is started under this
                               compute-sanitizer (--tool memcheck --destroy-on-device-error
                               kernel --log-file <its scratch>/memcheck.log), and each run's
                               report is what the log gained during it (probe_runner_report) */
    const char *const *env; /* "K=V" added to each runner's environment (NULL-terminated, may
                               be NULL; copied) */
    struct probe_runner_pool *pool; /* NULL: its spares are its own; else shared with the
                               pool's other runners (same program, scratch, device, options;
                               distinct slots) */
};
#define PROBE_RUNNER_OPTIONS_INIT { .program = NULL, .scratch = NULL, .work_dir = NULL, \
    .slots = { 0, 1, 2, 3 }, .device = 0, .spare = 1, .max_kernels = 100, .timeout_s = 30, \
    .startup_s = 60, .sanitizer = NULL, .env = NULL, .pool = NULL }

/* A memcheck runner's compute-sanitizer options (besides --log-file): no backtraces, no API
 * errors (the harness's lines say those), every error printed (the limit may count over the
 * runner's life; a replaced runner starts again), the harness only. */
#define PROBE_RUNNER_MEMCHECK_ARGS "--tool", "memcheck", "--destroy-on-device-error", "kernel", \
    "--show-backtrace", "no", "--report-api-errors", "no", "--print-limit", "1000000", \
    "--target-processes", "application-only", "--launch-timeout", "120"
/* After @done, a memcheck run waits until its log has not grown for this long (a report may be
 * written after the harness returned; LSCAT_MEMCHECK_SETTLE_MS overrides it). */
#define PROBE_RUNNER_SETTLE_S 0.03
/* A memcheck runner is replaced once its log holds this much (the runner's file-size limit is
 * 64 MiB; compute-sanitizer writes the log as the sandbox's uid). */
#define PROBE_RUNNER_LOG_MAX ((long)32 << 20)

/* lscat-runner: $LSCAT_RUNNER, else in $LSCAT_BIN (only there when set), else beside this
 * program, else in PATH. NULL when none is found (free() the result). */
char *probe_runner_find(void);

int probe_runner_new(struct probe_runner **out, const struct probe_runner_options *o);
/* Stop its runners (their context teardown is not waited for) and free it. NULL is fine. */
void probe_runner_free(struct probe_runner *pr);

/* What a run in the runner gave. PROBE_RUNNER_OK: *r is filled as sandbox_run would fill it
 * (exit_code = the harness's return code; signal / timed_out when the runner died or was
 * killed; err = the run's stdout+stderr, capped) and results holds its fd 3 lines.
 * PROBE_RUNNER_NOT_LOADED: harness.so cannot be loaded (a harness generated before the runner
 * existed): run the executable instead. PROBE_RUNNER_UNAVAILABLE: no runner could be started
 * (no driver, no program); the runner is broken for the rest of the run (probe_runner_broken)
 * and lscat_error_last() says why. */
enum { PROBE_RUNNER_OK = 0, PROBE_RUNNER_NOT_LOADED = 1, PROBE_RUNNER_UNAVAILABLE = 2 };

/* Watches a run's result lines as they arrive (the harness flushes one per configuration):
 * `line` is called with each whole line and the monotonic time it was read, and returns the
 * run's new deadline (fs_mono_s() scale), 0 to keep the current one, or a negative number to
 * end the run now. A run ended by its watch reads as a timeout (r->timed_out); the watch's own
 * state says why. The run's timeout_s stays its outer bound. */
struct probe_runner_watch {
    double (*line)(void *ctx, const char *line, double now);
    void *ctx;
};
int probe_runner_run(struct proc_result *r, struct buf *results, struct probe_runner *pr,
                     const char *harness_so, const char *const *args, const char *configs,
                     double timeout_s, const struct probe_runner_watch *watch);
int probe_runner_broken(const struct probe_runner *pr);
/* How many of its spares hold their context now (what a run after a fault would find). */
int probe_runner_spares_ready(struct probe_runner *pr);
/* A memcheck runner: what its log gained during the last run (at most 64 KiB; "" for none, or
 * for a plain runner). Valid until the next run. */
const char *probe_runner_report(const struct probe_runner *pr);

/* Counts since probe_runner_new: runners started, runs, runs that ended the runner (fault,
 * crash, timeout), and how many of the runs after such an end found a spare ready. */
struct probe_runner_stats {
    int starts, runs, ended, spare_ready;
    int reports;   /* memcheck runner: runs whose log gained a report */
    int late;      /* memcheck runner: runs whose log grew after the harness returned (@done) */
    int stray;     /* memcheck runner: runs before which the log had grown since the last one
                      (a report later than the settle window: not attributed) */
    double late_max_s; /* the latest growth after @done seen */
    double wait_s;     /* time runs waited for a runner to hold its context (after a fault, the
                          spare's; at a worker's first run, its own) */
    int shared;        /* runs that took another runner's spare (a pool's), holding its context */
};
void probe_runner_stats(struct probe_runner_stats *out, const struct probe_runner *pr);

#endif
