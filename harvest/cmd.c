/* lscat-harvest: find CUDA repositories (GH Archive scan, list import, GitHub search) and
 * download their C/C++/CUDA sources. Thin: parse options, open the store, call the library,
 * record the run, turn the result into an exit code. Also the internal clone worker
 * (`--git-clone-worker`) that fetch runs in a child process with a deadline. */
#include "harvest/fetch.h"
#include "harvest/gha.h"
#include "harvest/gitclone.h"
#include "harvest/http.h"
#include "harvest/import.h"
#include "harvest/inflate.h"
#include "harvest/scan.h"
#include "harvest/search.h"

#include "common/buf.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/log.h"
#include "store/stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "lscat harvest scan|import|search|fetch [options] (see --help)";

enum {
    O_FROM = 1, O_TO, O_SINCE_LAST, O_SOURCE, O_RETRY_BAD, O_KEEP, O_LANGUAGE, O_PUSHED_SINCE,
    O_API_URL, O_ARCHIVE_URL, O_GIT_URL, O_METHOD, O_REFRESH, O_LIMIT, O_REPO, O_PER_HOST,
    O_ATTEMPTS, O_MAX_WAIT, O_TIMEOUT, O_BACKOFF, O_PUSHED_UNTIL, O_MAX_ARCHIVE, O_GIT_TIMEOUT,
};

enum { SUB_SCAN = 1, SUB_IMPORT, SUB_SEARCH, SUB_FETCH };

static const struct cli_opt opts[] = {
    { "from", 0, "HOUR", "scan: first hour, YYYY-MM-DDTHH or YYYY-MM-DD (UTC)", O_FROM },
    { "to", 0, "HOUR", "scan: last hour, inclusive (default: --from's hour, or its day's last)", O_TO },
    { "since-last", 0, NULL, "scan: from the hour after the last done one to two hours ago (or --to); "
      "retries hours of the last 48 h recorded missing",
      O_SINCE_LAST },
    { "source", 0, "TEMPLATE", "scan: where hours come from (URL, file://, or folder)",
      O_SOURCE },
    { "retry-bad", 0, NULL, "scan: rescan hours recorded bad or missing", O_RETRY_BAD },
    { "keep-downloads", 0, NULL, "scan: keep downloaded hours in <work>/gharchive/", O_KEEP },
    { "language", 0, "LANG", "search: repository language (default Cuda)", O_LANGUAGE },
    { "pushed-since", 0, "DATE", "search: repositories pushed on or after DATE", O_PUSHED_SINCE },
    { "pushed-until", 0, "DATE", "search: ... and on or before DATE (default today)",
      O_PUSHED_UNTIL },
    { "api-url", 0, "URL", "search: GitHub API root (default https://api.github.com)", O_API_URL },
    { "archive-url", 0, "TEMPLATE", "fetch: zip URL, {owner} {name} (default codeload HEAD)",
      O_ARCHIVE_URL },
    { "git-url", 0, "TEMPLATE", "fetch: clone URL (default https://github.com/{owner}/{name}.git)",
      O_GIT_URL },
    { "method", 0, "M", "fetch: zip (fall back to git), zip-only, or git", O_METHOD },
    { "refresh-older-than", 0, "AGE", "fetch: also re-fetch repos fetched over AGE ago (30d, 12h)"
      " and pushed since", O_REFRESH },
    { "limit", 0, "N", "fetch: at most N repositories this run", O_LIMIT },
    { "repo", 0, "OWNER/NAME", "fetch: only this repository (repeatable)", O_REPO },
    { "max-archive-mb", 0, "MB", "fetch: refuse archives and clones over MB (default 2048)",
      O_MAX_ARCHIVE },
    { "git-timeout", 0, "SECONDS", "fetch: kill a clone not done after this long (default 600)",
      O_GIT_TIMEOUT },
    { "per-host", 0, "N", "HTTP transfers in flight per host (default 4)", O_PER_HOST },
    { "attempts", 0, "N", "HTTP tries per download in one run (default 5)", O_ATTEMPTS },
    { "max-wait", 0, "SECONDS", "longest server-asked wait honoured in-run (default 120)",
      O_MAX_WAIT },
    { "timeout", 0, "SECONDS", "abort a transfer slower than 1 B/s for this long (default 30)",
      O_TIMEOUT },
    { "backoff", 0, "SECONDS", "first retry delay, doubled per try, with jitter (default 0.5)",
      O_BACKOFF },
    CLI_OPT_END,
};

struct args {
    const char *from, *to, *source, *language, *pushed_since, *pushed_until, *api_url;
    const char *archive_url, *git_url, *method, *refresh;
    const char *repos[64];
    int nrepos, since_last, retry_bad, keep, per_host, attempts;
    long limit;
    double max_wait, timeout, backoff, max_archive_mb, git_timeout;
    int given[32];
};

static int on_opt(void *ctx, int id, const char *arg)
{
    struct args *a = ctx;
    long n;
    a->given[id] = 1;
    switch (id) {
    case O_FROM: a->from = arg; break;
    case O_TO: a->to = arg; break;
    case O_SINCE_LAST: a->since_last = 1; break;
    case O_SOURCE: a->source = arg; break;
    case O_RETRY_BAD: a->retry_bad = 1; break;
    case O_KEEP: a->keep = 1; break;
    case O_LANGUAGE: a->language = arg; break;
    case O_PUSHED_SINCE: a->pushed_since = arg; break;
    case O_PUSHED_UNTIL: a->pushed_until = arg; break;
    case O_API_URL: a->api_url = arg; break;
    case O_ARCHIVE_URL: a->archive_url = arg; break;
    case O_GIT_URL: a->git_url = arg; break;
    case O_METHOD:
        if (strcmp(arg, "zip") && strcmp(arg, "git") && strcmp(arg, "zip-only"))
            return lscat_error_setc(LSCAT_EINVALID, "--method: '%s' is not zip, zip-only or git",
                                    arg);
        a->method = arg;
        break;
    case O_REFRESH: a->refresh = arg; break;
    case O_LIMIT:
        if (cli_parse_int(&a->limit, "--limit", arg, 1, 1L << 40) < 0)
            return LSCAT_EINVALID;
        break;
    case O_REPO:
        if (a->nrepos == 64)
            return lscat_error_setc(LSCAT_EINVALID, "--repo: at most 64");
        a->repos[a->nrepos++] = arg;
        break;
    case O_PER_HOST:
        if (cli_parse_int(&n, "--per-host", arg, 1, 64) < 0)
            return LSCAT_EINVALID;
        a->per_host = (int)n;
        break;
    case O_ATTEMPTS:
        if (cli_parse_int(&n, "--attempts", arg, 1, 100) < 0)
            return LSCAT_EINVALID;
        a->attempts = (int)n;
        break;
    case O_MAX_WAIT: return cli_parse_double(&a->max_wait, "--max-wait", arg, 0, 86400);
    case O_TIMEOUT: return cli_parse_double(&a->timeout, "--timeout", arg, 1, 86400);
    case O_BACKOFF: return cli_parse_double(&a->backoff, "--backoff", arg, 0, 3600);
    case O_MAX_ARCHIVE:
        return cli_parse_double(&a->max_archive_mb, "--max-archive-mb", arg, 0.001, 1e7);
    case O_GIT_TIMEOUT:
        return cli_parse_double(&a->git_timeout, "--git-timeout", arg, 0, 7 * 86400);
    }
    return 0;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "Find CUDA repositories and download their C/C++/CUDA sources.\n\n"
           "Subcommands:\n"
           "  scan     scan GH Archive hours (--from/--to, or --since-last) for CUDA evidence.\n"
           "           Source default: %s\n"
           "           ({H} is the hour without leading zero; a template without '{' is a\n"
           "           folder holding YYYY-MM-DD-H.json.gz files). Hours recorded done are\n"
           "           never scanned again; bad/missing ones only with --retry-bad.\n"
           "  import FILE  add repositories from a list: a BigQuery CSV export, or one\n"
           "           owner/name or GitHub URL per line ('-' = stdin; header and duplicates ok)\n"
           "  search   GitHub search API (--language Cuda --pushed-since DATE), sliced by date\n"
           "           so each query stays under the API's 1,000-result cap; GITHUB_TOKEN is\n"
           "           used when set and never logged or stored\n"
           "  fetch    download every pending repository (default-branch zip over HTTP, git\n"
           "           clone fallback), keep only C/C++/CUDA sources and headers and build\n"
           "           files, stored by content hash under <work>/blobs and as a tree under\n"
           "           <work>/trees/OWNER/NAME. 404/410/451 are final ('gone'); other failures\n"
           "           are retried on later runs with backoff (repos.next_attempt_at). Each\n"
           "           clone runs in a child process killed after --git-timeout seconds\n\n"
           "Selection rule (scan): an event is evidence for a repository when a language\n"
           "field of that repository is Cuda or its owner/name or description contains 'cuda'\n"
           "(any case). Evidence kinds recorded in repos.evidence:\n"
           "  language               pre-2015 repository.language\n"
           "  pr_base_language       payload.pull_request.base.repo.language\n"
           "  pr_head_language       payload.pull_request.head.repo.language\n"
           "  forkee_language        payload.forkee.language\n"
           "  payload_repo_language  payload.repository.language\n"
           "  name_keyword           'cuda' in owner/name (repo.name, any repo object)\n"
           "  description_keyword    'cuda' in a description (repository, pull-request repos,\n"
           "                         forkee, CreateEvent payload.description)\n"
           "  imported, search_language   from import / search\n"
           "Only lines containing 'cuda' (any case) are parsed as JSON; every rule needs it.\n"
           "Bad lines (not JSON, over 4 MiB) are counted and skipped; a corrupt, truncated or\n"
           "non-gzip hour is recorded 'bad' with the reason, and the scan goes on.\n\n"
           "Options:\n",
           usage, GHA_DEFAULT_SOURCE);
    cli_print_options(stdout, opts);
    cli_print_common_help(stdout);
    printf("  (exit 1: some hours or repositories could not be downloaded now, will be retried\n"
           "   on a later run, or a list had bad lines)\n"
           "Environment: GITHUB_TOKEN (search and fetch; never logged or stored).\n"
           "Inflate backend: %s.\n", inflate_backend());
}

static void http_opts(struct http_options *h, const struct args *a, const struct cli *cli)
{
    *h = (struct http_options)HTTP_OPTIONS_INIT;
    h->parallel = cli->jobs;
    if (a->per_host)
        h->per_host = a->per_host;
    if (a->attempts)
        h->max_attempts = a->attempts;
    if (a->given[O_MAX_WAIT])
        h->max_wait_s = a->max_wait;
    if (a->given[O_TIMEOUT])
        h->low_speed_time_s = a->timeout;
    if (a->given[O_BACKOFF])
        h->backoff_base_s = a->backoff;
    const char *tok = getenv("GITHUB_TOKEN");
    h->token = tok && *tok ? tok : NULL;
}

static int cmd_scan(struct buf *counts, struct store *s, const struct args *a,
                    const struct cli *cli, int64_t run_id)
{
    struct scan_options o = SCAN_OPTIONS_INIT;
    struct scan_counts k;
    http_opts(&o.http, a, cli);
    o.http.parallel = 1;
    o.source = a->source;
    o.jobs = cli->jobs;
    o.retry_bad = a->retry_bad;
    o.keep_downloads = a->keep;
    o.work_dir = cli->work_dir;
    o.run_id = run_id;
    if (a->since_last) {
        /* hours that were not published yet in the last two days are tried again */
        o.retry_missing_from = (time(NULL) / 3600 - 48) * 3600;
        if (scan_next_after_last(&o.from, s, o.retry_missing_from) < 0)
            return LSCAT_EINVALID;
        o.to = (time(NULL) / 3600 - 2) * 3600;
        if (a->to && gha_hour_parse(&o.to, a->to, 23) < 0)
            return LSCAT_EINVALID;
        if (o.to < o.from) {
            log_info("scan: nothing to do (the last done hour is the newest one asked for)");
            return 0;
        }
    } else {
        if (gha_hour_parse(&o.from, a->from, 0) < 0)
            return LSCAT_EINVALID;
        if (gha_hour_parse(&o.to, a->to ? a->to : a->from, 23) < 0)
            return LSCAT_EINVALID;
        if (o.to < o.from)
            return lscat_error_setc(LSCAT_EINVALID, "--to is before --from");
    }
    int rc = scan_run(&k, s, &o);
    buf_addf(counts,
             "{\"hours\":%lld,\"skipped\":%lld,\"done\":%lld,\"bad\":%lld,\"missing\":%lld,"
             "\"failed\":%lld,\"events\":%lld,\"bad_lines\":%lld,\"candidates\":%lld,"
             "\"repos_new\":%lld,\"bytes_compressed\":%llu,\"bytes_raw\":%llu}",
             (long long)k.hours_total, (long long)k.hours_skipped, (long long)k.hours_done,
             (long long)k.hours_bad, (long long)k.hours_missing, (long long)k.hours_failed,
             (long long)k.events, (long long)k.bad_lines, (long long)k.candidates,
             (long long)k.repos_new, (unsigned long long)k.bytes_compressed,
             (unsigned long long)k.bytes_raw);
    if (rc < 0)
        return rc;
    log_info("scan: %lld hours (%lld done, %lld bad, %lld missing, %lld failed, %lld skipped), "
             "%lld events (%lld bad lines), %lld with evidence, %lld new repositories",
             (long long)k.hours_total, (long long)k.hours_done, (long long)k.hours_bad,
             (long long)k.hours_missing, (long long)k.hours_failed, (long long)k.hours_skipped,
             (long long)k.events, (long long)k.bad_lines, (long long)k.candidates,
             (long long)k.repos_new);
    return k.hours_failed > 0 ? 1 : 0;
}

static int cmd_import(struct buf *counts, struct store *s, const char *file)
{
    struct import_counts k;
    int rc = import_file(&k, s, file);
    buf_addf(counts,
             "{\"lines\":%lld,\"repos\":%lld,\"new\":%lld,\"duplicates\":%lld,\"header\":%lld,"
             "\"bad_lines\":%lld}",
             (long long)k.lines, (long long)k.repos, (long long)k.new_repos,
             (long long)k.duplicates, (long long)k.header_lines, (long long)k.bad_lines);
    if (rc < 0)
        return rc;
    log_info("import: %lld lines, %lld repositories (%lld new), %lld duplicates, %lld bad lines",
             (long long)k.lines, (long long)k.repos, (long long)k.new_repos,
             (long long)k.duplicates, (long long)k.bad_lines);
    return k.bad_lines > 0 ? 1 : 0;
}

static int cmd_search(struct buf *counts, struct store *s, const struct args *a,
                      const struct cli *cli, int64_t run_id)
{
    struct search_options o = SEARCH_OPTIONS_INIT;
    struct search_counts k;
    http_opts(&o.http, a, cli);
    o.http.parallel = 1;
    o.language = a->language ? a->language : "Cuda";
    o.api_url = a->api_url ? a->api_url : "https://api.github.com";
    o.run_id = run_id;
    time_t since, until = time(NULL);
    if (gha_hour_parse(&since, a->pushed_since, 0) < 0 ||
        (a->pushed_until && gha_hour_parse(&until, a->pushed_until, 23) < 0))
        return LSCAT_EINVALID;
    o.since = since;
    o.until = until;
    int rc = search_run(&k, s, &o);
    buf_addf(counts, "{\"queries\":%lld,\"results\":%lld,\"repos_new\":%lld,\"failed\":%lld}",
             (long long)k.queries, (long long)k.results, (long long)k.repos_new,
             (long long)k.failed);
    if (rc < 0)
        return rc;
    log_info("search: %lld queries, %lld results, %lld new repositories, %lld failed queries",
             (long long)k.queries, (long long)k.results, (long long)k.repos_new,
             (long long)k.failed);
    return k.failed > 0 || k.truncated > 0 ? 1 : 0;
}

static int parse_age(double *out, const char *s)
{
    char *end;
    double v = strtod(s, &end);
    double unit = !strcmp(end, "d") ? 86400 : !strcmp(end, "h") ? 3600
                : !strcmp(end, "m") ? 60 : !strcmp(end, "s") || !*end ? 1 : -1;
    if (end == s || unit < 0 || v < 0)
        return lscat_error_setc(LSCAT_EINVALID, "--refresh-older-than: '%s' is not an age "
                                                "(30d, 12h, 90m)", s);
    *out = v * unit;
    return 0;
}

static int cmd_fetch(struct buf *counts, struct store *s, const struct args *a,
                     const struct cli *cli, int64_t run_id)
{
    struct fetch_options o = FETCH_OPTIONS_INIT;
    struct fetch_counts k;
    http_opts(&o.http, a, cli);
    o.work_dir = cli->work_dir;
    o.run_id = run_id;
    if (a->archive_url)
        o.archive_url = a->archive_url;
    if (a->git_url)
        o.git_url = a->git_url;
    if (a->method)
        o.method = !strcmp(a->method, "git") ? FETCH_GIT
                 : !strcmp(a->method, "zip-only") ? FETCH_ZIP_ONLY : FETCH_ZIP;
    if (a->refresh && parse_age(&o.refresh_older_than_s, a->refresh) < 0)
        return LSCAT_EINVALID;
    o.http.max_bytes = (int64_t)((a->given[O_MAX_ARCHIVE] ? a->max_archive_mb : 2048) * 1e6);
    if (a->given[O_GIT_TIMEOUT])
        o.git_timeout_s = a->git_timeout;
    o.limit = a->limit;
    o.repos = a->repos;
    o.nrepos = a->nrepos;
    o.jobs = cli->jobs;
    int rc = fetch_run(&k, s, &o);
    buf_addf(counts,
             "{\"repos\":%lld,\"fetched\":%lld,\"gone\":%lld,\"failed\":%lld,\"files\":%lld,"
             "\"blobs_new\":%lld,\"refused\":%lld,\"bytes\":%lld}",
             (long long)k.repos, (long long)k.fetched, (long long)k.gone, (long long)k.failed,
             (long long)k.files, (long long)k.blobs_new, (long long)k.refused,
             (long long)k.bytes);
    if (rc < 0)
        return rc;
    log_info("fetch: %lld repositories: %lld fetched, %lld gone, %lld failed (retried later); "
             "%lld files kept (%lld new blobs), %lld entries refused",
             (long long)k.repos, (long long)k.fetched, (long long)k.gone, (long long)k.failed,
             (long long)k.files, (long long)k.blobs_new, (long long)k.refused);
    return k.failed > 0 ? 1 : 0;
}

/* Subcommand-specific argument checks; returns 0 or sets the usage message. */
static int check_args(const struct cli_subcommand *sub, const struct cli *cli,
                      const struct args *a)
{
    switch (sub->id) {
    case SUB_SCAN:
        if (cli->nargs != 1)
            return lscat_error_set("scan takes no arguments ('%s')", cli->args[1]);
        if (!a->since_last && !a->from)
            return lscat_error_set("scan needs --from (and --to) or --since-last");
        if (a->since_last && a->from)
            return lscat_error_set("--since-last excludes --from");
        return 0;
    case SUB_IMPORT:
        return cli->nargs != 2 ? lscat_error_set("import needs one FILE ('-' for stdin)") : 0;
    case SUB_SEARCH:
        return cli->nargs != 1 || !a->pushed_since
                   ? lscat_error_set("search needs --pushed-since DATE and no arguments") : 0;
    case SUB_FETCH:
        return cli->nargs != 1
                   ? lscat_error_set("fetch takes no arguments (use --repo OWNER/NAME)") : 0;
    }
    return 0;
}

/* `lscat-harvest --git-clone-worker URL DIR MAX_BYTES` (internal; started by fetch through
 * gitclone_run_child): clone, print "COMMIT BRANCH", exit 0, 4 (not found) or 1. argv[0] is
 * the program (cli_run_mode). */
static int clone_worker(int argc, char **argv)
{
    char commit[41], branch[256], *end;
    argc--, argv++;
    if (argc != 3) {
        fprintf(stderr, "lscat-harvest %s: usage: %s URL DIR MAX_BYTES (internal)\n",
                GITCLONE_WORKER_FLAG, GITCLONE_WORKER_FLAG);
        return GITCLONE_EXIT_ERR;
    }
    long long max = strtoll(argv[2], &end, 10);
    if (end == argv[2] || *end || max < 0) {
        fprintf(stderr, "lscat-harvest %s: MAX_BYTES '%s' is not a byte count\n",
                GITCLONE_WORKER_FLAG, argv[2]);
        return GITCLONE_EXIT_ERR;
    }
    int rc = gitclone_run(commit, branch, argv[0], argv[1], (int64_t)max);
    gitclone_global_cleanup();
    if (rc < 0) {
        fprintf(stderr, "%s\n", lscat_error_last());
        return rc == LSCAT_ENOTFOUND ? GITCLONE_EXIT_NOTFOUND : GITCLONE_EXIT_ERR;
    }
    printf("%s %s\n", commit, branch);
    return fflush(stdout) == 0 ? 0 : GITCLONE_EXIT_ERR;
}

static const struct cli_subcommand subcommands[] = {
    { .name = "scan", .id = SUB_SCAN },
    { .name = "import", .id = SUB_IMPORT },
    { .name = "search", .id = SUB_SEARCH },
    { .name = "fetch", .id = SUB_FETCH },
    { .name = GITCLONE_WORKER_FLAG, .mode = clone_worker },
    CLI_SUBCOMMAND_END,
};

/* Run subcommand `sub` on the open store; its counts go to `counts`. Returns its exit code, or
 * a negative code (LSCAT_EINVALID: a bad option value found late). */
static int run(struct buf *counts, const struct cli_subcommand *sub, const struct stage *st,
               const struct args *a, const struct cli *cli)
{
    switch (sub->id) {
    case SUB_SCAN: return cmd_scan(counts, st->store, a, cli, st->run_id);
    case SUB_IMPORT: return cmd_import(counts, st->store, cli->args[1]);
    case SUB_SEARCH: return cmd_search(counts, st->store, a, cli, st->run_id);
    default: return cmd_fetch(counts, st->store, a, cli, st->run_id);
    }
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct args a;
    struct stage st = STAGE_INIT;
    struct buf counts = BUF_INIT;
    const struct cli_subcommand *sub = NULL;
    int code = LSCAT_EXIT_OK, rc;
    if (cli_run_mode(&code, subcommands, opts, argc, argv))
        return code;
    memset(&a, 0, sizeof(a));
    rc = cli_parse(&cli, "lscat-harvest", argc, argv, opts, on_opt, &a);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc < 0 || !(sub = cli_subcommand(&cli, subcommands)) || check_args(sub, &cli, &a) < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    if (http_global_init() < 0 ||
        stage_begin(&st, &cli, "harvest", STAGE_CREATE, argc, argv) < 0) {
        code = cli_fatal(&cli);
        goto done;
    }
    rc = run(&counts, sub, &st, &a, &cli);
    if (rc == LSCAT_EINVALID)
        code = cli_usage_error(&cli, usage);
    else if (rc < 0)
        code = cli_fatal(&cli);
    else
        code = rc;
done:
    stage_end(&st, code, counts.len ? counts.data : NULL);
    buf_release(&counts);
    cli_release(&cli);
    http_global_cleanup();
    gitclone_global_cleanup();
    return code;
}
