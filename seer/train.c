/* Seer's trees: samples (matrix x iterations) from the bench table, a seeded split by matrix,
 * the known and gathered trees fitted on the training matrices, the selector fitted on labels
 * from out-of-fold predictions of the other two, and each tree's accuracy. */
#include "seer/train.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void seer_known_x(double x[4], const struct seer_row *r, double it)
{
    x[0] = r->f.rows;
    x[1] = r->f.cols;
    x[2] = r->f.nnz;
    x[3] = it;
}

void seer_gathered_x(double x[8], const struct seer_row *r, double it)
{
    seer_known_x(x, r, it);
    x[4] = r->f.row_max;
    x[5] = r->f.row_min;
    x[6] = r->f.row_mean;
    x[7] = r->f.row_var;
}

int seer_model_is_test(const struct seer_model *m, const char *name)
{
    for (int i = 0; i < m->ntest; i++)
        if (!strcmp(m->test[i], name))
            return 1;
    return 0;
}

/* The samples of a set of matrices: known and gathered features, labels, owning row. */
struct samples {
    int n;
    double *xk, *xg;
    int *y, *row;
    double *it;
};

static void samples_build(struct samples *s, const struct seer_model *m, const struct seer_table *t,
                          const int *rows, int nrows)
{
    int cap = nrows * m->opt.niter;
    s->n = 0;
    s->xk = xmalloc((size_t)(cap ? cap : 1) * 4 * sizeof(double));
    s->xg = xmalloc((size_t)(cap ? cap : 1) * 8 * sizeof(double));
    s->y = xmalloc((size_t)(cap ? cap : 1) * sizeof(int));
    s->row = xmalloc((size_t)(cap ? cap : 1) * sizeof(int));
    s->it = xmalloc((size_t)(cap ? cap : 1) * sizeof(double));
    for (int i = 0; i < nrows; i++) {
        const struct seer_row *r = &t->rows[rows[i]];
        for (int j = 0; j < m->opt.niter; j++) {
            int c = seer_best_class(m, r, m->opt.iterations[j]);
            if (c < 0)
                continue;
            seer_known_x(s->xk + (size_t)s->n * 4, r, m->opt.iterations[j]);
            seer_gathered_x(s->xg + (size_t)s->n * 8, r, m->opt.iterations[j]);
            s->y[s->n] = c;
            s->row[s->n] = rows[i];
            s->it[s->n++] = m->opt.iterations[j];
        }
    }
}

static void samples_release(struct samples *s)
{
    free(s->xk);
    free(s->xg);
    free(s->y);
    free(s->row);
    free(s->it);
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

static int fit(struct learn_tree **out, const double *X, int n, int d, const int *y, int k,
               const struct seer_train_options *o)
{
    struct learn_tree_options lo = LEARN_TREE_OPTIONS_INIT;
    lo.max_depth = o->max_depth;
    lo.min_samples_leaf = o->min_samples_leaf;
    return learn_tree_fit(out, X, n, d, y, k, NULL, &lo);
}

/* 1 when gathering pays for sample i: feature cost + the gathered pick beats the known pick. */
static int gather_pays(const struct seer_model *m, const struct seer_row *r, double it, int ck,
                       int cg)
{
    double known = seer_total_ns(r, m->class_kernel[ck], it);
    double gathered = r->feature_ns + seer_total_ns(r, m->class_kernel[cg], it);
    return gathered < known;
}


/* Subset of samples by a mask (1 = take). */
static void take(struct samples *dst, const struct samples *s, const int *mask)
{
    int n = 0;
    dst->xk = xmalloc((size_t)(s->n ? s->n : 1) * 4 * sizeof(double));
    dst->xg = xmalloc((size_t)(s->n ? s->n : 1) * 8 * sizeof(double));
    dst->y = xmalloc((size_t)(s->n ? s->n : 1) * sizeof(int));
    dst->row = xmalloc((size_t)(s->n ? s->n : 1) * sizeof(int));
    dst->it = xmalloc((size_t)(s->n ? s->n : 1) * sizeof(double));
    for (int i = 0; i < s->n; i++) {
        if (!mask[i])
            continue;
        memcpy(dst->xk + (size_t)n * 4, s->xk + (size_t)i * 4, 4 * sizeof(double));
        memcpy(dst->xg + (size_t)n * 8, s->xg + (size_t)i * 8, 8 * sizeof(double));
        dst->y[n] = s->y[i];
        dst->row[n] = s->row[i];
        dst->it[n++] = s->it[i];
    }
    dst->n = n;
}

/* Selector labels for the training samples: out-of-fold picks of the known and gathered
 * trees (fold = a matrix's place in the shuffled training order modulo folds). */
static int selector_labels(int *label, const struct seer_model *m, const struct seer_table *t,
                           const struct samples *s, const int *fold_of_row, int folds)
{
    int *mask = xmalloc((size_t)(s->n ? s->n : 1) * sizeof(int)), rc = 0;
    for (int f = 0; f < folds && rc == 0; f++) {
        struct samples tr;
        struct learn_tree *tk = NULL, *tg = NULL;
        for (int i = 0; i < s->n; i++)
            mask[i] = folds == 1 || fold_of_row[s->row[i]] != f;
        take(&tr, s, mask);
        if (tr.n == 0) {
            samples_release(&tr);
            continue;
        }
        if ((rc = fit(&tk, tr.xk, tr.n, 4, tr.y, m->k, &m->opt)) == 0 &&
            (rc = fit(&tg, tr.xg, tr.n, 8, tr.y, m->k, &m->opt)) == 0)
            for (int i = 0; i < s->n; i++)
                if (folds == 1 || fold_of_row[s->row[i]] == f)
                    label[i] = gather_pays(m, &t->rows[s->row[i]], s->it[i],
                                           learn_tree_predict(tk, s->xk + (size_t)i * 4),
                                           learn_tree_predict(tg, s->xg + (size_t)i * 8));
        learn_tree_free(tk);
        learn_tree_free(tg);
        samples_release(&tr);
    }
    free(mask);
    return rc;
}

/* Accuracies of the three trees on a sample set (the selector against whether gathering pays
 * with the final trees' picks). */
static void accuracies(double acc[3], const struct seer_model *m, const struct seer_table *t,
                       const struct samples *s)
{
    int good[3] = { 0, 0, 0 };
    for (int i = 0; i < s->n; i++) {
        int ck = learn_tree_predict(m->known, s->xk + (size_t)i * 4);
        int cg = learn_tree_predict(m->gathered, s->xg + (size_t)i * 8);
        int want = gather_pays(m, &t->rows[s->row[i]], s->it[i], ck, cg);
        good[0] += ck == s->y[i];
        good[1] += cg == s->y[i];
        good[2] += learn_tree_predict(m->selector, s->xk + (size_t)i * 4) == want;
    }
    for (int j = 0; j < 3; j++)
        acc[j] = s->n ? (double)good[j] / s->n : 0;
}

static int fit_all(struct seer_model *m, const struct seer_table *t, const struct samples *tr,
                   const int *fold_of_row)
{
    int *lab = xcalloc((size_t)(tr->n ? tr->n : 1), sizeof(int)), rc;
    int folds = m->train_matrices >= m->opt.folds && m->opt.folds > 1 ? m->opt.folds : 1;
    rc = selector_labels(lab, m, t, tr, fold_of_row, folds);
    if (rc == 0)
        rc = fit(&m->known, tr->xk, tr->n, 4, tr->y, m->k, &m->opt);
    if (rc == 0)
        rc = fit(&m->gathered, tr->xg, tr->n, 8, tr->y, m->k, &m->opt);
    if (rc == 0)
        rc = fit(&m->selector, tr->xk, tr->n, 4, lab, 2, &m->opt);
    for (int i = 0; i < tr->n; i++)
        m->selector_gather_labels += lab[i];
    free(lab);
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
