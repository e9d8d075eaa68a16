/* The repository's own launch of a kernel: the block, dynamic shared memory and grid of its
 * first `k<<<grid, block, smem>>>(...)` in the tree whose block is a constant (literals,
 * macros, constexpr, `dim3 b(32, 8)` variables; the bytes else from the tree's opt-in
 * cudaFuncSetAttribute), its grid as an expression over the kernel's parameters where it is
 * built from them (`dim3 grid(div_ceil(M, 256))`), and its `__launch_bounds__` maximum. The
 * probe tries that block first when its own shapes fault (docs/execute.md "Block retry"). */
#include "isolate/extract_impl.h"

#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* e without the implicit casts and parentheses libclang shows around it. */
static enum CXChildVisitResult only_child(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    CXCursor *o = d;
    if (clang_Cursor_isNull(*o))
        *o = c;
    else
        *o = clang_getNullCursor(); /* a second child: not a wrapper */
    return CXChildVisit_Continue;
}

CXCursor launch_unwrap(CXCursor e)
{
    for (int i = 0; i < 16; i++) {
        enum CXCursorKind k = clang_getCursorKind(e);
        if (k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr)
            break;
        CXCursor c = clang_getNullCursor();
        clang_visitChildren(e, only_child, &c);
        if (clang_Cursor_isNull(c))
            break;
        e = c;
    }
    return e;
}

/* An integer constant: 1 and *v when e evaluates to one. */
static int eval_int(long long *v, CXCursor e)
{
    CXEvalResult r = clang_Cursor_Evaluate(e);
    int ok = r && clang_EvalResult_getKind(r) == CXEval_Int;
    if (ok)
        *v = clang_EvalResult_getAsLongLong(r);
    if (r)
        clang_EvalResult_dispose(r);
    return ok;
}

/* The initialiser of the variable a DeclRefExpr names, or a null cursor. */
static enum CXChildVisitResult last_expr(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    if (clang_isExpression(clang_getCursorKind(c)))
        *(CXCursor *)d = c;
    return CXChildVisit_Continue;
}

static CXCursor var_init(CXCursor e)
{
    CXCursor init = clang_getNullCursor();
    if (clang_getCursorKind(e) != CXCursor_DeclRefExpr)
        return init;
    CXCursor d = clang_getCursorReferenced(e);
    if (clang_getCursorKind(d) == CXCursor_VarDecl)
        clang_visitChildren(d, last_expr, &init);
    return init;
}

/* A scalar argument of the launch: the expression's value, or its variable's initial value
 * (`size_t shmem = 2 * 1024; k<<<g, b, shmem>>>`). */
int launch_scalar(long long *v, CXCursor e, int depth)
{
    if (eval_int(v, e))
        return 1;
    CXCursor init = var_init(launch_unwrap(e));
    return depth > 0 && !clang_Cursor_isNull(init) && launch_scalar(v, init, depth - 1);
}

/* Whether argument a of a launch's configuration was left out (a default argument has no
 * place in the file). */
static int defaulted(CXCursor a)
{
    CXSourceRange r = clang_getCursorExtent(a);
    unsigned s = 0, e = 0;
    clang_getExpansionLocation(clang_getRangeStart(r), NULL, NULL, NULL, &s);
    clang_getExpansionLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &e);
    return s == 0 && e == 0;
}

/* A dim3 argument: an integer (x, 1, 1), `dim3(x, y, z)` with constant parts, or a dim3
 * variable initialised so (followed through copies). 1 when constant. */
static int dim3_value(int out[3], CXCursor e, int depth)
{
    long long v;
    if (depth <= 0)
        return 0;
    e = launch_unwrap(e);
    if (eval_int(&v, e)) {
        out[0] = (int)v, out[1] = out[2] = 1;
        return v > 0 && v <= 0x7fffffff;
    }
    CXCursor init = var_init(e);
    if (!clang_Cursor_isNull(init))
        return dim3_value(out, init, depth - 1);
    if (clang_getCursorKind(e) != CXCursor_CallExpr)
        return 0;
    int n = clang_Cursor_getNumArguments(e);
    if (n == 1) { /* a copy, or dim3(x) */
        CXType t = clang_getCanonicalType(clang_getCursorType(clang_Cursor_getArgument(e, 0)));
        if (t.kind == CXType_Record || t.kind == CXType_Elaborated)
            return dim3_value(out, clang_Cursor_getArgument(e, 0), depth - 1);
    }
    if (n < 1 || n > 3)
        return 0;
    int written = 0; /* `dim3 g;` is dim3(1, 1, 1) by default arguments: set later, not known */
    for (int i = 0; i < n; i++)
        written += !defaulted(clang_Cursor_getArgument(e, (unsigned)i));
    if (!written)
        return 0;
    out[0] = out[1] = out[2] = 1;
    for (int i = 0; i < n; i++) {
        CXCursor a = clang_Cursor_getArgument(e, (unsigned)i);
        if (!launch_scalar(&v, a, 4) || v <= 0 || v > 0x7fffffff)
            return 0;
        out[i] = (int)v;
    }
    return 1;
}

/* ---- the grid as an expression (docs/isolate.md "grid_expr") ----
 * A grid component that is not constant is written in lscat's small language where it is built
 * from integers, + - * / %, ceil-divisions, min/max and variables that the same call passes to
 * the kernel (those are written as the kernel's parameter names). Anything else: no expression. */
struct gexpr {
    CXCursor call, kernel; /* the launch's call: its arguments name the kernel's parameters */
    int names;             /* kernel parameters the expression uses */
};

struct nth_parm {
    int want, at;
    CXCursor found;
};

static enum CXChildVisitResult nth_parm_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct nth_parm *n = d;
    if (clang_getCursorKind(c) == CXCursor_ParmDecl && n->at++ == n->want) {
        n->found = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

/* The name of the kernel parameter that the call passes variable decl to, appended to b. */
static int gx_param(struct buf *b, struct gexpr *g, CXCursor decl)
{
    int n = clang_Cursor_getNumArguments(g->call);
    for (int i = 0; i < n; i++) {
        CXCursor a = launch_unwrap(clang_Cursor_getArgument(g->call, (unsigned)i));
        if (clang_getCursorKind(a) != CXCursor_DeclRefExpr ||
            !clang_equalCursors(clang_getCursorReferenced(a), decl))
            continue;
        struct nth_parm np = { i, 0, clang_getNullCursor() };
        clang_visitChildren(g->kernel, nth_parm_visit, &np);
        CXString s = clang_getCursorSpelling(np.found);
        const char *name = clang_getCString(s);
        int ok = !clang_Cursor_isNull(np.found) && name && *name;
        if (ok)
            buf_adds(b, name), g->names++;
        clang_disposeString(s);
        return ok;
    }
    return 0;
}

struct two_kids {
    CXCursor c[2];
    int n;
};

static enum CXChildVisitResult kids_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct two_kids *k = d;
    if (k->n < 2)
        k->c[k->n] = c;
    k->n++;
    return CXChildVisit_Continue;
}

static int kids(CXCursor out[2], CXCursor e)
{
    struct two_kids k = { { clang_getNullCursor(), clang_getNullCursor() }, 0 };
    clang_visitChildren(e, kids_visit, &k);
    out[0] = k.c[0], out[1] = k.c[1];
    return k.n;
}

/* e as X + off with off constant (`(M + BN) - 1` is M and BN - 1). */
static void split_offset(CXCursor *x, long long *off, CXCursor e, int depth)
{
    CXCursor k[2];
    long long v;
    e = launch_unwrap(e);
    *x = e;
    *off = 0;
    if (depth <= 0 || clang_getCursorKind(e) != CXCursor_BinaryOperator || kids(k, e) != 2)
        return;
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
    if ((op == CXBinaryOperator_Add || op == CXBinaryOperator_Sub) && eval_int(&v, k[1])) {
        split_offset(x, off, k[0], depth - 1);
        *off += op == CXBinaryOperator_Add ? v : -v;
    } else if (op == CXBinaryOperator_Add && eval_int(&v, k[0])) {
        split_offset(x, off, k[1], depth - 1);
        *off += v;
    }
}

/* A call's kind by its callee's name: 'c' ceil-division (div_ceil, CEIL_DIV, divUp, iDivUp,
 * cdiv), 'm' min, 'M' max, 0 other. */
static int call_kind(CXCursor call)
{
    CXString s = clang_getCursorSpelling(call);
    const char *name = clang_getCString(s) ? clang_getCString(s) : "";
    char low[64];
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < sizeof low; p++)
        if (*p != '_')
            low[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    low[n] = '\0';
    int kind = (strstr(low, "ceil") && strstr(low, "div")) || strstr(low, "divup") ||
               strcmp(low, "cdiv") == 0 ? 'c'
               : strcmp(low, "min") == 0 ? 'm' : strcmp(low, "max") == 0 ? 'M' : 0;
    clang_disposeString(s);
    return kind;
}

static int gx_text(struct buf *b, struct gexpr *g, CXCursor e, int depth);

/* `v.x`, `v.y` or `v.z` of a dim3 variable v with a constant value (dim3_value). */
static int gx_member(struct buf *b, CXCursor e)
{
    CXCursor k[2];
    int v[3];
    CXString s = clang_getCursorSpelling(e);
    const char *m = clang_getCString(s) ? clang_getCString(s) : "";
    int at = strcmp(m, "x") == 0 ? 0 : strcmp(m, "y") == 0 ? 1 : strcmp(m, "z") == 0 ? 2 : -1;
    clang_disposeString(s);
    if (at < 0 || kids(k, e) != 1 || !dim3_value(v, k[0], 8))
        return 0;
    buf_addf(b, "%d", v[at]);
    return 1;
}

static int gx_binary(struct buf *b, struct gexpr *g, CXCursor e, int depth)
{
    static const char ops[] = { [CXBinaryOperator_Mul] = '*', [CXBinaryOperator_Div] = '/',
                                [CXBinaryOperator_Rem] = '%', [CXBinaryOperator_Add] = '+',
                                [CXBinaryOperator_Sub] = '-' };
    CXCursor k[2], x;
    long long c, off;
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
    if (kids(k, e) != 2 || op <= 0 || op > CXBinaryOperator_Sub || !ops[op])
        return 0;
    if (op == CXBinaryOperator_Div && eval_int(&c, k[1]) && c > 0) {
        split_offset(&x, &off, k[0], 8);
        if (off == c - 1 && off > 0) { /* (M + BM - 1) / BM */
            buf_adds(b, "cdiv(");
            int ok = gx_text(b, g, x, depth - 1);
            buf_addf(b, ",%lld)", c);
            return ok;
        }
    }
    buf_addch(b, '(');
    int ok = gx_text(b, g, k[0], depth - 1);
    buf_addch(b, ops[op]);
    ok = ok && gx_text(b, g, k[1], depth - 1);
    buf_addch(b, ')');
    return ok;
}

/* One grid component as an expression appended to b; 1 when expressible. */
static int gx_text(struct buf *b, struct gexpr *g, CXCursor e, int depth)
{
    long long v;
    if (depth <= 0)
        return 0;
    if (eval_int(&v, e) || eval_int(&v, launch_unwrap(e))) {
        buf_addf(b, "%lld", v);
        return v >= 0;
    }
    e = launch_unwrap(e);
    CXCursor k[2];
    switch (clang_getCursorKind(e)) {
    case CXCursor_DeclRefExpr: {
        if (gx_param(b, g, clang_getCursorReferenced(e)))
            return 1;
        CXCursor init = var_init(e); /* a local computed from them: `int tiles = M / 16;` */
        return !clang_Cursor_isNull(init) && gx_text(b, g, init, depth - 1);
    }
    case CXCursor_BinaryOperator:
        return gx_binary(b, g, e, depth);
    case CXCursor_MemberRefExpr: /* dimBlock.x of a constant `dim3 dimBlock(16, 16)` */
        return gx_member(b, e);
    case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXFunctionalCastExpr:
        return kids(k, e) >= 1 && gx_text(b, g, k[kids(k, e) - 1], depth - 1);
    case CXCursor_CallExpr: {
        int kind = call_kind(e);
        if (!kind || clang_Cursor_getNumArguments(e) != 2)
            return 0;
        buf_adds(b, kind == 'c' ? "cdiv(" : kind == 'm' ? "min(" : "max(");
        int ok = gx_text(b, g, clang_Cursor_getArgument(e, 0), depth - 1);
        buf_addch(b, ',');
        ok = ok && gx_text(b, g, clang_Cursor_getArgument(e, 1), depth - 1);
        buf_addch(b, ')');
        return ok;
    }
    default:
        return 0;
    }
}

/* The launch's grid argument as three expressions (followed through `dim3 grid(...)`
 * variables and copies, as dim3_value); 1 when every component is expressible and one of
 * them uses a kernel parameter. */
static int gx_grid(char out[3][LAUNCH_EXPR_MAX], struct gexpr *g, CXCursor e, int depth)
{
    if (depth <= 0)
        return 0;
    e = launch_unwrap(e);
    CXCursor init = var_init(e);
    if (!clang_Cursor_isNull(init))
        return gx_grid(out, g, init, depth - 1);
    if (clang_getCursorKind(e) != CXCursor_CallExpr)
        return 0;
    int n = clang_Cursor_getNumArguments(e);
    CXCursor a0 = n >= 1 ? clang_Cursor_getArgument(e, 0) : clang_getNullCursor();
    CXType t = clang_getCanonicalType(clang_getCursorType(a0));
    if (n == 1 && (t.kind == CXType_Record || t.kind == CXType_Elaborated))
        return gx_grid(out, g, a0, depth - 1);
    if (n < 1 || n > 3)
        return 0;
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++) {
        struct buf b = BUF_INIT;
        if (i >= n)
            buf_adds(&b, "1");
        else
            ok = gx_text(&b, g, clang_Cursor_getArgument(e, (unsigned)i), 16);
        ok = ok && b.len > 0 && b.len < LAUNCH_EXPR_MAX;
        if (ok)
            memcpy(out[i], b.data, b.len + 1);
        buf_release(&b);
    }
    return ok && g->names > 0;
}

struct launch_find {
    CXCursor kernel;
    struct launch_src *out;
    CXCursor call, cfg, top; /* the launch read, its configuration, the declaration holding it */
    CXCursor in_top;         /* the top-level declaration being visited */
};

static int is_kernel(CXCursor r, CXCursor kernel)
{
    if (clang_Cursor_isNull(r))
        return 0;
    CXCursor canon = clang_getCanonicalCursor(kernel);
    return clang_equalCursors(clang_getCanonicalCursor(r), canon) ||
           clang_equalCursors(clang_getCanonicalCursor(clang_getSpecializedCursorTemplate(r)),
                              canon);
}

static enum CXChildVisitResult config_of(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    CXString s = clang_getCursorSpelling(c);
    int yes = clang_getCursorKind(c) == CXCursor_CallExpr && clang_getCString(s) &&
              strcmp(clang_getCString(s), "__cudaPushCallConfiguration") == 0;
    clang_disposeString(s);
    if (yes)
        *(CXCursor *)d = c;
    return yes ? CXChildVisit_Break : CXChildVisit_Continue;
}

/* One launch `<<<grid, block, smem>>>` of `call` (kernel k): its values where constant, the
 * grid else as expressions over k's parameters. */
static void read_config(struct launch_src *o, CXCursor cfg, CXCursor call, CXCursor k)
{
    int n = clang_Cursor_getNumArguments(cfg);
    long long v;
    if (n < 2 || !dim3_value(o->block, clang_Cursor_getArgument(cfg, 1), 8))
        return;
    o->has_block = 1;
    o->has_grid = dim3_value(o->grid, clang_Cursor_getArgument(cfg, 0), 8);
    struct gexpr g = { call, k, 0 };
    if (!o->has_grid && !gx_grid(o->grid_expr, &g, clang_Cursor_getArgument(cfg, 0), 8))
        memset(o->grid_expr, 0, sizeof(o->grid_expr));
    CXCursor sm = n > 2 ? clang_Cursor_getArgument(cfg, 2) : clang_getNullCursor();
    if (clang_Cursor_isNull(sm) || defaulted(sm))
        o->smem = 0;
    else
        o->smem = launch_scalar(&v, sm, 4) && v >= 0 ? v : -1;
}

/* Inside a function template a launch's callee may stay unresolved (`k<<<1, 1024>>>(v)` with
 * v of a template type): a reference to an overload set naming the kernel. */
struct callee_find {
    CXCursor kernel;
    int hit;
};

static int names_kernel(CXCursor c, CXCursor kernel)
{
    if (is_kernel(clang_getCursorReferenced(c), kernel))
        return 1;
    if (clang_getCursorKind(c) == CXCursor_OverloadedDeclRef)
        for (unsigned i = 0; i < clang_getNumOverloadedDecls(c); i++)
            if (is_kernel(clang_getOverloadedDecl(c, i), kernel))
                return 1;
    return 0;
}

static enum CXChildVisitResult callee_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct callee_find *f = d;
    f->hit = names_kernel(c, f->kernel);
    return f->hit ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static enum CXChildVisitResult first_child(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    *(CXCursor *)d = c;
    return CXChildVisit_Break;
}

static int calls_kernel(CXCursor call, CXCursor kernel)
{
    if (is_kernel(clang_getCursorReferenced(call), kernel))
        return 1;
    CXCursor callee = clang_getNullCursor();
    clang_visitChildren(call, first_child, &callee);
    if (clang_Cursor_isNull(callee))
        return 0;
    struct callee_find f = { kernel, names_kernel(callee, kernel) };
    if (!f.hit)
        clang_visitChildren(callee, callee_visit, &f);
    return f.hit;
}

static enum CXChildVisitResult launch_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct launch_find *f = d;
    if (clang_getCursorKind(c) == CXCursor_CallExpr && calls_kernel(c, f->kernel)) {
        CXCursor cfg = clang_getNullCursor();
        clang_visitChildren(c, config_of, &cfg);
        if (!clang_Cursor_isNull(cfg)) {
            read_config(f->out, cfg, c, f->kernel);
            if (f->out->has_block) {
                f->call = c, f->cfg = cfg, f->top = f->in_top;
                return CXChildVisit_Break;
            }
        }
    }
    return CXChildVisit_Recurse;
}

/* `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`: the dynamic
 * shared memory the tree opts kernel k in to, where its launch's own bytes are not constant
 * (`k<<<g, b, smem_max_size>>>` with smem_max_size returned by an init function). */
static enum CXChildVisitResult optin_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct launch_find *f = d;
    if (clang_getCursorKind(c) != CXCursor_CallExpr || clang_Cursor_getNumArguments(c) != 3)
        return CXChildVisit_Recurse;
    CXString s = clang_getCursorSpelling(c);
    int named = clang_getCString(s) && strcmp(clang_getCString(s), "cudaFuncSetAttribute") == 0;
    clang_disposeString(s);
    if (!named)
        return CXChildVisit_Recurse;
    CXCursor k = clang_Cursor_getArgument(c, 0), attr = launch_unwrap(clang_Cursor_getArgument(c, 1));
    CXString a = clang_getCursorSpelling(clang_getCursorReferenced(attr));
    int max_dyn = clang_getCString(a) &&
                  strcmp(clang_getCString(a), "cudaFuncAttributeMaxDynamicSharedMemorySize") == 0;
    clang_disposeString(a);
    struct callee_find cf = { f->kernel, names_kernel(k, f->kernel) };
    if (max_dyn && !cf.hit)
        clang_visitChildren(k, callee_visit, &cf);
    long long v;
    if (max_dyn && cf.hit && launch_scalar(&v, clang_Cursor_getArgument(c, 2), 4) && v > 0) {
        f->out->smem = v;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* A token's value: an integer literal, or a macro whose body is one (in parentheses too). */
int launch_token_value(long long *v, struct ctx *x, const char *tok, int depth)
{
    char *end;
    if (tok[0] >= '0' && tok[0] <= '9') {
        *v = strtoll(tok, &end, 0);
        return end != tok;
    }
    int mi = extract_macro_by_name(x, tok);
    if (mi < 0 || depth <= 0)
        return 0;
    CXTranslationUnit tu = x->tu;
    CXToken *t = NULL;
    unsigned n = 0;
    int ok = 0;
    clang_tokenize(tu, clang_getCursorExtent(x->macros[mi].c), &t, &n);
    unsigned i = 1; /* after the macro's name */
    while (i < n && !ok) {
        CXString s = clang_getTokenSpelling(tu, t[i++]);
        const char *sp = clang_getCString(s) ? clang_getCString(s) : "";
        if (strcmp(sp, "(") != 0)
            ok = launch_token_value(v, x, sp, depth - 1);
        clang_disposeString(s);
        if (!ok && strcmp(sp, "(") != 0)
            break;
    }
    clang_disposeTokens(tu, t, n);
    return ok;
}

/* `__launch_bounds__(N, ...)` written before the kernel's name: N where it is a literal or
 * a macro of one; 0 otherwise. */
static int launch_bounds(struct ctx *x, CXCursor k)
{
    CXToken *t = NULL;
    unsigned n = 0;
    long long v = 0;
    int found = 0;
    CXFile f = NULL;
    unsigned from = 0, to = 0; /* in the file: the macros' own locations tokenize to nothing */
    clang_getExpansionLocation(clang_getRangeStart(clang_getCursorExtent(k)), &f, NULL, NULL, &from);
    clang_getExpansionLocation(clang_getCursorLocation(k), NULL, NULL, NULL, &to);
    if (!f || to <= from)
        return 0;
    clang_tokenize(x->tu, clang_getRange(clang_getLocationForOffset(x->tu, f, from),
                                         clang_getLocationForOffset(x->tu, f, to)), &t, &n);
    for (unsigned i = 0; i + 2 < n && !found; i++) {
        CXString a = clang_getTokenSpelling(x->tu, t[i]), b = clang_getTokenSpelling(x->tu, t[i + 1]);
        if (strcmp(clang_getCString(a), "__launch_bounds__") == 0 &&
            strcmp(clang_getCString(b), "(") == 0) {
            CXString c = clang_getTokenSpelling(x->tu, t[i + 2]);
            found = launch_token_value(&v, x, clang_getCString(c), 4) && v > 0 && v <= 1 << 20;
            clang_disposeString(c);
        }
        clang_disposeString(a);
        clang_disposeString(b);
    }
    clang_disposeTokens(x->tu, t, n);
    return found ? (int)v : 0;
}

struct named_var {
    const char *name;
    CXCursor decl;
};

static enum CXChildVisitResult find_named_var(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct named_var *f = d;
    if (clang_getCursorKind(c) != CXCursor_VarDecl)
        return CXChildVisit_Recurse;
    CXString name = clang_getCursorSpelling(c);
    int same = clang_getCString(name) && strcmp(clang_getCString(name), f->name) == 0;
    clang_disposeString(name);
    if (!same)
        return CXChildVisit_Continue;
    f->decl = c;
    return CXChildVisit_Break;
}

/* The value of V in a block assert: a literal, a macro of one, or a constant of that name,
 * declared in the kernel (llm.c's `constexpr const int WarpSize = 32;`) or at namespace scope
 * (inside the assert's expansion libclang gives the macro's cursor, not the reference, so the
 * name is looked up among the declarations). */
static int assert_value(long long *v, struct ctx *x, CXCursor k, const char *sp)
{
    if (launch_token_value(v, x, sp, 4))
        return 1;
    struct named_var f = { sp, clang_getNullCursor() };
    clang_visitChildren(k, find_named_var, &f);
    if (clang_Cursor_isNull(f.decl))
        f.decl = extract_var_by_name(x, sp, k);
    CXCursor init = clang_getNullCursor();
    if (!clang_Cursor_isNull(f.decl))
        clang_visitChildren(f.decl, last_expr, &init);
    return !clang_Cursor_isNull(init) && launch_scalar(v, init, 4);
}

/* `assert(blockDim.D == V)` or `assert(V == blockDim.D)` in the kernel's body, V a constant
 * (llm.c's `assert(blockDim.x == WARP_SIZE)`): every other block fires the assert, a device-side
 * assert the probe would pay a faulting run for. Sets eq[D] = V (1..1024). */
static void block_asserts(int eq[3], struct ctx *x, CXCursor k)
{
    CXToken *t = NULL;
    unsigned n = 0;
    CXFile f = NULL;
    unsigned from = 0, to = 0; /* by offsets in the file, as launch_bounds (macro locations) */
    CXSourceRange ext = clang_getCursorExtent(k);
    clang_getExpansionLocation(clang_getRangeStart(ext), &f, NULL, NULL, &from);
    clang_getExpansionLocation(clang_getRangeEnd(ext), NULL, NULL, NULL, &to);
    if (!f || to <= from)
        return;
    clang_tokenize(x->tu, clang_getRange(clang_getLocationForOffset(x->tu, f, from),
                                         clang_getLocationForOffset(x->tu, f, to)), &t, &n);
    for (unsigned i = 0; i + 7 < n; i++) {
        const char *s[8];
        CXString str[8];
        for (int j = 0; j < 8; j++) {
            str[j] = clang_getTokenSpelling(x->tu, t[i + j]);
            s[j] = clang_getCString(str[j]) ? clang_getCString(str[j]) : "";
        }
        int bd = -1, vi = -1; /* the token of D; of V */
        if (!strcmp(s[0], "assert") && !strcmp(s[1], "(") && !strcmp(s[7], ")")) {
            if (!strcmp(s[2], "blockDim") && !strcmp(s[3], ".") && !strcmp(s[5], "=="))
                bd = 4, vi = 6;
            else if (!strcmp(s[3], "==") && !strcmp(s[4], "blockDim") && !strcmp(s[5], "."))
                bd = 6, vi = 2;
        }
        long long v;
        int d = bd < 0 ? -1 : !strcmp(s[bd], "x") ? 0 : !strcmp(s[bd], "y") ? 1
                : !strcmp(s[bd], "z") ? 2 : -1;
        if (d >= 0 && assert_value(&v, x, k, s[vi]) && v >= 1 && v <= 1024)
            eq[d] = (int)v;
        for (int j = 0; j < 8; j++)
            clang_disposeString(str[j]);
    }
    clang_disposeTokens(x->tu, t, n);
}

void launch_find(struct launch_src *out, struct ctx *x, CXCursor k)
{
    memset(out, 0, sizeof(*out));
    out->smem = -1;
    buf_init(&out->fixed, 0);
    struct launch_find f = { .kernel = k, .out = out };
    for (size_t i = 0; i < x->ntops && !out->has_block; i++) {
        enum CXCursorKind kind = clang_getCursorKind(x->tops[i].c);
        if (kind == CXCursor_Namespace || kind == CXCursor_LinkageSpec)
            continue; /* their declarations are tops of their own */
        f.in_top = x->tops[i].c;
        clang_visitChildren(x->tops[i].c, launch_visit, &f);
    }
    if (!out->has_block) {
        out->smem = -1, out->has_grid = 0;
        memset(out->grid_expr, 0, sizeof(out->grid_expr));
    }
    for (size_t i = 0; i < x->ntops && out->has_block && out->smem < 0; i++) {
        enum CXCursorKind kind = clang_getCursorKind(x->tops[i].c);
        if (kind != CXCursor_Namespace && kind != CXCursor_LinkageSpec)
            clang_visitChildren(x->tops[i].c, optin_visit, &f);
    }
    out->bounds = launch_bounds(x, k);
    block_asserts(out->block_eq, x, k);
    if (out->has_block)
        fixed_find(out, x, f.call, f.top, f.cfg);
}

void launch_src_release(struct launch_src *l)
{
    buf_release(&l->fixed);
}

void launch_text(struct buf *b, const struct launch_src *l)
{
    if (l->has_block) {
        buf_addf(b, "block %d %d %d\n", l->block[0], l->block[1], l->block[2]);
        if (l->smem >= 0)
            buf_addf(b, "smem %lld\n", l->smem);
        if (l->has_grid)
            buf_addf(b, "grid %d %d %d\n", l->grid[0], l->grid[1], l->grid[2]);
        else if (l->grid_sm > 0)
            buf_addf(b, "gridsm %d\n", l->grid_sm);
        if (l->grid_expr[0][0])
            buf_addf(b, "grid_expr %s;%s;%s\n", l->grid_expr[0], l->grid_expr[1],
                     l->grid_expr[2]);
        buf_adds(b, l->fixed.len ? l->fixed.data : "");
    }
    if (l->bounds > 0)
        buf_addf(b, "bounds %d\n", l->bounds);
    if (l->block_eq[0] || l->block_eq[1] || l->block_eq[2])
        buf_addf(b, "blockeq %d %d %d\n", l->block_eq[0], l->block_eq[1], l->block_eq[2]);
}
