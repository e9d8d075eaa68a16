/* lscat-mpi's rank 0: plans the chunks, hands them out on request and writes what comes back.
 * execute/tune: a chunk is a list of kernel ids; its result is what the stage wrote into the
 * worker's chunk store, merged here in one transaction by `lscat dataset merge`, in a thread of
 * its own (tune/mpi_merge.c). sweep: a chunk is a list of records of one compile-time tuple; its
 * result is the rows of a chunk CSV, appended to the output as they come. */
#include "tune/mpi.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "store/store.h"
#include "tune/usersweep.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CHUNK_QUEUED = 0, CHUNK_OUT, CHUNK_DONE };

struct chunk {
    char *sel;                  /* kernel ids a line (execute, tune) or "3,4,5-9" (sweep) */
    int tries, state;
};

struct server {
    const struct mpi_job *job;
    const char *scratch;
    struct chunk *chunks;
    int nchunks, queued, out;
    size_t cap, held_cap;
    int code;                   /* the worst exit code so far */
    int stop_serving;           /* a usage error: every chunk would fail the same way */
    struct mpi_merger *merger;  /* execute, tune: merges chunk stores in a thread */
    double write_s;             /* taking results in (the breakdown's "write") */
    int nwritten;
    /* sweep */
    struct bonsai_space *space;
    char *done;                 /* done[record] */
    struct usersweep_out *outf;
    char **held;                /* chunk CSVs without user columns, before the output exists */
    int nheld;
    char *retired;              /* retired[rank]: its stage exited 3 (its GPU gone, or a fatal
                                   error there): it gets no more chunks */
};

static void add_chunk(struct server *sv, char *sel, int tries)
{
    XGROW(sv->chunks, (size_t)sv->nchunks + 1, sv->cap);
    sv->chunks[sv->nchunks++] = (struct chunk){ .sel = sel, .tries = tries };
    sv->queued++;
}

static int worst(int a, int b)
{
    return a > b ? a : b;
}

/* ---- execute and tune: the store */

/* The kernels each stage may have work for, those it most likely has none for apart (a kernel
 * tune finished or gave up on some GPU, one execute got past 'isolated'): rank 0 cannot tell for
 * sure (that needs the worker's GPU model and the stage's own plan), so they are still handed
 * out, with the pending chunks or in larger chunks of their own (at most `big`: at least
 * LIKELY_DONE_FACTOR times --chunk, about a quarter of them per worker), where the stage finds
 * them done quickly. */
static const char *const kernels_sql[] = {
    [MPI_STAGE_EXECUTE] = "SELECT id, status != 'isolated' FROM kernels WHERE status IN "
                          "('isolated','built','build_failed','runnable','probe_failed') "
                          "ORDER BY 1",
    [MPI_STAGE_TUNE] = "SELECT DISTINCT k.id, EXISTS (SELECT 1 FROM tune_kernels t WHERE "
                       "t.kernel_id = k.id AND t.status IN ('done','given_up')) FROM kernels k "
                       "JOIN builds b ON b.kernel_id = k.id WHERE k.status = 'runnable' AND "
                       "b.status = 'ok' ORDER BY 1",
};

enum { LIKELY_DONE_FACTOR = 32 };

struct id_list {
    char **ids;
    int n;
    size_t cap;
};

/* The size of the next chunk of a list with `left` ids: `size`, or with `consumers` > 0 (chunks
 * that can be in flight at once: workers x --inflight) no more than an even share of what is
 * left (guided self-scheduling, Polychronopoulos and Kuck), at least 1: the run's last chunks are
 * small, so no worker is left measuring a whole chunk while the others have nothing to do. */
static int chunk_size(int left, int size, int consumers)
{
    if (consumers <= 0)
        return size;
    int share = (left + consumers - 1) / consumers;
    return share < 1 ? 1 : share < size ? share : size;
}

static int count_chunks(int n, int size, int consumers)
{
    int k = 0;
    for (int left = n; left > 0; k++)
        left -= chunk_size(left, size, consumers);
    return k;
}

/* Cut a list of ids into chunks (ids one a line) of chunk_size(); to each of the first chunks
 * add up to `ride` ids of `riders` (from *next on). */
static void cut_list(struct id_list *chunks, const struct id_list *ids, int size, int consumers,
                     const struct id_list *riders, int *next, int ride)
{
    struct buf b = BUF_INIT;
    for (int i = 0, in = 0, want = chunk_size(ids->n, size, consumers); i < ids->n; i++) {
        buf_addf(&b, "%s%s", in++ ? "\n" : "", ids->ids[i]);
        if (in == want || i + 1 == ids->n) {
            for (int r = 0; riders && r < ride && *next < riders->n; r++)
                buf_addf(&b, "\n%s", riders->ids[(*next)++]);
            XGROW(chunks->ids, (size_t)chunks->n + 1, chunks->cap);
            chunks->ids[chunks->n++] = buf_detach(&b, NULL);
            in = 0;
            want = chunk_size(ids->n - i - 1, size, consumers);
        }
    }
    buf_release(&b);
}

/* The likely-done chunks go between the pending ones (never after the last): while one chunk
 * measures, a worker's other place in flight works through them, and none is left for the end. */
static void interleave(struct server *sv, const struct id_list *pending, const struct id_list *done)
{
    int d = 0, np = pending->n, nd = done->n;
    for (int p = 0; p < np || d < nd; p++) {
        if (p < np)
            add_chunk(sv, pending->ids[p], 0);
        int upto = np > 1 && p < np - 1 ? (int)((long)nd * (p + 1) / (np - 1)) : nd;
        while (d < upto && d < nd)
            add_chunk(sv, done->ids[d++], 0);
    }
}

/* Cut the kernels into chunks: explicit lists of ids, one a line. */
static int plan_chunks(struct server *sv, struct store *s, int nworkers, int64_t *pending,
                       int64_t *total)
{
    struct store_stmt *st = NULL;
    struct id_list ids[2] = { { 0 }, { 0 } }, chunks[2] = { { 0 }, { 0 } };
    int rc = store_prepare(&st, s, kernels_sql[sv->job->stage]);
    while (rc >= 0 && (rc = store_step(st)) == STORE_ROW) {
        struct id_list *l = &ids[store_col_int(st, 1) != 0];
        XGROW(l->ids, (size_t)l->n + 1, l->cap);
        l->ids[l->n++] = xstrdup(store_col_text(st, 0));
    }
    store_finalize(st);
    int big = (ids[1].n + 4 * nworkers - 1) / (4 * (nworkers > 0 ? nworkers : 1));
    if (big < sv->job->chunk * LIKELY_DONE_FACTOR)
        big = sv->job->chunk * LIKELY_DONE_FACTOR;
    /* The likely-done kernels ride along with the pending chunks but the last (the run's tail)
     * up to `big` a chunk, with no child of their own; the rest get chunks of their own,
     * between the pending ones. */
    int consumers = (nworkers > 0 ? nworkers : 1) * (sv->job->inflight > 0 ? sv->job->inflight : 1);
    int npending = count_chunks(ids[0].n, sv->job->chunk, consumers), next = 0;
    int carriers = npending > 1 ? npending - 1 : npending;
    int ride = carriers ? (ids[1].n + carriers - 1) / carriers : 0;
    cut_list(&chunks[0], &ids[0], sv->job->chunk, consumers, &ids[1], &next,
             ride < big ? ride : big);
    struct id_list rest = { .ids = ids[1].ids + next, .n = ids[1].n - next };
    cut_list(&chunks[1], &rest, big, 0, NULL, &next, 0);
    interleave(sv, &chunks[0], &chunks[1]);
    *pending = ids[0].n, *total = ids[0].n + ids[1].n;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < ids[k].n; i++)
            free(ids[k].ids[i]);
        free(ids[k].ids);
        free(chunks[k].ids);
    }
    return rc < 0 ? rc : 0;
}

/* Copy the store for the workers (their chunk stores are cut from it) and plan the chunks. */
static int plan_store(struct server *sv, int nworkers, char **snap, size_t *snap_len)
{
    struct store *s = NULL;
    struct buf b = BUF_INIT;
    char *path = fs_join(sv->scratch, "snapshot.db");
    int64_t pending = 0, total = 0;
    int rc = access(sv->job->db_path, F_OK) == 0
                 ? store_open(&s, sv->job->db_path, 0)
                 : lscat_error_set("no store at '%s' (run lscat init and isolate first, or "
                                   "give --db)", sv->job->db_path);
    if (rc == 0)
        rc = plan_chunks(sv, s, nworkers, &pending, &total);
    if (rc == 0)
        rc = store_run(s, "VACUUM INTO ?", "t", path) < 0 ? LSCAT_ERR : 0;
    if (rc == 0)
        rc = buf_read_file(&b, path);
    if (rc < 0)
        goto done;
    log_info("mpi: %lld kernels to look at (%lld most likely done) in %d chunks of at most %d "
             "others", (long long)total, (long long)(total - pending), sv->nchunks,
             sv->job->chunk);
    *snap_len = b.len;
    *snap = buf_detach(&b, NULL);
done:
    unlink(path);
    free(path);
    buf_release(&b);
    store_free(s);
    return rc;
}

/* Queue the chunk store for rank 0's merge thread (the serving loop goes on at once). */
static int merge_result(struct server *sv, const char *data, size_t len, int64_t chunk)
{
    char *file = xasprintf("%s/chunk-%lld.%d.db", sv->scratch, (long long)chunk,
                           sv->chunks[chunk].tries);
    int rc = fs_write_atomic(file, data, len);
    if (rc == 0)
        mpi_merger_add(sv->merger, file);
    else
        free(file);
    return rc;
}

/* ---- sweep: the output CSV */

/* Whether record `index` is to run: selected (--rows) and without a row in the output. */
static int to_run(const struct server *sv, int index)
{
    return !sv->done[index] && bonsai_selected(index, sv->job->rows_from, sv->job->rows_to, 0, 0);
}

/* A tuple's records without a row, in chunks of at most `size`, dealt out in turn (chunk j
 * takes the j-th, (j + n)-th, ... of its n chunks): a space ordered by problem size puts its
 * largest records last, so consecutive cuts would make the last chunk the costliest, and the
 * run's tail. */
static void sweep_chunks_of_group(struct server *sv, const struct bonsai_group *g, int size)
{
    int *todo = xcalloc((size_t)g->nrecords + 1, sizeof(int)), n = 0;
    for (int i = 0; i < g->nrecords; i++) {
        int index = sv->space->records[g->records[i]].index;
        if (to_run(sv, index))
            todo[n++] = index;
    }
    int nchunks = (n + size - 1) / size;
    for (int c = 0; c < nchunks; c++) {
        struct buf sel = BUF_INIT;
        for (int i = c; i < n; i += nchunks)
            buf_addf(&sel, "%s%d", i > c ? "," : "", todo[i]);
        add_chunk(sv, buf_detach(&sel, NULL), 0);
    }
    free(todo);
}

/* The sweep's chunk size: --chunk, smaller where that leaves fewer than 4 chunks per worker
 * (a space of a few compile-time tuples would otherwise give a worker a whole tuple while the
 * others wait for it: 3 tuples of 32 records on 2 GPUs ran at 1.45x of one). */
static int sweep_chunk_size(const struct server *sv, int nworkers)
{
    int pending = 0;
    for (int i = 1; i <= sv->space->nrecords; i++)
        pending += to_run(sv, i);
    int want = nworkers > 0 ? (pending + 4 * nworkers - 1) / (4 * nworkers) : pending;
    return want < 1 ? 1 : want < sv->job->chunk ? want : sv->job->chunk;
}

static int plan_sweep(struct server *sv, int nworkers)
{
    char *columns = NULL;
    double best = 0;
    int rc = bonsai_space_load(&sv->space, sv->job->space_path);
    if (rc < 0)
        return rc;
    sv->done = xcalloc((size_t)sv->space->nrecords + 1, 1);
    rc = usersweep_out_scan(sv->done, &best, &columns, sv->job->out_path, sv->space);
    if (rc == 0 && columns) /* an existing output keeps its header */
        rc = usersweep_out_open(&sv->outf, sv->job->out_path, sv->space, columns);
    free(columns);
    int size = rc == 0 ? sweep_chunk_size(sv, nworkers) : 1;
    for (int g = 0; rc == 0 && g < sv->space->ngroups; g++)
        sweep_chunks_of_group(sv, &sv->space->groups[g], size);
    log_info("mpi: %d chunks of at most %d records", sv->nchunks, size);
    return rc;
}

/* Append the rows of one chunk CSV (a file in scratch) that the output lacks; a torn last line
 * (a child killed while writing) is no row. */
static int append_chunk_csv(struct server *sv, const char *file, const char *columns)
{
    struct buf b = BUF_INIT;
    int rc = buf_read_file(&b, file);
    char *end = rc == 0 ? strrchr(b.data, '\n') : NULL;
    if (!end) {
        buf_release(&b);
        return rc;
    }
    end[1] = '\0';
    char *save = NULL, *line = strtok_r(b.data, "\n", &save); /* the header */
    while (rc == 0 && (line = strtok_r(NULL, "\n", &save)) != NULL) {
        long idx = strtol(line, NULL, 10);
        if (idx < 1 || idx > sv->space->nrecords || sv->done[idx])
            continue;
        rc = usersweep_out_append_row(sv->outf, line, columns);
        sv->done[idx] = 1;
    }
    buf_release(&b);
    return rc;
}

static int flush_held(struct server *sv)
{
    int rc = 0;
    for (int i = 0; i < sv->nheld; i++) {
        if (rc == 0)
            rc = append_chunk_csv(sv, sv->held[i], "");
        unlink(sv->held[i]);
        free(sv->held[i]);
    }
    sv->nheld = 0;
    return rc;
}

static int sweep_result(struct server *sv, const char *data, size_t len, int64_t chunk)
{
    char *file = xasprintf("%s/chunk-%lld.csv", sv->scratch, (long long)chunk);
    char *columns = NULL, *ignored = xcalloc((size_t)sv->space->nrecords + 1, 1);
    double best = 0;
    int rc = fs_write_atomic(file, data, len);
    if (rc == 0 && len)
        rc = usersweep_out_scan(ignored, &best, &columns, file, sv->space);
    if (rc == 0 && columns && !sv->outf && !*columns) { /* wait for a header with columns */
        XGROW(sv->held, (size_t)sv->nheld + 1, sv->held_cap);
        sv->held[sv->nheld++] = file;
        file = NULL;
    } else if (rc == 0 && columns) {
        if (!sv->outf)
            rc = usersweep_out_open(&sv->outf, sv->job->out_path, sv->space, columns);
        if (rc == 0)
            rc = flush_held(sv);
        if (rc == 0)
            rc = append_chunk_csv(sv, file, columns);
    }
    if (file)
        unlink(file);
    free(file);
    free(columns);
    free(ignored);
    return rc;
}

/* The records of a chunk that still lack a row, as a new selector (NULL: none). */
static char *sweep_missing(const struct server *sv, const char *sel)
{
    char *list = xcalloc((size_t)sv->space->nrecords + 1, 1);
    struct buf b = BUF_INIT;
    bonsai_records_parse(list, sv->space->nrecords, sel);
    for (int k = 1; k <= sv->space->nrecords; k++)
        if (list[k] && !sv->done[k])
            buf_addf(&b, "%s%d", b.len ? "," : "", k);
    free(list);
    if (!b.len) {
        buf_release(&b);
        return NULL;
    }
    return buf_detach(&b, NULL);
}

/* A chunk for the logs: its records (sweep), or how many kernels from which. */
static char *describe(const char *sel)
{
    const char *nl = strchr(sel, '\n');
    if (!nl)
        return xstrdup(sel);
    int n = 1;
    for (const char *p = nl; p; p = strchr(p + 1, '\n'))
        n++;
    return xasprintf("%d kernels from %.*s", n, (int)(nl - sel < 16 ? nl - sel : 16), sel);
}

/* ---- serving */

static void hand_out(struct server *sv, int dest)
{
    for (int i = 0; i < sv->nchunks; i++) {
        struct chunk *c = &sv->chunks[i];
        if (c->state != CHUNK_QUEUED)
            continue;
        char *msg = xasprintf("%d\t%s", i, c->sel);
        MPI_Send(msg, (int)strlen(msg) + 1, MPI_CHAR, dest, MPI_TAG_WORK, MPI_COMM_WORLD);
        free(msg);
        if (log_enabled(LOG_DEBUG)) {
            char *what = describe(c->sel);
            log_debug("mpi: chunk %d (%s) to rank %d", i, what, dest);
            free(what);
        }
        c->state = CHUNK_OUT, sv->queued--, sv->out++;
        return;
    }
}

/* A worker's report: write its result, and hand out again what a killed child left, or what a
 * child that exited 3 left unrun: its GPU went away (tune's `tune_device_lost`, a sweep's
 * "@nodevice", execute's unusable device) or it met a fatal error on that rank. That rank gets
 * no more chunks: a GPU that is gone fails every chunk at once, and would take the queue. */
static void take_result(struct server *sv, int src, const struct mpi_done *d)
{
    char *data = xmalloc((size_t)d->len + 1);
    mpi_recv_bytes(data, (size_t)d->len, src);
    struct chunk *c = &sv->chunks[d->chunk];
    c->state = CHUNK_DONE, sv->out--;
    int unrun = !d->died && d->exit_code == 3; /* 3: the stage left work unrun */
    int redo = d->died || unrun;
    int rc = 0;
    double t0 = fs_mono_s();
    if (sv->job->stage == MPI_STAGE_SWEEP) /* its rows are whole: each was measured */
        rc = sweep_result(sv, data, (size_t)d->len, d->chunk);
    else if (!redo && d->len) /* execute, tune: a chunk store is merged whole or not at all */
        rc = merge_result(sv, data, (size_t)d->len, d->chunk);
    sv->write_s += fs_mono_s() - t0, sv->nwritten++;
    log_debug("mpi: chunk %lld: %lld bytes written in %.3f s", (long long)d->chunk,
              (long long)d->len, fs_mono_s() - t0);
    free(data);
    if (rc < 0) {
        log_error("mpi: %s", lscat_error_last());
        sv->code = worst(sv->code, 3);
    }
    char *again = !redo ? NULL : sv->job->stage == MPI_STAGE_SWEEP ? sweep_missing(sv, c->sel)
                                                                  : xstrdup(c->sel);
    char *what = describe(again ? again : c->sel);
    const char *why = d->died ? "was killed" : "exited 3 (its GPU is gone, or a fatal error there)";
    if (unrun && !sv->retired[src]) {
        sv->retired[src] = 1;
        log_error("mpi: rank %d's worker for chunk %lld exited 3: its GPU is gone or it met a "
                  "fatal error (its log above says which); rank %d gets no more chunks",
                  src, (long long)d->chunk, src);
    }
    if (again && c->tries + 1 < sv->job->max_tries) {
        log_warn("mpi: rank %d's worker for chunk %lld (%s) %s: the chunk is handed out "
                 "again", src, (long long)d->chunk, what, why);
        add_chunk(sv, again, c->tries + 1);
    } else if (again) {
        log_error("mpi: chunk %lld (%s) failed %d times (killed, or its worker exited 3): left "
                  "undone (run again to resume)", (long long)d->chunk, what, sv->job->max_tries);
        free(again);
        sv->code = worst(sv->code, 3);
    } else if (!d->died) {
        if (d->exit_code == 2)
            sv->stop_serving = 1;
        sv->code = worst(sv->code, (int)d->exit_code);
    }
    free(what);
}

/* Asks come from idle workers (none in flight: held until a chunk is queued or none is out, then
 * WORK or STOP) and from workers with chunks in flight (answered at once: WORK or WAIT). */
static void serve(struct server *sv, int nworkers)
{
    int stopped = 0, *waiting = xcalloc((size_t)nworkers + 1, sizeof(int)), nwaiting = 0;
    while (stopped < nworkers) {
        struct mpi_done d = { 0 };
        MPI_Status st;
        int from = 0, tag = 0, bytes = 0;
        mpi_wait_message(MPI_ANY_SOURCE, &from, &tag, &bytes);
        MPI_Recv(&d, 4, MPI_INT64_T, from, tag, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == MPI_TAG_DONE)
            take_result(sv, st.MPI_SOURCE, &d);
        else if (sv->retired[st.MPI_SOURCE]) { /* WAIT while it has chunks out, then STOP */
            MPI_Send(NULL, 0, MPI_CHAR, st.MPI_SOURCE, d.chunk > 0 ? MPI_TAG_WAIT : MPI_TAG_STOP,
                     MPI_COMM_WORLD);
            stopped += d.chunk == 0;
        } else if (d.chunk > 0 && sv->queued > 0 && !sv->stop_serving)
            hand_out(sv, st.MPI_SOURCE);
        else if (d.chunk > 0)
            MPI_Send(NULL, 0, MPI_CHAR, st.MPI_SOURCE, MPI_TAG_WAIT, MPI_COMM_WORLD);
        else
            waiting[nwaiting++] = st.MPI_SOURCE;
        while (nwaiting > 0 && (sv->stop_serving ? 1 : sv->queued > 0 || sv->out == 0)) {
            int dest = waiting[--nwaiting];
            if (sv->queued > 0 && !sv->stop_serving) {
                hand_out(sv, dest);
                continue;
            }
            MPI_Send(NULL, 0, MPI_CHAR, dest, MPI_TAG_STOP, MPI_COMM_WORLD);
            stopped++;
        }
    }
    free(waiting);
}

int mpi_serve(const struct mpi_job *job, int nworkers, const char *scratch)
{
    struct server sv = { .job = job, .scratch = scratch };
    sv.retired = xcalloc((size_t)nworkers + 1, 1);
    char *snap = NULL;
    size_t snap_len = 0;
    double t0 = fs_mono_s();
    int rc = job->stage == MPI_STAGE_SWEEP ? plan_sweep(&sv, nworkers) : plan_store(&sv, nworkers, &snap, &snap_len);
    double plan_s = fs_mono_s() - t0;
    if (rc < 0) {
        log_error("mpi: %s", lscat_error_last());
        sv.code = rc == LSCAT_EINVALID ? 2 : 3, sv.stop_serving = 1;
        free(snap), snap = NULL, snap_len = 0;
    }
    if (rc == 0 && job->stage != MPI_STAGE_SWEEP &&
        mpi_merger_new(&sv.merger, job->self_dir, job->db_path) < 0) {
        log_error("mpi: %s", lscat_error_last());
        sv.code = 3, sv.stop_serving = 1;
    }
    mpi_bcast_blob(&snap, &snap_len);
    free(snap);
    serve(&sv, nworkers);
    double merge_s = 0;
    int merged = 0;
    if (mpi_merger_free(sv.merger, &merge_s, &merged) < 0)
        sv.code = worst(sv.code, 3);
    if (sv.nheld && !sv.outf && usersweep_out_open(&sv.outf, job->out_path, sv.space, "") < 0)
        sv.code = worst(sv.code, 3);
    if (sv.nheld && flush_held(&sv) < 0)
        sv.code = worst(sv.code, 3);
    if (sv.outf && usersweep_out_close(sv.outf) < 0) {
        log_error("mpi: %s", lscat_error_last());
        sv.code = worst(sv.code, 3);
    }
    int left = sv.queued + sv.out;
    if (left && !sv.stop_serving)
        log_error("mpi: %d chunk(s) left undone: no worker rank was left to take them (run again "
                  "to resume)", left);
    log_info("mpi: %d chunks served to %d workers in %.1f s%s", sv.nchunks, nworkers,
             fs_mono_s() - t0, left ? " (some left undone)" : "");
    log_info("mpi: time rank 0: plan and store copy %.3f s, %d results taken in %.3f s, %d "
             "merged in %.3f s (a thread of their own), in all %.3f s", plan_s, sv.nwritten,
             sv.write_s, merged, merge_s, fs_mono_s() - t0);
    for (int i = 0; i < sv.nchunks; i++)
        free(sv.chunks[i].sel);
    free(sv.chunks);
    free(sv.held);
    free(sv.retired);
    free(sv.done);
    bonsai_space_free(sv.space);
    return left && !sv.stop_serving ? worst(sv.code, 3) : sv.code;
}
