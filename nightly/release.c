/* Publishing a night's export as a dated release (release.h): the files are linked (the dumps:
 * an export always writes new files, so a link never changes under a release) or copied into
 * "releases/.<name>.tmp.<pid>", CHANGES.md, CITATION.cff, release.json, the page and SHA256SUMS
 * are written beside them, and one rename makes it a release; `latest` moves by renaming a new
 * symlink over it. A kill at any point leaves the old releases and `latest` as they were. */
#include "nightly/release.h"

#include "common/buf.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "nightly/files.h"
#include "nightly/site.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

char *nightly_export_dir(const char *work_dir)
{
    return fs_join(work_dir, "nightly/export");
}

int nightly_export_begin(const char *export_dir)
{
    char *marker = fs_join(export_dir, "COMPLETE"), *report = fs_join(export_dir, "report");
    int rc = fs_mkdirs(export_dir, 0755);
    if (rc == 0 && unlink(marker) < 0 && errno != ENOENT)
        rc = lscat_error_set("cannot remove '%s': %s", marker, strerror(errno));
    if (rc == 0)
        rc = fs_remove_tree(report);
    free(marker);
    free(report);
    return rc < 0 ? LSCAT_ERR : 0;
}

int nightly_export_finish(struct store *s, const char *export_dir, const char *counts_json)
{
    struct store_stmt *st = NULL;
    struct buf ids = BUF_INIT, done = BUF_INIT;
    char *path = fs_join(export_dir, "kernel-ids.txt"), now[32];
    int rc = store_prepare(&st, s, "SELECT id, name FROM kernels ORDER BY id");
    while (rc >= 0 && (rc = store_step(st)) == STORE_ROW)
        buf_addf(&ids, "%s %s\n", store_col_text(st, 0), store_col_text(st, 1));
    store_finalize(st);
    if (rc >= 0)
        rc = fs_write_atomic(path, ids.data, ids.len);
    free(path);
    fs_utc_now(now);
    buf_addf(&done, "{\"exported_at\":\"%s\",\"rows\":%s}\n", now, counts_json);
    path = fs_join(export_dir, "COMPLETE");
    if (rc >= 0)
        rc = fs_write_atomic(path, done.data, done.len);
    free(path);
    buf_release(&ids);
    buf_release(&done);
    return rc < 0 ? LSCAT_ERR : 0;
}

int nightly_export_complete(const char *export_dir)
{
    char *marker = fs_join(export_dir, "COMPLETE");
    int ok = fs_exists(marker);
    free(marker);
    return ok;
}

int nightly_release_name(const char *name, long long *key)
{
    int y, m, d, n = 1, len = 0, len2 = 0;
    if (sscanf(name, "%4d-%2d-%2d%n", &y, &m, &d, &len) != 3 || len != 10)
        return 0;
    if (name[10] && (sscanf(name + 10, ".%d%n", &n, &len2) != 1 || name[10 + len2] || n < 2 ||
                     name[11] == '0' || n > 999))
        return 0;
    if (m < 1 || m > 12 || d < 1 || d > 31)
        return 0;
    if (key)
        *key = ((long long)y * 10000 + m * 100 + d) * 1000 + n;
    return 1;
}

/* ---------------------------------------------------------------- choosing names */

/* Today's name: YYYY-MM-DD, or YYYY-MM-DD.N with N one past the highest of today's names in
 * `dir` (a name is never reused: pruning removes the oldest, never today's newest). */
static char *free_name(const char *dir)
{
    char date[16];
    long long key, top = 0;
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, sizeof(date), "%Y-%m-%d", &tm);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, date, 10) && nightly_release_name(e->d_name, &key) &&
            key % 1000 > top)
            top = key % 1000;
    if (d)
        closedir(d);
    return top ? xasprintf("%s.%lld", date, top + 1) : xstrdup(date);
}

/* The release `latest` points at when it is a release with a release.json, else the newest one;
 * NULL when there is none. Caller frees. */
static char *previous_release(const char *dir)
{
    char target[256];
    char *latest = fs_join(dir, "latest"), *name = NULL;
    ssize_t n = readlink(latest, target, sizeof(target) - 1);
    free(latest);
    if (n > 0) {
        target[n] = '\0';
        char *rj = xasprintf("%s/%s/release.json", dir, target);
        if (nightly_release_name(target, NULL) && fs_exists(rj))
            name = xstrdup(target);
        free(rj);
    }
    if (!name) {
        struct nightly_release_list list;
        if (nightly_release_list(&list, dir) == 0 && list.n > 0)
            name = xstrdup(list.names[list.n - 1]);
        nightly_release_list_release(&list);
    }
    return name;
}

/* ---------------------------------------------------------------- the files of a release */

/* Link or copy the export into the release folder `tmp`. */
static int fill_release(const char *tmp, const char *exp)
{
    static const struct { const char *from, *to; int link; } parts[] = {
        { "parquet", "parquet", 1 }, { "csv", "csv", 1 }, { "report", "report", 0 },
        { "parquet/README.md", "README.md", 0 }, { "parquet/columns.md", "columns.md", 0 },
        { "kernel-ids.txt", "kernel-ids.txt", 0 },
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && rc == 0; i++) {
        char *from = fs_join(exp, parts[i].from), *to = fs_join(tmp, parts[i].to);
        rc = fs_is_dir(from) ? nightly_copy_tree(from, to, parts[i].link)
                             : nightly_copy_file(from, to, 0);
        free(from);
        free(to);
    }
    return rc;
}

static void citation(struct buf *out, const char *name, const char *date)
{
    buf_addf(out,
             "cff-version: 1.2.0\n"
             "message: \"If you use this dataset, please cite it as below.\"\n"
             "type: dataset\n"
             "title: \"lscat: CUDA kernels and their launch-configuration timings\"\n"
             "version: \"%s\"\n"
             "date-released: \"%s\"\n"
             "authors:\n"
             "  - name: \"The lscat project\"\n"
             "abstract: >-\n"
             "  CUDA kernels harvested from public GitHub repositories (found through GH Archive),\n"
             "  isolated with libclang, built with nvcc and timed over matrix sizes x thread-block\n"
             "  shapes; a re-creation and extension of LS-CAT. Release %s of the nightly dataset.\n"
             "keywords:\n"
             "  - CUDA\n  - auto-tuning\n  - launch configuration\n  - dataset\n"
             "license: \"see README.md: each kernel keeps its repository's licence\"\n"
             "references:\n"
             "  - type: article\n"
             "    title: \"LS-CAT: A Large-Scale CUDA AutoTuning Dataset\"\n"
             "    authors:\n"
             "      - family-names: Bjertnes\n        given-names: Lars\n"
             "      - family-names: Tørring\n        given-names: Jacob O.\n"
             "      - family-names: Elster\n        given-names: Anne C.\n"
             "    year: 2021\n",
             name, date, name);
}

/* Store facts that the export counts do not carry: GPU models, repositories gone upstream. */
static json_t *query_names(struct store *s, const char *sql)
{
    json_t *a = json_array();
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, s, sql);
    while (rc >= 0 && (rc = store_step(st)) == STORE_ROW)
        json_array_append_new(a, json_string(store_col_text(st, 0)));
    store_finalize(st);
    return a;
}

/* release.json: what the index and the next release's CHANGES.md read. */
static json_t *describe(struct store *s, const char *name, const char *exp, const char *prev,
                        const struct nightly_files *files)
{
    char now[32], date[11];
    json_error_t jerr;
    char *complete = fs_join(exp, "COMPLETE");
    json_t *done = json_load_file(complete, 0, &jerr), *rows = json_object(), *fl = json_array();
    free(complete);
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(done, "rows"), k, v)
        if (json_is_integer(v))
            json_object_set(rows, k, v);
    int64_t total = 0;
    for (size_t i = 0; i < files->n; i++) {
        json_array_append_new(fl, json_pack("{s:s,s:I,s:s}", "path", files->v[i].path, "bytes",
                                            (json_int_t)files->v[i].bytes, "sha256",
                                            files->v[i].sha256));
        total += files->v[i].bytes;
    }
    fs_utc_now(now);
    snprintf(date, sizeof(date), "%.10s", name);
    json_t *exported = json_object_get(done, "exported_at");
    json_t *r = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:I,s:o}", "name", name,
                          "version", name, "date", date, "created_at", now, "lscat_version",
                          LSCAT_VERSION, "previous", prev ? json_string(prev) : json_null(),
                          "exported_at", exported ? json_incref(exported) : json_null(),
                          "rows", rows,
                          "gpus", query_names(s, "SELECT DISTINCT name FROM gpus ORDER BY name"),
                          "repositories_gone",
                          query_names(s, "SELECT full_name FROM repos WHERE fetch_status = 'gone'"
                                         " ORDER BY full_name"),
                          "size_bytes", (json_int_t)total, "files", fl);
    json_decref(done);
    return r;
}

/* ---------------------------------------------------------------- CHANGES.md */

/* The lines of a kernel-ids.txt ("<id> <name>", sorted by id); none when it is missing. */
static void read_lines(struct buf *keep, char ***lines, size_t *n, const char *path)
{
    size_t cap = 0;
    *lines = NULL;
    *n = 0;
    if (buf_read_file(keep, path) < 0)
        return;
    for (char *p = keep->data, *nl; *p; p = nl + 1) {
        if (!(nl = strchr(p, '\n')))
            break;
        *nl = '\0';
        XGROW(*lines, *n + 1, cap);
        (*lines)[(*n)++] = p;
    }
}

/* "- `name` (id 1a2b3c4d5e6f)" for every line of `a` whose id is not in `b`; returns how many. */
static size_t list_missing(struct buf *out, char **a, size_t na, char **b, size_t nb)
{
    size_t i = 0, j = 0, count = 0, shown = 200;
    while (i < na) {
        int c = j < nb ? strncmp(a[i], b[j], 64) : -1;
        if (c > 0) {
            j++;
            continue;
        }
        if (c < 0) {
            const char *sp = strchr(a[i], ' ');
            if (++count <= shown)
                buf_addf(out, "- `%s` (id %.12s)\n", sp ? sp + 1 : "?", a[i]);
        } else {
            j++;
        }
        i++;
    }
    if (count > shown)
        buf_addf(out, "- ... and %zu more (kernel-ids.txt lists them all)\n", count - shown);
    if (!count)
        buf_adds(out, "none\n");
    return count;
}

/* The members of `a` (a JSON array of strings) that `b` lacks, as a list. */
static void list_added(struct buf *out, json_t *a, json_t *b, const char *none)
{
    size_t i, j, count = 0;
    json_t *x, *y;
    json_array_foreach(a, i, x) {
        int found = 0;
        json_array_foreach(b, j, y)
            found |= json_equal(x, y);
        if (!found && ++count)
            buf_addf(out, "- %s\n", json_string_value(x));
    }
    if (!count)
        buf_addf(out, "%s\n", none);
}

static void changes_table(struct buf *out, json_t *cur, json_t *prev, const char *pname)
{
    const char *k;
    json_t *v;
    buf_addf(out, "| table | %s | %s | change |\n|---|---|---|---|\n", prev ? pname : "-",
             json_string_value(json_object_get(cur, "name")));
    json_object_foreach(json_object_get(cur, "rows"), k, v) {
        json_t *pv = prev ? json_object_get(json_object_get(prev, "rows"), k) : NULL;
        long long now = json_integer_value(v), was = pv ? json_integer_value(pv) : 0;
        if (pv)
            buf_addf(out, "| %s | %lld | %lld | %+lld |\n", k, was, now, now - was);
        else
            buf_addf(out, "| %s | - | %lld | new |\n", k, now);
    }
}

/* CHANGES.md of the release in `tmp` (described by `cur`) against the one in `prev_dir`. */
static void changes(struct buf *out, const char *tmp, json_t *cur, const char *prev_dir,
                    const char *pname)
{
    json_error_t jerr;
    char *pj = prev_dir ? fs_join(prev_dir, "release.json") : NULL;
    json_t *prev = pj ? json_load_file(pj, 0, &jerr) : NULL;
    struct buf ka = BUF_INIT, kb = BUF_INIT;
    char **a, **b, *pa = fs_join(tmp, "kernel-ids.txt");
    char *pb = prev_dir ? fs_join(prev_dir, "kernel-ids.txt") : NULL;
    size_t na, nb;
    read_lines(&ka, &a, &na, pa);
    read_lines(&kb, &b, &nb, pb ? pb : "");
    buf_addf(out, "# Changes in release %s\n\n", json_string_value(json_object_get(cur, "name")));
    if (prev)
        buf_addf(out, "Since release %s (published %s).\n\n", pname,
                 json_string_value(json_object_get(prev, "created_at")));
    else
        buf_adds(out, "The first release: everything in it is new.\n\n");
    changes_table(out, cur, prev, pname);
    buf_adds(out, "\n## Kernels added\n\n");
    size_t added = list_missing(out, a, na, b, nb);
    buf_adds(out, "\n## Kernels no longer present\n\n");
    size_t gone = list_missing(out, b, nb, a, na);
    buf_adds(out, "\n## GPU models added\n\n");
    list_added(out, json_object_get(cur, "gpus"), prev ? json_object_get(prev, "gpus") : NULL,
               "none");
    buf_adds(out, "\n## Repositories removed upstream\n\nRepositories whose download now answers "
                  "404, 410 or 451 (recorded 'gone') that were not gone at the previous release:"
                  "\n\n");
    list_added(out, json_object_get(cur, "repositories_gone"),
               prev ? json_object_get(prev, "repositories_gone") : NULL, "none");
    buf_addf(out, "\nIn short: %+lld kernels (%zu added, %zu no longer present).\n",
             (long long)added - (long long)gone, added, gone);
    json_decref(prev);
    free(a);
    free(b);
    free(pa);
    free(pb);
    free(pj);
    buf_release(&ka);
    buf_release(&kb);
}

/* ---------------------------------------------------------------- publishing */

static int write_text(const char *dir, const char *name, const struct buf *b)
{
    char *p = fs_join(dir, name);
    int rc = fs_write_atomic(p, b->data, b->len);
    free(p);
    return rc;
}

/* Point `latest` at `name` in one step: a new symlink renamed over the old one. */
static int switch_latest(const char *dir, const char *name)
{
    char *tmp = xasprintf("%s/.latest.tmp.%ld", dir, (long)getpid());
    char *latest = fs_join(dir, "latest");
    int rc = 0;
    unlink(tmp);
    if (symlink(name, tmp) < 0 || rename(tmp, latest) < 0) {
        rc = lscat_error_set("cannot point '%s' at %s: %s", latest, name, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    free(latest);
    return rc;
}

/* Keep the `keep` newest releases (and always the one `latest` names): an older one is renamed
 * to a temporary name first, so it leaves the listing in one step, then removed. */
static int prune(const char *dir, int keep, const char *latest)
{
    struct nightly_release_list list;
    int rc = nightly_release_list(&list, dir);
    for (size_t i = 0; rc == 0 && keep > 0 && list.n > (size_t)keep && i < list.n - keep; i++) {
        if (!strcmp(list.names[i], latest))
            continue;
        char *from = fs_join(dir, list.names[i]);
        char *to = xasprintf("%s/.%s.pruned.tmp.%ld", dir, list.names[i], (long)getpid());
        if (rename(from, to) < 0)
            rc = lscat_error_set("cannot remove the old release '%s': %s", from, strerror(errno));
        else if ((rc = fs_remove_tree(to)) == 0)
            log_info("nightly: removed release %s (--keep %d)", list.names[i], keep);
        free(from);
        free(to);
    }
    nightly_release_list_release(&list);
    return rc;
}

/* Write CHANGES.md, CITATION.cff, release.json, the page and SHA256SUMS (last: a release
 * with one is whole). Every file is hashed once. */
static int finish_folder(json_t **desc_out, struct store *s, const char *tmp, const char *name,
                         const char *exp, const char *prev_dir, const char *prev)
{
    struct nightly_files files = NIGHTLY_FILES_INIT;
    struct buf text = BUF_INIT;
    json_t *desc = NULL;
    int rc = nightly_files_scan(&files, tmp);
    if (rc == 0) {
        desc = describe(s, name, exp, prev, &files);
        changes(&text, tmp, desc, prev_dir, prev);
        if ((rc = write_text(tmp, "CHANGES.md", &text)) == 0)
            rc = nightly_files_add(&files, tmp, "CHANGES.md");
        buf_reset(&text);
        citation(&text, name, json_string_value(json_object_get(desc, "date")));
        if (rc == 0 && (rc = write_text(tmp, "CITATION.cff", &text)) == 0)
            rc = nightly_files_add(&files, tmp, "CITATION.cff");
    }
    if (rc == 0) {
        json_decref(desc);
        desc = describe(s, name, exp, prev, &files);
        char *js = json_dumps(desc, JSON_INDENT(1) | JSON_SORT_KEYS);
        buf_reset(&text);
        buf_adds(&text, js);
        buf_addch(&text, '\n');
        free(js);
        rc = write_text(tmp, "release.json", &text);
    }
    if (rc == 0 && (rc = nightly_site_release_page(tmp, desc)) == 0 &&
        (rc = nightly_files_add(&files, tmp, "release.json")) == 0)
        rc = nightly_files_add(&files, tmp, "index.html");
    if (rc == 0) {
        buf_reset(&text);
        for (size_t i = 0; i < files.n; i++)
            buf_addf(&text, "%s  %s\n", files.v[i].sha256, files.v[i].path);
        rc = write_text(tmp, "SHA256SUMS", &text);
    }
    nightly_files_release(&files);
    buf_release(&text);
    *desc_out = desc;
    return rc;
}

int nightly_release_publish(char **name_out, struct store *s,
                            const struct nightly_release_options *o)
{
    char *name = NULL, *tmp = NULL, *final = NULL, *prev = NULL, *prev_dir = NULL;
    json_t *desc = NULL;
    int rc = fs_mkdirs(o->releases_dir, 0755);
    *name_out = NULL;
    if (rc < 0 || fs_remove_stale_temps(o->releases_dir, 0) < 0)
        goto done;
    name = free_name(o->releases_dir);
    prev = previous_release(o->releases_dir);
    prev_dir = prev ? fs_join(o->releases_dir, prev) : NULL;
    tmp = xasprintf("%s/.%s.tmp.%ld", o->releases_dir, name, (long)getpid());
    final = fs_join(o->releases_dir, name);
    if ((rc = fs_mkdirs(tmp, 0755)) < 0 || (rc = fill_release(tmp, o->export_dir)) < 0 ||
        (rc = finish_folder(&desc, s, tmp, name, o->export_dir, prev_dir, prev)) < 0)
        goto done;
    if (rename(tmp, final) < 0) {
        rc = lscat_error_set("cannot rename '%s' to '%s': %s", tmp, final, strerror(errno));
        goto done;
    }
    /* said before `latest` moves, so whoever kills the night between the two knows why it moved */
    log_info("nightly: release %s is in place; moving latest to it", name);
    if ((rc = switch_latest(o->releases_dir, name)) < 0)
        goto done;
    log_info("nightly: published release %s (previous: %s)", final, prev ? prev : "none");
    if ((rc = prune(o->releases_dir, o->keep, name)) < 0)
        goto done;
    rc = nightly_site_index(o->releases_dir);
done:
    if (rc < 0 && tmp && fs_exists(tmp))
        fs_remove_tree(tmp);
    if (rc == 0)
        *name_out = xstrdup(name);
    json_decref(desc);
    free(name);
    free(tmp);
    free(final);
    free(prev);
    free(prev_dir);
    return rc < 0 ? lscat_error_wrap("cannot publish the release in '%s'", o->releases_dir) : 0;
}
