/* `harvest scan`: the GH Archive hours of a range, fetched (HTTP, file://, or a local path),
 * scanned in parallel worker threads, each hour written in one transaction with its
 * repositories. Hours already recorded (done, bad, missing) are skipped unless retried. */
#ifndef LSCAT_HARVEST_SCAN_H
#define LSCAT_HARVEST_SCAN_H

#include "harvest/http.h"

#include <stdint.h>
#include <time.h>

struct store;

struct scan_options {
    const char *source;     /* template (gha.h); NULL = GHA_DEFAULT_SOURCE */
    time_t from, to;        /* whole hours, inclusive */
    int jobs;               /* hours in parallel */
    int retry_bad;          /* rescan hours recorded bad or missing */
    time_t retry_missing_from; /* also rescan 'missing' hours from this hour on (0 = none):
                                  the nightly mode retries hours GH Archive published late */
    int keep_downloads;     /* keep downloaded hours under <work>/gharchive/ */
    const char *work_dir;
    int64_t run_id;
    struct http_options http;
};
#define SCAN_OPTIONS_INIT { .source = NULL, .from = 0, .to = 0, .jobs = 1, .retry_bad = 0, \
    .retry_missing_from = 0, .keep_downloads = 0, .work_dir = NULL, .run_id = 0, \
    .http = HTTP_OPTIONS_INIT }

struct scan_counts {
    int64_t hours_total, hours_skipped, hours_done, hours_bad, hours_missing, hours_failed;
    int64_t events, bad_lines, candidates, repos_new;
    uint64_t bytes_compressed, bytes_raw;
};

/* Scan the range. Returns 0 (per-hour problems are recorded and counted) or a negative code
 * when the store failed. */
int scan_run(struct scan_counts *out, struct store *s, const struct scan_options *o);

/* The hour after the last 'done' hour in the store, or LSCAT_ENOTFOUND when none. When an
 * hour recorded 'missing' at or after `recent_from` is earlier, that hour instead. */
int scan_next_after_last(time_t *out, struct store *s, time_t recent_from);

#endif
