/* The git route of `harvest fetch` (libgit2): clone a repository's default branch into a
 * temporary folder and report its HEAD commit. Used when the zip route fails or with
 * --method git. Only this module calls libgit2. */
#ifndef LSCAT_HARVEST_GITCLONE_H
#define LSCAT_HARVEST_GITCLONE_H

#include <stdint.h>

/* Clone `url` into `dir` (must not exist). Fills commit (40 hex) and branch (may be ""). A
 * transfer over max_bytes is aborted. Returns 0, LSCAT_ENOTFOUND when the remote does not
 * exist (final), or LSCAT_ERR (transient or unknown) with the message set. */
int gitclone_run(char commit[41], char branch[256], const char *url, const char *dir,
                 int64_t max_bytes);

/* Release libgit2's global state (at the end of the program; safe when never used). */
void gitclone_global_cleanup(void);

#endif
