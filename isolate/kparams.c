/* Parameter model and template parameters of one kernel, from libclang: each parameter's
 * written and canonical type, kind and role (isolate/params.c), and the instantiation rule of
 * each template parameter (float for types, the swept block size for block/tile names, the
 * default argument or 1 for other integers, the first enumerator for enumerations). */
#include "isolate/kparams.h"

#include "common/xalloc.h"
#include "isolate/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *type_str(CXType t)
{
    CXString s = clang_getTypeSpelling(t);
    char *r = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return r;
}

static int is_scalar_kind(enum CXTypeKind k)
{
    return (k >= CXType_Bool && k <= CXType_LongDouble) || k == CXType_Float16 ||
           k == CXType_Half || k == CXType_Enum || k == CXType_BFloat16;
}

/* What the harness fills in a record argument, for the dataset: "members":[{"name":"elements",
 * "role":"buffer"}, ...] from members_collect's lines (role buffer, lock, next or a scalar's). */
static void members_json(struct buf *b, const char *lines)
{
    buf_adds(b, ",\"members\":[");
    for (const char *p = lines; p && *p;) {
        const char *nl = strchr(p, '\n');
        char role[32], name[256];
        if (sscanf(p, "%*d %*d %*d %*c %*d %*c %*d %*d %31s %255s", role, name) == 2) {
            buf_adds(b, b->data[b->len - 1] == '[' ? "{\"name\":" : ",{\"name\":");
            buf_add_json_str(b, name, strlen(name));
            buf_adds(b, ",\"role\":");
            buf_add_json_str(b, role, strlen(role));
            buf_addch(b, '}');
        }
        p = nl ? nl + 1 : NULL;
    }
    buf_addch(b, ']');
}

/* A record argument: its members for the harness (isolate/members.c) as a JSON field, or, for
 * a class with virtual functions, why the harness cannot make it (kp->note). */
static void record_members(struct kparams *kp, struct buf *b, const char *name, CXType rec,
                           int deref)
{
    CXType c = clang_getCanonicalType(rec);
    if (c.kind == CXType_Pointer) /* Container<int> **: the object behind the inner pointer */
        c = clang_getCanonicalType(clang_getPointeeType(c));
    if (c.kind != CXType_Record || clang_Type_getSizeOf(c) <= 0)
        return;
    if (members_is_polymorphic(c)) {
        char *cls = type_str(c);
        buf_addf(&kp->note, "%sparameter '%s': class %s has virtual functions; the harness "
                 "cannot make such an object (its vtable pointer comes from a constructor run "
                 "where it is used), so the kernel reads an invalid one", kp->note.len ? "; " : "",
                 name, cls);
        buf_adds(b, ",\"virtual\":true");
        free(cls);
        return;
    }
    if (clang_getCanonicalType(rec).kind == CXType_Pointer)
        return;
    size_t from = kp->members.len;
    int n = members_collect(&kp->members, kp->n - 1, deref, c);
    if (n) {
        buf_addf(b, ",\"%s\":%d", deref ? "elem_pointer_members" : "pointer_members", n);
        members_json(b, kp->members.data + from);
    }
}

/* A reference parameter (`DataElement &elem`): the harness passes the address of an object it
 * makes in device memory, as a pointer parameter's first element, members set as for one. */
static void reference_json(struct kparams *kp, struct buf *b, const char *name, CXType t,
                           CXType canon)
{
    CXType pt = clang_getPointeeType(canon);
    char *elem = type_str(clang_getPointeeType(t));
    long long es = clang_Type_getSizeOf(pt);
    buf_adds(b, ",\"kind\":\"reference\",\"elem\":");
    buf_add_json_str(b, elem, strlen(elem));
    buf_addf(b, ",\"const\":%s,\"elem_bytes\":%lld,\"template_dependent\":%s",
             clang_isConstQualifiedType(pt) ? "true" : "false", es > 0 ? es : 0,
             es == CXTypeLayoutError_Dependent ? "true" : "false");
    free(elem);
    record_members(kp, b, name, pt, 1);
}

/* One parameter as a JSON object; *role_out gets its role. */
static void param_json(struct kparams *kp, CXCursor p, enum params_role *role_out)
{
    struct buf *b = &kp->json;
    CXString ns = clang_getCursorSpelling(p);
    const char *name = clang_getCString(ns) ? clang_getCString(ns) : "";
    CXType t = clang_getCursorType(p);
    CXType canon = clang_getCanonicalType(t);
    char *written = type_str(t), *canon_s = type_str(canon);
    buf_adds(b, "{\"name\":");
    buf_add_json_str(b, name, strlen(name));
    buf_adds(b, ",\"type\":");
    buf_add_json_str(b, written, strlen(written));
    buf_adds(b, ",\"canonical\":");
    buf_add_json_str(b, canon_s, strlen(canon_s));
    enum params_role role = params_role_of(name);
    long long size = clang_Type_getSizeOf(canon);
    if (strstr(written, "cudaGraphConditionalHandle")) /* issue #14, P7: graph-only kernels */
        buf_addf(&kp->note, "%sparameter '%s': a cudaGraphConditionalHandle exists only in a "
                 "CUDA graph with a conditional node (cudaGraphConditionalHandleCreate); the "
                 "harness launches the kernel alone with 0, on which cudaGraphSetConditional "
                 "faults: a kernel for a graph's conditional node, not runnable alone",
                 kp->note.len ? "; " : "", name);
    int dependent = size == CXTypeLayoutError_Dependent;
    if (canon.kind == CXType_Pointer) {
        CXType pt = clang_getPointeeType(canon);
        char *elem = type_str(clang_getPointeeType(t));
        long long es = clang_Type_getSizeOf(pt);
        buf_adds(b, ",\"kind\":\"pointer\",\"elem\":");
        buf_add_json_str(b, elem, strlen(elem));
        buf_addf(b, ",\"const\":%s,\"elem_bytes\":%lld,\"template_dependent\":%s",
                 clang_isConstQualifiedType(pt) ? "true" : "false", es > 0 ? es : 0,
                 es == CXTypeLayoutError_Dependent ? "true" : "false");
        free(elem);
        record_members(kp, b, name, pt, 1);
        role = PARAMS_ROLE_BUFFER;
    } else if (canon.kind == CXType_LValueReference || canon.kind == CXType_RValueReference) {
        reference_json(kp, b, name, t, canon);
        role = PARAMS_ROLE_BUFFER;
    } else if (dependent || canon.kind == CXType_Unexposed) {
        buf_adds(b, ",\"kind\":\"template\",\"template_dependent\":true");
    } else if (is_scalar_kind(canon.kind)) {
        buf_addf(b, ",\"kind\":\"scalar\",\"bits\":%lld,\"float\":%s", size * 8,
                 canon.kind >= CXType_Float && canon.kind <= CXType_LongDouble ? "true" : "false");
    } else if (canon.kind == CXType_Record) {
        buf_addf(b, ",\"kind\":\"struct\",\"bytes\":%lld", size);
        record_members(kp, b, name, canon, 0);
    } else {
        buf_addf(b, ",\"kind\":\"other\",\"bytes\":%lld", size);
    }
    buf_adds(b, ",\"role\":");
    buf_add_json_str(b, params_role_name(role), strlen(params_role_name(role)));
    buf_adds(b, "}");
    *role_out = role;
    free(written);
    free(canon_s);
    clang_disposeString(ns);
}


static enum CXChildVisitResult first_expr(CXCursor c, CXCursor p, void *d)
{
    (void)p;
    if (clang_isExpression(clang_getCursorKind(c))) {
        *(CXCursor *)d = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

/* The default argument of a non-type template parameter, as written without spaces
 * ("template <int BM = 64>" -> "64"), or NULL. */
static char *default_arg(CXCursor param)
{
    CXCursor e = clang_getNullCursor();
    clang_visitChildren(param, first_expr, &e);
    if (clang_Cursor_isNull(e))
        return NULL;
    CXSourceRange r = clang_getCursorExtent(e);
    CXFile f1 = NULL, f2 = NULL;
    unsigned l, col, a, b;
    clang_getExpansionLocation(clang_getRangeStart(r), &f1, &l, &col, &a);
    clang_getExpansionLocation(clang_getRangeEnd(r), &f2, &l, &col, &b);
    size_t size = 0;
    const char *text = f1 ? clang_getFileContents(clang_Cursor_getTranslationUnit(e), f1, &size)
                          : NULL;
    if (!text || f1 != f2 || b <= a || b - a > 60 || b > size)
        return NULL;
    struct buf t = BUF_INIT;
    buf_add(&t, text + a, b - a);
    for (size_t i = 0; i < t.len; i++)
        if (t.data[i] == ' ' || t.data[i] == '\n' || t.data[i] == '\t')
            t.data[i] = '_';
    if (strchr(t.data, '_') || !t.len) { /* keep it to one token: the record splits on spaces */
        buf_release(&t);
        return NULL;
    }
    return buf_detach(&t, NULL);
}

static enum CXChildVisitResult first_enumerator(CXCursor c, CXCursor p, void *d)
{
    (void)p;
    if (clang_getCursorKind(c) != CXCursor_EnumConstantDecl)
        return CXChildVisit_Continue;
    *(long long *)d = clang_getEnumConstantDeclValue(c);
    return CXChildVisit_Break;
}

/* The value of an enumeration template parameter of type t, as one token the harness writes
 * as a template argument: "(ns::Algo)0", the enumeration's first enumerator cast to it (a
 * cast keeps the call-site value rewrite of tinst.c simple: it replaces the number). NULL when
 * the type cannot be named at file scope (local, anonymous). */
static char *enum_value(CXType t)
{
    char *name = type_str(clang_getCanonicalType(t));
    long long v = 0;
    clang_visitChildren(clang_getTypeDeclaration(t), first_enumerator, &v);
    char *r = NULL;
    if (*name && !strchr(name, ' ') && !strchr(name, '(') && strlen(name) < 100)
        r = xasprintf("(%s)%lld", name, v);
    free(name);
    return r;
}

static enum CXChildVisitResult kparam_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct kparams *kp = d;
    enum CXCursorKind k = clang_getCursorKind(c);
    CXString s = clang_getCursorSpelling(c);
    const char *name = clang_getCString(s) ? clang_getCString(s) : "";
    if (k == CXCursor_ParmDecl) {
        enum params_role role;
        if (kp->n++)
            buf_addch(&kp->json, ',');
        param_json(kp, c, &role);
        buf_addf(&kp->roles, "%s%s", kp->roles.len ? "," : "", params_role_name(role));
        buf_addf(&kp->names, "%s%s", kp->names.len ? "," : "", *name ? name : "_");
    } else if (k == CXCursor_TemplateTypeParameter) {
        buf_addf(&kp->tparams, "type %s float\n", name);
    } else if (k == CXCursor_NonTypeTemplateParameter) {
        CXType t = clang_getCanonicalType(clang_getCursorType(c));
        char *def = default_arg(c), *ev = NULL;
        if (params_is_block_name(name) && t.kind != CXType_Bool)
            buf_addf(&kp->tparams, "block %s BX\n", name);
        else if (def)
            buf_addf(&kp->tparams, "value %s %s\n", name, def);
        else if (t.kind == CXType_Bool)
            buf_addf(&kp->tparams, "value %s false\n", name);
        else if (t.kind >= CXType_Char_U && t.kind <= CXType_Int128)
            buf_addf(&kp->tparams, "value %s 1\n", name);
        else if (t.kind == CXType_Enum && (ev = enum_value(t)))
            buf_addf(&kp->tparams, "value %s %s\n", name, ev);
        else
            kp->unsupported = 1;
        free(ev);
        free(def);
    } else if (k == CXCursor_TemplateTemplateParameter) {
        kp->unsupported = 1;
    }
    clang_disposeString(s);
    return CXChildVisit_Continue;
}

char *kparams_qualified_name(CXCursor c, int for_call)
{
    struct buf b = BUF_INIT;
    CXCursor chain[32];
    int n = 0;
    for (CXCursor p = clang_getCursorSemanticParent(c); n < 32; p = clang_getCursorSemanticParent(p)) {
        enum CXCursorKind k = clang_getCursorKind(p);
        if (k != CXCursor_Namespace && k != CXCursor_LinkageSpec)
            break;
        if (k == CXCursor_Namespace)
            chain[n++] = p;
    }
    for (int i = n - 1; i >= 0; i--) {
        CXString s = clang_getCursorSpelling(chain[i]);
        const char *name = clang_getCString(s);
        if (name && *name)
            buf_addf(&b, "%s::", name);
        else if (!for_call)
            buf_adds(&b, "(anonymous)::");
        clang_disposeString(s);
    }
    CXString s = clang_getCursorSpelling(c);
    buf_adds(&b, clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return buf_detach(&b, NULL);
}

void kparams_collect(struct kparams *out, CXCursor kernel)
{
    buf_addch(&out->json, '[');
    clang_visitChildren(kernel, kparam_visit, out);
    buf_addch(&out->json, ']');
}

void kparams_release(struct kparams *kp)
{
    buf_release(&kp->json);
    buf_release(&kp->roles);
    buf_release(&kp->names);
    buf_release(&kp->tparams);
    buf_release(&kp->members);
    buf_release(&kp->note);
}
