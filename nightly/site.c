/* The release pages (site.h): static HTML and JSON written from the releases' release.json files,
 * so a researcher browsing the served releases folder sees every release, its counts and
 * checksums, and downloads what they need; nothing here needs a script or a server of ours. */
#include "nightly/site.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "nightly/files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char style[] =
    "<style>body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em;"
    "color:#222}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;"
    "padding:.25em .6em;text-align:left;white-space:nowrap}td.n{text-align:right}code{font-size:90%}"
    "img{max-width:100%;border:1px solid #ddd;margin:.5em 0}pre{background:#f4f4f4;"
    "padding:.5em;overflow-x:auto}</style>";

void nightly_site_escape(struct buf *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': buf_adds(out, "&amp;"); break;
        case '<': buf_adds(out, "&lt;"); break;
        case '>': buf_adds(out, "&gt;"); break;
        case '"': buf_adds(out, "&quot;"); break;
        default: buf_addch(out, *s);
        }
    }
}

/* Escaped text with `code` spans. */
static void inline_md(struct buf *out, const char *s, size_t len)
{
    char *t = xstrndup(s, len);
    int code = 0;
    for (char *p = t, *q; *p; p = q + (*q != '\0')) {
        q = strchr(p, '`');
        if (!q)
            q = p + strlen(p);
        char c = *q;
        *q = '\0';
        nightly_site_escape(out, p);
        *q = c;
        if (c == '`')
            buf_adds(out, (code = !code) ? "<code>" : "</code>");
    }
    if (code)
        buf_adds(out, "</code>");
    free(t);
}

static void table_row(struct buf *out, const char *line, int head)
{
    const char *p = line + 1;
    buf_adds(out, "<tr>");
    while (*p) {
        const char *bar = strchr(p, '|');
        if (!bar)
            break;
        const char *a = p, *b = bar;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        buf_adds(out, head ? "<th>" : "<td>");
        inline_md(out, a, (size_t)(b - a));
        buf_adds(out, head ? "</th>" : "</td>");
        p = bar + 1;
    }
    buf_adds(out, "</tr>\n");
}

enum { B_NONE, B_PARA, B_LIST, B_TABLE };

static int close_block(struct buf *out, int block)
{
    static const char *const ends[] = { "", "</p>\n", "</ul>\n", "</table>\n" };
    buf_adds(out, ends[block]);
    return B_NONE;
}

void nightly_site_markdown(struct buf *out, const char *md)
{
    int block = B_NONE, code = 0, head = 0;
    for (const char *l = md, *nl; *l; l = nl + (*nl != '\0')) {
        nl = strchr(l, '\n');
        if (!nl)
            nl = l + strlen(l);
        size_t len = (size_t)(nl - l);
        char *line = xstrndup(l, len);
        if (!strncmp(line, "```", 3)) {
            block = close_block(out, block);
            buf_adds(out, (code = !code) ? "<pre>" : "</pre>\n");
        } else if (code) {
            nightly_site_escape(out, line);
            buf_addch(out, '\n');
        } else if (line[0] == '#') {
            int level = (int)strspn(line, "#");
            block = close_block(out, block);
            buf_addf(out, "<h%d>", level > 6 ? 6 : level + 1);
            inline_md(out, line + level + (line[level] == ' '), len - level - (line[level] == ' '));
            buf_addf(out, "</h%d>\n", level > 6 ? 6 : level + 1);
        } else if (line[0] == '|') {
            if (block != B_TABLE) {
                block = close_block(out, block);
                buf_adds(out, "<table>\n");
                block = B_TABLE;
                head = 1;
            }
            if (strspn(line, "|-: ") != len)
                table_row(out, line, head);
            head = 0;
        } else if (!strncmp(line, "- ", 2)) {
            if (block != B_LIST) {
                block = close_block(out, block);
                buf_adds(out, "<ul>\n");
                block = B_LIST;
            }
            buf_adds(out, "<li>");
            inline_md(out, line + 2, len - 2);
            buf_adds(out, "</li>\n");
        } else if (!len) {
            block = close_block(out, block);
        } else {
            if (block != B_PARA) {
                block = close_block(out, block);
                buf_adds(out, "<p>");
                block = B_PARA;
            } else {
                buf_addch(out, '\n');
            }
            inline_md(out, line, len);
        }
        free(line);
    }
    close_block(out, block);
    if (code)
        buf_adds(out, "</pre>\n");
}

static void human_size(struct buf *out, long long bytes)
{
    if (bytes < 10 * 1024)
        buf_addf(out, "%lld B", bytes);
    else if (bytes < 10LL * 1024 * 1024)
        buf_addf(out, "%.1f KiB", bytes / 1024.0);
    else if (bytes < 10LL * 1024 * 1024 * 1024)
        buf_addf(out, "%.1f MiB", bytes / 1048576.0);
    else
        buf_addf(out, "%.1f GiB", bytes / 1073741824.0);
}

static void rows_table(struct buf *out, const json_t *rows)
{
    const char *k;
    json_t *v;
    buf_adds(out, "<table id=\"rows\">\n<tr><th>table</th><th>rows</th></tr>\n");
    json_object_foreach((json_t *)rows, k, v) {
        buf_adds(out, "<tr><td>");
        nightly_site_escape(out, k);
        buf_addf(out, "</td><td class=\"n\">%lld</td></tr>\n", (long long)json_integer_value(v));
    }
    buf_adds(out, "</table>\n");
}

static void files_table(struct buf *out, const json_t *files)
{
    size_t i;
    json_t *f;
    buf_adds(out, "<table id=\"files\">\n<tr><th>file</th><th>size</th><th>SHA-256</th></tr>\n");
    json_array_foreach((json_t *)files, i, f) {
        const char *p = json_string_value(json_object_get(f, "path"));
        buf_adds(out, "<tr><td><a href=\"");
        nightly_site_escape(out, p);
        buf_adds(out, "\">");
        nightly_site_escape(out, p);
        buf_adds(out, "</a></td><td class=\"n\">");
        human_size(out, json_integer_value(json_object_get(f, "bytes")));
        buf_addf(out, "</td><td><code>%s</code></td></tr>\n",
                 json_string_value(json_object_get(f, "sha256")));
    }
    buf_adds(out, "</table>\n");
}

/* <img> for every PNG of the release's report. */
static void plots(struct buf *out, const char *dir)
{
    struct dirent **names = NULL;
    char *report = fs_join(dir, "report");
    int count = scandir(report, &names, NULL, alphasort), shown = 0;
    for (int i = 0; i < count; i++) {
        const char *nm = names[i]->d_name;
        size_t len = strlen(nm);
        if (len > 4 && !strcmp(nm + len - 4, ".png")) {
            buf_adds(out, "<figure><img src=\"report/");
            nightly_site_escape(out, nm);
            buf_adds(out, "\" alt=\"");
            nightly_site_escape(out, nm);
            buf_adds(out, "\"><figcaption>");
            nightly_site_escape(out, nm);
            buf_adds(out, "</figcaption></figure>\n");
            shown++;
        }
        free(names[i]);
    }
    free(names);
    free(report);
    if (!shown)
        buf_adds(out, "<p>No plots: this release has no measurements with two or more block "
                      "shapes per size yet (they come from the GPU machines).</p>\n");
}

int nightly_site_release_page(const char *dir, const json_t *r)
{
    struct buf page = BUF_INIT, card = BUF_INIT;
    const char *name = json_string_value(json_object_get(r, "name"));
    char *readme = fs_join(dir, "README.md"), *path = fs_join(dir, "index.html");
    buf_adds(&page, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<title>lscat dataset release ");
    nightly_site_escape(&page, name);
    buf_addf(&page, "</title>%s</head><body>\n<p><a href=\"../index.html\">All releases</a></p>\n"
                    "<h1>lscat dataset, release ", style);
    nightly_site_escape(&page, name);
    buf_addf(&page, "</h1>\n<p>Published %s by lscat %s. Cite it with <a href=\"CITATION.cff\">"
                    "CITATION.cff</a>; what changed: <a href=\"CHANGES.md\">CHANGES.md</a>; "
                    "checksums: <a href=\"SHA256SUMS\">SHA256SUMS</a> (<code>sha256sum -c "
                    "SHA256SUMS</code>); machine-readable: <a href=\"release.json\">release.json"
                    "</a>.</p>\n<h2>Tables</h2>\n",
             json_string_value(json_object_get(r, "created_at")),
             json_string_value(json_object_get(r, "lscat_version")));
    rows_table(&page, json_object_get(r, "rows"));
    buf_adds(&page, "<h2>Files</h2>\n");
    files_table(&page, json_object_get(r, "files"));
    buf_adds(&page, "<h2>Report</h2>\n<p>LS-CAT's questions per GPU model: "
                    "<a href=\"report/index.html\">report/index.html</a>.</p>\n");
    plots(&page, dir);
    buf_adds(&page, "<h2>Data card</h2>\n<div id=\"card\">\n");
    if (buf_read_file(&card, readme) == 0)
        nightly_site_markdown(&page, card.data);
    buf_adds(&page, "</div>\n</body></html>\n");
    int rc = fs_write_atomic(path, page.data, page.len);
    buf_release(&page);
    buf_release(&card);
    free(readme);
    free(path);
    return rc;
}

/* ---------------------------------------------------------------- the index of releases */

/* One index.json entry for the release `name` in `dir`; NULL when its release.json is unreadable. */
static json_t *index_entry(const char *dir, const char *name)
{
    json_error_t jerr;
    char sums_sha[65] = "";
    int64_t sums_bytes = 0;
    char *rj = xasprintf("%s/%s/release.json", dir, name);
    char *sums = xasprintf("%s/%s/SHA256SUMS", dir, name);
    json_t *r = json_load_file(rj, 0, &jerr), *e = NULL;
    if (r && nightly_file_hash(sums_sha, &sums_bytes, sums) == 0) {
        char *l[6];
        static const char *const file[6] = { "index.html", "README.md", "CHANGES.md",
                                             "CITATION.cff", "SHA256SUMS", "release.json" };
        for (int i = 0; i < 6; i++)
            l[i] = xasprintf("%s/%s", name, file[i]);
        e = json_pack("{s:O,s:O,s:O,s:O,s:O,s:s,s:O,s:{s:s,s:s,s:s,s:s,s:s,s:s}}",
                      "name", json_object_get(r, "name"), "date", json_object_get(r, "date"),
                      "created_at", json_object_get(r, "created_at"),
                      "rows", json_object_get(r, "rows"), "size_bytes",
                      json_object_get(r, "size_bytes"), "sha256sums_sha256", sums_sha,
                      "files", json_object_get(r, "files"), "links", "page", l[0], "card", l[1],
                      "changes", l[2], "citation", l[3], "sha256sums", l[4], "release_json", l[5]);
        for (int i = 0; i < 6; i++)
            free(l[i]);
    }
    json_decref(r);
    free(rj);
    free(sums);
    return e;
}

static long long row_count(const json_t *e, const char *table)
{
    return json_integer_value(json_object_get(json_object_get(e, "rows"), table));
}

static void index_row(struct buf *out, const json_t *e, int latest)
{
    const json_t *links = json_object_get(e, "links");
    const char *name = json_string_value(json_object_get(e, "name"));
    buf_adds(out, "<tr><td><a href=\"");
    nightly_site_escape(out, json_string_value(json_object_get(links, "page")));
    buf_adds(out, "\">");
    nightly_site_escape(out, name);
    buf_addf(out, "</a>%s</td><td>%s</td>", latest ? " (latest)" : "",
             json_string_value(json_object_get(e, "date")));
    static const char *const tables[] = { "kernels", "measurements", "repositories", "gpus" };
    for (size_t i = 0; i < 4; i++)
        buf_addf(out, "<td class=\"n\">%lld</td>", row_count(e, tables[i]));
    buf_adds(out, "<td class=\"n\">");
    human_size(out, json_integer_value(json_object_get(e, "size_bytes")));
    buf_addf(out, "</td><td><a href=\"%s\"><code>%.16s</code></a></td><td>",
             json_string_value(json_object_get(links, "sha256sums")),
             json_string_value(json_object_get(e, "sha256sums_sha256")));
    static const char *const words[][2] = { { "card", "card" }, { "changes", "changes" },
                                            { "citation", "citation" },
                                            { "release_json", "json" } };
    for (size_t i = 0; i < 4; i++)
        buf_addf(out, "%s<a href=\"%s\">%s</a>", i ? " · " : "",
                 json_string_value(json_object_get(links, words[i][0])), words[i][1]);
    buf_adds(out, "</td></tr>\n");
}

static int write_index(const char *dir, json_t *releases, const char *latest)
{
    struct buf html = BUF_INIT;
    char now[32];
    size_t i;
    json_t *e;
    fs_utc_now(now);
    json_t *doc = json_pack("{s:s,s:o,s:O}", "generated_at", now, "latest",
                            latest ? json_string(latest) : json_null(), "releases", releases);
    char *js = json_dumps(doc, JSON_INDENT(1));
    char *pj = fs_join(dir, "index.json"), *ph = fs_join(dir, "index.html");
    buf_addf(&html, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<title>lscat dataset releases</title>%s</head><body>\n"
                    "<h1>lscat dataset releases</h1>\n<p>CUDA kernels and their "
                    "launch-configuration timings, published every night. ", style);
    if (latest)
        buf_addf(&html, "Latest: <a href=\"latest/index.html\">%s</a>. ", latest);
    buf_addf(&html, "Every release as JSON: <a href=\"index.json\">index.json</a>. Updated %s."
                    "</p>\n<table id=\"releases\">\n<tr><th>release</th><th>date</th>"
                    "<th>kernels</th><th>measurements</th><th>repositories</th><th>GPUs</th>"
                    "<th>size</th><th>SHA256SUMS</th><th>links</th></tr>\n", now);
    json_array_foreach(releases, i, e)
        index_row(&html, e, latest && !strcmp(latest, json_string_value(json_object_get(e, "name"))));
    buf_adds(&html, "</table>\n</body></html>\n");
    int rc = fs_write_atomic(pj, js, strlen(js));
    if (rc == 0)
        rc = fs_write_atomic(ph, html.data, html.len);
    free(js);
    free(pj);
    free(ph);
    json_decref(doc);
    buf_release(&html);
    return rc;
}

int nightly_site_index(const char *dir)
{
    struct nightly_release_list list;
    char target[256], *latest = NULL;
    char *link = fs_join(dir, "latest");
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    free(link);
    if (n > 0) {
        target[n] = '\0';
        latest = target;
    }
    int rc = nightly_release_list(&list, dir);
    json_t *releases = json_array();
    for (size_t i = list.n; rc == 0 && i-- > 0;) {
        json_t *e = index_entry(dir, list.names[i]);
        if (e)
            json_array_append_new(releases, e);
    }
    if (rc == 0)
        rc = write_index(dir, releases, latest);
    json_decref(releases);
    nightly_release_list_release(&list);
    return rc;
}
