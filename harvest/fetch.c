/* `harvest fetch`: pick the repositories that are due, download their zips in parallel (the
 * http module retries within the run), extract each safely, swap its tree in atomically and
 * record it in one transaction. Failures are final for 404/410/451 ('gone'); others are
 * retried on later runs after a growing delay (repos.next_attempt_at). Partial downloads
 * stay under <work>/archives as .part files and resume with Range on the next run. */
#include "harvest/fetch.h"

#include "harvest/extract.h"
#include "harvest/gitclone.h"
#include "harvest/repodb.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "store/store.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct cand {
    int64_t id;
    char *full_name;
    int64_t attempts;
    char *archive_path;
    char *url;
};

char *fetch_expand_url(const char *tmpl, const char *full_name)
{
    struct buf b = BUF_INIT;
    const char *slash = strchr(full_name, '/');
    size_t on = slash ? (size_t)(slash - full_name) : strlen(full_name);
    const char *name = slash ? slash + 1 : "";
    for (const char *p = tmpl; *p; p++) {
        if (!strncmp(p, "{owner}", 7)) {
            buf_add(&b, full_name, on);
            p += 6;
        } else if (!strncmp(p, "{name}", 6)) {
            buf_adds(&b, name);
            p += 5;
        } else if (!strncmp(p, "{full_name}", 11)) {
            buf_adds(&b, full_name);
            p += 10;
        } else
            buf_addch(&b, *p);
    }
    return buf_detach(&b, NULL);
}

int fetch_zip_commit(char out[41], const char *path)
{
    unsigned char tail[65536 + 22];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    int found = 0;
    out[0] = 0;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    off_t n = st.st_size < (off_t)sizeof(tail) ? st.st_size : (off_t)sizeof(tail);
    if (pread(fd, tail, (size_t)n, st.st_size - n) == (ssize_t)n) {
        for (off_t i = n - 22; i >= 0 && !found; i--) {
            if (tail[i] != 0x50 || tail[i + 1] != 0x4b || tail[i + 2] != 5 || tail[i + 3] != 6)
                continue;
            size_t clen = (size_t)(tail[i + 20] | tail[i + 21] << 8);
            if (clen != 40 || i + 22 + 40 > n)
                break;
            found = 1;
            for (int k = 0; k < 40 && found; k++)
                found = isxdigit(tail[i + 22 + k]) != 0;
            if (found) {
                memcpy(out, tail + i + 22, 40);
                out[40] = 0;
            }
        }
    }
    close(fd);
    return found;
}

static void time_plus(char out[32], double seconds)
{
    time_t t = time(NULL) + (time_t)seconds;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---------------------------------------------------------------- choosing repositories */

/* The repositories due now (id > after_id, at most max). */
static int load_batch(struct cand **out, size_t *n_out, struct store *s,
                      const struct fetch_options *o, int64_t after_id, int64_t max)
{
    char now[32], old[32];
    struct store_stmt *st = NULL;
    struct buf sql = BUF_INIT;
    size_t n = 0, cap = 0;
    struct cand *c = NULL;
    fs_utc_now(now);
    time_plus(old, -o->refresh_older_than_s);
    buf_adds(&sql, "SELECT id, full_name, fetch_attempts FROM repos WHERE id > ?1 AND ("
                   "fetch_status = 'pending' OR (fetch_status = 'failed' AND"
                   " (next_attempt_at IS NULL OR next_attempt_at <= ?2))");
    if (o->refresh_older_than_s > 0)
        buf_adds(&sql, " OR (fetch_status = 'fetched' AND fetched_at <= ?3 AND"
                       " pushed_at > fetched_at)");
    buf_adds(&sql, ")");
    if (o->nrepos > 0) /* a JSON array of names: no SQL built from user text */
        buf_adds(&sql, " AND full_name IN (SELECT value FROM json_each(?5))");
    buf_adds(&sql, " ORDER BY id LIMIT ?4");
    int rc = store_prepare(&st, s, sql.data);
    if (rc < 0)
        goto done;
    struct buf names = BUF_INIT;
    buf_addch(&names, '[');
    for (int i = 0; i < o->nrepos; i++) {
        if (i)
            buf_addch(&names, ',');
        buf_add_json_str(&names, o->repos[i], strlen(o->repos[i]));
    }
    buf_addch(&names, ']');
    rc = o->nrepos > 0 ? store_bind(st, "ittit", (int64_t)after_id, now, old, (int64_t)max,
                                    names.data)
                       : store_bind(st, "itti", (int64_t)after_id, now, old, (int64_t)max);
    buf_release(&names);
    while (rc >= 0 && (rc = store_step(st)) == STORE_ROW) {
        XGROW(c, n + 1, cap);
        c[n].id = store_col_int(st, 0);
        c[n].full_name = xstrdup(store_col_text(st, 1));
        c[n].attempts = store_col_int(st, 2);
        c[n].archive_path = NULL;
        c[n].url = NULL;
        n++;
    }
done:
    store_finalize(st);
    buf_release(&sql);
    *out = c;
    *n_out = n;
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- trees */

static int pid_alive(long pid)
{
    return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Remove temporary trees and clones left by killed runs (".tmp-<pid>-...", ".old-<pid>-...",
 * ".git-<pid>-...") whose process is gone. */
static void clean_stale(const char *trees)
{
    DIR *d = opendir(trees);
    struct dirent *de;
    if (!d)
        return;
    while ((de = readdir(d))) {
        long pid;
        if ((strncmp(de->d_name, ".tmp-", 5) && strncmp(de->d_name, ".old-", 5) &&
             strncmp(de->d_name, ".git-", 5)) ||
            sscanf(de->d_name + 5, "%ld", &pid) != 1 || pid_alive(pid))
            continue;
        char *p = xasprintf("%s/%s", trees, de->d_name);
        fs_remove_tree(p);
        free(p);
    }
    closedir(d);
}

static char *tmp_tree(const struct fetch_options *o, const char *full_name, const char *what)
{
    char *flat = xstrdup(full_name);
    *strchr(flat, '/') = '+';
    char *p = xasprintf("%s/trees/.%s-%ld-%s", o->work_dir, what, (long)getpid(), flat);
    free(flat);
    return p;
}

/* Put the new tree in place of the old one: rename old aside, rename new in, remove old. */
static int swap_tree(const struct fetch_options *o, const char *full_name, const char *tmp)
{
    char *final = xasprintf("%s/trees/%s", o->work_dir, full_name);
    char *old = tmp_tree(o, full_name, "old");
    int rc = fs_mkdirs_parent(final);
    if (rc == 0 && rename(final, old) < 0 && errno != ENOENT)
        rc = lscat_error_set("cannot move '%s' aside: %s", final, strerror(errno));
    if (rc == 0 && rename(tmp, final) < 0)
        rc = lscat_error_set("cannot rename '%s' to '%s': %s", tmp, final, strerror(errno));
    if (fs_exists(old))
        fs_remove_tree(old);
    free(final);
    free(old);
    return rc;
}

/* ---------------------------------------------------------------- recording */

struct got {
    const char *method;   /* "zip" or "git" */
    char commit[41];
    char branch[256];
    char archive_sha[65];
    int64_t archive_bytes;
    long http_status;
};

static int record_files(struct store *s, int64_t repo_id, const struct extract_result *r)
{
    int rc = 0;
    if ((rc = store_run(s, "DELETE FROM files WHERE repo_id = ?", "i", repo_id)) < 0 ||
        (rc = store_run(s, "DELETE FROM refused_entries WHERE repo_id = ?", "i", repo_id)) < 0)
        return rc;
    for (size_t i = 0; i < r->nfiles && rc >= 0; i++) {
        const struct extract_file *f = &r->files[i];
        rc = store_run(s, "INSERT OR IGNORE INTO blobs(sha256, size_bytes) VALUES (?, ?)", "ti",
                       f->sha256, f->size_bytes);
        if (rc >= 0)
            rc = store_run(s, "INSERT INTO files(repo_id, path, sha256, size_bytes, kind)"
                              " VALUES (?, ?, ?, ?, ?)", "ittit", repo_id, f->path, f->sha256,
                           f->size_bytes, f->kind);
    }
    for (size_t i = 0; i < r->nrefused && rc >= 0; i++)
        rc = store_run(s, "INSERT INTO refused_entries(repo_id, path, reason) VALUES (?, ?, ?)",
                       "itt", repo_id, r->refused[i].path, r->refused[i].reason);
    return rc < 0 ? rc : 0;
}

static int record_fetched(struct store *s, const struct cand *c, const struct got *g,
                          const struct extract_result *r)
{
    char now[32];
    fs_utc_now(now);
    int rc = store_begin(s);
    if (rc < 0)
        return rc;
    if ((rc = record_files(s, c->id, r)) < 0 ||
        (rc = store_run(s, "UPDATE repos SET fetch_status = 'fetched', fetch_method = ?,"
                           " fetch_attempts = fetch_attempts + 1, fetch_error = NULL,"
                           " http_status = ?, next_attempt_at = NULL, commit_sha = ?,"
                           " default_branch = COALESCE(?, default_branch), fetched_at = ?,"
                           " archive_sha256 = ?, archive_bytes = ?, files_kept = ?,"
                           " files_refused = ?, license_spdx = ? WHERE id = ?",
                        "tittttiiiti", g->method, (int64_t)g->http_status,
                        g->commit[0] ? g->commit : NULL, g->branch[0] ? g->branch : NULL, now,
                        g->archive_sha[0] ? g->archive_sha : NULL, g->archive_bytes,
                        (int64_t)r->nfiles, (int64_t)r->nrefused, r->license_spdx, c->id)) < 0 ||
        (rc = store_commit(s)) < 0) {
        store_rollback(s);
        return rc;
    }
    return 0;
}

/* 'gone' (final) or 'failed' with the time of the next attempt. */
static int record_failure(struct store *s, const struct cand *c, int gone, const char *error,
                          long http_status, double retry_after_s)
{
    char next[32];
    double delay = 3600;
    for (int64_t i = 0; i < c->attempts && delay < 7 * 86400; i++)
        delay *= 2;
    if (delay > 7 * 86400)
        delay = 7 * 86400;
    if (retry_after_s > delay)
        delay = retry_after_s;
    time_plus(next, delay);
    int rc = store_run(s, "UPDATE repos SET fetch_status = ?, fetch_attempts = fetch_attempts + 1,"
                          " fetch_error = ?, http_status = ?, next_attempt_at = ? WHERE id = ?",
                       "ttiti", gone ? "gone" : "failed", error, (int64_t)http_status,
                       gone ? NULL : next, c->id);
    log_event(LOG_WARN, gone ? "repo_gone" : "repo_failed", "repo", c->full_name, "error", error,
              "next_attempt_at", gone ? "never" : next, NULL);
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- one repository */

static void file_sha256(char out[65], int64_t *bytes, const char *path)
{
    struct sha256 h;
    unsigned char d[32], chunk[65536];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    out[0] = 0;
    *bytes = 0;
    if (fd < 0)
        return;
    sha256_init(&h);
    while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
        sha256_update(&h, chunk, (size_t)n);
        *bytes += n;
    }
    close(fd);
    sha256_final(&h, d);
    sha256_to_hex(out, d);
}

/* Extract a downloaded zip into a fresh temporary tree; 0, or <0 when unreadable. */
static int from_zip(struct extract_result *r, struct got *g, const struct fetch_options *o,
                    const struct cand *c, const char *tmp)
{
    static const struct extract_limits lim = EXTRACT_LIMITS_INIT;
    g->method = "zip";
    fetch_zip_commit(g->commit, c->archive_path);
    file_sha256(g->archive_sha, &g->archive_bytes, c->archive_path);
    return extract_archive(r, c->archive_path, 1, o->work_dir, tmp, &lim);
}

/* Clone into a temporary folder and extract from it; 0, LSCAT_ENOTFOUND, or <0. */
static int from_git(struct extract_result *r, struct got *g, const struct fetch_options *o,
                    const struct cand *c, const char *tmp)
{
    static const struct extract_limits lim = EXTRACT_LIMITS_INIT;
    char *url = fetch_expand_url(o->git_url, c->full_name);
    char *clone = tmp_tree(o, c->full_name, "git");
    g->method = "git";
    g->archive_sha[0] = 0;
    g->archive_bytes = 0;
    fs_remove_tree(clone);
    /* in a child process: libgit2 1.5 waits forever on a server that stops answering */
    int rc = gitclone_run_child(g->commit, g->branch, NULL, url, clone, o->http.max_bytes,
                                o->git_timeout_s);
    if (rc == 0)
        rc = extract_dir(r, clone, o->work_dir, tmp, &lim);
    fs_remove_tree(clone);
    free(clone);
    free(url);
    return rc;
}

static void sync_work(const char *work_dir)
{
    int fd = open(work_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        syncfs(fd);
        close(fd);
    }
}

static int process(struct fetch_counts *k, struct store *s, const struct fetch_options *o,
                   const struct cand *c, const struct http_job *j)
{
    struct extract_result r;
    struct got g;
    char err[512] = "";
    int rc = -1, gone = 0;
    memset(&g, 0, sizeof(g));
    extract_result_init(&r);
    char *tmp = tmp_tree(o, c->full_name, "tmp");
    fs_remove_tree(tmp);
    if (j) {
        g.http_status = j->status;
        if (j->outcome == HTTP_OK) {
            rc = from_zip(&r, &g, o, c, tmp);
            if (rc == LSCAT_ERR) { /* our disk, not their archive: stop the run */
                lscat_error_wrap("repository %s", c->full_name);
                fs_remove_tree(tmp);
                extract_result_release(&r);
                free(tmp);
                return LSCAT_ERR;
            }
            if (rc < 0)
                snprintf(err, sizeof(err), "zip: %s", lscat_error_last());
            unlink(c->archive_path); /* done with it, or corrupt: download afresh next time */
        } else {
            gone = j->outcome == HTTP_GONE;
            snprintf(err, sizeof(err), "zip: %s", j->error);
        }
    }
    /* no clone when the zip was refused for its size: the clone would be bigger */
    if (rc < 0 && !gone && o->method != FETCH_ZIP_ONLY && !(j && j->over_cap)) {
        fs_remove_tree(tmp);
        extract_result_release(&r);
        extract_result_init(&r);
        rc = from_git(&r, &g, o, c, tmp);
        if (rc < 0) {
            size_t n = strlen(err);
            snprintf(err + n, sizeof(err) - n, "%s%s", n ? "; " : "", lscat_error_last());
            gone = !j && rc == LSCAT_ENOTFOUND;
        }
    }
    int result = 0;
    if (rc == 0)
        sync_work(o->work_dir); /* blobs durable before the row that names them */
    if (rc == 0 && (rc = swap_tree(o, c->full_name, tmp)) == 0 &&
        (result = record_fetched(s, c, &g, &r)) == 0) {
        k->fetched++;
        k->files += (int64_t)r.nfiles;
        k->blobs_new += r.blobs_new;
        k->refused += (int64_t)r.nrefused;
        k->bytes += r.bytes_kept;
    } else if (result == 0) {
        if (rc < 0 && !err[0])
            snprintf(err, sizeof(err), "%s", lscat_error_last());
        result = record_failure(s, c, gone, err, g.http_status, j ? j->retry_after_s : 0);
        gone ? k->gone++ : k->failed++;
    }
    fs_remove_tree(tmp);
    extract_result_release(&r);
    free(tmp);
    return result;
}

/* ---------------------------------------------------------------- the run */

static void free_batch(struct cand *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].full_name);
        free(c[i].archive_path);
        free(c[i].url);
    }
    free(c);
}


/* One fetch per work folder at a time: two would download the same repositories and race on
 * their trees. The lock goes with the process (killed runs release it). */
static int lock_work(int *fd_out, const char *work_dir)
{
    char *path = xasprintf("%s/.fetch.lock", work_dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    int rc = 0;
    if (fd < 0)
        rc = lscat_error_set("cannot open '%s': %s", path, strerror(errno));
    else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        rc = lscat_error_setc(LSCAT_EBUSY, "another 'lscat harvest fetch' is running on '%s' "
                                           "(wait for it, or use another --work)", work_dir);
        close(fd);
        fd = -1;
    }
    free(path);
    *fd_out = fd;
    return rc;
}

/* blobs/xx/<sha>.tmp.<pid> of killed fetches (extract.c writes a blob there, then renames). */
static void remove_stale_blobs(const char *work_dir)
{
    char *blobs = fs_join(work_dir, "blobs");
    if (fs_remove_stale_temps(blobs, 1) < 0)
        log_warn("%s", lscat_error_last());
    free(blobs);
}

struct run_ctx {
    struct fetch_counts *k;
    struct store *s;
    const struct fetch_options *o;
    struct cand *c;
    struct progress *bar;
};

/* A download finished: extract and record its repository while the others go on. */
static int on_download(void *arg, struct http_job *j)
{
    struct run_ctx *x = arg;
    struct cand *c = j->user;
    int rc = process(x->k, x->s, x->o, c, j);
    x->k->repos++;
    progress_add(x->bar, 1);
    return rc < 0 ? rc : 0;
}

int fetch_run(struct fetch_counts *out, struct store *s, const struct fetch_options *o)
{
    char *trees = xasprintf("%s/trees", o->work_dir);
    struct cand *c = NULL;
    struct http_job *jobs = NULL;
    size_t n = 0;
    int lock_fd = -1;
    int rc = 0;
    memset(out, 0, sizeof(*out));
    if ((rc = lock_work(&lock_fd, o->work_dir)) < 0)
        goto done;
    fs_mkdirs(trees, 0755);
    clean_stale(trees);
    remove_stale_blobs(o->work_dir);
    /* every due repository in one queue: the downloads never wait for a batch's slowest */
    if ((rc = load_batch(&c, &n, s, o, 0, o->limit > 0 ? o->limit : INT64_MAX)) < 0)
        goto done;
    struct run_ctx x = { out, s, o, c, progress_new("repositories", (uint64_t)n) };
    if (o->method == FETCH_GIT) {
        for (size_t i = 0; i < n && rc == 0; i++) {
            rc = process(out, s, o, &c[i], NULL);
            out->repos++;
            progress_add(x.bar, 1);
        }
    } else {
        jobs = xcalloc(n ? n : 1, sizeof(*jobs));
        for (size_t i = 0; i < n; i++) {
            c[i].url = fetch_expand_url(o->archive_url, c[i].full_name);
            c[i].archive_path = xasprintf("%s/archives/%s.zip", o->work_dir, c[i].full_name);
            jobs[i] = (struct http_job)HTTP_JOB_INIT;
            jobs[i].url = c[i].url;
            jobs[i].path = c[i].archive_path;
            jobs[i].user = &c[i];
        }
        struct http_options ho = o->http;
        ho.parallel = o->jobs > 0 ? o->jobs : 1;
        ho.on_done = on_download;
        ho.on_done_ctx = &x;
        rc = http_run(jobs, n, &ho);
        for (size_t i = 0; i < n; i++)
            http_job_release(&jobs[i]);
    }
    progress_free(x.bar);
done:
    if (lock_fd >= 0)
        close(lock_fd);
    free(jobs);
    free_batch(c, n);
    free(trees);
    return rc;
}
