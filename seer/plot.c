/* gnuplot figures of lscat seer eval, after the paper's: the geomean speed-up of the Oracle and
 * of the selector, known and gathered strategies over each single kernel (one figure for the
 * first iteration count, one for the last), and each strategy's fraction of the Oracle's time
 * against the iteration count. PNG and SVG each. A missing gnuplot is a warning. */
#include "seer/eval.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_in(const char *dir, const char *file, const struct buf *b)
{
    char *p = fs_join(dir, file);
    int rc = fs_write_atomic(p, b->data, b->len);
    free(p);
    return rc;
}

static void speedup_data(struct buf *b, const struct seer_eval_iter *it, const struct seer_model *m)
{
    buf_adds(b, "# kernel oracle selector known gathered (geomean speed-up over the kernel)\n");
    for (int c = 0; c < m->k; c++) {
        int k = m->class_kernel[c];
        buf_addf(b, "%s %.6f %.6f %.6f %.6f\n", seer_kernel_name(k), it->geomean[SEER_S_ORACLE][k],
                 it->geomean[SEER_S_SELECTOR][k], it->geomean[SEER_S_KNOWN][k],
                 it->geomean[SEER_S_GATHERED][k]);
    }
}

static double frac(double oracle, double x)
{
    return x > 0 ? oracle / x : 0;
}

static void oracle_data(struct buf *b, const struct seer_eval *e)
{
    buf_adds(b, "# iterations selector known gathered best_single cusparse_default "
             "(fraction of the Oracle's time)\n");
    for (int j = 0; j < e->niter; j++) {
        const struct seer_eval_iter *it = &e->it[j];
        double o = it->strategy_ns[SEER_S_ORACLE];
        buf_addf(b, "%g %.6f %.6f %.6f %.6f %.6f\n", it->iterations,
                 frac(o, it->strategy_ns[SEER_S_SELECTOR]), frac(o, it->strategy_ns[SEER_S_KNOWN]),
                 frac(o, it->strategy_ns[SEER_S_GATHERED]), frac(o, it->single_ns[it->best_single]),
                 frac(o, it->single_ns[SEER_K_CUSPARSE_DEFAULT]));
    }
}

static void script(struct buf *g, const struct seer_eval *e, const struct seer_model *m,
                   const char *term, const char *ext)
{
    int last = e->niter - 1;
    const char *sizes = !strcmp(ext, "png") ? "size 1100,600" : "size 1100,600 dynamic";
    for (int f = 0; f < 2; f++) {
        const struct seer_eval_iter *it = &e->it[f ? last : 0];
        buf_addf(g, "set terminal %s %s\nset output 'speedup-%g.%s'\n", term, sizes,
                 it->iterations, ext);
        buf_addf(g, "set title \"Geomean speed-up over each single kernel, %g iteration%s "
                 "(%s, %s, %d test matrices)\"\nset style data histograms\nset style histogram "
                 "clustered gap 1\nset style fill solid 0.8 border -1\nset boxwidth 0.9\n"
                 "set xtics rotate by -30\nset logscale y\nset ylabel 'speed-up (log)'\n"
                 "set grid ytics\nunset logscale x\nset key top left\n", it->iterations,
                 it->iterations == 1 ? "" : "s", m->gpu, m->precision, e->n_test);
        buf_addf(g, "plot 'speedup-%g.dat' using 2:xtic(1) title 'Oracle', '' using 3 title "
                 "'selector', '' using 4 title 'known', '' using 5 title 'gathered'\n",
                 it->iterations);
        buf_adds(g, "unset logscale y\nunset style\nset xtics norotate\n");
        if (f == 0 && last == 0)
            break;
    }
    buf_addf(g, "set terminal %s %s\nset output 'oracle.%s'\nset title \"Fraction of the "
             "Oracle's total time (%s, %s)\"\nset logscale x\nset yrange [0:1.05]\n"
             "set xlabel 'iterations'\nset ylabel 'Oracle time / strategy time'\nset key bottom "
             "right\nset style data linespoints\nplot 'oracle.dat' using 1:2 title 'selector', "
             "'' using 1:3 title 'known', '' using 1:4 title 'gathered', '' using 1:5 title "
             "'best single kernel', '' using 1:6 title 'cuSPARSE default'\nunset logscale x\n"
             "set yrange [*:*]\nunset xlabel\n", term, sizes, ext, m->gpu, m->precision);
}

static int run_gnuplot(const char *dir, const struct buf *g)
{
    const char *argv[] = { "gnuplot", NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.cwd = dir;
    o.stdin_data = g->data;
    o.stdin_len = g->len;
    o.timeout_s = 300;
    if (proc_run(&r, &o) < 0) {
        log_warn("plots skipped: cannot run gnuplot (%s; install gnuplot-nox)", lscat_error_last());
        return 0;
    }
    if (r.exit_code || r.signal)
        log_warn("plots skipped: gnuplot failed (exit %d): %.300s", r.exit_code, r.err.data);
    proc_result_release(&r);
    return 0;
}

int seer_plot_write(const struct seer_eval *e, const struct seer_model *m, const char *dir)
{
    struct buf d = BUF_INIT, g = BUF_INIT;
    int rc = 0;
    for (int f = 0; f < 2 && rc == 0 && e->niter > 0; f++) {
        const struct seer_eval_iter *it = &e->it[f ? e->niter - 1 : 0];
        char name[64];
        buf_reset(&d);
        speedup_data(&d, it, m);
        snprintf(name, sizeof(name), "speedup-%g.dat", it->iterations);
        rc = write_in(dir, name, &d);
    }
    buf_reset(&d);
    oracle_data(&d, e);
    if (rc == 0)
        rc = write_in(dir, "oracle.dat", &d);
    script(&g, e, m, "pngcairo", "png");
    script(&g, e, m, "svg", "svg");
    if (rc == 0)
        rc = write_in(dir, "plots.gp", &g);
    if (rc == 0)
        rc = run_gnuplot(dir, &g);
    buf_release(&d);
    buf_release(&g);
    return rc;
}
