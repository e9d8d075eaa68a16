/* lscat-mpi's chunk stores: each chunk of execute or tune work runs against a store that holds
 * only its own kernels' rows, cut from the copy of the whole store a worker got at the start,
 * and ships back only what the stage wrote. Before, every chunk copied and merged the whole
 * store: on a store of 3000 measured kernels that cost more than the work itself. */
#include "tune/chunkstore.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One table of a chunk store and which rows of the whole store it takes (SQL over the source
 * table's columns; main.* are the chunk store's tables filled before it). */
struct cut_step {
    const char *table;
    const char *where;
    unsigned stages;            /* 1 << enum chunkstore_stage */
};

#define BOTH ((1u << CHUNKSTORE_EXECUTE) | (1u << CHUNKSTORE_TUNE))
#define MINE "kernel_id IN (SELECT id FROM temp.chunk_ids)"

static const struct cut_step steps[] = {
    { "stage_runs", "1", BOTH },
    { "gpus", "1", BOTH },
    { "kernels", "id IN (SELECT id FROM temp.chunk_ids)", BOTH },
    { "builds", MINE, BOTH },
    { "build_attempts", "build_id IN (SELECT id FROM main.builds)", BOTH },
    { "probes", MINE, BOTH },
    { "tune_kernels", MINE, BOTH },
    /* tune's resume reads the current rows only (and --remeasure this run's) */
    { "measurements", MINE " AND superseded = 0", 1u << CHUNKSTORE_TUNE },
    /* execute finds a kernel's source folder through its occurrence */
    { "kernel_occurrences", MINE, 1u << CHUNKSTORE_EXECUTE },
    { "sources", "id IN (SELECT source_id FROM main.kernel_occurrences)", 1u << CHUNKSTORE_EXECUTE },
    { "repos", "id IN (SELECT repo_id FROM main.sources)", 1u << CHUNKSTORE_EXECUTE },
};

int chunkstore_template(const char *path)
{
    struct store *s = NULL;
    unlink(path);
    int rc = store_open(&s, path, STORE_CREATE);
    store_free(s);
    return rc < 0 ? lscat_error_wrap("making the chunk store template '%s'", path) : 0;
}

static int cut_table(struct store *s, const struct cut_step *st)
{
    char *cols = NULL;
    int rc = store_query_text(&cols, s, "SELECT group_concat('\"' || name || '\"', ',') FROM "
                              "pragma_table_info(?)", "t", st->table);
    if (rc < 0 || !cols) {
        free(cols);
        return rc < 0 ? rc : lscat_error_set("the chunk store has no table '%s'", st->table);
    }
    char *sql = xasprintf("INSERT INTO main.%s(%s) SELECT %s FROM src.%s WHERE %s", st->table,
                          cols, cols, st->table, st->where);
    rc = store_run(s, sql, "");
    free(sql);
    free(cols);
    return rc < 0 ? rc : 0;
}

static int fill_ids(struct store *s, const char *ids)
{
    int rc = store_exec(s, "CREATE TEMP TABLE chunk_ids(id TEXT PRIMARY KEY)");
    const char *p = ids;
    while (rc == 0 && *p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n) {
            char *id = xstrndup(p, n);
            rc = store_run(s, "INSERT OR IGNORE INTO temp.chunk_ids(id) VALUES (?)", "t", id);
            rc = rc < 0 ? rc : 0;
            free(id);
        }
        p += n + (nl ? 1 : 0);
    }
    return rc;
}

static int cut(struct chunkstore_mark *mark, struct store *s, const char *base_path,
               enum chunkstore_stage stage, const char *ids)
{
    /* Copies of rows whose parents (a repository, an old stage run) the chunk leaves out. */
    int rc = store_exec(s, "PRAGMA foreign_keys = OFF");
    if (rc == 0)
        rc = store_run(s, "ATTACH DATABASE ? AS src", "t", base_path) < 0 ? LSCAT_ERR : 0;
    if (rc < 0)
        return rc;
    if ((rc = fill_ids(s, ids)) == 0 && (rc = store_begin(s)) == 0) {
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && rc == 0; i++)
            if (steps[i].stages & (1u << stage))
                rc = cut_table(s, &steps[i]);
        if (rc == 0)
            rc = store_commit(s);
        else
            store_rollback(s);
    }
    if (rc == 0)
        rc = store_query_int(&mark->measurements, s, "SELECT coalesce(max(id), 0) FROM "
                             "main.measurements", "");
    int drc = store_exec(s, "DETACH DATABASE src");
    return rc < 0 ? rc : drc;
}

int chunkstore_cut(struct chunkstore_mark *mark, const char *path, const char *template_path,
                   const char *base_path, enum chunkstore_stage stage, const char *ids)
{
    struct store *s = NULL;
    *mark = (struct chunkstore_mark){ 0 };
    int rc = fs_copy_atomic(template_path, path);
    if (rc == 0)
        rc = store_open(&s, path, 0);
    if (rc == 0)
        rc = cut(mark, s, base_path, stage, ids);
    store_free(s);
    return rc < 0 ? lscat_error_wrap("cutting the chunk store '%s'", path) : 0;
}

int chunkstore_trim(const char *path, const struct chunkstore_mark *mark)
{
    struct store *s = NULL;
    int rc = store_open(&s, path, 0);
    if (rc == 0)
        rc = store_run(s, "DELETE FROM measurements WHERE id <= ?", "i", mark->measurements);
    store_free(s);
    return rc < 0 ? lscat_error_wrap("trimming the chunk store '%s'", path) : 0;
}
