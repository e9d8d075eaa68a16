/* lscat-mpi: `mpirun -np N lscat execute|tune|sweep --mpi ...` (the dispatcher execs this program
 * when it sees --mpi). Takes the MPI options out of the stage's command line, checks that it
 * runs under mpirun with at least two ranks, and makes rank 0 the server and every other rank
 * a worker (tune/mpi_serve.c, tune/mpi_work.c). The only lscat program that links libmpi. */
#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "tune/mpi.h"

#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] = "mpirun -np N lscat execute|tune|sweep --mpi [--chunk N] "
                            "[--inflight N] [--mpi-gpus local|all] [stage options]";

static void help(void)
{
    printf("usage: %s\n\n"
           "Runs a stage across the ranks of an Open MPI job. Rank 0 owns the store (execute,\n"
           "tune) or the output CSV (sweep) and serves chunks of work on request; every other\n"
           "rank runs the stage's own program on its chunks on node-local scratch ($TMPDIR),\n"
           "against a store holding only the chunk's kernels, and ships back what the stage\n"
           "wrote: rank 0 merges it in one transaction (lscat dataset merge, in a thread of\n"
           "its own) or appends the chunk's sweep rows to the output. Rank 0 does no work\n"
           "itself: -np N gives N-1 workers, so run at least 2 ranks.\n\n"
           "  --chunk N             kernels (execute, tune; default 8, the queue's last\n"
           "                        chunks smaller; kernels the store says are most likely\n"
           "                        done ride along) or records of one\n"
           "                        compile-time tuple (sweep; default 64, fewer where\n"
           "                        that leaves under 4 chunks per worker; a tuple's records\n"
           "                        are dealt to its chunks in turn) per chunk\n"
           "  --inflight N          chunks a worker rank runs at once (sweep: 2, so the\n"
           "                        next chunk starts up while this one measures, and\n"
           "                        measures once this one is done; execute: 1; sweep with\n"
           "                        --mpi-gpus all: only 1). tune with --mpi-gpus local runs\n"
           "                        a rank's chunks in one lscat-tune --serve, whose runner\n"
           "                        (process, CUDA context) stays from chunk to chunk: N is\n"
           "                        how many are queued to it (default 1: a queued chunk\n"
           "                        waits behind a slow one while other ranks may idle);\n"
           "                        LSCAT_MPI_SERVE=0: a process per chunk, default 2\n"
           "  --mpi-gpus local|all  local (default): each worker rank gets one GPU of its node,\n"
           "                        by its place among the node's workers (CUDA_VISIBLE_DEVICES);\n"
           "                        all: each worker's stage uses every GPU of its node (run one\n"
           "                        worker rank per node: mpirun --map-by ppr:1:node)\n\n"
           "A worker whose stage process is killed loses only its chunk, which is handed out\n"
           "again (up to 3 times; a killed lscat-tune --serve: the chunk it measured, the ones\n"
           "queued behind it go to a new one). A worker whose stage exits 3 (its GPU is gone, or a fatal\n"
           "error there) gets no more chunks, and what it left unrun is handed out again.\n"
           "A rank that dies takes the job down (Open MPI's default); what rank 0 had\n"
           "written stays, and the same command resumes it. --shard and tune's --follow\n"
           "are refused with --mpi. Details: docs/mpi.md.\n"
           "Exit status: as the stage's (the worst of its chunks); 2 usage (not under mpirun,\n"
           "one rank, --shard); 3 fatal or chunks left undone.\n",
           usage);
}

/* Every rank parses the command line; only the first says what is wrong with it. */
static int usage_error(const char *fmt, const char *arg)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (rank && strcmp(rank, "0"))
        return LSCAT_EXIT_USAGE;
    fprintf(stderr, "lscat-mpi: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: %s\n", usage);
    return LSCAT_EXIT_USAGE;
}

static int stage_of(struct mpi_job *job, const char *name)
{
    static const char *const names[] = { "execute", "tune", "sweep" };
    static const char *const programs[] = { "lscat-execute", "lscat-tune", "lscat-sweep" };
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, names[i])) {
            job->stage = (enum mpi_stage)i, job->program = programs[i];
            job->chunk = i == MPI_STAGE_SWEEP ? 64 : 8;
            job->inflight = i == MPI_STAGE_EXECUTE ? 1 : 0; /* 0: the stage's default */
            return 0;
        }
    return -1;
}

/* "--name value" or "--name=value": 1 (value in *v, i advanced), 0 when argv[*i] is not it. */
static int take(const char **v, char **argv, int argc, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return 0;
    if (argv[*i][n] == '=') {
        *v = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] || *i + 1 >= argc)
        return argv[*i][n] ? 0 : (*v = NULL, 1);
    *v = argv[++*i];
    return 1;
}

static int parse_rows(struct mpi_job *job, const char *v)
{
    char *end = NULL;
    const char *colon = strchr(v, ':');
    if (!colon)
        return -1;
    job->rows_from = colon == v ? 0 : (int)strtol(v, &end, 10);
    job->rows_to = colon[1] ? (int)strtol(colon + 1, &end, 10) : 0;
    return 0;
}

/* One argument of the stage's command line: an MPI option, a refused one, one rank 0 needs, or
 * one passed to the stage. Returns 0 or the usage error's exit code. */
static int one_arg(struct mpi_job *job, char **argv, int argc, int *i)
{
    const char *v = NULL, *a = argv[*i];
    long n;
    if (!strcmp(a, "--mpi"))
        return 0;
    if (!strcmp(a, "--shard") || !strncmp(a, "--shard=", 8) || !strcmp(a, "--follow"))
        return usage_error("%s cannot go with --mpi (rank 0 hands out the chunks itself)", a);
    if (take(&v, argv, argc, i, "--chunk")) {
        if (!v || cli_parse_int(&n, "--chunk", v, 1, 1000000) < 0)
            return usage_error("%s", v ? lscat_error_last() : "--chunk needs a value");
        job->chunk = (int)n;
    } else if (take(&v, argv, argc, i, "--inflight")) {
        if (!v || cli_parse_int(&n, "--inflight", v, 1, 8) < 0)
            return usage_error("%s", v ? lscat_error_last() : "--inflight needs a value");
        job->inflight = (int)n;
    } else if (take(&v, argv, argc, i, "--mpi-gpus")) {
        if (!v || (strcmp(v, "local") && strcmp(v, "all")))
            return usage_error("bad --mpi-gpus '%s' (local or all)", v ? v : "");
        job->gpus = !strcmp(v, "all") ? MPI_GPUS_ALL : MPI_GPUS_LOCAL;
    } else if (take(&v, argv, argc, i, "--db") || take(&v, argv, argc, i, "--work") ||
               take(&v, argv, argc, i, "--jobs") || take(&v, argv, argc, i, "-j")) {
        if (!v)
            return usage_error("option '%s' needs a value", a);
        const char *env = a[1] == 'j' || a[2] == 'j' ? "LSCAT_JOBS"
                          : a[2] == 'd' ? "LSCAT_DB" : "LSCAT_WORK";
        if (cli_check_global(env[6] == 'J' ? "-j" : a, v) < 0)
            return usage_error("%s", lscat_error_last());
        setenv(env, v, 1);
    } else if (job->stage == MPI_STAGE_SWEEP && (take(&v, argv, argc, i, "--out") ||
               take(&v, argv, argc, i, "--rows"))) {
        if (!v || (a[2] == 'r' && parse_rows(job, v) < 0))
            return usage_error("bad or missing value of '%s'", a);
        if (a[2] == 'o')
            job->out_path = v;
    } else {
        if (job->stage == MPI_STAGE_SWEEP && !strcmp(a, "--space") && *i + 1 < argc)
            job->space_path = argv[*i + 1];
        else if (job->stage == MPI_STAGE_SWEEP && !strncmp(a, "--space=", 8))
            job->space_path = a + 8;
        job->args[job->nargs++] = argv[*i];
    }
    return 0;
}

static int parse_args(struct mpi_job *job, int argc, char **argv)
{
    if (argc < 2 || stage_of(job, argv[1]) < 0)
        return usage_error("'%s' cannot run under --mpi (execute, tune or sweep)",
                           argc < 2 ? "" : argv[1]);
    job->args = xcalloc((size_t)argc + 1, sizeof(char *));
    for (int i = 2; i < argc; i++) {
        int rc = one_arg(job, argv, argc, &i);
        if (rc)
            return rc;
    }
    if (job->stage == MPI_STAGE_SWEEP && (!job->out_path || !job->space_path))
        return usage_error("%s", "sweep --mpi needs --space and --out (rank 0 writes the output)");
    /* A sweep's measurements take no GPU lock: two chunks of one rank take turns through the
     * chunk turn, which needs one GPU per worker rank (--mpi-gpus local). */
    if (job->stage == MPI_STAGE_SWEEP && job->gpus == MPI_GPUS_ALL && job->inflight > 1)
        return usage_error("%s", "sweep --mpi --mpi-gpus all runs one chunk per worker rank at "
                                 "a time (--inflight 1: the chunk turn needs one GPU per rank)");
    /* Served tune chunks: 1. The next chunk then starts in tens of ms (ask, store cut, its
     * path to the server, whose runner stays), and a chunk queued behind a slow one is never
     * stranded: on 2 H200s a rank held a queued chunk for 124 s behind a chunk of fault
     * series while the other rank idled 121 s with nothing left (docs/mpi.md "Chunks in
     * flight"). A process per chunk (execute aside): 2, to hide each child's start-up. */
    if (job->inflight == 0)
        job->inflight = (job->stage == MPI_STAGE_SWEEP && job->gpus == MPI_GPUS_ALL) ||
                                mpi_serve_on(job) ? 1 : 2;
    const char *db = getenv("LSCAT_DB"), *work = getenv("LSCAT_WORK");
    job->db_path = db ? xstrdup(db) : fs_join(work ? work : "./lscat-work", "lscat.db");
    return 0;
}

static char *self_dir(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    return xstrdup(n > 0 ? buf : ".");
}

/* This rank's place among the worker ranks of its node (rank 0 is no worker). */
static void node_place(int *index, int *workers, int rank)
{
    MPI_Comm node;
    int node_rank = 0, node_size = 1, here = rank == 0, zero_here = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    MPI_Allreduce(&here, &zero_here, 1, MPI_INT, MPI_MAX, node);
    MPI_Comm_free(&node);
    *index = node_rank - zero_here; /* rank 0 has node rank 0 in its node (key = rank) */
    *workers = node_size - zero_here;
}

static int run(struct mpi_job *job, int rank, int size)
{
    const char *tmp = getenv("TMPDIR");
    char *scratch = xasprintf("%s/lscat-mpi.%d.%ld", tmp && *tmp ? tmp : "/tmp", rank,
                              (long)getpid());
    int index = 0, workers = 0, code = 0;
    node_place(&index, &workers, rank);
    if (fs_mkdirs(scratch, 0700) < 0) {
        log_error("mpi: cannot make the scratch folder '%s': %s (set TMPDIR to a node-local "
                  "folder)", scratch, lscat_error_last());
        MPI_Abort(MPI_COMM_WORLD, LSCAT_EXIT_FATAL);
    }
    if (rank == 0)
        code = mpi_serve(job, size - 1, scratch);
    else
        code = mpi_work(job, scratch, index, workers);
    fs_remove_tree(scratch);
    free(scratch);
    return code;
}

/* mpirun binds each rank to a core when it starts 2 (a socket for more), and children inherit
 * it: a worker's lscat-tune, lscat-runner and harness (or all of a sweep's nvcc builds) shared
 * one core, which cost tune about 6% of its rate on an H200 (docs/mpi.md "Binding"). A rank
 * here is a dispatcher for a node's worth of work, so it takes every CPU its cpuset allows
 * (the kernel keeps only those); LSCAT_MPI_KEEP_BINDING=1 keeps mpirun's binding. */
static void unbind(int rank)
{
    cpu_set_t was, all;
    const char *keep = getenv("LSCAT_MPI_KEEP_BINDING");
    if ((keep && !strcmp(keep, "1")) || sched_getaffinity(0, sizeof(was), &was) != 0)
        return;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    if (sched_setaffinity(0, sizeof(all), &all) != 0 || sched_getaffinity(0, sizeof(all), &all))
        return;
    if (CPU_COUNT(&all) != CPU_COUNT(&was)) {
        char r[16], a[16], b[16];
        snprintf(r, sizeof(r), "%d", rank);
        snprintf(a, sizeof(a), "%d", CPU_COUNT(&was));
        snprintf(b, sizeof(b), "%d", CPU_COUNT(&all));
        log_event(LOG_DEBUG, "mpi_unbound", "rank", r, "cpus_bound", a, "cpus_now", b, NULL);
    }
}

int main(int argc, char **argv)
{
    struct mpi_job job = { .max_tries = 3, .gpus = MPI_GPUS_LOCAL };
    int rank = 0, size = 0, code;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help();
            return LSCAT_EXIT_OK;
        }
    if ((code = parse_args(&job, argc, argv)) != 0)
        goto done;
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_RANK")) {
        code = usage_error("%s", "--mpi runs under Open MPI's launcher: mpirun -np N lscat "
                                 "<stage> --mpi ... (without mpirun, leave out --mpi)");
        goto done;
    }
    const char *v = getenv("LSCAT_VERBOSITY");
    log_init("lscat-mpi", v && atoi(v) < 0 ? LOG_WARN : v && atoi(v) > 0 ? LOG_DEBUG : LOG_INFO,
             getenv("LSCAT_LOG_FORMAT") && !strcmp(getenv("LSCAT_LOG_FORMAT"), "json") ? LOG_JSON : LOG_TEXT);
    signal(SIGPIPE, SIG_IGN);
    job.self_dir = self_dir();
    /* A few control messages and chunk results: ob1 starts faster than UCX (about 0.17 s of
     * MPI_Init here), unless the user chose a PML (mpirun --mca pml ...). */
    setenv("OMPI_MCA_pml", "ob1", 0);
    int provided = 0; /* the main thread alone calls MPI; chunk children run in threads */
    double t_init = fs_mono_s();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    double t_run = fs_mono_s();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unbind(rank);
    if (size < 2) {
        code = usage_error("%s", "--mpi needs at least 2 ranks (rank 0 serves, the others "
                                 "work): mpirun -np 2 or more; for one process leave out --mpi");
    } else {
        code = run(&job, rank, size);
    }
    double t_fin = fs_mono_s();
    MPI_Finalize();
    /* What the job costs outside the work, for docs/mpi.md: on 4 H200s a 29.9 s MPI tune spent
     * 1.3 s outside rank 0's serving loop (session 27), mpirun's own start and end included. */
    if (rank == 0)
        log_info("mpi: rank 0: MPI_Init %.3f s, the run %.3f s, MPI_Finalize %.3f s",
                 t_run - t_init, t_fin - t_run, fs_mono_s() - t_fin);
    free((char *)job.self_dir);
done:
    free(job.args);
    free((char *)job.db_path);
    /* Only rank 0 says what went wrong and passes the code on: another rank exiting non-zero
     * first would make mpirun end the job before rank 0 has said it (a usage error, found
     * before MPI_Init, leaves `rank` 0 everywhere, so ask the launcher's variable). */
    const char *env_rank = getenv("OMPI_COMM_WORLD_RANK");
    return rank == 0 && (!env_rank || !strcmp(env_rank, "0")) ? code : 0;
}

/* ---- waiting and bytes over MPI, for both sides */

void mpi_wait_message(int src, int *source, int *tag, int *bytes)
{
    long nap_ns = 20000;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            *source = st.MPI_SOURCE, *tag = st.MPI_TAG;
            MPI_Get_count(&st, MPI_BYTE, bytes);
            return;
        }
        struct timespec ts = { 0, nap_ns };
        nanosleep(&ts, NULL);
        if (nap_ns < 1000000)
            nap_ns *= 2;
    }
}

#define PIECE_BYTES ((size_t)1 << 30)

void mpi_send_bytes(const void *data, size_t len, int dest)
{
    for (size_t off = 0; off < len; off += PIECE_BYTES) {
        size_t n = len - off < PIECE_BYTES ? len - off : PIECE_BYTES;
        MPI_Send((const char *)data + off, (int)n, MPI_BYTE, dest, MPI_TAG_DATA, MPI_COMM_WORLD);
    }
}

void mpi_recv_bytes(void *data, size_t len, int src)
{
    for (size_t off = 0; off < len; off += PIECE_BYTES) {
        size_t n = len - off < PIECE_BYTES ? len - off : PIECE_BYTES;
        MPI_Recv((char *)data + off, (int)n, MPI_BYTE, src, MPI_TAG_DATA, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
}

void mpi_bcast_blob(char **data, size_t *len)
{
    int64_t n = (int64_t)*len;
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (!*data)
        *data = xmalloc((size_t)n + 1);
    *len = (size_t)n;
    for (size_t off = 0; off < *len; off += PIECE_BYTES) {
        size_t piece = *len - off < PIECE_BYTES ? *len - off : PIECE_BYTES;
        MPI_Bcast(*data + off, (int)piece, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}
