/* One begin/end pair for every stage command: the work folder, the store and the stage_runs row
 * (store/stage.h). Before it, each stage's main repeated mkdir, store_open and
 * store_run_begin/store_run_end with small differences in what it checked and reported. */
#include "store/stage.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <limits.h>
#include <stdlib.h>

/* The work folder, absolute when it exists (child processes change folders). */
static char *work_path(const char *dir)
{
    char real[PATH_MAX];
    return realpath(dir, real) ? xstrdup(real) : xstrdup(dir);
}

int stage_begin(struct stage *st, const struct cli *cli, const char *run_name, unsigned flags,
                int argc, char **argv)
{
    unsigned open_flags = flags & STAGE_READONLY ? STORE_READONLY : 0;
    int rc;
    if (flags & STAGE_CREATE) {
        if ((rc = fs_mkdirs(cli->work_dir, 0755)) < 0)
            return rc;
        open_flags |= STORE_CREATE;
    }
    st->work_dir = work_path(cli->work_dir);
    if ((rc = store_open(&st->store, cli->db_path, open_flags)) < 0)
        return rc;
    if (run_name && (rc = store_run_begin(&st->run_id, st->store, run_name, argc, argv)) < 0)
        return rc;
    return 0;
}

void stage_end(struct stage *st, int exit_code, const char *counts_json)
{
    if (st->store && st->run_id &&
        store_run_end(st->store, st->run_id, exit_code, counts_json) < 0)
        log_error("cannot record the end of run %lld in the store: %s", (long long)st->run_id,
                  lscat_error_last());
    store_free(st->store);
    free(st->work_dir);
    *st = (struct stage)STAGE_INIT;
}
