/* A kernel's hard-coded problem size, read from its source's launch: the buffers the launching
 * function allocates with constant sizes (`cudaMalloc(&A, sizeof(half) * M_GLOBAL * K_GLOBAL)`)
 * and a grid from the device's SM count. The harness's "fixed" binding then runs the kernel at
 * that size instead of W x H buffers it would read past (docs/isolate.md "Fixed sizes"). */
#include "isolate/extract_impl.h"

#include "common/xalloc.h"
#include "isolate/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXED_MAX_ARGS 64
#define FIXED_CAP_BYTES (2LL << 30) /* the harness's limit: larger stays not runnable */

static char *spell(CXTranslationUnit tu, CXToken t)
{
    CXString s = clang_getTokenSpelling(tu, t);
    char *r = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return r;
}

static int is_ident(const char *s)
{
    return (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_';
}

/* `prop.multiProcessorCount`, `p->multiProcessorCount * 2`, `2 * prop.multiProcessorCount`:
 * the multiplier (1..64), or 0 when the grid is not of that form. */
static int grid_sm(struct ctx *x, CXCursor grid)
{
    CXToken *t = NULL;
    unsigned n = 0, from = 0, to;
    long long mult = 1, v;
    clang_tokenize(x->tu, clang_getCursorExtent(grid), &t, &n);
    char **s = xcalloc(n ? n : 1, sizeof(*s));
    for (unsigned i = 0; i < n; i++)
        s[i] = spell(x->tu, t[i]);
    to = n;
    if (n >= 3 && strcmp(s[1], "*") == 0 && launch_token_value(&v, x, s[0], 4))
        mult = v, from = 2;
    else if (n >= 3 && strcmp(s[n - 2], "*") == 0 && launch_token_value(&v, x, s[n - 1], 4))
        mult = v, to = n - 2;
    int ok = to > from && strcmp(s[to - 1], "multiProcessorCount") == 0;
    for (unsigned i = from; ok && i + 1 < to; i++)
        ok = is_ident(s[i]) || strcmp(s[i], ".") == 0 || strcmp(s[i], "->") == 0;
    for (unsigned i = 0; i < n; i++)
        free(s[i]);
    free(s);
    clang_disposeTokens(x->tu, t, n);
    return ok && mult >= 1 && mult <= 64 ? (int)mult : 0;
}

/* The allocation of one variable: the first cudaMalloc / cudaMallocManaged in the function
 * whose destination names it (`&A`, `(void **)&A`, `reinterpret_cast<void **>(&A)`). */
struct alloc_find {
    CXCursor var;
    long long bytes; /* 0 not found; -1 found, not constant */
    int hit;
};

static enum CXChildVisitResult names_var(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct alloc_find *f = d;
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr &&
        clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(c)), f->var)) {
        f->hit = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

static enum CXChildVisitResult alloc_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct alloc_find *f = d;
    if (clang_getCursorKind(c) != CXCursor_CallExpr || clang_Cursor_getNumArguments(c) < 2)
        return CXChildVisit_Recurse;
    CXString s = clang_getCursorSpelling(c);
    const char *name = clang_getCString(s) ? clang_getCString(s) : "";
    int is_alloc = strcmp(name, "cudaMalloc") == 0 || strcmp(name, "cudaMallocManaged") == 0;
    clang_disposeString(s);
    if (!is_alloc)
        return CXChildVisit_Recurse;
    f->hit = 0;
    CXCursor dst = clang_Cursor_getArgument(c, 0);
    if (clang_getCursorKind(launch_unwrap(dst)) == CXCursor_DeclRefExpr)
        names_var(launch_unwrap(dst), c, f);
    else
        clang_visitChildren(dst, names_var, f);
    if (!f->hit)
        return CXChildVisit_Continue;
    long long v;
    f->bytes = launch_scalar(&v, clang_Cursor_getArgument(c, 1), 4) && v > 0 ? v : -1;
    return CXChildVisit_Break;
}

/* The first call of a function (`fn`, canonical) in the tree's declarations (x->tops, as
 * launch_find walks them), and the declaration it is in. */
struct caller_find {
    CXCursor fn, call;
    int hit;
};

static enum CXChildVisitResult call_of(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct caller_find *f = d;
    if (clang_getCursorKind(c) == CXCursor_CallExpr &&
        clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(c)), f->fn)) {
        f->call = c;
        f->hit = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

static int first_caller(CXCursor *call, CXCursor *in, struct ctx *x, CXCursor fn)
{
    struct caller_find f = { clang_getCanonicalCursor(fn), clang_getNullCursor(), 0 };
    for (size_t i = 0; i < x->ntops && !f.hit; i++) {
        enum CXCursorKind kind = clang_getCursorKind(x->tops[i].c);
        if (kind == CXCursor_Namespace || kind == CXCursor_LinkageSpec)
            continue; /* their declarations are tops of their own */
        clang_visitChildren(x->tops[i].c, call_of, &f);
        if (f.hit)
            *in = x->tops[i].c;
    }
    *call = f.call;
    return f.hit;
}

/* The place of parameter `var` among `fn`'s, or -1. */
static int param_index(CXCursor fn, CXCursor var)
{
    CXCursor want = clang_getCanonicalCursor(var);
    for (int i = 0; i < clang_Cursor_getNumArguments(fn); i++)
        if (clang_equalCursors(clang_getCanonicalCursor(clang_Cursor_getArgument(fn, (unsigned)i)),
                               want))
            return i;
    return -1;
}

/* Where `fn` gets its parameters from, this many callers up at most: the launch is in a helper
 * (`run(d_a, d_b)`) and the buffers come from its caller's cudaMalloc. */
#define FIXED_CALLER_DEPTH 2

/* The bytes the function `fn` allocates for the variable argument `a` names; 0 when unknown.
 * Where `a` is a parameter of `fn`, the bytes of the first caller's argument for it. */
static long long alloc_bytes(struct ctx *x, CXCursor fn, CXCursor a, int depth)
{
    a = launch_unwrap(a);
    if (clang_getCursorKind(a) != CXCursor_DeclRefExpr)
        return 0;
    CXCursor var = clang_getCursorReferenced(a);
    if (clang_getCursorKind(var) == CXCursor_ParmDecl && depth < FIXED_CALLER_DEPTH) {
        int i = param_index(fn, var);
        CXCursor call, in;
        if (i < 0 || !first_caller(&call, &in, x, fn) || i >= clang_Cursor_getNumArguments(call))
            return 0;
        return alloc_bytes(x, in, clang_Cursor_getArgument(call, (unsigned)i), depth + 1);
    }
    if (clang_getCursorKind(var) != CXCursor_VarDecl)
        return 0;
    struct alloc_find f = { clang_getCanonicalCursor(var), 0, 0 };
    clang_visitChildren(fn, alloc_visit, &f);
    return f.bytes > 0 ? f.bytes : 0;
}

/* W x H for the row: elems as H the largest divisor up to its square root, W = elems / H
 * (4096 x 4096 for 16 M elements, 512 x 512 for 64^3). */
static void size_of(long long *w, long long *h, long long elems)
{
    long long best = 1;
    for (long long d = 1; d * d <= elems; d++)
        if (elems % d == 0)
            best = d;
    *h = best;
    *w = elems / best;
}

/* Whether the kernel's parameter i is an integer named as a scale factor (`int alpha`). */
static int integer_scale(CXCursor kernel, int i, CXType t)
{
    if (t.kind < CXType_Bool || t.kind > CXType_Int128 || clang_Cursor_isNull(kernel))
        return 0;
    if (i >= clang_Cursor_getNumArguments(kernel))
        return 0;
    CXString s = clang_getCursorSpelling(clang_Cursor_getArgument(kernel, (unsigned)i));
    int yes = clang_getCString(s) && params_role_of(clang_getCString(s)) == PARAMS_ROLE_SCALE;
    clang_disposeString(s);
    return yes;
}

/* Each argument's fixed bytes and element bytes; 0 when the launch is not a fixed one: an
 * integer argument other than a scale factor (a size could come in), or a pointer whose
 * allocation is not constant. */
static int args_fixed(long long *bytes, long long *elem, struct ctx *x, CXCursor call, CXCursor fn)
{
    int n = clang_Cursor_getNumArguments(call), pointers = 0;
    CXCursor kernel = clang_getCursorReferenced(call);
    if (n < 1 || n > FIXED_MAX_ARGS)
        return 0;
    for (int i = 0; i < n; i++) {
        CXCursor a = clang_Cursor_getArgument(call, (unsigned)i);
        CXType t = clang_getCanonicalType(clang_getCursorType(a));
        bytes[i] = elem[i] = 0;
        if (t.kind == CXType_Float || t.kind == CXType_Double || t.kind == CXType_Half ||
            t.kind == CXType_Float16 || t.kind == CXType_BFloat16 || integer_scale(kernel, i, t))
            continue; /* alpha, beta: not a size */
        if (t.kind != CXType_Pointer)
            return 0;
        long long es = clang_Type_getSizeOf(clang_getCanonicalType(clang_getPointeeType(t)));
        bytes[i] = alloc_bytes(x, fn, a, 0);
        elem[i] = es;
        if (bytes[i] <= 0 || es <= 0 || bytes[i] % es != 0)
            return 0;
        pointers++;
    }
    return pointers > 0 ? n : 0;
}

void fixed_find(struct launch_src *out, struct ctx *x, CXCursor call, CXCursor fn, CXCursor cfg)
{
    long long bytes[FIXED_MAX_ARGS], elem[FIXED_MAX_ARGS], total = 0, most = 0, w, h;
    if (clang_Cursor_isNull(call) || clang_Cursor_isNull(fn))
        return;
    if (!out->has_grid && clang_Cursor_getNumArguments(cfg) > 0)
        out->grid_sm = grid_sm(x, clang_Cursor_getArgument(cfg, 0));
    int n = out->has_grid || out->grid_sm ? args_fixed(bytes, elem, x, call, fn) : 0;
    for (int i = 0; i < n; i++) {
        total += bytes[i];
        if (elem[i] > 0 && bytes[i] / elem[i] > most)
            most = bytes[i] / elem[i];
    }
    if (n == 0)
        return;
    if (total > FIXED_CAP_BYTES) { /* params.json says why it is not run at its size */
        buf_addf(&out->fixed, "fixedover %lld\n", total);
        return;
    }
    for (int i = 0; i < n; i++)
        if (bytes[i] > 0)
            buf_addf(&out->fixed, "fixed %d %lld %lld\n", i, bytes[i], elem[i]);
    size_of(&w, &h, most);
    buf_addf(&out->fixed, "fixedsize %lld %lld\n", w, h);
}
