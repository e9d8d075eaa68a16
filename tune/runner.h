/* Driving one harness process through a list of configurations (CONTRACTS.md "Harness command
 * line"): the configurations go to its stdin, its result lines come back through a pipe
 * (--results /dev/fd/3), its own stdout/stderr are kept only as a capped tail. A configuration
 * that kills the process is recorded as crashed, one that makes no progress within the
 * per-configuration timeout as timeout (the process group is killed); either way the harness
 * is restarted at the next configuration, until max_failures process failures give the kernel
 * up. Knows nothing of the store: results go to a callback. */
#ifndef LSCAT_TUNE_RUNNER_H
#define LSCAT_TUNE_RUNNER_H

#include "tune/space.h"

#include <stddef.h>

/* One configuration's outcome, as the harness reported it or as the runner concluded. */
struct tune_result {
    struct tune_config cfg;
    char status[16];    /* ok | cuda_error | invalid_config | crashed | timeout | skipped */
    char error[512];    /* "" or a message */
    int grid[3];        /* 0 when unknown */
    double median_ns, min_ns, max_ns, mean_ns, stddev_ns, mad_ns, p10_ns, p90_ns;
    int samples, launches_per_sample;
    int graph_nodes;    /* launches per CUDA graph (0 one by one); -1 not reported */
    int sm_mhz_before, sm_mhz_after, mem_mhz, temp_c_before, temp_c_after; /* -1 unknown */
    int clocks_locked;
    int samples_planned; /* the samples asked for when the time budget cut them; 0 not cut */
    char check[20];      /* the output check: match | mismatch | nondeterministic | not_checked;
                            "" when the line had none (a failed configuration, an old harness) */
    char check_why[400];
    long long check_ns;  /* the check's cost (+ the reference's, on the line that ran it); -1 */
};

/* A block shape that failed with a sticky CUDA error (the harness reported cuda_error and
 * exited 4) at matrix size at.w x at.h: the kernel's configurations of that shape at sizes at
 * least as large on both sides are not run but reported `skipped` (docs/tune.md "Skipped
 * shapes"). A 2D kernel's fixed shared tiles overflow with a 1D block at every size. */
struct tune_skip {
    struct tune_config at; /* the block shape and the size where it failed */
    char error[256];       /* that failure's error text */
};

/* The `error` of a skipped configuration: "block BXxBYxBZ failed with a sticky CUDA error at
 * WxH: <error>". */
void tune_skip_describe(char *out, size_t size, const struct tune_skip *s);
/* Read back a skipped configuration's error (as tune_skip_describe wrote it) into *out, the
 * shape taken from `cfg`. Returns 1, or 0 when the text is not one (then out->at = *cfg). */
int tune_skip_parse(struct tune_skip *out, const struct tune_config *cfg, const char *error);

struct runner_callbacks {
    /* The harness's header line (raw JSON), once per process start. May be NULL. */
    void (*on_header)(void *ctx, const char *json);
    /* With want_occupancy: cudaOccupancyMaxPotentialBlockSize's suggestion. May be NULL. */
    void (*on_occupancy)(void *ctx, int block, int grid);
    /* Every configuration's outcome, in order, except that the configurations a sticky
     * failure makes skipped are reported right after that failure. Return <0 to stop (error
     * slot set). */
    int (*on_result)(void *ctx, const struct tune_result *r);
    void *ctx;
};

struct runner_child;
struct runner_host;

struct runner_options {
    const char *harness;           /* the binary */
    const char *const *extra_args; /* NULL-terminated, appended (timing options); may be NULL */
    const char *const *env;        /* full environment for the child; NULL = ours */
    int device;                    /* --device N; -1 = do not pass */
    double config_timeout_s;       /* no result line for this long: timeout (default 30) */
    double startup_s;              /* added to the first configuration of each process (10) */
    int max_failures;              /* process failures before giving up (default 5); a block
                                      shape's first sticky failure does not count (its larger
                                      sizes are skipped instead) */
    int want_occupancy;            /* pass --occupancy to the first process */
    const volatile int *stop;      /* when it becomes nonzero: kill the child, return */
    struct runner_child *prestarted; /* from runner_prestart with the same cfgs; consumed */
    struct runner_host *host;      /* a long-lived lscat-runner: run harness_so in it */
    const char *harness_so;        /* the kernel's harness.so (with host) */
    const struct tune_skip *skips; /* shapes known to fail (earlier runs): skipped from the
                                      start where they apply; may be NULL */
    int nskips;
    int samples;                   /* the harness's samples and the timing core's budget per */
    double budget_s;               /* configuration (LSCAT_TIMING_BUDGET_S), for deadlines */
    int no_deadline_plan;          /* 1: every configuration gets config_timeout_s (before) */
    int size_faults;               /* once the output check's reference block failed: this many
                                      sticky errors at a size with nothing ok there skip the
                                      size's other shapes (0: never) */
};
#define RUNNER_OPTIONS_INIT { .harness = NULL, .extra_args = NULL, .env = NULL, .device = 0, \
    .config_timeout_s = 30.0, .startup_s = 10.0, .max_failures = 5, .want_occupancy = 0, \
    .stop = NULL, .prestarted = NULL, .host = NULL, .harness_so = NULL, .skips = NULL, \
    .nskips = 0, .samples = 10, .budget_s = 0, .no_deadline_plan = 0, .size_faults = 2 }

struct runner_summary {
    int results;       /* configurations reported (any status) */
    int ok;
    int processes;     /* harness processes started (lscat-runner starts included) */
    int in_runner;     /* 1 when lscat-runner ran (part of) the kernel */
    int fell_back;     /* 1 when the runner could not load harness.so or start: processes ran it */
    int crashes, timeouts, sticky_errors; /* process failures by kind */
    int shapes_failed; /* sticky errors that were a block shape's first: not counted toward
                          max_failures; its larger sizes were skipped */
    int skipped;       /* configurations reported `skipped` */
    int sizes_skipped; /* sizes whose other shapes were skipped by size_faults */
    int ref_failures;  /* the output check's reference block failed stickily (once at most):
                          the configuration in flight ran again, the rest with --no-check */
    int given_up;      /* 1 when the kernel was given up; reason says why */
    int interrupted;   /* 1 when *stop ended it */
    int device_lost;   /* 1 when the harness could not open the device for a reason of the
                          device (common/cudadev.h): nothing recorded for the configuration in
                          flight, the kernel neither done nor given up; reason says why */
    char reason[512];
    /* Long kernels (docs/tune.md "Long kernels"): the slowest ok median at the largest size
     * measured so far plans the next configuration's deadline; what was done is counted. */
    double slow_area, slow_ns;
    int budget_cut;        /* ok configurations whose samples the time budget cut */
    int deadline_extended; /* configurations given more than config_timeout_s */
    double deadline_len_s;  /* the deadline given to the configuration in flight */
    int deadline_shortened; /* configurations of a fast kernel given less (a hang is seen
                               sooner: 5 x what the slowest ok one so far needs, >= 5 s) */
    int samples;           /* --samples (for the plan; 0 = 10; < 0: no plan) */
    double budget_s;       /* --config-budget (for the plan; 0 = none) */
};

/* Run cfgs[0..n-1] (sizes in the order they should run: a shape that fails stickily is
 * skipped at the later, larger sizes). Returns 0 (also when the kernel was given up: see
 * out->given_up) or a negative code when the callback failed or no child could be started. */
int runner_run(struct runner_summary *out, const struct runner_options *o,
               const struct tune_config *cfgs, int n, const struct runner_callbacks *cb);

/* Start the harness for cfgs[0..n-1] now but hold it before its first configuration: its
 * stdin stays empty until runner_run (with o->prestarted) hands the configurations over, so its
 * process start and CUDA context creation overlap the previous kernel's sweep. *out is NULL
 * when the configurations would not fit one pipe write (runner_run then starts its own).
 * Returns 0 or a negative code (could not start). */
int runner_prestart(struct runner_child **out, const struct runner_options *o,
                    const struct tune_config *cfgs, int n);
/* Kill and reap a prestarted harness that will not be used. NULL is a no-op. */
void runner_child_free(struct runner_child *c);

/* A long-lived lscat-runner for one GPU (docs/tune.md "Runner"): harness.so files run in it
 * one kernel after another, so process start and CUDA context creation are paid once. It is
 * started lazily (or now, with runner_host_start), restarted after a crash, a timeout or a
 * sticky CUDA error, and recycled after max_kernels kernels. `program` is lscat-runner, `env`
 * its full environment (NULL = ours; copied), `device` its --device. Not thread-safe: one per worker.
 * runner_run uses it when o->host and o->harness_so are set. */
int runner_host_new(struct runner_host **out, const char *program, const char *const *env,
                    int device, int max_kernels);
/* Start the runner now if it is not running (its start overlaps whatever comes next). Returns
 * 0 or a negative code. */
int runner_host_start(struct runner_host *h);
/* A spare runner beside the one in use: after a crash, timeout or sticky error the next
 * configuration runs in the spare at once while the broken runner dies, and a new spare starts
 * (docs/tune.md "Runner"). RUNNER_SPARE_OFF (the default), RUNNER_SPARE_EAGER (from the first
 * runner on), RUNNER_SPARE_AFTER_FAULT (tune's default: only once a runner of this host broke,
 * for a spare's context made while a kernel measures slows that kernel's launches). */
enum { RUNNER_SPARE_OFF = 0, RUNNER_SPARE_EAGER = 1, RUNNER_SPARE_AFTER_FAULT = 2 };
void runner_host_set_spare(struct runner_host *h, int mode);
/* How many times the spare took over. */
int runner_host_spares_taken(const struct runner_host *h);
/* 1 while a spare is started and held. */
int runner_host_has_spare(const struct runner_host *h);
/* 1 while a runner process is started and in use (or idle between kernels). */
int runner_host_running(const struct runner_host *h);
/* 1 when the runner could not be started or did not answer: the caller should stop using it. */
int runner_host_broken(const struct runner_host *h);
/* Ask the runner to quit, reap it in the background, free. NULL is a no-op. */
void runner_host_free(struct runner_host *h);

/* Parse one harness result line into `out` (for tests and for `tune` itself). Returns 1 for a
 * result line, 2 for a header, 3 for an occupancy line, 0 for anything else. */
int runner_parse_line(struct tune_result *out, int *occ_block, int *occ_grid, const char *line);

#endif
