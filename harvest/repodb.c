/* Candidate repositories and GH Archive hours in the store. Evidence from many events is
 * merged in memory per hour (a small open-addressing map), then upserted: kinds are unioned,
 * first/last seen widened, event counts added, so rescanning never double counts (an hour is
 * written once, with its gha_hours row, in the caller's transaction). */
#include "harvest/repodb.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "store/store.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void repo_agg_init(struct repo_agg *a)
{
    memset(a, 0, sizeof(*a));
}

void repo_agg_release(struct repo_agg *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->recs[i].full_name);
        free(a->recs[i].language);
        free(a->recs[i].description);
    }
    free(a->recs);
    free(a->slots);
    memset(a, 0, sizeof(*a));
}

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint32_t)tolower((unsigned char)*s)) * 16777619u;
    return h;
}

static void rehash(struct repo_agg *a)
{
    free(a->slots);
    a->nslots = a->nslots ? a->nslots * 2 : 64;
    a->slots = xcalloc(a->nslots, sizeof(*a->slots));
    for (size_t i = 0; i < a->n; i++) {
        size_t j = hash_name(a->recs[i].full_name) & (a->nslots - 1);
        while (a->slots[j])
            j = (j + 1) & (a->nslots - 1);
        a->slots[j] = (uint32_t)(i + 1);
    }
}

static struct repo_rec *lookup(struct repo_agg *a, const char *full_name)
{
    if ((a->n + 1) * 2 > a->nslots)
        rehash(a);
    size_t j = hash_name(full_name) & (a->nslots - 1);
    while (a->slots[j]) {
        struct repo_rec *r = &a->recs[a->slots[j] - 1];
        if (!strcasecmp(r->full_name, full_name))
            return r;
        j = (j + 1) & (a->nslots - 1);
    }
    XGROW(a->recs, a->n + 1, a->cap);
    struct repo_rec *r = &a->recs[a->n++];
    memset(r, 0, sizeof(*r));
    r->full_name = xstrdup(full_name);
    a->slots[j] = (uint32_t)a->n;
    return r;
}

static void set_str(char **dst, const char *src, size_t cap)
{
    if (!src)
        return;
    free(*dst);
    *dst = xstrndup(src, cap);
}

static void widen(char first[32], char last[32], const char *t)
{
    if (!t || !*t)
        return;
    if (!first[0] || strcmp(t, first) < 0)
        snprintf(first, 32, "%s", t);
    if (!last[0] || strcmp(t, last) > 0)
        snprintf(last, 32, "%s", t);
}

int repo_agg_add(void *agg, const struct gha_evidence *ev)
{
    struct repo_agg *a = agg;
    struct repo_rec *r = lookup(a, ev->full_name);
    r->kinds |= ev->kinds;
    if (ev->github_id)
        r->github_id = ev->github_id;
    set_str(&r->language, ev->language, 64);
    set_str(&r->description, ev->description, 1000);
    widen(r->first_seen, r->last_seen, ev->created_at);
    if (ev->pushed_at && strcmp(ev->pushed_at, r->pushed_at) > 0)
        snprintf(r->pushed_at, sizeof(r->pushed_at), "%s", ev->pushed_at);
    if (!(ev->kinds & (GHA_EV_IMPORTED | GHA_EV_SEARCH_LANGUAGE)))
        r->events++;
    return 0;
}

static int valid_part(const char *p, size_t n)
{
    if (n == 0 || n > 100 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)p[i]) && p[i] != '.' && p[i] != '_' && p[i] != '-')
            return 0;
    return 1;
}

int repodb_valid_name(const char *full_name)
{
    const char *slash = full_name ? strchr(full_name, '/') : NULL;
    return slash && valid_part(full_name, (size_t)(slash - full_name)) &&
           valid_part(slash + 1, strlen(slash + 1));
}

static const char upsert_sql[] =
    "INSERT INTO repos(full_name, github_id, description, language, evidence, first_seen,"
    " last_seen, event_count, pushed_at, source)"
    " VALUES (?1, CASE WHEN ?2 IS NULL OR EXISTS (SELECT 1 FROM repos WHERE github_id = ?2)"
    " THEN NULL ELSE ?2 END, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
    " ON CONFLICT(full_name) DO UPDATE SET"
    " github_id = COALESCE(repos.github_id, excluded.github_id),"
    " description = COALESCE(excluded.description, repos.description),"
    " language = COALESCE(excluded.language, repos.language),"
    " evidence = excluded.evidence,"
    " first_seen = CASE WHEN repos.first_seen IS NULL OR excluded.first_seen < repos.first_seen"
    " THEN COALESCE(excluded.first_seen, repos.first_seen) ELSE repos.first_seen END,"
    " last_seen = CASE WHEN repos.last_seen IS NULL OR excluded.last_seen > repos.last_seen"
    " THEN COALESCE(excluded.last_seen, repos.last_seen) ELSE repos.last_seen END,"
    " event_count = repos.event_count + excluded.event_count,"
    " pushed_at = CASE WHEN repos.pushed_at IS NULL OR excluded.pushed_at > repos.pushed_at"
    " THEN COALESCE(excluded.pushed_at, repos.pushed_at) ELSE repos.pushed_at END";

static const char *nz(const char *s)
{
    return s && *s ? s : NULL;
}

static int upsert_one(struct store *s, const struct repo_rec *r, const char *source,
                      int64_t *new_out)
{
    char *old = NULL;
    struct buf ev = BUF_INIT;
    int64_t exists = 0;
    int rc = store_query_int(&exists, s, "SELECT count(*) FROM repos WHERE full_name = ?", "t",
                             r->full_name);
    if (rc < 0 || (rc = store_query_text(&old, s, "SELECT evidence FROM repos WHERE full_name = ?",
                                         "t", r->full_name)) < 0)
        goto done;
    gha_evidence_format(&ev, r->kinds | gha_evidence_parse(old));
    if (r->github_id)
        rc = store_run(s, upsert_sql, "titttttitt", r->full_name, (int64_t)r->github_id,
                       r->description, r->language, ev.data, nz(r->first_seen), nz(r->last_seen),
                       (int64_t)r->events, nz(r->pushed_at), source);
    else
        rc = store_run(s, upsert_sql, "tntttttitt", r->full_name, r->description, r->language,
                       ev.data, nz(r->first_seen), nz(r->last_seen), (int64_t)r->events,
                       nz(r->pushed_at), source);
    if (rc >= 0 && !exists && new_out)
        ++*new_out;
done:
    free(old);
    buf_release(&ev);
    return rc < 0 ? rc : 0;
}

int repodb_upsert_all(struct store *s, const struct repo_agg *a, const char *source,
                      int64_t *new_out, int64_t *skipped_out)
{
    for (size_t i = 0; i < a->n; i++) {
        if (!repodb_valid_name(a->recs[i].full_name)) {
            if (skipped_out)
                ++*skipped_out;
            continue;
        }
        if (upsert_one(s, &a->recs[i], source, new_out) < 0)
            return lscat_error_wrap("repository '%s'", a->recs[i].full_name);
    }
    return 0;
}

int repodb_hour_record(struct store *s, const char *hour, const char *status, const char *reason,
                       const char *source_url, const struct gha_scan_stats *st, double scan_s,
                       int64_t run_id)
{
    char now[32];
    fs_utc_now(now);
    struct gha_scan_stats z = { 0 };
    if (!st)
        st = &z;
    int rc = store_run(s,
                       "INSERT INTO gha_hours(hour, status, reason, source_url, bytes_compressed,"
                       " bytes_raw, events, bad_lines, candidates, scan_s, scanned_at, run_id)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                       " ON CONFLICT(hour) DO UPDATE SET status = excluded.status,"
                       " reason = excluded.reason, source_url = excluded.source_url,"
                       " bytes_compressed = excluded.bytes_compressed,"
                       " bytes_raw = excluded.bytes_raw, events = excluded.events,"
                       " bad_lines = excluded.bad_lines, candidates = excluded.candidates,"
                       " scan_s = excluded.scan_s, scanned_at = excluded.scanned_at,"
                       " run_id = excluded.run_id",
                       "ttttiiiiidti", hour, status, reason, source_url,
                       (int64_t)st->bytes_compressed, (int64_t)st->bytes_raw, (int64_t)st->events,
                       (int64_t)st->bad_lines, (int64_t)st->candidates, scan_s, now, run_id);
    return rc < 0 ? rc : 0;
}
