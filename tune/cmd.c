/* lscat-tune: sweep matrix sizes x block shapes for every runnable kernel on the node's GPUs.
 * Thin: parse options, find the GPUs, open the store, run the sweep engine (tune/sweep.c),
 * record the run, turn the outcome into an exit code. */
#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/shard.h"
#include "common/xalloc.h"
#include "store/stage.h"
#include "tune/gpus.h"
#include "tune/runner.h"
#include "tune/sweep.h"
#include "tune/timing_args.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] = "lscat tune [--gpus all|0,1] [--sizes LIST] [--space fit|lscat | "
                            "--blocks LIST] [--remeasure] [options]";

enum {
    OPT_GPUS = 1, OPT_SIZES, OPT_BLOCKS, OPT_TIMEOUT, OPT_STARTUP, OPT_MAX_FAILURES,
    OPT_REMEASURE, OPT_KERNEL, OPT_LIMIT, OPT_WARMUP, OPT_SAMPLES, OPT_MIN_SAMPLE_MS,
    OPT_TARGET_REL_MAD, OPT_L2_FLUSH, OPT_LOCK_CLOCKS, OPT_I_OWN, OPT_NO_PRESTART, OPT_FOLLOW,
    OPT_NO_RUNNER, OPT_RUNNER_KERNELS, OPT_NO_GRAPH, OPT_CONFIG_BUDGET, OPT_SHARD, OPT_SPACE,
    OPT_SIZE_FAULTS, OPT_SERVE,
};
static const struct cli_opt opts[] = {
    { "gpus", 0, "LIST", "GPUs to use: 'all' (default) or CUDA indices, e.g. 0,1", OPT_GPUS },
    { "sizes", 0, "LIST", "matrix sizes, N (square) or WxH, swept smallest first (default "
      TUNE_DEFAULT_SIZES ")", OPT_SIZES },
    { "space", 0, "NAME", "block shapes: fit (default: fitted to each kernel's indexing; a 1D "
      "kernel gets 20 1D shapes 32..1024, a kernel indexing y 15 2D shapes and 5 (X,1) rows "
      "over a grid covering W x H) or lscat (LS-CAT's 20 for every kernel: 8x8,16x16,24x24,"
      "32x32 and 64..1024 in steps of 64)", OPT_SPACE },
    { "blocks", 0, "LIST", "block shapes for every kernel instead, X (1D), XxY or XxYxZ",
      OPT_BLOCKS },
    { "timeout", 0, "S", "per-configuration timeout in seconds (default 30; a long kernel's "
      "is extended from its smaller sizes, a fast kernel's hang is killed after 5 x what its "
      "ok configurations need, at least 5 s)", OPT_TIMEOUT },
    { "startup-timeout", 0, "S", "extra seconds for a harness's first configuration "
      "(context creation, while the runner has none yet; default 10)", OPT_STARTUP },
    { "max-failures", 0, "N", "harness crashes/timeouts/sticky errors before a kernel is "
      "given up on a GPU (default 5); a block shape's first sticky error is not counted: that "
      "shape is skipped at the kernel's larger sizes instead", OPT_MAX_FAILURES },
    { "size-faults", 0, "N", "once a kernel's output-check reference block has failed, a size "
      "where N shapes failed with sticky CUDA errors and none ran ok has its other shapes "
      "recorded 'skipped', saying why, instead of faulting each (default 2; 0: never)",
      OPT_SIZE_FAULTS },
    { "remeasure", 0, NULL, "measure again what is already measured (old rows are kept, "
      "marked superseded)", OPT_REMEASURE },
    { "no-prestart", 0, NULL, "start each harness only when its kernel's turn comes (default: "
      "the next kernel's harness starts, held, while one is measured; with the runner, once a "
      "runner of a GPU broke, a spare runner is held there, which takes over after the next "
      "crash, timeout or sticky error)",
      OPT_NO_PRESTART },
    { "no-runner", 0, NULL, "one harness process per kernel (default: kernels with a "
      "harness.so run in one long-lived lscat-runner per GPU)", OPT_NO_RUNNER },
    { "runner-kernels", 0, "N", "recycle a GPU's lscat-runner after N kernels (default "
      "200)", OPT_RUNNER_KERNELS },
    { "follow", 0, NULL, "while an `lscat execute` runs on this store on this host, keep "
      "measuring the kernels it makes runnable; end when it has ended and all are measured "
      "(started first, it waits up to 30 s for an execute run to begin)",
      OPT_FOLLOW },
    { "kernel", 0, "PREFIX", "only kernels whose id starts with PREFIX", OPT_KERNEL },
    { "limit", 0, "N", "at most N kernels", OPT_LIMIT },
    { "shard", 0, "I/N", "only the kernels of shard I of N (by a hash of the kernel id; "
      "default: SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT when set); merge the shard stores "
      "with `lscat dataset merge`", OPT_SHARD },
    { "warmup", 0, "N", "harness: untimed runs first (default 3)", OPT_WARMUP },
    { "samples", 0, "N", "harness: timed samples (default 10)", OPT_SAMPLES },
    { "min-sample-ms", 0, "X", "harness: a sample batches launches to last X ms (default 1)",
      OPT_MIN_SAMPLE_MS },
    { "target-rel-mad", 0, "X", "harness: adaptive sampling until MAD/median < X",
      OPT_TARGET_REL_MAD },
    { "l2-flush", 0, NULL, "harness: flush L2 before every sample (cold cache)", OPT_L2_FLUSH },
    { "no-graph", 0, NULL, "harness: launch a sample's launches one by one from the host "
      "(default: through a CUDA graph captured from them; lscat before schema v3 timed one by "
      "one; sets LSCAT_TIMING_GRAPH=0)", OPT_NO_GRAPH },
    { "config-budget", 0, "S", "harness: a kernel whose one launch times t with samples x t > S "
      "takes max(1, S / t) samples instead (long kernels; default 10; 0: never cut; sets "
      "LSCAT_TIMING_BUDGET_S)", OPT_CONFIG_BUDGET },
    { "lock-clocks", 0, "MHZ", "lock SM clocks through NVML for the sweep (needs "
      "--i-own-these-gpus; never on shared machines)", OPT_LOCK_CLOCKS },
    { "i-own-these-gpus", 0, NULL, "consent for --lock-clocks: these GPUs are yours to "
      "reconfigure", OPT_I_OWN },
    { "serve", 0, NULL, "internal, for `lscat tune --mpi`'s worker ranks: read store paths "
      "one a line on stdin, tune each as if given --db PATH, answer 'done EXIT-CODE' on file "
      "descriptor 3; each GPU's lscat-runner is kept from one store to the next", OPT_SERVE },
    CLI_OPT_END,
};

struct args {
    const char *gpus, *sizes, *blocks, *kernel, *space_name;
    struct tune_space space, space_2d; /* from sizes, --space and blocks, parsed once in main */
    double timeout_s, startup_s, config_budget_s;
    long samples;
    long max_failures, size_faults, limit, lock_mhz, runner_kernels;
    int remeasure, i_own, l2_flush, no_prestart, follow, no_runner, no_graph, serve;
    struct shard shard;
    struct tune_timing_args timing;
    char *dup[8];
    int ndup;
};

static int on_opt(void *ctx, int id, const char *arg)
{
    struct args *a = ctx;
    switch (id) {
    case OPT_GPUS: a->gpus = arg; return 0;
    case OPT_SIZES: a->sizes = arg; return 0;
    case OPT_BLOCKS: a->blocks = arg; return 0;
    case OPT_SPACE: a->space_name = arg; return 0;
    case OPT_KERNEL: a->kernel = arg; return 0;
    case OPT_SHARD: return shard_parse(&a->shard, "--shard", arg);
    case OPT_REMEASURE: a->remeasure = 1; return 0;
    case OPT_I_OWN: a->i_own = 1; return 0;
    case OPT_NO_PRESTART: a->no_prestart = 1; return 0;
    case OPT_NO_RUNNER: a->no_runner = 1; return 0;
    case OPT_NO_GRAPH: a->no_graph = 1; return 0;
    case OPT_SERVE: a->serve = 1; return 0;
    case OPT_CONFIG_BUDGET:
        return cli_parse_double(&a->config_budget_s, "--config-budget", arg, 0, 86400);
    case OPT_RUNNER_KERNELS:
        return cli_parse_int(&a->runner_kernels, "--runner-kernels", arg, 1, 1L << 30);
    case OPT_FOLLOW: a->follow = 1; return 0;
    case OPT_TIMEOUT: return cli_parse_double(&a->timeout_s, "--timeout", arg, 0.1, 86400);
    case OPT_STARTUP: return cli_parse_double(&a->startup_s, "--startup-timeout", arg, 0, 3600);
    case OPT_MAX_FAILURES: return cli_parse_int(&a->max_failures, "--max-failures", arg, 1, 1000);
    case OPT_SIZE_FAULTS: return cli_parse_int(&a->size_faults, "--size-faults", arg, 0, 1000);
    case OPT_LIMIT: return cli_parse_int(&a->limit, "--limit", arg, 1, 1L << 30);
    case OPT_LOCK_CLOCKS: return cli_parse_int(&a->lock_mhz, "--lock-clocks", arg, 100, 10000);
    case OPT_WARMUP: return tune_timing_args_add(&a->timing, "--warmup", arg);
    case OPT_SAMPLES: /* kept too: the deadline plan of long kernels needs it */
        if (tune_timing_args_add(&a->timing, "--samples", arg) < 0)
            return LSCAT_EINVALID;
        a->samples = strtol(arg, NULL, 10);
        return 0;
    case OPT_MIN_SAMPLE_MS: return tune_timing_args_add(&a->timing, "--min-sample-ms", arg);
    case OPT_TARGET_REL_MAD: return tune_timing_args_add(&a->timing, "--target-rel-mad", arg);
    case OPT_L2_FLUSH: a->l2_flush = 1; return tune_timing_args_add(&a->timing, "--l2-flush", NULL);
    }
    return 0;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "For every runnable kernel (kernels.status = 'runnable' with an ok build), run its\n"
           "harness on every selected GPU model over matrix sizes x block shapes (default\n"
           "LS-CAT's 7 sizes x 20 shapes fitted to the kernel's indexing: a 1D kernel gets 1D\n"
           "shapes, a 2D kernel 2D shapes and (X,1) rows over a grid covering W x H; --space\n"
           "lscat: LS-CAT's own 20 for every kernel) and record each configuration in\n"
           "`measurements` (status ok,\n"
           "cuda_error, invalid_config, crashed, timeout, skipped), the occupancy API's\n"
           "suggested block in `tune_kernels`. One harness process per kernel and GPU runs all\n"
           "its configurations; a crash or hang is recorded and the harness restarted at the\n"
           "next configuration; after --max-failures the kernel is given up (failures table).\n"
           "A block shape that fails with a sticky CUDA error (illegal address: e.g. a 1D block\n"
           "on a 2D kernel's fixed shared tile) is not run at the kernel's larger sizes: those\n"
           "are recorded 'skipped', with the size where it failed, and count as measured.\n"
           "Every ok configuration's output is checked against a reference block's on the\n"
           "same inputs (measurements.output_check: match, mismatch, nondeterministic,\n"
           "not_checked; docs/isolate.md \"Output check\"); reports use match rows only.\n"
           "One worker per GPU, dynamic dispatch, one kernel per GPU at a time; each GPU model\n"
           "measures each kernel once. Resumable: a second run measures only what is missing.\n"
           "A GPU is locked while a kernel is measured on it (LSCAT_LOCK_DIR, default\n"
           "/tmp/lscat-locks): other lscat runs (execute's probes, another tune) wait.\n"
           "With --follow, run it beside `lscat execute`: the GPUs measure while the CPUs\n"
           "build the next kernels.\n"
           "Without a CUDA device it says so and exits 0. See docs/tune.md.\n\n"
           "Options:\n",
           usage);
    cli_print_options(stdout, opts);
    printf("\nEnvironment: LSCAT_GPUINFO overrides the GPU discovery helper (lscat-gpuinfo),\n"
           "LSCAT_RUNNER the long-lived harness host (lscat-runner, beside lscat-tune);\n"
           "LSCAT_TUNE_SPARE_RUNNER=1 holds a spare runner from the start (default: once a\n"
           "runner of that GPU broke), =0 never; LSCAT_TUNE_CONTEXT_GATE=0 lets the GPUs'\n"
           "runners make their CUDA contexts at once (default: one at a time across the\n"
           "host's lscat processes, a lock in LSCAT_LOCK_DIR: the first GPU measures sooner).\n");
    cli_print_common_help(stdout);
}

static volatile int g_stop;
static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* lscat-runner: $LSCAT_RUNNER, else beside this program; NULL when there is none. */
static char *runner_path(void)
{
    const char *env = getenv("LSCAT_RUNNER");
    char self[PATH_MAX];
    if (env && *env)
        return access(env, X_OK) == 0 ? xstrdup(env) : NULL;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return NULL;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    char *p = fs_join(self, "lscat-runner");
    if (access(p, X_OK) == 0)
        return p;
    free(p);
    return NULL;
}

/* a->space (and with --space fit a->space_2d) from --sizes, --space and --blocks. */
static int parse_spaces(struct args *a)
{
    const char *b1 = NULL, *b2 = NULL;
    int rc = tune_space_named(&b1, &b2, a->space_name, a->blocks);
    if (rc >= 0)
        rc = tune_space_parse(&a->space, a->sizes, b1);
    if (rc >= 0 && b2 && (rc = tune_space_parse(&a->space_2d, a->sizes, b2)) < 0)
        tune_space_release(&a->space);
    return rc;
}

static void print_summary(const struct tune_counts *c)
{
    printf("tune: %d GPU(s), %d kernel run(s) planned: %d done, %d given up; %d of %d "
           "configurations reported (%d ok, %d cuda_error, %d invalid_config, %d crashed, "
           "%d timeout, %d skipped after %d block shape(s) failed stickily and %d size(s) had "
           "only faults after a failed reference); output check of "
           "the ok ones: %d match, %d mismatch, %d nondeterministic, %d not_checked (%.2f s; "
           "%d kernel(s) unchecked from a size where their reference block failed)%s\n",
           c->gpus, c->kernels_planned, c->kernels_done, c->kernels_given_up,
           c->configs_reported, c->configs_planned, c->ok, c->cuda_error, c->invalid_config,
           c->crashed, c->timeout, c->skipped, c->shapes_failed, c->sizes_skipped, c->match,
           c->mismatch,
           c->nondeterministic, c->not_checked, (double)c->check_ns / 1e9, c->ref_failures,
           c->interrupted ? "; interrupted" : "");
}

static int sweep(struct cli *cli, struct args *a, struct tune_gpu *gpus, int n, int argc,
                 char **argv, struct runner_host **hosts)
{
    struct stage st = STAGE_INIT;
    struct tune_options o = TUNE_OPTIONS_INIT;
    struct tune_counts c;
    char *runner = NULL;
    int code = LSCAT_EXIT_FATAL, locked = 0;
    char counts[1024];
    memset(&c, 0, sizeof(c));
    o.space = a->space; /* borrowed: main releases them */
    o.space_2d = a->space_2d;
    if (stage_begin(&st, cli, "tune", 0, argc, argv) < 0 ||
        tune_gpus_register(st.store, gpus, n) < 0)
        goto fail;
    if (a->lock_mhz) {
        if (tune_clocks_lock(gpus, n, (int)a->lock_mhz) < 0)
            goto fail;
        locked = 1;
    }
    if (a->no_graph) /* read by the timing core in every harness (tune/timing.h) */
        setenv("LSCAT_TIMING_GRAPH", "0", 1);
    char budget[32];
    snprintf(budget, sizeof(budget), "%g", a->config_budget_s);
    setenv("LSCAT_TIMING_BUDGET_S", budget, 1); /* read by the timing core too */
    o.samples = (int)a->samples;
    o.config_budget_s = a->config_budget_s;
    o.db_path = cli->db_path;
    o.work_dir = cli->work_dir;
    o.config_timeout_s = a->timeout_s;
    o.startup_s = a->startup_s;
    o.max_failures = (int)a->max_failures;
    o.size_faults = (int)a->size_faults;
    o.remeasure = a->remeasure;
    o.no_prestart = a->no_prestart;
    runner = a->no_runner ? NULL : runner_path();
    o.runner = runner;
    if (a->runner_kernels)
        o.runner_kernels = (int)a->runner_kernels;
    o.follow = a->follow;
    o.kernel_prefix = a->kernel;
    o.limit_kernels = (int)a->limit;
    o.shard = a->shard;
    o.timing_args = a->timing.argv;
    o.l2_flush = a->l2_flush;
    o.clocks_locked = locked;
    o.run_id = st.run_id;
    o.stop = &g_stop;
    o.hosts = locked ? NULL : hosts; /* a kept runner's environment says its clocks' state */
    if (tune_sweep(&c, st.store, &o, gpus, n) < 0)
        goto fail;
    code = c.interrupted || c.gpus_lost ? LSCAT_EXIT_FATAL
           : c.kernels_given_up        ? LSCAT_EXIT_FAILURES
                                       : LSCAT_EXIT_OK;
    print_summary(&c);
    if (c.interrupted)
        fprintf(stderr, "lscat-tune: interrupted; run again to measure what is missing\n");
    if (c.gpus_lost)
        fprintf(stderr, "lscat-tune: %d GPU%s became unusable during the sweep (the "
                        "tune_device_lost lines say which and why); nothing was recorded for "
                        "the kernels they were measuring, and no kernel was given up for it: "
                        "check the GPUs (nvidia-smi) and run again to measure what is "
                        "missing\n", c.gpus_lost, c.gpus_lost == 1 ? "" : "s");
    goto done;
fail:
    fprintf(stderr, "lscat-tune: %s\n", lscat_error_last());
done:
    if (locked && tune_clocks_reset(gpus, n) < 0)
        fprintf(stderr, "lscat-tune: %s (reset them with nvidia-smi -rgc)\n", lscat_error_last());
    tune_counts_json(counts, sizeof(counts), &c);
    stage_end(&st, code, counts);
    free(runner);
    return code;
}

/* --serve: tune the stores named on stdin one after another, each GPU's lscat-runner kept
 * from one to the next (its process and CUDA context made once, before the first store comes),
 * and answer each on descriptor 3. lscat-mpi's worker ranks run their chunks so (tune/mpi_work.c):
 * a chunk of its own lscat-tune made and tore down a runner per chunk, beside the previous
 * chunk's measurements. Ends at the end of stdin, or on SIGTERM/SIGINT after the store in hand. */
static int serve(struct cli *cli, struct args *a, struct tune_gpu *gpus, int n, int argc,
                 char **argv)
{
    FILE *answers = fdopen(3, "w");
    if (!answers) {
        fprintf(stderr, "lscat-tune: --serve answers on file descriptor 3, which is not open "
                        "(it is for lscat-mpi's worker ranks)\n");
        return LSCAT_EXIT_USAGE;
    }
    struct runner_host **hosts = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*hosts));
    struct tune_options o = TUNE_OPTIONS_INIT;
    char *runner = a->no_runner ? NULL : runner_path();
    o.runner = runner;
    o.no_prestart = a->no_prestart;
    if (a->runner_kernels)
        o.runner_kernels = (int)a->runner_kernels;
    if (!a->lock_mhz)
        tune_hosts_start(hosts, &o, gpus, n);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int code = LSCAT_EXIT_OK;
    while (!g_stop && (len = getline(&line, &cap, stdin)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (!len)
            continue;
        free(cli->db_path);
        cli->db_path = xstrdup(line);
        code = n > 0 ? sweep(cli, a, gpus, n, argc, argv, hosts) : LSCAT_EXIT_OK;
        fflush(stdout);
        fflush(stderr);
        if (fprintf(answers, "done %d\n", code) < 0 || fflush(answers) != 0)
            break; /* lscat-mpi is gone */
    }
    free(line);
    fclose(answers);
    for (int i = 0; i < n; i++)
        runner_host_free(hosts[i]);
    free(hosts);
    free(runner);
    return code;
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct args a;
    struct tune_gpu *gpus = NULL;
    char why[1024];
    int code = LSCAT_EXIT_OK, n;
    memset(&a, 0, sizeof(a));
    a.timeout_s = 30;
    a.config_budget_s = 10;
    a.startup_s = 10;
    a.max_failures = 5;
    a.size_faults = 2;
    int rc = cli_parse(&cli, "lscat-tune", argc, argv, opts, on_opt, &a);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc >= 0 && cli.nargs > 0)
        rc = lscat_error_setc(LSCAT_EINVALID, "unexpected argument '%s'", cli.args[0]);
    if (rc >= 0)
        rc = shard_from_env(&a.shard);
    if (rc >= 0 && a.lock_mhz && !a.i_own)
        rc = lscat_error_setc(LSCAT_EINVALID, "refusing --lock-clocks without "
                              "--i-own-these-gpus: locking changes the GPU for every user "
                              "until reset; never do it on shared or lent machines");
    if (rc >= 0 && a.i_own && !a.lock_mhz)
        rc = lscat_error_setc(LSCAT_EINVALID, "--i-own-these-gpus only goes with --lock-clocks");
    if (rc >= 0) /* before GPU discovery: a bad list is a usage error even without a GPU */
        rc = parse_spaces(&a);
    if (rc < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    n = tune_gpus_discover(&gpus, why, sizeof(why));
    if (n < 0) {
        fprintf(stderr, "lscat-tune: %s\n", lscat_error_last());
        code = LSCAT_EXIT_FATAL;
        goto done;
    }
    if (n == 0) {
        printf("tune: no CUDA device: nothing measured (%s)\n", why);
        if (a.serve) /* each store is answered: nothing to measure in it */
            code = serve(&cli, &a, gpus, 0, argc, argv);
        goto done;
    }
    if ((n = tune_gpus_select(gpus, n, a.gpus)) < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    code = a.serve ? serve(&cli, &a, gpus, n, argc, argv)
                   : sweep(&cli, &a, gpus, n, argc, argv, NULL);
done:
    tune_space_release(&a.space);
    tune_space_release(&a.space_2d);
    free(gpus);
    cli_release(&cli);
    return code;
}
