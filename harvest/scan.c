/* `harvest scan` orchestration: which hours to do, where each comes from, worker threads that
 * fetch and scan them, and one store transaction per hour (its repositories and its gha_hours
 * row together), so a killed scan redoes at most the hours in flight. */
#include "harvest/scan.h"

#include "harvest/gha.h"
#include "harvest/repodb.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/xalloc.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct scan_ctx {
    struct store *s;
    const struct scan_options *o;
    time_t *hours;
    size_t n, next;
    pthread_mutex_t lock;
    struct scan_counts *counts;
    struct progress *bar;
    int fatal;
    char fatal_msg[512];
};

static int is_http(const char *url)
{
    return !strncmp(url, "http://", 7) || !strncmp(url, "https://", 8);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

struct hour_result {
    const char *status; /* "done", "bad", "missing", or NULL: not recorded (retry next run) */
    char reason[300];
    struct gha_scan_stats st;
    struct repo_agg agg;
    double scan_s;
};

/* Get the hour's bytes as a local path: downloaded for http(s), as is otherwise. */
static char *hour_local_path(struct hour_result *r, const struct scan_options *o,
                             const char *url, const char *hour, int *downloaded)
{
    *downloaded = 0;
    if (!is_http(url))
        return xstrdup(!strncmp(url, "file://", 7) ? url + 7 : url);
    char *path = xasprintf("%s/gharchive/%s.json%s", o->work_dir, hour,
                           ends_with(url, ".gz") ? ".gz" : "");
    if (fs_exists(path)) { /* downloaded whole by a run that was killed before its scan */
        *downloaded = 1;
        return path;
    }
    struct http_job j = HTTP_JOB_INIT;
    struct http_options ho = o->http;
    ho.parallel = 1;
    j.url = url;
    j.path = path;
    if (http_run(&j, 1, &ho) < 0 || j.outcome != HTTP_OK) {
        if (j.outcome == HTTP_GONE)
            r->status = "missing";
        snprintf(r->reason, sizeof(r->reason), "%s",
                 j.outcome == HTTP_PENDING ? lscat_error_last() : j.error);
        http_job_release(&j);
        free(path);
        return NULL;
    }
    http_job_release(&j);
    *downloaded = 1;
    return path;
}

static void scan_hour(struct hour_result *r, const struct scan_options *o, const char *url,
                      const char *hour)
{
    int downloaded = 0;
    char *path = hour_local_path(r, o, url, hour, &downloaded);
    if (!path)
        return;
    double t0 = fs_mono_s();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        r->status = errno == ENOENT ? "missing" : NULL;
        snprintf(r->reason, sizeof(r->reason), "cannot open '%s': %s", path, strerror(errno));
        goto done;
    }
    int rc = gha_scan_fd(&r->st, fd, ends_with(path, ".gz") ? 1 : 0, repo_agg_add, &r->agg);
    close(fd);
    r->scan_s = fs_mono_s() - t0;
    if (rc == LSCAT_EINVALID) {
        r->status = "bad";
        snprintf(r->reason, sizeof(r->reason), "%s (after %llu events)", lscat_error_last(),
                 (unsigned long long)r->st.events);
    } else if (rc < 0) {
        snprintf(r->reason, sizeof(r->reason), "%s", lscat_error_last());
    } else
        r->status = "done";
done:
    if (downloaded && !o->keep_downloads)
        unlink(path);
    free(path);
}

static int record_hour(struct scan_ctx *c, struct hour_result *r, const char *hour,
                       const char *url)
{
    struct store *s = c->s;
    struct scan_counts *k = c->counts;
    int rc;
    if (!r->status) {
        k->hours_failed++;
        log_event(LOG_WARN, "hour_failed", "hour", hour, "error", r->reason, NULL);
        return 0;
    }
    if ((rc = store_begin(s)) < 0)
        return rc;
    int64_t done = 0;
    /* another scan may have finished this hour meanwhile: count it once */
    if ((rc = store_query_int(&done, s, "SELECT count(*) FROM gha_hours WHERE hour = ? AND"
                                        " status = 'done'", "t", hour)) < 0 || done) {
        store_rollback(s);
        if (done)
            k->hours_skipped++;
        return rc < 0 ? rc : 0;
    }
    if ((rc = repodb_upsert_all(s, &r->agg, "gharchive", &k->repos_new, NULL)) < 0 ||
        (rc = repodb_hour_record(s, hour, r->status, r->reason[0] ? r->reason : NULL, url,
                                 &r->st, r->scan_s, c->o->run_id)) < 0 ||
        (rc = store_commit(s)) < 0) {
        store_rollback(s);
        return rc;
    }
    k->events += (int64_t)r->st.events;
    k->bad_lines += (int64_t)r->st.bad_lines;
    k->candidates += (int64_t)r->st.candidates;
    k->bytes_compressed += r->st.bytes_compressed;
    k->bytes_raw += r->st.bytes_raw;
    if (!strcmp(r->status, "done"))
        k->hours_done++;
    else if (!strcmp(r->status, "bad"))
        k->hours_bad++;
    else
        k->hours_missing++;
    char ev[32], cand[32];
    snprintf(ev, sizeof(ev), "%llu", (unsigned long long)r->st.events);
    snprintf(cand, sizeof(cand), "%llu", (unsigned long long)r->st.candidates);
    log_event(strcmp(r->status, "done") ? LOG_WARN : LOG_DEBUG, "hour", "hour", hour, "status",
              r->status, "events", ev, "candidates", cand, "reason", r->reason, NULL);
    return 0;
}

static void *worker(void *arg)
{
    struct scan_ctx *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        size_t i = c->next++;
        int stop = c->fatal;
        pthread_mutex_unlock(&c->lock);
        if (i >= c->n || stop)
            break;
        char hour[16];
        gha_hour_format(hour, c->hours[i]);
        char *url = gha_source_expand(c->o->source ? c->o->source : GHA_DEFAULT_SOURCE,
                                      c->hours[i]);
        struct hour_result r;
        memset(&r, 0, sizeof(r));
        repo_agg_init(&r.agg);
        scan_hour(&r, c->o, url, hour);
        pthread_mutex_lock(&c->lock);
        if (!c->fatal && record_hour(c, &r, hour, url) < 0) {
            c->fatal = 1;
            snprintf(c->fatal_msg, sizeof(c->fatal_msg), "%s", lscat_error_last());
        }
        pthread_mutex_unlock(&c->lock);
        progress_add(c->bar, 1);
        repo_agg_release(&r.agg);
        free(url);
    }
    return NULL;
}

/* The hours of the range that still need a scan. */
static int hours_todo(struct scan_ctx *c, struct scan_counts *k)
{
    const struct scan_options *o = c->o;
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, c->s, "SELECT status FROM gha_hours WHERE hour = ?");
    if (rc < 0)
        return rc;
    size_t cap = 0;
    for (time_t t = o->from; t <= o->to; t += 3600) {
        char hour[16];
        gha_hour_format(hour, t);
        k->hours_total++;
        store_bind(st, "t", hour);
        rc = store_step(st);
        if (rc < 0)
            break;
        if (rc == STORE_ROW) {
            const char *status = store_col_text(st, 0);
            int late = o->retry_missing_from && t >= o->retry_missing_from &&
                       !strcmp(status, "missing");
            if (!strcmp(status, "done") || (!o->retry_bad && !late)) {
                k->hours_skipped++;
                continue;
            }
        }
        rc = 0;
        XGROW(c->hours, c->n + 1, cap);
        c->hours[c->n++] = t;
    }
    store_finalize(st);
    return rc < 0 ? rc : 0;
}

int scan_run(struct scan_counts *out, struct store *s, const struct scan_options *o)
{
    struct scan_ctx c;
    memset(&c, 0, sizeof(c));
    memset(out, 0, sizeof(*out));
    c.s = s;
    c.o = o;
    c.counts = out;
    pthread_mutex_init(&c.lock, NULL);
    int rc = gha_source_check(o->source ? o->source : GHA_DEFAULT_SOURCE);
    if (rc == 0)
        rc = hours_todo(&c, out);
    if (rc < 0)
        goto done;
    json_object_seed(0); /* before threads: jansson seeds its hash lazily otherwise */
    int nthreads = o->jobs < 1 ? 1 : o->jobs;
    if ((size_t)nthreads > c.n)
        nthreads = (int)c.n;
    c.bar = progress_new("hours", c.n);
    pthread_t *tids = xcalloc((size_t)nthreads + 1, sizeof(*tids));
    for (int i = 0; i < nthreads; i++)
        pthread_create(&tids[i], NULL, worker, &c);
    for (int i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    progress_free(c.bar);
    if (c.fatal)
        rc = lscat_error_set("%s", c.fatal_msg);
done:
    free(c.hours);
    pthread_mutex_destroy(&c.lock);
    return rc;
}

int scan_next_after_last(time_t *out, struct store *s, time_t recent_from)
{
    char *last = NULL, *missing = NULL, recent[16];
    time_t t;
    gha_hour_format(recent, recent_from);
    int rc = store_query_text(&last, s, "SELECT max(hour) FROM gha_hours WHERE status = 'done'",
                              "");
    if (rc < 0)
        return rc;
    if (!last)
        return lscat_error_setc(LSCAT_ENOTFOUND, "no hour was scanned yet (give --from)");
    rc = gha_hour_parse(out, last, 0);
    if (rc == 0)
        *out += 3600;
    if (rc == 0 && (rc = store_query_text(&missing, s, "SELECT min(hour) FROM gha_hours WHERE"
                                                       " status = 'missing' AND hour >= ?",
                                          "t", recent)) == 0 &&
        missing && gha_hour_parse(&t, missing, 0) == 0 && t < *out)
        *out = t;
    free(last);
    free(missing);
    return rc;
}
