/* Parsing of the sweep space (sizes x block shapes). Strict: a typo in a size list must be a
 * usage error, never a silently smaller sweep. */
#include "tune/space.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Parse "A", "AxB" or "AxBxC" into v[0..2] (missing parts = 1); returns the part count. */
static int parse_dims(int v[3], const char *item, int max_parts, const char *what)
{
    char *end = NULL;
    const char *p = item;
    int parts = 0;
    v[0] = v[1] = v[2] = 1;
    while (1) {
        if (parts == max_parts)
            return lscat_error_setc(LSCAT_EINVALID, "bad %s '%s': at most %d dimensions",
                                    what, item, max_parts);
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 1 || x > 65536)
            return lscat_error_setc(LSCAT_EINVALID,
                                    "bad %s '%s': want positive integers up to 65536 joined "
                                    "by 'x' (e.g. 16x16)", what, item);
        v[parts++] = (int)x;
        if (*end == 0)
            return parts;
        if (*end != 'x' && *end != 'X')
            return lscat_error_setc(LSCAT_EINVALID, "bad %s '%s': unexpected '%c'", what,
                                    item, *end);
        p = end + 1;
    }
}

/* Split a comma list and parse each item; returns the count or a negative code. */
static int parse_list(int (**out)[3], const char *list, int max_parts, const char *what)
{
    char *copy = xstrdup(list), *save = NULL;
    int n = 0, rc = 0;
    size_t cap = 0;
    *out = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v[3];
        while (*tok == ' ')
            tok++;
        int parts = parse_dims(v, tok, max_parts, what);
        if (parts < 0) {
            rc = parts;
            goto done;
        }
        if (max_parts == 2 && parts == 1)
            v[1] = v[0]; /* a size "N" is the square N x N */
        if (max_parts == 3 && (long)v[0] * v[1] * v[2] > 1024) {
            rc = lscat_error_setc(LSCAT_EINVALID, "bad block '%s': %d threads, CUDA allows "
                                  "at most 1024", tok, v[0] * v[1] * v[2]);
            goto done;
        }
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= memcmp((*out)[i], v, sizeof(v)) == 0;
        if (dup)
            continue;
        XGROW(*out, (size_t)n + 1, cap);
        memcpy((*out)[n++], v, sizeof(v));
    }
    if (n == 0)
        rc = lscat_error_setc(LSCAT_EINVALID, "empty %s list", what);
done:
    free(copy);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        return rc;
    }
    return n;
}

/* Smaller matrices first (by W*H, then W): a block shape that fails stickily at one size is
 * skipped at the larger ones (runner.h, struct tune_skip), so the small ones must come first. */
static int size_order(const void *a, const void *b)
{
    const int *x = a, *y = b;
    long ax = (long)x[0] * x[1], ay = (long)y[0] * y[1];
    if (ax != ay)
        return ax < ay ? -1 : 1;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

int tune_space_parse(struct tune_space *out, const char *sizes, const char *blocks)
{
    int(*sz)[3] = NULL, (*bl)[3] = NULL;
    int ns, nb, rc = 0;
    out->configs = NULL;
    out->n = 0;
    ns = parse_list(&sz, sizes ? sizes : TUNE_DEFAULT_SIZES, 2, "size");
    if (ns < 0)
        return ns;
    qsort(sz, (size_t)ns, sizeof(*sz), size_order);
    nb = parse_list(&bl, blocks ? blocks : TUNE_DEFAULT_BLOCKS, 3, "block");
    if (nb < 0) {
        rc = nb;
        goto done;
    }
    out->configs = xcalloc((size_t)ns * nb, sizeof(*out->configs));
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < nb; j++) {
            struct tune_config *c = &out->configs[out->n++];
            c->w = sz[i][0];
            c->h = sz[i][1];
            c->bx = bl[j][0];
            c->by = bl[j][1];
            c->bz = bl[j][2];
        }
done:
    free(sz);
    free(bl);
    return rc;
}

void tune_space_release(struct tune_space *s)
{
    free(s->configs);
    s->configs = NULL;
    s->n = 0;
}

int tune_space_with_block(struct tune_space *out, const struct tune_space *base, int bx, int by,
                          int bz)
{
    int have = 0;
    for (int i = 0; i < base->n && !have; i++)
        have = base->configs[i].bx == bx && base->configs[i].by == by && base->configs[i].bz == bz;
    if (have || base->n == 0)
        return 0;
    out->configs = xcalloc((size_t)base->n * 2, sizeof(*out->configs));
    out->n = 0;
    for (int i = 0; i < base->n; i++) {
        out->configs[out->n++] = base->configs[i];
        int last = i + 1 == base->n || base->configs[i + 1].w != base->configs[i].w ||
                   base->configs[i + 1].h != base->configs[i].h;
        if (last) /* the end of this size's shapes */
            out->configs[out->n++] = (struct tune_config){ base->configs[i].w, base->configs[i].h,
                                                           bx, by, bz };
    }
    return 1;
}

int tune_space_find(const struct tune_space *s, const struct tune_config *c)
{
    for (int i = 0; i < s->n; i++)
        if (memcmp(&s->configs[i], c, sizeof(*c)) == 0)
            return i;
    return -1;
}

int tune_space_named(const char **blocks_1d, const char **blocks_2d, const char *name,
                     const char *blocks)
{
    *blocks_1d = *blocks_2d = NULL;
    if (name && strcmp(name, "fit") != 0 && strcmp(name, "lscat") != 0)
        return lscat_error_setc(LSCAT_EINVALID, "unknown --space '%s' (fit, lscat)", name);
    if (blocks && name)
        return lscat_error_setc(LSCAT_EINVALID, "--blocks gives every kernel its list: it goes "
                                "without --space");
    if (blocks) {
        *blocks_1d = blocks;
    } else if (name && strcmp(name, "lscat") == 0) {
        *blocks_1d = TUNE_DEFAULT_BLOCKS;
    } else {
        *blocks_1d = TUNE_BLOCKS_1D;
        *blocks_2d = TUNE_BLOCKS_2D;
    }
    return 0;
}
