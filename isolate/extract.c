/* Kernel discovery with libclang's C API (LLVM 22). One translation unit is parsed as CUDA with
 * a detailed preprocessing record; its top-level declarations, macros, includes and inclusion
 * graph are collected, and every __global__ definition inside the tree is handed to the closure
 * (closure.c) and emitted as the original source text (emit.c). Nothing from outside the tree
 * is copied: outside declarations become the #include directive of the tree that brought them
 * in. The same parse answers declaration lookups (`lscat isolate resolve`). */
#include "isolate/extract.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/record.h"
#include "common/xalloc.h"
#include "isolate/extract_impl.h"
#include "isolate/kparams.h"
#include "isolate/srctext.h"

#include <clang-c/Index.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ files and locations */

struct file_ent *extract_file_info(struct ctx *x, CXFile f)
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

int extract_in_tree(struct ctx *x, CXFile f)
{
    return f && extract_file_info(x, f)->in_tree;
}

const char *extract_rel_path(struct ctx *x, CXFile f)
{
    struct file_ent *e = extract_file_info(x, f);
    return e->in_tree ? e->path + x->root_len + 1 : e->path;
}

/* The cursor's extent as expansion offsets in one file; 0 when it spans files or has none. */
int extract_extent(CXCursor c, CXFile *file, unsigned *start, unsigned *end)
{
    CXSourceRange r = clang_getCursorExtent(c);
    CXFile f1 = NULL, f2 = NULL;
    unsigned l, col;
    clang_getExpansionLocation(clang_getRangeStart(r), &f1, &l, &col, start);
    clang_getExpansionLocation(clang_getRangeEnd(r), &f2, &l, &col, end);
    *file = f1;
    return f1 && f1 == f2 && *end >= *start;
}

CXFile extract_location_file(CXCursor c, unsigned *line)
{
    CXFile f = NULL;
    unsigned l = 0, col, off;
    clang_getExpansionLocation(clang_getCursorLocation(c), &f, &l, &col, &off);
    if (line)
        *line = l;
    return f;
}

/* Source text of [start, end) of a file of the translation unit. */
void extract_add_text(struct buf *b, struct ctx *x, CXFile f, unsigned start, unsigned end)
{
    size_t size = 0;
    const char *text = clang_getFileContents(x->tu, f, &size);
    if (!text || end > size || start > end)
        return;
    buf_add(b, text + start, end - start);
}

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

int extract_has_child_kind(CXCursor c, enum CXCursorKind kind)
{
    struct child_kind_arg a = { kind, 0 };
    clang_visitChildren(c, child_kind_visit, &a);
    return a.found;
}

/* ------------------------------------------------------------------ first pass: the TU */

void extract_note(struct ctx *x, const char *cls, const char *msg)
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
    if (extract_extent(c, &ef, &a, &b))
        extract_add_text(&t, x, ef, a, b);
    d->text = buf_detach(&t, NULL);
    int outside = d->included && !extract_in_tree(x, d->included) &&
                  !extract_file_info(x, d->included)->allowed_system;
    if (d->spelling[0] == '/' || outside ||
        (strstr(d->spelling, "..") && d->included && !extract_in_tree(x, d->included))) {
        d->refused = 1;
        char *m = xasprintf("%s: #include \"%s\" names a file outside the repository tree%s%s "
                            "(refused: nothing outside the tree is included)",
                            extract_rel_path(x, f), d->spelling, d->included ? ": " : "",
                            d->included ? extract_file_info(x, d->included)->path : "");
        extract_note(x, "include_refused", m);
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
    m->in_tree = extract_in_tree(x, f);
}

static int macro_index(struct ctx *x, CXCursor def)
{
    for (size_t i = x->nmacros; i-- > 0;)
        if (clang_equalCursors(x->macros[i].c, def))
            return (int)i;
    return -1;
}

int extract_macro_by_name(struct ctx *x, const char *name)
{
    for (size_t i = x->nmacros; i-- > 0;)
        if (strcmp(x->macros[i].name, name) == 0)
            return (int)i;
    return -1;
}

CXCursor extract_var_by_name(struct ctx *x, const char *name, CXCursor near)
{
    CXCursor best = clang_getNullCursor();
    CXCursor ns = clang_Cursor_isNull(near) ? near : clang_getCursorSemanticParent(near);
    for (size_t i = 0; i < x->ntops; i++) {
        CXCursor t = x->tops[i].c;
        if (clang_getCursorKind(t) != CXCursor_VarDecl)
            continue;
        CXString ts = clang_getCursorSpelling(t);
        int same = clang_getCString(ts) && strcmp(clang_getCString(ts), name) == 0;
        clang_disposeString(ts);
        if (same && (clang_Cursor_isNull(best) ||
                     clang_equalCursors(clang_getCursorSemanticParent(t), ns)))
            best = t;
    }
    return best;
}

static int is_kernel(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    return (k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate) &&
           extract_has_child_kind(c, CXCursor_CUDAGlobalAttr);
}

static enum CXChildVisitResult top_visit(CXCursor c, CXCursor parent, void *d)
{
    (void)parent;
    struct ctx *x = d;
    enum CXCursorKind k = clang_getCursorKind(c);
    CXFile f;
    unsigned a, b;
    if (!extract_extent(c, &f, &a, &b))
        f = extract_location_file(c, NULL), a = b = 0;
    if (k == CXCursor_MacroDefinition) {
        collect_macro(x, c, f, a, b);
        return CXChildVisit_Continue;
    }
    if (!f || !extract_in_tree(x, f))
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

/* ------------------------------------------------------------------ the file */

static void report_bodiless(struct ctx *x)
{
    for (size_t i = 0; i < x->nkdecls; i++) {
        CXCursor def = clang_getCursorDefinition(x->kernel_decls[i]);
        if (!clang_Cursor_isNull(def))
            continue;
        unsigned line;
        CXFile f = extract_location_file(x->kernel_decls[i], &line);
        char *q = kparams_qualified_name(x->kernel_decls[i], 0);
        char *m = xasprintf("%s:%u: kernel '%s' is declared but no file of the tree defines it (no body)",
                            extract_rel_path(x, f), line, q);
        record_begin(x->out, "kdecl", 2);
        record_field_str(x->out, "name", q);
        record_field_str(x->out, "message", m);
        free(m);
        free(q);
    }
}

struct unseen {
    struct ctx *x;
    const char *path;
    unsigned *lines;   /* first and last line of each skipped range */
    size_t nlines, cap;
    struct buf names;  /* "\nname\n" of each kernel the parse found in the file */
};

/* Did the parse find a kernel of this name in the file (the variant of another branch)? */
static int found_name(struct unseen *u, const char *name)
{
    char *key = xasprintf("\n%s\n", name);
    int found = u->names.len && strstr(u->names.data, key) != NULL;
    free(key);
    return found;
}

static void note_inactive(void *arg, unsigned line, const char *name)
{
    struct unseen *u = arg;
    if (found_name(u, name))
        return;
    char *m = xasprintf("%s:%u: kernel '%s' is in a preprocessor branch this parse does not "
                        "take (#if/#ifdef false with the tree's own macros and no -D); not "
                        "isolated: define the macro the branch tests to build it",
                        u->path, line, name);
    extract_note(u->x, "kernel_inactive_branch", m);
    free(m);
}

/* A definition in the text that is neither a kernel of the AST nor in a skipped range. */
static void note_unparsed(void *arg, unsigned line, const char *name)
{
    struct unseen *u = arg;
    if (found_name(u, name))
        return;
    for (size_t i = 0; i + 1 < u->nlines; i += 2)
        if (u->lines[i] <= line && line <= u->lines[i + 1])
            return;
    char *m = xasprintf("%s:%u: kernel '%s' is defined in the text but the parse has no valid "
                        "declaration of it (first error: %s); not isolated", u->path, line, name,
                        u->x->first_error);
    extract_note(u->x, "kernel_unparsed", m);
    free(m);
}

static void add_line(struct unseen *u, unsigned line)
{
    XGROW(u->lines, u->nlines + 1, u->cap);
    u->lines[u->nlines++] = line;
}

/* Kernel definitions of the parsed file's text that no kernel of the AST stands for (by name:
 * the other variant of a kernel found in the file is no loss), a note each, so that a kernel
 * is never missing without a row: in ranges the preprocessor skipped (`#ifdef WITH_X`, a
 * kernel only the `#else` of an `#if __CUDA_ARCH__` test defines), and, when the parse had
 * errors, anywhere else (a declaration clang dropped). Only the main file: a header reports
 * its own when parsed alone. */
static void report_unseen(struct ctx *x)
{
    CXFile f = clang_getFile(x->tu, x->o->file);
    size_t n = 0;
    const char *text = f ? clang_getFileContents(x->tu, f, &n) : NULL;
    if (!text || !extract_in_tree(x, f))
        return;
    struct unseen u = { x, extract_rel_path(x, f), NULL, 0, 0, BUF_INIT };
    for (size_t i = 0; i < x->nkernels; i++) {
        if (extract_location_file(x->kernels[i], NULL) != f)
            continue;
        CXString sp = clang_getCursorSpelling(x->kernels[i]);
        buf_addf(&u.names, "\n%s\n", clang_getCString(sp) ? clang_getCString(sp) : "");
        clang_disposeString(sp);
    }
    CXSourceRangeList *sk = clang_getSkippedRanges(x->tu, f);
    for (unsigned i = 0; sk && i < sk->count; i++) {
        unsigned a, b, la, lb, col;
        clang_getSpellingLocation(clang_getRangeStart(sk->ranges[i]), NULL, &la, &col, &a);
        clang_getSpellingLocation(clang_getRangeEnd(sk->ranges[i]), NULL, &lb, &col, &b);
        if (a < b && b <= n)
            srctext_kernels_in(text, n, a, b, note_inactive, &u);
        add_line(&u, la);
        add_line(&u, lb);
    }
    if (sk)
        clang_disposeSourceRangeList(sk);
    if (x->first_error)
        srctext_kernels_in(text, n, 0, n, note_unparsed, &u);
    free(u.lines);
    buf_release(&u.names);
}

/* Does clang's message say a name is not declared (what a missing header leaves behind)? */
static int says_undeclared(const char *msg)
{
    static const char *const kinds[] = { "undeclared identifier", "unknown type name",
                                         "no template named", "no type named", "no member named",
                                         "undeclared function", NULL };
    for (const char *const *k = kinds; *k; k++)
        if (strstr(msg, *k))
            return 1;
    return 0;
}

/* Keep what error `d` says when it matters to a kernel's closure: the header a "file not
 * found" names, or where in the tree a name is undeclared. */
static void note_lack(struct ctx *x, CXDiagnostic d)
{
    CXString s = clang_getDiagnosticSpelling(d);
    const char *msg = clang_getCString(s) ? clang_getCString(s) : "";
    const char *q = strchr(msg, '\''), *q2 = q ? strchr(q + 1, '\'') : NULL;
    if (strstr(msg, "file not found") && q && q2) {
        char *name = xstrndup(q, (size_t)(q2 - q) + 1);
        if (!strstr(x->missing.data ? x->missing.data : "", name))
            buf_addf(&x->missing, "%s%s", x->missing.len ? ", " : "", name);
        free(name);
    } else if (says_undeclared(msg)) {
        CXFile f = NULL;
        unsigned l, col, off;
        clang_getExpansionLocation(clang_getDiagnosticLocation(d), &f, &l, &col, &off);
        if (f && extract_in_tree(x, f)) {
            XGROW(x->lacks, x->nlacks + 1, x->lacks_cap);
            x->lacks[x->nlacks++] = (struct lack){ f, off, xstrndup(msg, 200) };
        }
    }
    clang_disposeString(s);
}

/* "tu" record: error count and the first error, with paths relative to the tree. */
static void report_diagnostics(struct ctx *x, double parse_s)
{
    unsigned n = clang_getNumDiagnostics(x->tu), errors = 0;
    char *first = NULL;
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(x->tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            note_lack(x, d);
            CXString s = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation);
            const char *msg = clang_getCString(s);
            if (msg && strstr(msg, "file not found"))
                extract_note(x, "missing_header", strncmp(msg, x->o->root, x->root_len) == 0
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
    x->first_error = first;
}

static void ctx_release(struct ctx *x)
{
    free(x->first_error);
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
    for (size_t i = 0; i < x->nlacks; i++)
        free(x->lacks[i].what);
    free(x->lacks);
    buf_release(&x->missing);
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

/* Does folder `dir` of the tree hold a header the toolkit also has (cuda.h, cuda_runtime.h,
 * ...)? clang's CUDA wrapper includes "cuda.h": a tree's own copy earlier on the path hides the
 * toolkit's (CUDA_VERSION undefined, 'crt/device_runtime.h' not found). Such a folder is
 * searched after the system folders (-idirafter); its own files still find each other. */
static int shadows_toolkit(const char *dir, const char *cuda_home)
{
    static const char *const names[] = { "cuda.h", "cuda_runtime.h", "cuda_runtime_api.h",
                                         "driver_types.h", "vector_types.h", "device_functions.h",
                                         "math_functions.h", "host_defines.h", "builtin_types.h",
                                         NULL };
    int hit = 0;
    for (const char *const *n = names; *n && !hit; n++) {
        char *mine = fs_join(dir, *n), *tk = xasprintf("%s/include/%s", cuda_home, *n);
        hit = fs_exists(mine) && fs_exists(tk);
        free(mine);
        free(tk);
    }
    return hit;
}

/* "-target-sdk-version=13.0" from the toolkit's cuda.h (CUDA_VERSION 13000), or NULL. clang
 * does not know CUDA 13 and then assumes an old one, whose kernel launches call
 * cudaConfigureCall: every `k<<<g, b>>>(...)` of host code was an error and left out of the
 * AST, so call sites could not say how a kernel template is instantiated (tinst.c). */
static char *sdk_version_arg(const char *cuda_home)
{
    char *path = xasprintf("%s/include/cuda.h", cuda_home), *arg = NULL;
    struct buf b = BUF_INIT;
    const char *p = NULL;
    if (buf_read_file(&b, path) == 0 && (p = strstr(b.data, "#define CUDA_VERSION ")) != NULL) {
        long v = strtol(p + 21, NULL, 10);
        if (v >= 9020)
            arg = xasprintf("-target-sdk-version=%ld.%ld", v / 1000, v % 1000 / 10);
    }
    buf_release(&b);
    free(path);
    return arg;
}

/* Parse o->file into x->tu with isolate's arguments (CUDA, the tree's -I folders, refused
 * includes as empty files). `*parse_s` gets the parse time. Returns 0 or LSCAT_ERR. */
static int parse_tu(struct ctx *x, CXIndex index, const struct extract_options *o,
                    double *parse_s)
{
    int rc = 0;
    const char **args = xcalloc((size_t)(o->n_include_dirs + o->n_after_dirs) * 2 + 32, sizeof *args);
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
    args[na++] = "-ferror-limit=1000"; /* a kernel after the limit cannot be judged (emit.c) */
    args[na++] = "-fbracket-depth=512";
    args[na++] = "-fgpu-rdc"; /* device-side launches (dynamic parallelism) parse, so a parent
                                 kernel's closure includes the kernels it launches */
    if (fs_is_dir(cccl)) { /* CUDA 13 keeps cub/thrust/libcu++ there; nvcc adds it itself */
        args[na++] = "-isystem";
        args[na++] = cccl;
    }
    char *sdk = sdk_version_arg(o->cuda_home);
    if (sdk) {
        args[na++] = "-Xclang";
        args[na++] = sdk;
    }
    if (!fs_exists(cuda_rt)) { /* no CUDA headers: clang's CUDA mode without them (CI) */
        args[na++] = "-nocudainc";
        for (const char *const *d = no_cuda_defines; *d; d++)
            args[na++] = *d;
    }
    for (int i = 0; i < o->n_include_dirs; i++) { /* a folder shadowing the toolkit goes last */
        args[na++] = shadows_toolkit(o->include_dirs[i], o->cuda_home) ? "-idirafter" : "-I";
        args[na++] = o->include_dirs[i];
    }
    for (int i = 0; i < o->n_after_dirs; i++) {
        args[na++] = "-idirafter";
        args[na++] = o->after_dirs[i];
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
    free(sdk);
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
    struct ctx x = { .o = o, .root_len = strlen(o->root), .out = out, .missing = BUF_INIT };
    CXIndex index = clang_createIndex(0, 0);
    double parse_s = 0;
    int rc = parse_tu(&x, index, o, &parse_s);
    if (rc == 0) {
        report_diagnostics(&x, parse_s);
        collect(&x);
        for (size_t i = 0; i < x.nkernels; i++)
            emit_kernel(&x, x.kernels[i]);
        report_bodiless(&x);
        report_unseen(&x);
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
    buf_init(&t->x.missing, 0);
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
    CXFile f = extract_location_file(c, &line);
    buf_addf(origin, "%s:%u", extract_rel_path(x, f), line);
}

int extract_tu_decl(struct buf *out, struct buf *origin, int *pieces, struct extract_tu *t,
                    const char *ident, const char *have)
{
    struct ctx *x = &t->x;
    struct closure cl;
    int found = 0, mi = extract_macro_by_name(x, ident);
    *pieces = 0;
    closure_init(&cl, x, have);
    if (mi >= 0 && !x->macros[mi].in_tree)
        mi = -1; /* a system macro: not the repository's to give */
    for (size_t i = 0; mi < 0 && i < x->ntops; i++) {
        if (!extract_in_tree(x, x->tops[i].file) || !defines_ident(x->tops[i].c, ident))
            continue;
        if (!found)
            origin_of(origin, x, x->tops[i].c);
        closure_push_decl(&cl, x->tops[i].c);
        found = 1;
    }
    if (mi >= 0) {
        buf_addf(origin, "%s:", extract_rel_path(x, x->macros[mi].file));
        unsigned line = 0;
        extract_location_file(x->macros[mi].c, &line);
        buf_addf(origin, "%u", line);
        closure_use_macro(&cl, mi);
        found = 1;
    }
    if (found) {
        closure_complete(&cl);
        emit_source(out, &cl);
        *pieces = cl.pieces;
    }
    closure_release(&cl);
    return found ? 0 : LSCAT_ENOTFOUND;
}
