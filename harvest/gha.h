/* GH Archive: hour names, source templates, and the scan of one hour's events for CUDA
 * evidence. The scan is built for speed: the inflated bytes are searched for "cuda" in any
 * case (SSE2, 16 bytes at a time) and only the lines that contain it are parsed as JSON.
 * Every selection rule below needs the word in the line, so the pre-filter loses nothing.
 *
 * Selection rule: an event gives evidence for a repository when
 *   - a language field of that repository is "Cuda" (any case): pre-2015 repository.language
 *     (kind "language"), payload.pull_request.base.repo.language ("pr_base_language"),
 *     payload.pull_request.head.repo.language ("pr_head_language"), payload.forkee.language
 *     ("forkee_language"), payload.repository.language ("payload_repo_language");
 *   - its owner/name contains "cuda" in any case ("name_keyword");
 *   - its description contains "cuda" in any case ("description_keyword": repository,
 *     pull-request repos, forkee, payload.repository, and CreateEvent's payload.description). */
#ifndef LSCAT_HARVEST_GHA_H
#define LSCAT_HARVEST_GHA_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Evidence kinds (bit flags). */
enum {
    GHA_EV_LANGUAGE = 1 << 0,
    GHA_EV_PR_BASE_LANGUAGE = 1 << 1,
    GHA_EV_PR_HEAD_LANGUAGE = 1 << 2,
    GHA_EV_FORKEE_LANGUAGE = 1 << 3,
    GHA_EV_PAYLOAD_REPO_LANGUAGE = 1 << 4,
    GHA_EV_NAME_KEYWORD = 1 << 5,
    GHA_EV_DESCRIPTION_KEYWORD = 1 << 6,
    GHA_EV_IMPORTED = 1 << 7,   /* from `harvest import` */
    GHA_EV_SEARCH_LANGUAGE = 1 << 8, /* from `harvest search` */
    GHA_EV_COUNT = 9,
};

/* Name of one kind ("pr_base_language"), or NULL. */
const char *gha_evidence_name(unsigned kind_bit);
/* Comma-separated names of the set bits, in bit order (appended to `out`, a struct buf). */
struct buf;
void gha_evidence_format(struct buf *out, unsigned kinds);
/* Parse a comma-separated list back (unknown names ignored). */
unsigned gha_evidence_parse(const char *s);

/* One repository seen with evidence in one event. Strings are borrowed for the callback. */
struct gha_evidence {
    const char *full_name;   /* "owner/name" */
    int64_t github_id;       /* 0 when unknown */
    unsigned kinds;
    const char *language;    /* NULL when the event did not say */
    const char *description; /* NULL when the event did not say */
    const char *created_at;  /* the event's time, "YYYY-MM-DDTHH:MM:SSZ", or NULL */
    const char *pushed_at;   /* NULL when unknown */
};
typedef int (*gha_evidence_fn)(void *ctx, const struct gha_evidence *ev);

struct gha_scan_stats {
    uint64_t bytes_compressed, bytes_raw;
    uint64_t events;     /* lines that are not blank */
    uint64_t parsed;     /* candidate lines parsed as JSON */
    uint64_t bad_lines;  /* candidate lines that were not a JSON object, or over the size cap */
    uint64_t candidates; /* events with evidence for at least one repository */
};

enum { GHA_LINE_CAP_BYTES = 4 << 20 };

/* Scan one hour read from `fd` (gzip or plain JSON lines; `mode` as inflate_stream_new).
 * Calls `fn` for each repository with evidence in each event (a nonzero return stops the scan
 * and is returned). Returns 0, or LSCAT_EINVALID when the hour itself is bad (corrupt or
 * truncated gzip, not gzip, empty) with the reason in the error slot; stats are filled in
 * either case. Memory is constant: one 8 MiB window, lines over the cap are counted bad. */
int gha_scan_fd(struct gha_scan_stats *out, int fd, int mode, gha_evidence_fn fn, void *ctx);

/* Parse one event line (no newline) and report its evidence. Returns 0 (also when it has no
 * evidence), LSCAT_EINVALID when the line is not a JSON object. *n_out counts repositories. */
int gha_scan_line(const char *line, size_t len, gha_evidence_fn fn, void *ctx, int *n_out);

/* Does [p, p+len) contain "cuda" in any case? (the pre-filter, exposed for tests) */
int gha_has_cuda(const char *p, size_t len);

/* Hours: an hour is a time_t at a whole UTC hour. Parse "YYYY-MM-DDTHH", "YYYY-MM-DDTHH:MM..."
 * or "YYYY-MM-DD" (hour `default_hour`). */
int gha_hour_parse(time_t *out, const char *s, int default_hour);
/* "YYYY-MM-DDTHH" */
void gha_hour_format(char out[16], time_t hour);
/* Expand a source template for one hour: {YYYY} {MM} {DD} {H} (no leading zero) {HH}.
 * A template without '{' names a folder (or file:// folder): "/YYYY-MM-DD-H.json.gz" is
 * appended. Caller frees. */
char *gha_source_expand(const char *tmpl, time_t hour);

/* Check a source template before any hour is recorded: every '{' opens one of the
 * placeholders above, and a local source (a path or file://) names a folder that exists (the
 * folder itself, or the one holding the first placeholder). 0, or LSCAT_EINVALID with a
 * message saying what is wrong. */
int gha_source_check(const char *tmpl);

#define GHA_DEFAULT_SOURCE "https://data.gharchive.org/{YYYY}-{MM}-{DD}-{H}.json.gz"

#endif
