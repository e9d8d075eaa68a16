/* The sweep engine behind `lscat tune`: plan what is missing for every runnable kernel on every
 * GPU model present, then one worker thread per GPU takes kernels from its model's queue
 * (dynamic dispatch; a GPU runs one kernel at a time) and drives that kernel's harness
 * through the missing configurations, writing each result in its own transaction. Killed at
 * any moment, the next run plans only what is still missing. */
#ifndef LSCAT_TUNE_SWEEP_H
#define LSCAT_TUNE_SWEEP_H

#include "common/shard.h"
#include "tune/gpus.h"
#include "tune/space.h"

#include <stdint.h>

struct runner_host;

struct store;

struct tune_options {
    const char *db_path;           /* each worker opens its own connection */
    const char *work_dir;          /* builds.binary_path is relative to it */
    struct tune_space space;       /* every kernel's, or with space_2d.n > 0 1D kernels' */
    struct tune_space space_2d;    /* n > 0: the space of kernels indexing y (2d, 3d) */
    double config_timeout_s;       /* per configuration (default 30) */
    double startup_s;              /* extra for a harness's first configuration (default 10) */
    int max_failures;              /* harness failures before a kernel is given up (5) */
    int size_faults;               /* runner_options.size_faults (2; 0: never) */
    int remeasure;                 /* measure again what is measured (old rows superseded) */
    const char *kernel_prefix;     /* only kernels whose id starts with this; NULL = all */
    int limit_kernels;             /* 0 = no limit */
    struct shard shard;            /* only the kernels of this shard (common/shard.h) */
    const char *const *timing_args;/* passed to every harness (NULL-terminated) */
    int l2_flush;                  /* recorded with each measurement (and passed on) */
    int clocks_locked;             /* recorded; children get LSCAT_CLOCKS_LOCKED=1 */
    int no_prestart;               /* 1: start each harness only when its kernel's turn comes */
    const char *runner;            /* lscat-runner: kernels with a harness.so run in one
                                      long-lived process per GPU; NULL = harness processes */
    int runner_kernels;            /* recycle a runner after this many kernels (0 = never) */
    int samples;                   /* the harnesses' samples (--samples; 0 = 10): deadlines */
    double config_budget_s;        /* the timing core's time budget per configuration
                                      (--config-budget, LSCAT_TIMING_BUDGET_S; 0 = none) */
    int follow;                    /* 1: while an `lscat execute` of this host runs on the store,
                                    * keep taking the kernels it makes runnable */
    double follow_interval_s;      /* how often to look for them (default 1 s) */
    double follow_grace_s;         /* started before execute: how long to wait for one to
                                    * appear (default 30 s) */
    int64_t run_id;
    const volatile int *stop;      /* set by a signal handler: finish cleanly, soon */
    struct runner_host **hosts;    /* NULL, or one slot per GPU of `gpus` (NULL at first), owned
                                      by the caller: each GPU's lscat-runner is kept there
                                      after the sweep and used by the next one (lscat-tune
                                      --serve: one runner per GPU across an MPI worker's
                                      chunks); free them with runner_host_free */
};
/* The defaults; the rest is zero (NULL, no limit, off). */
#define TUNE_OPTIONS_INIT { .config_timeout_s = 30, .startup_s = 10, .max_failures = 5, \
                            .size_faults = 2, \
                            .runner_kernels = 200, .follow_interval_s = 1.0, \
                            .follow_grace_s = 30.0 }

struct tune_counts {
    int gpus, models;
    int kernels_planned, kernels_done, kernels_given_up;
    int configs_planned, configs_reported;
    int ok, cuda_error, invalid_config, crashed, timeout;
    int skipped;       /* configurations not run: their block shape failed stickily at a
                          smaller size of the kernel (runner.h, struct tune_skip) */
    int shapes_failed; /* block shapes whose sticky failure made such skips */
    int sizes_skipped; /* kernel sizes whose other shapes --size-faults skipped */
    int ref_failures;  /* kernels whose output-check reference block failed stickily: their
                          configurations from that size on ran with --no-check */
    int match, mismatch, nondeterministic, not_checked; /* output checks of ok configurations */
    long long check_ns; /* what the output checks cost together (harness clock) */
    int processes;
    int runner_kernels, runner_fallbacks; /* kernels run in lscat-runner; sent back to processes */
    int budget_cut;                /* ok configurations whose samples the budget cut */
    int deadline_extended;         /* configurations given more than --timeout (long kernels) */
    int deadline_shortened;        /* configurations of fast kernels given less (hangs) */
    int spare_takeovers;           /* a spare runner took over after a crash, timeout or fault */
    int gpus_lost;           /* GPUs that became unusable during the sweep (docs/tune.md
                                "A device that goes"): their kernels left unmeasured */
    int interrupted;
};

/* Plan and run the sweep on gpus[0..n-1] (registered: ids filled). Returns 0 or a negative
 * code (store failure); per-kernel failures are recorded, counted, and not errors. */
int tune_sweep(struct tune_counts *out, struct store *s, const struct tune_options *o,
               const struct tune_gpu *gpus, int n);
/* The counts as a JSON object for stage_runs.counts. */
void tune_counts_json(char *out, int size, const struct tune_counts *c);

/* Start each GPU's lscat-runner now in hosts[0..n-1] (those still NULL), as a sweep's workers
 * would (o->runner, runner_kernels, clocks_locked, the spare mode): lscat-tune --serve makes
 * their contexts while it waits for its first chunk. A runner that cannot start is left for
 * the sweep to report. */
void tune_hosts_start(struct runner_host **hosts, const struct tune_options *o,
                      const struct tune_gpu *gpus, int n);

#endif
