/* The git route of `harvest fetch` (libgit2): clone a repository's default branch into a
 * temporary folder and report its HEAD commit. Used when the zip route fails or with
 * --method git. Only this module calls libgit2. libgit2 1.5 has no server timeout, so fetch
 * clones in a child process (lscat-harvest --git-clone-worker) killed after a deadline. */
#ifndef LSCAT_HARVEST_GITCLONE_H
#define LSCAT_HARVEST_GITCLONE_H

#include <stdint.h>

/* Clone `url` into `dir` (must not exist). Fills commit (40 hex) and branch (may be ""). A
 * transfer over max_bytes is aborted. Returns 0, LSCAT_ENOTFOUND when the remote does not
 * exist (final), or LSCAT_ERR (transient or unknown) with the message set. */
int gitclone_run(char commit[41], char branch[256], const char *url, const char *dir,
                 int64_t max_bytes);

/* gitclone_run() in a child process: runs `exe --git-clone-worker URL DIR MAX_BYTES` (exe
 * NULL: the running program, /proc/self/exe) and kills its whole process group after
 * timeout_s seconds of wall clock (0: no limit). Same results as gitclone_run(); a timeout
 * or a crash of the worker is LSCAT_ERR with the message set. `dir` may be left half
 * written: the caller removes it. */
int gitclone_run_child(char commit[41], char branch[256], const char *exe, const char *url,
                       const char *dir, int64_t max_bytes, double timeout_s);

/* The worker's exit codes: 0 (stdout "COMMIT BRANCH\n"), GITCLONE_EXIT_NOTFOUND when the
 * remote does not exist, GITCLONE_EXIT_ERR otherwise (the message on stderr). */
#define GITCLONE_WORKER_FLAG "--git-clone-worker"
#define GITCLONE_EXIT_ERR 1
#define GITCLONE_EXIT_NOTFOUND 4

/* Release libgit2's global state (at the end of the program; safe when never used). */
void gitclone_global_cleanup(void);

#endif
