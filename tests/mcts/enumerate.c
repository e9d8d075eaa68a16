/* Tests of mcts/dag, mcts/sync and mcts/enumerate: counts on small DAGs worked out by hand,
 * the synchronisation steps and their names, brute force against the de-duplicated walk on
 * 1, 2 and 3 streams, and the 2,036 SpMV implementations against the authors' file. */
#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "mcts/dag.h"
#include "mcts/enumerate.h"
#include "mcts/keyset.h"
#include "mcts/sync.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct mcts_dag *dag_of(const char *text)
{
    struct mcts_dag *d = NULL;
    if (mcts_dag_parse(&d, text, "test.dag") < 0)
        test_fail(__FILE__, __LINE__, "parse: %s", lscat_error_last());
    return d;
}

static int64_t count(const char *text, int streams)
{
    struct mcts_dag *d = dag_of(text);
    int64_t n = mcts_enumerate(d, streams, 1, NULL, NULL, NULL);
    mcts_dag_free(d);
    return n;
}

static const char one_gpu[] = "gpu a\na -> end\n";
static const char gpu_chain[] = "gpu a\ngpu b\na -> b\nb -> end\n";
static const char two_cpu[] = "cpu x\ncpu y\nx y -> end\n";
static const char two_gpu[] = "gpu a\ngpu b\na b -> end\n";

static void test_enumerate__counts_small_dags_as_worked_out_by_hand(void)
{
    CHECK_INT(count(one_gpu, 1), ==, 1);
    CHECK_INT(count(one_gpu, 2), ==, 1); /* a on stream 1 is a renaming of stream 0 */
    CHECK_INT(count(gpu_chain, 1), ==, 1);
    CHECK_INT(count(gpu_chain, 2), ==, 2); /* b on a's stream, or on the other with a wait */
    CHECK_INT(count(two_cpu, 1), ==, 2);   /* x y, y x */
    CHECK_INT(count(two_gpu, 1), ==, 2);   /* a b, b a; one record and one sync serve both */
    /* two streams: the 2 above plus, per order, 6 interleavings of two record/sync pairs */
    CHECK_INT(count(two_gpu, 2), ==, 14);
}

struct collect {
    struct buf all;
};

static int collect_json(void *ctx, const struct mcts_seq *seq)
{
    struct collect *c = ctx;
    mcts_seq_json(&c->all, seq);
    buf_addch(&c->all, '\n');
    return 0;
}

static void test_sync__inserts_record_and_stream_wait_between_streams(void)
{
    struct mcts_dag *d = dag_of(gpu_chain);
    struct collect c = { BUF_INIT };
    CHECK_INT(mcts_enumerate(d, 2, 1, collect_json, &c, NULL), ==, 2);
    CHECK_CONTAINS(c.all.data,
                   "{\"name\":\"start\"}|{\"name\":\"a\",\"stream\":0}|"
                   "{\"event\":0,\"kind\":\"CudaEventRecord\",\"name\":\"CER-b4-b\",\"stream\":0}|"
                   "{\"event\":0,\"kind\":\"CudaStreamWaitEvent\",\"name\":\"CSWE-after-a\","
                   "\"stream\":1}|{\"name\":\"b\",\"stream\":1}|"
                   "{\"event\":1,\"kind\":\"CudaEventRecord\",\"name\":\"CER-after-b\","
                   "\"stream\":1}|{\"event\":1,\"kind\":\"CudaEventSync\",\"name\":\"CES-b4-end\"}"
                   "|{\"name\":\"end\"}\n");
    /* same stream: no record or wait between a and b */
    CHECK_CONTAINS(c.all.data, "{\"name\":\"a\",\"stream\":0}|{\"name\":\"b\",\"stream\":0}|");
    buf_release(&c.all);
    mcts_dag_free(d);
}

static void test_sync__reuses_a_record_that_serves_two_predecessors(void)
{
    struct mcts_dag *d = dag_of(two_gpu);
    struct collect c = { BUF_INIT };
    CHECK_INT(mcts_enumerate(d, 1, 1, collect_json, &c, NULL), ==, 2);
    /* one record after both (named after the later in name order), one synchronize */
    CHECK_CONTAINS(c.all.data, "{\"name\":\"a\",\"stream\":0}|{\"name\":\"b\",\"stream\":0}|"
                               "{\"event\":0,\"kind\":\"CudaEventRecord\",\"name\":"
                               "\"CER-after-b\",\"stream\":0}|{\"event\":0,\"kind\":"
                               "\"CudaEventSync\",\"name\":\"CES-b4-end\"}|{\"name\":\"end\"}");
    buf_release(&c.all);
    mcts_dag_free(d);
}

static void test_sync__cpu_producer_and_start_need_nothing(void)
{
    struct mcts_dag *d = dag_of("cpu x\ngpu a\nx -> a\na -> end\n");
    struct collect c = { BUF_INIT };
    CHECK_INT(mcts_enumerate(d, 2, 1, collect_json, &c, NULL), ==, 1);
    CHECK_CONTAINS(c.all.data, "{\"name\":\"start\"}|{\"name\":\"x\"}|{\"name\":\"a\","
                               "\"stream\":0}|{\"event\":0");
    buf_release(&c.all);
    mcts_dag_free(d);
}

static char *spmv_text(void)
{
    struct buf b = BUF_INIT;
    if (buf_read_file(&b, "mcts/dags/spmv.dag") < 0)
        test_fail(__FILE__, __LINE__, "%s", lscat_error_last());
    return buf_detach(&b, NULL);
}

static void test_enumerate__equals_brute_force_then_dedup_on_1_2_3_streams(void)
{
    char *spmv = spmv_text();
    const char *dags[] = {
        one_gpu, gpu_chain, two_gpu, two_cpu, spmv,
        "gpu a\ngpu b\ngpu c\ngpu d\na -> b c\nb c -> d\nd -> end\n",          /* diamond */
        "gpu a\ngpu b\ngpu c\na -> b c\nb c -> end\n",   /* one producer, two GPU consumers */
        "cpu s\ngpu k\ncpu w\ngpu m\ns -> w\nk -> w m\nw m -> end\n",      /* mixed */
    };
    for (size_t i = 0; i < sizeof(dags) / sizeof(dags[0]); i++) {
        struct mcts_dag *d = dag_of(dags[i]);
        for (int s = 1; s <= 3; s++) {
            int64_t raw_walk = 0, raw_brute = 0;
            int64_t walk = mcts_enumerate(d, s, 1, NULL, NULL, &raw_walk);
            int64_t brute = mcts_enumerate(d, s, 0, NULL, NULL, &raw_brute);
            if (walk <= 0 || walk != brute)
                test_fail(__FILE__, __LINE__, "dag %zu, %d streams: walk %lld, brute force %lld",
                          i, s, (long long)walk, (long long)brute);
            if (s > 1 && mcts_dag_gpu_count(d) > 0)
                CHECK(raw_brute > brute); /* brute force did meet renamings */
        }
        mcts_dag_free(d);
    }
    free(spmv);
}

static void test_enumerate__spmv_on_two_streams_has_2036_implementations(void)
{
    char *spmv = spmv_text();
    struct mcts_dag *d = dag_of(spmv);
    int64_t raw = 0;
    CHECK_INT(mcts_enumerate(d, 2, 1, NULL, NULL, &raw), ==, 2036);
    CHECK_INT(raw, ==, 2036); /* the walk meets each implementation once */
    CHECK_INT(mcts_enumerate(d, 1, 1, NULL, NULL, NULL), ==, 175);
    CHECK_INT(mcts_enumerate(d, 3, 1, NULL, NULL, NULL), ==, 8507);
    mcts_dag_free(d);
    free(spmv);
}

struct keys {
    struct mcts_keyset *ks;
    uint8_t key[MCTS_MAX_STEPS * MCTS_KEY_STEP_BYTES];
};

static int put_key(void *ctx, const struct mcts_seq *seq)
{
    struct keys *k = ctx;
    mcts_keyset_put(k->ks, k->key, mcts_seq_key(k->key, seq), 1);
    return 0;
}

static void test_enumerate__matches_the_authors_2036_one_for_one(void)
{
    const char *path = test_data("tenzing/spmv_coverage_1n_4r_150000.csv");
    char *spmv = spmv_text();
    struct mcts_dag *d = dag_of(spmv);
    struct keys *k = xcalloc(1, sizeof(*k));
    struct mcts_keyset *file = mcts_keyset_new();
    struct mcts_seq *seq = xmalloc(sizeof(*seq));
    k->ks = mcts_keyset_new();
    CHECK_INT(mcts_enumerate(d, 2, 1, put_key, k, NULL), ==, 2036);
    FILE *f = fopen(path, "r");
    CHECK(f);
    char *line = NULL;
    size_t cap = 0;
    int rows = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        char *p = line;
        for (int bar = 0; bar < 7; bar++)
            p = strchr(p, '|') + 1;
        CHECK_OK(mcts_seq_parse(seq, d, p));
        size_t len = mcts_seq_key(k->key, seq);
        if (mcts_keyset_get(k->ks, k->key, len) < 0)
            test_fail(__FILE__, __LINE__, "row %d is not among ours", rows);
        mcts_keyset_put(file, k->key, len, rows++);
    }
    CHECK_INT(rows, ==, 2036);
    CHECK_INT(mcts_keyset_count(file), ==, 2036); /* every row a different implementation */
    free(line);
    fclose(f);
    free(seq);
    mcts_keyset_free(file);
    mcts_keyset_free(k->ks);
    free(k);
    mcts_dag_free(d);
    free(spmv);
}

int main(void)
{
    TEST_RUN(test_enumerate__counts_small_dags_as_worked_out_by_hand);
    TEST_RUN(test_sync__inserts_record_and_stream_wait_between_streams);
    TEST_RUN(test_sync__reuses_a_record_that_serves_two_predecessors);
    TEST_RUN(test_sync__cpu_producer_and_start_need_nothing);
    TEST_RUN(test_enumerate__equals_brute_force_then_dedup_on_1_2_3_streams);
    TEST_RUN(test_enumerate__spmv_on_two_streams_has_2036_implementations);
    TEST_RUN(test_enumerate__matches_the_authors_2036_one_for_one);
    return test_done();
}
