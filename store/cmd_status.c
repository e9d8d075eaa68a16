/* lscat-status: print the store's summary (text, or --json). Thin: parse, open, report. */
#include "common/cli.h"
#include "common/error.h"
#include "store/status.h"
#include "store/stage.h"

#include <stdio.h>

static const char usage[] = "lscat status [--json] [--db PATH]";

enum { OPT_JSON = 1 };
static const struct cli_opt opts[] = {
    { "json", 0, NULL, "print the summary as one JSON object", OPT_JSON },
    CLI_OPT_END,
};

static int on_opt(void *ctx, int id, const char *arg)
{
    (void)arg;
    if (id == OPT_JSON)
        *(int *)ctx = 1;
    return 0;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "Summarise the store: GH Archive hours, repositories, files, kernels, builds,\n"
           "probes, GPUs, measurements and failures, counted per status, and the last run of\n"
           "each stage. Opens the store read-only; a missing store is an error.\n\n"
           "Options:\n",
           usage);
    cli_print_options(stdout, opts);
    cli_print_common_help(stdout);
}

int main(int argc, char **argv)
{
    struct cli cli;
    int json = 0, code = LSCAT_EXIT_OK;
    struct stage st = STAGE_INIT;
    struct buf out = BUF_INIT;
    int rc = cli_parse(&cli, "lscat-status", argc, argv, opts, on_opt, &json);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc < 0 || cli_no_args(&cli) < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    if (stage_begin(&st, &cli, NULL, STAGE_READONLY, argc, argv) < 0 ||
        status_report(&out, st.store, json) < 0) {
        code = cli_fatal(&cli);
        goto done;
    }
    fwrite(out.data, 1, out.len, stdout);
done:
    buf_release(&out);
    stage_end(&st, code, NULL);
    cli_release(&cli);
    return code;
}
