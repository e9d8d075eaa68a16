/* Seeded sparse-matrix generators (banded, uniform, power-law, block diagonal, a few long rows,
 * empty rows), written straight into CSR: each row's length is drawn first, then its distinct
 * columns (drawn and sorted, or by selection sampling when the row is dense). splitmix64 makes
 * the same spec give the same matrix everywhere. */
#include "seer/gen.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rng {
    unsigned long long s;
};

static unsigned long long next_u64(struct rng *r)
{
    unsigned long long z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double next_unit(struct rng *r)
{
    return (double)(next_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

static long long next_below(struct rng *r, long long n)
{
    return n > 0 ? (long long)(next_u64(r) % (unsigned long long)n) : 0;
}

static const char *const FAMILIES[] = { "banded", "uniform", "powerlaw", "blockdiag", "longrows",
                                        "emptyrows", NULL };

static int known_family(const char *f)
{
    for (int i = 0; FAMILIES[i]; i++)
        if (!strcmp(FAMILIES[i], f))
            return 1;
    return 0;
}

static int set_param(struct seer_gen_spec *s, const char *key, const char *val, const char *spec)
{
    char *end;
    double d = strtod(val, &end);
    if (!*val || *end || !isfinite(d) || d < 0)
        return lscat_error_setc(LSCAT_EINVALID, "generator spec '%s': %s=%s is not a "
                                "non-negative number", spec, key, val);
    long long *ip = !strcmp(key, "rows") ? &s->rows : !strcmp(key, "cols") ? &s->cols
                  : !strcmp(key, "bw") ? &s->bw : !strcmp(key, "block") ? &s->block
                  : !strcmp(key, "long") ? &s->long_len : !strcmp(key, "count") ? &s->count : NULL;
    if (ip) {
        if (d != floor(d) || d > INT_MAX)
            return lscat_error_setc(LSCAT_EINVALID, "generator spec '%s': %s=%s must be a whole "
                                    "number up to 2147483647", spec, key, val);
        *ip = (long long)d;
    } else if (!strcmp(key, "avg")) {
        s->avg = d;
    } else if (!strcmp(key, "alpha")) {
        s->alpha = d;
    } else if (!strcmp(key, "empty")) {
        s->empty = d;
    } else if (!strcmp(key, "seed")) {
        s->seed = (unsigned long long)d;
    } else {
        return lscat_error_setc(LSCAT_EINVALID, "generator spec '%s': unknown parameter '%s' "
                                "(see lscat seer --help)", spec, key);
    }
    return 0;
}

static int check_spec(struct seer_gen_spec *s, const char *spec)
{
    if (s->rows < 1)
        return lscat_error_setc(LSCAT_EINVALID, "generator spec '%s': rows=N (N >= 1) is "
                                "required", spec);
    if (s->cols < 1)
        s->cols = s->rows;
    if (s->long_len < 1)
        s->long_len = s->cols / 2 > 0 ? s->cols / 2 : 1;
    if (s->alpha <= 1.0 && !strcmp(s->family, "powerlaw"))
        return lscat_error_setc(LSCAT_EINVALID, "generator spec '%s': alpha must be above 1",
                                spec);
    if (s->empty > 1.0 || s->block < 1)
        return lscat_error_setc(LSCAT_EINVALID, "generator spec '%s': empty must lie in 0..1 "
                                "and block be at least 1", spec);
    return 0;
}

int seer_gen_parse(struct seer_gen_spec *out, const char *spec)
{
    struct seer_gen_spec s = { "", 0, 0, 8.0, 2.0, 0.5, 2, 16, 0, 4, 1 };
    const char *colon = strchr(spec, ':');
    size_t flen = colon ? (size_t)(colon - spec) : strlen(spec);
    if (flen >= sizeof(s.family))
        flen = sizeof(s.family) - 1;
    memcpy(s.family, spec, flen);
    s.family[flen] = '\0';
    if (!known_family(s.family))
        return lscat_error_setc(LSCAT_EINVALID, "generator spec '%s': unknown family '%s' "
                                "(banded, uniform, powerlaw, blockdiag, longrows, emptyrows)",
                                spec, s.family);
    char *rest = xstrdup(colon ? colon + 1 : ""), *save = NULL;
    int rc = 0;
    for (char *kv = strtok_r(rest, ",", &save); kv && rc == 0; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            rc = lscat_error_setc(LSCAT_EINVALID, "generator spec '%s': '%s' is not key=value",
                                  spec, kv);
            break;
        }
        *eq = '\0';
        rc = set_param(&s, kv, eq + 1, spec);
    }
    free(rest);
    if (rc == 0)
        rc = check_spec(&s, spec);
    if (rc == 0)
        *out = s;
    return rc;
}

void seer_gen_format(char *buf, size_t size, const struct seer_gen_spec *s)
{
    int n = snprintf(buf, size, "%s:rows=%lld,cols=%lld", s->family, s->rows, s->cols);
    const char *f = s->family;
    if (n < 0 || (size_t)n >= size)
        return;
    if (!strcmp(f, "banded"))
        n += snprintf(buf + n, size - (size_t)n, ",bw=%lld", s->bw);
    else if (!strcmp(f, "blockdiag"))
        n += snprintf(buf + n, size - (size_t)n, ",block=%lld", s->block);
    else
        n += snprintf(buf + n, size - (size_t)n, ",avg=%g", s->avg);
    if (n > 0 && (size_t)n < size && !strcmp(f, "powerlaw"))
        n += snprintf(buf + n, size - (size_t)n, ",alpha=%g", s->alpha);
    if (n > 0 && (size_t)n < size && !strcmp(f, "longrows"))
        n += snprintf(buf + n, size - (size_t)n, ",long=%lld,count=%lld", s->long_len, s->count);
    if (n > 0 && (size_t)n < size && !strcmp(f, "emptyrows"))
        n += snprintf(buf + n, size - (size_t)n, ",empty=%g", s->empty);
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ",seed=%llu", s->seed);
}

static long long uniform_len(struct rng *r, double avg)
{
    long long lo = (long long)floor(avg / 2), hi = (long long)ceil(avg * 1.5);
    return lo + next_below(r, hi - lo + 1);
}

/* The length of row i before capping at cols. */
static long long row_length(const struct seer_gen_spec *s, struct rng *r, long long i,
                            const char *long_row)
{
    const char *f = s->family;
    if (!strcmp(f, "banded")) {
        long long lo = i - s->bw < 0 ? 0 : i - s->bw, hi = i + s->bw;
        hi = hi >= s->cols ? s->cols - 1 : hi;
        return hi >= lo ? hi - lo + 1 : 0;
    }
    if (!strcmp(f, "blockdiag")) {
        long long b0 = i / s->block * s->block, b1 = b0 + s->block;
        b1 = b1 > s->cols ? s->cols : b1;
        return b1 > b0 ? b1 - b0 : 0;
    }
    if (!strcmp(f, "powerlaw")) {
        double xm = s->avg * (s->alpha - 1) / s->alpha;
        double u = 1.0 - next_unit(r); /* (0, 1] */
        double x = xm / pow(u, 1.0 / s->alpha);
        return x > 4e9 ? (long long)4e9 : (long long)(x + 0.5);
    }
    if (!strcmp(f, "longrows") && long_row[i])
        return s->long_len;
    if (!strcmp(f, "emptyrows") && next_unit(r) < s->empty)
        return 0;
    return uniform_len(r, s->avg);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* len distinct sorted columns of [0, cols) into c (banded/blockdiag are contiguous). */
static void row_columns(int *c, long long len, const struct seer_gen_spec *s, struct rng *r,
                        long long i)
{
    const char *f = s->family;
    long long first = !strcmp(f, "banded") ? (i - s->bw < 0 ? 0 : i - s->bw)
                    : !strcmp(f, "blockdiag") ? i / s->block * s->block : -1;
    if (first >= 0) {
        for (long long k = 0; k < len; k++)
            c[k] = (int)(first + k);
        return;
    }
    if (len * 4 > s->cols) { /* selection sampling: exactly len of cols, in order */
        long long need = len;
        for (long long j = 0; j < s->cols && need > 0; j++)
            if ((double)next_below(r, s->cols - j) < (double)need)
                c[len - need--] = (int)j;
        return;
    }
    long long have = 0;
    while (have < len) {
        for (long long k = have; k < len; k++)
            c[k] = (int)next_below(r, s->cols);
        qsort(c, (size_t)len, sizeof(int), cmp_int);
        have = 0;
        for (long long k = 0; k < len; k++)
            if (have == 0 || c[k] != c[have - 1])
                c[have++] = c[k];
    }
}

static char *pick_long_rows(const struct seer_gen_spec *s, struct rng *r)
{
    char *mark = xcalloc((size_t)s->rows, 1);
    if (!strcmp(s->family, "longrows"))
        for (long long k = 0; k < s->count && k < s->rows; k++)
            mark[next_below(r, s->rows)] = 1;
    return mark;
}

int seer_gen(struct seer_csr *out, const struct seer_gen_spec *s)
{
    struct rng r = { s->seed * 0x2545F4914F6CDD1DULL + 1 };
    struct seer_csr a = { (int)s->rows, (int)s->cols, 0, NULL, NULL, NULL };
    memset(out, 0, sizeof(*out));
    char *long_row = pick_long_rows(s, &r);
    a.row_ptr = xmalloc(((size_t)s->rows + 1) * sizeof(int));
    long long total = 0;
    a.row_ptr[0] = 0;
    for (long long i = 0; i < s->rows; i++) {
        long long len = row_length(s, &r, i, long_row);
        total += len > s->cols ? s->cols : len;
        if (total > INT_MAX) {
            free(long_row);
            seer_csr_release(&a);
            return lscat_error_setc(LSCAT_EINVALID, "generator spec %s: more than 2147483647 "
                                    "non-zeros (32-bit indices)", s->family);
        }
        a.row_ptr[i + 1] = (int)total;
    }
    free(long_row);
    a.nnz = (int)total;
    a.col = xmalloc((size_t)(total ? total : 1) * sizeof(int));
    a.val = xmalloc((size_t)(total ? total : 1) * sizeof(double));
    for (long long i = 0; i < s->rows; i++) {
        long long b = a.row_ptr[i], len = a.row_ptr[i + 1] - b;
        row_columns(a.col + b, len, s, &r, i);
        for (long long k = 0; k < len; k++)
            a.val[b + k] = 2.0 * next_unit(&r) - 1.0;
    }
    *out = a;
    return 0;
}

static const char *const DEFAULT_SPECS[] = {
    "banded:rows=1000,bw=1", "banded:rows=20000,bw=4", "banded:rows=200000,bw=2",
    "banded:rows=1000000,bw=8", "banded:rows=4000000,bw=1",
    "uniform:rows=2000,avg=32", "uniform:rows=30000,avg=4", "uniform:rows=100000,avg=16",
    "uniform:rows=500000,avg=6", "uniform:rows=2000000,avg=12", "uniform:rows=300000,avg=64",
    "powerlaw:rows=5000,avg=8,alpha=1.8", "powerlaw:rows=50000,avg=12,alpha=2.2",
    "powerlaw:rows=150000,avg=6,alpha=1.6", "powerlaw:rows=800000,avg=8,alpha=2.5",
    "powerlaw:rows=3000000,avg=5,alpha=2", "powerlaw:rows=400000,avg=20,alpha=1.4",
    "blockdiag:rows=4096,block=64", "blockdiag:rows=65536,block=8",
    "blockdiag:rows=262144,block=32", "blockdiag:rows=1048576,block=4",
    "longrows:rows=10000,avg=4,long=5000,count=2", "longrows:rows=120000,avg=8,long=60000,count=4",
    "longrows:rows=600000,avg=4,long=300000,count=3",
    "longrows:rows=2500000,avg=6,long=1000000,count=2",
    "emptyrows:rows=8000,avg=16,empty=0.9", "emptyrows:rows=90000,avg=8,empty=0.5",
    "emptyrows:rows=700000,avg=10,empty=0.3", "emptyrows:rows=3000000,avg=4,empty=0.7",
    "uniform:rows=1000,cols=50000,avg=200", "uniform:rows=100000,cols=2000,avg=10",
    "powerlaw:rows=20000,cols=400000,avg=30,alpha=1.7",
    NULL,
};

const char *const *seer_gen_families(void)
{
    return DEFAULT_SPECS;
}

/* ---- families-large: SEER_GEN_LARGE_COUNT specs drawn from a fixed seed. Only integer draws
 * and correctly rounded multiplications, so every machine draws the same specs. */

#define LARGE_NNZ_CAP 16000000LL /* keeps one matrix's bench near a second on an H200 */

/* rows: 100,000 x 1.0630^j, j < 68 (log-uniform up to about 6,300,000), to a multiple of 1000. */
static long long large_rows(struct rng *r)
{
    double v = 1e5;
    for (long long j = next_below(r, 68); j > 0; j--)
        v *= 1.063;
    return ((long long)v / 1000) * 1000;
}

static long long cap_len(long long want, long long rows)
{
    long long most = LARGE_NNZ_CAP / rows;
    return want < most ? want : (most > 1 ? most : 1);
}

static void large_params(char *buf, size_t size, const char *fam, long long rows, long long cols,
                         struct rng *r)
{
    long long avg = cap_len(2 + next_below(r, 63), rows);
    if (!strcmp(fam, "banded"))
        snprintf(buf, size, "bw=%lld", (cap_len(3 + 2 * next_below(r, 32), rows) - 1) / 2);
    else if (!strcmp(fam, "uniform"))
        snprintf(buf, size, "avg=%lld", avg);
    else if (!strcmp(fam, "powerlaw"))
        snprintf(buf, size, "avg=%lld,alpha=%.1f", cap_len(2 + next_below(r, 39), rows),
                 1.3 + 0.1 * (double)next_below(r, 18));
    else if (!strcmp(fam, "blockdiag"))
        snprintf(buf, size, "block=%lld", cap_len(1LL << (1 + next_below(r, 6)), rows));
    else if (!strcmp(fam, "longrows")) { /* the long rows hold at most 8,000,000 entries */
        long long a = cap_len(2 + next_below(r, 15), rows);
        long long len = cols / 20 * (1 + next_below(r, 12)), count = 1 + next_below(r, 8);
        snprintf(buf, size, "avg=%lld,long=%lld,count=%lld", a,
                 len * count > 8000000 ? 8000000 / count : len, count);
    }
    else
        snprintf(buf, size, "avg=%lld,empty=%.2f", cap_len(2 + next_below(r, 31), rows),
                 0.05 * (double)(2 + next_below(r, 18)));
}

int seer_gen_large_spec(char *buf, size_t size, int i)
{
    if (i < 0 || i >= SEER_GEN_LARGE_COUNT)
        return lscat_error_setc(LSCAT_EINVALID, "families-large has %d specs; %d is out of range",
                                SEER_GEN_LARGE_COUNT, i);
    struct rng r = { 0x5EE2C0DEULL + (unsigned long long)i * 0x9E3779B97F4A7C15ULL };
    const char *fam = FAMILIES[i % 6];
    long long rows = large_rows(&r), cols = rows;
    if (next_below(&r, 5) == 0) { /* one in five rectangular: cols = rows x 2^(-3..3) */
        long long e = next_below(&r, 7) - 3;
        cols = e < 0 ? rows >> -e : rows << e;
    }
    char par[160];
    large_params(par, sizeof(par), fam, rows, cols, &r);
    snprintf(buf, size, "%s:rows=%lld,cols=%lld,%s,seed=%d", fam, rows, cols, par, i + 1);
    return 0;
}
