/* A light scan of C/C++/CUDA source text for the repair strategies: which bytes are code (not
 * comments, strings or preprocessor lines), the brace depth at each byte, the top-level
 * declaration around a position. Not a parser: enough to cut or annotate what nvcc pointed at. */
#include "execute/srcscan.h"

#include "common/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void srcscan_init(struct srcscan *sc, const char *s, size_t n)
{
    sc->n = n;
    sc->code = xcalloc(n + 1, 1);
    sc->depth = xcalloc(n + 1, sizeof(int));
    int depth = 0, line_start = 1;
    for (size_t i = 0; i < n; i++) {
        sc->depth[i] = depth;
        char c = s[i];
        if (line_start && c == '#') { /* preprocessor line, with continuations */
            while (i < n && !(s[i] == '\n' && s[i - 1] != '\\'))
                sc->depth[i++] = depth;
            if (i < n)
                sc->depth[i] = depth;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                sc->depth[i++] = depth;
            if (i < n)
                sc->depth[i] = depth;
            line_start = 1;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            size_t j = i + 2;
            while (j + 1 < n && !(s[j] == '*' && s[j + 1] == '/'))
                j++;
            for (; i < n && i <= j + 1; i++)
                sc->depth[i] = depth;
            i--;
            continue;
        }
        if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < n && s[j] != c && s[j] != '\n')
                j += (s[j] == '\\') ? 2 : 1;
            for (; i < n && i <= j; i++)
                sc->depth[i] = depth;
            i--;
            line_start = 0;
            continue;
        }
        sc->code[i] = 1;
        if (c == '{')
            depth++;
        else if (c == '}' && depth > 0)
            depth--;
        if (c == '\n')
            line_start = 1;
        else if (!isspace((unsigned char)c))
            line_start = 0;
    }
}

void srcscan_release(struct srcscan *sc)
{
    free(sc->code);
    free(sc->depth);
}

size_t srcscan_line_offset(const char *s, size_t n, int line)
{
    size_t off = 0;
    for (int l = 1; l < line && off < n; off++)
        if (s[off] == '\n')
            l++;
    return off;
}

/* The top-level declaration around `at`: [*start, *end). 0, or -1 when `at` is not inside one
 * (a preprocessor line, or nothing but space). *brace is the offset of its body's '{' or 0. */
int srcscan_top_span(const char *s, const struct srcscan *sc, size_t at, size_t *start, size_t *end,
                    size_t *brace)
{
    size_t b = at;
    while (b > 0) {
        size_t p = b - 1;
        if (sc->code[p] && sc->depth[p] == 0 && s[p] == ';')
            break;
        if (sc->code[p] && sc->depth[p] == 1 && s[p] == '}')
            break;
        if (!sc->code[p] && sc->depth[p] == 0 && s[p] == '\n' && p > 0 && !sc->code[p - 1] &&
            sc->depth[p - 1] == 0) {
            /* end of a preprocessor or comment line: a boundary only for preprocessor lines */
            size_t q = p;
            while (q > 0 && s[q - 1] != '\n')
                q--;
            while (q < p && isspace((unsigned char)s[q]))
                q++;
            if (s[q] == '#')
                break;
        }
        b--;
    }
    while (b < sc->n && (isspace((unsigned char)s[b]) || !sc->code[b]))
        b++;
    size_t i = b;
    *brace = 0;
    for (; i < sc->n; i++) {
        if (!sc->code[i] || sc->depth[i] != 0)
            continue;
        if (s[i] == ';') {
            *start = b;
            *end = i + 1;
            return 0;
        }
        if (s[i] == '{') {
            *brace = i;
            size_t j = i + 1;
            while (j < sc->n && !(sc->code[j] && s[j] == '}' && sc->depth[j] == 1))
                j++;
            if (j >= sc->n)
                return -1;
            j++;
            size_t k = j;
            while (k < sc->n && isspace((unsigned char)s[k]))
                k++;
            if (k < sc->n && s[k] == ';')
                j = k + 1;
            *start = b;
            *end = j;
            return 0;
        }
    }
    return -1;
}

int srcscan_is_ident(int c)
{
    return isalnum(c) || c == '_';
}

/* Offset of the next code occurrence of the word `w` at or after `from`, or -1. */
long srcscan_find_word(const char *s, const struct srcscan *sc, const char *w, size_t from)
{
    size_t wl = strlen(w);
    for (const char *p = strstr(s + from, w); p; p = strstr(p + 1, w)) {
        size_t i = (size_t)(p - s);
        if (!sc->code[i] || (i > 0 && srcscan_is_ident((unsigned char)s[i - 1])) ||
            srcscan_is_ident((unsigned char)s[i + wl]))
            continue;
        return (long)i;
    }
    return -1;
}

int srcscan_head_has(const char *s, size_t start, size_t brace, const char *word)
{
    char *head = xstrndup(s + start, brace - start);
    int found = 0;
    for (char *p = strstr(head, word); p && !found; p = strstr(p + 1, word))
        found = (p == head || !srcscan_is_ident((unsigned char)p[-1])) &&
                !srcscan_is_ident((unsigned char)p[strlen(word)]);
    free(head);
    return found;
}

/* The name of a function definition: the identifier before the first '(' of its head. */
char *srcscan_function_name(const char *s, size_t start, size_t brace)
{
    const char *paren = memchr(s + start, '(', brace - start);
    if (!paren)
        return NULL;
    const char *e = paren;
    while (e > s + start && isspace((unsigned char)e[-1]))
        e--;
    const char *b = e;
    while (b > s + start && (srcscan_is_ident((unsigned char)b[-1]) || b[-1] == ':'))
        b--;
    return b < e ? xstrndup(b, (size_t)(e - b)) : NULL;
}

int srcscan_is_function_def(const char *s, size_t start, size_t brace)
{
    if (!brace || !memchr(s + start, '(', brace - start))
        return 0;
    static const char *const not_fn[] = { "struct", "class", "union", "enum", "namespace",
                                          "extern", NULL };
    for (int i = 0; not_fn[i]; i++)
        if (srcscan_head_has(s, start, brace, not_fn[i]))
            return 0;
    return 1;
}

/* Just after the last #include line at the top level (0 when none). */
size_t srcscan_after_includes(const char *s)
{
    size_t best = 0;
    for (const char *p = s; (p = strstr(p, "#include")); p++) {
        const char *q = p;
        while (q > s && (q[-1] == ' ' || q[-1] == '\t'))
            q--;
        if (q != s && q[-1] != '\n')
            continue;
        const char *nl = strchr(p, '\n');
        best = nl ? (size_t)(nl - s) + 1 : strlen(s);
    }
    return best;
}

