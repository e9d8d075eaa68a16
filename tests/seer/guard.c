/* Tests of the gathered tree's scale-free features (seer/seer_derived.h) and its row-length
 * guard (seer/guard.c) on hand-built samples: class 0 (as csr_thread) wins on short balanced
 * rows and is 50 times too slow on a few very long rows, where class 1 (as cuSPARSE) wins. */
#include "tests/support/test.h"

#include "common/error.h"
#include "learn/tree.h"
#include "seer/train.h"

#include <math.h>
#include <string.h>

#define N 8
#define K 3

static const double MAXREL[N] = { 1, 1.5, 2, 3, 1000, 1200, 4000, 5000 };

/* xg (N x SEER_NG) with row_max / mean at MAXREL and costs (N x K). */
static void samples(double *xg, double *cost)
{
    memset(xg, 0, N * SEER_NG * sizeof(double));
    for (int i = 0; i < N; i++) {
        double *x = xg + i * SEER_NG, *c = cost + i * K;
        x[0] = 1000, x[4] = 4, x[5] = 4 * MAXREL[i], x[6] = 1, x[7] = 2;
        seer_derive_features(x);
        int lng = MAXREL[i] > 100;
        c[0] = lng ? 50 : 1, c[1] = lng ? 1 : 2, c[2] = lng ? 1.5 : 3;
    }
}

/* A one-leaf tree that always picks class 0 (fitted on the short-row samples alone). */
static struct learn_tree *always_class0(const double *xg)
{
    struct learn_tree *t = NULL;
    struct learn_tree_options o = LEARN_TREE_OPTIONS_INIT;
    int y[4] = { 0, 0, 0, 0 };
    CHECK_OK(learn_tree_fit(&t, xg, 4, SEER_NG, y, K, NULL, &o));
    CHECK_INT(learn_tree_node_count(t), ==, 1);
    return t;
}

static int predict_at(const struct learn_tree *t, double maxrel)
{
    double x[SEER_NG] = { 1000, 0, 0, 1, 4, 4 * maxrel, 1, 2 };
    seer_derive_features(x);
    return learn_tree_predict(t, x);
}

static void test_seer_derived__features_are_the_measured_ones_divided_by_the_mean(void)
{
    double x[SEER_FEATURE_COUNT] = { 100, 100, 500, 1, 5, 40, 2, 10 }, z[SEER_FEATURE_COUNT] = { 0 };
    seer_derive_features(x);
    CHECK(x[8] == 8 && x[9] == 0.4 && x[10] == 0.4); /* 40/5, 2/5, 10/25 */
    seer_derive_features(z);                          /* no non-zeros: mean 0 */
    CHECK(z[8] == 0 && z[9] == 0 && z[10] == 0);
    CHECK_INT(SEER_NG, ==, SEER_FEATURE_COUNT);
}

static void test_seer_guard__a_kernel_is_not_picked_past_the_imbalance_where_it_last_won(void)
{
    double xg[N * SEER_NG], cost[N * K];
    samples(xg, cost);
    struct learn_tree *t = always_class0(xg);
    CHECK_INT(predict_at(t, 2000), ==, 0); /* unguarded: 50 times too slow there */
    struct learn_tree *plain = t;
    CHECK_OK(seer_guard_tree(&t, plain, xg, cost, N, K, 10));
    CHECK_INT(predict_at(plain, 2000), ==, 0); /* a copy: the tree given is unchanged */
    learn_tree_free(plain);
    CHECK_INT(predict_at(t, 1), ==, 0);
    CHECK_INT(predict_at(t, 3), ==, 0);   /* where it last won */
    CHECK_INT(predict_at(t, 400), ==, 0); /* below the midpoint of 3 and 1000 */
    CHECK_INT(predict_at(t, 600), ==, 1); /* above: the cheapest class there */
    CHECK_INT(predict_at(t, 1e6), ==, 1);
    CHECK_INT(learn_tree_node_count(t), ==, 3);
    const struct learn_node *root = learn_tree_node(t, 0);
    CHECK_INT(root->feature, ==, 8);
    CHECK(fabs(root->threshold - 501.5) < 1e-9);
    learn_tree_free(t);
}

static void test_seer_guard__leaves_a_kernel_alone_that_never_lost_by_the_ratio(void)
{
    double xg[N * SEER_NG], cost[N * K];
    samples(xg, cost);
    struct learn_tree *t = always_class0(xg);
    struct learn_tree *plain = t;
    CHECK_OK(seer_guard_tree(&t, plain, xg, cost, N, K, 100)); /* class 0 lost by 50 at most */
    learn_tree_free(plain);
    CHECK_INT(learn_tree_node_count(t), ==, 1);
    CHECK_INT(predict_at(t, 5000), ==, 0);
    learn_tree_free(t);
}

int main(void)
{
    TEST_RUN(test_seer_derived__features_are_the_measured_ones_divided_by_the_mean);
    TEST_RUN(test_seer_guard__a_kernel_is_not_picked_past_the_imbalance_where_it_last_won);
    TEST_RUN(test_seer_guard__leaves_a_kernel_alone_that_never_lost_by_the_ratio);
    return test_done();
}
