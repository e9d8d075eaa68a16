/* The kernel-indexing analysis (indexing.h): a small tokenizer over the isolated source finds
 * which builtin index components the kernel's code uses and whether some loop steps by the
 * grid's size. Text, not libclang, so macros (`#define IDX blockIdx.x * ...`) count too. */
#include "isolate/indexing.h"

#include "common/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tok {
    const char *p;
    size_t n;
};

struct toks {
    struct tok *v;
    size_t n, cap;
};

/* Blank comments, string and character literals (same length, newlines kept). */
static char *clean_text(const char *src, size_t len)
{
    char *t = xmalloc(len + 1);
    memcpy(t, src, len);
    t[len] = '\0';
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '/' && i + 1 < len && t[i + 1] == '/') {
            while (i < len && t[i] != '\n')
                t[i++] = ' ';
        } else if (t[i] == '/' && i + 1 < len && t[i + 1] == '*') {
            size_t j = i;
            while (j < len && !(t[j] == '*' && j + 1 < len && t[j + 1] == '/'))
                j++;
            for (size_t k = i; k < len && k < j + 2; k++)
                t[k] = t[k] == '\n' ? '\n' : ' ';
            i = j + 1;
        } else if (t[i] == '"' || t[i] == '\'') {
            char q = t[i];
            t[i] = ' ';
            for (i++; i < len && t[i] != q && t[i] != '\n'; i++) {
                if (t[i] == '\\' && i + 1 < len)
                    t[i++] = ' ';
                t[i] = ' ';
            }
            if (i < len && t[i] == q)
                t[i] = ' ';
        }
    }
    return t;
}

static void tokenize(struct toks *out, const char *t)
{
    static const char *const two[] = { "+=", "-=", "*=", "/=", "==", "!=", "<=", ">=", "->",
                                       "::", "++", "--", "&&", "||", "<<", ">>", NULL };
    const char *p = t;
    while (*p) {
        if (isspace((unsigned char)*p)) {
            p++;
            continue;
        }
        struct tok k = { p, 1 };
        if (isalpha((unsigned char)*p) || *p == '_') {
            while (isalnum((unsigned char)p[k.n]) || p[k.n] == '_')
                k.n++;
        } else if (isdigit((unsigned char)*p)) {
            while (isalnum((unsigned char)p[k.n]) || p[k.n] == '.' || p[k.n] == '_')
                k.n++;
        } else {
            for (int i = 0; two[i]; i++)
                if (p[0] == two[i][0] && p[1] == two[i][1])
                    k.n = 2;
        }
        XGROW(out->v, out->n + 1, out->cap);
        out->v[out->n++] = k;
        p += k.n;
    }
}

static int is(const struct toks *t, size_t i, const char *s)
{
    return i < t->n && t->v[i].n == strlen(s) && memcmp(t->v[i].p, s, t->v[i].n) == 0;
}

static int is_ident(const struct toks *t, size_t i)
{
    return i < t->n && (isalpha((unsigned char)t->v[i].p[0]) || t->v[i].p[0] == '_');
}

/* The builtin a name stands for (threadIdx 0, blockIdx 1, blockDim 2, gridDim 3), -1 if none;
 * *call: the cooperative-groups spelling, a call `name()` before the component. */
static int builtin_of(const struct toks *t, size_t i, int *call)
{
    static const char *const plain[] = { "threadIdx", "blockIdx", "blockDim", "gridDim" };
    static const struct { const char *name; int builtin; } cg[] = {
        { "thread_index", 0 }, { "group_index", 1 }, { "block_index", 1 },
        { "dim_threads", 2 }, { "group_dim", 2 }, { "block_dim", 2 }, { "dim_blocks", 3 },
    };
    *call = 0;
    for (int b = 0; b < 4; b++)
        if (is(t, i, plain[b]))
            return b;
    for (size_t c = 0; c < sizeof(cg) / sizeof(cg[0]); c++)
        if (is(t, i, cg[c].name) && is(t, i + 1, "(") && is(t, i + 2, ")")) {
            *call = 1;
            return cg[c].builtin;
        }
    return -1;
}

/* INDEXING_USE bit of a component use starting at token i, 0 if none. */
static unsigned use_at(const struct toks *t, size_t i)
{
    int call;
    int b = builtin_of(t, i, &call);
    if (b < 0)
        return 0;
    size_t dot = i + (call ? 3 : 1);
    if (!is(t, dot, "."))
        return 0;
    for (int c = 0; c < 3; c++)
        if (is(t, dot + 1, (const char[]){ (char)('x' + c), 0 }))
            return INDEXING_USE(b, c);
    return 0;
}

struct names {
    struct tok v[64];
    int n;
};

static int named(const struct names *s, const struct tok *k)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i].n == k->n && memcmp(s->v[i].p, k->p, k->n) == 0)
            return 1;
    return 0;
}

/* Whether tokens from i up to the end of the expression (`;` or `,` at depth 0, or a `)`
 * closing an outer parenthesis) mention gridDim or a name of s. */
static int expr_mentions_grid(const struct toks *t, size_t i, const struct names *s)
{
    int depth = 0;
    for (; i < t->n; i++) {
        if (is(t, i, "(") || is(t, i, "["))
            depth++;
        else if (is(t, i, ")") || is(t, i, "]")) {
            if (--depth < 0)
                return 0;
        } else if (depth == 0 && (is(t, i, ";") || is(t, i, ",") || is(t, i, "{")))
            return 0;
        else if (is(t, i, "gridDim") || is(t, i, "dim_blocks") ||
                 (is_ident(t, i) && named(s, &t->v[i])))
            return 1;
    }
    return 0;
}

/* Names assigned from an expression of the grid's size (`int stride = blockDim.x * gridDim.x`),
 * transitively; then whether a step `+=` (or `i = i + ...`) uses one. */
static int find_grid_stride(const struct toks *t)
{
    struct names s = { .n = 0 };
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 1; i < t->n; i++)
            if (is(t, i, "=") && is_ident(t, i - 1) && !named(&s, &t->v[i - 1]) && s.n < 64 &&
                expr_mentions_grid(t, i + 1, &s))
                s.v[s.n++] = t->v[i - 1];
    for (size_t i = 1; i < t->n; i++) {
        if (is(t, i, "+=") && expr_mentions_grid(t, i + 1, &s))
            return 1;
        if (is(t, i, "=") && is_ident(t, i - 1) && i + 2 < t->n && t->v[i + 1].n == t->v[i - 1].n &&
            memcmp(t->v[i + 1].p, t->v[i - 1].p, t->v[i - 1].n) == 0 && is(t, i + 2, "+") &&
            expr_mentions_grid(t, i + 3, &s))
            return 1;
    }
    return 0;
}

/* Whether the expression from token i on (to its `;`) calls this_grid(). */
static int expr_calls_this_grid(const struct toks *t, size_t i)
{
    for (; i < t->n && !is(t, i, ";") && !is(t, i, "{"); i++)
        if (is(t, i, "this_grid") && is(t, i + 1, "("))
            return 1;
    return 0;
}

/* Names of grid groups: declared `grid_group [const] [&|*] g` or assigned `g = this_grid()`. */
static void grid_group_names(struct names *s, const struct toks *t)
{
    for (size_t i = 0; i < t->n && s->n < 64; i++) {
        size_t j = i + 1;
        if (is(t, i, "grid_group")) {
            while (is(t, j, "const") || is(t, j, "&") || is(t, j, "&&") || is(t, j, "*"))
                j++;
            if (is_ident(t, j) && !named(s, &t->v[j]))
                s->v[s->n++] = t->v[j];
        } else if (is_ident(t, i) && is(t, j, "=") && expr_calls_this_grid(t, j + 1) &&
                   !named(s, &t->v[i])) {
            s->v[s->n++] = t->v[i];
        }
    }
}

/* A grid-wide barrier: this_grid().sync(), g.sync() or sync(g) on a grid group g. */
static int find_grid_sync(const struct toks *t)
{
    struct names s = { .n = 0 };
    grid_group_names(&s, t);
    for (size_t i = 0; i + 3 < t->n; i++) {
        if (is(t, i, "this_grid") && is(t, i + 1, "(") && is(t, i + 2, ")") &&
            is(t, i + 3, ".") && is(t, i + 4, "sync") && is(t, i + 5, "("))
            return 1;
        if (is_ident(t, i) && named(&s, &t->v[i]) && is(t, i + 1, ".") && is(t, i + 2, "sync") &&
            is(t, i + 3, "("))
            return 1;
        if (is(t, i, "sync") && is(t, i + 1, "(") && is_ident(t, i + 2) &&
            named(&s, &t->v[i + 2]) && is(t, i + 3, ")") && !(i > 0 && is(t, i - 1, ".")))
            return 1;
    }
    return 0;
}

void indexing_analyze(struct indexing *out, const char *src, size_t len)
{
    char *text = clean_text(src ? src : "", src ? len : 0);
    struct toks t = { NULL, 0, 0 };
    tokenize(&t, text);
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < t.n; i++)
        out->uses |= use_at(&t, i);
    /* dimensions from the indices (threadIdx, blockIdx): a kernel that only multiplies
     * blockDim.x * blockDim.y to count its threads does not index y */
    for (int c = 0; c < 3; c++)
        for (int b = 0; b < 2; b++)
            if (out->uses & INDEXING_USE(b, c))
                out->dims = c + 1;
    out->grid_stride = find_grid_stride(&t);
    out->grid_sync = find_grid_sync(&t);
    if (out->dims >= 3)
        out->kind = INDEXING_3D;
    else if (out->dims == 2)
        out->kind = INDEXING_2D;
    else if (out->dims == 1)
        out->kind = out->grid_stride ? INDEXING_GRID_STRIDE : INDEXING_1D;
    else
        out->kind = INDEXING_NONE;
    free(t.v);
    free(text);
}

static const char *const kind_names[] = { "none", "1d", "grid_stride", "2d", "3d" };

const char *indexing_name(enum indexing_kind k)
{
    return (unsigned)k < 5 ? kind_names[k] : "none";
}

int indexing_parse(const char *name)
{
    for (int k = 0; name && k < 5; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

void indexing_uses_text(char *out, size_t size, unsigned uses)
{
    static const char *const names[] = { "threadIdx", "blockIdx", "blockDim", "gridDim" };
    size_t n = 0;
    out[0] = '\0';
    for (int b = 0; b < 4 && n + 1 < size; b++) {
        char comps[4] = "";
        int m = 0;
        for (int c = 0; c < 3; c++)
            if (uses & INDEXING_USE(b, c))
                comps[m++] = (char)('x' + c);
        comps[m] = '\0';
        if (m) {
            int w = snprintf(out + n, size - n, "%s%s.%s", n ? " " : "", names[b], comps);
            n = w < 0 ? n : (n + (size_t)w < size ? n + (size_t)w : size - 1);
        }
    }
}
