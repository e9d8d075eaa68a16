/* A light scan of source text (see srcscan.c): code mask, brace depth, top-level spans. */
#ifndef LSCAT_EXECUTE_SRCSCAN_H
#define LSCAT_EXECUTE_SRCSCAN_H

#include <stddef.h>

struct srcscan {
    size_t n;
    unsigned char *code; /* per byte: 1 when code, 0 in comments, strings, preprocessor lines */
    int *depth;          /* per byte: brace depth before it */
};

void srcscan_init(struct srcscan *sc, const char *s, size_t n);
void srcscan_release(struct srcscan *sc);
/* Offset of the first byte of 1-based `line` (n when past the end). */
size_t srcscan_line_offset(const char *s, size_t n, int line);
/* The top-level declaration containing or following `at`: [*start, *end), *brace = offset of
 * its body's '{' (0 when it has none). 0, or -1 when there is none. */
int srcscan_top_span(const char *s, const struct srcscan *sc, size_t at, size_t *start,
                     size_t *end, size_t *brace);
int srcscan_is_ident(int c);
/* Offset of the next code occurrence of the whole word `w` at or after `from`, or -1. */
long srcscan_find_word(const char *s, const struct srcscan *sc, const char *w, size_t from);
/* Whether the whole word appears in s[start, brace). */
int srcscan_head_has(const char *s, size_t start, size_t brace, const char *word);
/* The name of the function defined by s[start, brace) (caller frees), or NULL. */
char *srcscan_function_name(const char *s, size_t start, size_t brace);
/* Whether s[start, brace) is the head of a function definition (not a struct, namespace...). */
int srcscan_is_function_def(const char *s, size_t start, size_t brace);
/* Offset just after the last top-level #include line (0 when none). */
size_t srcscan_after_includes(const char *s);

#endif
