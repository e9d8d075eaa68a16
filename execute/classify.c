/* Classification of nvcc failures. nvcc's front end (EDG: "file(12): error: ..."), the host
 * compiler (gcc: "file:3:10: fatal error: ..."), ptxas, nvlink and ld each print errors their
 * own way; this module reads them all into one list of located diagnostics with a class. */
#include "execute/classify.h"

#include "common/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[CLASS_COUNT] = {
    "none", "missing_header", "undeclared_identifier", "unknown_type", "no_matching_overload",
    "template", "incomplete_type", "redefinition", "removed_cuda_api", "host_from_device",
    "link_error", "internal_compiler_error", "timeout", "other", "template_functor",
    "template_value", "template_type", "resource_limit", "static_assert",
};

const char *classify_name(enum build_class c)
{
    return (c >= 0 && c < CLASS_COUNT) ? class_names[c] : "other";
}

int classify_from_name(const char *name)
{
    for (int i = 0; i < CLASS_COUNT; i++)
        if (strcmp(class_names[i], name) == 0)
            return i;
    return -1;
}

static const char *const removed_api[] = {
    "__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__any", "__all", "__ballot",
    "cudaThreadSynchronize", "cudaThreadExit", "cudaThreadSetLimit", "cudaThreadGetLimit",
    "cudaThreadSetCacheConfig", "cudaThreadGetCacheConfig", "cudaBindTexture",
    "cudaBindTexture2D", "cudaUnbindTexture", "cudaBindTextureToArray",
    "cudaGetTextureReference", "cudaBindSurfaceToArray", "cudaConfigureCall", "cudaLaunch",
    "cudaSetupArgument", "cudaSetDoubleForDevice", "cudaSetDoubleForHost", NULL,
};

int classify_is_removed_api(const char *ident)
{
    for (int i = 0; removed_api[i]; i++)
        if (strcmp(removed_api[i], ident) == 0)
            return 1;
    return 0;
}

static int has(const char *s, const char *needle)
{
    return strstr(s, needle) != NULL;
}

/* The first "quoted" (or 'quoted', or ‘quoted’) name in msg; NULL when none. */
static char *first_quoted(const char *msg)
{
    const char *open = NULL, *close = NULL;
    for (const char *p = msg; *p && !open; p++) {
        if (*p == '"' || *p == '\'') {
            open = p + 1;
            close = strchr(open, *p);
        } else if ((unsigned char)p[0] == 0xe2 && (unsigned char)p[1] == 0x80 &&
                   (unsigned char)p[2] == 0x98) {
            open = p + 3;
            close = strstr(open, "\xe2\x80\x99");
        }
    }
    if (!open || !close || close <= open)
        return NULL;
    return xstrndup(open, (size_t)(close - open));
}

/* "hostf(int)" -> "hostf"; "ns::f<int>(x)" -> "ns::f". */
static void strip_signature(char *name)
{
    char *p = strpbrk(name, "(<");
    if (p && p != name)
        *p = '\0';
}

static enum build_class class_of(const char *msg, char **subject)
{
    char *q = first_quoted(msg);
    enum build_class c = CLASS_OTHER;
    if (has(msg, "No such file or directory") || has(msg, "cannot open source file")) {
        c = CLASS_MISSING_HEADER;
        if (!q) {
            const char *colon = strchr(msg, ':');
            q = xstrndup(msg, colon ? (size_t)(colon - msg) : strlen(msg));
        }
    } else if (has(msg, "preceding parentheses of apparent call must have")) {
        c = CLASS_TEMPLATE_FUNCTOR; /* template <class Op> ... op(x) instantiated with float */
    } else if (has(msg, "zero-sized variable") || has(msg, "division by zero") ||
               has(msg, "array size must be greater than zero")) {
        c = CLASS_TEMPLATE_VALUE;   /* a tile count given 1: T s[N / 2] */
    } else if ((has(msg, "must have class type but it has type") && has(msg, "\"float")) ||
               has(msg, "followed by \"::\" must be a class or namespace name") ||
               has(msg, "must have integral or unscoped enum type") ||
               has(msg, "argument of type \"float *\" is incompatible with parameter") ||
               (has(msg, "cannot be used to initialize an entity of type \"float *\"") &&
                has(msg, "int *"))) {
        c = CLASS_TEMPLATE_TYPE;    /* a type parameter at float used as a class or an integer */
    } else if (has(msg, "uses too much shared data") || has(msg, "too much global constant data") ||
               has(msg, "uses too much local data")) {
        c = CLASS_RESOURCE_LIMIT;   /* a fixed array past 48 KiB of static shared memory, ... */
    } else if (has(msg, "static assertion failed")) {
        c = CLASS_STATIC_ASSERT;
    } else if (has(msg, "calling a __host__ function") || has(msg, "is undefined in device code") ||
               has(msg, "calling a constexpr __host__ function")) {
        c = CLASS_HOST_FROM_DEVICE;
    } else if (has(msg, "texture is not a template") || has(msg, "surface is not a template") ||
               has(msg, "is not valid on compute_70")) {
        c = CLASS_REMOVED_CUDA_API;
    } else if (has(msg, "is undefined") && q) {
        c = classify_is_removed_api(q) ? CLASS_REMOVED_CUDA_API : CLASS_UNDECLARED_IDENTIFIER;
    } else if (has(msg, "has no member") || has(msg, "was not declared in this scope")) {
        c = CLASS_UNDECLARED_IDENTIFIER;
        const char *second = q ? strstr(msg, q) : NULL;
        char *member = second ? first_quoted(second + strlen(q) + 1) : NULL;
        if (member && has(msg, "namespace")) { /* namespace "std" has no member "vector" */
            char *full = xasprintf("%s::%s", q, member);
            free(q);
            q = full;
        } else if (member) {
            free(q);
            q = xstrdup(member);
        }
        free(member);
        if (q && classify_is_removed_api(q))
            c = CLASS_REMOVED_CUDA_API;
    } else if (has(msg, "incomplete type")) {
        c = CLASS_INCOMPLETE_TYPE;
    } else if (has(msg, "has already been defined") || has(msg, "redefinition") ||
               has(msg, "distinguished by return type") || has(msg, "already declared") ||
               has(msg, "is incompatible with previous")) {
        c = CLASS_REDEFINITION;
    } else if (has(msg, "template")) {
        c = CLASS_TEMPLATE;
    } else if (has(msg, "no instance of") || has(msg, "more than one instance") ||
               has(msg, "no suitable") || has(msg, "no operator") || has(msg, "too few arguments") ||
               has(msg, "too many arguments") || has(msg, "is incompatible with parameter")) {
        c = CLASS_NO_MATCHING_OVERLOAD;
    } else if (has(msg, "is not a type name") || has(msg, "unknown type name") ||
               has(msg, "explicit type is missing") || has(msg, "does not name a type") ||
               has(msg, "expected a type specifier")) {
        c = CLASS_UNKNOWN_TYPE;
    } else if (has(msg, "undefined reference") || has(msg, "Unresolved extern") ||
               has(msg, "Undefined reference") || has(msg, "ld returned")) {
        c = CLASS_LINK_ERROR;
    } else if (has(msg, "internal error") || has(msg, "Internal Compiler Error") ||
               has(msg, "died due to signal") || has(msg, "Segmentation fault")) {
        c = CLASS_INTERNAL_COMPILER_ERROR;
    }
    if (q && c != CLASS_MISSING_HEADER)
        strip_signature(q);
    *subject = q;
    return c;
}

static void add(struct diag_list *l, const char *file, size_t file_len, int line, const char *msg,
                size_t msg_len)
{
    XGROW(l->items, l->count + 1, l->alloc);
    struct diag *d = &l->items[l->count++];
    d->file = file ? xstrndup(file, file_len) : NULL;
    d->line = line;
    d->message = xstrndup(msg, msg_len);
    d->cls = class_of(d->message, &d->subject);
}

/* "file(12): error: msg" (EDG) or "file:12:3: error: msg" (gcc). Returns 1 when parsed. */
static int parse_located(struct diag_list *l, const char *s, size_t n)
{
    static const char *const kinds[] = { ": error: ", ": fatal error: ", ": catastrophic error: ",
                                         NULL };
    for (int k = 0; kinds[k]; k++) {
        const char *e = strstr(s, kinds[k]);
        if (!e || e >= s + n)
            continue;
        const char *msg = e + strlen(kinds[k]);
        const char *loc_end = e;
        int line = 0;
        size_t file_len = (size_t)(loc_end - s);
        if (loc_end > s && loc_end[-1] == ')') { /* file(12) */
            const char *open = loc_end - 1;
            while (open > s && *open != '(')
                open--;
            line = atoi(open + 1);
            file_len = (size_t)(open - s);
        } else { /* file:12:3 */
            const char *c1 = memchr(s, ':', (size_t)(loc_end - s));
            if (c1 && isdigit((unsigned char)c1[1])) {
                line = atoi(c1 + 1);
                file_len = (size_t)(c1 - s);
            }
        }
        add(l, file_len ? s : NULL, file_len, line, msg, n - (size_t)(msg - s));
        return 1;
    }
    return 0;
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void parse_line(struct diag_list *l, const char *s, size_t n)
{
    if (n == 0 || s[0] == ' ')
        return;
    if (starts(s, "ptxas fatal") || starts(s, "ptxas error") || starts(s, "nvlink error") ||
        starts(s, "nvcc error") || starts(s, "nvcc fatal")) {
        const char *colon = memchr(s, ':', n);
        const char *msg = colon ? colon + 1 : s;
        while (*msg == ' ')
            msg++;
        add(l, NULL, 0, 0, msg, n - (size_t)(msg - s));
        return;
    }
    const char *ur = strstr(s, "undefined reference to");
    if (ur && ur < s + n) {
        add(l, NULL, 0, 0, ur, n - (size_t)(ur - s));
        return;
    }
    if (parse_located(l, s, n))
        return;
    /* A warp vote without _sync compiles with a warning, to code that is wrong on compute_70+. */
    const char *w = strstr(s, "is not valid on compute_70");
    const char *m = strstr(s, ": warning");
    if (w && m && w < s + n && m < w) {
        const char *open = memchr(s, '(', (size_t)(m - s));
        add(l, s, open ? (size_t)(open - s) : 0, open ? atoi(open + 1) : 0, m + 2,
            n - (size_t)(m + 2 - s));
    }
}

/* EDG echoes the source line and a caret under the name. An undefined name followed by a
 * declarator ("real_t *y", "Vec3 v") is a type nobody declared: unknown_type. */
static void refine_with_caret(struct diag *d, const char *src, size_t src_n, const char *caret,
                              size_t caret_n)
{
    const char *c = memchr(caret, '^', caret_n);
    size_t col = c ? (size_t)(c - caret) : src_n;
    size_t sl = strlen(d->subject);
    if (col + sl > src_n || strncmp(src + col, d->subject, sl) != 0)
        return;
    size_t i = col + sl;
    while (i < src_n && (src[i] == ' ' || src[i] == '*' || src[i] == '&'))
        i++;
    if (i < src_n && (isalpha((unsigned char)src[i]) || src[i] == '_'))
        d->cls = CLASS_UNKNOWN_TYPE;
}

void classify_parse(struct diag_list *out, const char *log)
{
    const char *p = log;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        size_t before = out->count;
        parse_line(out, p, n);
        p += n + (nl ? 1 : 0);
        struct diag *d = out->count > before ? &out->items[out->count - 1] : NULL;
        if (!d || d->cls != CLASS_UNDECLARED_IDENTIFIER || !d->subject || !nl)
            continue;
        const char *nl2 = strchr(p, '\n');
        if (!nl2 || p[0] != ' ')
            continue;
        const char *caret = nl2 + 1;
        const char *nl3 = strchr(caret, '\n');
        size_t cn = nl3 ? (size_t)(nl3 - caret) : strlen(caret);
        if (memchr(caret, '^', cn))
            refine_with_caret(d, p, (size_t)(nl2 - p), caret, cn);
    }
}

void diag_list_release(struct diag_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].file);
        free(l->items[i].message);
        free(l->items[i].subject);
    }
    free(l->items);
    l->items = NULL;
    l->count = l->alloc = 0;
}

enum build_class classify_failure(char **first_error, const struct diag_list *diags,
                                  const char *log, int timed_out, size_t cap_bytes)
{
    enum build_class c = CLASS_OTHER;
    const char *text = NULL;
    /* The first error that is not only a consequence ("collect2: ld returned 1") decides. */
    for (size_t i = 0; i < diags->count && !text; i++)
        if (!has(diags->items[i].message, "ld returned") || i + 1 == diags->count) {
            c = diags->items[i].cls;
            text = diags->items[i].message;
        }
    if (!text && (has(log, "Segmentation fault") || has(log, "internal error") ||
                  has(log, "died due to signal")))
        c = CLASS_INTERNAL_COMPILER_ERROR;
    if (timed_out)
        c = CLASS_TIMEOUT;
    if (first_error) {
        const char *t = text ? text : log;
        size_t n = strlen(t);
        while (n && isspace((unsigned char)t[n - 1]))
            n--;
        *first_error = xstrndup(t, n < cap_bytes ? n : cap_bytes);
    }
    return c;
}

void classify_refine_textures(struct diag_list *diags, const char *src)
{
    static const char *const fetches[] = { "tex1Dfetch", "tex1D", "tex2D", "tex3D",
                                           "tex1DLayered", "tex2DLayered", "texCubemap", NULL };
    for (size_t i = 0; i < diags->count; i++) {
        struct diag *d = &diags->items[i];
        if (d->cls != CLASS_UNDECLARED_IDENTIFIER || !d->subject)
            continue;
        for (int f = 0; fetches[f] && d->cls == CLASS_UNDECLARED_IDENTIFIER; f++) {
            size_t fl = strlen(fetches[f]);
            for (const char *p = strstr(src, fetches[f]); p; p = strstr(p + fl, fetches[f])) {
                const char *q = p + fl;
                if (*q == '<') /* tex2D<float>(obj, ...) is the texture-object form */
                    continue;
                while (*q == ' ' || *q == '\t')
                    q++;
                if (*q++ != '(')
                    continue;
                while (*q == ' ' || *q == '\t')
                    q++;
                size_t sl = strlen(d->subject);
                if (strncmp(q, d->subject, sl) == 0 && !isalnum((unsigned char)q[sl]) &&
                    q[sl] != '_') {
                    d->cls = CLASS_REMOVED_CUDA_API;
                    break;
                }
            }
        }
    }
}
