/* Seer's trees: samples (matrix x iterations) from the bench table, a seeded split by matrix,
 * the known and gathered trees fitted on the training matrices, the selector fitted on labels
 * from out-of-fold predictions of the other two, and each tree's accuracy. */
#include "seer/train.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Gathered-tree shapes (the best by their own out-of-fold score) compared by the out-of-fold
 * cost of the whole selector strategy */
#define SEER_CANDIDATES 8

double seer_total_ns(const struct seer_row *r, int kernel, double it)
{
    if (kernel >= 0 && kernel < SEER_K_COUNT && r->ok[kernel])
        return r->pre_ns[kernel] + it * r->iter_ns[kernel];
    double worst = 0;
    for (int k = 0; k < SEER_K_COUNT; k++)
        if (r->ok[k] && r->pre_ns[k] + it * r->iter_ns[k] > worst)
            worst = r->pre_ns[k] + it * r->iter_ns[k];
    return worst;
}

int seer_best_class(const struct seer_model *m, const struct seer_row *r, double it)
{
    int best = -1;
    double bt = INFINITY;
    for (int c = 0; c < m->k; c++) {
        int k = m->class_kernel[c];
        if (r->ok[k] && r->pre_ns[k] + it * r->iter_ns[k] < bt) {
            bt = r->pre_ns[k] + it * r->iter_ns[k];
            best = c;
        }
    }
    return best;
}

void seer_known_x(double x[SEER_NK], const struct seer_row *r, double it)
{
    x[0] = r->f.rows;
    x[1] = r->f.cols;
    x[2] = r->f.nnz;
    x[3] = it;
    x[4] = r->f.rows > 0 ? r->f.nnz / r->f.rows : 0;
}

void seer_gathered_x(double x[SEER_NG], const struct seer_row *r, double it)
{
    seer_known_x(x, r, it);
    x[5] = r->f.row_max;
    x[6] = r->f.row_min;
    x[7] = r->f.row_var;
    seer_derive_features(x);
}

int seer_model_is_test(const struct seer_model *m, const char *name)
{
    for (int i = 0; i < m->ntest; i++)
        if (!strcmp(m->test[i], name))
            return 1;
    return 0;
}

/* The samples of a set of matrices: known and gathered features, labels, owning row, and each
 * class's cost (n x k: total time / the Oracle's total over the set at that iteration count). */
struct samples {
    int n, k;
    double *xk, *xg, *it, *cost;
    int *y, *row, *itj;
};

static void samples_alloc(struct samples *s, int cap, int k)
{
    size_t c = (size_t)(cap ? cap : 1);
    s->n = 0;
    s->k = k;
    s->xk = xmalloc(c * SEER_NK * sizeof(double));
    s->xg = xmalloc(c * SEER_NG * sizeof(double));
    s->it = xmalloc(c * sizeof(double));
    s->cost = xmalloc(c * (size_t)k * sizeof(double));
    s->y = xmalloc(c * sizeof(int));
    s->row = xmalloc(c * sizeof(int));
    s->itj = xmalloc(c * sizeof(int));
}

static void samples_build(struct samples *s, const struct seer_model *m, const struct seer_table *t,
                          const int *rows, int nrows)
{
    double oracle[SEER_MAX_ITER] = { 0 };
    samples_alloc(s, nrows * m->opt.niter, m->k);
    for (int i = 0; i < nrows; i++) {
        const struct seer_row *r = &t->rows[rows[i]];
        for (int j = 0; j < m->opt.niter; j++) {
            double it = m->opt.iterations[j];
            int c = seer_best_class(m, r, it);
            if (c < 0)
                continue;
            seer_known_x(s->xk + (size_t)s->n * SEER_NK, r, it);
            seer_gathered_x(s->xg + (size_t)s->n * SEER_NG, r, it);
            for (int q = 0; q < m->k; q++)
                s->cost[(size_t)s->n * (size_t)m->k + (size_t)q] = seer_total_ns(r, m->class_kernel[q], it);
            oracle[j] += seer_total_ns(r, m->class_kernel[c], it);
            s->y[s->n] = c;
            s->row[s->n] = rows[i];
            s->itj[s->n] = j;
            s->it[s->n++] = it;
        }
    }
    for (int i = 0; i < s->n; i++)
        for (int q = 0; q < m->k; q++)
            s->cost[(size_t)i * (size_t)m->k + (size_t)q] /= oracle[s->itj[i]] > 0 ? oracle[s->itj[i]] : 1;
}

static void samples_release(struct samples *s)
{
    free(s->xk);
    free(s->xg);
    free(s->it);
    free(s->cost);
    free(s->y);
    free(s->row);
    free(s->itj);
}

static unsigned long long mix(unsigned long long *st)
{
    unsigned long long z = (*st += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Shuffle the rows with the seed; the first ntest are the test set. */
static void split(int *order, int *ntest, int n, const struct seer_train_options *o)
{
    unsigned long long st = o->seed;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(mix(&st) % (unsigned long long)(i + 1)), tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    *ntest = (int)ceil(n * o->test_fraction);
    if (n >= 2 && *ntest < 1)
        *ntest = 1;
    if (*ntest >= n)
        *ntest = n - 1;
}

static void classes(struct seer_model *m, const struct seer_table *t)
{
    m->k = 0;
    for (int k = 0; k < SEER_K_COUNT; k++) {
        int any = 0;
        for (int i = 0; i < t->n && !any; i++)
            any = t->rows[i].ok[k];
        if (any)
            m->class_kernel[m->k++] = k;
    }
}

/* One grid point: the worst case a kernel may have to be chosen (0: any kernel), how the tree
 * is split (SEER_SPLIT_*), its depth and leaf size, and (gathered tree) the row-length guard's
 * ratio (0: no guard; seer/guard.c). */
struct shape {
    double risk;
    int split, depth, leaf;
    double guard;
};

/* Costs (n x k) in which a class whose worst ratio to the cheapest class over these samples
 * exceeds risk costs 4 x each sample's dearest class, so no leaf chooses it. */
static double *risk_costs(const double *cost, int n, int k, double risk)
{
    double *c = xmalloc((size_t)n * (size_t)k * sizeof(double)), worst[SEER_K_COUNT] = { 0 };
    for (int i = 0; i < n; i++) {
        const double *ci = cost + (size_t)i * (size_t)k;
        double lo = INFINITY;
        for (int q = 0; q < k; q++)
            lo = ci[q] < lo ? ci[q] : lo;
        for (int q = 0; q < k && lo > 0; q++)
            worst[q] = ci[q] / lo > worst[q] ? ci[q] / lo : worst[q];
    }
    for (int i = 0; i < n; i++) {
        const double *ci = cost + (size_t)i * (size_t)k;
        double hi = 0;
        for (int q = 0; q < k; q++)
            hi = ci[q] > hi ? ci[q] : hi;
        for (int q = 0; q < k; q++)
            c[(size_t)i * (size_t)k + (size_t)q] = worst[q] > risk ? 4 * hi : ci[q];
    }
    return c;
}

/* A tree of the given shape on costs (n x k): CART's gini splits then cost-sensitive leaf
 * labels, or splits on the summed cost itself. */
static int fit(struct learn_tree **out, const double *X, int n, int d, const int *y, int k,
               const double *cost, struct shape sh)
{
    struct learn_tree_options lo = LEARN_TREE_OPTIONS_INIT;
    double *rc_cost = sh.risk > 0 ? risk_costs(cost, n, k, sh.risk) : NULL;
    const double *c = rc_cost ? rc_cost : cost;
    int rc;
    lo.max_depth = sh.depth;
    lo.min_samples_leaf = sh.leaf;
    if (sh.split == SEER_SPLIT_COST) {
        rc = learn_tree_fit_cost(out, X, n, d, c, k, &lo);
    } else {
        rc = learn_tree_fit(out, X, n, d, y, k, NULL, &lo);
        if (rc == 0)
            rc = learn_tree_relabel_by_cost(*out, X, n, c);
    }
    free(rc_cost);
    if (rc == 0 && d == SEER_NG && sh.guard > 0) {
        struct learn_tree *g = NULL;
        rc = seer_guard_tree(&g, *out, X, cost, n, k, sh.guard);
        learn_tree_free(*out);
        *out = g;
    }
    return rc;
}

static const double RISKS[] = { 0, 100, 20 }, GUARDS[] = { 0, 10, 2 };
static const int SPLITS[] = { SEER_SPLIT_GINI, SEER_SPLIT_COST }, DEPTHS[] = { 2, 4, 6, 8, 12 },
                 LEAVES[] = { 1, 3, 5, 10, 20 };
#define GRID_RISKS 3
#define GRID_GUARDS 3
#define GRID_SPLITS 2
#define GRID_DEPTHS 5
#define GRID_LEAVES 5

/* Grid point g of the grid the options leave open (fixed options shrink a dimension to one
 * value; risks 1: any kernel only). Order: risk, split, depth, leaf size, each from the first,
 * so the first best on ties takes any kernel, gini and the smaller tree. The guard is not a
 * grid dimension here: it is grafted onto a fitted tree (guard_list). */
static int grid_point(struct shape *sh, const struct seer_train_options *o, int risks, int g)
{
    int nr = o->risk >= 0 ? 1 : risks, ns = o->split >= 0 ? 1 : GRID_SPLITS;
    int nd = o->max_depth >= 0 ? 1 : GRID_DEPTHS, nl = o->min_samples_leaf > 0 ? 1 : GRID_LEAVES;
    if (g >= nr * ns * nd * nl)
        return 0;
    sh->risk = o->risk >= 0 ? o->risk : RISKS[g / (ns * nd * nl)];
    sh->split = ns == 1 ? o->split : SPLITS[g / (nd * nl) % ns];
    sh->depth = nd == 1 ? o->max_depth : DEPTHS[g / nl % nd];
    sh->leaf = nl == 1 ? o->min_samples_leaf : LEAVES[g % nl];
    sh->guard = 0;
    return 1;
}

/* The guard ratios to try on the known (g = 0: none) or gathered tree: the one given, or
 * GUARDS (no guard first, so ties take none). */
static int guard_list(double *out, const struct seer_train_options *o, int g)
{
    int n = !g ? 1 : o->guard >= 0 ? 1 : GRID_GUARDS;
    for (int i = 0; i < n; i++)
        out[i] = !g ? 0 : o->guard >= 0 ? o->guard : GUARDS[i];
    return n;
}

/* Sample i's total time with class c, gathering or not (feature cost added). */
static double pick_ns(const struct seer_model *m, const struct seer_table *t,
                      const struct samples *s, int i, int c, int gathered)
{
    const struct seer_row *r = &t->rows[s->row[i]];
    return seer_total_ns(r, m->class_kernel[c], s->it[i]) + (gathered ? r->feature_ns : 0);
}

/* 1 when gathering pays for sample i: feature cost + the gathered pick beats the known pick. */
static int gather_pays(const struct seer_model *m, const struct seer_table *t,
                       const struct samples *s, int i, int ck, int cg)
{
    return pick_ns(m, t, s, i, cg, 1) < pick_ns(m, t, s, i, ck, 0);
}

/* Subset of samples by a mask (1 = take). */
static void take(struct samples *dst, const struct samples *s, const int *mask)
{
    samples_alloc(dst, s->n, s->k);
    for (int i = 0; i < s->n; i++) {
        if (!mask[i])
            continue;
        int n = dst->n++;
        memcpy(dst->xk + (size_t)n * SEER_NK, s->xk + (size_t)i * SEER_NK, SEER_NK * sizeof(double));
        memcpy(dst->xg + (size_t)n * SEER_NG, s->xg + (size_t)i * SEER_NG, SEER_NG * sizeof(double));
        memcpy(dst->cost + (size_t)n * (size_t)s->k, s->cost + (size_t)i * (size_t)s->k,
               (size_t)s->k * sizeof(double));
        dst->y[n] = s->y[i];
        dst->row[n] = s->row[i];
        dst->itj[n] = s->itj[i];
        dst->it[n] = s->it[i];
    }
}

/* Out-of-fold picks of a tree on the known (g = 0) or gathered (g = 1) features: each
 * matrix's picks come from a tree fitted without it (fold = place in the shuffled training
 * order modulo folds; one fold: fitted and predicted on everything). */
static int out_of_fold(int *pick, const struct seer_model *m, const struct samples *s,
                       const int *fold_of_row, int folds, int g, struct shape sh,
                       const double *guards, int ng)
{
    int *mask = xmalloc((size_t)(s->n ? s->n : 1) * sizeof(int)), rc = 0, d = g ? SEER_NG : SEER_NK;
    sh.guard = 0;
    for (int f = 0; f < folds && rc == 0; f++) {
        struct samples tr;
        struct learn_tree *tree = NULL;
        for (int i = 0; i < s->n; i++)
            mask[i] = folds == 1 || fold_of_row[s->row[i]] != f;
        take(&tr, s, mask);
        if (tr.n > 0 && (rc = fit(&tree, g ? tr.xg : tr.xk, tr.n, d, tr.y, m->k, tr.cost, sh)) == 0)
            for (int j = 0; j < ng && rc == 0; j++) {
                struct learn_tree *gt = NULL;
                if (guards[j] > 0 && (rc = seer_guard_tree(&gt, tree, tr.xg, tr.cost, tr.n, m->k,
                                                           guards[j])) < 0)
                    break;
                for (int i = 0; i < s->n; i++)
                    if (folds == 1 || fold_of_row[s->row[i]] == f)
                        pick[(size_t)j * (size_t)s->n + (size_t)i] = learn_tree_predict(
                            gt ? gt : tree, (g ? s->xg : s->xk) + (size_t)i * (size_t)d);
                learn_tree_free(gt);
            }
        learn_tree_free(tree);
        samples_release(&tr);
    }
    free(mask);
    return rc;
}

/* Mean over the iteration counts of Oracle total / total of the picks. */
static double picks_score(const struct seer_model *m, const struct seer_table *t,
                          const struct samples *s, const int *pick, int gathered)
{
    double best[SEER_MAX_ITER] = { 0 }, got[SEER_MAX_ITER] = { 0 }, sum = 0;
    for (int i = 0; i < s->n; i++) {
        best[s->itj[i]] += pick_ns(m, t, s, i, s->y[i], 0);
        got[s->itj[i]] += pick_ns(m, t, s, i, pick[i], gathered);
    }
    for (int j = 0; j < m->opt.niter; j++)
        sum += got[j] > 0 ? best[j] / got[j] : 0;
    return sum / m->opt.niter;
}

/* The grid points of the known (g = 0) or gathered tree ranked by the out-of-fold score of their
 * picks: the best `keep` (the first on ties), each with its picks (keep x n) and score. */
struct ranked {
    int n, keep;
    struct shape sh[SEER_CANDIDATES];
    double score[SEER_CANDIDATES];
    int *pick;
};

static void ranked_insert(struct ranked *r, const struct shape *sh, double sc, const int *p, int n)
{
    int at = r->n < r->keep ? r->n : r->keep - 1;
    if (r->n == r->keep && sc <= r->score[at])
        return;
    while (at > 0 && sc > r->score[at - 1]) {
        r->sh[at] = r->sh[at - 1];
        r->score[at] = r->score[at - 1];
        memcpy(r->pick + (size_t)at * (size_t)n, r->pick + (size_t)(at - 1) * (size_t)n,
               (size_t)n * sizeof(int));
        at--;
    }
    r->sh[at] = *sh;
    r->score[at] = sc;
    memcpy(r->pick + (size_t)at * (size_t)n, p, (size_t)n * sizeof(int));
    r->n += r->n < r->keep;
}

static int rank_shapes(struct ranked *r, struct seer_model *m, const struct seer_table *t,
                       const struct samples *s, const int *fold_of_row, int folds, int g)
{
    double guards[GRID_GUARDS];
    int ng = guard_list(guards, &m->opt, g), n = s->n ? s->n : 1, rc = 0;
    int *p = xmalloc((size_t)ng * (size_t)n * sizeof(int));
    struct shape sh;
    r->pick = xcalloc((size_t)r->keep * (size_t)n, sizeof(int));
    for (int gp = 0; rc == 0 && grid_point(&sh, &m->opt, GRID_RISKS, gp); gp++) {
        if ((rc = out_of_fold(p, m, s, fold_of_row, folds, g, sh, guards, ng)) < 0)
            break;
        for (int j = 0; j < ng; j++) {
            sh.guard = guards[j];
            ranked_insert(r, &sh, picks_score(m, t, s, p + (size_t)j * (size_t)n, g),
                          p + (size_t)j * (size_t)n, s->n);
        }
    }
    free(p);
    return rc;
}

static void take_rank(struct seer_model *m, const struct ranked *r, int i, int g)
{
    m->cv_score[g] = r->score[i];
    m->risk[g] = r->sh[i].risk;
    m->split[g] = r->sh[i].split;
    m->depth[g] = r->sh[i].depth;
    m->leaf[g] = r->sh[i].leaf;
    m->guard[g] = r->sh[i].guard;
}

/* Split, depth and leaf size of the known (g = 0) or gathered tree: the grid point whose
 * out-of-fold picks give the best score (the first on ties); its picks are kept in pick. */
static int choose(struct seer_model *m, const struct seer_table *t, const struct samples *s,
                  const int *fold_of_row, int folds, int g, int *pick)
{
    struct ranked r = { .keep = SEER_CANDIDATES };
    int rc = rank_shapes(&r, m, t, s, fold_of_row, folds, g);
    if (rc == 0 && r.n > 0) {
        take_rank(m, &r, 0, g);
        memcpy(pick, r.pick, (size_t)s->n * sizeof(int));
    }
    free(r.pick);
    return rc;
}

static struct shape chosen(const struct seer_model *m, int g)
{
    return (struct shape){ m->risk[g], m->split[g], m->depth[g], m->leaf[g], m->guard[g] };
}

/* Accuracies of the three trees on a sample set (the selector against whether gathering pays
 * with the final trees' picks). */
static void accuracies(double acc[3], const struct seer_model *m, const struct seer_table *t,
                       const struct samples *s)
{
    int good[3] = { 0, 0, 0 };
    for (int i = 0; i < s->n; i++) {
        int ck = learn_tree_predict(m->known, s->xk + (size_t)i * SEER_NK);
        int cg = learn_tree_predict(m->gathered, s->xg + (size_t)i * SEER_NG);
        int want = gather_pays(m, t, s, i, ck, cg);
        good[0] += ck == s->y[i];
        good[1] += cg == s->y[i];
        good[2] += learn_tree_predict(m->selector, s->xk + (size_t)i * SEER_NK) == want;
    }
    for (int j = 0; j < 3; j++)
        acc[j] = s->n ? (double)good[j] / s->n : 0;
}

/* The selector's labels (1: the out-of-fold gathered pick plus the feature cost beats the
 * out-of-fold known pick) and costs (known total, gathered total) on the Oracle's scale of each
 * iteration count. */
static void selector_samples(int *lab, double *cost, const struct seer_model *m,
                             const struct seer_table *t, const struct samples *s, const int *pk,
                             const int *pg)
{
    for (int i = 0; i < s->n; i++) {
        double best = pick_ns(m, t, s, i, s->y[i], 0); /* scale: 1 / the Oracle's total */
        double scale = best > 0 ? s->cost[(size_t)i * (size_t)s->k + (size_t)s->y[i]] / best : 0;
        lab[i] = gather_pays(m, t, s, i, pk[i], pg[i]);
        cost[2 * i] = pick_ns(m, t, s, i, pk[i], 0) * scale;
        cost[2 * i + 1] = pick_ns(m, t, s, i, pg[i], 1) * scale;
    }
}

/* Out-of-fold summed cost of a selector of this depth and leaf size (each matrix decided by a
 * selector fitted without it). */
static int selector_oof_cost(double *out, const struct samples *s, const int *lab,
                             const double *cost, const int *fold_of_row, int folds,
                             struct shape sh)
{
    int *mask = xmalloc((size_t)(s->n ? s->n : 1) * sizeof(int)), rc = 0;
    int *lt = xmalloc((size_t)(s->n ? s->n : 1) * sizeof(int));
    double *ct = xmalloc((size_t)(s->n ? s->n : 1) * 2 * sizeof(double));
    *out = 0;
    for (int f = 0; f < folds && rc == 0; f++) {
        struct samples tr;
        struct learn_tree *tree = NULL;
        int n = 0;
        for (int i = 0; i < s->n; i++)
            if ((mask[i] = folds == 1 || fold_of_row[s->row[i]] != f)) {
                lt[n] = lab[i];
                ct[2 * n] = cost[2 * i], ct[2 * n + 1] = cost[2 * i + 1];
                n++;
            }
        take(&tr, s, mask);
        if (tr.n > 0 && (rc = fit(&tree, tr.xk, tr.n, SEER_NK, lt, 2, ct, sh)) == 0)
            for (int i = 0; i < s->n; i++)
                if (folds == 1 || fold_of_row[s->row[i]] == f)
                    *out += cost[2 * i + (learn_tree_predict(tree, s->xk + (size_t)i * SEER_NK) == 1)];
        learn_tree_free(tree);
        samples_release(&tr);
    }
    free(mask);
    free(lt);
    free(ct);
    return rc;
}

/* The selector's best shape for these out-of-fold picks: the grid point (unless given) of the
 * least out-of-fold summed cost of its decisions on the training matrices (*best: that cost,
 * the whole selector strategy's on the Oracle's scale of each iteration count). */
static int selector_shape(double *best, struct shape *out, struct seer_model *m,
                          const struct seer_table *t, const struct samples *s, const int *pk,
                          const int *pg, const int *fold_of_row, int folds)
{
    int *lab = xcalloc((size_t)(s->n ? s->n : 1), sizeof(int)), rc = 0;
    double *cost = xmalloc((size_t)(s->n ? s->n : 1) * 2 * sizeof(double));
    struct shape sh;
    selector_samples(lab, cost, m, t, s, pk, pg);
    *best = INFINITY;
    for (int gp = 0; rc == 0 && grid_point(&sh, &m->opt, 1, gp); gp++) {
        double c = 0;
        if ((rc = selector_oof_cost(&c, s, lab, cost, fold_of_row, folds, sh)) == 0 && c < *best) {
            *best = c;
            *out = sh;
        }
    }
    free(lab);
    free(cost);
    return rc;
}

/* The selector of the given shape, fitted on the out-of-fold labels of all training samples. */
static int fit_selector(struct seer_model *m, const struct seer_table *t, const struct samples *s,
                        const int *pk, const int *pg, struct shape sh)
{
    int *lab = xcalloc((size_t)(s->n ? s->n : 1), sizeof(int));
    double *cost = xmalloc((size_t)(s->n ? s->n : 1) * 2 * sizeof(double));
    selector_samples(lab, cost, m, t, s, pk, pg);
    for (int i = 0; i < s->n; i++)
        m->selector_gather_labels += lab[i];
    m->risk[2] = sh.risk;
    m->split[2] = sh.split;
    m->depth[2] = sh.depth;
    m->leaf[2] = sh.leaf;
    m->guard[2] = 0;
    int rc = fit(&m->selector, s->xk, s->n, SEER_NK, lab, 2, cost, sh);
    free(lab);
    free(cost);
    return rc;
}

/* The gathered tree's shape: of its SEER_CANDIDATES best grid points by its own out-of-fold
 * score, the one whose out-of-fold picks give the whole selector strategy (with its own best
 * selector) the least out-of-fold cost; what counts is the time of the strategy the user runs,
 * not of the gathered tree alone. Its picks go into pg, the selector's shape into sel. */
static int choose_gathered(struct seer_model *m, const struct seer_table *t, const struct samples *s,
                           const int *fold_of_row, int folds, const int *pk, int *pg,
                           struct shape *sel)
{
    struct ranked r = { .keep = SEER_CANDIDATES };
    double best = INFINITY;
    int rc = rank_shapes(&r, m, t, s, fold_of_row, folds, 1);
    for (int i = 0; rc == 0 && i < r.n; i++) {
        double c = 0;
        struct shape sh;
        const int *p = r.pick + (size_t)i * (size_t)s->n;
        if ((rc = selector_shape(&c, &sh, m, t, s, pk, p, fold_of_row, folds)) == 0 && c < best) {
            best = c;
            *sel = sh;
            take_rank(m, &r, i, 1);
            memcpy(pg, p, (size_t)s->n * sizeof(int));
        }
    }
    free(r.pick);
    return rc;
}

static int fit_all(struct seer_model *m, const struct seer_table *t, const struct samples *tr,
                   const int *fold_of_row)
{
    int folds = m->train_matrices >= m->opt.folds && m->opt.folds > 1 ? m->opt.folds : 1;
    int *pk = xcalloc((size_t)(tr->n ? tr->n : 1), sizeof(int));
    int *pg = xcalloc((size_t)(tr->n ? tr->n : 1), sizeof(int));
    struct shape sel = { 0, 0, 0, 0, 0 };
    int rc = choose(m, t, tr, fold_of_row, folds, 0, pk);
    if (rc == 0)
        rc = choose_gathered(m, t, tr, fold_of_row, folds, pk, pg, &sel);
    if (rc == 0)
        rc = fit(&m->known, tr->xk, tr->n, SEER_NK, tr->y, m->k, tr->cost, chosen(m, 0));
    if (rc == 0)
        rc = fit(&m->gathered, tr->xg, tr->n, SEER_NG, tr->y, m->k, tr->cost, chosen(m, 1));
    if (rc == 0)
        rc = fit_selector(m, t, tr, pk, pg, sel);
    free(pk);
    free(pg);
    return rc;
}

static void set_split(struct seer_model *m, const struct seer_table *t, const int *order,
                      int ntest, int *train_rows, int *test_rows, int *fold_of_row)
{
    m->ntest = ntest;
    m->test = xcalloc((size_t)(ntest ? ntest : 1), sizeof(char *));
    for (int i = 0; i < ntest; i++) {
        test_rows[i] = order[i];
        m->test[i] = xstrdup(t->rows[order[i]].name);
    }
    m->train_matrices = t->n - ntest;
    for (int i = ntest; i < t->n; i++) {
        train_rows[i - ntest] = order[i];
        fold_of_row[order[i]] = (i - ntest) % (m->opt.folds > 0 ? m->opt.folds : 1);
    }
}

int seer_train(struct seer_model *out, const struct seer_table *t,
               const struct seer_train_options *o)
{
    struct seer_model m;
    struct samples tr = { 0 }, te = { 0 };
    memset(&m, 0, sizeof(m));
    *out = m;
    if (t->n < 2)
        return lscat_error_setc(LSCAT_EINVALID, "the bench table holds %d usable matrix: at least "
                                "2 are needed (one to train on, one to test)", t->n);
    m.gpu = xstrdup(t->gpu);
    m.precision = xstrdup(t->precision);
    m.feature_cost = t->feature_cost;
    m.opt = *o;
    classes(&m, t);
    int *order = xmalloc((size_t)t->n * sizeof(int)), *train_rows = xmalloc((size_t)t->n * sizeof(int));
    int *test_rows = xmalloc((size_t)t->n * sizeof(int)), *fold = xcalloc((size_t)t->n, sizeof(int));
    int ntest = 0;
    split(order, &ntest, t->n, o);
    set_split(&m, t, order, ntest, train_rows, test_rows, fold);
    samples_build(&tr, &m, t, train_rows, m.train_matrices);
    samples_build(&te, &m, t, test_rows, ntest);
    m.train_samples = tr.n;
    m.test_samples = te.n;
    int rc = fit_all(&m, t, &tr, fold);
    if (rc == 0) {
        double a[3];
        accuracies(a, &m, t, &te);
        m.acc_known = a[0], m.acc_gathered = a[1], m.acc_selector = a[2];
        accuracies(a, &m, t, &tr);
        m.train_known = a[0], m.train_gathered = a[1], m.train_selector = a[2];
    }
    samples_release(&tr);
    samples_release(&te);
    free(order);
    free(train_rows);
    free(test_rows);
    free(fold);
    if (rc < 0)
        seer_model_release(&m);
    else
        *out = m;
    return rc;
}

void seer_model_release(struct seer_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->ntest; i++)
        free(m->test[i]);
    free(m->test);
    free(m->gpu);
    free(m->precision);
    learn_tree_free(m->known);
    learn_tree_free(m->gathered);
    learn_tree_free(m->selector);
    memset(m, 0, sizeof(*m));
}
