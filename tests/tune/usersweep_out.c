/* Tests of what lscat-mpi's rank 0 uses to write a sweep's output from workers' chunks: the
 * `--records` list of a chunk (bonsai_records_parse) and a chunk row appended to the output
 * (usersweep_out_append_row), whose user columns may come in another order or be missing. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "tests/support/test.h"
#include "tune/bonsai.h"
#include "tune/usersweep.h"

#include <stdlib.h>
#include <string.h>

static void test_records__lists_and_ranges_select_exactly_those_records(void)
{
    char sel[13] = { 0 };
    CHECK_OK(bonsai_records_parse(sel, 12, "3,5-7,12"));
    const char want[13] = { 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1 };
    CHECK(memcmp(sel, want, sizeof(want)) == 0);
    CHECK_OK(bonsai_records_parse(NULL, 12, "1-12")); /* syntax only */
}

static void test_records__bad_lists_are_refused_naming_the_list_and_the_range(void)
{
    static const char *const bad[] = { "0", "5-3", "x", "3,,4", "2;3", "1-13", "13", "-2" };
    char sel[13];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(sel, 0, sizeof(sel));
        CHECK_INT(bonsai_records_parse(sel, 12, bad[i]), ==, LSCAT_EINVALID);
        CHECK_CONTAINS(lscat_error_last(), bad[i]);
        CHECK_CONTAINS(lscat_error_last(), "from 1 to 12");
    }
}

static struct bonsai_space *space(void)
{
    static const char text[] = "BS,N\nInteger,Integer\nCompile,Runtime\n16,100\n16,200\n32,100\n";
    struct bonsai_space *s = NULL;
    CHECK_OK(bonsai_space_parse(&s, "s.csv", text, strlen(text)));
    return s;
}

static char *read_all(const char *path)
{
    struct buf b = BUF_INIT;
    CHECK_OK(buf_read_file(&b, path));
    return buf_detach(&b, NULL);
}

static void test_append_row__copies_a_row_whose_columns_match_as_it_is(void)
{
    struct bonsai_space *s = space();
    struct usersweep_out *f = NULL;
    char *path = fs_join(test_tmpdir(), "out.csv");
    CHECK_OK(usersweep_out_open(&f, path, s, "Gflops,Bytes"));
    CHECK_OK(usersweep_out_append_row(f, "1,16,100,Success,None,0.5,3.25,64", "Gflops,Bytes"));
    CHECK_OK(usersweep_out_close(f));
    char *text = read_all(path);
    CHECK_CONTAINS(text, "Record,BS,N,Status,Error,Time,Gflops,Bytes\n");
    CHECK_CONTAINS(text, "\n1,16,100,Success,None,0.5,3.25,64\n");
    free(text);
    free(path);
    bonsai_space_free(s);
}

static void test_append_row__rewrites_other_columns_by_name_leaving_missing_ones_empty(void)
{
    struct bonsai_space *s = space();
    struct usersweep_out *f = NULL;
    char *path = fs_join(test_tmpdir(), "out.csv");
    CHECK_OK(usersweep_out_open(&f, path, s, "Gflops,Bytes"));
    CHECK_OK(usersweep_out_append_row(f, "2,16,200,Success,None,0.6,128,7.5", "Bytes,Gflops"));
    CHECK_OK(usersweep_out_append_row(f, "3,32,100,Failure,Launch,,", "Bytes"));
    CHECK_OK(usersweep_out_append_row(f, "1,16,100,Failure,Compile,", ""));
    CHECK_OK(usersweep_out_close(f));
    char *text = read_all(path);
    CHECK_CONTAINS(text, "\n2,16,200,Success,None,0.6,7.5,128\n");
    CHECK_CONTAINS(text, "\n3,32,100,Failure,Launch,,,\n");
    CHECK_CONTAINS(text, "\n1,16,100,Failure,Compile,,,\n");
    free(text);
    free(path);
    bonsai_space_free(s);
}

static void test_append_row__a_ragged_row_gets_empty_fields_not_a_torn_line(void)
{
    struct bonsai_space *s = space();
    struct usersweep_out *f = NULL;
    char *path = fs_join(test_tmpdir(), "out.csv");
    CHECK_OK(usersweep_out_open(&f, path, s, "Gflops"));
    CHECK_OK(usersweep_out_append_row(f, "2,16,200", "Bytes"));
    CHECK_OK(usersweep_out_close(f));
    char *text = read_all(path);
    CHECK_CONTAINS(text, "\n2,16,200,,,,\n");
    free(text);
    free(path);
    bonsai_space_free(s);
}

int main(void)
{
    TEST_RUN(test_records__lists_and_ranges_select_exactly_those_records);
    TEST_RUN(test_records__bad_lists_are_refused_naming_the_list_and_the_range);
    TEST_RUN(test_append_row__copies_a_row_whose_columns_match_as_it_is);
    TEST_RUN(test_append_row__rewrites_other_columns_by_name_leaving_missing_ones_empty);
    TEST_RUN(test_append_row__a_ragged_row_gets_empty_fields_not_a_torn_line);
    return test_done();
}
