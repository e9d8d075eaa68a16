/* learn_tree_fit_cost: trees split on the summed cost of the children's cheapest classes, checked
 * by hand and against the same rule written out in numpy by exhaustive search (scikit-learn has no
 * cost criterion), with a JSON round trip. */
#include "tests/learn/support/ref.h"

#include "common/buf.h"
#include "learn/export.h"
#include "learn/tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Gini would first separate x < 2, where the classes cost the same; the cost split goes where a
 * wrong choice costs: x = 5, where class 0 turns 100 times dearer (the root, all class 1, costs
 * 8.003; its children 5 + 3). */
static void test_learn_costtree__splits_where_a_wrong_choice_costs_not_where_classes_differ(void)
{
    double X[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    double cost[] = { 1, 1, 1, 1, 1, 1.001, 1, 1.001, 1, 1.001, 100, 1, 100, 1, 100, 1 };
    struct learn_tree_options o = LEARN_TREE_OPTIONS_INIT;
    struct learn_tree *t = NULL;
    o.max_depth = 1;
    CHECK_OK(learn_tree_fit_cost(&t, X, 8, 1, cost, 2, &o));
    CHECK_INT(learn_tree_node_count(t), ==, 3);
    const struct learn_node *root = learn_tree_node(t, 0);
    CHECK(root->feature == 0 && root->threshold == 4.5);
    CHECK_INT(learn_tree_predict(t, (double[]){ 0 }), ==, 0);
    CHECK_INT(learn_tree_predict(t, (double[]){ 7 }), ==, 1);
    CHECK_INT(learn_tree_criterion(t), ==, LEARN_COST);
    CHECK(fabs(root->impurity - 8.003) < 1e-12 && fabs(root->improvement - 0.003) < 1e-12);
    learn_tree_free(t);
    cost[3] = NAN;
    CHECK_INT(learn_tree_fit_cost(&t, X, 8, 1, cost, 2, &o), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "sample 1: cost nan of class 1");
    CHECK(t == NULL);
}

/* A node whose best split does not lower the cost stays a leaf, whatever its labels' mix, even
 * where two splits in a row would (the search is greedy, as CART's). */
static void test_learn_costtree__a_split_that_saves_nothing_is_not_made(void)
{
    double X[] = { 0, 1, 2, 3 }, cost[] = { 0, 2, 2, 0, 0, 2, 2, 0 };
    struct learn_tree_options o = LEARN_TREE_OPTIONS_INIT;
    struct learn_tree *t = NULL;
    o.min_samples_leaf = 2; /* only x <= 1.5 | x > 1.5: each side costs 2 either way */
    CHECK_OK(learn_tree_fit_cost(&t, X, 4, 1, cost, 2, &o));
    CHECK_INT(learn_tree_node_count(t), ==, 1);
    learn_tree_free(t);
    o.min_samples_leaf = 1;
    CHECK_OK(learn_tree_fit_cost(&t, X, 4, 1, cost, 2, &o));
    /* x <= 0.5 saves 2; right of it, {1, 2, 3} costs 2 at every single split: a leaf */
    CHECK_INT(learn_tree_leaf_count(t), ==, 2);
    CHECK(learn_tree_node(t, 0)->threshold == 0.5);
    learn_tree_free(t);
}

static int case_differs(json_t *c)
{
    json_t *jo = json_object_get(c, "options");
    struct learn_tree_options o = LEARN_TREE_OPTIONS_INIT;
    o.max_depth = (int)json_integer_value(json_object_get(jo, "max_depth"));
    o.min_samples_leaf = (int)json_integer_value(json_object_get(jo, "min_samples_leaf"));
    int n = (int)json_integer_value(json_object_get(c, "n"));
    int d = (int)json_integer_value(json_object_get(c, "d"));
    int k = (int)json_integer_value(json_object_get(c, "k"));
    double *X = ref_doubles(json_object_get(c, "X")), *Xt = ref_doubles(json_object_get(c, "Xt"));
    double *cost = ref_doubles(json_object_get(c, "cost"));
    struct learn_tree *t = NULL, *back = NULL;
    struct buf js = BUF_INIT;
    CHECK_OK(learn_tree_fit_cost(&t, X, n, d, cost, k, &o));
    int bad = learn_tree_node_count(t) != json_integer_value(json_object_get(c, "nodes"));
    CHECK_OK(learn_tree_to_json(&js, t));
    CHECK_OK(learn_tree_from_json(&back, js.data, js.len));
    CHECK_INT(learn_tree_criterion(back), ==, LEARN_COST);
    const char *ps[] = { "pred", "pred_test" };
    for (int s = 0; s < 2; s++) {
        json_t *p = json_object_get(c, ps[s]);
        for (size_t i = 0; i < json_array_size(p); i++) {
            const double *x = (s ? Xt : X) + i * (size_t)d;
            bad += learn_tree_predict(t, x) != (int)json_integer_value(json_array_get(p, i));
            CHECK_INT(learn_tree_predict(back, x), ==, learn_tree_predict(t, x));
        }
    }
    buf_release(&js);
    learn_tree_free(t);
    learn_tree_free(back);
    free(X);
    free(Xt);
    free(cost);
    return bad;
}

/* 60 random cases (integer and continuous features, 2-5 classes, depths 1-5 and unlimited,
 * leaf sizes 1-5): the same node count and the same prediction on every training and unseen
 * sample as the numpy search; a JSON round trip keeps every prediction. */
static void test_learn_costtree__equals_an_exhaustive_numpy_search(void)
{
    json_t *cases = ref_run("numpy_cost_tree.py", "import numpy", "60");
    int split = 0;
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *c = json_array_get(cases, i);
        split += json_integer_value(json_object_get(c, "nodes")) > 1;
        if (case_differs(c))
            test_fail(__FILE__, __LINE__, "case %lld differs from numpy",
                      (long long)json_integer_value(json_object_get(c, "seed")));
    }
    fprintf(stderr, "# %zu cases (%d with splits) equal numpy's exhaustive search\n",
            json_array_size(cases), split);
    CHECK_INT(split, >=, 40);
    json_decref(cases);
}

int main(void)
{
    TEST_RUN(test_learn_costtree__splits_where_a_wrong_choice_costs_not_where_classes_differ);
    TEST_RUN(test_learn_costtree__a_split_that_saves_nothing_is_not_made);
    TEST_RUN(test_learn_costtree__equals_an_exhaustive_numpy_search);
    return test_done();
}
