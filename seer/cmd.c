/* lscat-seer: `bench` (time every SpMV kernel on every matrix through the GPU worker), `import`
 * (a bench table CSV into the store), `train` (the known, gathered and selector trees, their C
 * headers and the seer_select() runtime) and `eval` (strategies against the Oracle on the
 * held-back matrices). Thin: options, the library (seer/bench.c, train.c, eval.c), exit codes.
 * This program links no CUDA; bench runs lscat-seer-gpu, found beside it. */
#include "common/buf.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "seer/bench.h"
#include "seer/eval.h"
#include "store/stage.h"
#include "store/store.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "lscat seer bench [--matrices FILE...|DIR] [--generate SPEC|families|families-large]...\n"
    "                        [options]\n"
    "       lscat seer import BENCH.csv...\n"
    "       lscat seer train [--out DIR] [options]\n"
    "       lscat seer eval [--out DIR] [options]";

enum {
    OPT_MATRICES = 1, OPT_GENERATE, OPT_PRECISION, OPT_KERNELS, OPT_SAMPLES, OPT_MIN_SAMPLE_MS,
    OPT_MAX_ELL, OPT_CHUNK, OPT_FORCE, OPT_CSV, OPT_WORKER, OPT_OUT, OPT_GPU, OPT_ITER, OPT_SEED,
    OPT_TEST_FRACTION, OPT_MAX_DEPTH, OPT_MIN_LEAF, OPT_BUDGET, OPT_SPLIT, OPT_RISK, OPT_GUARD,
    OPT_FEATURES_ONLY, OPT_FEATURE_COST,
};

static const struct cli_opt bench_opts[] = {
    { "matrices", 'm', "PATH", "a Matrix Market file or a folder of *.mtx (repeatable; more "
      "files may follow as arguments)", OPT_MATRICES },
    { "generate", 'g', "SPEC", "a generated matrix, family:key=value,... (repeatable); "
      "'families' = the built-in set up to 4,000,000 rows, 'families-large' = 240 specs of "
      "100,000 to 6,300,000 rows (docs/seer.md)", OPT_GENERATE },
    { "precision", 0, "LIST", "float, double or float,double (default)", OPT_PRECISION },
    { "kernels", 0, "LIST", "only these kernels (default: all; docs/seer.md)", OPT_KERNELS },
    { "samples", 0, "N", "timing core samples per kernel (default 10)", OPT_SAMPLES },
    { "min-sample-ms", 0, "X", "timing core: a sample lasts at least X ms (default 1)",
      OPT_MIN_SAMPLE_MS },
    { "max-ell-gb", 0, "X", "ELL larger than X GB is recorded 'unsupported' (default 4)",
      OPT_MAX_ELL },
    { "chunk", 0, "N", "matrices per GPU worker process (default 8)", OPT_CHUNK },
    { "time-budget", 0, "S", "start no new worker chunk after S seconds (what is measured is "
      "kept; run again to resume)", OPT_BUDGET },
    { "force", 0, NULL, "measure again what the store already holds", OPT_FORCE },
    { "features-only", 0, NULL, "time only the GPU feature kernel (feature_ns and the "
      "asynchronous costs), no SpMV kernel; a matrix with a feature cost on this GPU is skipped",
      OPT_FEATURES_ONLY },
    { "csv", 0, "FILE", "write the bench table here (default <work>/seer/bench.csv)", OPT_CSV },
    { "worker", 0, "PATH", "the GPU worker (default: lscat-seer-gpu beside this program)",
      OPT_WORKER },
    CLI_OPT_END,
};

static const struct cli_opt model_opts[] = {
    { "out", 'o', "DIR", "model folder (default <work>/seer)", OPT_OUT },
    { "gpu", 0, "MODEL", "the GPU whose name contains MODEL (default: the most measured)",
      OPT_GPU },
    { "precision", 0, "P", "float or double (default double; eval: the model's, or this when it "
      "trains first)", OPT_PRECISION },
    { "iterations", 0, "LIST", "train: iteration counts (default 1,10,100,1000,10000)", OPT_ITER },
    { "seed", 0, "N", "train: seed of the split by matrix (default 42)", OPT_SEED },
    { "test-fraction", 0, "X", "train: share of matrices held back (default 0.25)",
      OPT_TEST_FRACTION },
    { "max-depth", 0, "N", "train: tree depth limit, 0 = none (default: chosen from 2, 4, 6, 8, "
      "12 by out-of-fold total time on the training matrices)", OPT_MAX_DEPTH },
    { "min-samples-leaf", 0, "N", "train: samples per leaf at least (default: chosen from 1, 3, "
      "5, 10, 20 likewise)", OPT_MIN_LEAF },
    { "split", 0, "KIND", "train: gini (CART's splits, leaves by cost) or cost (splits on the "
      "summed cost) (default: chosen likewise)", OPT_SPLIT },
    { "risk", 0, "X", "train: the known and gathered trees pick only kernels whose worst time "
      "on a training sample is <= X times the fastest; 0 = any (default: chosen from 0, 100, 20 "
      "likewise)", OPT_RISK },
    { "guard", 0, "X", "train: the gathered tree's row-length guard: a kernel is not picked past "
      "the row_max / mean where it last won on a training matrix once it was more than X times "
      "the fastest there; 0 = no guard (default: chosen from 0, 10, 2 likewise)", OPT_GUARD },
    { "feature-cost", 0, "KIND", "train: the gathering cost to learn and charge: sync (one "
      "launch + stream synchronisation in seer_select(), default), async (seer_gather_async() "
      "right after uploading row_ptr), async-resident (the matrix already on the GPU, "
      "seer_gather_async() before uploading x) or sync-upload (seer_select() gathering after "
      "the CSR and x uploads); the last three are measured in a caller's flow by bench since "
      "session 8 (eval: the model's, or this when it trains first)", OPT_FEATURE_COST },
    CLI_OPT_END,
};

enum { SUB_BENCH = 1, SUB_IMPORT, SUB_TRAIN, SUB_EVAL };
static const struct cli_subcommand subcommands[] = {
    { .name = "bench", .id = SUB_BENCH, .opts = bench_opts },
    { .name = "import", .id = SUB_IMPORT, .opts = NULL },
    { .name = "train", .id = SUB_TRAIN, .opts = model_opts },
    { .name = "eval", .id = SUB_EVAL, .opts = model_opts },
    CLI_SUBCOMMAND_END,
};

struct opts {
    struct seer_bench_options b;
    struct seer_train_options t;
    const char **matrices, **specs;
    int nmatrices, nspecs;
    const char *out, *gpu, *precision;
    int feature_cost; /* SEER_COST_* */
};

static int parse_iterations(struct seer_train_options *t, const char *arg)
{
    char *list = xstrdup(arg), *save = NULL;
    int rc = 0;
    t->niter = 0;
    for (char *s = strtok_r(list, ",", &save); s && rc == 0; s = strtok_r(NULL, ",", &save)) {
        double v;
        if (t->niter == SEER_MAX_ITER)
            rc = lscat_error_setc(LSCAT_EINVALID, "--iterations: at most %d counts", SEER_MAX_ITER);
        else if ((rc = cli_parse_double(&v, "--iterations", s, 1, 1e12)) == 0)
            t->iterations[t->niter++] = v;
    }
    free(list);
    if (rc == 0 && t->niter == 0)
        rc = lscat_error_setc(LSCAT_EINVALID, "--iterations needs at least one count");
    return rc;
}

/* Numeric options: their range, and where the value goes. */
/* A ratio to the fastest kernel (--risk, --guard): 0 turns it off, else >= 1. */
static int parse_ratio(double *out, const char *opt, const char *arg, const char *below_one,
                       const char *zero)
{
    double x = 0;
    int rc = cli_parse_double(&x, opt, arg, 0, 1e12);
    if (rc == 0 && x > 0 && x < 1)
        rc = lscat_error_setc(LSCAT_EINVALID, "%s: %g would %s (a ratio to the fastest is >= 1); "
                              "give 0 (%s) or >= 1", opt, x, below_one, zero);
    *out = x;
    return rc;
}

static int on_number(struct opts *o, int id, const char *arg)
{
    long n = 0;
    double x = 0;
    int rc = 0;
    switch (id) {
    case OPT_SAMPLES:
        rc = cli_parse_int(&n, "--samples", arg, 1, 1000);
        o->b.samples = (int)n;
        break;
    case OPT_CHUNK:
        rc = cli_parse_int(&n, "--chunk", arg, 1, 64);
        o->b.chunk = (int)n;
        break;
    case OPT_MIN_SAMPLE_MS:
        rc = cli_parse_double(&x, "--min-sample-ms", arg, 0.01, 1000);
        o->b.min_sample_ms = x;
        break;
    case OPT_MAX_ELL:
        rc = cli_parse_double(&x, "--max-ell-gb", arg, 0.001, 1e4);
        o->b.max_ell_gb = x;
        break;
    case OPT_BUDGET:
        rc = cli_parse_double(&x, "--time-budget", arg, 1, 1e7);
        o->b.budget_s = x;
        break;
    case OPT_SEED:
        rc = cli_parse_int(&n, "--seed", arg, 0, LONG_MAX);
        o->t.seed = (unsigned long long)n;
        break;
    case OPT_TEST_FRACTION:
        rc = cli_parse_double(&x, "--test-fraction", arg, 0.01, 0.99);
        o->t.test_fraction = x;
        break;
    case OPT_MAX_DEPTH:
        rc = cli_parse_int(&n, "--max-depth", arg, 0, 64);
        o->t.max_depth = (int)n;
        break;
    case OPT_MIN_LEAF:
        rc = cli_parse_int(&n, "--min-samples-leaf", arg, 1, 100000);
        o->t.min_samples_leaf = (int)n;
        break;
    case OPT_SPLIT:
        if (strcmp(arg, "gini") && strcmp(arg, "cost"))
            rc = lscat_error_setc(LSCAT_EINVALID, "--split: '%s' is neither gini nor cost", arg);
        o->t.split = strcmp(arg, "cost") ? SEER_SPLIT_GINI : SEER_SPLIT_COST;
        break;
    case OPT_RISK:
        rc = parse_ratio(&o->t.risk, "--risk", arg, "leave no kernel", "any kernel");
        break;
    case OPT_GUARD:
        rc = parse_ratio(&o->t.guard, "--guard", arg, "stop every kernel", "no guard");
        break;
    }
    return rc;
}

static int on_opt(void *ctx, int id, const char *arg)
{
    struct opts *o = ctx;
    switch (id) {
    case OPT_MATRICES:
        o->matrices = xrealloc(o->matrices, (size_t)(o->nmatrices + 1) * sizeof(char *));
        o->matrices[o->nmatrices++] = arg;
        return 0;
    case OPT_GENERATE:
        o->specs = xrealloc(o->specs, (size_t)(o->nspecs + 1) * sizeof(char *));
        o->specs[o->nspecs++] = arg;
        return 0;
    case OPT_PRECISION:
        if (strcmp(arg, "float") && strcmp(arg, "double") && strcmp(arg, "float,double") &&
            strcmp(arg, "double,float"))
            return lscat_error_setc(LSCAT_EINVALID, "--precision must be float, double or "
                                    "float,double, not '%s'", arg);
        o->precision = o->b.precisions = arg;
        return 0;
    case OPT_KERNELS: o->b.kernels = arg; return 0;
    case OPT_FORCE: o->b.force = 1; return 0;
    case OPT_FEATURES_ONLY: o->b.features_only = 1; return 0;
    case OPT_FEATURE_COST:
        if ((o->feature_cost = seer_cost_by_name(arg)) < 0)
            return lscat_error_setc(LSCAT_EINVALID, "--feature-cost must be sync, async, "
                                    "async-resident or sync-upload, not '%s'", arg);
        return 0;
    case OPT_CSV: o->b.csv_path = arg; return 0;
    case OPT_WORKER: o->b.worker = arg; return 0;
    case OPT_OUT: o->out = arg; return 0;
    case OPT_GPU: o->gpu = arg; return 0;
    case OPT_ITER: return parse_iterations(&o->t, arg);
    }
    return on_number(o, id, arg);
}

static void help(void)
{
    printf("usage: %s\n\n"
           "Seer: pick the fastest SpMV kernel for a matrix at run time, counting the cost of\n"
           "looking at it (docs/seer.md).\n\n"
           "bench   Time every kernel (CSR thread/warp/block/merge-path, ELL, COO, adaptive CSR,\n"
           "        cuSPARSE) in float and double on every matrix: preprocessing, per-iteration\n"
           "        median (the timing core), and the GPU feature kernel's cost (synchronous, and\n"
           "        the exposed cost of seer_gather_async() in two caller flows); checked against\n"
           "        a double CPU reference. Into the store and a CSV. Resumable. Needs a CUDA\n"
           "        device and lscat-seer-gpu; without a device it stores the matrices' features\n"
           "        and says so. Malformed matrices are reported with file and line.\n"
           "import  Read bench CSVs (as bench writes them) into the store.\n"
           "train   The known, gathered and selector trees from the store's bench table (split by\n"
           "        matrix, seeded), their accuracies, and --out DIR with the trees as JSON, DOT\n"
           "        and C headers plus the seer_select() runtime (run 'make' there).\n"
           "eval    On the held-back matrices: Oracle, each kernel, cuSPARSE default, the three\n"
           "        strategies with feature and inference costs; eval.md, eval.csv, plots.\n"
           "        Trains first when DIR holds no model.\n\n"
           "Generator families (--generate family:key=value,...): banded (rows, cols, bw),\n"
           "uniform (avg), powerlaw (avg, alpha), blockdiag (block), longrows (avg, long, count),\n"
           "emptyrows (avg, empty); every family takes rows (required), cols and seed.\n\n"
           "bench options:\n", usage);
    cli_print_options(stdout, bench_opts);
    printf("\ntrain and eval options:\n");
    cli_print_options(stdout, model_opts);
    printf("\nExit status: 0 done; 1 finished with failures it recorded (refused matrices,\n"
           "faulting or wrong kernels); 2 usage; 3 fatal.\n");
    cli_print_common_help(stdout);
}


static char *beside_self(const char *prog)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0)
        return xstrdup(prog);
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    return xasprintf("%s/%s", buf, prog);
}

/* Open the store and record the run (stage_begin); on failure the message is printed and
 * st is ended. */
static int begin(struct stage *st, struct cli *cli, int argc, char **argv)
{
    if (stage_begin(st, cli, "seer", STAGE_CREATE, argc, argv) < 0) {
        int code = cli_fatal(cli);
        stage_end(st, code, NULL);
        return code;
    }
    return 0;
}

static int run_bench(struct cli *cli, struct opts *o, int argc, char **argv)
{
    struct stage st = STAGE_INIT;
    struct seer_bench_result r;
    char **items = NULL, *worker = NULL, *csv = NULL, counts[400];
    int n = 0, code;
    for (int i = 1; i < cli->nargs; i++)
        if (on_opt(o, OPT_MATRICES, cli->args[i]) < 0)
            return LSCAT_EXIT_USAGE;
    if (seer_bench_items(&items, &n, o->matrices, o->nmatrices, o->specs, o->nspecs) < 0) {
        fprintf(stderr, "lscat-seer: %s\n", lscat_error_last());
        return lscat_error_code() == LSCAT_EINVALID ? LSCAT_EXIT_USAGE : LSCAT_EXIT_FATAL;
    }
    if (n == 0) {
        fprintf(stderr, "lscat-seer: bench needs matrices: --matrices FILE|DIR or --generate "
                "SPEC (see lscat seer --help)\n");
        code = LSCAT_EXIT_USAGE;
        goto done;
    }
    if (!o->b.worker)
        o->b.worker = worker = beside_self("lscat-seer-gpu");
    if (access(o->b.worker, X_OK) != 0) {
        fprintf(stderr, "lscat-seer: the GPU worker %s is missing: it is built only where nvcc "
                "exists (see the build's 'skipped' line); bench needs it\n", o->b.worker);
        code = LSCAT_EXIT_FATAL;
        goto done;
    }
    if (!o->b.csv_path)
        o->b.csv_path = csv = xasprintf("%s/seer/bench.csv", cli->work_dir);
    o->b.items = (const char *const *)items;
    o->b.nitems = n;
    if ((code = begin(&st, cli, argc, argv)) != 0)
        goto done;
    o->b.run_id = st.run_id;
    if (seer_bench_run(&r, st.store, &o->b) < 0) {
        fprintf(stderr, "lscat-seer: %s\n", lscat_error_last());
        code = LSCAT_EXIT_FATAL;
    } else if (r.no_device) {
        log_info("seer bench: no CUDA device (%s): %d matrices read and stored, nothing timed",
                 r.device, r.matrices);
        code = r.refused ? LSCAT_EXIT_FAILURES : LSCAT_EXIT_OK;
    } else {
        log_info("seer bench on %s: %d matrices measured, %d already complete, %d refused; "
                 "kernels: %d ok, %d unsupported, %d faults, %d wrong; %d feature costs; "
                 "%d worker restarts; %lld CSV rows in %s", r.device, r.matrices, r.skipped,
                 r.refused, r.ok, r.unsupported, r.faults, r.wrong, r.features, r.restarts,
                 (long long)r.csv_rows, o->b.csv_path);
        if (r.left)
            log_info("seer bench: the time budget (%g s) ran out with %d matrices not measured; "
                     "run the same command again to measure them", o->b.budget_s, r.left);
        code = r.refused || r.faults || r.wrong ? LSCAT_EXIT_FAILURES : LSCAT_EXIT_OK;
    }
    snprintf(counts, sizeof(counts), "{\"command\":\"bench\",\"matrices\":%d,\"skipped\":%d,"
             "\"refused\":%d,\"ok\":%d,\"faults\":%d,\"wrong\":%d,\"unsupported\":%d}",
             r.matrices, r.skipped, r.refused, r.ok, r.faults, r.wrong, r.unsupported);
    stage_end(&st, code, counts);
done:
    seer_bench_items_free(items);
    free(worker);
    free(csv);
    return code;
}

static int run_import(struct cli *cli, int argc, char **argv)
{
    struct stage st = STAGE_INIT;
    int64_t total = 0;
    int code = begin(&st, cli, argc, argv);
    if (code)
        return code;
    for (int i = 1; code == 0 && i < cli->nargs; i++) {
        int64_t rows = 0;
        if (seer_db_import_csv(st.store, cli->args[i], &rows) < 0) {
            fprintf(stderr, "lscat-seer: %s\n", lscat_error_last());
            code = LSCAT_EXIT_FATAL;
        } else {
            log_info("imported %lld rows from %s", (long long)rows, cli->args[i]);
            total += rows;
        }
    }
    char counts[100];
    snprintf(counts, sizeof(counts), "{\"command\":\"import\",\"rows\":%lld}", (long long)total);
    stage_end(&st, code, counts);
    return code;
}

static void print_model(const struct seer_model *m, const char *dir)
{
    printf("seer train: %s, %s precision, %s feature cost: %d kernels, %d training matrices (%d "
           "samples), %d test matrices (%d samples)\n", m->gpu, m->precision,
           seer_cost_name(m->feature_cost), m->k, m->train_matrices,
           m->train_samples, m->ntest, m->test_samples);
    printf("test accuracy: known %.1f%%, gathered %.1f%%, selector %.1f%% (training: %.1f%%, "
           "%.1f%%, %.1f%%); %d of %d training samples labelled 'gather'\n",
           100 * m->acc_known, 100 * m->acc_gathered, 100 * m->acc_selector, 100 * m->train_known,
           100 * m->train_gathered, 100 * m->train_selector, m->selector_gather_labels,
           m->train_samples);
    printf("trees, C headers and the seer_select() runtime in %s (run 'make' there)\n", dir);
}

static int train_into(struct store *s, struct opts *o, const char *dir, int quiet)
{
    struct seer_table t;
    struct seer_model m;
    int rc = seer_table_load(&t, s, o->gpu, o->precision ? o->precision : "double",
                             o->feature_cost);
    if (rc == 0 && (rc = seer_train(&m, &t, &o->t)) == 0) {
        rc = seer_model_save(&m, &t, dir);
        if (rc == 0 && !quiet)
            print_model(&m, dir);
        seer_model_release(&m);
    }
    if (rc == 0 || t.rows)
        seer_table_release(&t);
    return rc;
}

static int run_eval(struct store *s, struct opts *o, const char *dir)
{
    struct seer_model m;
    struct seer_table t;
    struct seer_eval e;
    char *model = fs_join(dir, "model.json");
    int rc = 0;
    if (!fs_exists(model)) {
        log_info("no model in %s: training first", dir);
        rc = train_into(s, o, dir, 0);
    }
    free(model);
    if (rc < 0 || (rc = seer_model_load(&m, dir)) < 0)
        return rc;
    rc = seer_table_load(&t, s, o->gpu ? o->gpu : m.gpu, m.precision, m.feature_cost);
    if (rc == 0) {
        if ((rc = seer_eval_run(&e, &m, &t)) == 0 && (rc = seer_eval_write(&e, &m, dir)) == 0) {
            struct buf md = BUF_INIT;
            seer_eval_markdown(&md, &e, &m);
            fwrite(md.data, 1, md.len, stdout);
            buf_release(&md);
        }
        seer_table_release(&t);
    }
    seer_model_release(&m);
    return rc;
}

static int run_model(struct cli *cli, struct opts *o, int train, int argc, char **argv)
{
    struct stage st = STAGE_INIT;
    char *dir = o->out ? xstrdup(o->out) : xasprintf("%s/seer", cli->work_dir);
    int code = begin(&st, cli, argc, argv);
    if (code == 0) {
        int rc = train ? train_into(st.store, o, dir, 0) : run_eval(st.store, o, dir);
        if (rc < 0)
            code = cli_fatal(cli);
        stage_end(&st, code, NULL);
    }
    free(dir);
    return code;
}

static int check_args(const struct cli_subcommand *sub, struct cli *cli)
{
    if ((sub->id == SUB_TRAIN || sub->id == SUB_EVAL) && cli->nargs > 1)
        return lscat_error_setc(LSCAT_EINVALID, "unexpected argument '%s'", cli->args[1]);
    if (sub->id == SUB_IMPORT && cli->nargs < 2)
        return lscat_error_setc(LSCAT_EINVALID, "import needs at least one bench CSV");
    return 0;
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct opts o = { .b = SEER_BENCH_OPTIONS_INIT, .t = SEER_TRAIN_OPTIONS_INIT };
    int at = cli_find_subcommand(bench_opts, argc, argv), code = LSCAT_EXIT_OK;
    const struct cli_subcommand *sub = cli_subcommand_find(subcommands, at > 0 ? argv[at] : NULL);
    int rc = cli_parse(&cli, "lscat-seer", argc, argv, sub ? sub->opts : NULL, on_opt, &o);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc >= 0 && (!(sub = cli_subcommand(&cli, subcommands)) || check_args(sub, &cli) < 0))
        rc = LSCAT_EINVALID;
    if (rc < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    switch (sub->id) {
    case SUB_BENCH: code = run_bench(&cli, &o, argc, argv); break;
    case SUB_IMPORT: code = run_import(&cli, argc, argv); break;
    default: code = run_model(&cli, &o, sub->id == SUB_TRAIN, argc, argv); break;
    }
done:
    free(o.matrices);
    free(o.specs);
    cli_release(&cli);
    return code;
}
