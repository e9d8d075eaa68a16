/* `lscat status`: what the store holds, per stage and status, so an operator sees at a glance
 * where a nightly run stands. Each section is one GROUP BY query. */
#include "store/status.h"

#include "common/error.h"

#include <string.h>
#include <sys/stat.h>

struct section {
    const char *name;  /* JSON key and text heading */
    const char *sql;   /* rows of (status, count) */
};

static const struct section sections[] = {
    { "gha_hours", "SELECT status, count(*) FROM gha_hours GROUP BY status ORDER BY status" },
    { "repos", "SELECT fetch_status, count(*) FROM repos GROUP BY fetch_status ORDER BY 1" },
    { "files", "SELECT kind, count(*) FROM files GROUP BY kind ORDER BY kind" },
    { "blobs", "SELECT 'stored', count(*) FROM blobs UNION ALL "
               "SELECT 'bytes', coalesce(sum(size_bytes), 0) FROM blobs" },
    { "parses", "SELECT status, count(*) FROM parses GROUP BY status ORDER BY status" },
    { "kernels", "SELECT status, count(*) FROM kernels GROUP BY status ORDER BY status" },
    { "indexing", "SELECT coalesce(indexing, 'unknown'), count(*) FROM kernels GROUP BY 1 "
                  "ORDER BY 1" },
    { "builds", "SELECT status, count(*) FROM builds GROUP BY status ORDER BY status" },
    { "probes", "SELECT outcome, count(*) FROM probes GROUP BY outcome ORDER BY outcome" },
    { "gpus", "SELECT name, count(*) FROM gpus GROUP BY name ORDER BY name" },
    { "measurements", "SELECT status, count(*) FROM measurements WHERE superseded = 0 "
                      "GROUP BY status ORDER BY status" },
    /* the output check of the current ok measurements (docs/isolate.md "Output check") */
    { "output_check", "SELECT output_check, count(*) FROM measurements WHERE superseded = 0 "
                      "AND status = 'ok' GROUP BY 1 ORDER BY 1" },
    { "failures", "SELECT stage || ':' || class, count(*) FROM failures GROUP BY 1 ORDER BY 1" },
};

static int add_section(struct buf *out, struct store *s, const struct section *sec, int json,
                       int first)
{
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, s, sec->sql);
    if (rc < 0)
        return rc;
    if (json)
        buf_addf(out, "%s\"%s\":{", first ? "" : ",", sec->name);
    else
        buf_addf(out, "%-14s", sec->name);
    int n = 0;
    while ((rc = store_step(st)) == STORE_ROW) {
        const char *k = store_col_text(st, 0);
        if (!k)
            k = "(none)";
        long long v = (long long)store_col_int(st, 1);
        if (json) {
            buf_adds(out, n ? "," : "");
            buf_add_json_str(out, k, strlen(k));
            buf_addf(out, ":%lld", v);
        } else {
            buf_addf(out, "%s%s %lld", n ? ", " : "", k, v);
        }
        n++;
    }
    store_finalize(st);
    buf_adds(out, json ? "}" : (n ? "\n" : "-\n"));
    return rc < 0 ? rc : 0;
}

static int add_last_runs(struct buf *out, struct store *s, int json)
{
    static const char sql[] =
        "SELECT stage, started_at, ended_at, exit_status, counts FROM stage_runs r "
        "WHERE id = (SELECT max(id) FROM stage_runs WHERE stage = r.stage) ORDER BY stage";
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, s, sql);
    if (rc < 0)
        return rc;
    buf_adds(out, json ? ",\"last_runs\":[" : "\nlast run of each stage:\n");
    int n = 0;
    while ((rc = store_step(st)) == STORE_ROW) {
        const char *stage = store_col_text(st, 0), *start = store_col_text(st, 1);
        const char *end = store_col_text(st, 2), *counts = store_col_text(st, 4);
        int has_exit = !store_col_is_null(st, 3);
        int exit_status = (int)store_col_int(st, 3);
        if (json) {
            buf_addf(out, "%s{\"stage\":", n ? "," : "");
            buf_add_json_str(out, stage, strlen(stage));
            buf_adds(out, ",\"started_at\":");
            buf_add_json_str(out, start, strlen(start));
            buf_adds(out, ",\"ended_at\":");
            if (end)
                buf_add_json_str(out, end, strlen(end));
            else
                buf_adds(out, "null");
            if (has_exit)
                buf_addf(out, ",\"exit_status\":%d", exit_status);
            else
                buf_adds(out, ",\"exit_status\":null");
            buf_addf(out, ",\"counts\":%s}", counts && counts[0] ? counts : "null");
        } else {
            buf_addf(out, "  %-12s %s  ", stage, start);
            if (has_exit)
                buf_addf(out, "exit %d", exit_status);
            else
                buf_adds(out, "did not finish (running, or killed)");
            if (counts && counts[0])
                buf_addf(out, "  %s", counts);
            buf_addch(out, '\n');
        }
        n++;
    }
    store_finalize(st);
    if (json)
        buf_addch(out, ']');
    else if (!n)
        buf_adds(out, "  (none yet)\n");
    return rc < 0 ? rc : 0;
}

int status_report(struct buf *out, struct store *s, int json)
{
    struct stat st;
    long long size = stat(store_path(s), &st) == 0 ? (long long)st.st_size : -1;
    const char *path = store_path(s);
    if (json) {
        buf_adds(out, "{\"store\":{\"path\":");
        buf_add_json_str(out, path, strlen(path));
        buf_addf(out, ",\"schema_version\":%d,\"size_bytes\":%lld},\"sections\":{",
                 store_schema_version(s), size);
    } else {
        buf_addf(out, "store %s (schema %d, %lld bytes)\n\n", path, store_schema_version(s),
                 size);
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof(sections) / sizeof(sections[0]); i++)
        rc = add_section(out, s, &sections[i], json, i == 0);
    if (json)
        buf_addch(out, '}');
    if (!rc)
        rc = add_last_runs(out, s, json);
    if (json)
        buf_adds(out, "}\n");
    return rc;
}
