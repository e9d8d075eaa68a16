/* The execute stage: build every isolated kernel's harness on all cores (cached by content),
 * repair what fails, record every attempt, and probe-run each built harness on a GPU in the
 * sandbox while the next ones build. The command (execute/cmd.c) parses options and calls execute_run(). */
#ifndef LSCAT_EXECUTE_EXECUTE_H
#define LSCAT_EXECUTE_EXECUTE_H

#include "common/shard.h"
#include "store/store.h"

#include <stdint.h>

enum execute_probe_mode {
    EXECUTE_PROBE_AUTO = 0,  /* probe when a CUDA device is present */
    EXECUTE_PROBE_NEVER,     /* --no-probe */
    EXECUTE_PROBE_FORCE,     /* probe even without a device (tests: the harness's host code runs) */
};

struct execute_options {
    const char *arch;        /* NULL: the present GPUs' architectures, else sm_90 */
    const char *nvcc;        /* NULL: find it */
    int jobs;                /* parallel builds (>= 1) */
    int max_attempts;        /* builds per kernel, repairs between (default 5) */
    double build_timeout_s;  /* per nvcc run (default 300) */
    double probe_timeout_s;  /* per probe (default 30) */
    double probe_budget_s;   /* the least budget of each large probe configuration (default
                                3, PROBE_LARGE_BUDGET_S; 0: none, the run's timeout is all) */
    int probe;               /* enum execute_probe_mode */
    int sanitize;            /* also run compute-sanitizer */
    int device;              /* GPU index for probes */
    const char *kernel;      /* only kernels whose id starts with this, NULL = all */
    int probe_size;          /* W = H of the probe's large configurations (default 2024, the
                                largest default sweep size); 0 = small configurations only */
    const volatile int *stop; /* set by a signal handler: finish the items in flight, stop */
    int build_ahead;         /* when probing: builders wait while this many built kernels wait
                                for a probe (a killed run has probed all but these);
                                0 = 8 x jobs; < 0 = no bound */
    int probe_jobs;          /* probe workers beside the builders; 0 = min(jobs, 4) */
    int probe_runner;        /* probes in a long-lived lscat-runner per probe worker (1, the
                                default), or a process per probe run (0, --no-probe-runner) */
    int probe_spares;        /* spare runners per probe worker, each holding its context for
                                the run after a fault (0..3, default 1) */
    int probe_shared_spares; /* 1: a worker whose runner ended and whose own spares hold no
                                context yet takes another worker's that does (--shared-spares;
                                default 0: measured no faster; docs/execute.md "Probe runner") */
    struct shard shard;      /* count 0 = every kernel */
    int no_block_retry;      /* 1: no block retry (--no-block-retry; docs/execute.md) */
    int no_probe_guard;      /* 1: a write past a buffer neither skips the large probe
                                configurations nor ranks a try (--no-probe-guard) */
    int probe_faults;        /* the fault budget per kernel (--probe-faults; 0: no limit;
                                default PROBE_FAULT_BUDGET; docs/execute.md "Fault budget") */
    double probe_budget_max_s; /* --probe-budget-max (default 10; 0: no cap) */
    double probe_small_timeout_s; /* the first small configuration's deadline in a runner
                                (--probe-small-timeout, default 10; 0: the probe timeout) */
    int probe_memcheck;      /* a memcheck runner per probe worker takes a kernel's tries
                                after its first fault, when compute-sanitizer is beside nvcc:
                                1 asked for (--probe-memcheck auto: says when it is missing),
                                2 the default (quiet); 0: off (docs/execute.md "The memcheck
                                runner") */
    int build_batch;         /* > 1: a builder compiles the first attempt of up to this many
                                kernels in one nvcc run (--build-batch N; docs/execute.md
                                "Batched builds"; default 8); 1: each alone */
    int build_nice;          /* niceness added to nvcc and what it starts (--build-nice 0-19,
                                default 0: docs/execute.md "Builds and probes side by side") */
    int probe_connections;   /* CUDA_DEVICE_MAX_CONNECTIONS in every probe run's environment
                                (--probe-connections 0-32, default 1: a fault and a new context
                                cost the GPU less; 0: the environment's, the driver's 8 when
                                unset; docs/execute.md "Hardware queues") */
};
/* (shard: only the kernels of this shard, by a hash of their id: common/shard.h) */
#define EXECUTE_OPTIONS_INIT { .arch = NULL, .nvcc = NULL, .jobs = 1, .max_attempts = 5, \
    .build_timeout_s = 300, .probe_timeout_s = 30, .probe_budget_s = 3, .probe = EXECUTE_PROBE_AUTO, .sanitize = 0, \
    .device = 0, .kernel = NULL, .probe_size = 2024, .stop = NULL, .build_ahead = 0, \
    .probe_jobs = 0, .probe_runner = 1, .probe_spares = 1, .probe_shared_spares = 0, \
    .shard = SHARD_INIT, \
    .probe_faults = 9, .probe_small_timeout_s = 10, .probe_budget_max_s = 10, \
    .probe_memcheck = EXECUTE_PROBE_MEMCHECK_DEFAULT, .build_nice = 0, .build_batch = EXECUTE_BUILD_BATCH_DEFAULT, \
    .probe_connections = EXECUTE_PROBE_CONNECTIONS_DEFAULT }
/* One hardware queue per probe context: the harness launches on one stream, and on an H200 a
 * fault cost the GPU 0.21 s against 0.32 s with the driver's 8 (docs/execute.md "Hardware
 * queues") */
#define EXECUTE_PROBE_CONNECTIONS_DEFAULT 1
/* --build-batch's default: up to 8 kernels' first attempts in one nvcc run (session 30: the same
 * builds rows as alone on 320 real kernels; builds 1.4x faster beside probes on 16 cores, 1.43x
 * on 2 cores without; docs/execute.md "Batched builds") */
#define EXECUTE_BUILD_BATCH_DEFAULT 8
/* --probe-memcheck's default (2: auto, quiet; 1: auto asked for; 0: off): auto unless
 * --probe-memcheck off, quiet where compute-sanitizer is not beside nvcc (sessions 21-22:
 * 1.18x kernels/s on 270 real kernels and 1.26x on 64 fault-heavy ones, the same runnable;
 * docs/execute.md "The memcheck runner"). See also PROBE_FAULT_BUDGET, PROBE_SMALL_TIMEOUT_S. */
#define EXECUTE_PROBE_MEMCHECK_DEFAULT 2

struct execute_counts {
    int kernels;             /* considered */
    int cached;              /* unchanged since their last build: nothing done */
    int built_first_try, built_after_repair, build_failed;
    int batches;             /* nvcc runs that compiled several kernels' harnesses at once */
    int batched;             /* kernels built by one of them (the others were built alone) */
    int probed, runnable, probe_failed, out_of_bounds;
    int rebound;             /* runnable with a binding other than the default */
    int small_only;          /* runnable, but no binding ran clean at --probe-size */
    int reblocked;           /* runnable only with a block retry shape (docs/execute.md) */
    int too_slow;            /* bindings ended by the probe budget (docs/execute.md) */
    int fault_budget;        /* probes whose search the fault budget ended (docs/execute.md) */
    int guard_stops;         /* probe runs whose large configurations were not run: the kernel
                                wrote past a buffer at the small sizes (docs/execute.md "Guard
                                after the buffers") */
    int wrote_past;          /* runnable kernels whose kept try wrote past a buffer */
    int guard_reruns;        /* such runs made again whole: no binding of the kernel ran clean */
    int probed_2d;           /* probed with 2D blocks only (params say is2d) */
    int reprobed;            /* probed again although probed before with this probe key: a
                                2D kernel whose probe predates the 2D-only plan and could change */
    int probes_kept;         /* rebuilt under a new build key with the same probe key (a new
                                timing core): probes and verdict stand, no probe again */
    int rekeyed;             /* kernels whose probes older lscat stored under the build key got
                                the probe key (their build key unchanged): no probe again */
    int errors;              /* could not be tried (I/O): reported, not recorded as failures */
    int gpu_present;
    int built_while_probing; /* builds (not cached) that finished while a probe ran */
    int interrupted;         /* 1 when *stop ended the run early */
    int device_lost;         /* 1 when a probe found the device unusable: probing stopped */
    int unprobed;            /* built kernels left unprobed for it (they stay 'built') */
    double build_wall_s;     /* from the start of the builds to the end of the last one (the
                                probes run beside them) */
    double build_wait_s;     /* builder time spent waiting for probes (--build-ahead bound) */
    double probe_wait_s;     /* probe worker time spent waiting for a build to probe */
    int runner_starts;       /* probe runners started (spares included) */
    int runner_probe_runs;   /* probe runs made in a runner (the rest: a process each) */
    int runner_ended;        /* runs that ended their runner (fault, crash, timeout) */
    int runner_spare_ready;  /* of the runs after such an end, those that found the spare
                                ready (its context made while the other probed) */
    double runner_wait_s;    /* time probe runs waited for a runner to hold its context */
    int runner_shared;       /* runs that took another worker's spare (--shared-spares) */
    int memcheck_starts;     /* memcheck runners started */
    int memcheck_runs;       /* tries run in a memcheck runner */
    int memcheck_reports;    /* of them, those with a memcheck report (a fault verdict) */
    int memcheck_inconclusive; /* of them, those run plain again (a timeout, a crash, no lines) */
    int confirm_runs;        /* plain runs confirming a try memcheck found clean */
    int memcheck_fallback_runs; /* plain runs of tries memcheck rejected near an allocation */
    int memcheck_late;       /* memcheck runs whose log grew after the harness returned */
    int memcheck_stray;      /* log growth found before a run (a report past the settle window) */
};

/* Run the stage on the store `s` with work folder `work_dir` (absolute). Returns 0 when it ran
 * (failures are recorded and counted in *out), or a negative code when it could not (no nvcc,
 * store error): lscat_error_last() says why. */
int execute_run(struct execute_counts *out, struct store *s, const char *work_dir,
                const struct execute_options *o, int64_t run_id);

/* *out as a JSON object for stage_runs.counts. */
void execute_counts_json(char **out, const struct execute_counts *c);

#endif
