/* Text helpers of the isolate worker: refusing #includes that leave the tree before libclang
 * reads them, rewriting invalid UTF-8 (nvcc rejects it even inside string literals) so an
 * isolated kernel with Latin-1 comments still builds, and finding kernel definitions in the
 * ranges the preprocessor skipped (so that they are recorded, not silently missing). */
#include "isolate/srctext.h"

#include "common/utf8.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int srctext_allowed_system(const char *cuda_home, const char *real)
{
    const char *sys[] = { cuda_home, "/usr/local/cuda", "/usr/include", "/usr/lib/llvm-",
                          "/usr/local/include", "/usr/lib/gcc", "/opt/cuda", NULL };
    for (int i = 0; sys[i]; i++)
        if (*sys[i] && strncmp(real, sys[i], strlen(sys[i])) == 0)
            return 1;
    const char *slash = strrchr(real, '/'); /* lscat's own compat headers (sysinc.h) */
    return slash && slash - real >= 15 && strncmp(slash - 15, "/isolate/compat", 15) == 0 &&
           strncmp(slash + 1, "helper_", 7) == 0;
}

static int under_root(const char *root, const char *real)
{
    size_t n = strlen(root);
    return strncmp(real, root, n) == 0 && real[n] == '/';
}

/* Before the parse: what the scan finds is given to libclang as an empty file, so its content
 * is never read. */
void srctext_scan_includes(struct srctext_refusals *rf, const char *root, const char *cuda_home,
                           const char *path)
{
    for (size_t i = 0; i < rf->nseen; i++)
        if (strcmp(rf->seen[i], path) == 0)
            return;
    if (rf->nseen >= 2000)
        return;
    XGROW(rf->seen, rf->nseen + 1, rf->seen_cap);
    rf->seen[rf->nseen++] = xstrdup(path);
    struct buf b = BUF_INIT;
    b.cap_bytes = 16u << 20;
    if (buf_read_file(&b, path) < 0) {
        buf_release(&b);
        return;
    }
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    for (char *line = b.data; line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p++ == '#') {
            while (*p == ' ' || *p == '\t')
                p++;
            if (strncmp(p, "include", 7) == 0) {
                p += 7;
                while (*p == ' ' || *p == '\t')
                    p++;
                char close = *p == '"' ? '"' : *p == '<' ? '>' : 0;
                char *end = close ? strchr(p + 1, close) : NULL;
                if (end) {
                    *end = '\0';
                    const char *spell = p + 1;
                    char *cand = spell[0] == '/' ? xstrdup(spell) : xasprintf("%s/%s", dir, spell);
                    char *real = realpath(cand, NULL);
                    if (real && (spell[0] == '/' || (close == '"' && !under_root(root, real) &&
                                                      !srctext_allowed_system(cuda_home, real)))) {
                        XGROW(rf->paths, rf->n + 1, rf->cap);
                        rf->paths[rf->n++] = xstrdup(real);
                    } else if (real && close == '"' && under_root(root, real)) {
                        srctext_scan_includes(rf, root, cuda_home, real);
                    }
                    free(real);
                    free(cand);
                }
            }
        }
        line = next;
    }
    free(dir);
    buf_release(&b);
}

void srctext_refusals_release(struct srctext_refusals *rf)
{
    for (size_t i = 0; i < rf->n; i++)
        free(rf->paths[i]);
    for (size_t i = 0; i < rf->nseen; i++)
        free(rf->seen[i]);
    free(rf->paths);
    free(rf->seen);
}

/* nvcc rejects invalid UTF-8 even in literals. */
size_t srctext_fix_utf8(struct buf *out, const char *src, size_t n)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t fixed = 0;
    char quote = 0;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq_len(s + i, n - i);
        if (!len) {
            if (quote)
                buf_addf(out, "\\%03o", s[i]);
            else
                buf_addch(out, '?');
            fixed++;
            i++;
            continue;
        }
        char c = (char)s[i];
        if (quote && c == '\\' && i + 1 < n && s[i + 1] < 0x80) {
            buf_add(out, src + i, 2);
            i += 2;
            continue;
        }
        if (!quote && (c == '"' || c == '\'') && !(i > 0 && isalnum(s[i - 1]) && c == '\''))
            quote = c;
        else if (quote && (c == quote || c == '\n'))
            quote = 0;
        buf_add(out, src + i, len);
        i += len;
    }
    return fixed;
}

/* The conditional directive a line starting at p opens (+1), continues (0: #else, #elif) or
 * closes (-1); 2 when it is none of them. */
static int cond_kind(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= e || *p != '#')
        return 2;
    p++;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    size_t left = (size_t)(e - p);
    if (left >= 5 && strncmp(p, "endif", 5) == 0)
        return -1;
    if ((left >= 4 && (strncmp(p, "else", 4) == 0 || strncmp(p, "elif", 4) == 0)))
        return 0;
    if (left >= 2 && strncmp(p, "if", 2) == 0)
        return 1;
    return 2;
}

static const char *line_end(const char *p, const char *e)
{
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    return nl ? nl + 1 : e;
}

int srctext_balance_conditionals(const char *text, size_t n, unsigned *start, unsigned *end)
{
    if (*start > *end || *end > n)
        return 0;
    unsigned s = *start;
    while (s > 0 && text[s - 1] != '\n') /* whole lines: a directive starts one */
        s--;
    int open = 0, closed = 0, need_back = 0, moved = 0;
    for (const char *p = text + s; p < text + *end; p = line_end(p, text + *end)) {
        int k = cond_kind(p, text + *end);
        if (k == 1)
            open++;
        else if (k == -1 && open > 0)
            open--;
        else if (k == -1) /* closes a block opened before the extent */
            need_back = ++closed > need_back ? closed : need_back;
        else if (k == 0 && open == 0) /* #else of a block opened before the extent */
            need_back = closed + 1 > need_back ? closed + 1 : need_back;
    }
    if (need_back) { /* back to the #if that opens the block(s) */
        const char *p = text + s;
        int depth = 0;
        while (need_back > 0 && p > text) {
            const char *b = p - 1;
            while (b > text && b[-1] != '\n')
                b--;
            int k = cond_kind(b, p);
            if (k == -1)
                depth++;
            else if (k == 1 && depth > 0)
                depth--;
            else if (k == 1)
                need_back--;
            p = b;
        }
        if (need_back == 0) {
            *start = (unsigned)(p - text);
            moved = 1;
        }
    }
    if (open > 0) { /* forward past the #endif that closes what the extent opened */
        const char *p = line_end(text + *end, text + n);
        for (; open > 0 && p < text + n; p = line_end(p, text + n)) {
            int k = cond_kind(p, text + n);
            open += k == 1 ? 1 : k == -1 ? -1 : 0;
            if (open == 0) {
                *end = (unsigned)(line_end(p, text + n) - text);
                moved = 1;
            }
        }
    }
    return moved;
}

/* Where the kernel whose `__global__` is at text[at] opens its body ('{' before a ';' at
 * depth 0, at most 4,000 bytes on, and before `end`); writes its name: the identifier before
 * the last parenthesised group at depth 0 (`__global__ void LAUNCH_BOUNDS(256, 2) k(...)`
 * names k). 0 when none. */
static int kernel_body_after(const char *text, size_t at, size_t end, char name[128],
                             size_t *name_at)
{
    int depth = 0;
    name[0] = '\0';
    for (size_t i = at + 10; i < end && i < at + 4000; i++) {
        char c = text[i];
        if (c == '(' && depth++ == 0) {
            size_t e = i;
            while (e > at && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\n'))
                e--;
            size_t b = e;
            while (b > at && (isalnum((unsigned char)text[b - 1]) || text[b - 1] == '_'))
                b--;
            if (e > b && e - b < 128) {
                memcpy(name, text + b, e - b);
                name[e - b] = '\0';
                *name_at = b;
            }
        } else if (c == ')') {
            depth--;
        } else if (depth == 0 && c == ';') {
            return 0;
        } else if (depth == 0 && c == '{') {
            return name[0] != '\0';
        }
    }
    return 0;
}

/* Past the literal opening at text[i] (a '"' or '\''), not past `end` nor a line's end. */
static size_t skip_literal(const char *text, size_t i, size_t end)
{
    char q = text[i];
    for (i++; i < end && text[i] != q && text[i] != '\n'; i++)
        if (text[i] == '\\' && i + 1 < end && text[i + 1] != '\n')
            i++;
    return i;
}

void srctext_kernels_in(const char *text, size_t n, size_t start, size_t end,
                        void (*cb)(void *arg, unsigned line, const char *name), void *arg)
{
    unsigned line = 1;
    int block = 0, bol = 1; /* inside a block comment; at a line's start (spaces aside) */
    end = end < n ? end : n;
    for (size_t i = 0; i < end; i++) {
        char c = text[i];
        if (c == '\n') {
            line++;
            bol = 1;
        } else if (block) {
            if (c == '*' && i + 1 < end && text[i + 1] == '/')
                block = 0, i++;
        } else if (c == '/' && i + 1 < end && text[i + 1] == '*') {
            block = 1;
            i++;
        } else if ((c == '/' && i + 1 < end && text[i + 1] == '/') || (c == '#' && bol)) {
            /* a comment or a directive (a macro's body is no definition): to the line's end,
             * continuation lines included */
            while (i + 1 < end && (text[i + 1] != '\n' || text[i] == '\\'))
                line += text[++i] == '\n';
        } else if (c == '"' || c == '\'') {
            size_t e = skip_literal(text, i, end);
            i = e < end && text[e] == '\n' ? e - 1 : e; /* the loop counts the newline */
            bol = 0;
        } else if (i >= start && c == '_' && end - i >= 10 && memcmp(text + i, "__global__", 10) == 0 &&
                   (i == 0 || !(isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_'))) {
            char name[128];
            size_t at = i;
            unsigned nl = 0;
            if (kernel_body_after(text, i, end, name, &at)) {
                for (size_t j = i; j < at; j++)
                    nl += text[j] == '\n';
                cb(arg, line + nl, name); /* the name's line, as a kernel's location */
            }
            i += 9;
            bol = 0;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            bol = 0;
        }
    }
}
