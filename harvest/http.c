/* Parallel, polite, resumable HTTP for harvest (see http.h). One curl multi handle drives up
 * to `parallel` transfers; a job that fails transiently is re-queued with a not-before time
 * (exponential backoff with jitter, or the server's Retry-After / rate-limit reset), so other
 * jobs keep going while it waits. curl codes are translated here and nowhere else. */
#include "harvest/http.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { HEADERS_CAP = 64 << 10 };

struct job_priv {
    CURL *easy;
    FILE *fp;
    char *part_path;
    int host;              /* index into the loop's host table */
    double not_before;     /* monotonic seconds */
    int64_t resume_from;   /* bytes already in .part when the attempt started */
    int body_started;      /* first byte of this response's body seen */
    int restart;           /* the server answered our Range with other bytes: drop the .part */
    int over_cap;
    int64_t max_bytes;
    int active, done;
    struct curl_slist *hdrs;
};

int http_global_init(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return lscat_error_set("curl: global initialisation failed");
    return 0;
}

void http_global_cleanup(void)
{
    curl_global_cleanup();
}

void http_job_release(struct http_job *j)
{
    buf_release(&j->body);
    buf_release(&j->headers);
}

int http_header(const struct http_job *j, const char *name, char *out, size_t out_size)
{
    size_t nl = strlen(name);
    const char *p = j->headers.data;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > nl && !strncasecmp(p, name, nl) && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            size_t vl = len - (size_t)(v - p);
            while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
                vl--;
            snprintf(out, out_size, "%.*s", (int)vl, v);
            return 1;
        }
        p += len + (eol ? 1 : 0);
    }
    return 0;
}

double http_parse_retry_after(const char *v)
{
    char *end;
    double s = strtod(v, &end);
    if (end != v && *end == 0 && s >= 0)
        return s;
    time_t t = curl_getdate(v, NULL);
    if (t < 0)
        return -1;
    double d = difftime(t, time(NULL));
    return d < 0 ? 0 : d;
}

/* ---------------------------------------------------------------- curl callbacks */

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    struct http_job *j = arg;
    size_t len = size * n;
    if (len >= 5 && !strncmp(data, "HTTP/", 5))
        buf_reset(&j->headers); /* a new response (after a redirect or 100-continue) */
    if (j->headers.len + len < HEADERS_CAP)
        buf_add(&j->headers, data, len);
    return len;
}

/* Where the body of a response to our Range request starts: 0 for a whole body (200), the
 * Content-Range start for a 206, -1 when a 206 does not say. */
static long long range_start(const struct http_job *j, long status)
{
    char v[128];
    long long from = -1;
    if (status != 206)
        return 0;
    if (http_header(j, "content-range", v, sizeof(v)) && sscanf(v, "bytes %lld-", &from) != 1)
        from = -1;
    return from;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct http_job *j = arg;
    struct job_priv *p = j->priv;
    size_t len = size * n;
    long status = 0;
    curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 300)
        return len; /* error pages are not kept */
    if (!p->body_started) {
        p->body_started = 1;
        if (j->path && p->resume_from > 0 && status != 0) {
            long long from = range_start(j, status);
            if (from == 0) { /* the server ignored Range (200, or 206 from 0): start over */
                if (ftruncate(fileno(p->fp), 0) < 0 || fseek(p->fp, 0, SEEK_SET) < 0)
                    return 0;
                p->resume_from = 0;
            } else if (from != p->resume_from) {
                p->restart = 1; /* other bytes than asked for: retry without the .part */
                return 0;
            }
        }
    }
    if (p->max_bytes > 0 && p->resume_from + j->bytes + (int64_t)len > p->max_bytes) {
        p->over_cap = 1;
        return 0;
    }
    if (j->path) {
        if (fwrite(data, 1, len, p->fp) != len)
            return 0;
    } else if (buf_add(&j->body, data, len) < 0) {
        p->over_cap = 1;
        return 0;
    }
    j->bytes += (int64_t)len;
    return len;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)ultotal, (void)ulnow;
    struct http_job *j = arg;
    struct job_priv *p = j->priv;
    (void)dlnow;
    return p->over_cap; /* nonzero aborts the transfer */
}

/* ---------------------------------------------------------------- one attempt */

static void host_of(char out[256], const char *url)
{
    const char *s = strstr(url, "://");
    s = s ? s + 3 : url;
    size_t n = strcspn(s, "/?#");
    snprintf(out, 256, "%.*s", (int)n, s);
}

/* Request headers: the token (curl does not send it on to other hosts after a redirect) and
 * the Accept type. */
static void set_headers(struct job_priv *p, const struct http_options *o)
{
    curl_slist_free_all(p->hdrs);
    p->hdrs = NULL;
    if (o->token && *o->token) {
        char *h = xasprintf("Authorization: Bearer %s", o->token);
        p->hdrs = curl_slist_append(p->hdrs, h);
        free(h);
    }
    if (o->accept) {
        char *h = xasprintf("Accept: %s", o->accept);
        p->hdrs = curl_slist_append(p->hdrs, h);
        free(h);
    }
    if (p->hdrs)
        curl_easy_setopt(p->easy, CURLOPT_HTTPHEADER, p->hdrs);
}

static int start_attempt(CURLM *multi, struct http_job *j, const struct http_options *o)
{
    struct job_priv *p = j->priv;
    j->attempts++;
    j->bytes = 0;
    j->status = 0;
    buf_reset(&j->headers);
    p->body_started = 0;
    p->restart = 0;
    p->over_cap = 0;
    p->resume_from = 0;
    p->max_bytes = o->max_bytes;
    if (j->path) {
        struct stat st;
        if (fs_mkdirs_parent(j->path) < 0)
            return LSCAT_ERR;
        if (stat(p->part_path, &st) == 0 && st.st_size > 0)
            p->resume_from = st.st_size;
        p->fp = fopen(p->part_path, "ab");
        if (!p->fp)
            return lscat_error_set("cannot write '%s': %s", p->part_path, strerror(errno));
    } else {
        buf_reset(&j->body);
        j->body.cap_bytes = o->max_bytes > 0 ? (size_t)o->max_bytes : 0;
    }
    if (!p->easy && !(p->easy = curl_easy_init()))
        return lscat_error_set("curl: cannot create a transfer handle");
    CURL *e = p->easy;
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, j->url);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, o->max_redirects);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https,file");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_USERAGENT, "lscat/" "0.1 (+https://github.com/lscat)");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->connect_timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)(o->low_speed_time_s + 0.999));
    if (o->timeout_s > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(o->timeout_s * 1000));
    if (o->max_bytes > 0)
        curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_bytes);
    /* compressed transfer only for in-memory bodies (API answers): a file resumed with Range
     * must hold the server's identity bytes */
    if (!j->path)
        curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, j);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, j);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, j);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    /* a plain Range header, not CURLOPT_RESUME_FROM: curl fails a resume answered with 200
     * (CURLE_RANGE_ERROR), while on_body can take the whole body from zero instead */
    char range[32];
    snprintf(range, sizeof(range), "%lld-", (long long)p->resume_from);
    if (p->resume_from > 0)
        curl_easy_setopt(e, CURLOPT_RANGE, range);
    set_headers(p, o);
    curl_easy_setopt(e, CURLOPT_PRIVATE, j);
    if (curl_multi_add_handle(multi, e) != CURLM_OK)
        return lscat_error_set("curl: cannot add a transfer");
    p->active = 1;
    char att[16];
    snprintf(att, sizeof(att), "%d", j->attempts);
    log_event(LOG_DEBUG, "http_start", "url", j->url, "attempt", att, NULL);
    return 0;
}

static double backoff_s(const struct http_job *j, const struct http_options *o)
{
    double d = o->backoff_base_s;
    for (int i = 1; i < j->attempts && d < o->backoff_max_s; i++)
        d *= 2;
    if (d > o->backoff_max_s)
        d = o->backoff_max_s;
    return d * (0.5 + 0.5 * ((double)rand() / RAND_MAX)); /* jitter: 50..100% */
}

/* The server's own wait, from Retry-After or GitHub's x-ratelimit-* headers; -1 if none. */
static double server_wait_s(const struct http_job *j)
{
    char v[128];
    if (http_header(j, "retry-after", v, sizeof(v)))
        return http_parse_retry_after(v);
    if (http_header(j, "x-ratelimit-remaining", v, sizeof(v)) && atol(v) == 0 &&
        http_header(j, "x-ratelimit-reset", v, sizeof(v))) {
        double d = difftime((time_t)atoll(v), time(NULL)) + 1;
        return d < 1 ? 1 : d;
    }
    return -1;
}

static int transient_curl(CURLcode c)
{
    switch (c) {
    case CURLE_COULDNT_CONNECT: case CURLE_OPERATION_TIMEDOUT: case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR: case CURLE_PARTIAL_FILE: case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR: case CURLE_COULDNT_RESOLVE_HOST: case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: case CURLE_COULDNT_RESOLVE_PROXY: case CURLE_BAD_CONTENT_ENCODING:
        return 1;
    default:
        return 0;
    }
}

/* Decide what a finished attempt means. Returns the delay before a retry, or -1 when final. */
static double finish_attempt(struct http_job *j, CURLcode c, const struct http_options *o,
                             double now)
{
    struct job_priv *p = j->priv;
    long status = 0;
    curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
    j->status = status;
    if (p->fp) {
        if (fclose(p->fp) != 0 && c == CURLE_OK)
            c = CURLE_WRITE_ERROR;
        p->fp = NULL;
    }
    j->resumed = p->resume_from > 0 && status == 206;
    if (c == CURLE_OK && status == 200 && j->path && p->resume_from > 0 && !p->body_started &&
        truncate(p->part_path, 0) < 0) /* a whole body that is empty: the old bytes are not it */
        c = CURLE_WRITE_ERROR;
    if (c == CURLE_OK && (status == 0 || (status >= 200 && status < 300))) {
        /* an empty body too: an empty file is the caller's to judge, never a rename error */
        if (j->path && rename(p->part_path, j->path) < 0) {
            snprintf(j->error, sizeof(j->error), "cannot rename '%s': %s", p->part_path,
                     strerror(errno));
            j->outcome = HTTP_FAILED;
            return -1;
        }
        j->outcome = HTTP_OK;
        j->error[0] = 0;
        return -1;
    }
    struct stat st;
    if (j->path && stat(p->part_path, &st) == 0 && st.st_size == 0)
        unlink(p->part_path); /* nothing to resume from */
    if (j->path && p->resume_from > 0 &&
        ((c == CURLE_OK && status == 416) || p->restart || c == CURLE_RANGE_ERROR)) {
        /* our partial file is stale, or the server will not continue it: from zero, now */
        unlink(p->part_path);
        snprintf(j->error, sizeof(j->error), "%s on resume",
                 status == 416 ? "HTTP 416" : "the wrong range");
        return 0;
    }
    if (c == CURLE_FILE_COULDNT_READ_FILE ||
        (c == CURLE_OK && (status == 404 || status == 410 || status == 451))) {
        snprintf(j->error, sizeof(j->error), c == CURLE_OK ? "HTTP %ld" : "no such file",
                 status);
        j->outcome = HTTP_GONE;
        return -1;
    }
    double wait = -1;
    int retry = 0;
    if (c == CURLE_OK) {
        snprintf(j->error, sizeof(j->error), "HTTP %ld", status);
        wait = server_wait_s(j);
        retry = status >= 500 || status == 429 || status == 408 || (status == 403 && wait >= 0);
    } else if (p->over_cap || c == CURLE_FILESIZE_EXCEEDED) {
        snprintf(j->error, sizeof(j->error), "over the size cap (%lld bytes)",
                 (long long)p->max_bytes);
        j->over_cap = 1;
        if (j->path)
            unlink(p->part_path);
    } else {
        snprintf(j->error, sizeof(j->error), "%s", curl_easy_strerror(c));
        retry = transient_curl(c);
    }
    if (!retry) {
        j->outcome = HTTP_FAILED;
        return -1;
    }
    double delay = backoff_s(j, o);
    if (wait > delay)
        delay = wait;
    if (wait > o->max_wait_s || j->attempts >= o->max_attempts) {
        j->outcome = HTTP_RETRY_LATER;
        j->retry_after_s = wait > 0 ? wait : delay;
        return -1;
    }
    (void)now;
    return delay;
}

/* ---------------------------------------------------------------- the loop */

struct host {
    char name[256];
    int active;
};

struct loop {
    CURLM *multi;
    struct http_job *jobs;
    struct job_priv *privs;
    size_t n, left, cursor; /* jobs before cursor are all done */
    int active;
    int stop;               /* a negative on_done result */
    struct host *hosts;
    size_t nhosts, hosts_cap;
    const struct http_options *o;
};

static int host_index(struct loop *L, const char *url)
{
    char name[256];
    host_of(name, url);
    for (size_t i = 0; i < L->nhosts; i++)
        if (!strcmp(L->hosts[i].name, name))
            return (int)i;
    XGROW(L->hosts, L->nhosts + 1, L->hosts_cap);
    memcpy(L->hosts[L->nhosts].name, name, sizeof(name));
    L->hosts[L->nhosts].active = 0;
    return (int)L->nhosts++;
}

static int all_hosts_full(const struct loop *L)
{
    for (size_t i = 0; i < L->nhosts; i++)
        if (L->hosts[i].active < L->o->per_host)
            return 0;
    return 1;
}

/* Start the jobs that may start now; returns the time the next waiting job may start. */
static double start_ready(struct loop *L, double now)
{
    double next_wake = now + 1;
    while (L->cursor < L->n && L->privs[L->cursor].done)
        L->cursor++;
    for (size_t i = L->cursor; i < L->n && L->active < L->o->parallel; i++) {
        struct job_priv *p = &L->privs[i];
        if (p->active || p->done)
            continue;
        if (p->not_before > now) {
            if (p->not_before < next_wake)
                next_wake = p->not_before;
            continue;
        }
        if (L->hosts[p->host].active >= L->o->per_host) {
            if (all_hosts_full(L))
                break;
            continue;
        }
        if (start_attempt(L->multi, &L->jobs[i], L->o) < 0) {
            snprintf(L->jobs[i].error, sizeof(L->jobs[i].error), "%s", lscat_error_last());
            L->jobs[i].outcome = HTTP_FAILED;
            p->done = 1;
            L->left--;
            if (L->o->on_done && (L->stop = L->o->on_done(L->o->on_done_ctx, &L->jobs[i])) < 0)
                break;
            continue;
        }
        L->hosts[p->host].active++;
        L->active++;
    }
    return next_wake;
}

/* Handle finished transfers: final outcome, or back in the queue after a delay. */
static int collect_done(struct loop *L, double now)
{
    CURLMsg *m;
    int q, finished = 0;
    while ((m = curl_multi_info_read(L->multi, &q))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct http_job *j = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&j);
        CURLcode c = m->data.result;
        struct job_priv *p = j->priv;
        curl_multi_remove_handle(L->multi, m->easy_handle);
        p->active = 0;
        L->hosts[p->host].active--;
        L->active--;
        finished++;
        double delay = finish_attempt(j, c, L->o, now);
        if (delay >= 0) {
            p->not_before = fs_mono_s() + delay;
            log_event(LOG_INFO, "http_retry", "url", j->url, "error", j->error, NULL);
            continue;
        }
        p->done = 1;
        L->left--;
        curl_easy_cleanup(p->easy);
        p->easy = NULL;
        log_event(j->outcome == HTTP_OK ? LOG_DEBUG : LOG_INFO, "http_done", "url", j->url,
                  "outcome", j->outcome == HTTP_OK ? "ok" : j->error, NULL);
        if (L->o->on_done && (L->stop = L->o->on_done(L->o->on_done_ctx, j)) < 0)
            break;
    }
    return finished;
}

int http_run(struct http_job *jobs, size_t n, const struct http_options *o)
{
    struct loop L;
    memset(&L, 0, sizeof(L));
    L.multi = curl_multi_init();
    L.jobs = jobs;
    L.n = L.left = n;
    L.o = o;
    if (!L.multi)
        return lscat_error_set("curl: cannot create a multi handle");
    L.privs = xcalloc(n ? n : 1, sizeof(*L.privs));
    for (size_t i = 0; i < n; i++) {
        jobs[i].priv = &L.privs[i];
        jobs[i].outcome = HTTP_PENDING;
        jobs[i].attempts = 0;
        if (jobs[i].path)
            L.privs[i].part_path = xasprintf("%s.part", jobs[i].path);
        L.privs[i].host = host_index(&L, jobs[i].url);
    }
    while (L.left > 0 && L.stop >= 0) {
        double now = fs_mono_s();
        double next_wake = start_ready(&L, now);
        int running = 0;
        curl_multi_perform(L.multi, &running);
        int finished = collect_done(&L, now);
        if (L.left == 0 || L.stop < 0)
            break;
        if (finished)
            continue; /* slots opened: start the next jobs now */
        int wait_ms = L.active > 0 ? 100 : (int)((next_wake - fs_mono_s()) * 1000);
        wait_ms = wait_ms < 1 ? 1 : wait_ms > 1000 ? 1000 : wait_ms;
        curl_multi_poll(L.multi, NULL, 0, wait_ms, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        if (L.privs[i].active)
            curl_multi_remove_handle(L.multi, L.privs[i].easy);
        if (L.privs[i].fp)
            fclose(L.privs[i].fp);
        curl_easy_cleanup(L.privs[i].easy);
        curl_slist_free_all(L.privs[i].hdrs);
        free(L.privs[i].part_path);
        jobs[i].priv = NULL;
    }
    free(L.privs);
    free(L.hosts);
    curl_multi_cleanup(L.multi);
    return L.stop < 0 ? L.stop : 0;
}
