/* The set-up and end every stage command shares: the work folder, the store and the stage_runs
 * row that records the invocation. A stage's main calls stage_begin() once after parsing its
 * options and stage_end() once before it returns, instead of repeating mkdir / store_open /
 * store_run_begin / store_run_end by hand (git's RUN_SETUP flag, as a call).
 *
 *     struct stage st = STAGE_INIT;
 *     if (stage_begin(&st, &cli, "execute", STAGE_CREATE, argc, argv) < 0)
 *         code = cli_fatal(&cli);          // "lscat-execute: <why>", exit 3
 *     else
 *         code = work(st.store, st.work_dir, st.run_id);
 *     stage_end(&st, code, counts_json);   // also after a failed begin
 */
#ifndef LSCAT_STORE_STAGE_H
#define LSCAT_STORE_STAGE_H

#include "common/cli.h"
#include "store/store.h"

#include <stdint.h>

enum stage_flags {
    STAGE_CREATE = 1,   /* create the work folder, create or migrate the store */
    STAGE_READONLY = 2, /* open the store read-only (never with a run name) */
};

struct stage {
    struct store *store; /* the open store, the stage's until stage_end() */
    int64_t run_id;      /* the stage_runs row, 0 when none is recorded */
    char *work_dir;      /* the work folder: absolute when it exists, else as given */
};
#define STAGE_INIT { .store = NULL, .run_id = 0, .work_dir = NULL }

/* Open the store cli->db_path (flags: STAGE_*; without STAGE_CREATE the store must exist) and,
 * when `run_name` is not NULL, record the start of the run (stage_runs: the name and argv).
 * Returns 0, or a negative code with the message set (the folder, the store or the row that
 * failed); `st` then holds what was opened, for stage_end(). */
int stage_begin(struct stage *st, const struct cli *cli, const char *run_name, unsigned flags,
                int argc, char **argv);

/* Record the end of the run (exit code and a JSON object of counts, NULL for none) when one was
 * begun, close the store and reset `st` to STAGE_INIT. A run end that cannot be recorded is
 * logged as an error (the stage's own exit code stands). Safe on STAGE_INIT. */
void stage_end(struct stage *st, int exit_code, const char *counts_json);

#endif
