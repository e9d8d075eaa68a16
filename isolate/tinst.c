/* Template arguments of a kernel from the repository's own call sites: a kernel templated on a
 * function object (`template <class Op> __global__ void k(..., Op op)`) cannot be instantiated
 * with float, nor a tile count used as an array size with 1. A launch or call of a
 * specialisation in the tree (`k<<<g, b>>>(x, n, AddOne())`, `k<256, 4><<<...>>>`) says what the
 * repository uses: its class types and its values replace the defaults, and the class joins
 * the closure. Swept block sizes and arithmetic types keep lscat's choices. */
#include "isolate/extract_impl.h"

#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct call_find {
    CXCursor kernel;
    CXCursor spec;     /* the first specialisation called with the most concrete arguments */
    int best;          /* 2 x its concrete arguments (concrete()) + 1 when float_args() */
    int found, done;   /* done: one with every argument concrete */
};

/* A type a harness can name at file scope: a class not local to a function, spelled without
 * spaces once ", " is written "," ("Traits<float,8>"); "(anonymous namespace)::" is left out
 * (the harness includes kernel.cu: one translation unit). NULL otherwise. */
static char *nameable_type(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Record)
        return NULL;
    CXCursor d = clang_getTypeDeclaration(c);
    for (CXCursor p = clang_getCursorSemanticParent(d); !clang_Cursor_isNull(p) &&
         clang_getCursorKind(p) != CXCursor_TranslationUnit; p = clang_getCursorSemanticParent(p)) {
        enum CXCursorKind k = clang_getCursorKind(p);
        if (k != CXCursor_Namespace && k != CXCursor_StructDecl && k != CXCursor_ClassDecl)
            return NULL; /* local to a function: no name outside it */
    }
    CXString s = clang_getTypeSpelling(c);
    const char *sp = clang_getCString(s) ? clang_getCString(s) : "";
    struct buf b = BUF_INIT;
    static const char anon[] = "(anonymous namespace)::";
    for (const char *q = sp; *q; q++) {
        if (strncmp(q, anon, sizeof anon - 1) == 0) {
            q += sizeof anon - 2;
            continue;
        }
        buf_addch(&b, *q);
        if (q[0] == ',' && q[1] == ' ')
            q++;
    }
    clang_disposeString(s);
    if (!b.len || strchr(b.data, ' ') || strstr(b.data, "(anonymous") || strstr(b.data, "(lambda") ||
        strstr(b.data, "type-parameter")) {
        buf_release(&b);
        return NULL;
    }
    return buf_detach(&b, NULL);
}

/* The spelling of an integer type ("unsigned", "long"; not bool, not char), else NULL: a
 * launch's integer type argument replaces float (keys, hashes, bit masks do not build as float:
 * `%`, `>>`, `unsigned int *` parameters). Caller frees. */
static char *integer_type(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    int ok = (c.kind >= CXType_UShort && c.kind <= CXType_ULongLong) ||
             (c.kind >= CXType_Short && c.kind <= CXType_LongLong);
    if (!ok)
        return NULL;
    CXString s = clang_getTypeSpelling(c);
    const char *sp = clang_getCString(s) ? clang_getCString(s) : "";
    /* one word: tparams lines are split on spaces ("unsigned int" is "unsigned") */
    char *out = !strcmp(sp, "unsigned int") ? xstrdup("unsigned") : strchr(sp, ' ') ? NULL : xstrdup(sp);
    clang_disposeString(s);
    return out;
}

/* How many of specialisation s's arguments are concrete (not a dependent type from an
 * enclosing template's own call); -1 when it has none. */
static int concrete(CXCursor s)
{
    int n = clang_Cursor_getNumTemplateArguments(s), good = 0;
    for (int i = 0; i < n; i++) {
        enum CXTemplateArgumentKind k = clang_Cursor_getTemplateArgumentKind(s, (unsigned)i);
        if (k == CXTemplateArgumentKind_Type) {
            CXType t = clang_Cursor_getTemplateArgumentType(s, (unsigned)i);
            CXString sp = clang_getTypeSpelling(clang_getCanonicalType(t));
            good += t.kind != CXType_Invalid && clang_getCString(sp) &&
                    !strstr(clang_getCString(sp), "type-parameter");
            clang_disposeString(sp);
        } else if (k == CXTemplateArgumentKind_Integral) {
            good++;
        }
    }
    return n > 0 ? good : -1;
}

/* 1 when every arithmetic type argument of s is float, lscat's own choice: of the repository's
 * launches `FFT512_device<double2, double>` and `<float2, float>` the second is taken. */
static int float_args(CXCursor s)
{
    int n = clang_Cursor_getNumTemplateArguments(s);
    for (int i = 0; i < n; i++) {
        if (clang_Cursor_getTemplateArgumentKind(s, (unsigned)i) != CXTemplateArgumentKind_Type)
            continue;
        CXType t = clang_getCanonicalType(clang_Cursor_getTemplateArgumentType(s, (unsigned)i));
        if (t.kind >= CXType_Bool && t.kind <= CXType_LongDouble && t.kind != CXType_Float)
            return 0;
    }
    return 1;
}

static enum CXChildVisitResult call_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct call_find *f = d;
    if (clang_getCursorKind(c) == CXCursor_CallExpr) {
        CXCursor r = clang_getCursorReferenced(c);
        int good = clang_Cursor_isNull(r) ||
                   !clang_equalCursors(clang_getCanonicalCursor(clang_getSpecializedCursorTemplate(r)),
                                       clang_getCanonicalCursor(f->kernel))
                       ? -1 : concrete(r);
        if (good >= 0) /* concreteness first, then float arguments */
            good = 2 * good + float_args(r);
        if (good > f->best) {
            f->spec = r;
            f->best = good;
            f->found = 1;
            if (good == 2 * clang_Cursor_getNumTemplateArguments(r) + 1) {
                f->done = 1; /* no better one */
                return CXChildVisit_Break;
            }
        }
    }
    return CXChildVisit_Recurse;
}

/* The first specialisation of kernel k that code of the tree calls or launches. */
static int find_call(CXCursor *spec, struct ctx *x, CXCursor k)
{
    struct call_find f = { k, clang_getNullCursor(), 1, 0, 0 };
    for (size_t i = 0; i < x->ntops && !f.done; i++) {
        enum CXCursorKind kind = clang_getCursorKind(x->tops[i].c);
        if (kind == CXCursor_Namespace || kind == CXCursor_LinkageSpec)
            continue; /* their declarations are tops of their own */
        clang_visitChildren(x->tops[i].c, call_visit, &f);
    }
    *spec = f.spec;
    return f.found;
}

/* One "kind name value" line of tparams, with argument i of spec where it says more. */
static void rewrite_line(struct buf *out, const char *line, CXCursor spec, unsigned i,
                         struct closure *cl, int *changed)
{
    char kind[16] = "", name[128] = "", value[128] = "";
    if (sscanf(line, "%15s %127s %127s", kind, name, value) != 3 || strcmp(kind, "block") == 0 ||
        (int)i >= clang_Cursor_getNumTemplateArguments(spec)) {
        buf_addf(out, "%s\n", line);
        return;
    }
    enum CXTemplateArgumentKind ak = clang_Cursor_getTemplateArgumentKind(spec, i);
    if (strcmp(kind, "type") == 0 && ak == CXTemplateArgumentKind_Type) {
        CXType t = clang_Cursor_getTemplateArgumentType(spec, i);
        char *sp = nameable_type(t);
        CXType ct = clang_getCanonicalType(t);
        char *it = sp ? NULL : integer_type(t);
        if (it && strcmp(value, "float") == 0) {
            buf_addf(out, "type %s %s\n", name, it);
            *changed = 1;
            free(it);
            return;
        }
        free(it);
        if (!sp && *changed && ct.kind >= CXType_Bool && ct.kind <= CXType_LongDouble) {
            /* beside a class argument of the same launch, its arithmetic types too: float
             * next to the launch's double2 would not build (make_T2<double2, float>) */
            CXString a = clang_getTypeSpelling(ct);
            buf_addf(out, "type %s %s\n", name, clang_getCString(a));
            clang_disposeString(a);
            return;
        }
        if (sp && strlen(sp) < 128) {
            buf_addf(out, "type %s %s\n", name, sp);
            closure_push_decl(cl, clang_getTypeDeclaration(clang_getCanonicalType(t)));
            *changed = 1;
        } else {
            buf_addf(out, "%s\n", line);
        }
        free(sp);
    } else if (strcmp(kind, "value") == 0 && ak == CXTemplateArgumentKind_Integral) {
        long long v = clang_Cursor_getTemplateArgumentValue(spec, i);
        char text[160];
        const char *cast = value[0] == '(' ? strchr(value, ')') : NULL; /* "(Enum)0" */
        if (cast)
            snprintf(text, sizeof text, "%.*s%lld", (int)(cast + 1 - value), value, v);
        else if (strcmp(value, "false") == 0 || strcmp(value, "true") == 0)
            snprintf(text, sizeof text, "%s", v ? "true" : "false");
        else
            snprintf(text, sizeof text, "%lld", v);
        buf_addf(out, "value %s %s\n", name, text);
        *changed |= strcmp(text, value) != 0;
    } else {
        buf_addf(out, "%s\n", line);
    }
}

/* ---- launches inside host function templates (`spmv<floatType, texReader><<<...>>>` in
 * `template <class floatType, class texReader> void csrTest(...)`, or `k<<<...>>>(payoff)` with
 * `const Payoff &payoff` a parameter of `template <class Payoff> void do_run(...)`): the
 * template's own argument, from the tree's calls of that template, followed up to
 * TINST_HOST_DEPTH templates. */
#define TINST_HOST_DEPTH 3

struct dep_find {
    CXCursor target; /* the template called */
    CXCursor holder; /* the function template being searched */
    CXCursor call;   /* a call of target inside holder */
    int found;
};

static int names_target(CXCursor r, CXCursor target)
{
    if (clang_Cursor_isNull(r))
        return 0;
    CXCursor canon = clang_getCanonicalCursor(target); /* a forward declaration or the definition */
    if (clang_equalCursors(clang_getCanonicalCursor(r), canon))
        return 1;
    if (clang_getCursorKind(r) == CXCursor_OverloadedDeclRef)
        for (unsigned i = 0; i < clang_getNumOverloadedDecls(r); i++)
            if (clang_equalCursors(clang_getCanonicalCursor(clang_getOverloadedDecl(r, i)), canon))
                return 1;
    return 0;
}

static enum CXChildVisitResult callee_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct dep_find *f = d;
    if (names_target(clang_getCursorReferenced(c), f->target) ||
        (clang_getCursorKind(c) == CXCursor_OverloadedDeclRef && names_target(c, f->target))) {
        f->found = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

static enum CXChildVisitResult first_child(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    *(CXCursor *)d = c;
    return CXChildVisit_Break;
}

static enum CXChildVisitResult dep_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct dep_find *f = d;
    if (clang_getCursorKind(c) != CXCursor_CallExpr)
        return CXChildVisit_Recurse;
    CXCursor callee = clang_getNullCursor();
    clang_visitChildren(c, first_child, &callee);
    if (names_target(clang_getCursorReferenced(c), f->target) ||
        (!clang_Cursor_isNull(callee) &&
         (names_target(clang_getCursorReferenced(callee), f->target) ||
          (clang_visitChildren(callee, callee_visit, f), f->found)))) {
        f->call = c;
        f->found = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* The type under references and pointers (`const T *` -> `const T`). */
static CXType pointee(CXType t)
{
    CXType c = clang_getCanonicalType(clang_getNonReferenceType(t));
    for (int i = 0; i < 4 && c.kind == CXType_Pointer; i++)
        c = clang_getCanonicalType(clang_getPointeeType(c));
    return c;
}

/* "type-parameter-0-J" (after const, & and *) -> J; -1 otherwise. */
static int dependent_index(CXType t)
{
    CXType c = pointee(t);
    CXString s = clang_getTypeSpelling(c);
    const char *sp = clang_getCString(s) ? clang_getCString(s) : "";
    if (strncmp(sp, "const ", 6) == 0)
        sp += 6;
    int depth = -1, idx = -1, n = 0;
    if (sscanf(sp, "type-parameter-%d-%d%n", &depth, &idx, &n) != 2 || sp[n] || depth != 0)
        idx = -1;
    clang_disposeString(s);
    return idx;
}

/* The name of template parameter i of template t, or NULL. Caller frees. */
struct tp_find {
    int want, at;
    char *name;
};

static enum CXChildVisitResult tp_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct tp_find *f = d;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k != CXCursor_TemplateTypeParameter && k != CXCursor_NonTypeTemplateParameter &&
        k != CXCursor_TemplateTemplateParameter)
        return CXChildVisit_Continue;
    if (f->at++ == f->want) {
        CXString s = clang_getCursorSpelling(c);
        f->name = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
        clang_disposeString(s);
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

static int holder_param_named(CXCursor holder, const char *name)
{
    for (int i = 0; i < 64; i++) {
        struct tp_find f = { i, 0, NULL };
        clang_visitChildren(holder, tp_visit, &f);
        if (!f.name)
            return -1;
        int same = strcmp(f.name, name) == 0;
        free(f.name);
        if (same)
            return i;
    }
    return -1;
}

/* Explicit argument idx of the call's `name<a, b>` when it is one token, or NULL. */
static char *explicit_arg(CXCursor call, CXCursor target, int idx)
{
    CXString ts = clang_getCursorSpelling(target);
    const char *tname = clang_getCString(ts) ? clang_getCString(ts) : "";
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(call);
    CXToken *tok = NULL;
    unsigned n = 0, i = 0;
    clang_tokenize(tu, clang_getCursorExtent(call), &tok, &n);
    char **sp = xcalloc(n + 1, sizeof *sp);
    for (unsigned j = 0; j < n; j++) {
        CXString a = clang_getTokenSpelling(tu, tok[j]);
        sp[j] = xstrdup(clang_getCString(a) ? clang_getCString(a) : "");
        clang_disposeString(a);
    }
    while (i + 1 < n && !(strcmp(sp[i], tname) == 0 && strcmp(sp[i + 1], "<") == 0))
        i++;
    char *found = NULL, *first = NULL;
    int arg = 0, depth = 0, count = 0;
    for (i += 2; i < n && depth >= 0; i++) {
        const char *t = sp[i];
        int close = !strcmp(t, ">") || !strcmp(t, ">>") || !strcmp(t, ")") || !strcmp(t, "]");
        if (depth == 0 && (!strcmp(t, ",") || !strcmp(t, ">") || !strcmp(t, ">>"))) {
            if (arg == idx && count == 1)
                found = xstrdup(first);
            if (strcmp(t, ","))
                break;
            arg++, count = 0;
            continue;
        }
        if (!strcmp(t, "<") || !strcmp(t, "(") || !strcmp(t, "["))
            depth++;
        else if (close)
            depth -= strcmp(t, ">>") ? 1 : 2;
        if (count++ == 0)
            first = sp[i];
    }
    for (unsigned j = 0; j < n; j++)
        free(sp[j]);
    free(sp);
    clang_disposeTokens(tu, tok, n);
    clang_disposeString(ts);
    return found;
}

/* The function parameter of template t whose type is its template parameter idx, or -1. */
struct fp_find {
    int idx, at, param;
    int ptr; /* the parameter is a pointer to it (`K *keys`) */
};

static enum CXChildVisitResult fp_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct fp_find *f = d;
    if (clang_getCursorKind(c) != CXCursor_ParmDecl)
        return CXChildVisit_Continue;
    if (f->param < 0 && dependent_index(clang_getCursorType(c)) == f->idx) {
        f->param = f->at;
        f->ptr = clang_getCanonicalType(clang_getNonReferenceType(clang_getCursorType(c))).kind ==
                 CXType_Pointer;
    }
    f->at++;
    return CXChildVisit_Continue;
}

static int resolve_param(CXType *out, int *via_ptr, struct ctx *x, CXCursor t, int idx,
                         int depth);

/* Template parameter idx of target, as the dependent call inside f->holder gives it; *via_ptr
 * set when deduced through a pointer argument. */
static int through_holder(CXType *out, int *via_ptr, struct ctx *x, const struct dep_find *f,
                          int idx, int depth)
{
    char *name = explicit_arg(f->call, f->target, idx);
    int j = name ? holder_param_named(f->holder, name) : -1;
    free(name);
    if (j < 0) { /* deduced from an argument: a parameter of type T, given the holder's own */
        struct fp_find p = { idx, 0, -1, 0 };
        clang_visitChildren(f->target, fp_visit, &p);
        if (p.param < 0 || p.param >= clang_Cursor_getNumArguments(f->call))
            return 0;
        *via_ptr |= p.ptr;
        CXType at = clang_getCursorType(clang_Cursor_getArgument(f->call, (unsigned)p.param));
        j = dependent_index(at);
        if (j < 0) {
            CXType c = pointee(at);
            char *it = integer_type(c);
            free(it);
            if (c.kind != CXType_Record && !it)
                return 0;
            *out = c;
            return 1;
        }
    }
    return resolve_param(out, via_ptr, x, f->holder, j, depth - 1);
}

/* The type the tree gives template parameter idx of t: a call with it concrete, else through
 * the function templates that call t. 1 when found. */
static int resolve_param(CXType *out, int *via_ptr, struct ctx *x, CXCursor t, int idx,
                         int depth)
{
    CXCursor spec;
    if (find_call(&spec, x, t) && idx < clang_Cursor_getNumTemplateArguments(spec) &&
        clang_Cursor_getTemplateArgumentKind(spec, (unsigned)idx) == CXTemplateArgumentKind_Type &&
        dependent_index(clang_Cursor_getTemplateArgumentType(spec, (unsigned)idx)) < 0) {
        *out = clang_getCanonicalType(clang_Cursor_getTemplateArgumentType(spec, (unsigned)idx));
        return out->kind != CXType_Invalid;
    }
    for (size_t i = 0; depth > 0 && i < x->ntops; i++) {
        if (clang_getCursorKind(x->tops[i].c) != CXCursor_FunctionTemplate)
            continue;
        struct dep_find f = { t, x->tops[i].c, clang_getNullCursor(), 0 };
        clang_visitChildren(x->tops[i].c, dep_visit, &f);
        int ptr = *via_ptr;
        if (f.found && !clang_Cursor_isNull(f.call) && through_holder(out, &ptr, x, &f, idx, depth)) {
            *via_ptr = ptr;
            return 1;
        }
    }
    return 0;
}

/* Type parameters still at float whose tree instantiation is a class, found through host
 * function templates. */
static void from_host_templates(struct buf *tparams, struct ctx *x, CXCursor k,
                                struct closure *cl)
{
    struct buf out = BUF_INIT;
    int i = 0;
    for (const char *p = tparams->data; p && *p; i++) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        char kind[16] = "", name[128] = "", value[128] = "";
        CXType t;
        char *sp = NULL;
        int ptr = 0; /* through a pointer argument only an integer type is taken (keys): a
                      * `floatX *` buffer of the tree's own precision (__nv_bfloat16) keeps float */
        if (sscanf(line, "%15s %127s %127s", kind, name, value) == 3 && !strcmp(kind, "type") &&
            !strcmp(value, "float") && resolve_param(&t, &ptr, x, k, i, TINST_HOST_DEPTH) &&
            ((sp = integer_type(t)) || (!ptr && (sp = nameable_type(t)))) && strlen(sp) < 128) {
            buf_addf(&out, "type %s %s\n", name, sp);
            closure_push_decl(cl, clang_getTypeDeclaration(clang_getCanonicalType(t)));
        } else {
            buf_addf(&out, "%s\n", line);
        }
        free(sp);
        free(line);
        p = nl ? nl + 1 : NULL;
    }
    buf_release(tparams);
    *tparams = out;
}

int tinst_from_calls(struct buf *tparams, struct ctx *x, CXCursor k, struct closure *cl)
{
    if (clang_getCursorKind(k) == CXCursor_FunctionTemplate && strstr(tparams->data ? tparams->data : "", " float\n"))
        from_host_templates(tparams, x, k, cl);
    CXCursor spec;
    if (clang_getCursorKind(k) != CXCursor_FunctionTemplate || !tparams->len ||
        !find_call(&spec, x, k))
        return 0;
    struct buf out = BUF_INIT;
    int changed = 0;
    unsigned i = 0;
    for (const char *p = tparams->data; *p; i++) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        rewrite_line(&out, line, spec, i, cl, &changed);
        free(line);
        p = nl ? nl + 1 : p + strlen(p);
    }
    buf_release(tparams);
    *tparams = out;
    return changed;
}

char *tinst_explicit_args(CXCursor k)
{
    int n = clang_getCursorKind(k) == CXCursor_FunctionDecl &&
            !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(k))
                ? clang_Cursor_getNumTemplateArguments(k) : -1;
    if (n <= 0)
        return NULL;
    struct buf b = BUF_INIT;
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        enum CXTemplateArgumentKind ak = clang_Cursor_getTemplateArgumentKind(k, (unsigned)i);
        buf_adds(&b, i ? ", " : "<");
        if (ak == CXTemplateArgumentKind_Integral) {
            buf_addf(&b, "%lld", clang_Cursor_getTemplateArgumentValue(k, (unsigned)i));
            continue;
        }
        CXType t = clang_getCanonicalType(clang_Cursor_getTemplateArgumentType(k, (unsigned)i));
        char *sp = ak == CXTemplateArgumentKind_Type ? nameable_type(t) : NULL;
        if (!sp && ak == CXTemplateArgumentKind_Type && t.kind >= CXType_Bool &&
            t.kind <= CXType_LongDouble) {
            CXString a = clang_getTypeSpelling(t);
            sp = xstrdup(clang_getCString(a));
            clang_disposeString(a);
        }
        ok = sp != NULL;
        buf_adds(&b, sp ? sp : "");
        free(sp);
    }
    buf_addch(&b, '>');
    if (!ok) {
        buf_release(&b);
        return NULL;
    }
    return buf_detach(&b, NULL);
}
