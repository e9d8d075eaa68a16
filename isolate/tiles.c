/* The `tiles` binding's part of a harness (docs/isolate.md "Aligned sizes"): a kernel whose
 * source computes its grid from its own size parameters (`dim3 grid(div_ceil(M, 256), ...)`)
 * tiles its output per block without bounds checks inside a tile, so it runs only on sizes the
 * tiles divide. Each size gets the tile its grid expression divides it by. */
#include "isolate/harness.h"

#include "common/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long gcd(long long a, long long b)
{
    while (b) {
        long long t = a % b;
        a = b, b = t;
    }
    return a;
}

static long long lcm(long long a, long long b)
{
    return a <= 0 ? b : b <= 0 ? a : a / gcd(a, b) * b;
}

/* Whether the identifier at p (length n) is `name`, with no identifier character around it. */
static int ident_at(const char *start, const char *p, size_t n, const char *name)
{
    return strlen(name) == n && strncmp(p, name, n) == 0 &&
           (p == start || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
           !(isalnum((unsigned char)p[n]) || p[n] == '_');
}

/* The divisor after `name` at p in e: `name,d)` inside cdiv( or `name/d`; 0 none. */
static long long divisor_after(const char *e, const char *p, size_t n)
{
    const char *q = p + n;
    int in_cdiv = p - e >= 5 && strncmp(p - 5, "cdiv(", 5) == 0;
    if (!((in_cdiv && *q == ',') || *q == '/') || !isdigit((unsigned char)q[1]))
        return 0;
    char *end;
    long long d = strtoll(q + 1, &end, 10);
    return (in_cdiv ? *end == ')' : !(isalnum((unsigned char)*end) || *end == '_')) && d > 0 &&
           d <= 1 << 20 ? d : 0;
}

long long harness_grid_align(const struct harness_launch *l, const char *name)
{
    long long a = 0;
    if (!name || !*name)
        return 0;
    for (int i = 0; i < 3; i++) {
        const char *e = l->grid_expr[i];
        for (const char *p = strstr(e, name); p; p = strstr(p + 1, name))
            if (ident_at(e, p, strlen(name), name))
                a = lcm(a, divisor_after(e, p, strlen(name)));
    }
    return a > (1 << 20) ? 0 : a;
}

/* Item i of a comma-separated list into out (cap bytes); "" past its end. */
static void list_item(char *out, size_t cap, const char *list, int i)
{
    out[0] = '\0';
    for (const char *p = list; p && i >= 0; i--) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (i == 0) {
            if (n >= cap)
                n = cap - 1;
            memcpy(out, p, n);
            out[n] = '\0';
        }
        p = c ? c + 1 : NULL;
    }
}

static int is_dim_role(const char *role)
{
    return !strcmp(role, "size") || !strcmp(role, "width") || !strcmp(role, "height") ||
           !strcmp(role, "stride");
}

void harness_tile_aligns(long long *out, int n, const struct harness_kernel *k,
                         const struct harness_launch *l)
{
    long long all = 0, most = 0;
    char name[128], role[32];
    for (int i = 0; i < n; i++) {
        list_item(name, sizeof name, k->names, i);
        out[i] = l->grid_expr[0][0] ? harness_grid_align(l, name) : 0;
        all = lcm(all, out[i]);
        most = out[i] > most ? out[i] : most;
    }
    if (all > 8192)
        all = most;
    for (int i = 0; i < n && all > 0; i++) {
        list_item(role, sizeof role, k->roles, i);
        if (out[i] == 0 && is_dim_role(role))
            out[i] = all;
    }
}

void harness_tiles_prefix(struct buf *out, const struct harness_kernel *k,
                          const struct harness_launch *l)
{
    int n = 0;
    for (const char *p = k->roles; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        n++;
    long long *a = xcalloc((size_t)n + 1, sizeof(*a));
    harness_tile_aligns(a, n, k, l);
    buf_adds(out, "/* the source's grid over the kernel's parameters, and each parameter's tile "
                  "(binding tiles; docs/isolate.md \"Aligned sizes\") */\n"
                  "static const char *const lscat_src_grid[3] = { ");
    for (int i = 0; i < 3; i++)
        buf_addf(out, "%s%s%s%s", i ? ", " : "", l->grid_expr[0][0] ? "\"" : "",
                 l->grid_expr[0][0] ? l->grid_expr[i] : "nullptr", l->grid_expr[0][0] ? "\"" : "");
    buf_adds(out, " };\nstatic const long long lscat_tile_align[] = { ");
    for (int i = 0; i < n; i++)
        buf_addf(out, "%lld, ", a[i]);
    buf_adds(out, "0 };\n");
    free(a);
}
