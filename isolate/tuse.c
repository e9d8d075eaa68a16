/* Template type arguments from how the kernel uses them: a type parameter still at float after
 * the call sites (isolate/tinst.c) whose objects the kernel uses as a class (`load.template
 * load<N>(...)`, `op(a, b)`, `traits::isMultiRow()`, `v.x`) cannot be float. The tree's class
 * that declares every member used is taken instead (float2/float3/float4 for x/y/z/w only). */
#include "isolate/extract_impl.h"

#include "common/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUSE_MAX 16   /* names kept per list */
#define TUSE_DEPTH 2  /* a class template's own type parameters, chosen the same way */

struct names {
    char *v[TUSE_MAX];
    int n;
};

static void names_add(struct names *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0)
            return;
    if (s->n < TUSE_MAX)
        s->v[s->n++] = xstrdup(name);
}

static int names_has(const struct names *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0)
            return 1;
    return 0;
}

static void names_release(struct names *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

struct toks {
    char **sp;
    unsigned n;
};

static void toks_of(struct toks *t, CXCursor c)
{
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(c);
    CXToken *tok = NULL;
    clang_tokenize(tu, clang_getCursorExtent(c), &tok, &t->n);
    t->sp = xcalloc(t->n + 1, sizeof *t->sp);
    for (unsigned j = 0; j < t->n; j++) {
        CXString a = clang_getTokenSpelling(tu, tok[j]);
        t->sp[j] = xstrdup(clang_getCString(a) ? clang_getCString(a) : "");
        clang_disposeString(a);
    }
    clang_disposeTokens(tu, tok, t->n);
}

static void toks_release(struct toks *t)
{
    for (unsigned j = 0; j < t->n; j++)
        free(t->sp[j]);
    free(t->sp);
}

static int is_ident(const char *s)
{
    static const char *const words[] = { "const", "volatile", "operator", "return", "template",
                                         "typename", "__restrict__", "__restrict", "restrict",
                                         "sizeof", "new", "delete", NULL };
    if (!isalpha((unsigned char)*s) && *s != '_')
        return 0;
    for (int i = 0; words[i]; i++)
        if (strcmp(s, words[i]) == 0)
            return 0;
    return 1;
}

static int is_qualifier(const char *s)
{
    return !strcmp(s, "&") || !strcmp(s, "*") || !strcmp(s, "const") || !strcmp(s, "__restrict__") ||
           !strcmp(s, "__restrict") || !strcmp(s, "restrict") || !strcmp(s, "volatile");
}

/* i at a `[`: the index past its matching `]`. */
static unsigned skip_index(const struct toks *t, unsigned i)
{
    int depth = 0;
    for (; i < t->n; i++) {
        depth += !strcmp(t->sp[i], "[") - !strcmp(t->sp[i], "]");
        if (depth == 0)
            return i + 1;
    }
    return i;
}

static const char *tok(const struct toks *t, unsigned i)
{
    return i < t->n ? t->sp[i] : "";
}

/* The members used on type parameter `tp` in the extent's tokens: `tp v`, `const tp &v`,
 * `tp *__restrict__ v` declare objects, then `v.m`, `v[i].m`, `v->m`, `v.template m<..>`,
 * `v(...)` ("operator()"), `tp::m` and `tp()(...)` are uses. */
static void uses_of(struct names *used, const struct toks *t, const char *tp)
{
    struct names vars = { { 0 }, 0 };
    for (unsigned i = 0; i + 1 < t->n; i++) {
        if (strcmp(t->sp[i], tp) != 0)
            continue;
        unsigned j = i + 1;
        if (!strcmp(tok(t, j), "::") && is_ident(tok(t, j + 1)))
            names_add(used, tok(t, j + 1));
        else if (!strcmp(tok(t, j), "(") && !strcmp(tok(t, j + 1), ")") && !strcmp(tok(t, j + 2), "("))
            names_add(used, "operator()");
        while (is_qualifier(tok(t, j)))
            j++;
        const char *after = tok(t, j + 1);
        if (is_ident(tok(t, j)) && strchr(",);={[(", after[0]) && after[0])
            names_add(&vars, tok(t, j));
    }
    for (unsigned i = 0; i + 1 < t->n; i++) {
        if (!names_has(&vars, t->sp[i]) || (i > 0 && (!strcmp(t->sp[i - 1], ".") ||
                                                     !strcmp(t->sp[i - 1], "->") || !strcmp(t->sp[i - 1], "::"))))
            continue;
        unsigned j = i + 1;
        while (!strcmp(tok(t, j), "["))
            j = skip_index(t, j); /* v[i].x */
        if (!strcmp(tok(t, j), ".") || !strcmp(tok(t, j), "->")) {
            j += !strcmp(tok(t, j + 1), "template");
            if (is_ident(tok(t, j + 1)))
                names_add(used, tok(t, j + 1));
        } else if (!strcmp(tok(t, j), "(") && i > 0 && strcmp(t->sp[i - 1], tp) != 0 &&
                   strcmp(t->sp[i - 1], "&") != 0 && strcmp(t->sp[i - 1], "const") != 0 &&
                   strcmp(t->sp[i - 1], ":") != 0) { /* not a member initialiser */
            names_add(used, "operator()");
        }
    }
    names_release(&vars);
}

static enum CXChildVisitResult member_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate || k == CXCursor_FieldDecl ||
        k == CXCursor_VarDecl || k == CXCursor_TypedefDecl || k == CXCursor_TypeAliasDecl ||
        k == CXCursor_ConversionFunction || k == CXCursor_EnumConstantDecl) {
        CXString s = clang_getCursorSpelling(c);
        names_add(d, clang_getCString(s) ? clang_getCString(s) : "");
        clang_disposeString(s);
    } else if (k == CXCursor_EnumDecl) {
        return CXChildVisit_Recurse; /* enum { value = 1 } inside a traits class */
    }
    return CXChildVisit_Continue;
}

struct choice {
    struct ctx *x;
    struct closure *cl;
    CXFile kernel_file;
};

static int choose(struct buf *out, struct choice *ch, const struct names *used, int depth);

/* The qualified name of class c; NULL when local to a function or anonymous. Caller frees. */
static char *class_name(CXCursor c)
{
    struct buf b = BUF_INIT;
    for (CXCursor p = c; !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p)) {
        enum CXCursorKind k = clang_getCursorKind(p);
        CXString s = clang_getCursorSpelling(p);
        const char *sp = clang_getCString(s) ? clang_getCString(s) : "";
        int anon_ns = k == CXCursor_Namespace && (!*sp || strstr(sp, "anonymous"));
        int ok = anon_ns || (*sp && !strchr(sp, ' ') && !strchr(sp, '(') &&
                             (k == CXCursor_Namespace || clang_equalCursors(p, c)));
        if (ok && !anon_ns) {
            char *q = b.len ? xasprintf("%s::%s", sp, b.data) : xstrdup(sp);
            buf_release(&b);
            buf_adds(&b, q);
            free(q);
        }
        clang_disposeString(s);
        if (!ok) {
            buf_release(&b);
            return NULL;
        }
    }
    return b.len ? buf_detach(&b, NULL) : NULL;
}

struct targ_walk {
    struct choice *ch;
    struct toks body;
    struct buf args;
    int depth, n, ok;
};

/* One parameter of a class template: its type parameters chosen by use inside the class
 * (float when unused), values false (bool) or 1; template template parameters refuse. */
static enum CXChildVisitResult targ_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct targ_walk *w = d;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_TemplateTemplateParameter) {
        w->ok = 0;
        return CXChildVisit_Break;
    }
    if (k != CXCursor_TemplateTypeParameter && k != CXCursor_NonTypeTemplateParameter)
        return CXChildVisit_Continue;
    buf_adds(&w->args, w->n++ ? "," : "<"); /* no spaces: tparams lines are split on them */
    if (k == CXCursor_NonTypeTemplateParameter) {
        buf_adds(&w->args, clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_Bool ? "false" : "1");
        return CXChildVisit_Continue;
    }
    CXString s = clang_getCursorSpelling(c);
    struct names used = { { 0 }, 0 };
    uses_of(&used, &w->body, clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    struct buf t = BUF_INIT;
    if (!used.n)
        buf_adds(&w->args, "float");
    else if (w->depth > 0 && choose(&t, w->ch, &used, w->depth - 1))
        buf_adds(&w->args, t.data);
    else
        w->ok = 0;
    buf_release(&t);
    names_release(&used);
    return w->ok ? CXChildVisit_Continue : CXChildVisit_Break;
}

/* Candidate class c named with its arguments (a class template's chosen as above). */
static int spell_candidate(struct buf *out, struct choice *ch, CXCursor c, int depth)
{
    char *name = class_name(c);
    if (!name)
        return 0;
    int ok = 1;
    buf_adds(out, name);
    free(name);
    if (clang_getCursorKind(c) == CXCursor_ClassTemplate) {
        struct targ_walk w = { ch, { NULL, 0 }, BUF_INIT, depth, 0, 1 };
        toks_of(&w.body, c);
        clang_visitChildren(c, targ_visit, &w);
        toks_release(&w.body);
        ok = w.ok && w.n > 0;
        if (ok) {
            buf_adds(&w.args, ">");
            buf_adds(out, w.args.data);
        }
        buf_release(&w.args);
    }
    return ok;
}

static int is_candidate(struct ctx *x, CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    return (k == CXCursor_StructDecl || k == CXCursor_ClassDecl || k == CXCursor_ClassTemplate) &&
           clang_isCursorDefinition(c) && extract_in_tree(x, extract_location_file(c, NULL));
}

/* The tree's class declaring every name in `used` (one in the kernel's file first, then the
 * first in the translation unit), spelled into out and pushed into the closure; else a vector
 * type when only x/y/z/w are used. 1 when chosen. */
static int choose(struct buf *out, struct choice *ch, const struct names *used, int depth)
{
    CXCursor best = clang_getNullCursor();
    for (int pass = 0; pass < 2 && clang_Cursor_isNull(best); pass++)
        for (size_t i = 0; i < ch->x->ntops && clang_Cursor_isNull(best); i++) {
            CXCursor c = ch->x->tops[i].c;
            if (!is_candidate(ch->x, c) || (pass == 0 && ch->x->tops[i].file != ch->kernel_file))
                continue;
            struct names members = { { 0 }, 0 };
            clang_visitChildren(c, member_visit, &members);
            int all = 1;
            for (int u = 0; u < used->n && all; u++)
                all = names_has(&members, used->v[u]);
            names_release(&members);
            struct buf sp = BUF_INIT;
            if (all && spell_candidate(&sp, ch, c, depth) && sp.len < 120) {
                best = c;
                buf_adds(out, sp.data);
                closure_push_decl(ch->cl, c);
            }
            buf_release(&sp);
        }
    if (!clang_Cursor_isNull(best))
        return 1;
    int width = 0;
    for (int u = 0; u < used->n; u++) {
        const char *m = used->v[u];
        int at = m[1] ? -1 : m[0] == 'x' ? 1 : m[0] == 'y' ? 2 : m[0] == 'z' ? 3 : m[0] == 'w' ? 4 : -1;
        if (at < 0)
            return 0;
        width = at > width ? at : width;
    }
    buf_addf(out, "float%d", width < 2 ? 2 : width);
    return 1;
}

int tinst_from_uses(struct buf *tparams, struct ctx *x, CXCursor k, struct closure *cl)
{
    if (clang_getCursorKind(k) != CXCursor_FunctionTemplate || !tparams->data ||
        !strstr(tparams->data, " float\n"))
        return 0;
    struct choice ch = { x, cl, extract_location_file(k, NULL) };
    struct toks body;
    toks_of(&body, k);
    struct buf out = BUF_INIT;
    int changed = 0;
    for (const char *p = tparams->data; *p;) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        char kind[16] = "", name[128] = "", value[128] = "";
        struct names used = { { 0 }, 0 };
        struct buf t = BUF_INIT;
        if (sscanf(line, "%15s %127s %127s", kind, name, value) == 3 && !strcmp(kind, "type") &&
            !strcmp(value, "float") && (uses_of(&used, &body, name), used.n) &&
            choose(&t, &ch, &used, TUSE_DEPTH)) {
            buf_addf(&out, "type %s %s\n", name, t.data);
            changed = 1;
        } else {
            buf_addf(&out, "%s\n", line);
        }
        buf_release(&t);
        names_release(&used);
        free(line);
        p = nl ? nl + 1 : p + strlen(p);
    }
    toks_release(&body);
    buf_release(tparams);
    *tparams = out;
    return changed;
}
