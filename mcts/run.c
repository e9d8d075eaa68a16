/* A whole search (mcts/run.h): resume from the store, iterate, record, write the CSV. Rows are
 * committed in batches of commit_every, so a kill loses at most the batch in flight, which a
 * resumed search proposes again exactly (the generator state is recorded per row). */
#include "mcts/run.h"

#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <math.h>
#include <time.h>

struct restore_ctx {
    struct mcts_search *search;
    struct mcts_run_summary *sum;
};

static void note_time(struct mcts_run_summary *sum, const struct mcts_times *t)
{
    if (t->p10 < sum->fastest_s)
        sum->fastest_s = t->p10;
    if (t->p10 > sum->slowest_s)
        sum->slowest_s = t->p10;
}

static int restore_one(void *ctx, int iteration, const char *sequence, const char *path,
                       const struct mcts_times *t, uint64_t rng)
{
    struct restore_ctx *r = ctx;
    (void)sequence;
    if (mcts_search_restore(r->search, path, t, rng) < 0)
        return lscat_error_wrap("cannot resume at iteration %d", iteration);
    note_time(r->sum, t);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The new iterations, committed in batches. */
static int iterate(struct mcts_run_summary *sum, struct store *s, int64_t run_id,
                   int64_t search_id, struct mcts_search *search, struct mcts_backend *be,
                   const struct mcts_run_options *o)
{
    struct buf path = BUF_INIT, json = BUF_INIT;
    int rc = 0, in_tx = 0;
    while (o->iterations < 0 || sum->iterations < o->iterations) {
        const struct mcts_seq *seq;
        struct mcts_times t;
        buf_reset(&path);
        if ((rc = mcts_search_next(search, &seq, &path)) <= 0) {
            sum->exhausted = rc == 0;
            break;
        }
        if ((rc = be->measure(be, &t, seq)) < 0)
            break;
        buf_reset(&json);
        mcts_seq_json(&json, seq);
        mcts_search_report(search, &t);
        if (!in_tx && (rc = store_begin(s)) < 0)
            break;
        in_tx = 1;
        if ((rc = mcts_results_add(s, search_id, sum->iterations, json.data, path.data, &t,
                                   mcts_search_rng(search), run_id)) < 0)
            break;
        note_time(sum, &t);
        if (++sum->iterations % o->commit_every == 0) {
            in_tx = 0;
            if ((rc = store_commit(s)) < 0)
                break;
        }
    }
    if (in_tx && rc >= 0)
        rc = store_commit(s);
    else if (in_tx)
        store_rollback(s);
    buf_release(&path);
    buf_release(&json);
    return rc < 0 ? rc : 0;
}

int mcts_run_search(struct mcts_run_summary *out, struct store *s, int64_t run_id,
                    const struct mcts_dag *dag, struct mcts_backend *be,
                    const struct mcts_run_options *o)
{
    struct mcts_search *search = NULL;
    struct mcts_search_id id = { o->dag_path, dag->sha256, o->search.streams, be->name,
                                 o->backend_input, mcts_strategy_name(o->search.strategy),
                                 o->search.seed };
    int64_t search_id;
    *out = (struct mcts_run_summary){ .fastest_s = INFINITY, .slowest_s = -INFINITY };
    int rc = mcts_results_open(&search_id, s, &id, run_id);
    if (rc < 0 || (rc = mcts_search_new(&search, dag, &o->search)) < 0)
        goto done;
    struct restore_ctx r = { search, out };
    if ((rc = mcts_results_each(s, search_id, restore_one, &r)) < 0)
        goto done;
    out->resumed = out->iterations = rc;
    if (out->resumed > 0)
        log_msg(LOG_INFO, "resuming search %lld after %d recorded iterations",
                (long long)search_id, out->resumed);
    double t0 = now_s();
    if ((rc = iterate(out, s, run_id, search_id, search, be, o)) < 0)
        goto done;
    out->search_s = now_s() - t0;
    if (o->out_path)
        rc = mcts_results_write_csv(s, search_id, o->iterations, o->out_path);
done:
    mcts_search_free(search);
    return rc < 0 ? rc : 0;
}
