/* Tests of mcts/features: "u before v" and "same stream" columns, constant and duplicate
 * columns dropped, sentences in both forms, rows for unseen sequences. */
#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "mcts/enumerate.h"
#include "mcts/features.h"
#include "tests/support/test.h"

#include <stdlib.h>
#include <string.h>

struct rows {
    struct mcts_seq *seqs[64];
    int n;
};

static int keep(void *ctx, const struct mcts_seq *seq)
{
    struct rows *r = ctx;
    r->seqs[r->n] = xmalloc(sizeof(*seq));
    memcpy(r->seqs[r->n++], seq, sizeof(*seq));
    return 0;
}

static void rows_of(struct rows *r, struct mcts_dag **dag, const char *text, int streams)
{
    r->n = 0;
    CHECK_OK(mcts_dag_parse(dag, text, "t.dag"));
    CHECK_OK(mcts_enumerate(*dag, streams, 1, keep, r, NULL));
}

static void rows_free(struct rows *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->seqs[i]);
}

static void test_features__order_columns_keep_both_directions_and_drop_constants(void)
{
    struct rows r;
    struct mcts_dag *d = NULL;
    struct mcts_features f;
    struct buf s = BUF_INIT;
    rows_of(&r, &d, "cpu x\ncpu y\nx y -> end\n", 1);
    CHECK_INT(r.n, ==, 2);
    mcts_features_build(&f, (const struct mcts_seq *const *)r.seqs, r.n);
    CHECK_INT(f.cols, ==, 2); /* start before x, x before end, ... are constant */
    mcts_features_sentence(&s, &f, 0, 1);
    CHECK_STR(s.data, "x before y");
    buf_reset(&s);
    mcts_features_sentence(&s, &f, 1, 0);
    CHECK_STR(s.data, "y not before x");
    CHECK_INT(f.x[0] + f.x[2], ==, 1); /* x before y in exactly one of the two rows */
    CHECK_INT(f.x[0], !=, f.x[1]);
    buf_release(&s);
    mcts_features_release(&f);
    rows_free(&r);
    mcts_dag_free(d);
}

static void test_features__same_stream_column_comes_first_and_duplicates_go(void)
{
    struct rows r;
    struct mcts_dag *d = NULL;
    struct mcts_features f;
    struct buf s = BUF_INIT;
    rows_of(&r, &d, "gpu a\ngpu b\na -> b\nb -> end\n", 2);
    CHECK_INT(r.n, ==, 2);
    mcts_features_build(&f, (const struct mcts_seq *const *)r.seqs, r.n);
    mcts_features_sentence(&s, &f, 0, 0);
    CHECK_STR(s.data, "a different stream than b");
    /* with two rows every varying column equals the first or its complement */
    CHECK_INT(f.cols, ==, 2);
    CHECK_INT(f.x[0 * f.cols], !=, f.x[1 * f.cols]);
    uint8_t row[8];
    mcts_features_row(row, &f, r.seqs[1]);
    CHECK(!memcmp(row, f.x + f.cols, (size_t)f.cols));
    buf_release(&s);
    mcts_features_release(&f);
    rows_free(&r);
    mcts_dag_free(d);
}

int main(void)
{
    TEST_RUN(test_features__order_columns_keep_both_directions_and_drop_constants);
    TEST_RUN(test_features__same_stream_column_comes_first_and_duplicates_go);
    return test_done();
}
