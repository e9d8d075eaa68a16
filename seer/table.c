/* Seer's bench table read back: from a CSV into the store (lscat seer import: a table measured
 * on another machine), and from the store into memory, one GPU model x precision, for train
 * and eval. */
#include "seer/db.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Split one CSV line into at most ncols fields (in place); the count, or -1. */
static int csv_split(char **f, char *line, int ncols)
{
    int n = 0;
    char *w = line, *p = line;
    while (n < ncols) {
        f[n++] = w;
        if (*p == '"') {
            for (p++;; p++) {
                if (!*p)
                    return -1;
                if (*p == '"' && p[1] == '"')
                    *w++ = '"', p++;
                else if (*p == '"')
                    break;
                else
                    *w++ = *p;
            }
            p++;
        } else {
            while (*p && *p != ',')
                *w++ = *p++;
        }
        if (!*p) {
            *w = '\0';
            return n;
        }
        if (*p != ',')
            return -1;
        *w++ = '\0';
        p++;
    }
    return -1;
}

static int num(double *out, const char *s, int allow_empty)
{
    char *end;
    if (!*s) {
        *out = NAN;
        return allow_empty ? 0 : -1;
    }
    errno = 0;
    *out = strtod(s, &end);
    return *end || errno ? -1 : 0;
}

/* Fields 3..9 and 12, 16..18 and 20.. (when ncols has them) as numbers (features required,
 * times may be empty; v[20].. are NAN in the 20-column form). */
static int parse_numbers(double *v, char **f, int ncols)
{
    for (int c = 3; c <= 9; c++)
        if (num(&v[c], f[c], 0) < 0)
            return c;
    for (int c = 12; c <= 18; c++)
        if (c != 13 && c != 14 && c != 15 && num(&v[c], f[c], 1) < 0)
            return c;
    for (int c = 20; c < SEER_CSV_COLS; c++) {
        v[c] = NAN;
        if (c < ncols && num(&v[c], f[c], 1) < 0)
            return c;
    }
    return -1;
}

static int check_words(char **f)
{
    const char *src = f[1], *prec = f[14], *st = f[15];
    if (strcmp(src, "file") && strcmp(src, "generated") && strcmp(src, "imported"))
        return 1;
    if (seer_kernel_by_name(f[13]) < 0)
        return 13;
    if (strcmp(prec, "float") && strcmp(prec, "double"))
        return 14;
    if (strcmp(st, "ok") && strcmp(st, "fault") && strcmp(st, "wrong") && strcmp(st, "unsupported"))
        return 15;
    return -1;
}

static int import_line(struct store *s, char **f, int ncols)
{
    double v[SEER_CSV_COLS];
    int64_t gid = 0, mid = 0;
    parse_numbers(v, f, ncols);
    int dbl = !strcmp(f[14], "double");
    struct seer_async_costs a = SEER_ASYNC_COSTS_NONE;
    a.upload[dbl] = v[20];
    a.resident[dbl] = v[21];
    a.sync_upload[dbl] = v[22];
    struct seer_db_gpu g = { f[11], f[10], NULL, NULL, 0, 0, 0 };
    struct seer_db_matrix m = { f[0], f[1], NULL, *f[2] ? f[2] : NULL,
                                { v[3], v[4], v[5], v[6], v[7], v[8], v[9] } };
    struct seer_db_result r = { f[13], f[14], f[15], *f[19] ? f[19] : NULL, v[16], v[17], v[17],
                                NAN, v[18], 0, 0 };
    if (seer_db_put_gpu(&gid, s, &g) < 0 || seer_db_put_matrix(&mid, s, &m) < 0 ||
        (!isnan(v[12]) && seer_db_put_feature_cost(s, mid, gid, v[12], &a, 1) < 0))
        return LSCAT_ERR;
    return seer_db_put_result(s, mid, gid, &r, 0);
}

static int import_stream(struct store *s, FILE *in, const char *path, int64_t *rows)
{
    char *line = NULL, *f[SEER_CSV_COLS];
    size_t cap = 0;
    long no = 0;
    ssize_t len;
    int rc = 0, ncols = SEER_CSV_COLS;
    while (rc == 0 && (len = getline(&line, &cap, in)) >= 0) {
        no++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (no == 1) {
            ncols = !strcmp(line, SEER_CSV_HEADER_V7) ? SEER_CSV_COLS_V7 : SEER_CSV_COLS;
            if (ncols == SEER_CSV_COLS && strcmp(line, SEER_CSV_HEADER))
                rc = lscat_error_setc(LSCAT_EINVALID, "%s:1: not a seer bench table: the header "
                                      "must read '%s'", path, SEER_CSV_HEADER);
            continue;
        }
        double v[SEER_CSV_COLS];
        int bad;
        if (csv_split(f, line, ncols) != ncols)
            rc = lscat_error_setc(LSCAT_EINVALID, "%s:%ld: expected %d comma-separated fields",
                                  path, no, ncols);
        else if ((bad = parse_numbers(v, f, ncols)) >= 0 || (bad = check_words(f)) >= 0)
            rc = lscat_error_setc(LSCAT_EINVALID, "%s:%ld: field %d ('%s') is not valid there",
                                  path, no, bad + 1, f[bad]);
        else if ((rc = import_line(s, f, ncols)) == 0)
            (*rows)++;
    }
    if (rc == 0 && no == 0)
        rc = lscat_error_setc(LSCAT_EINVALID, "%s: empty file: not a seer bench table", path);
    free(line);
    return rc;
}

int seer_db_import_csv(struct store *s, const char *path, int64_t *rows)
{
    *rows = 0;
    FILE *in = fopen(path, "r");
    if (!in)
        return lscat_error_setc(LSCAT_ENOTFOUND, "cannot open '%s': %s", path, strerror(errno));
    int rc = store_begin(s);
    if (rc == 0 && (rc = import_stream(s, in, path, rows)) == 0)
        rc = store_commit(s);
    if (rc < 0)
        store_rollback(s);
    fclose(in);
    return rc;
}

/* ---- the table in memory */

static int pick_gpu(int64_t *gpu_id, char **name, struct store *s, const char *filter)
{
    int rc = store_query_int(gpu_id, s, "SELECT r.gpu_id FROM seer_results r JOIN gpus g ON "
                             "g.id = r.gpu_id WHERE ? IS NULL OR instr(lower(g.name), lower(?)) > 0 "
                             "GROUP BY r.gpu_id ORDER BY count(*) DESC, r.gpu_id LIMIT 1", "tt",
                             filter, filter);
    if (rc < 0)
        return rc;
    if (!*gpu_id)
        return lscat_error_setc(LSCAT_ENOTFOUND, "no seer bench results%s%s in the store (run "
                                "lscat seer bench on a GPU, or lscat seer import a bench CSV)",
                                filter ? " for a GPU matching " : "", filter ? filter : "");
    return store_query_text(name, s, "SELECT name FROM gpus WHERE id = ?", "i", *gpu_id);
}

static struct seer_row *row_for(struct seer_table *t, int *cap, const char *name)
{
    if (t->n && !strcmp(t->rows[t->n - 1].name, name))
        return &t->rows[t->n - 1];
    if (t->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        t->rows = xrealloc(t->rows, (size_t)*cap * sizeof(*t->rows));
    }
    struct seer_row *r = &t->rows[t->n++];
    memset(r, 0, sizeof(*r));
    r->name = xstrdup(name);
    return r;
}

const char *seer_cost_name(int cost)
{
    static const char *const names[SEER_COST_KINDS] = { "sync", "async", "async-resident",
                                                        "sync-upload" };
    return cost > 0 && cost < SEER_COST_KINDS ? names[cost] : names[0];
}

int seer_cost_by_name(const char *name)
{
    for (int c = SEER_COST_SYNC; c < SEER_COST_KINDS; c++)
        if (!strcmp(name, seer_cost_name(c)))
            return c;
    return -1;
}

/* Column 8 is the cost asked for (NULL: an asynchronous cost not measured -> NAN). */
static void fill_row(struct seer_row *r, struct store_stmt *st)
{
    r->f = (struct seer_features){ store_col_double(st, 1), store_col_double(st, 2),
                                   store_col_double(st, 3), store_col_double(st, 4),
                                   store_col_double(st, 5), store_col_double(st, 6),
                                   store_col_double(st, 7) };
    r->feature_ns = store_col_is_null(st, 8) ? NAN : fmax(0, store_col_double(st, 8));
    int k = seer_kernel_by_name(store_col_text(st, 9));
    if (k < 0 || strcmp(store_col_text(st, 10), "ok") || store_col_is_null(st, 12))
        return;
    r->ok[k] = 1;
    r->pre_ns[k] = store_col_is_null(st, 11) ? 0 : store_col_double(st, 11);
    r->iter_ns[k] = store_col_double(st, 12);
}

/* Matrices of t without a feature cost (an asynchronous one not measured). */
static int count_missing_cost(const struct seer_table *t, const char **first)
{
    int n = 0;
    for (int i = 0; i < t->n; i++)
        if (isnan(t->rows[i].feature_ns) && n++ == 0)
            *first = t->rows[i].name;
    return n;
}

/* Drop matrices without any ok kernel (nothing to learn from them). */
static void drop_empty(struct seer_table *t)
{
    int w = 0;
    for (int i = 0; i < t->n; i++) {
        int any = 0;
        for (int k = 0; k < SEER_K_COUNT; k++)
            any |= t->rows[i].ok[k];
        if (any)
            t->rows[w++] = t->rows[i];
        else
            free(t->rows[i].name);
    }
    t->n = w;
}

int seer_table_load(struct seer_table *out, struct store *s, const char *gpu_filter,
                    const char *precision, int cost)
{
    const char *first = NULL;
    struct store_stmt *st = NULL;
    int64_t gpu = 0;
    int cap = 0, rc;
    memset(out, 0, sizeof(*out));
    if ((rc = pick_gpu(&gpu, &out->gpu, s, gpu_filter)) < 0)
        return rc;
    out->precision = xstrdup(precision);
    out->feature_cost = cost;
    rc = store_prepare(&st, s, "SELECT m.name, m.rows, m.cols, m.nnz, m.row_max, m.row_min, "
                       "m.row_mean, m.row_var, CASE ?3 WHEN 0 THEN f.feature_ns WHEN 1 THEN "
                       "(CASE ?2 WHEN 'float' THEN f.async_float_ns ELSE f.async_double_ns END) "
                       "WHEN 2 THEN (CASE ?2 WHEN 'float' THEN f.resident_float_ns ELSE "
                       "f.resident_double_ns END) ELSE (CASE ?2 WHEN 'float' THEN "
                       "f.sync_upload_float_ns ELSE f.sync_upload_double_ns END) END, r.kernel, "
                       "r.status, r.preprocess_ns, "
                       "r.iter_ns FROM seer_results r JOIN seer_matrices m ON m.id = r.matrix_id "
                       "JOIN seer_feature_costs f ON f.matrix_id = r.matrix_id AND f.gpu_id = "
                       "r.gpu_id WHERE r.gpu_id = ?1 AND r.precision = ?2 ORDER BY m.name");
    if (rc == 0 && (rc = store_bind(st, "itI", gpu, precision, cost)) == 0)
        while ((rc = store_step(st)) == STORE_ROW)
            fill_row(row_for(out, &cap, store_col_text(st, 0)), st);
    store_finalize(st);
    if (rc < 0) {
        seer_table_release(out);
        return rc;
    }
    drop_empty(out);
    int missing = count_missing_cost(out, &first);
    if (missing > 0) {
        rc = lscat_error_setc(LSCAT_ENOTFOUND, "%d of %d matrices (first: %s) have no "
                              "'%s' feature cost on %s in %s precision: measure it on the GPU "
                              "with lscat seer bench --features-only --force, or train with "
                              "--feature-cost sync", missing, out->n, first, seer_cost_name(cost),
                              out->gpu, precision);
        seer_table_release(out);
        return rc;
    }
    if (out->n == 0) {
        seer_table_release(out);
        return lscat_error_setc(LSCAT_ENOTFOUND, "no %s-precision seer results with feature "
                                "costs in the store", precision);
    }
    return 0;
}

void seer_table_release(struct seer_table *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        free(t->rows[i].name);
    free(t->rows);
    free(t->gpu);
    free(t->precision);
    memset(t, 0, sizeof(*t));
}
