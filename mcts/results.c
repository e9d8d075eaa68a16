/* Search results in the store and as the authors' CSV (mcts/results.h). Rows are written by
 * the search as it goes, so a killed search resumes from them; the CSV is rewritten from the
 * store, whole and atomically, so it never holds half a row. */
#include "mcts/results.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"

#include <stdlib.h>

#define FIND_SEARCH                                                                        \
    "SELECT id FROM mcts_searches WHERE dag_sha256 = ? AND streams = ? AND backend = ? "   \
    "AND backend_input = ? AND strategy = ? AND seed = ?"

int mcts_results_open(int64_t *search_out, struct store *s, const struct mcts_search_id *id,
                      int64_t run_id)
{
    char now[32];
    int64_t found = 0, seed = (int64_t)id->seed;
    int rc = store_query_int(&found, s, FIND_SEARCH, "tIttti", id->dag_sha256, id->streams,
                             id->backend, id->backend_input, id->strategy, seed);
    if (rc < 0)
        return rc;
    if (found == 0) {
        fs_utc_now(now);
        rc = store_run(s, "INSERT INTO mcts_searches(dag_path, dag_sha256, streams, backend, "
                       "backend_input, strategy, seed, created_at, run_id) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", "ttItttiti", id->dag_path,
                       id->dag_sha256, id->streams, id->backend, id->backend_input,
                       id->strategy, seed, now, (int64_t)run_id);
        if (rc < 0)
            return rc;
        found = store_last_insert_id(s);
    }
    *search_out = found;
    return 0;
}

int mcts_results_each(struct store *s, int64_t search, mcts_iteration_fn fn, void *ctx)
{
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, s, "SELECT iteration, sequence, path, p01_s, p10_s, p50_s, "
                           "p90_s, p99_s, stddev_s, rng_state FROM mcts_iterations "
                           "WHERE search_id = ? ORDER BY iteration");
    int n = 0;
    if (rc < 0 || (rc = store_bind(st, "i", search)) < 0)
        goto done;
    while ((rc = store_step(st)) == STORE_ROW) {
        struct mcts_times t = { store_col_double(st, 3), store_col_double(st, 4),
                                store_col_double(st, 5), store_col_double(st, 6),
                                store_col_double(st, 7), store_col_double(st, 8) };
        int it = (int)store_col_int(st, 0);
        if (it != n) {
            rc = lscat_error_setc(LSCAT_EINVALID, "search %lld: iteration %d is missing from "
                                  "the store", (long long)search, n);
            goto done;
        }
        if (fn && (rc = fn(ctx, it, store_col_text(st, 1), store_col_text(st, 2), &t,
                           (uint64_t)store_col_int(st, 9))) < 0)
            goto done;
        n++;
    }
done:
    store_finalize(st);
    return rc < 0 ? rc : n;
}

int mcts_results_add(struct store *s, int64_t search, int iteration, const char *sequence,
                     const char *path, const struct mcts_times *t, uint64_t rng, int64_t run_id)
{
    char now[32];
    fs_utc_now(now);
    int rc = store_run(s, "INSERT INTO mcts_iterations(search_id, iteration, sequence, path, "
                       "p01_s, p10_s, p50_s, p90_s, p99_s, stddev_s, rng_state, measured_at, "
                       "run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "iIttdddddditi",
                       search, iteration, sequence, path, t->p01, t->p10, t->p50, t->p90, t->p99,
                       t->stddev, (int64_t)rng, now, run_id);
    return rc < 0 ? rc : 0;
}

void mcts_results_format_row(struct buf *out, int iteration, const struct mcts_times *t,
                             const char *sequence)
{
    buf_addf(out, "%d|%g|%g|%g|%g|%g|%g|%s", iteration, t->p01, t->p10, t->p50, t->p90, t->p99,
             t->stddev, sequence);
}

struct csv {
    struct buf text;
    int limit;
};

static int add_row(void *ctx, int iteration, const char *sequence, const char *path,
                   const struct mcts_times *t, uint64_t rng)
{
    struct csv *c = ctx;
    (void)path;
    (void)rng;
    if (c->limit >= 0 && iteration >= c->limit)
        return 0;
    mcts_results_format_row(&c->text, iteration, t, sequence);
    buf_addch(&c->text, '\n');
    return 0;
}

int mcts_results_write_csv(struct store *s, int64_t search, int limit, const char *out_path)
{
    struct csv c = { BUF_INIT, limit };
    int rc = mcts_results_each(s, search, add_row, &c);
    if (rc >= 0 && (fs_mkdirs_parent(out_path) < 0 ||
                    fs_write_atomic(out_path, c.text.data, c.text.len) < 0))
        rc = lscat_error_wrap("cannot write results '%s'", out_path);
    buf_release(&c.text);
    return rc < 0 ? rc : 0;
}
