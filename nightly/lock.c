/* The nightly lock (lock.h): flock on "<store>.nightly.lock" plus a holder line. The flock is
 * what excludes a second run (the kernel releases it with its holder, so there is no stale-pid
 * guessing and no race between two runs taking over); the line is for people: who holds it, and
 * who held it when a night died without clearing it. */
#include "nightly/lock.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* The holder line of an open lock file ("" when empty), trailing newline removed. */
static void read_holder(struct buf *out, int fd)
{
    char chunk[512];
    ssize_t n;
    if (lseek(fd, 0, SEEK_SET) < 0)
        return;
    while ((n = read(fd, chunk, sizeof(chunk))) > 0 && out->len < 4096)
        buf_add(out, chunk, (size_t)n);
    buf_rtrim(out);
}

static int write_holder(int fd, const char *path)
{
    char host[256] = "unknown", now[32];
    struct buf line = BUF_INIT;
    int rc = 0;
    if (gethostname(host, sizeof(host)) < 0)
        snprintf(host, sizeof(host), "unknown");
    host[sizeof(host) - 1] = '\0';
    fs_utc_now(now);
    buf_addf(&line, "pid %ld on %s since %s\n", (long)getpid(), host, now);
    if (ftruncate(fd, 0) < 0 || pwrite(fd, line.data, line.len, 0) != (ssize_t)line.len ||
        fsync(fd) < 0)
        rc = lscat_error_set("cannot write the nightly lock '%s': %s", path, strerror(errno));
    buf_release(&line);
    return rc;
}

int nightly_lock_acquire(struct nightly_lock *lock, const char *db_path)
{
    struct buf holder = BUF_INIT;
    int rc = 0;
    lock->path = xasprintf("%s.nightly.lock", db_path);
    if (fs_mkdirs_parent(lock->path) < 0)
        return LSCAT_ERR;
    lock->fd = open(lock->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock->fd < 0) {
        rc = lscat_error_set("cannot open the nightly lock '%s': %s", lock->path, strerror(errno));
        goto done;
    }
    if (flock(lock->fd, LOCK_EX | LOCK_NB) < 0) {
        int busy = errno == EWOULDBLOCK;
        if (busy)
            read_holder(&holder, lock->fd);
        rc = busy ? lscat_error_setc(LSCAT_EBUSY, "another lscat nightly is running on this store"
                                                  " (%s; lock %s): this run did nothing",
                                     holder.len ? holder.data : "holder unknown", lock->path)
                  : lscat_error_set("cannot lock '%s': %s", lock->path, strerror(errno));
        close(lock->fd);
        lock->fd = -1;
        goto done;
    }
    read_holder(&holder, lock->fd);
    if (holder.len)
        log_warn("nightly: took over the lock of a night that did not end (%s): that process "
                 "is gone (killed or crashed); its stages resume where they stopped",
                 holder.data);
    if ((rc = write_holder(lock->fd, lock->path)) < 0)
        nightly_lock_release(lock);
done:
    buf_release(&holder);
    return rc;
}

void nightly_lock_release(struct nightly_lock *lock)
{
    if (lock->fd >= 0) {
        if (ftruncate(lock->fd, 0) < 0)
            log_warn("nightly: cannot clear the lock '%s': %s", lock->path, strerror(errno));
        close(lock->fd);
    }
    lock->fd = -1;
    free(lock->path);
    lock->path = NULL;
}
