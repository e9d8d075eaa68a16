/* Tests of mcts/dag: the format, the shipped SpMV DAG, and malformed inputs refused with a
 * message naming the line and the problem. */
#include "common/error.h"
#include "mcts/dag.h"
#include "tests/support/test.h"

#include <string.h>

static void refused(const char *text, const char *needle)
{
    struct mcts_dag *d = (struct mcts_dag *)1;
    int rc = mcts_dag_parse(&d, text, "my.dag");
    if (rc != LSCAT_EINVALID || d != NULL)
        test_fail(__FILE__, __LINE__, "'%s' was accepted (rc %d)", text, rc);
    CHECK_CONTAINS(lscat_error_last(), needle);
}

static void test_dag__reads_the_shipped_spmv(void)
{
    struct mcts_dag *d = NULL;
    CHECK_OK(mcts_dag_load(&d, "mcts/dags/spmv.dag"));
    CHECK_INT(d->n, ==, 10); /* 8 operations, start, end */
    CHECK_INT(mcts_dag_gpu_count(d), ==, 4);
    int pack = mcts_dag_find(d, "Pack");
    CHECK_INT(mcts_dag_find(d, "Scatter"), ==, pack); /* the authors' name */
    CHECK_STR(d->v[pack].op, "pack");
    int y = mcts_dag_find(d, "y");
    CHECK_INT(d->v[y].npreds, ==, 2);
    CHECK_STR(d->v[d->v[y].preds[0]].name, "yl"); /* predecessors in name order */
    CHECK_STR(d->v[d->v[y].preds[1]].name, "yr");
    CHECK_INT(d->v[mcts_dag_find(d, "yl")].preds[0], ==, 0); /* follows start */
    CHECK(mcts_dag_reaches(d, pack, y));
    CHECK(!mcts_dag_reaches(d, mcts_dag_find(d, "yl"), pack));
    CHECK_INT(strlen(d->sha256), ==, 64);
    mcts_dag_free(d);
}

static void test_dag__vertices_without_predecessors_follow_start(void)
{
    struct mcts_dag *d = NULL;
    CHECK_OK(mcts_dag_parse(&d, "a b -> end\ncpu a\ngpu b # edges may come first\n", "x"));
    CHECK_INT(d->v[1].npreds, ==, 1);
    CHECK_INT(d->v[1].preds[0], ==, 0);
    CHECK_INT(d->v[2].kind, ==, MCTS_GPU);
    mcts_dag_free(d);
}

static void test_dag__refuses_a_cycle_naming_its_line(void)
{
    refused("cpu a\ncpu b\ncpu c\na -> b\nb -> c\nc -> a\nc -> end\n",
            "my.dag:6: edge 'c -> a' closes a cycle (a -> b -> c -> a)");
    refused("cpu a\na -> a\na -> end\n", "my.dag:2: edge 'a -> a' is a cycle");
}

static void test_dag__refuses_an_unknown_vertex(void)
{
    refused("cpu a\na -> b\n", "my.dag:2: unknown vertex 'b' (declare it with 'cpu b' or 'gpu b')");
}

static void test_dag__refuses_a_duplicate_name(void)
{
    refused("cpu a\ngpu a\na -> end\n", "my.dag:2: duplicate vertex 'a' (first declared on line 1)");
    refused("cpu end\n", "my.dag:1: 'end' is implicit");
}

static void test_dag__refuses_a_vertex_with_no_path_to_end(void)
{
    refused("cpu a\ncpu b\n\na -> end\n", "my.dag:2: vertex 'b' has no path to end");
}

static void test_dag__refuses_a_bad_kind(void)
{
    refused("cpu a\ntpu b\na -> end\n", "my.dag:2: bad kind 'tpu'");
    refused("gpu a foo=1\na -> end\n", "my.dag:1: unknown attribute 'foo=1'");
    refused("cpu a\na -> -> end\n", "my.dag:2: an edge line reads");
    refused("# nothing\n", "my.dag: no vertices");
}

int main(void)
{
    TEST_RUN(test_dag__reads_the_shipped_spmv);
    TEST_RUN(test_dag__vertices_without_predecessors_follow_start);
    TEST_RUN(test_dag__refuses_a_cycle_naming_its_line);
    TEST_RUN(test_dag__refuses_an_unknown_vertex);
    TEST_RUN(test_dag__refuses_a_duplicate_name);
    TEST_RUN(test_dag__refuses_a_vertex_with_no_path_to_end);
    TEST_RUN(test_dag__refuses_a_bad_kind);
    return test_done();
}
