/* Repair strategies for failed builds. They work on the text of kernel.cu with a light scan
 * (comments, strings, preprocessor lines, brace depth) rather than a parser: the diagnostics
 * already say where and what; the scan finds the enclosing top-level declaration. */
#include "execute/repair.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/srcscan.h"
#include "execute/texref.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- fix bookkeeping */

struct edit { size_t start, end; char *why; };

struct round {
    struct buf *fixes;
    int applied;
    struct edit *cuts;
    size_t ncuts, cuts_alloc;
};

static void note(struct round *r, const char *fmt, const char *a, const char *b)
{
    struct buf one = BUF_INIT;
    buf_addf(&one, fmt, a, b ? b : "");
    if (r->fixes->len)
        buf_addch(r->fixes, ',');
    buf_add_json_str(r->fixes, one.data, one.len);
    buf_release(&one);
    r->applied++;
}

static int is_kernel_file(const struct diag *d, const char *kernel_file)
{
    if (!d->file || d->line <= 0)
        return 0;
    const char *base = strrchr(d->file, '/');
    return strcmp(base ? base + 1 : d->file, kernel_file) == 0;
}

static void add_cut(struct round *r, size_t start, size_t end, char *why)
{
    for (size_t i = 0; i < r->ncuts; i++)
        if (start < r->cuts[i].end && r->cuts[i].start < end) {
            free(why);
            return;
        }
    XGROW(r->cuts, r->ncuts + 1, r->cuts_alloc);
    r->cuts[r->ncuts++] = (struct edit){ start, end, why };
}

static int cmp_cut_desc(const void *a, const void *b)
{
    const struct edit *x = a, *y = b;
    return x->start < y->start ? 1 : x->start > y->start ? -1 : 0;
}

static void apply_cuts(struct buf *src, struct round *r)
{
    if (r->ncuts)
        qsort(r->cuts, r->ncuts, sizeof(*r->cuts), cmp_cut_desc);
    for (size_t i = 0; i < r->ncuts; i++) {
        struct edit *e = &r->cuts[i];
        struct buf out = BUF_INIT;
        buf_add(&out, src->data, e->start);
        buf_addf(&out, "/* lscat execute: removed (%s) */", e->why);
        buf_adds(&out, src->data + e->end);
        buf_release(src);
        *src = out;
        free(e->why);
    }
    free(r->cuts);
}

/* Insert `text` at offset `at`. */
static void insert_at(struct buf *src, size_t at, const char *text)
{
    struct buf out = BUF_INIT;
    buf_add(&out, src->data, at);
    buf_adds(&out, text);
    buf_adds(&out, src->data + at);
    buf_release(src);
    *src = out;
}

/* ---------------------------------------------------------------- header table */

struct ident_header { const char *ident; const char *header; };

static const struct ident_header header_table[] = {
    { "printf", "<cstdio>" }, { "fprintf", "<cstdio>" }, { "sprintf", "<cstdio>" },
    { "snprintf", "<cstdio>" }, { "puts", "<cstdio>" }, { "FILE", "<cstdio>" },
    { "fopen", "<cstdio>" }, { "fclose", "<cstdio>" }, { "stderr", "<cstdio>" },
    { "malloc", "<cstdlib>" }, { "calloc", "<cstdlib>" }, { "free", "<cstdlib>" },
    { "exit", "<cstdlib>" }, { "rand", "<cstdlib>" }, { "srand", "<cstdlib>" },
    { "atoi", "<cstdlib>" }, { "abort", "<cstdlib>" }, { "RAND_MAX", "<cstdlib>" },
    { "memcpy", "<cstring>" }, { "memset", "<cstring>" }, { "strlen", "<cstring>" },
    { "strcmp", "<cstring>" }, { "assert", "<cassert>" }, { "FLT_MAX", "<cfloat>" },
    { "FLT_MIN", "<cfloat>" }, { "DBL_MAX", "<cfloat>" }, { "FLT_EPSILON", "<cfloat>" },
    { "INT_MAX", "<climits>" }, { "INT_MIN", "<climits>" }, { "UINT_MAX", "<climits>" },
    { "uint8_t", "<cstdint>" }, { "uint16_t", "<cstdint>" }, { "uint32_t", "<cstdint>" },
    { "uint64_t", "<cstdint>" }, { "int8_t", "<cstdint>" }, { "int16_t", "<cstdint>" },
    { "int32_t", "<cstdint>" }, { "int64_t", "<cstdint>" }, { "M_PI", "<cmath>" },
    { "uintptr_t", "<cstdint>" }, { "intptr_t", "<cstdint>" }, { "std::uintptr_t", "<cstdint>" },
    { "std::intptr_t", "<cstdint>" }, { "std::uint32_t", "<cstdint>" },
    { "std::uint64_t", "<cstdint>" }, { "std::int32_t", "<cstdint>" },
    { "std::int64_t", "<cstdint>" }, { "std::size_t", "<cstddef>" },
    { "std::vector", "<vector>" }, { "std::string", "<string>" }, { "std::min", "<algorithm>" },
    { "std::max", "<algorithm>" }, { "std::sort", "<algorithm>" }, { "std::swap", "<utility>" },
    { "std::pair", "<utility>" }, { "std::cout", "<iostream>" }, { "std::cerr", "<iostream>" },
    { "std::endl", "<iostream>" }, { "std::numeric_limits", "<limits>" },
    { "std::sqrt", "<cmath>" }, { "std::abs", "<cmath>" }, { "std::exp", "<cmath>" },
    { "std::function", "<functional>" }, { "std::map", "<map>" }, { "std::array", "<array>" },
    { "std::complex", "<complex>" }, { "std::unique_ptr", "<memory>" },
    { "std::chrono", "<chrono>" }, { "std::thread", "<thread>" },
    { "curandState", "<curand_kernel.h>" }, { "curandState_t", "<curand_kernel.h>" },
    { "curand_init", "<curand_kernel.h>" }, { "curand_uniform", "<curand_kernel.h>" },
    { "curand_normal", "<curand_kernel.h>" }, { "curand", "<curand_kernel.h>" },
    { "half", "<cuda_fp16.h>" }, { "__half", "<cuda_fp16.h>" }, { "half2", "<cuda_fp16.h>" },
    { "__half2", "<cuda_fp16.h>" }, { "__float2half", "<cuda_fp16.h>" },
    { "__half2float", "<cuda_fp16.h>" }, { "__hadd", "<cuda_fp16.h>" },
    { "__nv_bfloat16", "<cuda_bf16.h>" }, { "cooperative_groups", "<cooperative_groups.h>" },
    { "cuComplex", "<cuComplex.h>" }, { "cuFloatComplex", "<cuComplex.h>" },
    { "cuDoubleComplex", "<cuComplex.h>" }, { "make_cuComplex", "<cuComplex.h>" },
    { "cub", "<cub/cub.cuh>" }, { "thrust", "<thrust/device_vector.h>" },
    { "nvcuda", "<mma.h>" }, { "wmma", "<mma.h>" },
    { NULL, NULL },
};

const char *repair_header_for(const char *ident)
{
    for (int i = 0; header_table[i].ident; i++)
        if (strcmp(header_table[i].ident, ident) == 0)
            return header_table[i].header;
    if (strncmp(ident, "std::", 5) == 0) /* std::something else: the usual suspects */
        return NULL;
    return NULL;
}

/* Helpers of the CUDA samples and "CUDA by Example" that old repositories include; their
 * error-checking macros are all most kernels use from them. */
static const char *const shimmed_headers[] = {
    "cutil.h", "cutil_inline.h", "helper_cuda.h", "helper_functions.h", "helper_string.h",
    "helper_timer.h", "book.h", "common/book.h", "../common/book.h", "shrUtils.h",
    "shrQATest.h", "cuda_helper.h", NULL,
};

static const char shim_text[] =
    "/* lscat execute: shim for CUDA-samples helpers */\n"
    "#include <cstdio>\n#include <cstdlib>\n"
    "#ifndef checkCudaErrors\n#define checkCudaErrors(x) (x)\n#endif\n"
    "#ifndef getLastCudaError\n#define getLastCudaError(m) ((void)(m))\n#endif\n"
    "#ifndef cutilSafeCall\n#define cutilSafeCall(x) (x)\n#endif\n"
    "#ifndef CUDA_SAFE_CALL\n#define CUDA_SAFE_CALL(x) (x)\n#endif\n"
    "#ifndef cutilCheckMsg\n#define cutilCheckMsg(m) ((void)(m))\n#endif\n"
    "#ifndef HANDLE_ERROR\n#define HANDLE_ERROR(x) (x)\n#endif\n"
    "#ifndef CUDA_CHECK\n#define CUDA_CHECK(x) (x)\n#endif\n";

static int is_shimmed(const char *name)
{
    for (int i = 0; shimmed_headers[i]; i++)
        if (strcmp(shimmed_headers[i], name) == 0)
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- strategies */

/* Cut the top-level declarations that diagnostics point into when they are host-only
 * functions (device code cannot call them, so the kernel never needs them), and later
 * definitions of something defined before (in a CUDA header or twice in the closure). */
static void plan_cuts(struct round *r, const char *s, const struct srcscan *sc,
                      const struct repair_input *in)
{
    for (size_t i = 0; i < in->diags->count; i++) {
        const struct diag *d = &in->diags->items[i];
        size_t start, end, brace;
        if (d->subject && strcmp(d->subject, "main") == 0 && d->cls == CLASS_REDEFINITION) {
            long at = srcscan_find_word(s, sc, "main", 0);
            if (at >= 0 && sc->depth[at] == 0 &&
                srcscan_top_span(s, sc, (size_t)at, &start, &end, &brace) == 0 && brace)
                add_cut(r, start, end, xstrdup("drop_host_code:main"));
            continue;
        }
        if (!is_kernel_file(d, in->kernel_file))
            continue;
        size_t at = srcscan_line_offset(s, sc->n, d->line);
        if (at >= sc->n || srcscan_top_span(s, sc, at, &start, &end, &brace) < 0 || start > at)
            continue;
        if (d->cls == CLASS_REMOVED_CUDA_API || d->cls == CLASS_HOST_FROM_DEVICE ||
            (d->subject && repair_header_for(d->subject)))
            continue; /* rewriting or a header keeps more of the code than a cut */
        if (d->cls == CLASS_REDEFINITION) {
            add_cut(r, start, end, xasprintf("drop_redefinition:%s", d->subject ? d->subject : "?"));
        } else if (srcscan_is_function_def(s, start, brace) &&
                   !srcscan_head_has(s, start, brace, "__global__") &&
                   !srcscan_head_has(s, start, brace, "__device__")) {
            char *name = srcscan_function_name(s, start, brace);
            add_cut(r, start, end, xasprintf("drop_host_code:%s", name ? name : "?"));
            free(name);
        }
    }
}

static void do_cuts(struct buf *src, struct round *r)
{
    for (size_t i = 0; i < r->ncuts; i++) {
        if (r->fixes->len)
            buf_addch(r->fixes, ',');
        buf_add_json_str(r->fixes, r->cuts[i].why, strlen(r->cuts[i].why));
        r->applied++;
    }
    apply_cuts(src, r);
}

/* Offset after a leading "template <...>" of the head at `start`. */
static size_t skip_template_head(const char *s, size_t start, size_t limit)
{
    size_t i = start;
    if (strncmp(s + i, "template", 8) != 0)
        return start;
    i += 8;
    while (i < limit && s[i] != '<')
        i++;
    int depth = 0;
    for (; i < limit; i++) {
        if (s[i] == '<')
            depth++;
        else if (s[i] == '>' && --depth == 0)
            break;
    }
    i++;
    while (i < limit && isspace((unsigned char)s[i]))
        i++;
    return i;
}

/* The function definition named `name` (word) at top level: its span. */
static int find_function(const char *s, const struct srcscan *sc, const char *name,
                         size_t *start, size_t *brace)
{
    for (long at = srcscan_find_word(s, sc, name, 0); at >= 0;
         at = srcscan_find_word(s, sc, name, (size_t)at + 1)) {
        size_t end;
        if (sc->depth[at] != 0 || srcscan_top_span(s, sc, (size_t)at, start, &end, brace) < 0)
            continue;
        if (!*brace || (size_t)at > *brace || !srcscan_is_function_def(s, *start, *brace))
            continue;
        char *fn = srcscan_function_name(s, *start, *brace);
        int same = fn && strcmp(fn, name) == 0;
        free(fn);
        if (same)
            return 0;
    }
    return -1;
}

/* A host function called from device code: make it __host__ __device__. */
static void host_device(struct buf *src, struct round *r, const struct repair_input *in)
{
    for (size_t i = 0; i < in->diags->count; i++) {
        const struct diag *d = &in->diags->items[i];
        if (d->cls != CLASS_HOST_FROM_DEVICE || !d->subject || strchr(d->subject, ':'))
            continue;
        struct srcscan sc;
        size_t start, brace;
        srcscan_init(&sc, src->data, src->len);
        int found = find_function(src->data, &sc, d->subject, &start, &brace) == 0 &&
                    !srcscan_head_has(src->data, start, brace, "__device__");
        srcscan_release(&sc);
        if (!found)
            continue;
        insert_at(src, skip_template_head(src->data, start, brace), "__host__ __device__ ");
        note(r, "host_device:%s%s", d->subject, NULL);
    }
}

/* A template kernel whose arguments cannot be deduced at the launch: default arguments. */
static void template_defaults(struct buf *src, struct round *r, const struct repair_input *in)
{
    for (size_t i = 0; i < in->diags->count; i++) {
        const struct diag *d = &in->diags->items[i];
        if (d->cls != CLASS_TEMPLATE || !d->subject || !strstr(d->message, "function template"))
            continue;
        struct srcscan sc;
        size_t start, brace;
        srcscan_init(&sc, src->data, src->len);
        int found = find_function(src->data, &sc, d->subject, &start, &brace) == 0;
        srcscan_release(&sc);
        if (!found || strncmp(src->data + start, "template", 8) != 0)
            continue;
        size_t open = start + 8, close = skip_template_head(src->data, start, brace);
        while (src->data[open] != '<')
            open++;
        while (close > open && src->data[close] != '>')
            close--;
        char *params = xstrndup(src->data + open + 1, close - open - 1);
        struct buf out = BUF_INIT, args = BUF_INIT;
        int changed = 0;
        for (char *save = NULL, *p = strtok_r(params, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            while (isspace((unsigned char)*p))
                p++;
            buf_adds(&out, out.len ? ", " : "");
            buf_adds(&out, p);
            buf_rtrim(&out);
            const char *def = strchr(p, '=') ? NULL
                              : (strncmp(p, "typename", 8) == 0 || strncmp(p, "class", 5) == 0) ? "float"
                              : strstr(p, "bool") ? "false" : "32";
            if (def) {
                buf_addf(&out, " = %s", def);
                changed = 1;
            }
            buf_addf(&args, "%s%s", args.len ? "," : "", def ? def : "default");
        }
        if (changed) {
            struct buf n = BUF_INIT;
            buf_add(&n, src->data, open + 1);
            buf_adds(&n, out.data);
            buf_adds(&n, src->data + close);
            buf_release(src);
            *src = n;
            note(r, "template_defaults:%s<%s>", d->subject, args.data);
        }
        buf_release(&out);
        buf_release(&args);
        free(params);
    }
}

struct rewrite { const char *from, *to; int call; };
static const struct rewrite rewrites[] = {
    { "__shfl", "__shfl_sync(0xffffffff, ", 1 }, { "__shfl_up", "__shfl_up_sync(0xffffffff, ", 1 },
    { "__shfl_down", "__shfl_down_sync(0xffffffff, ", 1 },
    { "__shfl_xor", "__shfl_xor_sync(0xffffffff, ", 1 }, { "__any", "__any_sync(0xffffffff, ", 1 },
    { "__all", "__all_sync(0xffffffff, ", 1 }, { "__ballot", "__ballot_sync(0xffffffff, ", 1 },
    { "cudaThreadSynchronize", "cudaDeviceSynchronize", 0 },
    { "cudaThreadExit", "cudaDeviceReset", 0 }, { "cudaThreadSetLimit", "cudaDeviceSetLimit", 0 },
    { "cudaThreadGetLimit", "cudaDeviceGetLimit", 0 },
    { "cudaThreadSetCacheConfig", "cudaDeviceSetCacheConfig", 0 },
    { "cudaThreadGetCacheConfig", "cudaDeviceGetCacheConfig", 0 },
    { NULL, NULL, 0 },
};

/* Removed warp intrinsics and runtime calls: their current forms, everywhere in the file. */
static void rewrite_removed(struct buf *src, struct round *r, const struct repair_input *in)
{
    int wanted = 0;
    for (size_t i = 0; i < in->diags->count && !wanted; i++)
        wanted = in->diags->items[i].cls == CLASS_REMOVED_CUDA_API;
    if (!wanted)
        return;
    for (int k = 0; rewrites[k].from; k++) {
        int n = 0;
        for (;;) {
            struct srcscan sc;
            srcscan_init(&sc, src->data, src->len);
            long at = srcscan_find_word(src->data, &sc, rewrites[k].from, 0);
            size_t end = at < 0 ? 0 : (size_t)at + strlen(rewrites[k].from);
            if (at >= 0 && rewrites[k].call) {
                while (end < src->len && isspace((unsigned char)src->data[end]))
                    end++;
                if (src->data[end] != '(')
                    at = -1;
                else
                    end++;
            }
            srcscan_release(&sc);
            if (at < 0)
                break;
            struct buf out = BUF_INIT;
            buf_add(&out, src->data, (size_t)at);
            buf_adds(&out, rewrites[k].to);
            buf_adds(&out, src->data + end);
            buf_release(src);
            *src = out;
            n++;
        }
        if (n && rewrites[k].call)
            note(r, "rewrite_removed_api:%s->%s_sync", rewrites[k].from, rewrites[k].from);
        else if (n)
            note(r, "rewrite_removed_api:%s->%s", rewrites[k].from, rewrites[k].to);
    }
}

/* The #include line of kernel.cu that names `name`: [*start, *end) with its newline. */
static int include_line(const char *s, const char *name, size_t *start, size_t *end)
{
    for (const char *p = strstr(s, "#include"); p; p = strstr(p + 1, "#include")) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = xstrndup(p, len);
        char *q = strstr(line, name);
        int match = q && (q[-1] == '"' || q[-1] == '<' || q[-1] == '/') &&
                    (q[strlen(name)] == '"' || q[strlen(name)] == '>');
        free(line);
        if (match) {
            *start = (size_t)(p - s);
            *end = *start + len + (nl ? 1 : 0);
            return 0;
        }
    }
    return -1;
}

static void replace_range(struct buf *src, size_t start, size_t end, const char *text)
{
    struct buf out = BUF_INIT;
    buf_add(&out, src->data, start);
    buf_adds(&out, text);
    buf_adds(&out, src->data + end);
    buf_release(src);
    *src = out;
}

static int copy_header(const char *from, const char *include_dir, const char *name)
{
    struct buf data = BUF_INIT;
    char *dest = fs_join(include_dir, name);
    int rc = buf_read_file(&data, from);
    if (rc == 0 && strstr(name, ".."))
        rc = lscat_error_set("refusing header name '%s'", name);
    if (rc == 0)
        rc = fs_mkdirs_parent(dest);
    if (rc == 0)
        rc = fs_write_atomic(dest, data.data, data.len);
    free(dest);
    buf_release(&data);
    return rc;
}

/* lscat's compat set has the header `name` names (its last part): copy the whole set (its
 * headers include each other) to the include folder, and point the #include line at it when
 * it climbs out of the folder ("../../common/inc/helper_cuda.h"). 1 when given. */
static int compat_header(struct buf *src, const struct repair_input *in, const char *name)
{
    static const char *const set[] = { "helper_cuda.h", "helper_timer.h", "helper_string.h",
                                       "helper_functions.h", NULL };
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    int known = 0, rc = 0;
    for (int i = 0; set[i]; i++)
        known |= strcmp(set[i], base) == 0;
    if (!known || !in->compat_dir || !in->include_dir)
        return 0;
    for (int i = 0; set[i] && rc == 0; i++) {
        char *from = fs_join(in->compat_dir, set[i]);
        rc = copy_header(from, in->include_dir, set[i]);
        free(from);
    }
    size_t start, end;
    if (rc == 0 && base != name && include_line(src->data, name, &start, &end) == 0) {
        char *line = xasprintf("#include \"%s\" /* lscat execute: compat header */\n", base);
        replace_range(src, start, end, line);
        free(line);
    }
    return rc == 0;
}

/* A header that cannot be found: from the repository, lscat's compat set, a shim, or drop
 * the line. */
static void missing_headers(struct buf *src, struct round *r, const struct repair_input *in)
{
    for (size_t i = 0; i < in->diags->count; i++) {
        const struct diag *d = &in->diags->items[i];
        size_t start, end;
        if (d->cls != CLASS_MISSING_HEADER || !d->subject)
            continue;
        char *path = NULL;
        const char *via = "";
        if (in->resolver && in->resolver->find_header && in->repo_root && in->include_dir &&
            in->resolver->find_header(in->resolver->ctx, in->repo_root, d->subject, &path,
                                      &via) == 0 &&
            copy_header(path, in->include_dir, d->subject) == 0) {
            char *what = xasprintf("%s(%s)", d->subject, via);
            note(r, "pull_header:%s%s", what, NULL);
            free(what);
            free(path);
            continue;
        }
        free(path);
        if (compat_header(src, in, d->subject)) {
            note(r, "compat_header:%s%s", d->subject, NULL);
            continue;
        }
        if (include_line(src->data, d->subject, &start, &end) < 0)
            continue;
        if (is_shimmed(d->subject)) {
            replace_range(src, start, end, strstr(src->data, shim_text) ? "" : shim_text);
            note(r, "shim_header:%s%s", d->subject, NULL);
        } else {
            replace_range(src, start, end, "/* lscat execute: dropped a missing #include */\n");
            note(r, "drop_include:%s%s", d->subject, NULL);
        }
    }
}

/* Where pulled declarations go: after the includes and the #define lines that follow them
 * (isolate emits a kernel's macros there), so a pulled declaration may use the kernel's macros. */
static size_t pull_position(const char *s)
{
    size_t at = srcscan_after_includes(s);
    for (;;) {
        size_t p = at;
        while (s[p] == ' ' || s[p] == '\t')
            p++;
        if (s[p] == '\n') {
            at = p + 1;
            continue;
        }
        if (strncmp(s + p, "#define", 7) != 0)
            return at;
        for (; s[p]; p++) /* the logical line: backslash-newlines continue it */
            if (s[p] == '\n' && (p == 0 || s[p - 1] != '\\'))
                break;
        at = s[p] ? p + 1 : p;
    }
}

/* Start of the top-level declaration where `ident` (last part of a qualified name) is first
 * used in code, or (size_t)-1. */
static size_t first_use(const char *s, const char *ident)
{
    const char *last = strrchr(ident, ':');
    struct srcscan sc;
    size_t start, end, brace, at = (size_t)-1;
    srcscan_init(&sc, s, strlen(s));
    long w = srcscan_find_word(s, &sc, last ? last + 1 : ident, 0);
    if (w >= 0 && srcscan_top_span(s, &sc, (size_t)w, &start, &end, &brace) == 0 &&
        start <= (size_t)w)
        at = start;
    srcscan_release(&sc);
    return at;
}

/* Where this round's pulled declarations go, in the order pulled (a later one may rely on an
 * earlier one: the resolver leaves out what the kernel already has): just before the first
 * top-level declaration that uses any of the missing names, so they see everything the kernel
 * defines above it; else after the includes and leading #defines. */
static size_t pull_start(const char *s, const struct repair_input *in)
{
    size_t at = (size_t)-1;
    for (size_t i = 0; i < in->diags->count; i++) {
        const struct diag *d = &in->diags->items[i];
        if ((d->cls == CLASS_UNDECLARED_IDENTIFIER || d->cls == CLASS_UNKNOWN_TYPE ||
             d->cls == CLASS_INCOMPLETE_TYPE) && d->subject && !repair_header_for(d->subject)) {
            size_t u = first_use(s, d->subject);
            at = u < at ? u : at;
        }
    }
    size_t top = pull_position(s);
    return at == (size_t)-1 || at < top ? top : at;
}

/* Undeclared names: a standard/CUDA header, else a declaration from the repository. */
static void missing_names(struct buf *src, struct round *r, const struct repair_input *in)
{
    struct buf added = BUF_INIT; /* "|name|" of names handled this round */
    size_t pull_at = (size_t)-1; /* where the next pulled block goes: in the order pulled */
    for (size_t i = 0; i < in->diags->count; i++) {
        const struct diag *d = &in->diags->items[i];
        if ((d->cls != CLASS_UNDECLARED_IDENTIFIER && d->cls != CLASS_UNKNOWN_TYPE &&
             d->cls != CLASS_INCOMPLETE_TYPE) || !d->subject)
            continue;
        char *key = xasprintf("|%s|", d->subject);
        int seen = strstr(added.data, key) != NULL;
        buf_adds(&added, key);
        free(key);
        if (seen)
            continue;
        const char *h = repair_header_for(d->subject);
        if (h) {
            char *line = xasprintf("#include %s\n", h);
            if (!strstr(src->data, line)) {
                insert_at(src, 0, line);
                if (pull_at != (size_t)-1)
                    pull_at += strlen(line);
                note(r, "add_header:%s%s", h, NULL);
            }
            free(line);
            continue;
        }
        if (!in->resolver || !in->resolver->find_decl || !in->repo_root)
            continue;
        struct buf text = BUF_INIT, origin = BUF_INIT;
        const char *via = "";
        if (in->resolver->find_decl(in->resolver->ctx, in->repo_root, d->subject, src->data,
                                    &text, &origin, &via) == 0 && text.len &&
            !strstr(src->data, text.data)) {
            char *block = xasprintf("/* lscat execute: pulled from %s (%s) */\n%s\n", origin.data,
                                    via, text.data);
            if (pull_at == (size_t)-1)
                pull_at = pull_start(src->data, in);
            insert_at(src, pull_at, block);
            pull_at += strlen(block);
            free(block);
            char *what = xasprintf("%s@%s(%s)", d->subject, origin.data, via);
            note(r, "pull_decl:%s%s", what, NULL);
            free(what);
        }
        buf_release(&text);
        buf_release(&origin);
    }
    buf_release(&added);
}

/* The swept block sizes of a harness, ascending (at most cap). */
static int swept_sizes(int *v, int cap, const char *harness)
{
    int n = 0;
    for (const char *p = harness; p && (p = strstr(p, "#if ")) != NULL && n < cap; p += 4) {
        int x = 0, len = 0;
        if (sscanf(p, "#if %d <= LSCAT_BLOCK_MAX%n", &x, &len) == 1 && len > 0 && x > 0 &&
            (n == 0 || x > v[n - 1]))
            v[n++] = x;
    }
    return n;
}

int repair_block_max(const struct diag_list *d, const char *harness, int current)
{
    unsigned long long bytes = 0, max = 0;
    for (size_t i = 0; i < d->count; i++) {
        const char *m = strstr(d->items[i].message, "uses too much shared data (");
        unsigned long long b = 0, lim = 0;
        if (m && sscanf(m, "uses too much shared data (%llx bytes, %llx max)", &b, &lim) == 2 &&
            b > bytes && lim > 0)
            bytes = b, max = lim;
    }
    int v[64], n = swept_sizes(v, 64, harness);
    if (!bytes || n == 0)
        return 0;
    int cur = current > 0 ? current : v[n - 1], below = 0;
    for (int i = n - 1; i >= 0 && !below; i--)
        if (v[i] < cur)
            below = v[i];
    for (int i = n - 1; i >= 0; i--)
        if (v[i] < cur && (unsigned long long)v[i] * (unsigned long long)v[i] * bytes <=
                              (unsigned long long)cur * (unsigned long long)cur * max)
            return v[i];
    return below;
}

int repair_apply(struct buf *src, struct buf *fixes, const struct repair_input *in)
{
    struct round r = { fixes, 0, NULL, 0, 0 };
    struct srcscan sc;
    srcscan_init(&sc, src->data, src->len);
    plan_cuts(&r, src->data, &sc, in);
    srcscan_release(&sc);
    do_cuts(src, &r);
    host_device(src, &r, in);
    template_defaults(src, &r, in);
    rewrite_removed(src, &r, in);
    r.applied += texref_repair(src, r.fixes, in);
    missing_headers(src, &r, in);
    missing_names(src, &r, in);
    return r.applied;
}
