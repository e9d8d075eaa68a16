/* lscat-dataset: `export` (Parquet/CSV + data card), `merge` (shard stores into one) and
 * `report` (LS-CAT's questions, plots, HTML). Thin: parse options, call the library
 * (export.c, merge.c, report.c), map the result to an exit code. */
#include "common/cli.h"
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "dataset/export.h"
#include "dataset/merge.h"
#include "dataset/report.h"
#include "store/stage.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "lscat dataset export --out DIR [--format parquet|csv] [--gpu MODEL] [--since DATE] "
    "[--kernels-only] [--gzip|--zstd]\n"
    "       lscat dataset merge SHARD.db... [--db OUT.db]\n"
    "       lscat dataset report --out DIR [--gpu MODEL] [--all-checks]";

enum {
    OPT_FORMAT = 1, OPT_OUT, OPT_GPU, OPT_SINCE, OPT_KERNELS_ONLY, OPT_GZIP, OPT_RG_ROWS,
    OPT_NO_DICT, OPT_ZSTD, OPT_TABLES, OPT_ZSTD_CSV, OPT_ALL_CHECKS,
};

static const struct cli_opt export_opts[] = {
    { "out", 'o', "DIR", "folder to write the files into (created; files are replaced)", OPT_OUT },
    { "format", 0, "FMT", "parquet (default) or csv", OPT_FORMAT },
    { "gpu", 0, "MODEL", "only measurements/GPUs whose model contains MODEL (any case)", OPT_GPU },
    { "since", 0, "DATE", "only measurements and failures recorded at or after DATE "
      "(UTC, YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][Z], e.g. 2026-11-01)", OPT_SINCE },
    { "kernels-only", 0, NULL, "only the code corpus: kernels, sources, sources_raw, "
      "occurrences, repositories",
      OPT_KERNELS_ONLY },
    { "gzip", 0, NULL, "CSV: write .csv.gz (ISA-L igzip, level 1)", OPT_GZIP },
    { "zstd", 0, NULL, "CSV: write .csv.zst (zstd level 3)", OPT_ZSTD_CSV },
    { "tables", 0, "LIST", "only these tables, comma-separated (default: all)", OPT_TABLES },
    { "row-group-rows", 0, "N", "Parquet: at most N rows per row group (default 1048576; "
      "row groups are also cut at 64 MiB of values)", OPT_RG_ROWS },
    { "no-dictionary", 0, NULL, "Parquet: PLAIN encoding only (no RLE_DICTIONARY, no "
      "BYTE_STREAM_SPLIT), for old readers", OPT_NO_DICT },
    { "zstd-level", 0, "N", "Parquet: ZSTD level 1-19, 0 = uncompressed (default 3)", OPT_ZSTD },
    CLI_OPT_END,
};

static const struct cli_opt report_opts[] = {
    { "out", 'o', "DIR", "folder for index.html, report.txt and the PNG plots", OPT_OUT },
    { "gpu", 0, "MODEL", "only GPUs whose model contains MODEL (any case)", OPT_GPU },
    { "all-checks", 0, NULL, "count every ok row whatever its output check (mismatch rows "
      "included: the table as it read before the check; default: match rows only)",
      OPT_ALL_CHECKS },
    CLI_OPT_END,
};

enum { SUB_EXPORT = 1, SUB_MERGE, SUB_REPORT };
static const struct cli_subcommand subcommands[] = {
    { .name = "export", .id = SUB_EXPORT, .opts = export_opts },
    { .name = "merge", .id = SUB_MERGE, .opts = NULL },
    { .name = "report", .id = SUB_REPORT, .opts = report_opts },
    CLI_SUBCOMMAND_END,
};

struct opts {
    struct export_options ex;
    const char *out;
    int bad_format;
    int all_checks;
};

static int on_opt(void *ctx, int id, const char *arg)
{
    struct opts *o = ctx;
    long n;
    switch (id) {
    case OPT_OUT: o->out = arg; break;
    case OPT_FORMAT:
        if (!strcmp(arg, "parquet"))
            o->ex.format = EXPORT_PARQUET;
        else if (!strcmp(arg, "csv"))
            o->ex.format = EXPORT_CSV;
        else
            return lscat_error_setc(LSCAT_EINVALID, "--format must be parquet or csv, not '%s'",
                                    arg);
        break;
    case OPT_GPU: o->ex.gpu = arg; break;
    case OPT_ALL_CHECKS: o->all_checks = 1; break;
    case OPT_SINCE:
        if (export_check_since(arg) < 0)
            return LSCAT_EINVALID;
        o->ex.since = arg;
        break;
    case OPT_KERNELS_ONLY: o->ex.kernels_only = 1; break;
    case OPT_GZIP: o->ex.compress = 1; break;
    case OPT_ZSTD_CSV: o->ex.compress = 2; break;
    case OPT_NO_DICT:
        o->ex.dictionary = 0;
        o->ex.byte_stream_split = 0;
        break;
    case OPT_TABLES:
        if (export_check_tables(arg) < 0)
            return LSCAT_EINVALID;
        o->ex.tables = arg;
        break;
    case OPT_RG_ROWS:
        if (cli_parse_int(&n, "--row-group-rows", arg, 1, 1L << 30) < 0)
            return LSCAT_EINVALID;
        o->ex.row_group_rows = n;
        break;
    case OPT_ZSTD:
        if (cli_parse_int(&n, "--zstd-level", arg, 0, 19) < 0)
            return LSCAT_EINVALID;
        o->ex.zstd_level = (int)n;
        break;
    }
    return 0;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "export  Write the dataset from the store (--db) into --out: kernels, sources (their\n"
           "        isolated source, read from the work folder), sources_raw (the exact bytes\n"
           "        of sources that are not UTF-8), occurrences, repositories, measurements\n"
           "        (current rows), failures, gpus — as Parquet (ZSTD, dictionary encoding,\n"
           "        statistics, UTC timestamps, lists) or RFC 4180 CSV (lists as JSON text) —\n"
           "        plus README.md (data card with loading lines per reader), columns.md and\n"
           "        SHA256SUMS. Reads one consistent snapshot; safe while other stages run.\n"
           "        See docs/dataset.md.\n"
           "merge   Merge shard stores into the store named by --db (created if missing),\n"
           "        without duplicates: running it again adds nothing.\n"
           "report  LS-CAT's questions per GPU model: tables, gnuplot PNG plots, index.html.\n\n"
           "export options:\n", usage);
    cli_print_options(stdout, export_opts);
    printf("\nreport options:\n");
    cli_print_options(stdout, report_opts);
    cli_print_common_help(stdout);
}

static int run_export(struct cli *cli, struct opts *o, int argc, char **argv)
{
    struct stage st = STAGE_INIT;
    struct export_result r;
    struct buf counts = BUF_INIT;
    int code = LSCAT_EXIT_OK;
    o->ex.out_dir = o->out;
    o->ex.work_dir = cli->work_dir;
    o->ex.quiet = cli->verbosity < 0;
    if (stage_begin(&st, cli, "dataset", 0, argc, argv) < 0) {
        code = cli_fatal(cli);
        goto done;
    }
    if (export_run(&r, st.store, &o->ex) < 0)
        code = cli_fatal(cli);
    buf_addf(&counts, "{\"command\":\"export\",\"format\":\"%s\"",
             o->ex.format == EXPORT_PARQUET ? "parquet" : "csv");
    for (int i = 0; code == 0 && i < r.ntables; i++)
        buf_addf(&counts, ",\"%s\":%lld", r.tables[i], (long long)r.rows[i]);
    buf_adds(&counts, "}");
    if (code == 0)
        log_info("exported %d tables to %s (%.1f MB)", r.ntables, o->out,
                 (double)r.bytes_written / 1e6);
done:
    stage_end(&st, code, counts.len ? counts.data : NULL);
    buf_release(&counts);
    return code;
}

static int run_merge(struct cli *cli, int argc, char **argv)
{
    struct stage st = STAGE_INIT;
    struct merge_result r = { 0 };
    struct buf counts = BUF_INIT;
    int code = LSCAT_EXIT_OK;
    if (stage_begin(&st, cli, "dataset", STAGE_CREATE, argc, argv) < 0) {
        code = cli_fatal(cli);
        goto done;
    }
    for (int i = 1; i < cli->nargs && code == 0; i++) {
        if (merge_shard(&r, st.store, cli->args[i]) < 0)
            code = cli_fatal(cli);
        else
            log_info("merged %s into %s", cli->args[i], cli->db_path);
    }
    buf_adds(&counts, "{\"command\":\"merge\"");
    for (int i = 0; i < r.ntables; i++)
        buf_addf(&counts, ",\"%s\":%lld", r.tables[i], (long long)r.added[i]);
    buf_adds(&counts, "}");
    log_info("added %s", counts.data);
done:
    stage_end(&st, code, counts.len ? counts.data : NULL);
    buf_release(&counts);
    return code;
}

static int run_report(struct cli *cli, const struct opts *o, int argc, char **argv)
{
    struct stage st = STAGE_INIT;
    struct report_options ro = REPORT_OPTIONS_INIT;
    struct buf table = BUF_INIT;
    int code = LSCAT_EXIT_OK;
    ro.out_dir = o->out;
    ro.gpu = o->ex.gpu;
    ro.all_checks = o->all_checks;
    if (stage_begin(&st, cli, NULL, STAGE_READONLY, argc, argv) < 0 ||
        report_run(&table, NULL, NULL, st.store, &ro) < 0)
        code = cli_fatal(cli);
    else
        fwrite(table.data, 1, table.len, stdout);
    buf_release(&table);
    stage_end(&st, code, NULL);
    return code;
}

/* What the subcommand needs beyond its options; 0 or the usage message set. */
static int check_args(const struct cli_subcommand *sub, const struct cli *cli, const struct opts *o)
{
    if (sub->id == SUB_MERGE)
        return cli->nargs < 2 ? lscat_error_setc(LSCAT_EINVALID, "merge needs at least one "
                                                 "shard store") : 0;
    if (cli->nargs > 1)
        return lscat_error_setc(LSCAT_EINVALID, "unexpected argument '%s'", cli->args[1]);
    if (!o->out)
        return lscat_error_setc(LSCAT_EINVALID, "%s needs --out DIR", sub->name);
    if (o->ex.compress && o->ex.format != EXPORT_CSV)
        return lscat_error_setc(LSCAT_EINVALID, "--gzip and --zstd apply to --format csv only "
                                "(Parquet is compressed already: --zstd-level)");
    return 0;
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct opts o = { .ex = EXPORT_OPTIONS_INIT };
    o.ex.lscat_version = LSCAT_VERSION " (" LSCAT_GIT_DESCRIBE ")";
    int at = cli_find_subcommand(export_opts, argc, argv), code = LSCAT_EXIT_OK;
    const struct cli_subcommand *sub = cli_subcommand_find(subcommands, at > 0 ? argv[at] : NULL);
    int rc = cli_parse(&cli, "lscat-dataset", argc, argv, sub ? sub->opts : NULL, on_opt, &o);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc >= 0 && (!(sub = cli_subcommand(&cli, subcommands)) || check_args(sub, &cli, &o) < 0))
        rc = LSCAT_EINVALID;
    if (rc < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    switch (sub->id) {
    case SUB_EXPORT: code = run_export(&cli, &o, argc, argv); break;
    case SUB_MERGE: code = run_merge(&cli, argc, argv); break;
    case SUB_REPORT: code = run_report(&cli, &o, argc, argv); break;
    }
done:
    cli_release(&cli);
    return code;
}
