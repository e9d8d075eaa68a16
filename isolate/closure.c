/* The closure of one kernel or one looked-up declaration: every declaration, specialisation,
 * using-directive and macro of the tree it needs, found by following references from cursor to
 * cursor; what lies outside the tree is kept only as the system file that declared it. */
#include "isolate/extract_impl.h"

#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has_unit(struct closure *cl, int idx);
static void close_work(struct closure *cl);

void closure_init(struct closure *cl, struct ctx *x, const char *have)
{
    memset(cl, 0, sizeof *cl);
    cl->x = x;
    cl->have = have;
    buf_init(&cl->libc_includes, 0);
    cl->macro_used = xcalloc(x->nmacros + 1, 1);
}

void closure_release(struct closure *cl)
{
    free(cl->units);
    free(cl->macro_used);
    free(cl->sysfiles);
    free(cl->work);
    buf_release(&cl->libc_includes);
}

static void add_sysfile(struct closure *cl, CXFile f)
{
    if (!f)
        return;
    for (size_t i = 0; i < cl->nsys; i++)
        if (cl->sysfiles[i] == f)
            return;
    XGROW(cl->sysfiles, cl->nsys + 1, cl->sys_cap);
    cl->sysfiles[cl->nsys++] = f;
}

static int top_index(struct ctx *x, CXCursor c)
{
    for (size_t i = 0; i < x->ntops; i++)
        if (clang_equalCursors(x->tops[i].c, c))
            return (int)i;
    return -1;
}

/* The file- or namespace-scope declaration that lexically holds `c`. */
static CXCursor unit_of(CXCursor c)
{
    for (int depth = 0; depth < 64; depth++) {
        CXCursor p = clang_getCursorLexicalParent(c);
        enum CXCursorKind pk = clang_getCursorKind(p);
        if (clang_Cursor_isNull(p) || clang_isInvalid(pk) || pk == CXCursor_TranslationUnit ||
            pk == CXCursor_Namespace || pk == CXCursor_LinkageSpec || pk == CXCursor_UnexposedDecl)
            return c;
        c = p;
    }
    return c;
}

/* Device-side C library functions are declared by clang's implicit CUDA headers, so the tree's
 * own #include of them is not what declared them here; nvcc needs the standard header. */
static void libc_header(struct closure *cl, CXCursor r)
{
    static const char *const map[][2] = {
        { "printf", "cstdio" }, { "malloc", "cstdlib" }, { "free", "cstdlib" },
        { "memcpy", "cstring" }, { "memset", "cstring" }, { "__assert_fail", "cassert" },
        { "__assertfail", "cassert" }, { NULL, NULL } };
    enum CXCursorKind k = clang_getCursorKind(r);
    if (k != CXCursor_FunctionDecl && k != CXCursor_TypedefDecl)
        return;
    CXString s = clang_getCursorSpelling(r);
    const char *name = clang_getCString(s), *header = NULL;
    for (int i = 0; name && map[i][0]; i++)
        if (strcmp(name, map[i][0]) == 0)
            header = map[i][1];
    /* uint32_t, int64_t, uintptr_t, ...: their typedefs live in glibc's internal bits/ headers */
    if (k == CXCursor_TypedefDecl && name && (strncmp(name, "int", 3) == 0 ||
        strncmp(name, "uint", 4) == 0) && strlen(name) > 2 && !strcmp(name + strlen(name) - 2, "_t"))
        header = "cstdint";
    if (k == CXCursor_TypedefDecl && name && (!strcmp(name, "size_t") || !strcmp(name, "ptrdiff_t")))
        header = "cstddef";
    if (header) {
        char line[64];
        snprintf(line, sizeof line, "#include <%s>\n", header);
        if (!strstr(cl->libc_includes.data, line))
            buf_adds(&cl->libc_includes, line);
    }
    clang_disposeString(s);
}

void closure_push_decl(struct closure *cl, CXCursor r)
{
    if (clang_Cursor_isNull(r) || !clang_isDeclaration(clang_getCursorKind(r)))
        return;
    CXCursor t = clang_getSpecializedCursorTemplate(r);
    if (!clang_Cursor_isNull(t))
        r = t;
    CXCursor def = clang_getCursorDefinition(r);
    if (!clang_Cursor_isNull(def))
        r = def;
    enum CXCursorKind k = clang_getCursorKind(r);
    if (k == CXCursor_ParmDecl || k == CXCursor_TemplateTypeParameter ||
        k == CXCursor_NonTypeTemplateParameter || k == CXCursor_Namespace)
        return;
    if (k == CXCursor_VarDecl && !clang_Cursor_hasVarDeclGlobalStorage(r))
        return;
    CXFile f = extract_location_file(r, NULL);
    if (!f || !extract_in_tree(cl->x, f)) {
        libc_header(cl, r);
        add_sysfile(cl, f);
        return;
    }
    XGROW(cl->work, cl->nwork + 1, cl->work_cap);
    cl->work[cl->nwork++] = r;
}

static void push_alias(struct closure *cl, CXCursor ref)
{
    CXString s = clang_getCursorSpelling(ref);
    const char *name = clang_getCString(s);
    for (size_t i = 0; name && i < cl->x->ntops; i++) {
        CXCursor t = cl->x->tops[i].c;
        if (clang_getCursorKind(t) != CXCursor_NamespaceAlias)
            continue;
        CXString ts = clang_getCursorSpelling(t);
        if (clang_getCString(ts) && strcmp(clang_getCString(ts), name) == 0) {
            XGROW(cl->work, cl->nwork + 1, cl->work_cap);
            cl->work[cl->nwork++] = t;
        }
        clang_disposeString(ts);
    }
    clang_disposeString(s);
}

static enum CXChildVisitResult refs_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct closure *cl = d;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_OverloadedDeclRef) {
        unsigned n = clang_getNumOverloadedDecls(c);
        for (unsigned i = 0; i < n; i++)
            closure_push_decl(cl, clang_getOverloadedDecl(c, i));
    }
    if (k == CXCursor_NamespaceRef) /* `cg::` through `namespace cg = cooperative_groups;` */
        push_alias(cl, c);
    if (k == CXCursor_VarDecl && clang_getCursorType(c).kind == CXType_IncompleteArray &&
        extract_has_child_kind(c, CXCursor_CUDASharedAttr))
        cl->dynshared = 1;
    CXCursor r = clang_getCursorReferenced(c);
    if (!clang_Cursor_isNull(r) && !clang_equalCursors(r, c))
        closure_push_decl(cl, r);
    CXType ty = clang_getCursorType(c);
    if (ty.kind != CXType_Invalid && (k == CXCursor_VarDecl || k == CXCursor_FieldDecl))
        closure_push_decl(cl, clang_getTypeDeclaration(clang_getPointeeType(ty)));
    return CXChildVisit_Recurse;
}

static int has_unit(struct closure *cl, int idx)
{
    for (size_t i = 0; i < cl->nunits; i++)
        if (cl->units[i] == idx)
            return 1;
    return 0;
}

/* Names `__launch_bounds__(W, CTMIN(SHM_SIZE / sizeof(T), 8))` uses: libclang does not visit
 * attribute arguments, so each identifier in them is looked up among the namespace-scope
 * variables of the translation unit (the kernel's namespace first). */
static void push_named_var(struct closure *cl, const char *name, CXCursor near)
{
    CXCursor best = extract_var_by_name(cl->x, name, near);
    if (!clang_Cursor_isNull(best))
        closure_push_decl(cl, best);
}

static void head_refs(struct closure *cl, CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k != CXCursor_FunctionDecl && k != CXCursor_FunctionTemplate)
        return;
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(c);
    CXToken *tok = NULL;
    unsigned n = 0;
    clang_tokenize(tu, clang_getCursorExtent(c), &tok, &n);
    int depth = -1; /* > 0: inside __launch_bounds__( ... ) */
    for (unsigned i = 0; i < n; i++) {
        CXString sp = clang_getTokenSpelling(tu, tok[i]);
        const char *t = clang_getCString(sp) ? clang_getCString(sp) : "";
        int stop = depth < 0 && strcmp(t, "{") == 0;
        if (depth < 0 && strcmp(t, "__launch_bounds__") == 0)
            depth = 0;
        else if (depth >= 0 && strcmp(t, "(") == 0)
            depth++;
        else if (depth > 0 && strcmp(t, ")") == 0)
            depth = depth == 1 ? -1 : depth - 1;
        else if (depth > 0 && clang_getTokenKind(tok[i]) == CXToken_Identifier)
            push_named_var(cl, t, c);
        clang_disposeString(sp);
        if (stop)
            break;
    }
    clang_disposeTokens(tu, tok, n);
}

static void add_unit(struct closure *cl, int idx)
{
    XGROW(cl->units, cl->nunits + 1, cl->units_cap);
    cl->units[cl->nunits++] = idx;
    clang_visitChildren(cl->x->tops[idx].c, refs_visit, cl);
    head_refs(cl, cl->x->tops[idx].c);
}

/* Explicit and partial specialisations of a class or function template the closure uses
 * (template <> struct vec3<float> { ... };): the primary template alone is not enough. */
static void push_specializations(struct closure *cl)
{
    struct ctx *x = cl->x;
    for (size_t i = 0; i < x->ntops; i++) {
        enum CXCursorKind k = clang_getCursorKind(x->tops[i].c);
        if (k != CXCursor_StructDecl && k != CXCursor_ClassDecl &&
            k != CXCursor_ClassTemplatePartialSpecialization && k != CXCursor_FunctionDecl)
            continue; /* FunctionDecl: template <> float cast<float>(float) { ... } */
        CXCursor t = clang_getSpecializedCursorTemplate(x->tops[i].c);
        if (clang_Cursor_isNull(t) || has_unit(cl, (int)i))
            continue;
        int ti = top_index(x, unit_of(t));
        if (ti >= 0 && has_unit(cl, ti)) {
            XGROW(cl->work, cl->nwork + 1, cl->work_cap);
            cl->work[cl->nwork++] = x->tops[i].c;
        }
    }
}

static void close_work(struct closure *cl)
{
    while (cl->nwork > 0) {
        CXCursor d = cl->work[--cl->nwork];
        int idx = top_index(cl->x, unit_of(d));
        if (idx >= 0 && !has_unit(cl, idx))
            add_unit(cl, idx);
        /* A forward declaration earlier in the TU (prototype, struct X;) keeps its place. */
        CXCursor canon = clang_getCanonicalCursor(d);
        if (!clang_equalCursors(canon, d)) {
            int ci = top_index(cl->x, unit_of(canon));
            if (ci >= 0 && !has_unit(cl, ci))
                add_unit(cl, ci);
        }
        /* An out-of-line member definition needs its class. */
        CXCursor sem = clang_getCursorSemanticParent(d);
        enum CXCursorKind sk = clang_getCursorKind(sem);
        if (sk == CXCursor_StructDecl || sk == CXCursor_ClassDecl || sk == CXCursor_ClassTemplate)
            closure_push_decl(cl, sem);
    }
}

static enum CXChildVisitResult namespace_ref(CXCursor c, CXCursor p, void *d)
{
    (void)p;
    if (clang_getCursorKind(c) != CXCursor_NamespaceRef)
        return CXChildVisit_Continue;
    *(CXCursor *)d = clang_getCursorReferenced(c);
    return CXChildVisit_Break;
}

/* `using namespace std;` and the like at file scope: kept when they name a namespace outside
 * the tree (the kernel's unqualified names may rely on them) or one the closure emits. */
static void close_usings(struct closure *cl)
{
    struct ctx *x = cl->x;
    for (size_t i = 0; i < x->ntops; i++) {
        enum CXCursorKind k = clang_getCursorKind(x->tops[i].c);
        if (k != CXCursor_UsingDirective && k != CXCursor_UsingDeclaration)
            continue;
        CXCursor ns = clang_getNullCursor();
        clang_visitChildren(x->tops[i].c, namespace_ref, &ns);
        CXFile f = clang_Cursor_isNull(ns) ? NULL : extract_location_file(ns, NULL);
        int keep = f && !extract_in_tree(x, f);
        for (size_t u = 0; !keep && f && u < cl->nunits; u++)
            for (CXCursor p = clang_getCursorLexicalParent(x->tops[cl->units[u]].c);
                 clang_getCursorKind(p) == CXCursor_Namespace; p = clang_getCursorLexicalParent(p))
                if (clang_equalCursors(clang_getCanonicalCursor(p), clang_getCanonicalCursor(ns)))
                    keep = 1;
        if (keep && !has_unit(cl, (int)i)) {
            add_unit(cl, (int)i);
            if (!extract_in_tree(x, f))
                add_sysfile(cl, f);
        }
    }
}

static void use_macro_tokens(struct closure *cl, int mi)
{
    struct ctx *x = cl->x;
    CXToken *toks = NULL;
    unsigned n = 0;
    clang_tokenize(x->tu, clang_getCursorExtent(x->macros[mi].c), &toks, &n);
    for (unsigned i = 1; i < n; i++) {
        if (clang_getTokenKind(toks[i]) != CXToken_Identifier)
            continue;
        CXString s = clang_getTokenSpelling(x->tu, toks[i]);
        int other = extract_macro_by_name(x, clang_getCString(s));
        clang_disposeString(s);
        if (other >= 0 && other != mi)
            closure_use_macro(cl, other);
    }
    clang_disposeTokens(x->tu, toks, n);
}

void closure_use_macro(struct closure *cl, int mi)
{
    struct macro_def *m = &cl->x->macros[mi];
    if (cl->macro_used[mi])
        return;
    cl->macro_used[mi] = 1;
    if (!m->in_tree) {
        add_sysfile(cl, m->file);
        return;
    }
    use_macro_tokens(cl, mi);
}

/* Macros a unit only tests (`#ifdef FAST`, `#if defined(FAST)` inside a body) are not
 * expansions, but the copied text needs them to take the same branch. */
static void use_tested_macros(struct closure *cl, int unit)
{
    struct ctx *x = cl->x;
    CXToken *toks = NULL;
    unsigned n = 0;
    clang_tokenize(x->tu, clang_getCursorExtent(x->tops[unit].c), &toks, &n);
    int after_test = 0;
    for (unsigned i = 0; i < n; i++) {
        CXString s = clang_getTokenSpelling(x->tu, toks[i]);
        const char *t = clang_getCString(s) ? clang_getCString(s) : "";
        if (after_test && clang_getTokenKind(toks[i]) == CXToken_Identifier) {
            int mi = extract_macro_by_name(x, t);
            if (mi >= 0 && x->macros[mi].in_tree)
                closure_use_macro(cl, mi);
        }
        if (!strcmp(t, "ifdef") || !strcmp(t, "ifndef") || !strcmp(t, "defined"))
            after_test = 1;
        else if (strcmp(t, "(") != 0)
            after_test = 0;
        clang_disposeString(s);
    }
    clang_disposeTokens(x->tu, toks, n);
}

static void close_macros(struct closure *cl)
{
    struct ctx *x = cl->x;
    for (size_t u = 0; u < x->nuses; u++) {
        if (x->uses[u].def < 0)
            continue;
        for (size_t i = 0; i < cl->nunits; i++) {
            struct top_decl *t = &x->tops[cl->units[i]];
            if (t->file == x->uses[u].file && x->uses[u].offset >= t->start &&
                x->uses[u].offset < t->end) {
                closure_use_macro(cl, x->uses[u].def);
                break;
            }
        }
    }
    for (size_t i = 0; i < cl->nunits; i++)
        use_tested_macros(cl, cl->units[i]);
}

void closure_complete(struct closure *cl)
{
    for (int round = 0; round < 8 && cl->nwork > 0; round++) {
        close_work(cl);
        push_specializations(cl);
    }
    close_usings(cl);
    close_macros(cl);
}
