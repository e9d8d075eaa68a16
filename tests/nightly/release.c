/* Tests for nightly/release.c, files.c and site.c: release names and their order, the data
 * card's Markdown as HTML, and publishing real releases from a real store and export folder:
 * the dated name and its .2, `latest`, CHANGES.md against the previous release, SHA256SUMS,
 * the index, --keep. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "nightly/files.h"
#include "nightly/release.h"
#include "nightly/site.h"
#include "store/store.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void test_release__names_are_dates_with_an_optional_counter_from_2(void)
{
    long long a = 0, b = 0, c = 0;
    CHECK(nightly_release_name("2026-11-23", &a));
    CHECK(nightly_release_name("2026-11-23.9", &b));
    CHECK(nightly_release_name("2026-11-23.10", &c));
    CHECK(a < b && b < c);
    static const char *const bad[] = { "2026-11-23.1", "2026-11-23.02", "latest", "2026-13-01",
                                       "2026-11-23x", "2026-11-2", ".2026-11-23.tmp.12", "" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (nightly_release_name(bad[i], NULL))
            test_fail(__FILE__, __LINE__, "'%s' taken for a release name", bad[i]);
}

static void test_release__the_card_markdown_becomes_html(void)
{
    struct buf out = BUF_INIT;
    nightly_site_markdown(&out, "# Title\n\nSome `code` & <text>\nmore\n\n| a | b |\n|---|---|\n"
                                "| 1 | `x` |\n\n- item\n\n```\nraw <pre>\n```\n");
    CHECK_CONTAINS(out.data, "<h2>Title</h2>");
    CHECK_CONTAINS(out.data, "<p>Some <code>code</code> &amp; &lt;text&gt;\nmore</p>");
    CHECK_CONTAINS(out.data, "<table>\n<tr><th>a</th><th>b</th></tr>\n<tr><td>1</td><td><code>x"
                             "</code></td></tr>\n</table>");
    CHECK_CONTAINS(out.data, "<ul>\n<li>item</li>\n</ul>");
    CHECK_CONTAINS(out.data, "<pre>raw &lt;pre&gt;\n</pre>");
    buf_release(&out);
}

static void put(const char *dir, const char *rel, const char *text)
{
    char *p = fs_join(dir, rel);
    test_write_file(p, text, strlen(text));
    free(p);
}

/* An export folder as the export stage leaves it, for the kernels now in `s`. */
static void make_export(const char *exp, struct store *s, int kernels)
{
    char counts[128];
    CHECK_OK(nightly_export_begin(exp));
    CHECK(!nightly_export_complete(exp));
    put(exp, "parquet/kernels.parquet", "PAR1 pretend");
    put(exp, "parquet/README.md", "# lscat CUDA launch-configuration dataset\n\nThe card.\n");
    put(exp, "parquet/columns.md", "# columns\n");
    put(exp, "csv/kernels.csv.gz", "pretend gzip");
    put(exp, "report/index.html", "<html></html>");
    put(exp, "report/H100-avg.png", "\x89PNG pretend");
    snprintf(counts, sizeof(counts), "{\"command\":\"export\",\"kernels\":%d,\"measurements\":0}",
             kernels);
    CHECK_OK(nightly_export_finish(s, exp, counts));
    CHECK(nightly_export_complete(exp));
}

static void add_kernel(struct store *s, const char *id, const char *name)
{
    CHECK_OK(store_run(s, "INSERT INTO kernels(id, name, dir, params, param_count, created_at)"
                          " VALUES (?, ?, 'd', '[]', 0, '2026-11-23T00:00:00Z')", "tt", id, name));
}

static char *read_text(const char *dir, const char *rel)
{
    struct buf b = BUF_INIT;
    char *p = fs_join(dir, rel);
    CHECK_OK(buf_read_file(&b, p));
    free(p);
    return buf_detach(&b, NULL);
}

static void check_sums(const char *dir)
{
    char *sums = read_text(dir, "SHA256SUMS"), *save = NULL;
    int n = 0;
    for (char *l = strtok_r(sums, "\n", &save); l; l = strtok_r(NULL, "\n", &save), n++) {
        char hex[65];
        int64_t bytes;
        char *p = fs_join(dir, l + 66);
        CHECK_OK(nightly_file_hash(hex, &bytes, p));
        CHECK(!strncmp(hex, l, 64));
        free(p);
    }
    CHECK_INT(n, >=, 10);
    free(sums);
}

static void test_release__two_publications_make_a_dated_release_and_its_dot_2(void)
{
    const char *t = test_tmpdir();
    char *db = fs_join(t, "s.db"), *exp = fs_join(t, "export"), *rel = fs_join(t, "releases");
    char *first = NULL, *second = NULL, today[16];
    time_t now = time(NULL);
    strftime(today, sizeof(today), "%Y-%m-%d", gmtime(&now));
    struct store *s = NULL;
    struct nightly_release_options o = { .releases_dir = rel, .export_dir = exp, .keep = 0 };
    CHECK_OK(store_open(&s, db, STORE_CREATE));
    add_kernel(s, "1111111111111111111111111111111111111111111111111111111111111111", "saxpy");
    make_export(exp, s, 1);
    CHECK_OK(nightly_release_publish(&first, s, &o));
    CHECK_STR(first, today);
    add_kernel(s, "0000000000000000000000000000000000000000000000000000000000000000", "scale");
    CHECK_OK(store_run(s, "INSERT INTO gpus(uuid, name, first_seen) VALUES ('GPU-1',"
                          " 'NVIDIA H100', '2026-11-23T00:00:00Z')", ""));
    CHECK_OK(store_run(s, "INSERT INTO repos(full_name, fetch_status) VALUES ('bob/gone', 'gone')",
                       ""));
    make_export(exp, s, 2);
    CHECK_OK(nightly_release_publish(&second, s, &o));
    char *want = xasprintf("%s.2", today), *dir2 = fs_join(rel, second);
    CHECK_STR(second, want);
    char *latest = fs_join(rel, "latest/release.json"), *link = fs_join(rel, "latest");
    char target[64] = "";
    CHECK(readlink(link, target, sizeof(target) - 1) > 0);
    CHECK_STR(target, want);
    CHECK(fs_exists(latest));
    char *changes = read_text(dir2, "CHANGES.md");
    CHECK_CONTAINS(changes, "Since release ");
    CHECK_CONTAINS(changes, "| kernels | 1 | 2 | +1 |");
    CHECK_CONTAINS(changes, "## Kernels added\n\n- `scale` (id 000000000000)\n");
    CHECK_CONTAINS(changes, "## Kernels no longer present\n\nnone");
    CHECK_CONTAINS(changes, "## GPU models added\n\n- NVIDIA H100\n");
    CHECK_CONTAINS(changes, "- bob/gone\n");
    check_sums(dir2);
    char *page = read_text(dir2, "index.html"), *index = read_text(rel, "index.json");
    CHECK_CONTAINS(page, "<img src=\"report/H100-avg.png\"");
    CHECK_CONTAINS(page, "<h2>lscat CUDA launch-configuration dataset</h2>");
    CHECK(strstr(index, want) && strstr(index, want) < strstr(index, "\"name\": \"20") + 200);
    free(want); free(dir2); free(latest); free(link); free(changes); free(page); free(index);
    free(first); free(second); free(db); free(exp); free(rel);
    store_free(s);
}

static void test_release__keep_prunes_the_oldest_but_never_latest(void)
{
    const char *t = test_tmpdir();
    char *db = fs_join(t, "s.db"), *exp = fs_join(t, "export"), *rel = fs_join(t, "releases");
    struct store *s = NULL;
    struct nightly_release_options o = { .releases_dir = rel, .export_dir = exp, .keep = 2 };
    struct nightly_release_list list;
    CHECK_OK(store_open(&s, db, STORE_CREATE));
    make_export(exp, s, 0);
    for (int i = 0; i < 4; i++) {
        char *name = NULL;
        CHECK_OK(nightly_release_publish(&name, s, &o));
        free(name);
    }
    CHECK_OK(nightly_release_list(&list, rel));
    CHECK_INT(list.n, ==, 2);
    CHECK(strstr(list.names[1], ".4") != NULL);
    nightly_release_list_release(&list);
    char *index = read_text(rel, "index.json");
    CHECK(strstr(index, ".3\"") && strstr(index, ".4\"") && !strstr(index, ".2\""));
    free(index);
    store_free(s);
    free(db); free(exp); free(rel);
}

int main(void)
{
    TEST_RUN(test_release__names_are_dates_with_an_optional_counter_from_2);
    TEST_RUN(test_release__the_card_markdown_becomes_html);
    TEST_RUN(test_release__two_publications_make_a_dated_release_and_its_dot_2);
    TEST_RUN(test_release__keep_prunes_the_oldest_but_never_latest);
    return test_done();
}
