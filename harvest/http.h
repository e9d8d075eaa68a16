/* Parallel HTTP downloads for harvest, over libcurl's multi interface: a cap on transfers in
 * flight and per host, retries with exponential backoff and jitter on 5xx, 429, resets and
 * timeouts, Retry-After and GitHub's rate-limit headers honoured, resume of partial downloads
 * with Range (files are written to PATH.part and renamed when complete), a redirect cap, a size
 * cap. file:// URLs work the same way (local mirrors, tests). Only this module calls curl.
 *
 *     struct http_job jobs[2] = { HTTP_JOB_INIT, HTTP_JOB_INIT };
 *     jobs[0].url = "https://..."; jobs[0].path = "work/x.zip";   // to a file
 *     jobs[1].url = "https://api..."; jobs[1].path = NULL;         // to jobs[1].body
 *     struct http_options o = HTTP_OPTIONS_INIT;
 *     http_run(jobs, 2, &o);
 *     ... jobs[i].outcome, .status, .error ...
 *     http_job_release(&jobs[i]);
 */
#ifndef LSCAT_HARVEST_HTTP_H
#define LSCAT_HARVEST_HTTP_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

enum http_outcome {
    HTTP_PENDING = 0,
    HTTP_OK,           /* 2xx (file complete under `path`, or body filled) */
    HTTP_GONE,         /* 404, 410, 451 or a missing file:// path: final, do not retry */
    HTTP_FAILED,       /* final failure: other 4xx, too many redirects, over the size cap */
    HTTP_RETRY_LATER,  /* transient failure and attempts used up, or a wait too long */
};

struct http_job;

struct http_options {
    int parallel;              /* transfers in flight (default 4) */
    int per_host;              /* transfers in flight per host (default 4) */
    int max_attempts;          /* tries per job in this call (default 5) */
    double backoff_base_s;     /* first retry delay, doubled each time, with jitter (0.5) */
    double backoff_max_s;      /* cap of one delay (30) */
    double max_wait_s;         /* longest Retry-After / rate-limit wait honoured now (120);
                                  longer: HTTP_RETRY_LATER with retry_after_s set */
    long max_redirects;        /* (5) */
    double connect_timeout_s;  /* (20) */
    double low_speed_time_s;   /* abort when under 1 byte/s for this long (30) */
    double timeout_s;          /* whole transfer, 0 = none (0) */
    int64_t max_bytes;         /* per download, 0 = none */
    const char *token;         /* sent as "Authorization: Bearer"; never logged */
    const char *accept;        /* Accept header, NULL = curl's default */
    /* Called (on the calling thread, between transfers) as soon as a job has its outcome, so
     * a caller can process results while the other downloads go on; NULL = none. A negative
     * return stops the run: http_run returns it, unfinished jobs stay HTTP_PENDING. */
    int (*on_done)(void *ctx, struct http_job *job);
    void *on_done_ctx;
};
#define HTTP_OPTIONS_INIT { .parallel = 4, .per_host = 4, .max_attempts = 5, \
    .backoff_base_s = 0.5, .backoff_max_s = 30, .max_wait_s = 120, .max_redirects = 5, \
    .connect_timeout_s = 20, .low_speed_time_s = 30, .timeout_s = 0, .max_bytes = 0, \
    .token = NULL, .accept = NULL, .on_done = NULL, .on_done_ctx = NULL }

struct http_job {
    const char *url;           /* borrowed */
    const char *path;          /* download to this file; NULL: into `body` */
    void *user;
    /* results */
    enum http_outcome outcome;
    long status;               /* last HTTP status (0 for file:// or no response) */
    int attempts;
    int resumed;               /* a Range request continued a partial file */
    int64_t bytes;             /* body bytes of the final response */
    double retry_after_s;      /* for HTTP_RETRY_LATER: when to try again (0 = unknown) */
    int over_cap;              /* HTTP_FAILED because the body passed max_bytes */
    char error[256];           /* human-readable, for non-OK outcomes */
    struct buf body;           /* when path == NULL */
    struct buf headers;        /* response headers of the last response (capped at 64 KiB) */
    /* private */
    void *priv;
};
#define HTTP_JOB_INIT { NULL, NULL, NULL, HTTP_PENDING, 0, 0, 0, 0, 0, 0, "", BUF_INIT, BUF_INIT, \
                        NULL }

/* Once per process, before threads start. */
int http_global_init(void);
void http_global_cleanup(void);

/* Run every job to an outcome. Returns 0 (outcomes are per job) or LSCAT_ERR when curl itself
 * could not be set up. Retries and waits happen inside the call. Jobs start in array order;
 * a curl handle exists only while a job is in flight, so n may be large (a whole night's
 * repositories): the queue never waits for a batch's slowest download. */
int http_run(struct http_job *jobs, size_t n, const struct http_options *o);
void http_job_release(struct http_job *j);

/* The value of response header `name` (case-insensitive) in job->headers, copied into out
 * (size out_size); returns 1 when found. */
int http_header(const struct http_job *j, const char *name, char *out, size_t out_size);

/* Parse a Retry-After value (seconds or an HTTP date) into seconds from now; -1 if invalid. */
double http_parse_retry_after(const char *value);

#endif
