/* Struct arguments whose members the harness must set (issue #14, P5): a `Matrix` passed by
 * value with `float *elements`, or an array of `BezierLine` through a pointer whose elements
 * hold `float2 *vertexPos`. From libclang's record layout (field offsets, bases, one nested
 * record level) this lists every pointer and arithmetic member with its byte offset and role;
 * the harness allocates a buffer per pointer member and gives size-like integers their
 * binding's values, as for parameters; a pointer to the record's own type in an array (a
 * linked list's `next`) chains the array's elements, a lock word starts zeroed. Classes with
 * virtual functions are named, not filled. */
#include "isolate/kparams.h"

#include "common/xalloc.h"
#include "isolate/params.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MEMBERS_MAX_DEPTH 2 /* the argument's record, and records it holds by value */

struct walk {
    struct buf *out; /* "P D OFF K BYTES EK EBYTES CONST ROLE NAME\n" lines */
    int param, deref, depth;
    long long base;  /* byte offset of the record walked */
    CXType top;      /* the argument's record: a pointer to it is a list's link */
    const char *prefix;
    int lines, pointers;
};

static char *spelling(CXCursor c)
{
    CXString s = clang_getCursorSpelling(c);
    char *r = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return r;
}

/* 's' signed, 'u' unsigned, 'f' floating, 'b' bool; 0 for anything else. */
static char arith_kind(CXType t)
{
    enum CXTypeKind k = clang_getCanonicalType(t).kind;
    if (k == CXType_Bool)
        return 'b';
    if (k == CXType_Float || k == CXType_Double)
        return 'f';
    if ((k >= CXType_Char_U && k <= CXType_UInt128))
        return 'u';
    if ((k >= CXType_Char_S && k <= CXType_Int128) || k == CXType_Enum)
        return 's';
    return 0;
}

static enum CXChildVisitResult virtual_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    enum CXCursorKind k = clang_getCursorKind(c);
    if ((k == CXCursor_CXXMethod || k == CXCursor_Destructor) && clang_CXXMethod_isVirtual(c)) {
        *(int *)d = 1;
        return CXChildVisit_Break;
    }
    if (k == CXCursor_CXXBaseSpecifier) {
        CXCursor b = clang_getTypeDeclaration(clang_getCanonicalType(clang_getCursorType(c)));
        if (clang_isVirtualBase(c) || members_is_polymorphic(clang_getCursorType(b)))
            *(int *)d = 1;
        return *(int *)d ? CXChildVisit_Break : CXChildVisit_Continue;
    }
    return CXChildVisit_Continue;
}

int members_is_polymorphic(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Record)
        return 0;
    CXCursor d = clang_getTypeDeclaration(c);
    CXCursor def = clang_getCursorDefinition(d);
    int found = 0;
    clang_visitChildren(clang_Cursor_isNull(def) ? d : def, virtual_visit, &found);
    /* an instantiation of a class template (Container<int>) shows its methods in the template */
    CXCursor tmpl = clang_getSpecializedCursorTemplate(d);
    if (!found && !clang_Cursor_isNull(tmpl))
        clang_visitChildren(tmpl, virtual_visit, &found);
    return found;
}

static void walk_record(struct walk *w, CXType t);

/* A pointer member holding a lock word (`int *mutex`, `locks`, `lock_flag`): its buffer starts
 * zeroed, as the program's own cudaMemset leaves it, since any other value reads as locked. */
static int is_lock_name(const char *name)
{
    char low[64];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof low; n++)
        low[n] = (char)tolower((unsigned char)name[n]);
    low[n] = '\0';
    if (strstr(low, "mutex") || !strncmp(low, "lock", 4))
        return 1;
    const char *at = strstr(low, "lock");
    return at && at > low && at[-1] != 'b' && (at[4] == '\0' || !strcmp(at + 4, "s"));
}

static void add_line(struct walk *w, long long off, char kind, long long bytes, char ek,
                     long long eb, int cnst, const char *role, const char *name)
{
    buf_addf(w->out, "%d %d %lld %c %lld %c %lld %d %s %s%s\n", w->param, w->deref, off, kind,
             bytes, ek ? ek : 'x', eb > 0 ? eb : 0, cnst, role, w->prefix, name);
    w->lines++;
    w->pointers += kind == 'p' || kind == 'n';
}

static void walk_field(struct walk *w, CXCursor f, long long off)
{
    char *name = spelling(f);
    CXType t = clang_getCanonicalType(clang_getCursorType(f));
    long long bytes = clang_Type_getSizeOf(t);
    if (!*name || clang_Cursor_isBitField(f) || bytes <= 0) {
        free(name);
        return;
    }
    if (t.kind == CXType_Pointer) {
        CXType e = clang_getCanonicalType(clang_getPointeeType(t));
        long long eb = e.kind == CXType_Void ? 8 : clang_Type_getSizeOf(e);
        char ek = e.kind == CXType_Void ? 'f' : arith_kind(e);
        if (w->deref && w->depth == 1 && clang_equalTypes(clang_getUnqualifiedType(e), w->top))
            add_line(w, off, 'n', bytes, 'x', eb, 0, "next", name); /* a list's link */
        else if (eb > 0 && e.kind != CXType_Pointer && !members_is_polymorphic(e))
            add_line(w, off, 'p', bytes, ek, eb, clang_isConstQualifiedType(e),
                     ek && ek != 'f' && is_lock_name(name) ? "lock" : "buffer", name);
    } else if (arith_kind(t) && !(w->deref && arith_kind(t) == 'f')) {
        /* (an array's float members keep the fill's values in [0,1)) */
        add_line(w, off, arith_kind(t), bytes, 0, 0, 0, params_role_name(params_role_of(name)),
                 name);
    } else if (t.kind == CXType_Record && w->depth < MEMBERS_MAX_DEPTH) {
        char *prefix = xasprintf("%s%s.", w->prefix, name);
        struct walk inner = *w;
        inner.depth++;
        inner.base = off;
        inner.prefix = prefix;
        inner.lines = inner.pointers = 0;
        walk_record(&inner, t);
        w->lines += inner.lines;
        w->pointers += inner.pointers;
        free(prefix);
    }
    free(name);
}

static enum CXVisitorResult field_visit(CXCursor f, CXClientData d)
{
    struct walk *w = d;
    long long bits = clang_Cursor_getOffsetOfField(f);
    if (bits >= 0 && bits % 8 == 0)
        walk_field(w, f, w->base + bits / 8);
    return CXVisit_Continue;
}

struct base_walk {
    struct walk *w;
    CXCursor record;
};

/* Non-virtual bases' fields sit at the base's offset (clang_getOffsetOfBase). */
static enum CXChildVisitResult base_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct base_walk *bw = d;
    if (clang_getCursorKind(c) != CXCursor_CXXBaseSpecifier || clang_isVirtualBase(c))
        return CXChildVisit_Continue;
    long long bits = clang_getOffsetOfBase(bw->record, c);
    if (bits < 0 || bits % 8)
        return CXChildVisit_Continue;
    struct walk inner = *bw->w;
    inner.base = bw->w->base + bits / 8;
    inner.lines = inner.pointers = 0;
    walk_record(&inner, clang_getCursorType(c));
    bw->w->lines += inner.lines;
    bw->w->pointers += inner.pointers;
    return CXChildVisit_Continue;
}

static void walk_record(struct walk *w, CXType t)
{
    CXType c = clang_getCanonicalType(t);
    CXCursor d = clang_getTypeDeclaration(c);
    if (c.kind != CXType_Record || clang_getCursorKind(d) == CXCursor_UnionDecl ||
        clang_Type_getSizeOf(c) <= 0)
        return;
    CXCursor def = clang_getCursorDefinition(d);
    struct base_walk bw = { w, clang_Cursor_isNull(def) ? d : def };
    clang_visitChildren(bw.record, base_visit, &bw);
    clang_Type_visitFields(c, field_visit, w);
}

int members_collect(struct buf *out, int param, int deref, CXType record)
{
    if (members_is_polymorphic(record))
        return 0;
    struct buf lines = BUF_INIT;
    struct walk w = { &lines, param, deref, 1, 0, clang_getCanonicalType(record), "", 0, 0 };
    walk_record(&w, record);
    if (w.pointers) /* a record of plain values keeps the harness's old fill */
        buf_add(out, lines.data, lines.len);
    buf_release(&lines);
    return w.pointers;
}
