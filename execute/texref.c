/* The texture_object repair: texture references (`texture<T, D, M> t;`, removed in CUDA 12)
 * become lscat's texture-object stand-ins (isolate/compat/lscat_texref.h), which the harness
 * binds to texture objects over buffers of the configuration's size. A reference the isolated
 * kernel uses but lacks (libclang could not parse its declaration) is pulled from the
 * repository. */
#include "execute/texref.h"

#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/reposearch.h"
#include "execute/srcscan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define TEXREF_HEADER "lscat_texref.h"

static void add_fix(struct buf *fixes, const char *what, const char *name)
{
    struct buf one = BUF_INIT;
    buf_addf(&one, "%s%s", what, name);
    if (fixes->len)
        buf_addch(fixes, ',');
    buf_add_json_str(fixes, one.data, one.len);
    buf_release(&one);
}

static void splice(struct buf *src, size_t start, size_t end, const char *text)
{
    struct buf out = BUF_INIT;
    buf_add(&out, src->data, start);
    buf_adds(&out, text);
    buf_adds(&out, src->data + end);
    buf_release(src);
    *src = out;
}

/* Offset of the next top-level texture reference declaration at or after `from`: its
 * `texture` word in *at, the declaration's end in *end. 0, or -1 when none. */
static int next_texref(const char *s, size_t from, size_t *at, size_t *end)
{
    struct srcscan sc;
    size_t start, brace;
    int found = -1;
    srcscan_init(&sc, s, strlen(s));
    for (long w = srcscan_find_word(s, &sc, "texture", from); w >= 0 && found < 0;
         w = srcscan_find_word(s, &sc, "texture", (size_t)w + 1))
        if (sc.depth[w] == 0 && srcscan_top_span(s, &sc, (size_t)w, &start, end, &brace) == 0 &&
            !brace && reposearch_texture_head(s, start, *end) == w) {
            *at = (size_t)w;
            found = 0;
        }
    srcscan_release(&sc);
    return found;
}

/* Whether kernel.cu declares the texture reference `name`, as a reference or rewritten. */
static int declares(const char *s, const char *name)
{
    struct srcscan sc;
    size_t start, end, brace;
    int hit = 0;
    srcscan_init(&sc, s, strlen(s));
    for (long w = srcscan_find_word(s, &sc, name, 0); w >= 0 && !hit;
         w = srcscan_find_word(s, &sc, name, (size_t)w + 1)) {
        if (sc.depth[w] != 0 || srcscan_top_span(s, &sc, (size_t)w, &start, &end, &brace) < 0 ||
            brace || start > (size_t)w)
            continue;
        char *decl = xstrndup(s + start, (size_t)w - start);
        hit = reposearch_texture_head(s, start, end) >= 0 || strstr(decl, "lscat_texref<");
        free(decl);
    }
    srcscan_release(&sc);
    return hit;
}

/* `texture<ARGS> a, b;` at [at, end) -> `__device__ lscat_texref<ARGS> a, b;` and a registration
 * of each plain name. The names rewritten are appended to `names` ("a,b"). */
static size_t rewrite_one(struct buf *src, size_t at, size_t end, struct buf *names)
{
    const char *s = src->data;
    size_t open = at + 7, close, semi;
    while (s[open] != '<')
        open++;
    int depth = 0;
    for (close = open; close < end; close++)
        if (s[close] == '<')
            depth++;
        else if (s[close] == '>' && --depth == 0)
            break;
    for (semi = close; semi < end && s[semi] != ';'; semi++)
        ;
    if (close >= end || semi >= end)
        return end;
    struct buf out = BUF_INIT, regs = BUF_INIT;
    buf_adds(&out, "__device__ lscat_texref");
    buf_add(&out, s + open, semi - open);
    buf_adds(&out, "; /* lscat execute: texture reference as a texture object */");
    char *list = xstrndup(s + close + 1, semi - close - 1);
    for (char *save = NULL, *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*p))
            p++;
        size_t n = strlen(p);
        while (n && isspace((unsigned char)p[n - 1]))
            p[--n] = '\0';
        int plain = n > 0;
        for (size_t i = 0; i < n; i++)
            plain &= srcscan_is_ident((unsigned char)p[i]) &&
                     !(i == 0 && isdigit((unsigned char)p[i]));
        if (!plain)
            continue;
        buf_addf(&regs, " LSCAT_TEXREF_REGISTER(%s);", p);
        buf_addf(names, "%s%s", names->len ? "," : "", p);
    }
    buf_adds(&out, regs.data);
    size_t next = at + out.len;
    splice(src, at, semi + 1, out.data);
    free(list);
    buf_release(&out);
    buf_release(&regs);
    return next;
}

/* Where pulled references go: after the includes and the #define lines that follow them (a
 * reference's element type is a CUDA or standard type; a use may sit in a function inside a
 * conditional block, which the declaration must precede). */
static size_t after_defines(const char *s)
{
    size_t at = srcscan_after_includes(s);
    for (;;) {
        size_t p = at;
        while (s[p] == ' ' || s[p] == '\t' || s[p] == '\n')
            p++;
        if (strncmp(s + p, "#define", 7) != 0)
            return at;
        while (s[p] && !(s[p] == '\n' && s[p - 1] != '\\')) /* backslash-newline continues */
            p++;
        at = s[p] ? p + 1 : p;
    }
}

/* Whether `name` is the first argument of a reference-form fetch in s ("tex2D(name, ..."):
 * other removed names (__shfl, cudaThreadSynchronize) are not searched for. */
static int fetched(const char *s, const char *name)
{
    static const char *const fetches[] = { "tex1Dfetch", "tex1D", "tex2D", "tex3D", NULL };
    size_t nl = strlen(name);
    for (int f = 0; fetches[f]; f++)
        for (const char *p = strstr(s, fetches[f]); p; p = strstr(p + 1, fetches[f])) {
            const char *q = p + strlen(fetches[f]);
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q++ != '(')
                continue;
            while (isspace((unsigned char)*q))
                q++;
            if (strncmp(q, name, nl) == 0 && !srcscan_is_ident((unsigned char)q[nl]))
                return 1;
        }
    return 0;
}

/* Pull the declaration of every texture reference the diagnostics say is undefined. */
static int pull_missing(struct buf *src, struct buf *fixes, const struct repair_input *in)
{
    int pulled = 0;
    for (size_t i = 0; i < in->diags->count; i++) {
        const struct diag *d = &in->diags->items[i];
        if (d->cls != CLASS_REMOVED_CUDA_API || !d->subject || !strstr(d->message, "undefined") ||
            !in->repo_root || !fetched(src->data, d->subject) || declares(src->data, d->subject))
            continue;
        struct buf text = BUF_INIT, origin = BUF_INIT;
        if (reposearch_find_texref(in->repo_root, d->subject, &text, &origin) == 0) {
            size_t at = after_defines(src->data);
            char *block = xasprintf("/* lscat execute: pulled from %s (text) */\n%s\n", origin.data,
                                    text.data);
            splice(src, at, at, block);
            free(block);
            char *what = xasprintf("%s@%s(text)", d->subject, origin.data);
            add_fix(fixes, "pull_decl:", what);
            free(what);
            pulled++;
        }
        buf_release(&text);
        buf_release(&origin);
    }
    return pulled;
}

/* lscat_texref.h into the include folder, and its #include at the top of kernel.cu. */
static int add_header(struct buf *src, const struct repair_input *in)
{
    struct buf data = BUF_INIT;
    char *from = fs_join(in->compat_dir, TEXREF_HEADER);
    char *to = fs_join(in->include_dir, TEXREF_HEADER);
    int rc = buf_read_file(&data, from);
    if (rc == 0)
        rc = fs_mkdirs_parent(to);
    if (rc == 0)
        rc = fs_write_atomic(to, data.data, data.len);
    if (rc == 0 && !strstr(src->data, "#include \"" TEXREF_HEADER "\""))
        splice(src, 0, 0,
               "#include \"" TEXREF_HEADER "\" /* lscat execute: texture references */\n");
    free(from);
    free(to);
    buf_release(&data);
    return rc;
}

int texref_repair(struct buf *src, struct buf *fixes, const struct repair_input *in)
{
    int wanted = 0;
    for (size_t i = 0; i < in->diags->count && !wanted; i++)
        wanted = in->diags->items[i].cls == CLASS_REMOVED_CUDA_API;
    if (!wanted || !in->compat_dir || !in->include_dir)
        return 0;
    int applied = pull_missing(src, fixes, in);
    struct buf names = BUF_INIT;
    size_t at, end;
    for (size_t from = 0; next_texref(src->data, from, &at, &end) == 0;)
        from = rewrite_one(src, at, end, &names);
    if (names.len && add_header(src, in) == 0) {
        add_fix(fixes, "texture_object:", names.data);
        applied++;
    }
    buf_release(&names);
    return applied;
}
