/* lscat-execute: build every isolated kernel's harness with nvcc on all cores, repair failed
 * builds, probe-run the built ones on a GPU in a sandbox. Thin: options, stage_begin(),
 * execute_run(), stage_end(). */
#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/shard.h"
#include "store/stage.h"
#include "execute/execute.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "lscat execute [--arch sm_90,sm_80] [-j N] [--attempts N] "
                            "[--no-probe] [--sanitize] [--probe-size N] [--probe-budget S] [--probe-budget-max S] "
                            "[--no-block-retry] [--no-probe-guard] [--probe-faults N] [--probe-small-timeout S] "
                            "[--device N] "
                            "[--kernel ID] [--probe-jobs N] [--no-probe-runner] [--probe-spares N] "
                            "[--probe-connections N] [--shared-spares] "
                            "[--probe-memcheck auto|off] "
                            "[--build-ahead N] [--build-nice N] [--build-batch N]";

enum { OPT_ARCH = 1, OPT_ATTEMPTS, OPT_BUILD_TIMEOUT, OPT_PROBE_TIMEOUT, OPT_NO_PROBE,
       OPT_PROBE_ANYWAY, OPT_SANITIZE, OPT_DEVICE, OPT_KERNEL, OPT_NVCC, OPT_PROBE_SIZE,
       OPT_BUILD_AHEAD, OPT_BUILD_ROUND, OPT_PROBE_JOBS, OPT_SHARD, OPT_NO_PROBE_RUNNER,
       OPT_PROBE_BUDGET, OPT_PROBE_SPARES, OPT_NO_BLOCK_RETRY, OPT_PROBE_FAULTS,
       OPT_PROBE_SMALL_TIMEOUT, OPT_PROBE_MEMCHECK, OPT_BUILD_NICE, OPT_BUILD_BATCH, OPT_PROBE_BUDGET_MAX,
       OPT_PROBE_CONNECTIONS, OPT_SHARED_SPARES, OPT_NO_PROBE_GUARD };

static const struct cli_opt opts[] = {
    { "arch", 0, "LIST", "architectures to build for, e.g. sm_90,sm_80 (default: those of the "
                         "GPUs present, else sm_90); PTX of the newest is embedded", OPT_ARCH },
    { "attempts", 0, "N", "builds per kernel, with a repair between two (default 5)",
      OPT_ATTEMPTS },
    { "build-timeout", 0, "S", "wall-clock limit of one nvcc run (default 300)",
      OPT_BUILD_TIMEOUT },
    { "probe-timeout", 0, "S", "wall-clock limit of one probe run (default 30)",
      OPT_PROBE_TIMEOUT },
    { "no-probe", 0, NULL, "build and repair only", OPT_NO_PROBE },
    { "probe-anyway", 0, NULL, "probe even without a CUDA device (tests: the harnesses' host "
                               "code runs in the sandbox; CUDA calls fail)", OPT_PROBE_ANYWAY },
    { "sanitize", 0, NULL, "also run each probe under compute-sanitizer (memcheck) and flag "
                           "out-of-bounds kernels", OPT_SANITIZE },
    { "probe-size", 0, "N", "W = H of the probe's large configurations, where overruns show "
                            "(default 2024, tune's largest default size; 0: small ones only)",
      OPT_PROBE_SIZE },
    { "probe-budget", 0, "S", "each large probe configuration gets max(S, 1 s + the last "
      "small one's time besides its kernel + 2 x its kernel time scaled to the large size) "
      "seconds; past it the binding ends too_slow (default 3; 0: the probe run's timeout is "
      "all)", OPT_PROBE_BUDGET },
    { "probe-budget-max", 0, "S", "the most seconds a large probe configuration's budget may "
      "be, whatever the kernel time predicts; past it the binding ends too_slow (default 10; "
      "0: no cap, the probe run's timeout bounds it)", OPT_PROBE_BUDGET_MAX },
    { "no-block-retry", 0, NULL, "probe with the probe's own blocks only (default: a kernel "
      "whose every binding faulted there is probed again with the source's own block, then "
      "128, 64, 32, 1024 (1D) or 8x8, 32x8, 32x32 (2D) blocks; none over its "
      "__launch_bounds__)", OPT_NO_BLOCK_RETRY },
    { "no-probe-guard", 0, NULL, "a probe whose kernel wrote past a buffer at the small sizes "
      "(the harness's guard after each buffer changed) runs its large configurations, and "
      "that try ranks as a clean one (default: they are not run, and a binding that wrote "
      "past a buffer is kept only when none ran without)", OPT_NO_PROBE_GUARD },
    { "probe-faults", 0, "N", "fault budget per kernel: no further binding or retry block "
      "once N of its probe runs faulted at the small sizes; the verdict is what those runs "
      "gave (default 9; 0: no limit)", OPT_PROBE_FAULTS },
    { "probe-small-timeout", 0, "S", "in a runner, the first small probe configuration (1024x1; "
      "a 2D kernel's 64x64) gets S seconds, then the run ends timeout and no other try of the "
      "kernel is made (default 10, at most --probe-timeout; 0: --probe-timeout)",
      OPT_PROBE_SMALL_TIMEOUT },
    { "probe-memcheck", 0, "auto|off", "auto: once a kernel's probe run faulted, its further "
      "tries run first in a long-lived runner under compute-sanitizer memcheck (found beside "
      "nvcc), which catches the overrun without a GPU fault, and the first clean one is "
      "confirmed by a plain run (default auto where compute-sanitizer is there)",
      OPT_PROBE_MEMCHECK },
    { "probe-jobs", 0, "N", "probes at a time, beside the -j builds (default min(-j, 4); at "
      "most 4 per GPU unless LSCAT_PROBE_JOBS_MAX allows more)", OPT_PROBE_JOBS },
    { "no-probe-runner", 0, NULL, "a process per probe run (default: each probe worker runs "
      "harness.so files in a long-lived, sandboxed lscat-runner, with a spare)",
      OPT_NO_PROBE_RUNNER },
    { "probe-spares", 0, "N", "spare runners per probe worker, each holding a CUDA context for "
      "the run after a fault, crash or timeout (0-3, default 1)", OPT_PROBE_SPARES },
    { "probe-connections", 0, "N", "CUDA_DEVICE_MAX_CONNECTIONS of every probe run: hardware "
      "queues per context (0-32, default 1: a fault and a new context cost the GPU less; "
      "0: the environment's, the driver's 8 when unset)", OPT_PROBE_CONNECTIONS },
    { "shared-spares", 0, NULL, "a probe worker whose runner ended and whose own spare holds "
      "no context yet takes another worker's that does (default: its own only; measured no "
      "faster on an H200)", OPT_SHARED_SPARES },
    { "build-ahead", 0, "N", "with probes: builders pause while N built kernels wait for a "
      "probe, so a stopped run has probed all but N (default 8 x -j; 0: no bound)",
      OPT_BUILD_AHEAD },
    { "build-nice", 0, "N", "niceness added to the builds (nvcc and what it starts; 0-19; "
      "default 0: niced builds beside probes made no run faster on an H200)", OPT_BUILD_NICE },
    { "build-batch", 0, "N", "a builder compiles the first attempt of up to N kernels' "
      "harnesses in one nvcc run, each in a namespace of its own; a kernel the batch cannot "
      "build is built alone (1-64; default 8; 1: each alone; docs/execute.md \"Batched builds\")",
      OPT_BUILD_BATCH },
    { "build-round", 0, "N", "the old name of --build-ahead (builds were done in rounds)",
      OPT_BUILD_ROUND },
    { "device", 0, "N", "GPU index to probe on (default 0)", OPT_DEVICE },
    { "kernel", 0, "ID", "only kernels whose id starts with ID", OPT_KERNEL },
    { "shard", 0, "I/N", "only the kernels of shard I of N (by a hash of the kernel id; "
      "default: SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT when set)", OPT_SHARD },
    { "nvcc", 0, "PATH", "the nvcc to use (default $CUDA_HOME/bin/nvcc, "
                         "/usr/local/cuda/bin/nvcc, PATH)", OPT_NVCC },
    CLI_OPT_END,
};

static int on_opt(void *ctx, int id, const char *arg)
{
    struct execute_options *o = ctx;
    long n;
    double d;
    switch (id) {
    case OPT_ARCH: o->arch = arg; return 0;
    case OPT_KERNEL: o->kernel = arg; return 0;
    case OPT_NVCC: o->nvcc = arg; return 0;
    case OPT_NO_PROBE: o->probe = EXECUTE_PROBE_NEVER; return 0;
    case OPT_PROBE_ANYWAY: o->probe = EXECUTE_PROBE_FORCE; return 0;
    case OPT_SANITIZE: o->sanitize = 1; return 0;
    case OPT_NO_PROBE_RUNNER: o->probe_runner = 0; return 0;
    case OPT_NO_BLOCK_RETRY: o->no_block_retry = 1; return 0;
    case OPT_NO_PROBE_GUARD: o->no_probe_guard = 1; return 0;
    case OPT_SHARED_SPARES: o->probe_shared_spares = 1; return 0;
    case OPT_PROBE_MEMCHECK:
        if (strcmp(arg, "auto") && strcmp(arg, "off")) {
            lscat_error_set("--probe-memcheck: '%s' is not auto or off", arg);
            return LSCAT_EINVALID;
        }
        o->probe_memcheck = !strcmp(arg, "auto");
        return 0;
    case OPT_ATTEMPTS:
        if (cli_parse_int(&n, "--attempts", arg, 1, 16) < 0)
            return LSCAT_EINVALID;
        o->max_attempts = (int)n;
        return 0;
    case OPT_BUILD_AHEAD:
    case OPT_BUILD_ROUND:
        if (cli_parse_int(&n, id == OPT_BUILD_AHEAD ? "--build-ahead" : "--build-round", arg, 0,
                          1L << 30) < 0)
            return LSCAT_EINVALID;
        o->build_ahead = n ? (int)n : -1;
        return 0;
    case OPT_BUILD_NICE:
        if (cli_parse_int(&n, "--build-nice", arg, 0, 19) < 0)
            return LSCAT_EINVALID;
        o->build_nice = (int)n;
        return 0;
    case OPT_BUILD_BATCH:
        if (cli_parse_int(&n, "--build-batch", arg, 1, 64) < 0)
            return LSCAT_EINVALID;
        o->build_batch = (int)n;
        return 0;
    case OPT_SHARD:
        return shard_parse(&o->shard, "--shard", arg);
    case OPT_PROBE_JOBS:
        if (cli_parse_int(&n, "--probe-jobs", arg, 1, 32) < 0)
            return LSCAT_EINVALID;
        o->probe_jobs = (int)n;
        return 0;
    case OPT_PROBE_SIZE:
        if (cli_parse_int(&n, "--probe-size", arg, 0, 65536) < 0)
            return LSCAT_EINVALID;
        o->probe_size = (int)n;
        return 0;
    case OPT_DEVICE:
        if (cli_parse_int(&n, "--device", arg, 0, 63) < 0)
            return LSCAT_EINVALID;
        o->device = (int)n;
        return 0;
    case OPT_PROBE_SPARES:
        if (cli_parse_int(&n, "--probe-spares", arg, 0, 3) < 0)
            return LSCAT_EINVALID;
        o->probe_spares = (int)n;
        return 0;
    case OPT_PROBE_CONNECTIONS:
        if (cli_parse_int(&n, "--probe-connections", arg, 0, 32) < 0)
            return LSCAT_EINVALID;
        o->probe_connections = (int)n;
        return 0;
    case OPT_PROBE_FAULTS:
        if (cli_parse_int(&n, "--probe-faults", arg, 0, 1000) < 0)
            return LSCAT_EINVALID;
        o->probe_faults = (int)n;
        return 0;
    case OPT_PROBE_SMALL_TIMEOUT:
        if (cli_parse_double(&d, "--probe-small-timeout", arg, 0, 86400) < 0)
            return LSCAT_EINVALID;
        o->probe_small_timeout_s = d;
        return 0;
    case OPT_PROBE_BUDGET:
        if (cli_parse_double(&d, "--probe-budget", arg, 0, 86400) < 0)
            return LSCAT_EINVALID;
        o->probe_budget_s = d;
        return 0;
    case OPT_PROBE_BUDGET_MAX:
        if (cli_parse_double(&d, "--probe-budget-max", arg, 0, 86400) < 0)
            return LSCAT_EINVALID;
        o->probe_budget_max_s = d;
        return 0;
    case OPT_BUILD_TIMEOUT:
    case OPT_PROBE_TIMEOUT:
        if (cli_parse_double(&d, id == OPT_BUILD_TIMEOUT ? "--build-timeout" : "--probe-timeout",
                             arg, 0.1, 86400) < 0)
            return LSCAT_EINVALID;
        *(id == OPT_BUILD_TIMEOUT ? &o->build_timeout_s : &o->probe_timeout_s) = d;
        return 0;
    }
    return 0;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "Build the harness of every isolated kernel (kernels.status = 'isolated', and again\n"
           "whenever its sources, nvcc or the flags change) with nvcc, -j at a time, in a\n"
           "sandbox. Failed builds are classified (missing_header, undeclared_identifier,\n"
           "unknown_type, no_matching_overload, template, incomplete_type, redefinition,\n"
           "removed_cuda_api, host_from_device, link_error, internal_compiler_error, timeout,\n"
           "template_functor, template_value, template_type, resource_limit, static_assert,\n"
           "other) and repaired up to --attempts builds. Every attempt is recorded\n"
           "(build_attempts; logs under <work>/builds/<key>/). With a CUDA device, each built\n"
           "harness runs once (--probe) in the sandbox: ok, launch_failure,\n"
           "illegal_address, cuda_error, crash or timeout (probes); ok makes it 'runnable'.\n"
           "Builds and probes run side by side: a kernel is probed (--probe-jobs at a time)\n"
           "as soon as it is built, while the next ones build, and is in the store at once\n"
           "(`lscat tune --follow` picks it up). When a probe finds the device unusable (no\n"
           "device, no driver, busy), probing stops, nothing is recorded for the kernels\n"
           "(they stay 'built') and the run ends with exit 3: run it again to probe them.\n"
           "Each role binding of the harness (area: a size is W*H elements; side: a size is\n"
           "a square matrix's side; tokens: a transformer's B, T, C = 1, H, W by name;\n"
           "tiles, for kernels whose source computes the grid from their sizes: that grid\n"
           "with the sizes rounded up to its tiles, the source's block only) is\n"
           "tried in that order, on small sizes and (for kernels with a size parameter or\n"
           "two transformer dims) at --probe-size; the first that runs clean is kept\n"
           "(kernels.binding) and tune launches the kernel with it. A kernel with\n"
           "hard-coded problem sizes (params.json \"fixed\": no integer parameter, constant\n"
           "cudaMalloc sizes) also tries the fixed binding: its source's buffers, grid and\n"
           "block, one configuration at that size (first for a grid-stride kernel, else when\n"
           "no other binding ran clean); tune then measures that size only.\n"
           "Probe blocks: 256x1x1\n"
           "and 16x16x1; a 2D kernel (params is2d) gets 16x16x1 only, as its fixed shared\n"
           "tiles overflow with 1D blocks (tune skips those). A 2D kernel probed before that\n"
           "rule whose verdict it could change is probed again. A kernel whose every\n"
           "binding faulted with those blocks is probed again with other shapes: first the\n"
           "block of the repository's own launch (params.json \"launch\", with its dynamic\n"
           "shared memory; tune measures it), then 128, 64, 32, 1024 (2D: 8x8, 32x8, 32x32),\n"
           "none over the kernel's __launch_bounds__: fixed shared arrays or asserts made\n"
           "for other blocks (block retry; --no-block-retry: not).\n"
           "Each probe worker runs the harness.so files in a long-lived lscat-runner in the\n"
           "sandbox (its own uid; context made once) with a spare that takes over after a\n"
           "fault, crash or timeout (--shared-spares: a worker with no spare ready takes\n"
           "another worker's ready one); --no-probe-runner: a process per probe run.\n"
           "In a runner each large probe configuration has its own budget (--probe-budget,\n"
           "at most --probe-budget-max): past it the binding ends too_slow and the next one\n"
           "is tried; ok at the small sizes only under every binding is runnable (small\n"
           "sizes only). The first small configuration has --probe-small-timeout. A kernel\n"
           "stops being probed once --probe-faults of its runs faulted at the small sizes\n"
           "(fault budget). The harness keeps a guard after each buffer: a kernel that wrote\n"
           "past one at the small sizes is not run at the large ones, and a binding that\n"
           "wrote past a buffer is kept only when no binding ran without (--no-probe-guard).\n"
           "--probe-memcheck auto (the default where compute-sanitizer is beside nvcc): once\n"
           "a kernel's plain run faulted on an illegal address, its further tries run first\n"
           "in the worker's long-lived runner under compute-sanitizer memcheck (an overrun\n"
           "there is a report, not a GPU fault); the first clean one is confirmed by a plain\n"
           "run, whose verdict is kept.\n"
           "Without a device it builds and repairs and says that probing needs one.\n"
           "Declarations and headers a kernel lacks are pulled from its repository through\n"
           "lscat-isolate's libclang service ('lscat isolate resolve --serve', started once,\n"
           "when needed), with what they depend on; where lscat-isolate is missing or fails,\n"
           "through a textual search (fixes say '(isolate)' or '(text)').\n"
           "Environment: LSCAT_SHARE_DIR (where tune/timing.cu lives), CUDA_HOME,\n"
           "LSCAT_SANDBOX=fallback|none (weaker sandbox, for tests), LSCAT_BIN (where to find\n"
           "lscat-isolate and lscat-runner; default: beside this program, then PATH),\n"
           "LSCAT_RUNNER (the probe runner), LSCAT_PROBE_RUNNER=0 (as --no-probe-runner),\n"
           "LSCAT_RESOLVE_TIMEOUT_S (per resolver request, default 120).\n"
           "As root, untrusted code runs as unprivileged uids: they need search permission\n"
           "(o+x) on the folders holding nvcc and the work folder (lscat's own files are\n"
           "copied into <work>/builds when out of their reach). See docs/execute.md.\n\n"
           "Options:\n", usage);
    cli_print_options(stdout, opts);
    cli_print_common_help(stdout);
}

/* The run's one summary line, and what to do after an interruption. */
static void log_summary(const struct execute_counts *c)
{
    log_info("execute: %d kernels, %d cached, %d built (%d after repair, %d keeping "
             "their probes), %d failed to build, %d probed (%d with 2D blocks only, %d "
             "again for the 2D plan): %d runnable (%d with a non-default binding, %d clean "
             "at small sizes only, %d with a retried block shape, %d bindings too slow), %d "
             "failed; %d probes stopped by the fault budget; %d runs stopped before the large "
             "sizes by a write past a buffer, %d runnable kernels that wrote past one%s",
             c->kernels, c->cached, c->built_first_try + c->built_after_repair,
             c->built_after_repair, c->probes_kept, c->build_failed, c->probed, c->probed_2d,
             c->reprobed, c->runnable, c->rebound, c->small_only, c->reblocked, c->too_slow,
             c->probe_failed, c->fault_budget, c->guard_stops, c->wrote_past,
             c->gpu_present || c->probed ? "" : " (probing needs a CUDA device)");
    if (c->batches)
        log_info("execute: %d kernels built in %d batched nvcc runs (--build-batch)", c->batched,
                 c->batches);
    if (c->memcheck_runs)
        log_info("execute: memcheck runner: %d tries run (%d with a report, %d run plain "
                 "again), %d clean ones confirmed by a plain run, %d plain fallback runs, %d "
                 "runners started", c->memcheck_runs, c->memcheck_reports,
                 c->memcheck_inconclusive, c->confirm_runs, c->memcheck_fallback_runs,
                 c->memcheck_starts);
    if (c->interrupted)
        fprintf(stderr, "lscat-execute: interrupted; run again to build and probe what "
                        "is missing\n");
}

static volatile int g_stop;
static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    struct stage st = STAGE_INIT;
    char *counts = NULL;
    int code = LSCAT_EXIT_OK;
    int rc = cli_parse(&cli, "lscat-execute", argc, argv, opts, on_opt, &o);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc < 0 || cli_no_args(&cli) < 0 || shard_from_env(&o.shard) < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    o.jobs = cli.jobs;
    if (stage_begin(&st, &cli, "execute", STAGE_CREATE, argc, argv) < 0) {
        code = cli_fatal(&cli);
        goto done;
    }
    char *builds = fs_join(st.work_dir, "builds"); /* builds/core-<hash>.tmp.<pid> of killed runs */
    if (fs_remove_stale_temps(builds, 0) < 0)
        log_warn("%s", lscat_error_last());
    free(builds);
    /* SIGINT/SIGTERM (e.g. `timeout`): the builds and probes in flight finish and are
     * recorded, nothing new starts, the run is recorded as interrupted. */
    o.stop = &g_stop;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    rc = execute_run(&c, st.store, st.work_dir, &o, st.run_id);
    if (rc < 0) {
        code = cli_fatal(&cli);
    } else if (c.interrupted || c.device_lost) { /* a run to make again: what is missing */
        code = LSCAT_EXIT_FATAL;
    } else if (c.build_failed || c.probe_failed || c.errors) {
        code = LSCAT_EXIT_FAILURES;
    }
    if (rc == 0) {
        execute_counts_json(&counts, &c);
        log_summary(&c);
    }
done:
    stage_end(&st, code, counts);
    free(counts);
    cli_release(&cli);
    return code;
}
