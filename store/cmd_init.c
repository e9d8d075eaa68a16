/* lscat-init: create the work folder and the store, or migrate an existing store to this
 * lscat's schema. Every stage also does this on first use; `init` makes it explicit. */
#include "common/cli.h"
#include "common/error.h"
#include "common/log.h"
#include "store/stage.h"

#include <stdio.h>

static const char usage[] = "lscat init [--db PATH] [--work DIR]";

int main(int argc, char **argv)
{
    struct cli cli;
    struct stage st = STAGE_INIT;
    int code = LSCAT_EXIT_OK;
    int rc = cli_parse(&cli, "lscat-init", argc, argv, NULL, NULL, NULL);
    if (rc == CLI_HELP) {
        printf("usage: %s\n\nCreate the work folder and the store (SQLite, WAL) with the newest\n"
               "schema, or migrate an existing store. Safe to run any number of times.\n",
               usage);
        cli_print_common_help(stdout);
        goto done;
    }
    if (rc < 0 || cli_no_args(&cli) < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    if (stage_begin(&st, &cli, NULL, STAGE_CREATE, argc, argv) < 0) {
        code = cli_fatal(&cli);
        goto done;
    }
    log_info("store %s ready (schema %d), work folder %s", cli.db_path,
             store_schema_version(st.store), cli.work_dir);
done:
    stage_end(&st, code, NULL);
    cli_release(&cli);
    return code;
}
