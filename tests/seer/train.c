/* Tests of lscat seer train and eval (seer/train.c, model.c, eval.c, table.c) on a stored bench
 * table: the CI fixture tests/data/seer/costmodel.csv, whose times come from a documented cost
 * model and NOT from a GPU (tests/seer/support/costmodel.c says how), imported into a real
 * SQLite store. Checks the split by matrix, determinism, the exported C headers against the
 * trees on every sample (compiled with cc), the trees against scikit-learn fitted on the same
 * samples, and the evaluation's invariants. */
#include "tests/support/test.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/proc.h"
#include "learn/export.h"
#include "seer/eval.h"
#include "tests/learn/support/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void load_fixture(struct seer_table *t, struct store **s)
{
    char db[600];
    int64_t rows = 0;
    snprintf(db, sizeof(db), "%s/lscat.db", test_tmpdir());
    CHECK_OK(store_open(s, db, STORE_CREATE));
    CHECK_OK(seer_db_import_csv(*s, test_data("seer/costmodel.csv"), &rows));
    CHECK_INT(rows, ==, 4576);
    CHECK_OK(seer_table_load(t, *s, NULL, "double", SEER_COST_SYNC));
    CHECK_INT(t->n, ==, 208);
}

static void train(struct seer_model *m, struct seer_table *t)
{
    struct seer_train_options o = SEER_TRAIN_OPTIONS_INIT;
    CHECK_OK(seer_train(m, t, &o));
}

static void test_seer_train__splits_by_matrix_with_a_fixed_seed(void)
{
    struct store *s;
    struct seer_table t;
    struct seer_model m, m2;
    load_fixture(&t, &s);
    train(&m, &t);
    CHECK_INT(m.ntest, ==, 52); /* ceil(208 x 0.25) */
    CHECK_INT(m.train_matrices, ==, 156);
    CHECK_INT(m.train_samples + m.test_samples, ==, 208 * 5);
    CHECK_INT(m.test_samples, ==, 52 * 5); /* every sample of a test matrix is a test sample */
    CHECK_INT(m.k, ==, SEER_K_COUNT);
    train(&m2, &t);
    for (int i = 0; i < m.ntest; i++)
        CHECK_STR(m.test[i], m2.test[i]);
    struct buf a = BUF_INIT, b = BUF_INIT;
    CHECK_OK(learn_tree_to_json(&a, m.selector));
    CHECK_OK(learn_tree_to_json(&b, m2.selector));
    CHECK_STR(a.data, b.data);
    CHECK(m.acc_known > 1.0 / m.k && m.acc_gathered > 1.0 / m.k);
    /* the trees aim at total time, not accuracy (the selector's may fall below one half):
     * out of fold on the training matrices they come within 10% of the Oracle's time */
    CHECK(m.cv_score[0] > 0.9 && m.cv_score[1] > 0.9);
    buf_release(&a);
    buf_release(&b);
    seer_model_release(&m);
    seer_model_release(&m2);
    seer_table_release(&t);
    store_free(s);
}

static const char DRIVER[] =
    "#include <stdio.h>\n#include <string.h>\n#include \"seer_derived.h\"\n#include \"seer_known.h\"\n"
    "#include \"seer_gathered.h\"\n"
    "#include \"seer_selector.h\"\n#include \"seer_classes.h\"\n"
    "int main(int argc, char **argv) {\n"
    "    FILE *f = fopen(argv[1], \"r\"); char line[4096]; (void)argc;\n"
    "    if (!fgets(line, sizeof(line), f)) return 1;\n"
    "    while (fgets(line, sizeof(line), f)) {\n"
    "        double x[SEER_FEATURE_COUNT]; char *p = line;\n"
    "        if (*p == '\"') p = strchr(p + 1, '\"') + 1;\n"
    "        p = strchr(strchr(p, ',') + 1, ',') + 1;\n"
    "        if (sscanf(p, \"%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf\", x, x + 1, x + 2, x + 3, x + 4,\n"
    "                   x + 5, x + 6, x + 7) != 8) return 2;\n"
    "        seer_derive_features(x); /* the exported derivation, not predictions.csv's */\n"
    "        printf(\"%d %d %d %d\\n\", seer_known_predict(x), seer_gathered_predict(x),\n"
    "               seer_selector_predict(x), seer_class_kernel[seer_known_predict(x)]);\n"
    "    }\n    return 0;\n}\n";

static int run(const char *const *argv, struct proc_result *r)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    o.timeout_s = 600;
    o.out_cap_bytes = 16u << 20;
    CHECK_OK(proc_run(r, &o));
    if (r->exit_code)
        fprintf(stderr, "%s\n", r->err.data);
    return r->exit_code;
}

/* Every sample of predictions.csv, as the headers compiled with cc decide it, equals what the
 * trees decide (learn_tree_predict on the same features): the driver reads the 8 measured ones
 * and derives the scale-free ones with the exported seer_derived.h, as seer_select() does; with
 * the shapes chosen out of fold and with trees grown on cost under a risk bound. */
static void headers_agree(const struct seer_train_options *o, const char *name)
{
    struct store *s;
    struct seer_table t;
    struct seer_model m;
    const char *dir = test_tmpdir();
    char out[600], drv[700], bin[700], pred[700];
    load_fixture(&t, &s);
    CHECK_OK(seer_train(&m, &t, o));
    snprintf(out, sizeof(out), "%s/%s", dir, name);
    CHECK_OK(seer_model_save(&m, &t, out));
    snprintf(drv, sizeof(drv), "%s/drv.c", dir);
    snprintf(bin, sizeof(bin), "%s/drv", dir);
    snprintf(pred, sizeof(pred), "%s/predictions.csv", out);
    test_write_file(drv, DRIVER, sizeof(DRIVER) - 1);
    char inc[620];
    snprintf(inc, sizeof(inc), "-I%s", out);
    struct proc_result r;
    const char *cc[] = { "cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", inc, "-o", bin,
                         drv, NULL };
    CHECK_INT(run(cc, &r), ==, 0);
    proc_result_release(&r);
    const char *go[] = { bin, pred, NULL };
    CHECK_INT(run(go, &r), ==, 0);
    int n = 0;
    const char *p = r.out.data;
    for (int i = 0; i < t.n; i++)
        for (int j = 0; j < m.opt.niter; j++) {
            double x[SEER_NG];
            int a, b, c, k, used;
            seer_gathered_x(x, &t.rows[i], m.opt.iterations[j]);
            CHECK(sscanf(p, "%d %d %d %d%n", &a, &b, &c, &k, &used) == 4);
            p += used;
            CHECK_INT(a, ==, learn_tree_predict(m.known, x));
            CHECK_INT(b, ==, learn_tree_predict(m.gathered, x));
            CHECK_INT(c, ==, learn_tree_predict(m.selector, x));
            CHECK_INT(k, ==, m.class_kernel[a]);
            n++;
        }
    CHECK_INT(n, ==, 208 * 5);
    fprintf(stderr, "# %s: %d samples, headers and trees agree (known tree split %s)\n", name, n,
            m.split[0] == SEER_SPLIT_COST ? "cost" : "gini");
    proc_result_release(&r);
    seer_model_release(&m);
    seer_table_release(&t);
    store_free(s);
}

static void test_seer_train__exported_headers_agree_with_the_trees_on_every_sample(void)
{
    struct seer_train_options o = SEER_TRAIN_OPTIONS_INIT;
    headers_agree(&o, "chosen");
    o.split = SEER_SPLIT_COST;
    o.risk = 100;
    headers_agree(&o, "cost");
    o.guard = 2; /* the row-length guard's splits are in the header too */
    headers_agree(&o, "guard");
}


/* Run tests/seer/support/sklearn_seer.py under Debian's Python; skip when sklearn is missing. */
static json_t *sklearn_run(const char *pred, const char *costs, const struct seer_model *m)
{
    char dk[16], lk[16], dg[16], lg[16];
    snprintf(dk, sizeof(dk), "%d", m->depth[0]);
    snprintf(lk, sizeof(lk), "%d", m->leaf[0]);
    snprintf(dg, sizeof(dg), "%d", m->depth[1]);
    snprintf(lg, sizeof(lg), "%d", m->leaf[1]);
    char script[1024], out[700];
    const char *root = getenv("LSCAT_ROOT") ? getenv("LSCAT_ROOT") : ".";
    snprintf(script, sizeof(script), "%s/tests/seer/support/sklearn_seer.py", root);
    snprintf(out, sizeof(out), "%s/sklearn.json", test_tmpdir());
    const char *probe[] = { ref_python(), "-c", "import sklearn.tree", NULL };
    struct proc_result r;
    if (run(probe, &r) != 0)
        test_skip("%s cannot import sklearn (install python3-sklearn: mk/deps.sh)", ref_python());
    proc_result_release(&r);
    const char *argv[] = { ref_python(), script, pred, out, costs, dk, lk, dg, lg, NULL };
    CHECK_INT(run(argv, &r), ==, 0);
    proc_result_release(&r);
    json_error_t je;
    json_t *j = json_load_file(out, 0, &je);
    if (!j)
        test_fail(__FILE__, __LINE__, "sklearn JSON %s: %s", out, je.text);
    return j;
}

/* Each sample's cost of each class as seer train computes it (total time / the Oracle's total
 * over the training matrices at that iteration count), in predictions.csv's order. */
static void write_costs(const char *path, const struct seer_table *t, const struct seer_model *m)
{
    double oracle[SEER_MAX_ITER] = { 0 };
    struct buf b = BUF_INIT;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < m->opt.niter && !seer_model_is_test(m, t->rows[i].name); j++)
            oracle[j] += seer_total_ns(&t->rows[i], m->class_kernel[seer_best_class(
                                           m, &t->rows[i], m->opt.iterations[j])],
                                       m->opt.iterations[j]);
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < m->opt.niter; j++)
            for (int c = 0; c < m->k; c++)
                buf_addf(&b, "%.17g%s", seer_total_ns(&t->rows[i], m->class_kernel[c],
                                                      m->opt.iterations[j]) / oracle[j],
                         c + 1 < m->k ? "," : "\n");
    test_write_file(path, b.data, b.len);
    buf_release(&b);
}

/* sklearn's DecisionTreeClassifier with the depth and leaf size lscat chose, on the same
 * training samples, its leaves relabelled by cost with numpy, decides as lscat's tree on (nearly)
 * every sample; ties between equally good splits, which sklearn breaks by random_state, are the
 * only allowed difference, so the best of 8 seeds is compared. */
static void compare_with_sklearn(json_t *fits, const struct learn_tree *tree, int d,
                                 const struct seer_table *t, const struct seer_model *m,
                                 const char *name)
{
    double best = 0;
    int best_nodes = 0;
    for (size_t f = 0; f < json_array_size(fits); f++) {
        json_t *pred = json_object_get(json_array_get(fits, f), "pred");
        int n = 0, same = 0;
        for (int i = 0; i < t->n; i++)
            for (int j = 0; j < m->opt.niter; j++, n++) {
                double x[SEER_NG];
                seer_gathered_x(x, &t->rows[i], m->opt.iterations[j]);
                (void)d;
                same += learn_tree_predict(tree, x) ==
                        json_integer_value(json_array_get(pred, (size_t)n));
            }
        CHECK_INT(n, ==, (int)json_array_size(pred));
        if ((double)same / n > best) {
            best = (double)same / n;
            best_nodes = (int)json_integer_value(json_object_get(json_array_get(fits, f), "nodes"));
        }
    }
    fprintf(stderr, "# %s tree: %d nodes; sklearn (best of 8 seeds: %d nodes) predicts the same on "
            "%.2f%% of the %d samples\n", name, learn_tree_node_count(tree), best_nodes,
            100 * best, t->n * m->opt.niter);
    CHECK(best >= 0.97);
}

static void test_seer_train__trees_decide_as_sklearn_on_the_same_samples(void)
{
    struct store *s;
    struct seer_table t;
    struct seer_model m;
    char out[600], costs[700];
    struct seer_train_options o = SEER_TRAIN_OPTIONS_INIT;
    o.split = SEER_SPLIT_GINI; /* sklearn has CART's gini splits, not the cost split */
    o.risk = 0;
    o.guard = 0; /* sklearn has no row-length guard */
    load_fixture(&t, &s);
    CHECK_OK(seer_train(&m, &t, &o));
    snprintf(out, sizeof(out), "%s/model", test_tmpdir());
    CHECK_OK(seer_model_save(&m, &t, out));
    char pred[700];
    snprintf(pred, sizeof(pred), "%s/predictions.csv", out);
    snprintf(costs, sizeof(costs), "%s/costs.csv", out);
    write_costs(costs, &t, &m);
    json_t *ref = sklearn_run(pred, costs, &m);
    compare_with_sklearn(json_object_get(ref, "known"), m.known, SEER_NK, &t, &m, "known");
    compare_with_sklearn(json_object_get(ref, "gathered"), m.gathered, SEER_NG, &t, &m,
                         "gathered");
    json_decref(ref);
    seer_model_release(&m);
    seer_table_release(&t);
    store_free(s);
}

static void test_seer_eval__the_oracle_bounds_every_strategy_and_kernel(void)
{
    struct store *s;
    struct seer_table t;
    struct seer_model m, back;
    struct seer_eval e;
    char out[600];
    load_fixture(&t, &s);
    train(&m, &t);
    snprintf(out, sizeof(out), "%s/model", test_tmpdir());
    CHECK_OK(seer_model_save(&m, &t, out));
    CHECK_OK(seer_model_load(&back, out));
    CHECK_INT(back.ntest, ==, m.ntest);
    CHECK_INT(back.k, ==, m.k);
    CHECK(back.acc_selector == m.acc_selector);
    for (int g = 0; g < 3; g++) { /* known, gathered, selector: the chosen shapes are recorded */
        CHECK_INT(back.depth[g], ==, m.depth[g]);
        CHECK_INT(back.leaf[g], ==, m.leaf[g]);
        CHECK_INT(back.split[g], ==, m.split[g]);
        CHECK(back.risk[g] == m.risk[g]);
    }
    CHECK_OK(seer_eval_run(&e, &back, &t));
    CHECK_INT(e.n_test, ==, 52);
    CHECK_INT(e.niter, ==, 5);
    for (int j = 0; j < e.niter; j++) {
        const struct seer_eval_iter *it = &e.it[j];
        double o = it->strategy_ns[SEER_S_ORACLE];
        CHECK(o > 0);
        for (int st = 1; st < SEER_S_COUNT; st++)
            CHECK(it->strategy_ns[st] >= o);
        for (int c = 0; c < m.k; c++) {
            CHECK(it->single_ns[m.class_kernel[c]] >= o);
            CHECK(it->geomean[SEER_S_ORACLE][m.class_kernel[c]] >= 1.0);
        }
        CHECK(it->gather_paid <= it->gathered);
    }
    CHECK(e.inference_ns[0] > 0 && e.inference_ns[0] < 1e5);
    CHECK_OK(seer_eval_write(&e, &back, out));
    struct buf md = BUF_INIT;
    char p[700];
    snprintf(p, sizeof(p), "%s/eval.md", out);
    CHECK_OK(buf_read_file(&md, p));
    CHECK_CONTAINS(md.data, "| 10000 |");
    CHECK_CONTAINS(md.data, "52 test matrices");
    buf_release(&md);
    snprintf(p, sizeof(p), "%s/oracle.png", out);
    if (system("command -v gnuplot >/dev/null 2>&1") == 0)
        CHECK(fs_exists(p));
    seer_model_release(&back);
    seer_model_release(&m);
    seer_table_release(&t);
    store_free(s);
}

/* The selector's depth and leaf size come from the grid by out-of-fold cost unless given; a
 * given depth and leaf size fix all three trees, and the selector is no deeper than asked. */
static void test_seer_train__the_selector_size_is_chosen_out_of_fold_unless_given(void)
{
    struct store *s;
    struct seer_table t;
    struct seer_model m, f;
    load_fixture(&t, &s);
    train(&m, &t);
    CHECK(m.depth[2] == 2 || m.depth[2] == 4 || m.depth[2] == 6 || m.depth[2] == 8 ||
          m.depth[2] == 12);
    CHECK(m.leaf[2] == 1 || m.leaf[2] == 3 || m.leaf[2] == 5 || m.leaf[2] == 10 ||
          m.leaf[2] == 20);
    CHECK(m.risk[2] == 0); /* the selector chooses between two strategies, not kernels */
    CHECK(learn_tree_depth(m.selector) <= m.depth[2]);
    struct seer_train_options o = SEER_TRAIN_OPTIONS_INIT;
    o.max_depth = 2;
    o.min_samples_leaf = 7;
    CHECK_OK(seer_train(&f, &t, &o));
    for (int g = 0; g < 3; g++) {
        CHECK_INT(f.depth[g], ==, 2);
        CHECK_INT(f.leaf[g], ==, 7);
    }
    CHECK(learn_tree_depth(f.selector) <= 2);
    seer_model_release(&m);
    seer_model_release(&f);
    seer_table_release(&t);
    store_free(s);
}

/* With a risk bound the known and gathered trees never pick a kernel whose worst ratio to the
 * Oracle on a training sample exceeds it; both split kinds grow trees that do. */
static void test_seer_train__a_risk_bound_keeps_kernels_with_bad_worst_cases_out_of_the_trees(void)
{
    struct store *s;
    struct seer_table t;
    load_fixture(&t, &s);
    for (int split = 0; split < 2; split++) {
        struct seer_train_options o = SEER_TRAIN_OPTIONS_INIT;
        struct seer_model m;
        o.split = split;
        o.risk = 3;
        o.max_depth = 8;
        o.min_samples_leaf = 1;
        CHECK_OK(seer_train(&m, &t, &o));
        double worst[SEER_K_COUNT] = { 0 };
        int risky = 0, picked_risky = 0;
        for (int i = 0; i < t.n; i++)
            for (int j = 0; j < m.opt.niter && !seer_model_is_test(&m, t.rows[i].name); j++) {
                double it = m.opt.iterations[j];
                double best = seer_total_ns(&t.rows[i], m.class_kernel[seer_best_class(&m, &t.rows[i], it)], it);
                for (int c = 0; c < m.k; c++) {
                    double r = seer_total_ns(&t.rows[i], m.class_kernel[c], it) / best;
                    worst[c] = r > worst[c] ? r : worst[c];
                }
            }
        for (int c = 0; c < m.k; c++)
            risky += worst[c] > 3;
        for (int i = 0; i < t.n; i++)
            for (int j = 0; j < m.opt.niter; j++) {
                double x[SEER_NG];
                seer_gathered_x(x, &t.rows[i], m.opt.iterations[j]);
                picked_risky += worst[learn_tree_predict(m.known, x)] > 3;
                picked_risky += worst[learn_tree_predict(m.gathered, x)] > 3;
            }
        CHECK_INT(risky, >=, 2);
        CHECK_INT(risky, <, m.k);
        CHECK_INT(picked_risky, ==, 0);
        CHECK_INT(m.split[0], ==, split);
        CHECK(m.risk[0] == 3 && m.risk[1] == 3);
        CHECK_INT(learn_tree_criterion(m.known), ==, split ? LEARN_COST : LEARN_GINI);
        seer_model_release(&m);
    }
    seer_table_release(&t);
    store_free(s);
}

static void test_seer_import__refuses_a_bad_row_naming_file_and_line(void)
{
    struct store *s;
    char db[600], csv[600];
    int64_t rows = 0;
    snprintf(db, sizeof(db), "%s/lscat.db", test_tmpdir());
    snprintf(csv, sizeof(csv), "%s/bad.csv", test_tmpdir());
    const char text[] = SEER_CSV_HEADER_V7 "\n" /* the 20-column form before session 8 */
        "a,file,,3,3,3,1,1,1,0,G,u,100,csr_warp,double,ok,0,5,0,\n"
        "b,file,,3,3,3,1,1,1,0,G,u,100,csr_magic,double,ok,0,5,0,\n";
    test_write_file(csv, text, sizeof(text) - 1);
    CHECK_OK(store_open(&s, db, STORE_CREATE));
    CHECK_INT(seer_db_import_csv(s, csv, &rows), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "bad.csv:3: field 14 ('csr_magic')");
    int64_t n = -1;
    CHECK_OK(store_query_int(&n, s, "SELECT count(*) FROM seer_results", ""));
    CHECK_INT(n, ==, 0); /* all or nothing */
    store_free(s);
}

int main(void)
{
    TEST_RUN(test_seer_train__splits_by_matrix_with_a_fixed_seed);
    TEST_RUN(test_seer_train__exported_headers_agree_with_the_trees_on_every_sample);
    TEST_RUN(test_seer_train__trees_decide_as_sklearn_on_the_same_samples);
    TEST_RUN(test_seer_train__a_risk_bound_keeps_kernels_with_bad_worst_cases_out_of_the_trees);
    TEST_RUN(test_seer_train__the_selector_size_is_chosen_out_of_fold_unless_given);
    TEST_RUN(test_seer_eval__the_oracle_bounds_every_strategy_and_kernel);
    TEST_RUN(test_seer_import__refuses_a_bad_row_naming_file_and_line);
    return test_done();
}
