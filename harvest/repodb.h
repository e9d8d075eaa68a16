/* Harvest's rows in the store: candidate repositories (merged evidence, first/last seen,
 * event counts) and GH Archive hours. An hour's repositories and its gha_hours row are
 * written in one transaction, so a killed scan leaves either the whole hour or nothing. */
#ifndef LSCAT_HARVEST_REPODB_H
#define LSCAT_HARVEST_REPODB_H

#include "harvest/gha.h"

#include <stdint.h>

struct store;

/* Evidence for one repository, aggregated over the events of one hour (or one list line). */
struct repo_rec {
    char *full_name;
    int64_t github_id;
    unsigned kinds;
    char *language, *description;
    char first_seen[32], last_seen[32], pushed_at[32];
    int64_t events;
};

/* A small hash map of repo_rec by case-folded owner/name. */
struct repo_agg {
    struct repo_rec *recs;
    size_t n, cap;
    uint32_t *slots; /* index+1 into recs, 0 = empty */
    size_t nslots;
};

void repo_agg_init(struct repo_agg *a);
void repo_agg_release(struct repo_agg *a);
/* Merge one event's evidence (usable as a gha_evidence_fn with the agg as ctx). */
int repo_agg_add(void *agg, const struct gha_evidence *ev);

/* Is "owner/name" a safe GitHub repository name (letters, digits, '.', '_', '-'; neither
 * part "." or "..")? Names are used as folder names, so this guards the file system. */
int repodb_valid_name(const char *full_name);

/* Upsert every repository of `a` (source 'gharchive', 'import' or 'search'). Must run inside
 * a transaction the caller holds. Repositories with unsafe names are skipped and counted in
 * *skipped_out (may be NULL). */
int repodb_upsert_all(struct store *s, const struct repo_agg *a, const char *source,
                      int64_t *new_out, int64_t *skipped_out);

/* Record an hour. status: "done", "bad" or "missing". `stats` may be NULL. */
int repodb_hour_record(struct store *s, const char *hour, const char *status, const char *reason,
                       const char *source_url, const struct gha_scan_stats *stats, double scan_s,
                       int64_t run_id);

#endif
