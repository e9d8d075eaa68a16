/* lscat-mpi's rank 0 merges chunk stores in a thread of its own, so that serving (answering a
 * worker's ask for its next chunk) never waits for a merge: the results queue up as files in
 * rank 0's scratch and one `lscat dataset merge` folds all that are queued, each shard in its
 * own transaction (docs/dataset.md). No MPI calls here. */
#include "tune/mpi.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct mpi_merger {
    const char *self_dir, *db_path;
    char **files;               /* queued chunk stores, oldest first */
    int nfiles, closing, failed, merged;
    size_t cap;
    double merge_s;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* One `lscat dataset merge` over the files taken from the queue. */
static int merge_files(struct mpi_merger *m, char **files, int n)
{
    char *prog = xasprintf("%s/lscat-dataset", m->self_dir);
    const char **argv = xcalloc((size_t)n + 6, sizeof(char *));
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    int k = 0;
    argv[k++] = prog, argv[k++] = "merge";
    for (int i = 0; i < n; i++)
        argv[k++] = files[i];
    argv[k++] = "--db", argv[k++] = m->db_path, argv[k++] = "-q";
    o.argv = argv;
    int rc = proc_run(&r, &o);
    if (rc == 0) {
        if (r.exit_code || r.signal)
            rc = lscat_error_set("merging %d chunk store(s) into '%s' failed: %s", n, m->db_path,
                                 r.err.len ? r.err.data : "no message");
        proc_result_release(&r);
    }
    free(argv);
    free(prog);
    return rc;
}

static void *merger_main(void *arg)
{
    struct mpi_merger *m = arg;
    pthread_mutex_lock(&m->mu);
    for (;;) {
        while (!m->nfiles && !m->closing)
            pthread_cond_wait(&m->cv, &m->mu);
        if (!m->nfiles)
            break;
        char **files = m->files;
        int n = m->nfiles;
        m->files = NULL, m->nfiles = 0, m->cap = 0;
        pthread_mutex_unlock(&m->mu);
        double t0 = fs_mono_s();
        int rc = merge_files(m, files, n);
        if (rc < 0)
            log_error("mpi: %s", lscat_error_last());
        for (int i = 0; i < n; i++) {
            unlink(files[i]);
            free(files[i]);
        }
        free(files);
        pthread_mutex_lock(&m->mu);
        m->merge_s += fs_mono_s() - t0, m->merged += n, m->failed |= rc < 0;
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

int mpi_merger_new(struct mpi_merger **out, const char *self_dir, const char *db_path)
{
    struct mpi_merger *m = xcalloc(1, sizeof(*m));
    m->self_dir = self_dir, m->db_path = db_path;
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    if (pthread_create(&m->thread, NULL, merger_main, m) != 0) {
        pthread_cond_destroy(&m->cv);
        pthread_mutex_destroy(&m->mu);
        free(m);
        *out = NULL;
        return lscat_error_set("cannot start rank 0's merge thread: out of resources");
    }
    *out = m;
    return 0;
}

void mpi_merger_add(struct mpi_merger *m, char *file)
{
    pthread_mutex_lock(&m->mu);
    XGROW(m->files, (size_t)m->nfiles + 1, m->cap);
    m->files[m->nfiles++] = file;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

int mpi_merger_free(struct mpi_merger *m, double *merge_s, int *merged)
{
    if (!m)
        return 0;
    pthread_mutex_lock(&m->mu);
    m->closing = 1;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->thread, NULL);
    int failed = m->failed;
    *merge_s = m->merge_s, *merged = m->merged;
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
    return failed ? LSCAT_ERR : 0;
}
