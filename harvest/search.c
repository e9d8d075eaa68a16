/* GitHub repository search for `harvest search` (see search.h). The API returns at most 1,000
 * results per query, so the pushed-date range is halved until each slice's total_count fits;
 * each slice is paginated by following rel="next" in the Link header and written in one
 * transaction. A single day over the cap is taken up to the cap and counted as truncated. */
#include "harvest/search.h"

#include "harvest/gha.h"
#include "harvest/repodb.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "store/store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int search_link_next(char *out, size_t out_size, const char *link)
{
    const char *p = link;
    while (p && (p = strchr(p, '<'))) {
        const char *end = strchr(p, '>');
        if (!end)
            return 0;
        const char *next = strchr(end, '<');
        const char *rel = strstr(end, "rel=\"next\"");
        if (rel && (!next || rel < next)) {
            snprintf(out, out_size, "%.*s", (int)(end - p - 1), p + 1);
            return 1;
        }
        p = end;
    }
    return 0;
}

static void url_escape(struct buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~')
            buf_addch(b, c);
        else
            buf_addf(b, "%%%02X", c);
    }
}

static void day(char out[16], time_t t)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 16, "%Y-%m-%d", &tm);
}

/* One GET with retries; the body (JSON) and headers stay in j. */
static int get(struct http_job *j, const char *url, const struct search_options *o)
{
    struct http_options ho = o->http;
    ho.parallel = 1;
    ho.accept = "application/vnd.github+json";
    ho.max_bytes = 32 << 20;
    *j = (struct http_job)HTTP_JOB_INIT;
    j->url = url;
    if (http_run(j, 1, &ho) < 0)
        return LSCAT_ERR;
    if (j->outcome != HTTP_OK)
        return lscat_error_set("GET %s: %s", url, j->error);
    char v[64];
    /* the search API allows few requests a minute: wait when the window is used up */
    if (http_header(j, "x-ratelimit-remaining", v, sizeof(v)) && atol(v) == 0 &&
        http_header(j, "x-ratelimit-reset", v, sizeof(v))) {
        double wait = difftime((time_t)atoll(v), time(NULL)) + 1;
        if (wait > 0 && wait <= o->http.max_wait_s) {
            log_info("search: rate limit reached, waiting %.0f s", wait);
            sleep((unsigned)wait);
        }
    }
    return 0;
}

/* Parse one page into agg; *total_out from total_count. */
static int parse_page(int64_t *total_out, int64_t *items_out, struct repo_agg *agg,
                      const struct buf *body, const char *language)
{
    json_error_t err;
    json_t *root = json_loadb(body->data, body->len, 0, &err);
    json_t *items = json_object_get(root, "items");
    if (!json_is_object(root) || !json_is_array(items)) {
        json_decref(root);
        return lscat_error_set("search: unexpected response (%s)", err.text);
    }
    *total_out = json_integer_value(json_object_get(root, "total_count"));
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        const char *name = json_string_value(json_object_get(it, "full_name"));
        const char *lang = json_string_value(json_object_get(it, "language"));
        const char *desc = json_string_value(json_object_get(it, "description"));
        if (!name)
            continue;
        unsigned kinds = 0;
        if (lang && !strcasecmp(lang, language))
            kinds |= GHA_EV_SEARCH_LANGUAGE;
        if (gha_has_cuda(name, strlen(name)))
            kinds |= GHA_EV_NAME_KEYWORD;
        if (desc && gha_has_cuda(desc, strlen(desc)))
            kinds |= GHA_EV_DESCRIPTION_KEYWORD;
        if (!kinds)
            kinds = GHA_EV_SEARCH_LANGUAGE;
        struct gha_evidence ev = { name, json_integer_value(json_object_get(it, "id")), kinds,
                                   lang, desc, NULL,
                                   json_string_value(json_object_get(it, "pushed_at")) };
        repo_agg_add(agg, &ev);
        ++*items_out;
    }
    json_decref(root);
    return 0;
}

static int save(struct search_counts *k, struct store *s, struct repo_agg *agg)
{
    int rc = store_begin(s);
    if (rc < 0)
        return rc;
    if ((rc = repodb_upsert_all(s, agg, "search", &k->repos_new, NULL)) < 0 ||
        (rc = store_commit(s)) < 0)
        store_rollback(s);
    return rc;
}

/* One date slice: page 1, split when over the cap, else follow the pages. */
static int slice(struct search_counts *k, struct store *s, const struct search_options *o,
                 time_t from, time_t to)
{
    char a[16], b[16], next[2048];
    struct buf url = BUF_INIT, q = BUF_INIT;
    struct http_job j = HTTP_JOB_INIT;
    struct repo_agg agg;
    int64_t total = 0, items = 0;
    int rc;
    repo_agg_init(&agg);
    day(a, from);
    day(b, to);
    buf_addf(&q, "language:%s pushed:%s..%s", o->language, a, b);
    buf_addf(&url, "%s/search/repositories?q=", o->api_url);
    url_escape(&url, q.data);
    buf_addf(&url, "&sort=updated&order=desc&per_page=%d&page=1", o->per_page);
    for (int page = 1;; page++) {
        k->queries++;
        if ((rc = get(&j, url.data, o)) < 0 ||
            (rc = parse_page(&total, &items, &agg, &j.body, o->language)) < 0)
            break;
        if (page == 1 && total > o->cap && to - from >= 86400) {
            time_t mid = from + ((to - from) / 86400 / 2) * 86400;
            http_job_release(&j);
            repo_agg_release(&agg);
            buf_release(&url);
            buf_release(&q);
            log_event(LOG_DEBUG, "search_split", "from", a, "to", b, NULL);
            rc = slice(k, s, o, from, mid);
            return rc < 0 ? rc : slice(k, s, o, mid + 86400, to);
        }
        if (page == 1 && total > o->cap) {
            k->truncated++;
            log_event(LOG_WARN, "search_truncated", "day", a, "reason",
                      "over the API's result cap in one day", NULL);
        }
        char link[4096];
        if (!http_header(&j, "link", link, sizeof(link)) ||
            !search_link_next(next, sizeof(next), link))
            break;
        buf_reset(&url);
        buf_adds(&url, next);
        http_job_release(&j);
    }
    if (rc == 0) {
        k->results += items;
        rc = save(k, s, &agg);
    } else {
        k->failed++;
        log_event(LOG_WARN, "search_failed", "from", a, "to", b, "error", lscat_error_last(),
                  NULL);
        rc = 0; /* the other slices go on */
    }
    http_job_release(&j);
    repo_agg_release(&agg);
    buf_release(&url);
    buf_release(&q);
    return rc;
}

int search_run(struct search_counts *out, struct store *s, const struct search_options *o)
{
    memset(out, 0, sizeof(*out));
    time_t from = o->since / 86400 * 86400, to = o->until / 86400 * 86400;
    if (to < from)
        return lscat_error_setc(LSCAT_EINVALID, "--pushed-until is before --pushed-since");
    return slice(out, s, o, from, to);
}
