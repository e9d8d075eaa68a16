/* Untrusted archive extraction (see extract.h). Entries are never extracted by libarchive
 * onto the disk: each kept entry's bytes are read into memory (capped), hashed, written once
 * as a blob through a temporary name, and hard-linked under the tree folder by a path this
 * module checked itself. So a hostile archive can only waste bounded CPU. */
#include "harvest/extract.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void extract_result_init(struct extract_result *r)
{
    memset(r, 0, sizeof(*r));
}

void extract_result_release(struct extract_result *r)
{
    for (size_t i = 0; i < r->nfiles; i++)
        free(r->files[i].path);
    for (size_t i = 0; i < r->nrefused; i++)
        free(r->refused[i].path);
    free(r->files);
    free(r->refused);
    memset(r, 0, sizeof(*r));
}

const char *extract_kind(const char *path)
{
    static const struct { const char *ext, *kind; } exts[] = {
        { "cu", "cuda" },   { "cuh", "cuda" },  { "cut", "cuda" },   { "c", "c" },
        { "cc", "cpp" },    { "cpp", "cpp" },   { "cxx", "cpp" },    { "c++", "cpp" },
        { "h", "header" },  { "hh", "header" }, { "hpp", "header" }, { "hxx", "header" },
        { "h++", "header" }, { "inl", "header" }, { "inc", "header" }, { "ipp", "header" },
        { "tpp", "header" }, { "tcc", "header" }, { "cmake", "build" }, { "mk", "build" },
    };
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!strcmp(base, "Makefile") || !strcmp(base, "makefile") || !strcmp(base, "GNUmakefile") ||
        !strcmp(base, "CMakeLists.txt"))
        return "build";
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        return NULL;
    for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
        if (!strcasecmp(dot + 1, exts[i].ext))
            return exts[i].kind;
    return NULL;
}

int extract_is_license_file(const char *rel)
{
    static const char *const names[] = { "license", "licence", "copying", "unlicense", NULL };
    if (strchr(rel, '/'))
        return 0;
    for (int i = 0; names[i]; i++) {
        size_t n = strlen(names[i]);
        if (!strncasecmp(rel, names[i], n) && (rel[n] == 0 || rel[n] == '.' || rel[n] == '-'))
            return 1;
    }
    return 0;
}

const char *extract_license_spdx(const char *text, size_t len)
{
    static const struct { const char *a, *b, *spdx; } rules[] = {
        { "GNU AFFERO GENERAL PUBLIC LICENSE", "Version 3", "AGPL-3.0" },
        { "GNU LESSER GENERAL PUBLIC LICENSE", "Version 3", "LGPL-3.0" },
        { "GNU LESSER GENERAL PUBLIC LICENSE", "Version 2.1", "LGPL-2.1" },
        { "GNU GENERAL PUBLIC LICENSE", "Version 3", "GPL-3.0" },
        { "GNU GENERAL PUBLIC LICENSE", "Version 2", "GPL-2.0" },
        { "Apache License", "Version 2.0", "Apache-2.0" },
        { "Mozilla Public License", "2.0", "MPL-2.0" },
        { "Boost Software License", "1.0", "BSL-1.0" },
        { "free and unencumbered software released into the public domain", "", "Unlicense" },
        { "Permission is hereby granted, free of charge", "", "MIT" },
        { "Redistribution and use in source and binary forms", "Neither the name",
          "BSD-3-Clause" },
        { "Redistribution and use in source and binary forms", "", "BSD-2-Clause" },
    };
    char *t = xstrndup(text, len);
    const char *found = "NOASSERTION";
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
        if (strcasestr(t, rules[i].a) && (!rules[i].b[0] || strcasestr(t, rules[i].b))) {
            found = rules[i].spdx;
            break;
        }
    free(t);
    return found;
}

const char *extract_check_path(char *out, size_t out_size, const char *path, int strip_top)
{
    struct buf b = BUF_INIT;
    const char *reason = NULL;
    if (!path || !*path)
        return "unreadable";
    if (path[0] == '/')
        return "absolute_path";
    if (strchr(path, '\\'))
        return "backslash";
    if (strlen(path) > 1 && path[1] == ':' && isalpha((unsigned char)path[0]))
        return "absolute_path"; /* C:... */
    const char *p = path;
    if (strip_top && strchr(p, '/')) {
        size_t n = strcspn(p, "/");
        if (n == 2 && !strncmp(p, "..", 2))
            return "dot_dot";
        p += n + 1;
    }
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 2 && !strncmp(p, "..", 2)) {
            reason = "dot_dot";
            break;
        }
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            if (b.len)
                buf_addch(&b, '/');
            buf_add(&b, p, n);
        }
        p += n;
        if (*p == '/')
            p++;
    }
    if (!reason && b.len == 0)
        reason = "unreadable";
    if (!reason && b.len >= out_size)
        reason = "unreadable";
    if (!reason)
        memcpy(out, b.data, b.len + 1);
    buf_release(&b);
    return reason;
}

static void refuse(struct extract_result *r, const char *path, const char *reason)
{
    XGROW(r->refused, r->nrefused + 1, r->refused_cap);
    r->refused[r->nrefused].path = xstrndup(path ? path : "", 1000);
    r->refused[r->nrefused].reason = reason;
    r->nrefused++;
}

/* Write through a temporary name and rename, read-only. No fsync per file (thousands per
 * repository): fetch syncs the file system once before it commits the repository. */
static int write_blob(const char *path, const struct buf *data)
{
    char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
    int rc = 0;
    if (fd < 0 || write(fd, data->data, data->len) != (ssize_t)data->len)
        rc = lscat_error_set("cannot write '%s': %s", tmp, strerror(errno));
    if (fd >= 0 && close(fd) < 0 && rc == 0)
        rc = lscat_error_set("cannot write '%s': %s", tmp, strerror(errno));
    if (rc == 0 && rename(tmp, path) < 0)
        rc = lscat_error_set("cannot rename '%s': %s", tmp, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* Store `data` as a blob and link it into the tree at rel. */
static int keep(struct extract_result *r, const char *work_dir, const char *tree_dir,
                const char *rel, const char *kind, const struct buf *data)
{
    char sha[65];
    sha256_hex(sha, data->data, data->len);
    char *blob = xasprintf("%s/blobs/%.2s/%s", work_dir, sha, sha);
    char *dst = xasprintf("%s/%s", tree_dir, rel);
    int rc = 0;
    struct stat st;
    if (stat(blob, &st) < 0 || st.st_size != (off_t)data->len) {
        if ((rc = fs_mkdirs_parent(blob)) < 0 || (rc = write_blob(blob, data)) < 0)
            goto done;
        r->blobs_new++;
    }
    if ((rc = fs_mkdirs_parent(dst)) < 0)
        goto done;
    unlink(dst); /* a duplicate path in the archive: the last one wins */
    if (link(blob, dst) < 0) {
        if ((rc = fs_write_atomic(dst, data->data, data->len)) < 0)
            goto done;
        chmod(dst, 0444);
    }
    for (size_t i = 0; i < r->nfiles; i++)
        if (!strcmp(r->files[i].path, rel)) { /* replace the duplicate's row */
            r->bytes_kept -= r->files[i].size_bytes;
            free(r->files[i].path);
            r->files[i] = r->files[--r->nfiles];
            break;
        }
    XGROW(r->files, r->nfiles + 1, r->files_cap);
    struct extract_file *f = &r->files[r->nfiles++];
    f->path = xstrdup(rel);
    memcpy(f->sha256, sha, sizeof(sha));
    f->size_bytes = (int64_t)data->len;
    f->kind = kind;
    r->bytes_kept += (int64_t)data->len;
done:
    free(blob);
    free(dst);
    return rc;
}

static const char *type_refusal(mode_t type)
{
    if (type == AE_IFLNK)
        return "symlink";
    if (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFIFO || type == AE_IFSOCK)
        return "device";
    return NULL;
}

/* Read one entry's data into b, at most max+1 bytes. Returns 0, 1 when over max, <0 on error. */
static int read_entry(struct archive *a, struct buf *b, int64_t max, int64_t *inflated)
{
    char chunk[65536];
    buf_reset(b);
    for (;;) {
        la_ssize_t n = archive_read_data(a, chunk, sizeof(chunk));
        if (n < 0)
            return LSCAT_ERR;
        if (n == 0)
            return 0;
        *inflated += n;
        if ((int64_t)(b->len + (size_t)n) > max)
            return 1;
        buf_add(b, chunk, (size_t)n);
    }
}

/* One archive entry: checks, caps, keep. Returns 0, 1 to stop (a cap), <0 on a store error. */
static int one_entry(struct extract_result *r, struct archive *a, struct archive_entry *e,
                     int strip_top, const char *work_dir, const char *tree_dir,
                     const struct extract_limits *lim, double archive_bytes, struct buf *data)
{
    const char *raw = archive_entry_pathname(e);
    char rel[4096];
    if (++r->entries > lim->max_entries) {
        refuse(r, raw, "entry_cap");
        return 1;
    }
    mode_t type = archive_entry_filetype(e);
    if (type == AE_IFDIR)
        return 0;
    const char *why = extract_check_path(rel, sizeof(rel), raw, strip_top);
    if (why) {
        refuse(r, raw, why);
        return 0;
    }
    why = archive_entry_hardlink(e) ? "hardlink" : type_refusal(type);
    if (why) {
        refuse(r, rel, why);
        return 0;
    }
    const char *kind = extract_kind(rel);
    if (type == AE_IFREG && !kind && !r->license_spdx && extract_is_license_file(rel)) {
        if (read_entry(a, data, 1 << 16, &r->bytes_inflated) == 0)
            r->license_spdx = extract_license_spdx(data->data, data->len);
        return 0;
    }
    if (!kind || type != AE_IFREG)
        return 0;
    if (archive_entry_size_is_set(e) && archive_entry_size(e) > lim->max_file_bytes) {
        refuse(r, rel, "too_large");
        return 0;
    }
    int rc = read_entry(a, data, lim->max_file_bytes, &r->bytes_inflated);
    if (r->bytes_inflated > lim->max_ratio * archive_bytes + (1 << 20)) {
        refuse(r, rel, "ratio_cap");
        return 1;
    }
    if (rc < 0) {
        refuse(r, rel, "unreadable"); /* a fatal state shows at the next header */
        return 0;
    }
    if (rc == 1) {
        refuse(r, rel, "too_large");
        return 0;
    }
    if (r->bytes_kept + (int64_t)data->len > lim->max_total_bytes) {
        refuse(r, rel, "total_cap");
        return 1;
    }
    return keep(r, work_dir, tree_dir, rel, kind, data) < 0 ? -1 : 0;
}

int extract_archive(struct extract_result *out, const char *archive_path, int strip_top,
                    const char *work_dir, const char *tree_dir, const struct extract_limits *lim)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    struct buf data = BUF_INIT;
    struct stat st;
    int rc = 0;
    archive_read_support_format_zip(a);
    archive_read_support_format_tar(a);
    archive_read_support_filter_gzip(a);
    if (stat(archive_path, &st) < 0 || archive_read_open_filename(a, archive_path, 1 << 16)) {
        rc = lscat_error_setc(LSCAT_EINVALID, "cannot open archive '%s': %s", archive_path,
                              archive_error_string(a) ? archive_error_string(a)
                                                      : strerror(errno));
        goto done;
    }
    if ((rc = fs_mkdirs(tree_dir, 0755)) < 0)
        goto done;
    for (;;) {
        int h = archive_read_next_header(a, &e);
        if (h == ARCHIVE_EOF)
            break;
        if (h == ARCHIVE_FATAL) {
            if (out->entries == 0)
                rc = lscat_error_setc(LSCAT_EINVALID, "not a readable archive: %s",
                                      archive_error_string(a));
            else {
                refuse(out, "(rest of archive)", "unreadable");
                out->aborted = 1;
            }
            break;
        }
        if (h == ARCHIVE_RETRY)
            continue;
        int s = one_entry(out, a, e, strip_top, work_dir, tree_dir, lim, (double)st.st_size,
                          &data);
        if (s < 0) {
            rc = s;
            break;
        }
        if (s == 1) {
            out->aborted = 1;
            break;
        }
    }
done:
    archive_read_free(a);
    buf_release(&data);
    return rc;
}

/* ---------------------------------------------------------------- a checked-out folder */

static int walk(struct extract_result *r, const char *root, const char *rel, const char *work_dir,
                const char *tree_dir, const struct extract_limits *lim, struct buf *data)
{
    char *dir = rel[0] ? xasprintf("%s/%s", root, rel) : xstrdup(root);
    DIR *d = opendir(dir);
    struct dirent *de;
    int rc = 0;
    if (!d) {
        free(dir);
        return 0;
    }
    while (rc == 0 && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
            (!rel[0] && !strcmp(de->d_name, ".git")))
            continue;
        char *sub = rel[0] ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
        char *full = xasprintf("%s/%s", root, sub);
        struct stat st;
        if (++r->entries > lim->max_entries) {
            refuse(r, sub, "entry_cap");
            r->aborted = 1;
            rc = 1;
        } else if (lstat(full, &st) < 0) {
            refuse(r, sub, "unreadable");
        } else if (S_ISLNK(st.st_mode)) {
            refuse(r, sub, "symlink");
        } else if (S_ISDIR(st.st_mode)) {
            rc = walk(r, root, sub, work_dir, tree_dir, lim, data);
        } else if (!S_ISREG(st.st_mode)) {
            refuse(r, sub, "device");
        } else if (!extract_kind(sub) && !r->license_spdx && extract_is_license_file(sub) &&
                   st.st_size < (1 << 16)) {
            buf_reset(data);
            if (buf_read_file(data, full) == 0)
                r->license_spdx = extract_license_spdx(data->data, data->len);
        } else if (extract_kind(sub)) {
            buf_reset(data);
            if (st.st_size > lim->max_file_bytes)
                refuse(r, sub, "too_large");
            else if (r->bytes_kept + st.st_size > lim->max_total_bytes) {
                refuse(r, sub, "total_cap");
                r->aborted = 1;
                rc = 1;
            } else if (buf_read_file(data, full) < 0)
                refuse(r, sub, "unreadable");
            else if (keep(r, work_dir, tree_dir, sub, extract_kind(sub), data) < 0)
                rc = LSCAT_ERR;
        }
        free(sub);
        free(full);
    }
    closedir(d);
    free(dir);
    return rc;
}

int extract_dir(struct extract_result *out, const char *src_dir, const char *work_dir,
                const char *tree_dir, const struct extract_limits *lim)
{
    struct buf data = BUF_INIT;
    int rc = fs_mkdirs(tree_dir, 0755);
    if (rc == 0)
        rc = walk(out, src_dir, "", work_dir, tree_dir, lim, &data);
    buf_release(&data);
    return rc < 0 ? rc : 0;
}
