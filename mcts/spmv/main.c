/* lscat-mcts-spmv: `lscat mcts search --backend spmv` on real GPUs. Every rank builds its part
 * of the distributed SpMV; rank 0 searches (mcts/run.h, the store, the CSV) and broadcasts each
 * implementation; every rank runs it, checks y against the CPU reference, and measures it
 * through the timing core's host-callback shape: a sample repeats the program until 0.01 s has
 * passed, divided; the sample is the maximum over ranks. Run under mpirun: 4 ranks on one GPU,
 * or one rank per GPU. The one program that links MPI and CUDA. */
#include "common/cli.h"
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "mcts/run.h"
#include "mcts/spmv/gpu.h"
#include "store/stage.h"
#include "tune/timing.h"

#include <cuda_runtime_api.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_DAG = 1, OPT_STREAMS, OPT_BACKEND, OPT_REPLAY, OPT_STRATEGY, OPT_ITERATIONS, OPT_SEED,
    OPT_OUT, OPT_ROWS, OPT_NNZ, OPT_SAMPLES,
};

static const struct cli_opt opts[] = {
    { "dag", 0, "DAG", "the program (its op= names bind to this back end)", OPT_DAG },
    { "streams", 0, "S", "streams", OPT_STREAMS },
    { "backend", 0, "NAME", "spmv", OPT_BACKEND },
    { "replay", 0, "FILE", "(ignored)", OPT_REPLAY },
    { "strategy", 0, "NAME", "coverage, fastest or random", OPT_STRATEGY },
    { "iterations", 0, "N", "implementations to measure in all (default: every one)",
      OPT_ITERATIONS },
    { "seed", 0, "N", "search seed (default 1)", OPT_SEED },
    { "out", 'o', "FILE", "results CSV", OPT_OUT },
    { "rows", 0, "N", "matrix rows (default 150000)", OPT_ROWS },
    { "nnz-per-row", 0, "N", "non-zeros per row (default 10)", OPT_NNZ },
    { "samples", 0, "N", "measurements per implementation (default 10)", OPT_SAMPLES },
    CLI_OPT_END,
};

struct opts {
    const char *dag, *out;
    long streams, iterations, rows, nnz, samples, seed;
    int strategy;
};

static int on_opt(void *ctx, int id, const char *arg)
{
    struct opts *o = ctx;
    switch (id) {
    case OPT_DAG: o->dag = arg; return 0;
    case OPT_STREAMS: return cli_parse_int(&o->streams, "--streams", arg, 1, MCTS_MAX_STREAMS);
    case OPT_STRATEGY: return mcts_strategy_parse(&o->strategy, arg);
    case OPT_ITERATIONS: return cli_parse_int(&o->iterations, "--iterations", arg, 1, INT_MAX);
    case OPT_SEED: return cli_parse_int(&o->seed, "--seed", arg, 0, LONG_MAX);
    case OPT_OUT: o->out = arg; return 0;
    case OPT_ROWS: return cli_parse_int(&o->rows, "--rows", arg, 8, 1L << 30);
    case OPT_NNZ: return cli_parse_int(&o->nnz, "--nnz-per-row", arg, 1, 1000);
    case OPT_SAMPLES: return cli_parse_int(&o->samples, "--samples", arg, 1, 10000);
    }
    return 0; /* --backend, --replay: lscat-mcts chose this program already */
}

struct ctx {
    struct spmv_gpu *gpu;
    const struct mcts_seq *seq;
    int reps, rank, ranks;
    long checked, samples;
    double worst_error;
};

static int run_reps(void *arg)
{
    struct ctx *c = arg;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < c->reps; r++)
        if (spmv_gpu_run(c->gpu, c->seq) < 0)
            return 1;
    return 0;
}

/* 1 on every rank when ok on every rank. */
static int all_ok(int ok)
{
    int out = 0;
    MPI_Allreduce(&ok, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return out;
}

static double percentile(const double *sorted, int n, double q)
{
    double pos = q / 100.0 * (n - 1);
    int lo = (int)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void summarise(struct mcts_times *out, double *v, int n)
{
    double mean = 0, var = 0;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    for (int i = 0; i < n; i++)
        mean += v[i] / n;
    for (int i = 0; i < n; i++)
        var += (v[i] - mean) * (v[i] - mean) / n;
    *out = (struct mcts_times){ percentile(v, n, 1), percentile(v, n, 10), percentile(v, n, 50),
                                percentile(v, n, 90), percentile(v, n, 99), sqrt(var) };
}

/* Collective: check the implementation against the CPU reference, choose the repetitions
 * that last 0.01 s on the slowest rank, take the samples (max over ranks). */
static int measure_all(struct ctx *c, struct mcts_times *out)
{
    struct timing_options to = TIMING_OPTIONS_INIT;
    struct timing_stats st;
    double err = INFINITY, per = 0, t0;
    int ok = spmv_gpu_clear(c->gpu) == 0 && spmv_gpu_run(c->gpu, c->seq) == 0 &&
             spmv_gpu_check(&err, c->gpu) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (!all_ok(ok) || !(err < 1e-9))
        return lscat_error_set("implementation %ld computes a wrong y (largest relative error "
                               "%.3g over ranks): %s", c->checked, err, ok ? "a synchronisation "
                               "is missing or misplaced" : lscat_error_last());
    c->checked++;
    c->worst_error = fmax(c->worst_error, err);
    c->reps = 1;
    t0 = MPI_Wtime();
    ok = run_reps(c) == 0 && cudaDeviceSynchronize() == cudaSuccess;
    per = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &per, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    c->reps = per > 0 ? (int)fmin(1e6, ceil(0.01 / per)) : 1;
    to.warmup = 1;
    to.samples = (int)c->samples;
    to.keep_raw = 1;
    ok = ok && timing_measure_host(&st, &to, run_reps, c) == 0;
    if (!all_ok(ok))
        return lscat_error_set("measuring implementation %ld failed: %s", c->checked - 1,
                               lscat_error_last());
    for (int i = 0; i < st.samples; i++)
        st.raw_ns[i] *= 1e-9 / c->reps;
    MPI_Allreduce(MPI_IN_PLACE, st.raw_ns, st.samples, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    summarise(out, st.raw_ns, st.samples);
    timing_stats_release(&st);
    return 0;
}

struct root_backend {
    struct mcts_backend be;
    struct ctx *c;
};

static int bcast_seq(const struct mcts_seq *seq)
{
    struct buf text = BUF_INIT;
    if (seq)
        mcts_seq_json(&text, seq);
    long len = (long)text.len;
    MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (len > 0)
        MPI_Bcast(text.data, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    buf_release(&text);
    return 0;
}

static int root_measure(struct mcts_backend *be, struct mcts_times *out,
                        const struct mcts_seq *seq)
{
    struct root_backend *r = (struct root_backend *)be;
    bcast_seq(seq);
    r->c->seq = seq;
    return measure_all(r->c, out);
}

/* Ranks other than 0: run what rank 0 sends until it sends nothing. */
static int follow(struct ctx *c, const struct mcts_dag *dag)
{
    struct mcts_seq *seq = xmalloc(sizeof(*seq));
    struct mcts_times t;
    int rc = 0;
    for (;;) {
        long len = 0;
        MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        if (len <= 0)
            break;
        char *text = xmalloc((size_t)len + 1);
        MPI_Bcast(text, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
        text[len] = '\0';
        int ok = mcts_seq_parse(seq, dag, text) == 0;
        free(text);
        c->seq = seq;
        if (!ok) { /* the first two collectives of measure_all, failing: rank 0 stops */
            double err = INFINITY;
            MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            all_ok(0);
            rc = LSCAT_ERR;
        } else if (measure_all(c, &t) < 0) {
            rc = LSCAT_ERR; /* rank 0 sees it too and stops the search */
        }
    }
    free(seq);
    return rc;
}

static int search_on_root(struct ctx *c, const struct mcts_dag *dag, const struct opts *o,
                          const struct cli *cli, int argc, char **argv)
{
    struct stage st = STAGE_INIT;
    struct root_backend rb = { { "spmv", root_measure, NULL }, c };
    struct mcts_run_summary sum;
    char input[128];
    snprintf(input, sizeof(input), "rows=%ld,nnz_per_row=%ld,ranks=%d,samples=%ld", o->rows,
             o->nnz, c->ranks, o->samples);
    struct mcts_run_options ro = { .dag_path = o->dag, .backend_input = input,
                                   .search = MCTS_SEARCH_OPTIONS_INIT,
                                   .iterations = o->iterations > 0 ? (int)o->iterations : -1,
                                   .commit_every = 1, .out_path = o->out };
    ro.search.streams = (int)o->streams;
    ro.search.strategy = o->strategy;
    ro.search.seed = (uint64_t)o->seed;
    int rc = stage_begin(&st, cli, "mcts", STAGE_CREATE, argc, argv);
    if (rc == 0)
        rc = mcts_run_search(&sum, st.store, st.run_id, dag, &rb.be, &ro);
    bcast_seq(NULL); /* the others stop */
    if (rc == 0)
        printf("spmv: %d implementations measured (%d resumed), %ld checked against the CPU "
               "reference (largest relative error %.2g); p10 fastest %.4g s, slowest %.4g s, "
               "ratio %.3f; %.2f s per implementation\n", sum.iterations, sum.resumed,
               c->checked, c->worst_error, sum.fastest_s, sum.slowest_s,
               sum.slowest_s / sum.fastest_s,
               sum.iterations > sum.resumed ? sum.search_s / (sum.iterations - sum.resumed) : 0);
    stage_end(&st, rc == 0 ? 0 : LSCAT_EXIT_FATAL, NULL);
    return rc;
}

static int local_rank(void)
{
    MPI_Comm local;
    int r = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &r);
    MPI_Comm_free(&local);
    return r;
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct opts o = { .rows = 150000, .nnz = 10, .samples = 10, .seed = 1 };
    struct ctx c = { 0 };
    struct mcts_dag *dag = NULL;
    struct spmv_part part = { 0 };
    struct spmv_exchange ex = { 0 };
    int devices = 0, rc, code = LSCAT_EXIT_OK;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.ranks);
    rc = cli_parse(&cli, "lscat-mcts-spmv", argc, argv, opts, on_opt, &o);
    if (rc < 0 || rc == CLI_HELP || !o.dag || !o.out || o.streams < 1) {
        if (c.rank == 0)
            fprintf(stderr, "lscat-mcts-spmv: %s\nusage: mpirun -np 4 lscat mcts search --dag "
                    "DAG --streams S --backend spmv --out RESULTS.csv [--iterations N] "
                    "[--rows N] [--nnz-per-row N] [--samples N]\n",
                    rc < 0 ? lscat_error_last() : "missing --dag, --streams or --out");
        code = LSCAT_EXIT_USAGE;
        goto done;
    }
    c.samples = o.samples;
    rc = mcts_dag_load(&dag, o.dag) == 0 && cudaGetDeviceCount(&devices) == cudaSuccess &&
         devices > 0 && spmv_part_make(&part, o.rows, (int)o.nnz, c.rank, c.ranks, 7) == 0 &&
         spmv_exchange_setup(&ex, &part, MPI_COMM_WORLD) == 0 &&
         spmv_gpu_new(&c.gpu, dag, &part, &ex, local_rank() % devices, (int)o.streams) == 0;
    if (!all_ok(rc)) {
        fprintf(stderr, "lscat-mcts-spmv: rank %d: %s\n", c.rank,
                devices == 0 ? "no CUDA device" : lscat_error_last());
        code = LSCAT_EXIT_FATAL;
        goto done;
    }
    rc = c.rank == 0 ? search_on_root(&c, dag, &o, &cli, argc, argv) : follow(&c, dag);
    if (rc < 0) {
        fprintf(stderr, "lscat-mcts-spmv: rank %d: %s\n", c.rank, lscat_error_last());
        code = LSCAT_EXIT_FATAL;
    }
done:
    spmv_gpu_free(c.gpu);
    spmv_exchange_release(&ex);
    spmv_part_release(&part);
    mcts_dag_free(dag);
    cli_release(&cli);
    MPI_Finalize();
    return code;
}
