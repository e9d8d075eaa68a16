/* The replay back end (mcts/backend.h): the whole measurement file is read once into a table
 * keyed by implementation (up to stream and event renaming), so a search over the authors'
 * 2,036 measured SpMV implementations runs anywhere, CI included. */
#include "mcts/backend.h"

#include "common/error.h"
#include "common/xalloc.h"
#include "mcts/keyset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct replay {
    struct mcts_backend be;
    struct mcts_keyset *table;
    struct mcts_times *times;
    size_t ntimes, cap;
    uint8_t key[MCTS_MAX_STEPS * MCTS_KEY_STEP_BYTES];
};

int mcts_times_parse(struct mcts_times *out, const char *row)
{
    double *f[6] = { &out->p01, &out->p10, &out->p50, &out->p90, &out->p99, &out->stddev };
    const char *p = strchr(row, '|');
    if (!p)
        return -1;
    for (int i = 0; i < 6; i++) {
        char *end;
        errno = 0;
        *f[i] = strtod(p + 1, &end);
        if (end == p + 1 || *end != '|' || errno)
            return -1;
        p = end;
    }
    return (int)(p + 1 - row);
}

static int measure(struct mcts_backend *be, struct mcts_times *out, const struct mcts_seq *seq)
{
    struct replay *r = (struct replay *)be;
    int64_t i = mcts_keyset_get(r->table, r->key, mcts_seq_key(r->key, seq));
    if (i < 0)
        return lscat_error_setc(LSCAT_ENOTFOUND, "the replay file has no measurement of this "
                                "implementation (was it made for another DAG or stream count?)");
    *out = r->times[i];
    return 0;
}

static void replay_free(struct mcts_backend *be)
{
    struct replay *r = (struct replay *)be;
    if (!r)
        return;
    mcts_keyset_free(r->table);
    free(r->times);
    free(r);
}

static int read_rows(struct replay *r, const struct mcts_dag *dag, FILE *f, const char *path)
{
    struct mcts_seq *seq = xmalloc(sizeof(*seq));
    char *line = NULL;
    size_t cap = 0;
    int rc = 0, lineno = 0;
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        struct mcts_times t;
        int off = mcts_times_parse(&t, line);
        if (off < 0) {
            rc = lscat_error_setc(LSCAT_EINVALID, "%s:%d: expected 'i|p01|p10|p50|p90|p99|"
                                  "stddev|' then the steps", path, lineno);
        } else if (mcts_seq_parse(seq, dag, line + off) < 0) {
            rc = lscat_error_wrap("%s:%d", path, lineno);
        } else if (!mcts_seq_complete(seq)) {
            rc = lscat_error_setc(LSCAT_EINVALID, "%s:%d: not a whole implementation of the "
                                  "DAG (no end step)", path, lineno);
        } else {
            size_t len = mcts_seq_key(r->key, seq);
            XGROW(r->times, r->ntimes + 1, r->cap);
            if (mcts_keyset_put(r->table, r->key, len, (int64_t)r->ntimes))
                r->times[r->ntimes++] = t;
        }
    }
    free(line);
    free(seq);
    return rc;
}

int mcts_replay_new(struct mcts_backend **out, const struct mcts_dag *dag, const char *path)
{
    struct replay *r = xcalloc(1, sizeof(*r));
    FILE *f = fopen(path, "r");
    int rc;
    *out = NULL;
    r->be.name = "replay";
    r->be.measure = measure;
    r->be.free = replay_free;
    r->table = mcts_keyset_new();
    if (!f) {
        rc = lscat_error_setc(LSCAT_ENOTFOUND, "cannot open replay file '%s': %s", path,
                              strerror(errno));
    } else if ((rc = read_rows(r, dag, f, path)) == 0 && r->ntimes == 0) {
        rc = lscat_error_setc(LSCAT_EINVALID, "replay file '%s' holds no measurements", path);
    }
    if (f)
        fclose(f);
    if (rc < 0) {
        replay_free(&r->be);
        return rc;
    }
    *out = &r->be;
    return 0;
}

int mcts_replay_count(const struct mcts_backend *be)
{
    return (int)((const struct replay *)be)->ntimes;
}
