/* libgit2 clone for the fetch fallback (see gitclone.h). A transfer-progress callback enforces
 * the size cap, since a hostile remote could otherwise send without end. */
#include "gitclone.h"

#include "common/error.h"

#include <git2.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_git(void)
{
    git_libgit2_init();
}

static int used;

void gitclone_global_cleanup(void)
{
    if (used)
        git_libgit2_shutdown();
}

static int on_transfer(const git_indexer_progress *st, void *arg)
{
    int64_t max = *(int64_t *)arg;
    return max > 0 && (int64_t)st->received_bytes > max ? -1 : 0;
}

int gitclone_run(char commit[41], char branch[256], const char *url, const char *dir,
                 int64_t max_bytes)
{
    git_repository *repo = NULL;
    git_reference *head = NULL;
    git_clone_options o;
    int rc = 0;
    git_clone_options_init(&o, GIT_CLONE_OPTIONS_VERSION);
    pthread_once(&once, init_git);
    used = 1;
    commit[0] = branch[0] = 0;
    o.fetch_opts.callbacks.transfer_progress = on_transfer;
    o.fetch_opts.callbacks.payload = &max_bytes;
    o.checkout_opts.checkout_strategy = GIT_CHECKOUT_SAFE;
    int g = git_clone(&repo, url, dir, &o);
    if (g < 0) {
        const git_error *e = git_error_last();
        const char *msg = e && e->message ? e->message : "unknown error";
        int gone = g == GIT_ENOTFOUND || strcasestr(msg, "not found") ||
                   strcasestr(msg, "404") || strcasestr(msg, "does not exist") ||
                   strcasestr(msg, "could not find repository");
        rc = lscat_error_setc(gone ? LSCAT_ENOTFOUND : LSCAT_ERR, "git clone '%s': %s", url, msg);
        goto done;
    }
    if (git_repository_head(&head, repo) == 0) {
        const git_oid *oid = git_reference_target(head);
        if (oid)
            git_oid_tostr(commit, 41, oid);
        snprintf(branch, 256, "%s", git_reference_shorthand(head));
    }
done:
    git_reference_free(head);
    git_repository_free(repo);
    return rc;
}
