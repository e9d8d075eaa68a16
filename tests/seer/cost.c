/* Tests of which feature cost Seer charges (docs/seer.md, Session 8): the asynchronous
 * gathering's exposed costs (flows "async" and "async-resident", migration 008) read from a
 * bench CSV per precision and written back, loaded into a table instead of the synchronous cost
 * when asked (negative measurements clamped at 0; a matrix without one is an error saying what
 * to run), recorded in model.json, and charged by eval. Real SQLite store; the costmodel fixture
 * (times from a cost model, not a GPU). */
#include "tests/support/test.h"

#include "common/error.h"
#include "seer/eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct store *open_store(const char *name)
{
    char db[600];
    struct store *s;
    snprintf(db, sizeof(db), "%s/%s.db", test_tmpdir(), name);
    CHECK_OK(store_open(&s, db, STORE_CREATE));
    return s;
}

/* Two matrices, both precisions, two kernels; b has no asynchronous costs in double. */
static const char TABLE[] = SEER_CSV_HEADER "\n"
    "a,file,,3,3,6,2,2,2,0,G,u,20000,csr_warp,double,ok,0,5000,0,,-500,7000,9000\n"
    "a,file,,3,3,6,2,2,2,0,G,u,20000,csr_thread,double,ok,0,6000,0,,-500,7000,9000\n"
    "a,file,,3,3,6,2,2,2,0,G,u,20000,csr_warp,float,ok,0,4000,0,,3000,6000,8000\n"
    "a,file,,3,3,6,2,2,2,0,G,u,20000,csr_thread,float,ok,0,4500,0,,3000,6000,8000\n"
    "b,file,,4,4,4,1,1,1,0,G,u,15000,csr_warp,double,ok,0,5000,0,,,,\n"
    "b,file,,4,4,4,1,1,1,0,G,u,15000,csr_warp,float,ok,0,4000,0,,2500,5500,7500\n";

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char *text = calloc(1, 1 << 16);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    CHECK(n > 0);
    return text;
}

static void import_table(struct store *s, const char *name, const char *text, size_t len)
{
    char csv[600];
    int64_t rows = 0;
    snprintf(csv, sizeof(csv), "%s/%s", test_tmpdir(), name);
    test_write_file(csv, text, len);
    CHECK_OK(seer_db_import_csv(s, csv, &rows));
    CHECK_INT(rows, >, 0);
}

static void test_seer_table__loads_the_async_cost_of_its_precision_clamped_at_zero(void)
{
    struct store *s = open_store("precision");
    struct seer_table t;
    import_table(s, "t.csv", TABLE, sizeof(TABLE) - 1);
    CHECK_OK(seer_table_load(&t, s, NULL, "float", SEER_COST_ASYNC));
    CHECK_INT(t.n, ==, 2);
    CHECK_INT(t.feature_cost, ==, SEER_COST_ASYNC);
    CHECK(t.rows[0].feature_ns == 3000 && t.rows[1].feature_ns == 2500);
    seer_table_release(&t);
    CHECK_OK(seer_table_load(&t, s, NULL, "float", SEER_COST_ASYNC_RESIDENT));
    CHECK_INT(t.feature_cost, ==, SEER_COST_ASYNC_RESIDENT);
    CHECK(t.rows[0].feature_ns == 6000 && t.rows[1].feature_ns == 5500);
    seer_table_release(&t);
    CHECK_OK(seer_table_load(&t, s, NULL, "float", SEER_COST_SYNC_UPLOAD));
    CHECK(t.rows[0].feature_ns == 8000 && t.rows[1].feature_ns == 7500);
    seer_table_release(&t);
    CHECK_OK(seer_table_load(&t, s, NULL, "float", SEER_COST_SYNC));
    CHECK(t.rows[0].feature_ns == 20000 && t.rows[1].feature_ns == 15000);
    seer_table_release(&t);
    CHECK_OK(store_run(s, "UPDATE seer_feature_costs SET async_double_ns = 100 WHERE "
                       "async_double_ns IS NULL", ""));
    CHECK_OK(seer_table_load(&t, s, NULL, "double", SEER_COST_ASYNC));
    CHECK(t.rows[0].feature_ns == 0); /* -500 measured: the flow with gathering was as fast */
    CHECK(t.rows[1].feature_ns == 100);
    seer_table_release(&t);
    store_free(s);
}

static void test_seer_table__a_matrix_without_an_async_cost_is_an_error_saying_what_to_run(void)
{
    struct store *s = open_store("missing");
    struct seer_table t;
    import_table(s, "t.csv", TABLE, sizeof(TABLE) - 1);
    CHECK_INT(seer_table_load(&t, s, NULL, "double", SEER_COST_ASYNC), ==, LSCAT_ENOTFOUND);
    CHECK_CONTAINS(lscat_error_last(), "1 of 2 matrices (first: b) have no 'async' feature cost");
    CHECK_CONTAINS(lscat_error_last(), "bench --features-only --force");
    CHECK(t.rows == NULL);
    CHECK_INT(seer_table_load(&t, s, NULL, "double", SEER_COST_ASYNC_RESIDENT), ==,
              LSCAT_ENOTFOUND);
    CHECK_CONTAINS(lscat_error_last(), "have no 'async-resident' feature cost");
    CHECK_INT(seer_table_load(&t, s, NULL, "double", SEER_COST_SYNC_UPLOAD), ==, LSCAT_ENOTFOUND);
    CHECK_OK(seer_table_load(&t, s, NULL, "float", SEER_COST_ASYNC)); /* float: both have one */
    seer_table_release(&t);
    store_free(s);
}

static void test_seer_csv__the_async_cost_goes_out_and_back_in_per_precision(void)
{
    struct store *s = open_store("roundtrip"), *s2 = open_store("roundtrip2");
    char out[600], *text = NULL;
    int64_t rows = 0;
    import_table(s, "t.csv", TABLE, sizeof(TABLE) - 1);
    snprintf(out, sizeof(out), "%s/out.csv", test_tmpdir());
    CHECK_OK(seer_db_export_csv(s, out, NULL, &rows));
    CHECK_INT(rows, ==, 6);
    text = read_text(out);
    CHECK_CONTAINS(text, SEER_CSV_HEADER "\n");
    CHECK_CONTAINS(text, ",csr_warp,double,ok,0,5000,0,,-500,7000,9000\n");
    CHECK_CONTAINS(text, ",csr_warp,float,ok,0,4000,0,,3000,6000,8000\n");
    CHECK_CONTAINS(text, "b,file,,4,4,4,1,1,1,0,G,u,15000,csr_warp,double,ok,0,5000,0,,,,\n");
    CHECK_OK(seer_db_import_csv(s2, out, &rows));
    int64_t a = 0, b = 0, r = 0, u = 0;
    CHECK_OK(store_query_int(&a, s2, "SELECT count(*) FROM seer_feature_costs WHERE "
                             "async_float_ns IS NOT NULL AND async_double_ns IS NULL AND "
                             "resident_float_ns IS NOT NULL AND resident_double_ns IS NULL", ""));
    CHECK_OK(store_query_int(&b, s2, "SELECT sum(async_float_ns) + sum(async_double_ns) FROM "
                             "seer_feature_costs", ""));
    CHECK_OK(store_query_int(&r, s2, "SELECT sum(resident_float_ns) + sum(resident_double_ns) "
                             "FROM seer_feature_costs", ""));
    CHECK_INT(a, ==, 1);  /* b: float only */
    CHECK_INT(b, ==, 5000); /* float 3000 + 2500, double -500 (b's is NULL) */
    CHECK_OK(store_query_int(&u, s2, "SELECT sum(sync_upload_float_ns) + "
                             "sum(sync_upload_double_ns) FROM seer_feature_costs", ""));
    CHECK_INT(r, ==, 18500); /* float 6000 + 5500, double 7000 */
    CHECK_INT(u, ==, 24500); /* float 8000 + 7500, double 9000 */
    free(text);
    store_free(s);
    store_free(s2);
}

static void fixture_with_async(struct store **s, struct seer_table *sync, struct seer_table *async)
{
    int64_t rows = 0;
    *s = open_store("fixture");
    CHECK_OK(seer_db_import_csv(*s, test_data("seer/costmodel.csv"), &rows));
    /* stand-in asynchronous costs: a quarter of the synchronous one minus 3 us (some negative) */
    CHECK_OK(store_run(*s, "UPDATE seer_feature_costs SET async_float_ns = feature_ns / 4 - 3000, "
                       "async_double_ns = feature_ns / 4 - 3000, resident_float_ns = feature_ns, "
                       "resident_double_ns = feature_ns", ""));
    CHECK_OK(seer_table_load(sync, *s, NULL, "double", SEER_COST_SYNC));
    CHECK_OK(seer_table_load(async, *s, NULL, "double", SEER_COST_ASYNC));
    CHECK_INT(sync->n, ==, async->n);
}

static void test_seer_eval__charges_the_cost_of_the_table_it_is_given(void)
{
    struct store *s;
    struct seer_table ts, ta;
    struct seer_model m;
    struct seer_eval e1, e2;
    struct seer_train_options o = SEER_TRAIN_OPTIONS_INIT;
    o.max_depth = 4, o.min_samples_leaf = 5, o.split = SEER_SPLIT_GINI, o.risk = 0;
    fixture_with_async(&s, &ts, &ta);
    CHECK_OK(seer_train(&m, &ts, &o));
    CHECK_OK(seer_eval_run(&e1, &m, &ts));
    CHECK_OK(seer_eval_run(&e2, &m, &ta));
    double saved = 0;
    int clamped = 0;
    for (int i = 0; i < ts.n; i++)
        if (seer_model_is_test(&m, ts.rows[i].name)) {
            saved += ts.rows[i].feature_ns - ta.rows[i].feature_ns;
            clamped += ta.rows[i].feature_ns == 0;
        }
    CHECK(saved > 0);
    CHECK_INT(clamped, >, 0);
    /* the same trees: the gathered strategy differs by exactly the feature costs (up to the
     * trees' inference, timed afresh in each run); the known strategy pays none */
    double tol = 2.0 * e1.n_test * (e1.inference_ns[1] + e2.inference_ns[1] + 1);
    for (int j = 0; j < e1.niter; j++) {
        double d = e1.it[j].strategy_ns[SEER_S_GATHERED] - e2.it[j].strategy_ns[SEER_S_GATHERED];
        CHECK(fabs(d - saved) <= tol);
        CHECK(e1.it[j].strategy_ns[SEER_S_ORACLE] == e2.it[j].strategy_ns[SEER_S_ORACLE]);
    }
    seer_model_release(&m);
    seer_table_release(&ts);
    seer_table_release(&ta);
    store_free(s);
}

static void test_seer_model__records_the_feature_cost_and_eval_names_it(void)
{
    struct store *s;
    struct seer_table ts, ta;
    struct seer_model m, back;
    struct seer_eval e;
    struct seer_train_options o = SEER_TRAIN_OPTIONS_INIT;
    char dir[600];
    o.max_depth = 4, o.min_samples_leaf = 5, o.split = SEER_SPLIT_GINI, o.risk = 0;
    fixture_with_async(&s, &ts, &ta);
    CHECK_OK(seer_train(&m, &ta, &o));
    CHECK_INT(m.feature_cost, ==, SEER_COST_ASYNC);
    snprintf(dir, sizeof(dir), "%s/model-async", test_tmpdir());
    CHECK_OK(seer_model_save(&m, &ta, dir));
    CHECK_OK(seer_model_load(&back, dir));
    CHECK_INT(back.feature_cost, ==, SEER_COST_ASYNC);
    CHECK_OK(seer_eval_run(&e, &back, &ta));
    struct buf md = BUF_INIT;
    seer_eval_markdown(&md, &e, &back);
    CHECK_CONTAINS(md.data, "Feature cost charged: **async**");
    buf_release(&md);
    seer_model_release(&back);
    seer_model_release(&m);
    CHECK_OK(seer_train(&m, &ts, &o));
    CHECK_INT(m.feature_cost, ==, SEER_COST_SYNC);
    seer_model_release(&m);
    seer_table_release(&ts);
    seer_table_release(&ta);
    store_free(s);
}

int main(void)
{
    TEST_RUN(test_seer_table__loads_the_async_cost_of_its_precision_clamped_at_zero);
    TEST_RUN(test_seer_table__a_matrix_without_an_async_cost_is_an_error_saying_what_to_run);
    TEST_RUN(test_seer_csv__the_async_cost_goes_out_and_back_in_per_precision);
    TEST_RUN(test_seer_eval__charges_the_cost_of_the_table_it_is_given);
    TEST_RUN(test_seer_model__records_the_feature_cost_and_eval_names_it);
    return test_done();
}
