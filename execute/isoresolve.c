/* Client of lscat-isolate's resolve service for the repair loop: one long-lived child with
 * pipes (common/proc.h proc_spawn), line requests, framed replies (common/record.h), a deadline
 * per request, a restart after a hang or a crash, and the textual search as the fallback. */
#include "execute/isoresolve.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "execute/reposearch.h"
#include "common/record.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_REPLY_BYTES (64u << 20)

struct isoresolve {
    struct repair_resolver resolver;
    char *exe, *cuda_home;
    double timeout_s;
    int max_starts;
    pthread_mutex_t lock;      /* one request at a time on the pipes */
    struct proc_child child;
    int running, starts, disabled, warned;
    int ever_up;               /* it answered a ping once: worth restarting after a failure */
    int served, fallback;
    char *last_error;          /* why the service last failed */
};

/* ---------------------------------------------------------------- finding the program */

static char *in_dir(const char *dir, const char *name)
{
    char *p = fs_join(dir, name);
    if (access(p, X_OK) == 0)
        return p;
    free(p);
    return NULL;
}

char *isoresolve_find_exe(void)
{
    const char *bin = getenv("LSCAT_BIN");
    if (bin && *bin)
        return in_dir(bin, "lscat-isolate");
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            char *p = in_dir(self, "lscat-isolate");
            if (p)
                return p;
        }
    }
    const char *path = getenv("PATH");
    char *copy = xstrdup(path ? path : "");
    char *found = NULL;
    for (char *save = NULL, *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save))
        found = *d ? in_dir(d, "lscat-isolate") : NULL;
    free(copy);
    return found;
}

/* ---------------------------------------------------------------- the child */

static void stop(struct isoresolve *r)
{
    if (r->running)
        proc_child_kill(&r->child);
    r->running = 0;
}

/* Give up on the service for the rest of the run: say once what and why. */
static void disable(struct isoresolve *r, const char *why)
{
    stop(r);
    r->disabled = 1;
    if (!r->warned)
        log_warn("repair: the libclang resolver (lscat-isolate resolve) is unavailable: %s; "
                 "declarations are pulled from repositories by a textual search instead, "
                 "without the declarations they depend on (fixes say '(text)')", why);
    r->warned = 1;
}

/* Write all of d to the child's stdin (non-blocking) before the deadline: a hung child that
 * stopped reading must not block us on a full pipe. */
static int write_all(int fd, const char *d, size_t n, double deadline)
{
    while (n > 0) {
        ssize_t w = write(fd, d, n);
        if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
            double left = deadline - fs_mono_s();
            struct pollfd p = { fd, POLLOUT, 0 };
            if (left <= 0)
                return lscat_error_set("the resolve service did not read its request in time");
            poll(&p, 1, (int)(left * 1000) + 1);
            continue;
        }
        if (w <= 0)
            return lscat_error_set("the resolve service stopped reading (%s)",
                                   w < 0 ? strerror(errno) : "closed");
        d += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Is data[0..len) one whole record? 1 yes, 0 not yet, -1 damaged. */
static int record_complete(const char *d, size_t len)
{
    const char *nl = memchr(d, '\n', len);
    int n = 0;
    char type[32];
    if (!nl)
        return len > 80 ? -1 : 0;
    if (sscanf(d, "R %31s %d", type, &n) != 2 || n < 0 || n > RECORD_MAX_FIELDS)
        return -1;
    size_t pos = (size_t)(nl - d) + 1;
    for (int i = 0; i < n; i++) {
        nl = memchr(d + pos, '\n', len - pos);
        if (!nl)
            return len - pos > 300 ? -1 : 0;
        const char *sp = d + pos;
        const char *last = NULL;
        for (const char *p = sp; p < nl; p++)
            if (*p == ' ')
                last = p;
        if (!last)
            return -1;
        unsigned long long vlen = strtoull(last + 1, NULL, 10);
        pos = (size_t)(nl - d) + 1;
        if (vlen + 1 > len - pos)
            return 0;
        pos += (size_t)vlen + 1;
    }
    return pos == len ? 1 : -1;
}

/* Send `req`, read one record into `reply` before the deadline. */
static int roundtrip(struct isoresolve *r, const struct buf *req, struct buf *reply, double timeout_s)
{
    double deadline = fs_mono_s() + timeout_s;
    int rc = write_all(r->child.in_fd, req->data, req->len, deadline);
    buf_reset(reply);
    while (rc == 0) {
        int done = reply->len ? record_complete(reply->data, reply->len) : 0;
        if (done > 0)
            return 0;
        if (done < 0 || reply->len > MAX_REPLY_BYTES)
            return lscat_error_set("the resolve service answered with a damaged record");
        double left = deadline - fs_mono_s();
        if (left <= 0)
            return lscat_error_set("the resolve service did not answer within %.1f s", timeout_s);
        struct pollfd p = { r->child.out_fd, POLLIN, 0 };
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno != EINTR)
            return lscat_error_set("poll: %s", strerror(errno));
        if (n <= 0)
            continue;
        char tmp[65536];
        ssize_t got = read(r->child.out_fd, tmp, sizeof tmp);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            return lscat_error_set("the resolve service exited (crashed, or libclang could not "
                                   "be loaded)");
        buf_add(reply, tmp, (size_t)got);
    }
    return rc;
}

/* A running service: start one when none runs (a ping proves libclang loaded). */
static int ensure_started(struct isoresolve *r)
{
    if (r->running)
        return 0;
    if (r->disabled)
        return LSCAT_ERR;
    if (!r->exe) {
        disable(r, getenv("LSCAT_BIN") && *getenv("LSCAT_BIN")
                       ? "lscat-isolate is not in $LSCAT_BIN"
                       : "lscat-isolate is neither beside lscat-execute nor on PATH (a GPU node "
                         "without libclang?)");
        return LSCAT_ERR;
    }
    if (r->starts >= r->max_starts) {
        char *why = xasprintf("it failed %d times (last: %s)", r->starts,
                              r->last_error ? r->last_error : "?");
        disable(r, why);
        free(why);
        return LSCAT_ERR;
    }
    const char *argv[] = { r->exe, "resolve", "--serve", r->cuda_home ? "--cuda-home" : NULL,
                           r->cuda_home, NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    char **env = proc_env_untrusted(NULL, NULL); /* it parses untrusted sources: no secrets */
    o.argv = argv;
    o.env = (const char *const *)env;
#if !defined(__SANITIZE_ADDRESS__)
    o.limits.as_bytes = (size_t)8 << 30; /* as isolate's parse workers */
#endif
    r->starts++;
    int spawned = proc_spawn(&r->child, &o);
    proc_env_free(env); /* the child has its copy */
    if (spawned < 0) {
        char *why = xasprintf("cannot start '%s': %s", r->exe, lscat_error_last());
        disable(r, why);
        free(why);
        return LSCAT_ERR;
    }
    r->running = 1;
    fcntl(r->child.in_fd, F_SETFL, O_NONBLOCK);
    struct buf req = BUF_INIT, reply = BUF_INIT;
    buf_adds(&req, "ping\n");
    int rc = roundtrip(r, &req, &reply, r->timeout_s * 2);
    if (rc == 0 && strncmp(reply.data, "R pong ", 7) != 0)
        rc = lscat_error_set("the resolve service answered ping with '%.40s'", reply.data);
    if (rc < 0 && !r->ever_up) { /* it never worked (no libclang here?): it will not now */
        char *why = xasprintf("'%s resolve --serve' did not start: %s", r->exe,
                              lscat_error_last());
        disable(r, why);
        free(why);
    } else if (rc < 0) {
        free(r->last_error);
        r->last_error = xstrdup(lscat_error_last());
        log_warn("repair: the resolve service did not restart: %s", r->last_error);
        stop(r);
    }
    r->ever_up |= rc == 0;
    buf_release(&req);
    buf_release(&reply);
    return rc;
}

/* One request through the service, under the lock. 1 found, 0 not found, -1 service failed. */
static int ask(struct isoresolve *r, const struct buf *req, struct buf *reply)
{
    if (ensure_started(r) < 0)
        return -1;
    if (roundtrip(r, req, reply, r->timeout_s) < 0) {
        free(r->last_error);
        r->last_error = xstrdup(lscat_error_last());
        log_warn("repair: the resolve service failed: %s; it is restarted for the next request "
                 "(this one uses the textual search)", r->last_error);
        stop(r);
        return -1;
    }
    return strncmp(reply->data, "R decl ", 7) == 0 || strncmp(reply->data, "R header ", 9) == 0;
}

static int usable_arg(const char *s)
{
    return *s && !strpbrk(s, " \t\r\n");
}

static int find_decl(void *ctx, const char *repo_root, const char *ident, const char *have,
                     struct buf *out, struct buf *origin, const char **via)
{
    struct isoresolve *r = ctx;
    struct buf req = BUF_INIT, reply = BUF_INIT;
    int got = -1;
    pthread_mutex_lock(&r->lock);
    if (usable_arg(repo_root) && usable_arg(ident)) {
        size_t hl = have ? strlen(have) : 0;
        buf_addf(&req, "decl %s %s %zu\n", repo_root, ident, hl);
        buf_add(&req, have ? have : "", hl);
        got = ask(r, &req, &reply);
    }
    if (got == 1) {
        struct record rec;
        size_t pos = 0;
        if (record_next(&rec, reply.data, reply.len, &pos) == 1) {
            const struct record_field *t = record_get(&rec, "text");
            buf_add(out, t ? t->value : "", t ? t->value_len : 0);
            buf_adds(origin, record_str(&rec, "origin"));
        }
        r->served++;
    } else {
        r->fallback++;
    }
    pthread_mutex_unlock(&r->lock);
    buf_release(&req);
    buf_release(&reply);
    if (got == 1) {
        *via = "isolate";
        return 0;
    }
    *via = "text"; /* not found by libclang (or no service): the textual search may still */
    return reposearch_find_decl(NULL, repo_root, ident, have, out, origin, via);
}

static int find_header(void *ctx, const char *repo_root, const char *name, char **path_out,
                       const char **via)
{
    struct isoresolve *r = ctx;
    struct buf req = BUF_INIT, reply = BUF_INIT;
    int got = -1;
    *path_out = NULL;
    pthread_mutex_lock(&r->lock);
    if (usable_arg(repo_root) && usable_arg(name)) {
        buf_addf(&req, "header %s %s\n", repo_root, name);
        got = ask(r, &req, &reply);
    }
    if (got == 1) {
        struct record rec;
        size_t pos = 0;
        if (record_next(&rec, reply.data, reply.len, &pos) == 1 && *record_str(&rec, "path"))
            *path_out = xstrdup(record_str(&rec, "path"));
        r->served++;
    } else {
        r->fallback++;
    }
    pthread_mutex_unlock(&r->lock);
    buf_release(&req);
    buf_release(&reply);
    if (*path_out) {
        *via = "isolate";
        return 0;
    }
    return reposearch_find_header(NULL, repo_root, name, path_out, via);
}

struct isoresolve *isoresolve_new(const struct isoresolve_options *o)
{
    struct isoresolve *r = xcalloc(1, sizeof *r);
    r->resolver = (struct repair_resolver){ find_decl, find_header, r };
    r->exe = o->exe ? xstrdup(o->exe) : isoresolve_find_exe();
    r->cuda_home = o->cuda_home ? xstrdup(o->cuda_home) : NULL;
    r->timeout_s = o->timeout_s > 0 ? o->timeout_s : 120;
    r->max_starts = o->max_starts > 0 ? o->max_starts : 3;
    r->child.pid = -1;
    r->child.in_fd = r->child.out_fd = r->child.extra_fd = -1;
    pthread_mutex_init(&r->lock, NULL);
    return r;
}

void isoresolve_free(struct isoresolve *r)
{
    if (!r)
        return;
    stop(r);
    pthread_mutex_destroy(&r->lock);
    free(r->exe);
    free(r->cuda_home);
    free(r->last_error);
    free(r);
}

const struct repair_resolver *isoresolve_resolver(struct isoresolve *r)
{
    return &r->resolver;
}

void isoresolve_stats(const struct isoresolve *r, int *served, int *fallback, int *starts)
{
    *served = r->served;
    *fallback = r->fallback;
    *starts = r->starts;
}
