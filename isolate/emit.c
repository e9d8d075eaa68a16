/* The closure as source text, in translation-unit order: system includes (the tree's own
 * #include lines that brought them in), the tree's macros, then declarations wrapped in their
 * namespaces; and the "kernel" record that carries it with the kernel's parameter model. */
#include "isolate/extract_impl.h"

#include "common/record.h"
#include "common/xalloc.h"
#include "isolate/indexing.h"
#include "isolate/kparams.h"
#include "isolate/srctext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            implicit_include(b, extract_file_info(x, cl->sysfiles[s])->path);
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

/* A unit's source text, widened to whole conditional blocks (an `#ifdef X` / `__host__
 * __device__` / `#endif` before the declaration keeps its #ifdef). */
static void add_unit_text(struct buf *b, struct ctx *x, const struct top_decl *t)
{
    size_t size = 0;
    const char *text = clang_getFileContents(x->tu, t->file, &size);
    unsigned start = t->start, end = t->end;
    if (text)
        srctext_balance_conditionals(text, size, &start, &end);
    extract_add_text(b, x, t->file, start, end);
}

void emit_source(struct buf *b, struct closure *cl)
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
        extract_add_text(&piece, x, m->file, m->start, m->end);
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
        add_unit_text(&piece, x, t);
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

/* The first undeclared name inside the closure's units, else NULL. Unless `any`, only when a
 * header was missing (the kernel needs what the missing header declares); with `any`, also in
 * a unit that lacks a declaration its includer brings (a `.cu` file written to be #included
 * into another unit, parsed alone: its kernels' closures are incomplete there). */
static const struct lack *closure_lack(struct closure *cl, int any)
{
    struct ctx *x = cl->x;
    if (!x->missing.len && !any)
        return NULL;
    for (size_t i = 0; i < x->nlacks; i++)
        for (size_t j = 0; j < cl->nunits; j++) {
            const struct top_decl *t = &x->tops[cl->units[j]];
            if (t->file == x->lacks[i].file && t->start <= x->lacks[i].offset &&
                x->lacks[i].offset <= t->end)
                return &x->lacks[i];
        }
    return NULL;
}

/* "unknown type name 'T' at path:line": what an incomplete closure lacks, and where. */
static char *lack_text(struct ctx *x, const struct lack *l)
{
    unsigned lline = 0, col, off;
    CXFile lf = NULL;
    CXSourceLocation at = clang_getLocationForOffset(x->tu, l->file, l->offset);
    clang_getExpansionLocation(at, &lf, &lline, &col, &off);
    return xasprintf("%s at %s:%u", l->what, extract_rel_path(x, l->file), lline);
}

/* The note of a kernel left out because a missing header declares what it uses. */
static void note_lacking(struct ctx *x, CXCursor k, const struct lack *l)
{
    unsigned line = 0, lline = 0, col, off;
    CXFile f = extract_location_file(k, &line), lf = NULL;
    CXSourceLocation at = clang_getLocationForOffset(x->tu, l->file, l->offset);
    clang_getExpansionLocation(at, &lf, &lline, &col, &off);
    char *q = kparams_qualified_name(k, 0);
    char *kf = xstrdup(extract_rel_path(x, f));
    char *m = xasprintf("%s:%u: kernel '%s' needs what a missing header declares (%s at %s:%u; "
                        "not found: %s); not isolated: add the header, or its folder, to the tree",
                        kf, line, q, l->what, extract_rel_path(x, l->file), lline,
                        x->missing.data);
    extract_note(x, "kernel_missing_header", m);
    free(m);
    free(kf);
    free(q);
}

void emit_kernel(struct ctx *x, CXCursor k)
{
    struct closure cl;
    struct kparams kp = KPARAMS_INIT;
    struct buf src = BUF_INIT;
    char *qname = NULL, *call = NULL, *incomplete = NULL;
    closure_init(&cl, x, NULL);
    closure_push_decl(&cl, k);
    kparams_collect(&kp, k);
    tinst_from_calls(&kp.tparams, x, k, &cl);
    tinst_from_uses(&kp.tparams, x, k, &cl);
    closure_complete(&cl);
    const struct lack *lack = closure_lack(&cl, 0);
    if (lack) {
        note_lacking(x, k, lack);
        goto done;
    }
    if ((lack = closure_lack(&cl, 1)) != NULL) /* kept; another unit's complete copy wins */
        incomplete = lack_text(x, lack);
    emit_source(&src, &cl);
    struct buf clean = BUF_INIT;
    size_t fixed = srctext_fix_utf8(&clean, src.data, src.len);
    if (fixed) {
        char *m = xasprintf("kernel in %s: %zu invalid UTF-8 byte(s) rewritten in the isolated "
                            "source (octal escapes in literals, '?' elsewhere)",
                            extract_rel_path(x, extract_location_file(k, NULL)), fixed);
        extract_note(x, "non_utf8", m);
        free(m);
    }
    buf_release(&src);
    src = clean;
    CXFile f = NULL;
    unsigned a, e, line = 0;
    (void)extract_extent(k, &f, &a, &e);
    extract_location_file(k, &line);
    qname = kparams_qualified_name(k, 0);
    call = kparams_qualified_name(k, 1);
    char *explicit_args = tinst_explicit_args(k);
    if (explicit_args) {
        char *named = xasprintf("%s%s", call, explicit_args);
        free(call);
        call = named;
        free(explicit_args);
    }
    if (kp.unsupported) {
        char *m = xasprintf("%s:%u: kernel '%s' has template parameters lscat cannot instantiate "
                            "(template template, non-integral or pack); skipped",
                            extract_rel_path(x, f), line, qname);
        extract_note(x, "unsupported_template", m);
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
    record_begin(x->out, "kernel", 21);
    record_field_str(x->out, "name", qname);
    record_field_str(x->out, "call", call);
    record_field_str(x->out, "path", extract_rel_path(x, f));
    record_field_int(x->out, "line", line);
    record_field_str(x->out, "tparams", kp.tparams.data);
    record_field_int(x->out, "template", clang_getCursorKind(k) == CXCursor_FunctionTemplate);
    record_field_int(x->out, "is2d", is2d);
    record_field_str(x->out, "indexing", indexing_name(ix.kind));
    record_field_str(x->out, "indexing_uses", uses);
    record_field_int(x->out, "dynshared", cl.dynshared);
    record_field_int(x->out, "device_launch", strstr(src.data, "<<<") != NULL);
    record_field_int(x->out, "cooperative", ix.grid_sync);
    record_field_str(x->out, "incomplete", incomplete ? incomplete : "");
    record_field(x->out, "source", src.data, src.len);
    record_field(x->out, "params", kp.json.data, kp.json.len);
    record_field_str(x->out, "roles", kp.roles.data);
    record_field_str(x->out, "param_names", kp.names.data);
    record_field_int(x->out, "param_count", kp.n);
    record_field_str(x->out, "members", kp.members.len ? kp.members.data : "");
    record_field_str(x->out, "arg_note", kp.note.len ? kp.note.data : "");
    struct launch_src ls;
    struct buf lt = BUF_INIT;
    launch_find(&ls, x, k);
    launch_text(&lt, &ls);
    record_field_str(x->out, "launch", lt.len ? lt.data : "");
    buf_release(&lt);
    launch_src_release(&ls);
done:
    free(qname);
    free(call);
    free(incomplete);
    buf_release(&src);
    kparams_release(&kp);
    closure_release(&cl);
}
