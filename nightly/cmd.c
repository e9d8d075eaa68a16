/* lscat-nightly: the whole regeneration as one command, for cron or a systemd timer. Thin:
 * parse options, take the store's nightly lock, run the night (run.c), print the summary
 * (summary.c), record it, and turn it into an exit status. */
#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "nightly/lock.h"
#include "nightly/run.h"
#include "nightly/summary.h"
#include "store/stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit status when another nightly holds the store's lock: nothing was done. */
enum { NIGHTLY_EXIT_LOCKED = 4 };

static const char usage[] =
    "lscat nightly [--stages LIST | --skip LIST] [--releases DIR] [--keep N] [--shards DIR] "
    "[--summary-json FILE]";

enum {
    O_STAGES = 1, O_SKIP, O_RELEASES, O_KEEP, O_SHARDS, O_SUMMARY, O_FROM, O_TO, O_SOURCE,
    O_ARCHIVE, O_GIT, O_API, O_REFRESH,
};

static const struct cli_opt opts[] = {
    { "stages", 0, "LIST", "run only these stages, comma-separated, in pipeline order", O_STAGES },
    { "skip", 0, "LIST", "run every stage but these", O_SKIP },
    { "releases", 0, "DIR", "the releases folder (default <work>/releases)", O_RELEASES },
    { "keep", 0, "N", "keep the N newest releases, remove older ones (default 0: keep all)",
      O_KEEP },
    { "shards", 0, "DIR", "tune: merge the shard stores DIR/*.db of an MPI/Slurm run (lscat "
                          "dataset merge) instead of measuring here", O_SHARDS },
    { "summary-json", 0, "FILE", "also write the summary as one JSON object to FILE", O_SUMMARY },
    { "from", 0, "HOUR", "harvest: scan GH Archive from HOUR (first night; default: the hour "
                         "after the last one scanned)", O_FROM },
    { "to", 0, "HOUR", "harvest: last hour to scan (default: two hours ago)", O_TO },
    { "source", 0, "TEMPLATE", "harvest: where GH Archive hours come from (see lscat harvest "
                               "--help)", O_SOURCE },
    { "archive-url", 0, "TEMPLATE", "fetch: zip URL template (see lscat harvest --help)", O_ARCHIVE },
    { "git-url", 0, "TEMPLATE", "fetch: clone URL template", O_GIT },
    { "api-url", 0, "URL", "harvest: GitHub API root for the search step (it runs when this or "
                           "GITHUB_TOKEN is set)", O_API },
    { "refresh-older-than", 0, "AGE", "fetch: re-fetch repositories pushed since their fetch "
                                      "when it is older than AGE (default 12h)", O_REFRESH },
    CLI_OPT_END,
};

struct args {
    struct nightly_options o;
    const char *stages, *skip, *summary_json;
};

static int on_opt(void *ctx, int id, const char *arg)
{
    struct args *a = ctx;
    long keep;
    switch (id) {
    case O_STAGES: a->stages = arg; return 0;
    case O_SKIP: a->skip = arg; return 0;
    case O_RELEASES: a->o.releases_dir = arg; return 0;
    case O_KEEP:
        if (cli_parse_int(&keep, "--keep", arg, 0, 100000) < 0)
            return LSCAT_EINVALID;
        a->o.keep = (int)keep;
        return 0;
    case O_SHARDS: a->o.shards_dir = arg; return 0;
    case O_SUMMARY: a->summary_json = arg; return 0;
    case O_FROM: a->o.from = arg; return 0;
    case O_TO: a->o.to = arg; return 0;
    case O_SOURCE: a->o.source = arg; return 0;
    case O_ARCHIVE: a->o.archive_url = arg; return 0;
    case O_GIT: a->o.git_url = arg; return 0;
    case O_API: a->o.api_url = arg; return 0;
    case O_REFRESH: a->o.refresh_age = arg; return 0;
    }
    return 0;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "Run the pipeline incrementally and publish a dated release, as one command for cron\n"
           "or a systemd timer (docs/nightly.md). Stages, in order, each the lscat program that\n"
           "does it, run as a child process:\n"
           "  harvest  harvest scan --since-last (GH Archive), and harvest search for the last\n"
           "           days' pushes when GITHUB_TOKEN (or --api-url) is set\n"
           "  fetch    harvest fetch: new repositories, and those pushed since their fetch\n"
           "  isolate  isolate (needs libclang)\n"
           "  execute  execute: builds and repairs (nvcc); probes need a GPU\n"
           "  tune     tune on the GPUs present, or with --shards, dataset merge of the shard\n"
           "           stores (*.db) an MPI/Slurm run wrote\n"
           "  export   dataset export (Parquet, CSV) and report into <work>/nightly/export\n"
           "  release  <releases>/YYYY-MM-DD/ (a second one the same day: YYYY-MM-DD.2, .3, ...):\n"
           "           the dumps, README.md (data card), columns.md, report/, CHANGES.md,\n"
           "           CITATION.cff, release.json, index.html, SHA256SUMS; written to a temporary\n"
           "           folder and renamed; <releases>/latest switched atomically; --keep\n"
           "           pruning; <releases>/index.html and index.json rewritten\n"
           "A stage that fails is recorded and the stages after it that can still run do; a\n"
           "stage this machine cannot run (no lscat-isolate, no nvcc, no GPU) is left, with a\n"
           "note, to a machine that can. One nightly per store at a time: <store>.nightly.lock\n"
           "(released by the kernel when its holder dies; a night that took over after a\n"
           "crash says so). The summary goes to stdout.\n\n"
           "Options:\n",
           usage);
    cli_print_options(stdout, opts);
    cli_print_common_help(stdout);
    printf("  (nightly: 0 every chosen stage ran or was left to another machine, item failures\n"
           "   the stages recorded included; 1 a stage failed or could not run: see the summary;\n"
           "   3 nothing could be run (store, lock file); 4 another nightly holds this store's\n"
           "   lock: this run did nothing)\n");
}

/* Pass our global settings on to the children (they read the same variables as lscat's). */
static void export_globals(const struct cli *cli)
{
    char v[16];
    snprintf(v, sizeof(v), "%d", cli->jobs);
    setenv("LSCAT_JOBS", v, 1);
    snprintf(v, sizeof(v), "%d", cli->verbosity);
    setenv("LSCAT_VERBOSITY", v, 1);
    setenv("LSCAT_LOG_FORMAT", cli->log_json ? "json" : "text", 1);
}

static int check_args(struct args *a, const struct cli *cli)
{
    unsigned mask;
    if (cli->nargs > 0)
        return lscat_error_setc(LSCAT_EINVALID, "unexpected argument '%s'", cli->args[0]);
    if (a->stages && a->skip)
        return lscat_error_setc(LSCAT_EINVALID, "--stages and --skip exclude each other");
    if (a->stages && nightly_stages_parse(&a->o.stages, a->stages) < 0)
        return LSCAT_EINVALID;
    if (a->skip) {
        if (nightly_stages_parse(&mask, a->skip) < 0)
            return LSCAT_EINVALID;
        a->o.stages = NIGHTLY_ALL_STAGES & ~mask;
    }
    return 0;
}

static int exit_code(const struct nightly_night *n)
{
    for (int i = 0; i < NIGHTLY_NSTAGES; i++)
        if (n->stages[i].outcome == NIGHTLY_FAILED || n->stages[i].outcome == NIGHTLY_BLOCKED)
            return LSCAT_EXIT_FAILURES;
    return LSCAT_EXIT_OK;
}

/* The night itself, under the lock, with the store open. */
static int night(struct stage *st, struct args *a, struct buf *json)
{
    struct nightly_night n;
    struct nightly_summary sum = { .night = &n, .db_path = a->o.db_path };
    struct buf text = BUF_INIT;
    char *rel = a->o.releases_dir ? xstrdup(a->o.releases_dir) : fs_join(a->o.work_dir, "releases");
    sum.releases_dir = rel;
    fs_utc_now(sum.started_at);
    if (nightly_counts_take(&sum.before, st->store) < 0) {
        free(rel);
        return LSCAT_EXIT_FATAL;
    }
    nightly_run(&n, st->store, &a->o);
    int code = exit_code(&n);
    fs_utc_now(sum.ended_at);
    sum.exit_code = code;
    if (nightly_counts_take(&sum.after, st->store) < 0)
        sum.after = sum.before;
    nightly_summary_text(&text, &sum, st->store);
    fputs(text.data, stdout);
    fflush(stdout);
    nightly_summary_json(json, &sum, st->store);
    buf_addch(json, '\n');
    if (a->summary_json && fs_write_atomic(a->summary_json, json->data, json->len) < 0) {
        log_error("nightly: %s", lscat_error_last());
        code = LSCAT_EXIT_FAILURES;
    }
    nightly_night_release(&n);
    buf_release(&text);
    free(rel);
    return code;
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct args a = { .o = NIGHTLY_OPTIONS_INIT, .stages = NULL, .skip = NULL,
                      .summary_json = NULL };
    struct nightly_lock lock = NIGHTLY_LOCK_INIT;
    struct stage st = STAGE_INIT;
    struct buf json = BUF_INIT;
    int code = LSCAT_EXIT_OK;
    int rc = cli_parse(&cli, "lscat-nightly", argc, argv, opts, on_opt, &a);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc < 0 || check_args(&a, &cli) < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    a.o.db_path = cli.db_path;
    a.o.work_dir = cli.work_dir;
    export_globals(&cli);
    if ((rc = nightly_lock_acquire(&lock, cli.db_path)) < 0) {
        fprintf(stderr, "lscat-nightly: %s\n", lscat_error_last());
        code = rc == LSCAT_EBUSY ? NIGHTLY_EXIT_LOCKED : LSCAT_EXIT_FATAL;
        goto done;
    }
    if (stage_begin(&st, &cli, "nightly", STAGE_CREATE, argc, argv) < 0)
        code = cli_fatal(&cli);
    else
        code = night(&st, &a, &json);
    buf_rtrim(&json);
done:
    stage_end(&st, code, json.len ? json.data : NULL);
    nightly_lock_release(&lock);
    buf_release(&json);
    cli_release(&cli);
    return code;
}
