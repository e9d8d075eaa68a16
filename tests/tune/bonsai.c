/* Tests of tune/bonsai.c: BONSAI spaces parse strictly, errors name file, line and column,
 * records group by their compile-time tuple, and record selection splits deterministically. */
#include "common/error.h"
#include "tests/support/test.h"
#include "tune/bonsai.h"

#include <stdlib.h>
#include <string.h>

static struct bonsai_space *parse_ok(const char *text)
{
    struct bonsai_space *s = NULL;
    CHECK_OK(bonsai_space_parse(&s, "s.csv", text, strlen(text)));
    return s;
}

/* Parse `text`, expect LSCAT_EINVALID with a message containing `want`. */
static void parse_bad(const char *text, const char *want)
{
    struct bonsai_space *s = NULL;
    CHECK_INT(bonsai_space_parse(&s, "s.csv", text, strlen(text)), ==, LSCAT_EINVALID);
    CHECK(s == NULL);
    CHECK_CONTAINS(lscat_error_last(), want);
}

static void test_bonsai__parses_names_types_bindings_and_records(void)
{
    struct bonsai_space *s = parse_ok("BS,N,Kind\r\nInteger,Real,String\r\nCompile,Runtime,"
                                      "Compile\r\n16,1.5e3,\"a,\"\"b\"\"\"\r\n\r\n32,2,plain\r\n");
    CHECK_INT(s->nparams, ==, 3);
    CHECK_STR(s->params[1].name, "N");
    CHECK_INT(s->params[1].type, ==, BONSAI_REAL);
    CHECK_INT(s->params[2].type, ==, BONSAI_STRING);
    CHECK_INT(s->params[0].when, ==, BONSAI_COMPILE);
    CHECK_INT(s->params[1].when, ==, BONSAI_RUNTIME);
    CHECK_INT(s->nrecords, ==, 2);
    CHECK_STR(s->records[0].values[2], "a,\"b\"");
    CHECK_INT(s->records[1].index, ==, 2);
    CHECK_INT(s->records[1].line, ==, 6);
    bonsai_space_free(s);
}

static void test_bonsai__groups_records_by_compile_time_tuple(void)
{
    struct bonsai_space *s = parse_ok("A,N,B\nInteger,Integer,String\nCompile,Runtime,Compile\n"
                                      "1,10,x\n2,10,x\n1,20,x\n1,30,y\n2,40,x\n");
    CHECK_INT(s->ngroups, ==, 3);
    CHECK_INT(s->groups[0].nrecords, ==, 2);
    CHECK_INT(s->groups[0].records[1], ==, 2); /* record 3 joins record 1's tuple */
    CHECK_INT(s->groups[1].nrecords, ==, 2);
    CHECK_INT(s->records[4].group, ==, 1);
    CHECK_INT(s->records[3].group, ==, 2);
    char **f = bonsai_group_flags(s, 2);
    CHECK_STR(f[0], "-DA=1");
    CHECK_STR(f[1], "-DB=y");
    CHECK(f[2] == NULL);
    bonsai_flags_free(f);
    bonsai_space_free(s);
}

static void test_bonsai__runtime_only_space_is_one_group(void)
{
    struct bonsai_space *s = parse_ok("N\nInteger\nRuntime\n1\n2\n3\n");
    CHECK_INT(s->ngroups, ==, 1);
    CHECK_INT(s->groups[0].nrecords, ==, 3);
    char **f = bonsai_group_flags(s, 0);
    CHECK(f[0] == NULL);
    bonsai_flags_free(f);
    bonsai_space_free(s);
}

static void test_bonsai__malformed_spaces_name_line_and_column(void)
{
    parse_bad("", "s.csv:1:1: empty space");
    parse_bad("A,B\n", "s.csv:2:1: missing line 2");
    parse_bad("A,B\nInteger,Integer\n", "missing line 3");
    parse_bad("A,B\nInteger,Integer\nCompile,Runtime\n", "no records");
    parse_bad("A,B\nInteger,Float\nCompile,Runtime\n1,2\n", "s.csv:2:9: unknown type");
    parse_bad("A,B\nInteger\nCompile,Runtime\n1,2\n", "s.csv:2:1: line 2 must give a type");
    parse_bad("A,B\nInteger,Integer\nCompile,Runtime,Runtime\n1,2\n", "s.csv:3:17: line 3");
    parse_bad("A,B\nInteger,Integer\nCompile,Runtime\n1,2\n3\n", "s.csv:5:1: 1 values for 2");
    parse_bad("A,B\nInteger,Integer\nCompile,Runtime\n1,2,3\n", "s.csv:4:5: 3 values for 2");
    parse_bad("A,B\nInteger,Integer\nCompile,Runtime\n1,2\n1,2x\n", "s.csv:5:3: '2x' is not an "
                                                                    "Integer (column B)");
    parse_bad("A,B\nInteger,Real\nCompile,Runtime\n1,\n", "s.csv:4:3: '' is not a Real");
    parse_bad("A,1B\nInteger,Integer\nCompile,Runtime\n1,2\n", "s.csv:1:3: a parameter name");
    parse_bad("A,A\nInteger,Integer\nCompile,Runtime\n1,2\n", "s.csv:1:3: parameter name given "
                                                              "twice");
    parse_bad("A,Time\nInteger,Integer\nCompile,Runtime\n1,2\n", "s.csv:1:3: this name is one");
    parse_bad("A,B\nString,String\nCompile,Runtime\n\"x,y\n", "s.csv:4:5: a tab or line break");
    parse_bad("A,B\nString,String\nCompile,Runtime\nx,\"y", "s.csv:4:3: unterminated");
    parse_bad("A,B\nString,String\nCompile,Runtime\nx,a\"b\n", "s.csv:4:4: a quote inside");
    parse_bad("A,B\nString,String\nCompile,Runtime\nx,a\tb\n", "s.csv:4:4: a tab inside");
}

static void test_bonsai__shards_split_records_deterministically_and_completely(void)
{
    int seen[31] = { 0 };
    for (int shard = 0; shard < 4; shard++)
        for (int i = 1; i <= 30; i++)
            seen[i] += bonsai_selected(i, 0, 0, shard, 4);
    for (int i = 1; i <= 30; i++)
        CHECK_INT(seen[i], ==, 1);
    CHECK(bonsai_selected(5, 0, 0, 0, 4));   /* (5-1) mod 4 = 0 */
    CHECK(!bonsai_selected(5, 0, 0, 1, 4));
    CHECK(bonsai_selected(3, 3, 5, 0, 0));
    CHECK(!bonsai_selected(6, 3, 5, 0, 0));
    CHECK(!bonsai_selected(2, 3, 0, 0, 0));
    CHECK(bonsai_selected(99, 3, 0, 0, 1));
}

int main(void)
{
    TEST_RUN(test_bonsai__parses_names_types_bindings_and_records);
    TEST_RUN(test_bonsai__groups_records_by_compile_time_tuple);
    TEST_RUN(test_bonsai__runtime_only_space_is_one_group);
    TEST_RUN(test_bonsai__malformed_spaces_name_line_and_column);
    TEST_RUN(test_bonsai__shards_split_records_deterministically_and_completely);
    return test_done();
}
