/* File-system helpers: mkdir -p, atomic writes (write, fsync, rename), rm -rf, the clean-up of
 * temporaries that killed processes left behind, an atomic swap of two folders, UTC stamps. */
#include "common/fs.h"
#include "common/buf.h"

#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int fs_mkdirs(const char *path, unsigned mode)
{
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (p[0] && mkdir(p, mode) < 0 && errno != EEXIST) {
            rc = lscat_error_set("cannot create folder '%s': %s", p, strerror(errno));
            break;
        }
        *s = c;
        if (!c)
            break;
    }
    if (!rc && !fs_is_dir(path))
        rc = lscat_error_set("'%s' exists and is not a folder", path);
    free(p);
    return rc;
}

int fs_mkdirs_parent(const char *file_path)
{
    const char *slash = strrchr(file_path, '/');
    if (!slash || slash == file_path)
        return 0;
    char *dir = xstrndup(file_path, (size_t)(slash - file_path));
    int rc = fs_mkdirs(dir, 0755);
    free(dir);
    return rc;
}

int fs_write_atomic(const char *path, const void *data, size_t len)
{
    char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    int rc = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = lscat_error_set("cannot create '%s': %s", tmp, strerror(errno));
        goto done;
    }
    const char *p = data;
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, p + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = lscat_error_set("cannot write '%s': %s", tmp, strerror(errno));
            break;
        }
        off += (size_t)n;
    }
    if (!rc && fsync(fd) < 0)
        rc = lscat_error_set("cannot sync '%s': %s", tmp, strerror(errno));
    close(fd);
    if (!rc && rename(tmp, path) < 0)
        rc = lscat_error_set("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    if (rc)
        unlink(tmp);
done:
    free(tmp);
    return rc;
}

int fs_copy_atomic(const char *from, const char *to)
{
    struct buf b = BUF_INIT;
    int rc = buf_read_file(&b, from);
    if (rc == 0)
        rc = fs_write_atomic(to, b.data, b.len);
    buf_release(&b);
    return rc;
}

int fs_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int fs_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int remove_rec(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : lscat_error_set("cannot stat '%s': %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) < 0)
            return lscat_error_set("cannot remove '%s': %s", path, strerror(errno));
        return 0;
    }
    DIR *d = opendir(path);
    if (!d)
        return lscat_error_set("cannot open folder '%s': %s", path, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *child = fs_join(path, e->d_name);
        rc = remove_rec(child);
        free(child);
    }
    closedir(d);
    if (!rc && rmdir(path) < 0)
        rc = lscat_error_set("cannot remove folder '%s': %s", path, strerror(errno));
    return rc;
}

int fs_remove_tree(const char *path)
{
    if (!path[0] || !strcmp(path, "/") || strstr(path, ".."))
        return lscat_error_set("refusing to remove '%s'", path);
    return remove_rec(path);
}

int fs_pid_alive(long pid)
{
    if (pid <= 0 || pid > INT32_MAX)
        return 0;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

long fs_temp_pid(const char *name)
{
    const char *t = NULL;
    for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp."))
        t = p;
    if (!t || !t[5])
        return 0;
    long pid = 0;
    for (const char *d = t + 5; *d; d++) {
        if (*d < '0' || *d > '9' || pid > INT32_MAX)
            return 0;
        pid = pid * 10 + (*d - '0');
    }
    return pid;
}

static int remove_stale_in(const char *dir, int depth, int *removed)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT || errno == ENOTDIR ? 0
               : lscat_error_set("cannot open folder '%s': %s", dir, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        long pid = fs_temp_pid(e->d_name);
        char *path = NULL;
        if (pid && !fs_pid_alive(pid)) {
            path = fs_join(dir, e->d_name);
            if ((rc = remove_rec(path)) == 0)
                (*removed)++;
        } else if (!pid && depth > 0 && (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN)) {
            path = fs_join(dir, e->d_name);
            if (e->d_type == DT_DIR || fs_is_dir(path))
                rc = remove_stale_in(path, depth - 1, removed);
        }
        free(path);
    }
    closedir(d);
    return rc;
}

int fs_remove_stale_temps(const char *dir, int depth)
{
    int removed = 0;
    int rc = remove_stale_in(dir, depth, &removed);
    if (removed > 0) {
        char n[16];
        snprintf(n, sizeof(n), "%d", removed);
        log_event(LOG_INFO, "stale_temporaries_removed", "folder", dir, "count", n, NULL);
    }
    return rc < 0 ? lscat_error_wrap("cannot clean up the temporaries of killed runs in '%s'", dir)
                  : removed;
}

int fs_exchange(const char *a, const char *b)
{
    if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0)
        return 0;
    int e = errno;
    int rc = lscat_error_set("cannot swap '%s' and '%s': %s", a, b, strerror(e));
    errno = e; /* the caller tells "cannot here" (EINVAL, ENOSYS) from a failure */
    return rc;
}

char *fs_join(const char *a, const char *b)
{
    size_t la = strlen(a);
    while (la > 1 && a[la - 1] == '/')
        la--;
    while (*b == '/')
        b++;
    if (!la)
        return xstrdup(b);
    if (a[la - 1] == '/') /* the root folder */
        return xasprintf("/%s", b);
    return xasprintf("%.*s/%s", (int)la, a, b);
}

void fs_utc_now(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double fs_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
