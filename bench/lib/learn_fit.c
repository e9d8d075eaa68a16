/* bench/learn.sh's timing program: reads n x d doubles and n labels (raw, native order) and
 * prints the best of R fit times (seconds) of a learn/ tree with the given options. */
#include "learn/tree.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: learn_fit X.bin Y.bin N D K MAX_LEAF_NODES\n");
        return 2;
    }
    int n = atoi(argv[3]), d = atoi(argv[4]), k = atoi(argv[5]);
    double *X = malloc(sizeof(double) * (size_t)n * (size_t)d);
    int *y = malloc(sizeof(int) * (size_t)n);
    FILE *fx = fopen(argv[1], "rb"), *fy = fopen(argv[2], "rb");
    if (!fx || !fy || fread(X, sizeof(double), (size_t)n * d, fx) != (size_t)n * d ||
        fread(y, sizeof(int), (size_t)n, fy) != (size_t)n) {
        fprintf(stderr, "learn_fit: cannot read %s / %s\n", argv[1], argv[2]);
        return 3;
    }
    fclose(fx);
    fclose(fy);
    struct learn_tree_options o = LEARN_TREE_OPTIONS_INIT;
    o.criterion = LEARN_ENTROPY;
    o.class_weight_balanced = 1;
    o.max_leaf_nodes = atoi(argv[6]);
    double best = 1e30;
    int leaves = 0;
    for (int r = 0; r < 7; r++) {
        struct learn_tree *t = NULL;
        double t0 = now_s();
        if (learn_tree_fit(&t, X, n, d, y, k, NULL, &o) < 0) {
            fprintf(stderr, "learn_fit: %s\n", lscat_error_last());
            return 3;
        }
        double s = now_s() - t0;
        best = s < best ? s : best;
        leaves = learn_tree_leaf_count(t);
        learn_tree_free(t);
    }
    printf("%.6f %d\n", best, leaves);
    free(X);
    free(y);
    return 0;
}
