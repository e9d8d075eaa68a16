/* Tests of learn/export.c: the generated C header, compiled with cc, predicts as the tree on
 * every sample; the DOT text names features and classes and Graphviz accepts it; the JSON form
 * reloads a tree exactly and refuses malformed input naming the node. */
#include "tests/support/test.h"

#include "learn/export.h"

#include "common/error.h"
#include "common/proc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { N = 600, D = 6 };
static double X[N * D];
static int Y[N];

/* Continuous features at full double precision plus two binary ones; 3 classes. */
static struct learn_tree *fit_random(unsigned seed, enum learn_criterion crit, int leaves)
{
    srand(seed);
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < D; j++)
            X[i * D + j] = j < 4 ? (double)rand() / RAND_MAX * 10.0 - 5.0 : rand() % 2;
        double s = X[i * D] + 0.5 * X[i * D + 1] - X[i * D + 4] * 2.0;
        Y[i] = (s > 1.0) + (s > 3.0);
        if (rand() % 10 == 0)
            Y[i] = rand() % 3;
    }
    struct learn_tree_options o = LEARN_TREE_OPTIONS_INIT;
    o.criterion = crit;
    o.max_leaf_nodes = leaves;
    struct learn_tree *t = NULL;
    CHECK_OK(learn_tree_fit(&t, X, N, D, Y, 3, NULL, &o));
    return t;
}

static const char *const FEATURES[D] = { "a <= b */ tricky", "\"quoted\"", "c", "d", "bin0", "bin1" };
static const char *const CLASSES[3] = { "fast", "medium */", "slow\\" };

static const char DRIVER[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include \"tree.h\"\n"
    "int main(int argc, char **argv) {\n"
    "    FILE *f = fopen(argv[1], \"r\"); double x[6]; char s[64]; (void)argc;\n"
    "    for (;;) {\n"
    "        for (int j = 0; j < 6; j++) { if (fscanf(f, \"%63s\", s) != 1) return 0; x[j] = strtod(s, NULL); }\n"
    "        printf(\"%d\\n\", sel_tree_predict(x));\n"
    "    }\n}\n";

static int run(const char *const *argv, struct proc_result *r)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    o.timeout_s = 300;
    CHECK_OK(proc_run(r, &o));
    return r->exit_code;
}

static void check_header_predicts_as_tree(struct learn_tree *t)
{
    const char *dir = test_tmpdir();
    char hpath[512], cpath[512], bin[512], data[512];
    snprintf(hpath, sizeof(hpath), "%s/tree.h", dir);
    snprintf(cpath, sizeof(cpath), "%s/main.c", dir);
    snprintf(bin, sizeof(bin), "%s/main", dir);
    snprintf(data, sizeof(data), "%s/x.txt", dir);
    struct buf h = BUF_INIT, x = BUF_INIT;
    CHECK_OK(learn_tree_to_c(&h, t, "sel_tree", FEATURES, CLASSES));
    test_write_file(hpath, h.data, h.len);
    test_write_file(cpath, DRIVER, sizeof(DRIVER) - 1);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < D; j++)
            buf_addf(&x, "%a%c", X[i * D + j], j == D - 1 ? '\n' : ' ');
    test_write_file(data, x.data, x.len);
    struct proc_result r;
    const char *cc[] = { "cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", bin, cpath, NULL };
    if (run(cc, &r) != 0)
        test_fail(__FILE__, __LINE__, "generated header does not compile: %s", r.err.data);
    proc_result_release(&r);
    const char *go[] = { bin, data, NULL };
    CHECK_INT(run(go, &r), ==, 0);
    char *line = r.out.data;
    for (int i = 0; i < N; i++) {
        CHECK(line && *line);
        CHECK_INT(atoi(line), ==, learn_tree_predict(t, X + i * D));
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    proc_result_release(&r);
    buf_release(&h);
    buf_release(&x);
}

static void test_learn_export__c_header_compiles_and_predicts_as_the_tree_on_every_sample(void)
{
    for (unsigned seed = 1; seed <= 3; seed++) {
        struct learn_tree *t = fit_random(seed, seed == 2 ? LEARN_ENTROPY : LEARN_GINI,
                                          seed == 3 ? 12 : 0);
        CHECK_INT(learn_tree_depth(t), >=, 3);
        check_header_predicts_as_tree(t);
        learn_tree_free(t);
    }
}

static void test_learn_export__c_header_refuses_a_prefix_that_is_no_identifier(void)
{
    struct learn_tree *t = fit_random(1, LEARN_GINI, 4);
    struct buf h = BUF_INIT;
    CHECK_INT(learn_tree_to_c(&h, t, "9lives", NULL, NULL), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "'9lives' is not a C identifier");
    buf_release(&h);
    learn_tree_free(t);
}

static void test_learn_export__dot_names_features_and_classes_and_graphviz_reads_it(void)
{
    struct learn_tree *t = fit_random(4, LEARN_GINI, 5);
    struct buf b = BUF_INIT;
    CHECK_OK(learn_tree_to_dot(&b, t, FEATURES, CLASSES));
    CHECK_CONTAINS(b.data, "digraph Tree {");
    CHECK_CONTAINS(b.data, "class = fast");
    CHECK_CONTAINS(b.data, "\\\"quoted\\\"");
    CHECK_CONTAINS(b.data, "headlabel=\"True\"");
    char path[512];
    snprintf(path, sizeof(path), "%s/t.dot", test_tmpdir());
    test_write_file(path, b.data, b.len);
    buf_release(&b);
    if (access("/usr/bin/dot", X_OK) != 0) {
        learn_tree_free(t);
        test_skip("graphviz 'dot' not installed: the DOT text was checked, not rendered");
    }
    struct proc_result r;
    const char *dot[] = { "/usr/bin/dot", "-Tplain", path, NULL };
    CHECK_INT(run(dot, &r), ==, 0);
    int nodes = 0;
    for (char *p = strstr(r.out.data, "\nnode "); p; p = strstr(p + 1, "\nnode "))
        nodes++;
    CHECK_INT(nodes + (strncmp(r.out.data, "node ", 5) == 0), ==, learn_tree_node_count(t));
    proc_result_release(&r);
    learn_tree_free(t);
}

static void test_learn_export__json_reloads_the_tree_exactly(void)
{
    struct learn_tree *t = fit_random(5, LEARN_ENTROPY, 0), *back = NULL;
    char path[512];
    snprintf(path, sizeof(path), "%s/tree.json", test_tmpdir());
    CHECK_OK(learn_tree_save(t, path));
    CHECK_OK(learn_tree_load(&back, path));
    CHECK_INT(learn_tree_node_count(back), ==, learn_tree_node_count(t));
    CHECK_INT(learn_tree_criterion(back), ==, LEARN_ENTROPY);
    for (int i = 0; i < learn_tree_node_count(t); i++) {
        const struct learn_node *a = learn_tree_node(t, i), *b = learn_tree_node(back, i);
        CHECK(a->threshold == b->threshold && a->feature == b->feature && a->left == b->left);
        CHECK(a->impurity == b->impurity && a->value[2] == b->value[2]);
        CHECK(a->depth == b->depth && a->parent == b->parent && a->label == b->label);
    }
    for (int i = 0; i < N; i++)
        CHECK_INT(learn_tree_predict(back, X + i * D), ==, learn_tree_predict(t, X + i * D));
    struct buf j1 = BUF_INIT, j2 = BUF_INIT;
    learn_tree_to_json(&j1, t);
    learn_tree_to_json(&j2, back);
    CHECK_STR(j1.data, j2.data);
    buf_release(&j1);
    buf_release(&j2);
    learn_tree_free(t);
    learn_tree_free(back);
}

static void test_learn_export__json_refuses_malformed_trees_naming_the_node(void)
{
    const char *head = "{\"format\": \"lscat-learn-tree\", \"version\": 1, \"criterion\": "
                       "\"gini\", \"n_features\": 2, \"n_classes\": 2, \"nodes\": [";
    const char *leaf = "\"threshold\": 0, \"n_samples\": 1, \"weighted_n_samples\": 1, "
                       "\"impurity\": 0, \"improvement\": 0, \"value\": [1, 0]}";
    char s[2048];
    struct learn_tree *t = NULL;
    snprintf(s, sizeof(s), "%s{\"feature\": 0, \"left\": 1, \"right\": 1, %s, {\"feature\": -1, "
             "\"left\": -1, \"right\": -1, %s]}", head, leaf, leaf);
    CHECK_INT(learn_tree_from_json(&t, s, strlen(s)), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "node 0: child 1");
    snprintf(s, sizeof(s), "%s{\"feature\": 0, \"left\": 1, \"right\": 2, %s, {\"feature\": -1, "
             "\"left\": -1, \"right\": -1, %s, {\"feature\": -1, \"left\": -1, \"right\": -1, "
             "\"value\": [1]}]}", head, leaf, leaf);
    CHECK_INT(learn_tree_from_json(&t, s, strlen(s)), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "node 2: 'threshold' is missing");
    snprintf(s, sizeof(s), "%s{\"feature\": 7, \"left\": -1, \"right\": -1, %s]}", head, leaf);
    CHECK_INT(learn_tree_from_json(&t, s, strlen(s)), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "node 0: feature 7 outside 0..1");
    CHECK_INT(learn_tree_from_json(&t, "{\"format\": \"x\"}", 15), ==, LSCAT_EINVALID);
    CHECK_INT(learn_tree_from_json(&t, "{", 1), ==, LSCAT_EINVALID);
    CHECK(t == NULL);
}

int main(void)
{
    TEST_RUN(test_learn_export__c_header_compiles_and_predicts_as_the_tree_on_every_sample);
    TEST_RUN(test_learn_export__c_header_refuses_a_prefix_that_is_no_identifier);
    TEST_RUN(test_learn_export__dot_names_features_and_classes_and_graphviz_reads_it);
    TEST_RUN(test_learn_export__json_reloads_the_tree_exactly);
    TEST_RUN(test_learn_export__json_refuses_malformed_trees_naming_the_node);
    return test_done();
}
