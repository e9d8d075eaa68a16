/* Textual repository search for the repair loop: walk the tree, read each C/C++/CUDA file,
 * look for "#define NAME", "typedef ... NAME;", "struct NAME {", "using NAME =", a constant or
 * a function named NAME at the top level, and hand back its text. Header lookup matches the
 * #include name against the tail of each file's path, shortest path first. */
#include "execute/reposearch.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/srcscan.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const struct repair_resolver reposearch_resolver = { reposearch_find_decl,
                                                     reposearch_find_header, NULL };

#define MAX_FILE_BYTES (4u << 20)
#define MAX_DEPTH 24

static int source_ext(const char *name)
{
    static const char *const exts[] = { ".h", ".hpp", ".hh", ".cuh", ".cu", ".c", ".cc",
                                        ".cpp", ".cxx", ".inl", ".inc", NULL };
    const char *dot = strrchr(name, '.');
    for (int i = 0; dot && exts[i]; i++)
        if (strcmp(dot, exts[i]) == 0)
            return 1;
    return 0;
}

/* Visit every source file under dir (sorted, no symlinks); stop when fn returns nonzero. */
static int walk(const char *dir, int depth, int (*fn)(void *ctx, const char *path), void *ctx)
{
    struct dirent **names = NULL;
    int n = depth > MAX_DEPTH ? -1 : scandir(dir, &names, NULL, alphasort);
    int stop = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        if (!stop && nm[0] != '.') {
            char *path = fs_join(dir, nm);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                stop = walk(path, depth + 1, fn, ctx);
            else if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && source_ext(nm))
                stop = fn(ctx, path);
            free(path);
        }
        free(names[i]);
    }
    free(names);
    return stop;
}

struct header_search { const char *name; char *best; };

static int header_visit(void *ctx, const char *path)
{
    struct header_search *h = ctx;
    size_t pl = strlen(path), nl = strlen(h->name);
    if (pl > nl && path[pl - nl - 1] == '/' && strcmp(path + pl - nl, h->name) == 0 &&
        (!h->best || strlen(path) < strlen(h->best))) {
        free(h->best);
        h->best = xstrdup(path);
    }
    return 0;
}

int reposearch_find_header(void *ctx, const char *repo_root, const char *name, char **path_out,
                           const char **via)
{
    (void)ctx;
    *via = "text";
    struct header_search h = { name, NULL };
    *path_out = NULL;
    walk(repo_root, 0, header_visit, &h);
    if (!h.best)
        return lscat_error_setc(LSCAT_ENOTFOUND, "no header '%s' under '%s'", name, repo_root);
    *path_out = h.best;
    return 0;
}

struct decl_search {
    const char *root, *ident;
    struct buf *out, *origin;
};

static int line_of(const char *s, size_t at)
{
    int line = 1;
    for (size_t i = 0; i < at; i++)
        line += s[i] == '\n';
    return line;
}

/* Is offset at inside a comment (a commented-out `#define N 512`)? */
static int in_comment(const char *s, size_t at)
{
    int block = 0, line = 0;
    for (size_t i = 0; i < at && s[i]; i++) {
        if (line) {
            line = s[i] != '\n';
        } else if (block) {
            if (s[i] == '*' && s[i + 1] == '/')
                block = 0, i++;
        } else if (s[i] == '/' && s[i + 1] == '*') {
            block = 1, i++;
        } else if (s[i] == '/' && s[i + 1] == '/') {
            line = 1, i++;
        }
    }
    return block || line;
}

/* Is the line at [b, e) a preprocessor line, a comment or blank? */
static int macro_only_line(const char *b, const char *e)
{
    while (b < e && isspace((unsigned char)*b))
        b++;
    return b == e || *b == '#' || (b[0] == '/' && (b[1] == '/' || b[1] == '*')) || *b == '*';
}

/* A #define inside a block of preprocessor lines only (`#ifdef RD_WG_SIZE_0_0 / #define
 * NUMBER_THREADS RD_WG_SIZE_0_0 / #else / #define NUMBER_THREADS 256 / #endif`): the whole
 * #if ... #endif, so the preprocessor picks the branch. [*start, *end) grows when so. */
static void whole_conditional(const char *s, size_t *start, size_t *end)
{
    const char *open = NULL;
    int depth = 0;
    for (const char *l = s + *start; l > s;) { /* back to the #if this line sits in */
        const char *b = l - 1;
        while (b > s && b[-1] != '\n')
            b--;
        if (!macro_only_line(b, l - 1))
            return;
        const char *t = b;
        while (*t == ' ' || *t == '\t')
            t++;
        if (!strncmp(t, "#endif", 6))
            depth++;
        else if (!strncmp(t, "#if", 3) && depth-- == 0) {
            open = b;
            break;
        }
        l = b;
    }
    if (!open)
        return;
    depth = 0;
    for (const char *l = s + *end; *l;) { /* on to its #endif */
        const char *e = strchr(l + (*l == '\n'), '\n');
        e = e ? e : l + strlen(l);
        const char *t = l + (*l == '\n');
        if (!macro_only_line(t, e))
            return;
        while (*t == ' ' || *t == '\t')
            t++;
        if (!strncmp(t, "#if", 3))
            depth++;
        else if (!strncmp(t, "#endif", 6) && depth-- == 0) {
            *start = (size_t)(open - s);
            *end = (size_t)(e - s);
            return;
        }
        l = e;
    }
}

/* "#define IDENT" with its continuation lines (not one in a comment), with the conditional
 * block of preprocessor lines around it. */
static int find_define(const char *s, const char *ident, size_t *start, size_t *end)
{
    size_t il = strlen(ident);
    for (const char *p = strstr(s, "define"); p; p = strstr(p + 1, "define")) {
        const char *h = p;
        while (h > s && (h[-1] == ' ' || h[-1] == '\t'))
            h--;
        if (h == s || h[-1] != '#' || in_comment(s, (size_t)(h - 1 - s)))
            continue;
        const char *q = p + 6;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, ident, il) != 0 || srcscan_is_ident((unsigned char)q[il]))
            continue;
        const char *e = q;
        while (*e && !(*e == '\n' && e[-1] != '\\'))
            e++;
        *start = (size_t)(h - 1 - s);
        while (*start > 0 && s[*start - 1] != '\n')
            (*start)--; /* from the line's start */
        *end = (size_t)(e - s);
        whole_conditional(s, start, end);
        return 0;
    }
    return -1;
}

/* Is the word just before `at` struct/class/union/enum (the name being defined)? */
static int tag_before(const char *s, size_t start, size_t at)
{
    size_t e = at;
    while (e > start && isspace((unsigned char)s[e - 1]))
        e--;
    size_t b = e;
    while (b > start && srcscan_is_ident((unsigned char)s[b - 1]))
        b--;
    static const char *const tags[] = { "struct", "class", "union", "enum", NULL };
    for (int i = 0; tags[i]; i++)
        if (e - b == strlen(tags[i]) && strncmp(s + b, tags[i], e - b) == 0)
            return 1;
    return 0;
}

/* Does the declarator list after a body's closing brace (`} NAME, *PNAME;`, ending at end)
 * name ident? */
static int declarator_names(const char *s, size_t end, const char *ident)
{
    size_t b = end, il = strlen(ident);
    while (b > 0 && s[b - 1] != '}')
        b--;
    for (const char *p = s + b; p + il <= s + end; p++)
        if (strncmp(p, ident, il) == 0 && !srcscan_is_ident((unsigned char)p[il]) &&
            (p == s || !srcscan_is_ident((unsigned char)p[-1])))
            return 1;
    return 0;
}

/* A struct body's span ends at its '}'; the declarators that follow (`} NAME;`, a typedef's
 * name) join it, up to the ';' (nothing else than names, '*', ',' and spaces between). */
static size_t with_declarators(const char *s, size_t end)
{
    size_t k = end;
    if (k == 0 || s[k - 1] != '}')
        return end;
    while (s[k] && (isspace((unsigned char)s[k]) || srcscan_is_ident((unsigned char)s[k]) ||
                    s[k] == '*' || s[k] == ',') && k - end < 256)
        k++;
    return s[k] == ';' ? k + 1 : end;
}

/* Is the top-level span [start,end) a definition of ident? */
static int defines(const char *s, size_t start, size_t end, size_t brace, size_t at,
                   const char *ident)
{
    size_t head_end = brace ? brace : end;
    const char *next = s + at + strlen(ident);
    while (isspace((unsigned char)*next))
        next++;
    if (strncmp(s + start, "typedef", 7) == 0 && (*next == ';' || *next == ','))
        return 1; /* typedef struct { ... } NAME; */
    if (at >= head_end)
        return 0;
    char *head = xstrndup(s + start, head_end - start);
    const char *after = s + at + strlen(ident);
    while (isspace((unsigned char)*after))
        after++;
    int yes = 0;
    if (srcscan_head_has(s, start, head_end, "typedef"))
        yes = !brace ? (*after == ';' || *after == '[' || *after == ')')
                     : (strstr(s + at, ";") == s + end - 1 || declarator_names(s, end, ident));
    else if (strstr(head, "using") && *after == '=')
        yes = 1;
    else if (brace && tag_before(s, start, at))
        yes = *after == '{' || (*after == ':' && after[1] != ':');
    else if (!brace && srcscan_head_has(s, start, end, "namespace") && *after == '=')
        yes = 1; /* namespace cg = cooperative_groups; */
    else if (brace && *after == '(' && srcscan_is_function_def(s, start, brace))
        yes = 1;
    else if (!brace && (*after == '=' || *after == '[') &&
             (strstr(head, "const") || strstr(head, "__constant__") || strstr(head, "__device__")))
        yes = 1;
    else if (!brace && *after == ';' && (strstr(head, "__constant__") || strstr(head, "__device__")))
        yes = 1; /* __constant__ params_common d_common; */
    free(head);
    return yes;
}

static int decl_visit(void *ctx, const char *path)
{
    struct decl_search *d = ctx;
    struct buf text = BUF_INIT;
    text.cap_bytes = MAX_FILE_BYTES;
    if (buf_read_file(&text, path) < 0) {
        buf_release(&text);
        return 0;
    }
    size_t start = 0, end = 0, brace = 0;
    int found = find_define(text.data, d->ident, &start, &end) == 0;
    if (!found) {
        struct srcscan sc;
        srcscan_init(&sc, text.data, text.len);
        for (long at = srcscan_find_word(text.data, &sc, d->ident, 0); at >= 0 && !found;
             at = srcscan_find_word(text.data, &sc, d->ident, (size_t)at + 1))
            found = sc.depth[at] == 0 &&
                    srcscan_top_span(text.data, &sc, (size_t)at, &start, &end, &brace) == 0 &&
                    start <= (size_t)at && (end = with_declarators(text.data, end)) > 0 &&
                    defines(text.data, start, end, brace, (size_t)at, d->ident);
        srcscan_release(&sc);
    }
    if (found) {
        buf_add(d->out, text.data + start, end - start);
        buf_addf(d->origin, "%s:%d", path + strlen(d->root) + (path[strlen(d->root)] == '/'),
                 line_of(text.data, start));
    }
    buf_release(&text);
    return found;
}

int reposearch_find_decl(void *ctx, const char *repo_root, const char *ident, const char *have,
                         struct buf *out, struct buf *origin, const char **via)
{
    (void)ctx;
    (void)have;
    *via = "text";
    struct decl_search d = { repo_root, ident, out, origin };
    if (strchr(ident, ':') || !walk(repo_root, 0, decl_visit, &d))
        return lscat_error_setc(LSCAT_ENOTFOUND, "no declaration of '%s' under '%s'", ident,
                                repo_root);
    return 0;
}

/* ---------------------------------------------------------------- texture references */

/* Offset of the `texture` word starting the declaration s[start, end) ("texture <" after an
 * optional static/extern), or -1. */
long reposearch_texture_head(const char *s, size_t start, size_t end)
{
    size_t i = start;
    for (;;) {
        while (i < end && isspace((unsigned char)s[i]))
            i++;
        if (strncmp(s + i, "static", 6) == 0 && isspace((unsigned char)s[i + 6]))
            i += 6;
        else if (strncmp(s + i, "extern", 6) == 0 && isspace((unsigned char)s[i + 6]))
            i += 6;
        else
            break;
    }
    size_t at = i;
    if (end - i < 8 || strncmp(s + i, "texture", 7) != 0)
        return -1;
    i += 7;
    while (i < end && isspace((unsigned char)s[i]))
        i++;
    return i < end && s[i] == '<' ? (long)at : -1;
}

static int texref_visit(void *ctx, const char *path)
{
    struct decl_search *d = ctx;
    struct buf text = BUF_INIT;
    text.cap_bytes = MAX_FILE_BYTES;
    if (buf_read_file(&text, path) < 0 || !strstr(text.data, "texture")) {
        buf_release(&text);
        return 0;
    }
    struct srcscan sc;
    size_t start = 0, end = 0, brace = 0;
    int found = 0;
    srcscan_init(&sc, text.data, text.len);
    for (long at = srcscan_find_word(text.data, &sc, d->ident, 0); at >= 0 && !found;
         at = srcscan_find_word(text.data, &sc, d->ident, (size_t)at + 1))
        found = sc.depth[at] == 0 &&
                srcscan_top_span(text.data, &sc, (size_t)at, &start, &end, &brace) == 0 &&
                start <= (size_t)at && !brace &&
                reposearch_texture_head(text.data, start, end) >= 0;
    srcscan_release(&sc);
    if (found) {
        buf_add(d->out, text.data + start, end - start);
        buf_addf(d->origin, "%s:%d", path + strlen(d->root) + (path[strlen(d->root)] == '/'),
                 line_of(text.data, start));
    }
    buf_release(&text);
    return found;
}

int reposearch_find_texref(const char *repo_root, const char *ident, struct buf *out,
                           struct buf *origin)
{
    struct decl_search d = { repo_root, ident, out, origin };
    if (strchr(ident, ':') || !walk(repo_root, 0, texref_visit, &d))
        return lscat_error_setc(LSCAT_ENOTFOUND, "no texture reference '%s' under '%s'", ident,
                                repo_root);
    return 0;
}
