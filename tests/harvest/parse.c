/* Tests of harvest's small parsers: repository references in list lines (import.c), the
 * Link header (search.c) and Retry-After values (http.c). */
#include "harvest/http.h"
#include "harvest/import.h"
#include "harvest/search.h"

#include "tests/support/test.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *ref(const char *line)
{
    static char out[256];
    return import_parse_line(out, sizeof(out), line) ? out : NULL;
}

static void test_import_parse_line__finds_names_in_csv_and_urls(void)
{
    CHECK_STR(ref("NVIDIA/cuda-samples"), "NVIDIA/cuda-samples");
    CHECK_STR(ref("\"NVIDIA/cuda-samples\",5000,Cuda"), "NVIDIA/cuda-samples");
    CHECK_STR(ref("12345,https://github.com/a/b/tree/main/src"), "a/b");
    CHECK_STR(ref("https://api.github.com/repos/o/n"), "o/n");
    CHECK_STR(ref("git@github.com:o/n.git"), "o/n");
    CHECK_STR(ref("https://github.com/o/n.git"), "o/n");
    CHECK_STR(ref("x\thttps://github.com/o/n?tab=readme"), "o/n");
}

static void test_import_parse_line__rejects_headers_and_unsafe_names(void)
{
    CHECK(!ref("repo_name,stars"));
    CHECK(!ref("../../etc/passwd"));
    CHECK(!ref("https://github.com/o/.."));
    CHECK(!ref("https://gitlab.com/o/n"));
    CHECK(!ref("a/b/c"));
    CHECK(!ref(""));
}

static void test_search_link_next__picks_rel_next(void)
{
    char out[256];
    CHECK(search_link_next(out, sizeof(out),
                           "<https://api.github.com/x?page=2>; rel=\"next\", "
                           "<https://api.github.com/x?page=9>; rel=\"last\""));
    CHECK_STR(out, "https://api.github.com/x?page=2");
    CHECK(search_link_next(out, sizeof(out),
                           "<https://a/x?page=1>; rel=\"prev\", <https://a/x?page=3>; rel=\"next\""));
    CHECK_STR(out, "https://a/x?page=3");
    CHECK(!search_link_next(out, sizeof(out), "<https://a/x?page=1>; rel=\"prev\""));
    CHECK(!search_link_next(out, sizeof(out), "garbage"));
}

static void test_http_parse_retry_after__reads_seconds_and_dates(void)
{
    char date[64];
    time_t t = time(NULL) + 100;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    CHECK_INT((long)http_parse_retry_after("7"), ==, 7);
    double d = http_parse_retry_after(date);
    CHECK(d > 90 && d <= 101);
    CHECK_INT((long)http_parse_retry_after("Mon, 01 Jan 2001 00:00:00 GMT"), ==, 0);
    CHECK(http_parse_retry_after("soon") < 0);
}

int main(void)
{
    TEST_RUN(test_import_parse_line__finds_names_in_csv_and_urls);
    TEST_RUN(test_import_parse_line__rejects_headers_and_unsafe_names);
    TEST_RUN(test_search_link_next__picks_rel_next);
    TEST_RUN(test_http_parse_retry_after__reads_seconds_and_dates);
    return test_done();
}
