/* lscat-sweep: a user's own kernel and driver over a BONSAI search space (`lscat sweep`).
 * Thin: parse options, run the sweep (tune/usersweep.c), print one summary line, turn the
 * outcome into an exit code. It needs no store: the output CSV is the record. */
#include "common/cli.h"
#include "common/error.h"
#include "common/log.h"
#include "common/shard.h"
#include "common/xalloc.h"
#include "tune/timing_args.h"
#include "tune/usersweep.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "lscat sweep --kernel K.cu --driver D.c --space S.csv --out O.csv "
                            "[options]";

enum {
    OPT_KERNEL = 1, OPT_DRIVER, OPT_SPACE, OPT_OUT, OPT_ARCH, OPT_NVCC_FLAGS, OPT_COMPILE_TIMEOUT,
    OPT_TIMEOUT, OPT_STARTUP, OPT_STATISTIC, OPT_ABANDON, OPT_ROWS, OPT_RECORDS, OPT_SHARD, OPT_COMPILE_ONLY,
    OPT_GPUS, OPT_WARMUP, OPT_SAMPLES, OPT_MIN_SAMPLE_MS, OPT_NO_GRAPH,
};
static const struct cli_opt opts[] = {
    { "kernel", 0, "K.cu", "the kernel file (kernel + an extern \"C\" launch function)",
      OPT_KERNEL },
    { "driver", 0, "D.c", "the driver: defines lscat_sweep_driver (tune/sweep_driver.h)",
      OPT_DRIVER },
    { "space", 0, "S.csv", "the BONSAI search space: names, types, Compile/Runtime, records",
      OPT_SPACE },
    { "out", 0, "O.csv", "the results; an existing one is resumed", OPT_OUT },
    { "arch", 0, "LIST", "architectures to build for (default sm_90; PTX of the last is "
      "embedded)", OPT_ARCH },
    { "nvcc-flags", 0, "FLAGS", "extra nvcc flags, space-separated (e.g. \"-lcublas\")",
      OPT_NVCC_FLAGS },
    { "compile-timeout", 0, "S", "per build (one compile-time tuple; default 300)",
      OPT_COMPILE_TIMEOUT },
    { "timeout", 0, "S", "per record run (default 60): killed and recorded Timeout",
      OPT_TIMEOUT },
    { "startup-timeout", 0, "S", "for a host process to create its CUDA context (default 30)",
      OPT_STARTUP },
    { "statistic", 0, "median|min", "what Time reports (default median; min as BONSAI)",
      OPT_STATISTIC },
    { "abandon", 0, "K", "a record whose first samples take at least K times the best time so "
      "far is not measured further: Status Abandoned", OPT_ABANDON },
    { "rows", 0, "A:B", "only records A..B (1-based, inclusive; A: or :B open)", OPT_ROWS },
    { "records", 0, "LIST", "only these records: numbers and ranges, e.g. 3,5-9 (how lscat-mpi "
      "hands out a chunk)", OPT_RECORDS },
    { "shard", 0, "I/N", "only records k with (k-1) mod N = I (default: SLURM_ARRAY_TASK_ID/"
      "SLURM_ARRAY_TASK_COUNT when set)", OPT_SHARD },
    { "compile-only", 0, NULL, "build every tuple, record compile failures, run nothing",
      OPT_COMPILE_ONLY },
    { "gpus", 0, "LIST", "one worker per CUDA index, e.g. 0,1 (default: one worker on the "
      "environment's device); each takes a compile-time tuple nobody has, then joins the one "
      "with the most records left per worker, with a host process of its own; a tuple's "
      "records are then dealt largest first (by the product of their numeric Runtime values)",
      OPT_GPUS },
    { "warmup", 0, "N", "timing core: untimed runs first (default 3)", OPT_WARMUP },
    { "samples", 0, "N", "timing core: timed samples (default 10)", OPT_SAMPLES },
    { "min-sample-ms", 0, "X", "timing core: a sample batches launches to last X ms "
      "(default 1)", OPT_MIN_SAMPLE_MS },
    { "no-graph", 0, NULL, "timing core: launch one by one, not through a CUDA graph",
      OPT_NO_GRAPH },
    CLI_OPT_END,
};

struct args {
    struct usersweep_options o;
    struct shard shard;
    struct tune_timing_args timing;
};

static int parse_rows(struct usersweep_options *o, const char *arg)
{
    const char *colon = strchr(arg, ':');
    long a = 0, b = 0;
    char *end = NULL;
    if (colon && colon != arg && (a = strtol(arg, &end, 10), end != colon || a < 1))
        colon = NULL;
    if (colon && colon[1] && (b = strtol(colon + 1, &end, 10), *end || b < 1))
        colon = NULL;
    if (!colon || (b && a > b))
        return lscat_error_setc(LSCAT_EINVALID, "bad --rows '%s' (use A:B, A:, or :B with "
                                "1-based record numbers, A <= B)", arg);
    o->rows_from = (int)a, o->rows_to = (int)b;
    return 0;
}

static int on_opt(void *ctx, int id, const char *arg)
{
    struct args *a = ctx;
    struct usersweep_options *o = &a->o;
    switch (id) {
    case OPT_KERNEL: o->kernel_path = arg; return 0;
    case OPT_DRIVER: o->driver_path = arg; return 0;
    case OPT_SPACE: o->space_path = arg; return 0;
    case OPT_OUT: o->out_path = arg; return 0;
    case OPT_ARCH: o->arch = arg; return 0;
    case OPT_NVCC_FLAGS: o->nvcc_flags = arg; return 0;
    case OPT_GPUS: o->gpus = arg; return 0;
    case OPT_COMPILE_ONLY: o->compile_only = 1; return 0;
    case OPT_COMPILE_TIMEOUT:
        return cli_parse_double(&o->compile_timeout_s, "--compile-timeout", arg, 1, 86400);
    case OPT_TIMEOUT: return cli_parse_double(&o->run_timeout_s, "--timeout", arg, 0.1, 86400);
    case OPT_STARTUP:
        return cli_parse_double(&o->startup_timeout_s, "--startup-timeout", arg, 1, 3600);
    case OPT_ABANDON: return cli_parse_double(&o->abandon_k, "--abandon", arg, 1, 1e9);
    case OPT_ROWS: return parse_rows(o, arg);
    case OPT_RECORDS:
        o->records = arg;
        return bonsai_records_parse(NULL, INT_MAX, arg);
    case OPT_SHARD: return shard_parse(&a->shard, "--shard", arg);
    case OPT_STATISTIC:
        if (strcmp(arg, "median") && strcmp(arg, "min"))
            return lscat_error_setc(LSCAT_EINVALID, "bad --statistic '%s' (median or min)", arg);
        o->statistic_min = !strcmp(arg, "min");
        return 0;
    case OPT_WARMUP: return tune_timing_args_add(&a->timing, "--warmup", arg);
    case OPT_SAMPLES: return tune_timing_args_add(&a->timing, "--samples", arg);
    case OPT_MIN_SAMPLE_MS: return tune_timing_args_add(&a->timing, "--min-sample-ms", arg);
    case OPT_NO_GRAPH: return tune_timing_args_add(&a->timing, "--no-graph", NULL);
    }
    return 0;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "Sweep your own kernel over a BONSAI search space. The space is a CSV: line 1 the\n"
           "parameter names, line 2 their types (Integer, Real, String), line 3 Compile or\n"
           "Runtime, then one record per line. Compile-time parameters become -D flags; the\n"
           "records of one compile-time tuple are built once (nvcc, -j builds at a time,\n"
           "cached in <work>/sweep-builds/). Your driver (tune/sweep_driver.h) allocates,\n"
           "copies, launches, tests and cleans up each record; lscat times the launch with its\n"
           "timing core. The output CSV holds Record, the parameters, Status (Success,\n"
           "Failure, Abandoned), Error (None, Compile, Launch, Test, Crash, Timeout), Time\n"
           "(seconds per launch) and your driver's output columns; each row is written as its\n"
           "record finishes, and a run on an existing output resumes it: records with a row\n"
           "are skipped, none is lost or done twice. A crash or hang of your code costs its\n"
           "record, not the sweep.\n\n", usage);
    cli_print_options(stdout, opts);
    printf("\nExit status: 0 every selected record has a row and none failed; 1 some records\n"
           "failed (their rows say why); 2 usage, a malformed space (the message names file,\n"
           "line and column) or an output of another space; 3 records were left unrun (no CUDA device,\n"
           "interrupted) or the sweep could not run (bad space, nvcc missing, I/O): run again\n"
           "to resume.\n"
           "Environment: LSCAT_SHARE_DIR (where tune/sweep_host.cu lives), CUDA_HOME,\n"
           "SLURM_ARRAY_TASK_ID/COUNT/MIN (see --shard), LSCAT_SWEEP_PRESTART=0 (start a\n"
           "tuple's host program only when its first record comes, not during a worker's last\n"
           "records of the tuple before), LSCAT_SWEEP_PRESTART_LEAD_S (how long before a\n"
           "worker runs out of a tuple's records, as their times so far predict, the next\n"
           "tuple's host starts; default 1.5 host starts), LSCAT_TUNE_CONTEXT_GATE=0 (the\n"
           "workers' fresh hosts make their CUDA contexts all at once, not one at a time).\n");
    cli_print_common_help(stdout);
}

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int summary(const struct usersweep_counts *c, const struct usersweep_options *o)
{
    fprintf(stderr, "sweep: %d of %d records selected (%d already done), %d groups to build "
            "(%d built, %d cached, %d failed) in %.1f s; Success %d, Abandoned %d, Compile %d, "
            "Launch %d, Test %d, Crash %d, Timeout %d; %d left unrun%s\n",
            c->selected, c->records, c->already_done, c->groups, c->groups_built,
            c->groups_cached, c->groups_failed, c->build_s, c->success, c->abandoned,
            c->compile, c->launch, c->test, c->crash, c->timeout, c->pending,
            c->interrupted ? " (interrupted)" : "");
    if ((c->pending && !o->compile_only) || c->interrupted)
        return LSCAT_EXIT_FATAL;
    return c->compile + c->launch + c->test + c->crash + c->timeout ? LSCAT_EXIT_FAILURES
                                                                    : LSCAT_EXIT_OK;
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct args a = { .o = USERSWEEP_OPTIONS_INIT, .shard = SHARD_INIT };
    struct usersweep_counts counts;
    int rc = cli_parse(&cli, "lscat-sweep", argc, argv, opts, on_opt, &a);
    if (rc == CLI_HELP) {
        help();
        cli_release(&cli);
        return LSCAT_EXIT_OK;
    }
    if (rc == 0 && (!a.o.kernel_path || !a.o.driver_path || !a.o.space_path || !a.o.out_path))
        rc = lscat_error_setc(LSCAT_EINVALID, "--kernel, --driver, --space and --out are all "
                                              "needed");
    if (rc == 0)
        rc = cli_no_args(&cli);
    if (rc == 0)
        rc = shard_from_env(&a.shard);
    if (rc < 0) {
        rc = cli_usage_error(&cli, usage);
        cli_release(&cli);
        return rc;
    }
    a.o.timing_args = a.timing.argv;
    a.o.work_dir = cli.work_dir;
    a.o.jobs = cli.jobs;
    a.o.shard = a.shard.index, a.o.shard_count = a.shard.count;
    a.o.stop = (const volatile int *)&stop_flag;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    rc = usersweep_run(&counts, &a.o);
    if (rc == LSCAT_EINVALID) /* a bad space, or an output of another sweep: the user's input */
        fprintf(stderr, "lscat-sweep: %s\n", lscat_error_last());
    rc = rc == LSCAT_EINVALID ? LSCAT_EXIT_USAGE : rc < 0 ? cli_fatal(&cli)
                                                          : summary(&counts, &a.o);
    cli_release(&cli);
    return rc;
}
