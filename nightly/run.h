/* One night: the stages of the pipeline run as child processes (the other lscat programs, the
 * way cron would run them), each recorded with its outcome, wall time and counts; a stage that
 * fails does not stop the ones after it that can still run, and a stage this machine cannot run
 * (no libclang, no nvcc, no GPU) is left, with a note, to the kind of machine that can. */
#ifndef LSCAT_NIGHTLY_RUN_H
#define LSCAT_NIGHTLY_RUN_H

#include "common/buf.h"
#include "store/store.h"

enum nightly_stage {
    NIGHTLY_HARVEST, NIGHTLY_FETCH, NIGHTLY_ISOLATE, NIGHTLY_EXECUTE, NIGHTLY_TUNE,
    NIGHTLY_EXPORT, NIGHTLY_RELEASE, NIGHTLY_NSTAGES
};
#define NIGHTLY_ALL_STAGES ((1u << NIGHTLY_NSTAGES) - 1)

enum nightly_outcome {
    NIGHTLY_NOT_CHOSEN = 0, /* --stages/--skip left it out */
    NIGHTLY_OK,             /* ran (exit 0, or 1: item failures it recorded in the store) */
    NIGHTLY_FAILED,         /* ran and failed (exit 2 or more, a signal), or could not start */
    NIGHTLY_ELSEWHERE,      /* this machine cannot run it: left to another kind of machine */
    NIGHTLY_BLOCKED,        /* needs an earlier stage of this night, which failed */
};

struct nightly_stage_result {
    int outcome;       /* enum nightly_outcome */
    int exit_code;     /* of its last child; -1 when none ran */
    double wall_s;
    struct buf note;   /* one line for the summary ("" when nothing to say) */
    struct buf counts; /* JSON object: each child's stage_runs counts, by step */
};

struct nightly_options {
    const char *db_path, *work_dir;
    const char *releases_dir; /* NULL: <work>/releases */
    const char *shards_dir;   /* tune picks up these shard stores instead of measuring */
    unsigned stages;          /* one bit per enum nightly_stage */
    int keep;                 /* releases kept; 0 = all */
    int jobs;                 /* passed on as -j; 0 = the stages' default */
    /* harvest inputs (tests and mirrors; NULL = the stages' defaults) */
    const char *source, *from, *to, *archive_url, *git_url, *api_url;
    const char *refresh_age;  /* fetch --refresh-older-than */
};
#define NIGHTLY_OPTIONS_INIT { .db_path = NULL, .work_dir = NULL, .releases_dir = NULL, \
    .shards_dir = NULL, .stages = NIGHTLY_ALL_STAGES, .keep = 0, .jobs = 0, .source = NULL, \
    .from = NULL, .to = NULL, .archive_url = NULL, .git_url = NULL, .api_url = NULL, \
    .refresh_age = "12h" }

struct nightly_night {
    struct nightly_stage_result stages[NIGHTLY_NSTAGES];
    char *release; /* the release published tonight (its folder name), NULL when none */
};

/* "ok", "FAILED", "elsewhere", "blocked", "not chosen". */
const char *nightly_outcome_name(int outcome);
/* "harvest", ... */
const char *nightly_stage_name(int stage);
/* A comma-separated list of stage names to a mask. LSCAT_EINVALID names a bad word. */
int nightly_stages_parse(unsigned *out, const char *list);

/* Run the chosen stages in order on the store `s` (open; the children open it too). Never
 * stops early: *out holds every stage's result. Returns 0, or LSCAT_ERR when the night could not
 * be run at all (message set). Release *out with nightly_night_release() in both cases. */
int nightly_run(struct nightly_night *out, struct store *s, const struct nightly_options *o);
void nightly_night_release(struct nightly_night *n);

#endif
