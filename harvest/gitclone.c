/* libgit2 clone for the fetch fallback (see gitclone.h). A transfer-progress callback enforces
 * the size cap, since a hostile remote could otherwise send without end; a child process with
 * a wall-clock deadline stops a remote that stalls (libgit2 1.5 would wait forever). */
#include "harvest/gitclone.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/proc.h"

#include <git2.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <unistd.h>

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

/* In the child, before exec: die with the process that started us (a SIGKILLed fetch must not
 * leave a clone hanging on a dead server). Async-signal-safe. */
static int die_with_parent(void *arg)
{
    pid_t parent = *(const pid_t *)arg;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
        return -1;
    return getppid() == parent ? 0 : -1; /* it died before the prctl */
}

/* "COMMIT BRANCH\n" from the worker into commit and branch; 0, or -1 when malformed. */
static int parse_worker_out(char commit[41], char branch[256], const char *out)
{
    const char *sp = strchr(out, ' ');
    size_t n = sp ? (size_t)(sp - out) : 0;
    if (!sp || (n != 0 && n != 40) || strspn(out, "0123456789abcdef") != n)
        return -1;
    memcpy(commit, out, n);
    commit[n] = 0;
    size_t b = strcspn(sp + 1, "\n");
    if (b >= 256)
        return -1;
    memcpy(branch, sp + 1, b);
    branch[b] = 0;
    return 0;
}

/* The worker's message: the first line of its stderr (a sanitizer build may append its
 * report after it, at exit). Cuts err at that line's end; points into err. */
static const char *worker_message(struct buf *err)
{
    char *nl = strchr(err->data, '\n');
    if (nl)
        buf_setlen(err, (size_t)(nl - err->data));
    buf_rtrim(err);
    return err->data;
}

int gitclone_run_child(char commit[41], char branch[256], const char *exe, const char *url,
                       const char *dir, int64_t max_bytes, double timeout_s)
{
    char self[4096], max[32];
    commit[0] = branch[0] = 0;
    if (!exe) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
            return lscat_error_set("git clone '%s': cannot find the running program "
                                   "(/proc/self/exe unreadable; is /proc mounted?)", url);
        self[n] = 0;
        exe = self;
    }
    snprintf(max, sizeof(max), "%lld", (long long)max_bytes);
    const char *argv[] = { exe, GITCLONE_WORKER_FLAG, url, dir, max, NULL };
    pid_t parent = getpid();
    struct proc_options po = PROC_OPTIONS_INIT;
    struct proc_result pr;
    po.argv = argv;
    po.timeout_s = timeout_s;
    po.out_cap_bytes = 64u << 10;
    po.child_setup = die_with_parent;
    po.child_setup_arg = &parent;
    int rc = 0;
    if (proc_run(&pr, &po) < 0) {
        rc = lscat_error_wrap("git clone '%s': cannot start the clone worker", url);
    } else if (pr.timed_out) {
        rc = lscat_error_set("git clone '%s': not done after %g s (timed out; the repository "
                             "stays failed and is retried later)", url, timeout_s);
    } else if (pr.signal) {
        rc = lscat_error_set("git clone '%s': the clone worker died of signal %d (%s)", url,
                             pr.signal, strsignal(pr.signal));
    } else if (pr.exit_code == GITCLONE_EXIT_NOTFOUND) {
        rc = lscat_error_setc(LSCAT_ENOTFOUND, "%s", worker_message(&pr.err));
    } else if (pr.exit_code == GITCLONE_EXIT_ERR && pr.err.len) {
        rc = lscat_error_set("%s", worker_message(&pr.err));
    } else if (pr.exit_code != 0) {
        const char *msg = worker_message(&pr.err);
        rc = lscat_error_set("git clone '%s': the clone worker ended with exit %d%s%s", url,
                             pr.exit_code, *msg ? ": " : "", msg);
    } else if (parse_worker_out(commit, branch, pr.out.data) < 0) {
        rc = lscat_error_set("git clone '%s': the clone worker printed no 'COMMIT BRANCH' line",
                             url);
    }
    proc_result_release(&pr);
    return rc;
}
