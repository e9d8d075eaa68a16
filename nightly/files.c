/* File helpers for releases (files.h): hashing a folder's files, copying or linking trees into a
 * release, listing the releases in their order (by date, then .N). */
#include "nightly/files.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "nightly/release.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int nightly_file_hash(char out[65], int64_t *bytes_out, const char *path)
{
    struct sha256 c;
    unsigned char digest[32];
    char *chunk = xmalloc(1 << 20);
    int64_t total = 0;
    ssize_t n;
    int rc = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        free(chunk);
        return lscat_error_set("cannot open '%s': %s", path, strerror(errno));
    }
    sha256_init(&c);
    while ((n = read(fd, chunk, 1 << 20)) > 0) {
        sha256_update(&c, chunk, (size_t)n);
        total += n;
    }
    if (n < 0)
        rc = lscat_error_set("cannot read '%s': %s", path, strerror(errno));
    close(fd);
    free(chunk);
    sha256_final(&c, digest);
    sha256_to_hex(out, digest);
    *bytes_out = total;
    return rc;
}

static int skip_name(const char *name)
{
    return name[0] == '.' || fs_temp_pid(name) > 0;
}

static int scan_rec(struct nightly_files *f, const char *root, const char *rel)
{
    struct dirent **names = NULL;
    char *dir = rel[0] ? fs_join(root, rel) : xstrdup(root);
    int count = scandir(dir, &names, NULL, alphasort), rc = 0;
    if (count < 0)
        rc = lscat_error_set("cannot read folder '%s': %s", dir, strerror(errno));
    for (int i = 0; i < count; i++) {
        const char *nm = names[i]->d_name;
        char *r = rel[0] ? xasprintf("%s/%s", rel, nm) : xstrdup(nm);
        char *p = fs_join(root, r);
        struct stat st;
        if (rc == 0 && !skip_name(nm) && strcmp(r, "SHA256SUMS") && lstat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                rc = scan_rec(f, root, r);
            } else if (S_ISREG(st.st_mode)) {
                XGROW(f->v, f->n + 1, f->cap);
                struct nightly_file *e = &f->v[f->n];
                e->path = r;
                r = NULL;
                f->n++;
                rc = nightly_file_hash(e->sha256, &e->bytes, p);
            }
        }
        free(r);
        free(p);
        free(names[i]);
    }
    free(names);
    free(dir);
    return rc;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct nightly_file *)a)->path, ((const struct nightly_file *)b)->path);
}

int nightly_files_scan(struct nightly_files *out, const char *dir)
{
    *out = (struct nightly_files)NIGHTLY_FILES_INIT;
    int rc = scan_rec(out, dir, "");
    if (out->n)
        qsort(out->v, out->n, sizeof(*out->v), by_path);
    return rc;
}

int nightly_files_add(struct nightly_files *f, const char *dir, const char *rel)
{
    char *p = fs_join(dir, rel);
    XGROW(f->v, f->n + 1, f->cap);
    struct nightly_file *e = &f->v[f->n++];
    e->path = xstrdup(rel);
    int rc = nightly_file_hash(e->sha256, &e->bytes, p);
    free(p);
    qsort(f->v, f->n, sizeof(*f->v), by_path);
    return rc;
}

void nightly_files_release(struct nightly_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i].path);
    free(f->v);
    *f = (struct nightly_files)NIGHTLY_FILES_INIT;
}

int nightly_copy_file(const char *from, const char *to, int link_first)
{
    char chunk[65536];
    ssize_t n = 0;
    int rc = 0;
    if (link_first && link(from, to) == 0)
        return 0;
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0)
        rc = lscat_error_set("cannot copy '%s' to '%s': %s", from, to, strerror(errno));
    while (rc == 0 && (n = read(in, chunk, sizeof(chunk))) > 0)
        if (write(out, chunk, (size_t)n) != n)
            rc = lscat_error_set("cannot write '%s': %s", to, strerror(errno));
    if (rc == 0 && n < 0)
        rc = lscat_error_set("cannot read '%s': %s", from, strerror(errno));
    if (rc == 0 && fsync(out) < 0)
        rc = lscat_error_set("cannot sync '%s': %s", to, strerror(errno));
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return rc;
}

int nightly_copy_tree(const char *from, const char *to, int link_first)
{
    struct dirent **names = NULL;
    int rc = fs_mkdirs(to, 0755);
    int count = rc < 0 ? 0 : scandir(from, &names, NULL, alphasort);
    if (count < 0)
        rc = lscat_error_set("cannot read folder '%s': %s", from, strerror(errno));
    for (int i = 0; i < count; i++) {
        char *a = fs_join(from, names[i]->d_name), *b = fs_join(to, names[i]->d_name);
        struct stat st;
        if (rc == 0 && !skip_name(names[i]->d_name) && lstat(a, &st) == 0)
            rc = S_ISDIR(st.st_mode) ? nightly_copy_tree(a, b, link_first)
                 : S_ISREG(st.st_mode) ? nightly_copy_file(a, b, link_first) : 0;
        free(a);
        free(b);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int by_key(const void *a, const void *b)
{
    long long ka = 0, kb = 0;
    nightly_release_name(*(char *const *)a, &ka);
    nightly_release_name(*(char *const *)b, &kb);
    return (ka > kb) - (ka < kb);
}

int nightly_release_list(struct nightly_release_list *out, const char *dir)
{
    size_t cap = 0;
    out->names = NULL;
    out->n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : lscat_error_set("cannot read folder '%s': %s", dir,
                                                    strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!nightly_release_name(e->d_name, NULL))
            continue;
        char *rj = xasprintf("%s/%s/release.json", dir, e->d_name);
        if (fs_exists(rj)) {
            XGROW(out->names, out->n + 1, cap);
            out->names[out->n++] = xstrdup(e->d_name);
        }
        free(rj);
    }
    closedir(d);
    if (out->n)
        qsort(out->names, out->n, sizeof(*out->names), by_key);
    return 0;
}

void nightly_release_list_release(struct nightly_release_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    l->names = NULL;
    l->n = 0;
}
