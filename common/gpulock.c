/* Cross-process GPU locks with flock(2): exclusive for measurements, shared for probes, and a
 * turnstile so that a measurement waiting for the probes in flight is served before new ones.
 * Polling with LOCK_NB keeps the wait interruptible (stop flag, timeout) without signals. */
#include "common/gpulock.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *gpulock_dir(void)
{
    const char *d = getenv("LSCAT_LOCK_DIR");
    return d && *d ? d : "/tmp/lscat-locks";
}

/* Open (creating) "<dir>/<uuid><suffix>"; the uuid is reduced to [A-Za-z0-9._-]. */
static int open_lock_file(int *out, const char *uuid, const char *suffix)
{
    const char *dir = gpulock_dir();
    char name[160], path[4096];
    size_t n = 0;
    for (const char *p = uuid; *p && n < sizeof(name) - 1; p++)
        name[n++] = (strchr("._-", *p) || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                     (*p >= 'A' && *p <= 'Z')) ? *p : '_';
    name[n] = 0;
    if (!n)
        return lscat_error_setc(LSCAT_EINVALID, "cannot lock a GPU without a UUID");
    if (!fs_is_dir(dir)) {
        if (fs_mkdirs(dir, 0777) < 0)
            return lscat_error_wrap("cannot create the GPU lock folder (set LSCAT_LOCK_DIR to a "
                                    "writable folder)");
        chmod(dir, 01777); /* best effort: shared by the machine's users, like /tmp */
    }
    snprintf(path, sizeof(path), "%s/%s%s", dir, name, suffix);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return lscat_error_set("cannot open the GPU lock '%s': %s (set LSCAT_LOCK_DIR to a "
                               "writable folder)", path, strerror(errno));
    fchmod(fd, 0666); /* best effort, despite the umask: other users take it too */
    *out = fd;
    return 0;
}

static void nap(void)
{
    struct timespec ts = { 0, 5 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/* flock with LOCK_NB until it is granted, *stop is set or the deadline passes. */
static int take(int fd, int op, const volatile int *stop, double deadline, const char *uuid)
{
    for (;;) {
        if (flock(fd, op | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return lscat_error_set("cannot lock GPU %s: %s", uuid, strerror(errno));
        if (stop && *stop)
            return lscat_error_setc(LSCAT_EBUSY, "stopped while waiting for GPU %s", uuid);
        if (deadline >= 0 && fs_mono_s() > deadline)
            return lscat_error_setc(LSCAT_ETIMEOUT, "GPU %s stayed busy (another lscat "
                                    "measures on it; lock folder %s)", uuid, gpulock_dir());
        nap();
    }
}

int gpulock_acquire(struct gpulock *out, const char *uuid, int exclusive,
                    const volatile int *stop, double timeout_s, double *waited_s)
{
    int turn = -1, fd = -1, rc;
    double t0 = fs_mono_s(), deadline = timeout_s < 0 ? -1 : t0 + timeout_s;
    out->fd = -1;
    if ((rc = open_lock_file(&turn, uuid, ".turn")) < 0)
        goto done;
    if ((rc = open_lock_file(&fd, uuid, ".lock")) < 0)
        goto done;
    if ((rc = take(turn, LOCK_EX, stop, deadline, uuid)) < 0)
        goto done;
    rc = take(fd, exclusive ? LOCK_EX : LOCK_SH, stop, deadline, uuid);
    flock(turn, LOCK_UN);
    if (rc == 0) {
        out->fd = fd;
        fd = -1;
    }
done:
    if (turn >= 0)
        close(turn);
    if (fd >= 0)
        close(fd);
    if (waited_s)
        *waited_s = fs_mono_s() - t0;
    return rc;
}

void gpulock_release(struct gpulock *l)
{
    if (l->fd >= 0) {
        flock(l->fd, LOCK_UN);
        close(l->fd);
    }
    l->fd = -1;
}

void gpulock_context_gate(struct gpulock *out, double *waited)
{
    const char *e = getenv("LSCAT_TUNE_CONTEXT_GATE");
    out->fd = -1;
    if (waited)
        *waited = 0;
    if (e && !strcmp(e, "0"))
        return;
    double w = 0;
    if (gpulock_acquire(out, "contexts", 1, NULL, 5.0, &w) < 0)
        lscat_error_clear();
    if (waited)
        *waited = w;
    log_trace("gate_taken taken=%d waited=%.3f", out->fd >= 0, w);
}

static pthread_mutex_t baton_mu = PTHREAD_MUTEX_INITIALIZER;
static int baton_fd = -1; /* held until released or the process exits; -2: released */

int gpulock_baton(const volatile int *stop)
{
    const char *path = getenv("LSCAT_GPU_BATON");
    if (!path || !*path)
        return 0;
    pthread_mutex_lock(&baton_mu);
    int rc = 0;
    if (baton_fd == -1) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        rc = fd < 0 ? lscat_error_set("cannot open the chunk turn '%s': %s", path,
                                      strerror(errno))
                    : take(fd, LOCK_EX, stop, -1, "(the chunk turn)");
        if (rc == 0)
            baton_fd = fd;
        else if (fd >= 0)
            close(fd);
    }
    pthread_mutex_unlock(&baton_mu);
    return rc;
}

void gpulock_baton_release(void)
{
    pthread_mutex_lock(&baton_mu);
    if (baton_fd >= 0) {
        flock(baton_fd, LOCK_UN);
        close(baton_fd);
    }
    baton_fd = -2;
    pthread_mutex_unlock(&baton_mu);
}
