/* Tests of harvest/gha.c and harvest/inflate.c: the pre-filter, evidence from both schemas,
 * and whole hours that are good, damaged or odd (gzip made by the real gzip tool). */
#include "harvest/gha.h"
#include "harvest/repodb.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "tests/support/test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char old_ev[] =
    "{\"type\":\"PushEvent\",\"created_at\":\"2014-02-15T00:00:01-08:00\",\"repository\":"
    "{\"id\":77,\"name\":\"kernels\",\"owner\":\"alice\",\"language\":\"Cuda\","
    "\"description\":\"fast stuff\",\"pushed_at\":\"2014-02-14T23:00:00-08:00\"}}";
static const char pr_ev[] =
    "{\"type\":\"PullRequestEvent\",\"created_at\":\"2016-03-10T09:00:00Z\",\"repo\":{\"id\":5,"
    "\"name\":\"bob/solver\"},\"payload\":{\"pull_request\":{\"base\":{\"repo\":{\"id\":5,"
    "\"full_name\":\"bob/solver\",\"language\":\"Cuda\"}},\"head\":{\"repo\":{\"id\":6,"
    "\"full_name\":\"carol/solver\",\"language\":\"C++\",\"description\":\"A CUDA solver\"}}}}}";
static const char fork_ev[] =
    "{\"type\":\"ForkEvent\",\"created_at\":\"2016-03-10T09:01:00Z\",\"repo\":{\"id\":9,"
    "\"name\":\"x/y\"},\"payload\":{\"forkee\":{\"id\":10,\"full_name\":\"z/y\","
    "\"language\":\"cuda\"}}}";
static const char create_ev[] =
    "{\"type\":\"CreateEvent\",\"created_at\":\"2025-11-02T03:00:00Z\",\"repo\":{\"id\":11,"
    "\"name\":\"dana/thing\"},\"payload\":{\"ref\":null,\"description\":\"Learning CUDA\"}}";
static const char plain_ev[] =
    "{\"type\":\"WatchEvent\",\"created_at\":\"2016-03-10T09:00:00Z\",\"repo\":{\"id\":1,"
    "\"name\":\"eve/webapp\"},\"payload\":{\"action\":\"started\"}}";

static int collect(void *ctx, const struct gha_evidence *ev)
{
    return repo_agg_add(ctx, ev);
}

static struct repo_rec *find(struct repo_agg *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->recs[i].full_name, name))
            return &a->recs[i];
    return NULL;
}

static void test_gha_prefilter__finds_cuda_in_any_case_and_position(void)
{
    char buf[100];
    memset(buf, 'x', sizeof(buf));
    CHECK(!gha_has_cuda(buf, sizeof(buf)));
    for (size_t pos = 0; pos + 4 <= sizeof(buf); pos += 7) {
        memset(buf, 'x', sizeof(buf));
        memcpy(buf + pos, pos % 2 ? "CuDa" : "cudA", 4);
        CHECK(gha_has_cuda(buf, sizeof(buf)));
        CHECK(!gha_has_cuda(buf, pos + 3));
    }
    CHECK(!gha_has_cuda("cud", 3));
    CHECK(!gha_has_cuda("\xe3\xf5\xe4\xe1", 4)); /* 'c'|0x80 etc. must not match */
}

static void test_gha_scan_line__reads_pre_2015_repository_language(void)
{
    struct repo_agg a;
    int n;
    repo_agg_init(&a);
    CHECK_OK(gha_scan_line(old_ev, strlen(old_ev), collect, &a, &n));
    CHECK_INT(n, ==, 1);
    struct repo_rec *r = find(&a, "alice/kernels");
    CHECK(r);
    CHECK_INT(r->kinds, ==, GHA_EV_LANGUAGE);
    CHECK_INT(r->github_id, ==, 77);
    CHECK_STR(r->first_seen, "2014-02-15T08:00:01Z"); /* -08:00 normalised to UTC */
    CHECK_STR(r->pushed_at, "2014-02-15T07:00:00Z");
    CHECK_STR(r->language, "Cuda");
    repo_agg_release(&a);
}

static void test_gha_scan_line__reads_pull_request_fork_and_create_payloads(void)
{
    struct repo_agg a;
    int n;
    repo_agg_init(&a);
    CHECK_OK(gha_scan_line(pr_ev, strlen(pr_ev), collect, &a, &n));
    CHECK_INT(n, ==, 2);
    CHECK_OK(gha_scan_line(fork_ev, strlen(fork_ev), collect, &a, &n));
    CHECK_OK(gha_scan_line(create_ev, strlen(create_ev), collect, &a, &n));
    CHECK_OK(gha_scan_line(plain_ev, strlen(plain_ev), collect, &a, &n));
    CHECK_INT(n, ==, 0);
    CHECK_INT(find(&a, "bob/solver")->kinds, ==, GHA_EV_PR_BASE_LANGUAGE);
    CHECK_INT(find(&a, "carol/solver")->kinds, ==, GHA_EV_DESCRIPTION_KEYWORD);
    CHECK_INT(find(&a, "z/y")->kinds, ==, GHA_EV_FORKEE_LANGUAGE);
    CHECK_INT(find(&a, "dana/thing")->kinds, ==, GHA_EV_DESCRIPTION_KEYWORD);
    CHECK(!find(&a, "x/y"));
    CHECK(!find(&a, "eve/webapp"));
    CHECK_INT(a.n, ==, 4);
    repo_agg_release(&a);
}

static void test_gha_scan_line__rejects_a_line_that_is_not_an_object(void)
{
    int n;
    struct repo_agg a;
    repo_agg_init(&a);
    CHECK_INT(gha_scan_line("{\"cuda\": ", 9, collect, &a, &n), ==, LSCAT_EINVALID);
    CHECK_INT(gha_scan_line("[\"cuda\"]", 8, collect, &a, &n), ==, LSCAT_EINVALID);
    repo_agg_release(&a);
}

static void test_gha_scan_line__tolerates_events_missing_fields(void)
{
    static const char *const lines[] = {
        "{\"type\":\"PushEvent\",\"payload\":{\"cuda\":1}}",
        "{\"repo\":null,\"payload\":{\"pull_request\":{\"base\":null}},\"x\":\"cuda\"}",
        "{\"repository\":{\"name\":\"cuda-x\"}}",                 /* no owner */
        "{\"repo\":{\"name\":\"no-slash-cuda\"}}",                 /* not owner/name */
        "{\"repo\":{\"id\":\"7\",\"name\":7},\"payload\":{\"forkee\":[\"cuda\"]}}",
        "{\"repo\":{\"name\":\"a/cuda\"},\"payload\":{\"forkee\":{\"full_name\":null,"
        "\"language\":\"Cuda\"}}}",
    };
    struct repo_agg a;
    int n;
    repo_agg_init(&a);
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        CHECK_OK(gha_scan_line(lines[i], strlen(lines[i]), collect, &a, &n));
    CHECK_INT(a.n, ==, 1);
    CHECK_STR(a.recs[0].full_name, "a/cuda");
    CHECK_INT(a.recs[0].kinds, ==, GHA_EV_NAME_KEYWORD);
    CHECK(!a.recs[0].first_seen[0]); /* no created_at: no time */
    repo_agg_release(&a);
}

static void test_gha_evidence__formats_and_parses_kind_lists(void)
{
    struct buf b = BUF_INIT;
    gha_evidence_format(&b, GHA_EV_LANGUAGE | GHA_EV_NAME_KEYWORD);
    CHECK_STR(b.data, "language,name_keyword");
    CHECK_INT(gha_evidence_parse(b.data), ==, GHA_EV_LANGUAGE | GHA_EV_NAME_KEYWORD);
    CHECK_INT(gha_evidence_parse("bogus,forkee_language"), ==, GHA_EV_FORKEE_LANGUAGE);
    buf_release(&b);
}

/* Write `text` to dir/name, gzip it with the real gzip tool when gz, return the path. */
static char *make_hour(const char *name, const char *text, int gz)
{
    char *path = xasprintf("%s/%s", test_tmpdir(), name);
    test_write_file(path, text, strlen(text));
    if (gz) {
        char *cmd = xasprintf("gzip -n -f '%s'", path);
        CHECK_INT(system(cmd), ==, 0);
        free(cmd);
        char *gzp = xasprintf("%s.gz", path);
        free(path);
        path = gzp;
    }
    return path;
}

static int scan_path(struct gha_scan_stats *st, struct repo_agg *a, const char *path, int mode)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    int rc = gha_scan_fd(st, fd, mode, collect, a);
    close(fd);
    return rc;
}

static char *hour_text(void)
{
    struct buf b = BUF_INIT;
    for (int i = 0; i < 300; i++)
        buf_addf(&b, "%s\n", i % 3 ? plain_ev : i % 2 ? pr_ev : old_ev);
    buf_addf(&b, "{\"broken cuda line\n\n%s", fork_ev); /* last line has no newline */
    return buf_detach(&b, NULL);
}

static void test_gha_scan_fd__counts_events_candidates_and_bad_lines(void)
{
    char *text = hour_text();
    char *path = make_hour("h.json", text, 1);
    struct gha_scan_stats st;
    struct repo_agg a;
    repo_agg_init(&a);
    CHECK_OK(scan_path(&st, &a, path, 1));
    CHECK_INT(st.events, ==, 302);
    CHECK_INT(st.bad_lines, ==, 1);
    CHECK_INT(st.candidates, ==, 101);
    CHECK_INT(st.bytes_raw, ==, strlen(text));
    CHECK_INT(find(&a, "bob/solver")->events, ==, 50);
    CHECK_INT(find(&a, "alice/kernels")->events, ==, 50);
    CHECK_INT(find(&a, "z/y")->events, ==, 1);
    repo_agg_release(&a);
    free(text);
    free(path);
}

static void test_gha_scan_fd__reads_every_byte_at_buffer_boundaries(void)
{
    static const size_t sizes[] = { 1, 262143, 262144, 262145, (1 << 20) + 7, (4 << 20) - 1,
                                    (4 << 20) + 1 };
    static const char *const levels[] = { "-1", "-9" };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (size_t l = 0; l < 2; l++) {
            char *text = xmalloc(sizes[i]);
            for (size_t k = 0; k < sizes[i]; k++) /* short lines with a candidate now and then */
                text[k] = k % 61 == 60 ? '\n' : "{\"cuda\":1}xyz"[k % 13];
            char *path = xasprintf("%s/s%zu.json", test_tmpdir(), i);
            test_write_file(path, text, sizes[i]);
            char *cmd = xasprintf("gzip -n -f %s '%s'", levels[l], path);
            CHECK_INT(system(cmd), ==, 0);
            char *gz = xasprintf("%s.gz", path);
            struct gha_scan_stats st;
            struct repo_agg a;
            repo_agg_init(&a);
            CHECK_OK(scan_path(&st, &a, gz, 1));
            CHECK_INT(st.bytes_raw, ==, sizes[i]);
            size_t lines = text[sizes[i] - 1] != '\n';
            for (size_t k = 0; k < sizes[i]; k++)
                lines += text[k] == '\n';
            CHECK_INT(st.events, ==, lines);
            CHECK_INT(st.bad_lines, ==, st.parsed); /* the lines are not JSON */
            repo_agg_release(&a);
            free(text), free(path), free(cmd), free(gz);
        }
    }
}

static void test_gha_scan_fd__marks_truncated_gzip_bad(void)
{
    char *text = hour_text();
    char *path = make_hour("t.json", text, 1);
    char *cmd = xasprintf("truncate -s -20 '%s'", path);
    CHECK_INT(system(cmd), ==, 0);
    struct gha_scan_stats st;
    struct repo_agg a;
    repo_agg_init(&a);
    CHECK_INT(scan_path(&st, &a, path, 1), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "truncated");
    repo_agg_release(&a);
    free(cmd);
    free(text);
    free(path);
}

static void test_gha_scan_fd__marks_corrupt_gzip_bad(void)
{
    char *text = hour_text();
    char *path = make_hour("c.json", text, 1);
    char *cmd = xasprintf("printf '\\377\\377\\377\\377' | dd of='%s' bs=1 seek=400 conv=notrunc "
                          "status=none", path);
    CHECK_INT(system(cmd), ==, 0);
    struct gha_scan_stats st;
    struct repo_agg a;
    repo_agg_init(&a);
    CHECK_INT(scan_path(&st, &a, path, 1), ==, LSCAT_EINVALID);
    CHECK(strstr(lscat_error_last(), "corrupt") || strstr(lscat_error_last(), "crc"));
    repo_agg_release(&a);
    free(cmd);
    free(text);
    free(path);
}

static void test_gha_scan_fd__marks_non_gzip_and_empty_files_bad(void)
{
    char *p1 = make_hour("n.json.gz", "this is not gzip\n", 0);
    char *p2 = make_hour("e.json.gz", "", 0);
    struct gha_scan_stats st;
    struct repo_agg a;
    repo_agg_init(&a);
    CHECK_INT(scan_path(&st, &a, p1, 1), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "not gzip");
    CHECK_INT(scan_path(&st, &a, p2, 1), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "empty");
    repo_agg_release(&a);
    free(p1);
    free(p2);
}

static void test_gha_scan_fd__reads_concatenated_gzip_members(void)
{
    char *p1 = make_hour("a.json", old_ev, 1);
    char *p2 = make_hour("b.json", "\n{\"type\":\"X\",\"repo\":{\"name\":\"q/cuda-z\"}}\n", 1);
    char *cat = xasprintf("cat '%s' '%s' > '%s/ab.json.gz'", p1, p2, test_tmpdir());
    CHECK_INT(system(cat), ==, 0);
    char *p = xasprintf("%s/ab.json.gz", test_tmpdir());
    struct gha_scan_stats st;
    struct repo_agg a;
    repo_agg_init(&a);
    CHECK_OK(scan_path(&st, &a, p, 1));
    CHECK_INT(st.events, ==, 2);
    CHECK(find(&a, "alice/kernels"));
    CHECK(find(&a, "q/cuda-z"));
    repo_agg_release(&a);
    free(p1), free(p2), free(cat), free(p);
}

static void test_gha_scan_fd__skips_a_line_over_the_cap_and_goes_on(void)
{
    struct buf b = BUF_INIT;
    buf_addf(&b, "%s\n{\"x\":\"", old_ev);
    for (size_t i = 0; i < (size_t)GHA_LINE_CAP_BYTES / 8 + 10; i++)
        buf_adds(&b, "cudacuda");
    buf_addf(&b, "\"}\n%s\n", fork_ev);
    char *path = xasprintf("%s/long.json", test_tmpdir());
    test_write_file(path, b.data, b.len);
    struct gha_scan_stats st;
    struct repo_agg a;
    repo_agg_init(&a);
    CHECK_OK(scan_path(&st, &a, path, 0));
    CHECK_INT(st.events, ==, 3);
    CHECK_INT(st.bad_lines, ==, 1);
    CHECK(find(&a, "alice/kernels"));
    CHECK(find(&a, "z/y"));
    repo_agg_release(&a);
    buf_release(&b);
    free(path);
}

static void test_gha_hours__parse_format_and_expand_templates(void)
{
    time_t t;
    char s[16];
    CHECK_OK(gha_hour_parse(&t, "2015-01-01T05", 0));
    gha_hour_format(s, t);
    CHECK_STR(s, "2015-01-01T05");
    CHECK_OK(gha_hour_parse(&t, "2015-01-31", 23));
    gha_hour_format(s, t);
    CHECK_STR(s, "2015-01-31T23");
    CHECK_INT(gha_hour_parse(&t, "2015-13-01", 0), ==, LSCAT_EINVALID);
    CHECK_INT(gha_hour_parse(&t, "yesterday", 0), ==, LSCAT_EINVALID);
    CHECK_OK(gha_hour_parse(&t, "2015-01-01T05", 0));
    char *u = gha_source_expand(GHA_DEFAULT_SOURCE, t);
    CHECK_STR(u, "https://data.gharchive.org/2015-01-01-5.json.gz");
    free(u);
    u = gha_source_expand("/data/gha/", t);
    CHECK_STR(u, "/data/gha/2015-01-01-5.json.gz");
    free(u);
    u = gha_source_expand("file:///m/{YYYY}{MM}{DD}{HH}.json", t);
    CHECK_STR(u, "file:///m/2015010105.json");
    free(u);
}

/* defect 8 of issue 13: a mistyped source is a usage error, not a night of 'missing' hours */
static void test_gha_source_check__refuses_a_missing_folder_and_unknown_placeholders(void)
{
    char *tmpl = xasprintf("%s/{YYYY}/{MM}-{DD}-{HH}.json.gz", test_tmpdir());
    char *file = xasprintf("file://%s", test_tmpdir());
    CHECK_OK(gha_source_check(GHA_DEFAULT_SOURCE));
    CHECK_OK(gha_source_check(test_tmpdir()));
    CHECK_OK(gha_source_check(file));
    CHECK_OK(gha_source_check(tmpl));
    CHECK_INT(gha_source_check("/nonexistent/folder"), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "'/nonexistent/folder' does not exist");
    CHECK_INT(gha_source_check("file:///nonexistent/{YYYY}-{MM}-{DD}-{H}.json.gz"), ==,
              LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "'/nonexistent/' does not exist");
    CHECK_INT(gha_source_check("https://data.gharchive.org/{YYYY}-{XX}-{DD}-{H}.json.gz"), ==,
              LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "unknown placeholder '{XX}'");
    CHECK_INT(gha_source_check("https://x/{YYYY-{MM}.json.gz"), ==, LSCAT_EINVALID);
    CHECK_INT(gha_source_check("https://x/{YYYY}-{MM"), ==, LSCAT_EINVALID);
    free(tmpl);
    free(file);
}

static void test_repodb__validates_names_used_as_folders(void)
{
    CHECK(repodb_valid_name("NVIDIA/cuda-samples"));
    CHECK(repodb_valid_name("a.b/c_d-e.f"));
    CHECK(!repodb_valid_name("../etc"));
    CHECK(!repodb_valid_name("a/.."));
    CHECK(!repodb_valid_name("a/b/c"));
    CHECK(!repodb_valid_name("a b/c"));
    CHECK(!repodb_valid_name("noslash"));
}

int main(void)
{
    TEST_RUN(test_gha_prefilter__finds_cuda_in_any_case_and_position);
    TEST_RUN(test_gha_scan_line__reads_pre_2015_repository_language);
    TEST_RUN(test_gha_scan_line__reads_pull_request_fork_and_create_payloads);
    TEST_RUN(test_gha_scan_line__rejects_a_line_that_is_not_an_object);
    TEST_RUN(test_gha_scan_line__tolerates_events_missing_fields);
    TEST_RUN(test_gha_evidence__formats_and_parses_kind_lists);
    TEST_RUN(test_gha_scan_fd__counts_events_candidates_and_bad_lines);
    TEST_RUN(test_gha_scan_fd__reads_every_byte_at_buffer_boundaries);
    TEST_RUN(test_gha_scan_fd__marks_truncated_gzip_bad);
    TEST_RUN(test_gha_scan_fd__marks_corrupt_gzip_bad);
    TEST_RUN(test_gha_scan_fd__marks_non_gzip_and_empty_files_bad);
    TEST_RUN(test_gha_scan_fd__reads_concatenated_gzip_members);
    TEST_RUN(test_gha_scan_fd__skips_a_line_over_the_cap_and_goes_on);
    TEST_RUN(test_gha_hours__parse_format_and_expand_templates);
    TEST_RUN(test_gha_source_check__refuses_a_missing_folder_and_unknown_placeholders);
    TEST_RUN(test_repodb__validates_names_used_as_folders);
    return test_done();
}
