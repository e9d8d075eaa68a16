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
#include "store/store.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "lscat dataset export --out DIR [--format parquet|csv] [--gpu MODEL] [--since DATE] "
    "[--kernels-only] [--gzip|--zstd]\n"
    "       lscat dataset merge SHARD.db... [--db OUT.db]\n"
    "       lscat dataset report --out DIR [--gpu MODEL]";

enum {
    OPT_FORMAT = 1, OPT_OUT, OPT_GPU, OPT_SINCE, OPT_KERNELS_ONLY, OPT_GZIP, OPT_RG_ROWS,
    OPT_NO_DICT, OPT_ZSTD, OPT_TABLES, OPT_ZSTD_CSV,
};

static const struct cli_opt export_opts[] = {
    { "out", 'o', "DIR", "folder to write the files into (created; files are replaced)", OPT_OUT },
    { "format", 0, "FMT", "parquet (default) or csv", OPT_FORMAT },
    { "gpu", 0, "MODEL", "only measurements/GPUs whose model contains MODEL (any case)", OPT_GPU },
    { "since", 0, "DATE", "only measurements and failures recorded at or after DATE "
      "(ISO-8601, e.g. 2026-11-01)", OPT_SINCE },
    { "kernels-only", 0, NULL, "only the code corpus: kernels, occurrences, repositories",
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
    CLI_OPT_END,
};

struct opts {
    struct export_options ex;
    const char *out;
    int bad_format;
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
    case OPT_SINCE: o->ex.since = arg; break;
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
    struct store *s = NULL;
    int64_t run_id = 0;
    struct export_result r;
    int code = LSCAT_EXIT_OK;
    o->ex.out_dir = o->out;
    o->ex.work_dir = cli->work_dir;
    o->ex.quiet = cli->verbosity < 0;
    if (store_open(&s, cli->db_path, 0) < 0 || store_run_begin(&run_id, s, "dataset", argc, argv) < 0) {
        fprintf(stderr, "lscat-dataset: %s\n", lscat_error_last());
        store_free(s);
        return LSCAT_EXIT_FATAL;
    }
    struct buf counts = BUF_INIT;
    if (export_run(&r, s, &o->ex) < 0) {
        fprintf(stderr, "lscat-dataset: %s\n", lscat_error_last());
        code = LSCAT_EXIT_FATAL;
    }
    buf_addf(&counts, "{\"command\":\"export\",\"format\":\"%s\"",
             o->ex.format == EXPORT_PARQUET ? "parquet" : "csv");
    for (int i = 0; code == 0 && i < r.ntables; i++)
        buf_addf(&counts, ",\"%s\":%lld", r.tables[i], (long long)r.rows[i]);
    buf_adds(&counts, "}");
    if (code == 0)
        log_info("exported %d tables to %s (%.1f MB)", r.ntables, o->out,
                 (double)r.bytes_written / 1e6);
    store_run_end(s, run_id, code, counts.data);
    buf_release(&counts);
    store_free(s);
    return code;
}

static int run_merge(struct cli *cli, int argc, char **argv)
{
    struct store *s = NULL;
    int64_t run_id = 0;
    struct merge_result r = { 0 };
    int code = LSCAT_EXIT_OK;
    if (store_open(&s, cli->db_path, STORE_CREATE) < 0 ||
        store_run_begin(&run_id, s, "dataset", argc, argv) < 0) {
        fprintf(stderr, "lscat-dataset: %s\n", lscat_error_last());
        store_free(s);
        return LSCAT_EXIT_FATAL;
    }
    for (int i = 1; i < cli->nargs && code == 0; i++) {
        if (merge_shard(&r, s, cli->args[i]) < 0) {
            fprintf(stderr, "lscat-dataset: %s\n", lscat_error_last());
            code = LSCAT_EXIT_FATAL;
        } else {
            log_info("merged %s into %s", cli->args[i], cli->db_path);
        }
    }
    struct buf counts = BUF_INIT;
    buf_adds(&counts, "{\"command\":\"merge\"");
    for (int i = 0; i < r.ntables; i++)
        buf_addf(&counts, ",\"%s\":%lld", r.tables[i], (long long)r.added[i]);
    buf_adds(&counts, "}");
    log_info("added %s", counts.data);
    store_run_end(s, run_id, code, counts.data);
    buf_release(&counts);
    store_free(s);
    return code;
}

static int run_report(struct cli *cli, const char *out, const char *gpu)
{
    struct store *s = NULL;
    struct report_options ro = REPORT_OPTIONS_INIT;
    struct buf table = BUF_INIT;
    int code = LSCAT_EXIT_OK;
    ro.out_dir = out;
    ro.gpu = gpu;
    if (store_open(&s, cli->db_path, STORE_READONLY) < 0 ||
        report_run(&table, NULL, NULL, s, &ro) < 0) {
        fprintf(stderr, "lscat-dataset: %s\n", lscat_error_last());
        code = LSCAT_EXIT_FATAL;
    } else {
        fwrite(table.data, 1, table.len, stdout);
    }
    buf_release(&table);
    store_free(s);
    return code;
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct opts o = { .ex = EXPORT_OPTIONS_INIT };
    o.ex.lscat_version = LSCAT_VERSION " (" LSCAT_GIT_DESCRIBE ")";
    int sub = cli_find_subcommand(argc, argv);
    const char *name = sub > 0 ? argv[sub] : "";
    const struct cli_opt *table = !strcmp(name, "report") ? report_opts
                                  : !strcmp(name, "export") ? export_opts : NULL;
    int code = LSCAT_EXIT_OK;
    int rc = cli_parse(&cli, "lscat-dataset", argc, argv, table, on_opt, &o);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc >= 0 && cli.nargs == 0)
        rc = lscat_error_setc(LSCAT_EINVALID, "missing subcommand (export, merge or report)");
    else if (rc >= 0 && strcmp(name, "export") && strcmp(name, "merge") && strcmp(name, "report"))
        rc = lscat_error_setc(LSCAT_EINVALID, "unknown subcommand '%s'", cli.args[0]);
    else if (rc >= 0 && strcmp(name, "merge") && cli.nargs > 1)
        rc = lscat_error_setc(LSCAT_EINVALID, "unexpected argument '%s'", cli.args[1]);
    else if (rc >= 0 && strcmp(name, "merge") && !o.out)
        rc = lscat_error_setc(LSCAT_EINVALID, "%s needs --out DIR", name);
    else if (rc >= 0 && !strcmp(name, "merge") && cli.nargs < 2)
        rc = lscat_error_setc(LSCAT_EINVALID, "merge needs at least one shard store");
    else if (rc >= 0 && o.ex.compress && o.ex.format != EXPORT_CSV)
        rc = lscat_error_setc(LSCAT_EINVALID, "--gzip and --zstd apply to --format csv only "
                              "(Parquet is compressed already: --zstd-level)");
    if (rc < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    if (!strcmp(name, "export"))
        code = run_export(&cli, &o, argc, argv);
    else if (!strcmp(name, "merge"))
        code = run_merge(&cli, argc, argv);
    else
        code = run_report(&cli, o.out, o.ex.gpu);
done:
    cli_release(&cli);
    return code;
}
