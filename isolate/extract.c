/* Kernel discovery and closure with libclang's C API (LLVM 22). One translation unit is parsed
 * as CUDA with a detailed preprocessing record; every __global__ definition inside the tree is
 * cut out with everything it references inside the tree, emitted as the original source text in
 * translation-unit order: system includes, macros, then declarations (wrapped in their
 * namespaces). Nothing from outside the tree is copied: outside declarations become the
 * #include directive of the tree that brought them in. */
#include "isolate/extract.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "isolate/indexing.h"
#include "isolate/kparams.h"
#include "isolate/params.h"
#include "common/record.h"
#include "isolate/srctext.h"

#include <clang-c/Index.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct file_ent {
    CXFile file;
    int in_tree;
    int allowed_system; /* outside the tree, in a system/CUDA folder */
    char *path;         /* resolved, absolute */
};

struct top_decl {   /* a declaration at file or namespace scope, in visit order */
    CXCursor c;
    CXFile file;
    unsigned start, end;
};

struct macro_def {
    CXCursor c;
    char *name;
    CXFile file;
    unsigned start, end;
    int in_tree;
};

struct macro_use {
    CXFile file;
    unsigned offset;
    int def; /* index into macros, -1 when unknown */
};

struct include_dir { /* an #include written in a file of the tree */
    CXFile file, included;
    char *text;
    char *spelling;
    int refused;
};

struct ctx {
    const struct extract_options *o;
    size_t root_len;
    CXTranslationUnit tu;
    struct buf *out;
    struct file_ent *files;
    size_t nfiles, files_cap;
    struct top_decl *tops;
    size_t ntops, tops_cap;
    struct macro_def *macros;
    size_t nmacros, macros_cap;
    struct macro_use *uses;
    size_t nuses, uses_cap;
    struct include_dir *incs;
    size_t nincs, incs_cap;
    CXFile *inc_from, *inc_to; /* included file -> the file that included it first */
    size_t ninc_edges, inc_edges_cap;
    CXCursor *kernels;
    size_t nkernels, kernels_cap;
    CXCursor *kernel_decls; /* declarations of kernels without a definition here */
    size_t nkdecls, kdecls_cap;
};

/* ------------------------------------------------------------------ files and locations */

static struct file_ent *file_info(struct ctx *x, CXFile f)
{
    for (size_t i = 0; i < x->nfiles; i++)
        if (x->files[i].file == f || clang_File_isEqual(x->files[i].file, f))
            return &x->files[i];
    XGROW(x->files, x->nfiles + 1, x->files_cap);
    struct file_ent *e = &x->files[x->nfiles++];
    memset(e, 0, sizeof *e);
    e->file = f;
    CXString s = clang_File_tryGetRealPathName(f);
    const char *p = clang_getCString(s);
    if (!p || !*p) {
        clang_disposeString(s);
        s = clang_getFileName(f);
        p = clang_getCString(s);
    }
    char *real = p ? realpath(p, NULL) : NULL;
    e->path = real ? real : xstrdup(p ? p : "");
    clang_disposeString(s);
    e->in_tree = strncmp(e->path, x->o->root, x->root_len) == 0 && e->path[x->root_len] == '/';
    e->allowed_system = !e->in_tree && srctext_allowed_system(x->o->cuda_home, e->path);
    return e;
}

static int in_tree(struct ctx *x, CXFile f)
{
    return f && file_info(x, f)->in_tree;
}

static const char *rel_path(struct ctx *x, CXFile f)
{
    struct file_ent *e = file_info(x, f);
    return e->in_tree ? e->path + x->root_len + 1 : e->path;
}

/* The cursor's extent as expansion offsets in one file; 0 when it spans files or has none. */
static int extent_of(CXCursor c, CXFile *file, unsigned *start, unsigned *end)
{
    CXSourceRange r = clang_getCursorExtent(c);
    CXFile f1 = NULL, f2 = NULL;
    unsigned l, col;
    clang_getExpansionLocation(clang_getRangeStart(r), &f1, &l, &col, start);
    clang_getExpansionLocation(clang_getRangeEnd(r), &f2, &l, &col, end);
    *file = f1;
    return f1 && f1 == f2 && *end >= *start;
}

static CXFile location_file(CXCursor c, unsigned *line)
{
    CXFile f = NULL;
    unsigned l = 0, col, off;
    clang_getExpansionLocation(clang_getCursorLocation(c), &f, &l, &col, &off);
    if (line)
        *line = l;
    return f;
}

/* Source text of [start, end) of a file of the translation unit. */
static void add_text(struct buf *b, struct ctx *x, CXFile f, unsigned start, unsigned end)
{
    size_t size = 0;
    const char *text = clang_getFileContents(x->tu, f, &size);
    if (!text || end > size || start > end)
        return;
    buf_add(b, text + start, end - start);
}

static int has_child_kind(CXCursor c, enum CXCursorKind kind);

struct child_kind_arg {
    enum CXCursorKind kind;
    int found;
};

static enum CXChildVisitResult child_kind_visit(CXCursor c, CXCursor p, void *d)
{
    (void)p;
    struct child_kind_arg *a = d;
    if (clang_getCursorKind(c) == a->kind) {
        a->found = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

static int has_child_kind(CXCursor c, enum CXCursorKind kind)
{
    struct child_kind_arg a = { kind, 0 };
    clang_visitChildren(c, child_kind_visit, &a);
    return a.found;
}

/* ------------------------------------------------------------------ first pass: the TU */

static void note(struct ctx *x, const char *cls, const char *msg)
{
    record_begin(x->out, "note", 2);
    record_field_str(x->out, "class", cls);
    record_field_str(x->out, "message", msg);
}

static void collect_include(struct ctx *x, CXCursor c, CXFile f)
{
    XGROW(x->incs, x->nincs + 1, x->incs_cap);
    struct include_dir *d = &x->incs[x->nincs++];
    memset(d, 0, sizeof *d);
    d->file = f;
    d->included = clang_getIncludedFile(c);
    CXString s = clang_getCursorSpelling(c);
    d->spelling = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    CXFile ef;
    unsigned a, b;
    struct buf t = BUF_INIT;
    if (extent_of(c, &ef, &a, &b))
        add_text(&t, x, ef, a, b);
    d->text = buf_detach(&t, NULL);
    int outside = d->included && !in_tree(x, d->included) &&
                  !file_info(x, d->included)->allowed_system;
    if (d->spelling[0] == '/' || outside ||
        (strstr(d->spelling, "..") && d->included && !in_tree(x, d->included))) {
        d->refused = 1;
        char *m = xasprintf("%s: #include \"%s\" names a file outside the repository tree%s%s "
                            "(refused: nothing outside the tree is included)",
                            rel_path(x, f), d->spelling, d->included ? ": " : "",
                            d->included ? file_info(x, d->included)->path : "");
        note(x, "include_refused", m);
        free(m);
    }
}

static void collect_macro(struct ctx *x, CXCursor c, CXFile f, unsigned a, unsigned b)
{
    XGROW(x->macros, x->nmacros + 1, x->macros_cap);
    struct macro_def *m = &x->macros[x->nmacros++];
    CXString s = clang_getCursorSpelling(c);
    m->c = c;
    m->name = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    m->file = f;
    m->start = a;
    m->end = b;
    m->in_tree = in_tree(x, f);
}

static int macro_index(struct ctx *x, CXCursor def)
{
    for (size_t i = x->nmacros; i-- > 0;)
        if (clang_equalCursors(x->macros[i].c, def))
            return (int)i;
    return -1;
}

static int macro_by_name(struct ctx *x, const char *name)
{
    for (size_t i = x->nmacros; i-- > 0;)
        if (strcmp(x->macros[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int is_kernel(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    return (k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate) &&
           has_child_kind(c, CXCursor_CUDAGlobalAttr);
}

static enum CXChildVisitResult top_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct ctx *x = d;
    enum CXCursorKind k = clang_getCursorKind(c);
    CXFile f;
    unsigned a, b;
    if (!extent_of(c, &f, &a, &b))
        f = location_file(c, NULL), a = b = 0;
    if (k == CXCursor_MacroDefinition) {
        collect_macro(x, c, f, a, b);
        return CXChildVisit_Continue;
    }
    if (!f || !in_tree(x, f))
        return CXChildVisit_Continue;
    if (k == CXCursor_MacroExpansion) {
        XGROW(x->uses, x->nuses + 1, x->uses_cap);
        x->uses[x->nuses].file = f;
        x->uses[x->nuses].offset = a;
        x->uses[x->nuses++].def = macro_index(x, clang_getCursorReferenced(c));
        return CXChildVisit_Continue;
    }
    if (k == CXCursor_InclusionDirective) {
        collect_include(x, c, f);
        return CXChildVisit_Continue;
    }
    XGROW(x->tops, x->ntops + 1, x->tops_cap);
    x->tops[x->ntops++] = (struct top_decl){ c, f, a, b };
    if (is_kernel(c)) {
        if (clang_isCursorDefinition(c)) {
            XGROW(x->kernels, x->nkernels + 1, x->kernels_cap);
            x->kernels[x->nkernels++] = c;
        } else {
            XGROW(x->kernel_decls, x->nkdecls + 1, x->kdecls_cap);
            x->kernel_decls[x->nkdecls++] = c;
        }
    }
    if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec || k == CXCursor_UnexposedDecl)
        clang_visitChildren(c, top_visit, x);
    return CXChildVisit_Continue;
}

static void inclusion_visit(CXFile included, CXSourceLocation *stack, unsigned len, void *d)
{
    struct ctx *x = d;
    if (len == 0)
        return;
    CXFile from = NULL;
    unsigned l, col, off;
    clang_getExpansionLocation(stack[0], &from, &l, &col, &off);
    XGROW(x->inc_from, x->ninc_edges + 1, x->inc_edges_cap);
    x->inc_to = xrealloc(x->inc_to, x->inc_edges_cap * sizeof *x->inc_to);
    x->inc_from[x->ninc_edges] = from;
    x->inc_to[x->ninc_edges++] = included;
}

/* ------------------------------------------------------------------ closure of one kernel */

struct closure {
    struct ctx *x;
    int *units;        /* indexes into x->tops */
    size_t nunits, units_cap;
    char *macro_used;  /* per x->macros */
    CXFile *sysfiles;  /* outside files whose declarations are used */
    size_t nsys, sys_cap;
    CXCursor *work;
    size_t nwork, work_cap;
    int dynshared;
    int cur_unit;
    struct buf libc_includes;
    const char *have;  /* extract_tu_decl: text already in the kernel (pieces in it are left out) */
    int pieces;        /* pieces emitted */
};

static int has_unit(struct closure *cl, int idx);
static void close_work(struct closure *cl);

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

static void push_decl(struct closure *cl, CXCursor r)
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
    CXFile f = location_file(r, NULL);
    if (!f || !in_tree(cl->x, f)) {
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
            push_decl(cl, clang_getOverloadedDecl(c, i));
    }
    if (k == CXCursor_NamespaceRef) /* `cg::` through `namespace cg = cooperative_groups;` */
        push_alias(cl, c);
    if (k == CXCursor_VarDecl && clang_getCursorType(c).kind == CXType_IncompleteArray &&
        has_child_kind(c, CXCursor_CUDASharedAttr))
        cl->dynshared = 1;
    CXCursor r = clang_getCursorReferenced(c);
    if (!clang_Cursor_isNull(r) && !clang_equalCursors(r, c))
        push_decl(cl, r);
    CXType ty = clang_getCursorType(c);
    if (ty.kind != CXType_Invalid && (k == CXCursor_VarDecl || k == CXCursor_FieldDecl))
        push_decl(cl, clang_getTypeDeclaration(clang_getPointeeType(ty)));
    return CXChildVisit_Recurse;
}

static int has_unit(struct closure *cl, int idx)
{
    for (size_t i = 0; i < cl->nunits; i++)
        if (cl->units[i] == idx)
            return 1;
    return 0;
}

static void add_unit(struct closure *cl, int idx)
{
    XGROW(cl->units, cl->nunits + 1, cl->units_cap);
    cl->units[cl->nunits++] = idx;
    clang_visitChildren(cl->x->tops[idx].c, refs_visit, cl);
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

static void close_decls(struct closure *cl, CXCursor kernel)
{
    push_decl(cl, kernel);
    for (int round = 0; round < 8 && cl->nwork > 0; round++) {
        close_work(cl);
        push_specializations(cl);
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
            push_decl(cl, sem);
    }
}

static int has_unit(struct closure *cl, int idx);
static void add_unit(struct closure *cl, int idx);

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
        CXFile f = clang_Cursor_isNull(ns) ? NULL : location_file(ns, NULL);
        int keep = f && !in_tree(x, f);
        for (size_t u = 0; !keep && f && u < cl->nunits; u++)
            for (CXCursor p = clang_getCursorLexicalParent(x->tops[cl->units[u]].c);
                 clang_getCursorKind(p) == CXCursor_Namespace; p = clang_getCursorLexicalParent(p))
                if (clang_equalCursors(clang_getCanonicalCursor(p), clang_getCanonicalCursor(ns)))
                    keep = 1;
        if (keep && !has_unit(cl, (int)i)) {
            add_unit(cl, (int)i);
            if (!in_tree(x, f))
                add_sysfile(cl, f);
        }
    }
}

static void use_macro(struct closure *cl, int mi);

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
        int other = macro_by_name(x, clang_getCString(s));
        clang_disposeString(s);
        if (other >= 0 && other != mi)
            use_macro(cl, other);
    }
    clang_disposeTokens(x->tu, toks, n);
}

static void use_macro(struct closure *cl, int mi)
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
            int mi = macro_by_name(x, t);
            if (mi >= 0 && x->macros[mi].in_tree)
                use_macro(cl, mi);
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
                use_macro(cl, x->uses[u].def);
                break;
            }
        }
    }
    for (size_t i = 0; i < cl->nunits; i++)
        use_tested_macros(cl, cl->units[i]);
}

/* ------------------------------------------------------------------ emission */

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Is top decl i inside the extent of another chosen unit (typedef struct {...} T;)? */
static int contained(struct closure *cl, int i)
{
    struct top_decl *t = &cl->x->tops[i];
    for (size_t j = 0; j < cl->nunits; j++) {
        struct top_decl *o = &cl->x->tops[cl->units[j]];
        if (cl->units[j] != i && o->file == t->file && o->start <= t->start &&
            t->end <= o->end && (o->start < t->start || t->end < o->end || cl->units[j] < i))
            return 1;
    }
    return 0;
}

/* A declaration whose header came in implicitly (clang's CUDA wrapper includes stdio.h, so
 * device printf needs no #include in the tree, but nvcc wants one): name the public header. */
static void implicit_include(struct buf *b, const char *path)
{
    const char *name = NULL;
    char line[300];
    if (strncmp(path, "/usr/include/", 13) == 0 && !strchr(path + 13, '/'))
        name = path + 13;
    else if (strncmp(path, "/usr/include/c++/", 17) == 0 && strchr(path + 17, '/') &&
             !strchr(strchr(path + 17, '/') + 1, '/'))
        name = strchr(path + 17, '/') + 1;
    else if (strstr(path, "/include/cuda_fp16.") || strstr(path, "/include/cuda_bf16."))
        name = strstr(path, "/include/cuda_fp16.") ? "cuda_fp16.h" : "cuda_bf16.h";
    if (!name || strlen(name) > 200)
        return;
    snprintf(line, sizeof line, "#include <%s>\n", name);
    if (!strstr(b->data, line))
        buf_adds(b, line);
}

static void emit_includes(struct buf *b, struct closure *cl)
{
    struct ctx *x = cl->x;
    char *done = xcalloc(x->nincs + 1, 1);
    for (size_t s = 0; s < cl->nsys; s++) {
        CXFile f = cl->sysfiles[s];
        int found = 0;
        for (int hop = 0; f && hop < 64 && !found; hop++) {
            size_t i;
            for (i = 0; i < x->nincs; i++)
                if (x->incs[i].included == f)
                    break;
            if (i < x->nincs) {
                if (!x->incs[i].refused && !done[i])
                    buf_addf(b, "%s\n", x->incs[i].text);
                done[i] = 1;
                found = 1;
                break;
            }
            CXFile up = NULL;
            for (size_t e = 0; e < x->ninc_edges; e++)
                if (x->inc_to[e] == f) {
                    up = x->inc_from[e];
                    break;
                }
            f = up;
        }
        if (!found)
            implicit_include(b, file_info(x, cl->sysfiles[s])->path);
    }
    free(done);
}

static void emit_namespaces(struct buf *b, CXCursor c, int open)
{
    CXCursor chain[32];
    int n = 0;
    for (CXCursor p = clang_getCursorLexicalParent(c); n < 32; p = clang_getCursorLexicalParent(p)) {
        enum CXCursorKind k = clang_getCursorKind(p);
        if (k != CXCursor_Namespace && k != CXCursor_LinkageSpec)
            break;
        chain[n++] = p;
    }
    for (int i = 0; i < n; i++) {
        CXCursor p = open ? chain[n - 1 - i] : chain[i];
        if (!open) {
            buf_adds(b, "}\n");
            continue;
        }
        if (clang_getCursorKind(p) == CXCursor_LinkageSpec) {
            buf_adds(b, "extern \"C\" {\n");
            continue;
        }
        CXString s = clang_getCursorSpelling(p);
        const char *name = clang_getCString(s);
        buf_addf(b, "namespace %s%s{\n", name ? name : "", name && *name ? " " : "");
        clang_disposeString(s);
    }
}

/* Append `piece` (whose identifying text is its [core, core + core_len) part) unless the text
 * the caller already has contains it. */
static void add_piece(struct buf *b, struct closure *cl, const struct buf *piece, size_t core,
                      size_t core_len)
{
    if (cl->have && core_len) {
        char *c = xstrndup(piece->data + core, core_len);
        int known = strstr(cl->have, c) != NULL;
        free(c);
        if (known)
            return;
    }
    buf_add(b, piece->data, piece->len);
    cl->pieces++;
}

static void emit_source(struct buf *b, struct closure *cl)
{
    struct ctx *x = cl->x;
    struct buf inc = BUF_INIT, piece = BUF_INIT;
    buf_add(&inc, cl->libc_includes.data, cl->libc_includes.len);
    emit_includes(&inc, cl);
    for (const char *p = inc.data; *p;) { /* line by line: each #include is a piece */
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
        buf_reset(&piece);
        buf_add(&piece, p, n);
        add_piece(b, cl, &piece, 0, piece.len);
        p += n;
    }
    for (size_t i = 0; i < x->nmacros; i++) {
        struct macro_def *m = &x->macros[i];
        if (!cl->macro_used[i] || !m->in_tree)
            continue;
        buf_reset(&piece);
        buf_adds(&piece, "#define ");
        add_text(&piece, x, m->file, m->start, m->end);
        buf_addch(&piece, '\n');
        add_piece(b, cl, &piece, 0, piece.len);
    }
    qsort(cl->units, cl->nunits, sizeof *cl->units, cmp_int);
    for (size_t i = 0; i < cl->nunits; i++) {
        struct top_decl *t = &x->tops[cl->units[i]];
        if (contained(cl, cl->units[i]))
            continue;
        buf_reset(&piece);
        emit_namespaces(&piece, t->c, 1);
        size_t core = piece.len;
        add_text(&piece, x, t->file, t->start, t->end);
        size_t core_len = piece.len - core;
        enum CXCursorKind k = clang_getCursorKind(t->c);
        int is_fn_def = (k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate ||
                         k == CXCursor_CXXMethod) && clang_isCursorDefinition(t->c);
        buf_adds(&piece, is_fn_def ? "\n" : ";\n");
        emit_namespaces(&piece, t->c, 0);
        add_piece(b, cl, &piece, core, core_len);
    }
    buf_release(&inc);
    buf_release(&piece);
}

static void emit_kernel(struct ctx *x, CXCursor k)
{
    struct closure cl = { .x = x, .libc_includes = BUF_INIT };
    struct kparams kp = KPARAMS_INIT;
    struct buf src = BUF_INIT;
    cl.macro_used = xcalloc(x->nmacros + 1, 1);
    close_decls(&cl, k);
    close_usings(&cl);
    close_macros(&cl);
    emit_source(&src, &cl);
    struct buf clean = BUF_INIT;
    size_t fixed = srctext_fix_utf8(&clean, src.data, src.len);
    if (fixed) {
        char *m = xasprintf("kernel in %s: %zu invalid UTF-8 byte(s) rewritten in the isolated "
                            "source (octal escapes in literals, '?' elsewhere)",
                            rel_path(x, location_file(k, NULL)), fixed);
        note(x, "non_utf8", m);
        free(m);
    }
    buf_release(&src);
    src = clean;
    kparams_collect(&kp, k);
    CXFile f;
    unsigned a, e, line = 0;
    f = NULL;
    (void)extent_of(k, &f, &a, &e);
    location_file(k, &line);
    char *qname = kparams_qualified_name(k, 0), *call = kparams_qualified_name(k, 1);
    if (kp.unsupported) {
        char *m = xasprintf("%s:%u: kernel '%s' has template parameters lscat cannot instantiate "
                            "(template template, non-integral or pack); skipped",
                            rel_path(x, f), line, qname);
        note(x, "unsupported_template", m);
        free(m);
        goto done;
    }
    /* The indexing of the code the kernel reaches (its closure: device functions, macros),
     * which plans its block shapes and grids (isolate/indexing.h). */
    struct indexing ix;
    char uses[128];
    indexing_analyze(&ix, src.data, src.len);
    indexing_uses_text(uses, sizeof uses, ix.uses);
    int is2d = ix.dims >= 2;
    record_begin(x->out, "kernel", 16);
    record_field_str(x->out, "name", qname);
    record_field_str(x->out, "call", call);
    record_field_str(x->out, "path", rel_path(x, f));
    record_field_int(x->out, "line", line);
    record_field_str(x->out, "tparams", kp.tparams.data);
    record_field_int(x->out, "template", clang_getCursorKind(k) == CXCursor_FunctionTemplate);
    record_field_int(x->out, "is2d", is2d);
    record_field_str(x->out, "indexing", indexing_name(ix.kind));
    record_field_str(x->out, "indexing_uses", uses);
    record_field_int(x->out, "dynshared", cl.dynshared);
    record_field_int(x->out, "device_launch", strstr(src.data, "<<<") != NULL);
    record_field(x->out, "source", src.data, src.len);
    record_field(x->out, "params", kp.json.data, kp.json.len);
    record_field_str(x->out, "roles", kp.roles.data);
    record_field_str(x->out, "param_names", kp.names.data);
    record_field_int(x->out, "param_count", kp.n);
done:
    free(qname);
    free(call);
    buf_release(&src);
    kparams_release(&kp);
    free(cl.units);
    free(cl.macro_used);
    free(cl.sysfiles);
    free(cl.work);
    buf_release(&cl.libc_includes);
}

/* ------------------------------------------------------------------ the file */

static void report_bodiless(struct ctx *x)
{
    for (size_t i = 0; i < x->nkdecls; i++) {
        CXCursor def = clang_getCursorDefinition(x->kernel_decls[i]);
        if (!clang_Cursor_isNull(def))
            continue;
        unsigned line;
        CXFile f = location_file(x->kernel_decls[i], &line);
        char *q = kparams_qualified_name(x->kernel_decls[i], 0);
        char *m = xasprintf("%s:%u: kernel '%s' is declared but no file of the tree defines it (no body)",
                            rel_path(x, f), line, q);
        record_begin(x->out, "kdecl", 2);
        record_field_str(x->out, "name", q);
        record_field_str(x->out, "message", m);
        free(m);
        free(q);
    }
}

/* "tu" record: error count and the first error, with paths relative to the tree. */
static void report_diagnostics(struct ctx *x, double parse_s)
{
    unsigned n = clang_getNumDiagnostics(x->tu), errors = 0;
    char *first = NULL;
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(x->tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            CXString s = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation);
            const char *msg = clang_getCString(s);
            if (msg && strstr(msg, "file not found"))
                note(x, "missing_header", strncmp(msg, x->o->root, x->root_len) == 0
                                              ? msg + x->root_len + 1 : msg);
            if (!first && msg && !strstr(msg, "cudaConfigureCall")) {
                const char *m = strncmp(msg, x->o->root, x->root_len) == 0
                                    ? msg + x->root_len + 1 : msg;
                first = xstrndup(m, 400);
            }
            if (!msg || !strstr(msg, "cudaConfigureCall"))
                errors++;
            clang_disposeString(s);
        }
        clang_disposeDiagnostic(d);
    }
    record_begin(x->out, "tu", 4);
    record_field_str(x->out, "status", errors ? "errors" : "ok");
    record_field_int(x->out, "errors", errors);
    record_field_str(x->out, "first_error", first ? first : "");
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%.3f", parse_s);
    record_field_str(x->out, "parse_s", tmp);
    free(first);
}

static void ctx_release(struct ctx *x)
{
    for (size_t i = 0; i < x->nfiles; i++)
        free(x->files[i].path);
    for (size_t i = 0; i < x->nmacros; i++)
        free(x->macros[i].name);
    for (size_t i = 0; i < x->nincs; i++) {
        free(x->incs[i].text);
        free(x->incs[i].spelling);
    }
    free(x->files);
    free(x->tops);
    free(x->macros);
    free(x->uses);
    free(x->incs);
    free(x->inc_from);
    free(x->inc_to);
    free(x->kernels);
    free(x->kernel_decls);
}

/* Without a CUDA toolkit (a CI machine), the CUDA keywords come from these definitions so that
 * kernels are still found; the kernels' own code may then show errors. */
static const char *const no_cuda_defines[] = {
    "-D__global__=__attribute__((global))", "-D__device__=__attribute__((device))",
    "-D__host__=__attribute__((host))", "-D__shared__=__attribute__((shared))",
    "-D__constant__=__attribute__((constant))", "-D__managed__=__attribute__((managed))",
    "-D__forceinline__=__inline__ __attribute__((always_inline))",
    "-include", "__clang_cuda_builtin_vars.h", /* threadIdx, blockIdx, blockDim, gridDim */
    "-D__syncthreads()=((void)0)", NULL };

/* Parse o->file into x->tu with isolate's arguments (CUDA, the tree's -I folders, refused
 * includes as empty files). `*parse_s` gets the parse time. Returns 0 or LSCAT_ERR. */
static int parse_tu(struct ctx *x, CXIndex index, const struct extract_options *o,
                    double *parse_s)
{
    int rc = 0;
    const char **args = xcalloc((size_t)o->n_include_dirs * 2 + 32, sizeof *args);
    char *cuda_path = xasprintf("--cuda-path=%s", o->cuda_home);
    char *cccl = xasprintf("%s/include/cccl", o->cuda_home);
    char *cuda_rt = xasprintf("%s/include/cuda_runtime.h", o->cuda_home);
    int na = 0;
    args[na++] = "-x";
    args[na++] = "cuda";
    args[na++] = "--cuda-gpu-arch=sm_90";
    args[na++] = cuda_path;
    args[na++] = "-nocudalib";
    args[na++] = "-std=c++17";
    args[na++] = "-w";
    args[na++] = "-ferror-limit=50";
    args[na++] = "-fbracket-depth=512";
    args[na++] = "-fgpu-rdc"; /* device-side launches (dynamic parallelism) parse, so a parent
                                 kernel's closure includes the kernels it launches */
    if (fs_is_dir(cccl)) { /* CUDA 13 keeps cub/thrust/libcu++ there; nvcc adds it itself */
        args[na++] = "-isystem";
        args[na++] = cccl;
    }
    if (!fs_exists(cuda_rt)) { /* no CUDA headers: clang's CUDA mode without them (CI) */
        args[na++] = "-nocudainc";
        for (const char *const *d = no_cuda_defines; *d; d++)
            args[na++] = *d;
    }
    for (int i = 0; i < o->n_include_dirs; i++) {
        args[na++] = "-I";
        args[na++] = o->include_dirs[i];
    }
    struct srctext_refusals rf = { 0 };
    srctext_scan_includes(&rf, o->root, o->cuda_home, o->file);
    struct CXUnsavedFile *empty = xcalloc(rf.n + 1, sizeof *empty);
    for (size_t i = 0; i < rf.n; i++)
        empty[i] = (struct CXUnsavedFile){ rf.paths[i], "", 0 };
    double t0 = fs_mono_s();
    enum CXErrorCode e = clang_parseTranslationUnit2(
        index, o->file, args, na, empty, (unsigned)rf.n,
        CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_KeepGoing, &x->tu);
    *parse_s = fs_mono_s() - t0;
    if (e != CXError_Success || !x->tu) {
        x->tu = NULL;
        rc = lscat_error_set("libclang could not parse '%s' (error %d)", o->file, (int)e);
        goto done;
    }
done:
    srctext_refusals_release(&rf);
    free(empty);
    free(cuda_path);
    free(cccl);
    free(cuda_rt);
    free(args);
    return rc;
}

/* The top-level declarations, macros, includes and the inclusion graph of x->tu. */
static void collect(struct ctx *x)
{
    clang_visitChildren(clang_getTranslationUnitCursor(x->tu), top_visit, x);
    clang_getInclusions(x->tu, inclusion_visit, x);
}

int extract_file(struct buf *out, const struct extract_options *o)
{
    struct ctx x = { .o = o, .root_len = strlen(o->root), .out = out };
    CXIndex index = clang_createIndex(0, 0);
    double parse_s = 0;
    int rc = parse_tu(&x, index, o, &parse_s);
    if (rc == 0) {
        report_diagnostics(&x, parse_s);
        collect(&x);
        for (size_t i = 0; i < x.nkernels; i++)
            emit_kernel(&x, x.kernels[i]);
        report_bodiless(&x);
    }
    if (x.tu)
        clang_disposeTranslationUnit(x.tu);
    clang_disposeIndex(index);
    ctx_release(&x);
    return rc;
}

/* ------------------------------------------------------------------ declaration lookup */

struct extract_tu {
    struct ctx x;
    struct extract_options o;
    CXIndex index;
    struct buf notes;   /* notes of the parse (refused includes): not reported by lookups */
};

int extract_tu_parse(struct extract_tu **out, const struct extract_options *o)
{
    struct extract_tu *t = xcalloc(1, sizeof *t);
    double parse_s = 0;
    *out = NULL;
    t->o = *o;
    t->o.root = xstrdup(o->root);
    t->o.file = xstrdup(o->file);
    t->o.cuda_home = xstrdup(o->cuda_home);
    t->o.include_dirs = NULL; /* only needed by the parse */
    t->o.n_include_dirs = 0;
    buf_init(&t->notes, 0);
    t->x.o = &t->o;
    t->x.root_len = strlen(o->root);
    t->x.out = &t->notes;
    t->index = clang_createIndex(0, 0);
    int rc = parse_tu(&t->x, t->index, o, &parse_s);
    if (rc < 0) {
        extract_tu_free(t);
        return rc;
    }
    collect(&t->x);
    *out = t;
    return 0;
}

void extract_tu_free(struct extract_tu *t)
{
    if (!t)
        return;
    if (t->x.tu)
        clang_disposeTranslationUnit(t->x.tu);
    clang_disposeIndex(t->index);
    ctx_release(&t->x);
    buf_release(&t->notes);
    free((char *)t->o.root);
    free((char *)t->o.file);
    free((char *)t->o.cuda_home);
    free(t);
}

/* Does `c` name `ident` ("Matrix", or qualified "ns::Matrix")? */
static int names_ident(CXCursor c, const char *ident)
{
    const char *last = strrchr(ident, ':');
    CXString s = clang_getCursorSpelling(c);
    int same = clang_getCString(s) && strcmp(clang_getCString(s), last ? last + 1 : ident) == 0;
    clang_disposeString(s);
    if (same && last) {
        char *q = kparams_qualified_name(c, 0);
        same = strcmp(q, ident) == 0;
        free(q);
    }
    return same;
}

struct enum_hit { const char *ident; int hit; };

static enum CXChildVisitResult enum_visit(CXCursor c, CXCursor p, void *d)
{
    (void)p;
    struct enum_hit *e = d;
    if (clang_getCursorKind(c) == CXCursor_EnumConstantDecl && names_ident(c, e->ident)) {
        e->hit = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

/* Can top-level declaration `c` stand for `ident`: a definition (type, function, variable), an
 * alias, or an enum holding an enumerator of that name? */
static int defines_ident(CXCursor c, const char *ident)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    switch (k) {
    case CXCursor_EnumDecl:
        if (clang_isCursorDefinition(c)) {
            struct enum_hit e = { ident, 0 };
            clang_visitChildren(c, enum_visit, &e);
            if (e.hit)
                return 1;
        }
        /* fall through */
    case CXCursor_StructDecl: case CXCursor_ClassDecl: case CXCursor_UnionDecl:
    case CXCursor_ClassTemplate: case CXCursor_FunctionDecl: case CXCursor_FunctionTemplate:
    case CXCursor_VarDecl:
        return clang_isCursorDefinition(c) && names_ident(c, ident);
    case CXCursor_TypedefDecl: case CXCursor_TypeAliasDecl: case CXCursor_TypeAliasTemplateDecl:
    case CXCursor_NamespaceAlias:
        return names_ident(c, ident);
    default:
        return 0;
    }
}

static void origin_of(struct buf *origin, struct ctx *x, CXCursor c)
{
    unsigned line = 0;
    CXFile f = location_file(c, &line);
    buf_addf(origin, "%s:%u", rel_path(x, f), line);
}

int extract_tu_decl(struct buf *out, struct buf *origin, int *pieces, struct extract_tu *t,
                    const char *ident, const char *have)
{
    struct ctx *x = &t->x;
    struct closure cl = { .x = x, .libc_includes = BUF_INIT, .have = have };
    int found = 0, mi = macro_by_name(x, ident);
    *pieces = 0;
    cl.macro_used = xcalloc(x->nmacros + 1, 1);
    if (mi >= 0 && !x->macros[mi].in_tree)
        mi = -1; /* a system macro: not the repository's to give */
    for (size_t i = 0; mi < 0 && i < x->ntops; i++) {
        if (!in_tree(x, x->tops[i].file) || !defines_ident(x->tops[i].c, ident))
            continue;
        if (!found)
            origin_of(origin, x, x->tops[i].c);
        push_decl(&cl, x->tops[i].c);
        found = 1;
    }
    if (mi >= 0) {
        buf_addf(origin, "%s:", rel_path(x, x->macros[mi].file));
        unsigned line = 0;
        location_file(x->macros[mi].c, &line);
        buf_addf(origin, "%u", line);
        use_macro(&cl, mi);
        found = 1;
    }
    if (found) {
        for (int round = 0; round < 8 && cl.nwork > 0; round++) {
            close_work(&cl);
            push_specializations(&cl);
        }
        close_usings(&cl);
        close_macros(&cl);
        emit_source(out, &cl);
        *pieces = cl.pieces;
    }
    free(cl.units);
    free(cl.macro_used);
    free(cl.sysfiles);
    free(cl.work);
    buf_release(&cl.libc_includes);
    return found ? 0 : LSCAT_ENOTFOUND;
}
