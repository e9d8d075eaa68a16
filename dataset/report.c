/* The report: LS-CAT's questions asked of the current `ok` measurements whose output check is
 * `match` (the configuration did the kernel's whole work), per GPU model, in
 * SQL over the store (one pass per question, no per-row round trips), written as a text table,
 * gnuplot PNG plots and one HTML page. Definitions are in docs/dataset.md and report.h. */
#include "dataset/report.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Current ok timings whose output check is `match` (the configuration did the kernel's whole
 * work: docs/isolate.md "Output check"), one per (model, kernel, size, block); several GPUs of
 * one model: the fastest. ?1 = the --gpu filter; ?4 = 1 (--all-checks): every ok row, whatever
 * its check (the table as it read before the check, for comparison). Rows of binding `fixed`
 * (a kernel measured at its source's hard-coded size, docs/tune.md "Fixed-size kernels") are
 * not a point of the W x H sweep: left out of every per-size table. */
#define TIMES_CTE                                                                               \
    "WITH t AS (SELECT g.name AS gpu, m.kernel_id AS k, m.width AS w, m.height AS h,"          \
    " m.block_x AS bx, m.block_y AS byy, m.block_z AS bz,"                                    \
    " m.block_x * m.block_y * m.block_z AS thr, min(m.median_ns) AS ns"                        \
    " FROM measurements m JOIN gpus g ON g.id = m.gpu_id WHERE m.superseded = 0 AND"           \
    " m.status = 'ok' AND (m.output_check = 'match' OR ?4 = 1) AND m.median_ns > 0 AND"       \
    " m.binding <> 'fixed' AND"                                                               \
    " (?1 IS NULL OR instr(lower(g.name), lower(?1)) > 0)"                                     \
    " GROUP BY g.name, m.kernel_id, m.width, m.height, m.block_x, m.block_y, m.block_z)"

/* A kernel's indexing; isolated before lscat recorded it: params' is2d. */
#define INDEXING_OF(k)                                                                          \
    "coalesce(" k ".indexing, CASE WHEN " k ".params LIKE '%\"is2d\":true%' THEN '2d' ELSE"     \
    " '1d' END)"

/* One row per case (gpu, kernel, size with >= 2 matching shapes): the best time, the largest
 * block's, the 1024-thread comparison (a 1D kernel: its (1024,1,1) block only, never a 2D
 * shape; a 2D kernel: its fastest 1024-thread shape; NULL = not measured) and the occupancy
 * suggestion's time. */
static const char cases_sql[] = TIMES_CTE ","
    " bt AS (SELECT gpu, k, w, h, thr, min(ns) AS ns FROM t GROUP BY gpu, k, w, h, thr),"
    " x1 AS (SELECT gpu, k, w, h, min(ns) AS ns FROM t WHERE bx = 1024 AND byy = 1 AND bz = 1"
    "  GROUP BY gpu, k, w, h),"
    " c AS (SELECT gpu, k, w, h, min(ns) AS best, max(thr) AS maxthr FROM t"
    "  GROUP BY gpu, k, w, h HAVING count(*) >= 2),"
    " occ AS (SELECT g.name AS gpu, tk.kernel_id AS k, min(tk.occupancy_block) AS ob"
    "  FROM tune_kernels tk JOIN gpus g ON g.id = tk.gpu_id WHERE tk.occupancy_block > 0"
    "  GROUP BY g.name, tk.kernel_id)"
    " SELECT c.gpu, c.k, c.best, l.ns, CASE WHEN " INDEXING_OF("kk") " IN ('2d', '3d')"
    "  THEN x.ns ELSE x1.ns END, o.ns FROM c"
    "  JOIN bt l ON l.gpu = c.gpu AND l.k = c.k AND l.w = c.w AND l.h = c.h AND l.thr = c.maxthr"
    "  LEFT JOIN kernels kk ON kk.id = c.k"
    "  LEFT JOIN bt x ON x.gpu = c.gpu AND x.k = c.k AND x.w = c.w AND x.h = c.h AND x.thr = 1024"
    "  LEFT JOIN x1 ON x1.gpu = c.gpu AND x1.k = c.k AND x1.w = c.w AND x1.h = c.h"
    "  LEFT JOIN occ ON occ.gpu = c.gpu AND occ.k = c.k"
    "  LEFT JOIN bt o ON o.gpu = c.gpu AND o.k = c.k AND o.w = c.w AND o.h = c.h AND o.thr = occ.ob"
    " ORDER BY c.gpu, c.k";

/* The output check of the current ok rows per model: what the cases above stand on. */
static const char checks_sql[] =
    "SELECT g.name, m.output_check, count(*), count(DISTINCT m.kernel_id) FROM measurements m"
    " JOIN gpus g ON g.id = m.gpu_id WHERE m.superseded = 0 AND m.status = 'ok' AND"
    " (?1 IS NULL OR instr(lower(g.name), lower(?1)) > 0) GROUP BY 1, 2 ORDER BY 1, 2";

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Accumulates one model's cases. */
struct acc {
    double best_not_largest, rel, below_85, gain_over_20, occ;
    double *ratios; /* time(1024) / best per compared case */
    size_t n_ratios, cap;
    int64_t cases, occ_cases;
    char last_k[80];
};

static void acc_finish(struct report_summary *r, struct acc *a)
{
    r->cases = a->cases;
    r->best_not_largest = a->cases ? a->best_not_largest / (double)a->cases : -1;
    r->largest_rel_mean = a->cases ? a->rel / (double)a->cases : -1;
    r->largest_below_85 = a->cases ? a->below_85 / (double)a->cases : -1;
    r->gain_1024_cases = (int64_t)a->n_ratios;
    r->gain_1024_missing = a->cases - (int64_t)a->n_ratios;
    r->gain_1024_mean = r->gain_1024_median = r->gain_1024_geomean = -1;
    r->gain_1024_over_20 = -1;
    if (a->n_ratios) {
        double sum = 0, logs = 0;
        for (size_t i = 0; i < a->n_ratios; i++)
            sum += a->ratios[i], logs += log(a->ratios[i]);
        qsort(a->ratios, a->n_ratios, sizeof(double), by_value);
        size_t m = a->n_ratios / 2;
        double med = a->n_ratios % 2 ? a->ratios[m] : (a->ratios[m - 1] + a->ratios[m]) / 2;
        r->gain_1024_mean = sum / (double)a->n_ratios - 1;
        r->gain_1024_median = med - 1;
        r->gain_1024_geomean = exp(logs / (double)a->n_ratios) - 1;
        r->gain_1024_over_20 = a->gain_over_20 / (double)a->n_ratios;
    }
    r->occupancy_best = a->occ_cases ? a->occ / (double)a->occ_cases : -1;
    r->occupancy_cases = a->occ_cases;
    free(a->ratios);
    memset(a, 0, sizeof(*a));
}

static void acc_add(struct report_summary *r, struct acc *a, struct store_stmt *st)
{
    const char *k = store_col_text(st, 1);
    double best = store_col_double(st, 2), largest = store_col_double(st, 3);
    if (strcmp(a->last_k, k) != 0) {
        r->kernels++;
        snprintf(a->last_k, sizeof(a->last_k), "%s", k);
    }
    a->cases++;
    a->best_not_largest += best < largest;
    a->rel += best / largest;
    a->below_85 += best / largest < 0.85;
    if (!store_col_is_null(st, 4)) {
        double ratio = store_col_double(st, 4) / best;
        XGROW(a->ratios, a->n_ratios + 1, a->cap);
        a->ratios[a->n_ratios++] = ratio;
        a->gain_over_20 += ratio - 1 > 0.2;
    }
    if (!store_col_is_null(st, 5)) {
        a->occ_cases++;
        a->occ += store_col_double(st, 5) <= best;
    }
}

static struct report_summary *summary_of(struct report_summary **out, int *n, size_t *cap,
                                         const char *gpu)
{
    for (int i = 0; i < *n; i++)
        if (strcmp((*out)[i].gpu, gpu) == 0)
            return &(*out)[i];
    XGROW(*out, (size_t)*n + 1, *cap);
    struct report_summary *r = &(*out)[(*n)++];
    memset(r, 0, sizeof(*r));
    snprintf(r->gpu, sizeof(r->gpu), "%s", gpu);
    r->best_not_largest = r->largest_rel_mean = r->largest_below_85 = -1;
    r->gain_1024_mean = r->gain_1024_median = r->gain_1024_geomean = r->gain_1024_over_20 = -1;
    r->occupancy_best = -1;
    return r;
}

static int load_checks(struct report_summary **out, int *n, size_t *cap, struct store *s,
                       const char *gpu)
{
    struct store_stmt *st = NULL;
    int rc = store_prepare(&st, s, checks_sql), step = 0;
    if (rc == 0)
        rc = store_bind(st, "t", gpu);
    while (rc == 0 && (step = store_step(st)) == STORE_ROW) {
        struct report_summary *r = summary_of(out, n, cap, store_col_text(st, 0));
        const char *c = store_col_text(st, 1);
        int64_t rows = store_col_int(st, 2);
        if (!strcmp(c, "match"))
            r->rows_match = rows;
        else if (!strcmp(c, "mismatch"))
            r->rows_mismatch = rows, r->kernels_mismatch = store_col_int(st, 3);
        else if (!strcmp(c, "nondeterministic"))
            r->rows_nondeterministic = rows;
        else
            r->rows_not_checked += rows;
    }
    store_finalize(st);
    return rc < 0 ? rc : step < 0 ? step : 0;
}

static int load_summaries(struct report_summary **out, int *n, struct store *s,
                          const struct report_options *o)
{
    struct store_stmt *st = NULL;
    struct acc a;
    size_t cap = 0;
    struct report_summary *cur = NULL;
    memset(&a, 0, sizeof(a));
    *out = NULL;
    *n = 0;
    int rc = load_checks(out, n, &cap, s, o->gpu), step = 0;
    if (rc == 0)
        rc = store_prepare(&st, s, cases_sql);
    if (rc == 0)
        rc = store_bind(st, "tnnI", o->gpu, o->all_checks);
    while (rc == 0 && (step = store_step(st)) == STORE_ROW) {
        const char *g = store_col_text(st, 0);
        if (!cur || strcmp(cur->gpu, g) != 0) {
            if (cur)
                acc_finish(cur, &a);
            cur = summary_of(out, n, &cap, g);
        }
        acc_add(cur, &a, st);
    }
    if (cur)
        acc_finish(cur, &a);
    free(a.ratios);
    store_finalize(st);
    return rc < 0 ? rc : step < 0 ? step : 0;
}

static void pct(struct buf *b, double share, int width)
{
    if (share < 0)
        buf_addf(b, " %*s", width, "-");
    else
        buf_addf(b, " %*.1f%%", width - 1, share * 100);
}

#define TABLE_FMT "%-28s %7s %7s %9s %9s %7s %9s %7s %8s %7s %9s %9s\n"

static void format_table(struct buf *b, const struct report_summary *r, int n, int all_checks)
{
    int shown = 0;
    buf_addf(b, TABLE_FMT, "GPU model", "kernels", "cases", "best<max", "maxperf", "<85%",
             "gain1024", "median", "geomean", ">20%", "vs1024", "occ=best");
    for (int i = 0; i < n; i++) {
        if (!r[i].cases)
            continue;
        shown++;
        buf_addf(b, "%-28.28s %7lld %7lld", r[i].gpu, (long long)r[i].kernels,
                 (long long)r[i].cases);
        pct(b, r[i].best_not_largest, 9);
        pct(b, r[i].largest_rel_mean, 9);
        pct(b, r[i].largest_below_85, 7);
        pct(b, r[i].gain_1024_mean, 9);
        pct(b, r[i].gain_1024_median, 7);
        pct(b, r[i].gain_1024_geomean, 8);
        pct(b, r[i].gain_1024_over_20, 7);
        char vs[32];
        snprintf(vs, sizeof(vs), "%lld/%lld", (long long)r[i].gain_1024_cases,
                 (long long)r[i].cases);
        buf_addf(b, " %9s", vs);
        pct(b, r[i].occupancy_best, 9);
        buf_addch(b, '\n');
    }
    if (shown == 0)
        buf_adds(b, all_checks ? "(no current ok measurements with two or more block shapes "
                                 "per size)\n"
                               : "(no current ok measurements whose output check matched, with "
                                 "two or more block shapes per size)\n");
    buf_addf(b, TABLE_FMT, "LS-CAT paper, GTX 980 (mean)", "", "", "83.0%", "98.7%", "~1%",
             "6.0%", "-", "-", "10.0%", "-", "-");
    buf_addf(b, TABLE_FMT, "LS-CAT paper, T4", "", "", "-", "-", "12.0%", "-", "-", "-", "-",
             "-", "-");
    for (int i = 0; i < n; i++) {
        buf_addf(b, "%s: output check of the current ok rows: %lld match, %lld mismatch (%lld "
                    "kernels), %lld nondeterministic, %lld not_checked; %s", r[i].gpu,
                 (long long)r[i].rows_match, (long long)r[i].rows_mismatch,
                 (long long)r[i].kernels_mismatch, (long long)r[i].rows_nondeterministic,
                 (long long)r[i].rows_not_checked,
                 all_checks ? "ALL of them are counted above (--all-checks: rows that did not "
                              "do the kernel's work included, as before the check)"
                            : "only match rows are counted above");
        if (r[i].gain_1024_missing > 0)
            buf_addf(b, "; %lld case(s) without a 1024-thread comparison (a 1D kernel's "
                        "(1024,1,1) not measured or not a match)",
                     (long long)r[i].gain_1024_missing);
        buf_adds(b, "\n");
    }
}

/* "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": file names for plots. */
static void slug(char *out, size_t size, const char *name)
{
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < size; p++) {
        if (isalnum((unsigned char)*p))
            out[n++] = (char)tolower((unsigned char)*p);
        else if (n > 0 && out[n - 1] != '-')
            out[n++] = '-';
    }
    while (n > 0 && out[n - 1] == '-')
        n--;
    out[n] = '\0';
}

/* Runtime matrix: rows = block shapes (by threads), columns = matrix sizes. */
struct grid {
    int nshape, nsize;
    int shape[64][3];
    int size[64][3];
    double v[64][64];
};

static int find_or_add(int (*arr)[3], int *n, const int *key, int width)
{
    for (int i = 0; i < *n; i++)
        if (memcmp(arr[i], key, sizeof(int) * (size_t)width) == 0)
            return i;
    if (*n >= 64)
        return -1;
    memcpy(arr[*n], key, sizeof(int) * (size_t)width);
    return (*n)++;
}

/* Matrix sizes in increasing order (columns move with them). */
static void sort_sizes(struct grid *g)
{
    for (int i = 1; i < g->nsize; i++) {
        for (int j = i; j > 0; j--) {
            long a = (long)g->size[j - 1][0] * g->size[j - 1][1];
            long b = (long)g->size[j][0] * g->size[j][1];
            if (a <= b)
                break;
            int t[3];
            memcpy(t, g->size[j], sizeof(t));
            memcpy(g->size[j], g->size[j - 1], sizeof(t));
            memcpy(g->size[j - 1], t, sizeof(t));
            for (int r = 0; r < g->nshape; r++) {
                double v = g->v[r][j];
                g->v[r][j] = g->v[r][j - 1];
                g->v[r][j - 1] = v;
            }
        }
    }
}

static int load_grid(struct grid *g, struct store *s, const char *gpu, const char *kernel,
                     int all_checks)
{
    static const char sql[] = TIMES_CTE
        " SELECT w, h, bx, byy, bz, avg(ns) FROM t WHERE gpu = ?2 AND (?3 IS NULL OR k = ?3)"
        " GROUP BY w, h, bx, byy, bz ORDER BY bx * byy * bz, bx, w, h";
    struct store_stmt *st = NULL;
    memset(g, 0, sizeof(*g));
    int rc = store_prepare(&st, s, sql), step;
    if (rc == 0)
        rc = store_bind(st, "tttI", NULL, gpu, kernel, all_checks);
    while (rc == 0 && (step = store_step(st)) == STORE_ROW) {
        int size[3] = { (int)store_col_int(st, 0), (int)store_col_int(st, 1), 0 };
        int shape[3] = { (int)store_col_int(st, 2), (int)store_col_int(st, 3),
                         (int)store_col_int(st, 4) };
        int si = find_or_add(g->shape, &g->nshape, shape, 3);
        int zi = find_or_add(g->size, &g->nsize, size, 2);
        if (si < 0 || zi < 0)
            continue; /* more than 64 shapes or sizes: the plot shows the first 64 */
        g->v[si][zi] = store_col_double(st, 5);
    }
    if (rc == 0 && step < 0)
        rc = step;
    store_finalize(st);
    sort_sizes(g);
    return rc;
}

static int write_grid_dat(const char *path, const struct grid *g)
{
    struct buf b = BUF_INIT;
    buf_adds(&b, "shape");
    for (int z = 0; z < g->nsize; z++)
        buf_addf(&b, " %dx%d", g->size[z][0], g->size[z][1]);
    buf_addch(&b, '\n');
    for (int r = 0; r < g->nshape; r++) {
        buf_addf(&b, "(%d,%d,%d)", g->shape[r][0], g->shape[r][1], g->shape[r][2]);
        for (int z = 0; z < g->nsize; z++) {
            if (g->v[r][z] > 0)
                buf_addf(&b, " %.6g", g->v[r][z] / 1000.0); /* microseconds */
            else
                buf_adds(&b, " ?");
        }
        buf_addch(&b, '\n');
    }
    int rc = fs_write_atomic(path, b.data, b.len);
    buf_release(&b);
    return rc;
}

static void gp_plot(struct buf *gp, const char *png, const char *dat, const char *title, int nsize)
{
    buf_addf(gp, "set output '%s'\nset title \"%s\" noenhanced\n", png, title);
    buf_addf(gp, "plot for [i=2:%d] '%s' using i:xtic(1) with linespoints title columnheader(i)\n",
             nsize + 1, dat);
}

/* The kernel with the most ok timings on this model: the one whose curves are shown. */
static char *pick_kernel(struct store *s, const char *gpu, int all_checks)
{
    char *k = NULL;
    store_query_text(&k, s, TIMES_CTE " SELECT k FROM t WHERE gpu = ?2 GROUP BY k"
                     " ORDER BY count(*) DESC, k LIMIT 1", "ttnI", NULL, gpu, all_checks);
    return k;
}

/* Data files, a gnuplot script and the two PNGs for one GPU model. Sets *plotted. */
static int plot_model(struct store *s, const struct report_options *o,
                      const struct report_summary *r, struct buf *html)
{
    char sl[128], dat1[200], dat2[200], png1[200], png2[200], title[400];
    struct grid *g = xmalloc(sizeof(*g));
    struct buf gp = BUF_INIT;
    char *kernel = pick_kernel(s, r->gpu, o->all_checks);
    int rc;
    slug(sl, sizeof(sl), r->gpu);
    snprintf(dat1, sizeof(dat1), "%s-avg.dat", sl);
    snprintf(png1, sizeof(png1), "%s-avg.png", sl);
    snprintf(dat2, sizeof(dat2), "%s-kernel.dat", sl);
    snprintf(png2, sizeof(png2), "%s-kernel.png", sl);
    buf_adds(&gp, "set terminal pngcairo size 1100,600\nset datafile missing '?'\n"
                  "set logscale y\nset ylabel 'runtime (us)'\nset xlabel 'block shape (x,y,z)'\n"
                  "set xtics rotate by -45\nset key outside right title 'matrix size'\n"
                  "set grid ytics\n");
    char *p = fs_join(o->out_dir, dat1);
    rc = load_grid(g, s, r->gpu, NULL, o->all_checks);
    if (rc == 0)
        rc = write_grid_dat(p, g);
    free(p);
    snprintf(title, sizeof(title), "%s: average runtime over kernels per block shape", r->gpu);
    gp_plot(&gp, png1, dat1, title, g->nsize);
    if (rc == 0 && kernel) {
        p = fs_join(o->out_dir, dat2);
        rc = load_grid(g, s, r->gpu, kernel, o->all_checks);
        if (rc == 0)
            rc = write_grid_dat(p, g);
        free(p);
        snprintf(title, sizeof(title), "%s: kernel %.16s... per block shape", r->gpu, kernel);
        gp_plot(&gp, png2, dat2, title, g->nsize);
    }
    if (rc == 0) {
        snprintf(title, sizeof(title), "%s.gp", sl);
        p = fs_join(o->out_dir, title);
        rc = fs_write_atomic(p, gp.data, gp.len);
        free(p);
    }
    if (rc == 0 && o->plots) {
        const char *argv[] = { "gnuplot", title, NULL };
        struct proc_options po = PROC_OPTIONS_INIT;
        struct proc_result pr;
        po.argv = argv;
        po.cwd = o->out_dir;
        po.timeout_s = 120;
        if (proc_run(&pr, &po) < 0 || pr.exit_code || pr.signal || pr.timed_out) {
            log_warn("gnuplot failed for %s (exit %d): %.300s (plots skipped; install "
                     "gnuplot-nox)", r->gpu, pr.exit_code, pr.err.data);
            buf_addf(html, "<p>Plots unavailable: gnuplot failed (see the log).</p>\n");
        } else {
            buf_addf(html, "<h3>Average runtime per block shape, each matrix size</h3>\n"
                           "<img src=\"%s\" alt=\"average runtime per block shape\">\n", png1);
            if (kernel)
                buf_addf(html, "<h3>Kernel <code>%s</code>: runtime per block shape, each "
                               "matrix size</h3>\n<img src=\"%s\" alt=\"one kernel\">\n",
                         kernel, png2);
        }
        proc_result_release(&pr);
    }
    free(kernel);
    free(g);
    buf_release(&gp);
    return rc;
}

static void html_escape(struct buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': buf_adds(b, "&lt;"); break;
        case '>': buf_adds(b, "&gt;"); break;
        case '&': buf_adds(b, "&amp;"); break;
        case '"': buf_adds(b, "&quot;"); break;
        default: buf_addch(b, *s);
        }
    }
}

static const char definitions[] =
    "<h2>Definitions</h2>\n<ul>\n"
    "<li>Only rows whose <em>output check</em> is <code>match</code> count: the configuration "
    "computed what the kernel's reference block computed on the same inputs (docs/isolate.md, "
    "Output check). A <code>mismatch</code> row timed other work (a 1D block shape that leaves "
    "a 2D kernel's rows undone, a 2D shape that repeats a 1D kernel's work): "
    "<code>output_check.txt</code> lists, per kernel, the rows each check value took.</li>\n"
    "<li>A <em>case</em> is one kernel at one matrix size on one GPU model with at least two "
    "block shapes measured <code>ok</code> and <code>match</code> (current rows; several GPUs "
    "of a model: the fastest).</li>\n"
    "<li><em>best&lt;max</em>: share of cases whose fastest block has fewer threads than "
    "the largest block measured.</li>\n"
    "<li><em>maxperf</em>: the largest block's performance relative to the best, i.e. mean of "
    "best time / time of the largest block (100% = the largest is the best); <em>&lt;85%</em>: "
    "share of cases below 85%.</li>\n"
    "<li><em>gain1024</em>: time(1024-thread block) / best time &minus; 1, as mean, median and "
    "geometric mean (the geometric mean of the ratios, &minus; 1) over the cases with a "
    "1024-thread comparison: for a 1D kernel its (1024,1,1) block only (a 2D shape repeats a "
    "1D kernel's work), for a 2D kernel its fastest 1024-thread shape; <em>vs1024</em> says "
    "how many cases had one (a missing comparison is left out, never replaced); "
    "<em>&gt;20%</em>: share of those with a gain over 20%. LS-CAT's 6% was a mean.</li>\n"
    "<li><em>occ=best</em>: share of cases (of kernels with a "
    "<code>cudaOccupancyMaxPotentialBlockSize</code> suggestion, measured at that thread "
    "count) where a block of the suggested size is the fastest.</li>\n</ul>\n";

/* output_check.txt: per model and kernel, the current ok rows by output check (kernels with
 * anything but match first), and how many of its match rows are 2D shapes on a 1D kernel. */
static int write_checks_file(struct store *s, const struct report_options *o)
{
    static const char sql[] =
        "SELECT g.name, m.kernel_id, k.name, " INDEXING_OF("k") ","
        " sum(m.output_check = 'match'), sum(m.output_check = 'mismatch'),"
        " sum(m.output_check = 'nondeterministic'), sum(m.output_check = 'not_checked'),"
        " sum(m.output_check = 'match' AND m.block_y * m.block_z > 1 AND " INDEXING_OF("k")
        " IN ('1d', 'grid_stride', 'none'))"
        " FROM measurements m JOIN gpus g ON g.id = m.gpu_id JOIN kernels k ON k.id ="
        " m.kernel_id WHERE m.superseded = 0 AND m.status = 'ok' AND"
        " (?1 IS NULL OR instr(lower(g.name), lower(?1)) > 0)"
        " GROUP BY g.name, m.kernel_id ORDER BY g.name, 6 DESC, 7 DESC, 8 DESC, m.kernel_id";
    struct store_stmt *st = NULL;
    struct buf b = BUF_INIT;
    int rc = store_prepare(&st, s, sql), step = 0;
    buf_adds(&b, "# current ok rows per GPU model and kernel, by output check; 2d_on_1d: match "
                 "rows of 2D block shapes on a 1D kernel\n"
                 "gpu\tkernel\tname\tindexing\tmatch\tmismatch\tnondeterministic\tnot_checked\t"
                 "2d_on_1d\n");
    if (rc == 0)
        rc = store_bind(st, "t", o->gpu);
    while (rc == 0 && (step = store_step(st)) == STORE_ROW)
        buf_addf(&b, "%s\t%s\t%s\t%s\t%lld\t%lld\t%lld\t%lld\t%lld\n", store_col_text(st, 0),
                 store_col_text(st, 1), store_col_text(st, 2), store_col_text(st, 3),
                 (long long)store_col_int(st, 4), (long long)store_col_int(st, 5),
                 (long long)store_col_int(st, 6), (long long)store_col_int(st, 7),
                 (long long)store_col_int(st, 8));
    store_finalize(st);
    if (rc == 0 && step < 0)
        rc = step;
    if (rc == 0) {
        char *p = fs_join(o->out_dir, "output_check.txt");
        rc = fs_write_atomic(p, b.data, b.len);
        free(p);
    }
    buf_release(&b);
    return rc;
}

int report_run(struct buf *table, struct report_summary **summaries_out, int *n_out,
               struct store *s, const struct report_options *o)
{
    struct report_summary *r = NULL;
    struct buf html = BUF_INIT;
    int n = 0, rc;
    char now[32];
    fs_utc_now(now);
    if ((rc = fs_mkdirs(o->out_dir, 0755)) < 0 || (rc = load_summaries(&r, &n, s, o)) < 0)
        goto done;
    size_t table_start = table->len;
    format_table(table, r, n, o->all_checks);
    buf_addf(&html, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>lscat report"
                    "</title></head><body>\n<h1>lscat: LS-CAT's questions, per GPU model</h1>\n"
                    "<p>Generated %s from %s.</p>\n<pre>", now, store_path(s));
    html_escape(&html, table->data + table_start);
    buf_adds(&html, "</pre>\n");
    buf_adds(&html, definitions);
    rc = write_checks_file(s, o);
    for (int i = 0; i < n && rc == 0; i++) {
        if (!r[i].cases)
            continue;
        buf_adds(&html, "<h2>");
        html_escape(&html, r[i].gpu);
        buf_adds(&html, "</h2>\n");
        rc = plot_model(s, o, &r[i], &html);
    }
    buf_adds(&html, "</body></html>\n");
    if (rc == 0) {
        char *p = fs_join(o->out_dir, "report.txt");
        rc = fs_write_atomic(p, table->data + table_start, table->len - table_start);
        free(p);
    }
    if (rc == 0) {
        char *p = fs_join(o->out_dir, "index.html");
        rc = fs_write_atomic(p, html.data, html.len);
        free(p);
    }
done:
    buf_release(&html);
    if (rc == 0 && summaries_out) {
        *summaries_out = r;
        *n_out = n;
    } else {
        free(r);
    }
    return rc;
}
