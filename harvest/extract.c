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

/* A normalised path the file system (and everything after us) can hold: each name at most
 * 255 bytes (NAME_MAX), the whole at most EXTRACT_MAX_PATH_BYTES and EXTRACT_MAX_DEPTH
 * folders deep. Returns the refusal reason or NULL. */
static const char *path_limits(const char *rel)
{
    size_t depth = 0;
    for (const char *p = rel; *p; depth++) {
        size_t n = strcspn(p, "/");
        if (n > EXTRACT_MAX_NAME_BYTES)
            return "name_too_long";
        p += n + (p[n] == '/');
    }
    if (depth > EXTRACT_MAX_DEPTH + 1 || strlen(rel) > EXTRACT_MAX_PATH_BYTES)
        return "too_deep";
    return NULL;
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
    if (!reason)
        reason = path_limits(b.data);
    if (!reason && b.len >= out_size)
        reason = "too_deep";
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
 * repository): fetch syncs the file system once before it commits the repository. On failure
 * errno still says why (place() tells the archive's names from our disk by it). */
static int write_blob(const char *path, const struct buf *data)
{
    char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
    int rc = 0, e = 0;
    if (fd < 0 || write(fd, data->data, data->len) != (ssize_t)data->len)
        e = errno ? errno : EIO;
    if (fd >= 0 && close(fd) < 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) < 0)
        e = errno;
    if (e) {
        unlink(tmp);
        rc = lscat_error_set("cannot write '%s': %s", path, strerror(e));
    }
    free(tmp);
    errno = e;
    return rc;
}

/* errno values that say a name from the archive cannot be made in the tree (too long, a file
 * where a folder must go, bytes the file system refuses): the archive's fault, not our disk's. */
static int name_errno(int e)
{
    return e == ENAMETOOLONG || e == ENOTDIR || e == EEXIST || e == EISDIR || e == EILSEQ ||
           e == EINVAL || e == ELOOP;
}

/* Create the folders of `rel` under tree_dir: 0, 1 when the archive's names cannot be made
 * (a file in the way, a name the file system refuses), <0 on a local failure. */
static int make_parents(const char *tree_dir, const char *rel)
{
    char *p = xasprintf("%s/%s", tree_dir, rel);
    int rc = 0;
    for (char *s = p + strlen(tree_dir) + 1; rc == 0 && (s = strchr(s, '/')); *s++ = '/') {
        *s = 0;
        if (mkdir(p, 0755) == 0)
            continue;
        if (errno == EEXIST)
            rc = fs_is_dir(p) ? 0 : 1;
        else if (name_errno(errno) || errno == EMLINK)
            rc = 1;
        else
            rc = lscat_error_set("cannot create folder '%s': %s", p, strerror(errno));
    }
    free(p);
    return rc;
}

/* Link the blob at `rel` in the tree (a copy where a link cannot be made: another file system,
 * a blob linked 65,000 times). 0, 1 when the name cannot be made here, <0 on a local failure.
 * Folders are made only when the first link says they are missing. */
static int place(const char *tree_dir, const char *rel, const char *blob, const struct buf *data)
{
    char *dst = xasprintf("%s/%s", tree_dir, rel);
    int rc = 0, made = 0;
    while (link(blob, dst) < 0) {
        int e = errno;
        if (e == ENOENT && !made++) {
            if ((rc = make_parents(tree_dir, rel)) != 0)
                break;
            continue;
        }
        if (name_errno(e)) {
            rc = 1;
            break;
        }
        rc = write_blob(dst, data);
        if (rc < 0 && name_errno(errno))
            rc = 1;
        break;
    }
    free(dst);
    return rc;
}

/* Store `data` as a blob and link it into the tree at rel; a name the tree cannot hold is
 * refused as "unrepresentable". 0, or <0 on a local failure. */
static int keep(struct extract_result *r, const char *work_dir, const char *tree_dir,
                const char *rel, const char *kind, const struct buf *data)
{
    char sha[65];
    sha256_hex(sha, data->data, data->len);
    char *blob = xasprintf("%s/blobs/%.2s/%s", work_dir, sha, sha);
    int rc = 0;
    struct stat st;
    if (stat(blob, &st) < 0 || st.st_size != (off_t)data->len) {
        if ((rc = write_blob(blob, data)) < 0 && errno == ENOENT &&
            (rc = fs_mkdirs_parent(blob)) == 0)
            rc = write_blob(blob, data);
        if (rc < 0)
            goto done;
        r->blobs_new++;
    }
    if ((rc = place(tree_dir, rel, blob, data)) != 0) {
        if (rc == 1)
            refuse(r, rel, "unrepresentable");
        goto done;
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
    return rc < 0 ? rc : 0;
}

static const char *type_refusal(mode_t type)
{
    if (type == AE_IFLNK)
        return "symlink";
    if (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFIFO || type == AE_IFSOCK)
        return "device";
    return NULL;
}

/* ---------------------------------------------------------------- paths seen in an archive */

/* An open-addressing set of the paths kept so far, so a second copy of a path is found in
 * constant time (a list search made a 200,000-entry archive take minutes). */
struct pathset {
    char **slots;
    size_t n, cap; /* cap: a power of two, or 0 */
};

static size_t path_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

static void pathset_grow(struct pathset *ps)
{
    size_t cap = ps->cap ? ps->cap * 2 : 1024;
    char **slots = xcalloc(cap, sizeof(*slots));
    for (size_t i = 0; i < ps->cap; i++) {
        if (!ps->slots[i])
            continue;
        size_t j = path_hash(ps->slots[i]) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = ps->slots[i];
    }
    free(ps->slots);
    ps->slots = slots;
    ps->cap = cap;
}

/* Add `path`; 1 when it is new, 0 when it was there already. */
static int pathset_add(struct pathset *ps, const char *path)
{
    if (2 * (ps->n + 1) > ps->cap)
        pathset_grow(ps);
    size_t j = path_hash(path) & (ps->cap - 1);
    for (; ps->slots[j]; j = (j + 1) & (ps->cap - 1))
        if (!strcmp(ps->slots[j], path))
            return 0;
    ps->slots[j] = xstrdup(path);
    ps->n++;
    return 1;
}

static void pathset_release(struct pathset *ps)
{
    for (size_t i = 0; i < ps->cap; i++)
        free(ps->slots[i]);
    free(ps->slots);
    memset(ps, 0, sizeof(*ps));
}

/* ---------------------------------------------------------------- an archive */

/* One archive being extracted: where things go, the caps, the paths kept so far. */
struct xarchive {
    struct extract_result *r;
    struct archive *a;
    int strip_top;
    const char *work_dir, *tree_dir;
    const struct extract_limits *lim;
    double archive_bytes;
    struct buf data;
    struct pathset seen;
};

enum { READ_OK, READ_OVER, READ_BAD, READ_DAMAGED };           /* read_entry */
enum { ENTRY_NEXT = 0, ENTRY_STOP = 1, ENTRY_DAMAGED = 2 };    /* one_entry, or <0 */

/* Read one entry's data into b, at most max+1 bytes: READ_OK, READ_OVER (over max), READ_BAD
 * (this entry cannot be read: an unsupported method, a bad checksum) or READ_DAMAGED (the
 * archive cannot be read on: cut short, corrupt). */
static int read_entry(struct archive *a, struct buf *b, int64_t max, int64_t *inflated)
{
    char chunk[65536];
    buf_reset(b);
    for (;;) {
        la_ssize_t n = archive_read_data(a, chunk, sizeof(chunk));
        if (n < 0)
            return n == ARCHIVE_FATAL ? READ_DAMAGED : READ_BAD;
        if (n == 0)
            return READ_OK;
        *inflated += n;
        if ((int64_t)(b->len + (size_t)n) > max)
            return READ_OVER;
        buf_add(b, chunk, (size_t)n);
    }
}

/* A kept kind's entry: caps, duplicates, keep. */
static int kept_entry(struct xarchive *x, struct archive_entry *e, const char *rel,
                      const char *kind)
{
    struct extract_result *r = x->r;
    if (!pathset_add(&x->seen, rel)) { /* the first copy stays; the others are recorded */
        refuse(r, rel, "duplicate");
        return ENTRY_NEXT;
    }
    if (archive_entry_size_is_set(e) && archive_entry_size(e) > x->lim->max_file_bytes) {
        refuse(r, rel, "too_large");
        return ENTRY_NEXT;
    }
    int s = read_entry(x->a, &x->data, x->lim->max_file_bytes, &r->bytes_inflated);
    if (s == READ_DAMAGED)
        return ENTRY_DAMAGED;
    if (r->bytes_inflated > x->lim->max_ratio * x->archive_bytes + (1 << 20)) {
        refuse(r, rel, "ratio_cap");
        return ENTRY_STOP;
    }
    if (s != READ_OK) {
        refuse(r, rel, s == READ_OVER ? "too_large" : "unreadable");
        return ENTRY_NEXT;
    }
    if (r->bytes_kept + (int64_t)x->data.len > x->lim->max_total_bytes) {
        refuse(r, rel, "total_cap");
        return ENTRY_STOP;
    }
    return keep(r, x->work_dir, x->tree_dir, rel, kind, &x->data);
}

/* One archive entry: ENTRY_NEXT, ENTRY_STOP (a cap), ENTRY_DAMAGED, or <0 on a local error. */
static int one_entry(struct xarchive *x, struct archive_entry *e)
{
    struct extract_result *r = x->r;
    const char *raw = archive_entry_pathname(e);
    char rel[4096];
    if (++r->entries > x->lim->max_entries) {
        refuse(r, raw, "entry_cap");
        return ENTRY_STOP;
    }
    mode_t type = archive_entry_filetype(e);
    if (type == AE_IFDIR)
        return ENTRY_NEXT;
    const char *why = extract_check_path(rel, sizeof(rel), raw, x->strip_top);
    if (why) {
        refuse(r, raw, why);
        return ENTRY_NEXT;
    }
    why = archive_entry_hardlink(e) ? "hardlink" : type_refusal(type);
    if (why) {
        refuse(r, rel, why);
        return ENTRY_NEXT;
    }
    const char *kind = extract_kind(rel);
    if (type == AE_IFREG && !kind && !r->license_spdx && extract_is_license_file(rel)) {
        int s = read_entry(x->a, &x->data, 1 << 16, &r->bytes_inflated);
        if (s == READ_OK)
            r->license_spdx = extract_license_spdx(x->data.data, x->data.len);
        return s == READ_DAMAGED ? ENTRY_DAMAGED : ENTRY_NEXT;
    }
    if (!kind || type != AE_IFREG)
        return ENTRY_NEXT;
    return kept_entry(x, e, rel, kind);
}

/* A zip (it starts with a local header) must end with its end-of-central-directory record;
 * one without was cut short (a download that stopped early, a body shorter than promised).
 * libarchive would read such a file as a stream up to the cut and call it whole. */
static int check_zip_end(const char *path, const struct stat *st)
{
    unsigned char head[4], tail[65536 + 22];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = 0, found = 0;
    if (fd < 0)
        return lscat_error_setc(LSCAT_EINVALID, "cannot open archive '%s': %s", path,
                                strerror(errno));
    off_t n = st->st_size < (off_t)sizeof(tail) ? st->st_size : (off_t)sizeof(tail);
    if (pread(fd, head, 4, 0) == 4 && !memcmp(head, "PK\3\4", 4) &&
        pread(fd, tail, (size_t)n, st->st_size - n) == (ssize_t)n) {
        for (off_t i = n - 22; i >= 0 && !found; i--)
            found = !memcmp(tail + i, "PK\5\6", 4) &&
                    i + 22 + (tail[i + 20] | tail[i + 21] << 8) <= n;
        if (!found)
            rc = lscat_error_setc(LSCAT_EINVALID, "zip '%s' is truncated: it has no end of "
                                                  "central directory record (%lld bytes)",
                                  path, (long long)st->st_size);
    }
    close(fd);
    return rc;
}

/* Open the archive: LSCAT_EINVALID (with why) when it is empty, cut short or not an archive. */
static int open_archive(struct xarchive *x, const char *path, struct stat *st)
{
    archive_read_support_format_zip(x->a);
    archive_read_support_format_tar(x->a);
    archive_read_support_filter_gzip(x->a);
    if (stat(path, st) < 0)
        return lscat_error_setc(LSCAT_EINVALID, "cannot open archive '%s': %s", path,
                                strerror(errno));
    if (st->st_size == 0)
        return lscat_error_setc(LSCAT_EINVALID, "empty archive '%s' (0 bytes)", path);
    int rc = check_zip_end(path, st);
    if (rc == 0 && archive_read_open_filename(x->a, path, 1 << 16))
        rc = lscat_error_setc(LSCAT_EINVALID, "cannot open archive '%s': %s", path,
                              archive_error_string(x->a) ? archive_error_string(x->a)
                                                         : strerror(errno));
    x->archive_bytes = (double)st->st_size;
    return rc;
}

static int damaged(const struct xarchive *x, const char *path)
{
    const char *why = archive_error_string(x->a) ? archive_error_string(x->a) : "read error";
    if (x->r->entries == 0)
        return lscat_error_setc(LSCAT_EINVALID, "not a readable archive: %s", why);
    return lscat_error_setc(LSCAT_EINVALID, "archive '%s' is truncated or damaged after %lld "
                                            "entries (%s)", path, (long long)x->r->entries, why);
}

int extract_archive(struct extract_result *out, const char *archive_path, int strip_top,
                    const char *work_dir, const char *tree_dir, const struct extract_limits *lim)
{
    struct xarchive x = { .r = out, .a = archive_read_new(), .strip_top = strip_top,
                          .work_dir = work_dir, .tree_dir = tree_dir, .lim = lim,
                          .data = BUF_INIT };
    struct archive_entry *e;
    struct stat st;
    int rc = open_archive(&x, archive_path, &st);
    if (rc < 0 || (rc = fs_mkdirs(tree_dir, 0755)) < 0)
        goto done;
    for (;;) {
        int h = archive_read_next_header(x.a, &e);
        if (h == ARCHIVE_EOF)
            break;
        if (h == ARCHIVE_RETRY)
            continue;
        int s = h == ARCHIVE_FATAL ? ENTRY_DAMAGED : one_entry(&x, e);
        if (s == ENTRY_DAMAGED) /* never a partial tree in place of a whole one */
            rc = damaged(&x, archive_path);
        else if (s < 0)
            rc = s;
        else if (s == ENTRY_STOP)
            out->aborted = 1;
        if (s != ENTRY_NEXT)
            break;
    }
done:
    archive_read_free(x.a);
    buf_release(&x.data);
    pathset_release(&x.seen);
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
        const char *why = NULL;
        if (++r->entries > lim->max_entries) {
            refuse(r, sub, "entry_cap");
            r->aborted = 1;
            rc = 1;
        } else if ((why = path_limits(sub))) {
            refuse(r, sub, why);
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
