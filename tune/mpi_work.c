/* lscat-mpi's workers: a thin MPI layer around the stage's own program. Each chunk runs as a
 * child process on node-local scratch ($TMPDIR): execute and tune against a fresh copy of the
 * store rank 0 broadcast at the start (the work folder is shared), sweep into a chunk CSV with
 * its builds cached in the rank's scratch. A killed child costs only its chunk: the worker
 * reports it and rank 0 hands the chunk out again. */
#include "tune/mpi.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "store/store.h"

#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern char **environ;

struct worker {
    const struct mpi_job *job;
    const char *scratch;
    char *base_db;              /* the broadcast store (execute, tune) */
    char **env;                 /* the children's environment */
};

/* The GPUs this node shows: CUDA_VISIBLE_DEVICES's entries, else /dev/nvidiaN's indices. */
static int node_gpus(char ***out)
{
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    char **list = NULL;
    int n = 0;
    if (cvd) {
        char *copy = xstrdup(cvd), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            list = xrealloc(list, (size_t)(n + 1) * sizeof(char *));
            list[n++] = xstrdup(t);
        }
        free(copy);
    } else {
        for (int i = 0; i < 64; i++) {
            char dev[32];
            snprintf(dev, sizeof(dev), "/dev/nvidia%d", i);
            if (access(dev, F_OK) != 0)
                break;
            list = xrealloc(list, (size_t)(n + 1) * sizeof(char *));
            list[n++] = xasprintf("%d", i);
        }
    }
    *out = list;
    return n;
}

/* Ours, without Slurm's array variables (a chunk is not a shard of an array) and the ones set
 * here: the GPU (local mode) and the compile jobs (the node's cores shared by its workers). */
static char **child_env(const struct mpi_job *job, int node_index, int node_workers)
{
    char **gpus = NULL, **env = NULL;
    int ngpus = node_gpus(&gpus), n = 0;
    for (char **e = environ; *e; e++) {
        if (!strncmp(*e, "SLURM_ARRAY_", 12) || !strncmp(*e, "LSCAT_DB=", 9) ||
            (job->gpus == MPI_GPUS_LOCAL && ngpus && !strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21)))
            continue;
        env = xrealloc(env, (size_t)(n + 4) * sizeof(char *));
        env[n++] = xstrdup(*e);
    }
    env = xrealloc(env, (size_t)(n + 4) * sizeof(char *));
    if (job->gpus == MPI_GPUS_LOCAL && ngpus) {
        env[n++] = xasprintf("CUDA_VISIBLE_DEVICES=%s", gpus[node_index % ngpus]);
        if (node_workers > ngpus && node_index == 0 && job->stage == MPI_STAGE_SWEEP)
            log_warn("mpi: %d worker ranks share %d GPU(s) on this node: their sweep "
                     "measurements overlap (run one worker rank per GPU)", node_workers, ngpus);
    }
    if (!getenv("LSCAT_JOBS")) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN) / (node_workers > 0 ? node_workers : 1);
        env[n++] = xasprintf("LSCAT_JOBS=%ld", cpus > 0 ? cpus : 1);
    }
    env[n] = NULL;
    for (int i = 0; i < ngpus; i++)
        free(gpus[i]);
    free(gpus);
    return env;
}

static int die_with_parent(void *arg)
{
    (void)arg;
    return prctl(PR_SET_PDEATHSIG, SIGKILL) != 0;
}

static int copy_file(const char *from, const char *to)
{
    struct buf b = BUF_INIT;
    int rc = buf_read_file(&b, from);
    if (rc == 0)
        rc = fs_write_atomic(to, b.data, b.len);
    buf_release(&b);
    return rc;
}

/* The child's command line: the stage's program, its arguments and the chunk's selector. */
static const char **child_argv(const struct worker *w, const char *sel, const char *out_csv,
                               const char *work)
{
    const struct mpi_job *job = w->job;
    const char **argv = xcalloc((size_t)job->nargs + 10, sizeof(char *));
    int k = 0;
    argv[k++] = xasprintf("%s/%s", job->self_dir, job->program);
    for (int i = 0; i < job->nargs; i++)
        argv[k++] = job->args[i];
    if (job->stage == MPI_STAGE_SWEEP) {
        argv[k++] = "--records", argv[k++] = sel, argv[k++] = "--out", argv[k++] = out_csv;
        if (!getenv("LSCAT_WORK")) /* no --work given: build in node-local scratch */
            argv[k++] = "--work", argv[k++] = work;
    } else {
        argv[k++] = "--shard", argv[k++] = sel, argv[k++] = "--db", argv[k++] = out_csv;
    }
    return argv;
}

/* The chunk's result as bytes: the store copy compacted (VACUUM INTO), or the chunk CSV. */
static int result_bytes(struct buf *out, const struct worker *w, const char *file)
{
    if (w->job->stage == MPI_STAGE_SWEEP)
        return access(file, F_OK) == 0 ? buf_read_file(out, file) : 0;
    struct store *s = NULL;
    char *ship = xasprintf("%s.ship", file);
    int rc = store_open(&s, file, 0);
    if (rc == 0)
        rc = store_run(s, "VACUUM INTO ?", "t", ship) < 0 ? LSCAT_ERR : 0;
    store_free(s);
    if (rc == 0)
        rc = buf_read_file(out, ship);
    unlink(ship);
    free(ship);
    return rc;
}

static void run_chunk(const struct worker *w, int64_t id, const char *sel)
{
    const struct mpi_job *job = w->job;
    char *file = xasprintf("%s/chunk-%lld.%s", w->scratch, (long long)id,
                           job->stage == MPI_STAGE_SWEEP ? "csv" : "db");
    char *work = fs_join(w->scratch, "work");
    struct mpi_done d = { .chunk = id };
    struct buf bytes = BUF_INIT;
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    const char **argv = child_argv(w, sel, file, work);
    o.argv = argv, o.env = (const char *const *)w->env;
    o.child_setup = die_with_parent, o.out_cap_bytes = 64 << 10;
    int rc = job->stage == MPI_STAGE_SWEEP ? 0 : copy_file(w->base_db, file);
    if (rc == 0)
        rc = proc_run(&r, &o);
    if (rc == 0) {
        fputs(r.out.data, stdout);
        fputs(r.err.data, stderr);
        d.died = r.signal != 0, d.exit_code = r.exit_code;
        proc_result_release(&r);
        if ((!d.died || job->stage == MPI_STAGE_SWEEP) && (rc = result_bytes(&bytes, w, file)) < 0)
            d.died = 1;
    } else {
        d.exit_code = 3;
    }
    if (rc < 0)
        log_error("mpi: chunk %lld (%s): %s", (long long)id, sel, lscat_error_last());
    d.len = (int64_t)bytes.len;
    MPI_Send(&d, 4, MPI_INT64_T, 0, MPI_TAG_DONE, MPI_COMM_WORLD);
    mpi_send_bytes(bytes.data, bytes.len, 0);
    unlink(file);
    free((char *)argv[0]);
    free(argv);
    free(work);
    free(file);
    buf_release(&bytes);
}

static void work_loop(const struct worker *w)
{
    for (;;) {
        MPI_Status st;
        int len = 0;
        MPI_Send(NULL, 0, MPI_INT64_T, 0, MPI_TAG_ASK, MPI_COMM_WORLD);
        MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &len);
        char *msg = xmalloc((size_t)len + 1);
        MPI_Recv(msg, len, MPI_CHAR, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        msg[len] = '\0';
        char *tab = strchr(msg, '\t');
        if (st.MPI_TAG == MPI_TAG_WORK && tab)
            run_chunk(w, strtoll(msg, NULL, 10), tab + 1);
        free(msg);
        if (st.MPI_TAG != MPI_TAG_WORK)
            return;
    }
}

int mpi_work(const struct mpi_job *job, const char *scratch, int node_index, int node_workers)
{
    struct worker w = { .job = job, .scratch = scratch };
    char *snap = NULL;
    size_t len = 0;
    int rc = 0;
    mpi_bcast_blob(&snap, &len);
    if (job->stage != MPI_STAGE_SWEEP && len) {
        w.base_db = fs_join(scratch, "base.db");
        rc = fs_write_atomic(w.base_db, snap, len);
    }
    free(snap);
    if (rc < 0)
        log_error("mpi: cannot write the store copy in '%s': %s (set TMPDIR to a node-local "
                  "folder with room)", scratch, lscat_error_last());
    w.env = child_env(job, node_index, node_workers);
    work_loop(&w);
    for (char **e = w.env; *e; e++)
        free(*e);
    free(w.env);
    free(w.base_db);
    return 0;
}
