/* The night's summary (summary.h): counts of the store before and after, failures recorded
 * tonight by stage and class, each stage's outcome, as text for people and JSON for machines. */
#include "nightly/summary.h"

#include "common/xalloc.h"

#include <stddef.h>
#include <string.h>

int nightly_counts_take(struct nightly_counts *out, struct store *s)
{
    static const struct { size_t off; const char *sql; } q[] = {
        { offsetof(struct nightly_counts, hours),
          "SELECT count(*) FROM gha_hours WHERE status = 'done'" },
        { offsetof(struct nightly_counts, repos), "SELECT count(*) FROM repos" },
        { offsetof(struct nightly_counts, repos_fetched),
          "SELECT count(*) FROM repos WHERE fetch_status = 'fetched'" },
        { offsetof(struct nightly_counts, repos_gone),
          "SELECT count(*) FROM repos WHERE fetch_status = 'gone'" },
        { offsetof(struct nightly_counts, kernels), "SELECT count(*) FROM kernels" },
        { offsetof(struct nightly_counts, builds_ok),
          "SELECT count(*) FROM builds WHERE status = 'ok'" },
        { offsetof(struct nightly_counts, builds_failed),
          "SELECT count(*) FROM builds WHERE status = 'failed'" },
        { offsetof(struct nightly_counts, measurements),
          "SELECT count(*) FROM measurements WHERE superseded = 0" },
        { offsetof(struct nightly_counts, gpus), "SELECT count(*) FROM gpus" },
        { offsetof(struct nightly_counts, failures_last_id),
          "SELECT coalesce(max(id), 0) FROM failures" },
    };
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        int rc = store_query_int((int64_t *)((char *)out + q[i].off), s, q[i].sql, "");
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* "stage/class count" pairs of the failures recorded tonight, as text and as JSON members. */
static void failures(struct buf *text, struct buf *json, const struct nightly_summary *sum,
                     struct store *s)
{
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, s, "SELECT stage || '/' || class, count(*) FROM failures"
                                   " WHERE id > ? GROUP BY 1 ORDER BY 2 DESC, 1");
    size_t n = 0;
    if (rc >= 0)
        rc = store_bind(st, "i", sum->before.failures_last_id);
    while (rc >= 0 && (rc = store_step(st)) == STORE_ROW) {
        const char *k = store_col_text(st, 0);
        long long c = (long long)store_col_int(st, 1);
        if (text)
            buf_addf(text, "%s%s %lld", n ? ", " : "", k, c);
        if (json) {
            buf_adds(json, n ? "," : "");
            buf_add_json_str(json, k, strlen(k));
            buf_addf(json, ":%lld", c);
        }
        n++;
    }
    store_finalize(st);
    if (text && !n)
        buf_adds(text, "none");
}

static void counts_line(struct buf *out, const struct nightly_counts *c, int plus)
{
    const char *f = plus ? "%+lld %s" : "%lld %s";
    const struct { int64_t v; const char *what; } parts[] = {
        { c->hours, "hours, " }, { c->repos, "repositories (" }, { c->repos_fetched, "fetched, " },
        { c->repos_gone, "gone), " }, { c->kernels, "kernels, " }, { c->builds_ok, "builds ok (" },
        { c->builds_failed, "failed), " }, { c->measurements, "measurements, " },
        { c->gpus, "GPUs\n" },
    };
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        buf_addf(out, f, (long long)parts[i].v, parts[i].what);
}

static void diff(struct nightly_counts *out, const struct nightly_summary *sum)
{
    const int64_t *a = (const int64_t *)&sum->before, *b = (const int64_t *)&sum->after;
    int64_t *d = (int64_t *)out;
    for (size_t i = 0; i < sizeof(*out) / sizeof(int64_t); i++)
        d[i] = b[i] - a[i];
}

void nightly_summary_text(struct buf *out, const struct nightly_summary *sum, struct store *s)
{
    struct nightly_counts d;
    const struct nightly_night *n = sum->night;
    diff(&d, sum);
    buf_addf(out, "lscat nightly %s .. %s, store %s: exit %d, %s\n", sum->started_at,
             sum->ended_at + 11, sum->db_path, sum->exit_code,
             n->release ? "release published" : "no release published");
    buf_adds(out, "  stage     outcome         wall  note\n");
    for (int i = 0; i < NIGHTLY_NSTAGES; i++) {
        const struct nightly_stage_result *r = &n->stages[i];
        buf_addf(out, "  %-9s %-10s %9.1fs  %s\n", nightly_stage_name(i),
                 nightly_outcome_name(r->outcome), r->wall_s, r->note.data);
    }
    buf_adds(out, "  new:      ");
    counts_line(out, &d, 1);
    buf_adds(out, "  total:    ");
    counts_line(out, &sum->after, 0);
    buf_adds(out, "  failures recorded tonight (stage/class): ");
    failures(out, NULL, sum, s);
    buf_addch(out, '\n');
}

static void counts_json(struct buf *out, const struct nightly_counts *c)
{
    buf_addf(out, "{\"hours\":%lld,\"repositories\":%lld,\"repositories_fetched\":%lld,"
                  "\"repositories_gone\":%lld,\"kernels\":%lld,\"builds_ok\":%lld,"
                  "\"builds_failed\":%lld,\"measurements\":%lld,\"gpus\":%lld}",
             (long long)c->hours, (long long)c->repos, (long long)c->repos_fetched,
             (long long)c->repos_gone, (long long)c->kernels, (long long)c->builds_ok,
             (long long)c->builds_failed, (long long)c->measurements, (long long)c->gpus);
}

static void json_str(struct buf *out, const char *s)
{
    if (s)
        buf_add_json_str(out, s, strlen(s));
    else
        buf_adds(out, "null");
}

void nightly_summary_json(struct buf *out, const struct nightly_summary *sum, struct store *s)
{
    static const char *const words[] = { "not_chosen", "ok", "failed", "elsewhere", "blocked" };
    struct nightly_counts d;
    const struct nightly_night *n = sum->night;
    diff(&d, sum);
    buf_addf(out, "{\"started_at\":\"%s\",\"ended_at\":\"%s\",\"exit_status\":%d,\"store\":",
             sum->started_at, sum->ended_at, sum->exit_code);
    json_str(out, sum->db_path);
    buf_adds(out, ",\"releases\":");
    json_str(out, sum->releases_dir);
    buf_adds(out, ",\"release\":");
    json_str(out, n->release);
    buf_adds(out, ",\"stages\":{");
    for (int i = 0; i < NIGHTLY_NSTAGES; i++) {
        const struct nightly_stage_result *r = &n->stages[i];
        buf_addf(out, "%s\"%s\":{\"outcome\":\"%s\",\"exit_code\":%d,\"wall_s\":%.3f,\"note\":",
                 i ? "," : "", nightly_stage_name(i), words[r->outcome], r->exit_code, r->wall_s);
        json_str(out, r->note.data);
        buf_addf(out, ",\"counts\":%s}", r->counts.len ? r->counts.data : "{}");
    }
    buf_adds(out, "},\"new\":");
    counts_json(out, &d);
    buf_adds(out, ",\"total\":");
    counts_json(out, &sum->after);
    buf_adds(out, ",\"failures_by_class\":{");
    failures(NULL, out, sum, s);
    buf_adds(out, "}}");
}
