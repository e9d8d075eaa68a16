/* Matrix Market reader: banner, comments, size line, then one entry per line, checked as it is
 * read so that an error can name the line. Entries are collected as triplets (mirrored for the
 * symmetric kinds) and turned into CSR by seer_csr_from_triplets. */
#include "seer/mtx.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN };
enum { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW };

struct reader {
    FILE *f;
    const char *name;
    long line_no;
    char *line;
    size_t cap;
    int field, sym;
};

struct triplets {
    int *i, *j;
    double *v;
    int64_t n, cap;
};

static int fail(const struct reader *r, const char *fmt, const char *what)
{
    char msg[300];
    snprintf(msg, sizeof(msg), fmt, what);
    return lscat_error_setc(LSCAT_EINVALID, "%s:%ld: %s", r->name, r->line_no, msg);
}

/* The next line; 0 at the end of the file, 1 otherwise. */
static int next_line(struct reader *r)
{
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0)
        return 0;
    r->line_no++;
    while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
        r->line[--n] = '\0';
    return 1;
}

/* The next line that is neither a comment nor blank; 0 at the end of the file. */
static int next_data_line(struct reader *r)
{
    while (next_line(r)) {
        const char *p = r->line + strspn(r->line, " \t");
        if (*p && *p != '%')
            return 1;
    }
    return 0;
}

static int word_is(const char *w, const char *s)
{
    return !strcasecmp(w, s);
}

static int parse_banner(struct reader *r, struct seer_mtx_info *info)
{
    char w[5][64];
    if (!next_line(r))
        return fail(r, "%s", "empty file: expected a '%%MatrixMarket matrix coordinate ...' banner");
    if (strncmp(r->line, "%%MatrixMarket", 14) != 0 ||
        sscanf(r->line, "%63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4]) != 5)
        return fail(r, "%s", "missing banner: the first line must read '%%MatrixMarket matrix "
                    "coordinate real|integer|pattern general|symmetric|skew-symmetric'");
    if (!word_is(w[1], "matrix"))
        return fail(r, "object '%s' is not supported (only 'matrix')", w[1]);
    if (word_is(w[2], "array"))
        return fail(r, "%s", "array (dense) format is not supported: store the matrix in "
                    "coordinate format");
    if (!word_is(w[2], "coordinate"))
        return fail(r, "format '%s' is unknown (expected 'coordinate')", w[2]);
    r->field = word_is(w[3], "real") ? FIELD_REAL : word_is(w[3], "integer") ? FIELD_INTEGER
             : word_is(w[3], "pattern") ? FIELD_PATTERN : -1;
    if (r->field < 0)
        return fail(r, "field '%s' is not supported (real, integer or pattern)", w[3]);
    r->sym = word_is(w[4], "general") ? SYM_GENERAL : word_is(w[4], "symmetric") ? SYM_SYMMETRIC
           : word_is(w[4], "skew-symmetric") ? SYM_SKEW : -1;
    if (r->sym < 0)
        return fail(r, "symmetry '%s' is not supported (general, symmetric or skew-symmetric)",
                    w[4]);
    if (info) {
        snprintf(info->field, sizeof(info->field), "%s",
                 r->field == FIELD_REAL ? "real" : r->field == FIELD_INTEGER ? "integer" : "pattern");
        snprintf(info->symmetry, sizeof(info->symmetry), "%s",
                 r->sym == SYM_GENERAL ? "general" : r->sym == SYM_SYMMETRIC ? "symmetric"
                                                                              : "skew-symmetric");
    }
    return 0;
}

/* One whitespace-separated token from *p, NUL-terminated into tok; 0 when none is left. */
static int token(char *tok, size_t size, const char **p)
{
    const char *s = *p + strspn(*p, " \t");
    size_t n = strcspn(s, " \t");
    if (!n)
        return 0;
    if (n >= size)
        n = size - 1;
    memcpy(tok, s, n);
    tok[n] = '\0';
    *p = s + strcspn(s, " \t");
    return 1;
}

static int parse_long(long long *out, struct reader *r, const char **p, const char *what)
{
    char tok[64], msg[160];
    if (!token(tok, sizeof(tok), p)) {
        snprintf(msg, sizeof(msg), "missing %s", what);
        return fail(r, "%s", msg);
    }
    char *end;
    errno = 0;
    *out = strtoll(tok, &end, 10);
    if (*end || errno) {
        snprintf(msg, sizeof(msg), "%s '%s' is not an integer", what, tok);
        return fail(r, "%s", msg);
    }
    return 0;
}

static int parse_value(double *out, struct reader *r, const char **p)
{
    char tok[128];
    if (!token(tok, sizeof(tok), p))
        return fail(r, "%s", "missing value (the banner says the entries carry values)");
    char *end;
    *out = strtod(tok, &end);
    if (*end || end == tok)
        return fail(r, "value '%s' is not a number", tok);
    if (!isfinite(*out))
        return fail(r, "value '%s' is not finite", tok);
    if (r->field == FIELD_INTEGER && *out != floor(*out))
        return fail(r, "value '%s' is not an integer (the banner says integer)", tok);
    return 0;
}

static int end_of_line(struct reader *r, const char *p)
{
    char tok[64];
    if (token(tok, sizeof(tok), &p))
        return fail(r, "unexpected extra text '%s' at the end of the line", tok);
    return 0;
}

static void push(struct triplets *t, int i, int j, double v)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 1024;
        t->i = xrealloc(t->i, (size_t)t->cap * sizeof(int));
        t->j = xrealloc(t->j, (size_t)t->cap * sizeof(int));
        t->v = xrealloc(t->v, (size_t)t->cap * sizeof(double));
    }
    t->i[t->n] = i;
    t->j[t->n] = j;
    t->v[t->n++] = v;
}

static int parse_size(struct reader *r, long long *rows, long long *cols, long long *entries)
{
    if (!next_data_line(r))
        return fail(r, "%s", "truncated file: no size line ('rows cols entries') after the banner");
    const char *p = r->line;
    if (parse_long(rows, r, &p, "row count") < 0 || parse_long(cols, r, &p, "column count") < 0 ||
        parse_long(entries, r, &p, "entry count") < 0 || end_of_line(r, p) < 0)
        return LSCAT_EINVALID;
    if (*rows < 1 || *cols < 1 || *rows > INT_MAX || *cols > INT_MAX)
        return fail(r, "%s", "row and column counts must be between 1 and 2147483647");
    if (*entries < 0 || *entries > INT_MAX || (double)*entries > (double)*rows * (double)*cols)
        return fail(r, "%s", "entry count must be between 0 and rows x cols (and fit 32 bits)");
    if (r->sym != SYM_GENERAL && *rows != *cols)
        return fail(r, "%s", "a symmetric or skew-symmetric matrix must be square");
    return 0;
}

static int check_index(struct reader *r, long long v, long long n, const char *what)
{
    char msg[200];
    if (v >= 1 && v <= n)
        return 0;
    snprintf(msg, sizeof(msg), "%s index %lld is %s (indices run from 1 to %lld)", what, v,
             v == 0 ? "0-based" : "out of range", n);
    return fail(r, "%s", msg);
}

static int parse_entry(struct reader *r, struct triplets *t, long long rows, long long cols)
{
    const char *p = r->line;
    long long i, j;
    double v = 1.0;
    if (parse_long(&i, r, &p, "row index") < 0 || parse_long(&j, r, &p, "column index") < 0 ||
        check_index(r, i, rows, "row") < 0 || check_index(r, j, cols, "column") < 0)
        return LSCAT_EINVALID;
    if (r->field != FIELD_PATTERN && parse_value(&v, r, &p) < 0)
        return LSCAT_EINVALID;
    if (end_of_line(r, p) < 0)
        return LSCAT_EINVALID;
    if (r->sym == SYM_SKEW && i == j)
        return fail(r, "%s", "a skew-symmetric matrix has no diagonal entries");
    push(t, (int)i - 1, (int)j - 1, v);
    if (r->sym != SYM_GENERAL && i != j)
        push(t, (int)j - 1, (int)i - 1, r->sym == SYM_SKEW ? -v : v);
    return 0;
}

static int read_entries(struct reader *r, struct triplets *t, long long rows, long long cols,
                        long long entries)
{
    long long seen = 0;
    while (next_data_line(r)) {
        if (seen == entries) {
            char msg[120];
            snprintf(msg, sizeof(msg), "more entries than the %lld the size line declares",
                     entries);
            return fail(r, "%s", msg);
        }
        if (parse_entry(r, t, rows, cols) < 0)
            return LSCAT_EINVALID;
        seen++;
    }
    if (seen < entries) {
        char msg[160];
        snprintf(msg, sizeof(msg), "truncated file: the size line declares %lld entries, the "
                 "file ends after %lld", entries, seen);
        return fail(r, "%s", msg);
    }
    return 0;
}

int seer_mtx_read_stream(struct seer_csr *out, struct seer_mtx_info *info, FILE *f,
                         const char *name)
{
    struct reader r = { f, name, 0, NULL, 0, 0, 0 };
    struct triplets t = { NULL, NULL, NULL, 0, 0 };
    long long rows = 0, cols = 0, entries = 0;
    int rc;
    memset(out, 0, sizeof(*out));
    if ((rc = parse_banner(&r, info)) < 0 || (rc = parse_size(&r, &rows, &cols, &entries)) < 0 ||
        (rc = read_entries(&r, &t, rows, cols, entries)) < 0)
        goto done;
    if (ferror(f)) {
        rc = lscat_error_setc(LSCAT_ERR, "%s:%ld: read error", name, r.line_no);
        goto done;
    }
    if (info)
        info->entries = entries;
    rc = seer_csr_from_triplets(out, (int)rows, (int)cols, t.i, t.j, t.v, t.n);
    if (rc < 0)
        lscat_error_wrap("%s", name);
done:
    free(r.line);
    free(t.i);
    free(t.j);
    free(t.v);
    return rc;
}

int seer_mtx_read(struct seer_csr *out, struct seer_mtx_info *info, const char *path)
{
    memset(out, 0, sizeof(*out));
    FILE *f = fopen(path, "r");
    if (!f)
        return lscat_error_setc(LSCAT_ENOTFOUND, "cannot open matrix '%s': %s", path,
                                strerror(errno));
    int rc = seer_mtx_read_stream(out, info, f, path);
    fclose(f);
    return rc;
}
