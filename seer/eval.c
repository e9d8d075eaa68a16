/* Seer's evaluation on the held-back matrices: per iteration count, the total time of the
 * Oracle, of each single kernel and of the three tree strategies (feature and inference costs
 * included), geomean speed-ups and fractions of the Oracle, and the selector's gathering. */
#include "seer/eval.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const STRATEGY[SEER_S_COUNT] = { "oracle", "known", "gathered", "selector" };

static double mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Time of one prediction of each tree over the test samples: the least mean of 15 rounds of
 * at least 0.5 ms each (a busy machine preempts some rounds; the least is the walk's cost). */
static void inference(double out[3], const struct seer_model *m, const struct seer_table *t)
{
    const struct learn_tree *trees[3] = { m->known, m->gathered, m->selector };
    volatile int sink = 0;
    for (int j = 0; j < 3; j++) {
        out[j] = INFINITY;
        for (int round = 0; round < 15; round++) {
            long calls = 0;
            double t0 = mono_ns(), el = 0;
            while (el < 5e5) {
                for (int i = 0; i < t->n; i++) {
                    double x[SEER_NG];
                    seer_gathered_x(x, &t->rows[i], m->opt.iterations[i % m->opt.niter]);
                    sink += learn_tree_predict(trees[j], x);
                    calls++;
                }
                el = mono_ns() - t0;
            }
            out[j] = el / (double)calls < out[j] ? el / (double)calls : out[j];
        }
    }
    (void)sink;
}

/* The four strategies' times on one matrix for `it` iterations. */
static void strategies(double s[SEER_S_COUNT], int *gathered, int *paid, const struct seer_model *m,
                       const struct seer_row *r, double it, const double inf[3])
{
    double xg[SEER_NG];
    seer_gathered_x(xg, r, it);
    int best = seer_best_class(m, r, it);
    int ck = learn_tree_predict(m->known, xg), cg = learn_tree_predict(m->gathered, xg);
    double known = seer_total_ns(r, m->class_kernel[ck], it) + inf[0];
    double gath = r->feature_ns + seer_total_ns(r, m->class_kernel[cg], it) + inf[1];
    *gathered = learn_tree_predict(m->selector, xg) == 1;
    *paid = *gathered && gath < known;
    s[SEER_S_ORACLE] = seer_total_ns(r, m->class_kernel[best], it);
    s[SEER_S_KNOWN] = known;
    s[SEER_S_GATHERED] = gath;
    s[SEER_S_SELECTOR] = inf[2] + (*gathered ? gath : known);
}

static void eval_iter(struct seer_eval_iter *e, const struct seer_model *m,
                      const struct seer_table *t, double it, const double inf[3])
{
    double logsum[SEER_S_COUNT][SEER_K_COUNT];
    int n = 0;
    memset(e, 0, sizeof(*e));
    memset(logsum, 0, sizeof(logsum));
    e->iterations = it;
    for (int i = 0; i < t->n; i++) {
        const struct seer_row *r = &t->rows[i];
        double s[SEER_S_COUNT];
        int g, p;
        if (!seer_model_is_test(m, r->name) || seer_best_class(m, r, it) < 0)
            continue;
        n++;
        strategies(s, &g, &p, m, r, it, inf);
        e->gathered += g;
        e->gather_paid += p;
        for (int j = 0; j < SEER_S_COUNT; j++)
            e->strategy_ns[j] += s[j];
        for (int c = 0; c < m->k; c++) {
            int k = m->class_kernel[c];
            double single = seer_total_ns(r, k, it);
            e->single_ns[k] += single;
            e->single_failed[k] += !r->ok[k];
            for (int j = 0; j < SEER_S_COUNT; j++)
                logsum[j][k] += log(single / s[j]);
        }
    }
    e->best_single = m->class_kernel[0];
    for (int c = 0; c < m->k; c++) {
        int k = m->class_kernel[c];
        if (e->single_ns[k] < e->single_ns[e->best_single])
            e->best_single = k;
        for (int j = 0; j < SEER_S_COUNT; j++)
            e->geomean[j][k] = n ? exp(logsum[j][k] / n) : 0;
    }
}

int seer_eval_run(struct seer_eval *out, const struct seer_model *m, const struct seer_table *t)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < t->n; i++)
        out->n_test += seer_model_is_test(m, t->rows[i].name);
    if (out->n_test == 0)
        return lscat_error_setc(LSCAT_ENOTFOUND, "none of the model's %d test matrices is in the "
                                "%s bench table of %s (was the model trained on another store? "
                                "run lscat seer train again)", m->ntest, t->precision, t->gpu);
    inference(out->inference_ns, m, t);
    out->niter = m->opt.niter;
    for (int j = 0; j < m->opt.niter; j++)
        eval_iter(&out->it[j], m, t, m->opt.iterations[j], out->inference_ns);
    return 0;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

static void md_table(struct buf *b, const struct seer_eval *e)
{
    buf_adds(b, "| iterations | Oracle (ms) | selector (ms) | known (ms) | gathered (ms) | best "
             "single kernel (ms) | cuSPARSE default (ms) | Oracle / selector | selector speed-up "
             "over best single | over cuSPARSE default | gathered / paid |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int j = 0; j < e->niter; j++) {
        const struct seer_eval_iter *it = &e->it[j];
        double sel = it->strategy_ns[SEER_S_SELECTOR], cus = it->single_ns[SEER_K_CUSPARSE_DEFAULT];
        buf_addf(b, "| %g | %.4g | %.4g | %.4g | %.4g | %.4g (%s) | ", it->iterations,
                 it->strategy_ns[SEER_S_ORACLE] / 1e6, sel / 1e6,
                 it->strategy_ns[SEER_S_KNOWN] / 1e6, it->strategy_ns[SEER_S_GATHERED] / 1e6,
                 it->single_ns[it->best_single] / 1e6, seer_kernel_name(it->best_single));
        if (cus > 0)
            buf_addf(b, "%.4g | ", cus / 1e6);
        else
            buf_adds(b, "n/a | ");
        buf_addf(b, "%.3f | %.3fx | ", ratio(it->strategy_ns[SEER_S_ORACLE], sel),
                 ratio(it->single_ns[it->best_single], sel));
        if (cus > 0)
            buf_addf(b, "%.3fx", ratio(cus, sel));
        else
            buf_adds(b, "n/a");
        buf_addf(b, " | %d / %d |\n", it->gathered, it->gather_paid);
    }
}

static void md_geomean(struct buf *b, const struct seer_eval *e, const struct seer_model *m)
{
    buf_adds(b, "\nGeomean speed-up of each strategy over each single kernel (per test matrix "
             "time ratio; failures charged the slowest working kernel):\n\n| iterations | kernel "
             "| fails | Oracle | selector | known | gathered |\n|---|---|---|---|---|---|---|\n");
    for (int j = 0; j < e->niter; j += e->niter > 1 ? e->niter - 1 : 1)
        for (int c = 0; c < m->k; c++) {
            const struct seer_eval_iter *it = &e->it[j];
            int k = m->class_kernel[c];
            buf_addf(b, "| %g | %s | %d | %.3f | %.3f | %.3f | %.3f |\n", it->iterations,
                     seer_kernel_name(k), it->single_failed[k], it->geomean[SEER_S_ORACLE][k],
                     it->geomean[SEER_S_SELECTOR][k], it->geomean[SEER_S_KNOWN][k],
                     it->geomean[SEER_S_GATHERED][k]);
        }
}

void seer_eval_markdown(struct buf *b, const struct seer_eval *e, const struct seer_model *m)
{
    buf_addf(b, "# lscat seer eval\n\nGPU: %s; precision: %s; %d test matrices (held back by "
             "matrix, seed %llu), %d training matrices.\n\n", m->gpu, m->precision, e->n_test,
             m->opt.seed, m->train_matrices);
    buf_addf(b, "Test accuracy: known %.1f%%, gathered %.1f%%, selector %.1f%%. Inference per "
             "prediction: known %.0f ns, gathered %.0f ns, selector %.0f ns (lscat's tree walk).\n\n",
             100 * m->acc_known, 100 * m->acc_gathered, 100 * m->acc_selector,
             e->inference_ns[0], e->inference_ns[1], e->inference_ns[2]);
    static const char *const how[] = {
        "one feature launch + a stream synchronisation inside seer_select(), as measured by bench",
        "seer_gather_async() right after the caller uploads row_ptr, before the column indices, "
        "values and x; the measured exposed cost of that flow, docs/seer.md Session 8",
        "seer_gather_async() with the matrix already on the GPU, before the caller uploads x; "
        "the measured exposed cost of that flow, docs/seer.md Session 8",
        "seer_select() gathering synchronously after the caller uploaded the CSR and x; the "
        "measured exposed cost in that flow, docs/seer.md Session 8",
    };
    int k = m->feature_cost >= 0 && m->feature_cost < SEER_COST_KINDS ? m->feature_cost : 0;
    buf_addf(b, "Feature cost charged: **%s** (%s).\n\n", seer_cost_name(k), how[k]);
    buf_adds(b, "Totals over the test matrices (preprocessing + iterations x per-iteration time; "
             "the gathered and selector strategies include the GPU feature cost where they "
             "gather; every strategy includes its trees' inference):\n\n");
    md_table(b, e);
    md_geomean(b, e, m);
}

static void write_csv(struct buf *b, const struct seer_eval *e, const struct seer_model *m)
{
    buf_adds(b, "iterations,strategy,total_ns,oracle_fraction,over_kernel,geomean_speedup\n");
    for (int j = 0; j < e->niter; j++) {
        const struct seer_eval_iter *it = &e->it[j];
        for (int s = 0; s < SEER_S_COUNT; s++)
            for (int c = 0; c < m->k; c++)
                buf_addf(b, "%g,%s,%.17g,%.6f,%s,%.6f\n", it->iterations, STRATEGY[s],
                         it->strategy_ns[s], ratio(it->strategy_ns[SEER_S_ORACLE], it->strategy_ns[s]),
                         seer_kernel_name(m->class_kernel[c]), it->geomean[s][m->class_kernel[c]]);
        for (int c = 0; c < m->k; c++) {
            int k = m->class_kernel[c];
            buf_addf(b, "%g,single:%s,%.17g,%.6f,,\n", it->iterations, seer_kernel_name(k),
                     it->single_ns[k], ratio(it->strategy_ns[SEER_S_ORACLE], it->single_ns[k]));
        }
    }
}

int seer_eval_write(const struct seer_eval *e, const struct seer_model *m, const char *dir)
{
    struct buf md = BUF_INIT, csv = BUF_INIT;
    seer_eval_markdown(&md, e, m);
    write_csv(&csv, e, m);
    char *p1 = fs_join(dir, "eval.md"), *p2 = fs_join(dir, "eval.csv");
    int rc = fs_mkdirs(dir, 0755);
    if (rc == 0)
        rc = fs_write_atomic(p1, md.data, md.len);
    if (rc == 0)
        rc = fs_write_atomic(p2, csv.data, csv.len);
    if (rc == 0)
        rc = seer_plot_write(e, m, dir);
    free(p1);
    free(p2);
    buf_release(&md);
    buf_release(&csv);
    return rc;
}
