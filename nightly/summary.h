/* The night's summary: what the store holds before and after, and the one screen (or JSON
 * object, --summary-json) that cron mails and monitoring reads: new hours, repositories,
 * kernels, builds, measurements, failures by class, and each stage's outcome and wall time. */
#ifndef LSCAT_NIGHTLY_SUMMARY_H
#define LSCAT_NIGHTLY_SUMMARY_H

#include "common/buf.h"
#include "nightly/run.h"
#include "store/store.h"

#include <stdint.h>

struct nightly_counts {
    int64_t hours;          /* GH Archive hours done */
    int64_t repos, repos_fetched, repos_gone;
    int64_t kernels, builds_ok, builds_failed;
    int64_t measurements;   /* current rows */
    int64_t gpus;
    int64_t failures_last_id;
};

/* Count what the store holds now. Returns 0 or a negative code (message set). */
int nightly_counts_take(struct nightly_counts *out, struct store *s);

struct nightly_summary {
    const struct nightly_night *night;
    struct nightly_counts before, after;
    const char *db_path, *releases_dir;
    char started_at[32], ended_at[32];
    int exit_code;
};

/* The one-screen text (for stdout) and the JSON object (for --summary-json and the nightly's
 * stage_runs row). Failures by class are read from the store (rows added tonight). */
void nightly_summary_text(struct buf *out, const struct nightly_summary *sum, struct store *s);
void nightly_summary_json(struct buf *out, const struct nightly_summary *sum, struct store *s);

#endif
