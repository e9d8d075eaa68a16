/* Export folders put in place with one rename (or an atomic exchange) and the clean-up after
 * killed exports: see place.h. The temporaries are named "<...>.tmp.<pid>" like every lscat
 * temporary (common/fs.h), so whose they are and whether their process lives is known. */
#include "dataset/place.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "<parent>" and "<name>" of out, without trailing slashes; NULL name for "/" or "". */
static void split(char **parent, char **name, const char *out)
{
    char *p = xstrdup(out);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    char *slash = strrchr(p, '/');
    if (!slash) {
        *parent = xstrdup(".");
        *name = xstrdup(p);
    } else {
        *name = slash[1] ? xstrdup(slash + 1) : NULL;
        *parent = slash == p ? xstrdup("/") : xstrndup(p, (size_t)(slash - p));
    }
    if (*name && (!**name || !strcmp(*name, ".") || !strcmp(*name, ".."))) {
        free(*name);
        *name = NULL;
    }
    free(p);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int export_file(const char *name)
{
    return ends_with(name, ".parquet") || ends_with(name, ".csv") || ends_with(name, ".csv.gz") ||
           !strcmp(name, "README.md") || !strcmp(name, "columns.md") ||
           !strcmp(name, "SHA256SUMS") || strstr(name, ".tmp") != NULL;
}

/* Move the entries of `from` that are not export files and that `to` lacks into `to`. */
static int carry_over(const char *from, const char *to)
{
    DIR *d = opendir(from);
    int rc = 0;
    struct dirent *e;
    if (!d)
        return lscat_error_set("cannot open folder '%s': %s", from, strerror(errno));
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || export_file(e->d_name))
            continue;
        char *src = fs_join(from, e->d_name), *dst = fs_join(to, e->d_name);
        if (!fs_exists(dst) && rename(src, dst) < 0)
            rc = lscat_error_set("cannot move '%s' to '%s': %s", src, dst, strerror(errno));
        free(src);
        free(dst);
    }
    closedir(d);
    return rc;
}

/* Put the old folder (renamed aside, or exchanged out) to rest: what is not an export file goes
 * into the new one, the rest is removed. */
static int retire(const char *old, const char *out)
{
    int rc = carry_over(old, out);
    if (rc == 0)
        rc = fs_remove_tree(old);
    return rc;
}

/* Temporary folders of killed exports to <parent>/<name>: ".<name>.export.tmp.<pid>" (a new
 * export never finished, or an old one exchanged out and not yet retired) and
 * ".<name>.export-old.tmp.<pid>" (an old one renamed aside). */
static int clean_stale(const char *parent, const char *name, const char *out)
{
    char *pre_new = xasprintf(".%s.export.tmp.", name), *pre_old = xasprintf(".%s.export-old.tmp.", name);
    DIR *d = opendir(parent);
    struct dirent *e;
    int rc = 0;
    while (d && rc == 0 && (e = readdir(d))) {
        int is_new = !strncmp(e->d_name, pre_new, strlen(pre_new));
        int is_old = !strncmp(e->d_name, pre_old, strlen(pre_old));
        long pid = fs_temp_pid(e->d_name);
        if ((!is_new && !is_old) || !pid || fs_pid_alive(pid))
            continue;
        char *path = fs_join(parent, e->d_name);
        if (is_old && !fs_exists(out)) /* killed between its two renames: the old one returns */
            rc = rename(path, out) < 0 ? lscat_error_set("cannot rename '%s' back to '%s': %s",
                                                         path, out, strerror(errno)) : 0;
        else
            rc = fs_is_dir(out) ? retire(path, out) : fs_remove_tree(path);
        if (rc == 0)
            log_event(LOG_INFO, "stale_temporaries_removed", "folder", path, "count", "1", NULL);
        free(path);
    }
    if (d)
        closedir(d);
    free(pre_new);
    free(pre_old);
    return rc;
}

int place_begin(char **tmp_out, const char *out)
{
    char *parent = NULL, *name = NULL;
    int rc = 0;
    *tmp_out = NULL;
    split(&parent, &name, out);
    if (!name)
        rc = lscat_error_setc(LSCAT_EINVALID, "--out '%s': name a folder for the export (its "
                              "files replace the folder as a whole)", out);
    else if (fs_exists(out) && !fs_is_dir(out))
        rc = lscat_error_setc(LSCAT_EINVALID, "--out '%s' exists and is not a folder", out);
    if (rc == 0)
        rc = fs_mkdirs(parent, 0755);
    if (rc == 0)
        rc = clean_stale(parent, name, out);
    if (rc == 0) {
        char *base = xasprintf(".%s.export.tmp.%ld", name, (long)getpid());
        *tmp_out = fs_join(parent, base);
        free(base);
        if (fs_exists(*tmp_out))
            rc = fs_remove_tree(*tmp_out);
        if (rc == 0)
            rc = fs_mkdirs(*tmp_out, 0755);
    }
    free(parent);
    free(name);
    return rc;
}

int place_finish(const char *tmp, const char *out)
{
    if (!fs_exists(out))
        return rename(tmp, out) < 0 ? lscat_error_set("cannot rename '%s' to '%s': %s", tmp, out,
                                                      strerror(errno)) : 0;
    if (fs_exchange(tmp, out) == 0) /* tmp now holds the old export */
        return retire(tmp, out);
    if (errno != EINVAL && errno != ENOSYS)
        return LSCAT_ERR;
    char *parent = NULL, *name = NULL;
    split(&parent, &name, out);
    char *base = xasprintf(".%s.export-old.tmp.%ld", name, (long)getpid());
    char *old = fs_join(parent, base);
    int rc = 0;
    if (rename(out, old) < 0)
        rc = lscat_error_set("cannot rename '%s' to '%s': %s", out, old, strerror(errno));
    else if (rename(tmp, out) < 0)
        rc = lscat_error_set("cannot rename '%s' to '%s': %s", tmp, out, strerror(errno));
    else
        rc = retire(old, out);
    free(parent);
    free(name);
    free(base);
    free(old);
    return rc;
}

void place_abort(const char *tmp)
{
    if (tmp && fs_exists(tmp))
        fs_remove_tree(tmp);
}
